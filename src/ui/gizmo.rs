//! Posing by hand in the 3D view: the rotation gizmo on the selected joint (rings drawn with egui's
//! painter, hovered and dragged), Blender's pose-mode keys (`R`, `G`, then `X`/`Y`/`Z`, digits, Enter or
//! Esc; `Alt+R`, `Alt+G` clear), and the IK tool that drags a hand's or foot's goal. The math lives in
//! [`crate::anim::gizmo`]; this file turns the cursor into rays and the results into pose edits, the
//! keys' modal transform in `modal` and the IK tool in `ik_tool`.

use super::UiState;
use super::poses::{copy_pose, paste_pose};
use crate::anim::JointOverride;
use crate::anim::gizmo::modal::ModalKind;
use crate::anim::gizmo::{
    GizmoSpace, Ray, RingDrag, RingKind, RotationGizmo, axis_frame, pick_ring, ring_basis, rotate_override, snap,
    world_per_point, world_rotation,
};
use crate::retarget::pose_copy::PoseClipboard;
use crate::viewer::Viewer;
use egui::{Color32, Event, Key, Modifiers, PointerButton, Pos2, Stroke};
use glam::{Mat4, Vec3};
use ik_tool::{IkDrag, ik_tool, paint_ik_goals};
use modal::{Modal, paint_modal, run_modal, start_modal};

/// The axis rings' radius on screen, in points: the gizmo keeps its size whatever the zoom.
pub const GIZMO_RADIUS_POINTS: f32 = 70.0;
/// A ring within this many points of the cursor is grabbed.
const RING_GRAB_POINTS: f32 = 7.0;
/// Straight segments each ring is drawn with.
const RING_SEGMENTS: usize = 64;

mod ik_tool;
mod modal;

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
