//! Adapter and device selection.

use std::fmt;

/// An adapter, its device and queue.
pub struct Gpu {
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
}

#[derive(Debug, Clone)]
pub struct GpuError(pub String);

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GpuError {}

/// Environment variable that turns "no adapter" from a skipped GPU test into a failed one.
pub const REQUIRE_ADAPTER_ENV: &str = "RIGSCOPE_REQUIRE_ADAPTER";

impl Gpu {
    /// A device with no window, for offscreen rendering and compute.
    pub fn headless() -> Result<Gpu, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        pollster::block_on(Self::with_instance(instance, None))
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
            .map_err(|e| {
                GpuError(format!(
                    "no graphics adapter found ({e}); on Linux without a GPU install Mesa's software Vulkan driver (Debian/Ubuntu: apt-get install mesa-vulkan-drivers)"
                ))
            })?;
        let downlevel = adapter.get_downlevel_capabilities();
        if !downlevel.flags.contains(wgpu::DownlevelFlags::VERTEX_STORAGE) {
            let info = adapter.get_info();
            return Err(GpuError(format!(
                "the adapter '{}' ({:?}) cannot read storage buffers in vertex shaders, which GPU skinning needs",
                info.name, info.backend
            )));
        }
        let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("rigscope"),
                required_features: adapter.features() & wanted,
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError(format!("the graphics device could not be opened: {e}")))?;
        Ok(Gpu {
            instance,
            adapter,
            device,
            queue,
        })
    }

    /// One line naming the adapter, for logs and the UI.
    pub fn describe(&self) -> String {
        let info = self.adapter.get_info();
        format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
    }
}
