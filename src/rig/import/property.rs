//! The keys of the property channels `KHR_animation_pointer` gives (see [`super::pointer`]),
//! read once the buffers are. A channel whose data is broken is left out with an error finding.

use super::accessor::{self, Budget, Buffers, FLOAT, FLOAT_OR_NORM, ReadError};
use super::pointer::{PointerFinding, PropertyChannel};
use crate::rig::{Clip, Interpolation, PropertyTarget, PropertyTrack, RigError};
use glam::Vec4;

/// What reading property channels needs besides the channels.
pub(super) struct PropertyInputs<'a> {
    pub document: &'a gltf::Document,
    pub buffers: &'a Buffers<'a>,
    /// The rig node of each glTF node.
    pub slot: &'a [usize],
}

/// Reads `channels` into tracks of `clips` (lengthening a clip to a track's last key); broken
/// channels go to `findings`. Only running out of memory budget fails the load.
pub(super) fn read_property_tracks(
    channels: &[PropertyChannel],
    inputs: &PropertyInputs,
    budget: &mut Budget,
    clips: &mut [Clip],
    findings: &mut Vec<PointerFinding>,
) -> Result<Vec<PropertyTrack>, RigError> {
    let mut tracks = Vec::new();
    for channel in channels {
        match read_track(channel, inputs, budget, clips.len()) {
            Ok(track) => {
                let clip = &mut clips[track.clip];
                clip.duration = clip.duration.max(track.times.last().copied().unwrap_or(0.0));
                tracks.push(track);
            }
            Err(ReadError::Budget(e)) => return Err(RigError::Budget(e)),
            Err(ReadError::Data(reason)) => findings.push(PointerFinding {
                animation: channel.animation,
                channel: channel.channel,
                pointer: channel.pointer.clone(),
                reason,
                invalid: true,
            }),
        }
    }
    Ok(tracks)
}

fn read_track(
    channel: &PropertyChannel,
    inputs: &PropertyInputs,
    budget: &mut Budget,
    clip_count: usize,
) -> Result<PropertyTrack, ReadError> {
    let invalid = |m: String| Err(ReadError::Data(m));
    if channel.animation >= clip_count {
        return invalid(format!("its animation {} was not read", channel.animation));
    }
    let mut target = channel.target;
    if let PropertyTarget::NodeVisible { node } = &mut target {
        match inputs.slot.get(*node) {
            Some(&slot) => *node = slot,
            None => return invalid(format!("node {node} is not in the document")),
        }
    }
    let accessor = |index: usize| {
        (inputs.document.accessors().nth(index))
            .ok_or_else(|| ReadError::Data(format!("accessor {index} is not in the document")))
    };
    let times: Vec<f32> = accessor::read_f32::<1>(&accessor(channel.input)?, FLOAT, inputs.buffers, budget)
        .map_err(|e| e.context("key times"))?
        .into_iter()
        .map(|[t]| t)
        .collect();
    let output = accessor(channel.output)?;
    let read = |n, budget: &mut Budget| -> Result<Vec<Vec4>, ReadError> {
        let buffers = inputs.buffers;
        Ok(match n {
            1 => (accessor::read_f32::<1>(&output, FLOAT_OR_NORM, buffers, budget)?.iter())
                .map(|v| widen(v))
                .collect(),
            2 => (accessor::read_f32::<2>(&output, FLOAT_OR_NORM, buffers, budget)?.iter())
                .map(|v| widen(v))
                .collect(),
            3 => (accessor::read_f32::<3>(&output, FLOAT_OR_NORM, buffers, budget)?.iter())
                .map(|v| widen(v))
                .collect(),
            _ => (accessor::read_f32::<4>(&output, FLOAT_OR_NORM, buffers, budget)?.iter())
                .map(|v| Vec4::from_array(*v))
                .collect(),
        })
    };
    let mut values = read(target.components(), budget).map_err(|e| e.context("key values"))?;
    if let PropertyTarget::NodeVisible { .. } = target {
        // A boolean: any value but 0 (an unsigned byte 1 reads as 1/255) is true.
        values.iter_mut().for_each(|v| v.x = f32::from(u8::from(v.x != 0.0)));
    }
    // KHR_node_visibility: a boolean does not interpolate; it holds each key's value.
    let interpolation = match (target, channel.interpolation) {
        (PropertyTarget::NodeVisible { .. }, Interpolation::CubicSpline) => {
            return invalid("a visibility holds its keys (STEP); its sampler is CUBICSPLINE".into());
        }
        (PropertyTarget::NodeVisible { .. }, _) => Interpolation::Step,
        (_, interpolation) => interpolation,
    };
    check_keys(&times, &values, interpolation).map_err(ReadError::Data)?;
    Ok(PropertyTrack {
        clip: channel.animation,
        target,
        interpolation,
        times,
        values,
    })
}

/// A key of fewer than 4 components, zeros after them.
fn widen(v: &[f32]) -> Vec4 {
    let mut padded = [0.0; 4];
    padded[..v.len()].copy_from_slice(v);
    Vec4::from_array(padded)
}

/// Whether `times` and `values` make a track: keys, as many values as the interpolation
/// takes per key, finite and with times that do not decrease.
fn check_keys(times: &[f32], values: &[Vec4], interpolation: Interpolation) -> Result<(), String> {
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    if times.is_empty() {
        return Err("it has no keys".into());
    }
    if values.len() != times.len() * per_key {
        return Err(format!(
            "its sampler has {} key times but {} values ({per_key} per key expected)",
            times.len(),
            values.len()
        ));
    }
    if let Some(k) = times.iter().position(|t| !t.is_finite()) {
        return Err(format!("key time {k} is not finite ({})", times[k]));
    }
    if let Some(k) = times.windows(2).position(|w| w[1] < w[0]) {
        return Err(format!("key times decrease at key {}", k + 1));
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(format!("key value {i} is not finite"));
    }
    Ok(())
}
