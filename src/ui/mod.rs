//! egui panels: menu bar, playback and rig info, status bar, error panel, and the 3D viewport's
//! mouse and keyboard controls. The UI is a function of [`Viewer`] state; requests that need
//! the window (a native file dialog, quitting) come back as [`UiAction`]s.

pub mod commands;
pub mod help;
pub mod layers;
pub mod paint;
pub mod report;
pub mod skeleton;
pub mod timings;
pub mod views;

use crate::anim::FRAME_SECONDS;
use crate::render::skeleton::joint_positions;
use crate::settings::Theme;
use crate::skin::pick::dominant_joint;
use crate::viewer::Viewer;
use commands::{Command, shortcut_text};
use egui::{PointerButton, Sense};
pub use skeleton::SkeletonPanelState;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiAction {
    /// Show the native Open dialog.
    OpenDialog,
    /// Skin the current pose on the CPU and in a GPU compute pass and compare.
    Compare,
    /// Save a PNG of the view (with the panels when `with_ui`) into the screenshot folder.
    Screenshot {
        with_ui: bool,
    },
    /// Show the native folder dialog for the screenshot folder.
    ChooseScreenshotFolder,
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

/// UI state that is not the viewer's: text typed in search boxes and the like.
#[derive(Default)]
pub struct UiState {
    pub skeleton: SkeletonPanelState,
    /// The keyboard map window (F1).
    pub help_open: bool,
    pub theme: Theme,
    pub screenshot: ScreenshotOptions,
    /// Where the Open dialog starts.
    pub last_folder: Option<PathBuf>,
    /// Short messages shown over the view's corner for a few seconds.
    pub toasts: Vec<Toast>,
    /// The error last written to the log, so each shown error is logged once.
    logged_error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScreenshotOptions {
    /// Where screenshots go; [`crate::settings::default_screenshot_folder`] when `None`.
    pub folder: Option<PathBuf>,
    /// Include the panels (the whole window), not only the 3D view.
    pub with_ui: bool,
}

impl ScreenshotOptions {
    pub fn folder(&self) -> PathBuf {
        self.folder
            .clone()
            .unwrap_or_else(crate::settings::default_screenshot_folder)
    }
}

#[derive(Debug, Clone)]
pub struct Toast {
    pub text: String,
    pub shown_at: Instant,
}

/// How long a toast stays.
pub const TOAST_SECONDS: f32 = 4.0;

impl UiState {
    /// Shows `text` briefly over the view (and logs it).
    pub fn toast(&mut self, text: impl Into<String>) {
        let text = text.into();
        log::info!("{text}");
        self.toasts.push(Toast {
            text,
            shown_at: Instant::now(),
        });
    }
}

/// What File ▸ Open does: `pick` is the file dialog, given the folder to start in (the open
/// file's, else the last one used); the file picked opens in the background, and its folder is
/// remembered for next time.
pub fn open_from_dialog(
    viewer: &mut Viewer,
    state: &mut UiState,
    pick: impl FnOnce(Option<&Path>) -> Option<PathBuf>,
) -> bool {
    let start = viewer
        .path
        .as_ref()
        .and_then(|p| std::path::absolute(p).ok())
        .and_then(|p| p.parent().map(Path::to_owned))
        .or_else(|| state.last_folder.clone());
    let Some(path) = pick(start.as_deref()) else {
        return false;
    };
    state.last_folder = path.parent().map(Path::to_owned);
    viewer.open(path);
    true
}

/// Where the 3D view lies in the window, `rect` in points turned into pixels.
pub fn viewport_pixels(rect: egui::Rect, pixels_per_point: f32) -> crate::render::PixelRect {
    let pixel = |v: f32, min: f32| (v * pixels_per_point).round().max(min) as u32;
    crate::render::PixelRect {
        x: pixel(rect.min.x, 0.0),
        y: pixel(rect.min.y, 0.0),
        width: pixel(rect.width(), 1.0),
        height: pixel(rect.height(), 1.0),
    }
}

pub fn show(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut UiState, info: &FrameInfo) -> UiOutput {
    let mut actions = Vec::new();
    let dropped = ui.input(|i| i.raw.dropped_files.first().map(|f| f.path().to_owned()));
    if let Some(path) = dropped {
        viewer.open(path);
    }
    let theme = egui::ThemePreference::from(state.theme.egui());
    if ui.ctx().options(|o| o.theme_preference) != theme {
        ui.ctx().set_theme(theme);
    }

    egui::Panel::top("menu").show(ui, |ui| {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui
                    .add(egui::Button::new("Open…").shortcut_text(shortcut_text(ui.ctx(), Command::Open)))
                    .clicked()
                {
                    actions.push(UiAction::OpenDialog);
                }
                recent_menu(ui, viewer);
                if ui
                    .add_enabled(
                        viewer.path.is_some(),
                        egui::Button::new("Reload").shortcut_text(shortcut_text(ui.ctx(), Command::Reload)),
                    )
                    .clicked()
                {
                    viewer.reload();
                }
                if ui.button("Open demo rig").clicked() {
                    viewer.open_demo();
                }
                ui.checkbox(&mut viewer.hot_reload, "Hot reload")
                    .on_hover_text("Reload the file when it, or a file it uses, changes on disk");
                ui.separator();
                if ui
                    .add(
                        egui::Button::new("Save screenshot")
                            .shortcut_text(shortcut_text(ui.ctx(), Command::Screenshot)),
                    )
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
            });
            ui.menu_button("View", |ui| {
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
                ui.checkbox(&mut viewer.view.grid, "Ground grid and axes");
                ui.separator();
                ui.horizontal(|ui| {
                    ui.label("Theme");
                    ui.selectable_value(&mut state.theme, Theme::Dark, "Dark");
                    ui.selectable_value(&mut state.theme, Theme::Light, "Light");
                });
                ui.menu_button("Screenshots", |ui| {
                    ui.checkbox(&mut state.screenshot.with_ui, "Include the panels");
                    ui.label(format!("Folder: {}", state.screenshot.folder().display()));
                    if ui.button("Choose folder…").clicked() {
                        actions.push(UiAction::ChooseScreenshotFolder);
                    }
                });
            });
            ui.menu_button("Help", |ui| {
                if ui
                    .add(
                        egui::Button::new("Keyboard shortcuts")
                            .shortcut_text(shortcut_text(ui.ctx(), Command::ToggleHelp)),
                    )
                    .clicked()
                {
                    state.help_open = true;
                }
            });
        });
    });

    egui::Panel::bottom("status").show(ui, |ui| {
        ui.horizontal(|ui| {
            if let Some((path, elapsed)) = viewer.loading() {
                ui.spinner();
                let file = crate::viewer::label(path);
                ui.label(format!("Loading {file} … {:.1} s", elapsed.as_secs_f32()));
                ui.separator();
            }
            if viewer.file_changed {
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
            ui.separator();
            views::skinning_panel(ui, viewer, &mut actions);
            ui.separator();
            views::view_panel(ui, viewer);
            ui.separator();
            egui::CollapsingHeader::new("Layers, crossfade, attachments")
                .default_open(false)
                .show(ui, |ui| layers::layers_panel(ui, viewer));
            ui.separator();
            report::report_panel(ui, viewer);
            ui.separator();
            timings::timings_panel(ui, viewer);
        });
    });

    egui::Panel::right("skeleton").default_size(280.0).show(ui, |ui| {
        egui::ScrollArea::vertical().id_salt("skeleton panel").show(ui, |ui| {
            skeleton::skeleton_panel(ui, viewer, &mut state.skeleton);
        });
    });

    if viewer.error != state.logged_error {
        if let Some(error) = &viewer.error {
            log::error!("{error}");
        }
        state.logged_error = viewer.error.clone();
    }
    if let Some(error) = viewer.error.clone() {
        let mut open = true;
        egui::Window::new("Error")
            .open(&mut open)
            .collapsible(false)
            .resizable(true)
            .anchor(egui::Align2::CENTER_TOP, [0.0, 40.0])
            .show(ui.ctx(), |ui| {
                ui.label(egui::RichText::new(&error).color(ui.visuals().error_fg_color));
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
            joint_labels(ui, rect, viewer);
            views::legend(ui, rect, viewer);
            toasts(ui, rect, state);
            rect
        })
        .inner;

    help::help_window(ui.ctx(), &mut state.help_open);

    if !ui.ctx().egui_wants_keyboard_input() {
        commands::run_pressed(ui, viewer, state, &mut actions);
    }
    UiOutput { viewport, actions }
}

fn recent_menu(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.menu_button("Recent", |ui| {
        if viewer.recent.is_empty() {
            ui.label("No recent files");
            return;
        }
        let mut picked = None;
        for path in &viewer.recent {
            let name = path
                .file_name()
                .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
            if ui.button(name).on_hover_text(path.display().to_string()).clicked() {
                picked = Some(path.clone());
            }
        }
        ui.separator();
        if ui.button("Clear recent files").clicked() {
            viewer.recent.clear();
        }
        if let Some(path) = picked {
            viewer.open(path);
        }
    });
}

/// The toasts still due, stacked over the view's bottom right corner.
fn toasts(ui: &egui::Ui, viewport: egui::Rect, state: &mut UiState) {
    let lifetime = Duration::from_secs_f32(TOAST_SECONDS);
    state.toasts.retain(|t| t.shown_at.elapsed() < lifetime);
    let Some(oldest) = state.toasts.first() else { return };
    ui.ctx()
        .request_repaint_after(lifetime.saturating_sub(oldest.shown_at.elapsed()));
    egui::Area::new(egui::Id::unique("toasts"))
        .order(egui::Order::Foreground)
        .interactable(false)
        .pivot(egui::Align2::RIGHT_BOTTOM)
        .fixed_pos(viewport.right_bottom() - egui::vec2(12.0, 12.0))
        .show(ui.ctx(), |ui| {
            for toast in &state.toasts {
                egui::Frame::popup(ui.style()).show(ui, |ui| {
                    ui.label(&toast.text);
                });
            }
        });
}

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
    let warnings = rig.load_warnings();
    if !warnings.is_empty() {
        egui::CollapsingHeader::new(format!("{} warnings", warnings.len())).show(ui, |ui| {
            for warning in &warnings {
                ui.label(warning);
            }
        });
    }
}

fn playback_panel(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.heading("Playback");
    ui.spacing_mut().slider_width = 170.0;
    if viewer.rig.clips.is_empty() {
        ui.label("This file has no animations.");
        return;
    }
    let current = viewer.player().clip;
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
        if ui
            .button("< Frame")
            .on_hover_text("Step back one frame (Left arrow)")
            .clicked()
        {
            viewer.step(-1);
        }
        let label = if viewer.player().playing { "Pause" } else { "Play" };
        if ui.button(label).on_hover_text("Space").clicked() {
            viewer.toggle_play();
        }
        if ui
            .button("Frame >")
            .on_hover_text("Step one frame (Right arrow)")
            .clicked()
        {
            viewer.step(1);
        }
        let mut looping = viewer.player().looping;
        if ui.checkbox(&mut looping, "Loop").changed() {
            viewer.player_mut().looping = looping;
        }
    });
    let duration = viewer.clip_duration();
    let mut time = viewer.player().time;
    let timeline = ui.add(
        egui::Slider::new(&mut time, 0.0..=duration.max(f32::EPSILON))
            .text("s")
            .custom_formatter(|v, _| format!("{v:.3}")),
    );
    // Compare values rather than trusting `changed()`: the slider may round what it shows.
    if timeline.changed() && time != viewer.player().time {
        viewer.seek(time);
    }
    ui.label(format!(
        "Frame {} of {}",
        (viewer.player().time / FRAME_SECONDS).round(),
        (duration / FRAME_SECONDS).round()
    ));
    let mut speed = viewer.player().speed;
    let slider = egui::Slider::new(&mut speed, 0.05..=4.0)
        .logarithmic(true)
        .text("speed");
    if ui.add(slider).changed() {
        viewer.player_mut().speed = speed;
    }
}

fn viewport_controls(ui: &egui::Ui, response: &egui::Response, viewer: &mut Viewer) {
    let delta = response.drag_delta();
    let (shift, alt) = ui.input(|i| (i.modifiers.shift, i.modifiers.alt));
    if response.dragged_by(PointerButton::Primary) && alt {
        viewer.bend_selected_by_drag(delta.x, delta.y);
    } else if response.dragged_by(PointerButton::Middle)
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
    } else if response.clicked()
        && let Some(pointer) = response.interact_pointer_pos()
        && let Some(node) = pick(viewer, response.rect, pointer)
    {
        viewer.selected_joint = Some(node);
    }
}

/// Joint dot within this many points of the cursor wins over the mesh behind it.
const JOINT_PICK_RADIUS: f32 = 8.0;

/// Screen position (points) of a world point in the viewport, if it is in front of the camera.
fn to_screen(viewer: &Viewer, viewport: egui::Rect, world: glam::Vec3) -> Option<egui::Pos2> {
    let clip = viewer.camera.view_projection(viewport.aspect_ratio()) * world.extend(1.0);
    (clip.w > 0.0).then(|| {
        let ndc = clip.truncate() / clip.w;
        egui::pos2(
            viewport.min.x + (ndc.x * 0.5 + 0.5) * viewport.width(),
            viewport.min.y + (0.5 - ndc.y * 0.5) * viewport.height(),
        )
    })
}

/// The joint under `pointer`: a joint dot near it when the skeleton is shown, else the joint
/// weighted most on the mesh vertex under it.
fn pick(viewer: &mut Viewer, viewport: egui::Rect, pointer: egui::Pos2) -> Option<usize> {
    if viewer.view.skeleton.show {
        viewer.pose();
        let nearest = joint_positions(&viewer.rig.hierarchy().is_joint, viewer.last_pose())
            .filter_map(|(node, p)| to_screen(viewer, viewport, p).map(|s| (node, s.distance(pointer))))
            .filter(|(_, d)| *d <= JOINT_PICK_RADIUS)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((node, _)) = nearest {
            return Some(node);
        }
    }
    let x = (pointer.x - viewport.min.x) / viewport.width() * 2.0 - 1.0;
    let y = 1.0 - (pointer.y - viewport.min.y) / viewport.height() * 2.0;
    let (origin, direction) = viewer.camera.ray(x, y, viewport.aspect_ratio());
    let hit = viewer.pick_vertex(origin, direction)?;
    dominant_joint(&viewer.rig, &hit)
}

fn joint_labels(ui: &egui::Ui, viewport: egui::Rect, viewer: &Viewer) {
    if !(viewer.view.skeleton.show && viewer.view.skeleton.names) {
        return;
    }
    let painter = ui.painter_at(viewport);
    for (node, position) in joint_positions(&viewer.rig.hierarchy().is_joint, viewer.last_pose()) {
        if let Some(at) = to_screen(viewer, viewport, position) {
            let color = if viewer.selected_joint == Some(node) {
                egui::Color32::from_rgb(255, 220, 40)
            } else {
                egui::Color32::from_gray(230)
            };
            painter.text(
                at + egui::vec2(6.0, -6.0),
                egui::Align2::LEFT_BOTTOM,
                &viewer.rig.nodes[node].name,
                egui::FontId::proportional(11.0),
                color,
            );
        }
    }
}
