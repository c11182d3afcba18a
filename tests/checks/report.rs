//! The rig report against values computed independently: from Fox.glb's own JSON and binary
//! data (read by the test helpers, not the importer), and from small rigs built here whose
//! expected findings follow from the numbers written into them.

use crate::common::{Doc, array, index, shared_rigs};
use base64::Engine;
use glam::{Mat4, Quat, Vec3};
use rigscope::report::{Finding, RigReport, Severity};
use rigscope::rig::{Rig, load_file, load_slice};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Instant;

/// Collects accessors into one buffer and writes glTF JSON with it as a data URI.
#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    fn accessor(&mut self, bytes: Vec<u8>, component_type: u32, count: usize, kind: &str) -> usize {
        let offset = self.bin.len();
        self.views
            .push(json!({"buffer": 0, "byteOffset": offset, "byteLength": bytes.len()}));
        self.bin.extend(bytes);
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        self.accessors.push(json!({
            "bufferView": self.views.len() - 1, "componentType": component_type, "count": count, "type": kind,
        }));
        self.accessors.len() - 1
    }

    fn floats(&mut self, values: &[f32], kind: &str, per_element: usize) -> usize {
        let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let a = self.accessor(bytes, 5126, values.len() / per_element, kind);
        if kind == "SCALAR" || kind == "VEC3" {
            // min/max as glTF requires for POSITION and key times.
            let mut min = vec![f32::INFINITY; per_element];
            let mut max = vec![f32::NEG_INFINITY; per_element];
            for element in values.chunks(per_element) {
                for (c, &v) in element.iter().enumerate() {
                    min[c] = min[c].min(v);
                    max[c] = max[c].max(v);
                }
            }
            self.accessors[a]["min"] = json!(min);
            self.accessors[a]["max"] = json!(max);
        }
        a
    }

    fn joints(&mut self, joints: &[[u16; 4]]) -> usize {
        let bytes = joints.iter().flatten().flat_map(|j| j.to_le_bytes()).collect();
        self.accessor(bytes, 5123, joints.len(), "VEC4")
    }

    fn weights(&mut self, weights: &[[f32; 4]]) -> usize {
        let flat: Vec<f32> = weights.iter().flatten().copied().collect();
        self.floats(&flat, "VEC4", 4)
    }

    fn matrices(&mut self, matrices: &[Mat4]) -> usize {
        let flat: Vec<f32> = matrices.iter().flat_map(|m| m.to_cols_array()).collect();
        self.floats(&flat, "MAT4", 16)
    }

    fn finish(self, mut document: Value) -> Rig {
        document["asset"] = json!({"version": "2.0"});
        let data = base64::engine::general_purpose::STANDARD.encode(&self.bin);
        document["buffers"] =
            json!([{"byteLength": self.bin.len(), "uri": format!("data:application/octet-stream;base64,{data}")}]);
        document["bufferViews"] = Value::Array(self.views);
        document["accessors"] = Value::Array(self.accessors);
        let bytes = serde_json::to_vec(&document).unwrap();
        load_slice(&bytes, None, "built.gltf").unwrap_or_else(|e| panic!("the built rig loads: {e}"))
    }
}

/// A strip of `n` vertices along +Y (positions only; indices none, so n should be a multiple of 3).
fn strip_positions(n: usize) -> Vec<f32> {
    (0..n).flat_map(|i| [(i % 2) as f32, i as f32 * 0.1, 0.0]).collect()
}

fn findings_with<'r>(report: &'r RigReport, code: &str) -> Vec<&'r Finding> {
    report.findings.iter().filter(|f| f.code == code).collect()
}

fn one<'r>(report: &'r RigReport, code: &str) -> &'r Finding {
    let found = findings_with(report, code);
    assert_eq!(
        found.len(),
        1,
        "expected one '{code}' finding, the report has {:#?}",
        report.findings.iter().map(|f| (f.code, &f.message)).collect::<Vec<_>>()
    );
    found[0]
}

#[test]
fn fox_summaries_match_its_own_json_and_data() {
    let Some(dir) = shared_rigs() else { return };
    let path = dir.join("Fox.glb");
    let rig = load_file(&path).unwrap();
    let report = RigReport::new(&rig);
    let doc = Doc::open(&path);
    let json = &doc.json;

    // Mesh: vertices, triangles (no indices: one triangle per three vertices), influences.
    let primitive = &json["meshes"][0]["primitives"][0];
    assert!(primitive.get("indices").is_none());
    let weights = doc.read_floats(index(&primitive["attributes"]["WEIGHTS_0"], "WEIGHTS_0"));
    let summary = &report.meshes[0].primitives[0];
    assert_eq!(summary.vertices, weights.len());
    assert_eq!(summary.triangles, weights.len() / 3);
    let counts: Vec<usize> = weights
        .iter()
        .map(|w| w.iter().filter(|&&x| x != 0.0).count())
        .collect();
    assert_eq!(summary.influences_max, *counts.iter().max().unwrap());
    let mean = counts.iter().sum::<usize>() as f32 / counts.len() as f32;
    assert!(
        (summary.influences_mean - mean).abs() < 1e-5,
        "{} vs {mean}",
        summary.influences_mean
    );
    assert_eq!(summary.influence_sets, 1);

    // Skin: joint count, the joints actually weighted (JOINTS_0 is unsigned short), the root.
    let skin = &json["skins"][0];
    let joints: Vec<usize> = array(skin, "joints").iter().map(|j| index(j, "joint")).collect();
    assert_eq!(report.skins[0].joints, joints.len());
    let joints_accessor = &json["accessors"][index(&primitive["attributes"]["JOINTS_0"], "JOINTS_0")];
    assert_eq!(joints_accessor["componentType"], 5123);
    let view = &json["bufferViews"][index(&joints_accessor["bufferView"], "bufferView")];
    let start = view["byteOffset"].as_u64().unwrap_or(0) as usize
        + joints_accessor["byteOffset"].as_u64().unwrap_or(0) as usize;
    let stride = view["byteStride"].as_u64().unwrap_or(8) as usize;
    let bin = &doc.buffers[0];
    let mut weighted = BTreeSet::new();
    for (v, w) in weights.iter().enumerate() {
        for (c, &weight) in w.iter().enumerate() {
            let at = start + v * stride + 2 * c;
            if weight != 0.0 {
                weighted.insert(u16::from_le_bytes([bin[at], bin[at + 1]]));
            }
        }
    }
    assert_eq!(report.skins[0].joints_used, weighted.len());
    let unused = one(&report, "joints-unused");
    assert_eq!(unused.nodes.len(), joints.len() - weighted.len());
    // Fox names its skeleton root; every joint hangs under it, so it is the common root.
    let skeleton = index(&skin["skeleton"], "skeleton");
    let root = report.skins[0].root.expect("Fox's joints share a root");
    assert_eq!(rig.nodes[root].name, json["nodes"][skeleton]["name"].as_str().unwrap());
    assert!(report.skins[0].shared_hierarchy);

    // Clips: names, durations (largest key time of any input accessor), channels, interpolation,
    // animated nodes.
    for (c, animation) in array(json, "animations").iter().enumerate() {
        let clip = &report.clips[c];
        assert_eq!(clip.name, animation["name"].as_str().unwrap());
        let samplers = array(animation, "samplers");
        let duration = samplers
            .iter()
            .map(|s| {
                json["accessors"][index(&s["input"], "input")]["max"][0]
                    .as_f64()
                    .unwrap()
            })
            .fold(0.0, f64::max);
        assert!(
            (clip.duration as f64 - duration).abs() < 1e-5,
            "{}: {} vs {duration}",
            clip.name,
            clip.duration
        );
        let channels = array(animation, "channels");
        assert_eq!(clip.channels, channels.len());
        let targets: BTreeSet<u64> = channels
            .iter()
            .map(|ch| ch["target"]["node"].as_u64().unwrap())
            .collect();
        assert_eq!(clip.animated_nodes, targets.len());
        let modes: BTreeSet<&str> = samplers
            .iter()
            .map(|s| s["interpolation"].as_str().unwrap_or("LINEAR"))
            .collect();
        assert_eq!(clip.interpolations.iter().copied().collect::<BTreeSet<_>>(), modes);
    }
    assert_eq!(report.count(Severity::Error), 0, "{:#?}", report.findings);
}

#[test]
fn fox_report_takes_a_small_fraction_of_the_load_time() {
    let Some(dir) = shared_rigs() else { return };
    let path = dir.join("Fox.glb");
    let mut load = f64::INFINITY;
    let mut report_time = f64::INFINITY;
    for _ in 0..5 {
        let started = Instant::now();
        let rig = load_file(&path).unwrap();
        load = load.min(started.elapsed().as_secs_f64());
        let started = Instant::now();
        let report = RigReport::new(&rig);
        report_time = report_time.min(started.elapsed().as_secs_f64());
        assert!(report.seconds <= started.elapsed().as_secs_f64());
    }
    eprintln!("Fox.glb: load {:.3} ms, report {:.3} ms", load * 1e3, report_time * 1e3);
    assert!(report_time * 5.0 < load, "report {report_time} s vs load {load} s");
}

#[test]
fn weight_findings_count_the_vertices_an_independent_pass_counts() {
    // 30 vertices, two influence sets; each vertex gets a weight pattern chosen by i % 10.
    let n = 30;
    let pattern = |i: usize| -> ([u16; 8], [f32; 8]) {
        match i % 10 {
            0 => ([0, 1, 0, 0, 0, 0, 0, 0], [0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]), // fine
            1 => (
                [0, 1, 0, 0, 0, 0, 0, 0],
                [0.5, 0.3 + i as f32 * 0.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            ), // sum ≠ 1
            2 => ([0, 1, 0, 0, 0, 0, 0, 0], [1.5, -0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]), // negative
            3 => ([0, 0, 0, 0, 0, 0, 0, 0], [0.0; 8]),                                 // all zero
            4 => ([0, 1, 2, 0, 1, 2, 0, 0], [0.2, 0.2, 0.2, 0.0, 0.2, 0.2, 0.0, 0.0]), // 5 non-zero, duplicates
            5 => ([0, 1, 2, 0, 0, 0, 0, 0], [0.25, 0.25, 0.25, 0.25, 0.0, 0.0, 0.0, 0.0]), // 4 influences, dup 0
            6 => ([0, 0, 0, 0, 0, 0, 0, 0], [f32::NAN, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]), // NaN
            7 => ([2, 0, 0, 0, 0, 0, 0, 0], [1.0004, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]), // within tolerance
            _ => ([1, 0, 0, 0, 0, 0, 0, 0], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        }
    };
    let mut b = Builder::default();
    let positions = b.floats(&strip_positions(n), "VEC3", 3);
    let (mut j0, mut j1, mut w0, mut w1) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let (j, w) = pattern(i);
        j0.push([j[0], j[1], j[2], j[3]]);
        j1.push([j[4], j[5], j[6], j[7]]);
        w0.push([w[0], w[1], w[2], w[3]]);
        w1.push([w[4], w[5], w[6], w[7]]);
    }
    let (j0, j1, w0, w1) = (b.joints(&j0), b.joints(&j1), b.weights(&w0), b.weights(&w1));
    let rig = b.finish(json!({
        "nodes": [{"mesh": 0, "skin": 0, "children": [1]}, {"children": [2]}, {}],
        "skins": [{"joints": [1, 2, 0]}],
        "meshes": [{"primitives": [{"attributes": {
            "POSITION": positions, "JOINTS_0": j0, "JOINTS_1": j1, "WEIGHTS_0": w0, "WEIGHTS_1": w1}}]}],
    }));
    let report = RigReport::new(&rig);

    // The same checks, written out directly over the patterns.
    let mut unnormalized = Vec::new();
    let mut worst = 1.0f32;
    let (mut negative, mut zero, mut nan, mut over_four, mut duplicate) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let (j, w) = pattern(i);
        if w.iter().any(|x| x.is_nan()) {
            nan.push(i as u32);
            continue;
        }
        let sum: f32 = w.iter().sum();
        let nonzero: Vec<u16> = (0..8).filter(|&k| w[k] != 0.0).map(|k| j[k]).collect();
        if w.iter().any(|&x| x < 0.0) {
            negative.push(i as u32);
        }
        if nonzero.is_empty() {
            zero.push(i as u32);
        } else if (sum - 1.0).abs() > 1e-3 {
            unnormalized.push(i as u32);
            if (sum - 1.0).abs() > (worst - 1.0).abs() {
                worst = sum;
            }
        }
        if nonzero.len() > 4 {
            over_four.push(i as u32);
        }
        if nonzero.iter().collect::<BTreeSet<_>>().len() < nonzero.len() {
            duplicate.push(i as u32);
        }
    }
    let listed = |f: &Finding| f.vertices.as_ref().unwrap().vertices.clone();
    let f = one(&report, "weights-not-normalized");
    assert_eq!(listed(f), unnormalized);
    assert!(
        f.message.contains(&format!("{} vertices", unnormalized.len())),
        "{}",
        f.message
    );
    assert!(
        f.message.contains(&format!("worst sum {worst:.4}")),
        "{} vs {worst}",
        f.message
    );
    assert_eq!(f.severity, Severity::Error, "the worst sum is {worst}, far from 1");
    assert_eq!(listed(one(&report, "weights-negative")), negative);
    assert_eq!(listed(one(&report, "weights-all-zero")), zero);
    assert_eq!(listed(one(&report, "weights-not-finite")), nan);
    assert_eq!(listed(one(&report, "influences-over-4")), over_four);
    assert_eq!(listed(one(&report, "joints-duplicate")), duplicate);
    let summary = &report.meshes[0].primitives[0];
    assert_eq!(summary.influence_sets, 2);
    assert_eq!(summary.influences_max, 5);
}

/// A three-joint chain (nodes 1, 2, 3 under node 0) skinning a strip held by node 4, with the
/// given inverse bind matrices and node 4's transform.
fn chain(inverse_binds: &[Mat4; 3], mesh_node: Value, clips: Value) -> Rig {
    let mut b = Builder::default();
    let n = 6;
    let positions = b.floats(&strip_positions(n), "VEC3", 3);
    let joints = b.joints(&(0..n).map(|i| [(i / 2) as u16, 0, 0, 0]).collect::<Vec<_>>());
    let weights = b.weights(&vec![[1.0, 0.0, 0.0, 0.0]; n]);
    let ibm = b.matrices(inverse_binds);
    let mut animations = Vec::new();
    for (node, path, times, values) in clips.as_array().cloned().unwrap_or_default().iter().map(|c| {
        (
            c["node"].as_u64().unwrap(),
            c["path"].as_str().unwrap().to_owned(),
            c["times"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect::<Vec<_>>(),
            c["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect::<Vec<_>>(),
        )
    }) {
        let input = b.floats(&times, "SCALAR", 1);
        let kind = if path == "rotation" { "VEC4" } else { "VEC3" };
        let width = if path == "rotation" { 4 } else { 3 };
        let output = b.floats(&values, kind, width);
        animations.push(json!({
            "name": format!("{path} of {node}"),
            "samplers": [{"input": input, "output": output}],
            "channels": [{"sampler": 0, "target": {"node": node, "path": path}}],
        }));
    }
    let mut mesh_node = mesh_node;
    mesh_node["mesh"] = json!(0);
    mesh_node["skin"] = json!(0);
    b.finish(json!({
        "nodes": [
            {"children": [1]},
            {"children": [2], "translation": [0, 0, 0]},
            {"children": [3], "translation": [0, 1, 0]},
            {"translation": [0, 1, 0]},
            mesh_node,
            {},
        ],
        "skins": [{"joints": [1, 2, 3], "inverseBindMatrices": ibm}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": positions, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}],
        "animations": animations,
    }))
}

/// Inverse binds matching the chain's rest pose (joints at y = 0, 1, 2).
fn rest_binds() -> [Mat4; 3] {
    [0.0, 1.0, 2.0].map(|y| Mat4::from_translation(Vec3::new(0.0, -y, 0.0)))
}

#[test]
fn rest_pose_matching_the_binds_has_no_pose_findings() {
    let rig = chain(&rest_binds(), json!({}), json!([]));
    let report = RigReport::new(&rig);
    let skin = &report.skins[0];
    assert!(skin.rest_vs_bind.unwrap().is_bind_pose(), "{:?}", skin.rest_vs_bind);
    assert_eq!(rig.nodes[skin.root.unwrap()].name, "node 1");
    assert!(skin.shared_hierarchy);
    assert_eq!(report.count(Severity::Error), 0, "{:#?}", report.findings);
    assert_eq!(report.count(Severity::Warning), 0, "{:#?}", report.findings);
}

#[test]
fn first_frame_deviation_is_measured_against_the_binds() {
    // Clip 0 moves joint 3 (node 3) up by 2 at its first key; clip 1 turns node 2 by 30°.
    let q = Quat::from_rotation_z(30f32.to_radians());
    let rig = chain(
        &rest_binds(),
        json!({}),
        json!([
            {"node": 3, "path": "translation", "times": [0.0, 1.0], "values": [0, 3, 0, 0, 1, 0]},
            {"node": 2, "path": "rotation", "times": [0.0], "values": [q.x, q.y, q.z, q.w]},
        ]),
    );
    let report = RigReport::new(&rig);
    let moved = report.clips[0].first_frame_vs_bind.unwrap();
    assert!((moved.distance - 2.0).abs() < 1e-5, "{moved:?}");
    assert_eq!(rig.nodes[moved.joint].name, "node 3");
    assert!(moved.degrees < 1e-3);
    // The mesh spans y 0..0.5 and x 0..1: its diagonal is the size the distance is measured in.
    let size = (1.0f32 + 0.5 * 0.5).sqrt();
    assert!(
        (moved.relative - 2.0 / size).abs() < 1e-4,
        "{} vs {}",
        moved.relative,
        2.0 / size
    );

    // Turning node 2 turns node 3 too and moves it off its bind place: sin/cos of 30°, radius 1.
    let turned = report.clips[1].first_frame_vs_bind.unwrap();
    assert!((turned.degrees - 30.0).abs() < 0.01, "{turned:?}");
    let expected = ((30f32.to_radians().sin()).powi(2) + (1.0 - 30f32.to_radians().cos()).powi(2)).sqrt();
    assert!(
        (turned.distance - expected).abs() < 1e-5,
        "{} vs {expected}",
        turned.distance
    );
    let found = findings_with(&report, "first-frame-not-bind-pose");
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].severity, Severity::Info);
    assert_eq!(found[0].clip, Some(0));
}

/// A mesh bound under a turned, centimetre-scaled armature (as Mixamo exports): the inverse
/// binds are relative to the mesh node, so every `world(joint) · inverseBind` is that node's
/// world matrix at rest and the mesh is drawn there undeformed. That is the bind pose, and
/// distances are in world units against the rig's size where it is drawn.
#[test]
fn binds_relative_to_a_scaled_turned_mesh_node_are_the_bind_pose_there() {
    let turn = Quat::from_rotation_x(90f32.to_radians());
    let placement = Mat4::from_rotation_translation(turn, Vec3::ZERO) * Mat4::from_scale(Vec3::splat(0.01));
    let binds = rest_binds().map(|ibm| ibm * placement);
    let mesh_node = json!({"rotation": [turn.x, turn.y, turn.z, turn.w], "scale": [0.01, 0.01, 0.01]});
    let rig = chain(
        &binds,
        mesh_node,
        json!([{"node": 3, "path": "translation", "times": [0.0, 1.0], "values": [0, 3, 0, 0, 1, 0]}]),
    );
    let report = RigReport::new(&rig);
    let rest = report.skins[0].rest_vs_bind.unwrap();
    assert!(rest.is_bind_pose(), "{rest:?}");
    assert!(findings_with(&report, "first-frame-not-bind-pose").len() == 1);
    let moved = report.clips[0].first_frame_vs_bind.unwrap();
    assert!((moved.distance - 2.0).abs() < 1e-4, "{moved:?}");
    assert!(moved.degrees < 0.01, "{moved:?}");
    // The mesh spans 1 × 0.5 in its own units, a hundredth of that where it is drawn.
    let size = 0.01 * (1.0f32 + 0.5 * 0.5).sqrt();
    assert!(
        (moved.relative / (2.0 / size) - 1.0).abs() < 1e-4,
        "{} vs {}",
        moved.relative,
        2.0 / size
    );
}

#[test]
fn inverse_bind_problems_name_their_joints() {
    let mut binds = rest_binds();
    binds[0] = Mat4::from_scale(Vec3::new(1.0, 2.0, 1.0)) * binds[0];
    binds[1].y_axis.x = 0.5; // shear
    binds[2].x_axis.w = 0.25; // projective: not affine
    let rig = chain(&binds, json!({}), json!([]));
    let report = RigReport::new(&rig);
    let scale = one(&report, "bind-pose-scale-shear");
    let names: Vec<&str> = scale.nodes.iter().map(|&n| rig.nodes[n].name.as_str()).collect();
    assert_eq!(names, ["node 1", "node 2"]);
    assert_eq!(scale.severity, Severity::Warning);
    let affine = one(&report, "inverse-bind-not-affine");
    assert_eq!(rig.nodes[affine.nodes[0]].name, "node 3");
    assert_eq!(affine.severity, Severity::Error);

    let mut binds = rest_binds();
    binds[1] = Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0));
    let report = RigReport::new(&chain(&binds, json!({}), json!([])));
    assert!(
        one(&report, "inverse-bind-not-invertible")
            .message
            .contains("1 (node 2)")
    );
}

#[test]
fn mesh_node_transform_and_self_joint_are_named() {
    let rig = chain(&rest_binds(), json!({"translation": [5, 0, 0]}), json!([]));
    let report = RigReport::new(&rig);
    let f = one(&report, "skinned-mesh-transform");
    assert_eq!(rig.nodes[f.nodes[0]].name, "node 4");

    // The mesh held by joint node 3 itself.
    let mut b = Builder::default();
    let positions = b.floats(&strip_positions(3), "VEC3", 3);
    let joints = b.joints(&[[0, 0, 0, 0]; 3]);
    let weights = b.weights(&[[1.0, 0.0, 0.0, 0.0]; 3]);
    let rig = b.finish(json!({
        "nodes": [{"children": [1]}, {"mesh": 0, "skin": 0}],
        "skins": [{"joints": [0, 1]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": positions, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}],
    }));
    let report = RigReport::new(&rig);
    let f = one(&report, "skinned-mesh-is-joint");
    assert_eq!(f.nodes, [1]);
    assert_eq!(one(&report, "joints-unused").nodes, [1], "joint index 1 has no weight");
}

#[test]
fn key_findings_name_channels_and_values() {
    // Rotation keys of length 1.5 and 0, and a clip animating node 5, which is no joint.
    let rig = chain(
        &rest_binds(),
        json!({}),
        json!([
            {"node": 2, "path": "rotation", "times": [0.0, 1.0], "values": [0, 0, 0, 1, 0, 0, 0, 1.5]},
            {"node": 3, "path": "rotation", "times": [0.0, 1.0], "values": [0, 0, 0, 1, 0, 0, 0, 0]},
            {"node": 5, "path": "translation", "times": [0.0, 1.0], "values": [0, 0, 0, 1, 0, 0]},
        ]),
    );
    let report = RigReport::new(&rig);
    let f = one(&report, "quaternion-not-unit");
    assert!(f.message.contains("key 1 has length 1.5000"), "{}", f.message);
    assert_eq!(rig.nodes[f.nodes[0]].name, "node 2");
    let f = one(&report, "quaternion-zero");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(rig.nodes[f.nodes[0]].name, "node 3");
    let f = one(&report, "channel-targets-non-joint");
    assert_eq!(f.clip, Some(2));
    assert_eq!(rig.nodes[f.nodes[0]].name, "node 5");
}

#[test]
fn separate_hierarchies_have_no_common_root() {
    let mut b = Builder::default();
    let positions = b.floats(&strip_positions(3), "VEC3", 3);
    let joints = b.joints(&[[0, 1, 0, 0]; 3]);
    let weights = b.weights(&[[0.5, 0.5, 0.0, 0.0]; 3]);
    let rig = b.finish(json!({
        "nodes": [{"children": [1]}, {}, {"children": [3]}, {}, {"mesh": 0, "skin": 0}],
        "skins": [{"joints": [1, 3]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": positions, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}],
    }));
    let report = RigReport::new(&rig);
    assert_eq!(report.skins[0].root, None);
    assert!(!report.skins[0].shared_hierarchy);
    let f = one(&report, "skin-no-common-root");
    let names: BTreeSet<&str> = f.nodes.iter().map(|&n| rig.nodes[n].name.as_str()).collect();
    assert_eq!(names, BTreeSet::from(["node 0", "node 2"]));
}

#[test]
fn the_json_report_carries_every_finding() {
    let rig = chain(&rest_binds(), json!({"translation": [5, 0, 0]}), json!([]));
    let report = RigReport::new(&rig);
    let document = report.to_json(&rig);
    let findings = document["findings"].as_array().unwrap();
    assert_eq!(findings.len(), report.findings.len());
    for (f, j) in report.findings.iter().zip(findings) {
        assert_eq!(
            j["code"].as_str().map(str::parse),
            Some(Ok(f.code)),
            "the JSON names the code"
        );
        assert_eq!(j["message"], f.message.as_str());
        assert_eq!(j["severity"], f.severity.label());
    }
    // Findings name nodes by the file's own indices too: the mesh node is glTF node 4.
    let transform = findings.iter().find(|f| f["code"] == "skinned-mesh-transform").unwrap();
    assert_eq!(transform["gltf_nodes"], json!([4]));
    assert_eq!(transform["node_names"], json!(["node 4"]));
    assert_eq!(document["skins"][0]["joints"], 3);
    assert_eq!(document["meshes"][0]["primitives"][0]["vertices"], 6);
    let text = report.to_text(&rig);
    assert!(text.contains("skinned-mesh-transform"), "{text}");
}

/// readyplayer.me's avatar with Michelle's clips: the first frame's joint move is measured against
/// the whole figure (the box around every primitive's POSITION bounds the file gives), not
/// against the eye mesh the first skinned instance draws.
#[test]
fn a_first_frame_s_move_is_relative_to_the_whole_rig_s_size() {
    let Some(corpus) = crate::common::shared_folder("corpus/rigs") else {
        return;
    };
    let path = corpus.join("readyplayer.me.glb");
    let clips = rigscope::retarget::ClipFiles {
        files: vec![corpus.join("Michelle.glb")],
        ..Default::default()
    };
    let (rig, _) = clips.add_to(load_file(&path).unwrap()).unwrap();
    let report = RigReport::new(&rig);
    let samba = (report.clips.iter())
        .find(|c| c.name.contains("SambaDance"))
        .expect("Michelle's clip is carried over");
    let moved = samba.first_frame_vs_bind.expect("measured");

    let doc = Doc::open(&path);
    let (mut low, mut high) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    let meshes = doc.array("meshes");
    for node in doc.array("nodes").iter().filter(|n| n.get("mesh").is_some()) {
        assert!(
            node.get("skin").is_some(),
            "every mesh is skinned, bound in world space"
        );
        for primitive in array(&meshes[index(&node["mesh"], "mesh")], "primitives") {
            let accessor = &doc.array("accessors")[index(&primitive["attributes"]["POSITION"], "POSITION")];
            let corner = |key: &str| {
                let v = crate::common::numbers(&accessor[key]);
                Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32)
            };
            low = low.min(corner("min"));
            high = high.max(corner("max"));
        }
    }
    let size = (high - low).length();
    assert!(
        (moved.relative - moved.distance / size).abs() < 1e-4 * moved.relative,
        "{} of the rig's {size}: {} expected, {} reported",
        moved.distance,
        moved.distance / size,
        moved.relative
    );
    let text = report.to_text(&rig);
    let percent = format!("{:.1}% of the rig's size", moved.distance / size * 100.0);
    assert!(text.contains(&percent), "{percent} in\n{text}");
}
