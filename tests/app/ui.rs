//! The UI driven as a person would: widgets found by their labels, clicked, dragged and typed
//! into, then the viewer's state checked.

use crate::common;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rigscope::render::{DeformationMeasure, ViewMode};
use rigscope::skin::SkinningPath;
use rigscope::ui::UiState;
use rigscope::viewer::Viewer;

fn harness<'a>() -> Harness<'a, (Viewer, UiState)> {
    common::main_window(Viewer::new(common::load_demo(), None), 1400.0, 1000.0)
}

#[test]
fn selecting_a_joint_in_the_tree_and_bending_it_changes_the_pose() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("joint3").click();
    harness.run();
    let joint3 = harness.state().0.rig().find_node("joint3").unwrap();
    assert_eq!(harness.state().0.view.selected_joint, Some(joint3));

    let before = harness.state_mut().0.pose().palettes[0].clone();
    harness
        .get_by_role_and_label(egui::accesskit::Role::Slider, "rotate Z")
        .set_value_accesskit(45.0);
    harness.run();
    let viewer = &mut harness.state_mut().0;
    let bend = viewer.animation().overrides[joint3].rotation;
    let expected = glam::DQuat::from_rotation_z(45f64.to_radians());
    assert!(
        (bend.as_dquat() - expected)
            .length()
            .min((bend.as_dquat() + expected).length())
            < 1e-6,
        "the Z slider at 45° turns the joint 45° about Z: {bend}"
    );
    let slot = viewer.rig().skins[0].joints.iter().position(|&j| j == joint3).unwrap();
    assert_ne!(
        viewer.pose().palettes[0][slot],
        before[slot],
        "the bent joint's palette entry moved"
    );
    assert_eq!(viewer.pose().palettes[0][0], before[0], "its parent's did not");

    harness.get_by_label("Reset pose").click();
    harness.run();
    assert!(!harness.state().0.animation().has_overrides());
}

#[test]
fn skinning_path_method_and_view_mode_switch_by_their_labels_and_keys() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("CPU").click();
    harness.run();
    assert_eq!(harness.state().0.skinning_path(), SkinningPath::Cpu);
    harness.get_by_label("DQS").click();
    harness.run();
    assert_eq!(harness.state().0.skinning_method(), rigscope::skin::SkinningMethod::Dqs);
    harness.get_by_label("GPU").click();
    harness.run();
    assert_eq!(harness.state().0.skinning_path(), SkinningPath::Gpu);

    harness.get_by_label("3  Joints").click();
    harness.run();
    assert_eq!(harness.state().0.view.options.mode, ViewMode::Joints);
    harness.key_press(egui::Key::Num2);
    harness.run();
    assert_eq!(harness.state().0.view.options.mode, ViewMode::Weights);
    harness.key_press(egui::Key::C);
    harness.run();
    assert_eq!(harness.state().0.skinning_path(), SkinningPath::Cpu);

    harness.get_by_label("7  Deformation").click();
    harness.run();
    assert_eq!(harness.state().0.view.options.mode, ViewMode::Deformation);
    harness.get_by_label("Edge stretch").click();
    harness.run();
    assert_eq!(harness.state().0.view.options.deformation, DeformationMeasure::Stretch);
    harness.get_by_label("8  Weight symmetry").click();
    harness.run();
    assert_eq!(harness.state().0.view.options.mode, ViewMode::Symmetry);
    // The window's next frame runs the check the view needs (see `Viewer::prepare_frame`).
    harness.state_mut().0.prepare_frame();
    harness.run();
    // The demo tail has no left and right joints: the panel says so rather than guessing.
    harness.get_by_label("No mirrored Left/Right joint pairs: nothing to compare.");
    harness.key_press(egui::Key::Num7);
    harness.run();
    assert_eq!(harness.state().0.view.options.mode, ViewMode::Deformation);
}

#[test]
fn space_pauses_and_resumes_playback_and_arrows_step_frames() {
    let mut harness = harness();
    harness.run();
    assert!(harness.state().0.player().playing);
    harness.key_press(egui::Key::Space);
    harness.run();
    assert!(!harness.state().0.player().playing);
    let time = harness.state().0.player().time;
    harness.key_press(egui::Key::ArrowRight);
    harness.run();
    assert!((harness.state().0.player().time - time - rigscope::anim::FRAME_SECONDS).abs() < 1e-6);
    harness.key_press(egui::Key::Space);
    harness.run();
    assert!(harness.state().0.player().playing);
    // Time advances when the window's clock ticks a playing viewer.
    let before = harness.state().0.player().time;
    harness.state_mut().0.tick(0.1);
    assert!((harness.state().0.player().time - before - 0.1).abs() < 1e-5);
}

#[test]
fn the_status_bar_says_when_the_view_shows_a_heavy_scenes_proxy() {
    use rigscope::ui::{self, FrameInfo};
    let detail = rigscope::render::detail::SceneDraw::Proxy.status(1);
    let mut harness = Harness::builder().with_size(egui::vec2(1400.0, 1000.0)).build_ui_state(
        |ui, (viewer, state, info): &mut (Viewer, UiState, FrameInfo)| {
            ui::show(ui, viewer, state, info);
        },
        (
            Viewer::new(common::load_demo(), None),
            UiState::default(),
            FrameInfo {
                detail,
                ..FrameInfo::default()
            },
        ),
    );
    harness.run();
    harness.get_by_label("Coarse proxy while the view moves");
    // Drawn whole again: the line goes.
    harness.state_mut().2.detail = None;
    harness.run();
    assert!(harness.query_by_label("Coarse proxy while the view moves").is_none());
}

#[test]
fn a_deep_chain_scrolls_in_its_panel_instead_of_crowding_out_the_3d_view() {
    use rigscope::ui::{self, FrameInfo};
    // 64 joints, each the child of the one before: the tree indents 64 levels.
    let rig = rigscope::synthetic::skinned_tube(640, 64);
    let width = 1400.0;
    let mut harness = Harness::builder().with_size(egui::vec2(width, 1000.0)).build_ui_state(
        |ui, (viewer, state, viewport): &mut (Viewer, UiState, egui::Rect)| {
            *viewport = ui::show(ui, viewer, state, &FrameInfo::default()).viewport;
        },
        (Viewer::new(rig, None), UiState::default(), egui::Rect::NOTHING),
    );
    harness.run();
    let viewport = harness.state().2;
    assert!(
        viewport.width() >= 0.3 * width,
        "the 3D view keeps {} of {width} points",
        viewport.width()
    );
    // The deepest joint is still in the tree, reached by scrolling.
    harness.get_by_label("joint63");
}

#[test]
fn the_shaded_views_tone_curve_and_exposure_are_set_in_the_view_panel() {
    use rigscope::render::pbr::Tonemap;
    let mut harness = harness();
    harness.run();
    assert_eq!(harness.state().0.view.options.tone.curve, Tonemap::Neutral);
    harness.get_by_label("ACES (Narkowicz fit)").click();
    harness.run();
    assert_eq!(harness.state().0.view.options.tone.curve, Tonemap::Aces);
    harness.get_by_label("None (clip)").click();
    harness.run();
    assert_eq!(harness.state().0.view.options.tone.curve, Tonemap::None);
    // The controls belong to the shaded view: another view hides them.
    harness.get_by_label("3  Joints").click();
    harness.run();
    assert!(harness.query_by_label("None (clip)").is_none());
}
