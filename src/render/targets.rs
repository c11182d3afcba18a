//! Where the 3D view draws: color and depth attachments of one size, and rectangles of them.

use super::scene::DEPTH_FORMAT;

crate::names::named_enum! {
    /// Multisample anti-aliasing of the 3D view (the setting; see [`Msaa::samples`]).
    #[strum(serialize_all = "lowercase")]
    pub enum Msaa {
        /// 4× on a GPU; off on a CPU adapter, where every sample costs rasterizer time.
        #[default]
        Auto,
        Off,
        #[strum(serialize = "2x")]
        X2,
        #[strum(serialize = "4x")]
        X4,
    }
}

impl Msaa {
    pub fn label(self) -> &'static str {
        match self {
            Msaa::Auto => "Auto",
            Msaa::Off => "Off",
            Msaa::X2 => "2×",
            Msaa::X4 => "4×",
        }
    }

    /// Samples per pixel for `format` on `adapter`: what the setting asks for, lowered to a
    /// count the adapter supports for the format.
    pub fn samples(self, adapter: &wgpu::Adapter, format: wgpu::TextureFormat) -> u32 {
        let wanted = match self {
            Msaa::Auto if adapter.get_info().device_type == wgpu::DeviceType::Cpu => 1,
            Msaa::Auto | Msaa::X4 => 4,
            Msaa::X2 => 2,
            Msaa::Off => 1,
        };
        let flags = adapter.get_texture_format_features(format).flags;
        let depth = adapter.get_texture_format_features(DEPTH_FORMAT).flags;
        [wanted, 4, 2, 1]
            .into_iter()
            .filter(|&n| n <= wanted)
            .find(|&n| n == 1 || (flags.sample_count_supported(n) && depth.sample_count_supported(n)))
            .unwrap_or(1)
    }
}

/// Color and depth attachments of one size.
pub struct RenderTargets {
    pub width: u32,
    pub height: u32,
    pub samples: u32,
    /// The multisampled color target, resolved into the output; `None` without multisampling
    /// (the pass draws into the output itself).
    pub(super) color: Option<wgpu::TextureView>,
    pub(super) depth: wgpu::TextureView,
}

impl RenderTargets {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat, width: u32, height: u32, samples: u32) -> Self {
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
                    sample_count: samples,
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
            samples,
            color: (samples > 1).then(|| make(format, "msaa color")),
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
