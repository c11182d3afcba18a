use super::*;
use crate::names::Named;
use strum::VariantArray;

/// The rotation turning `angles[i]` degrees about the axis named by `order[i]`, one after the
/// other about the turned axes (intrinsic), composed in f64 from single-axis quaternions.
fn intrinsic(order: &str, angles: [f64; 3]) -> DQuat {
    order
        .chars()
        .zip(angles)
        .map(|(axis, degrees)| {
            let axis = match axis {
                'x' => DVec3::X,
                'y' => DVec3::Y,
                _ => DVec3::Z,
            };
            DQuat::from_axis_angle(axis, degrees.to_radians())
        })
        .fold(DQuat::IDENTITY, |q, turn| q * turn)
}

fn stored(q: DQuat) -> [f32; 4] {
    q.to_array().map(|v| v as f32)
}

fn euler_views() -> impl Iterator<Item = (RotationView, String)> {
    RotationView::VARIANTS
        .iter()
        .filter(|v| v.name().starts_with("euler-"))
        .map(|&v| (v, v.name()["euler-".len()..].to_string()))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 2e-3
}

#[test]
fn hand_worked_rotations_read_as_their_euler_angles() {
    // Rz(90°)·Rx(30°) and Ry(30°)·Rz(90°) are both [[0, −c, s], [1, 0, 0], [0, s, c]] with
    // c = cos 30°, s = sin 30°.
    let q = DQuat::from_rotation_z(90f64.to_radians()) * DQuat::from_rotation_x(30f64.to_radians());
    let zxy = RotationView::EulerZxy.values(stored(q), Quat::IDENTITY, None);
    assert!(
        close(zxy[0], 90.0) && close(zxy[1], 30.0) && close(zxy[2], 0.0),
        "{zxy:?}"
    );
    let xyz = RotationView::EulerXyz.values(stored(q), Quat::IDENTITY, None);
    assert!(
        close(xyz[0], 0.0) && close(xyz[1], 30.0) && close(xyz[2], 90.0),
        "{xyz:?}"
    );
    // A quarter turn about x alone, in an order that names x last.
    let quarter = DQuat::from_rotation_x(90f64.to_radians());
    let zyx = RotationView::EulerZyx.values(stored(quarter), Quat::IDENTITY, None);
    assert!(
        close(zyx[0], 0.0) && close(zyx[1], 0.0) && close(zyx[2], 90.0),
        "{zyx:?}"
    );
    assert_eq!(RotationView::EulerZyx.components(), ["z", "y", "x"]);
}

#[test]
fn euler_angles_round_trip_through_the_quaternion_in_every_order() {
    let mut checked = 0;
    for (view, order) in euler_views() {
        for a in [-170.0, -95.0, -30.0, 0.0, 45.0, 120.0, 179.0] {
            for b in [-80.0, -45.0, 0.0, 10.0, 60.0, 85.0] {
                for c in [-150.0, -60.0, 0.0, 25.0, 90.0, 175.0] {
                    let q = intrinsic(&order, [a, b, c]);
                    let read = view.values(stored(q), Quat::IDENTITY, None);
                    for (got, want) in read.iter().zip([a, b, c]) {
                        assert!(close(*got, want), "{order} {:?}: {read:?}", [a, b, c]);
                    }
                    // And back: the angles read make the same rotation.
                    let again = intrinsic(&order, [read[0], read[1], read[2]]);
                    assert!(again.dot(q).abs() > 1.0 - 1e-9, "{order} {:?}", [a, b, c]);
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 6 * 7 * 6 * 6);
}

#[test]
fn unwrapped_euler_angles_go_on_past_180_and_past_the_middle_axis_limit() {
    // About z from 170° to 190°: the z angle keeps rising instead of jumping to −170°.
    let spin = (0..=20).map(|k| stored(DQuat::from_rotation_z((170.0 + k as f64).to_radians())));
    let values = continuous_values(RotationView::EulerXyz, Quat::IDENTITY, spin);
    for (k, v) in values.iter().enumerate() {
        assert!(close(v[2], 170.0 + k as f64) && close(v[0], 0.0), "{k}: {v:?}");
    }
    // About y from 80° to 100°: the middle angle of x-y-z reads at most 90° on its own (the
    // other triple takes over, x and z at 180°); unwrapped it goes on to 100° with x, z at 0.
    let alone = RotationView::EulerXyz.values(
        stored(DQuat::from_rotation_y(100f64.to_radians())),
        Quat::IDENTITY,
        None,
    );
    assert!(close(alone[1], 80.0), "{alone:?}");
    let nod = (0..=20).map(|k| stored(DQuat::from_rotation_y((80.0 + k as f64).to_radians())));
    let values = continuous_values(RotationView::EulerXyz, Quat::IDENTITY, nod);
    for (k, v) in values.iter().enumerate() {
        assert!(
            close(v[1], 80.0 + k as f64) && close(v[0], 0.0) && close(v[2], 0.0),
            "{k}: {v:?}"
        );
    }
    // The same on every order: each triple read makes the rotation it was read from.
    for (view, order) in euler_views() {
        let path: Vec<DQuat> = (0..=72)
            .map(|k| intrinsic("xyz", [5.0 * k as f64, 3.0 * k as f64, -7.0 * k as f64]))
            .collect();
        let values = continuous_values(view, Quat::IDENTITY, path.iter().map(|&q| stored(q)));
        for (k, (v, q)) in values.iter().zip(&path).enumerate() {
            assert!(
                intrinsic(&order, [v[0], v[1], v[2]]).dot(*q).abs() > 1.0 - 1e-9,
                "{order} {k}"
            );
            if k > 0 {
                let step = (0..3).map(|i| (v[i] - values[k - 1][i]).abs()).fold(0.0, f64::max);
                assert!(step < 60.0, "{order} {k}: {:?} → {v:?}", values[k - 1]);
            }
        }
    }
}

#[test]
fn angles_about_an_axis_are_the_twist_about_it() {
    // The twist about z of Rz(30°)·Rx(90°) is 2·atan2(sin 15° cos 45°, cos 15° cos 45°) = 30°.
    let q = DQuat::from_rotation_z(30f64.to_radians()) * DQuat::from_rotation_x(90f64.to_radians());
    assert!(close(
        RotationView::AxisZ.values(stored(q), Quat::IDENTITY, None)[0],
        30.0
    ));
    let quarter = stored(DQuat::from_rotation_x(90f64.to_radians()));
    assert!(close(
        RotationView::AxisX.values(quarter, Quat::IDENTITY, None)[0],
        90.0
    ));
    assert!(close(RotationView::AxisY.values(quarter, Quat::IDENTITY, None)[0], 0.0));
    // The joint's own axes: rest Rz(90°), turned 40° about its own x away from it.
    let rest = Quat::from_rotation_z(90f32.to_radians());
    let turned = stored(DQuat::from_rotation_z(90f64.to_radians()) * DQuat::from_rotation_x(40f64.to_radians()));
    assert!(close(RotationView::LocalX.values(turned, rest, None)[0], 40.0));
    assert!(close(RotationView::LocalY.values(turned, rest, None)[0], 0.0));
    assert!(close(RotationView::LocalZ.values(turned, rest, None)[0], 0.0));
    assert!(close(RotationView::AxisZ.values(turned, rest, None)[0], 90.0));
    // A spin about x through 180° unwraps, and the sign of the quaternion does not matter.
    let spin = (0..=30).map(|k| {
        let q = stored(DQuat::from_rotation_x((160.0 + 2.0 * k as f64).to_radians()));
        if k % 2 == 0 { q } else { q.map(|v| -v) }
    });
    for (k, v) in continuous_values(RotationView::AxisX, Quat::IDENTITY, spin)
        .iter()
        .enumerate()
    {
        assert!(close(v[0], 160.0 + 2.0 * k as f64), "{k}: {v:?}");
    }
    assert_eq!(unwrap_degrees(-170.0, 180.0), 190.0);
    assert_eq!(unwrap_degrees(725.0, 0.0), 5.0);
}

#[test]
fn the_quaternion_view_gives_the_stored_components() {
    let flipped = [0.0, 0.0, -0.6, -0.8];
    assert_eq!(
        RotationView::Quat.values(flipped, Quat::IDENTITY, Some([0.0, 0.0, 0.6, 0.8])),
        flipped.map(f64::from)
    );
    assert_eq!(RotationView::Quat.components().len(), 4);
}

#[test]
fn the_view_names_users_type_are_kept() {
    let names = [
        "euler-xyz",
        "euler-xzy",
        "euler-yxz",
        "euler-yzx",
        "euler-zxy",
        "euler-zyx",
        "axis-x",
        "axis-y",
        "axis-z",
        "local-x",
        "local-y",
        "local-z",
        "quat",
    ];
    assert_eq!(RotationView::names().collect::<Vec<_>>(), names);
}
