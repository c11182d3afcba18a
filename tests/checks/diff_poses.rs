//! `rigscope diff --at / --poses`: two files of the demo rig that differ in one key of a root
//! joint's translation, posed at chosen times; the reported skinned-vertex and joint distances
//! are the key's offset as linear interpolation spreads it, worked out by hand.

use crate::common;

use crate::common::{run_rigscope, split_glb};
use serde_json::{Value, json};
use std::path::Path;

/// Times of the added translation keys, in seconds.
const KEY_TIMES: [f32; 3] = [0.0, 0.5, 1.0];

/// The demo rig with one more clip, `Slide`: a linear translation channel on its root joint
/// `joint0` (no parent, at the origin) keyed at [`KEY_TIMES`] to `middle_offset` at the middle
/// key and the origin elsewhere, written as a .gltf into `path`.
fn demo_with_root_keys(path: &Path, middle_offset: [f32; 3]) {
    let glb = rigscope::rig::demo::demo_glb(rigscope::rig::demo::DEMO_JOINTS);
    let (json, bin) = split_glb(&glb);
    let mut document: Value = serde_json::from_slice(json).unwrap();
    let mut bin = bin.expect("the demo has a BIN chunk").to_vec();
    let root = document["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["name"] == "joint0")
        .expect("the demo's root joint");
    let root_node = &document["nodes"][root];
    assert!(
        root_node.get("translation").is_none() && root_node.get("rotation").is_none(),
        "the root joint rests at the origin, so its translation keys are world positions"
    );
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let times_at = bin.len();
    bin.extend(KEY_TIMES.iter().flat_map(|t| t.to_le_bytes()));
    let values_at = bin.len();
    for key in 0..KEY_TIMES.len() {
        let value = if key == 1 { middle_offset } else { [0.0; 3] };
        bin.extend(value.iter().flat_map(|v| v.to_le_bytes()));
    }
    let views = document["bufferViews"].as_array_mut().unwrap();
    views.push(json!({"buffer": 0, "byteOffset": times_at, "byteLength": 12}));
    views.push(json!({"buffer": 0, "byteOffset": values_at, "byteLength": 36}));
    let (times_view, values_view) = (views.len() - 2, views.len() - 1);
    let accessors = document["accessors"].as_array_mut().unwrap();
    accessors.push(
        json!({"bufferView": times_view, "componentType": 5126, "count": 3, "type": "SCALAR",
        "min": [KEY_TIMES[0]], "max": [KEY_TIMES[2]]}),
    );
    accessors.push(json!({"bufferView": values_view, "componentType": 5126, "count": 3, "type": "VEC3"}));
    let (input, output) = (accessors.len() - 2, accessors.len() - 1);
    document["animations"].as_array_mut().unwrap().push(json!({
        "name": "Slide",
        "samplers": [{"input": input, "output": output, "interpolation": "LINEAR"}],
        "channels": [{"sampler": 0, "target": {"node": root, "path": "translation"}}],
    }));
    std::fs::write(path, common::gltf_with(document, &bin)).unwrap();
}

#[test]
fn one_moved_root_key_is_the_distance_of_every_vertex_and_joint_at_its_time() {
    let dir = common::temp_dir("diff-poses");
    let (a, b) = (dir.join("a.gltf"), dir.join("b.gltf"));
    let offset = [0.03f32, -0.04, 0.12];
    demo_with_root_keys(&a, [0.0; 3]);
    demo_with_root_keys(&b, offset);
    // Every joint descends from the moved root and every vertex's weights sum to 1, so at the
    // key all of them are `offset` apart; a quarter of the way (0.25 s) half as far.
    let length = offset.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>().sqrt();
    assert!((length - 0.13).abs() < 1e-7);
    let (code, out, err) = run_rigscope(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--at",
        "0.5",
        "--at",
        "0.25",
        "--at",
        "1.5",
        "--clip",
        "Slide",
        "--json",
    ]);
    assert_eq!(
        code,
        Some(1),
        "the files differ past the position threshold: {out}{err}"
    );
    let document: Value = serde_json::from_str(&out).expect("one JSON document");
    let poses = &document["poses"];
    assert_eq!(poses["clip_a"], "Slide");
    assert_eq!(poses["clip_b"], "Slide");
    let vertices = poses["compared_vertices"].as_u64().unwrap();
    assert!(vertices > 1000, "{vertices} vertex pairs");
    assert_eq!(poses["unpaired_vertices"], 0);
    assert_eq!(poses["matched_at_start"], 0, "the bind pose matched every vertex");
    assert_eq!(poses["compared_joints"], rigscope::rig::demo::DEMO_JOINTS as u64);
    let size = document["size"].as_f64().unwrap();
    let times = poses["times"].as_array().unwrap();
    assert_eq!(times.len(), 3);
    for (at, expected) in times.iter().zip([length, length / 2.0, 0.0]) {
        let time = at["time"].as_f64().unwrap();
        for what in ["vertex", "joint"] {
            let distance = at[format!("{what}_distance")].as_f64().unwrap();
            let relative = at[format!("{what}_relative")].as_f64().unwrap();
            assert!(
                (distance - expected).abs() < 2e-6,
                "{what} at {time} s: {distance}, expected {expected}"
            );
            assert!((relative * size - distance).abs() < 1e-6, "{what} at {time} s");
        }
        assert!(at["worst_joint"].as_str().unwrap().starts_with("joint"));
        assert!(at["worst_vertex_a"]["vertex"].is_u64());
    }

    let (code, text, _) = run_rigscope(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--poses", "3"]);
    assert_eq!(code, Some(1));
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().contains(" s: vertices "))
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    // Without --clip, A's first animated clip: Wave (2 s), where the files agree; its start,
    // middle and end.
    for (line, time) in lines.iter().zip(["0.000 s", "1.000 s", "2.000 s"]) {
        assert!(line.trim_start().starts_with(time), "{line}");
        assert!(!line.contains('*'), "no distance past the threshold at {time}: {line}");
    }

    // B posed a quarter second later: at A's 0.25 s, B's key at 0.5 s, the whole offset.
    let (code, out, _) = run_rigscope(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--at",
        "0.25",
        "--shift-b",
        "0.25",
        "--clip",
        "Slide",
        "--json",
    ]);
    assert_eq!(code, Some(1));
    let document: Value = serde_json::from_str(&out).expect("one JSON document");
    let at = &document["poses"]["times"][0];
    assert_eq!(document["poses"]["shift_b"], 0.25);
    for what in ["vertex_distance", "joint_distance"] {
        let distance = at[what].as_f64().unwrap();
        assert!((distance - length).abs() < 2e-6, "{what} with B shifted: {distance}");
    }

    // Matched where both draw them at the clip's start instead of in the bind pose: the same
    // pairs, the same distance.
    let (code, out, _) = run_rigscope(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--at",
        "0.5",
        "--clip",
        "Slide",
        "--match-at-start",
        "--json",
    ]);
    assert_eq!(code, Some(1));
    let document: Value = serde_json::from_str(&out).expect("one JSON document");
    let poses = &document["poses"];
    assert_eq!(poses["compared_vertices"].as_u64(), Some(vertices));
    assert_eq!(poses["matched_at_start"].as_u64(), Some(vertices));
    assert_eq!(poses["unpaired_vertices"], 0);
    let distance = poses["times"][0]["vertex_distance"].as_f64().unwrap();
    assert!((distance - length).abs() < 2e-6, "{distance}");

    let (code, same, _) = run_rigscope(&["diff", a.to_str().unwrap(), a.to_str().unwrap(), "--at", "0.5"]);
    assert_eq!(code, Some(0), "{same}");
}

#[test]
fn a_clip_neither_file_has_is_a_clear_error() {
    let dir = common::temp_dir("diff-poses-clip");
    let a = dir.join("a.gltf");
    demo_with_root_keys(&a, [0.0; 3]);
    let path = a.to_str().unwrap();
    let (code, _, err) = run_rigscope(&["diff", path, path, "--at", "0", "--clip", "Samba"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("A has no clip named 'Samba'") && err.contains("'Wave'"),
        "{err}"
    );
    let (code, _, err) = run_rigscope(&["diff", path, path, "--at", "0", "--clip-b", "Samba"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("B has no clip named 'Samba'"), "{err}");
    let (code, out, _) = run_rigscope(&["diff", path, path, "--at", "NaN", "--json"]);
    assert_eq!(code, Some(2));
    let document: Value = serde_json::from_str(&out).expect("one JSON document");
    assert!(document["error"].as_str().unwrap().contains("not a finite number"));
}
