//! Poses kept by hand: Edit ▸ Copy pose and Paste pose, the Pose menu, and the window that
//! saves the current pose under a name.

use super::UiState;
use crate::viewer::Viewer;
use egui::{Key, Modifiers};

/// Edit ▸ Copy pose (Ctrl+C over the view).
pub fn copy_pose(viewer: &mut Viewer, state: &mut UiState) {
    let copied = viewer.copy_pose();
    state.toast(format!(
        "Copied the pose of {} ({} joints)",
        copied.source,
        copied.len()
    ));
    state.pose_tools.clipboard = Some(copied);
}

/// Edit ▸ Paste pose (Ctrl+V over the view): says how many joints matched.
pub fn paste_pose(viewer: &mut Viewer, state: &mut UiState) {
    let Some(copied) = state.pose_tools.clipboard.as_ref() else {
        state.toast("No pose copied yet: Edit > Copy pose (Ctrl+C over the view) first");
        return;
    };
    let matched = viewer.paste_pose(copied);
    let text = if matched == 0 {
        format!(
            "Nothing pasted: no joint of {} has the name of one of the {} copied",
            crate::viewer::label(viewer.document().path.as_deref()),
            copied.len()
        )
    } else {
        format!(
            "Pasted the pose of {}: {matched} joints matched of the {} copied",
            copied.source,
            copied.len()
        )
    };
    state.toast(text);
}

/// The pose items of the Edit menu: copy and paste, reset, save as a clip.
pub fn pose_menu(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut UiState) {
    let ctx = ui.ctx().clone();
    let shortcut = |key: Key| ctx.format_shortcut(&egui::KeyboardShortcut::new(Modifiers::COMMAND, key));
    if ui
        .add(egui::Button::new("Copy pose").shortcut_text(shortcut(Key::C)))
        .on_hover_text("Every joint's pose as it stands, to paste here or into another file (Ctrl+C over the view)")
        .clicked()
    {
        copy_pose(viewer, state);
    }
    if viewer.comparison().is_some()
        && ui.button("Copy pose of the compared file").clicked()
        && let Some(copied) = viewer.copy_other_pose()
    {
        state.toast(format!(
            "Copied the pose of {} ({} joints)",
            copied.source,
            copied.len()
        ));
        state.pose_tools.clipboard = Some(copied);
    }
    let paste_text = match &state.pose_tools.clipboard {
        Some(copied) => format!("Paste pose of {}", copied.source),
        None => "Paste pose".to_owned(),
    };
    let paste = egui::Button::new(paste_text).shortcut_text(shortcut(Key::V));
    if ui
        .add_enabled(state.pose_tools.clipboard.is_some(), paste)
        .on_hover_text("Bends the joints of the same names into the pose copied (pauses the clip here)")
        .clicked()
    {
        paste_pose(viewer, state);
    }
    ui.separator();
    let reset = egui::Button::new("Reset pose").shortcut_text(super::commands::shortcut_text(
        &ctx,
        super::commands::Command::ResetPose,
    ));
    if ui.add_enabled(viewer.animation().has_overrides(), reset).clicked() {
        viewer.reset_overrides();
    }
    let selected_bent = (viewer.view.selected_joint)
        .and_then(|node| viewer.animation().overrides.get(node))
        .is_some_and(|o| !o.is_identity());
    if ui
        .add_enabled(selected_bent, egui::Button::new("Reset selected joint"))
        .clicked()
    {
        viewer.reset_selected_joint();
    }
    ui.separator();
    let blocked = viewer.clip_edit_blocked();
    let save = ui
        .add_enabled(blocked.is_none(), egui::Button::new("Save pose as clip…"))
        .on_hover_text("Adds the pose as a clip of one key, named by you; File > Save as… writes it");
    if let Some(blocked) = blocked {
        save.on_disabled_hover_text(blocked.to_string());
    } else if save.clicked() {
        state.pose_tools.save_pose = Some((unused_pose_name(viewer.rig()), None));
    }
}

/// "Pose 1", or the first "Pose N" no clip is named.
fn unused_pose_name(rig: &crate::rig::Rig) -> String {
    (1..)
        .map(|n| format!("Pose {n}"))
        .find(|name| rig.clips.iter().all(|c| &c.name != name))
        .unwrap_or_default()
}

/// The Save pose as clip window: a name, Save (Enter) and Cancel.
pub fn save_pose_window(ctx: &egui::Context, viewer: &mut Viewer, state: &mut UiState) {
    let Some((name, refused)) = state.pose_tools.save_pose.as_mut() else {
        return;
    };
    let mut open = true;
    let mut save = false;
    let mut cancel = false;
    egui::Window::new("Save pose as clip")
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_TOP, [0.0, 80.0])
        .show(ctx, |ui| {
            ui.horizontal(|ui| {
                let label = ui.label("Clip name");
                let field = ui.text_edit_singleline(name).labelled_by(label.id);
                save |= field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
            });
            if let Some(refused) = refused.as_ref() {
                ui.label(egui::RichText::new(refused).color(ui.visuals().error_fg_color));
            }
            ui.horizontal(|ui| {
                save |= ui.button("Save").clicked();
                cancel |= ui.button("Cancel").clicked();
            });
        });
    if save {
        let name = name.trim().to_owned();
        match viewer.save_pose_as_clip(&name) {
            Ok(_) => {
                state.pose_tools.save_pose = None;
                state.toast(format!("Saved the pose as clip '{name}' (File > Save as… writes it)"));
            }
            Err(e) => *refused = Some(e.to_string()),
        }
        return;
    }
    if cancel || !open {
        state.pose_tools.save_pose = None;
    }
}
