//! Posing by hand in the 3D view: the rotation gizmo on the selected joint (rings drawn with egui's
//! painter, hovered and dragged), Blender's pose-mode keys (`R`, `G`, then `X`/`Y`/`Z`, digits, Enter or
//! Esc; `Alt+R`, `Alt+G` clear), and the IK tool that drags a hand's or foot's goal. The math lives in
//! [`crate::anim::gizmo`]; this file turns the cursor into rays and the results into pose edits.

use super::UiState;
use super::poses::{copy_pose, paste_pose};
use crate::anim::JointOverride;
use crate::anim::gizmo::modal::{JointFrame, ModalKey, ModalKind, ModalStep, ModalTransform};
use crate::anim::gizmo::{
    GizmoSpace, Ray, RingDrag, RingKind, RotationGizmo, axis_frame, pick_ring, ray_plane_hit, ring_basis,
    rotate_override, snap, world_per_point, world_rotation,
};
use crate::anim::ik_layer::IkGoal;
use crate::retarget::pose_copy::PoseClipboard;
use crate::viewer::Viewer;
use egui::{Color32, Event, Key, Modifiers, PointerButton, Pos2, Stroke};
use glam::{Mat4, Vec2, Vec3};

/// The axis rings' radius on screen, in points: the gizmo keeps its size whatever the zoom.
pub const GIZMO_RADIUS_POINTS: f32 = 70.0;
/// A ring within this many points of the cursor is grabbed.
const RING_GRAB_POINTS: f32 = 7.0;
/// Straight segments each ring is drawn with.
const RING_SEGMENTS: usize = 64;
/// The IK goal's handle, in points.
const IK_HANDLE_POINTS: f32 = 6.0;

const HIGHLIGHT: Color32 = Color32::from_rgb(255, 220, 40);

/// The posing tools' state between frames.
pub struct PoseToolsState {
    /// The space the gizmo's X, Y and Z rings turn in.
    pub space: GizmoSpace,
    /// Draw the rotation gizmo on the selected joint.
    pub show_gizmo: bool,
    /// Left drags move the selected hand's or foot's IK goal instead of orbiting (`I`).
    pub ik_tool: bool,
    hovered: Option<RingKind>,
    drag: Option<GizmoDrag>,
    modal: Option<Modal>,
    ik_drag: Option<IkDrag>,
    /// A click ended a modal transform: the rest of that click (its release) is not a click in the view.
    swallow_pointer: bool,
    /// The pose copied last (Edit ▸ Copy pose), kept when another file is opened.
    pub clipboard: Option<PoseClipboard>,
    /// The Save pose as clip window, while open: the name typed and why the last try was refused.
    pub(super) save_pose: Option<(String, Option<String>)>,
}

impl Default for PoseToolsState {
    fn default() -> Self {
        PoseToolsState {
            space: GizmoSpace::Local,
            show_gizmo: true,
            ik_tool: false,
            hovered: None,
            drag: None,
            modal: None,
            ik_drag: None,
            swallow_pointer: false,
            clipboard: None,
            save_pose: None,
        }
    }
}

impl PoseToolsState {
    /// What a running `R` or `G` says of itself ("Rotate X 45°"), if one runs.
    pub fn modal_text(&self) -> Option<&str> {
        self.modal.as_ref().map(|m| m.text.as_str())
    }

    /// The ring under the cursor, drawn highlighted.
    pub fn hovered_ring(&self) -> Option<RingKind> {
        self.hovered
    }

    /// Whether a ring of the gizmo is being dragged.
    pub fn dragging_ring(&self) -> Option<RingKind> {
        self.drag.as_ref().map(|d| d.kind)
    }
}

struct GizmoDrag {
    node: usize,
    kind: RingKind,
    drag: RingDrag,
    before: JointOverride,
    /// The joint's world rotation with its override taken out, at the start.
    base: glam::Quat,
    /// The angle turned so far (snapped when snapping), for the label by the cursor.
    angle: f32,
}

struct Modal {
    node: usize,
    transform: ModalTransform,
    /// The overlay's text, made again only when the transform changes.
    text: String,
}

struct IkDrag {
    goal: usize,
    plane_normal: Vec3,
    start_hit: Vec3,
    start_target: Vec3,
}

/// How the view looks at the world this frame.
struct ViewGeometry {
    viewport: egui::Rect,
    view_projection: Mat4,
    eye: Vec3,
    fov_y: f32,
}

impl ViewGeometry {
    fn of(viewer: &Viewer, viewport: egui::Rect) -> ViewGeometry {
        let camera = &viewer.view.camera;
        ViewGeometry {
            viewport,
            view_projection: camera.view_projection(viewport.aspect_ratio()),
            eye: camera.eye(),
            fov_y: camera.fov_y,
        }
    }

    fn to_screen(&self, world: Vec3) -> Option<Pos2> {
        let clip = self.view_projection * world.extend(1.0);
        (clip.w > 0.0).then(|| {
            let ndc = clip.truncate() / clip.w;
            egui::pos2(
                self.viewport.min.x + (ndc.x * 0.5 + 0.5) * self.viewport.width(),
                self.viewport.min.y + (0.5 - ndc.y * 0.5) * self.viewport.height(),
            )
        })
    }

    fn ray(&self, viewer: &Viewer, at: Pos2) -> Ray {
        let x = (at.x - self.viewport.min.x) / self.viewport.width() * 2.0 - 1.0;
        let y = 1.0 - (at.y - self.viewport.min.y) / self.viewport.height() * 2.0;
        let (origin, direction) = viewer.view.camera.ray(x, y, self.viewport.aspect_ratio());
        Ray { origin, direction }
    }

    fn world_per_point(&self, at: Vec3) -> f32 {
        world_per_point(self.eye.distance(at), self.fov_y, self.viewport.height())
    }
}

/// The gizmo of the selected joint as the pose stands, and the joint's world rotation.
fn gizmo_of(viewer: &Viewer, geometry: &ViewGeometry, space: GizmoSpace) -> Option<(usize, RotationGizmo, f32)> {
    let node = viewer.view.selected_joint?;
    let worlds = &viewer.last_pose().worlds;
    let world = *worlds.get(node)?;
    let parent = viewer.rig().nodes.get(node)?.parent.and_then(|p| worlds.get(p));
    let center = world.w_axis.truncate();
    let view_direction = (center - geometry.eye).try_normalize()?;
    let scale = geometry.world_per_point(center);
    let joint_rotation = world_rotation(&world);
    let parent_rotation = parent.map_or(glam::Quat::IDENTITY, world_rotation);
    let gizmo = RotationGizmo {
        center,
        radius: GIZMO_RADIUS_POINTS * scale,
        axes: axis_frame(space, joint_rotation, parent_rotation),
        view_direction,
    };
    Some((node, gizmo, scale))
}

/// Where the joint stands and how the view looks at it, for a modal transform starting now.
fn joint_frame(viewer: &mut Viewer, node: usize, geometry: &ViewGeometry) -> Option<JointFrame> {
    let before = *viewer.animation().overrides.get(node)?;
    let parent = viewer.rig().nodes.get(node)?.parent;
    let worlds = &viewer.pose().worlds;
    let world = *worlds.get(node)?;
    let parent_world = parent.and_then(|p| worlds.get(p).copied()).unwrap_or(Mat4::IDENTITY);
    let center = world.w_axis.truncate();
    let toward_camera = (geometry.eye - center).try_normalize()?;
    let view = viewer.view.camera.view();
    let on_screen = geometry.to_screen(center)?;
    Some(JointFrame {
        before,
        world_rotation: world_rotation(&world),
        parent_world,
        toward_camera,
        screen_right: view.row(0).truncate(),
        screen_up: view.row(1).truncate(),
        world_per_point: geometry.world_per_point(center),
        center: Vec2::new(on_screen.x, on_screen.y),
    })
}

/// The view's posing tools for this frame: keys, the gizmo, the IK tool, and what they draw. Returns
/// whether they took the pointer (the view's own orbiting, picking and bending then leave it alone).
pub(super) fn pose_tools(
    ui: &egui::Ui,
    response: &egui::Response,
    viewport: egui::Rect,
    viewer: &mut Viewer,
    state: &mut UiState,
) -> bool {
    let geometry = ViewGeometry::of(viewer, viewport);
    if state.pose_tools.swallow_pointer {
        if ui.input(|i| !i.pointer.any_down()) {
            state.pose_tools.swallow_pointer = false;
        }
        return true;
    }
    if state.pose_tools.modal.is_some() {
        run_modal(ui, viewer, &mut state.pose_tools);
        paint_modal(ui, &state.pose_tools, &geometry);
        return true;
    }
    let tools = &state.pose_tools;
    let keys_for_view = response.hovered() && !ui.ctx().egui_wants_keyboard_input();
    if keys_for_view && tools.drag.is_none() && tools.ik_drag.is_none() {
        pose_keys(ui, viewer, state, &geometry);
        if state.pose_tools.modal.is_some() {
            return true;
        }
    }
    let mut taken = ik_tool(ui, response, viewer, state, &geometry);
    let tools = &mut state.pose_tools;
    if !taken && tools.show_gizmo && !tools.ik_tool {
        taken = gizmo_drag(ui, response, viewer, tools, &geometry);
        paint_gizmo(ui, viewer, tools, &geometry);
    } else {
        tools.hovered = None;
    }
    paint_ik_goals(ui, viewer, &geometry);
    space_overlay(ui, viewport, &mut state.pose_tools);
    taken
}

/// The gizmo's space and the IK tool, over the bottom of the view (the legend has its top).
fn space_overlay(ui: &egui::Ui, viewport: egui::Rect, tools: &mut PoseToolsState) {
    egui::Area::new(egui::Id::unique("pose tools"))
        .order(egui::Order::Middle)
        .pivot(egui::Align2::CENTER_BOTTOM)
        .fixed_pos(viewport.center_bottom() - egui::vec2(0.0, 8.0))
        .show(ui.ctx(), |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.horizontal(|ui| {
                    ui.checkbox(&mut tools.show_gizmo, "Gizmo")
                        .on_hover_text("Rotation rings on the selected joint; Ctrl while dragging snaps to 5°");
                    ui.add_enabled_ui(tools.show_gizmo, |ui| {
                        for (space, name) in [
                            (GizmoSpace::Local, "Local"),
                            (GizmoSpace::Parent, "Parent"),
                            (GizmoSpace::World, "World"),
                        ] {
                            ui.radio_value(&mut tools.space, space, name);
                        }
                    });
                    ui.separator();
                    ui.toggle_value(&mut tools.ik_tool, "IK tool")
                        .on_hover_text("I: drag the selected hand or foot to move its IK goal (Ctrl+Alt+drag too)");
                });
            });
        });
}

/// Takes `key` pressed with exactly `modifiers` (Ctrl and the command key as one) from this frame's events.
fn take_key(ui: &egui::Ui, key: Key, modifiers: Modifiers) -> bool {
    let ctrl = |m: &Modifiers| m.ctrl || m.command || m.mac_cmd;
    let exact = |m: &Modifiers| m.alt == modifiers.alt && m.shift == modifiers.shift && ctrl(m) == ctrl(&modifiers);
    ui.input_mut(|i| {
        let mut found = false;
        i.events.retain(|event| {
            let hit = matches!(event, Event::Key { key: k, pressed: true, modifiers: m, .. } if *k == key && exact(m));
            found |= hit;
            !hit
        });
        found
    })
}

/// Ctrl+`key` from this frame's events, as the key or as the event the window makes of it (the window
/// turns Ctrl+C into a copy event, and Ctrl+V into a paste event when the system clipboard holds text).
fn take_clipboard_command(ui: &egui::Ui, key: Key, is_event: impl Fn(&Event) -> bool) -> bool {
    let as_event = ui.input_mut(|i| {
        let before = i.events.len();
        i.events.retain(|e| !is_event(e));
        i.events.len() != before
    });
    take_key(ui, key, Modifiers::COMMAND) | as_event
}

/// `R`, `G`, `Alt+R`, `Alt+G` and `I` over the view.
fn pose_keys(ui: &egui::Ui, viewer: &mut Viewer, state: &mut UiState, geometry: &ViewGeometry) {
    if take_clipboard_command(ui, Key::C, |e| matches!(e, Event::Copy)) {
        copy_pose(viewer, state);
    }
    if take_clipboard_command(ui, Key::V, |e| matches!(e, Event::Paste(_))) {
        paste_pose(viewer, state);
    }
    if take_key(ui, Key::I, Modifiers::NONE) {
        let tools = &mut state.pose_tools;
        tools.ik_tool = !tools.ik_tool;
        let text = if tools.ik_tool {
            "IK tool: drag to move the selected hand's or foot's goal (I again: off)"
        } else {
            "IK tool off"
        };
        state.toast(text);
    }
    let Some(node) = viewer
        .view
        .selected_joint
        .filter(|&n| n < viewer.animation().overrides.len())
    else {
        return;
    };
    if take_key(ui, Key::R, Modifiers::ALT) {
        clear_joint(viewer, node, |o| o.rotation = glam::Quat::IDENTITY);
    } else if take_key(ui, Key::G, Modifiers::ALT) {
        clear_joint(viewer, node, |o| o.translation = Vec3::ZERO);
    } else if take_key(ui, Key::R, Modifiers::NONE) {
        start_modal(ui, viewer, state, node, ModalKind::Rotate, geometry);
    } else if take_key(ui, Key::G, Modifiers::NONE) {
        if joint_translates(viewer.rig(), node) {
            start_modal(ui, viewer, state, node, ModalKind::Move, geometry);
        } else {
            let name = &viewer.rig().nodes[node].name;
            state.toast(format!(
                "{name} does not translate: G moves the root and joints the clips move (R rotates)"
            ));
        }
    }
}

/// Sets one part of the joint's hand-made change back to none, as an edit of its own.
fn clear_joint(viewer: &mut Viewer, node: usize, clear: impl FnOnce(&mut JointOverride)) {
    let mut cleared = viewer.animation().overrides[node];
    clear(&mut cleared);
    viewer.end_gesture();
    viewer.set_override(node, cleared);
    viewer.end_gesture();
}

/// Whether `node` translates: a root of the skeleton (its parent is not a bone) or a joint a clip moves.
pub fn joint_translates(rig: &crate::rig::Rig, node: usize) -> bool {
    let bones = &rig.hierarchy().bones;
    let root = rig.nodes[node].parent.is_none_or(|p| !bones[p]);
    root || (rig.clips.iter().flat_map(|c| &c.channels))
        .any(|c| c.node == node && c.property == crate::rig::Property::Translation)
}

fn start_modal(
    ui: &egui::Ui,
    viewer: &mut Viewer,
    state: &mut UiState,
    node: usize,
    kind: ModalKind,
    geometry: &ViewGeometry,
) {
    let Some(cursor) = ui.input(|i| i.pointer.latest_pos()) else {
        return;
    };
    let Some(frame) = joint_frame(viewer, node, geometry) else {
        return;
    };
    // The edit before this one is over: what this transform confirms is an edit of its own.
    viewer.end_gesture();
    let transform = ModalTransform::new(kind, frame, Vec2::new(cursor.x, cursor.y));
    let text = transform.describe();
    state.pose_tools.modal = Some(Modal { node, transform, text });
}

fn modal_key(key: Key) -> Option<ModalKey> {
    Some(match key {
        Key::X => ModalKey::Axis(0),
        Key::Y => ModalKey::Axis(1),
        Key::Z => ModalKey::Axis(2),
        Key::Num0 => ModalKey::Digit(0),
        Key::Num1 => ModalKey::Digit(1),
        Key::Num2 => ModalKey::Digit(2),
        Key::Num3 => ModalKey::Digit(3),
        Key::Num4 => ModalKey::Digit(4),
        Key::Num5 => ModalKey::Digit(5),
        Key::Num6 => ModalKey::Digit(6),
        Key::Num7 => ModalKey::Digit(7),
        Key::Num8 => ModalKey::Digit(8),
        Key::Num9 => ModalKey::Digit(9),
        Key::Minus => ModalKey::Minus,
        Key::Period => ModalKey::Point,
        Key::Backspace => ModalKey::Backspace,
        Key::Enter => ModalKey::Confirm,
        Key::Escape => ModalKey::Cancel,
        _ => return None,
    })
}

/// One frame of a running `R` or `G`: it takes the keyboard (no other key acts while it runs) and the
/// pointer; the joint shows the result at once, and only a confirmed one is an edit.
fn run_modal(ui: &egui::Ui, viewer: &mut Viewer, tools: &mut PoseToolsState) {
    let Some(modal) = tools.modal.as_mut() else { return };
    let mut step = ModalStep::Going;
    let mut changed = false;
    ui.input_mut(|i| {
        for event in &i.events {
            if let Event::Key { key, pressed: true, .. } = event
                && let Some(key) = modal_key(*key)
                && step == ModalStep::Going
            {
                step = modal.transform.key(key);
                changed = true;
            }
        }
        i.events.retain(|e| {
            !matches!(
                e,
                Event::Key { .. } | Event::Text(_) | Event::Copy | Event::Cut | Event::Paste(_)
            )
        });
        if step == ModalStep::Going {
            if i.pointer.button_pressed(PointerButton::Primary) {
                step = ModalStep::Confirmed;
            } else if i.pointer.button_pressed(PointerButton::Secondary) {
                step = ModalStep::Cancelled;
            }
            if step != ModalStep::Going {
                tools.swallow_pointer = true;
            }
        }
        if let Some(at) = i.pointer.latest_pos() {
            let snapping = i.modifiers.ctrl || i.modifiers.command;
            changed |= modal.transform.pointer(Vec2::new(at.x, at.y), snapping);
        }
    });
    let node = modal.node;
    if node >= viewer.animation().overrides.len() {
        tools.modal = None;
        return;
    }
    let before = modal.transform.frame.before;
    match step {
        ModalStep::Going => {
            if changed {
                modal.text = modal.transform.describe();
                let shown = modal.transform.result();
                // A preview, not an edit: a cancel leaves no step in the history.
                if viewer.animation().overrides[node] != shown {
                    viewer.animation_mut().overrides[node] = shown;
                }
            }
        }
        ModalStep::Confirmed => {
            let result = modal.transform.result();
            viewer.animation_mut().overrides[node] = before;
            viewer.end_gesture();
            viewer.set_override(node, result);
            viewer.end_gesture();
            tools.modal = None;
        }
        ModalStep::Cancelled => {
            viewer.animation_mut().overrides[node] = before;
            tools.modal = None;
        }
    }
}

fn paint_modal(ui: &egui::Ui, tools: &PoseToolsState, geometry: &ViewGeometry) {
    let Some(modal) = tools.modal.as_ref() else { return };
    let painter = ui.painter_at(geometry.viewport);
    let center = modal.transform.frame.center;
    if let Some(cursor) = ui.input(|i| i.pointer.latest_pos()) {
        painter.line_segment(
            [egui::pos2(center.x, center.y), cursor],
            Stroke::new(1.0, Color32::from_gray(200)),
        );
    }
    overlay_text(&painter, geometry.viewport, &modal.text);
}

/// A line of text over the view's bottom left corner, readable on any background.
fn overlay_text(painter: &egui::Painter, viewport: egui::Rect, text: &str) {
    let at = viewport.left_bottom() + egui::vec2(12.0, -12.0);
    let font = egui::FontId::proportional(16.0);
    let galley = painter.layout_no_wrap(text.to_owned(), font, HIGHLIGHT);
    let rect = egui::Align2::LEFT_BOTTOM.anchor_size(at, galley.size()).expand(4.0);
    painter.rect_filled(rect, 3.0, Color32::from_black_alpha(160));
    painter.galley(rect.min + egui::vec2(4.0, 4.0), galley, HIGHLIGHT);
}

/// Hovering and dragging the gizmo's rings. Returns whether it took the pointer.
fn gizmo_drag(
    ui: &egui::Ui,
    response: &egui::Response,
    viewer: &mut Viewer,
    tools: &mut PoseToolsState,
    geometry: &ViewGeometry,
) -> bool {
    let (alt, shift, snapping, pointer, press_origin, down) = ui.input(|i| {
        (
            i.modifiers.alt,
            i.modifiers.shift,
            i.modifiers.ctrl || i.modifiers.command,
            i.pointer.latest_pos(),
            i.pointer.press_origin(),
            i.pointer.any_down(),
        )
    });
    if tools.drag.is_some() {
        if response.dragged_by(PointerButton::Primary)
            && let Some(at) = pointer
        {
            follow_ring_drag(viewer, tools, geometry.ray(viewer, at), snapping);
        } else if !response.dragged_by(PointerButton::Primary) {
            tools.drag = None;
            viewer.end_gesture();
        }
        return true;
    }
    let Some((node, gizmo, scale)) = gizmo_of(viewer, geometry, tools.space) else {
        tools.hovered = None;
        return false;
    };
    let tolerance = RING_GRAB_POINTS * scale;
    let ring_at = |at: Pos2| pick_ring(&gizmo, geometry.ray(viewer, at), tolerance).map(|(kind, _)| kind);
    if response.drag_started_by(PointerButton::Primary)
        && !alt
        && !shift
        && let Some(origin) = press_origin
        && let Some(kind) = ring_at(origin)
        && let Some(&before) = viewer.animation().overrides.get(node)
    {
        let world = viewer.last_pose().worlds[node];
        tools.drag = Some(GizmoDrag {
            node,
            kind,
            drag: RingDrag::new(gizmo.ring(kind), geometry.ray(viewer, origin)),
            before,
            base: world_rotation(&world) * before.rotation.conjugate(),
            angle: 0.0,
        });
        viewer.end_gesture();
        if let Some(at) = pointer {
            follow_ring_drag(viewer, tools, geometry.ray(viewer, at), snapping);
        }
        return true;
    }
    tools.hovered = if down { None } else { pointer.and_then(ring_at) };
    // A click on a ring is no click on what lies behind it.
    response.clicked() && response.interact_pointer_pos().and_then(ring_at).is_some()
}

/// Turns the dragged joint by the angle the ring has been dragged through (to 5° steps with `snapping`).
fn follow_ring_drag(viewer: &mut Viewer, tools: &mut PoseToolsState, ray: Ray, snapping: bool) {
    let Some(drag) = tools.drag.as_mut() else { return };
    let turned = drag.drag.update(ray);
    let angle = if snapping {
        snap(turned, crate::anim::gizmo::SNAP_STEP_RADIANS)
    } else {
        turned
    };
    if drag.node >= viewer.animation().overrides.len() {
        return;
    }
    let joint_override = JointOverride {
        rotation: rotate_override(drag.before.rotation, drag.base, drag.drag.ring.axis, angle),
        ..drag.before
    };
    drag.angle = angle;
    viewer.set_override(drag.node, joint_override);
}

fn ring_color(kind: RingKind) -> Color32 {
    match kind {
        RingKind::X => Color32::from_rgb(235, 75, 75),
        RingKind::Y => Color32::from_rgb(100, 205, 90),
        RingKind::Z => Color32::from_rgb(80, 135, 245),
        RingKind::View => Color32::from_gray(225),
    }
}

/// The rings, their far halves faint; the hovered or dragged one highlighted, with the angle dragged.
fn paint_gizmo(ui: &egui::Ui, viewer: &Viewer, tools: &PoseToolsState, geometry: &ViewGeometry) {
    let Some((_, gizmo, _)) = gizmo_of(viewer, geometry, tools.space) else {
        return;
    };
    let painter = ui.painter_at(geometry.viewport);
    let toward_camera = -gizmo.view_direction;
    let active = tools.dragging_ring().or(tools.hovered);
    for kind in RingKind::ALL {
        let ring = gizmo.ring(kind);
        let (u, v) = ring_basis(ring.axis);
        let (color, width) = if active == Some(kind) {
            (HIGHLIGHT, 3.0)
        } else {
            (ring_color(kind), 2.0)
        };
        let mut previous: Option<(Pos2, bool)> = None;
        for step in 0..=RING_SEGMENTS {
            let angle = step as f32 / RING_SEGMENTS as f32 * std::f32::consts::TAU;
            let offset = (u * angle.cos() + v * angle.sin()) * ring.radius;
            let front = kind == RingKind::View || offset.dot(toward_camera) >= 0.0;
            let at = geometry.to_screen(ring.center + offset);
            if let (Some((from, from_front)), Some(to)) = (previous, at) {
                let shade = if front && from_front {
                    color
                } else {
                    color.gamma_multiply(0.3)
                };
                painter.line_segment([from, to], Stroke::new(width, shade));
            }
            previous = at.map(|at| (at, front));
        }
    }
    if let Some(drag) = &tools.drag
        && let Some(at) = ui.input(|i| i.pointer.latest_pos())
    {
        painter.text(
            at + egui::vec2(16.0, -16.0),
            egui::Align2::LEFT_BOTTOM,
            format!("{:.1}°", drag.angle.to_degrees()),
            egui::FontId::proportional(14.0),
            HIGHLIGHT,
        );
    }
}

/// The IK tool (on with `I`) or Ctrl+Alt+drag: moves the selected end joint's goal in the view plane
/// through it, making the goal when there is none. Returns whether it took the pointer.
fn ik_tool(
    ui: &egui::Ui,
    response: &egui::Response,
    viewer: &mut Viewer,
    state: &mut UiState,
    geometry: &ViewGeometry,
) -> bool {
    let (alt, shift, ctrl, pointer, press_origin) = ui.input(|i| {
        (
            i.modifiers.alt,
            i.modifiers.shift,
            i.modifiers.ctrl || i.modifiers.command,
            i.pointer.latest_pos(),
            i.pointer.press_origin(),
        )
    });
    if let Some(drag) = state.pose_tools.ik_drag.as_ref() {
        if !response.dragged_by(PointerButton::Primary) {
            state.pose_tools.ik_drag = None;
            viewer.end_gesture();
        } else if let Some(at) = pointer {
            let ray = geometry.ray(viewer, at);
            if let Some(distance) = ray_plane_hit(ray.origin, ray.direction, drag.start_hit, drag.plane_normal) {
                let target = drag.start_target + (ray.origin + ray.direction * distance - drag.start_hit);
                let goal = drag.goal;
                if viewer
                    .animation()
                    .ik_goals
                    .get(goal)
                    .is_some_and(|g| g.target != target)
                {
                    viewer.record_pose_edit("move IK goal");
                    viewer.animation_mut().ik_goals[goal].target = target;
                }
            }
        }
        return true;
    }
    if response.clicked()
        && !ctrl
        && let Some(at) = response.interact_pointer_pos()
        && let Some(end) = goal_handle_at(viewer, geometry, at)
    {
        // A click on a goal's handle selects the joint it pulls, ready to drag it.
        viewer.view.selected_joint = Some(end);
        return true;
    }
    let wanted = (state.pose_tools.ik_tool && !alt && !shift && !ctrl) || (alt && ctrl);
    if !(wanted && response.drag_started_by(PointerButton::Primary)) {
        return false;
    }
    let (Some(node), Some(origin)) = (viewer.view.selected_joint, press_origin) else {
        return false;
    };
    let existing = viewer.animation().ik_goals.iter().position(|g| g.end == node);
    let goal = match existing {
        Some(goal) => goal,
        None => {
            let Some(at) = viewer.last_pose().worlds.get(node).map(|w| w.w_axis.truncate()) else {
                return true;
            };
            let Some(goal) = IkGoal::for_end_joint(&viewer.rig().nodes, node, at) else {
                let name = &viewer.rig().nodes[node].name;
                state.toast(format!(
                    "{name} is not the end of a two-bone chain: select a hand or a foot to drag its IK goal"
                ));
                return true;
            };
            viewer.end_gesture();
            viewer.record_pose_edit("add IK goal");
            viewer.animation_mut().ik_goals.push(goal);
            viewer.animation().ik_goals.len() - 1
        }
    };
    let start_target = viewer.animation().ik_goals[goal].target;
    let Some(plane_normal) = (start_target - geometry.eye).try_normalize() else {
        return true;
    };
    let ray = geometry.ray(viewer, origin);
    let Some(distance) = ray_plane_hit(ray.origin, ray.direction, start_target, plane_normal) else {
        return true;
    };
    if existing.is_some() {
        viewer.end_gesture();
    }
    state.pose_tools.ik_drag = Some(IkDrag {
        goal,
        plane_normal,
        start_hit: ray.origin + ray.direction * distance,
        start_target,
    });
    true
}

/// The end joint of the IK goal whose handle is drawn under `at`, the nearest one when several are.
fn goal_handle_at(viewer: &Viewer, geometry: &ViewGeometry, at: Pos2) -> Option<usize> {
    let reach = IK_HANDLE_POINTS + 3.0;
    (viewer.animation().ik_goals.iter())
        .filter(|goal| goal.enabled)
        .filter_map(|goal| Some((goal.end, geometry.to_screen(goal.target)?.distance(at))))
        .filter(|&(_, distance)| distance <= reach)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(end, _)| end)
}

/// Each IK goal's target as a small handle, tied to the joint it pulls; the selected joint's goal
/// highlighted.
fn paint_ik_goals(ui: &egui::Ui, viewer: &Viewer, geometry: &ViewGeometry) {
    let goals = &viewer.animation().ik_goals;
    if goals.is_empty() {
        return;
    }
    let painter = ui.painter_at(geometry.viewport);
    let worlds = &viewer.last_pose().worlds;
    for goal in goals.iter().filter(|g| g.enabled) {
        let Some(target) = geometry.to_screen(goal.target) else {
            continue;
        };
        let selected = viewer.view.selected_joint == Some(goal.end);
        let color = if selected {
            HIGHLIGHT
        } else {
            Color32::from_rgb(230, 100, 230)
        };
        if let Some(end) = worlds
            .get(goal.end)
            .and_then(|w| geometry.to_screen(w.w_axis.truncate()))
        {
            painter.line_segment([end, target], Stroke::new(1.0, color.gamma_multiply(0.6)));
        }
        painter.circle_stroke(target, IK_HANDLE_POINTS, Stroke::new(2.0, color));
        painter.circle_filled(target, 2.0, color);
    }
}
