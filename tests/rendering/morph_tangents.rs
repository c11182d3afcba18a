//! Morph targets that move tangents (glTF's TANGENT offsets): read where the primitive has
//! tangents, morphed on the CPU path as a dense sum written here gives them (bit for bit) and in
//! f64, skinned after the morph, the same on the GPU, and written back by the glTF writer.

use crate::common::gpu;
use crate::common::random;

use glam::{Vec3, Vec4};
use random::Random;
use rigscope::anim::morph::MorphedPrimitive;
use rigscope::anim::{PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::render::compute::ComputeSkinner;
use rigscope::rig::{MorphTarget, Rig};
use rigscope::skin::{SkinnedPose, SkinningMethod};
use rigscope::synthetic::skinned_tube;

/// Tangents of `n` vertices, not quite unit, the bitangent's sign of either kind (one -0.0 in
/// `w`, which a morph must keep), some components -0.0.
fn bind_tangents(n: usize, random: &mut Random) -> Vec<Vec4> {
    let mut tangents: Vec<Vec4> = (0..n)
        .map(|v| (random.vec() * 1.3).extend(if v % 3 == 0 { -1.0 } else { 1.0 }))
        .collect();
    for v in (0..n).step_by(11) {
        tangents[v].z = -0.0;
    }
    tangents[5].w = -0.0;
    tangents
}

/// Per target, its tangent offsets per vertex over a patch (target 1 gives none: it moves
/// positions and normals only; target 2 moves tangents only), and the sparse targets made from
/// them.
fn targets(
    positions: &[Vec3],
    normals: &[Vec3],
    tangents: &[Vec4],
    count: usize,
    random: &mut Random,
) -> (Vec<Option<Vec<Vec3>>>, Vec<MorphTarget>) {
    let n = positions.len();
    let mut dense = Vec::with_capacity(count);
    let mut sparse = Vec::with_capacity(count);
    for t in 0..count {
        let (mut p, mut nr, mut tg) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        let start = random.below(n);
        for v in (start..start + 1 + random.below(n / 4)).map(|v| v % n) {
            if t != 2 {
                p[v] = random.vec() * 0.1;
                nr[v] = random.vec() * 0.1;
            }
            if t != 1 {
                tg[v] = random.vec() * 0.4;
                if random.below(5) == 0 {
                    tg[v].x = -0.0;
                }
            }
        }
        let offsets: [&[Vec3]; 3] = [&p, &nr, if t == 1 { &[] } else { &tg }];
        sparse.push(MorphTarget::sparse_with_tangents(
            offsets,
            [positions, normals],
            tangents,
        ));
        dense.push((t != 1).then_some(tg));
    }
    (dense, sparse)
}

/// Every target that gives tangent offsets, with a non-zero weight, at every vertex, in target
/// order, `w · offset` added component by component to the bind tangent's xyz, then normalized;
/// `w` as it was.
fn dense_tangents(bind: &[Vec4], dense: &[Option<Vec<Vec3>>], weights: &[f32]) -> Vec<Vec4> {
    let mut sums: Vec<Vec3> = bind.iter().map(|t| t.truncate()).collect();
    for (offsets, &w) in dense.iter().zip(weights) {
        let Some(offsets) = offsets.as_ref().filter(|_| w != 0.0) else {
            continue;
        };
        for (sum, offset) in sums.iter_mut().zip(offsets) {
            for c in 0..3 {
                sum[c] += offset[c] * w;
            }
        }
    }
    sums.iter()
        .zip(bind)
        .map(|(s, t)| s.normalize_or_zero().extend(t.w))
        .collect()
}

fn bits(values: &[Vec4]) -> Vec<[u32; 4]> {
    values.iter().map(|v| v.to_array().map(f32::to_bits)).collect()
}

#[test]
fn morphed_tangents_equal_the_dense_sum_bit_for_bit_and_f64_closely() {
    let n = 700;
    let mut random = Random(0x9E37_79B9_7F4A_7C15);
    let positions: Vec<Vec3> = (0..n).map(|_| random.vec()).collect();
    let normals: Vec<Vec3> = (0..n).map(|_| random.vec()).collect();
    let bind = bind_tangents(n, &mut random);
    let count = 9;
    let (dense, sparse) = targets(&positions, &normals, &bind, count, &mut random);
    assert!(!sparse[1].has_tangents() && sparse[2].has_tangents());
    assert!(sparse[0].tangent_offsets.len() == sparse[0].vertices.len());
    let mut morphed = MorphedPrimitive::with_tangents(n, &sparse);
    let mut frames: Vec<Vec<f32>> = (0..40)
        .map(|frame| {
            let mut weights = vec![0.0f32; count];
            for _ in 0..1 + random.below(4) {
                weights[random.below(count)] = random.float() * 1.5;
            }
            if frame % 6 == 0 {
                weights[2] = 0.8;
            }
            weights
        })
        .collect();
    // The same targets frame after frame, a weight of -0.0 (not in use) and one not finite.
    frames.extend([vec![0.5; count], vec![0.25; count], vec![-0.0; count]]);
    let mut not_finite = vec![0.0; count];
    (not_finite[0], not_finite[2]) = (0.5, f32::INFINITY);
    frames.push(not_finite);
    frames.push(vec![0.3; count]);
    let mut checked = 0;
    for (frame, weights) in frames.iter().enumerate() {
        if !morphed.apply(&sparse, weights, &positions, &normals) {
            assert!(weights.iter().all(|&w| w == 0.0), "frame {frame}");
            continue;
        }
        morphed.apply_tangents(&sparse, &bind);
        let got = morphed.tangents.or(&bind);
        let want = dense_tangents(&bind, &dense, weights);
        assert_eq!(bits(got), bits(&want), "frame {frame}");
        if weights.iter().all(|w| w.is_finite()) {
            for (v, g) in got.iter().enumerate() {
                let mut sum = bind[v].truncate().as_dvec3();
                for (offsets, &w) in dense.iter().zip(weights) {
                    if let Some(offsets) = offsets {
                        sum += offsets[v].as_dvec3() * f64::from(w);
                    }
                }
                // Rounding in f32 turns the direction by about its error over the sum's length.
                let error = (g.truncate().as_dvec3() - sum.normalize_or_zero()).length();
                assert!(error * sum.length() < 1e-6, "frame {frame} vertex {v}: {error}");
            }
            checked += 1;
        }
    }
    assert!(checked > 30, "{checked} frames checked");
    assert_eq!(morphed.tangents.or(&bind)[5].w.to_bits(), (-0.0f32).to_bits());
}

/// A skinned tube with tangents around it and `count` targets moving its tangents (and a bit
/// of its surface).
fn tube_with_tangent_targets(count: usize) -> Rig {
    let mut rig = skinned_tube(64 * 40, 8);
    let mut random = Random(77);
    let primitive = &mut rig.meshes[0].primitives[0];
    primitive.tangents = (primitive.normals.iter())
        .map(|n| n.cross(Vec3::Y).normalize_or(Vec3::X).extend(1.0))
        .collect();
    let (positions, normals, tangents) = (&primitive.positions, &primitive.normals, &primitive.tangents);
    let (_, sparse) = targets(positions, normals, tangents, count, &mut random);
    rig.morphs.targets = vec![vec![sparse]];
    rig.morphs.default_weights = vec![vec![0.0; count]];
    rig
}

/// The tube's rest pose (dual quaternions too) with every target at a non-zero weight.
fn weighted_pose(rig: &Rig) -> PoseBuffers {
    let mut pose = PoseBuffers::new(rig);
    let inputs = PoseInputs {
        dual_quaternions: true,
        ..PoseInputs::clip_at(None, 0.0)
    };
    evaluate_pose(rig, &inputs, &mut pose);
    for (t, w) in pose.morph_weights[0].iter_mut().enumerate() {
        *w = 0.3 + 0.2 * t as f32;
    }
    pose
}

#[test]
fn the_cpu_path_skins_the_morphed_tangents() {
    let rig = tube_with_tangent_targets(4);
    let pose = weighted_pose(&rig);
    let mut skinned = SkinnedPose::new(&rig);
    skinned.skin(&rig, &pose, SkinningMethod::Lbs);
    let primitive = &rig.meshes[0].primitives[0];
    let targets = rig.morphs.of(0, 0);
    // The tube's rest pose has an identity palette, so the skinned tangents are the morphed ones.
    let mut morphed = MorphedPrimitive::with_tangents(primitive.vertex_count(), targets);
    assert!(morphed.apply(
        targets,
        &pose.morph_weights[0],
        &primitive.positions,
        &primitive.normals
    ));
    morphed.apply_tangents(targets, &primitive.tangents);
    let want = morphed.tangents.or(&primitive.tangents);
    let got = &skinned.meshes[0][0].tangents;
    let mut moved = 0;
    for (v, (g, w)) in got.iter().zip(want).enumerate() {
        let error = (g.truncate() - w.truncate()).length();
        assert!(error < 1e-5, "vertex {v}: {g} against {w}");
        assert_eq!(g.w, w.w, "vertex {v}");
        if (w.truncate() - primitive.tangents[v].truncate()).length() > 1e-3 {
            moved += 1;
        }
    }
    assert!(moved > 100, "the targets moved {moved} tangents");
}

#[test]
fn the_gpu_morphs_tangents_as_the_cpu_path_does() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let rig = tube_with_tangent_targets(5);
    let pose = weighted_pose(&rig);
    let skinner = ComputeSkinner::new(&gpu);
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs] {
        let mut skinned = SkinnedPose::new(&rig);
        skinned.skin(&rig, &pose, method);
        let size = rigscope::skin::posed_bounds(&rig, &pose, &skinned).size();
        let comparison = skinner.compare(&gpu, &rig, &pose, &skinned, method, size).unwrap();
        let tangents = comparison.tangent_max.expect("the tube has tangents");
        assert!(tangents < 1e-5, "{method:?}: tangents {tangents}");
        assert!(comparison.max < 1e-6 * size, "{method:?}: positions {}", comparison.max);
    }
}
