//! One clip of a rig written as BVH motion capture: the skeleton's joints with their offsets,
//! then a frame per sample of the clip.
//!
//! The joints written are the rig's bones (its skins' joints, or the nodes of a skeleton without
//! skins; see [`crate::rig::Hierarchy::bones`]), each under its nearest bone above. A BVH
//! skeleton's rest pose has every joint turned as the world is, so each joint is written turned
//! by its world rotation's change from the rig's rest pose: `OFFSET` is the rest-pose step from
//! the joint above in world axes, and a frame's rotation channels are the joint's turn from its
//! rest within the turn of the joint above. Whatever lies between two bones (an armature's
//! scale, a helper node) is folded into the offsets, so every joint lands where the rig puts
//! it. A root takes its world position as position channels; any other joint takes them only
//! where the clip moves it off its offset. A leaf bone the clip does not animate is an `End
//! Site`; one it animates is a joint ending in an `End Site` at its own place. Lengths are
//! written in metres.
//!
//! The frame rate is the clip's own where its keys are evenly spaced (a BVH clip read back keeps
//! its `Frame Time`), else [`DEFAULT_RATE`].

use super::SaveError;
use crate::anim::PoseBuffers;
use crate::rig::{BvhRotationOrder, Clip, Rig, degrees_from_rotation};
use glam::{DQuat, DVec3};
use std::fmt::Write as _;
use std::path::Path;

/// Frames a second where a clip's keys give none.
pub const DEFAULT_RATE: f64 = 30.0;

/// Most frames written: a day at 120 frames a second.
const MAX_FRAMES: f64 = 1e7;

/// How the clip is written.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BvhOptions {
    /// The order each joint's rotation channels are listed (and composed) in.
    pub order: BvhRotationOrder,
    /// Frames a second; `None` takes the clip's keys' rate, else [`DEFAULT_RATE`].
    pub rate: Option<f64>,
}

/// Writes clip `clip` of `rig` to `out` as BVH, whole or not at all (through a temporary file
/// beside it).
pub fn write_bvh(rig: &Rig, clip: usize, out: &Path, options: &BvhOptions) -> Result<(), SaveError> {
    let text = bvh_text(rig, clip, options)?;
    super::new_gltf::write_files(&[(out.to_path_buf(), text.into_bytes())])
}

/// One written joint: the rig node, the written joint above it, and what its lines hold.
pub(super) struct Joint {
    pub node: usize,
    pub parent: Option<usize>,
    pub name: String,
    /// The rest-pose step from the joint above (or from the origin, for a root), in metres.
    pub offset: DVec3,
    /// Written as an `End Site` (a leaf the clip does not animate).
    end_site: bool,
    /// Writes position channels before its rotation channels.
    positions: bool,
    /// The world rotation of its node at rest, whose change the rotation channels give.
    rest_rotation: DQuat,
}

/// The BVH text of clip `clip` of `rig`.
pub fn bvh_text(rig: &Rig, clip: usize, options: &BvhOptions) -> Result<String, SaveError> {
    let Some(the_clip) = rig.clips.get(clip) else {
        return Err(SaveError::NoClip {
            clip,
            count: rig.clips.len(),
        });
    };
    let frames = Frames::of(rig, clip, options.rate)?;
    let frame_time = frames.frame_time;
    let time = |k: usize| frames.time(k);
    let frames = frames.count;
    let mut joints = skeleton(rig, the_clip)?;
    let mut pose = PoseBuffers::new(rig);
    let mut frame = Frame::new(rig.nodes.len());

    // A joint whose step from the joint above changes over the clip takes position channels;
    // changes within single-float noise (a tenth of the reading's tolerance) do not count.
    let moved = 1e-5 * f64::from(crate::anim::rig_height(rig));
    for k in 0..frames {
        pose.evaluate(rig, Some(clip), time(k));
        frame.set(rig, &pose, &joints);
        for j in 0..joints.len() {
            if !joints[j].positions && !joints[j].end_site {
                joints[j].positions = (frame.local_position(j, &joints) - joints[j].offset).length() > moved;
            }
        }
    }

    let mut text = String::with_capacity(frames * joints.len() * 40 + joints.len() * 120);
    // A frame lists the joints' values in the order the hierarchy lists the joints.
    let listed = hierarchy(&mut text, &joints, options.order);
    let _ = writeln!(text, "MOTION\nFrames: {frames}");
    let _ = writeln!(text, "Frame Time: {frame_time}");
    let mut previous: Vec<Option<[f64; 3]>> = vec![None; joints.len()];
    for k in 0..frames {
        pose.evaluate(rig, Some(clip), time(k));
        frame.set(rig, &pose, &joints);
        let mut first = true;
        let mut value = |text: &mut String, v: f64, decimals: usize| {
            if !std::mem::take(&mut first) {
                text.push(' ');
            }
            push_number(text, v, decimals);
        };
        for &j in &listed {
            let joint = &joints[j];
            if joint.end_site {
                continue;
            }
            if joint.positions {
                for p in frame.local_position(j, &joints).to_array() {
                    value(&mut text, p, 8);
                }
            }
            let turn = frame.local_rotation(j, &joints);
            let angles = continuous(degrees_from_rotation(options.order, turn), previous[j]);
            previous[j] = Some(angles);
            for a in angles {
                value(&mut text, a, 6);
            }
        }
        text.push('\n');
    }
    Ok(text)
}

/// The moments a clip is written at: evenly spaced frames over the whole clip.
pub(super) struct Frames {
    pub frame_time: f64,
    pub count: usize,
    duration: f64,
}

impl Frames {
    /// Clip `clip`'s frames at `rate` a second, else at the rate of its keys, else at
    /// [`DEFAULT_RATE`].
    pub fn of(rig: &Rig, clip: usize, rate: Option<f64>) -> Result<Frames, SaveError> {
        let Some(the_clip) = rig.clips.get(clip) else {
            return Err(SaveError::NoClip {
                clip,
                count: rig.clips.len(),
            });
        };
        let problem = |problem: String| SaveError::RigData {
            what: format!("clip {clip}"),
            problem,
        };
        let frame_time = match rate {
            Some(rate) => 1.0 / rate,
            None => clip_frame_time(rig, the_clip).unwrap_or(1.0 / DEFAULT_RATE),
        };
        if !(frame_time.is_finite() && frame_time > 0.0) {
            return Err(problem(format!("{} is not a frame rate", 1.0 / frame_time)));
        }
        let duration = f64::from(the_clip.duration.max(0.0));
        let frames = (duration / frame_time).round() + 1.0;
        // The frame time is a positive number and the duration one at or above 0 (or infinite).
        if frames > MAX_FRAMES {
            return Err(problem(format!(
                "{duration} s at {} frames a second is more than {MAX_FRAMES} frames",
                1.0 / frame_time
            )));
        }
        Ok(Frames {
            frame_time,
            count: frames as usize,
            duration,
        })
    }

    /// Frame `k`'s time: `k × frame time` in f64, as a reader puts it.
    pub fn time(&self, k: usize) -> f32 {
        ((k as f64 * self.frame_time).min(self.duration)) as f32
    }
}

/// The clip's frame time: the spacing of its keys where every channel's keys are evenly spaced
/// at one spacing, exactly a BVH file's `Frame Time` for the clip it was read as.
fn clip_frame_time(rig: &Rig, clip: &Clip) -> Option<f64> {
    let mut spacing: Option<f64> = None;
    for channel in clip.channels.iter().filter(|c| c.times.len() > 1) {
        let times = &channel.times;
        let (first, last) = (f64::from(times[0]), f64::from(times[times.len() - 1]));
        let step = (last - first) / (times.len() - 1) as f64;
        let even = times
            .iter()
            .enumerate()
            .all(|(k, &t)| (f64::from(t) - first - k as f64 * step).abs() <= 1e-3 * step);
        let agrees = spacing.is_none_or(|s| (s - step).abs() <= 1e-6 * s);
        if !(step > 0.0 && even && agrees) {
            return None;
        }
        spacing.get_or_insert(step);
    }
    let spacing = spacing?;
    // Key times are single floats: the file's own frame time is the exact one where it matches.
    let written = rig.facts.bvh.as_ref().map(|b| b.frame_time);
    Some(written.filter(|&t| (t - spacing).abs() <= 1e-6 * t).unwrap_or(spacing))
}

/// The joints written, parents first, from the rig's bones at rest; leaves `clip` does not
/// animate are end sites.
fn skeleton(rig: &Rig, clip: &Clip) -> Result<Vec<Joint>, SaveError> {
    let bones = &rig.hierarchy().bones;
    let mut joints = joints_of(rig, |node| bones[node])?;
    let mut animated = vec![false; rig.nodes.len()];
    for channel in &clip.channels {
        if let Some(flag) = animated.get_mut(channel.node) {
            *flag = true;
        }
    }
    let mut has_children = vec![false; joints.len()];
    for joint in &joints {
        if let Some(p) = joint.parent {
            has_children[p] = true;
        }
    }
    for (j, joint) in joints.iter_mut().enumerate() {
        joint.end_site = joint.parent.is_some() && !has_children[j] && !animated[joint.node];
    }
    Ok(joints)
}

/// The nodes `kept` picks as joints, parents first, each under its nearest kept node above,
/// with their rest-pose steps and world rotations.
pub(super) fn joints_of(rig: &Rig, kept: impl Fn(usize) -> bool) -> Result<Vec<Joint>, SaveError> {
    let rest = PoseBuffers::new(rig);
    let mut rotations = vec![DQuat::IDENTITY; rig.nodes.len()];
    world_rotations(rig, &rest, &mut rotations);
    let position = |n: usize| rest.worlds[n].w_axis.truncate().as_dvec3();
    let mut written: Vec<Option<usize>> = vec![None; rig.nodes.len()];
    let mut joints: Vec<Joint> = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (node, data) in rig.nodes.iter().enumerate() {
        if !kept(node) {
            continue;
        }
        let parent = std::iter::successors(data.parent, |&p| rig.nodes.get(p)?.parent)
            .take(rig.nodes.len())
            .find_map(|p| written.get(p).copied().flatten());
        let offset = match parent {
            Some(p) => position(node) - position(joints[p].node),
            None => position(node),
        };
        written[node] = Some(joints.len());
        joints.push(Joint {
            node,
            parent,
            name: unique_name(&data.name, node, &mut names),
            offset,
            end_site: false,
            positions: parent.is_none(),
            rest_rotation: rotations[node],
        });
    }
    if joints.is_empty() {
        return Err(SaveError::RigData {
            what: "skeleton".into(),
            problem: "it has no joints to write".into(),
        });
    }
    Ok(joints)
}

/// `name` as one line of a BVH file, told apart from the names already written.
fn unique_name(name: &str, node: usize, taken: &mut std::collections::HashSet<String>) -> String {
    let cleaned: String = name
        .trim()
        .chars()
        .map(|c| if c.is_control() || c == '{' || c == '}' { '_' } else { c })
        .collect();
    let base = if cleaned.is_empty() {
        format!("joint {node}")
    } else {
        cleaned
    };
    let mut candidate = base.clone();
    let mut n = 1;
    while !taken.insert(candidate.clone()) {
        n += 1;
        candidate = format!("{base}_{n}");
    }
    candidate
}

/// Each node's world rotation in `pose` (its parent's times its own, scale left out).
fn world_rotations(rig: &Rig, pose: &PoseBuffers, rotations: &mut [DQuat]) {
    for (i, node) in rig.nodes.iter().enumerate() {
        let local = pose.locals[i].rotation.as_dquat();
        rotations[i] = match node.parent {
            Some(p) => rotations[p] * local,
            None => local,
        };
    }
}

/// One moment's world rotations and positions of the rig's nodes.
pub(super) struct Frame {
    rotations: Vec<DQuat>,
    positions: Vec<DVec3>,
}

impl Frame {
    pub fn new(nodes: usize) -> Frame {
        Frame {
            rotations: vec![DQuat::IDENTITY; nodes],
            positions: vec![DVec3::ZERO; nodes],
        }
    }

    pub fn set(&mut self, rig: &Rig, pose: &PoseBuffers, joints: &[Joint]) {
        world_rotations(rig, pose, &mut self.rotations);
        for joint in joints {
            self.positions[joint.node] = pose.worlds[joint.node].w_axis.truncate().as_dvec3();
        }
    }

    /// Joint `j`'s turn from its rest, in the world.
    fn turn(&self, j: usize, joints: &[Joint]) -> DQuat {
        let joint = &joints[j];
        (self.rotations[joint.node] * joint.rest_rotation.conjugate()).normalize()
    }

    /// Joint `j`'s rotation channels' turn: its own within the turn of the joint above.
    pub fn local_rotation(&self, j: usize, joints: &[Joint]) -> DQuat {
        let parent = joints[j].parent.map_or(DQuat::IDENTITY, |p| self.turn(p, joints));
        (parent.conjugate() * self.turn(j, joints)).normalize()
    }

    /// Joint `j`'s position channels: its place relative to the joint above, in that joint's
    /// turned axes (a root's, in the world).
    pub fn local_position(&self, j: usize, joints: &[Joint]) -> DVec3 {
        let joint = &joints[j];
        match joint.parent {
            Some(p) => self.turn(p, joints).conjugate() * (self.positions[joint.node] - self.positions[joints[p].node]),
            None => self.positions[joint.node],
        }
    }
}

/// Euler angles equal to `angles` as a rotation, chosen nearest to the previous frame's so
/// that curves do not jump by 360° (or to the other of the two solutions) between frames.
fn continuous(angles: [f64; 3], previous: Option<[f64; 3]>) -> [f64; 3] {
    let Some(previous) = previous else { return angles };
    // (a, b, c) and (a + 180°, 180° − b, c + 180°) make the same rotation for any order.
    let [a, b, c] = angles;
    let other = [a + 180.0, 180.0 - b, c + 180.0];
    let near = |candidate: [f64; 3]| {
        let mut unwrapped = candidate;
        for (angle, before) in unwrapped.iter_mut().zip(previous) {
            *angle = crate::motion::rotation::unwrap_degrees(*angle, before);
        }
        let distance: f64 = unwrapped.iter().zip(previous).map(|(a, b)| (a - b).abs()).sum();
        (unwrapped, distance)
    };
    let (first, second) = (near(angles), near(other));
    if second.1 < first.1 { second.0 } else { first.0 }
}

/// The hierarchy section: every joint's block, nested. Returns the joints in the order written
/// (depth first), which is the order of their values in a frame.
fn hierarchy(text: &mut String, joints: &[Joint], order: BvhRotationOrder) -> Vec<usize> {
    let mut listed = Vec::with_capacity(joints.len());
    text.push_str("HIERARCHY\n");
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); joints.len()];
    for (j, joint) in joints.iter().enumerate() {
        if let Some(p) = joint.parent {
            children[p].push(j);
        }
    }
    let rotations: String = order.axes().iter().map(|axis| format!(" {axis}rotation")).collect();
    // (joint, depth, closing): a joint's block is opened, then closed after its children.
    let mut stack: Vec<(usize, usize, bool)> = (0..joints.len())
        .rev()
        .filter(|&j| joints[j].parent.is_none())
        .map(|j| (j, 0, false))
        .collect();
    while let Some((j, depth, closing)) = stack.pop() {
        let indent = "\t".repeat(depth);
        if closing {
            let _ = writeln!(text, "{indent}}}");
            continue;
        }
        let joint = &joints[j];
        listed.push(j);
        let keyword = match (joint.parent, joint.end_site) {
            (None, _) => format!("ROOT {}", joint.name),
            (Some(_), true) => "End Site".to_owned(),
            (Some(_), false) => format!("JOINT {}", joint.name),
        };
        let _ = writeln!(text, "{indent}{keyword}\n{indent}{{");
        let _ = write!(text, "{indent}\tOFFSET");
        for component in joint.offset.to_array() {
            text.push(' ');
            push_number(text, component, 8);
        }
        text.push('\n');
        if !joint.end_site {
            let positions = if joint.positions {
                " Xposition Yposition Zposition"
            } else {
                ""
            };
            let count = if joint.positions { 6 } else { 3 };
            let _ = writeln!(text, "{indent}\tCHANNELS {count}{positions}{rotations}");
        }
        stack.push((j, depth, true));
        if !joint.end_site && children[j].is_empty() {
            // A leaf the clip turns ends at its own place.
            let _ = writeln!(
                text,
                "{indent}\tEnd Site\n{indent}\t{{\n{indent}\t\tOFFSET 0 0 0\n{indent}\t}}"
            );
        }
        stack.extend(children[j].iter().rev().map(|&c| (c, depth + 1, false)));
    }
    listed
}

/// `value` with `decimals` decimals, without trailing zeros (and without a minus on zero).
fn push_number(text: &mut String, value: f64, decimals: usize) {
    let start = text.len();
    let _ = write!(text, "{value:.decimals$}");
    if text[start..].contains('.') {
        let trimmed = text[start..].trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(start + trimmed);
    }
    if &text[start..] == "-0" {
        text.truncate(start);
        text.push('0');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_short() {
        let mut text = String::new();
        for (value, decimals) in [(1.5, 6), (-0.0000001, 6), (2.0, 8), (-12.345678912, 6), (0.1, 8)] {
            push_number(&mut text, value, decimals);
            text.push(' ');
        }
        assert_eq!(text, "1.5 0 2 -12.345679 0.1 ");
    }

    #[test]
    fn angles_follow_the_previous_frame() {
        assert_eq!(
            continuous([179.0, 0.0, 0.0], Some([-179.0, 0.0, 0.0])),
            [-181.0, 0.0, 0.0]
        );
        let flipped = continuous([-170.0, 170.0, -170.0], Some([10.0, 10.0, 10.0]));
        assert!(
            flipped
                .iter()
                .zip([10.0, 10.0, 10.0])
                .all(|(a, b): (&f64, f64)| (a - b).abs() < 1e-9),
            "{flipped:?}"
        );
    }
}
