//! Rendering without a window: into a texture, read back as RGBA8 pixels.

use crate::render::context::{Gpu, GpuError};
use crate::render::scene::OFFSCREEN_SAMPLES;
use crate::render::targets::RenderTargets;

/// Draws over a finished scene in the same frame (the UI, say): gets the frame's encoder and
/// a view of the output in [`Offscreen::overlay_format`], returns command buffers to submit
/// before the encoder's.
pub type Overlay<'a> = dyn FnMut(&mut wgpu::CommandEncoder, &wgpu::TextureView) -> Vec<wgpu::CommandBuffer> + 'a;

pub const OFFSCREEN_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// Records a frame's passes into a target: gets the encoder, the target's depth and
/// multisample attachments, and the view to resolve into.
pub type Draw<'a> = dyn FnMut(&mut wgpu::CommandEncoder, &RenderTargets, &wgpu::TextureView) + 'a;

/// An offscreen target of one size with its readback buffer.
pub struct Offscreen {
    targets: RenderTargets,
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    overlay_view: wgpu::TextureView,
    overlay_format: wgpu::TextureFormat,
    readback: wgpu::Buffer,
    padded_row: u32,
}

impl Offscreen {
    pub fn new(gpu: &Gpu, width: u32, height: u32) -> Result<Offscreen, GpuError> {
        Self::with_samples(gpu, width, height, OFFSCREEN_SAMPLES)
    }

    /// A target drawn with `samples` per pixel (a renderer of the same count draws into it).
    pub fn with_samples(gpu: &Gpu, width: u32, height: u32, samples: u32) -> Result<Offscreen, GpuError> {
        let max = gpu.device.limits().max_texture_dimension_2d;
        if width == 0 || height == 0 || width > max || height > max {
            return Err(GpuError::ImageSize { width, height, max });
        }
        let overlay_format = gpu.overlay_format(OFFSCREEN_FORMAT);
        let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("offscreen"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: OFFSCREEN_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &gpu.overlay_view_formats(OFFSCREEN_FORMAT),
        });
        let padded_row = (width * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let readback = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("offscreen readback"),
            size: padded_row as u64 * height as u64,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        Ok(Offscreen {
            targets: RenderTargets::new(&gpu.device, OFFSCREEN_FORMAT, width, height, samples),
            view: texture.create_view(&wgpu::TextureViewDescriptor::default()),
            overlay_view: texture.create_view(&wgpu::TextureViewDescriptor {
                format: Some(overlay_format),
                ..Default::default()
            }),
            overlay_format,
            texture,
            readback,
            padded_row,
        })
    }

    /// The format of the view an [`Overlay`] draws through (see [`Gpu::overlay_format`]).
    pub fn overlay_format(&self) -> wgpu::TextureFormat {
        self.overlay_format
    }

    pub fn aspect(&self) -> f32 {
        self.targets.aspect()
    }

    /// Records `draw` into the texture without reading it back (for timing loops).
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder, draw: &mut Draw) {
        draw(encoder, &self.targets, &self.view);
    }

    pub fn width(&self) -> u32 {
        self.targets.width
    }

    pub fn height(&self) -> u32 {
        self.targets.height
    }

    /// Records `draw`, then `overlay` on top, submits them and returns the image.
    pub fn capture(
        &self,
        gpu: &Gpu,
        draw: &mut Draw,
        overlay: Option<&mut Overlay>,
    ) -> Result<image::RgbaImage, GpuError> {
        let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("offscreen"),
        });
        let before = self.encode_capture(&mut encoder, draw, overlay);
        gpu.queue.submit(before.into_iter().chain([encoder.finish()]));
        self.read_capture(gpu)
    }

    /// Records `draw`, then `overlay` on top, then the copy [`Offscreen::read_capture`] reads.
    /// Returns the command buffers to submit before `encoder`'s (the overlay's).
    pub fn encode_capture(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        draw: &mut Draw,
        overlay: Option<&mut Overlay>,
    ) -> Vec<wgpu::CommandBuffer> {
        draw(encoder, &self.targets, &self.view);
        let before = match overlay {
            Some(overlay) => overlay(encoder, &self.overlay_view),
            None => Vec::new(),
        };
        encoder.copy_texture_to_buffer(
            self.texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(self.padded_row),
                    rows_per_image: Some(self.targets.height),
                },
            },
            wgpu::Extent3d {
                width: self.targets.width,
                height: self.targets.height,
                depth_or_array_layers: 1,
            },
        );
        before
    }

    /// The image of the last submitted [`Offscreen::encode_capture`].
    pub fn read_capture(&self, gpu: &Gpu) -> Result<image::RgbaImage, GpuError> {
        let (width, height) = (self.targets.width, self.targets.height);
        let bytes = read_buffer(gpu, &self.readback)?;
        if let Some(error) = gpu.take_error() {
            return Err(error);
        }
        let mut pixels = Vec::with_capacity((width * height * 4) as usize);
        for row in bytes.chunks_exact(self.padded_row as usize) {
            pixels.extend_from_slice(&row[..(width * 4) as usize]);
        }
        image::RgbaImage::from_raw(width, height, pixels).ok_or(GpuError::WrongSize { what: "readback" })
    }
}

/// Maps a `MAP_READ` buffer, waits for the GPU, and copies its contents out.
pub fn read_buffer(gpu: &Gpu, buffer: &wgpu::Buffer) -> Result<Vec<u8>, GpuError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |result| {
        let _ = sender.send(result);
    });
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(GpuError::Poll)?;
    receiver
        .recv()
        .map_err(|_| GpuError::NoAnswer)?
        .map_err(GpuError::Map)?;
    let data = buffer
        .get_mapped_range(..)
        .map_err(|e| GpuError::Mapping(format!("{e:?}")))?
        .to_vec();
    buffer.unmap();
    Ok(data)
}
