//! wgpu rendering: device selection, the 3D view, offscreen capture, compute skinning.

pub mod camera;
pub mod compute;
pub mod context;
pub mod detail;
pub mod environment;
pub mod gpu_data;
pub mod ibl;
pub mod material;
pub mod morph;
pub mod offscreen;
pub mod pbr;
pub mod pipeline_cache;
mod pipelines;
pub mod scene;
pub mod scene_images;
#[cfg(test)]
mod shader_check;
pub mod skeleton;
pub mod targets;
pub mod timer;
pub mod views;

pub use camera::{CameraAngleError, OrbitCamera};
pub use context::{Gpu, GpuError, REQUIRE_ADAPTER_ENV};
pub use offscreen::Offscreen;
pub use scene::{FrameState, FrameUpload, GpuMemory, RigGpu, SceneRenderer};
pub use targets::{Msaa, PixelRect, RenderTargets};
pub use views::{DeformationMeasure, SkeletonOptions, SurfaceAxis, ViewMode, ViewOptions};
