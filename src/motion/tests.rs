use super::*;
use crate::rig::{Channel, Clip, Interpolation, Node, Property, Trs};
use glam::{Vec3, Vec4};

pub(super) fn node(name: &str, parent: Option<usize>, translation: Vec3) -> Node {
    Node {
        name: name.into(),
        parent,
        rest: Trs {
            translation,
            ..Trs::IDENTITY
        },
    }
}

pub(super) fn linear(node: usize, property: Property, times: &[f32], values: &[Vec4]) -> Channel {
    Channel {
        node,
        property,
        interpolation: Interpolation::Linear,
        times: times.to_vec(),
        values: values.to_vec(),
    }
}

pub(super) fn clip(name: &str, channels: Vec<Channel>) -> Clip {
    let duration = channels
        .iter()
        .filter_map(|c| c.times.last().copied())
        .fold(0.0, f32::max);
    Clip {
        name: name.into(),
        duration,
        channels,
        source: None,
    }
}

#[test]
fn skeleton_bounds_cover_the_rest_pose_and_every_clip() {
    // A root walking 2 along x in one clip and sinking 3 in another, with a child 1 above it.
    let rig = Rig {
        nodes: vec![node("root", None, Vec3::ZERO), node("head", Some(0), Vec3::Y)],
        clips: vec![
            clip(
                "walk",
                vec![linear(
                    0,
                    Property::Translation,
                    &[0.0, 1.0],
                    &[Vec4::ZERO, Vec4::new(2.0, 0.0, 0.0, 0.0)],
                )],
            ),
            clip(
                "sink",
                vec![linear(
                    0,
                    Property::Translation,
                    &[0.0, 0.5],
                    &[Vec4::ZERO, Vec4::new(0.0, -3.0, 0.0, 0.0)],
                )],
            ),
        ],
        ..Rig::default()
    };
    let bounds = skeleton_bounds(&rig);
    assert!((bounds.min - Vec3::new(0.0, -3.0, 0.0)).length() < 1e-5, "{bounds:?}");
    assert!((bounds.max - Vec3::new(2.0, 1.0, 0.0)).length() < 1e-5, "{bounds:?}");
}

fn v(x: f32, y: f32, z: f32) -> Vec4 {
    Vec4::new(x, y, z, 0.0)
}

#[test]
fn a_loop_whose_last_key_is_turned_reports_the_turn_at_its_seam() {
    // Hips 1 above the ground with a leg straight down (the rig is 1 high) and an arm 1 to the
    // side; the hips turn 10° about y by the last key.
    let turn = glam::Quat::from_rotation_y(10f32.to_radians());
    let rig = Rig {
        nodes: vec![
            node("hips", None, Vec3::Y),
            node("arm", Some(0), Vec3::X),
            node("leg", Some(0), -Vec3::Y),
        ],
        clips: vec![clip(
            "turn",
            vec![linear(0, Property::Rotation, &[0.0, 1.0], &[Vec4::W, turn.into()])],
        )],
        ..Rig::default()
    };
    let report = check_motion(&rig, &[], &MotionOptions::default());
    assert!((report.rig_height - 1.0).abs() < 1e-6);
    let seam = &report.clips[0];
    assert!(seam.loops);
    // The arm's tip moves along the chord of a 10° arc of radius 1.
    let chord = 2.0 * 5f64.to_radians().sin();
    assert!((seam.seam_position_error as f64 - chord).abs() < 1e-5, "{seam:?}");
    assert!((seam.seam_rotation_error_deg - 10.0).abs() < 1e-3, "{seam:?}");
    assert_eq!(seam.seam_worst_joint.as_deref(), Some("arm"));
    assert_eq!(seam.seam_source_joint.as_deref(), Some("hips"));
    assert!((seam.seam_source_rotation_deg - 10.0).abs() < 1e-3, "{seam:?}");
    assert!(seam.root.in_place);
    let limits = MotionThresholds::default();
    assert_eq!(
        seam.violations(&limits).len(),
        2,
        "position and rotation over their limits"
    );
    let one_shot = MotionOptions {
        one_shot: vec!["turn".into()],
        ..MotionOptions::default()
    };
    let report = check_motion(&rig, &[], &one_shot);
    assert!(!report.clips[0].loops);
    assert!(
        report.clips[0].violations(&limits).is_empty(),
        "a one-shot clip's seam is not checked"
    );
}

#[test]
fn a_break_in_the_spine_is_named_where_it_is_not_at_the_hand_it_carries() {
    // Hips, spine, spine1, arm and hand in a row; spine1 turns 30° at the last key and the hand
    // turns back a little, so the hand's world rotation jumps 30° and moves the most, while
    // spine1's own rotation jumps 30° and the hand's 2°.
    let break_turn = glam::Quat::from_rotation_z(30f32.to_radians());
    let hand_turn = glam::Quat::from_rotation_x(2f32.to_radians());
    let rig = Rig {
        nodes: vec![
            node("hips", None, Vec3::Y),
            node("spine", Some(0), Vec3::Y * 0.2),
            node("spine1", Some(1), Vec3::Y * 0.2),
            node("arm", Some(2), Vec3::X * 0.3),
            node("hand", Some(3), Vec3::X * 0.3),
            node("leg", Some(0), -Vec3::Y),
        ],
        clips: vec![clip(
            "idle",
            vec![
                linear(2, Property::Rotation, &[0.0, 1.0], &[Vec4::W, break_turn.into()]),
                linear(4, Property::Rotation, &[0.0, 1.0], &[Vec4::W, hand_turn.into()]),
            ],
        )],
        ..Rig::default()
    };
    let seam = &check_motion(&rig, &[], &MotionOptions::default()).clips[0];
    assert_eq!(seam.seam_worst_joint.as_deref(), Some("hand"));
    assert_eq!(seam.seam_source_joint.as_deref(), Some("spine1"));
    assert!((seam.seam_source_rotation_deg - 30.0).abs() < 1e-3, "{seam:?}");
    let violations = seam.violations(&MotionThresholds::default()).join("\n");
    assert!(violations.contains("comes from spine1"), "{violations}");
}

/// Hips walking 1 per second along x for 3 s over a two-bone leg whose foot is planted at the
/// origin for 1.5 s (dragged `drag` along x during the first second), lifted 1 high at 2 s and
/// put down again at 3 s.
fn walking_leg(drag: f32) -> Rig {
    // The foot's local translation is its world place less the hips' (x = t) and the knee's
    // offset (0.5 below the hips, which are 1 above the ground).
    let foot_keys = [
        v(0.0, -0.5, 0.0),
        v(drag - 1.0, -0.5, 0.0),
        v(drag - 1.5, -0.5, 0.0),
        v(drag - 2.0, 0.5, 0.0),
        v(0.0, -0.5, 0.0),
    ];
    Rig {
        nodes: vec![
            node("hips", None, Vec3::Y),
            node("knee", Some(0), Vec3::new(0.0, -0.5, 0.0)),
            node("LeftFoot", Some(1), Vec3::new(0.0, -0.5, 0.0)),
        ],
        clips: vec![clip(
            "walk",
            vec![
                linear(
                    0,
                    Property::Translation,
                    &[0.0, 3.0],
                    &[v(0.0, 1.0, 0.0), v(3.0, 1.0, 0.0)],
                ),
                linear(2, Property::Translation, &[0.0, 1.0, 1.5, 2.0, 3.0], &foot_keys),
            ],
        )],
        ..Rig::default()
    }
}

#[test]
fn a_planted_foot_under_moving_hips_does_not_slide() {
    let rig = walking_leg(0.0);
    let feet = feet_by_name(&rig);
    assert_eq!(feet, vec![2]);
    let report = check_motion(&rig, &feet, &MotionOptions::default());
    let clip = &report.clips[0];
    let foot = &clip.feet[0];
    assert_eq!(foot.contacts.len(), 1, "{foot:?}");
    let contact = &foot.contacts[0];
    // Planted from 0 to 1.5 s; at 30 poses a second the last still frame is 1.5 − 1/30.
    assert!(
        contact.start.abs() < 1e-6 && (contact.end - (1.5 - 1.0 / 30.0)).abs() < 1e-4,
        "{contact:?}"
    );
    assert!(foot.max_slide < 1e-5, "{foot:?}");
    // The hips go 3 heights along x in 3 s.
    assert!(!clip.root.in_place);
    assert!((clip.root.distance - 3.0).abs() < 1e-5 && (clip.root.speed - 1.0).abs() < 1e-5);
    assert!((Vec3::from(clip.root.direction) - Vec3::X).length() < 1e-6);
    assert_eq!(clip.root.joint.as_deref(), Some("hips"));
}

#[test]
fn a_dragged_foot_slides_the_distance_it_was_dragged() {
    let rig = walking_leg(0.3);
    let report = check_motion(&rig, &[2], &MotionOptions::default());
    let foot = &report.clips[0].feet[0];
    assert_eq!(foot.contacts.len(), 1, "{foot:?}");
    assert!((foot.max_slide - 0.3).abs() < 1e-5, "{foot:?}");
    let worst = foot.worst_time.unwrap();
    assert!(
        (1.0 - 1e-4..1.5).contains(&worst),
        "reached at the end of the drag: {worst}"
    );
    let limits = MotionThresholds::default();
    assert_eq!(report.clips[0].violations(&limits).len(), 1);
}

#[test]
fn an_in_place_contact_is_measured_against_its_steady_treadmill_motion() {
    // A foot on the ground moving back 0.1 a frame: steady in place, a 0.9 slide otherwise.
    let path: Vec<Vec3> = (0..10).map(|k| Vec3::new(-0.1 * k as f32, 0.0, 0.0)).collect();
    let options = MotionOptions::default();
    let steady = checks::find_contacts(&path, 1.0 / 30.0, 1.0, true, &options);
    assert_eq!(steady.len(), 1);
    assert!(steady[0].slide < 1e-6, "{steady:?}");
    let world = checks::find_contacts(&path, 1.0 / 30.0, 1.0, false, &options);
    assert!((world[0].slide - 0.9).abs() < 1e-6, "{world:?}");
    // One frame pushed 0.05 sideways strays that far from the steady motion.
    let mut bumped = path.clone();
    bumped[4].z = 0.05;
    let bumped = checks::find_contacts(&bumped, 1.0 / 30.0, 1.0, true, &options);
    assert!((bumped[0].slide - 0.05).abs() < 1e-6, "{bumped:?}");
    assert!((bumped[0].slide_time - 4.0 / 30.0).abs() < 1e-6);
}

#[test]
fn a_rotation_key_stored_in_the_opposite_hemisphere_is_found_and_the_sampled_curve_stays_continuous() {
    // +170° about z, then +190° stored as its negation (the same rotation, the other hemisphere).
    let q170 = glam::Quat::from_rotation_z(170f32.to_radians());
    let q190 = glam::Quat::from_rotation_z(190f32.to_radians());
    let flipped = -Vec4::from(q190);
    assert!(Vec4::from(q170).dot(flipped) < 0.0);
    let turn = clip(
        "turn",
        vec![linear(0, Property::Rotation, &[0.0, 1.0], &[q170.into(), flipped])],
    );
    assert_eq!(curves::hemisphere_flips(&turn.channels[0]), vec![1]);
    let curves = curves::joint_curves(&turn, 0, 10.0);
    assert_eq!(curves.len(), 1);
    assert_eq!(curves[0].hemisphere_flips, vec![1]);
    assert_eq!(curves[0].keys[1].value, flipped.to_array());
    // Shortest arc: the samples sweep 170° → 190° through 180°, 2° per tenth of a second.
    assert_eq!(curves[0].samples.len(), 11);
    for (k, sample) in curves[0].samples.iter().enumerate() {
        let q = glam::Quat::from_vec4(Vec4::from(sample.value));
        let expected = glam::Quat::from_rotation_z((170.0 + 2.0 * k as f32).to_radians());
        assert!(checks::rotation_angle_deg(q, expected) < 0.01, "sample {k}: {q}");
    }
    // Keys in one hemisphere are not reported.
    let same = linear(0, Property::Rotation, &[0.0, 1.0], &[q170.into(), q190.into()]);
    assert!(curves::hemisphere_flips(&same).is_empty());
}

#[test]
fn a_turn_squeezed_into_a_short_key_gap_is_a_jump_and_a_long_one_is_not() {
    let quarter: Vec4 = glam::Quat::from_rotation_x(90f32.to_radians()).into();
    // 90° in half a frame: all of it within one frame.
    let short = linear(0, Property::Rotation, &[0.0, 1.0 / 60.0], &[Vec4::W, quarter]);
    let (key, degrees) = curves::largest_frame_turn(&short).unwrap();
    assert_eq!(key, 1);
    assert!((degrees - 90.0).abs() < 1e-3, "{degrees}");
    // 90° over a second: 3° a frame.
    let long = linear(0, Property::Rotation, &[0.0, 1.0], &[Vec4::W, quarter]);
    assert!((curves::largest_frame_turn(&long).unwrap().1 - 3.0).abs() < 1e-3);
    // A step turns at once, however long the gap.
    let step = Channel {
        interpolation: Interpolation::Step,
        ..long.clone()
    };
    assert!((curves::largest_frame_turn(&step).unwrap().1 - 90.0).abs() < 1e-3);
}

#[test]
fn a_cubic_tangent_that_overshoots_is_found() {
    // From 0 to 1 in a second with an out tangent of 10 (per second) at the first key: the
    // Hermite curve h01(s) + 10·h10(s) reaches 1.5625 at s = 1/4, 0.5625 past the second key.
    let cubic = |out: f32| Channel {
        node: 0,
        property: Property::Translation,
        interpolation: Interpolation::CubicSpline,
        times: vec![0.0, 1.0],
        values: vec![
            Vec4::ZERO,
            Vec4::ZERO,
            v(out, 0.0, 0.0),
            Vec4::ZERO,
            v(1.0, 0.0, 0.0),
            Vec4::ZERO,
        ],
    };
    let (key, past) = curves::cubic_overshoot(&cubic(10.0)).unwrap();
    assert_eq!(key, 1);
    let h = |s: f32| (-2.0 * s.powi(3) + 3.0 * s * s) + 10.0 * (s.powi(3) - 2.0 * s * s + s) - 1.0;
    assert!((past - h(1.0 / 16.0 * (1..16).find(|&i| h(i as f32 / 16.0) > 0.1).unwrap() as f32)).abs() < 1e-4);
    // A tangent of 1 (the straight line's slope) stays within the keys.
    assert!(curves::cubic_overshoot(&cubic(1.0)).is_none());
}
