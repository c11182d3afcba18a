//! Small FBX files written in the test, whose skinned positions are worked out by hand: a
//! triangle in centimetres bound to one bone by one cluster, and one take that turns the bone
//! 90° about Z in a second.

use crate::common;

use crate::common::fbx::{lift_blend_shape, one_cluster_fbx, skinned_lbs};
use glam::DVec3;
use rigscope::rig::load_slice;

/// The triangle's vertices with the bone turned `degrees` about Z at its joint (0,10,0) cm,
/// in metres: each vertex's offset from the joint rotated, worked out in f64.
fn expected_triangle(degrees: f64) -> [DVec3; 3] {
    let (sin, cos) = degrees.to_radians().sin_cos();
    let joint = DVec3::new(0.0, 10.0, 0.0);
    [
        DVec3::new(0.0, 10.0, 0.0),
        DVec3::new(10.0, 10.0, 0.0),
        DVec3::new(0.0, 20.0, 0.0),
    ]
    .map(|p| {
        let d = p - joint;
        (joint + DVec3::new(d.x * cos - d.y * sin, d.x * sin + d.y * cos, d.z)) * 0.01
    })
}

/// Every expected position within 1 µm of a skinned vertex.
fn assert_each_near(expected: &[DVec3], got: &[DVec3], time: f32) {
    for &expected in expected {
        let nearest = got.iter().map(|p| p.distance(expected)).fold(f64::INFINITY, f64::min);
        assert!(
            nearest < 1e-6,
            "at {time} s: {expected} is {nearest:.3e} m from every vertex: {got:?}"
        );
    }
}

#[test]
fn one_cluster_and_one_take_skin_as_worked_out_by_hand() {
    let rig = load_slice(one_cluster_fbx("", "").as_bytes(), None, "bend.fbx").expect("the hand-written file loads");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 1);
    assert_eq!(rig.nodes[rig.skins[0].joints[0]].name, "Bone");
    assert_eq!(rig.clips.len(), 1);
    assert_eq!(rig.clips[0].name, "Bend");
    assert!(
        (rig.clips[0].duration - 1.0).abs() < 1e-6,
        "{} s",
        rig.clips[0].duration
    );
    // Rest pose, then the linear key halfway and at its end: 0°, 45°, 90°.
    for (clip, time, degrees) in [(None, 0.0, 0.0), (Some(0), 0.5, 45.0), (Some(0), 1.0, 90.0)] {
        let got = skinned_lbs(&rig, clip, time);
        assert_eq!(got.len(), 3, "one vertex per control point");
        assert_each_near(&expected_triangle(degrees), &got, time);
    }
}

#[test]
fn an_animated_blend_shape_weight_morphs_before_skinning_as_worked_out_by_hand() {
    let (objects, connections) = lift_blend_shape();
    let rig = load_slice(one_cluster_fbx(&objects, &connections).as_bytes(), None, "lift.fbx")
        .expect("the hand-written file loads");
    assert_eq!(rig.morphs.target_names[0], ["Lift"]);
    assert_eq!(
        rig.morphs.channels.len(),
        1,
        "one weight channel for the one mesh instance"
    );
    // At 0.5 s the bone has turned 45° and the shape is at 50 %: the third vertex, lifted 5 cm
    // along Z in the bind pose, then turned about Z with the bone (Z unchanged).
    for (time, degrees, lift) in [(0.0, 0.0, 0.0), (0.5, 45.0, 5.0), (1.0, 90.0, 10.0)] {
        let mut expected = expected_triangle(degrees);
        expected[2].z = lift * 0.01;
        assert_each_near(&expected, &skinned_lbs(&rig, Some(0), time), time);
    }
}

#[test]
fn repairs_of_an_fbx_file_are_refused_as_fbx_and_nothing_is_written() {
    let dir = common::temp_dir("fbx-save");
    let input = dir.join("bend.fbx");
    std::fs::write(&input, one_cluster_fbx("", "")).unwrap();
    let rig = rigscope::rig::load_file(&input).expect("the hand-written file loads");
    let output = dir.join("bend.glb");
    let result = rigscope::save::save_repaired(&input, &output, &rig, &rig, Default::default());
    assert!(
        matches!(result, Err(rigscope::save::SaveError::FbxInput { .. })),
        "{result:?}"
    );
    assert!(!output.exists());
}
