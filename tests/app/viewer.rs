//! Viewer state without a window: loading in the background, failed loads, playback controls.

use crate::common;

use rigscope::viewer::Viewer;

fn wait_for_load(viewer: &mut Viewer) {
    viewer.wait_for_load();
    assert!(viewer.loading().is_none(), "the load never finished");
}

#[test]
fn a_failed_load_keeps_the_rig_camera_and_time_and_reports_the_error() {
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.seek(0.7);
    viewer.view.camera.orbit(40.0, 10.0);
    let (generation, camera, time) = (viewer.document().generation, viewer.view.camera, viewer.player().time);
    let missing = std::env::temp_dir().join("rigscope-no-such-file.glb");
    viewer.open(missing.clone());
    assert!(viewer.loading().is_some());
    wait_for_load(&mut viewer);
    let error = viewer.diagnostics.error.clone().expect("the failure is reported");
    assert!(
        error.contains("could not open") && error.contains("rigscope-no-such-file.glb"),
        "{error}"
    );
    assert_eq!(viewer.document().generation, generation);
    assert_eq!(viewer.rig().name, "demo.glb");
    assert_eq!(viewer.view.camera, camera);
    assert_eq!(viewer.player().time, time);
}

#[test]
fn a_background_load_replaces_the_rig_and_frames_it() {
    let Some(dir) = common::shared_rigs() else { return };
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.diagnostics.error = Some("an old error".into());
    viewer.open(dir.join("Fox.glb"));
    wait_for_load(&mut viewer);
    assert_eq!(viewer.diagnostics.error, None);
    assert_eq!(viewer.rig().name, "Fox.glb");
    assert_eq!(viewer.document().generation, 2);
    assert_eq!(viewer.player().clip, Some(0));
    assert!((viewer.view.camera.target - viewer.document().rest_bounds.center()).length() < 1e-3);
}

#[test]
fn playback_controls_move_the_pose() {
    let mut viewer = Viewer::new(common::load_demo(), None);
    let wave = viewer.rig().find_clip("Wave").expect("demo has Wave");
    viewer.select_clip(Some(wave));
    let rest = viewer.pose().palettes[0].clone();
    assert!(viewer.tick(0.5), "a playing clip asks for a redraw");
    assert!((viewer.player().time - 0.5).abs() < 1e-6);
    assert_ne!(viewer.pose().palettes[0], rest, "the pose follows the clip");
    viewer.toggle_play();
    assert!(!viewer.tick(0.5), "a paused, idle viewer does not ask for redraws");
    viewer.step(3);
    assert!((viewer.player().time - (0.5 + 3.0 / 30.0)).abs() < 1e-5);
}

#[test]
fn setters_only_mark_the_pose_and_a_frame_evaluates_it_once() {
    use rigscope::anim::JointOverride;
    use rigscope::skin::{SkinningMethod, SkinningPath};
    let mut viewer = Viewer::new(common::load_demo(), None);
    let wave = viewer.rig().find_clip("Wave").expect("demo has Wave");
    viewer.prepare_frame();
    assert_eq!(viewer.prepare_frame(), None, "nothing changed, nothing evaluated");

    let before = viewer.last_pose().palettes[0].clone();
    viewer.select_clip(Some(wave));
    viewer.seek(0.4);
    let joint = viewer.rig().skins[0].joints[2];
    let bend = JointOverride::from_euler_degrees(glam::Vec3::new(0.0, 0.0, 30.0));
    viewer.set_override(joint, bend);
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Dqs);
    assert_eq!(viewer.last_pose().palettes[0], before, "setters do not evaluate");

    let stages = viewer.prepare_frame().expect("the changes are evaluated at the frame");
    assert!(stages.pose.is_some() && stages.cpu_skinning.is_some());
    assert_eq!(viewer.prepare_frame(), None, "once per change, however often asked");
    assert_ne!(viewer.last_pose().palettes[0], before);

    // What was evaluated is exactly the pose of those inputs, computed apart.
    let mut overrides = vec![JointOverride::IDENTITY; viewer.rig().nodes.len()];
    overrides[joint] = bend;
    let mut expected = rigscope::anim::PoseBuffers::new(viewer.rig());
    let inputs = rigscope::anim::PoseInputs {
        overrides: &overrides,
        dual_quaternions: true,
        ..rigscope::anim::PoseInputs::clip_at(Some(wave), 0.4)
    };
    rigscope::anim::evaluate_pose(viewer.rig(), &inputs, &mut expected);
    assert_eq!(viewer.last_pose().palettes, expected.palettes);
    assert_eq!(viewer.last_pose().dual_quats, expected.dual_quats);

    // Switching the path away and back neither evaluates nor skins again: the CPU's vertices
    // of this pose are still current.
    viewer.set_skinning(SkinningPath::Gpu, SkinningMethod::Dqs);
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Dqs);
    assert_eq!(viewer.prepare_frame(), None);
    // Changing the method evaluates again (LBS needs no dual quaternions) and skins again.
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    let stages = viewer.prepare_frame().expect("a new method is a new pose");
    assert!(stages.pose.is_some() && stages.cpu_skinning.is_some());
}

/// The demo rig renamed, so that two documents of it can be told apart.
fn demo_named(name: &str) -> rigscope::rig::Rig {
    let mut rig = common::load_demo();
    rig.name = name.to_owned();
    rig
}

#[test]
fn a_second_document_opens_beside_the_first_without_disturbing_it() {
    let mut viewer = Viewer::new(demo_named("first"), None);
    viewer.seek(0.4);
    let (camera, generation, time) = (viewer.view.camera, viewer.document().generation, viewer.player().time);
    let second = viewer.add_document(demo_named("second"), None);
    assert_eq!((second, viewer.documents().len(), viewer.active_index()), (1, 2, 0));
    assert_eq!(viewer.rig().name, "first");
    assert_eq!(viewer.document().generation, generation);
    assert_eq!((viewer.view.camera, viewer.player().time), (camera, time));
    let generations: Vec<u64> = viewer.documents().iter().map(|d| d.generation).collect();
    assert_ne!(generations[0], generations[1], "each document has its own generation");
}

#[test]
fn activating_a_document_carries_clip_time_selection_and_bends_by_name() {
    let mut viewer = Viewer::new(demo_named("first"), None);
    let wave = viewer.rig().find_clip("Wave").expect("demo has Wave");
    viewer.select_clip(Some(wave));
    viewer.seek(0.6);
    let joint = viewer.rig().find_node("joint2").expect("demo has joint2");
    viewer.view.selected_joint = Some(joint);
    let mut bend = rigscope::anim::JointOverride::IDENTITY;
    bend.rotation = glam::Quat::from_rotation_x(30f32.to_radians());
    viewer.set_override(joint, bend);
    let expected = viewer.pose().palettes.clone();

    // The second document lists its clips in another order: the clip carries by name.
    let mut second = demo_named("second");
    second.clips.reverse();
    let second = viewer.add_document(second, None);
    viewer.activate(second);
    assert_eq!(viewer.rig().name, "second");
    let clip = viewer.player().clip.expect("a clip plays");
    assert_eq!(viewer.rig().clips[clip].name, "Wave");
    assert!((viewer.player().time - 0.6).abs() < 1e-6);
    assert_eq!(viewer.view.selected_joint, Some(joint));
    assert_eq!(viewer.animation().overrides[joint].rotation, bend.rotation);
    assert_eq!(
        viewer.pose().palettes,
        expected,
        "the same rig in the same state poses the same"
    );

    viewer.activate(0);
    assert_eq!(viewer.rig().name, "first");
    assert_eq!(viewer.rig().clips[viewer.player().clip.unwrap()].name, "Wave");
}

#[test]
fn each_document_keeps_its_own_report_and_closing_one_shows_another() {
    let mut viewer = Viewer::new(demo_named("first"), None);
    let first_report = viewer.rig_report();
    viewer.add_document(demo_named("second"), None);
    viewer.activate(1);
    assert!(viewer.document().report.is_none(), "not computed for the second yet");
    let second_report = viewer.rig_report();
    assert!(!std::sync::Arc::ptr_eq(&first_report, &second_report));
    viewer.activate(0);
    let again = viewer.rig_report();
    assert!(
        std::sync::Arc::ptr_eq(&first_report, &again),
        "kept while the document stays open"
    );

    viewer.close_document(0);
    assert_eq!((viewer.documents().len(), viewer.active_index()), (1, 0));
    assert_eq!(viewer.rig().name, "second");
    viewer.close_document(0);
    assert_eq!(viewer.documents().len(), 1, "the last document stays open");
}

#[test]
fn clips_from_another_file_are_added_kept_on_reload_and_pose_like_their_source() {
    let dir = tempfile::tempdir().unwrap();
    let clips_file = dir.path().join("clips.glb");
    std::fs::write(
        &clips_file,
        rigscope::rig::demo::demo_glb(rigscope::rig::demo::DEMO_JOINTS),
    )
    .unwrap();
    let mut viewer = Viewer::new(common::load_demo(), None);
    let own_clips = viewer.rig().clips.len();
    viewer.load_clips_from(clips_file.clone());
    wait_for_load(&mut viewer);
    assert_eq!(viewer.diagnostics.error, None);
    assert_eq!(viewer.rig().clips.len(), 2 * own_clips);
    assert_eq!(viewer.document().clip_files(), std::slice::from_ref(&clips_file));
    let report = &viewer.document().carried()[0].report;
    assert!(report.joints.unmatched_target.is_empty(), "{}", report.summary());

    // The same skeleton: the carried clip poses like the clip it came from at its keys and at
    // the samples 1/30 s apart that carry the demo's cubic splines between them.
    let wave = viewer.rig().find_clip("Wave").unwrap();
    let carried = viewer
        .rig()
        .find_clip("Wave (clips.glb)")
        .expect("renamed beside the rig's own");
    assert_eq!(
        viewer.rig().clips[carried].source.as_deref(),
        Some(clips_file.as_path())
    );
    let palettes_at = |viewer: &mut Viewer, clip, time| {
        viewer.select_clip(Some(clip));
        viewer.seek(time);
        viewer.pose().palettes.clone()
    };
    let key_times = viewer.rig().clips[wave].channels[0].times.clone();
    let duration = viewer.rig().clips[wave].duration;
    let samples = (0..).map(|i| i as f32 / 30.0).take_while(move |&t| t <= duration);
    for time in key_times.into_iter().chain(samples) {
        let (own, other) = (
            palettes_at(&mut viewer, wave, time),
            palettes_at(&mut viewer, carried, time),
        );
        for (a, b) in own.iter().flatten().zip(other.iter().flatten()) {
            assert!(a.abs_diff_eq(*b, 1e-5), "at {time} s: {a} vs {b}");
        }
    }

    viewer.reload();
    wait_for_load(&mut viewer);
    assert_eq!(viewer.rig().clips.len(), 2 * own_clips, "a reload adds the clips again");
    assert_eq!(
        viewer.rig().clips[viewer.player().clip.unwrap()].name,
        "Wave (clips.glb)"
    );

    let generation = viewer.document().generation;
    viewer.load_clips_from(dir.path().join("missing.glb"));
    wait_for_load(&mut viewer);
    let error = viewer.diagnostics.error.clone().expect("the failure is reported");
    assert!(
        error.contains("cannot load clips from") && error.contains("missing.glb"),
        "{error}"
    );
    assert_eq!(viewer.document().generation, generation, "the rig stays");
    assert_eq!(viewer.document().clip_files(), [clips_file]);
}
