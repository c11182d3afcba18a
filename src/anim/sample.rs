//! Keyframe sampling per the glTF 2.0 specification (Appendix C, interpolation).

use crate::rig::{Channel, Interpolation, Property};
use glam::Vec4;

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

/// Spherical linear interpolation of unit quaternions (`xyzw`) along the shorter arc, without
/// trigonometry: `sin(sθ)/sin θ` as the series in `cos θ - 1` of D. Eberly's "A Fast and Accurate
/// Algorithm for Computing SLERP" (2011), twelve terms with the last one scaled to balance the
/// truncation, which stays within 1e-6 of the exact slerp over the whole shorter arc (four
/// terms suffice for keys closer than about 50°). Two short independent multiply-add chains
/// replace an arc cosine, three sines and a division.
#[inline]
pub fn slerp_short(a: Vec4, b: Vec4, s: f32) -> Vec4 {
    const TERMS: usize = 12;
    /// Scale of the last term, fitted for the smallest largest error.
    const LAST: f32 = 1.894;
    // Term i (1-based) multiplies by (s² - i²) / (i (2i + 1)) = U·s² - V.
    const fn coefficients() -> ([f32; TERMS], [f32; TERMS]) {
        let (mut u, mut v) = ([0.0; TERMS], [0.0; TERMS]);
        let mut k = 0;
        while k < TERMS {
            let i = (k + 1) as f32;
            let scale = if k == TERMS - 1 { LAST } else { 1.0 };
            u[k] = scale / (i * (2.0 * i + 1.0));
            v[k] = scale * i / (2.0 * i + 1.0);
            k += 1;
        }
        (u, v)
    }
    const UV: ([f32; TERMS], [f32; TERMS]) = coefficients();
    let dot = a.dot(b);
    let (b, dot) = if dot < 0.0 { (-b, -dot) } else { (b, dot) };
    let x_minus_1 = dot.min(1.0) - 1.0;
    let d = 1.0 - s;
    let (s2, d2) = (s * s, d * d);
    let (mut cs, mut cd) = (1.0f32, 1.0f32);
    if dot >= 0.9 {
        // Keys less than about 50° apart, as in most clips: four plain terms are within 1e-7.
        for k in (0..4).rev() {
            let (u, v) = (
                1.0 / ((k + 1) * (2 * k + 3)) as f32,
                (k + 1) as f32 / (2 * k + 3) as f32,
            );
            cs = 1.0 + (u * s2 - v) * x_minus_1 * cs;
            cd = 1.0 + (u * d2 - v) * x_minus_1 * cd;
        }
    } else {
        for k in (0..TERMS).rev() {
            cs = 1.0 + (UV.0[k] * s2 - UV.1[k]) * x_minus_1 * cs;
            cd = 1.0 + (UV.0[k] * d2 - UV.1[k]) * x_minus_1 * cd;
        }
    }
    a * (d * cd) + b * (s * cs)
}

/// `k` (the hint) or `k + 1` when that interval holds `time` strictly inside the key range
/// (`times[k] <= time < times[k + 1]`, and `time > times[0]` for the first interval, where the
/// first key's value is returned as is).
#[inline(always)]
fn interval_near_hint(times: &[f32], time: f32, hint: usize) -> Option<usize> {
    for k in [hint, hint + 1] {
        let (Some(&t0), Some(&t1)) = (times.get(k), times.get(k + 1)) else {
            return None;
        };
        if t0 <= time && time < t1 && (k > 0 || time > t0) {
            return Some(k);
        }
        if time < t0 {
            return None;
        }
    }
    None
}

/// Asks the CPU to fetch the keys around `hint` of `channel` (a channel sampled a little
/// later), so that sampling many channels overlaps their memory latency.
#[inline(always)]
pub fn prefetch_keys(channel: &Channel, hint: usize) {
    let per_key = if channel.interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    // `wrapping_add`: the addresses are only hints and may lie past the end.
    let time = channel.times.as_ptr().wrapping_add(hint);
    let value = channel.values.as_ptr().wrapping_add(hint * per_key);
    crate::cpu::prefetch(time);
    crate::cpu::prefetch(value);
    crate::cpu::prefetch(value.wrapping_add(2 * per_key));
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
    // Playback: the hint's interval or the next one usually holds `time`, which needs neither
    // the first nor the last key (two cache lines fewer per channel).
    let k = match interval_near_hint(times, time, *hint) {
        Some(k) => {
            *hint = k;
            k
        }
        None => {
            let last = times.len() - 1;
            if time <= times[0] || last == 0 {
                return value_at(0);
            }
            if time >= times[last] {
                return value_at(last);
            }
            key_interval(times, time, hint)
        }
    };
    let dt = times[k + 1] - times[k];
    let s = if dt > 0.0 { (time - times[k]) / dt } else { 0.0 };
    match channel.interpolation {
        Interpolation::Step => values[k],
        Interpolation::Linear if rotation => slerp_short(values[k], values[k + 1], s),
        Interpolation::Linear => values[k].lerp(values[k + 1], s),
        Interpolation::CubicSpline => {
            let p0 = values[3 * k + 1];
            let m0 = values[3 * k + 2] * dt;
            let p1 = values[3 * (k + 1) + 1];
            let m1 = values[3 * (k + 1)] * dt;
            let v = hermite(p0, m0, p1, m1, s);
            if rotation { v.normalize_or(Vec4::W) } else { v }
        }
    }
}

/// The cubic Hermite spline from `p0` (tangent `m0`) to `p1` (tangent `m1`) at `s` in 0..1, the
/// glTF CUBICSPLINE interpolation once the tangents are scaled by the key interval.
pub fn hermite<T>(p0: T, m0: T, p1: T, m1: T, s: f32) -> T
where
    T: Copy + std::ops::Mul<f32, Output = T> + std::ops::Add<Output = T>,
{
    let (s2, s3) = (s * s, s * s * s);
    p0 * (2.0 * s3 - 3.0 * s2 + 1.0) + m0 * (s3 - 2.0 * s2 + s) + p1 * (-2.0 * s3 + 3.0 * s2) + m1 * (s3 - s2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    /// Exact slerp in f64 along the shorter arc.
    fn slerp_f64(a: Vec4, b: Vec4, s: f64) -> [f64; 4] {
        let (a, mut b) = (a.as_dvec4(), b.as_dvec4());
        if a.dot(b) < 0.0 {
            b = -b;
        }
        let theta = a.dot(b).clamp(-1.0, 1.0).acos();
        if theta < 1e-9 {
            return (a * (1.0 - s) + b * s).to_array();
        }
        ((a * ((1.0 - s) * theta).sin() + b * (s * theta).sin()) / theta.sin()).to_array()
    }

    #[test]
    fn polynomial_slerp_matches_the_exact_one() {
        let mut worst = 0.0f64;
        for i in 0..=60 {
            // Angles between the quaternions from 0 to 180° in 4D (both arcs get tried).
            let half = std::f32::consts::PI * i as f32 / 60.0;
            let axis = glam::Vec3::new(0.3, -0.8, 0.5).normalize();
            let a = Vec4::from(Quat::from_axis_angle(glam::Vec3::new(1.0, 2.0, -0.5).normalize(), 0.7));
            let b = Vec4::from(Quat::from_vec4(a) * Quat::from_axis_angle(axis, 2.0 * half));
            for k in 0..=20 {
                let s = k as f32 / 20.0;
                let got = slerp_short(a, b, s).as_dvec4().to_array();
                let want = slerp_f64(a, b, f64::from(s));
                for c in 0..4 {
                    worst = worst.max((got[c] - want[c]).abs());
                }
            }
        }
        assert!(worst < 2e-6, "largest deviation {worst}");
    }
}
