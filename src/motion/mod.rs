//! Clip motion over time: how the joints move across a whole clip rather than at one moment
//! (the skeleton's bounds over its clips, the motion checks of `audit --motion`).

pub mod checks;
pub mod curves;
pub mod rest_pose;
pub mod rotation;

pub use checks::{ClipMotion, MotionOptions, MotionReport, MotionThresholds, check_motion, feet_by_name};
pub use rest_pose::{ArmPose, RestPoseReport};

use crate::anim::{Bounds, PoseBuffers, PoseInputs, evaluate_pose};
use crate::rig::Rig;
use glam::{Mat4, Vec3};

/// Poses a clip takes per clip when the skeleton's bounds are measured.
pub const BOUNDS_SAMPLES: usize = 32;

/// The world transforms of a rig's nodes at chosen times of its clips, posed in buffers of its
/// own so that it never disturbs a pose being shown.
pub struct ClipSampler<'r> {
    rig: &'r Rig,
    pose: PoseBuffers,
}

impl<'r> ClipSampler<'r> {
    pub fn new(rig: &'r Rig) -> ClipSampler<'r> {
        ClipSampler {
            rig,
            pose: PoseBuffers::new(rig),
        }
    }

    /// Every node's world matrix with `clip` at `time` (the rest pose for `None`).
    pub fn worlds_at(&mut self, clip: Option<usize>, time: f32) -> &[Mat4] {
        evaluate_pose(self.rig, &PoseInputs::clip_at(clip, time), &mut self.pose);
        &self.pose.worlds
    }

    /// Node `node`'s world position with `clip` at `time`.
    pub fn position_at(&mut self, clip: Option<usize>, time: f32, node: usize) -> Vec3 {
        self.worlds_at(clip, time)[node].w_axis.truncate()
    }
}

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
