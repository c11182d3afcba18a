//! `audit --motion`'s rest and bind pose checks on real rigs: the upper arms' angles against
//! ones worked out in f64 from the file's node transforms, and the pose named from them.

mod common;

use glam::{DMat4, DQuat, DVec3};
use serde_json::Value;

fn audit_motion_json(file: &std::path::Path) -> Value {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rigscope"))
        .args(["audit", file.to_str().unwrap(), "--motion", "--json"])
        .output()
        .expect("the rigscope binary runs");
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Every glTF node's world matrix at rest, from the JSON alone, in f64.
fn json_rest_worlds(json: &Value) -> Vec<DMat4> {
    let nodes = common::array(json, "nodes");
    let mut parent = vec![None; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for child in common::array(node, "children") {
            parent[common::index(child, "child")] = Some(i);
        }
    }
    let local = |i: usize| {
        let (t, r, s) = common::json_rest_trs(&nodes[i]);
        DMat4::from_scale_rotation_translation(DVec3::from(s), DQuat::from_array(r).normalize(), DVec3::from(t))
    };
    (0..nodes.len())
        .map(|i| {
            let mut world = local(i);
            let mut at = parent[i];
            while let Some(p) = at {
                world = local(p) * world;
                at = parent[p];
            }
            world
        })
        .collect()
}

fn node_named(json: &Value, name: &str) -> usize {
    let found: Vec<usize> = (0..common::array(json, "nodes").len())
        .filter(|&i| common::json_node_name(json, i) == name)
        .collect();
    assert_eq!(found.len(), 1, "one node named {name}");
    found[0]
}

#[test]
fn upper_arm_angles_match_the_files_node_transforms_and_name_the_pose() {
    let Some(dir) = common::shared_folder("rigs/real") else {
        return;
    };
    for (file, expected_arms) in [
        ("Xbot.glb", ["mixamorig:LeftArm", "mixamorig:RightArm"]),
        ("RobotExpressive.glb", ["UpperArm.L", "UpperArm.R"]),
    ] {
        let path = dir.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let json: Value = serde_json::from_slice(common::split_glb(&bytes).0).unwrap();
        let worlds = json_rest_worlds(&json);
        let report = audit_motion_json(&path);
        let rest_pose = &report["rest_pose"];
        let arms = rest_pose["arms"].as_array().unwrap();
        let names: Vec<&str> = arms.iter().map(|a| a["joint"].as_str().unwrap()).collect();
        assert_eq!(names, expected_arms, "{file}");
        let mut angles = Vec::new();
        for arm in arms {
            let at = |key: &str| worlds[node_named(&json, arm[key].as_str().unwrap())].w_axis.truncate();
            let d = at("elbow") - at("joint");
            let degrees = (-d.y).atan2(DVec3::new(d.x, 0.0, d.z).length()).to_degrees();
            let reported = arm["rest_deg"].as_f64().unwrap();
            assert!((reported - degrees).abs() < 0.01, "{file} {arm}: {degrees}");
            angles.push(degrees);
        }
        // T-pose within 15° of the horizontal, A-pose lowered by 15° to 60°.
        let pose = if angles.iter().all(|a| a.abs() <= 15.0) {
            "t-pose"
        } else if angles.iter().all(|a| *a > 15.0 && *a <= 60.0) {
            "a-pose"
        } else {
            "neither"
        };
        assert_eq!(rest_pose["arm_pose"], pose, "{file}: {angles:?}");
        let position = rest_pose["bind_position_error"].as_f64().unwrap();
        let joints = rest_pose["joints"].as_array().unwrap();
        let largest = joints
            .iter()
            .map(|j| j["position"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(position, largest, "{file}: the worst joint's figure is the largest");
    }
}
