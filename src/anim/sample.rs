//! Keyframe sampling per the glTF 2.0 specification (Appendix C, interpolation).

use crate::rig::{Channel, Interpolation, Property};
use glam::{Quat, Vec4};

/// Index `k` of the key interval holding `time`: `times[k] <= time < times[k + 1]`, clamped to
/// `0..=len - 2` (or 0 for a single key).
///
/// `hint` is the interval found on the previous call; playback moves forward a little each frame,
/// so a short forward scan from it is usually enough and a binary search runs only on seeks.
pub fn key_interval(times: &[f32], time: f32, hint: &mut usize) -> usize {
    let last = times.len().saturating_sub(2);
    let mut k = (*hint).min(last);
    if times.len() < 2 {
        k = 0;
    } else if times[k] <= time {
        let mut steps = 0;
        while k < last && times[k + 1] <= time {
            k += 1;
            steps += 1;
            if steps == 4 {
                k = times.partition_point(|&t| t <= time).saturating_sub(1).min(last);
                break;
            }
        }
    } else {
        k = times.partition_point(|&t| t <= time).saturating_sub(1).min(last);
    }
    *hint = k;
    k
}

/// The channel's value at `time` (seconds). Times before the first key or after the last clamp
/// to that key's value. Rotations come back as a unit quaternion in `xyzw`.
pub fn sample_channel(channel: &Channel, time: f32, hint: &mut usize) -> Vec4 {
    let times = &channel.times;
    let values = &channel.values;
    let cubic = channel.interpolation == Interpolation::CubicSpline;
    let rotation = channel.property == Property::Rotation;
    // The importer normalizes step and linear rotation keys, but spline key values are stored
    // as written, so a clamped spline rotation is normalized here like an interpolated one.
    let value_at = |k: usize| match (cubic, rotation) {
        (true, true) => values[3 * k + 1].normalize_or(Vec4::W),
        (true, false) => values[3 * k + 1],
        (false, _) => values[k],
    };
    let last = times.len() - 1;
    if time <= times[0] || last == 0 {
        return value_at(0);
    }
    if time >= times[last] {
        return value_at(last);
    }
    let k = key_interval(times, time, hint);
    let dt = times[k + 1] - times[k];
    let s = if dt > 0.0 { (time - times[k]) / dt } else { 0.0 };
    match channel.interpolation {
        Interpolation::Step => values[k],
        Interpolation::Linear if rotation => {
            Vec4::from(Quat::from_vec4(values[k]).slerp(Quat::from_vec4(values[k + 1]), s))
        }
        Interpolation::Linear => values[k].lerp(values[k + 1], s),
        Interpolation::CubicSpline => {
            let p0 = values[3 * k + 1];
            let m0 = values[3 * k + 2] * dt;
            let p1 = values[3 * (k + 1) + 1];
            let m1 = values[3 * (k + 1)] * dt;
            let (s2, s3) = (s * s, s * s * s);
            let v = p0 * (2.0 * s3 - 3.0 * s2 + 1.0)
                + m0 * (s3 - 2.0 * s2 + s)
                + p1 * (-2.0 * s3 + 3.0 * s2)
                + m1 * (s3 - s2);
            if rotation { v.normalize_or(Vec4::W) } else { v }
        }
    }
}
