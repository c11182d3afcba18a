//! The weight repairs on small rigs built here, against weights worked out by hand, and on the
//! shared real rigs (their repaired weights pass the rig report's weight checks).

use crate::common;

use crate::common::skinned::{SkinnedMesh, TestJoint, blend, only};
use glam::Vec3;
use rigscope::repair::{self, FillMode, MirrorDirection, Repair, RepairPlan};
use rigscope::rig::{Influences, Rig};

/// A chain of six joints up +Y (y = 0 … 5), named without sides, and a tube around it, every
/// vertex weighted to joint 0 alone.
fn chain() -> SkinnedMesh {
    let joints = (0..6usize)
        .map(|k| TestJoint::new(&format!("bone{k}"), k.checked_sub(1), Vec3::Y * k as f32))
        .collect();
    let mut mesh = SkinnedMesh::new(joints);
    mesh.add_tube(Vec3::ZERO, 5.0 * Vec3::Y, 0.2, 11, 8, |_| only(0));
    mesh
}

fn influences(rig: &Rig) -> &Influences {
    rig.meshes[0].primitives[0].influences.as_ref().unwrap()
}

fn influences_mut(rig: &mut Rig) -> &mut Influences {
    rig.meshes[0].primitives[0].influences.as_mut().unwrap()
}

/// Vertex `v`'s nonzero (joint, weight) pairs, by joint.
fn weights_of(influences: &Influences, v: usize) -> Vec<(u16, f32)> {
    let mut out: Vec<(u16, f32)> = influences.of_vertex(v).filter(|e| e.1 != 0.0).collect();
    out.sort_by_key(|e| e.0);
    out
}

fn assert_weights(influences: &Influences, v: usize, expected: &[(u16, f64)]) {
    let got = weights_of(influences, v);
    assert_eq!(got.len(), expected.len(), "vertex {v}: {got:?}, expected {expected:?}");
    for (g, e) in got.iter().zip(expected) {
        assert_eq!(g.0, e.0, "vertex {v}: {got:?}");
        assert!(
            (f64::from(g.1) - e.1).abs() < 1e-6,
            "vertex {v}: {got:?}, expected {expected:?}"
        );
    }
}

/// The rig with two influence sets per vertex (the second empty).
fn with_two_sets(mut rig: Rig) -> Rig {
    let inf = influences_mut(&mut rig);
    assert_eq!(inf.sets, 1);
    inf.sets = 2;
    inf.joints = inf.joints.iter().flat_map(|&j| [j, [0; 4]]).collect();
    inf.weights = inf.weights.iter().flat_map(|&w| [w, [0.0; 4]]).collect();
    rig
}

fn set_vertex(rig: &mut Rig, v: usize, entries: &[(u16, f32)]) {
    let inf = influences_mut(rig);
    let sets = inf.sets;
    for k in 0..sets * 4 {
        let (j, w) = entries.get(k).copied().unwrap_or((0, 0.0));
        inf.joints[v * sets + k / 4][k % 4] = j;
        inf.weights[v * sets + k / 4][k % 4] = w;
    }
}

#[test]
fn normalize_divides_by_the_sum_and_lists_vertices_with_no_weight() {
    let mut rig = chain().rig();
    set_vertex(&mut rig, 3, &[(1, 0.5), (2, 0.3)]);
    set_vertex(&mut rig, 4, &[(1, 1.5), (2, -0.5), (3, 0.5)]);
    set_vertex(&mut rig, 5, &[]);
    let repaired = repair::normalize(&rig);
    let out = repaired.influences[0][0].as_ref().unwrap();
    // 0.5 / 0.8 and 0.3 / 0.8.
    assert_weights(out, 3, &[(1, 0.625), (2, 0.375)]);
    // The negative weight goes; 1.5 and 0.5 of 2.
    assert_weights(out, 4, &[(1, 0.75), (3, 0.25)]);
    assert_weights(out, 5, &[]);
    assert_weights(out, 6, &[(0, 1.0)]);
    assert_eq!(repaired.counts.repair, Repair::Normalize);
    assert_eq!(repaired.counts.changed(), 2);
    assert_eq!(repaired.counts.primitives.len(), 1);
    assert_eq!((repaired.counts.left_count, repaired.counts.left[0].vertex), (1, 5));
}

#[test]
fn limit_keeps_the_largest_and_renormalizes() {
    let mut rig = with_two_sets(chain().rig());
    let six = [(0, 0.3), (1, 0.25), (2, 0.2), (3, 0.1), (4, 0.1), (5, 0.05)];
    set_vertex(&mut rig, 7, &six);
    set_vertex(&mut rig, 8, &six[..4]);
    let repaired = repair::limit(&rig, 4);
    let out = repaired.influences[0][0].as_ref().unwrap();
    // 0.3, 0.25, 0.2 and the first of the two 0.1s (lower joint) of 0.85.
    assert_weights(
        out,
        7,
        &[(0, 0.3 / 0.85), (1, 0.25 / 0.85), (2, 0.2 / 0.85), (3, 0.1 / 0.85)],
    );
    // Four influences are within the limit: untouched, sum 0.85 and all.
    assert_weights(out, 8, &[(0, 0.3), (1, 0.25), (2, 0.2), (3, 0.1)]);
    assert_eq!(repaired.counts.changed(), 1);
    // The kept four sit in the first set.
    assert_eq!(out.weights[7 * 2 + 1], [0.0; 4]);
    let eight = repair::limit(&rig, 8);
    assert_eq!(eight.counts.changed(), 0);
}

#[test]
fn prune_drops_weights_below_epsilon_and_keeps_the_largest_of_a_vertex_all_below() {
    let mut rig = chain().rig();
    set_vertex(&mut rig, 2, &[(0, 0.994), (1, 0.003), (2, 0.003)]);
    set_vertex(&mut rig, 3, &[(1, 0.002), (2, 0.001)]);
    set_vertex(&mut rig, 4, &[(1, 0.6), (2, 0.4)]);
    let repaired = repair::prune(&rig, repair::DEFAULT_PRUNE);
    let out = repaired.influences[0][0].as_ref().unwrap();
    assert_weights(out, 2, &[(0, 1.0)]);
    assert_weights(out, 3, &[(1, 1.0)]);
    assert_weights(out, 4, &[(1, 0.6), (2, 0.4)]);
    assert_eq!(repaired.counts.changed(), 2);
}

#[test]
fn fill_weights_a_bare_vertex_to_the_nearest_bone_or_only_lists_it() {
    let mut rig = chain().rig();
    // Ring 3 is at y = 1.5, 0.2 from the axis: nearest the bone from joint 1 (y = 1) to joint 2.
    let bare = 3 * 8 + 2;
    let p = rig.meshes[0].primitives[0].positions[bare];
    assert!((p.y - 1.5).abs() < 1e-5);
    set_vertex(&mut rig, bare, &[]);
    // The top ring is at y = 5: joint 5 has no child; its bone is its point, 0.2 away, as near
    // as the bone from 4 to 5 — the lower joint wins the tie.
    let top = 10 * 8;
    set_vertex(&mut rig, top, &[(3, 0.0)]);
    let repaired = repair::fill(&rig, FillMode::NearestBone);
    let out = repaired.influences[0][0].as_ref().unwrap();
    assert_weights(out, bare, &[(1, 1.0)]);
    assert_weights(out, top, &[(4, 1.0)]);
    assert_eq!(repaired.counts.changed(), 2);
    assert_eq!(repaired.counts.left_count, 0);

    let listed = repair::fill(&rig, FillMode::ListOnly);
    assert_eq!(listed.counts.changed(), 0);
    let mut left: Vec<u32> = listed.counts.left.iter().map(|v| v.vertex).collect();
    left.sort();
    assert_eq!(left, [bare as u32, top as u32]);
}

/// A spine at the origin, arms along ±X (LeftArm, LeftHand at x = 0.3, 1; Right at −0.3, −1)
/// and a tube per arm, the right one the left's mirror image with its joints swapped; the
/// left arm blends LeftArm into LeftHand. Returns the mesh and the two arms' ranges.
fn two_arms() -> (SkinnedMesh, std::ops::Range<usize>, std::ops::Range<usize>) {
    let mut mesh = SkinnedMesh::new(vec![
        TestJoint::new("Spine", None, Vec3::ZERO),
        TestJoint::new("LeftArm", Some(0), 0.3 * Vec3::X),
        TestJoint::new("LeftHand", Some(1), Vec3::X),
        TestJoint::new("RightArm", Some(0), -0.3 * Vec3::X),
        TestJoint::new("RightHand", Some(3), -Vec3::X),
    ]);
    let left = mesh.add_tube(0.2 * Vec3::X, 1.4 * Vec3::X, 0.15, 25, 12, |p| {
        blend(1, 2, (p.x - 0.5) / 0.4)
    });
    let flip = |p: Vec3| Vec3::new(-p.x, p.y, p.z);
    let right = mesh.add_mirrored(left.clone(), flip, |j| match j {
        1 | 2 => j + 2,
        _ => j,
    });
    (mesh, left, right)
}

#[test]
fn mirroring_restores_exactly_the_one_planted_asymmetric_vertex() {
    let (mesh, left, right) = two_arms();
    let symmetric = mesh.rig();
    for direction in [MirrorDirection::LeftToRight, MirrorDirection::RightToLeft] {
        assert_eq!(repair::mirror(&symmetric, direction).counts.changed(), 0);
    }
    // Ring 12 (x = 0.8) blends LeftArm and LeftHand; give one right-arm vertex to Spine.
    let planted = right.start + 12 * 12 + 5;
    let source = left.start + 12 * 12 + 5;
    let mut rig = symmetric.clone();
    set_vertex(&mut rig, planted, &[(0, 1.0)]);
    let (fixed, summary) = repair::apply(
        &rig,
        &RepairPlan {
            mirror: Some(MirrorDirection::LeftToRight),
            ..RepairPlan::default()
        },
    );
    assert_eq!(summary.repairs.len(), 1);
    assert_eq!(summary.repairs[0].changed(), 1);
    assert_eq!(summary.repairs[0].note, None);
    // The planted vertex has the left vertex's weights on the right joints again, and every
    // vertex is as in the symmetric rig.
    let expected: Vec<(u16, f64)> = (weights_of(influences(&symmetric), source).iter())
        .map(|&(j, w)| (j + 2, f64::from(w)))
        .collect();
    assert!(expected.len() == 2, "{expected:?}");
    assert_weights(influences(&fixed), planted, &expected);
    for v in 0..mesh.positions.len() {
        assert_eq!(
            weights_of(influences(&fixed), v),
            weights_of(influences(&symmetric), v),
            "vertex {v}"
        );
    }
    // The other way, the planted vertex's Spine weight goes to its left mirror instead.
    let other_way = repair::mirror(&rig, MirrorDirection::RightToLeft);
    assert_eq!(other_way.counts.changed(), 1);
    assert_weights(other_way.influences[0][0].as_ref().unwrap(), source, &[(0, 1.0)]);
}

#[test]
fn a_rig_without_left_and_right_names_mirrors_nothing_and_says_why() {
    let rig = chain().rig();
    let repaired = repair::mirror(&rig, MirrorDirection::LeftToRight);
    assert_eq!(repaired.counts.changed(), 0);
    let note = repaired.counts.note.expect("a reason");
    assert!(note.contains("no joints have left/right names"), "{note}");
}

#[test]
fn apply_runs_every_repair_of_the_plan_in_order() {
    let mut rig = with_two_sets(chain().rig());
    set_vertex(&mut rig, 1, &[]);
    set_vertex(
        &mut rig,
        2,
        &[(0, 0.5), (1, 0.4), (2, 0.3), (3, 0.2), (4, 0.1), (5, 0.002)],
    );
    let plan = RepairPlan {
        normalize: true,
        limit: Some(4),
        prune: Some(repair::DEFAULT_PRUNE),
        fill: Some(FillMode::NearestBone),
        mirror: None,
    };
    let (fixed, summary) = repair::apply(&rig, &plan);
    let order: Vec<Repair> = summary.repairs.iter().map(|r| r.repair).collect();
    assert_eq!(order, [Repair::Fill, Repair::Prune, Repair::Limit, Repair::Normalize]);
    let changed: Vec<usize> = summary.repairs.iter().map(|r| r.changed()).collect();
    // Fill gives vertex 1 a joint; prune drops 0.002 (the rest sum 1.5, renormalized); limit
    // drops 0.1/1.5 and renormalizes; normalize finds nothing left to do.
    assert_eq!(changed, [1, 1, 1, 0]);
    assert_weights(
        influences(&fixed),
        2,
        &[(0, 0.5 / 1.4), (1, 0.4 / 1.4), (2, 0.3 / 1.4), (3, 0.2 / 1.4)],
    );
    assert_eq!(weights_of(influences(&fixed), 1).len(), 1);
    assert!(RepairPlan::default().is_empty() && !plan.is_empty());
}

/// Every shared rig's weights, normalized, limited to 4 and pruned, pass the rig report's
/// weight checks, and their normalized u8 and u16 forms sum to exactly one in every vertex.
#[test]
fn repaired_real_rigs_have_no_weight_errors_and_quantize_exactly() {
    use rigscope::report::RigReport;
    let mut checked = 0;
    for (folder, file) in [
        ("rigs/real", "RobotExpressive.glb"),
        ("rigs/real", "Xbot.glb"),
        ("rigs", "Fox.glb"),
        ("corpus/rigs", "CesiumMan.gltf"),
        ("corpus/rigs", "Soldier.glb"),
    ] {
        let Some(dir) = common::shared_folder(folder) else {
            return;
        };
        let rig = common::load_rig(&dir, file);
        let plan = RepairPlan {
            normalize: true,
            limit: Some(repair::DEFAULT_LIMIT),
            prune: Some(repair::DEFAULT_PRUNE),
            fill: Some(FillMode::NearestBone),
            mirror: None,
        };
        let (fixed, summary) = repair::apply(&rig, &plan);
        let counts: Vec<(Repair, usize)> = summary.repairs.iter().map(|r| (r.repair, r.changed())).collect();
        eprintln!("{file}: {counts:?}");
        let weight_findings: Vec<String> = (RigReport::new(&fixed).findings.iter())
            .filter(|f| {
                let code = f.code.as_str();
                code.starts_with("weights-") && code != "weights-asymmetric" || code.starts_with("influences-over")
            })
            .map(|f| f.message.clone())
            .collect();
        assert!(weight_findings.is_empty(), "{file}: {weight_findings:#?}");
        for mesh in &fixed.meshes {
            for primitive in &mesh.primitives {
                let Some(influences) = &primitive.influences else {
                    continue;
                };
                // Stored as normalized u8 and u16 (as the writer stores them), every vertex
                // with weight sums to exactly one.
                for (v, vertex) in influences.weights.chunks(influences.sets).enumerate() {
                    let weights: Vec<f32> = vertex.iter().flatten().copied().collect();
                    if weights.iter().all(|&w| w == 0.0) {
                        continue;
                    }
                    let (mut bytes, mut shorts) = (vec![0u8; weights.len()], vec![0u16; weights.len()]);
                    rigscope::save::quantize_weights_u8(&weights, &mut bytes);
                    rigscope::save::quantize_weights_u16(&weights, &mut shorts);
                    let byte_sum: u32 = bytes.iter().map(|&x| u32::from(x)).sum();
                    let short_sum: u32 = shorts.iter().map(|&x| u32::from(x)).sum();
                    assert_eq!((byte_sum, short_sum), (255, 65535), "{file} vertex {v}");
                }
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 5);
}

/// A star of joints about the root: j1–j4 pivot on the vertex at (1, 0, 0), so no turn of
/// theirs moves it, and j5 pivots on the origin and is turned 90° about Z by the clip. With
/// weights .3, .25, .2, .13 on j1–j4 and .12 on j5, keeping the four largest drops j5, the one
/// joint that moves the vertex; dropping j4 (.13) instead leaves j5's motion, scaled by the
/// renormalization. Both worst distances are worked out here in f64: j5 moves the vertex by
/// d = R(90°)·(1, 0, 0) − (1, 0, 0) at most (90° is also the sweep's largest turn), the full
/// weights draw it at p + .12·d, the largest four at p, j1–j3 and j5 at p + (.12/.87)·d.
#[test]
fn fix_limit_drops_a_larger_weight_whose_joint_never_moves_the_vertex_before_a_smaller_one() {
    use super::engine_profiles::{fixture, row};
    use glam::{DQuat, DVec3, Mat4};
    use rigscope::engine::check::{drawing_distance, drawn_height};
    let weights = [(1, 0.3), (2, 0.25), (3, 0.2), (4, 0.13), (5, 0.12)];
    let mut rig = fixture(6, 5, &[row(&weights)]);
    let vertex = rig.meshes[0].primitives[0].positions[0];
    assert_eq!(vertex, Vec3::X);
    for j in 1..6 {
        rig.nodes[j].parent = Some(0);
        rig.nodes[j].rest.translation = if j < 5 { vertex } else { Vec3::ZERO };
        rig.skins[0].inverse_binds[j] = Mat4::from_translation(-rig.nodes[j].rest.translation);
    }
    let plan = RepairPlan {
        limit: Some(4),
        ..RepairPlan::default()
    };
    let (least, summary) = rigscope::commands::fix::apply_least_deforming(&rig, &plan);
    assert_eq!(summary.repairs[0].changed(), 1);
    let kept = [(1, 0.3 / 0.87), (2, 0.25 / 0.87), (3, 0.2 / 0.87), (5, 0.12 / 0.87)];
    assert_weights(influences(&least), 0, &kept);
    let slots: Vec<u16> = influences(&least).of_vertex(0).take(4).map(|e| e.0).collect();
    assert_eq!(slots, [1, 2, 3, 5], "largest first");
    let (largest, _) = repair::apply(&rig, &plan);
    assert_weights(
        influences(&largest),
        0,
        &[(1, 0.3 / 0.88), (2, 0.25 / 0.88), (3, 0.2 / 0.88), (4, 0.13 / 0.88)],
    );
    let p = DVec3::X;
    let d = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2) * p - p;
    let full = p + 0.12 * d;
    let expected_largest = (full - p).length();
    let expected_least = (full - (p + 0.12 / 0.87 * d)).length();
    let height = drawn_height(&rig);
    let got_largest = drawing_distance(&rig, &largest) * height;
    let got_least = drawing_distance(&rig, &least) * height;
    assert!(
        (got_largest - expected_largest).abs() < 1e-5,
        "largest four: {got_largest}, expected {expected_largest}"
    );
    assert!(
        (got_least - expected_least).abs() < 1e-5,
        "least deforming: {got_least}, expected {expected_least}"
    );
    assert!(expected_least < expected_largest / 6.0);
}
