//! The question asked before edits that are not saved would be dropped: quitting, or opening
//! another file (or the demo rig) in the edited document's place.

use super::{UiAction, UiState};
use crate::viewer::Viewer;
use std::path::PathBuf;

/// What is done once the user agrees to drop the edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterDiscard {
    Open(PathBuf),
    OpenDemo,
    Quit,
}

/// A question waiting for its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscardQuestion {
    pub then: AfterDiscard,
    /// The documents whose edits would be lost, by name.
    pub documents: Vec<String>,
}

/// The documents `then` would drop edits of.
fn edits_lost(viewer: &Viewer, then: &AfterDiscard) -> Vec<String> {
    match then {
        AfterDiscard::Quit => viewer.unsaved_documents(),
        AfterDiscard::Open(_) | AfterDiscard::OpenDemo if viewer.has_unsaved_edits() => {
            vec![crate::viewer::label(viewer.document().path.as_deref())]
        }
        _ => Vec::new(),
    }
}

/// Does `then` at once when no edit would be lost, else asks first (the question stays until
/// answered). Returns whether it was done.
pub fn do_or_ask(viewer: &mut Viewer, state: &mut UiState, then: AfterDiscard, actions: &mut Vec<UiAction>) -> bool {
    let documents = edits_lost(viewer, &then);
    if documents.is_empty() {
        carry_out(viewer, then, actions);
        return true;
    }
    state.discard_question = Some(DiscardQuestion { then, documents });
    false
}

/// Whether the window may close now; when edits would be lost, the question is asked instead
/// (its Discard edits quits).
pub fn may_quit_now(viewer: &mut Viewer, state: &mut UiState) -> bool {
    let mut then = Vec::new();
    do_or_ask(viewer, state, AfterDiscard::Quit, &mut then);
    then.contains(&UiAction::QuitNow)
}

fn carry_out(viewer: &mut Viewer, then: AfterDiscard, actions: &mut Vec<UiAction>) {
    match then {
        AfterDiscard::Open(path) => viewer.open(path),
        AfterDiscard::OpenDemo => viewer.open_demo(),
        AfterDiscard::Quit => actions.push(UiAction::QuitNow),
    }
}

/// The question's window, while one waits: Save as… (the active document), Discard edits, or
/// Cancel.
pub fn discard_window(ctx: &egui::Context, viewer: &mut Viewer, state: &mut UiState, actions: &mut Vec<UiAction>) {
    let Some(question) = state.discard_question.clone() else {
        return;
    };
    let title = match question.then {
        AfterDiscard::Quit => "Quit without saving?",
        _ => "Open without saving?",
    };
    let mut answer = None;
    egui::Window::new(title)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            for name in &question.documents {
                ui.label(format!("{name} has edits that are not saved."));
            }
            ui.horizontal(|ui| {
                let active = crate::viewer::label(viewer.document().path.as_deref());
                if question.documents.contains(&active) && ui.button("Save as…").clicked() {
                    answer = Some(Answer::Save);
                }
                if ui.button("Discard edits").clicked() {
                    answer = Some(Answer::Discard);
                }
                if ui.button("Cancel").clicked() || ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                    answer = Some(Answer::Cancel);
                }
            });
        });
    match answer {
        Some(Answer::Save) => actions.push(UiAction::SaveAsDialog),
        Some(Answer::Discard) => carry_out(viewer, question.then, actions),
        Some(Answer::Cancel) | None => {}
    }
    if answer.is_some() {
        state.discard_question = None;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Save,
    Discard,
    Cancel,
}
