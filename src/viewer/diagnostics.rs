//! What the viewer shows about its own work: the frames' timings, the last error and the last
//! CPU-versus-GPU comparison. Rendering and the app write it; the panels read it.

use crate::render::GpuMemory;
use crate::render::compute::Comparison;
use crate::timings::Timings;

#[derive(Default)]
pub struct Diagnostics {
    /// Per-stage timings of the last frames (recorded by the window, shown by the Timings panel).
    pub timings: Timings,
    /// The last error, shown until dismissed.
    pub error: Option<String>,
    /// The last CPU-vs-GPU comparison, until the pose or skinning changes.
    pub comparison: Option<Comparison>,
    /// What the shown rig takes on the GPU (written by the window after each frame).
    pub gpu_memory: Option<GpuMemory>,
}
