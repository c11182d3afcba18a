//! One edit history per document: every kind of edit (clip edits, an applied weight repair,
//! pose edits) undone gives back the bits of the document before it, redone the bits after;
//! a save writes what is in effect after undos (clip edits and repaired weights in one file);
//! the document knows whether it has edits a save would write.

use crate::common;

use rigscope::anim::JointOverride;
use rigscope::rig::{Rig, load_file};
use rigscope::viewer::{ClipEdit, RepairOptions, Viewer};
use std::path::Path;

/// Everything an edit can change in a rig, bit for bit: clips (keys and names), morph weight
/// channels, and every primitive's joints and weights.
/// One primitive's joints and weights, the weights as bits.
type InfluenceBits = (Vec<[u16; 4]>, Vec<[u32; 4]>);

fn bits(rig: &Rig) -> (String, String, Vec<Vec<InfluenceBits>>) {
    let influences = (rig.meshes.iter())
        .map(|mesh| {
            (mesh.primitives.iter())
                .filter_map(|p| p.influences.as_ref())
                .map(|i| {
                    (
                        i.joints.clone(),
                        i.weights.iter().map(|w| w.map(f32::to_bits)).collect(),
                    )
                })
                .collect()
        })
        .collect();
    (
        format!("{:?}", rig.clips),
        format!("{:?}", rig.morphs.channels),
        influences,
    )
}

fn override_bits(viewer: &Viewer) -> Vec<[u32; 8]> {
    (viewer.animation().overrides.iter())
        .map(|o| {
            let [x, y, z, w] = o.rotation.to_array().map(f32::to_bits);
            let [a, b, c] = o.translation.to_array().map(f32::to_bits);
            [x, y, z, w, a, b, c, o.scale.to_bits()]
        })
        .collect()
}

fn demo_opened(dir: &Path) -> Viewer {
    let file = dir.join("demo.glb");
    std::fs::write(&file, rigscope::rig::demo::DEMO_GLB).unwrap();
    let mut viewer = Viewer::new(Rig::default(), None);
    viewer.open_now(&file).unwrap();
    viewer
}

#[test]
fn clip_and_pose_edits_undo_to_the_bits_before_and_redo_to_the_bits_after() {
    let dir = tempfile::tempdir().unwrap();
    let mut viewer = demo_opened(dir.path());
    assert!(!viewer.has_unsaved_edits());
    let read = bits(viewer.rig());
    let duration = viewer.rig().clips[0].duration;
    viewer
        .edit_clip(ClipEdit::Trim {
            clip: 0,
            start: 0.0,
            end: duration / 2.0,
        })
        .unwrap();
    let trimmed = bits(viewer.rig());
    assert_ne!(trimmed, read);
    assert!(viewer.has_unsaved_edits());

    // A bend dragged over several frames is one edit; the next gesture is another.
    let joint = viewer
        .view
        .selected_joint
        .expect("the demo rig selects its first joint");
    let unbent = override_bits(&viewer);
    for degrees in [5.0, 10.0, 15.0] {
        let mut bend = JointOverride::IDENTITY;
        bend.rotation = glam::Quat::from_rotation_x(f32::to_radians(degrees));
        viewer.set_override(joint, bend);
    }
    viewer.end_gesture();
    let bent = override_bits(&viewer);
    viewer.set_override(joint, JointOverride::IDENTITY);
    assert!(viewer.has_unsaved_edits(), "the trim is still not saved");

    let bend = format!("bend {}", viewer.rig().nodes[joint].name);
    assert_eq!(viewer.undo(), Some(bend.clone()));
    assert_eq!(override_bits(&viewer), bent);
    assert_eq!(viewer.undo(), Some(bend.clone()));
    assert_eq!(override_bits(&viewer), unbent, "the three drags were one edit");
    assert_eq!(bits(viewer.rig()), trimmed, "pose edits leave the rig alone");
    let name = viewer.rig().clips[0].name.clone();
    assert_eq!(viewer.undo(), Some(format!("trim {name}")));
    assert_eq!(bits(viewer.rig()), read);
    assert!(!viewer.has_unsaved_edits(), "everything undone: the file as read");
    assert_eq!(viewer.undo(), None);

    assert_eq!(viewer.redo(), Some(format!("trim {name}")));
    assert_eq!(bits(viewer.rig()), trimmed);
    assert_eq!(viewer.redo(), Some(bend.clone()));
    assert_eq!(override_bits(&viewer), bent);
    assert_eq!(viewer.redo(), Some(bend));
    assert_eq!(override_bits(&viewer), unbent);
    viewer.set_override(joint, JointOverride::IDENTITY);
    assert_eq!(
        viewer.history().undo_label(),
        Some(format!("bend {}", viewer.rig().nodes[joint].name).as_str()),
        "setting what is there already is no edit"
    );
    assert_eq!(viewer.redo(), None);
}

#[test]
fn a_save_after_undo_writes_only_the_edits_in_effect() {
    let dir = tempfile::tempdir().unwrap();
    let mut viewer = demo_opened(dir.path());
    let names: Vec<String> = viewer.rig().clips.iter().map(|c| c.name.clone()).collect();
    viewer
        .edit_clip(ClipEdit::Rename {
            clip: 0,
            name: "Kept".into(),
        })
        .unwrap();
    viewer
        .edit_clip(ClipEdit::Rename {
            clip: 1,
            name: "Undone".into(),
        })
        .unwrap();
    viewer.undo();
    let output = dir.path().join("saved.glb");
    viewer.save_as(&output).expect("saved");
    assert!(!viewer.has_unsaved_edits());
    let saved = load_file(&output).unwrap();
    let saved_names: Vec<&str> = saved.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(saved_names, ["Kept", names[1].as_str()]);
}

/// RobotExpressive's weights are not normalized: the repair changes them.
#[test]
fn a_repair_is_an_edit_undone_to_the_loaded_weights_and_saved_with_the_clip_edits() {
    let Some(dir) = common::shared_folder("rigs/real") else {
        return;
    };
    let input = dir.join("RobotExpressive.glb");
    let mut viewer = Viewer::new(Rig::default(), None);
    viewer.open_now(&input).expect("RobotExpressive opens");
    let read = bits(viewer.rig());
    let options = RepairOptions {
        normalize: true,
        ..RepairOptions::default()
    };
    assert!(viewer.preview_repair(&options));
    let repaired = bits(viewer.rig());
    assert_ne!(repaired.2, read.2, "the repair changes weights");
    assert!(viewer.has_unsaved_edits());
    let label = viewer.history().undo_label().expect("the repair is an edit").to_owned();
    assert!(label.starts_with("repair weights"), "{label}");

    // Before/After is undo and redo of it.
    viewer.show_repaired(false);
    assert_eq!(bits(viewer.rig()), read);
    assert_eq!(viewer.history().redo_label(), Some(label.as_str()));
    viewer.show_repaired(true);
    assert_eq!(bits(viewer.rig()), repaired);

    // An edit over it ends the preview; the repair stays, under the new edit.
    viewer
        .edit_clip(ClipEdit::Rename {
            clip: 0,
            name: "Renamed".into(),
        })
        .unwrap();
    assert!(viewer.previewed_repair().is_none());
    let both = bits(viewer.rig());
    assert_eq!(both.2, repaired.2);
    viewer.undo();
    viewer.undo();
    assert_eq!(bits(viewer.rig()), read, "both undone: the rig as read");
    viewer.redo();
    viewer.redo();
    assert_eq!(bits(viewer.rig()), both);

    // One save writes both: the repaired weights and the renamed clip.
    let out = tempfile::tempdir().unwrap();
    let output = out.path().join("robot.edited.glb");
    viewer.save_as(&output).expect("saved");
    let saved = load_file(&output).unwrap();
    assert_eq!(saved.clips[0].name, "Renamed");
    for primitive in saved.meshes.iter().flat_map(|m| &m.primitives) {
        let Some(influences) = &primitive.influences else {
            continue;
        };
        for v in 0..primitive.vertex_count() {
            let sum: f64 = influences.of_vertex(v).map(|(_, w)| f64::from(w)).sum();
            // Weights are written as the file stores them (normalized integers or floats).
            assert!((sum - 1.0).abs() < 2e-3, "saved vertex {v} sums to {sum}");
        }
    }
}

#[test]
fn opening_another_rig_over_unsaved_edits_asks_first() {
    use egui_kittest::kittest::Queryable;
    let dir = tempfile::tempdir().unwrap();
    let mut viewer = demo_opened(dir.path());
    viewer.edit_clip(ClipEdit::Drop { clip: 1 }).unwrap();
    let opened = viewer.document().path.clone();
    let mut harness = common::main_window(viewer, 1400.0, 1000.0);
    harness.run();
    type Window<'a> = egui_kittest::Harness<'a, (Viewer, rigscope::ui::UiState)>;
    let open_demo = |harness: &mut Window| {
        harness.get_by_label("File").click();
        harness.run();
        harness.get_by_label("Open demo rig").click();
        harness.run();
    };
    open_demo(&mut harness);
    assert!(
        harness
            .query_by_label_contains("has edits that are not saved")
            .is_some()
    );
    harness.get_by_label("Cancel").click();
    harness.run();
    assert!(harness.state().1.discard_question.is_none());
    assert!(harness.state().0.has_unsaved_edits(), "nothing was dropped");

    open_demo(&mut harness);
    harness.get_by_label("Discard edits").click();
    // The demo rig loads on a thread with a spinner: one frame, then wait for the load.
    harness.step();
    let viewer = &mut harness.state_mut().0;
    assert!(viewer.wait_for_load());
    assert_eq!(viewer.document().path, None, "the demo rig is open");
    assert_ne!(viewer.document().path, opened);
    assert!(!viewer.has_unsaved_edits());
}

#[test]
fn the_layers_panels_changes_are_edits_that_undo_to_the_document_as_opened() {
    use egui_kittest::kittest::Queryable;
    let dir = tempfile::tempdir().unwrap();
    let viewer = demo_opened(dir.path());
    let opened = viewer.document_state();
    // Tall enough for the whole left panel, the Layers section open.
    let mut harness = common::main_window(viewer, 1400.0, 2400.0);
    harness.run();
    harness.get_by_label("Layers, crossfade, attachments").click();
    harness.run();
    for button in [
        "Add layer",
        "Lock in place",
        "Attach a marker to the selected joint",
        "Lock feet",
    ] {
        harness.get_by_label(button).click();
        harness.run();
    }
    harness
        .get_by_role_and_label(egui::accesskit::Role::Slider, "crossfade")
        .set_value_accesskit(0.5);
    harness.run();

    let viewer = &mut harness.state_mut().0;
    let animation = viewer.animation();
    assert_eq!(animation.layers.len(), 1);
    assert!(animation.root_motion.lock, "root locked");
    assert!(animation.lock_feet, "feet locked");
    assert_eq!(animation.attachments.len(), 1);
    assert_eq!(animation.crossfade_seconds, 0.5);
    let changed = viewer.document_state();
    assert_eq!(
        changed.differences(&opened),
        ["layers, crossfade, root motion, attachments, foot lock"]
    );
    let mut undone = Vec::new();
    while let Some(label) = viewer.undo() {
        undone.push(label);
    }
    assert_eq!(
        undone,
        ["crossfade", "lock feet", "attachments", "root lock", "layers"],
        "each change is one edit"
    );
    assert_eq!(viewer.document_state(), opened, "undone, the document is as opened");
    while viewer.redo().is_some() {}
    assert_eq!(viewer.document_state(), changed, "redone, as it was");
}

#[test]
fn undoing_keep_looking_here_makes_the_head_follow_the_camera_again() {
    use rigscope::viewer::LookAtTarget;
    let Some(rigs) = common::shared_rigs() else { return };
    let mut viewer = Viewer::new(common::load_rig(&rigs, "Fox.glb"), None);
    viewer
        .set_look_at(Some(LookAtTarget::Camera))
        .expect("the fox has a head");
    viewer.end_gesture();
    let point = viewer.look_at().unwrap().target;
    viewer.set_look_at(Some(LookAtTarget::Point(point))).unwrap();
    viewer.end_gesture();
    assert!(!viewer.look_at_follows_camera());
    assert_eq!(viewer.undo().as_deref(), Some("look at"));
    assert!(viewer.look_at_follows_camera(), "the head follows the camera again");
    assert_eq!(viewer.undo().as_deref(), Some("look at"));
    assert!(viewer.look_at().is_none() && !viewer.look_at_follows_camera());
    assert_eq!(viewer.redo().as_deref(), Some("look at"));
    assert!(viewer.look_at_follows_camera(), "redone, it follows the camera");
}
