use super::*;
use crate::names::Named;
use glam::{DQuat, DVec3, Quat, Vec3};
use strum::VariantArray;

fn load_text(text: &str) -> Result<Rig, RigError> {
    load(text.as_bytes(), "test.bvh", &LoadOptions { bvh_scale: Some(1.0) })
}

fn bvh_error(text: &str) -> BvhError {
    match load_text(text) {
        Err(RigError::Bvh(e)) => e,
        Err(other) => panic!("not a BVH error: {other}"),
        Ok(rig) => panic!("loaded {} nodes", rig.nodes.len()),
    }
}

/// A root with a child and an end site; `channels` and `frames` are spliced in.
fn two_joints(root_channels: &str, frames: &str) -> String {
    format!(
        "HIERARCHY\nROOT Hips\n{{\n  OFFSET 0 0 0\n  CHANNELS {root_channels}\n  JOINT Chest\n  {{\n    OFFSET 0 2 0\n    \
         CHANNELS 3 Zrotation Xrotation Yrotation\n    End Site\n    {{\n      OFFSET 0 1 0\n    }}\n  }}\n}}\nMOTION\n{frames}"
    )
}

#[test]
fn joints_end_sites_and_channels_become_nodes_and_a_clip() {
    let text = two_joints(
        "6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
        "Frames: 2\nFrame Time: 0.5\n0 1 0 0 0 0 0 0 0\n1 1 0 90 0 0 0 0 45\n",
    );
    let rig = load_text(&text).unwrap();
    let names: Vec<&str> = rig.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["Hips", "Chest", "Chest_End"]);
    assert_eq!(rig.nodes[1].parent, Some(0));
    assert_eq!(rig.nodes[2].rest.translation, Vec3::Y);
    assert!(rig.skins.is_empty() && rig.meshes.is_empty());
    let clip = &rig.clips[0];
    assert_eq!((clip.name.as_str(), clip.duration), ("test", 0.5));
    // Hips: translation and rotation; Chest: rotation.
    assert_eq!(clip.channels.len(), 3);
    assert_eq!(clip.channels[0].values[1], Vec4::new(1.0, 1.0, 0.0, 0.0));
    let hips = Quat::from_vec4(clip.channels[1].values[1]).as_dquat();
    assert!(degrees_between(hips, DQuat::from_rotation_z(90f64.to_radians())) < 1e-5);
    let chest = Quat::from_vec4(clip.channels[2].values[1]).as_dquat();
    assert!(degrees_between(chest, DQuat::from_rotation_y(45f64.to_radians())) < 1e-5);
    let facts = rig.facts.bvh.as_ref().unwrap();
    assert_eq!(
        (facts.joints, facts.end_sites, facts.channels, facts.frames),
        (2, 1, 9, 2)
    );
    assert!(
        rig.hierarchy().bones.iter().all(|&b| b),
        "every node is drawn as a bone"
    );
}

#[test]
fn a_subset_of_channels_in_any_order_composes_in_the_listed_order() {
    let text = two_joints(
        "3 Yposition Xrotation Zrotation",
        "Frames: 1\nFrame Time: 0.04\n0.25 30 60 0 0 0\n",
    );
    let rig = load_text(&text).unwrap();
    let clip = &rig.clips[0];
    // Only Y moves: X and Z keep the offset's.
    assert_eq!(clip.channels[0].values[0], Vec4::new(0.0, 0.25, 0.0, 0.0));
    let want = DQuat::from_rotation_x(30f64.to_radians()) * DQuat::from_rotation_z(60f64.to_radians());
    let got = Quat::from_vec4(clip.channels[1].values[0]).as_dquat();
    assert!(degrees_between(want, got) < 1e-5, "{}", degrees_between(want, got));
}

/// A broken file, the line its error is on, and what the error's kind must be.
type ErrorCase = (String, usize, fn(&BvhErrorKind) -> bool);

#[test]
fn errors_name_their_kind_and_line() {
    let cases: Vec<ErrorCase> = vec![
        (
            two_joints(
                "3 Zrotation Xrotation Yrotation",
                "Frames: 1\nFrame Time: 0.1\n0 0 0 0 0 0\n",
            )
            .replace("JOINT", "BONE"),
            6,
            |k| matches!(k, BvhErrorKind::UnknownKeyword(w) if w == "BONE"),
        ),
        (
            two_joints(
                "6 Xposition Yposition Zposition Zrotation Xrotation",
                "Frames: 1\nFrame Time: 0.1\n",
            ),
            5,
            |k| matches!(k, BvhErrorKind::ChannelCount { listed: 5, .. }),
        ),
        (
            two_joints("3 Zrotation Xrotation Wrotation", "Frames: 1\nFrame Time: 0.1\n"),
            5,
            |k| matches!(k, BvhErrorKind::UnknownChannel(w) if w == "Wrotation"),
        ),
        (
            two_joints("3 Zrotation Xrotation Zrotation", "Frames: 1\nFrame Time: 0.1\n"),
            5,
            |k| matches!(k, BvhErrorKind::RepeatedChannel(_)),
        ),
        (
            two_joints(
                "3 Zrotation Xrotation Yrotation",
                "Frames: 2\nFrame Time: 0.1\n0 0 0 0 0 0\n0 0 NaN 0 0 0\n",
            ),
            20,
            |k| matches!(k, BvhErrorKind::NotFinite(w) if w == "NaN"),
        ),
        (
            two_joints(
                "3 Zrotation Xrotation Yrotation",
                "Frames: 3\nFrame Time: 0.1\n0.25 0.25 0.25 0.25 0.25 0.25\n0.25 0.25 0.25 0.25 0.25 0.25\n",
            ),
            21,
            |k| matches!(k, BvhErrorKind::MotionCutShort { declared: 3, found: 2 }),
        ),
        (
            two_joints(
                "3 Zrotation Xrotation Yrotation",
                "Frames: 1\nFrame Time: 0.1\n0 0 0 0 0 0\n0 0 0 0 0 0\n",
            ),
            20,
            |k| matches!(k, BvhErrorKind::ExtraFrames { declared: 1 }),
        ),
        (
            two_joints(
                "3 Zrotation Xrotation Yrotation",
                "Frames: 2\nFrame Time: 0.1\n0 0 0 0 0\n0 0 0 0 0 0\n",
            ),
            19,
            |k| {
                matches!(
                    k,
                    BvhErrorKind::FrameWidth {
                        frame: 1,
                        found: 5,
                        expected: 6
                    }
                )
            },
        ),
        (
            two_joints(
                "3 Zrotation Xrotation Yrotation",
                "Frames: 2\nFrame Time: 0.1\n0.25 0.25 0.25 0.25 0.25 0.25\n0.25 0.25 0.25",
            ),
            20,
            |k| matches!(k, BvhErrorKind::MotionCutShort { declared: 2, found: 1 }),
        ),
        (
            two_joints(
                "3 Zrotation Xrotation Yrotation",
                "Frames: 1000000\nFrame Time: 0.1\n0 0 0 0 0 0\n",
            ),
            17,
            |k| {
                matches!(
                    k,
                    BvhErrorKind::FramesBeyondText {
                        frames: 1_000_000,
                        channels: 6,
                        ..
                    }
                )
            },
        ),
        (
            two_joints(
                "3 Zrotation Xrotation Yrotation",
                "Frames: 1\nFrame Time: 0\n0 0 0 0 0 0\n",
            ),
            18,
            |k| matches!(k, BvhErrorKind::FrameTime(_)),
        ),
        (
            two_joints(
                "3 Zrotation Xrotation Yrotation",
                "Frames: 1\nFrame Time: 0.1\n0 0 0 0 0 0\n",
            )
            .replace("OFFSET 0 2 0", "OFFSET 0 2"),
            8,
            |k| matches!(k, BvhErrorKind::Expected { .. }),
        ),
        ("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n".to_owned(), 5, |k| {
            matches!(k, BvhErrorKind::UnexpectedEnd { expected: "'}'" })
        }),
        ("Hierarchy? no\n".to_owned(), 1, |k| {
            matches!(k, BvhErrorKind::NoHierarchy(_))
        }),
    ];
    for (text, line, kind) in cases {
        let error = bvh_error(&text);
        assert_eq!(error.line, line, "{error}");
        assert!(kind(&error.kind), "{error}");
        assert!(error.to_string().starts_with(&format!("BVH line {line}: ")), "{error}");
    }
}

#[test]
fn every_rotation_order_reads_back_the_rotation_its_angles_make() {
    let rotations = [
        DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
        DQuat::from_euler(glam::EulerRot::ZYX, -2.9, 0.2, 0.7),
        DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2) * DQuat::from_rotation_x(0.4),
        DQuat::IDENTITY,
    ];
    for &order in BvhRotationOrder::VARIANTS {
        for rotation in rotations {
            let angles = degrees_from_rotation(order, rotation);
            let back = rotation_from_degrees(order, angles);
            assert!(degrees_between(rotation, back) < 1e-9, "{order}: {angles:?}");
        }
        // The channel order composes left to right, as a reader of the file composes it.
        let [a, b, c] = order.axes().map(|letter| match letter {
            'X' => DVec3::X,
            'Y' => DVec3::Y,
            _ => DVec3::Z,
        });
        let by_hand = DQuat::from_axis_angle(a, 0.1) * DQuat::from_axis_angle(b, 0.2) * DQuat::from_axis_angle(c, 0.3);
        let composed = rotation_from_degrees(order, [0.1f64, 0.2, 0.3].map(f64::to_degrees));
        assert!(degrees_between(by_hand, composed) < 1e-9, "{order}");
    }
    assert_eq!(BvhRotationOrder::default().name(), "ZXY");
}

#[test]
fn the_unit_is_guessed_from_the_skeletons_size() {
    for (size, unit) in [
        (1.8, BvhUnit::Metre),
        (25.3, BvhUnit::CmuUnit),
        (66.0, BvhUnit::Inch),
        (182.0, BvhUnit::Centimetre),
        (1750.0, BvhUnit::Millimetre),
        (0.0, BvhUnit::Metre),
    ] {
        assert_eq!(BvhUnit::guess(size), unit, "{size}");
    }
}

#[test]
fn bvh_is_told_by_its_first_word_or_its_name() {
    assert!(is_bvh(b"\xEF\xBB\xBF  hierarchy\nROOT", "motion.txt"));
    assert!(is_bvh(b"garbage", "walk.BVH"));
    assert!(!is_bvh(b"{\"asset\":{}}", "walk.bvh"));
    assert!(!is_bvh(b"glTF....", "walk.bvh"));
    assert!(!is_bvh(b"HIERARCH", "walk.glb"));
}
