//! egui panels: menu bar, playback and rig info, status bar, error panel, and the 3D viewport's
//! mouse and keyboard controls. The UI is a function of [`Viewer`] state; requests that need
//! the window (a native file dialog, quitting) come back as [`UiAction`]s.

use crate::anim::FRAME_SECONDS;
use crate::viewer::Viewer;
use egui::{Key, KeyboardShortcut, Modifiers, PointerButton, Sense};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiAction {
    /// Show the native Open dialog.
    OpenDialog,
    Quit,
}

/// Facts about the frame that the window code knows and the UI shows.
#[derive(Debug, Clone, Default)]
pub struct FrameInfo {
    pub adapter: String,
    pub fps: f32,
}

pub struct UiOutput {
    /// The area left for the 3D view, in points.
    pub viewport: egui::Rect,
    pub actions: Vec<UiAction>,
}

const OPEN_SHORTCUT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);

pub fn show(ui: &mut egui::Ui, viewer: &mut Viewer, info: &FrameInfo) -> UiOutput {
    let mut actions = Vec::new();
    if ui.input_mut(|i| i.consume_shortcut(&OPEN_SHORTCUT)) {
        actions.push(UiAction::OpenDialog);
    }
    let dropped = ui.input(|i| i.raw.dropped_files.first().map(|f| f.path().to_owned()));
    if let Some(path) = dropped {
        viewer.open(path);
    }

    egui::Panel::top("menu").show(ui, |ui| {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui
                    .add(egui::Button::new("Open…").shortcut_text(ui.ctx().format_shortcut(&OPEN_SHORTCUT)))
                    .clicked()
                {
                    actions.push(UiAction::OpenDialog);
                }
                if ui.button("Open demo rig").clicked() {
                    match crate::headless::open_rig(None) {
                        Ok(rig) => viewer.set_rig(rig, None),
                        Err(e) => viewer.error = Some(e.to_string()),
                    }
                }
                ui.separator();
                if ui.button("Quit").clicked() {
                    actions.push(UiAction::Quit);
                }
            });
            ui.menu_button("View", |ui| {
                if ui.add(egui::Button::new("Frame all").shortcut_text("F")).clicked() {
                    viewer.frame_all();
                }
                if ui.add(egui::Button::new("Reset view").shortcut_text("Home")).clicked() {
                    viewer.reset_view();
                }
                ui.checkbox(&mut viewer.view.grid, "Ground grid and axes");
            });
            ui.menu_button("Help", |ui| {
                ui.label(CONTROLS_HELP);
            });
        });
    });

    egui::Panel::bottom("status").show(ui, |ui| {
        ui.horizontal(|ui| {
            if let Some((path, elapsed)) = viewer.loading() {
                ui.spinner();
                ui.label(format!("Loading {} … {:.1} s", path.display(), elapsed.as_secs_f32()));
                ui.separator();
            }
            ui.label(format!("{:.0} FPS", info.fps));
            ui.separator();
            ui.label(&info.adapter);
        });
    });

    egui::Panel::left("rig").default_size(270.0).show(ui, |ui| {
        egui::ScrollArea::vertical().show(ui, |ui| {
            rig_panel(ui, viewer);
            ui.separator();
            playback_panel(ui, viewer);
        });
    });

    if let Some(error) = viewer.error.clone() {
        let mut open = true;
        egui::Window::new("Could not open the file")
            .open(&mut open)
            .collapsible(false)
            .resizable(true)
            .anchor(egui::Align2::CENTER_TOP, [0.0, 40.0])
            .show(ui.ctx(), |ui| {
                ui.label(egui::RichText::new(&error).color(ui.visuals().error_fg_color));
                ui.label("The previous rig is still shown.");
                if ui.button("Dismiss").clicked() {
                    viewer.error = None;
                }
            });
        if !open {
            viewer.error = None;
        }
    }

    let viewport = egui::CentralPanel::default()
        .frame(egui::Frame::NONE)
        .show(ui, |ui| {
            let rect = ui.max_rect();
            let response = ui.allocate_rect(rect, Sense::click_and_drag());
            viewport_controls(ui, &response, viewer);
            rect
        })
        .inner;

    if !ui.ctx().egui_wants_keyboard_input() {
        keyboard_shortcuts(ui, viewer);
    }
    UiOutput { viewport, actions }
}

const CONTROLS_HELP: &str = "Left drag: orbit\n\
Middle drag, Shift+left drag or right drag: pan\n\
Wheel: zoom\n\
F: frame all    Home: reset view\n\
Space: play/pause    ←/→: step one frame\n\
Ctrl+O: open a file (or drop it on the window)";

fn rig_panel(ui: &mut egui::Ui, viewer: &Viewer) {
    let rig = &viewer.rig;
    ui.heading(if rig.name.is_empty() { "Rig" } else { &rig.name });
    egui::Grid::new("rig facts").num_columns(2).show(ui, |ui| {
        for (label, value) in [
            ("Nodes", rig.nodes.len()),
            ("Skins", rig.skins.len()),
            ("Joints", rig.joint_count()),
            ("Meshes", rig.instances.len()),
            ("Vertices", rig.vertex_count()),
            ("Triangles", rig.triangle_count()),
            ("Clips", rig.clips.len()),
        ] {
            ui.label(label);
            ui.label(value.to_string());
            ui.end_row();
        }
    });
    if !rig.warnings.is_empty() {
        egui::CollapsingHeader::new(format!("{} warnings", rig.warnings.len())).show(ui, |ui| {
            for warning in &rig.warnings {
                ui.label(warning);
            }
        });
    }
}

fn playback_panel(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.heading("Playback");
    ui.spacing_mut().slider_width = (ui.available_width() - 70.0).max(80.0);
    if viewer.rig.clips.is_empty() {
        ui.label("This file has no animations.");
        return;
    }
    let current = viewer.player.clip;
    let name = |c: Option<usize>| {
        c.and_then(|c| viewer.rig.clips.get(c))
            .map_or("(rest pose)".to_owned(), |c| c.name.clone())
    };
    let mut selected = current;
    egui::ComboBox::from_label("Clip")
        .selected_text(name(current))
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut selected, None, "(rest pose)");
            for (i, clip) in viewer.rig.clips.iter().enumerate() {
                ui.selectable_value(
                    &mut selected,
                    Some(i),
                    format!("{} ({:.2} s)", clip.name, clip.duration),
                );
            }
        });
    if selected != current {
        viewer.select_clip(selected);
    }
    ui.horizontal(|ui| {
        if ui.button("< Frame").on_hover_text("Step back one frame (←)").clicked() {
            viewer.step(-1);
        }
        let label = if viewer.player.playing { "Pause" } else { "Play" };
        if ui.button(label).on_hover_text("Space").clicked() {
            viewer.toggle_play();
        }
        if ui.button("Frame >").on_hover_text("Step one frame (→)").clicked() {
            viewer.step(1);
        }
        ui.checkbox(&mut viewer.player.looping, "Loop");
    });
    let duration = viewer.clip_duration();
    let mut time = viewer.player.time;
    let timeline = ui.add(
        egui::Slider::new(&mut time, 0.0..=duration.max(f32::EPSILON))
            .text("s")
            .step_by(0.0)
            .max_decimals(3),
    );
    if timeline.changed() {
        viewer.seek(time);
    }
    ui.label(format!(
        "Frame {} of {}",
        (viewer.player.time / FRAME_SECONDS).round(),
        (duration / FRAME_SECONDS).round()
    ));
    ui.add(
        egui::Slider::new(&mut viewer.player.speed, 0.05..=4.0)
            .logarithmic(true)
            .text("speed"),
    );
}

fn viewport_controls(ui: &egui::Ui, response: &egui::Response, viewer: &mut Viewer) {
    let delta = response.drag_delta();
    let shift = ui.input(|i| i.modifiers.shift);
    if response.dragged_by(PointerButton::Middle)
        || response.dragged_by(PointerButton::Secondary)
        || (response.dragged_by(PointerButton::Primary) && shift)
    {
        viewer.camera.pan(delta.x, delta.y, response.rect.height());
    } else if response.dragged_by(PointerButton::Primary) {
        viewer.camera.orbit(delta.x, delta.y);
    }
    if response.hovered() {
        // egui reports a wheel notch as 50 points of scroll.
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            viewer.camera.zoom(scroll / 50.0);
        }
    }
    if response.double_clicked() {
        viewer.frame_all();
    }
}

fn keyboard_shortcuts(ui: &egui::Ui, viewer: &mut Viewer) {
    let pressed = |key| ui.input(|i| i.key_pressed(key) && i.modifiers.is_none());
    if pressed(Key::Space) {
        viewer.toggle_play();
    }
    if pressed(Key::ArrowRight) {
        viewer.step(1);
    }
    if pressed(Key::ArrowLeft) {
        viewer.step(-1);
    }
    if pressed(Key::F) {
        viewer.frame_all();
    }
    if pressed(Key::Home) {
        viewer.reset_view();
    }
}
