//! One joint's animation curves as data: its channels' keys (values and cubic tangents), the
//! interpolation, and the values the player samples between them; and the rotation keys that
//! lie in the opposite hemisphere from the previous one.

use super::rotation::RotationView;
use crate::anim::sample_channel;
use crate::rig::{Channel, Clip, Interpolation, Property};
use glam::{Quat, Vec4};
use serde::Serialize;

/// Samples a second of a clip that the curves are drawn and printed with by default.
pub const SAMPLES_PER_SECOND: f32 = 30.0;

/// The value of key `k` (the middle of the three values a cubic spline key stores).
pub fn key_value(channel: &Channel, k: usize) -> Option<Vec4> {
    match channel.interpolation {
        Interpolation::CubicSpline => channel.values.get(3 * k + 1).copied(),
        _ => channel.values.get(k).copied(),
    }
}

/// Keys of a rotation channel whose quaternion lies in the opposite hemisphere from the previous
/// key's (negative dot product): the same rotations, but an engine that interpolates the
/// components instead of along the shortest arc spins the long way between them.
pub fn hemisphere_flips(channel: &Channel) -> Vec<usize> {
    if channel.property != Property::Rotation {
        return Vec::new();
    }
    (1..channel.times.len())
        .filter(|&k| match (key_value(channel, k - 1), key_value(channel, k)) {
            (Some(a), Some(b)) => a.dot(b) < 0.0,
            _ => false,
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Key {
    pub time: f32,
    pub value: [f32; 4],
    /// Cubic spline tangents (per second); absent for other interpolations.
    pub in_tangent: Option<[f32; 4]>,
    pub out_tangent: Option<[f32; 4]>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    pub time: f32,
    pub value: [f32; 4],
}

/// One channel of a joint as `inspect --curves` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelCurve {
    /// translation, rotation or scale.
    pub property: &'static str,
    /// STEP, LINEAR or CUBICSPLINE.
    pub interpolation: &'static str,
    pub keys: Vec<Key>,
    /// What the player evaluates, at evenly spaced times over the clip.
    pub samples: Vec<Sample>,
    /// Keys whose quaternion is in the opposite hemisphere from the previous key's.
    pub hemisphere_flips: Vec<usize>,
}

pub fn property_name(property: Property) -> &'static str {
    match property {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
    }
}

pub fn interpolation_name(interpolation: Interpolation) -> &'static str {
    match interpolation {
        Interpolation::Step => "STEP",
        Interpolation::Linear => "LINEAR",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

/// The channels of `clip` that animate `node`, in the clip's order (the order of
/// [`joint_curves`]).
pub fn joint_channels(clip: &Clip, node: usize) -> impl Iterator<Item = &Channel> {
    clip.channels.iter().filter(move |c| c.node == node)
}

/// The channels of `clip` that animate `node`, with `samples_per_second` samples a second
/// (both ends of the clip included).
pub fn joint_curves(clip: &Clip, node: usize, samples_per_second: f32) -> Vec<ChannelCurve> {
    let count = ((clip.duration * samples_per_second).ceil() as usize + 1).max(2);
    joint_channels(clip, node)
        .map(|channel| {
            let cubic = channel.interpolation == Interpolation::CubicSpline;
            let keys = (0..channel.times.len())
                .map(|k| Key {
                    time: channel.times[k],
                    value: key_value(channel, k).unwrap_or(Vec4::ZERO).to_array(),
                    in_tangent: cubic.then(|| channel.values.get(3 * k)).flatten().map(|v| v.to_array()),
                    out_tangent: cubic
                        .then(|| channel.values.get(3 * k + 2))
                        .flatten()
                        .map(|v| v.to_array()),
                })
                .collect();
            let mut hint = 0;
            let samples = (0..count)
                .map(|k| {
                    let time = super::sample_time(clip.duration, k, count);
                    Sample {
                        time,
                        value: sample_channel(channel, time, &mut hint).to_array(),
                    }
                })
                .collect();
            ChannelCurve {
                property: property_name(channel.property),
                interpolation: interpolation_name(channel.interpolation),
                keys,
                samples,
                hemisphere_flips: hemisphere_flips(channel),
            }
        })
        .collect()
}

/// The path a channel's interpolation takes from key to key, to draw it: a STEP holds each
/// key's value up to the next key's time and rises there, LINEAR runs straight between keys,
/// CUBICSPLINE is sampled `steps_per_segment` times per key gap by the player's own sampler.
pub fn interpolation_path(channel: &Channel, steps_per_segment: usize) -> Vec<Sample> {
    let key = |k: usize| Sample {
        time: channel.times[k],
        value: key_value(channel, k).unwrap_or(Vec4::ZERO).to_array(),
    };
    let keys = channel.times.len();
    let mut path = Vec::with_capacity(match channel.interpolation {
        Interpolation::Step => 2 * keys,
        Interpolation::Linear => keys,
        Interpolation::CubicSpline => keys * steps_per_segment.max(1),
    });
    let mut hint = 0;
    for k in 0..keys {
        if k > 0 {
            let (t0, t1) = (channel.times[k - 1], channel.times[k]);
            match channel.interpolation {
                Interpolation::Step => path.push(Sample {
                    time: t1,
                    value: key(k - 1).value,
                }),
                Interpolation::Linear => {}
                Interpolation::CubicSpline => path.extend((1..steps_per_segment).map(|s| {
                    let time = t0 + (t1 - t0) * s as f32 / steps_per_segment as f32;
                    Sample {
                        time,
                        value: sample_channel(channel, time, &mut hint).to_array(),
                    }
                })),
            }
        }
        path.push(key(k));
    }
    path
}

/// What a key is marked for on a curve: the findings of `inspect` about keys.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyFlag {
    /// Its quaternion lies in the opposite hemisphere from the previous key's.
    HemisphereFlip,
    /// The turn into it within one frame, in degrees, is past the jump threshold.
    Jump(f32),
    /// The cubic segment into it leaves its keys' range by this much.
    CubicOvershoot(f32),
}

impl KeyFlag {
    /// What the flag means, as a tooltip says it.
    pub fn describe(self) -> String {
        match self {
            KeyFlag::HemisphereFlip => "quaternion in the opposite hemisphere from the previous key's \
                 (a spin the long way where components are interpolated)"
                .to_string(),
            KeyFlag::Jump(degrees) => format!("turns {degrees:.1}° within one frame before this key"),
            KeyFlag::CubicOvershoot(past) => {
                format!("the cubic spline before this key overshoots its keys by {past:.4}; check the tangents")
            }
        }
    }
}

/// The keys of `channel` the key findings are about (with a jump above `jump_degrees`), as
/// (key, flag).
pub fn key_flags(channel: &Channel, jump_degrees: f32) -> Vec<(usize, KeyFlag)> {
    let mut flags: Vec<(usize, KeyFlag)> = hemisphere_flips(channel)
        .into_iter()
        .map(|k| (k, KeyFlag::HemisphereFlip))
        .collect();
    if let Some((k, degrees)) = largest_frame_turn(channel).filter(|&(_, d)| d > jump_degrees) {
        flags.push((k, KeyFlag::Jump(degrees)));
    }
    if let Some((k, past)) = cubic_overshoot(channel) {
        flags.push((k, KeyFlag::CubicOvershoot(past)));
    }
    flags
}

/// How a channel's values are read as curves: translation and scale as their x, y, z; rotation
/// in a [`RotationView`] (`rest` is the joint's rest rotation, for the joint's own axes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub property: Property,
    pub view: RotationView,
    pub rest: Quat,
}

impl Reading {
    /// Names of the values, in order.
    pub fn components(&self) -> &'static [&'static str] {
        match self.property {
            Property::Rotation => self.view.components(),
            _ => &["x", "y", "z"],
        }
    }

    /// One value read, unwrapped against `reference` (angles).
    pub fn value(&self, value: [f32; 4], reference: Option<[f64; 4]>) -> [f64; 4] {
        match self.property {
            Property::Rotation => self.view.values(value, self.rest, reference),
            _ => value.map(f64::from),
        }
    }

    /// The sampled curve read, each sample unwrapped against the one before.
    pub fn samples(&self, samples: &[Sample]) -> Vec<[f64; 4]> {
        let mut previous = None;
        samples
            .iter()
            .map(|s| {
                let v = self.value(s.value, previous);
                previous = Some(v);
                v
            })
            .collect()
    }

    /// `points` (keys, an interpolation path: time and value) read, each unwrapped against the
    /// sampled curve (`samples` and their values `read`, from [`Reading::samples`]) at the
    /// nearest time, so that they lie on it.
    pub fn near(
        &self,
        points: impl IntoIterator<Item = (f32, [f32; 4])>,
        samples: &[Sample],
        read: &[[f64; 4]],
    ) -> Vec<[f64; 4]> {
        points
            .into_iter()
            .map(|(time, value)| {
                let after = samples.partition_point(|s| s.time < time);
                let nearest = [after.saturating_sub(1), after]
                    .into_iter()
                    .filter(|&i| i < samples.len().min(read.len()))
                    .min_by(|&a, &b| {
                        (samples[a].time - time)
                            .abs()
                            .total_cmp(&(samples[b].time - time).abs())
                    });
                self.value(value, nearest.map(|i| read[i]))
            })
            .collect()
    }

    /// A channel's keys and samples read: what `inspect --curves --rotation` prints and the
    /// Curves window plots.
    pub fn curve(&self, curve: &ChannelCurve) -> ReadCurve {
        let samples = self.samples(&curve.samples);
        ReadCurve {
            keys: self.near(curve.keys.iter().map(|k| (k.time, k.value)), &curve.samples, &samples),
            samples,
        }
    }
}

/// A channel's key and sample values as a [`Reading`] gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadCurve {
    pub keys: Vec<[f64; 4]>,
    pub samples: Vec<[f64; 4]>,
}

/// A rotation turning more than this in one frame of playback is reported as a jump.
pub const KEY_JUMP_DEGREES: f32 = 30.0;
/// How the Curves window reads a joint's channels: rotations in `rotation_view`, and a turn
/// above `jump_degrees` within one frame marked as a jump. Kept in the settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CurvesOptions {
    #[serde(deserialize_with = "crate::names::or_default")]
    pub rotation_view: RotationView,
    pub jump_degrees: f32,
}

impl Default for CurvesOptions {
    fn default() -> Self {
        CurvesOptions {
            rotation_view: RotationView::default(),
            jump_degrees: KEY_JUMP_DEGREES,
        }
    }
}

impl CurvesOptions {
    /// The jump thresholds the window offers, in degrees.
    pub const JUMP_RANGE: std::ops::RangeInclusive<f32> = 0.1..=180.0;

    pub fn is_default(&self) -> bool {
        *self == CurvesOptions::default()
    }

    /// These options with a threshold the window cannot set (read from a settings file: NaN,
    /// negative, past a half turn) replaced by the default.
    pub fn checked(self) -> CurvesOptions {
        CurvesOptions {
            jump_degrees: if Self::JUMP_RANGE.contains(&self.jump_degrees) {
                self.jump_degrees
            } else {
                KEY_JUMP_DEGREES
            },
            ..self
        }
    }
}

/// A cubic segment leaving its keys' range by more than this fraction of their difference
/// overshoots.
pub const OVERSHOOT_FRACTION: f32 = 0.1;

/// The largest turn a rotation channel makes within one frame ([`crate::anim::FRAME_SECONDS`])
/// between two keys, with the key it ends at: a STEP turns all at once, the other modes at
/// most the fraction of the key gap a frame is. `None` for other channels or a single key.
pub fn largest_frame_turn(channel: &Channel) -> Option<(usize, f32)> {
    if channel.property != Property::Rotation {
        return None;
    }
    (1..channel.times.len())
        .filter_map(|k| {
            let (a, b) = (key_value(channel, k - 1)?, key_value(channel, k)?);
            let angle = super::checks::rotation_angle_deg(glam::Quat::from_vec4(a), glam::Quat::from_vec4(b));
            let gap = channel.times[k] - channel.times[k - 1];
            let share = match channel.interpolation {
                Interpolation::Step => 1.0,
                _ if gap > 0.0 => (crate::anim::FRAME_SECONDS / gap).min(1.0),
                _ => 1.0,
            };
            Some((k, angle * share))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The first CUBICSPLINE segment of a translation or scale channel whose sampled values leave
/// the range of its two keys by more than [`OVERSHOOT_FRACTION`] of their difference (per
/// component), with the overshoot: the key the segment ends at and how far past it goes.
pub fn cubic_overshoot(channel: &Channel) -> Option<(usize, f32)> {
    if channel.interpolation != Interpolation::CubicSpline || channel.property == Property::Rotation {
        return None;
    }
    const STEPS: usize = 16;
    let mut hint = 0;
    for k in 1..channel.times.len() {
        let (a, b) = (key_value(channel, k - 1)?, key_value(channel, k)?);
        let (lo, hi) = (a.min(b), a.max(b));
        let allowed = (hi - lo) * OVERSHOOT_FRACTION + Vec4::splat(1e-6);
        let (t0, t1) = (channel.times[k - 1], channel.times[k]);
        for s in 1..STEPS {
            let v = sample_channel(channel, t0 + (t1 - t0) * s as f32 / STEPS as f32, &mut hint);
            let past = (v - hi).max(lo - v).max(Vec4::ZERO);
            if past.cmpgt(allowed).any() {
                return Some((k, past.max_element()));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
