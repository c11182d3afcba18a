//! Edit ▸ Undo and Redo of the active document's edits, whatever their kind (clip edits, an
//! applied weight repair, pose edits), with their shortcuts.

use super::UiState;
use crate::viewer::Viewer;
use egui::{Key, KeyboardShortcut, Modifiers};

pub const UNDO: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::Z);
pub const REDO: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::Z);
/// Redo as Windows programs have it.
pub const REDO_Y: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::Y);

/// Edit ▸ Undo and Redo, naming the edit ("Undo trim Walk").
pub fn edit_menu(ui: &mut egui::Ui, viewer: &mut Viewer) {
    let ctx = ui.ctx().clone();
    // Blocked while a save runs; the items say so instead of doing nothing.
    let blocked = viewer.clip_edit_blocked().map(|b| b.to_string());
    let history = viewer.history();
    let (undo, redo) = match blocked {
        Some(_) => (None, None),
        None => (
            history.undo_label().map(str::to_owned),
            history.redo_label().map(str::to_owned),
        ),
    };
    let undo_text = undo.as_ref().map_or("Undo".to_owned(), |l| format!("Undo {l}"));
    let undo_item = egui::Button::new(undo_text).shortcut_text(ctx.format_shortcut(&UNDO));
    if ui.add_enabled(undo.is_some(), undo_item).clicked() {
        viewer.undo();
    }
    let redo_text = redo.as_ref().map_or("Redo".to_owned(), |l| format!("Redo {l}"));
    let redo_item = egui::Button::new(redo_text).shortcut_text(ctx.format_shortcut(&REDO));
    if ui.add_enabled(redo.is_some(), redo_item).clicked() {
        viewer.redo();
    }
    if let Some(blocked) = blocked {
        ui.label(egui::RichText::new(blocked).weak());
    }
}

/// Ctrl+Z, Ctrl+Shift+Z and Ctrl+Y (when no text field has the keyboard: it undoes its own
/// typing).
pub fn run_undo_keys(ui: &egui::Ui, viewer: &mut Viewer, state: &mut UiState) {
    // The longer shortcut first: Ctrl+Z alone would take Ctrl+Shift+Z too.
    let redo = ui.input_mut(|i| i.consume_shortcut(&REDO) || i.consume_shortcut(&REDO_Y));
    let undo = !redo && ui.input_mut(|i| i.consume_shortcut(&UNDO));
    if (redo || undo)
        && let Some(blocked) = viewer.clip_edit_blocked()
    {
        state.toast(blocked.to_string());
        return;
    }
    let done = if redo {
        viewer.redo().map(|l| format!("Redo {l}"))
    } else if undo {
        viewer.undo().map(|l| format!("Undo {l}"))
    } else {
        None
    };
    if let Some(done) = done {
        state.toast(done);
    }
}
