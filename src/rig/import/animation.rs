//! Clips: channels of node transforms and of morph target weights.

use super::accessor::{self, Budget, BudgetExceeded, Buffers, FLOAT, FLOAT_OR_NORM, ReadError};
use crate::rig::{
    Channel, ChannelFacts, Clip, DroppedChannel, ImportFacts, Interpolation, MorphChannel, Property, RigError,
};
use glam::{Vec3, Vec4};

/// One animation as read: its clip, the facts of its kept channels, its morph weight channels.
pub struct ReadClip {
    pub clip: Clip,
    pub facts: Vec<ChannelFacts>,
    pub morph_channels: Vec<MorphChannel>,
}

/// A sampler's interpolation and key times.
fn read_sampler_keys(
    sampler: &gltf::animation::Sampler,
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<(Interpolation, Vec<f32>), ChannelError> {
    let interpolation = match sampler.interpolation() {
        gltf::animation::Interpolation::Step => Interpolation::Step,
        gltf::animation::Interpolation::Linear => Interpolation::Linear,
        gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
    };
    let times = accessor::read_f32::<1>(&sampler.input(), FLOAT, buffers, budget)
        .map_err(|e| e.context("key times"))?
        .into_iter()
        .map(|[t]| t)
        .collect();
    Ok((interpolation, times))
}

/// A channel animating morph target weights.
fn read_morph_channel(
    channel: &gltf::animation::Channel,
    clip: usize,
    node: usize,
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<MorphChannel, ChannelError> {
    let sampler = channel.sampler();
    let (interpolation, times) = read_sampler_keys(&sampler, buffers, budget)?;
    let values: Vec<f32> = accessor::read_f32::<1>(&sampler.output(), FLOAT_OR_NORM, buffers, budget)
        .map_err(|e| e.context("key values"))?
        .into_iter()
        .map(|[v]| v)
        .collect();
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    if times.is_empty() || values.is_empty() || !values.len().is_multiple_of(times.len() * per_key) {
        return Err(ChannelError::Invalid(format!(
            "{} keys do not divide {} weights",
            times.len(),
            values.len()
        )));
    }
    if times.iter().any(|t| !t.is_finite())
        || times.windows(2).any(|w| w[1] < w[0])
        || values.iter().any(|v| !v.is_finite())
    {
        return Err(ChannelError::Invalid(
            "key times or weights are not finite and increasing".into(),
        ));
    }
    let targets = values.len() / (times.len() * per_key);
    Ok(MorphChannel {
        clip,
        node,
        interpolation,
        times,
        values,
        targets,
    })
}

/// Reads one animation. A channel that cannot be played is left out (with a warning when its
/// data is broken); only running out of memory budget fails the load.
pub fn read_clip(
    animation: &gltf::Animation,
    clip_index: usize,
    slot: &[usize],
    buffers: &Buffers,
    budget: &mut Budget,
    facts: &mut ImportFacts,
    warnings: &mut Vec<String>,
) -> Result<ReadClip, RigError> {
    let name = animation
        .name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("clip {}", animation.index()));
    let mut channels = Vec::new();
    let mut channel_facts = Vec::new();
    let mut morph_channels = Vec::new();
    let mut duration = 0.0f32;
    for channel in animation.channels() {
        let node = slot[channel.target().node().index()];
        if channel.target().property() == gltf::animation::Property::MorphTargetWeights {
            match read_morph_channel(&channel, clip_index, node, buffers, budget) {
                Ok(morph) => morph_channels.push(morph),
                Err(ChannelError::Budget(e)) => return Err(RigError::Budget(e)),
                Err(ChannelError::Unsupported(e) | ChannelError::Invalid(e)) => warnings.push(format!(
                    "animation {} morph weight channel {} left out: {e}",
                    animation.index(),
                    channel.index()
                )),
            }
        }
        let drop = |reason: String, unsupported: bool| DroppedChannel {
            clip: animation.index(),
            gltf_index: channel.index(),
            node,
            reason,
            unsupported,
        };
        match read_channel(&channel, node, buffers, budget) {
            Ok((read, cf)) => {
                duration = duration.max(read.times.last().copied().unwrap_or(0.0));
                channels.push(read);
                channel_facts.push(cf);
            }
            Err(ChannelError::Budget(e)) => {
                return Err(RigError::Budget(BudgetExceeded(format!(
                    "clip '{name}' channel {}: {e}",
                    channel.index()
                ))));
            }
            Err(ChannelError::Unsupported(reason)) => facts.dropped_channels.push(drop(reason, true)),
            Err(ChannelError::Invalid(reason)) => facts.dropped_channels.push(drop(reason, false)),
        }
    }
    Ok(ReadClip {
        clip: Clip {
            name,
            duration,
            channels,
            source: None,
        },
        facts: channel_facts,
        morph_channels,
    })
}

#[derive(Debug, thiserror::Error)]
enum ChannelError {
    /// The memory budget ran out: the whole load fails.
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    /// A valid channel of a kind that is not played.
    #[error("{0}")]
    Unsupported(String),
    /// Broken data: the channel is left out.
    #[error("{0}")]
    Invalid(String),
}

impl From<ReadError> for ChannelError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Budget(e) => ChannelError::Budget(e),
            ReadError::Data(m) => ChannelError::Invalid(m),
        }
    }
}

fn read_channel(
    channel: &gltf::animation::Channel,
    node: usize,
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<(Channel, ChannelFacts), ChannelError> {
    use gltf::animation::Property as P;
    let property = match channel.target().property() {
        P::Translation => Property::Translation,
        P::Rotation => Property::Rotation,
        P::Scale => Property::Scale,
        P::MorphTargetWeights => {
            return Err(ChannelError::Unsupported(
                "morph target weights are played from the rig's morph channels".into(),
            ));
        }
    };
    let sampler = channel.sampler();
    let (interpolation, times) = read_sampler_keys(&sampler, buffers, budget)?;
    let output = sampler.output();
    let values: Vec<Vec4> = match property {
        Property::Rotation => accessor::read_f32::<4>(&output, FLOAT_OR_NORM, buffers, budget)
            .map_err(|e| e.context("key values"))?
            .into_iter()
            .map(Vec4::from)
            .collect(),
        _ => accessor::read_f32::<3>(&output, FLOAT, buffers, budget)
            .map_err(|e| e.context("key values"))?
            .into_iter()
            .map(|v| Vec3::from(v).extend(0.0))
            .collect(),
    };
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let invalid = |m: String| Err(ChannelError::Invalid(m));
    if times.is_empty() {
        return invalid("it has no keys".into());
    }
    if values.len() != times.len() * per_key {
        return invalid(format!(
            "{} keys but {} values{}",
            times.len(),
            values.len(),
            if per_key == 3 {
                " (cubic splines need three per key)"
            } else {
                ""
            }
        ));
    }
    if let Some(k) = times.iter().position(|t| !t.is_finite()) {
        return invalid(format!("key time {k} is not finite ({})", times[k]));
    }
    if let Some(k) = times.windows(2).position(|w| w[1] < w[0]) {
        return invalid(format!(
            "key times decrease at key {}: {} after {}",
            k + 1,
            times[k + 1],
            times[k]
        ));
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return invalid(format!("key value {i} is not finite ({})", values[i]));
    }
    let mut facts = ChannelFacts {
        gltf_index: channel.index(),
        worst_quaternion: None,
    };
    let mut values = values;
    if property == Property::Rotation {
        // The keyed quaternions, without the cubic-spline tangents.
        let keyed = (0..times.len()).map(|k| per_key * k + per_key / 2);
        for k in keyed.clone() {
            let length = values[k].length();
            if facts
                .worst_quaternion
                .is_none_or(|(_, worst)| (length - 1.0).abs() > (worst - 1.0).abs())
            {
                facts.worst_quaternion = Some((k / per_key, length));
            }
        }
        if per_key == 1 {
            // Exporters write slightly denormalized quaternions; slerp expects unit length.
            for q in &mut values {
                *q = q.normalize_or(Vec4::W);
            }
        }
    }
    Ok((
        Channel {
            node,
            property,
            interpolation,
            times,
            values,
        },
        facts,
    ))
}
