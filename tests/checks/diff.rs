//! `rigscope diff`: rigs edited in memory with known answers (one weight, one inverse bind
//! matrix, one clip key, a renamed joint, reordered vertices), the shared rigs against their
//! compressed copies, and the command's exit status.

use crate::common;

use crate::common::{load_demo, run_rigscope, shared_folder};
use glam::{Mat4, Quat, Vec3, Vec4};
use rigscope::compare::{ClipStatus, RigDiff, Thresholds, compare, compare_with_progress};
use rigscope::rig::{Interpolation, Property, Rig};

fn diff(a: &Rig, b: &Rig) -> RigDiff {
    compare(a, b, &Thresholds::default())
}

fn assert_identical(d: &RigDiff, what: &str) {
    assert!(d.identical, "{what}: {d:#?}");
    assert!(d.skeleton.added.is_empty() && d.skeleton.removed.is_empty() && d.skeleton.reparented.is_empty());
    assert_eq!(d.weights.unmatched_vertices, 0, "{what}");
    assert_eq!(d.weights.max_difference, 0.0, "{what}");
    assert!(
        d.clips
            .iter()
            .all(|c| c.status == ClipStatus::Same && c.max_rotation_error_deg == 0.0)
    );
}

#[test]
fn a_rig_against_itself_reports_nothing() {
    let demo = load_demo();
    let d = diff(&demo, &demo.clone());
    assert_identical(&d, "demo");
    assert_eq!(d.weights.compared_vertices, demo.vertex_count());
    assert_eq!(d.skeleton.joints.len(), demo.joint_count());
    assert_eq!(d.clips.len(), demo.clips.len());
}

#[test]
fn progress_rises_step_by_step_to_one_through_the_skeleton_vertices_and_each_clip() {
    let a = load_demo();
    let mut b = a.clone();
    b.clips.pop();
    let mut reports: Vec<(f32, String)> = Vec::new();
    let d = compare_with_progress(&a, &b, &Thresholds::default(), &mut |fraction, what| {
        reports.push((fraction, what.to_owned()))
    });
    let steps = 3 + a.clips.len();
    assert_eq!(reports.len(), steps + 1, "{reports:?}");
    for (k, (fraction, _)) in reports.iter().enumerate() {
        let expected = k as f32 / steps as f32;
        assert!((fraction - expected).abs() < 1e-6, "report {k}: {reports:?}");
    }
    assert!(reports.windows(2).all(|w| w[0].0 < w[1].0), "{reports:?}");
    assert_eq!(reports.last().unwrap(), &(1.0, "done".to_owned()));
    for (k, clip) in a.clips.iter().enumerate() {
        let expected = format!("clip '{}' ({} of {})", clip.name, k + 1, a.clips.len());
        assert_eq!(reports[2 + k].1, expected);
    }
    // Reporting changes nothing of the result.
    let plain = diff(&a, &b);
    assert_eq!(
        serde_json::to_string(&d).unwrap(),
        serde_json::to_string(&plain).unwrap()
    );
    assert!(d.clips.iter().any(|c| c.status == ClipStatus::Removed));
}

/// The bind pose's bounding box diagonal, computed here from the raw positions (every
/// instance of the demo rig is skinned, so they are the bind pose).
fn bind_diagonal(rig: &Rig) -> f64 {
    let mut min = [f64::INFINITY; 3];
    let mut max = [f64::NEG_INFINITY; 3];
    for i in &rig.instances {
        assert!(i.skin.is_some(), "the test expects skinned instances only");
        for p in rig.meshes[i.mesh].primitives.iter().flat_map(|p| &p.positions) {
            for (k, v) in p.to_array().into_iter().enumerate() {
                min[k] = min[k].min(f64::from(v));
                max[k] = max[k].max(f64::from(v));
            }
        }
    }
    (0..3).map(|k| (max[k] - min[k]).powi(2)).sum::<f64>().sqrt()
}

#[test]
fn one_changed_weight_is_the_one_vertex_reported() {
    let a = load_demo();
    let mut b = a.clone();
    let (mesh, primitive) = (a.instances[0].mesh, 0);
    let influences = a.meshes[mesh].primitives[primitive].influences.as_ref().unwrap();
    // A vertex with two joints of non-zero weight: move 0.3 of the first one's onto the second.
    let vertex = (0..influences.weights.len())
        .find(|&v| {
            let w = influences.weights[v];
            w[0] > 0.35 && w[1] > 0.0 && influences.joints[v][0] != influences.joints[v][1]
        })
        .expect("a vertex with two influences");
    let shift = 0.3f32;
    let edited = b.meshes[mesh].primitives[primitive].influences.as_mut().unwrap();
    edited.weights[vertex][0] -= shift;
    edited.weights[vertex][1] += shift;
    // ½ Σ|w − w′| in f64 over the two joints that changed.
    let expected = 0.5 * (f64::from(shift) + f64::from(shift));

    let d = diff(&a, &b);
    assert!(!d.identical);
    assert_eq!(d.weights.changed_count, 1, "{:#?}", d.weights.changed_vertices);
    let change = d.weights.changed_vertices[0];
    assert_eq!(
        (change.a.mesh, change.a.primitive_index, change.a.vertex),
        (mesh, primitive, vertex)
    );
    assert!((f64::from(change.difference) - expected).abs() < 1e-5, "{change:?}");
    assert!((f64::from(d.weights.max_difference) - expected).abs() < 1e-5);
    assert_eq!(d.weights.unmatched_vertices, 0);
    assert!(!d.skeleton.differs());
    assert!(d.clips.iter().all(|c| c.status == ClipStatus::Same));
}

#[test]
fn one_changed_inverse_bind_matrix_is_the_one_joint_reported() {
    let a = load_demo();
    let mut b = a.clone();
    let slot = a.skins[0].joints.len() / 2;
    let joint = a.skins[0].joints[slot];
    let offset = Vec3::new(0.0, 0.0, 0.05 * bind_diagonal(&a) as f32);
    // inverse(IBM · T(d)) = T(−d) · inverse(IBM): the bind placement moves by |d|, no turn.
    b.skins[0].inverse_binds[slot] = a.skins[0].inverse_binds[slot] * Mat4::from_translation(offset);
    let expected = f64::from(offset.length()) / bind_diagonal(&a);

    let d = diff(&a, &b);
    assert!(!d.identical);
    assert_eq!(d.skeleton.bind_changed, vec![a.nodes[joint].name.clone()]);
    assert!(d.skeleton.rest_changed.is_empty());
    assert!(d.skeleton.rebases.is_empty());
    let worst = &d.skeleton.joints[0];
    assert_eq!(worst.node_a, joint);
    assert!(
        (f64::from(worst.bind_position) - expected).abs() < 1e-4,
        "{worst:?} vs {expected}"
    );
    assert!(worst.bind_rotation_deg < 0.01);
    // Bind matrices do not move joints or bind positions.
    assert_eq!(d.weights.unmatched_vertices, 0);
    assert!(d.clips.iter().all(|c| c.status == ClipStatus::Same));
}

#[test]
fn one_changed_clip_key_is_reported_at_its_time_and_joint() {
    let a = load_demo();
    let mut b = a.clone();
    let (clip, channel) = a
        .clips
        .iter()
        .enumerate()
        .find_map(|(c, clip)| {
            clip.channels
                .iter()
                .position(|ch| ch.property == Property::Rotation && ch.times.len() > 2)
                .map(|k| (c, k))
        })
        .expect("a rotation channel");
    let key = a.clips[clip].channels[channel].times.len() / 2;
    let degrees = 10.0f32;
    let turn = Quat::from_axis_angle(Vec3::new(1.0, 2.0, 0.5).normalize(), degrees.to_radians());
    let edited = &mut b.clips[clip].channels[channel];
    // Every interpolation passes through the key's value at its time; cubic splines keep it
    // between the in- and out-tangents.
    let at = match edited.interpolation {
        Interpolation::CubicSpline => 3 * key + 1,
        Interpolation::Linear | Interpolation::Step => key,
    };
    let value = Quat::from_vec4(edited.values[at]);
    edited.values[at] = Vec4::from(value * turn);
    let (node, time) = (edited.node, edited.times[key]);

    let d = diff(&a, &b);
    assert!(!d.identical);
    let changed: Vec<_> = d.clips.iter().filter(|c| c.status != ClipStatus::Same).collect();
    assert_eq!(changed.len(), 1, "{:#?}", d.clips);
    let c = changed[0];
    assert_eq!(c.name, a.clips[clip].name);
    // At the key the joint's world rotation is its parent's · local · turn: exactly `degrees`
    // off, as are its descendants'.
    assert!((c.max_rotation_error_deg - degrees).abs() < 0.05, "{c:?}");
    let joint = c.joints.iter().find(|j| j.node_a == node).expect("the edited joint");
    assert!((joint.rotation_error_deg - degrees).abs() < 0.05);
    assert_eq!(joint.rotation_time, time);
    assert_eq!(
        joint.position_error,
        c.joints.iter().find(|j| j.node_a == node).unwrap().position_error
    );
    assert!(!d.skeleton.differs() && !d.weights.differs());
}

#[test]
fn a_renamed_joint_is_removed_and_added() {
    let a = load_demo();
    let mut b = a.clone();
    let joint = a.skins[0].joints[1];
    b.nodes[joint].name = "renamed joint".into();
    let d = diff(&a, &b);
    assert!(!d.identical);
    assert_eq!(d.skeleton.removed, vec![a.nodes[joint].name.clone()]);
    assert_eq!(d.skeleton.added, vec!["renamed joint".to_string()]);
    // Its children keep their parent by name no longer: re-parented onto its parent's chain.
    assert!(
        d.skeleton
            .reparented
            .iter()
            .all(|r| r.from.as_deref() == Some(a.nodes[joint].name.as_str()))
    );
}

#[test]
fn reordered_vertices_still_match_one_for_one() {
    let a = load_demo();
    let mut b = a.clone();
    let primitive = &mut b.meshes[a.instances[0].mesh].primitives[0];
    let n = primitive.positions.len();
    primitive.positions.reverse();
    primitive.normals.reverse();
    primitive.uvs.reverse();
    primitive.colors.reverse();
    if let Some(influences) = &mut primitive.influences {
        assert_eq!(influences.sets, 1);
        influences.joints.reverse();
        influences.weights.reverse();
    }
    for index in &mut primitive.indices {
        *index = (n - 1) as u32 - *index;
    }
    let d = diff(&a, &b);
    assert_identical(&d, "reversed vertices");
    assert_eq!(d.weights.compared_vertices, a.vertex_count());
}

/// Each compressed copy, its original, and the largest errors measured (bind position, weight
/// difference, clip position relative to size, clip rotation in degrees), with headroom.
const VARIANTS: &[(&str, &str, f32, f32, f32)] = &[
    ("rigs/compressed/Fox.draco.glb", "rigs/Fox.glb", 1e-4, 0.001, 0.0),
    ("rigs/compressed/Fox.gltfpack.glb", "rigs/Fox.glb", 1e-4, 0.005, 0.02),
    ("rigs/compressed/Fox.gltfpack-cc.glb", "rigs/Fox.glb", 1e-4, 0.005, 0.02),
    ("rigs/compressed/Fox.meshopt.glb", "rigs/Fox.glb", 1e-4, 0.005, 5e-4),
    ("rigs/compressed/Fox.quantize.glb", "rigs/Fox.glb", 1e-4, 0.005, 0.0),
    ("rigs/compressed/Fox.webp.glb", "rigs/Fox.glb", 0.0, 0.0, 0.0),
    ("rigs/compressed/Xbot.draco.glb", "rigs/real/Xbot.glb", 1e-4, 0.001, 0.0),
    (
        "rigs/compressed/Xbot.gltfpack-cc.glb",
        "rigs/real/Xbot.glb",
        1e-4,
        0.01,
        1e-3,
    ),
    (
        "corpus/compressed/Soldier.gltfpack-cc.glb",
        "corpus/rigs/Soldier.glb",
        1e-4,
        0.02,
        1e-3,
    ),
    (
        "corpus/compressed/Soldier.quantize.glb",
        "corpus/rigs/Soldier.glb",
        3e-4,
        0.02,
        0.0,
    ),
    (
        "corpus/compressed/Michelle.draco.glb",
        "corpus/rigs/Michelle.glb",
        1e-4,
        0.001,
        0.0,
    ),
    (
        "corpus/compressed/readyplayer.me.meshopt.glb",
        "corpus/rigs/readyplayer.me.glb",
        1e-4,
        0.01,
        0.0,
    ),
    (
        "corpus/compressed/BrainStem.gltfpack.glb",
        "rigs/real/BrainStem.glb",
        1e-4,
        0.001,
        0.05,
    ),
];

#[test]
fn compressed_copies_match_every_vertex_with_small_errors() {
    let Some(shared) = shared_folder("") else { return };
    for &(variant, original, position, weight, clip_position) in VARIANTS {
        // Encoders renormalize weights (RobotExpressive's and CesiumMan's do not sum to 1).
        let a = common::with_normalized_weights(common::load_rig(&shared, original));
        let b = common::load_rig(&shared, variant);
        let d = diff(&a, &b);
        let what = format!("{variant} against {original}");
        assert!(!d.skeleton.differs(), "{what}: {:#?}", d.skeleton.joints.first());
        assert_eq!(
            d.weights.unmatched_vertices,
            0,
            "{what}: {:?}",
            &d.weights.unmatched[..5.min(d.weights.unmatched.len())]
        );
        assert_eq!(d.weights.compared_vertices, a.vertex_count(), "{what}");
        assert!(
            d.weights.max_position_change <= position.max(1e-7),
            "{what}: {}",
            d.weights.max_position_change
        );
        assert!(
            d.weights.max_difference <= weight.max(1e-7),
            "{what}: {}",
            d.weights.max_difference
        );
        for c in &d.clips {
            assert!(
                matches!(c.status, ClipStatus::Same | ClipStatus::Changed),
                "{what}: {c:?}"
            );
            assert!(
                c.max_position_error <= clip_position.max(1e-7),
                "{what} clip {}: {}",
                c.name,
                c.max_position_error
            );
        }
    }
}

#[test]
fn exit_status_is_0_same_1_different_2_not_loaded() {
    let (code, out, _) = run_rigscope(&["diff", "demo", "demo", "--json"]);
    assert_eq!(code, Some(0), "{out}");
    let document: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(document["identical"], true);
    for field in ["added", "removed", "reparented", "bind_changed"] {
        assert!(document["skeleton"][field].is_array(), "skeleton.{field}");
    }
    for field in [
        "compared_vertices",
        "unmatched_vertices",
        "max_difference",
        "changed_vertices",
    ] {
        assert!(!document["weights"][field].is_null(), "weights.{field}");
    }
    let clip = &document["clips"][0];
    for field in [
        "name",
        "status",
        "max_position_error",
        "max_rotation_error_deg",
        "worst_joint",
        "worst_time",
    ] {
        assert!(clip.get(field).is_some(), "clips[].{field}");
    }
    assert_eq!(clip["status"], "same");

    let dir = common::temp_dir("diff");
    let other = dir.join("demo-5.glb");
    let (code, _, _) = run_rigscope(&["make-demo", other.to_str().unwrap(), "--joints", "5"]);
    assert_eq!(code, Some(0));
    let (code, out, _) = run_rigscope(&["diff", "demo", other.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    let missing = dir.join("missing.glb");
    let (code, _, _) = run_rigscope(&["diff", "demo", missing.to_str().unwrap()]);
    assert_eq!(code, Some(2));
}
