//! A VRM avatar's expressions in the window: a slider of the Expressions panel moves the face's
//! morph weights, and Edit ▸ Undo takes each drag back.

use crate::common;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rigscope::ui::UiState;
use rigscope::viewer::Viewer;

/// Sets the slider labelled `label` to `value` and lets the mouse button go (the drag is one
/// edit); returns the morph weights then.
fn slide(harness: &mut Harness<'_, (Viewer, UiState)>, label: &str, value: f64) -> Vec<Vec<f32>> {
    harness
        .get_by_role_and_label(egui::accesskit::Role::Slider, label)
        .set_value_accesskit(value);
    harness.run();
    let viewer = &mut harness.state_mut().0;
    viewer.end_gesture();
    viewer.pose().morph_weights.clone()
}

/// Godette's `happy` (the file's `joy`: face target 9 at 50 %, 10 at 25 %) slid to 1, then
/// `blink` (targets 3 and 4 at 100 %) to 0.5.
#[test]
fn an_expression_slider_sets_the_face_morph_weights_and_undo_takes_it_back() {
    let Some(dir) = common::shared_folder("corpus/motion/vrm") else {
        return;
    };
    let rig = common::load_rig(&dir, "Godette_vrm_v4.vrm");
    let face = (rig.instances.iter())
        .position(|i| rig.meshes[i.mesh].name == "FaceMesh")
        .expect("Godette has a face");
    let mut viewer = Viewer::new(rig, None);
    viewer.set_playing(false);
    let rest = viewer.pose().morph_weights[face].clone();
    let mut harness = common::main_window(viewer, 1400.0, 2400.0);
    harness.run();
    harness.get_by_label("Expressions").click();
    harness.run();
    let mut happy = rest.clone();
    (happy[9], happy[10]) = (0.5, 0.25);
    assert_eq!(slide(&mut harness, "happy", 1.0)[face], happy);
    let mut blinking = happy.clone();
    (blinking[3], blinking[4]) = (0.5, 0.5);
    assert_eq!(slide(&mut harness, "blink", 0.5)[face], blinking);
    let viewer = &mut harness.state_mut().0;
    assert_eq!(viewer.undo().as_deref(), Some("expressions"));
    assert_eq!(viewer.pose().morph_weights[face], happy);
    assert_eq!(viewer.undo().as_deref(), Some("expressions"));
    assert_eq!(viewer.pose().morph_weights[face], rest);
    assert_eq!(viewer.redo().as_deref(), Some("expressions"));
    assert_eq!(viewer.pose().morph_weights[face], happy);
}
