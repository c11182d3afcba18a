//! The head looking at a point: its forward axis on the target, measured from the world
//! matrices, with the neck and spine sharing the turn; over a playing clip, in the window
//! (following the camera, undone like any pose edit) and from the command line.

use crate::common::*;
use glam::{Mat4, Vec3};
use rigscope::anim::look_at::{LookAt, find_head};
use rigscope::anim::{PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::rig::Rig;
use rigscope::viewer::Viewer;

/// The angle in degrees between the head's forward axis (rest +Z in the world, carried by its
/// world rotation now) and the direction from the head to `target`.
fn aim_error_deg(rig: &Rig, worlds: &[Mat4], head: usize, target: Vec3) -> f32 {
    let rest_worlds = {
        let mut pose = PoseBuffers::new(rig);
        evaluate_pose(rig, &PoseInputs::default(), &mut pose);
        pose.worlds
    };
    // Rest forward in the head's own space, then out through its current world matrix.
    let forward_local = rest_worlds[head].inverse().transform_vector3(Vec3::Z);
    let forward = worlds[head].transform_vector3(forward_local).normalize();
    let wanted = (target - worlds[head].w_axis.truncate()).normalize();
    forward.dot(wanted).clamp(-1.0, 1.0).acos().to_degrees()
}

fn posed(rig: &Rig, clip: Option<usize>, time: f32, look_at: Option<&LookAt>) -> PoseBuffers {
    let mut pose = PoseBuffers::new(rig);
    let inputs = PoseInputs {
        look_at,
        ..PoseInputs::clip_at(clip, time)
    };
    evaluate_pose(rig, &inputs, &mut pose);
    pose
}

#[test]
fn the_head_aims_at_the_target_and_the_neck_and_spine_share_the_turn() {
    let Some(rigs) = shared_rigs() else { return };
    let rig = load_rig(&rigs, "real/Xbot.glb");
    let head = find_head(&rig).unwrap();
    assert_eq!(rig.nodes[head].name, "mixamorig:Head");
    let walk = rig.clips.iter().position(|c| c.name == "walk");
    let rest = posed(&rig, None, 0.0, None);
    let head_at = rest.worlds[head].w_axis.truncate();
    // Up and to the character's left, in front: a turn of tens of degrees.
    let target = head_at + Vec3::new(0.8, 0.5, 1.0);
    let look_at = LookAt::for_head(&rig, head, 4, target).unwrap();
    let names: Vec<&str> = look_at.chain.iter().map(|&j| rig.nodes[j].name.as_str()).collect();
    assert_eq!(
        names,
        [
            "mixamorig:Head",
            "mixamorig:Neck",
            "mixamorig:Spine2",
            "mixamorig:Spine1"
        ]
    );
    let before = aim_error_deg(&rig, &rest.worlds, head, target);
    for (clip, time) in [(None, 0.0), (walk, 0.2), (walk, 0.55), (walk, 0.9)] {
        let free = posed(&rig, clip, time, None);
        let held = posed(&rig, clip, time, Some(&look_at));
        let error = aim_error_deg(&rig, &held.worlds, head, target);
        assert!(held.look_at_reached, "at {time}");
        assert!(error < 0.1, "at {time}: the head is {error}° off the target");
        // Every joint of the chain turned (the share), the rest of the skeleton did not.
        for &joint in &look_at.chain {
            let turn = free.locals[joint]
                .rotation
                .angle_between(held.locals[joint].rotation)
                .to_degrees();
            assert!(turn > 1.0, "{} turned {turn}°", rig.nodes[joint].name);
        }
        for (node, (a, b)) in free.locals.iter().zip(&held.locals).enumerate() {
            if !look_at.chain.contains(&node) {
                assert_eq!(a, b, "{} moved", rig.nodes[node].name);
            }
        }
    }
    println!("Xbot at rest: the head {before:.1}° off the target, looking at it: < 0.1°");
    // At weight 0 the pose is the clip's, bit for bit.
    let off = LookAt {
        weight: 0.0,
        ..look_at.clone()
    };
    let (free, held) = (posed(&rig, walk, 0.3, None), posed(&rig, walk, 0.3, Some(&off)));
    assert_eq!(bits_of(&free.worlds), bits_of(&held.worlds));
}

fn bits_of(worlds: &[Mat4]) -> Vec<[u32; 16]> {
    worlds.iter().map(|m| m.to_cols_array().map(f32::to_bits)).collect()
}

#[test]
fn in_the_window_the_head_follows_the_camera_and_undo_takes_it_back() {
    use egui_kittest::kittest::Queryable;
    let Some(rigs) = shared_rigs() else { return };
    let rig = load_rig(&rigs, "real/Xbot.glb");
    let head = find_head(&rig).unwrap();
    let mut viewer = Viewer::new(rig.clone(), None);
    viewer.set_playing(false);
    let mut harness = main_window(viewer, 1400.0, 2400.0);
    harness.run();
    harness.get_by_label("Layers, crossfade, attachments").click();
    harness.run();
    harness.get_by_label("Head looks at the camera").click();
    harness.run();
    let error = |harness: &mut egui_kittest::Harness<'_, (Viewer, rigscope::ui::UiState)>| {
        let (viewer, _) = harness.state_mut();
        let eye = viewer.view.camera.eye();
        let worlds = viewer.pose().worlds.clone();
        aim_error_deg(&rig, &worlds, head, eye)
    };
    let first = error(&mut harness);
    assert!(first < 0.1, "looking at the camera: {first}°");
    // The camera orbits a quarter turn: the head follows it.
    harness.state_mut().0.view.camera.orbit(-300.0, 40.0);
    harness.run();
    let after_orbit = error(&mut harness);
    assert!(after_orbit < 0.1, "after the orbit: {after_orbit}°");
    assert!(harness.state().0.look_at_follows_camera());
    let viewer = &mut harness.state_mut().0;
    assert_eq!(viewer.undo().as_deref(), Some("look at"));
    assert!(viewer.look_at().is_none(), "undone");
    assert_eq!(viewer.redo().as_deref(), Some("look at"));
    assert!(viewer.look_at().is_some(), "redone");
}

#[test]
fn render_turns_the_head_and_says_when_a_rig_has_none() {
    let Some(rigs) = shared_rigs() else { return };
    let dir = temp_dir("look_at_cli");
    let png = dir.join("look.png");
    let xbot = rigs.join("real/Xbot.glb");
    let (code, stdout, stderr) = run_rigscope(&[
        "render",
        xbot.to_str().unwrap(),
        "--look-at",
        "1,2,1",
        "--size",
        "64x64",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let simple = rigs.join("SimpleSkin.gltf");
    let (code, _, stderr) = run_rigscope(&[
        "render",
        simple.to_str().unwrap(),
        "--look-at",
        "1,2,1",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--look-at: no joint is named as a head"), "{stderr}");
}

/// Godette (VRM 0.x, facing −Z, no eye bones, look expressions bound to her face): her
/// humanoid `head` turns with her face to a point 45° to her left at her head's height; at
/// weight 0 the head stays and `lookLeft` (face target 12 at 100 %) takes the 45°: 45 / 90.
#[test]
fn a_vrm_avatar_faces_the_target_and_its_look_expressions_take_the_rest() {
    let Some(dir) = shared_folder("corpus/motion/vrm") else {
        return;
    };
    let rig = load_rig(&dir, "Godette_vrm_v4.vrm");
    let head = find_head(&rig).unwrap();
    assert!(rig.facts.humanoid.contains(&("head".to_owned(), head)));
    let face = (rig.instances.iter())
        .position(|i| rig.meshes[i.mesh].name == "FaceMesh")
        .expect("Godette has a face");
    let rest = posed(&rig, None, 0.0, None);
    assert_eq!(rest.morph_weights[face][12], 0.0);
    let head_at = rest.worlds[head].w_axis.truncate();
    // Her left is −X (the left leg's rest x is −0.11).
    let target = head_at + Vec3::new(-1.0, 0.0, -1.0);
    let look_at = LookAt::for_head(&rig, head, 4, target).unwrap();
    let forward_at_rest = rest.worlds[head].transform_vector3(look_at.forward).normalize();
    assert!(forward_at_rest.abs_diff_eq(Vec3::NEG_Z, 1e-5), "{forward_at_rest}");
    let held = posed(&rig, None, 0.0, Some(&look_at));
    let forward = held.worlds[head].transform_vector3(look_at.forward).normalize();
    let wanted = (target - held.worlds[head].w_axis.truncate()).normalize();
    let error = forward.angle_between(wanted).to_degrees();
    assert!(error < 0.1, "the face is {error}° off the target");
    let look_left = |pose: &rigscope::anim::PoseBuffers| pose.morph_weights[face][12];
    assert!(
        look_left(&held) < 0.01,
        "the head is on the target: {}",
        look_left(&held)
    );
    let eyes_only = LookAt {
        weight: 0.0,
        ..look_at.clone()
    };
    let still = posed(&rig, None, 0.0, Some(&eyes_only));
    assert_eq!(bits_of(&still.worlds), bits_of(&rest.worlds));
    assert!((look_left(&still) - 0.5).abs() < 1e-4, "lookLeft {}", look_left(&still));
    // lookUp, lookDown, lookRight: targets 10, 11, 13.
    for other in [10, 11, 13] {
        let moved = still.morph_weights[face][other] - rest.morph_weights[face][other];
        assert!(moved.abs() < 1e-4, "target {other} moved by {moved}");
    }
}
