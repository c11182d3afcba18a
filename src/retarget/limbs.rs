//! How far each carried bone points from its source bone over a clip: the figure a carried
//! clip is judged by.

use super::{Pose, Skeletons};
use crate::rig::Rig;
use glam::{Mat4, Vec3};

/// How far one carried bone points from its source bone: the largest angle between the two
/// world directions (the source's turned as the target faces) at the clip's baked times.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LimbError {
    /// The target joint the bone starts at, and the one it ends at.
    pub joint: String,
    pub child: String,
    pub degrees: f32,
    /// When the angle is largest.
    pub time: f32,
}

/// One carried bone: the target's joints at its ends, the source's, and its worst angle so far.
struct TrackedBone {
    target: (usize, usize),
    source: (usize, usize),
    worst: f32,
    when: f32,
}

/// The largest angle so far, per bone, between the target's direction and the source's.
pub(super) struct LimbTracker {
    bones: Vec<TrackedBone>,
}

impl LimbTracker {
    pub(super) fn new(skeletons: &Skeletons) -> LimbTracker {
        let bones = (skeletons.bones.iter().enumerate())
            .filter_map(|(t, bone)| {
                let (c, sc) = (*bone)?;
                Some(TrackedBone {
                    target: (t, c),
                    source: (skeletons.source_of[t]?, sc),
                    worst: 0.0,
                    when: 0.0,
                })
            })
            .collect();
        LimbTracker { bones }
    }

    pub(super) fn measure(&mut self, skeletons: &Skeletons, source: &Pose, target: &[Mat4], time: f32) {
        let offset = |worlds: &[Mat4], (from, to): (usize, usize)| (worlds[to].w_axis - worlds[from].w_axis).truncate();
        for bone in &mut self.bones {
            let want = skeletons.facing * offset(&source.worlds, bone.source);
            let angle = angle_between(offset(target, bone.target), want);
            if angle > bone.worst {
                (bone.worst, bone.when) = (angle, time);
            }
        }
    }

    pub(super) fn finish(mut self, target: &Rig) -> Vec<LimbError> {
        self.bones.sort_by(|a, b| b.worst.total_cmp(&a.worst));
        (self.bones.into_iter())
            .map(|bone| LimbError {
                joint: target.nodes[bone.target.0].name.clone(),
                child: target.nodes[bone.target.1].name.clone(),
                degrees: bone.worst.to_degrees(),
                time: bone.when,
            })
            .collect()
    }
}

/// The angle between two directions, accurate for small angles too (acos of a dot product is
/// not: its float error alone is about 0.03°); zero when either is too short to point anywhere.
fn angle_between(a: Vec3, b: Vec3) -> f32 {
    let (a, b) = (glam::DVec3::from(a), glam::DVec3::from(b));
    if a.length_squared() == 0.0 || b.length_squared() == 0.0 {
        return 0.0;
    }
    a.cross(b).length().atan2(a.dot(b)) as f32
}
