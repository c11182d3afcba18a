//! The menu bar and the status bar.

use super::commands::{Command, shortcut_text};
use super::*;

/// File, Edit, View, Tools and Help.
pub(super) fn menu_bar(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut UiState, actions: &mut Vec<UiAction>) {
    egui::Panel::top("menu").show(ui, |ui| {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| file_menu(ui, viewer, state, actions));
            ui.menu_button("Edit", |ui| {
                super::history::edit_menu(ui, viewer);
                ui.separator();
                super::poses::pose_menu(ui, viewer, state);
            });
            ui.menu_button("View", |ui| view_menu(ui, viewer, state, actions));
            ui.menu_button("Tools", |ui| tools_menu(ui, state));
            ui.menu_button("Help", |ui| help_menu(ui, state));
        });
    });
}

/// Opening, adding, comparing, lighting, saving and exporting files.
fn file_menu(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut UiState, actions: &mut Vec<UiAction>) {
    if ui
        .add(egui::Button::new("Open…").shortcut_text(shortcut_text(ui.ctx(), Command::Open)))
        .clicked()
    {
        actions.push(UiAction::OpenDialog);
    }
    if ui
        .button("Open by path…")
        .on_hover_text("Type the file's path (completed with Tab) instead of using the file dialog")
        .clicked()
    {
        let prompt = super::path_prompt::PathPrompt::new(super::path_prompt::PathPurpose::Open, viewer);
        state.path_prompt = Some(prompt);
    }
    super::clip_list::save_as_item(ui, viewer, actions);
    if ui
        .button("Load clips from…")
        .on_hover_text(
            "Add the clips of another file (a clip pack, another export of this skeleton) to this rig; \
                 joints are matched by name, prefixes such as mixamorig: ignored",
        )
        .clicked()
    {
        actions.push(UiAction::LoadClipsDialog);
    }
    let has_clip_files = !viewer.document().clip_files().is_empty();
    if ui
        .add_enabled(has_clip_files, egui::Button::new("Map joints of added clips…"))
        .clicked()
    {
        state.joint_map_open = true;
    }
    compare_menu(ui, viewer, actions);
    if ui
        .button("Environment…")
        .on_hover_text("Light the shaded view with an equirectangular .hdr panorama")
        .clicked()
    {
        actions.push(UiAction::EnvironmentDialog);
    }
    recent_menu(ui, viewer, state, actions);
    if ui
        .add_enabled(
            viewer.document().path.is_some(),
            egui::Button::new("Reload").shortcut_text(shortcut_text(ui.ctx(), Command::Reload)),
        )
        .clicked()
    {
        viewer.reload();
    }
    if ui.button("Open demo rig").clicked() {
        super::discard::do_or_ask(viewer, state, super::discard::AfterDiscard::OpenDemo, actions);
    }
    ui.checkbox(&mut viewer.hot_reload, "Hot reload")
        .on_hover_text("Reload the file when it, or a file it uses, changes on disk");
    ui.separator();
    if ui
        .button("Export pose…")
        .on_hover_text("Save the mesh as shown (this pose and skinning method) as a static .obj or .glb")
        .clicked()
    {
        actions.push(UiAction::ExportPoseDialog);
    }
    if ui
        .add(egui::Button::new("Save screenshot").shortcut_text(shortcut_text(ui.ctx(), Command::Screenshot)))
        .clicked()
    {
        actions.push(UiAction::Screenshot {
            with_ui: state.screenshot.with_ui,
        });
    }
    ui.separator();
    if ui.button("Quit").clicked() {
        actions.push(UiAction::Quit);
    }
}

fn view_menu(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut UiState, actions: &mut Vec<UiAction>) {
    if ui
        .add(egui::Button::new("Frame all").shortcut_text(shortcut_text(ui.ctx(), Command::FrameAll)))
        .clicked()
    {
        viewer.frame_all();
    }
    if ui
        .add(egui::Button::new("Reset view").shortcut_text(shortcut_text(ui.ctx(), Command::ResetView)))
        .clicked()
    {
        viewer.reset_view();
    }
    ui.checkbox(&mut viewer.view.options.grid, "Ground grid and axes");
    springs_menu_items(ui, viewer);
    engine_menu(ui, viewer);
    ui.separator();
    ui.horizontal(|ui| {
        ui.label("Theme");
        ui.selectable_value(&mut state.theme, Theme::Dark, "Dark");
        ui.selectable_value(&mut state.theme, Theme::Light, "Light");
    });
    ui.horizontal(|ui| {
        ui.label("Anti-aliasing");
        for &msaa in <crate::render::Msaa as strum::VariantArray>::VARIANTS {
            ui.selectable_value(&mut state.msaa, msaa, msaa.label());
        }
    })
    .response
    .on_hover_text("Auto: 4× on a GPU, off on a software (CPU) adapter");
    ui.menu_button("Screenshots", |ui| {
        ui.checkbox(&mut state.screenshot.with_ui, "Include the panels");
        ui.label(format!("Folder: {}", state.screenshot.folder().display()));
        if ui.button("Choose folder…").clicked() {
            actions.push(UiAction::ChooseScreenshotFolder);
        }
    });
}

/// View ▸ Spring bones and Reset springs, live for a VRM avatar with spring bones.
fn springs_menu_items(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.add_enabled_ui(viewer.has_springs(), |ui| {
        let mut on = viewer.springs_on();
        if ui
            .checkbox(&mut on, "Spring bones")
            .on_hover_text("Swing the VRM spring bones (hair, skirts) after the pose")
            .changed()
        {
            viewer.set_springs(on);
        }
        if ui.button("Reset springs").clicked() {
            viewer.reset_springs();
        }
    });
}

/// View ▸ Engine: the file's own drawing, or the rig as one engine draws it.
fn engine_menu(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.menu_button("Engine", |ui| {
        let shown = viewer.view.engine;
        let mut chosen = shown;
        ui.radio_value(&mut chosen, None, "The file (glTF as specified)");
        ui.separator();
        for engine in crate::engine::Engine::ALL {
            ui.radio_value(&mut chosen, Some(engine), engine.label());
        }
        if chosen != shown
            && let Err(refusal) = viewer.set_engine(chosen)
        {
            viewer.diagnostics.error = Some(refusal.to_string());
        }
    })
    .response
    .on_hover_text("Draw the rig as an engine reads it: the influences it keeps, how it renormalizes them, its caps");
}

/// The tool windows.
fn tools_menu(ui: &mut egui::Ui, state: &mut UiState) {
    if ui
        .add(egui::Button::new("Audit").shortcut_text(shortcut_text(ui.ctx(), Command::ToggleAudit)))
        .clicked()
    {
        state.audit.open = true;
    }
    if ui
        .add(egui::Button::new("Repair weights").shortcut_text(shortcut_text(ui.ctx(), Command::ToggleRepair)))
        .on_hover_text("Normalize, limit, prune, fill or mirror the weights, preview and save")
        .clicked()
    {
        state.repair.open = true;
    }
    if ui
        .add(egui::Button::new("Curves").shortcut_text(shortcut_text(ui.ctx(), Command::ToggleCurves)))
        .on_hover_text("The selected joint's channels against time: keys, interpolation, findings")
        .clicked()
    {
        state.curves.open = true;
    }
    if ui
        .button("Engines")
        .on_hover_text("What each engine changes in this rig, and how far it draws a vertex from the file")
        .clicked()
    {
        state.engines_open = true;
    }
}

fn help_menu(ui: &mut egui::Ui, state: &mut UiState) {
    if ui
        .add(egui::Button::new("Keyboard shortcuts").shortcut_text(shortcut_text(ui.ctx(), Command::ToggleHelp)))
        .clicked()
    {
        state.help_open = true;
    }
    if ui.button("About…").clicked() {
        state.about_open = true;
    }
}

/// Loading progress, a file changed on disk, frame rate and adapter.
pub(super) fn status_bar(ui: &mut egui::Ui, viewer: &mut Viewer, info: &FrameInfo) {
    egui::Panel::bottom("status").show(ui, |ui| {
        ui.horizontal(|ui| {
            if let Some((path, elapsed)) = viewer.loading() {
                ui.spinner();
                let file = crate::viewer::label(path);
                ui.label(format!("Loading {file} … {:.1} s", elapsed.as_secs_f32()));
                ui.separator();
            }
            if viewer.document().file_changed {
                let text = if viewer.hot_reload {
                    "Changed on disk"
                } else {
                    "Changed on disk (hot reload is off)"
                };
                ui.label(egui::RichText::new(text).color(ui.visuals().warn_fg_color));
                if ui.small_button("Reload").on_hover_text("F5").clicked() {
                    viewer.reload();
                }
                ui.separator();
            }
            if let Some(detail) = &info.detail {
                ui.label(detail).on_hover_text(
                    "This rig takes longer than a frame to draw: a coarse proxy stands in while \
                     the view moves, and the whole scene is finished a part per frame once it \
                     holds still.",
                );
                ui.separator();
            }
            // Offscreen pictures time no frames: no figure rather than a false "0 FPS".
            if info.fps > 0.0 {
                ui.label(format!("{:.0} FPS", info.fps));
                ui.separator();
            }
            ui.label(match info.samples {
                0 | 1 => "no MSAA".to_owned(),
                n => format!("{n}× MSAA"),
            });
            ui.separator();
            ui.label(&info.adapter);
        });
    });
}

fn recent_menu(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut UiState, actions: &mut Vec<UiAction>) {
    ui.menu_button("Recent", |ui| {
        if viewer.recent.is_empty() {
            ui.label("No recent files");
            return;
        }
        let mut picked = None;
        for path in &viewer.recent {
            let name = file_label(path);
            if ui.button(name).on_hover_text(path.display().to_string()).clicked() {
                picked = Some(path.clone());
            }
        }
        ui.separator();
        if ui.button("Clear recent files").clicked() {
            viewer.recent.clear();
        }
        if let Some(path) = picked {
            super::discard::do_or_ask(viewer, state, super::discard::AfterDiscard::Open(path), actions);
        }
    });
}

/// File ▸ Compare with…, and while comparing the layout and the way out.
fn compare_menu(ui: &mut egui::Ui, viewer: &mut Viewer, actions: &mut Vec<UiAction>) {
    if ui
        .button("Compare with…")
        .on_hover_text(
            "Show another file of this rig beside or over this one, at the same clip and time \
             (or drop a file with Shift held)",
        )
        .clicked()
    {
        actions.push(UiAction::CompareDialog);
    }
    compare_with_engine_menu(ui, viewer);
    let Some(shown) = viewer.comparison().map(|comparison| comparison.layout) else {
        return;
    };
    let mut layout = shown;
    ui.horizontal(|ui| {
        for &choice in <crate::viewer::CompareLayout as strum::VariantArray>::VARIANTS {
            ui.radio_value(&mut layout, choice, choice.label());
        }
    });
    if layout != shown {
        viewer.set_compare_layout(layout);
    }
    if ui.button("Stop comparing").clicked() {
        viewer.stop_comparing();
    }
}

/// File ▸ Compare with engine: the file beside or over itself as an engine draws it.
fn compare_with_engine_menu(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.menu_button("Compare with engine", |ui| {
        for engine in crate::engine::Engine::ALL {
            if ui.button(engine.label()).clicked()
                && let Err(refusal) = viewer.compare_with_engine(engine)
            {
                viewer.diagnostics.error = Some(refusal.to_string());
            }
        }
    })
    .response
    .on_hover_text(
        "Show this file beside or over itself as an engine draws it; with an engine chosen in \
         View ▸ Engine too, two engines side by side",
    );
}
