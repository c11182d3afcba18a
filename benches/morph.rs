//! The CPU path with morph targets: one frame's skinning ([`SkinnedPose::skin`], linear blend,
//! positions and normals, both cores) of a 100k-vertex tube of 64 joints with no morph targets,
//! with 200 targets of which 5 are in use (each moving about 3% of the vertices, as
//! `--synthetic 100000,64,200,5` makes them), and the same frame as the dense path made it before
//! the targets were stored sparse (the bind pose copied, every vertex of each target in use
//! added, every normal renormalized, then skinned), in one run so that their ratios compare.
//! Each iteration takes the next of 16 poses of the clip, so the targets' weights change from
//! frame to frame as they do when playing.
//!
//! `cargo bench --bench morph`

use criterion::{Criterion, criterion_group, criterion_main};
use glam::Vec3;
use rigscope::anim::PoseBuffers;
use rigscope::anim::morph::MorphedPrimitive;
use rigscope::rig::Rig;
use rigscope::skin::fast::{Kernel, skin_lbs_parallel};
use rigscope::skin::{SkinnedPose, SkinningMethod};
use rigscope::synthetic::{add_face_targets, skinned_tube};
use std::hint::black_box;
use std::time::Duration;

const VERTICES: usize = 100_000;
const JOINTS: usize = 64;
const POSES: usize = 16;

fn poses(rig: &Rig) -> Vec<PoseBuffers> {
    (0..POSES)
        .map(|k| PoseBuffers::at(rig, Some(0), 2.0 * k as f32 / POSES as f32))
        .collect()
}

/// The morph and skinning of the dense path as it was: offsets per vertex for each target, a
/// target at weight 0 skipped, every other one added at every vertex.
struct Dense {
    /// Per target: position and normal offsets at every vertex (only those in use are filled;
    /// the others are never read, as the dense path skipped them too).
    offsets: Vec<Option<(Vec<Vec3>, Vec<Vec3>)>>,
    morphed: (Vec<Vec3>, Vec<Vec3>),
    out: (Vec<Vec3>, Vec<Vec3>),
}

impl Dense {
    fn new(rig: &Rig, poses: &[PoseBuffers]) -> Dense {
        let targets = rig.morphs.of(0, 0);
        let used = |t: usize| poses.iter().any(|p| p.morph_weights[0][t] != 0.0);
        let offsets = (targets.iter().enumerate())
            .map(|(t, target)| used(t).then(|| target.dense(vertex_count(rig))))
            .collect();
        let n = vertex_count(rig);
        Dense {
            offsets,
            morphed: (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]),
            out: (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]),
        }
    }

    fn frame(&mut self, rig: &Rig, pose: &PoseBuffers) {
        let primitive = &rig.meshes[0].primitives[0];
        let (positions, normals) = &mut self.morphed;
        positions.copy_from_slice(&primitive.positions);
        normals.copy_from_slice(&primitive.normals);
        for (offsets, &w) in self.offsets.iter().zip(&pose.morph_weights[0]) {
            let Some((dp, dn)) = offsets.as_ref().filter(|_| w != 0.0) else {
                continue;
            };
            for (p, d) in positions.iter_mut().zip(dp) {
                *p += *d * w;
            }
            for (n, d) in normals.iter_mut().zip(dn) {
                *n += *d * w;
            }
        }
        for n in normals.iter_mut() {
            *n = n.normalize_or_zero();
        }
        let influences = primitive.influences.as_ref().expect("the tube is skinned");
        let (out_positions, out_normals) = &mut self.out;
        skin_lbs_parallel(
            Kernel::detect(),
            0,
            &pose.palettes[0],
            influences,
            positions,
            Some((normals, out_normals)),
            out_positions,
        );
    }
}

fn vertex_count(rig: &Rig) -> usize {
    rig.meshes[0].primitives[0].vertex_count()
}

fn morph_targets(c: &mut Criterion) {
    let plain = skinned_tube(VERTICES, JOINTS);
    let mut face = skinned_tube(VERTICES, JOINTS);
    add_face_targets(&mut face, 200, 5);
    let (plain_poses, face_poses) = (poses(&plain), poses(&face));
    let mut group = c.benchmark_group(format!("CPU path, {VERTICES} vertices, {JOINTS} joints"));
    group
        .sample_size(40)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let mut skin = |name: &str, rig: &Rig, poses: &[PoseBuffers]| {
        let mut skinned = SkinnedPose::new(rig);
        let mut k = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                k = (k + 1) % POSES;
                skinned.skin(rig, &poses[k], SkinningMethod::Lbs);
                black_box(&skinned.meshes[0][0].positions[0]);
            })
        });
    };
    skin("no morph targets", &plain, &plain_poses);
    skin("200 targets, 5 in use (sparse)", &face, &face_poses);
    let primitive = &face.meshes[0].primitives[0];
    let mut morphed = MorphedPrimitive::new(primitive.vertex_count(), 200);
    let mut k = 0;
    group.bench_function("200 targets, 5 in use: the morph alone (sparse)", |b| {
        b.iter(|| {
            k = (k + 1) % POSES;
            let weights = &face_poses[k].morph_weights[0];
            morphed.apply(face.morphs.of(0, 0), weights, &primitive.positions, &primitive.normals);
            black_box(&morphed.positions[0]);
        })
    });
    let mut dense = Dense::new(&face, &face_poses);
    let mut k = 0;
    group.bench_function("200 targets, 5 in use (dense, as before)", |b| {
        b.iter(|| {
            k = (k + 1) % POSES;
            dense.frame(&face, &face_poses[k]);
            black_box(&dense.out.0[0]);
        })
    });
    group.finish();
}

criterion_group!(benches, morph_targets);
criterion_main!(benches);
