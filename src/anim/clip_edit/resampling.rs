//! Resampling a clip at a fixed rate, then dropping the keys the player's interpolation between
//! the kept neighbours restores within a tolerance.

use super::{ClipEditError, MAX_SAMPLES, check_clip, grid_times};
use crate::anim::morph::sample_morph_channel;
use crate::anim::sample::slerp_short;
use crate::anim::{ClipSampler, rig_height, sample_channel};
use crate::rig::{Channel, Interpolation, MorphChannel, Property, Rig};
use glam::Vec4;

/// How far a resampled clip may stray from the original at its sample times, as the player
/// interpolates it (linear, spherical for rotations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResampleTolerance {
    /// A translation's error in world space, as a fraction of the rig's height
    /// ([`rig_height`]).
    pub position_fraction: f32,
    /// A rotation's error, in degrees.
    pub rotation_degrees: f32,
    /// A scale's error over the scale (largest component of each).
    pub scale_relative: f32,
    /// A morph target weight's error.
    pub morph_weight: f32,
}

impl Default for ResampleTolerance {
    fn default() -> Self {
        ResampleTolerance {
            position_fraction: 1e-4,
            rotation_degrees: 0.05,
            scale_relative: 1e-4,
            morph_weight: 1e-4,
        }
    }
}

impl ResampleTolerance {
    fn check(&self) -> Result<(), ClipEditError> {
        for (name, value) in [
            ("position", self.position_fraction),
            ("rotation", self.rotation_degrees),
            ("scale", self.scale_relative),
            ("morph weight", self.morph_weight),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(ClipEditError::BadTolerance { name, value });
            }
        }
        Ok(())
    }
}

/// What resampling did to one clip.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResampleReport {
    pub clip: String,
    pub rate: f32,
    /// Keys and keyframe bytes before and after: see [`KeyframeSize`].
    pub before: KeyframeSize,
    pub after: KeyframeSize,
    /// The position tolerance in world units (the rig's height times the fraction asked for).
    pub position_tolerance: f32,
    /// The largest errors left at the sample times: translation in world units (a local error
    /// times the parent's rest scale), rotation in degrees, scale relative, morph weight.
    pub worst_position: f32,
    pub worst_rotation_degrees: f32,
    pub worst_scale_relative: f32,
    pub worst_morph_weight: f32,
}

impl ResampleReport {
    /// One line for the command line.
    pub fn summary(&self) -> String {
        format!(
            "clip '{}' at {} fps: {} → {} keys, {} → {} bytes; worst error {:.3e} (of {:.3e}) in position, \
             {:.4}° in rotation, {:.2e} in scale, {:.2e} in morph weight",
            self.clip,
            self.rate,
            self.before.keys,
            self.after.keys,
            self.before.bytes,
            self.after.bytes,
            self.worst_position,
            self.position_tolerance,
            self.worst_rotation_degrees,
            self.worst_scale_relative,
            self.worst_morph_weight,
        )
    }
}

/// Keys of a clip (over its channels and morph weight channels) and the bytes their data takes
/// as glTF stores it: an f32 time per key and the values (3 floats a translation or scale, 4 a
/// rotation, one per morph target; three times that for splines), counted per channel as if no
/// two channels shared their times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyframeSize {
    pub keys: usize,
    pub bytes: usize,
}

/// Keys and keyframe bytes of clip `clip` (see [`KeyframeSize`]).
pub fn keyframe_size(rig: &Rig, clip: usize) -> KeyframeSize {
    const FLOAT: usize = size_of::<f32>();
    let mut size = KeyframeSize::default();
    let Some(edited) = rig.clips.get(clip) else {
        return size;
    };
    for channel in &edited.channels {
        let components = if channel.property == Property::Rotation { 4 } else { 3 };
        size.keys += channel.times.len();
        size.bytes += FLOAT * (channel.times.len() + components * channel.values.len());
    }
    for channel in rig.morphs.channels.iter().filter(|c| c.clip == clip) {
        size.keys += channel.times.len();
        size.bytes += FLOAT * (channel.times.len() + channel.values.len());
    }
    size
}

/// Most samples one key-reduced segment spans: bounds the reduction's quadratic cost on long
/// smooth stretches, at the price of a key every this many samples.
const MAX_SEGMENT: usize = 512;

/// Writes clip `clip` at `fps` samples a second (keys at `k / fps` and at the clip's end), then
/// drops the keys that the player's interpolation between the kept neighbours restores within
/// `tolerance`.
///
/// Step channels stay step channels (a key is dropped when it holds the previous kept key's
/// value; a jump between samples moves to the next sample time); linear and spline channels
/// become linear. Reduction is greedy: from each kept key the
/// segment is stretched as long as every sample inside it is restored, checked with the
/// interpolation the player uses (the same f32 arithmetic), and the kept keys are then checked
/// again against [`sample_channel`] itself (a channel that failed would be kept whole). A
/// channel that holds one value within the tolerance keeps one key; when no channel is left
/// with a key at the clip's end, the first gets one, so that the clip keeps its length when
/// saved (a glTF clip lasts until its last key).
///
/// The position tolerance is set in world space and turned into each node's own space with its
/// parent's rest scale, so that a Mixamo rig under a 0.01 scaled armature is held to the same
/// distance in metres as any other.
pub fn resample(
    rig: &mut Rig,
    clip: usize,
    fps: f32,
    tolerance: &ResampleTolerance,
) -> Result<ResampleReport, ClipEditError> {
    check_clip(rig, clip)?;
    tolerance.check()?;
    let duration = rig.clips[clip].duration;
    if !(fps.is_finite() && fps > 0.0) || f64::from(duration.max(0.0)) * f64::from(fps) > MAX_SAMPLES {
        return Err(ClipEditError::BadRate(fps));
    }
    let position_tolerance = tolerance.position_fraction * rig_height(rig);
    let parent_scales = parent_rest_scales(rig);
    let mut report = ResampleReport {
        clip: rig.clips[clip].name.clone(),
        rate: fps,
        before: keyframe_size(rig, clip),
        position_tolerance,
        ..ResampleReport::default()
    };
    let times = grid_times(duration, fps);
    let mut scratch = Scratch::default();
    for channel in &mut rig.clips[clip].channels {
        let limit = match channel.property {
            Property::Translation => Limit::Position {
                tolerance: position_tolerance,
                parent_scale: parent_scales[channel.node],
            },
            Property::Rotation => Limit::Rotation {
                degrees: f64::from(tolerance.rotation_degrees),
            },
            Property::Scale => Limit::Scale {
                relative: tolerance.scale_relative,
            },
        };
        let worst = resample_channel(channel, &times, limit, &mut scratch);
        let slot = match channel.property {
            Property::Translation => &mut report.worst_position,
            Property::Rotation => &mut report.worst_rotation_degrees,
            Property::Scale => &mut report.worst_scale_relative,
        };
        *slot = slot.max(worst);
    }
    rig.clips[clip].duration = *times.last().expect("the grid has the end");
    for channel in rig.morphs.channels.iter_mut().filter(|c| c.clip == clip) {
        let worst = resample_morph_channel(channel, &times, tolerance.morph_weight, &mut scratch);
        report.worst_morph_weight = report.worst_morph_weight.max(worst);
    }
    keep_length(rig, clip);
    report.after = keyframe_size(rig, clip);
    Ok(report)
}

/// Gives clip `clip` a key at its end when none of its channels has one (all held one value),
/// repeating the first channel's last value: a clip lasts until its last key once saved.
fn keep_length(rig: &mut Rig, clip: usize) {
    let end = rig.clips[clip].duration;
    let reaches = |times: &[f32]| times.last().is_some_and(|&t| t >= end);
    let morphs = &mut rig.morphs.channels;
    let edited = &mut rig.clips[clip];
    if end <= 0.0
        || edited.channels.iter().any(|c| reaches(&c.times))
        || morphs.iter().any(|c| c.clip == clip && reaches(&c.times))
    {
        return;
    }
    // Resampled channels are linear or step: one value (group of weights) per key.
    if let Some(channel) = edited.channels.first_mut() {
        if let Some(&last) = channel.values.last() {
            channel.times.push(end);
            channel.values.push(last);
        }
    } else if let Some(channel) = morphs.iter_mut().find(|c| c.clip == clip) {
        let start = channel.values.len().saturating_sub(channel.targets);
        channel.times.push(end);
        channel.values.extend_from_within(start..);
    }
}

/// Per node, the largest column length of its parent's rest world matrix (1 for roots): how
/// much a local distance grows in world space.
fn parent_rest_scales(rig: &Rig) -> Vec<f32> {
    let mut sampler = ClipSampler::new(rig);
    let worlds = sampler.worlds_at(None, 0.0);
    rig.nodes
        .iter()
        .map(|node| {
            node.parent.map_or(1.0, |p| {
                let w = worlds[p];
                let columns = [w.x_axis, w.y_axis, w.z_axis].map(|c| c.truncate().length());
                columns.into_iter().fold(0.0, f32::max)
            })
        })
        .collect()
}

/// Buffers reused from channel to channel.
#[derive(Default)]
struct Scratch {
    samples: Vec<Vec4>,
    weights: Vec<f32>,
    kept: Vec<usize>,
}

/// How a channel's error is measured, and the most it may be.
#[derive(Debug, Clone, Copy)]
enum Limit {
    /// World units: the local distance times the parent's scale.
    Position {
        tolerance: f32,
        parent_scale: f32,
    },
    Rotation {
        degrees: f64,
    },
    Scale {
        relative: f32,
    },
}

impl Limit {
    /// The error of `got` where `want` was sampled, in the limit's units.
    fn error(self, got: Vec4, want: Vec4) -> f32 {
        match self {
            Limit::Position { parent_scale, .. } => (got - want).truncate().length() * parent_scale,
            Limit::Rotation { .. } => rotation_error_degrees(got, want) as f32,
            Limit::Scale { .. } => {
                let difference = (got - want).truncate().abs().max_element();
                difference / want.truncate().abs().max_element().max(f32::MIN_POSITIVE)
            }
        }
    }

    fn fits(self, got: Vec4, want: Vec4) -> bool {
        match self {
            Limit::Position { tolerance, .. } => self.error(got, want) <= tolerance,
            // Compared in f64: 0.05° is below what an f32 arc cosine resolves.
            Limit::Rotation { degrees } => rotation_error_degrees(got, want) <= degrees,
            Limit::Scale { relative } => self.error(got, want) <= relative,
        }
    }
}

/// The angle in degrees of the rotation from `a` to `b` (unit or not; `q` and `-q` are one
/// rotation), in f64 from the chord between them, which stays precise for tiny angles.
pub fn rotation_error_degrees(a: Vec4, b: Vec4) -> f64 {
    let (a, b) = (a.as_dvec4().normalize_or_zero(), b.as_dvec4().normalize_or_zero());
    let chord = (a - b).length().min((a + b).length());
    // The chord is 2 sin(φ / 2) for the angle φ between the quaternions; the rotation turns 2φ.
    (4.0 * (chord / 2.0).min(1.0).asin()).to_degrees()
}

/// Indices of the samples kept when every sample must satisfy `fits(a, b, i)`: sample `i`
/// restored by interpolating kept samples `a < i < b`, or for `a == b` by holding sample `a`.
/// Keeps only the first when it holds for every sample; else always the first and last.
pub(super) fn reduce_keys(count: usize, mut fits: impl FnMut(usize, usize, usize) -> bool, kept: &mut Vec<usize>) {
    kept.clear();
    if count == 0 {
        return;
    }
    kept.push(0);
    if count == 1 {
        return;
    }
    if (1..count).all(|i| fits(0, 0, i)) {
        return;
    }
    let last = count - 1;
    // Straight channels in one pass, before the quadratic search.
    if last <= MAX_SEGMENT && (1..last).all(|i| fits(0, last, i)) {
        kept.push(last);
        return;
    }
    let mut anchor = 0;
    while anchor < last {
        let mut end = anchor + 1;
        while end < last
            && end + 1 - anchor <= MAX_SEGMENT
            && (anchor + 1..=end).rev().all(|i| fits(anchor, end + 1, i))
        {
            end += 1;
        }
        kept.push(end);
        anchor = end;
    }
}

/// The fraction of the way from `times[a]` to `times[b]` that `times[i]` lies, computed as the
/// sampler computes it.
#[inline]
pub(super) fn fraction(times: &[f32], a: usize, b: usize, i: usize) -> f32 {
    let dt = times[b] - times[a];
    if dt > 0.0 { (times[i] - times[a]) / dt } else { 0.0 }
}

/// Resamples and reduces one channel; returns the largest error left at a sample time.
fn resample_channel(channel: &mut Channel, times: &[f32], limit: Limit, scratch: &mut Scratch) -> f32 {
    let rotation = channel.property == Property::Rotation;
    let step = channel.interpolation == Interpolation::Step;
    let samples = &mut scratch.samples;
    samples.clear();
    let mut hint = 0;
    for &time in times {
        let mut value = sample_channel(channel, time, &mut hint);
        if rotation {
            value = value.normalize_or(Vec4::W);
            // Neighbouring keys in one hemisphere: the same rotations, tidier curves.
            if samples.last().is_some_and(|previous: &Vec4| previous.dot(value) < 0.0) {
                value = -value;
            }
        }
        samples.push(value);
    }
    let samples = &scratch.samples;
    let interpolate = |a: usize, b: usize, i: usize| {
        let s = fraction(times, a, b, i);
        if step {
            samples[a]
        } else if rotation {
            slerp_short(samples[a], samples[b], s)
        } else {
            samples[a].lerp(samples[b], s)
        }
    };
    reduce_keys(
        samples.len(),
        |a, b, i| limit.fits(interpolate(a, b, i), samples[i]),
        &mut scratch.kept,
    );
    let reduced = Channel {
        node: channel.node,
        property: channel.property,
        interpolation: reduced_interpolation(step),
        times: scratch.kept.iter().map(|&k| times[k]).collect(),
        values: scratch.kept.iter().map(|&k| samples[k]).collect(),
    };
    // The guarantee, checked with the player's own sampler.
    let mut worst = 0.0f32;
    let mut hint = 0;
    for (&time, &want) in times.iter().zip(samples) {
        let got = sample_channel(&reduced, time, &mut hint);
        if !limit.fits(got, want) {
            worst = f32::INFINITY;
            break;
        }
        worst = worst.max(limit.error(got, want));
    }
    if worst.is_finite() {
        *channel = reduced;
        worst
    } else {
        channel.interpolation = reduced.interpolation;
        channel.times = times.to_vec();
        channel.values = samples.clone();
        0.0
    }
}

/// Resamples and reduces one morph weight channel (all its targets share keys); returns the
/// largest weight error left at a sample time.
fn resample_morph_channel(channel: &mut MorphChannel, times: &[f32], tolerance: f32, scratch: &mut Scratch) -> f32 {
    let n = channel.targets;
    let step = channel.interpolation == Interpolation::Step;
    let weights = &mut scratch.weights;
    weights.clear();
    for &time in times {
        weights.extend((0..n).map(|target| sample_morph_channel(channel, target, time)));
    }
    let weights = &scratch.weights;
    let key = |k: usize| &weights[k * n..(k + 1) * n];
    let fits = |a: usize, b: usize, i: usize| {
        let s = fraction(times, a, b, i);
        (0..n).all(|target| {
            let (wa, wb) = (key(a)[target], key(b)[target]);
            // As `sample_morph_channel` interpolates.
            let got = if step { wa } else { wa + (wb - wa) * s };
            (got - key(i)[target]).abs() <= tolerance
        })
    };
    reduce_keys(times.len(), fits, &mut scratch.kept);
    let reduced = MorphChannel {
        clip: channel.clip,
        node: channel.node,
        interpolation: reduced_interpolation(step),
        times: scratch.kept.iter().map(|&k| times[k]).collect(),
        values: scratch.kept.iter().flat_map(|&k| key(k).iter().copied()).collect(),
        targets: n,
    };
    let mut worst = 0.0f32;
    for (k, &time) in times.iter().enumerate() {
        for target in 0..n {
            worst = worst.max((sample_morph_channel(&reduced, target, time) - key(k)[target]).abs());
        }
    }
    if worst <= tolerance {
        *channel = reduced;
        worst
    } else {
        channel.interpolation = reduced.interpolation;
        channel.times = times.to_vec();
        channel.values = weights.clone();
        0.0
    }
}

/// A reduced channel's interpolation: step channels stay step, the others become linear.
fn reduced_interpolation(step: bool) -> Interpolation {
    if step {
        Interpolation::Step
    } else {
        Interpolation::Linear
    }
}
