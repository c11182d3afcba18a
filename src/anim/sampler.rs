//! Posing a rig apart from the pose being shown: node worlds at any clip time, and the rig's
//! height at rest, which tolerances and checks scale by (clip edits, `audit --motion`).

use crate::anim::{Bounds, PoseBuffers, PoseInputs, evaluate_pose};
use crate::rig::Rig;
use glam::{Mat4, Vec3};

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

/// The rig's height: the vertical extent of its bones (see [`crate::rig::Hierarchy::bones`]) in
/// the rest pose, or, for a flat skeleton, the size of their bounds (never below 1e-6).
pub fn rig_height(rig: &Rig) -> f32 {
    let bones = &rig.hierarchy().bones;
    let mut sampler = ClipSampler::new(rig);
    let mut bounds = Bounds::EMPTY;
    for (node, world) in sampler.worlds_at(None, 0.0).iter().enumerate() {
        if bones[node] {
            bounds.include(world.w_axis.truncate());
        }
    }
    let height = bounds.max.y - bounds.min.y;
    if height > 1e-6 { height } else { bounds.size().max(1e-6) }
}
