//! Clip edits as functions of a rig: trim, hold in place, resample, rename and drop a clip.
//!
//! Each edit changes one clip of a [`Rig`] and the morph weight channels that belong to it
//! (`rig.morphs.channels`, which refer to clips by index), and reads keys only through the
//! samplers the player uses ([`sample_channel`], [`sample_morph_channel`]), so an edited clip
//! plays back as the original did wherever the edit promises it.

use crate::anim::ClipSampler;
use crate::anim::morph::sample_morph_channel;
use crate::anim::root_motion::motion_root;
use crate::anim::{local_to_world, sample_channel, sample_clip};
use crate::rig::{Channel, HierarchyCache, Interpolation, MorphChannel, Property, Rig, Trs};
use glam::{DMat4, DVec3, Mat4, Vec3, Vec4};

/// Why a clip edit could not be made; the rig is left as it was.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClipEditError {
    #[error("the rig has no clip named '{0}'")]
    NoSuchClip(String),
    #[error("there is no clip {index} (the rig has {count})")]
    ClipOutOfRange { index: usize, count: usize },
    #[error("the start {start} s is not before the end {end} s")]
    StartNotBeforeEnd { start: f32, end: f32 },
    #[error("{time} s is outside clip '{clip}' (0 to {duration} s)")]
    TimeOutsideClip { clip: String, time: f32, duration: f32 },
    #[error("{0} frames per second is not a usable rate for this clip")]
    BadRate(f32),
    #[error("the {name} tolerance {value} is not a finite number of at least 0")]
    BadTolerance { name: &'static str, value: f32 },
    #[error("the name '{name}' is taken by clip {other}")]
    NameTaken { name: String, other: usize },
    #[error("a clip's name cannot be empty")]
    EmptyName,
    #[error("clip '{0}' moves no node's translation, so nothing carries its travel")]
    NoMotionRoot(String),
    #[error("the parent of motion root '{0}' has a singular transform, so its place cannot be held")]
    SingularParent(String),
    /// Its feet cannot be locked (see [`crate::motion::foot_lock`]).
    #[error(transparent)]
    FootLock(#[from] super::foot_lock::FootLockError),
}

/// The clip called `name`, or numbered `name` (see [`Rig::find_clip`]).
pub fn find_clip(rig: &Rig, name: &str) -> Result<usize, ClipEditError> {
    rig.find_clip(name)
        .ok_or_else(|| ClipEditError::NoSuchClip(name.to_owned()))
}

fn check_clip(rig: &Rig, clip: usize) -> Result<(), ClipEditError> {
    if clip < rig.clips.len() {
        Ok(())
    } else {
        Err(ClipEditError::ClipOutOfRange {
            index: clip,
            count: rig.clips.len(),
        })
    }
}

/// Gives clip `clip` the name `new_name`, which no other clip may have.
pub fn rename(rig: &mut Rig, clip: usize, new_name: &str) -> Result<(), ClipEditError> {
    check_clip(rig, clip)?;
    if new_name.is_empty() {
        return Err(ClipEditError::EmptyName);
    }
    if let Some(other) = rig.clips.iter().position(|c| c.name == new_name).filter(|&o| o != clip) {
        return Err(ClipEditError::NameTaken {
            name: new_name.to_owned(),
            other,
        });
    }
    rig.clips[clip].name = new_name.to_owned();
    Ok(())
}

/// Removes clip `clip` and its morph weight channels, and returns it. Everything that refers to
/// a later clip by index (morph channels, the import facts) is moved down by one.
pub fn drop_clip(rig: &mut Rig, clip: usize) -> Result<crate::rig::Clip, ClipEditError> {
    check_clip(rig, clip)?;
    let removed = rig.clips.remove(clip);
    let renumber = |index: &mut usize| {
        if *index > clip {
            *index -= 1;
        }
    };
    rig.morphs.channels.retain(|c| c.clip != clip);
    rig.morphs.channels.iter_mut().for_each(|c| renumber(&mut c.clip));
    rig.facts.property_tracks.retain(|t| t.clip != clip);
    (rig.facts.property_tracks.iter_mut()).for_each(|t| renumber(&mut t.clip));
    if clip < rig.facts.channels.len() {
        rig.facts.channels.remove(clip);
    }
    rig.facts.dropped_channels.retain(|d| d.clip != clip);
    rig.facts
        .dropped_channels
        .iter_mut()
        .for_each(|d| renumber(&mut d.clip));
    // Without skins, which nodes count as bones depends on the clips' channels.
    rig.hierarchy_cache = HierarchyCache::default();
    Ok(removed)
}

// ---------------------------------------------------------------------------------------------
// Trim

/// Times this close past the clip's ends are taken as the ends (a time typed with fewer digits
/// than the file's duration has).
const END_SLACK: f32 = 1e-5;

/// Keeps `start..end` (seconds) of clip `clip`, moved to begin at 0; its duration becomes
/// `end - start`.
///
/// Every channel (and morph weight channel of the clip) keeps its keys strictly inside the range
/// and gains a key at each end holding the value the player samples there. Cubic spline
/// channels stay splines: glTF tangents are derivatives per second, so a key's tangents do not
/// depend on the length of its segments, and a segment cut at `start` or `end` is the same
/// cubic with a new end key whose value and tangent are the spline's value and derivative at
/// the cut (computed in f64). The trimmed spline is therefore the original's piece exactly, with
/// no extra keys; rotation values at a cut are stored before normalization, as spline keys are,
/// so the normalized result matches too.
pub fn trim(rig: &mut Rig, clip: usize, start: f32, end: f32) -> Result<(), ClipEditError> {
    check_clip(rig, clip)?;
    let (name, duration) = (&rig.clips[clip].name, rig.clips[clip].duration);
    let outside = |time: f32| ClipEditError::TimeOutsideClip {
        clip: name.clone(),
        time,
        duration,
    };
    for time in [start, end] {
        if !time.is_finite() {
            return Err(outside(time));
        }
    }
    if start >= end {
        return Err(ClipEditError::StartNotBeforeEnd { start, end });
    }
    for time in [start, end] {
        if !(-END_SLACK..=duration + END_SLACK).contains(&time) {
            return Err(outside(time));
        }
    }
    let (start, end) = (start.max(0.0), end.min(duration.max(0.0)));
    if start >= end {
        return Err(ClipEditError::StartNotBeforeEnd { start, end });
    }
    let length = end - start;
    let edited = &mut rig.clips[clip];
    for channel in &mut edited.channels {
        trim_channel(channel, start, end, length);
    }
    edited.duration = length;
    for channel in rig.morphs.channels.iter_mut().filter(|c| c.clip == clip) {
        trim_morph_channel(channel, start, end, length);
    }
    Ok(())
}

/// Which side of a cut is kept: a spline's derivative there is taken from that side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// The cut starts the kept range (the derivative from the right).
    Start,
    /// The cut ends it (the derivative from the left).
    End,
}

/// Where a cut falls among a channel's keys.
#[derive(Debug, Clone, Copy, PartialEq)]
enum CutPlace {
    /// Before the first key or past the last, where the channel holds that key's value.
    Held(usize),
    /// On the segment from key `key` to the next, at `s` (0..=1) of its length `dt` seconds.
    Inside { key: usize, s: f64, dt: f64 },
}

fn cut_place(times: &[f32], time: f32, side: Side) -> CutPlace {
    let last = times.len() - 1;
    let inside = match side {
        Side::Start => time >= times[0] && time < times[last],
        Side::End => time > times[0] && time <= times[last],
    };
    if !inside {
        return CutPlace::Held(if time <= times[0] { 0 } else { last });
    }
    // Start: times[k] <= time < times[k + 1]; end: times[k] < time <= times[k + 1].
    let after = match side {
        Side::Start => times.partition_point(|&t| t <= time),
        Side::End => times.partition_point(|&t| t < time),
    };
    let key = after.saturating_sub(1).min(last - 1);
    let dt = f64::from(times[key + 1]) - f64::from(times[key]);
    let s = if dt > 0.0 {
        ((f64::from(time) - f64::from(times[key])) / dt).clamp(0.0, 1.0)
    } else {
        0.0
    };
    CutPlace::Inside { key, s, dt }
}

/// The glTF cubic spline from value `p0` (out-tangent `b0`, per second) to `p1` (in-tangent
/// `a1`) over `dt` seconds: its value and its derivative per second at `s` (0..=1).
fn hermite_with_slope(p0: f64, b0: f64, p1: f64, a1: f64, dt: f64, s: f64) -> (f64, f64) {
    let (m0, m1) = (b0 * dt, a1 * dt);
    let (s2, s3) = (s * s, s * s * s);
    let value =
        p0 * (2.0 * s3 - 3.0 * s2 + 1.0) + m0 * (s3 - 2.0 * s2 + s) + p1 * (-2.0 * s3 + 3.0 * s2) + m1 * (s3 - s2);
    let per_s = p0 * (6.0 * s2 - 6.0 * s)
        + m0 * (3.0 * s2 - 4.0 * s + 1.0)
        + p1 * (-6.0 * s2 + 6.0 * s)
        + m1 * (3.0 * s2 - 2.0 * s);
    let slope = if dt > 0.0 { per_s / dt } else { 0.0 };
    (value, slope)
}

/// The range of keys strictly inside `start..end` whose re-timed time stays inside `0..length`.
fn inner_keys(times: &[f32], start: f32, end: f32, length: f32) -> std::ops::Range<usize> {
    let first = times.partition_point(|&t| t <= start);
    let mut last = times.partition_point(|&t| t < end).max(first);
    // A key an ulp before the end can round onto it once re-timed; the end key replaces it.
    while last > first && times[last - 1] - start >= length {
        last -= 1;
    }
    first..last
}

/// The key (one value, or in-tangent, value, out-tangent for splines) a trimmed channel gets at
/// a cut.
fn channel_cut_key(channel: &Channel, time: f32, side: Side) -> [Vec4; 3] {
    let values = &channel.values;
    if channel.interpolation != Interpolation::CubicSpline {
        let mut hint = 0;
        let value = sample_channel(channel, time, &mut hint);
        let value = if channel.property == Property::Rotation {
            value.normalize_or(Vec4::W)
        } else {
            value
        };
        return [value; 3];
    }
    match cut_place(&channel.times, time, side) {
        CutPlace::Held(key) => [Vec4::ZERO, values[3 * key + 1], Vec4::ZERO],
        CutPlace::Inside { key, s, dt } => {
            let (mut value, mut slope) = ([0.0f32; 4], [0.0f32; 4]);
            for c in 0..4 {
                let component = |v: usize| f64::from(values[v][c]);
                let (v, d) = hermite_with_slope(
                    component(3 * key + 1),
                    component(3 * key + 2),
                    component(3 * key + 4),
                    component(3 * key + 3),
                    dt,
                    s,
                );
                (value[c], slope[c]) = (v as f32, d as f32);
            }
            let slope = Vec4::from(slope);
            [slope, Vec4::from(value), slope]
        }
    }
}

fn trim_channel(channel: &mut Channel, start: f32, end: f32, length: f32) {
    if channel.times.len() < 2 {
        // One key holds its value at every time.
        channel.times.iter_mut().for_each(|t| *t = 0.0);
        return;
    }
    let per_key = if channel.interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let first_key = channel_cut_key(channel, start, Side::Start);
    let last_key = channel_cut_key(channel, end, Side::End);
    let inner = inner_keys(&channel.times, start, end, length);
    let mut times = Vec::with_capacity(inner.len() + 2);
    times.push(0.0);
    times.extend(channel.times[inner.clone()].iter().map(|&t| t - start));
    times.push(length);
    let mut values = Vec::with_capacity(times.len() * per_key);
    values.extend_from_slice(&first_key[..per_key]);
    values.extend_from_slice(&channel.values[inner.start * per_key..inner.end * per_key]);
    values.extend_from_slice(&last_key[..per_key]);
    channel.times = times;
    channel.values = values;
}

/// Appends the key group (weights, or in-tangents, weights, out-tangents for splines) a trimmed
/// morph channel gets at a cut.
fn push_morph_cut_key(channel: &MorphChannel, time: f32, side: Side, out: &mut Vec<f32>) {
    let n = channel.targets;
    if channel.interpolation != Interpolation::CubicSpline {
        out.extend((0..n).map(|target| sample_morph_channel(channel, target, time)));
        return;
    }
    let values = &channel.values;
    match cut_place(&channel.times, time, side) {
        CutPlace::Held(key) => {
            out.extend(std::iter::repeat_n(0.0, n));
            out.extend_from_slice(&values[(3 * key + 1) * n..(3 * key + 2) * n]);
            out.extend(std::iter::repeat_n(0.0, n));
        }
        CutPlace::Inside { key, s, dt } => {
            let at = |group: usize, target: usize| f64::from(values[group * n + target]);
            let cut = |target: usize| {
                hermite_with_slope(
                    at(3 * key + 1, target),
                    at(3 * key + 2, target),
                    at(3 * key + 4, target),
                    at(3 * key + 3, target),
                    dt,
                    s,
                )
            };
            out.extend((0..n).map(|target| cut(target).1 as f32));
            out.extend((0..n).map(|target| cut(target).0 as f32));
            out.extend((0..n).map(|target| cut(target).1 as f32));
        }
    }
}

fn trim_morph_channel(channel: &mut MorphChannel, start: f32, end: f32, length: f32) {
    if channel.times.len() < 2 {
        channel.times.iter_mut().for_each(|t| *t = 0.0);
        return;
    }
    let group = channel.targets
        * if channel.interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
    let inner = inner_keys(&channel.times, start, end, length);
    let mut times = Vec::with_capacity(inner.len() + 2);
    times.push(0.0);
    times.extend(channel.times[inner.clone()].iter().map(|&t| t - start));
    times.push(length);
    let mut values = Vec::with_capacity(times.len() * group);
    push_morph_cut_key(channel, start, Side::Start, &mut values);
    values.extend_from_slice(&channel.values[inner.start * group..inner.end * group]);
    push_morph_cut_key(channel, end, Side::End, &mut values);
    channel.times = times;
    channel.values = values;
}

// ---------------------------------------------------------------------------------------------
// In place

/// Samples a second of the motion root's new translation where its parent moves during the clip
/// (its world place is then no affine function of its own keys).
pub const IN_PLACE_BAKE_RATE: f32 = 30.0;

/// Holding a node over a place on the ground plane (Y up, world space) whatever its parent's
/// transform: the local translation that puts it at a given world height straight above (or
/// below) that place. [`in_place`] uses it, and so can any baking that keeps a root in place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundHold {
    parent: DMat4,
    parent_inverse: DMat4,
    place: DVec3,
}

impl GroundHold {
    /// Holding a node whose parent's world transform is `parent_world` over `place` (only its
    /// x and z count); `None` when that transform cannot be inverted.
    pub fn new(parent_world: Mat4, place: Vec3) -> Option<GroundHold> {
        let parent = parent_world.as_dmat4();
        let determinant = parent.determinant();
        // Relative to the scale of the parent's columns, so that a 0.01 scale is not "singular".
        let scale =
            parent.x_axis.truncate().length() * parent.y_axis.truncate().length() * parent.z_axis.truncate().length();
        if !determinant.is_finite() || determinant.abs() <= 1e-9 * scale || scale == 0.0 {
            return None;
        }
        Some(GroundHold {
            parent,
            parent_inverse: parent.inverse(),
            place: place.as_dvec3(),
        })
    }

    /// The local translation that puts the node at world height `height` over the place.
    pub fn translation_at_height(&self, height: f64) -> Vec3 {
        let world = DVec3::new(self.place.x, height, self.place.z);
        self.parent_inverse.transform_point3(world).as_vec3()
    }

    /// `translation` moved horizontally (in world space) over the place, its height kept.
    pub fn translation(&self, translation: Vec3) -> Vec3 {
        let height = self.parent.transform_point3(translation.as_dvec3()).y;
        self.translation_at_height(height)
    }

    /// A translation's rate of change (a spline tangent) with its horizontal part, in world
    /// space, taken out: what [`GroundHold::translation`] does to a curve's derivative.
    pub fn tangent(&self, tangent: Vec3) -> Vec3 {
        let vertical = self.parent.transform_vector3(tangent.as_dvec3()).y;
        self.parent_inverse
            .transform_vector3(DVec3::new(0.0, vertical, 0.0))
            .as_vec3()
    }
}

/// Takes the horizontal travel out of clip `clip`: its motion root ([`motion_root`]) stays over
/// its rest place on the ground plane (world space, Y up), as `RetargetOptions::in_place` holds
/// a carried clip's root, while its height and every other channel are kept.
///
/// When nothing above the root moves in the clip, the root's parent has one world transform
/// throughout, the edit is an affine map of the root's translation keys (and the linear part of
/// it maps spline tangents), and the new channel is exact between keys for every
/// interpolation. Otherwise the root's translation is baked, linear, at its keys, its
/// ancestors' keys and [`IN_PLACE_BAKE_RATE`] samples a second.
pub fn in_place(rig: &mut Rig, clip: usize) -> Result<(), ClipEditError> {
    check_clip(rig, clip)?;
    let root = motion_root(rig, clip).ok_or_else(|| ClipEditError::NoMotionRoot(rig.clips[clip].name.clone()))?;
    let rest_worlds = ClipSampler::new(rig).worlds_at(None, 0.0).to_vec();
    let place = rest_worlds[root].w_axis.truncate();
    let ancestors = ancestors(rig, root);
    let parent_moves = rig.clips[clip].channels.iter().any(|c| ancestors.contains(&c.node));
    let singular = || ClipEditError::SingularParent(rig.nodes[root].name.clone());
    if !parent_moves {
        let parent = rig.nodes[root].parent.map_or(Mat4::IDENTITY, |p| rest_worlds[p]);
        let hold = GroundHold::new(parent, place).ok_or_else(singular)?;
        let channels = rig.clips[clip].channels.iter_mut();
        for channel in channels.filter(|c| c.node == root && c.property == Property::Translation) {
            let cubic = channel.interpolation == Interpolation::CubicSpline;
            for (i, value) in channel.values.iter_mut().enumerate() {
                let tangent = cubic && i % 3 != 1;
                let v = value.truncate();
                let held = if tangent { hold.tangent(v) } else { hold.translation(v) };
                *value = held.extend(value.w);
            }
        }
        return Ok(());
    }
    let baked = bake_held_root(rig, clip, root, &ancestors, place).ok_or_else(singular)?;
    // The baked channel takes the place of the root's first translation channel (files have
    // one; any other would override it).
    let moves_root = |c: &Channel| c.node == root && c.property == Property::Translation;
    let channels = &mut rig.clips[clip].channels;
    let first = channels
        .iter()
        .position(moves_root)
        .expect("the motion root has a translation channel");
    channels[first] = baked;
    let mut index = 0..;
    channels.retain(|c| index.next() == Some(first) || !moves_root(c));
    Ok(())
}

/// `node`'s ancestors, nearest first.
fn ancestors(rig: &Rig, node: usize) -> Vec<usize> {
    std::iter::successors(rig.nodes[node].parent, |&p| rig.nodes[p].parent).collect()
}

/// The motion root's translation over the clip held over `place`, baked as a linear channel;
/// `None` when its parent's transform is singular at some time.
fn bake_held_root(rig: &Rig, clip: usize, root: usize, ancestors: &[usize], place: Vec3) -> Option<Channel> {
    let edited = &rig.clips[clip];
    let mut times: Vec<f32> = edited
        .channels
        .iter()
        .filter(|c| c.node == root && c.property == Property::Translation || ancestors.contains(&c.node))
        .flat_map(|c| c.times.iter().copied())
        .collect();
    times.extend_from_slice(&grid_times(edited.duration, IN_PLACE_BAKE_RATE));
    times.sort_by(f32::total_cmp);
    // Keys closer than this are one key (exporters write 1/30 s as 0.0333333 and 0.0333334).
    const SAME_TIME: f32 = 1e-6;
    times.dedup_by(|b, a| *b - *a <= SAME_TIME);
    let mut hints = vec![0; edited.channels.len()];
    let mut locals: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
    let mut worlds = vec![Mat4::IDENTITY; rig.nodes.len()];
    let mut values = Vec::with_capacity(times.len());
    for &time in &times {
        sample_clip(&rig.nodes, Some(edited), time, &mut hints, &mut locals);
        local_to_world(&rig.nodes, &locals, &mut worlds);
        let parent = rig.nodes[root].parent.map_or(Mat4::IDENTITY, |p| worlds[p]);
        let hold = GroundHold::new(parent, place)?;
        values.push(hold.translation(locals[root].translation).extend(0.0));
    }
    Some(Channel {
        node: root,
        property: Property::Translation,
        interpolation: Interpolation::Linear,
        times,
        values,
    })
}

/// Most samples a resampled channel may have (an hour at about 280 frames a second).
const MAX_SAMPLES: f64 = 1e6;

/// `k / rate` seconds from 0 while before `duration`, then `duration` itself; `[0]` for a clip
/// of no length.
fn grid_times(duration: f32, rate: f32) -> Vec<f32> {
    let duration = if duration.is_finite() { duration.max(0.0) } else { 0.0 };
    let (end, rate) = (f64::from(duration), f64::from(rate));
    let count = (end * rate).ceil().min(MAX_SAMPLES) as usize;
    // A grid time this close to the end is the end (1.0000001 s at 30 fps ends on one key).
    const SAME_TIME: f64 = 1e-6;
    let mut times: Vec<f32> = (0..count)
        .map(|k| k as f64 / rate)
        .take_while(|&t| t < end - SAME_TIME)
        .map(|t| t as f32)
        .collect();
    times.push(duration);
    times
}

mod resampling;

pub use resampling::{
    KeyframeSize, ResampleReport, ResampleTolerance, keyframe_size, resample, rotation_error_degrees,
};
#[cfg(test)]
use resampling::{fraction, reduce_keys};

#[cfg(test)]
mod tests;
