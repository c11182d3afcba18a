use super::*;
use std::f32::consts::{FRAC_PI_2, PI};

const DEGREE: f32 = PI / 180.0;

fn down_z_at(x: f32, y: f32) -> Ray {
    Ray {
        origin: Vec3::new(x, y, 5.0),
        direction: Vec3::NEG_Z,
    }
}

const XY_RING: Ring = Ring {
    center: Vec3::ZERO,
    axis: Vec3::Z,
    radius: 1.0,
};

#[test]
fn a_ray_down_z_hits_the_xy_ring_at_thirty_degrees() {
    let ray = down_z_at(30f32.to_radians().cos(), 0.5);
    let (distance, angle) = ray_ring_hit(ray.origin, ray.direction, Vec3::ZERO, Vec3::Z, 1.0, 0.05).unwrap();
    assert!((distance - 5.0).abs() < 1e-6);
    assert!((angle - 30.0 * DEGREE).abs() < 1e-6, "angle {}", angle / DEGREE);

    // 0.2 outside the rim: caught by a tolerance of 0.25, missed by one of 0.1.
    let outside = down_z_at(1.2, 0.0);
    assert!(XY_RING.hit(outside, 0.1).is_none());
    let (_, angle) = XY_RING.hit(outside, 0.25).unwrap();
    assert!(angle.abs() < 1e-6);
    // A ray going away from the plane never hits it.
    assert_eq!(
        ray_plane_hit(Vec3::new(0.0, 0.0, 5.0), Vec3::Z, Vec3::ZERO, Vec3::Z),
        None
    );
    assert_eq!(
        ray_plane_hit(Vec3::new(1.0, 0.0, 5.0), Vec3::X, Vec3::ZERO, Vec3::Z),
        None
    );
}

#[test]
fn an_edge_on_ring_is_hit_where_the_flattened_ray_crosses_it_first() {
    // Looking along +Y from y = −5: the XY ring is a line; the ray crosses its rim at (0, −1, 0) first.
    let ray = Ray {
        origin: Vec3::new(0.0, -5.0, 0.0),
        direction: Vec3::Y,
    };
    let (distance, angle) = XY_RING.hit(ray, 0.1).unwrap();
    assert!((distance - 4.0).abs() < 1e-6);
    assert!((angle + FRAC_PI_2).abs() < 1e-6);
    // 0.05 above the plane is within 0.1; 0.2 above is not.
    let above = |height: f32| Ray {
        origin: Vec3::new(0.0, -5.0, height),
        ..ray
    };
    assert!(XY_RING.hit(above(0.05), 0.1).is_some());
    assert!(XY_RING.hit(above(0.2), 0.1).is_none());
    // Passing 0.05 outside the rim (x = 1.05) grazes it at (1, 0, 0).
    let grazing = Ray {
        origin: Vec3::new(1.05, -5.0, 0.0),
        ..ray
    };
    let (distance, angle) = XY_RING.hit(grazing, 0.1).unwrap();
    assert!((distance - 5.0).abs() < 1e-6);
    assert!(angle.abs() < 1e-6);
}

#[test]
fn drag_angle_is_signed_about_the_axis_and_takes_the_short_way() {
    let at_degrees = |degrees: f32, radius: f32| {
        let a = degrees * DEGREE;
        down_z_at(radius * a.cos(), radius * a.sin())
    };
    // From 30° on the rim to 75° further out: +45° whatever the radius of the hit.
    let turned = drag_angle(&XY_RING, at_degrees(30.0, 1.0), at_degrees(75.0, 2.0));
    assert!((turned - 45.0 * DEGREE).abs() < 1e-5);
    let back = drag_angle(&XY_RING, at_degrees(75.0, 1.0), at_degrees(30.0, 1.0));
    assert!((back + 45.0 * DEGREE).abs() < 1e-5);
    // 170° → −170° is 20° counter-clockwise, not 340° clockwise.
    let across = drag_angle(&XY_RING, at_degrees(170.0, 1.0), at_degrees(-170.0, 1.0));
    assert!((across - 20.0 * DEGREE).abs() < 1e-5);
    // Seen from below the same drag looks clockwise on screen, but about the ring's axis it is still +45°:
    // the angle is about the axis, not the screen.
    let from_below = |degrees: f32| {
        let a = degrees * DEGREE;
        Ray {
            origin: Vec3::new(a.cos(), a.sin(), -5.0),
            direction: Vec3::Z,
        }
    };
    assert!((drag_angle(&XY_RING, from_below(30.0), from_below(75.0)) - 45.0 * DEGREE).abs() < 1e-5);
}

#[test]
fn an_edge_on_drag_follows_the_rims_tangent() {
    // Grabbed at (0, −1, 0) looking along +Y; the tangent there (Z × −Y) is +X. Moving the cursor 0.1
    // along +X drags the rim 0.1 round a radius of 1: +0.1 rad; radius 2 halves it.
    let start = Ray {
        origin: Vec3::new(0.0, -5.0, 0.0),
        direction: Vec3::Y,
    };
    let moved = |dx: f32, dz: f32| Ray {
        origin: Vec3::new(dx, -5.0, dz),
        ..start
    };
    assert!((drag_angle(&XY_RING, start, moved(0.1, 0.0)) - 0.1).abs() < 1e-6);
    assert!((drag_angle(&XY_RING, start, moved(-0.1, 0.0)) + 0.1).abs() < 1e-6);
    // Moving along the axis (up the screen) does not turn the ring.
    assert!(drag_angle(&XY_RING, start, moved(0.0, 0.3)).abs() < 1e-6);
    let wide = Ring { radius: 2.0, ..XY_RING };
    assert!((drag_angle(&wide, start, moved(0.1, 0.0)) - 0.05).abs() < 1e-6);
}

#[test]
fn snapping_rounds_to_the_nearest_step_both_ways() {
    let step = SNAP_STEP_RADIANS;
    let cases = [
        (7.4, 5.0),
        (7.6, 10.0),
        (-7.4, -5.0),
        (-7.6, -10.0),
        (2.4, 0.0),
        (-2.4, 0.0),
        (12.6, 15.0),
        (-12.4, -10.0),
    ];
    for (degrees, expected) in cases {
        let snapped = snap(degrees * DEGREE, step) / DEGREE;
        assert!(
            (snapped - expected).abs() < 1e-4,
            "{degrees}° snapped to {snapped}°, expected {expected}°"
        );
    }
    assert_eq!(snap(0.3, 0.0), 0.3);
}

#[test]
fn the_gizmo_picks_the_ring_nearest_along_the_ray() {
    let gizmo = RotationGizmo {
        center: Vec3::ZERO,
        radius: 1.0,
        axes: axis_frame(GizmoSpace::World, Quat::IDENTITY, Quat::IDENTITY),
        view_direction: Vec3::new(0.0, 0.0, -1.0),
    };
    // Down −Z through (0.6, 0.8, ·): on the Z ring's rim; the X and Y rings (edge-on) are crossed 0.6 and
    // 0.8 off their planes, the view ring is 0.2 further out.
    let on_z_ring = down_z_at(0.6, 0.8);
    let (kind, angle) = pick_ring(&gizmo, on_z_ring, 0.05).unwrap();
    assert_eq!(kind, RingKind::Z);
    assert!((angle - 0.8f32.atan2(0.6)).abs() < 1e-6);
    // Through (0, 0.6, ·): the X ring (the YZ circle, edge-on) is crossed at z = 0.8, distance 4.2,
    // nearer than anything else.
    let (kind, _) = pick_ring(&gizmo, down_z_at(0.0, 0.6), 0.05).unwrap();
    assert_eq!(kind, RingKind::X);
    // Just outside the axis rings, on the larger view ring.
    let (kind, _) = pick_ring(&gizmo, down_z_at(1.2, 0.0), 0.05).unwrap();
    assert_eq!(kind, RingKind::View);
    assert_eq!(pick_ring(&gizmo, down_z_at(1.5, 1.5), 0.05), None);
}

#[test]
fn axis_frames_follow_the_chosen_space() {
    let quarter_about_z = Quat::from_rotation_z(FRAC_PI_2);
    let quarter_about_x = Quat::from_rotation_x(FRAC_PI_2);
    let close = |a: [Vec3; 3], b: [Vec3; 3]| a.iter().zip(&b).all(|(a, b)| (*a - *b).length() < 1e-6);
    assert!(close(
        axis_frame(GizmoSpace::Local, quarter_about_z, quarter_about_x),
        [Vec3::Y, Vec3::NEG_X, Vec3::Z]
    ));
    assert!(close(
        axis_frame(GizmoSpace::Parent, quarter_about_z, quarter_about_x),
        [Vec3::X, Vec3::Z, Vec3::NEG_Y]
    ));
    assert!(close(
        axis_frame(GizmoSpace::World, quarter_about_z, quarter_about_x),
        [Vec3::X, Vec3::Y, Vec3::Z]
    ));
}

#[test]
fn screen_distance_to_a_segment() {
    let (a, b) = (Vec2::ZERO, Vec2::new(10.0, 0.0));
    assert_eq!(distance_to_segment_on_screen(Vec2::new(5.0, 3.0), a, b), 3.0);
    // Past the end: distance to the end point, a 3-4-5 triangle.
    assert_eq!(distance_to_segment_on_screen(Vec2::new(13.0, 4.0), a, b), 5.0);
    assert_eq!(distance_to_segment_on_screen(Vec2::new(-3.0, -4.0), a, b), 5.0);
    // A bone seen end-on is a point.
    assert_eq!(distance_to_segment_on_screen(Vec2::new(3.0, 4.0), a, a), 5.0);
}

#[test]
fn picking_prefers_the_bone_nearer_the_camera() {
    let bones = [
        // Right under the cursor but far from the camera.
        (Vec2::new(0.0, 0.0), Vec2::new(10.0, 0.0), 5.0),
        // 0.8 px off, nearer the camera.
        (Vec2::new(0.0, 1.0), Vec2::new(10.0, 1.0), 2.0),
        // Nearest of all, but 4.8 px away: outside the radius.
        (Vec2::new(0.0, 5.0), Vec2::new(10.0, 5.0), 0.5),
    ];
    let cursor = Vec2::new(5.0, 0.2);
    assert_eq!(pick_bone(&bones, cursor, 2.0), Some(1));
    assert_eq!(pick_bone(&bones, cursor, 5.0), Some(2));
    assert_eq!(pick_bone(&bones, cursor, 0.5), Some(0));
    assert_eq!(pick_bone(&bones, Vec2::new(50.0, 50.0), 2.0), None);
    // Equally deep: the nearer one on screen.
    let twins = [bones[0], (bones[1].0, bones[1].1, 5.0)];
    assert_eq!(pick_bone(&twins, cursor, 2.0), Some(0));
}
#[test]
fn a_ring_drag_counts_every_turn() {
    let at_degrees = |degrees: f32| {
        let a = degrees * DEGREE;
        down_z_at(a.cos(), a.sin())
    };
    let mut drag = RingDrag::new(XY_RING, at_degrees(0.0));
    // Round by quarter turns to three quarters: 270°, where drag_angle alone would say −90°.
    for degrees in [45.0, 90.0, 135.0, 180.0, 225.0, 270.0] {
        drag.update(at_degrees(degrees));
    }
    assert!(
        (drag.turned() - 270.0 * DEGREE).abs() < 1e-4,
        "{}",
        drag.turned() / DEGREE
    );
    assert!((drag_angle(&XY_RING, at_degrees(0.0), at_degrees(270.0)) + 90.0 * DEGREE).abs() < 1e-4);
    // And back the other way past the start: −30°.
    for degrees in [180.0, 90.0, 0.0, -30.0] {
        drag.update(at_degrees(degrees));
    }
    assert!((drag.turned() + 30.0 * DEGREE).abs() < 1e-4);
}

#[test]
fn the_cursor_going_up_from_the_right_of_a_point_is_a_counter_clockwise_quarter() {
    let center = Vec2::new(10.0, 10.0);
    // Screen y grows downwards: (20, 10) → (10, 0) goes from right of the centre to above it.
    assert!((screen_turn(center, Vec2::new(20.0, 10.0), Vec2::new(10.0, 0.0)) - FRAC_PI_2).abs() < 1e-6);
    assert!((screen_turn(center, Vec2::new(20.0, 10.0), Vec2::new(10.0, 20.0)) + FRAC_PI_2).abs() < 1e-6);
}

#[test]
fn an_override_turned_about_a_world_axis_turns_the_joint_in_the_world() {
    // Under a quarter about Z, world X is −Y in the override's frame: a quarter about X is one about −Y.
    let base = Quat::from_rotation_z(FRAC_PI_2);
    let turned = rotate_override(Quat::IDENTITY, base, Vec3::X, FRAC_PI_2);
    assert!(turned.dot(Quat::from_rotation_y(-FRAC_PI_2)).abs() > 1.0 - 1e-6);
    // On top of an override already there: the world rotation is turned on the left.
    let existing = Quat::from_rotation_x(0.4);
    let turned = rotate_override(existing, base, Vec3::Y, 0.7);
    let expected_world = Quat::from_rotation_y(0.7) * base * existing;
    assert!((base * turned).dot(expected_world).abs() > 1.0 - 1e-6);
}

#[test]
fn euler_readouts_stay_on_the_side_they_were_on_past_ninety_degrees() {
    // 100° about Y alone: the decomposition keeping y within ±90° says (180°, 80°, 180°).
    let past = Quat::from_rotation_y(100.0 * DEGREE);
    let plain = euler_degrees_near(past, Vec3::new(180.0, 80.0, 180.0));
    assert!((plain - Vec3::new(180.0, 80.0, 180.0)).length() < 1e-3, "{plain}");
    // Coming from 95° about Y the read-out goes on to 100°, not half a turn away.
    let near = euler_degrees_near(past, Vec3::new(0.0, 95.0, 0.0));
    assert!((near - Vec3::new(0.0, 100.0, 0.0)).length() < 1e-3, "{near}");
    // Both are the same rotation.
    for degrees in [plain, near] {
        let r = degrees * DEGREE;
        let q = Quat::from_euler(glam::EulerRot::XYZ, r.x, r.y, r.z);
        assert!(q.dot(past).abs() > 1.0 - 1e-6);
    }
    assert_eq!(wrap_degrees(190.0), -170.0);
    assert_eq!(wrap_degrees(-180.0), 180.0);
}

#[test]
fn a_world_move_in_a_scaled_turned_parent_is_undone_by_its_matrix() {
    // A parent scaled by 0.01 and turned a quarter about Z: world +X is −Y in its space, 100 times longer.
    let parent = Mat4::from_scale_rotation_translation(
        Vec3::splat(0.01),
        Quat::from_rotation_z(FRAC_PI_2),
        Vec3::new(3.0, 4.0, 5.0),
    );
    let local = parent_space_delta(&parent, Vec3::X);
    assert!((local - Vec3::new(0.0, -100.0, 0.0)).length() < 1e-3, "{local}");
    assert!((world_rotation(&parent).dot(Quat::from_rotation_z(FRAC_PI_2))).abs() > 1.0 - 1e-6);
    // 40° field of view, 10 away, 500 points tall: 2·10·tan 20° / 500.
    assert!((world_per_point(10.0, 40.0 * DEGREE, 500.0) - 0.014_558_8).abs() < 1e-6);
}
