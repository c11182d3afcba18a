//! Adapter and device selection.

use crate::render::pipeline_cache::DiskPipelineCache;
use std::sync::{Arc, Mutex};

/// An adapter, its device and queue.
pub struct Gpu {
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// Compiled pipelines kept between runs (`None` where the adapter cannot).
    pub pipeline_cache: Option<DiskPipelineCache>,
    /// Errors the device reported outside any call that returns a `Result` (validation errors,
    /// device loss), kept for the caller to show instead of panicking.
    faults: Arc<Mutex<Faults>>,
}

#[derive(Default)]
struct Faults {
    first_error: Option<String>,
    lost: Option<String>,
}

/// Why the GPU could not be opened or could not do what was asked, by kind.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error(
        "no graphics adapter found ({0}); on Linux without a GPU install Mesa's software Vulkan driver (Debian/Ubuntu: apt-get install mesa-vulkan-drivers)"
    )]
    NoAdapter(#[source] wgpu::RequestAdapterError),
    /// The adapter lacks a capability Rigscope cannot do without.
    #[error("the adapter '{adapter}' ({backend:?}) cannot {missing}")]
    MissingCapability {
        adapter: String,
        backend: wgpu::Backend,
        missing: &'static str,
    },
    #[error("the graphics device could not be opened: {0}")]
    DeviceRequest(#[source] wgpu::RequestDeviceError),
    #[error("cannot draw into the window: {0}")]
    Surface(#[source] wgpu::CreateSurfaceError),
    /// An error the device reported outside any call (validation, out of memory), as its text.
    #[error("the graphics device reported an error: {0}")]
    Device(String),
    /// A requested size beyond the device's limits.
    #[error("image size {width}x{height} is outside 1..={max} pixels per side")]
    ImageSize { width: u32, height: u32, max: u32 },
    #[error("waiting for the GPU failed: {0}")]
    Poll(#[source] wgpu::PollError),
    #[error("the GPU never answered the readback")]
    NoAnswer,
    #[error("readback failed: {0}")]
    Map(#[source] wgpu::BufferAsyncError),
    #[error("readback mapping failed: {0}")]
    Mapping(String),
    /// Read-back bytes that do not make an image of the expected size (`what`: the readback).
    #[error("{what} has the wrong size")]
    WrongSize { what: &'static str },
}

/// Environment variable that turns "no adapter" from a skipped GPU test into a failed one.
pub const REQUIRE_ADAPTER_ENV: &str = "RIGSCOPE_REQUIRE_ADAPTER";

impl Gpu {
    /// The format egui draws through over an output of `format`: the same texture viewed without
    /// the sRGB conversion, since egui blends in gamma space. Adapters that cannot view a
    /// texture in another format (OpenGL ES without `VIEW_FORMATS`) draw through `format`
    /// itself, with the UI's translucent edges a little lighter.
    pub fn overlay_format(&self, format: wgpu::TextureFormat) -> wgpu::TextureFormat {
        let flags = self.adapter.get_downlevel_capabilities().flags;
        if flags.contains(wgpu::DownlevelFlags::VIEW_FORMATS) {
            format.remove_srgb_suffix()
        } else {
            format
        }
    }

    /// The extra view formats a texture of `format` needs for [`Gpu::overlay_format`].
    pub fn overlay_view_formats(&self, format: wgpu::TextureFormat) -> Vec<wgpu::TextureFormat> {
        let overlay = self.overlay_format(format);
        if overlay == format { Vec::new() } else { vec![overlay] }
    }

    /// A device with no window, for offscreen rendering and compute.
    pub fn headless() -> Result<Gpu, GpuError> {
        Self::with_backends(|backends| {
            let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
                backends,
                ..wgpu::InstanceDescriptor::new_without_display_handle_from_env()
            });
            pollster::block_on(Self::with_instance(instance, None))
        })
    }

    /// Runs `open` (which makes an instance of the backends it is given) with the primary
    /// backends (Vulkan, Metal, DX12), and only when that fails with all of them: probing
    /// OpenGL (EGL) costs tens of milliseconds at startup. `WGPU_BACKEND`, when set, chooses.
    pub fn with_backends<T>(mut open: impl FnMut(wgpu::Backends) -> Result<T, GpuError>) -> Result<T, GpuError> {
        if let Some(chosen) = wgpu::Backends::from_env() {
            return open(chosen);
        }
        open(wgpu::Backends::PRIMARY).or_else(|_| open(wgpu::Backends::all()))
    }

    /// A device that can present to `surface` (when given).
    pub async fn with_instance(instance: wgpu::Instance, surface: Option<&wgpu::Surface<'_>>) -> Result<Gpu, GpuError> {
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: surface,
                apply_limit_buckets: false,
            })
            .await
            .map_err(GpuError::NoAdapter)?;
        let downlevel = adapter.get_downlevel_capabilities();
        if !downlevel.flags.contains(wgpu::DownlevelFlags::VERTEX_STORAGE) {
            let info = adapter.get_info();
            return Err(GpuError::MissingCapability {
                adapter: info.name,
                backend: info.backend,
                missing: "read storage buffers in vertex shaders, which GPU skinning needs",
            });
        }
        log::debug!("adapter {:?}: {:?}", adapter.get_info(), adapter.features());
        let wanted = wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::PIPELINE_CACHE;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("rigscope"),
                required_features: adapter.features() & wanted,
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(GpuError::DeviceRequest)?;
        let faults = Arc::new(Mutex::new(Faults::default()));
        let on_error = faults.clone();
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            if let Ok(mut f) = on_error.lock() {
                f.first_error.get_or_insert_with(|| error.to_string());
            }
        }));
        let on_lost = faults.clone();
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut f) = on_lost.lock() {
                f.lost = Some(format!("{reason:?}: {message}"));
            }
        });
        let pipeline_cache = DiskPipelineCache::open(&adapter, &device);
        Ok(Gpu {
            instance,
            adapter,
            device,
            queue,
            pipeline_cache,
            faults,
        })
    }

    /// The pipeline cache to build pipelines with, if any.
    pub fn cache(&self) -> Option<&wgpu::PipelineCache> {
        self.pipeline_cache.as_ref().map(|c| &c.cache)
    }

    /// The first error the device reported since the last call, if any.
    pub fn take_error(&self) -> Option<GpuError> {
        let mut faults = self.faults.lock().ok()?;
        faults.first_error.take().map(GpuError::Device)
    }

    /// Why the device was lost, once it has been.
    pub fn lost(&self) -> Option<String> {
        self.faults.lock().ok()?.lost.clone()
    }

    /// One line naming the adapter, for logs and the UI.
    pub fn describe(&self) -> String {
        let info = self.adapter.get_info();
        format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
    }
}
