//! Clip motion over time: how the joints move across a whole clip rather than at one moment
//! (the skeleton's bounds over its clips, the motion checks of `audit --motion`).

pub mod checks;
pub mod curves;
pub mod foot_lock;
pub mod rest_pose;
pub mod rotation;

pub use checks::{ClipMotion, MotionOptions, MotionReport, MotionThresholds, check_motion, feet_by_name};
pub use rest_pose::{ArmPose, RestPoseReport};

use crate::anim::Bounds;
/// Posing apart from the shown pose lives with the pose evaluation (clip edits use it too).
pub use crate::anim::ClipSampler;
use crate::rig::Rig;
use glam::Mat4;

/// Poses a clip takes per clip when the skeleton's bounds are measured.
pub const BOUNDS_SAMPLES: usize = 32;

/// The `k`th of `count` evenly spaced times from 0 to `duration`, both ends included.
pub fn sample_time(duration: f32, k: usize, count: usize) -> f32 {
    if count < 2 {
        0.0
    } else {
        duration * k as f32 / (count - 1) as f32
    }
}

/// Bounds of the skeleton's bones (see [`crate::rig::Hierarchy::bones`]; every node when there
/// are none) in the rest pose and over every clip: what frames a file that has no mesh.
pub fn skeleton_bounds(rig: &Rig) -> Bounds {
    let bones = &rig.hierarchy().bones;
    let any_bone = bones.contains(&true);
    let drawn = |node: usize| !any_bone || bones[node];
    let mut bounds = Bounds::EMPTY;
    let mut sampler = ClipSampler::new(rig);
    let mut include = |worlds: &[Mat4]| {
        for (node, world) in worlds.iter().enumerate() {
            if drawn(node) {
                bounds.include(world.w_axis.truncate());
            }
        }
    };
    include(sampler.worlds_at(None, 0.0));
    for (c, clip) in rig.clips.iter().enumerate() {
        for k in 0..BOUNDS_SAMPLES {
            include(sampler.worlds_at(Some(c), sample_time(clip.duration, k, BOUNDS_SAMPLES)));
        }
    }
    bounds
}

#[cfg(test)]
mod tests;
