//! The clip list (left panel, under Playback): every clip of the active document with a `•` on
//! those changed since the file was opened, and for the selected clip its name (typed in
//! place), a trim range set at the playhead, In place and Drop, each shown at once and undoable
//! (Edit ▸ Undo, Ctrl+Z; Redo, Ctrl+Shift+Z or Ctrl+Y). File ▸ Save as… writes the edited file.

use super::{UiAction, UiState};
use crate::viewer::{ClipEdit, Viewer};
use std::path::{Path, PathBuf};

/// What the clip list keeps between frames.
#[derive(Debug, Default)]
pub struct ClipListState {
    /// The name typed for the selected clip (by its index and name when the typing began);
    /// while the field has no focus it follows the clip's name (after an undo, say).
    name: Option<(usize, String, String)>,
    /// The trim range set at the playhead, for the clip at this index with this name.
    range: Option<TrimRange>,
}

#[derive(Debug, Clone, PartialEq)]
struct TrimRange {
    clip: usize,
    name: String,
    start: f32,
    end: f32,
}

/// Shows `error` of a clip edit in the error window: an edit never fails unseen.
fn report(viewer: &mut Viewer, result: Result<(), crate::viewer::ClipListError>) {
    if let Err(e) = result {
        viewer.diagnostics.error = Some(format!("cannot edit the clip: {e}"));
    }
}

pub fn clip_list_panel(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut ClipListState) {
    if viewer.rig().clips.is_empty() {
        return;
    }
    egui::CollapsingHeader::new("Clips")
        .id_salt("clip list")
        .default_open(true)
        .show(ui, |ui| contents(ui, viewer, state));
}

fn contents(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut ClipListState) {
    let current = viewer.player().clip;
    let mut picked = None;
    for (i, clip) in viewer.rig().clips.iter().enumerate() {
        let changed = viewer.clip_changed(i);
        let marker = if changed { "• " } else { "" };
        let item = ui.selectable_label(
            current == Some(i),
            format!("{marker}{} ({:.2} s)", clip.name, clip.duration),
        );
        let hover = match (&clip.source, changed) {
            (Some(source), _) => format!("from {}; saved as a new animation", source.display()),
            (None, true) => "changed since the file was opened".to_owned(),
            (None, false) => "as the file has it".to_owned(),
        };
        if item.on_hover_text(hover).clicked() {
            picked = Some(i);
        }
    }
    if let Some(clip) = picked.filter(|&c| Some(c) != current) {
        viewer.select_clip(Some(clip));
    }
    let Some(clip) = viewer.player().clip.filter(|&c| c < viewer.rig().clips.len()) else {
        return;
    };
    ui.separator();
    let blocked = viewer.clip_edit_blocked();
    if let Some(blocked) = &blocked {
        ui.label(egui::RichText::new(blocked.to_string()).weak());
    }
    ui.add_enabled_ui(blocked.is_none(), |ui| selected_clip(ui, viewer, state, clip));
}

/// The selected clip's name, trim range, In place and Drop.
fn selected_clip(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut ClipListState, clip: usize) {
    let (name, duration) = {
        let c = &viewer.rig().clips[clip];
        (c.name.clone(), c.duration)
    };
    ui.horizontal(|ui| {
        let label = ui.label("Clip name");
        let typed = match &mut state.name {
            Some((c, was, text)) if *c == clip && *was == name => text,
            other => &mut other.insert((clip, name.clone(), name.clone())).2,
        };
        let field = ui
            .add(egui::TextEdit::singleline(typed).desired_width(140.0))
            .labelled_by(label.id)
            .on_hover_text("Type a new name and press Enter");
        let cancelled = ui.input(|i| i.key_pressed(egui::Key::Escape));
        if field.lost_focus() && cancelled {
            state.name = None;
        } else if field.lost_focus() {
            let new_name = typed.trim().to_owned();
            state.name = None;
            if new_name != name {
                let result = viewer.edit_clip(ClipEdit::Rename { clip, name: new_name });
                report(viewer, result);
            }
        } else if !field.has_focus() {
            // Not being typed in: show the name as it is (an undo may have changed it).
            state.name = None;
        }
    });

    // The range is the clip's whole length until set; one set for another clip is dropped.
    let range = match &mut state.range {
        Some(r) if r.clip == clip && r.name == name => r,
        other => other.insert(TrimRange {
            clip,
            name: name.clone(),
            start: 0.0,
            end: duration,
        }),
    };
    let playhead = viewer.player().time;
    ui.horizontal(|ui| {
        if ui
            .button(format!("Set start {:.3} s", range.start))
            .on_hover_text("Start the trim range at the playhead")
            .clicked()
        {
            range.start = playhead;
        }
        if ui
            .button(format!("Set end {:.3} s", range.end))
            .on_hover_text("End the trim range at the playhead")
            .clicked()
        {
            range.end = playhead;
        }
    });
    let (start, end) = (range.start, range.end);
    let whole = start <= 0.0 && end >= duration;
    ui.horizontal(|ui| {
        let trim = ui
            .add_enabled(start < end && !whole, egui::Button::new("Trim to range"))
            .on_hover_text("Keep only the range, moved to start at 0")
            .on_disabled_hover_text("Set a start before the end, inside the clip");
        if trim.clicked() {
            state.range = None;
            let result = viewer.edit_clip(ClipEdit::Trim { clip, start, end });
            report(viewer, result);
        }
        if ui
            .button("In place")
            .on_hover_text("Take out the horizontal travel: the motion root stays over its rest place")
            .clicked()
        {
            let result = viewer.edit_clip(ClipEdit::InPlace { clip });
            report(viewer, result);
        }
        if ui
            .button("Resample 30 fps")
            .on_hover_text(
                "Key every channel 30 times a second, then drop the keys linear interpolation restores \
                 within 1e-4 of the rig's height and 0.05°",
            )
            .clicked()
        {
            let result = viewer.edit_clip(ClipEdit::Resample { clip, rate: 30.0 });
            report(viewer, result);
        }
        if ui
            .button("Drop")
            .on_hover_text("Remove the clip; a save leaves it out")
            .clicked()
        {
            state.range = None;
            let result = viewer.edit_clip(ClipEdit::Drop { clip });
            report(viewer, result);
        }
    });
}

/// File ▸ Save as…: enabled for a document read from a file (an FBX one is written as a new
/// glTF), with why not otherwise.
pub fn save_as_item(ui: &mut egui::Ui, viewer: &Viewer, actions: &mut Vec<UiAction>) {
    let path = viewer.document().path.as_deref();
    let why_not = match path {
        None => Some("The demo rig has no file to save a copy of".to_owned()),
        Some(_) if viewer.saving().is_some() => Some("A save is running".to_owned()),
        Some(_) => None,
    };
    let button = ui
        .add_enabled(why_not.is_none(), egui::Button::new("Save as…"))
        .on_hover_text("Write a copy of the file with the clips as edited: untouched animations kept as read, edited and added clips written anew, dropped ones left out")
        .on_disabled_hover_text(why_not.unwrap_or_default());
    if button.clicked() {
        actions.push(UiAction::SaveAsDialog);
    }
}

/// What File ▸ Save as… does: `pick` is the save dialog, given the open file's folder and the
/// name it suggests (`NAME.edited.glb`); the file picked is written (on a thread of its own in
/// the window) and then opened in place of the document. Errors go to the error window,
/// success to a toast.
pub fn save_as_from_dialog(
    viewer: &mut Viewer,
    state: &mut UiState,
    pick: impl FnOnce(Option<&Path>, &str) -> Option<PathBuf>,
) {
    let Some(input) = viewer.document().path.clone() else {
        return;
    };
    let folder = std::path::absolute(&input)
        .ok()
        .and_then(|p| p.parent().map(Path::to_owned));
    let Some(output) = pick(folder.as_deref(), &crate::viewer::suggested_save_name(&input)) else {
        return;
    };
    match viewer.save_as(&output) {
        Ok(_) => show_notice(viewer, state),
        Err(e) => viewer.diagnostics.error = Some(format!("cannot save {}: {e}", output.display())),
    }
}

/// Shows the viewer's notice (a save done), if it has one.
pub fn show_notice(viewer: &mut Viewer, state: &mut UiState) {
    if let Some(notice) = viewer.take_notice() {
        state.toast(notice);
    }
}
