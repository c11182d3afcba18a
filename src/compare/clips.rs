//! Clips matched by name: duration, channels added or dropped, and the largest world-space
//! error of every joint over the whole clip.

use super::{Sides, node_name, placement_change};
use crate::anim::PoseBuffers;
use crate::rig::{Clip, Property};
use rayon::prelude::*;
use serde::Serialize;

/// Sampling rate between key times, in samples per second.
pub const SAMPLE_RATE: f32 = 60.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClipStatus {
    Same,
    Changed,
    Added,
    Removed,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClipDiff {
    pub name: String,
    pub status: ClipStatus,
    /// The clip's index in A and in B.
    pub clip_a: Option<usize>,
    pub clip_b: Option<usize>,
    pub duration_a: Option<f32>,
    pub duration_b: Option<f32>,
    /// Largest joint position error over the clip, relative to the rig's size.
    pub max_position_error: f32,
    pub max_rotation_error_deg: f32,
    /// The joint whose error is largest for its threshold, and when.
    pub worst_joint: Option<String>,
    pub worst_time: Option<f32>,
    /// Times the clips were compared at.
    pub samples: usize,
    /// Every joint both rigs have, worst first.
    pub joints: Vec<JointError>,
    /// Animated properties only B's clip has, and only A's (`node.property`).
    pub channels_added: Vec<String>,
    pub channels_dropped: Vec<String>,
}

impl ClipDiff {
    /// How far the clip is past its thresholds (above 1: changed; added and removed clips are
    /// infinitely so).
    pub fn severity(&self, position: f32, degrees: f32) -> f32 {
        match self.status {
            ClipStatus::Added | ClipStatus::Removed => f32::INFINITY,
            _ => (self.max_position_error / position).max(self.max_rotation_error_deg / degrees),
        }
    }
}

/// One joint's largest errors over a clip and when they happen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct JointError {
    pub node_a: usize,
    pub node_b: usize,
    /// World position error relative to the rig's size.
    pub position_error: f32,
    pub position_time: f32,
    pub rotation_error_deg: f32,
    pub rotation_time: f32,
}

impl JointError {
    fn new(node_a: usize, node_b: usize) -> JointError {
        JointError {
            node_a,
            node_b,
            position_error: 0.0,
            position_time: 0.0,
            rotation_error_deg: 0.0,
            rotation_time: 0.0,
        }
    }

    fn severity(&self, position: f32, degrees: f32) -> f32 {
        (self.position_error / position).max(self.rotation_error_deg / degrees)
    }

    /// The time of whichever error is larger for its threshold.
    fn worst_time(&self, position: f32, degrees: f32) -> f32 {
        if self.position_error / position >= self.rotation_error_deg / degrees {
            self.position_time
        } else {
            self.rotation_time
        }
    }

    fn merge(&mut self, other: &JointError) {
        if other.position_error > self.position_error {
            self.position_error = other.position_error;
            self.position_time = other.position_time;
        }
        if other.rotation_error_deg > self.rotation_error_deg {
            self.rotation_error_deg = other.rotation_error_deg;
            self.rotation_time = other.rotation_time;
        }
    }
}

/// Compares the clips of A and B, calling `starting` with the index and name of each clip of A
/// as its comparison starts.
pub(super) fn compare_clips(sides: &Sides, starting: &mut dyn FnMut(usize, &str)) -> Vec<ClipDiff> {
    let (a, b) = (sides.a, sides.b);
    let joints = sides.matched_joints();
    let mut diffs: Vec<ClipDiff> = a
        .clips
        .iter()
        .enumerate()
        .map(|(ca, clip)| {
            starting(ca, &clip.name);
            match b.clips.iter().position(|c| c.name == clip.name) {
                Some(cb) => compare_clip(sides, &joints, ca, cb),
                None => one_sided(clip, ClipStatus::Removed, Some(ca), None),
            }
        })
        .collect();
    for (cb, clip) in b.clips.iter().enumerate() {
        if !a.clips.iter().any(|c| c.name == clip.name) {
            diffs.push(one_sided(clip, ClipStatus::Added, None, Some(cb)));
        }
    }
    let t = sides.thresholds;
    diffs.sort_by(|x, y| {
        y.severity(t.position, t.rotation_degrees)
            .total_cmp(&x.severity(t.position, t.rotation_degrees))
    });
    diffs
}

fn one_sided(clip: &Clip, status: ClipStatus, clip_a: Option<usize>, clip_b: Option<usize>) -> ClipDiff {
    ClipDiff {
        name: clip.name.clone(),
        status,
        clip_a,
        clip_b,
        duration_a: clip_a.map(|_| clip.duration),
        duration_b: clip_b.map(|_| clip.duration),
        max_position_error: 0.0,
        max_rotation_error_deg: 0.0,
        worst_joint: None,
        worst_time: None,
        samples: 0,
        joints: Vec::new(),
        channels_added: Vec::new(),
        channels_dropped: Vec::new(),
    }
}

/// Times to sample clips `ca` of A and `cb` of B at: every key time of either, and every
/// 1/[`SAMPLE_RATE`] second up to the longer duration.
pub fn sample_times(a: &Clip, b: &Clip) -> Vec<f32> {
    let end = a.duration.max(b.duration);
    let end = if end.is_finite() { end.max(0.0) } else { 0.0 };
    let steps = (end * SAMPLE_RATE).ceil() as usize;
    let mut times: Vec<f32> = (0..=steps)
        .map(|i| (i as f32 / SAMPLE_RATE).min(end))
        .chain(
            [a, b]
                .into_iter()
                .flat_map(|c| &c.channels)
                .flat_map(|ch| ch.times.iter().copied())
                .filter(|t| t.is_finite() && (0.0..=end).contains(t)),
        )
        .collect();
    times.sort_unstable_by(f32::total_cmp);
    times.dedup();
    times
}

/// Times sampled by one worker before it hands back its maxima.
const TIMES_PER_TASK: usize = 32;

fn compare_clip(sides: &Sides, joints: &[(usize, usize)], ca: usize, cb: usize) -> ClipDiff {
    let (a, b, size, t) = (sides.a, sides.b, sides.size, sides.thresholds);
    let (clip_a, clip_b) = (&a.clips[ca], &b.clips[cb]);
    let times = sample_times(clip_a, clip_b);
    let fresh = || joints.iter().map(|&(n, m)| JointError::new(n, m)).collect::<Vec<_>>();
    let errors = times
        .par_chunks(TIMES_PER_TASK)
        .map_init(
            || (PoseBuffers::new(a), PoseBuffers::new(b)),
            |(pose_a, pose_b), chunk| {
                let mut errors = fresh();
                for &time in chunk {
                    pose_a.evaluate(a, Some(ca), time);
                    pose_b.evaluate(b, Some(cb), time);
                    for error in &mut errors {
                        let (position, degrees) =
                            placement_change(&pose_a.worlds[error.node_a], &pose_b.worlds[error.node_b], size);
                        error.merge(&JointError {
                            position_error: position,
                            position_time: time,
                            rotation_error_deg: degrees,
                            rotation_time: time,
                            ..*error
                        });
                    }
                }
                errors
            },
        )
        .reduce(fresh, |mut x, y| {
            x.iter_mut().zip(&y).for_each(|(e, f)| e.merge(f));
            x
        });
    let mut joints = errors;
    joints.sort_by(|x, y| {
        y.severity(t.position, t.rotation_degrees)
            .total_cmp(&x.severity(t.position, t.rotation_degrees))
    });
    let mut diff = one_sided(clip_a, ClipStatus::Same, Some(ca), Some(cb));
    diff.duration_b = Some(clip_b.duration);
    diff.samples = times.len();
    diff.max_position_error = joints.iter().map(|j| j.position_error).fold(0.0, f32::max);
    diff.max_rotation_error_deg = joints.iter().map(|j| j.rotation_error_deg).fold(0.0, f32::max);
    if let Some(worst) = joints.first() {
        diff.worst_joint = Some(node_name(a, worst.node_a));
        diff.worst_time = Some(worst.worst_time(t.position, t.rotation_degrees));
    }
    diff.joints = joints;
    let channels_a = channel_names(clip_a, |n| node_name(a, n));
    let channels_b = channel_names(clip_b, |m| match sides.nodes.b_to_a.get(m).copied().flatten() {
        Some(n) => node_name(a, n),
        None => format!("{} (B)", node_name(b, m)),
    });
    diff.channels_added = only_in(&channels_b, &channels_a);
    diff.channels_dropped = only_in(&channels_a, &channels_b);
    let moved = diff.max_position_error > t.position || diff.max_rotation_error_deg > t.rotation_degrees;
    let retimed = (clip_a.duration - clip_b.duration).abs() > t.duration;
    if moved || retimed {
        diff.status = ClipStatus::Changed;
    }
    diff
}

/// The animated properties of a clip as `node.property`, sorted, with nodes named by `name`
/// (A's names, so that both files' lists compare).
fn channel_names(clip: &Clip, name: impl Fn(usize) -> String) -> Vec<String> {
    let mut names: Vec<String> = clip
        .channels
        .iter()
        .map(|c| {
            let property = match c.property {
                Property::Translation => "translation",
                Property::Rotation => "rotation",
                Property::Scale => "scale",
            };
            format!("{}.{property}", name(c.node))
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The names of sorted list `of` that sorted list `other` lacks.
fn only_in(of: &[String], other: &[String]) -> Vec<String> {
    of.iter().filter(|c| other.binary_search(c).is_err()).cloned().collect()
}
