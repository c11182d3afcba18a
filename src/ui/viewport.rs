//! The 3D view's own controls: orbiting, picking and bending with the mouse, joint names
//! drawn over the view, and toasts.

use super::*;
use crate::retarget::chain_end_for_pick;
use crate::viewer::VertexRef;

/// With `picks_chain_ends` (the IK tool on), a click selects the hand or foot of what it lands on
/// (see [`chain_end_for_pick`]), the joint a drag then pulls.
pub(super) fn viewport_controls(ui: &egui::Ui, response: &egui::Response, viewer: &mut Viewer, picks_chain_ends: bool) {
    let delta = response.drag_delta();
    let (shift, alt, command) = ui.input(|i| (i.modifiers.shift, i.modifiers.alt, i.modifiers.command));
    if response.dragged_by(PointerButton::Primary) && alt {
        viewer.bend_selected_by_drag(delta.x, delta.y);
    } else if response.dragged_by(PointerButton::Middle)
        || response.dragged_by(PointerButton::Secondary)
        || (response.dragged_by(PointerButton::Primary) && shift)
    {
        viewer.view.camera.pan(delta.x, delta.y, response.rect.height());
    } else if response.dragged_by(PointerButton::Primary) {
        viewer.view.camera.orbit(delta.x, delta.y);
    }
    if response.hovered() {
        // egui reports a wheel notch as 50 points of scroll.
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            viewer.view.camera.zoom(scroll / 50.0);
        }
    }
    if response.double_clicked() {
        viewer.frame_all();
    } else if response.clicked()
        && command
        && let Some(pointer) = response.interact_pointer_pos()
    {
        let hit = pick_mesh(viewer, response.rect, pointer);
        viewer.inspect_vertex(hit.map(|hit| VertexRef {
            instance: hit.instance,
            primitive: hit.primitive,
            vertex: hit.vertex,
        }));
    } else if response.clicked()
        && let Some(pointer) = response.interact_pointer_pos()
        && let Some(node) = pick(viewer, response.rect, pointer)
    {
        let end = picks_chain_ends
            .then(|| chain_end_for_pick(viewer.rig(), node))
            .flatten();
        viewer.view.selected_joint = Some(end.unwrap_or(node));
    }
}

/// Joint dot within this many points of the cursor wins over the mesh behind it.
const JOINT_PICK_RADIUS: f32 = 8.0;

/// Screen position (points) of a world point in the viewport, if it is in front of the camera.
fn to_screen(viewer: &Viewer, viewport: egui::Rect, world: glam::Vec3) -> Option<egui::Pos2> {
    let clip = viewer.view.camera.view_projection(viewport.aspect_ratio()) * world.extend(1.0);
    (clip.w > 0.0).then(|| {
        let ndc = clip.truncate() / clip.w;
        egui::pos2(
            viewport.min.x + (ndc.x * 0.5 + 0.5) * viewport.width(),
            viewport.min.y + (0.5 - ndc.y * 0.5) * viewport.height(),
        )
    })
}

/// A bone drawn within this many points of the cursor is picked (thin finger bones too).
const BONE_PICK_RADIUS: f32 = 6.0;

/// The joint under `pointer`: when the skeleton is shown, a joint dot near it, else the joint
/// whose bone (the segment to a child joint) is drawn near it, the one nearest the camera when
/// several are; otherwise the joint weighted most on the mesh vertex under it.
fn pick(viewer: &mut Viewer, viewport: egui::Rect, pointer: egui::Pos2) -> Option<usize> {
    if viewer.view.options.skeleton.show {
        viewer.pose();
        let nearest = joint_positions(&viewer.rig().hierarchy().bones, viewer.last_pose())
            .filter_map(|(node, p)| to_screen(viewer, viewport, p).map(|s| (node, s.distance(pointer))))
            .filter(|(_, d)| *d <= JOINT_PICK_RADIUS)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((node, _)) = nearest {
            return Some(node);
        }
        if let Some(node) = pick_bone_segment(viewer, viewport, pointer) {
            return Some(node);
        }
    }
    let hit = pick_mesh(viewer, viewport, pointer)?;
    dominant_joint(viewer.rig(), &hit)
}

/// The joint whose bone segment is drawn under `pointer` (see [`crate::anim::gizmo::pick_bone`]).
fn pick_bone_segment(viewer: &Viewer, viewport: egui::Rect, pointer: egui::Pos2) -> Option<usize> {
    let bones = &viewer.rig().hierarchy().bones;
    let worlds = &viewer.last_pose().worlds;
    let eye = viewer.view.camera.eye();
    let screen = |p: glam::Vec3| to_screen(viewer, viewport, p).map(|s| glam::Vec2::new(s.x, s.y));
    let mut segments = Vec::new();
    let mut owners = Vec::new();
    for (child, node) in viewer.rig().nodes.iter().enumerate() {
        let Some(parent) = node.parent.filter(|&p| bones[p] && bones[child]) else {
            continue;
        };
        let (a, b) = (worlds[parent].w_axis.truncate(), worlds[child].w_axis.truncate());
        if let (Some(sa), Some(sb)) = (screen(a), screen(b)) {
            segments.push((sa, sb, eye.distance((a + b) * 0.5)));
            owners.push(parent);
        }
    }
    let cursor = glam::Vec2::new(pointer.x, pointer.y);
    crate::anim::gizmo::pick_bone(&segments, cursor, BONE_PICK_RADIUS).map(|i| owners[i])
}

/// The mesh vertex under `pointer`, on the surface as drawn.
fn pick_mesh(viewer: &mut Viewer, viewport: egui::Rect, pointer: egui::Pos2) -> Option<crate::skin::pick::MeshHit> {
    let x = (pointer.x - viewport.min.x) / viewport.width() * 2.0 - 1.0;
    let y = 1.0 - (pointer.y - viewport.min.y) / viewport.height() * 2.0;
    let (origin, direction) = viewer.view.camera.ray(x, y, viewport.aspect_ratio());
    viewer.pick_vertex(origin, direction)
}

pub(super) fn joint_labels(ui: &egui::Ui, viewport: egui::Rect, viewer: &Viewer) {
    if !(viewer.view.options.skeleton.show && viewer.view.options.skeleton.names) {
        return;
    }
    let painter = ui.painter_at(viewport);
    for (node, position) in joint_positions(&viewer.rig().hierarchy().bones, viewer.last_pose()) {
        if let Some(at) = to_screen(viewer, viewport, position) {
            let color = if viewer.view.selected_joint == Some(node) {
                egui::Color32::from_rgb(255, 220, 40)
            } else {
                egui::Color32::from_gray(230)
            };
            painter.text(
                at + egui::vec2(6.0, -6.0),
                egui::Align2::LEFT_BOTTOM,
                &viewer.rig().nodes[node].name,
                egui::FontId::proportional(11.0),
                color,
            );
        }
    }
}

/// The toasts still due, stacked over the view's bottom right corner.
pub(super) fn toasts(ui: &egui::Ui, viewport: egui::Rect, state: &mut UiState) {
    let lifetime = Duration::from_secs_f32(TOAST_SECONDS);
    state.toasts.retain(|t| t.shown_at.elapsed() < lifetime);
    let Some(oldest) = state.toasts.first() else { return };
    ui.ctx()
        .request_repaint_after(lifetime.saturating_sub(oldest.shown_at.elapsed()));
    egui::Area::new(egui::Id::unique("toasts"))
        .order(egui::Order::Foreground)
        .interactable(false)
        .pivot(egui::Align2::RIGHT_BOTTOM)
        .fixed_pos(viewport.right_bottom() - egui::vec2(12.0, 12.0))
        .show(ui.ctx(), |ui| {
            for toast in &state.toasts {
                egui::Frame::popup(ui.style()).show(ui, |ui| {
                    ui.label(&toast.text);
                });
            }
        });
}
