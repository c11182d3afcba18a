//! The Repair weights window (Tools ▸ Repair weights): each repair with its options and the
//! vertices it would change on the active rig, what it cannot repair, a preview of the chosen
//! repairs with a before/after toggle, and Save as….

use super::UiAction;
use crate::repair::{DEFAULT_PRUNE, Repair, RepairCounts};
use crate::rig::Rig;
use crate::viewer::{REPAIRS, RepairOptions, Viewer};

#[derive(Default)]
pub struct RepairPanelState {
    pub open: bool,
    pub options: RepairOptions,
}

/// How many of the vertices a repair leaves are listed in the window.
const LISTED: usize = 20;

pub fn repair_window(
    ctx: &egui::Context,
    viewer: &mut Viewer,
    state: &mut RepairPanelState,
    actions: &mut Vec<UiAction>,
) {
    if !state.open {
        return;
    }
    let mut open = state.open;
    egui::Window::new("Repair weights")
        .open(&mut open)
        .default_width(460.0)
        // Over the 3D view, clear of the rig panel on the left.
        .default_pos(egui::pos2(300.0, 40.0))
        .resizable(true)
        .show(ctx, |ui| contents(ui, viewer, state, actions));
    state.open = open;
    if viewer.analysing_repairs() {
        ctx.request_repaint_after(std::time::Duration::from_millis(100));
    }
}

fn title(repair: Repair) -> &'static str {
    match repair {
        Repair::Fill => "Fill vertices without weight",
        Repair::Mirror => "Mirror weights",
        Repair::Prune => "Prune small weights",
        Repair::Limit => "Limit influences",
        Repair::Normalize => "Normalize sums to 1",
    }
}

/// The options of `repair`, beside its check box.
fn options_row(ui: &mut egui::Ui, repair: Repair, options: &mut RepairOptions) {
    match repair {
        Repair::Fill => {
            ui.selectable_value(&mut options.fill_nearest_bone, true, "nearest bone")
                .on_hover_text("Weight 1 on the joint whose bone is nearest in the bind pose");
            ui.selectable_value(&mut options.fill_nearest_bone, false, "list only");
        }
        Repair::Mirror => {
            ui.selectable_value(&mut options.mirror_left_to_right, true, "left to right");
            ui.selectable_value(&mut options.mirror_left_to_right, false, "right to left");
        }
        Repair::Prune => {
            ui.label("below");
            ui.add(
                egui::DragValue::new(&mut options.prune_below)
                    .range(0.0..=0.5)
                    .speed(0.0005)
                    .max_decimals(5),
            )
            .on_hover_text("Default 1/255, one step of an 8-bit weight");
            if ui.small_button("1/255").clicked() {
                options.prune_below = DEFAULT_PRUNE;
            }
        }
        Repair::Limit => {
            ui.label("to");
            ui.selectable_value(&mut options.limit_to, 4, "4");
            ui.selectable_value(&mut options.limit_to, 8, "8");
        }
        Repair::Normalize => {}
    }
}

/// "12 vertices", with what the repair could not do.
fn count_text(counts: &RepairCounts) -> String {
    let mut text = format!("{} vertices", counts.changed());
    if counts.left_count > 0 {
        text += &format!(", {} left", counts.left_count);
    }
    text
}

/// Why a repair left vertices, and the first of them.
fn left_lines(rig: &Rig, counts: &RepairCounts) -> Vec<String> {
    let mut lines: Vec<String> = counts.note.iter().cloned().collect();
    if counts.left_count > 0 {
        let why = match counts.repair {
            Repair::Mirror => {
                "no mirror vertex in their own primitive (unmatched topology) or no joint to copy through"
            }
            Repair::Fill => "no weight, listed only",
            _ => "all weights zero",
        };
        lines.push(format!("{} vertices left: {why}", counts.left_count));
        for at in counts.left.iter().take(LISTED) {
            let mesh = rig.meshes.get(at.mesh).map_or("?", |m| m.name.as_str());
            lines.push(format!(
                "    mesh '{mesh}' primitive {} vertex {}",
                at.primitive, at.vertex
            ));
        }
        if counts.left_count > LISTED {
            lines.push(format!("    … and {} more", counts.left_count - LISTED));
        }
    }
    lines
}

fn contents(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut RepairPanelState, actions: &mut Vec<UiAction>) {
    let analysis = viewer.repair_analysis(&state.options);
    let rig = std::sync::Arc::clone(viewer.rig());
    egui::Grid::new("repairs").num_columns(3).striped(true).show(ui, |ui| {
        for repair in REPAIRS {
            let mut chosen = state.options.is_chosen(repair);
            if ui.checkbox(&mut chosen, title(repair)).changed() {
                let options = &mut state.options;
                match repair {
                    Repair::Normalize => options.normalize = chosen,
                    Repair::Limit => options.limit = chosen,
                    Repair::Prune => options.prune = chosen,
                    Repair::Fill => options.fill = chosen,
                    Repair::Mirror => options.mirror = chosen,
                }
            }
            ui.horizontal(|ui| options_row(ui, repair, &mut state.options));
            match analysis
                .as_ref()
                .and_then(|a| a.each.iter().find(|c| c.repair == repair))
            {
                Some(counts) => ui.label(count_text(counts)),
                None => ui.spinner(),
            };
            ui.end_row();
        }
    });
    if let Some(analysis) = &analysis {
        for counts in &analysis.each {
            let lines = left_lines(&rig, counts);
            if lines.is_empty() {
                continue;
            }
            egui::CollapsingHeader::new(format!("{}: not repaired", title(counts.repair)))
                .id_salt(("left", counts.repair as u8))
                .show(ui, |ui| {
                    for line in lines {
                        ui.label(line);
                    }
                });
        }
    }
    ui.separator();
    ui.horizontal(|ui| {
        let chosen = !state.options.plan().is_empty();
        let stale = viewer.previewed_repair().is_some_and(|o| o != state.options);
        let label = if stale { "Preview again" } else { "Preview" };
        if ui
            .add_enabled(chosen && analysis.is_some(), egui::Button::new(label))
            .on_hover_text("Show the chosen repairs in every view and on both skinning paths")
            .clicked()
        {
            viewer.preview_repair(&state.options);
        }
        if let Some(analysis) = &analysis {
            ui.label(format!("{} vertices change", analysis.changed_count()));
        }
    });
    if viewer.previewed_repair().is_none() {
        return;
    }
    ui.horizontal(|ui| {
        let mut repaired = viewer.showing_repaired();
        ui.selectable_value(&mut repaired, false, "Before");
        ui.selectable_value(&mut repaired, true, "After");
        viewer.show_repaired(repaired);
        let mut mark = viewer.marking_repaired_vertices();
        if ui.checkbox(&mut mark, "Mark changed vertices").changed() {
            viewer.mark_repaired_vertices(mark);
        }
    });
    ui.horizontal(|ui| {
        if ui
            .add_enabled(viewer.document().path.is_some(), egui::Button::new("Save as…"))
            .on_hover_text("Write a copy of the file with the repaired weights; everything else is kept")
            .clicked()
        {
            actions.push(UiAction::SaveRepairedDialog);
        }
        if ui.button("End preview").clicked() {
            viewer.end_repair_preview();
        }
    });
}

/// What Save as… does: `pick` is the save dialog, given the open file's folder and the name it
/// suggests (`NAME.fixed.glb`); the previewed repair is written to the file picked, which is
/// then opened in place of the document. Errors go to the error window, success to a toast.
pub fn save_repaired_from_dialog(
    viewer: &mut Viewer,
    state: &mut super::UiState,
    pick: impl FnOnce(Option<&std::path::Path>, &str) -> Option<std::path::PathBuf>,
) {
    let Some(input) = viewer.document().path.clone() else {
        return;
    };
    let folder = std::path::absolute(&input)
        .ok()
        .and_then(|p| p.parent().map(std::path::Path::to_owned));
    let Some(output) = pick(folder.as_deref(), &crate::viewer::suggested_name(&input)) else {
        return;
    };
    match viewer.save_repaired_as(&output) {
        Ok(saved) => {
            for note in &saved.notes {
                log::info!("{note}");
            }
            state.toast(format!("Saved {}", output.display()));
        }
        Err(e) => viewer.diagnostics.error = Some(format!("cannot save {}: {e}", output.display())),
    }
}
