//! Sparse morph targets: on the CPU path the targets in use each frame, applied only where they
//! move vertices, against a dense sum over every target and every vertex written here, bit for
//! bit, signed zeros and weights that are not finite included; on the GPU the pre-pass and the
//! shaders' morph against the CPU path on a face of many targets.

use crate::common::gpu;
use crate::common::random;

use glam::Vec3;
use random::Random;
use rigscope::anim::morph::{MorphedPrimitive, apply_morph};
use rigscope::anim::{PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::render::compute::ComputeSkinner;
use rigscope::rig::MorphTarget;
use rigscope::skin::fast::{skin_lbs, threads_for};
use rigscope::skin::{SkinnedPose, SkinningMethod};
use rigscope::synthetic::{add_face_targets, skinned_tube};

/// A face-like primitive: a bind pose with -0.0 components on its middle line and normals not
/// quite unit, and targets given per vertex, each moving a patch of consecutive vertices (some
/// offsets -0.0, some components exactly zero, one target moving nothing at all).
struct Face {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    dense: Vec<(Vec<Vec3>, Vec<Vec3>)>,
}

fn face(vertices: usize, targets: usize, seed: u64) -> Face {
    let mut random = Random(seed);
    let mut positions: Vec<Vec3> = (0..vertices).map(|_| random.vec()).collect();
    let mut normals: Vec<Vec3> = (0..vertices).map(|_| random.vec() * 1.5).collect();
    for v in (0..vertices).step_by(17) {
        positions[v].x = -0.0;
        normals[v].y = -0.0;
    }
    positions[3] = Vec3::splat(-0.0);
    let dense = (0..targets)
        .map(|t| {
            let (mut p, mut n) = (vec![Vec3::ZERO; vertices], vec![Vec3::ZERO; vertices]);
            if t == 1 {
                return (p, n);
            }
            let start = random.below(vertices);
            let len = 1 + random.below(vertices / 10);
            for v in (start..start + len).map(|v| v % vertices) {
                p[v] = random.vec();
                n[v] = if t % 3 == 0 { Vec3::ZERO } else { random.vec() * 0.1 };
                match random.below(6) {
                    0 => p[v].y = 0.0,
                    1 => p[v].z = -0.0,
                    2 => (p[v], n[v]) = (Vec3::splat(-0.0), Vec3::ZERO),
                    _ => {}
                }
            }
            (p, n)
        })
        .collect();
    Face {
        positions,
        normals,
        dense,
    }
}

impl Face {
    fn sparse(&self) -> Vec<MorphTarget> {
        (self.dense.iter())
            .map(|(p, n)| MorphTarget::sparse(p, n, &self.positions, &self.normals))
            .collect()
    }

    /// Every target with a non-zero weight at every vertex, in target order, `w · offset` added
    /// component by component, normals normalized at the end: the dense path.
    fn reference(&self, weights: &[f32]) -> (Vec<Vec3>, Vec<Vec3>) {
        let (mut positions, mut normals) = (self.positions.clone(), self.normals.clone());
        for ((p, n), &w) in self.dense.iter().zip(weights) {
            if w == 0.0 {
                continue;
            }
            for v in 0..positions.len() {
                for c in 0..3 {
                    positions[v][c] += p[v][c] * w;
                    normals[v][c] += n[v][c] * w;
                }
            }
        }
        for n in &mut normals {
            *n = n.normalize_or_zero();
        }
        (positions, normals)
    }
}

fn bits(values: &[Vec3]) -> Vec<[u32; 3]> {
    values.iter().map(|v| v.to_array().map(f32::to_bits)).collect()
}

#[test]
fn sparse_targets_keep_only_the_vertices_they_move_and_those_with_negative_zeros() {
    let face = face(600, 12, 7);
    for ((p, n), target) in face.dense.iter().zip(face.sparse()) {
        let kept: Vec<u32> = (0..600u32)
            .filter(|&v| {
                let v = v as usize;
                let moves = p[v].to_array().iter().chain(&n[v].to_array()).any(|&c| c != 0.0);
                let negative_zero = |x: Vec3| x.to_array().iter().any(|c| c.to_bits() == (-0.0f32).to_bits());
                moves || negative_zero(face.positions[v]) || negative_zero(face.normals[v])
            })
            .collect();
        assert_eq!(target.vertices, kept);
        assert!(target.vertices.len() < 600 / 5, "{} of 600 kept", target.vertices.len());
        let (dense_p, dense_n) = target.dense(600);
        for v in 0..600 {
            assert_eq!(dense_p[v], p[v], "vertex {v}");
            assert_eq!(dense_n[v], n[v], "vertex {v}");
        }
    }
}

#[test]
fn targets_in_use_applied_sparsely_equal_the_dense_sum_bit_for_bit() {
    sparse_equals_dense(3000, 40, 0x5eed);
}

/// Big enough that some frames move more vertices than one thread takes (the morph is then split
/// over two halves of the vertices) and others fewer, the split changing between frames.
#[test]
fn a_morph_split_over_two_threads_equals_the_dense_sum_bit_for_bit() {
    sparse_equals_dense(40_000, 40, 0xface);
}

/// A target that moves every vertex of a mesh bigger than a recorded stretch of terms can hold
/// (65535 consecutive vertices), with a second one over part of it: the frames that keep their
/// targets, whose terms follow the first frame's record, still give the dense sum's bits.
#[test]
fn a_target_moving_more_vertices_in_a_row_than_a_stretch_holds_equals_the_dense_sum() {
    let vertices = 150_000;
    let mut random = Random(0x57e7);
    let positions: Vec<Vec3> = (0..vertices).map(|_| random.vec()).collect();
    let normals: Vec<Vec3> = (0..vertices).map(|_| random.vec() * 1.5).collect();
    let everywhere = (
        (0..vertices).map(|_| random.vec()).collect::<Vec<_>>(),
        (0..vertices).map(|_| random.vec() * 0.1).collect::<Vec<_>>(),
    );
    let mut part = (vec![Vec3::ZERO; vertices], vec![Vec3::ZERO; vertices]);
    for v in 120_000..135_000 {
        (part.0[v], part.1[v]) = (random.vec(), random.vec() * 0.1);
    }
    let face = Face {
        positions,
        normals,
        dense: vec![everywhere, part],
    };
    let sparse = face.sparse();
    assert_eq!(
        sparse[0].vertices.len(),
        vertices,
        "the first target moves every vertex"
    );
    let mut morphed = MorphedPrimitive::new(vertices, 2);
    for frame in 0..4 {
        let weights = [0.3 + 0.2 * frame as f32, -0.7 + 0.1 * frame as f32];
        assert!(morphed.apply(&sparse, &weights, &face.positions, &face.normals));
        let (want_p, want_n) = face.reference(&weights);
        assert_eq!(bits(&morphed.positions), bits(&want_p), "frame {frame}: positions");
        assert_eq!(bits(&morphed.normals), bits(&want_n), "frame {frame}: normals");
    }
}

fn sparse_equals_dense(vertices: usize, targets: usize, seed: u64) {
    let face = face(vertices, targets, seed);
    let sparse = face.sparse();
    let mut random = Random(99);
    let mut morphed = MorphedPrimitive::new(vertices, targets);
    let mut frames: Vec<Vec<f32>> = Vec::new();
    for frame in 0..60 {
        let mut weights = vec![0.0f32; targets];
        // A few targets in use, changing from frame to frame; some frames none.
        if frame % 7 != 3 {
            for _ in 0..1 + random.below(6) {
                weights[random.below(targets)] = random.float() * 1.5;
            }
        }
        weights[1] = if frame % 5 == 0 { 0.75 } else { 0.0 };
        frames.push(weights);
    }
    // Weights of either sign on -0.0 sums, -0.0 itself (not in use), and weights that are not finite.
    let mut edge = vec![0.0f32; targets];
    edge[0] = 0.5;
    frames.push(edge.clone());
    edge[0] = -0.5;
    edge[2] = -0.0;
    frames.push(edge.clone());
    edge[4] = f32::INFINITY;
    frames.push(edge.clone());
    edge[4] = f32::NAN;
    frames.push(edge.clone());
    frames.push(vec![0.25; targets]);
    frames.push(vec![0.0; targets]);
    frames.push(vec![0.5; 3]);
    // The same targets in use frame after frame, their weights changing (the frames that add
    // each term in one pass), with a frame of none between, one where a weight turns infinite
    // and one where another target joins.
    let same = |k: usize| {
        let mut weights = vec![0.0f32; targets];
        for (i, t) in [0, 2, 5, 7, 11, 13, 22].into_iter().enumerate() {
            weights[t] = 0.2 + 0.15 * (k + i) as f32 * if i % 2 == 0 { 1.0 } else { -1.0 };
        }
        weights
    };
    for k in 0..12 {
        let mut weights = same(k);
        match k {
            4 => weights.fill(0.0),
            7 => weights[5] = f32::INFINITY,
            10 => weights[3] = 0.5,
            _ => {}
        }
        frames.push(weights);
    }
    let mut applied = 0;
    for (frame, weights) in frames.iter().enumerate() {
        let in_use = weights.iter().take(targets).any(|&w| w != 0.0);
        let done = morphed.apply(&sparse, weights, &face.positions, &face.normals);
        assert_eq!(done, in_use, "frame {frame}");
        let want_active: Vec<(u32, f32)> = (weights.iter().enumerate())
            .filter(|(_, w)| **w != 0.0)
            .map(|(t, &w)| (t as u32, w))
            .collect();
        assert_eq!(
            bits_of_active(morphed.active()),
            bits_of_active(&want_active),
            "frame {frame}"
        );
        if !in_use {
            continue;
        }
        applied += 1;
        let (want_p, want_n) = face.reference(weights);
        assert_eq!(bits(&morphed.positions), bits(&want_p), "frame {frame}: positions");
        assert_eq!(bits(&morphed.normals), bits(&want_n), "frame {frame}: normals");
        let (mut once_p, mut once_n) = (vec![Vec3::ZERO; vertices], vec![Vec3::ZERO; vertices]);
        apply_morph(
            &sparse,
            weights,
            &face.positions,
            &face.normals,
            &mut once_p,
            &mut once_n,
        );
        assert_eq!(bits(&once_p), bits(&want_p), "frame {frame}: apply_morph positions");
        assert_eq!(bits(&once_n), bits(&want_n), "frame {frame}: apply_morph normals");
    }
    assert!(applied > 40, "{applied} frames morphed");
}

fn bits_of_active(active: &[(u32, f32)]) -> Vec<(u32, u32)> {
    active.iter().map(|&(t, w)| (t, w.to_bits())).collect()
}

/// The case the -0.0 rule is for: a vertex on the middle line (x = -0.0) that a target in use
/// does not move. The dense sum turns its -0.0 into +0.0 (`-0 + 0·w`); so must the sparse one.
#[test]
fn a_negative_zero_the_dense_sum_turns_positive_turns_positive_sparsely_too() {
    let positions = vec![Vec3::new(-0.0, 1.0, 0.0), Vec3::new(1.0, 1.0, 0.0)];
    let normals = vec![Vec3::Z; 2];
    let moved = [Vec3::ZERO, Vec3::Y];
    let target = MorphTarget::sparse(&moved, &[], &positions, &normals);
    assert_eq!(target.vertices, [0, 1]);
    let mut morphed = MorphedPrimitive::new(2, 1);
    assert!(morphed.apply(std::slice::from_ref(&target), &[0.5], &positions, &normals));
    assert_eq!(morphed.positions[0].x.to_bits(), 0.0f32.to_bits());
    assert_eq!(morphed.positions[1], Vec3::new(1.0, 1.5, 0.0));
}

#[test]
fn the_gpu_adds_only_the_targets_in_use_and_matches_the_cpu_on_a_face_of_many_targets() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut rig = skinned_tube(64 * 300, 16);
    add_face_targets(&mut rig, 120, 6);
    let primitive = &rig.meshes[0].primitives[0];
    let (low, high) = primitive
        .positions
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    let size = (high - low).length();
    let targets = rig.morphs.of(0, 0);
    let skinner = ComputeSkinner::new(&gpu);
    let mut skinned = SkinnedPose::new(&rig);
    let mut pose = PoseBuffers::new(&rig);
    for time in [0.1, 0.7, 1.3] {
        let inputs = PoseInputs {
            dual_quaternions: true,
            ..PoseInputs::clip_at(Some(0), time)
        };
        evaluate_pose(&rig, &inputs, &mut pose);
        let in_use = pose.morph_weights[0].iter().filter(|&&w| w != 0.0).count();
        assert_eq!(in_use, 6, "at {time}");
        for method in [SkinningMethod::Lbs, SkinningMethod::Dqs] {
            skinned.skin(&rig, &pose, method);
            let cpu = &skinned.meshes[0][0];
            let (palette, dual_quats) = (&pose.palettes[0], &pose.dual_quats[0]);
            let weights = &pose.morph_weights[0];
            let (positions, normals) = skinner
                .skin_morphed(&gpu, primitive, palette, dual_quats, method, targets, weights)
                .unwrap();
            let worst = (positions.iter().zip(&cpu.positions))
                .map(|(g, c)| (*g - *c).abs().max_element())
                .fold(0.0, f32::max);
            assert!(
                worst <= 1e-6 * size,
                "{method:?} at {time}: {worst} against a mesh of {size}"
            );
            let worst_normal = (normals.iter().zip(&cpu.normals))
                .map(|(g, c)| (*g - *c).length())
                .fold(0.0, f32::max);
            assert!(worst_normal <= 1e-5, "{method:?} at {time}: normals {worst_normal}");
            // The morph moved the face: against the same pose skinned without its targets.
            let (plain, _) = skinner.skin(&gpu, primitive, palette, dual_quats, method).unwrap();
            let moved = (plain.iter().zip(&positions))
                .map(|(a, b)| (*a - *b).length())
                .fold(0.0, f32::max);
            assert!(moved > 0.005, "{method:?} at {time}: moved {moved}");
            // No target in use: the vertices are skinned from the bind pose as they are.
            let zero = vec![0.0; targets.len()];
            let (unmorphed, _) = skinner
                .skin_morphed(&gpu, primitive, palette, dual_quats, method, targets, &zero)
                .unwrap();
            assert_eq!(unmorphed, plain, "{method:?} at {time}");
        }
    }
}

/// Big enough for linear blend skinning to split over two threads, where each half is skinned
/// piece by piece right after its morph: the same bits as morphing the whole bind pose, then
/// skinning it, over frames that keep their targets, change them, use none or one at an
/// infinite weight.
#[test]
fn morphing_and_skinning_half_by_half_equals_morphing_then_skinning_bit_for_bit() {
    let mut rig = skinned_tube(70_000, 64);
    add_face_targets(&mut rig, 60, 5);
    let primitive = &rig.meshes[0].primitives[0];
    let vertices = primitive.vertex_count();
    let influences = primitive.influences.as_ref().expect("the tube is skinned");
    let targets = rig.morphs.of(0, 0);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| {
        assert_eq!(threads_for(vertices, 0), 2, "the skinning splits");
        let mut skinned = SkinnedPose::new(&rig);
        let mut pose = PoseBuffers::new(&rig);
        let (mut morphed_p, mut morphed_n) = (vec![Vec3::ZERO; vertices], vec![Vec3::ZERO; vertices]);
        let (mut want_p, mut want_n) = (vec![Vec3::ZERO; vertices], vec![Vec3::ZERO; vertices]);
        for frame in 0..16 {
            pose.evaluate(&rig, Some(0), 0.13 * frame as f32);
            let weights = &mut pose.morph_weights[0];
            match frame {
                6 | 7 => weights[7] = 0.3 + 0.1 * frame as f32,
                8 => weights.fill(0.0),
                9 => weights[3] = f32::INFINITY,
                _ => {}
            }
            skinned.skin(&rig, &pose, SkinningMethod::Lbs);
            apply_morph(
                targets,
                &pose.morph_weights[0],
                &primitive.positions,
                &primitive.normals,
                &mut morphed_p,
                &mut morphed_n,
            );
            if frame == 8 {
                // No target in use: skinned from the bind pose as it is.
                morphed_p.copy_from_slice(&primitive.positions);
                morphed_n.copy_from_slice(&primitive.normals);
            }
            let palette = &pose.palettes[0];
            skin_lbs(palette, influences, &morphed_p, &morphed_n, &mut want_p, &mut want_n);
            let got = &skinned.meshes[0][0];
            assert_eq!(bits(&got.positions), bits(&want_p), "frame {frame}: positions");
            assert_eq!(bits(&got.normals), bits(&want_n), "frame {frame}: normals");
        }
    });
}

/// The split between two threads balances the frame's terms and the vertices' cost, counted
/// here vertex by vertex: the first aligned vertex at which the cost below reaches half.
#[test]
fn the_split_balances_terms_and_vertices() {
    let vertices = 40_000;
    let face = face(vertices, 40, 0xba1a);
    let sparse = face.sparse();
    let mut weights = vec![0.0f32; 40];
    for t in [0, 2, 5, 9, 17] {
        weights[t] = 0.5;
    }
    let morphed = MorphedPrimitive::new(vertices, 40);
    for (align, vertex_cost) in [(1, 0.0), (16, 0.8), (16, 0.05)] {
        let mid = morphed.balanced_split(&sparse, &weights, vertices, align, vertex_cost);
        // Per vertex: its cost and its terms (an entry of each target in use that lists it).
        let mut terms = vec![0usize; vertices];
        for (target, _) in sparse.iter().zip(&weights).filter(|(_, w)| **w != 0.0) {
            for &v in &target.vertices {
                terms[v as usize] += 1;
            }
        }
        let below = |m: usize| (0..m).map(|v| vertex_cost as f64 + terms[v] as f64).sum::<f64>();
        let half = below(vertices) / 2.0;
        // The split counts in f32: within its rounding of the total.
        let rounding = 1e-5 * half;
        assert_eq!(mid % align, 0, "aligned");
        assert!(
            below(mid) >= half - rounding,
            "{align}, {vertex_cost}: {} below {mid} of {}",
            below(mid),
            2.0 * half
        );
        assert!(
            below(mid - align) < half + rounding,
            "{align}, {vertex_cost}: the first such"
        );
    }
}

/// While the targets in use stay the same, the split stays where the last frame had it (the
/// frames then keep their lists), whatever their weights.
#[test]
fn the_split_stays_while_the_targets_in_use_stay() {
    let vertices = 40_000;
    let face = face(vertices, 40, 0x5717);
    let sparse = face.sparse();
    let mut morphed = MorphedPrimitive::new(vertices, 40);
    let mut weights = vec![0.0f32; 40];
    weights[3] = 0.5;
    weights[8] = 0.25;
    let mid = morphed.balanced_split(&sparse, &weights, vertices, 16, 0.8);
    let bind = (&face.positions[..], &face.normals[..]);
    let ignore = |_: usize, _: &[Vec3], _: &[Vec3]| ();
    assert!(morphed.apply_then(&sparse, &weights, bind, mid, (ignore, ignore)));
    weights[3] = 1.25;
    assert_eq!(morphed.balanced_split(&sparse, &weights, vertices, 16, 0.8), mid);
    // Unaligned for this request: balanced afresh, as when another target joins.
    assert_eq!(morphed.balanced_split(&sparse, &weights, vertices, 7, 0.8) % 7, 0);
    weights[11] = 0.5;
    let moved = morphed.balanced_split(&sparse, &weights, vertices, 16, 0.8);
    assert_eq!(moved % 16, 0);
}
