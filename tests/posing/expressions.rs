//! A VRM avatar's expressions set by hand: the morph weights their binds move, summed and
//! clamped as three-vrm does, one undoable edit per drag.

use crate::common::*;
use rigscope::viewer::Viewer;

/// Godette (VRM 0.x, a face mesh of 15 morph targets): `happy` (the file's `joy`: target 9 at
/// 50 %, target 10 at 25 %) dragged to 1, then `angry` (14 at 100 %, 5, 3 and 4 at 25 %) to 0.5
/// and `blink` (3 and 4 at 100 %) to 1; each drag undoes whole.
#[test]
fn godettes_expressions_set_the_face_morph_weights_and_undo_whole() {
    let Some(dir) = shared_folder("corpus/motion/vrm") else {
        return;
    };
    let rig = load_rig(&dir, "Godette_vrm_v4.vrm");
    let names: Vec<&str> = rig.facts.expressions.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names.len(), 17, "{names:?}");
    let index = |name: &str| {
        names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let face = (rig.instances.iter())
        .position(|i| rig.meshes[i.mesh].name == "FaceMesh")
        .expect("Godette has a face");
    let mut viewer = Viewer::new(rig.clone(), None);
    viewer.set_playing(false);
    let rest = viewer.pose().morph_weights[face].clone();
    assert_eq!(rest.len(), 15);
    for weight in [0.3, 0.6, 1.0] {
        viewer.edit_pose_parts(|parts| parts.set_expression_weight(&rig, index("happy"), weight));
    }
    viewer.end_gesture();
    let happy = viewer.pose().morph_weights[face].clone();
    let mut want = rest.clone();
    (want[9], want[10]) = (0.5, 0.25);
    assert_eq!(happy, want);
    viewer.edit_pose_parts(|parts| parts.set_expression_weight(&rig, index("angry"), 0.5));
    viewer.edit_pose_parts(|parts| parts.set_expression_weight(&rig, index("blink"), 1.0));
    viewer.end_gesture();
    // Targets 3 and 4: 0.5 × 0.25 + 1 × 1 = 1.125, clamped to 1.
    (want[14], want[5], want[3], want[4]) = (0.5, 0.125, 1.0, 1.0);
    assert_eq!(viewer.pose().morph_weights[face], want);
    assert_eq!(viewer.animation().expression_weights[index("angry")], 0.5);
    assert_eq!(viewer.undo().as_deref(), Some("expressions"));
    assert_eq!(viewer.pose().morph_weights[face], happy);
    assert_eq!(viewer.undo().as_deref(), Some("expressions"));
    assert_eq!(viewer.pose().morph_weights[face], rest);
    assert!(viewer.animation().expression_weights.iter().all(|&w| w == 0.0));
    assert!(viewer.animation().morph_overrides[face].iter().all(Option::is_none));
    let binds: usize = rig.facts.expressions.iter().map(|e| e.binds.len()).sum();
    println!("Godette: {} expressions, {binds} morph binds", names.len());
}
