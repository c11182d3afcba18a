//! How the open rig is looked at: the camera, the view options and the selected joint. Kept
//! apart from the document so that a second file can be shown through the same view.

use crate::render::{OrbitCamera, ViewOptions};

#[derive(Clone, Copy, Debug, Default)]
pub struct View {
    pub camera: OrbitCamera,
    pub options: ViewOptions,
    /// The selected node (a joint, usually): highlighted, shown in the weights view, bent by
    /// the joint controls.
    pub selected_joint: Option<usize>,
    /// The engine whose drawing of the rig is shown (View ▸ Engine); `None`: the file's own.
    pub engine: Option<crate::engine::Engine>,
}
