use super::*;
use crate::rig::{Channel, Interpolation, Property};
use glam::Vec4;

fn channel(property: Property, interpolation: Interpolation, times: &[f32], values: &[Vec4]) -> Channel {
    Channel {
        node: 0,
        property,
        interpolation,
        times: times.to_vec(),
        values: values.to_vec(),
    }
}

fn about_z(degrees: f32) -> Vec4 {
    Quat::from_rotation_z(degrees.to_radians()).into()
}

#[test]
fn the_interpolation_path_steps_runs_straight_or_follows_the_hermite_curve() {
    let values = [Vec4::ZERO, Vec4::X, Vec4::ZERO];
    let times = [0.0, 1.0, 3.0];
    let at = |path: &[Sample]| path.iter().map(|s| (s.time, s.value[0])).collect::<Vec<_>>();
    let step = interpolation_path(&channel(Property::Translation, Interpolation::Step, &times, &values), 8);
    assert_eq!(at(&step), [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (3.0, 1.0), (3.0, 0.0)]);
    let linear = interpolation_path(
        &channel(Property::Translation, Interpolation::Linear, &times, &values),
        8,
    );
    assert_eq!(at(&linear), [(0.0, 0.0), (1.0, 1.0), (3.0, 0.0)]);
    // From 0 to 1 in a second with flat tangents: the Hermite basis gives 3s² − 2s³.
    let flat = [Vec4::ZERO, Vec4::ZERO, Vec4::ZERO, Vec4::ZERO, Vec4::X, Vec4::ZERO];
    let cubic = channel(Property::Translation, Interpolation::CubicSpline, &[0.0, 1.0], &flat);
    let path = interpolation_path(&cubic, 4);
    assert_eq!(path.len(), 5);
    for (k, sample) in path.iter().enumerate() {
        let s = k as f64 / 4.0;
        assert_eq!(f64::from(sample.time), s);
        let hermite = 3.0 * s * s - 2.0 * s * s * s;
        assert!((f64::from(sample.value[0]) - hermite).abs() < 1e-6, "{k}: {sample:?}");
    }
}

#[test]
fn key_flags_mark_flips_jumps_past_the_threshold_and_overshoots() {
    // A step of 20°: a jump at a 15° threshold, none at 30°.
    let step = channel(
        Property::Rotation,
        Interpolation::Step,
        &[0.0, 1.0],
        &[about_z(0.0), about_z(20.0)],
    );
    let flags = key_flags(&step, 15.0);
    assert_eq!(flags.len(), 1);
    let (key, KeyFlag::Jump(degrees)) = flags[0] else {
        panic!("{flags:?}")
    };
    assert_eq!(key, 1);
    assert!((degrees - 20.0).abs() < 1e-3, "{degrees}");
    assert!(key_flags(&step, 30.0).is_empty());
    // 170° then 190° stored negated: a flip, and at 6.7° a frame no jump.
    let flip = channel(
        Property::Rotation,
        Interpolation::Linear,
        &[0.0, 0.1],
        &[about_z(170.0), -about_z(190.0)],
    );
    assert_eq!(key_flags(&flip, 30.0), [(1, KeyFlag::HemisphereFlip)]);
    // A cubic tangent of 10 per second out of 0 towards 1 overshoots.
    let steep = [Vec4::ZERO, Vec4::ZERO, 10.0 * Vec4::X, Vec4::ZERO, Vec4::X, Vec4::ZERO];
    let overshoot = channel(Property::Translation, Interpolation::CubicSpline, &[0.0, 1.0], &steep);
    assert!(
        matches!(key_flags(&overshoot, 30.0)[..], [(1, KeyFlag::CubicOvershoot(past))] if past > OVERSHOOT_FRACTION)
    );
}

#[test]
fn keys_read_in_a_rotation_view_lie_on_the_unwrapped_sampled_curve() {
    let flip = channel(
        Property::Rotation,
        Interpolation::Linear,
        &[0.0, 1.0],
        &[about_z(170.0), -about_z(190.0)],
    );
    let clip = Clip {
        name: "turn".into(),
        duration: 1.0,
        channels: vec![flip],
        source: None,
    };
    let curve = &joint_curves(&clip, 0, 10.0)[0];
    let reading = Reading {
        property: Property::Rotation,
        view: RotationView::AxisZ,
        rest: Quat::IDENTITY,
    };
    let read = reading.curve(curve);
    for (k, sample) in read.samples.iter().enumerate() {
        assert!((sample[0] - (170.0 + 2.0 * k as f64)).abs() < 1e-3, "{k}: {sample:?}");
    }
    // Alone the second key reads −170°; on the curve it is 190°.
    assert!((reading.value(curve.keys[1].value, None)[0] + 170.0).abs() < 1e-3);
    assert!((read.keys[1][0] - 190.0).abs() < 1e-3, "{:?}", read.keys);
    // Translation is read as stored.
    let translation = Reading {
        property: Property::Translation,
        ..reading
    };
    assert_eq!(translation.components(), ["x", "y", "z"]);
    assert_eq!(translation.value([1.0, 2.0, 3.0, 0.0], None), [1.0, 2.0, 3.0, 0.0]);
}
