use super::*;
use crate::anim::rig_height;
use crate::rig::{Clip, Morphs, Node};
use crate::synthetic::{Shape, skeleton, trs_clip};
use glam::Quat;

/// A chain of four joints with `interpolation` keys on every joint, one morph channel on
/// the mesh node for it, and a second clip with its own morph channel.
fn rig_with(interpolation: Interpolation) -> Rig {
    let mut rig = skeleton(4, Shape::Chain);
    let mut clip = trs_clip(&rig, 9, 2.0, interpolation);
    clip.name = "first".into();
    let mut second = trs_clip(&rig, 5, 1.0, Interpolation::Linear);
    second.name = "second".into();
    rig.clips = vec![clip, second];
    let morph = |clip: usize, keys: usize, seconds: f32, interpolation: Interpolation| {
        let times: Vec<f32> = (0..keys).map(|k| seconds * k as f32 / (keys - 1) as f32).collect();
        let weight = |k: usize, t: usize| (0.7 * k as f32 + t as f32).sin().abs();
        let values = (0..keys)
            .flat_map(|k| {
                let group = |scale: f32| (0..2).map(move |t| scale * weight(k, t));
                if interpolation == Interpolation::CubicSpline {
                    group(0.3).chain(group(1.0)).chain(group(-0.2)).collect::<Vec<_>>()
                } else {
                    group(1.0).collect()
                }
            })
            .collect();
        MorphChannel {
            clip,
            node: 0,
            interpolation,
            times,
            values,
            targets: 2,
        }
    };
    rig.morphs = Morphs {
        channels: vec![morph(0, 7, 2.0, interpolation), morph(1, 3, 1.0, Interpolation::Linear)],
        ..Morphs::default()
    };
    rig
}

/// Cubic spline keys with tangents that are not smooth, so a wrong split shows.
fn roughen_tangents(rig: &mut Rig) {
    for (c, channel) in rig.clips[0].channels.iter_mut().enumerate() {
        for (i, value) in channel.values.iter_mut().enumerate() {
            if i % 3 != 1 {
                *value += Vec4::new(0.3, -0.2, 0.1, 0.05) * ((i + c) as f32 * 1.3).sin();
            }
        }
    }
}

fn close(a: Vec4, b: Vec4, tolerance: f32) -> bool {
    (a - b).abs().max_element() <= tolerance * (1.0 + b.abs().max_element())
}

/// The trimmed clip sampled at `t` equals the original sampled at `start + t`, at the ends
/// and in between, morph weights included.
fn check_trim(original: &Rig, start: f32, end: f32) {
    let mut rig = original.clone();
    trim(&mut rig, 0, start, end).unwrap();
    let length = end - start;
    assert_eq!(rig.clips[0].duration, length);
    for (before, after) in original.clips[0].channels.iter().zip(&rig.clips[0].channels) {
        assert_eq!(after.times[0], 0.0);
        assert_eq!(*after.times.last().unwrap(), length);
        assert!(after.times.windows(2).all(|w| w[0] < w[1]), "{:?}", after.times);
        for k in 0..=200 {
            let t = if k == 200 { length } else { length * k as f32 / 200.0 };
            // A step's jump lands on either side of a key as `start + t` rounds.
            let on_a_step = before.interpolation == Interpolation::Step
                && k < 200
                && before.times.iter().any(|&key| (start + t - key).abs() < 1e-5);
            if on_a_step {
                continue;
            }
            // The ends are compared at the cut times themselves, which `start + t` rounds.
            let original_time = match k {
                0 => start,
                200 => end,
                _ => start + t,
            };
            let (want, got) = (
                sample_channel(before, original_time, &mut 0),
                sample_channel(after, t, &mut 0),
            );
            let (want, got) = if before.property == Property::Rotation {
                // `q` and `-q` are one rotation.
                (want, if got.dot(want) < 0.0 { -got } else { got })
            } else {
                (want, got)
            };
            assert!(
                close(got, want, 2e-6),
                "{:?} {:?} at {t}: {got} vs {want}",
                before.interpolation,
                before.property
            );
        }
    }
    let morphs =
        |rig: &Rig| -> Vec<MorphChannel> { rig.morphs.channels.iter().filter(|c| c.clip == 0).cloned().collect() };
    for (before, after) in morphs(original).iter().zip(&morphs(&rig)) {
        assert_eq!(*after.times.last().unwrap(), length);
        for k in 0..=200 {
            let t = if k == 200 { length } else { length * k as f32 / 200.0 };
            let original_time = match k {
                0 => start,
                200 => end,
                _ => start + t,
            };
            let on_a_step = before.interpolation == Interpolation::Step
                && before.times.iter().any(|&key| (original_time - key).abs() < 1e-5);
            if on_a_step && k != 0 && k != 200 {
                continue;
            }
            for target in 0..before.targets {
                let (want, got) = (
                    sample_morph_channel(before, target, original_time),
                    sample_morph_channel(after, target, t),
                );
                assert!((want - got).abs() <= 2e-6, "morph {target} at {t}: {got} vs {want}");
            }
        }
    }
    // The other clip's morph channel is untouched.
    assert_eq!(original.morphs.channels[1], rig.morphs.channels[1]);
}

#[test]
fn trim_keeps_the_range_for_every_interpolation() {
    for interpolation in [Interpolation::Linear, Interpolation::Step, Interpolation::CubicSpline] {
        let mut rig = rig_with(interpolation);
        if interpolation == Interpolation::CubicSpline {
            roughen_tangents(&mut rig);
        }
        // Inside segments, on keys (the keys are 0.25 s apart), and the whole clip.
        for (start, end) in [(0.3, 1.7), (0.25, 1.5), (0.0, 2.0), (0.1, 0.2), (1.9, 2.0)] {
            check_trim(&rig, start, end);
        }
    }
}

#[test]
fn trimmed_spline_keeps_its_keys_and_gains_two() {
    let mut rig = rig_with(Interpolation::CubicSpline);
    let keys = rig.clips[0].channels[0].times.len();
    trim(&mut rig, 0, 0.3, 1.7).unwrap();
    let channel = &rig.clips[0].channels[0];
    assert_eq!(channel.interpolation, Interpolation::CubicSpline);
    // Keys at 0.5 .. 1.5 (five) and the two ends.
    assert_eq!(channel.times.len(), 7, "{keys} keys before: {:?}", channel.times);
    assert_eq!(channel.values.len(), 21);
}

#[test]
fn trim_rejects_bad_ranges() {
    let rig = rig_with(Interpolation::Linear);
    let trimmed = |start: f32, end: f32| trim(&mut rig.clone(), 0, start, end);
    assert!(matches!(
        trimmed(1.0, 1.0),
        Err(ClipEditError::StartNotBeforeEnd { .. })
    ));
    assert!(matches!(
        trimmed(1.5, 0.5),
        Err(ClipEditError::StartNotBeforeEnd { .. })
    ));
    assert!(matches!(trimmed(0.5, 2.5), Err(ClipEditError::TimeOutsideClip { time, .. }) if time == 2.5));
    assert!(matches!(trimmed(-0.5, 1.0), Err(ClipEditError::TimeOutsideClip { .. })));
    assert!(matches!(
        trimmed(f32::NAN, 1.0),
        Err(ClipEditError::TimeOutsideClip { .. })
    ));
    assert!(matches!(
        trim(&mut rig.clone(), 7, 0.0, 1.0),
        Err(ClipEditError::ClipOutOfRange { index: 7, count: 2 })
    ));
    // A time a little past the end, as typed from a rounded duration, is the end.
    assert!(trimmed(0.5, 2.000001).is_ok());
}

#[test]
fn rename_and_find() {
    let mut rig = rig_with(Interpolation::Linear);
    assert_eq!(find_clip(&rig, "second"), Ok(1));
    assert_eq!(find_clip(&rig, "third"), Err(ClipEditError::NoSuchClip("third".into())));
    assert_eq!(
        rename(&mut rig, 0, "second"),
        Err(ClipEditError::NameTaken {
            name: "second".into(),
            other: 1
        })
    );
    assert_eq!(rename(&mut rig, 0, ""), Err(ClipEditError::EmptyName));
    rename(&mut rig, 0, "first").unwrap();
    rename(&mut rig, 0, "walk").unwrap();
    assert_eq!(find_clip(&rig, "walk"), Ok(0));
}

#[test]
fn drop_renumbers_later_clips_morph_channels() {
    let mut rig = rig_with(Interpolation::Linear);
    let mut third = rig.clips[1].clone();
    third.name = "third".into();
    rig.clips.push(third);
    let mut third_morph = rig.morphs.channels[1].clone();
    third_morph.clip = 2;
    rig.morphs.channels.push(third_morph.clone());
    let second_morph = rig.morphs.channels[1].clone();

    let removed = drop_clip(&mut rig, 0).unwrap();
    assert_eq!(removed.name, "first");
    let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["second", "third"]);
    assert_eq!(rig.morphs.channels.len(), 2);
    assert_eq!(
        rig.morphs.channels[0],
        MorphChannel {
            clip: 0,
            ..second_morph
        }
    );
    assert_eq!(rig.morphs.channels[1], MorphChannel { clip: 1, ..third_morph });
    assert_eq!(
        drop_clip(&mut rig, 2).unwrap_err(),
        ClipEditError::ClipOutOfRange { index: 2, count: 2 }
    );
}

/// A root under a parent turned 90° about X and scaled by 0.01 (as Mixamo's Armature), that
/// walks along its parent's axes.
fn walking_rig(interpolation: Interpolation, parent_turns: bool) -> Rig {
    let node = |name: &str, parent: Option<usize>, rest: Trs| Node {
        name: name.into(),
        parent,
        rest,
    };
    let armature = Trs {
        translation: Vec3::new(0.5, 0.0, -0.25),
        rotation: Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        scale: Vec3::splat(0.01),
    };
    let hips = Trs {
        translation: Vec3::new(10.0, -3.0, 100.0),
        ..Trs::IDENTITY
    };
    let spine = Trs {
        translation: Vec3::new(0.0, 0.0, 20.0),
        ..Trs::IDENTITY
    };
    let mut rig = Rig {
        nodes: vec![
            node("Armature", None, armature),
            node("Hips", Some(0), hips),
            node("Spine", Some(1), spine),
        ],
        ..Rig::default()
    };
    let keys = 6;
    let times: Vec<f32> = (0..keys).map(|k| 0.4 * k as f32).collect();
    let travel = |k: usize| {
        let k = k as f32;
        (hips.translation + Vec3::new(30.0 * k, -40.0 * k, 5.0 * (k * 1.7).sin())).extend(0.0)
    };
    let values: Vec<Vec4> = match interpolation {
        Interpolation::CubicSpline => (0..keys)
            .flat_map(|k| {
                [
                    Vec4::new(3.0, 1.0, -2.0, 0.0),
                    travel(k),
                    Vec4::new(-1.0, 4.0, 2.0, 0.0),
                ]
            })
            .collect(),
        _ => (0..keys).map(travel).collect(),
    };
    let mut channels = vec![
        Channel {
            node: 1,
            property: Property::Translation,
            interpolation,
            times: times.clone(),
            values,
        },
        Channel {
            node: 2,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: (0..keys)
                .map(|k| Vec4::from(Quat::from_rotation_y(0.2 * k as f32)))
                .collect(),
        },
    ];
    if parent_turns {
        channels.push(Channel {
            node: 0,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: vec![0.0, 2.0],
            values: vec![
                Vec4::from(armature.rotation),
                Vec4::from(armature.rotation * Quat::from_rotation_z(1.0)),
            ],
        });
    }
    rig.clips = vec![Clip {
        name: "walk".into(),
        duration: 2.0,
        channels,
        source: None,
    }];
    rig
}

/// Worlds of every node at `time`, and the locals they came from.
fn pose(rig: &Rig, time: f32) -> (Vec<Trs>, Vec<Mat4>) {
    let mut locals = vec![Trs::IDENTITY; rig.nodes.len()];
    let mut worlds = vec![Mat4::IDENTITY; rig.nodes.len()];
    let mut hints = vec![0; rig.clips[0].channels.len()];
    sample_clip(&rig.nodes, Some(&rig.clips[0]), time, &mut hints, &mut locals);
    local_to_world(&rig.nodes, &locals, &mut worlds);
    (locals, worlds)
}

#[test]
fn in_place_holds_the_root_over_its_rest_place_in_world_space() {
    for (interpolation, parent_turns) in [
        (Interpolation::Linear, false),
        (Interpolation::CubicSpline, false),
        (Interpolation::Step, false),
        (Interpolation::Linear, true),
    ] {
        let original = walking_rig(interpolation, parent_turns);
        let mut rig = original.clone();
        in_place(&mut rig, 0).unwrap();
        let rest = ClipSampler::new(&original).worlds_at(None, 0.0)[1].w_axis;
        // Exact between keys unless the parent turns; then at the bake times.
        let samples: Vec<f32> = if parent_turns {
            grid_times(2.0, IN_PLACE_BAKE_RATE)
        } else {
            (0..=97).map(|k| 2.0 * k as f32 / 97.0).collect()
        };
        let mut moved = 0.0f32;
        for &time in &samples {
            let (locals_before, worlds_before) = pose(&original, time);
            let (locals_after, worlds_after) = pose(&rig, time);
            let (before, after) = (worlds_before[1].w_axis, worlds_after[1].w_axis);
            let label = format!("{interpolation:?} (parent turns: {parent_turns}) at {time}");
            assert!(
                (after.x - rest.x).abs() < 1e-5 && (after.z - rest.z).abs() < 1e-5,
                "{label}: {after}"
            );
            assert!(
                (after.y - before.y).abs() < 1e-5,
                "{label}: height {} vs {}",
                after.y,
                before.y
            );
            moved = moved.max((before.x - rest.x).abs());
            for node in [0, 2] {
                assert_eq!(locals_before[node], locals_after[node], "{label}: node {node}");
            }
            assert_eq!(locals_before[1].rotation, locals_after[1].rotation);
        }
        assert!(moved > 0.1, "the original travels ({moved})");
    }
}

#[test]
fn in_place_needs_a_translation_channel() {
    let mut rig = walking_rig(Interpolation::Linear, false);
    rig.clips[0].channels.remove(0);
    assert_eq!(in_place(&mut rig, 0), Err(ClipEditError::NoMotionRoot("walk".into())));
    let mut rig = walking_rig(Interpolation::Linear, false);
    rig.nodes[0].rest.scale = Vec3::new(1.0, 0.0, 1.0);
    assert_eq!(in_place(&mut rig, 0), Err(ClipEditError::SingularParent("Hips".into())));
}

#[test]
fn reduction_keeps_every_sample_within_tolerance() {
    // A smooth curve, a straight stretch, a corner: kept keys must restore every sample.
    let values: Vec<f32> = (0..300)
        .map(|k| {
            let t = k as f32 / 30.0;
            if t < 3.0 {
                (t * 2.0).sin()
            } else if t < 6.0 {
                t - 3.0
            } else {
                3.0 - (t - 6.0) * 2.0
            }
        })
        .collect();
    let times: Vec<f32> = (0..values.len()).map(|k| k as f32 / 30.0).collect();
    let tolerance = 1e-2;
    let mut kept = Vec::new();
    let lerp = |a: usize, b: usize, i: usize| values[a] + (values[b] - values[a]) * fraction(&times, a, b, i);
    reduce_keys(
        values.len(),
        |a, b, i| (lerp(a, b, i) - values[i]).abs() <= tolerance,
        &mut kept,
    );
    assert_eq!(kept[0], 0);
    assert_eq!(*kept.last().unwrap(), values.len() - 1);
    assert!(kept.len() < 40, "{} keys kept", kept.len());
    for pair in kept.windows(2) {
        let restored = (pair[0]..=pair[1]).all(|i| (lerp(pair[0], pair[1], i) - values[i]).abs() <= tolerance);
        assert!(restored, "keys {pair:?}");
    }
    // The straight stretch needs no keys inside it.
    assert!(
        kept.iter().filter(|&&k| (92..178).contains(&k)).count() <= 1,
        "{kept:?}"
    );
}

#[test]
fn resample_keeps_the_clip_within_tolerance() {
    for interpolation in [Interpolation::Linear, Interpolation::Step, Interpolation::CubicSpline] {
        let original = rig_with(interpolation);
        let mut rig = original.clone();
        let tolerance = ResampleTolerance::default();
        let report = resample(&mut rig, 0, 30.0, &tolerance).unwrap();
        let grid = grid_times(2.0, 30.0);
        assert_eq!(grid.len(), 61);
        assert!(report.after.keys <= 61 * (rig.clips[0].channels.len() + 1));
        let position = report.position_tolerance;
        assert!((position - 1e-4 * rig_height(&original)).abs() < 1e-9);
        for (before, after) in original.clips[0].channels.iter().zip(&rig.clips[0].channels) {
            let limit = match before.property {
                Property::Translation => 1.0001 * position,
                Property::Rotation => 0.05,
                Property::Scale => 1e-4,
            };
            let expected = if interpolation == Interpolation::Step {
                Interpolation::Step
            } else {
                Interpolation::Linear
            };
            assert_eq!(after.interpolation, expected);
            for &time in &grid {
                let (want, got) = (
                    sample_channel(before, time, &mut 0),
                    sample_channel(after, time, &mut 0),
                );
                let error = match before.property {
                    // The synthetic rig's parents scale by a little over 1, so a local error
                    // within the world tolerance is within it in world space too.
                    Property::Translation => (want - got).truncate().length(),
                    Property::Rotation => rotation_error_degrees(want, got) as f32,
                    Property::Scale => (want - got).abs().max_element() / want.abs().max_element(),
                };
                assert!(
                    error <= limit,
                    "{interpolation:?} {:?} at {time}: {error}",
                    before.property
                );
            }
        }
        let morph_before = &original.morphs.channels[0];
        let morph_after = &rig.morphs.channels[0];
        for &time in &grid {
            for target in 0..2 {
                let error = (sample_morph_channel(morph_before, target, time)
                    - sample_morph_channel(morph_after, target, time))
                .abs();
                assert!(error <= 1e-4, "{interpolation:?} morph at {time}: {error}");
            }
        }
        assert_eq!(original.morphs.channels[1], rig.morphs.channels[1]);
    }
}

#[test]
fn resample_with_a_tiny_tolerance_keeps_curves_whole_and_still_channels_as_two_keys() {
    let mut rig = rig_with(Interpolation::Linear);
    let still = rig.clips[0].channels[0].values[0];
    rig.clips[0].channels[0].values.iter_mut().for_each(|v| *v = still);
    let tiny = ResampleTolerance {
        position_fraction: 1e-7,
        rotation_degrees: 1e-5,
        scale_relative: 1e-7,
        morph_weight: 1e-7,
    };
    let original = rig.clone();
    let report = resample(&mut rig, 0, 10.0, &tiny).unwrap();
    let channels = &rig.clips[0].channels;
    assert_eq!(channels[0].times, [0.0], "the still channel's first key restores it");
    // Samples on the original's straight segments are dropped, its corners kept.
    for (before, after) in original.clips[0].channels.iter().zip(channels).skip(1) {
        assert!(after.times.len() < 21, "{:?}", after.times);
        for time in grid_times(2.0, 10.0) {
            let (want, got) = (
                sample_channel(before, time, &mut 0),
                sample_channel(after, time, &mut 0),
            );
            assert!(
                close(got, want, 1e-6),
                "{:?} at {time}: {got} vs {want}",
                before.property
            );
        }
    }
    assert!(report.worst_position <= report.position_tolerance);
    assert_eq!(rig.clips[0].duration, 2.0);
}

#[test]
fn a_clip_that_holds_still_keeps_its_length() {
    let mut rig = rig_with(Interpolation::Linear);
    for channel in &mut rig.clips[0].channels {
        let first = channel.values[0];
        channel.values.iter_mut().for_each(|v| *v = first);
    }
    let weights = rig.morphs.channels[0].values[..2].to_vec();
    for key in rig.morphs.channels[0].values.chunks_mut(2) {
        key.copy_from_slice(&weights);
    }
    let report = resample(&mut rig, 0, 30.0, &ResampleTolerance::default()).unwrap();
    let channels = &rig.clips[0].channels;
    assert_eq!(channels[0].times, [0.0, 2.0]);
    assert_eq!(channels[0].values[0], channels[0].values[1]);
    assert!(channels[1..].iter().all(|c| c.times == [0.0]));
    assert_eq!(rig.morphs.channels[0].times, [0.0]);
    assert_eq!(report.after.keys, channels.len() + 2);
}

#[test]
fn resample_rejects_bad_rates_and_tolerances() {
    let rig = rig_with(Interpolation::Linear);
    let tolerance = ResampleTolerance::default();
    for rate in [0.0, -30.0, f32::NAN, f32::INFINITY, 1e9] {
        assert!(matches!(
            resample(&mut rig.clone(), 0, rate, &tolerance),
            Err(ClipEditError::BadRate(_))
        ));
    }
    let bad = ResampleTolerance {
        rotation_degrees: -1.0,
        ..tolerance
    };
    assert!(matches!(
        resample(&mut rig.clone(), 0, 30.0, &bad),
        Err(ClipEditError::BadTolerance { name: "rotation", .. })
    ));
    let bad = ResampleTolerance {
        morph_weight: f32::NAN,
        ..tolerance
    };
    assert!(matches!(
        resample(&mut rig.clone(), 0, 30.0, &bad),
        Err(ClipEditError::BadTolerance {
            name: "morph weight",
            ..
        })
    ));
}

#[test]
fn grid_ends_on_the_clip_end() {
    assert_eq!(grid_times(1.0, 30.0).len(), 31);
    assert_eq!(*grid_times(1.0000001, 30.0).last().unwrap(), 1.0000001);
    assert_eq!(grid_times(1.0000001, 30.0).len(), 31);
    assert_eq!(grid_times(1.05, 10.0).len(), 12);
    assert_eq!(grid_times(0.0, 30.0), [0.0]);
}

#[test]
fn keyframe_bytes_count_times_and_values() {
    let rig = rig_with(Interpolation::CubicSpline);
    let size = keyframe_size(&rig, 0);
    // 4 joints × (T, R, S) of 9 keys; a morph channel of 7 keys and 2 targets.
    assert_eq!(size.keys, 12 * 9 + 7);
    let per_joint = 3 * 9 * 4 + 9 * 3 * (12 + 16 + 12);
    assert_eq!(size.bytes, 4 * per_joint + 7 * 4 + 7 * 3 * 2 * 4);
}

#[test]
fn rotation_error_resolves_small_angles() {
    let a = Vec4::from(Quat::from_rotation_y(0.3));
    let b = Vec4::from(Quat::from_rotation_y(0.3 + 0.01f32.to_radians()));
    assert!((rotation_error_degrees(a, b) - 0.01).abs() < 1e-4);
    assert!((rotation_error_degrees(a, -b) - 0.01).abs() < 1e-4);
}
