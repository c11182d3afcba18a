//! The DQS mask controls of the blended skinning method: which joints (with their descendants)
//! skin toward dual quaternions.

use crate::viewer::Viewer;

/// Shown under the method buttons while the blended method is chosen.
pub fn dqs_mask_controls(ui: &mut egui::Ui, viewer: &mut Viewer) {
    let mask = viewer.dqs_mask().to_vec();
    let selected = viewer.view.selected_joint.filter(|j| !mask.contains(j));
    let rig = viewer.rig().clone();
    ui.label("DQS mask: the joints below and their descendants skin with dual quaternions, each vertex by its weight on them.");
    ui.horizontal(|ui| {
        let add = ui
            .add_enabled(selected.is_some(), egui::Button::new("Add selected joint"))
            .on_hover_text("Mask the selected joint and its descendants");
        if add.clicked()
            && let Some(joint) = selected
        {
            let mut joints = mask.clone();
            joints.push(joint);
            viewer.set_dqs_mask(joints);
        }
        if ui
            .add_enabled(!mask.is_empty(), egui::Button::new("Clear"))
            .on_hover_text("Back to the file's blend (none for glTF)")
            .clicked()
        {
            viewer.set_dqs_mask(Vec::new());
        }
    });
    if mask.is_empty() {
        let text = if viewer.dqs_blend().any() {
            "No mask: the file's blend weights."
        } else {
            "No mask: every vertex is linear."
        };
        ui.label(text);
    }
    let mut removed = None;
    ui.horizontal_wrapped(|ui| {
        for &joint in &mask {
            let button = ui.small_button(format!("{} ×", rig.nodes[joint].name));
            if button.on_hover_text("Remove from the mask").clicked() {
                removed = Some(joint);
            }
        }
    });
    if let Some(joint) = removed {
        viewer.set_dqs_mask(mask.into_iter().filter(|&j| j != joint).collect());
    }
}
