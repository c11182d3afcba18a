//! A VRM Animation file's tracks that are not bones: expression weights become the morph
//! weights of the target avatar's expression binds, and the gaze turns the target's eyes (its
//! head where it has none).

use super::bake::bake_times;
use super::morph::CarriedMorphs;
use super::{ClipReport, Skeletons, human_bones};
use crate::anim::sample_channel;
use crate::rig::{Channel, Clip, Interpolation, MorphChannel, Property, Rig};
use glam::{EulerRot, Quat, Vec4};

/// Samples a second added where an expression or gaze track steps or follows a spline.
const RESAMPLE_RATE: f32 = 30.0;

/// Clip `clip`'s channel animating `property` of `node`, if any.
fn channel_of(clip: &Clip, node: usize, property: Property) -> Option<&Channel> {
    clip.channels.iter().find(|c| c.node == node && c.property == property)
}

/// The times a set of channels is baked at (their keys, and a 30 Hz grid where one of them
/// is not linear).
fn times_of(channels: &[&Channel]) -> Vec<f32> {
    let clip = Clip {
        name: String::new(),
        duration: (channels.iter())
            .filter_map(|c| c.times.last().copied())
            .fold(0.0, f32::max),
        channels: channels.iter().map(|c| (*c).clone()).collect(),
        source: None,
    };
    bake_times(&clip, RESAMPLE_RATE)
}

/// Every source clip's expression tracks as morph weight channels of the target's meshes
/// (clips numbered from `first_clip`): each mesh node an expression binds gets its default
/// weights plus, per bind, the bind's weight times the expression's weight (the track's
/// translation X, clamped to [0, 1]). Counts per clip (tracks carried, tracks whose expression
/// the target lacks); names the latter in `reports`.
pub(super) fn expression_channels(
    source: &Rig,
    target: &Rig,
    first_clip: usize,
    reports: &mut [ClipReport],
) -> CarriedMorphs {
    let mut carried = CarriedMorphs {
        channels: Vec::new(),
        counts: vec![(0, 0); source.clips.len()],
    };
    let Some(vrma) = &source.facts.vrma else {
        return carried;
    };
    for (index, clip) in source.clips.iter().enumerate() {
        // (expression track, binds) for each track the target has the expression of.
        let mut bound = Vec::new();
        for (name, node) in &vrma.expressions {
            let Some(channel) = channel_of(clip, *node, Property::Translation) else {
                continue;
            };
            let expression = target.facts.expressions.iter().find(|e| &e.name == name);
            match expression.filter(|e| !e.binds.is_empty()) {
                Some(expression) => {
                    carried.counts[index].0 += 1;
                    bound.push((channel, &expression.binds));
                }
                None => {
                    carried.counts[index].1 += 1;
                    if let Some(report) = reports.get_mut(index) {
                        report.dropped_expressions.push(name.clone());
                    }
                }
            }
        }
        if bound.is_empty() {
            continue;
        }
        let tracks: Vec<&Channel> = bound.iter().map(|(c, _)| *c).collect();
        let times = times_of(&tracks);
        let mut mesh_nodes: Vec<usize> = bound.iter().flat_map(|(_, b)| b.iter().map(|b| b.node)).collect();
        mesh_nodes.sort_unstable();
        mesh_nodes.dedup();
        for node in mesh_nodes {
            let Some(mesh) = target.instances.iter().find(|i| i.node == node).map(|i| i.mesh) else {
                continue;
            };
            let count = target.morphs.weight_count(mesh);
            let defaults = target.morphs.default_weights.get(mesh);
            let mut values = Vec::with_capacity(times.len() * count);
            let mut hints = vec![0; bound.len()];
            for &time in &times {
                let row = values.len();
                values.extend((0..count).map(|k| defaults.and_then(|d| d.get(k)).copied().unwrap_or(0.0)));
                for ((channel, binds), hint) in bound.iter().zip(&mut hints) {
                    let weight = sample_channel(channel, time, hint).x.clamp(0.0, 1.0);
                    for bind in binds.iter().filter(|b| b.node == node && b.target < count) {
                        values[row + bind.target] += bind.weight * weight;
                    }
                }
            }
            carried.channels.push(MorphChannel {
                clip: first_clip + index,
                node,
                interpolation: Interpolation::Linear,
                times: times.clone(),
                values,
                targets: count,
            });
        }
    }
    carried
}

/// The gaze a lookAt rotation stands for: its yaw (about +Y) and pitch (about +X), read as
/// extrinsic Z, X, Y turns as VRM Animation says, without the roll.
pub fn gaze_turn(rotation: Quat) -> Quat {
    let (yaw, pitch, _roll) = rotation.to_euler(EulerRot::YXZ);
    Quat::from_rotation_y(yaw) * Quat::from_rotation_x(pitch)
}

/// Turns the target's eyes (its head where it has no eye bones) in `clip`, carried from source
/// clip `index`, by the source's gaze track, turned as the target faces: an eye by the gaze
/// taken into its parent's rest frame (after its own rest turn), the head after its carried turn
/// by the gaze taken into its own rest frame, so that looking along +Z keeps the carried pose.
/// Names the joints turned in `report`.
pub(super) fn drive_gaze(skeletons: &Skeletons, index: usize, clip: &mut Clip, report: &mut ClipReport) {
    let (source, target) = (skeletons.source, skeletons.target);
    let Some(track) = (source.facts.vrma.as_ref())
        .and_then(|v| v.look_at)
        .and_then(|node| channel_of(&source.clips[index], node, Property::Rotation))
    else {
        return;
    };
    let bones = human_bones(target);
    let bone = |name: &str| bones.iter().position(|b| b.as_deref() == Some(name));
    let eyes: Vec<usize> = ["leftEye", "rightEye"].into_iter().filter_map(bone).collect();
    let (joints, on_head) = match (eyes.is_empty(), bone("head")) {
        (false, _) => (eyes, false),
        (true, Some(head)) => (vec![head], true),
        (true, None) => return,
    };
    let carried: Vec<Option<Channel>> = (joints.iter())
        .map(|&j| channel_of(clip, j, Property::Rotation).cloned())
        .collect();
    let times = match carried.iter().flatten().next().filter(|_| on_head) {
        Some(carried) => times_of(&[track, carried]),
        None => times_of(&[track]),
    };
    let mut turned = Vec::new();
    for (joint, carried) in joints.into_iter().zip(carried) {
        // The gaze is a turn in the character's space at rest; the joint takes it in the frame
        // it turns in (the head's own, an eye's parent's), so that at rest it is that turn.
        let frame = match (on_head, target.nodes[joint].parent) {
            (true, _) => skeletons.target_rest.rotations[joint],
            (false, Some(parent)) => skeletons.target_rest.rotations[parent],
            (false, None) => Quat::IDENTITY,
        };
        let rest = target.nodes[joint].rest.rotation;
        let (mut gaze_hint, mut carried_hint) = (0, 0);
        let values = times
            .iter()
            .map(|&time| {
                let look = Quat::from_vec4(sample_channel(track, time, &mut gaze_hint)).normalize();
                let gaze = skeletons.facing * gaze_turn(look) * skeletons.facing.conjugate();
                let in_frame = frame.conjugate() * gaze * frame;
                let rotation = match (on_head, &carried) {
                    (true, Some(c)) => {
                        Quat::from_vec4(sample_channel(c, time, &mut carried_hint)).normalize() * in_frame
                    }
                    (true, None) => rest * in_frame,
                    (false, _) => in_frame * rest,
                };
                Vec4::from(rotation.normalize())
            })
            .collect();
        clip.channels
            .retain(|c| !(c.node == joint && c.property == Property::Rotation));
        clip.channels.push(Channel {
            node: joint,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values,
        });
        turned.push(target.nodes[joint].name.clone());
    }
    clip.duration = clip.duration.max(times.last().copied().unwrap_or(0.0));
    report.gaze = turned;
}
