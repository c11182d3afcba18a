//! The Curves window driven as a person would: opened by its key for the selected joint, the
//! time line dragged (seeking the playback), a key clicked for its tangents; what it plots
//! checked against `motion::curves`, the data `inspect --curves` prints.

use crate::common;

use crate::common::skinned::{SkinnedMesh, elbow_joints, only};
use egui_kittest::kittest::Queryable;
use glam::{Quat, Vec3, Vec4};
use rigscope::motion::curves::{KeyFlag, Reading, SAMPLES_PER_SECOND, joint_curves};
use rigscope::motion::rotation::RotationView;
use rigscope::rig::{Channel, Clip, Interpolation, Property, Rig};
use rigscope::viewer::Viewer;

/// A tube from `upper` to `tip` bent at `lower`, with a two-second clip on `lower`: a rotation
/// about z through 170° to 190° whose second key is stored negated (a hemisphere flip), a cubic
/// translation whose first key leaves with a tangent of (0, 3, 0) per second, and a stepped
/// scale.
fn animated_elbow() -> (Rig, usize) {
    let mut mesh = SkinnedMesh::new(elbow_joints());
    mesh.add_tube(Vec3::ZERO, 2.0 * Vec3::Y, 0.2, 9, 8, |p| {
        if p.y < 1.0 { only(0) } else { only(1) }
    });
    let mut rig = mesh.rig();
    let lower = rig.find_node("lower").unwrap();
    let turn = |degrees: f32| Vec4::from(Quat::from_rotation_z(degrees.to_radians()));
    let rest = rig.nodes[lower].rest.translation.extend(0.0);
    rig.clips = vec![Clip {
        name: "bend".into(),
        duration: 2.0,
        channels: vec![
            Channel {
                node: lower,
                property: Property::Rotation,
                interpolation: Interpolation::Linear,
                times: vec![0.0, 1.0, 2.0],
                values: vec![turn(170.0), -turn(190.0), turn(170.0)],
            },
            Channel {
                node: lower,
                property: Property::Translation,
                interpolation: Interpolation::CubicSpline,
                times: vec![0.0, 2.0],
                values: vec![
                    Vec4::ZERO,
                    rest,
                    Vec4::new(0.0, 3.0, 0.0, 0.0),
                    Vec4::ZERO,
                    rest,
                    Vec4::ZERO,
                ],
            },
            Channel {
                node: lower,
                property: Property::Scale,
                interpolation: Interpolation::Step,
                times: vec![0.0, 0.5, 1.5],
                values: vec![Vec4::ONE, Vec4::splat(1.5), Vec4::ONE],
            },
        ],
        source: None,
    }];
    (rig, lower)
}

type Harness<'a> = egui_kittest::Harness<'a, (Viewer, rigscope::ui::UiState)>;

fn opened_on(rig: Rig, joint: usize) -> Harness<'static> {
    let mut viewer = Viewer::new(rig, None);
    viewer.set_playing(false);
    viewer.view.selected_joint = Some(joint);
    let mut harness = common::main_window(viewer, 1400.0, 1000.0);
    harness.run();
    harness.key_press(egui::Key::K);
    harness.run();
    assert!(harness.state().1.curves.open, "K opens the Curves window");
    harness
}

#[test]
fn the_curves_window_plots_the_selected_joints_keys_and_samples_as_inspect_reads_them() {
    let (rig, lower) = animated_elbow();
    let clip = rig.clips[0].clone();
    let rest = rig.nodes[lower].rest.rotation;
    let mut harness = opened_on(rig, lower);
    let expected = joint_curves(&clip, lower, SAMPLES_PER_SECOND);
    let plotted = harness.state().1.curves.plotted().to_vec();
    assert_eq!(plotted.len(), 3);
    for (shown, curve) in plotted.iter().zip(&expected) {
        assert_eq!(shown.joint, lower);
        assert_eq!(rigscope::motion::curves::property_name(shown.property), curve.property);
        let times: Vec<f32> = shown.samples.iter().map(|s| s.time).collect();
        assert_eq!(times, curve.samples.iter().map(|s| s.time).collect::<Vec<_>>());
        assert_eq!(shown.keys.len(), curve.keys.len());
        if shown.property != Property::Rotation {
            for (value, sample) in shown.sample_values.iter().zip(&curve.samples) {
                assert_eq!(value[..3], sample.value.map(f64::from)[..3]);
            }
        }
    }
    // Rotation, read by default as x-y-z Euler angles: z sweeps 170° → 190° → 170°, 20° a
    // second, straight through 180° (the sampled, shortest-arc curve), and the flipped key
    // lies on it at 190° marked as a flip.
    let rotation = plotted.iter().find(|c| c.property == Property::Rotation).unwrap();
    assert_eq!(rotation.reading.view, RotationView::EulerXyz);
    for (sample, value) in rotation.samples.iter().zip(&rotation.sample_values) {
        let t = f64::from(sample.time);
        let z = 170.0 + 20.0 * if t <= 1.0 { t } else { 2.0 - t };
        assert!((value[2] - z).abs() < 1e-2, "{t}: {value:?}");
        assert!(value[0].abs() < 1e-2 && value[1].abs() < 1e-2, "{t}: {value:?}");
    }
    assert!(
        (rotation.key_values[1][2] - 190.0).abs() < 1e-2,
        "{:?}",
        rotation.key_values
    );
    assert!(rotation.flags.contains(&(1, KeyFlag::HemisphereFlip)));
    assert!(rotation.flags.contains(&(2, KeyFlag::HemisphereFlip)));
    // The stepped scale holds each key's value up to the next key's time.
    let scale = plotted.iter().find(|c| c.property == Property::Scale).unwrap();
    let path: Vec<(f32, f64)> = scale
        .path
        .iter()
        .zip(&scale.path_values)
        .map(|(s, v)| (s.time, v[0]))
        .collect();
    assert_eq!(path, [(0.0, 1.0), (0.5, 1.0), (0.5, 1.5), (1.5, 1.5), (1.5, 1.0)]);

    // Quaternion components: the stored keys, the flip showing as a change of sign.
    harness.state_mut().1.curves.options.rotation_view = RotationView::Quat;
    harness.run();
    let rotation = (harness.state().1.curves.plotted().iter())
        .find(|c| c.property == Property::Rotation)
        .unwrap()
        .clone();
    let stored = &expected.iter().find(|c| c.property == "rotation").unwrap();
    for (value, key) in rotation.key_values.iter().zip(&stored.keys) {
        assert_eq!(*value, key.value.map(f64::from));
    }
    for (value, sample) in rotation.sample_values.iter().zip(&stored.samples) {
        assert_eq!(*value, sample.value.map(f64::from));
    }
    let reading = Reading {
        property: Property::Rotation,
        view: RotationView::AxisZ,
        rest,
    };
    assert_eq!(reading.components(), ["about z"]);
}

#[test]
fn dragging_the_time_line_seeks_the_playback_and_clicking_a_key_shows_its_tangents() {
    let (rig, lower) = animated_elbow();
    let mut harness = opened_on(rig, lower);
    let curves = &harness.state().1.curves;
    let at = |time: f64| curves.time_position(Property::Rotation, time).unwrap();
    let (start, end) = (at(0.0), at(1.25));
    assert!(end.x > start.x + 100.0, "{start:?} {end:?}");
    let pixel_seconds = 1.25 / f64::from(end.x - start.x);
    harness.event(egui::Event::PointerMoved(start));
    harness.event(egui::Event::PointerButton {
        pos: start,
        button: egui::PointerButton::Primary,
        pressed: true,
        modifiers: egui::Modifiers::NONE,
    });
    harness.step();
    for k in 1..=8 {
        harness.event(egui::Event::PointerMoved(start.lerp(end, k as f32 / 8.0)));
        harness.step();
    }
    let time = f64::from(harness.state().0.player().time);
    assert!((time - 1.25).abs() <= 2.0 * pixel_seconds, "dragged to {time}");
    harness.event(egui::Event::PointerButton {
        pos: end,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    harness.run();
    assert!(!harness.state().0.player().playing);
    assert!((f64::from(harness.state().0.player().time) - 1.25).abs() <= 2.0 * pixel_seconds);

    // The cubic translation's first key: its out tangent (0, 3, 0) per second drawn half a
    // second out (a quarter of the two-second gap), to y = 1 + 0.5·3.
    let curves = &harness.state().1.curves;
    let (index, translation) = (curves.plotted().iter().enumerate())
        .find(|(_, c)| c.property == Property::Translation)
        .unwrap();
    let key = curves
        .screen_position(Property::Translation, 0.0, translation.key_values[0][1])
        .unwrap();
    let before = harness.state().0.player().time;
    harness.event(egui::Event::PointerMoved(key));
    for pressed in [true, false] {
        harness.event(egui::Event::PointerButton {
            pos: key,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
    harness.run();
    let curves = &harness.state().1.curves;
    assert_eq!(curves.selected_key, Some((index, 0)));
    assert_eq!(
        harness.state().0.player().time,
        before,
        "a click on a key does not seek"
    );
    let [(in_time, _), (out_time, out)] = curves.plotted()[index].tangent_ends(0).unwrap();
    assert_eq!((in_time, out_time), (-0.5, 0.5));
    assert!((out[1] - (1.0 + 0.5 * 3.0)).abs() < 1e-6, "{out:?}");
}

#[test]
fn a_finding_marker_explains_itself_and_pinned_joints_stay_plotted() {
    let (rig, lower) = animated_elbow();
    let upper = rig.find_node("upper").unwrap();
    let mut harness = opened_on(rig, lower);
    // Hovering the flipped key (z, the third Euler angle) explains the flip.
    let curves = &harness.state().1.curves;
    let rotation = curves
        .plotted()
        .iter()
        .find(|c| c.property == Property::Rotation)
        .unwrap();
    let marker = curves
        .screen_position(Property::Rotation, 1.0, rotation.key_values[1][2])
        .unwrap();
    harness.event(egui::Event::PointerMoved(marker));
    harness.run();
    let explained = harness
        .query_all_by_label_contains("key 1 at 1.000 s: quaternion in the opposite hemisphere")
        .count();
    assert!(explained > 0, "the tooltip explains the flip");
    // Pinned, `lower` stays when `upper` is selected: both joints' channels are plotted.
    harness.get_by_label("Pin").click();
    harness.run();
    harness.state_mut().0.view.selected_joint = Some(upper);
    harness.run();
    let joints: Vec<usize> = harness.state().1.curves.plotted().iter().map(|c| c.joint).collect();
    assert_eq!(joints, [lower, lower, lower], "upper has no channels of its own");
    assert_eq!(harness.state().1.curves.joints(&harness.state().0), [upper, lower]);
    harness.get_by_label("lower ×").click();
    harness.run();
    assert!(harness.state().1.curves.plotted().is_empty());
    harness.get_by_label_contains("Not animated by the playing clip");
}

/// A clip that animates properties lists each track in the Curves window by its pointer, with
/// its value at the time shown.
#[test]
fn the_curves_window_lists_the_playing_clips_property_tracks() {
    let (document, bin) = common::property_scene::property_scene();
    let rig = rigscope::rig::load_slice(&common::gltf_with(document, &bin), None, "properties.gltf").unwrap();
    let left = rig.find_node("left").unwrap();
    let mut harness = opened_on(rig, left);
    harness.state_mut().0.seek(0.5);
    harness.run();
    harness.get_by_label_contains("Animated properties (6)");
    // Half-way from red to blue.
    harness.get_by_label(
        "/materials/0/pbrMetallicRoughness/baseColorFactor (linear, 2 keys) = [0.500, 0.000, 0.500, 1.000]",
    );
    harness.get_by_label_contains("/nodes/1/extensions/KHR_node_visibility/visible (step, 2 keys) = [0.000]");
    harness.get_by_label_contains("/extensions/KHR_lights_punctual/lights/0/intensity (linear, 2 keys) = [3.000]");
}
