//! Root motion: the node that carries a clip's travel, holding it in place, and its path.

use crate::anim::{JointOverride, PoseBuffers, PoseInputs, evaluate_pose};
use crate::rig::{Property, Rig, Trs};
use glam::Vec3;

/// Root motion display.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RootMotion {
    /// Keep the motion root over its rest position on the ground plane (its height still moves).
    pub lock: bool,
    /// Draw the motion root's path over the whole clip on the ground.
    pub trail: bool,
}

/// Points of a root trail over a clip.
pub const TRAIL_SAMPLES: usize = 96;

/// The node that carries a clip's root motion: the shallowest node with a translation channel.
pub fn motion_root(rig: &Rig, clip: usize) -> Option<usize> {
    let depth = &rig.hierarchy().depth;
    rig.clips
        .get(clip)?
        .channels
        .iter()
        .filter(|c| c.property == Property::Translation)
        .map(|c| c.node)
        .min_by_key(|&n| (depth.get(n).copied().unwrap_or(u32::MAX), n))
}

/// Keeps `node`'s translation over its rest position on the ground plane (x and z).
pub fn lock_to_rest(locals: &mut [Trs], rest: &Trs, node: usize) {
    let local = &mut locals[node];
    local.translation.x = rest.translation.x;
    local.translation.z = rest.translation.z;
}

/// The motion root's world positions over a whole clip, recomputed only when the clip changes.
#[derive(Debug, Default)]
pub struct RootTrail {
    pub points: Vec<Vec3>,
    clip: Option<usize>,
}

impl RootTrail {
    /// Keeps the trail of `clip` (posed with the hand-made `overrides`) when `shown`, and
    /// nothing otherwise. Allocates only when the clip changes.
    pub fn update(&mut self, rig: &Rig, clip: Option<usize>, overrides: &[JointOverride], shown: bool) {
        if !shown {
            self.points.clear();
            self.clip = None;
            return;
        }
        if self.clip == clip && !self.points.is_empty() {
            return;
        }
        self.points.clear();
        self.clip = clip;
        let Some(clip) = clip else { return };
        let Some(root) = motion_root(rig, clip) else { return };
        let duration = rig.clips[clip].duration;
        // Its own buffers: the trail must not disturb the shown pose.
        let mut scratch = PoseBuffers::new(rig);
        for k in 0..TRAIL_SAMPLES {
            let inputs = PoseInputs {
                overrides,
                ..PoseInputs::clip_at(Some(clip), duration * k as f32 / (TRAIL_SAMPLES - 1) as f32)
            };
            evaluate_pose(rig, &inputs, &mut scratch);
            self.points.push(scratch.worlds[root].w_axis.truncate());
        }
    }
}
