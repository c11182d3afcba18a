//! The Joint mapping window: for each file whose clips were added to the rig, the joints name
//! matching left unmatched on both sides, each with a choice among the other side's unmatched
//! joints; the pairs kept by hand, each with a way to clear it; and Apply, which loads the
//! clips again with them. The pairs are kept per pair of skeletons and used on every later load.

use crate::viewer::{JointMapTable, Viewer};

/// What the user changed in a table: the skeleton pair, the clip file's joint, and the rig's
/// joint it now drives (`None`: its pair is cleared).
struct Edit {
    key: String,
    source: String,
    target: Option<String>,
}

/// Opens the window (`open`) once the clips being added (`after_load`) are in, if any joint of
/// either side stays unmatched.
pub fn open_when_loaded(viewer: &Viewer, open: &mut bool, after_load: &mut bool) {
    if !*after_load || viewer.loading().is_some() {
        return;
    }
    *after_load = false;
    let unmatched = |r: &crate::retarget::RetargetReport| {
        !r.joints.unmatched_source.is_empty() || !r.joints.unmatched_target.is_empty()
    };
    *open |= viewer.document().carried().iter().map(|c| &c.report).any(unmatched);
}

/// The window, while `open`.
pub fn joint_map_window(ctx: &egui::Context, viewer: &mut Viewer, open: &mut bool) {
    if !*open {
        return;
    }
    let tables = viewer.joint_map_tables();
    let loading = viewer.loading().is_some();
    let mut edits = Vec::new();
    let mut apply = false;
    let shown_pose = viewer.retarget_pose_shown();
    let mut pose_choice = None;
    egui::Window::new("Joint mapping")
        .open(open)
        .default_width(460.0)
        .vscroll(true)
        .show(ctx, |ui| {
            if tables.is_empty() {
                ui.label("No clips from another file on this rig: File > Load clips from… adds some.");
                return;
            }
            for (index, table) in tables.iter().enumerate() {
                ui.push_id(index, |ui| {
                    let mut shown = shown_pose == Some(index);
                    let toggle = ui.checkbox(&mut shown, "Show the retarget pose").on_hover_text(
                        "The rig turned bone by bone into this file's rest pose: the pose its clips are carried onto",
                    );
                    if toggle.changed() {
                        pose_choice = Some(shown.then_some(index));
                    }
                    table_ui(ui, table, &mut edits)
                });
                ui.separator();
            }
            let changed = tables.iter().any(|t| t.changed);
            let button = ui
                .add_enabled(changed && !loading, egui::Button::new("Apply"))
                .on_hover_text("Load the clips again with these pairs (kept for these two skeletons)");
            apply = button.clicked();
            if loading {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Loading the clips again…");
                });
            }
        });
    for edit in edits {
        viewer.set_joint_pair(&edit.key, &edit.source, edit.target.as_deref());
    }
    if let Some(file) = pose_choice {
        viewer.show_retarget_pose(file);
    }
    if !*open && shown_pose.is_some() {
        // Closing the window plays the clips again.
        viewer.show_retarget_pose(None);
    }
    if apply {
        viewer.apply_joint_maps();
    }
}

fn table_ui(ui: &mut egui::Ui, table: &JointMapTable, edits: &mut Vec<Edit>) {
    let file = super::file_label(&table.file);
    ui.strong(&file);
    ui.label(format!(
        "Unmatched by name: {} of its joints, {} of this rig's.",
        table.unmatched_source.len(),
        table.unmatched_target.len()
    ));
    let edit = |source: &str, target: Option<String>| Edit {
        key: table.key.clone(),
        source: source.to_owned(),
        target,
    };
    let target_of = |source: &str| {
        (table.by_hand.iter())
            .find(|(from, _)| from == source)
            .map(|(_, to)| to.clone())
    };
    let source_of = |target: &str| {
        (table.by_hand.iter())
            .find(|(_, to)| to == target)
            .map(|(from, _)| from.clone())
    };

    if !table.worst_limbs.is_empty() {
        egui::CollapsingHeader::new("Limb directions against the source")
            .id_salt("limbs")
            .show(ui, |ui| {
                egui::Grid::new("limbs").striped(true).show(ui, |ui| {
                    for (clip, worst) in &table.worst_limbs {
                        ui.label(clip);
                        ui.label(worst.as_ref().map_or("no bones carried".to_owned(), |w| {
                            format!("worst {:.2}° ({} at {:.2} s)", w.degrees, w.joint, w.time)
                        }));
                        ui.end_row();
                    }
                });
            });
    }
    if !table.unmatched_source.is_empty() {
        egui::Grid::new("source").striped(true).show(ui, |ui| {
            ui.strong(format!("{file} joint"));
            ui.strong("drives this rig's");
            ui.end_row();
            for name in &table.unmatched_source {
                let label = ui.label(name);
                let current = target_of(name);
                if let Some(chosen) = choose(ui, label.id, &current, &table.unmatched_target) {
                    edits.push(edit(name, chosen));
                }
                ui.end_row();
            }
        });
    }
    if !table.unmatched_target.is_empty() {
        egui::Grid::new("target").striped(true).show(ui, |ui| {
            ui.strong("This rig's joint");
            ui.strong(format!("driven by {file}'s"));
            ui.end_row();
            for name in &table.unmatched_target {
                let label = ui.label(name);
                let current = source_of(name);
                match choose(ui, label.id, &current, &table.unmatched_source) {
                    Some(Some(source)) => edits.push(edit(&source, Some(name.clone()))),
                    Some(None) => edits.extend(current.map(|source| edit(&source, None))),
                    None => {}
                }
                ui.end_row();
            }
        });
    }
    if !table.by_hand.is_empty() {
        ui.label("Paired by hand:");
        egui::Grid::new("by hand").striped(true).show(ui, |ui| {
            for (from, to) in &table.by_hand {
                ui.label(from);
                ui.label(if to.is_empty() {
                    "(left out)".to_owned()
                } else {
                    format!("drives {to}")
                });
                if ui.small_button("Clear").on_hover_text("Forget this pair").clicked() {
                    edits.push(edit(from, None));
                }
                ui.end_row();
            }
        });
    }
    for (from, to) in &table.stale {
        ui.colored_label(
            egui::Color32::LIGHT_RED,
            format!("{from} to {to} names a joint one of the files lacks; left out"),
        );
    }
}

/// A choice among `options` (and none) beside the row's `label`, showing `current`; the new
/// choice when it changed.
fn choose(ui: &mut egui::Ui, label: egui::Id, current: &Option<String>, options: &[String]) -> Option<Option<String>> {
    let mut choice = current.clone();
    egui::ComboBox::from_id_salt(label)
        .selected_text(current.as_deref().unwrap_or("(none)"))
        .width(180.0)
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut choice, None, "(none)");
            for option in options {
                ui.selectable_value(&mut choice, Some(option.clone()), option);
            }
        })
        .response
        .labelled_by(label);
    (choice != *current).then_some(choice)
}
