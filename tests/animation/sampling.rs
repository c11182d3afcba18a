//! Keyframe sampling against an f64 implementation of the glTF 2.0 interpolation formulas
//! (Appendix C) written here, separately from `rigscope::anim`: synthetic channels first, then
//! the nine clips of InterpolationTest.gltf read straight from its binary buffer.

use crate::common;

use crate::common::{Doc, index, json_rest_trs, rig_node_of, shared_rigs};
use glam::{Quat, Vec3, Vec4};
use rigscope::anim::{PoseBuffers, key_interval, sample_channel, sample_clip};
use rigscope::rig::{Channel, Interpolation, Property, Trs};

type V4 = [f64; 4];

fn add(a: V4, b: V4) -> V4 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}

fn scale(a: V4, s: f64) -> V4 {
    [a[0] * s, a[1] * s, a[2] * s, a[3] * s]
}

fn dot(a: V4, b: V4) -> f64 {
    a.iter().zip(&b).map(|(x, y)| x * y).sum()
}

fn normalize(a: V4) -> V4 {
    scale(a, 1.0 / dot(a, a).sqrt())
}

/// Cubic Hermite spline with tangents already scaled by the key interval.
fn hermite(p0: V4, m0: V4, p1: V4, m1: V4, s: f64) -> V4 {
    let (s2, s3) = (s * s, s * s * s);
    let mut v = scale(p0, 2.0 * s3 - 3.0 * s2 + 1.0);
    v = add(v, scale(m0, s3 - 2.0 * s2 + s));
    v = add(v, scale(p1, -2.0 * s3 + 3.0 * s2));
    add(v, scale(m1, s3 - s2))
}

/// Spherical interpolation along the arc from `a` to `b` as given (no sign flip).
fn slerp_as_given(a: V4, b: V4, s: f64) -> V4 {
    let d = dot(a, b).clamp(-1.0, 1.0);
    let theta = d.acos();
    if theta.sin().abs() < 1e-12 {
        return normalize(add(scale(a, 1.0 - s), scale(b, s)));
    }
    let wa = ((1.0 - s) * theta).sin() / theta.sin();
    let wb = (s * theta).sin() / theta.sin();
    add(scale(a, wa), scale(b, wb))
}

/// Spherical interpolation along the shortest arc, as the glTF spec requires.
fn slerp_short(a: V4, b: V4, s: f64) -> V4 {
    if dot(a, b) < 0.0 {
        slerp_as_given(a, scale(b, -1.0), s)
    } else {
        slerp_as_given(a, b, s)
    }
}

/// An animation sampler in f64: key times and values (in, value, out per key for splines).
struct Reference {
    interpolation: Interpolation,
    rotation: bool,
    times: Vec<f64>,
    values: Vec<V4>,
}

impl Reference {
    fn of_channel(channel: &Channel) -> Reference {
        Reference {
            interpolation: channel.interpolation,
            rotation: channel.property == Property::Rotation,
            times: channel.times.iter().map(|&t| f64::from(t)).collect(),
            values: channel.values.iter().map(|v| v.to_array().map(f64::from)).collect(),
        }
    }

    /// The value of key `k`; a rotation comes back normalized (spline key values of rotations
    /// are not required to be unit length, but every sampled rotation is).
    fn key_value(&self, k: usize) -> V4 {
        let v = match self.interpolation {
            Interpolation::CubicSpline => self.values[3 * k + 1],
            _ => self.values[k],
        };
        if self.rotation { normalize(v) } else { v }
    }

    fn eval(&self, t: f64) -> V4 {
        let n = self.times.len();
        if n == 1 || t <= self.times[0] {
            return self.key_value(0);
        }
        if t >= self.times[n - 1] {
            return self.key_value(n - 1);
        }
        let k = (0..n - 1)
            .rev()
            .find(|&k| self.times[k] <= t)
            .expect("t is after the first key");
        let dt = self.times[k + 1] - self.times[k];
        let s = (t - self.times[k]) / dt;
        match self.interpolation {
            Interpolation::Step => self.values[k],
            Interpolation::Linear if self.rotation => slerp_short(self.values[k], self.values[k + 1], s),
            Interpolation::Linear => add(scale(self.values[k], 1.0 - s), scale(self.values[k + 1], s)),
            Interpolation::CubicSpline => {
                let p0 = self.values[3 * k + 1];
                let m0 = scale(self.values[3 * k + 2], dt);
                let p1 = self.values[3 * (k + 1) + 1];
                let m1 = scale(self.values[3 * (k + 1)], dt);
                let v = hermite(p0, m0, p1, m1, s);
                if self.rotation { normalize(v) } else { v }
            }
        }
    }
}

/// Largest absolute component difference; for rotations the smaller of `q - r` and `q + r`.
fn distance(got: Vec4, expected: V4, rotation: bool) -> f64 {
    let got = got.to_array().map(f64::from);
    let diff = |sign: f64| (0..4).map(|i| (got[i] - sign * expected[i]).abs()).fold(0.0, f64::max);
    if rotation { diff(1.0).min(diff(-1.0)) } else { diff(1.0) }
}

fn quat(axis: [f32; 3], angle: f32) -> Vec4 {
    Vec4::from(Quat::from_axis_angle(Vec3::from(axis).normalize(), angle))
}

fn channel(property: Property, interpolation: Interpolation, times: &[f32], values: Vec<Vec4>) -> Channel {
    Channel {
        node: 0,
        property,
        interpolation,
        times: times.to_vec(),
        values,
    }
}

/// `count` times evenly spaced over `[from, to]`, plus every key time.
fn sample_times(channel: &Channel, from: f32, to: f32, count: usize) -> Vec<f32> {
    let mut times: Vec<f32> = (0..count)
        .map(|i| from + (to - from) * i as f32 / (count - 1) as f32)
        .collect();
    times.extend(&channel.times);
    times.sort_by(f32::total_cmp);
    times
}

/// Samples `channel` at `times` (fresh hint each time) and checks each value against the f64
/// reference within `tolerance`; returns the largest deviation.
fn check_against_reference(what: &str, channel: &Channel, times: &[f32], tolerance: f64) -> f64 {
    let reference = Reference::of_channel(channel);
    let rotation = channel.property == Property::Rotation;
    let mut worst = 0.0f64;
    for &t in times {
        let got = sample_channel(channel, t, &mut 0);
        let expected = reference.eval(f64::from(t));
        let d = distance(got, expected, rotation);
        assert!(
            d <= tolerance,
            "{what} at t = {t}: got {got}, expected {expected:?} (off by {d})"
        );
        if rotation {
            let length = f64::from(got.length());
            assert!(
                (length - 1.0).abs() < 1e-6,
                "{what} at t = {t}: rotation {got} has length {length}"
            );
        }
        worst = worst.max(d);
    }
    worst
}

fn step_translation() -> Channel {
    channel(
        Property::Translation,
        Interpolation::Step,
        &[0.5, 1.0, 2.5, 3.0],
        vec![
            Vec4::new(1.0, 2.0, 3.0, 0.0),
            Vec4::new(-4.0, 0.5, 2.0, 0.0),
            Vec4::new(7.0, -1.0, 0.25, 0.0),
            Vec4::new(0.0, 9.0, -3.0, 0.0),
        ],
    )
}

fn linear_translation() -> Channel {
    channel(
        Property::Translation,
        Interpolation::Linear,
        &[0.0, 0.3, 1.7, 2.0],
        vec![
            Vec4::new(0.0, 0.0, 0.0, 0.0),
            Vec4::new(2.0, -1.0, 4.0, 0.0),
            Vec4::new(-3.0, 5.0, 1.0, 0.0),
            Vec4::new(1.0, 1.0, 1.0, 0.0),
        ],
    )
}

/// Two keys whose quaternions have a negative 4D dot product: the short arc needs one negated.
fn linear_rotation_far_apart() -> Channel {
    channel(
        Property::Rotation,
        Interpolation::Linear,
        &[1.0, 3.0],
        vec![quat([1.0, 2.0, 3.0], 0.4), -quat([-1.0, 0.5, 2.0], 2.2)],
    )
}

/// Cubic spline translation with non-zero tangents and unevenly spaced keys.
fn cubic_translation() -> Channel {
    let key = |in_t: [f32; 3], v: [f32; 3], out_t: [f32; 3]| [in_t, v, out_t].map(|a| Vec3::from(a).extend(0.0));
    channel(
        Property::Translation,
        Interpolation::CubicSpline,
        &[0.0, 0.4, 1.5, 1.75],
        [
            key([9.0, 9.0, 9.0], [0.0, 1.0, 0.0], [3.0, -2.0, 1.0]),
            key([-1.0, 4.0, 2.0], [2.0, 0.0, -1.0], [1.5, 0.5, -3.0]),
            key([2.0, -6.0, 0.5], [-1.0, 3.0, 2.0], [-4.0, 1.0, 8.0]),
            key([0.5, 2.5, -2.0], [1.0, 1.0, 1.0], [9.0, 9.0, 9.0]),
        ]
        .concat(),
    )
}

/// Cubic spline rotation: unit key quaternions, non-zero tangents; the result must be normalized.
fn cubic_rotation() -> Channel {
    let t = |x: f32, y: f32, z: f32, w: f32| Vec4::new(x, y, z, w);
    channel(
        Property::Rotation,
        Interpolation::CubicSpline,
        &[0.0, 0.6, 2.0],
        vec![
            t(0.0, 0.0, 0.0, 0.0),
            quat([0.0, 1.0, 0.0], 0.0),
            t(0.6, 1.6, -0.4, 0.2),
            t(-1.0, 2.4, 0.8, -0.6),
            quat([1.0, 1.0, 0.0], 1.1),
            t(0.4, -1.2, 1.8, 0.1),
            t(2.0, 0.4, -1.4, 0.8),
            quat([0.0, 0.0, 1.0], -0.9),
            t(0.0, 0.0, 0.0, 0.0),
        ],
    )
}

#[test]
fn step_holds_each_key_until_the_next() {
    let c = step_translation();
    let times = sample_times(&c, 0.0, 3.5, 71);
    check_against_reference("STEP translation", &c, &times, 1e-6);
    // Spot checks written out: just before and at a key.
    assert_eq!(sample_channel(&c, 0.999, &mut 0), c.values[0]);
    assert_eq!(sample_channel(&c, 1.0, &mut 0), c.values[1]);
    assert_eq!(sample_channel(&c, 2.75, &mut 0), c.values[2]);
}

#[test]
fn linear_translation_interpolates_between_uneven_keys() {
    let c = linear_translation();
    let times = sample_times(&c, -0.5, 2.5, 61);
    check_against_reference("LINEAR translation", &c, &times, 1e-5);
}

#[test]
fn linear_rotation_takes_the_short_arc() {
    let c = linear_rotation_far_apart();
    let q0 = c.values[0].to_array().map(f64::from);
    let q1 = c.values[1].to_array().map(f64::from);
    assert!(dot(q0, q1) < -0.1, "the keys must be more than 90° apart in 4D");
    let times = sample_times(&c, 0.5, 3.5, 61);
    check_against_reference("LINEAR rotation", &c, &times, 1e-5);
    for i in 1..10 {
        let s = f64::from(i) / 10.0;
        let t = 1.0 + 2.0 * s as f32;
        let got = sample_channel(&c, t, &mut 0);
        let short = slerp_as_given(q0, scale(q1, -1.0), s);
        let long = slerp_as_given(q0, q1, s);
        let to_short = distance(got, short, true);
        let to_long = distance(got, long, true);
        assert!(to_short <= 1e-5, "s = {s}: {got} is not the short arc {short:?}");
        assert!(
            to_long > 0.05,
            "s = {s}: {got} is (as a rotation) the long arc {long:?}"
        );
    }
}

#[test]
fn cubic_spline_translation_scales_tangents_by_the_key_interval() {
    let c = cubic_translation();
    let times = sample_times(&c, -0.25, 2.0, 91);
    check_against_reference("CUBICSPLINE translation", &c, &times, 1e-5);

    // The same spline with tangents left unscaled is visibly different, so the check above
    // really tells the two apart.
    let reference = Reference::of_channel(&c);
    let unscaled = |t: f64| {
        let k = (0..3).rev().find(|&k| reference.times[k] <= t).unwrap();
        let s = (t - reference.times[k]) / (reference.times[k + 1] - reference.times[k]);
        let v = &reference.values;
        hermite(v[3 * k + 1], v[3 * k + 2], v[3 * k + 4], v[3 * k + 3], s)
    };
    let biggest_gap = times
        .iter()
        .filter(|&&t| t > 0.0 && t < 1.75)
        .map(|&t| distance(sample_channel(&c, t, &mut 0), unscaled(f64::from(t)), false))
        .fold(0.0, f64::max);
    assert!(
        biggest_gap > 0.1,
        "unscaled tangents give nearly the same curve ({biggest_gap})"
    );
}

#[test]
fn cubic_spline_rotation_is_normalized() {
    let c = cubic_rotation();
    let times = sample_times(&c, -0.5, 2.5, 61);
    // check_against_reference also asserts unit length.
    check_against_reference("CUBICSPLINE rotation", &c, &times, 1e-5);
    // The raw spline between keys is far from unit length, so normalizing matters here.
    let reference = Reference::of_channel(&c);
    let v = &reference.values;
    let off_unit = (0..2)
        .flat_map(|k| (1..10).map(move |i| (k, f64::from(i) / 10.0)))
        .map(|(k, s)| {
            let dt = reference.times[k + 1] - reference.times[k];
            let (p0, m0) = (v[3 * k + 1], scale(v[3 * k + 2], dt));
            let (p1, m1) = (v[3 * k + 4], scale(v[3 * k + 3], dt));
            let raw = hermite(p0, m0, p1, m1, s);
            (dot(raw, raw).sqrt() - 1.0).abs()
        })
        .fold(0.0, f64::max);
    assert!(off_unit > 0.05, "raw spline is nearly unit length ({off_unit})");
}

#[test]
fn values_clamp_before_the_first_and_after_the_last_key() {
    for c in [
        step_translation(),
        linear_translation(),
        linear_rotation_far_apart(),
        cubic_translation(),
        cubic_rotation(),
    ] {
        let first = *c.times.first().unwrap();
        let last = *c.times.last().unwrap();
        let n = c.times.len();
        let value = |k: usize| match c.interpolation {
            Interpolation::CubicSpline => c.values[3 * k + 1],
            _ => c.values[k],
        };
        for t in [first - 100.0, first - 1.0, first - 1e-3, first] {
            let got = sample_channel(&c, t, &mut 0);
            assert!(
                (got - value(0)).abs().max_element() <= 1e-6,
                "{:?} {:?} at {t}: {got} != first key {}",
                c.interpolation,
                c.property,
                value(0)
            );
        }
        for t in [last, last + 1e-3, last + 1.0, last + 100.0] {
            let got = sample_channel(&c, t, &mut (n - 1));
            assert!(
                (got - value(n - 1)).abs().max_element() <= 1e-6,
                "{:?} {:?} at {t}: {got} != last key {}",
                c.interpolation,
                c.property,
                value(n - 1)
            );
        }
    }
}

/// A channel with many unevenly spaced keys, so that hints far from the answer take the
/// binary-search path and near ones the forward scan.
fn many_keys(interpolation: Interpolation, property: Property) -> Channel {
    let n = 40;
    let times: Vec<f32> = (0..n)
        .map(|k| {
            let k = k as f32;
            0.05 * k + 0.002 * k * k
        })
        .collect();
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let values = (0..n * per_key)
        .map(|i| {
            let x = i as f32;
            match property {
                Property::Rotation => quat(
                    [(0.3 * x).sin(), 1.0, (0.7 * x).cos()],
                    0.9 * (0.45 * x).sin() + 0.2 * x,
                ),
                _ => Vec4::new((0.4 * x).sin() * 3.0, (0.9 * x).cos(), 0.1 * x, 0.0),
            }
        })
        .collect();
    channel(property, interpolation, &times, values)
}

/// Deterministic shuffle (a linear congruential generator; no dependency needed).
fn shuffled<T: Copy>(items: &[T], mut seed: u64) -> Vec<T> {
    let mut out = items.to_vec();
    for i in (1..out.len()).rev() {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let j = (seed >> 33) as usize % (i + 1);
        out.swap(i, j);
    }
    out
}

#[test]
fn results_do_not_depend_on_the_hint_or_the_visiting_order() {
    let channels = [
        many_keys(Interpolation::Step, Property::Translation),
        many_keys(Interpolation::Linear, Property::Translation),
        many_keys(Interpolation::Linear, Property::Rotation),
        many_keys(Interpolation::CubicSpline, Property::Scale),
        many_keys(Interpolation::CubicSpline, Property::Rotation),
    ];
    for c in &channels {
        let what = format!("{:?} {:?}", c.interpolation, c.property);
        let n = c.times.len();
        let times = sample_times(c, -0.5, c.times[n - 1] + 0.5, 301);
        check_against_reference(&what, c, &times, 1e-5);
        let fresh: Vec<Vec4> = times.iter().map(|&t| sample_channel(c, t, &mut 0)).collect();

        for start in [0, 1, n / 2, n - 2, n - 1, n + 10, usize::MAX] {
            for (i, &t) in times.iter().enumerate() {
                let mut hint = start;
                assert_eq!(
                    sample_channel(c, t, &mut hint),
                    fresh[i],
                    "{what} at {t} with hint {start}"
                );
            }
        }
        let order: Vec<usize> = (0..times.len()).collect();
        let orders = [
            ("forward", order.clone()),
            ("backward", order.iter().rev().copied().collect()),
            ("shuffled", shuffled(&order, 7)),
            ("shuffled", shuffled(&order, 12345)),
        ];
        for (name, order) in orders {
            let mut hint = 0;
            for i in order {
                assert_eq!(
                    sample_channel(c, times[i], &mut hint),
                    fresh[i],
                    "{what} at {} visited {name}",
                    times[i]
                );
            }
        }
    }
}

#[test]
fn key_interval_brackets_the_time_from_any_hint() {
    let c = many_keys(Interpolation::Linear, Property::Translation);
    let times = &c.times;
    let n = times.len();
    for t in sample_times(&c, -1.0, times[n - 1] + 1.0, 157) {
        for start in [0, 3, n / 2, n - 2, n + 5] {
            let mut hint = start;
            let k = key_interval(times, t, &mut hint);
            assert_eq!(hint, k, "the hint is updated to the answer");
            assert!(k <= n - 2);
            if t >= times[0] && t < times[n - 1] {
                assert!(
                    times[k] <= t && t < times[k + 1],
                    "t = {t} from hint {start}: interval {k} is [{}, {})",
                    times[k],
                    times[k + 1]
                );
            }
        }
    }
}

/// The InterpolationTest clips, read straight from `interpolation_test.bin` with the JSON's
/// accessors, evaluated by the f64 reference and compared with the pose evaluator.
#[test]
fn interpolation_test_clips_match_the_f64_reference() {
    let Some(dir) = shared_rigs() else { return };
    let doc = Doc::open(&dir.join("InterpolationTest.gltf"));
    let rig = common::load_rig(&dir, "InterpolationTest.gltf");
    let animations = doc.array("animations");
    assert_eq!(animations.len(), 9);
    assert_eq!(rig.clips.len(), 9);
    let mut evaluator = PoseBuffers::new(&rig);
    let mut hints = vec![0usize; 4];
    let mut locals = vec![Trs::IDENTITY; rig.nodes.len()];

    for (a, animation) in animations.iter().enumerate() {
        let name = animation["name"].as_str().expect("InterpolationTest names its clips");
        assert_eq!(rig.clips[a].name, name);
        let channels = common::array(animation, "channels");
        assert_eq!(channels.len(), 1, "{name}: one channel");
        let target = &channels[0]["target"];
        let json_node = index(&target["node"], "target node");
        let node = rig_node_of(&rig, &doc.json, json_node);
        let sampler = &animation["samplers"][index(&channels[0]["sampler"], "sampler")];
        let (property, rotation) = match target["path"].as_str().unwrap() {
            "translation" => (Property::Translation, false),
            "rotation" => (Property::Rotation, true),
            "scale" => (Property::Scale, false),
            other => panic!("{name}: unexpected path {other}"),
        };
        let interpolation = match sampler["interpolation"].as_str().unwrap_or("LINEAR") {
            "STEP" => Interpolation::Step,
            "LINEAR" => Interpolation::Linear,
            "CUBICSPLINE" => Interpolation::CubicSpline,
            other => panic!("{name}: unexpected interpolation {other}"),
        };
        let widen = |v: Vec<f64>| {
            let mut out = [0.0; 4];
            out[..v.len()].copy_from_slice(&v);
            out
        };
        let reference = Reference {
            interpolation,
            rotation,
            times: doc
                .read_floats(index(&sampler["input"], "input"))
                .into_iter()
                .map(|t| t[0])
                .collect(),
            values: doc
                .read_floats(index(&sampler["output"], "output"))
                .into_iter()
                .map(widen)
                .collect(),
        };
        let (rest_t, rest_r, rest_s) = json_rest_trs(&doc.json["nodes"][json_node]);

        let first = reference.times[0] as f32;
        let last = *reference.times.last().unwrap() as f32;
        let (from, to) = (first - 0.25, last + 0.25);
        let times: Vec<f32> = (0..37).map(|i| from + (to - from) * i as f32 / 36.0).collect();
        let mut worst = 0.0f64;
        // Forward, then backward (seeking), through the same evaluator.
        for &t in times.iter().chain(times.iter().rev()) {
            evaluator.evaluate(&rig, Some(a), t);
            let local = evaluator.locals[node];
            sample_clip(&rig.nodes, Some(&rig.clips[a]), t, &mut hints, &mut locals);
            assert_eq!(local, locals[node], "{name} at {t}: sample_clip agrees");

            let expected = reference.eval(f64::from(t));
            let with_w = |v: [f64; 3]| [v[0], v[1], v[2], 0.0];
            let (want_t, want_r, want_s) = match property {
                Property::Translation => (expected, rest_r, with_w(rest_s)),
                Property::Rotation => (with_w(rest_t), expected, with_w(rest_s)),
                Property::Scale => (with_w(rest_t), rest_r, expected),
            };
            let off = [
                distance(local.translation.extend(0.0), want_t, false),
                distance(Vec4::from(local.rotation), want_r, true),
                distance(local.scale.extend(0.0), want_s, false),
            ];
            let d = off.iter().copied().fold(0.0, f64::max);
            assert!(
                d <= 1e-5,
                "{name} ({interpolation:?} {property:?}) at t = {t}: local {local:?}, expected \
                 T {want_t:?} R {want_r:?} S {want_s:?} (off by {off:?})"
            );
            worst = worst.max(d);
        }
        println!("{name:<24} {interpolation:?} {property:?}: worst deviation {worst:.2e}");
    }
}

/// A channel of one key holds its value at every time.
#[test]
fn a_single_key_holds_everywhere() {
    let c = channel(
        Property::Scale,
        Interpolation::CubicSpline,
        &[0.5],
        vec![Vec4::ONE, Vec4::new(2.0, 3.0, 4.0, 0.0), Vec4::ONE],
    );
    for t in [-1.0, 0.0, 0.5, 0.7, 10.0] {
        assert_eq!(sample_channel(&c, t, &mut 0), c.values[1]);
    }
}

/// Spline key values of a rotation that are not unit length: every sampled rotation is still a
/// unit quaternion (as `sample_channel` promises), including before the first key, after the
/// last one, and for a single-key channel.
#[test]
fn cubic_spline_rotation_keys_off_unit_length_still_sample_unit_rotations() {
    let zero = Vec4::ZERO;
    let c = channel(
        Property::Rotation,
        Interpolation::CubicSpline,
        &[0.5, 1.5],
        vec![
            zero,
            quat([1.0, 0.0, 0.0], 0.5) * 0.8,
            Vec4::new(0.2, 0.1, 0.0, 0.0),
            Vec4::new(0.0, -0.3, 0.1, 0.0),
            quat([0.0, 1.0, 1.0], 1.2) * 1.25,
            zero,
        ],
    );
    let times = sample_times(&c, -0.5, 2.5, 31);
    // check_against_reference asserts unit length at every time.
    check_against_reference("CUBICSPLINE rotation with off-unit keys", &c, &times, 1e-5);
    let single = channel(
        Property::Rotation,
        Interpolation::CubicSpline,
        &[0.5],
        vec![zero, quat([0.0, 0.0, 1.0], 0.7) * 0.9, zero],
    );
    check_against_reference("single-key CUBICSPLINE rotation", &single, &[0.0, 0.5, 1.0], 1e-6);
}
