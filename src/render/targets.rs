//! Where the 3D view draws: color and depth attachments of one size, and rectangles of them.

use super::scene::{DEPTH_FORMAT, SAMPLES};

/// Color and depth attachments of one size.
pub struct RenderTargets {
    pub width: u32,
    pub height: u32,
    pub(super) color: wgpu::TextureView,
    pub(super) depth: wgpu::TextureView,
}

impl RenderTargets {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat, width: u32, height: u32) -> Self {
        let make = |format, label| {
            device
                .create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size: wgpu::Extent3d {
                        width: width.max(1),
                        height: height.max(1),
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: SAMPLES,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                    view_formats: &[],
                })
                .create_view(&wgpu::TextureViewDescriptor::default())
        };
        RenderTargets {
            width,
            height,
            color: make(format, "msaa color"),
            depth: make(DEPTH_FORMAT, "depth"),
        }
    }

    pub fn aspect(&self) -> f32 {
        self.width as f32 / self.height.max(1) as f32
    }
}

/// A rectangle of a render target, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelRect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl PixelRect {
    /// The part inside a `width`×`height` target, or `None` when nothing is left.
    pub fn clamped(self, width: u32, height: u32) -> Option<PixelRect> {
        let x = self.x.min(width);
        let y = self.y.min(height);
        let w = self.width.min(width - x);
        let h = self.height.min(height - y);
        (w > 0 && h > 0).then_some(PixelRect {
            x,
            y,
            width: w,
            height: h,
        })
    }
}
