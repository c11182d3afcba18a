//! VRM node constraints against the specification written out again in f64: a roll keeps the
//! twist of its source's turn about the axis, a rotation copies the turn, an aim points its
//! axis at the source; weights slerp from rest; a cycle is reported and left out.

use crate::common;

use glam::{DQuat, DVec3, Quat};
use rigscope::anim::{JointOverride, PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::rig::{ConstraintKind, Rig, load_slice};
use serde_json::{Value, json};

fn node_named(rig: &Rig, name: &str) -> usize {
    rig.nodes.iter().position(|n| n.name == name).unwrap()
}

fn turn(degrees: [f64; 3]) -> DQuat {
    let r = DVec3::from(degrees) * (std::f64::consts::PI / 180.0);
    DQuat::from_euler(glam::EulerRot::XYZ, r.x, r.y, r.z)
}

/// The angle between two rotations, in degrees.
fn degrees_apart(a: Quat, b: DQuat) -> f64 {
    let dot = a.as_dquat().dot(b).abs().min(1.0);
    2.0 * dot.acos().to_degrees()
}

/// `rig` posed with `node` turned by `rotation` over its rest.
fn posed(rig: &Rig, node: usize, rotation: DQuat) -> PoseBuffers {
    let mut overrides = vec![JointOverride::IDENTITY; rig.nodes.len()];
    overrides[node].rotation = rotation.as_quat();
    let mut pose = PoseBuffers::new(rig);
    let inputs = PoseInputs {
        overrides: &overrides,
        ..PoseInputs::clip_at(None, 0.0)
    };
    evaluate_pose(rig, &inputs, &mut pose);
    pose
}

#[test]
fn the_three_vrm_cubes_roll_and_copy_half_the_turn_of_their_source() {
    let Some(dir) = common::shared_folder("corpus/motion/vrm/three-vrm-node-constraint") else {
        return;
    };
    let rig = common::load_rig(&dir, "cubes.gltf");
    let (a, b, c) = (
        node_named(&rig, "CubeA"),
        node_named(&rig, "CubeB"),
        node_named(&rig, "CubeC"),
    );
    let constraints = &rig.facts.constraints;
    assert_eq!(constraints.len(), 2);
    let roll = constraints.iter().find(|k| k.node == b).expect("CubeB is rolled");
    assert_eq!((roll.source, roll.weight), (a, 1.0));
    assert_eq!(roll.kind, ConstraintKind::Roll { axis: glam::Vec3::Y });
    let copy = constraints.iter().find(|k| k.node == c).expect("CubeC copies");
    assert_eq!(
        (copy.source, copy.weight, copy.kind),
        (a, 0.5, ConstraintKind::Rotation)
    );

    let source = turn([35.0, 60.0, -20.0]);
    let pose = posed(&rig, a, source);
    // The cubes rest unturned: the twist about Y is the turn's Y part, renormalized (the
    // swing–twist split), and half the copy is the slerp from identity.
    let twist = DQuat::from_xyzw(0.0, source.y, 0.0, source.w).normalize();
    let half = DQuat::IDENTITY.slerp(source, 0.5);
    assert!(degrees_apart(pose.locals[b].rotation, twist) < 1e-3, "roll");
    assert!(degrees_apart(pose.locals[c].rotation, half) < 1e-3, "rotation");
    assert!(
        degrees_apart(pose.locals[b].rotation, source) > 10.0,
        "the roll drops the swing"
    );
}

fn with_constraints(nodes: Vec<Value>) -> Rig {
    let document = json!({
        "extensionsUsed": ["VRMC_node_constraint"],
        "scenes": [{ "nodes": [0] }],
        "nodes": nodes,
    });
    load_slice(&common::gltf_with(document, &[]), None, "constraints.gltf").expect("it loads")
}

fn constraint(kind: &str, body: Value) -> Value {
    json!({ "VRMC_node_constraint": { "specVersion": "1.0", "constraint": { kind: body } } })
}

#[test]
fn an_aim_turns_its_axis_toward_the_source_by_its_weight() {
    let rest = turn([10.0, 0.0, 25.0]);
    let q = |q: DQuat| json!([q.x, q.y, q.z, q.w]);
    let rig = with_constraints(vec![
        json!({ "name": "root", "children": [1, 3] }),
        json!({ "name": "arm", "translation": [0.0, 1.0, 0.0], "children": [2] }),
        json!({ "name": "hand", "translation": [0.0, 0.5, 0.0] }),
        json!({ "name": "aim", "translation": [0.3, 1.0, 0.2], "rotation": q(rest),
                "extensions": constraint("aim", json!({ "source": 2, "aimAxis": "NegativeX", "weight": 0.7 })) }),
    ]);
    assert_eq!(rig.facts.constraints.len(), 1);
    let (arm, aim) = (node_named(&rig, "arm"), node_named(&rig, "aim"));
    let bend = turn([0.0, 0.0, 70.0]);
    let pose = posed(&rig, arm, bend);
    // The hand as the bent arm puts it, the aim node's parent being the unturned root.
    let hand = DVec3::new(0.0, 1.0, 0.0) + bend * DVec3::new(0.0, 0.5, 0.0);
    let to = (hand - DVec3::new(0.3, 1.0, 0.2)).normalize();
    let from = rest * DVec3::NEG_X;
    let full = DQuat::from_rotation_arc(from, to) * rest;
    let expected = rest.slerp(full, 0.7);
    assert!(degrees_apart(pose.locals[aim].rotation, expected) < 1e-3);
    assert!(
        (full * DVec3::NEG_X - to).length() < 1e-9,
        "at full weight the axis meets the source"
    );
}

#[test]
fn a_cycle_of_constraints_is_reported_and_left_out() {
    let rotation = |source: u64| constraint("rotation", json!({ "source": source }));
    let rig = with_constraints(vec![
        json!({ "name": "root", "children": [1, 2, 3, 4] }),
        json!({ "name": "a", "extensions": rotation(2) }),
        json!({ "name": "b", "extensions": rotation(1) }),
        json!({ "name": "c", "extensions": rotation(1) }),
        json!({ "name": "d", "extensions": constraint("roll", json!({ "source": 0, "rollAxis": "W" })) }),
    ]);
    assert!(rig.facts.constraints.is_empty(), "{:?}", rig.facts.constraints);
    let cycles = rig.warnings.iter().filter(|w| w.contains("cycle")).count();
    assert_eq!(
        cycles, 3,
        "a, b and c (which hangs on a) are reported: {:#?}",
        rig.warnings
    );
    assert!(rig.warnings.iter().any(|w| w.contains("node 4") && w.contains("axis")));
    // Evaluating the pose neither follows the cycle nor fails.
    let pose = posed(&rig, node_named(&rig, "a"), turn([0.0, 40.0, 0.0]));
    assert_eq!(pose.locals[node_named(&rig, "b")].rotation, Quat::IDENTITY);
}
