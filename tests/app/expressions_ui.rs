//! A VRM avatar's expressions in the window: a slider of the Expressions panel moves the face's
//! morph weights, and Edit ▸ Undo takes each drag back.

use crate::common;
use rigscope::viewer::Viewer;

/// Godette's `happy` (the file's `joy`: face target 9 at 50 %, 10 at 25 %) slid to 1, then
/// `blink` (targets 3 and 4 at 100 %) to 0.5.
#[test]
fn an_expression_slider_sets_the_face_morph_weights_and_undo_takes_it_back() {
    use egui::accesskit::Role;
    use egui_kittest::kittest::Queryable;
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
    harness
        .get_by_role_and_label(Role::Slider, "happy")
        .set_value_accesskit(1.0);
    harness.run();
    // The mouse button released: the drag is one edit.
    harness.state_mut().0.end_gesture();
    let mut happy = rest.clone();
    (happy[9], happy[10]) = (0.5, 0.25);
    assert_eq!(harness.state_mut().0.pose().morph_weights[face], happy);
    harness
        .get_by_role_and_label(Role::Slider, "blink")
        .set_value_accesskit(0.5);
    harness.run();
    harness.state_mut().0.end_gesture();
    let mut blinking = happy.clone();
    (blinking[3], blinking[4]) = (0.5, 0.5);
    let viewer = &mut harness.state_mut().0;
    assert_eq!(viewer.pose().morph_weights[face], blinking);
    assert_eq!(viewer.undo().as_deref(), Some("expressions"));
    assert_eq!(viewer.pose().morph_weights[face], happy);
    assert_eq!(viewer.undo().as_deref(), Some("expressions"));
    assert_eq!(viewer.pose().morph_weights[face], rest);
    assert_eq!(viewer.redo().as_deref(), Some("expressions"));
    assert_eq!(viewer.pose().morph_weights[face], happy);
}
