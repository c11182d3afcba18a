//! The question asked when a file changes on disk under edits of its document: reload and make
//! the edits again where they apply, keep the document as it is, or reload without them.

use crate::viewer::{ReloadAnswer, Viewer};

/// The window, while a document waits for the answer.
pub fn reload_question_window(ctx: &egui::Context, viewer: &mut Viewer) {
    let Some(question) = viewer.reload_question() else {
        return;
    };
    let mut answer = None;
    egui::Window::new("File changed on disk")
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            ui.label(format!("{} changed on disk, and it has edits of yours.", question.name));
            if !question.dropped.is_empty() {
                ui.label(format!(
                    "Reloading cannot make these again on the new file: {}.",
                    question.dropped.join(", ")
                ));
            }
            ui.horizontal(|ui| {
                if ui
                    .button("Reload and keep my edits")
                    .on_hover_text("Clip edits, carried clips and bends are made again where they still apply")
                    .clicked()
                {
                    answer = Some(ReloadAnswer::ReloadKeepingEdits);
                }
                if ui
                    .button("Keep mine")
                    .on_hover_text("Leave the document as it is and stop watching the file until it is saved")
                    .clicked()
                {
                    answer = Some(ReloadAnswer::KeepMine);
                }
                if ui.button("Reload and drop my edits").clicked() {
                    answer = Some(ReloadAnswer::ReloadDroppingEdits);
                }
            });
        });
    if let Some(answer) = answer {
        viewer.answer_reload(question.document, answer);
    }
}
