//! The Engines window (Tools ▸ Engines): what each engine profile changes in the open rig,
//! from [`crate::engine::check::check_engines`] run on a thread of its own. Choosing a line
//! shows that engine's drawing where it is farthest from the file's.

use crate::engine::Engine;
use crate::engine::check::EngineCheck;
use crate::viewer::{EngineChecksState, Viewer};

pub fn engines_window(ctx: &egui::Context, viewer: &mut Viewer, open: &mut bool) {
    if !*open {
        return;
    }
    viewer.check_all_engines();
    let mut still_open = true;
    egui::Window::new("Engines")
        .open(&mut still_open)
        .default_pos([290.0, 60.0])
        .default_size([720.0, 360.0])
        .resizable(true)
        .show(ctx, |ui| contents(ui, viewer));
    *open = still_open;
}

fn contents(ui: &mut egui::Ui, viewer: &mut Viewer) {
    let chosen = match viewer.engine_checks() {
        EngineChecksState::NotStarted | EngineChecksState::Running => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Checking every engine at the rest pose and every clip at 30 Hz…");
            });
            None
        }
        EngineChecksState::Failed(why) => {
            ui.colored_label(ui.visuals().error_fg_color, format!("The check failed: {why}"));
            None
        }
        EngineChecksState::Done(checks) => table(ui, checks, viewer.view.engine),
    };
    if let Some(engine) = chosen
        && let Err(refusal) = viewer.show_engine_worst(engine)
    {
        viewer.diagnostics.error = Some(refusal.to_string());
    }
}

/// The table of engines; returns the engine whose line was clicked.
fn table(ui: &mut egui::Ui, checks: &[EngineCheck], shown: Option<Engine>) -> Option<Engine> {
    ui.label("Click an engine to draw the rig as it does, at its farthest vertex, in the engine distance view.");
    let mut chosen = None;
    egui::ScrollArea::vertical().show(ui, |ui| {
        egui::Grid::new("engines table")
            .num_columns(5)
            .striped(true)
            .show(ui, |ui| {
                for title in ["Engine", "Loads", "Influences changed", "Worst distance", "Also"] {
                    ui.strong(title);
                }
                ui.end_row();
                for check in checks {
                    let engine = Engine::by_name(check.engine);
                    let line = ui
                        .selectable_label(engine.is_some() && engine == shown, check.label)
                        .on_hover_text(worst_text(check));
                    if line.clicked() {
                        chosen = engine;
                    }
                    match &check.refused {
                        Some(why) => ui.label("refuses").on_hover_text(why),
                        None => ui.label("loads"),
                    };
                    ui.label(format!("{} ({} moved)", check.rows_changed, check.vertices_moved));
                    ui.label(format!("{:.2e} of the height", check.worst_distance()));
                    let also = check.findings.len();
                    if also == 0 {
                        ui.label("");
                    } else {
                        ui.label(format!("{also} finding{}", if also == 1 { "" } else { "s" }))
                            .on_hover_text(check.findings.join("\n"));
                    }
                    ui.end_row();
                }
            });
    });
    chosen
}

/// Where and when the engine draws a vertex farthest from the file's drawing.
fn worst_text(check: &EngineCheck) -> String {
    let Some(worst) = &check.worst else {
        return "Every vertex where the file draws it.".to_owned();
    };
    let pose = worst.pose_text();
    let joints: Vec<String> = (worst.joints.iter())
        .map(|(name, weight)| format!("{name} {weight:.3}"))
        .collect();
    format!(
        "Vertex {} of {} (primitive {}) at {pose}: {:.3e} of the height.\nIn the file: {}",
        worst.vertex,
        worst.mesh,
        worst.primitive,
        worst.distance,
        joints.join(", ")
    )
}
