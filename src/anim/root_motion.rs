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
    /// Draw this joint's world path instead, with a tick at every frame.
    pub trail_joint: Option<usize>,
}

/// Points of a root trail over a clip.
pub const TRAIL_SAMPLES: usize = 96;
/// Most frames a joint's trail has (a clip of over a minute is drawn at fewer points).
pub const MAX_JOINT_TRAIL_FRAMES: usize = 2048;

/// The node that carries a clip's root motion: the shallowest node with a translation channel
/// (a VRM Animation's expression nodes, whose translation is a weight, left out).
pub fn motion_root(rig: &Rig, clip: usize) -> Option<usize> {
    let depth = &rig.hierarchy().depth;
    let is_track = |node: usize| (rig.facts.vrma.as_ref()).is_some_and(|v| v.is_track_node(node));
    rig.clips
        .get(clip)?
        .channels
        .iter()
        .filter(|c| c.property == Property::Translation && !is_track(c.node))
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
    /// Whether the points are the motion root's, drawn on the ground; otherwise a joint's, one
    /// per frame, drawn where they are with a tick at each.
    pub on_ground: bool,
    clip: Option<usize>,
    joint: Option<usize>,
}

impl RootTrail {
    /// Keeps the trail of `clip` (posed with the hand-made `overrides`) when `shown`, and
    /// nothing otherwise: `joint`'s path at every frame, or the motion root's when `None`.
    /// Allocates only when the clip or the joint changes.
    pub fn update(
        &mut self,
        rig: &Rig,
        clip: Option<usize>,
        overrides: &[JointOverride],
        shown: bool,
        joint: Option<usize>,
    ) {
        if !shown {
            self.points.clear();
            self.clip = None;
            return;
        }
        if self.clip == clip && self.joint == joint && !self.points.is_empty() {
            return;
        }
        self.points.clear();
        (self.clip, self.joint, self.on_ground) = (clip, joint, joint.is_none());
        let Some(clip) = clip else { return };
        let Some(root) = joint
            .filter(|&j| j < rig.nodes.len())
            .or_else(|| motion_root(rig, clip))
        else {
            return;
        };
        let duration = rig.clips[clip].duration;
        let samples = match joint {
            Some(_) => ((duration / crate::anim::FRAME_SECONDS).round() as usize + 1).clamp(2, MAX_JOINT_TRAIL_FRAMES),
            None => TRAIL_SAMPLES,
        };
        // Its own buffers: the trail must not disturb the shown pose.
        let mut scratch = PoseBuffers::new(rig);
        for k in 0..samples {
            let inputs = PoseInputs {
                overrides,
                ..PoseInputs::clip_at(Some(clip), duration * k as f32 / (samples - 1) as f32)
            };
            evaluate_pose(rig, &inputs, &mut scratch);
            self.points.push(scratch.worlds[root].w_axis.truncate());
        }
    }
}
