//! Clips: durations, keys, what their first frame does to the bind pose.

use super::*;
use crate::motion::curves::{KeyFlag, OVERSHOOT_FRACTION, key_flags};

impl<'r> Analysis<'r> {
    pub(super) fn clips(&mut self) -> Vec<ClipSummary> {
        let rig = self.rig;
        let first_skinned = rig.instances.iter().position(|i| i.skin.is_some());
        let mut summaries = Vec::new();
        let mut locals: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        for (c, clip) in rig.clips.iter().enumerate() {
            let mut animated: Vec<usize> = clip.channels.iter().map(|ch| ch.node).collect();
            animated.sort_unstable();
            animated.dedup();
            let mut interpolations = Vec::new();
            for (mode, name) in [
                (Interpolation::Step, "STEP"),
                (Interpolation::Linear, "LINEAR"),
                (Interpolation::CubicSpline, "CUBICSPLINE"),
            ] {
                if clip.channels.iter().any(|ch| ch.interpolation == mode) {
                    interpolations.push(name);
                }
            }
            self.key_findings(c);
            if !rig.skins.is_empty() {
                let outside: Vec<usize> = animated
                    .iter()
                    .copied()
                    .filter(|&n| !self.rig.hierarchy().is_joint.get(n).copied().unwrap_or(false))
                    .collect();
                if !outside.is_empty() {
                    self.push(
                        Finding::new(
                            Severity::Info,
                            FindingCode::ChannelTargetsNonJoint,
                            format!(
                                "clip '{}' animates {} node(s) that are joints of no skin: {}",
                                clip.name,
                                outside.len(),
                                node_list(rig, &outside)
                            ),
                        )
                        .nodes(outside)
                        .clip(c),
                    );
                }
            }
            let cost = rig.nodes.len() + clip.channels.len() + first_skinned.map_or(0, |i| self.joints_of(i));
            let first_skinned = first_skinned.filter(|_| self.afford(cost, "first-frame poses"));
            let first_frame_vs_bind = first_skinned.map(|i| {
                for (local, node) in locals.iter_mut().zip(&rig.nodes) {
                    *local = node.rest;
                }
                for channel in &clip.channels {
                    let Some(local) = locals.get_mut(channel.node) else {
                        continue;
                    };
                    let v = sample_channel(channel, 0.0, &mut 0);
                    match channel.property {
                        Property::Translation => local.translation = v.truncate(),
                        Property::Rotation => local.rotation = Quat::from_vec4(v),
                        Property::Scale => local.scale = v.truncate(),
                    }
                }
                pose_deviation(rig, i, &worlds_of(rig, &locals), self.bind_size)
            });
            if let Some(d) = first_frame_vs_bind
                && !d.is_bind_pose()
            {
                self.push(
                    Finding::new(
                        Severity::Info,
                        FindingCode::FirstFrameNotBindPose,
                        format!(
                            "clip '{}': its first frame differs from the bind pose: {}",
                            clip.name,
                            describe_deviation(rig, &d)
                        ),
                    )
                    .nodes([d.joint])
                    .clip(c),
                );
            }
            summaries.push(ClipSummary {
                name: clip.name.clone(),
                duration: clip.duration,
                channels: clip.channels.len(),
                interpolations,
                animated_nodes: animated.len(),
                first_frame_vs_bind,
            });
        }
        summaries
    }

    /// Keys: empty clips, repeated or negative times, quaternions far from unit length.
    pub(super) fn key_findings(&mut self, c: usize) {
        let clip = &self.rig.clips[c];
        if clip.channels.is_empty() {
            self.push(
                Finding::new(
                    Severity::Warning,
                    FindingCode::ClipEmpty,
                    if self.clips_with_dropped.get(c).copied().unwrap_or(false) {
                        format!("clip '{}' has no channel that can be played", clip.name)
                    } else {
                        format!("clip '{}' has no channels", clip.name)
                    },
                )
                .clip(c),
            );
            return;
        }
        let mut problems = KeyProblems::default();
        for k in 0..clip.channels.len() {
            self.collect_key_problems(c, k, &mut problems);
            self.quaternion_length_finding(c, k);
        }
        self.keys_not_increasing_finding(c, &problems.repeated);
        self.negative_time_finding(c, &problems.negative);
        self.keys_jump_finding(c, &problems.jumps);
        self.hemisphere_flip_finding(c, &problems.flipped);
        if clip.duration <= 0.0 {
            self.push(
                Finding::new(
                    Severity::Info,
                    FindingCode::ClipZeroDuration,
                    format!("clip '{}' lasts 0 seconds (a single pose)", clip.name),
                )
                .clip(c),
            );
        }
    }

    /// Notes in `problems` what is wrong with the keys of channel `k` of clip `c`; reports an
    /// overshooting cubic segment at once.
    fn collect_key_problems(&mut self, c: usize, k: usize, problems: &mut KeyProblems) {
        let channel = &self.rig.clips[c].channels[k];
        let mut first_flip = true;
        for (key, flag) in key_flags(channel, self.limits.keys_jump_degrees) {
            match flag {
                KeyFlag::HemisphereFlip if first_flip => {
                    problems.flipped.push((k, key));
                    first_flip = false;
                }
                KeyFlag::HemisphereFlip => {}
                KeyFlag::Jump(degrees) => problems.jumps.push((k, key, degrees)),
                KeyFlag::CubicOvershoot(past) => self.overshoot_finding(c, k, key, past),
            }
        }
        if let Some(i) = channel.times.windows(2).position(|w| w[1] <= w[0]) {
            problems.repeated.push((k, i + 1, channel.times[i + 1]));
        }
        if channel.times.first().is_some_and(|&t| t < 0.0) {
            problems.negative.push(k);
        }
    }

    /// The rotation key of channel `k` of clip `c` farthest from unit length, when it is a zero
    /// quaternion or far from 1.
    fn quaternion_length_finding(&mut self, c: usize, k: usize) {
        let rig = self.rig;
        let (clip, channel) = (&rig.clips[c], &rig.clips[c].channels[k]);
        let facts = rig.facts.channels.get(c);
        let Some((key, length)) = facts.and_then(|f| f.get(k)).and_then(|f| f.worst_quaternion) else {
            return;
        };
        let target = node_label(rig, channel.node);
        if length < 1e-6 {
            self.push(
                Finding::new(
                    Severity::Error,
                    FindingCode::QuaternionZero,
                    format!(
                        "clip '{}' channel {} ({target} rotation): key {key} is a zero quaternion, played as no rotation",
                        clip.name,
                        gltf_index(rig, c, k)
                    ),
                )
                .nodes([channel.node])
                .clip(c),
            );
        } else if (length - 1.0).abs() > 0.01 {
            self.push(
                Finding::new(
                    Severity::Warning,
                    FindingCode::QuaternionNotUnit,
                    format!(
                        "clip '{}' channel {} ({target} rotation): key {key} has length {length:.4}, far from 1 (normalized when played)",
                        clip.name,
                        gltf_index(rig, c, k)
                    ),
                )
                .nodes([channel.node])
                .clip(c),
            );
        }
    }

    /// One finding for the channels of clip `c` whose key times repeat or go back.
    fn keys_not_increasing_finding(&mut self, c: usize, repeated: &[(usize, usize, f32)]) {
        let rig = self.rig;
        let clip = &rig.clips[c];
        if let Some(&(k, key, time)) = repeated.first() {
            let nodes: Vec<usize> = repeated.iter().map(|&(k, ..)| clip.channels[k].node).collect();
            self.push(
                Finding::new(
                    Severity::Error,
                    FindingCode::KeysNotIncreasing,
                    format!(
                        "clip '{}': key times of {} channel(s) are not strictly increasing (first: channel {}, key {key} repeats time {time})",
                        clip.name,
                        repeated.len(),
                        gltf_index(rig, c, k)
                    ),
                )
                .nodes(nodes)
                .clip(c),
            );
        }
    }

    /// One finding for the channels of clip `c` with keys before time 0.
    fn negative_time_finding(&mut self, c: usize, negative: &[usize]) {
        let rig = self.rig;
        let clip = &rig.clips[c];
        if !negative.is_empty() {
            let nodes: Vec<usize> = negative.iter().map(|&k| clip.channels[k].node).collect();
            self.push(
                Finding::new(
                    Severity::Error,
                    FindingCode::KeysNegativeTime,
                    format!(
                        "clip '{}': {} channel(s) have keys before time 0 (first: channel {}); playback starts at 0",
                        clip.name,
                        negative.len(),
                        gltf_index(rig, c, negative[0])
                    ),
                )
                .nodes(nodes)
                .clip(c),
            );
        }
    }

    /// One finding for the rotation channels of clip `c` that turn too far within a frame,
    /// naming the worst.
    fn keys_jump_finding(&mut self, c: usize, jumps: &[(usize, usize, f32)]) {
        let rig = self.rig;
        let clip = &rig.clips[c];
        if let Some(&(k, key, degrees)) = jumps.iter().max_by(|a, b| a.2.total_cmp(&b.2)) {
            let nodes: Vec<usize> = jumps.iter().map(|&(k, ..)| clip.channels[k].node).collect();
            self.push(
                Finding::new(
                    Severity::Info,
                    FindingCode::KeysJump,
                    format!(
                        "clip '{}': {} rotation channel(s) turn more than {}° within one frame (worst: {} by {degrees:.1}° before key {key}): a key gap too long for the turn, or a step",
                        clip.name,
                        jumps.len(),
                        self.limits.keys_jump_degrees,
                        node_label(rig, clip.channels[k].node)
                    ),
                )
                .nodes(nodes)
                .clip(c),
            );
        }
    }

    /// One finding for the rotation channels of clip `c` with a key in the opposite hemisphere
    /// from the one before.
    fn hemisphere_flip_finding(&mut self, c: usize, flipped: &[(usize, usize)]) {
        let rig = self.rig;
        let clip = &rig.clips[c];
        if let Some(&(k, key)) = flipped.first() {
            let nodes: Vec<usize> = flipped.iter().map(|&(k, _)| clip.channels[k].node).collect();
            self.push(
                Finding::new(
                    Severity::Info,
                    FindingCode::QuaternionHemisphereFlip,
                    format!(
                        "clip '{}': {} rotation channel(s) have a key whose quaternion lies in the opposite hemisphere from the previous one (first: channel {} ({}), key {key}); shortest-arc players are unaffected, engines that interpolate components spin the long way",
                        clip.name,
                        flipped.len(),
                        gltf_index(rig, c, k),
                        node_label(rig, clip.channels[k].node)
                    ),
                )
                .nodes(nodes)
                .clip(c),
            );
        }
    }

    /// The cubic segment of channel `k` of clip `c` before key `key`, which overshoots its keys
    /// by `past`.
    fn overshoot_finding(&mut self, c: usize, k: usize, key: usize, past: f32) {
        let rig = self.rig;
        let (clip, channel) = (&rig.clips[c], &rig.clips[c].channels[k]);
        self.push(
            Finding::new(
                Severity::Info,
                FindingCode::KeysCubicOvershoot,
                format!(
                    "clip '{}' ({} {}): the cubic spline before key {key} overshoots its keys by {past:.4} (more than {OVERSHOOT_FRACTION} of their difference); check the tangents",
                    clip.name,
                    node_label(rig, channel.node),
                    crate::motion::curves::property_name(channel.property)
                ),
            )
            .nodes([channel.node])
            .clip(c),
        );
    }
}

/// What is wrong with the keys of a clip's channels, gathered over all of them so that each
/// kind is reported once per clip.
#[derive(Default)]
struct KeyProblems {
    /// Channel, the first key whose time is not after the one before, and its time.
    repeated: Vec<(usize, usize, f32)>,
    /// Channels with keys before time 0.
    negative: Vec<usize>,
    /// Channel and its first key in the opposite hemisphere from the one before.
    flipped: Vec<(usize, usize)>,
    /// Channel, key and the degrees it turns from the one before.
    jumps: Vec<(usize, usize, f32)>,
}

/// The index in the file of channel `k` of clip `c` (channels the importer dropped shift the
/// rig's indices).
fn gltf_index(rig: &Rig, c: usize, k: usize) -> usize {
    rig.facts
        .channels
        .get(c)
        .and_then(|f| f.get(k))
        .map_or(k, |f| f.gltf_index)
}
