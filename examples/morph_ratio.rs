//! The CPU path's cost with morph targets against without, measured so that a busy machine
//! moves both alike: batches of 16 frames (the next 16 poses of the clip) of a 100k-vertex tube
//! of 64 joints without targets and of the same tube with 200 targets, 5 in use, alternate, and
//! the median of the per-batch ratios is printed with the median frame times. Complements
//! `cargo bench --bench morph`, whose separate runs see the machine's load change between them.
//!
//! `cargo run --release --example morph_ratio`

use rigscope::anim::PoseBuffers;
use rigscope::rig::Rig;
use rigscope::skin::{SkinnedPose, SkinningMethod};
use rigscope::synthetic::{add_face_targets, skinned_tube};
use std::time::Instant;

const POSES: usize = 16;
const BATCHES: usize = 400;
/// Batches left out at the start, while caches and the thread pool warm up.
const WARM_UP: usize = 20;

/// Microseconds a frame over one batch of every pose.
fn batch(rig: &Rig, poses: &[PoseBuffers], skinned: &mut SkinnedPose) -> f64 {
    let start = Instant::now();
    for pose in poses {
        skinned.skin(rig, pose, SkinningMethod::Lbs);
    }
    start.elapsed().as_secs_f64() * 1e6 / poses.len() as f64
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let plain = skinned_tube(100_000, 64);
    let mut face = skinned_tube(100_000, 64);
    add_face_targets(&mut face, 200, 5);
    // Every pose of the two-second clip at a sixteenth of it apart.
    let at = |rig: &Rig, k: usize| PoseBuffers::at(rig, Some(0), 2.0 * k as f32 / POSES as f32);
    let (plain_poses, face_poses): (Vec<_>, Vec<_>) = (0..POSES).map(|k| (at(&plain, k), at(&face, k))).unzip();
    let (mut plain_skinned, mut face_skinned) = (SkinnedPose::new(&plain), SkinnedPose::new(&face));
    let (mut without, mut with, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..BATCHES {
        let a = batch(&plain, &plain_poses, &mut plain_skinned);
        let b = batch(&face, &face_poses, &mut face_skinned);
        if round >= WARM_UP {
            without.push(a);
            with.push(b);
            ratios.push(b / a);
        }
    }
    println!(
        "no targets {:.1} µs, 200 targets with 5 in use {:.1} µs: median ratio {:.3}",
        median(without),
        median(with),
        median(ratios)
    );
}
