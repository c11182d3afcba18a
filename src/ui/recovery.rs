//! The question asked at start when a window ended without closing files it had edited (a
//! crash, a kill, a power cut): restore each file's edits, leave them for the next start, or
//! discard them (the journal is set aside, not deleted).

use super::UiState;
use crate::viewer::{RestoreAnswer, Viewer};

/// The window, while journals wait for an answer.
pub fn restore_window(ctx: &egui::Context, viewer: &mut Viewer, state: &mut UiState) {
    let offers = viewer.restore_offers();
    if offers.is_empty() {
        return;
    }
    let mut answer = None;
    egui::Window::new("Restore unsaved edits?")
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            ui.label("Rigscope stopped before these files were saved or closed.");
            for (index, offer) in offers.iter().enumerate() {
                ui.separator();
                let name = (offer.document.file_name())
                    .map_or_else(|| offer.document.display().to_string(), |n| n.to_string_lossy().into_owned());
                let edits = match offer.edits {
                    1 => "1 edit".to_owned(),
                    n => format!("{n} edits"),
                };
                ui.label(format!("{name}: {edits} not saved"))
                    .on_hover_text(offer.document.display().to_string());
                let restore = if offer.changed.is_empty() {
                    "Restore"
                } else {
                    let changed: Vec<String> = offer.changed.iter().map(|p| p.display().to_string()).collect();
                    ui.label(format!(
                        "Changed on disk since: {}. Restoring makes the edits again on it as it is now, up to the first that no longer applies.",
                        changed.join(", ")
                    ));
                    "Restore onto the file as it is now"
                };
                ui.horizontal(|ui| {
                    let waits = viewer.restore_waits();
                    let button = ui.add_enabled(!waits, egui::Button::new(restore));
                    if button.on_disabled_hover_text("A file is being loaded or saved").clicked() {
                        answer = Some((index, RestoreAnswer::Restore));
                    }
                    if ui
                        .button("Later")
                        .on_hover_text("Ask again at the next start")
                        .clicked()
                    {
                        answer = Some((index, RestoreAnswer::Later));
                    }
                    if ui
                        .button("Discard")
                        .on_hover_text("The edits are set aside in the journals folder, not deleted")
                        .clicked()
                    {
                        answer = Some((index, RestoreAnswer::Discard));
                    }
                });
            }
        });
    let Some((index, answer)) = answer else { return };
    match viewer.answer_restore(index, answer) {
        Ok(Some(restored)) => {
            let name = restored.document.display();
            match &restored.stopped {
                None => state.toast(format!("Restored {} edit record(s) of {name}", restored.made)),
                Some(stopped) => {
                    viewer.diagnostics.error = Some(format!(
                        "{name}: {} of {} edit records made again; stopped at {stopped} (the journal was set aside)",
                        restored.made, restored.of
                    ))
                }
            }
        }
        Ok(None) => {}
        Err(e) => viewer.diagnostics.error = Some(e.to_string()),
    }
}
