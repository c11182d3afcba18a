//! The IK tool: dragging a hand's or foot's goal in the view plane (with `I` on, or Ctrl+Alt+drag),
//! and the goals' handles drawn over the view.

use super::{HIGHLIGHT, UiState, ViewGeometry};
use crate::anim::gizmo::ray_plane_hit;
use crate::anim::ik_layer::IkGoal;
use crate::retarget::chain_end_for_pick;
use crate::viewer::{PoseEdit, Viewer};
use egui::{Color32, PointerButton, Pos2, Stroke};
use glam::Vec3;

/// The IK goal's handle, in points.
const IK_HANDLE_POINTS: f32 = 6.0;

pub(super) struct IkDrag {
    goal: usize,
    plane_normal: Vec3,
    start_hit: Vec3,
    start_target: Vec3,
}

/// The IK tool (on with `I`) or Ctrl+Alt+drag: moves the goal of the selected joint's chain end (the
/// hand or foot it lies under) in the view plane through it, making the goal when there is none.
/// Returns whether it took the pointer.
pub(super) fn ik_tool(
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
                viewer.edit_pose(PoseEdit::MoveIkGoal {
                    goal: drag.goal,
                    target,
                });
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
    let (Some(selected), Some(origin)) = (viewer.view.selected_joint, press_origin) else {
        return false;
    };
    let Some(node) = chain_end_for_pick(viewer.rig(), selected) else {
        let name = &viewer.rig().nodes[selected].name;
        state.toast(format!(
            "{name} has no two-bone chain above it: select a hand or a foot to drag its IK goal"
        ));
        return true;
    };
    // A finger selected in the outliner drags its hand: the selection shows what moves.
    viewer.view.selected_joint = Some(node);
    let existing = viewer.animation().ik_goals.iter().position(|g| g.end == node);
    let goal = match existing {
        Some(goal) => goal,
        None => {
            let Some(at) = viewer.last_pose().worlds.get(node).map(|w| w.w_axis.truncate()) else {
                return true;
            };
            let Some(goal) = IkGoal::for_end_joint(&viewer.rig().nodes, node, at) else {
                return true;
            };
            viewer.end_gesture();
            viewer.edit_pose(PoseEdit::AddIkGoal(goal));
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
pub(super) fn paint_ik_goals(ui: &egui::Ui, viewer: &Viewer, geometry: &ViewGeometry) {
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
