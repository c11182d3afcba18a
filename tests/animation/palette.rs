//! Joint palettes: which clips start at the bind pose, an f64 check of the palette formula, and
//! CPU skinning at the bind pose.

use crate::common;

use crate::common::{Doc, array, index, json_rest_trs, rig_node_of, shared_rigs};
use glam::{DMat4, DQuat, DVec3, Mat4, Vec3};
use rigscope::anim::PoseBuffers;
use rigscope::rig::Rig;
use rigscope::skin::skin_lbs_reference;

/// A skinned rig with its document read independently of the importer.
struct Case {
    name: &'static str,
    rig: Rig,
    doc: Doc,
}

/// The shared rigs that have skins (when the folder is present) and the demo rig.
fn skinned_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    if let Some(dir) = shared_rigs() {
        for name in ["Fox.glb", "SimpleSkin.gltf", "RiggedSimple.gltf"] {
            let rig = common::load_rig(&dir, name);
            let doc = Doc::open(&dir.join(name));
            cases.push(Case { name, rig, doc });
        }
    }
    cases.push(Case {
        name: "demo.glb",
        rig: common::load_demo(),
        doc: Doc::from_bytes(rigscope::rig::demo::DEMO_GLB, None),
    });
    cases
}

/// Largest absolute difference between any palette matrix of any instance and identity.
fn palette_deviation(evaluator: &PoseBuffers) -> f32 {
    evaluator
        .palettes
        .iter()
        .flatten()
        .map(|m| {
            (*m - Mat4::IDENTITY)
                .abs()
                .to_cols_array()
                .into_iter()
                .fold(0.0, f32::max)
        })
        .fold(0.0, f32::max)
}

/// Joints whose first key in `animation` differs from their rest TRS in the JSON by more than
/// 1e-4 (relative to the value's size; rotations compared up to sign), described for printing.
fn joints_leaving_rest(doc: &Doc, animation: usize) -> Vec<String> {
    let json = &doc.json;
    let joints: Vec<usize> = doc
        .array("skins")
        .iter()
        .flat_map(|s| array(s, "joints").iter().map(|j| index(j, "joint")))
        .collect();
    let animation = &json["animations"][animation];
    let mut found = Vec::new();
    for channel in array(animation, "channels") {
        let node = index(&channel["target"]["node"], "target node");
        if !joints.contains(&node) {
            continue;
        }
        let sampler = &animation["samplers"][index(&channel["sampler"], "sampler")];
        let cubic = sampler["interpolation"] == "CUBICSPLINE";
        let outputs = doc.read_accessor(index(&sampler["output"], "output"));
        let first = &outputs[usize::from(cubic)];
        let (t, r, s) = json_rest_trs(&json["nodes"][node]);
        let path = channel["target"]["path"].as_str().unwrap_or("");
        let rest: &[f64] = match path {
            "translation" => &t,
            "rotation" => &r,
            "scale" => &s,
            _ => continue,
        };
        let off = |sign: f64| {
            first
                .iter()
                .zip(rest)
                .map(|(a, b)| (a - sign * b).abs() / b.abs().max(1.0))
                .fold(0.0, f64::max)
        };
        let off = if path == "rotation" {
            off(1.0).min(off(-1.0))
        } else {
            off(1.0)
        };
        if off > 1e-4 {
            let name = common::json_node_name(json, node);
            found.push(format!("{name}.{path} (off by {off:.3})"));
        }
    }
    found
}

/// How a clip's first frame relates to the bind pose (the pose the inverse bind matrices undo).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FirstFrame {
    /// Every palette matrix is identity: the clip starts at the bind pose.
    Bind,
    /// Some joint's first key differs from its rest TRS, so the first frame is not the bind pose.
    KeysLeaveRest,
    /// The first keys equal the rest TRS, but the file's rest pose is not its bind pose: the
    /// inverse bind matrices do not undo the rest-pose joint transforms relative to the mesh node.
    RestIsNotBind,
}

/// Found by running this test (`cargo test --release --test palette -- --nocapture` prints the
/// table) and cross-checked against the files' JSON below; not guessed.
const EXPECTED: &[(&str, &str, FirstFrame)] = &[
    ("Fox.glb", "Survey", FirstFrame::KeysLeaveRest),
    ("Fox.glb", "Walk", FirstFrame::KeysLeaveRest),
    ("Fox.glb", "Run", FirstFrame::KeysLeaveRest),
    ("SimpleSkin.gltf", "clip 0", FirstFrame::RestIsNotBind),
    ("RiggedSimple.gltf", "clip 0", FirstFrame::RestIsNotBind),
    ("demo.glb", "Wave", FirstFrame::Bind),
    ("demo.glb", "Twist", FirstFrame::Bind),
];

/// World matrix of glTF node `i` at its rest transform, from the JSON alone, in f64.
fn json_rest_world(json: &serde_json::Value, i: usize) -> DMat4 {
    let (t, r, s) = json_rest_trs(&json["nodes"][i]);
    let local =
        DMat4::from_scale_rotation_translation(DVec3::from(s), DQuat::from_array(r).normalize(), DVec3::from(t));
    let parent = array(json, "nodes")
        .iter()
        .position(|n| array(n, "children").iter().any(|c| c.as_u64() == Some(i as u64)));
    match parent {
        Some(p) => json_rest_world(json, p) * local,
        None => local,
    }
}

/// Largest |P - I| over the palettes of every skinned mesh node at the rest pose, computed from
/// the JSON alone in f64 (`jointWorld · inverseBind`: world space, the mesh node's transform
/// ignored as glTF says).
fn json_rest_palette_deviation(doc: &Doc) -> f64 {
    let json = &doc.json;
    let mut worst = 0.0f64;
    for node in doc.array("nodes") {
        let (Some(skin), Some(_)) = (node.get("skin"), node.get("mesh")) else {
            continue;
        };
        let skin = &json["skins"][index(skin, "skin")];
        let inverse_binds = inverse_binds(doc, skin);
        for (k, joint) in array(skin, "joints").iter().enumerate() {
            let p = json_rest_world(json, index(joint, "joint")) * inverse_binds[k];
            worst = worst.max(max_abs(p - DMat4::IDENTITY));
        }
    }
    worst
}

/// A skin's inverse bind matrices from the file (identity when it gives none), in f64.
fn inverse_binds(doc: &Doc, skin: &serde_json::Value) -> Vec<DMat4> {
    match skin.get("inverseBindMatrices") {
        Some(a) => doc
            .read_floats(index(a, "inverseBindMatrices"))
            .iter()
            .map(|m| DMat4::from_cols_slice(m))
            .collect(),
        None => vec![DMat4::IDENTITY; array(skin, "joints").len()],
    }
}

fn max_abs(m: DMat4) -> f64 {
    m.to_cols_array().iter().fold(0.0, |a, b| a.max(b.abs()))
}

#[test]
fn first_frame_palettes_against_the_bind_pose() {
    println!(
        "{:<18} {:<7} {:<14} {:>11} {:>11}  first keys away from rest (JSON)",
        "rig", "clip", "first frame", "max|P-I|", "rest-bind"
    );
    let mut failures = Vec::new();
    for case in skinned_cases() {
        let rig = &case.rig;
        let rest_vs_bind = json_rest_palette_deviation(&case.doc);
        let mut evaluator = PoseBuffers::new(rig);
        let rest_palettes = evaluator.palettes.clone();
        for (c, clip) in rig.clips.iter().enumerate() {
            evaluator.evaluate(rig, Some(c), 0.0);
            let deviation = f64::from(palette_deviation(&evaluator));
            let leaving = joints_leaving_rest(&case.doc, c);
            let Some(&(_, _, expected)) = EXPECTED.iter().find(|(r, n, _)| *r == case.name && *n == clip.name) else {
                failures.push(format!("{} '{}' is missing from EXPECTED", case.name, clip.name));
                continue;
            };
            let shown: Vec<&str> = leaving.iter().take(3).map(String::as_str).collect();
            println!(
                "{:<18} {:<7} {:<14} {:>11.3e} {:>11.3e}  {}{}",
                case.name,
                clip.name,
                format!("{expected:?}"),
                deviation,
                rest_vs_bind,
                if leaving.is_empty() {
                    "none".to_string()
                } else {
                    shown.join(", ")
                },
                if leaving.len() > 3 {
                    format!(" and {} more", leaving.len() - 3)
                } else {
                    String::new()
                },
            );
            let mut fail = |why: String| failures.push(format!("{} '{}' ({expected:?}): {why}", case.name, clip.name));
            match expected {
                FirstFrame::Bind => {
                    if deviation > 1e-4 {
                        fail(format!("palette is off identity by {deviation}"));
                    }
                    if !leaving.is_empty() || rest_vs_bind > 1e-4 {
                        fail(format!("the JSON disagrees: {leaving:?}, rest-bind {rest_vs_bind}"));
                    }
                }
                FirstFrame::KeysLeaveRest => {
                    if deviation <= 1e-4 {
                        fail("palette is identity".into());
                    }
                    if leaving.is_empty() {
                        fail("no joint's first key differs from its rest TRS in the JSON".into());
                    }
                }
                FirstFrame::RestIsNotBind => {
                    if deviation <= 1e-4 {
                        fail("palette is identity".into());
                    }
                    if !leaving.is_empty() {
                        fail(format!("first keys leave the rest pose: {leaving:?}"));
                    }
                    if rest_vs_bind <= 1e-4 {
                        fail("the JSON's rest pose is its bind pose".into());
                    }
                    if (deviation - rest_vs_bind).abs() > 1e-4 {
                        fail(format!("deviation {deviation} is not the rest-bind gap {rest_vs_bind}"));
                    }
                    let same_as_rest = evaluator
                        .palettes
                        .iter()
                        .flatten()
                        .zip(rest_palettes.iter().flatten())
                        .all(|(a, b)| a.abs_diff_eq(*b, 1e-5));
                    if !same_as_rest {
                        fail("first-frame palette differs from the rest-pose palette".into());
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn dmat(m: Mat4) -> DMat4 {
    DMat4::from_cols_array(&m.to_cols_array().map(f64::from))
}

/// `palette[j] = inverse(meshWorld) · jointWorld · inverseBind[j]`, recomputed in f64 from the
/// evaluator's local transforms and the inverse bind matrices in the file.
#[test]
fn palettes_match_an_f64_recomputation() {
    let mut checked = Vec::new();
    for case in skinned_cases() {
        let rig = &case.rig;
        let json = &case.doc.json;
        let mut evaluator = PoseBuffers::new(rig);
        for (c, clip) in rig.clips.iter().enumerate() {
            let t = 0.37 * clip.duration;
            evaluator.evaluate(rig, Some(c), t);

            let locals: Vec<DMat4> = evaluator
                .locals
                .iter()
                .map(|l| {
                    DMat4::from_scale_rotation_translation(
                        l.scale.as_dvec3(),
                        l.rotation.as_dquat().normalize(),
                        l.translation.as_dvec3(),
                    )
                })
                .collect();
            fn world(rig: &Rig, locals: &[DMat4], i: usize) -> DMat4 {
                match rig.nodes[i].parent {
                    Some(p) => world(rig, locals, p) * locals[i],
                    None => locals[i],
                }
            }

            let json_nodes = case.doc.array("nodes");
            let mut worst = 0.0f64;
            for (n, json_node) in json_nodes.iter().enumerate() {
                let (Some(mesh_skin), Some(_)) = (json_node.get("skin"), json_node.get("mesh")) else {
                    continue;
                };
                let json_skin = &json["skins"][index(mesh_skin, "skin")];
                let mesh_node = rig_node_of(rig, json, n);
                let instance = rig
                    .instances
                    .iter()
                    .position(|i| i.node == mesh_node)
                    .expect("an instance for the skinned mesh node");
                let palette = &evaluator.palettes[instance];
                let joints = array(json_skin, "joints");
                let inverse_binds = inverse_binds(&case.doc, json_skin);
                assert_eq!(palette.len(), joints.len());
                for (k, joint) in joints.iter().enumerate() {
                    let joint = rig_node_of(rig, json, index(joint, "joint"));
                    let expected = world(rig, &locals, joint) * inverse_binds[k];
                    let off = max_abs(dmat(palette[k]) - expected) / max_abs(expected).max(1.0);
                    assert!(
                        off <= 1e-4,
                        "{} '{}' at t = {t}: palette[{k}] is off by {off} (relative)\n got {}\n want {}",
                        case.name,
                        clip.name,
                        palette[k],
                        expected
                    );
                    worst = worst.max(off);
                }
            }
            println!(
                "{} '{}' at t = {t}: worst relative deviation {worst:.2e}",
                case.name, clip.name
            );
            checked.push(case.name);
        }
    }
    if shared_rigs().is_some() {
        assert!(checked.contains(&"Fox.glb"), "Fox was checked");
    }
}

/// Skinning Fox with its rest-pose palette (and with identity matrices) gives back the input.
#[test]
fn fox_skinned_at_the_bind_pose_returns_its_input() {
    let Some(dir) = shared_rigs() else { return };
    let rig = common::load_rig(&dir, "Fox.glb");
    let mut evaluator = PoseBuffers::new(&rig);
    evaluator.evaluate(&rig, None, 0.0);
    let (i, instance) = rig
        .instances
        .iter()
        .enumerate()
        .find(|(_, inst)| inst.skin.is_some())
        .expect("Fox has a skinned instance");
    let rest_palette = evaluator.palettes[i].clone();
    let identity = vec![Mat4::IDENTITY; rest_palette.len()];
    for primitive in &rig.meshes[instance.mesh].primitives {
        let influences = primitive.influences.as_ref().expect("Fox is skinned");
        let n = primitive.vertex_count();
        let extent = primitive
            .positions
            .iter()
            .fold(1.0f32, |a, p| a.max(p.abs().max_element()));
        for (what, palette) in [("rest pose", &rest_palette), ("identity", &identity)] {
            let mut positions = vec![Vec3::ZERO; n];
            let mut normals = vec![Vec3::ZERO; n];
            skin_lbs_reference(
                palette,
                influences,
                &primitive.positions,
                &primitive.normals,
                &mut positions,
                &mut normals,
            );
            for v in 0..n {
                let d = (positions[v] - primitive.positions[v]).abs().max_element() / extent;
                assert!(
                    d <= 1e-4,
                    "{what}: vertex {v} moved from {} to {}",
                    primitive.positions[v],
                    positions[v]
                );
                let dn = (normals[v] - primitive.normals[v]).abs().max_element();
                assert!(
                    dn <= 1e-3,
                    "{what}: normal {v} turned from {} to {}",
                    primitive.normals[v],
                    normals[v]
                );
            }
        }
    }
}
