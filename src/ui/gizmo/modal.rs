//! Blender's pose-mode `R` and `G` over the view: a modal transform of the selected joint that the
//! keys (`X`/`Y`/`Z`, digits, Enter, Esc) and the pointer drive, shown at once and made an edit only
//! when confirmed. The transform's math is [`crate::anim::gizmo::modal`].

use super::{HIGHLIGHT, PoseToolsState, UiState, ViewGeometry};
use crate::anim::gizmo::modal::{JointFrame, ModalKey, ModalKind, ModalStep, ModalTransform};
use crate::anim::gizmo::world_rotation;
use crate::viewer::Viewer;
use egui::{Color32, Event, Key, PointerButton, Stroke};
use glam::{Mat4, Vec2};

pub(super) struct Modal {
    node: usize,
    transform: ModalTransform,
    /// The overlay's text, made again only when the transform changes.
    pub(super) text: String,
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

pub(super) fn start_modal(
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
pub(super) fn run_modal(ui: &egui::Ui, viewer: &mut Viewer, tools: &mut PoseToolsState) {
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
    match step {
        ModalStep::Going => {
            if changed {
                modal.text = modal.transform.describe();
                viewer.preview_bend(node, modal.transform.result());
            }
        }
        ModalStep::Confirmed => {
            viewer.preview_bend(node, modal.transform.result());
            viewer.end_bend_preview(true);
            tools.modal = None;
        }
        ModalStep::Cancelled => {
            viewer.end_bend_preview(false);
            tools.modal = None;
        }
    }
}

pub(super) fn paint_modal(ui: &egui::Ui, tools: &PoseToolsState, geometry: &ViewGeometry) {
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
