//! Posing in the 3D view as a person does it: dragging a ring of the rotation gizmo, Blender's `R` / `G`
//! keys with axis locks and typed amounts, clearing with `Alt+R`, and dragging a hand's IK goal. Each is
//! checked against the joint's world transform computed apart from the UI, and against the edit history.

use crate::common;

use egui::{Event, Key, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use glam::{Quat, Vec3};
use rigscope::anim::JointOverride;
use rigscope::anim::gizmo::{GizmoSpace, RingKind, world_rotation};
use rigscope::ui::{self, FrameInfo, UiState};
use rigscope::viewer::Viewer;

struct Session {
    viewer: Viewer,
    ui: UiState,
    viewport: egui::Rect,
}

/// The demo rig, paused, seen straight down −Z (the camera on +Z), `joint` selected.
fn posing(joint: &str) -> (Harness<'static, Session>, usize) {
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.set_playing(false);
    viewer.view.camera.yaw = 0.0;
    viewer.view.camera.pitch = 0.0;
    let node = viewer.rig().find_node(joint).unwrap();
    viewer.view.selected_joint = Some(node);
    (harness_of(viewer), node)
}

/// Where a world point is drawn in the view, from the camera's own matrices.
fn on_screen(session: &Session, world: Vec3) -> Pos2 {
    let viewport = session.viewport;
    let clip = session.viewer.view.camera.view_projection(viewport.aspect_ratio()) * world.extend(1.0);
    let ndc = clip.truncate() / clip.w;
    egui::pos2(
        viewport.min.x + (ndc.x * 0.5 + 0.5) * viewport.width(),
        viewport.min.y + (0.5 - ndc.y * 0.5) * viewport.height(),
    )
}

fn joint_world(harness: &mut Harness<'static, Session>, node: usize) -> glam::Mat4 {
    harness.state_mut().viewer.pose().worlds[node]
}

/// Whether two unit quaternions are one rotation within `tolerance` in their components (q and −q alike).
fn same_rotation(a: Quat, b: Quat, tolerance: f32) -> bool {
    (a - b).length().min((a + b).length()) < tolerance
}

fn press(harness: &mut Harness<'static, Session>, pos: Pos2, pressed: bool) {
    harness.event(Event::PointerButton {
        pos,
        button: PointerButton::Primary,
        pressed,
        modifiers: Modifiers::NONE,
    });
}

/// A drag with the primary button from `start` to `end` in six steps, a frame each.
fn drag(harness: &mut Harness<'static, Session>, start: Pos2, end: Pos2) {
    press(harness, start, true);
    harness.step();
    for k in 1..=6 {
        harness.event(Event::PointerMoved(start.lerp(end, k as f32 / 6.0)));
        harness.step();
    }
    press(harness, end, false);
}

/// The world Z ring's point at `degrees` (from world X towards world Y), at the gizmo's radius: 70 points
/// at the joint's distance from the eye.
fn z_ring_point(harness: &Harness<'static, Session>, center: Vec3, degrees: f32) -> Pos2 {
    let session = harness.state();
    let camera = &session.viewer.view.camera;
    let per_point = 2.0 * camera.eye().distance(center) * (camera.fov_y * 0.5).tan() / session.viewport.height();
    let radius = ui::gizmo::GIZMO_RADIUS_POINTS * per_point;
    let a = degrees.to_radians();
    on_screen(session, center + radius * Vec3::new(a.cos(), a.sin(), 0.0))
}

/// Where ring drags start: away from 0° and 90°, where the X and Y rings, seen edge-on, cross the Z ring.
const GRAB_DEGREES: f32 = 30.0;

/// Drags along the world Z ring from 30° through `degrees` more in steps of at most 10°, with `modifiers`
/// held.
fn drag_z_ring(harness: &mut Harness<'static, Session>, center: Vec3, degrees: f32, modifiers: Modifiers) {
    let start = z_ring_point(harness, center, GRAB_DEGREES);
    harness.event(Event::PointerMoved(start));
    harness.run();
    assert_eq!(
        harness.state().ui.pose_tools.hovered_ring(),
        Some(RingKind::Z),
        "hovering highlights the ring"
    );
    harness.event(Event::ModifiersChanged(modifiers));
    press(harness, start, true);
    harness.step();
    let steps = (degrees.abs() / 10.0).ceil().max(1.0) as usize;
    for k in 1..=steps {
        let at = z_ring_point(harness, center, GRAB_DEGREES + degrees * k as f32 / steps as f32);
        harness.event(Event::PointerMoved(at));
        harness.step();
        assert_eq!(harness.state().ui.pose_tools.dragging_ring(), Some(RingKind::Z));
    }
    let end = z_ring_point(harness, center, GRAB_DEGREES + degrees);
    press(harness, end, false);
    harness.event(Event::ModifiersChanged(Modifiers::NONE));
    harness.run();
    assert_eq!(harness.state().ui.pose_tools.dragging_ring(), None);
}

#[test]
fn dragging_the_z_ring_through_ninety_degrees_turns_the_joint_a_quarter_about_world_z_as_one_edit() {
    let (mut harness, joint) = posing("joint3");
    harness.state_mut().ui.pose_tools.space = GizmoSpace::World;
    let before = joint_world(&mut harness, joint);
    let center = before.w_axis.truncate();
    drag_z_ring(&mut harness, center, 90.0, Modifiers::NONE);

    let after = joint_world(&mut harness, joint);
    let expected = Quat::from_rotation_z(90f32.to_radians()) * world_rotation(&before);
    // The cursor's rays come through the inverse of an f32 view-projection: 1e-4 in the components is
    // 0.01° of turn.
    assert!(
        same_rotation(world_rotation(&after), expected, 1e-4),
        "turned {:?}, expected {expected:?}",
        world_rotation(&after)
    );
    assert!(
        (after.w_axis - before.w_axis).length() < 1e-5,
        "the joint turns where it stands"
    );

    // The whole drag is one edit; undone, the joint is as it was.
    let viewer = &mut harness.state_mut().viewer;
    assert_eq!(viewer.history().undo_label(), Some("bend joint3"));
    assert_eq!(viewer.undo().as_deref(), Some("bend joint3"));
    assert_eq!(viewer.animation().overrides[joint], JointOverride::IDENTITY);
    assert_eq!(viewer.history().undo_label(), None);
}

#[test]
fn ctrl_while_dragging_a_ring_snaps_to_five_degrees() {
    let (mut harness, joint) = posing("joint3");
    harness.state_mut().ui.pose_tools.space = GizmoSpace::World;
    let before = joint_world(&mut harness, joint);
    drag_z_ring(&mut harness, before.w_axis.truncate(), 47.0, Modifiers::COMMAND);
    let after = joint_world(&mut harness, joint);
    let expected = Quat::from_rotation_z(45f32.to_radians()) * world_rotation(&before);
    assert!(
        same_rotation(world_rotation(&after), expected, 1e-5),
        "47° dragged snaps to 45°"
    );
}

/// Moves the pointer over the middle of the view, where keys go to the view.
fn hover_view(harness: &mut Harness<'static, Session>) {
    let at = harness.state().viewport.center() + egui::vec2(0.0, 120.0);
    harness.event(Event::PointerMoved(at));
    harness.run();
}

fn keys(harness: &mut Harness<'static, Session>, keys: &[Key]) {
    for &key in keys {
        harness.key_press(key);
        harness.step();
    }
}

#[test]
fn r_x_9_0_enter_turns_the_joint_a_quarter_about_world_x_and_the_digits_switch_no_view() {
    let (mut harness, joint) = posing("joint3");
    let before = joint_world(&mut harness, joint);
    let mode = harness.state().viewer.view.options.mode;
    hover_view(&mut harness);
    keys(&mut harness, &[Key::R, Key::X, Key::Num9, Key::Num0]);
    assert_eq!(harness.state().ui.pose_tools.modal_text(), Some("Rotate X 90°"));
    keys(&mut harness, &[Key::Enter]);
    harness.run();
    assert_eq!(harness.state().ui.pose_tools.modal_text(), None);
    assert_eq!(
        harness.state().viewer.view.options.mode,
        mode,
        "9 and 0 were typed, not view keys"
    );

    let after = joint_world(&mut harness, joint);
    let expected = Quat::from_rotation_x(90f32.to_radians()) * world_rotation(&before);
    assert!(same_rotation(world_rotation(&after), expected, 1e-5));
    let viewer = &mut harness.state_mut().viewer;
    assert_eq!(viewer.undo().as_deref(), Some("bend joint3"));
    assert_eq!(viewer.animation().overrides[joint], JointOverride::IDENTITY);
}

#[test]
fn esc_gives_back_the_pose_before_bit_for_bit_and_leaves_no_edit() {
    let (mut harness, joint) = posing("joint3");
    let bent = JointOverride {
        rotation: rigscope::anim::euler_degrees_to_rotation(Vec3::new(12.5, -33.25, 71.0)),
        translation: Vec3::new(0.01, 0.0, -0.02),
        scale: 1.25,
    };
    let viewer = &mut harness.state_mut().viewer;
    viewer.set_override(joint, bent);
    viewer.end_gesture();
    hover_view(&mut harness);
    keys(&mut harness, &[Key::R]);
    let at = harness.state().viewport.center() + egui::vec2(-150.0, -40.0);
    harness.event(Event::PointerMoved(at));
    harness.step();
    assert_ne!(
        harness.state().viewer.animation().overrides[joint],
        bent,
        "the joint follows the cursor while R runs"
    );
    keys(&mut harness, &[Key::Y, Key::Escape]);
    harness.run();
    let viewer = &harness.state().viewer;
    let after = viewer.animation().overrides[joint];
    assert_eq!(
        after.rotation.to_array().map(f32::to_bits),
        bent.rotation.to_array().map(f32::to_bits)
    );
    assert_eq!(after, bent);
    assert_eq!(
        viewer.history().undo_label(),
        Some("bend joint3"),
        "only the bend made before"
    );
    assert_eq!(harness.state().ui.pose_tools.modal_text(), None);
}

#[test]
fn alt_r_and_alt_g_clear_the_rotation_and_the_translation_apart() {
    let (mut harness, joint) = posing("joint0");
    let bent = JointOverride {
        rotation: rigscope::anim::euler_degrees_to_rotation(Vec3::new(10.0, 20.0, 30.0)),
        translation: Vec3::new(0.1, 0.2, 0.3),
        scale: 1.5,
    };
    let viewer = &mut harness.state_mut().viewer;
    viewer.set_override(joint, bent);
    viewer.end_gesture();
    hover_view(&mut harness);
    harness.key_press_modifiers(Modifiers::ALT, Key::R);
    harness.run();
    let cleared = harness.state().viewer.animation().overrides[joint];
    assert_eq!(
        cleared,
        JointOverride {
            rotation: Quat::IDENTITY,
            ..bent
        }
    );
    harness.key_press_modifiers(Modifiers::ALT, Key::G);
    harness.run();
    let viewer = &mut harness.state_mut().viewer;
    assert_eq!(
        viewer.animation().overrides[joint],
        JointOverride {
            scale: 1.5,
            ..JointOverride::IDENTITY
        }
    );
    // Two edits of their own.
    viewer.undo();
    assert_eq!(viewer.animation().overrides[joint], cleared);
    viewer.undo();
    assert_eq!(viewer.animation().overrides[joint], bent);
}

#[test]
fn g_z_typed_moves_the_root_that_far_along_world_z_and_g_on_a_bone_says_why_not() {
    let (mut harness, root) = posing("joint0");
    let before = joint_world(&mut harness, root).w_axis.truncate();
    hover_view(&mut harness);
    keys(&mut harness, &[Key::G, Key::Z, Key::Minus, Key::Num2]);
    assert_eq!(harness.state().ui.pose_tools.modal_text(), Some("Move Z -2"));
    keys(&mut harness, &[Key::Enter]);
    harness.run();
    let after = joint_world(&mut harness, root).w_axis.truncate();
    assert!(
        (after - before - Vec3::new(0.0, 0.0, -2.0)).length() < 1e-4,
        "{before} → {after}"
    );

    // joint3 hangs from another bone and no clip moves it: nothing starts, a toast says why.
    let joint3 = harness.state().viewer.rig().find_node("joint3").unwrap();
    harness.state_mut().viewer.view.selected_joint = Some(joint3);
    harness.run();
    keys(&mut harness, &[Key::G]);
    harness.run();
    assert_eq!(harness.state().ui.pose_tools.modal_text(), None);
    assert!(
        (harness.state().ui.toasts.iter()).any(|t| t.text.starts_with("joint3 does not translate")),
        "a toast says why"
    );
}

#[test]
fn ctrl_alt_dragging_a_hand_makes_its_ik_goal_and_moves_it_in_the_view_plane() {
    let (mut harness, end) = posing("joint3");
    let at = joint_world(&mut harness, end).w_axis.truncate();
    let start = on_screen(harness.state(), at);
    let moved = start + egui::vec2(60.0, -30.0);
    harness.event(Event::PointerMoved(start));
    harness.run();
    harness.event(Event::ModifiersChanged(Modifiers::COMMAND | Modifiers::ALT));
    drag(&mut harness, start, moved);
    harness.event(Event::ModifiersChanged(Modifiers::NONE));
    harness.run();

    // The camera looks down −Z: the view plane through the joint is z = its z, and 60 points right and 30
    // up are that many points' world length at the joint's depth along +X and +Y.
    let session = harness.state();
    let camera = &session.viewer.view.camera;
    let depth = camera.eye().z - at.z;
    let per_point = 2.0 * depth * (camera.fov_y * 0.5).tan() / session.viewport.height();
    let goals = &session.viewer.animation().ik_goals;
    assert_eq!(goals.len(), 1);
    let rig = session.viewer.rig();
    assert_eq!(
        (goals[0].end, goals[0].mid, goals[0].start),
        (end, rig.find_node("joint2").unwrap(), rig.find_node("joint1").unwrap())
    );
    let expected = at + Vec3::new(60.0, 30.0, 0.0) * per_point;
    let error = (goals[0].target - expected).length() / (60.0 * per_point);
    assert!(error < 1e-3, "target {} expected {expected} ({error})", goals[0].target);
    assert!(
        (goals[0].target.z - at.z).abs() < 1e-4,
        "in the view plane through the joint"
    );

    // A click on the goal's handle selects the joint it pulls.
    let handle = on_screen(harness.state(), harness.state().viewer.animation().ik_goals[0].target);
    harness.state_mut().viewer.view.selected_joint = Some(0);
    harness.event(Event::PointerMoved(handle));
    press(&mut harness, handle, true);
    press(&mut harness, handle, false);
    harness.run();
    assert_eq!(harness.state().viewer.view.selected_joint, Some(end));

    // Making and moving the goal was one edit.
    let viewer = &mut harness.state_mut().viewer;
    assert_eq!(viewer.undo().as_deref(), Some("add IK goal"));
    assert!(viewer.animation().ik_goals.is_empty());
}

fn harness_of(viewer: Viewer) -> Harness<'static, Session> {
    let session = Session {
        viewer,
        ui: UiState::default(),
        viewport: egui::Rect::NOTHING,
    };
    let mut harness = Harness::builder().with_size(egui::vec2(1400.0, 1000.0)).build_ui_state(
        |ui, session: &mut Session| {
            let output = ui::show(ui, &mut session.viewer, &mut session.ui, &FrameInfo::default());
            session.viewport = output.viewport;
        },
        session,
    );
    harness.run();
    harness
}

fn last_toast(harness: &Harness<'static, Session>) -> String {
    harness
        .state()
        .ui
        .toasts
        .last()
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

#[test]
fn ctrl_c_and_ctrl_v_carry_a_pose_onto_the_joints_of_the_same_names_and_say_how_many_matched() {
    // The pose copied: the clip at 0.3 s with two joints bent by hand.
    let (mut copying, joint3) = posing("joint3");
    let viewer = &mut copying.state_mut().viewer;
    viewer.seek(0.3);
    let joint2 = viewer.rig().find_node("joint2").unwrap();
    let bend = |x: f32, z: f32| JointOverride::from_euler_degrees(Vec3::new(x, 0.0, z));
    viewer.set_override(joint2, bend(20.0, -35.0));
    viewer.set_override(joint3, bend(-50.0, 10.0));
    viewer.end_gesture();
    let copied_locals = viewer.pose().locals.clone();
    hover_view(&mut copying);
    copying.key_press_modifiers(Modifiers::COMMAND, Key::C);
    copying.run();
    let copied = copying.state().ui.pose_tools.clipboard.clone().expect("copied");
    let bones = copying
        .state()
        .viewer
        .rig()
        .hierarchy()
        .bones
        .iter()
        .filter(|b| **b)
        .count();
    assert_eq!(copied.len(), bones);
    assert!(
        last_toast(&copying).starts_with("Copied the pose of"),
        "{}",
        last_toast(&copying)
    );

    // Pasted onto the same skeleton at another time, one joint named with an exporter's prefix and the
    // last one named otherwise.
    let mut rig = common::load_demo();
    let renamed = rig.find_node("joint3").unwrap();
    rig.nodes[renamed].name = "Armature|joint3".into();
    let last = rig.nodes.iter().rposition(|n| n.name.starts_with("joint")).unwrap();
    rig.nodes[last].name = "tip".into();
    let mut viewer = Viewer::new(rig, None);
    viewer.set_playing(false);
    viewer.seek(0.7);
    let mut pasting = harness_of(viewer);
    pasting.state_mut().ui.pose_tools.clipboard = Some(copied);
    hover_view(&mut pasting);
    pasting.key_press_modifiers(Modifiers::COMMAND, Key::V);
    pasting.run();
    assert_eq!(
        last_toast(&pasting),
        format!(
            "Pasted the pose of the demo rig: {} joints matched of the {bones} copied",
            bones - 1
        )
    );
    let viewer = &mut pasting.state_mut().viewer;
    let pasted = viewer.pose().locals.clone();
    for node in 0..pasted.len() {
        if node == last {
            continue;
        }
        let source = &copied_locals[node];
        assert!(
            same_rotation(pasted[node].rotation, source.rotation, 1e-5),
            "node {node}: {:?} against {:?}",
            pasted[node].rotation,
            source.rotation
        );
        assert!((pasted[node].translation - source.translation).length() < 1e-5);
    }
    assert_eq!(viewer.undo().as_deref(), Some("paste pose from the demo rig"));
    assert!(!viewer.animation().has_overrides());
}

#[test]
fn a_pose_saved_as_a_clip_from_the_edit_menu_is_written_by_save_as() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.glb");
    std::fs::write(&file, rigscope::rig::demo::DEMO_GLB).unwrap();
    let mut viewer = Viewer::new(rigscope::rig::Rig::default(), None);
    viewer.open_now(&file).unwrap();
    viewer.set_playing(false);
    viewer.seek(0.4);
    let joint = viewer.rig().find_node("joint2").unwrap();
    viewer.set_override(joint, JointOverride::from_euler_degrees(Vec3::new(0.0, 30.0, 45.0)));
    viewer.end_gesture();
    let posed = viewer.pose().locals.clone();
    let clips = viewer.rig().clips.len();
    let mut harness = harness_of(viewer);
    harness.get_by_label("Edit").click();
    harness.run();
    harness.get_by_label("Save pose as clip…").click();
    harness.run();
    harness.get_by_label("Save").click();
    harness.run();
    assert_eq!(
        last_toast(&harness),
        "Saved the pose as clip 'Pose 1' (File > Save as… writes it)"
    );

    let viewer = &mut harness.state_mut().viewer;
    assert_eq!(viewer.rig().clips.len(), clips + 1);
    assert_eq!(viewer.history().undo_label(), Some("save pose as Pose 1"));
    let output = dir.path().join("saved.glb");
    viewer.save_as(&output).expect("saved");
    let saved = rigscope::rig::load_file(&output).unwrap();
    let clip = saved
        .find_clip("Pose 1")
        .map(|c| &saved.clips[c])
        .expect("the pose clip is in the file");
    let mut sampled = vec![rigscope::rig::Trs::IDENTITY; saved.nodes.len()];
    let mut hints = vec![0; clip.channels.len()];
    rigscope::anim::sample_clip(&saved.nodes, Some(clip), 0.0, &mut hints, &mut sampled);
    let bones = &saved.hierarchy().bones;
    for node in (0..saved.nodes.len()).filter(|&n| bones[n]) {
        assert!(
            same_rotation(sampled[node].rotation, posed[node].rotation, 1e-6),
            "node {node}"
        );
        assert!((sampled[node].translation - posed[node].translation).length() < 1e-6);
    }
    assert!(
        !same_rotation(sampled[joint].rotation, saved.nodes[joint].rest.rotation, 1e-4),
        "bent"
    );
}

#[test]
fn the_euler_read_out_goes_on_past_ninety_degrees_instead_of_jumping_half_a_turn() {
    let (mut harness, joint) = posing("joint3");
    let viewer = &mut harness.state_mut().viewer;
    viewer.select_clip(None);
    let rest = viewer.rig().nodes[joint].rest.rotation;
    assert!(
        same_rotation(rest, Quat::IDENTITY, 1e-6),
        "the demo's joints rest unturned"
    );
    let about_y = |degrees: f32| JointOverride::from_euler_degrees(Vec3::new(0.0, degrees, 0.0));
    // Turning on past 90° about Y: a decomposition that keeps Y within ±90° would show 180°, 85°, 180°.
    for degrees in [80.0, 88.0, 92.0, 95.0] {
        harness.state_mut().viewer.set_override(joint, about_y(degrees));
        harness.run();
        let (node, shown) = harness.state().ui.skeleton.euler_shown.expect("shown");
        assert_eq!(node, joint);
        assert!(
            (shown - Vec3::new(0.0, degrees, 0.0)).length() < 1e-2,
            "{degrees}°: {shown}"
        );
    }
    harness.get_by_label("0.0° 95.0° 0.0°");
    let sliders = harness
        .state()
        .ui
        .skeleton
        .bend_shown
        .expect("the bend sliders are shown");
    assert!(
        (sliders.degrees - Vec3::new(0.0, 95.0, 0.0)).length() < 1e-2,
        "the bend sliders read the bend the same way: {}",
        sliders.degrees
    );

    // A slider dragged past 90° keeps the angle it was set to, and the bend is that turn.
    harness
        .get_by_role_and_label(egui::accesskit::Role::Slider, "rotate Y")
        .set_value_accesskit(120.0);
    harness.run();
    let bend = harness.state().viewer.animation().overrides[joint].rotation;
    assert!(same_rotation(bend, Quat::from_rotation_y(120f32.to_radians()), 1e-6));
    let sliders = harness.state().ui.skeleton.bend_shown.expect("shown");
    assert_eq!(sliders.degrees, Vec3::new(0.0, 120.0, 0.0));
    assert_eq!(sliders.rotation, bend, "the read-out belongs to the bend in force");
}

/// readyplayer.me's avatar at rest, seen from the front (the camera on +Z) 0.8 m from its right hand.
fn facing_the_right_hand() -> Option<(Harness<'static, Session>, usize)> {
    let rigs = common::shared_folder("corpus/rigs")?;
    let rig = common::load_rig(&rigs, "readyplayer.me.glb");
    let hand = rig.find_node("RightHand").unwrap();
    let mut viewer = Viewer::new(rig, None);
    viewer.set_playing(false);
    viewer.select_clip(None);
    let at = viewer.pose().worlds[hand].w_axis.truncate();
    let camera = &mut viewer.view.camera;
    (camera.yaw, camera.pitch, camera.distance, camera.target) = (0.0, 0.0, 0.8, at);
    Some((harness_of(viewer), hand))
}

fn click(harness: &mut Harness<'static, Session>, at: Pos2) {
    harness.event(Event::PointerMoved(at));
    harness.run();
    press(harness, at, true);
    press(harness, at, false);
    harness.run();
}

fn selected_name(harness: &Harness<'static, Session>) -> String {
    let viewer = &harness.state().viewer;
    let node = viewer.view.selected_joint.expect("a joint is selected");
    viewer.rig().nodes[node].name.clone()
}

#[test]
fn with_the_ik_tool_a_click_on_a_finger_picks_the_hand_and_the_drag_brings_the_hand_to_its_goal() {
    let Some((mut harness, hand)) = facing_the_right_hand() else {
        return;
    };
    let position = |h: &mut Harness<'static, Session>, name: &str| {
        let node = h.state().viewer.rig().find_node(name).unwrap();
        joint_world(h, node).w_axis.truncate()
    };
    // Halfway along the ring finger's middle bone: its bone is drawn there, and a finger's skin
    // (the index finger's, in front of it from here).
    let finger = (position(&mut harness, "RightHandRing2") + position(&mut harness, "RightHandRing3")) * 0.5;
    let on_finger = on_screen(harness.state(), finger);
    for skeleton in [false, true] {
        harness.state_mut().viewer.view.options.skeleton.show = skeleton;
        harness.state_mut().ui.pose_tools.ik_tool = false;
        click(&mut harness, on_finger);
        let without_tool = selected_name(&harness);
        assert!(
            without_tool.starts_with("RightHand") && without_tool != "RightHand",
            "the click lands on a finger (skeleton shown: {skeleton}): {without_tool}"
        );
        harness.state_mut().ui.pose_tools.ik_tool = true;
        click(&mut harness, on_finger);
        assert_eq!(selected_name(&harness), "RightHand", "skeleton shown: {skeleton}");
    }

    // Dragged 60 points from the hand towards the elbow: the goal moves that far in the view plane
    // through the hand, and the arm bends to put the hand on it.
    let at = joint_world(&mut harness, hand).w_axis.truncate();
    let start = on_screen(harness.state(), at);
    let elbow = position(&mut harness, "RightForeArm");
    let elbow = on_screen(harness.state(), elbow);
    let towards_elbow = (elbow - start).normalized();
    let moved = start + towards_elbow * 60.0;
    harness.event(Event::PointerMoved(start));
    drag(&mut harness, start, moved);
    harness.run();

    let session = harness.state();
    let camera = &session.viewer.view.camera;
    let per_point = 2.0 * (camera.eye().z - at.z) * (camera.fov_y * 0.5).tan() / session.viewport.height();
    // Screen y grows downwards, world y upwards.
    let expected = at + Vec3::new(towards_elbow.x, -towards_elbow.y, 0.0) * 60.0 * per_point;
    let goals = &session.viewer.animation().ik_goals;
    assert_eq!(goals.len(), 1);
    let rig = session.viewer.rig();
    assert_eq!(
        (goals[0].end, goals[0].mid, goals[0].start),
        (
            hand,
            rig.find_node("RightForeArm").unwrap(),
            rig.find_node("RightArm").unwrap()
        )
    );
    let moved_by = 60.0 * per_point;
    assert!(
        (goals[0].target - expected).length() < 1e-3 * moved_by,
        "target {} expected {expected}",
        goals[0].target
    );
    let reached = joint_world(&mut harness, hand).w_axis.truncate();
    assert!(
        (reached - expected).length() < 1e-3 * moved_by,
        "the hand is at {reached}, its goal at {expected} ({moved_by} from where it was)"
    );
}
