//! The egui panels laid out around the 3D view, with the error window. Each concern has its
//! module: the menu and status bars, playback, the view's mouse controls, the skeleton, views,
//! layers, the report and timings; keys and menus share one command table ([`commands`]). The
//! UI is a function of [`Viewer`] state; requests that need the window (a native file dialog,
//! quitting) come back as [`UiAction`]s.

pub mod about;
pub mod audit;
pub mod audit_motion;
pub mod clip_list;
pub mod commands;
pub mod compare;
pub mod curves;
pub mod discard;
pub mod dqs_mask;
pub mod engines;
pub mod expressions;
pub mod ghosts;
pub mod gizmo;
pub mod help;
pub mod history;
pub mod joint_map;
pub mod layers;
pub mod legend;
mod menus;
pub mod paint;
pub mod path_prompt;
mod playback;
pub mod poses;
pub mod recovery;
pub mod reload_question;
pub mod repair;
pub mod report;
pub mod skeleton;
pub mod timings;
pub mod vertex;
mod viewport;
pub mod views;

use crate::anim::FRAME_SECONDS;
use crate::render::skeleton::joint_positions;
use crate::settings::Theme;
use crate::skin::pick::dominant_joint;
use crate::viewer::Viewer;
use egui::{PointerButton, Sense};
pub use skeleton::SkeletonPanelState;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiAction {
    /// Show the native Open dialog.
    OpenDialog,
    /// Show the native dialog for a file whose clips to add to the rig.
    LoadClipsDialog,
    /// Show the native save dialog for a copy of the file with its clips as edited.
    SaveAsDialog,
    /// Show the native dialog for a file to compare the open one with.
    CompareDialog,
    /// Show the native dialog for an environment map (.hdr) to light the shaded view with.
    EnvironmentDialog,
    /// Skin the current pose on the CPU and in a GPU compute pass and compare.
    Compare,
    /// Save a PNG of the view (with the panels when `with_ui`) into the screenshot folder.
    Screenshot { with_ui: bool },
    /// Show the native save dialog for the previewed weight repair.
    SaveRepairedDialog,
    /// Show the native save dialog for an OBJ or GLB of the current pose.
    ExportPoseDialog,
    /// Show the native folder dialog for the screenshot folder.
    ChooseScreenshotFolder,
    /// Quit, asking first when edits would be lost.
    Quit,
    /// Quit now: the user agreed to drop the edits not saved.
    QuitNow,
}

/// Facts about the frame that the window code knows and the UI shows.
#[derive(Debug, Clone, Default)]
pub struct FrameInfo {
    pub adapter: String,
    /// Frames per second; 0 when no frame was timed (offscreen pictures), and none is shown.
    pub fps: f32,
    /// Samples per pixel the 3D view is drawn with.
    pub samples: u32,
    /// What the 3D view shows of a heavy scene when not the whole of it (the proxy while it
    /// moves, or how far the whole scene is drawn).
    pub detail: Option<String>,
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
    pub audit: audit::AuditPanelState,
    pub repair: repair::RepairPanelState,
    pub curves: curves::CurvesPanelState,
    pub clip_list: clip_list::ClipListState,
    /// The rotation gizmo, the pose-mode keys and the IK tool of the 3D view.
    pub pose_tools: gizmo::PoseToolsState,
    /// The keyboard map window (F1).
    pub help_open: bool,
    /// The Help ▸ About… window.
    pub about_open: bool,
    /// The Joint mapping window of clips added from other files.
    pub joint_map_open: bool,
    /// The Engines window (Tools ▸ Engines).
    pub engines_open: bool,
    /// Clips are being added: the Joint mapping window opens once they are in if joints stay
    /// unmatched.
    pub joint_map_after_load: bool,
    pub theme: Theme,
    /// Anti-aliasing of the 3D view; the window applies it.
    pub msaa: crate::render::Msaa,
    pub screenshot: ScreenshotOptions,
    /// Where the Open dialog starts.
    pub last_folder: Option<PathBuf>,
    /// Short messages shown over the view's corner for a few seconds.
    pub toasts: Vec<Toast>,
    /// Edits not saved would be dropped: the question waiting for its answer.
    pub discard_question: Option<discard::DiscardQuestion>,
    /// A path typed by hand (no file dialog could open, or File ▸ Open by path…).
    pub path_prompt: Option<path_prompt::PathPrompt>,
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

/// How panels name a file: its file name, or the whole path when it has none.
pub(crate) fn file_label(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// What File ▸ Open does: `pick` is the file dialog, given the folder to start in (the open
/// file's, else the last one used); the file picked opens in the background, and its folder is
/// remembered for next time.
pub fn open_from_dialog(
    viewer: &mut Viewer,
    state: &mut UiState,
    pick: impl FnOnce(Option<&Path>) -> Option<PathBuf>,
) -> bool {
    let Some(path) = pick_near_open_file(viewer, state, pick) else {
        return false;
    };
    discard::do_or_ask(viewer, state, discard::AfterDiscard::Open(path), &mut Vec::new());
    true
}

/// What File ▸ Load clips from… does: like [`open_from_dialog`], but the clips of the file
/// picked are added to the open rig, and the Joint mapping window opens once they are in if
/// joints stay unmatched.
pub fn load_clips_from_dialog(
    viewer: &mut Viewer,
    state: &mut UiState,
    pick: impl FnOnce(Option<&Path>) -> Option<PathBuf>,
) -> bool {
    let picked = pick_near_open_file(viewer, state, pick);
    state.joint_map_after_load |= picked.is_some();
    (picked.map(|path| viewer.load_clips_from(path))).is_some()
}

/// What File ▸ Compare with… does: like [`open_from_dialog`], but the file picked is shown as
/// the other side of the open one.
pub fn compare_from_dialog(
    viewer: &mut Viewer,
    state: &mut UiState,
    pick: impl FnOnce(Option<&Path>) -> Option<PathBuf>,
) -> bool {
    (pick_near_open_file(viewer, state, pick).map(|path| compare_with(viewer, state, path))).is_some()
}

/// Shows the file at `path` as the other side of the open one, or says why it cannot.
pub fn compare_with(viewer: &mut Viewer, state: &mut UiState, path: PathBuf) {
    let shown = path.display().to_string();
    match viewer.compare_with_file(path) {
        Ok(()) => state.toast(format!("comparing with {shown}")),
        Err(e) => state.toast(format!("cannot compare with {shown}: {e}")),
    }
}

/// What File ▸ Environment… does: the `.hdr` panorama picked lights the shaded view (with
/// image-based light turned on), or a toast says why it cannot.
pub fn environment_from_dialog(
    viewer: &mut Viewer,
    state: &mut UiState,
    pick: impl FnOnce(Option<&Path>) -> Option<PathBuf>,
) -> bool {
    let Some(path) = pick_near_open_file(viewer, state, pick) else {
        return false;
    };
    match crate::render::environment::Environment::open(&path) {
        Ok(environment) => {
            state.toast(format!("lit by {}", environment.name()));
            viewer.environment = environment;
            viewer.view.options.light = crate::render::environment::Lighting::Environment;
        }
        Err(e) => state.toast(format!("cannot use the environment: {e}")),
    }
    true
}

/// A file picked by `pick`, started in the open file's folder (else the last one used), whose
/// folder is remembered for next time.
fn pick_near_open_file(
    viewer: &Viewer,
    state: &mut UiState,
    pick: impl FnOnce(Option<&Path>) -> Option<PathBuf>,
) -> Option<PathBuf> {
    let start = (viewer.document().path.as_ref())
        .and_then(|p| std::path::absolute(p).ok())
        .and_then(|p| p.parent().map(Path::to_owned))
        .or_else(|| state.last_folder.clone());
    let path = pick(start.as_deref())?;
    state.last_folder = path.parent().map(Path::to_owned);
    Some(path)
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

/// A file dropped on the window opens (asking first when edits would be lost); with Shift held
/// it is the other side of a comparison.
fn take_dropped_file(ui: &egui::Ui, viewer: &mut Viewer, state: &mut UiState, actions: &mut Vec<UiAction>) {
    let (dropped, shift) = ui.input(|i| {
        let dropped = i.raw.dropped_files.first().map(|f| f.path().to_owned());
        (dropped, i.modifiers.shift)
    });
    match dropped {
        Some(path) if shift => compare_with(viewer, state, path),
        Some(path) => {
            discard::do_or_ask(viewer, state, discard::AfterDiscard::Open(path), actions);
        }
        None => {}
    }
}

/// The panel on the left: the rig, playback, clips, skinning, view, layers, report, timings.
fn rig_side_panel(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut UiState, actions: &mut Vec<UiAction>) {
    egui::Panel::left("rig").default_size(270.0).show(ui, |ui| {
        egui::ScrollArea::vertical().show(ui, |ui| {
            playback::rig_panel(ui, viewer);
            ui.separator();
            playback::playback_panel(ui, viewer);
            clip_list::clip_list_panel(ui, viewer, &mut state.clip_list);
            ui.separator();
            views::skinning_panel(ui, viewer, actions);
            ui.separator();
            views::view_panel(ui, viewer);
            ui.separator();
            egui::CollapsingHeader::new("Layers, crossfade, attachments")
                .default_open(false)
                .show(ui, |ui| layers::layers_panel(ui, viewer));
            if !viewer.rig().facts.expressions.is_empty() {
                ui.separator();
                egui::CollapsingHeader::new("Expressions")
                    .default_open(false)
                    .show(ui, |ui| expressions::expressions_panel(ui, viewer));
            }
            ui.separator();
            report::report_panel(ui, viewer);
            ui.separator();
            timings::timings_panel(ui, viewer);
        });
    });
}

pub fn show(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut UiState, info: &FrameInfo) -> UiOutput {
    let mut actions = Vec::new();
    take_dropped_file(ui, viewer, state, &mut actions);
    let theme = egui::ThemePreference::from(state.theme.egui());
    if ui.ctx().options(|o| o.theme_preference) != theme {
        ui.ctx().set_theme(theme);
    }

    menus::menu_bar(ui, viewer, state, &mut actions);
    menus::status_bar(ui, viewer, info);

    rig_side_panel(ui, viewer, state, &mut actions);

    // A deep hierarchy (a long tail or chain) indents its tree far to the right: the tree
    // scrolls sideways instead of the panel crowding out the 3D view.
    let widest_side_panel = (ui.available_width() * 0.4).max(280.0);
    egui::Panel::right("skeleton")
        .default_size(280.0)
        .max_size(widest_side_panel)
        .show(ui, |ui| {
            egui::ScrollArea::vertical().id_salt("skeleton panel").show(ui, |ui| {
                skeleton::skeleton_panel(ui, viewer, &mut state.skeleton);
                ui.separator();
                vertex::vertex_panel(ui, viewer);
            });
        });

    if viewer.diagnostics.error != state.logged_error {
        if let Some(error) = &viewer.diagnostics.error {
            log::error!("{error}");
        }
        state.logged_error = viewer.diagnostics.error.clone();
    }
    if let Some(error) = viewer.diagnostics.error.clone() {
        let mut open = true;
        egui::Window::new("Error")
            .open(&mut open)
            .collapsible(false)
            .resizable(true)
            .anchor(egui::Align2::CENTER_TOP, [0.0, 40.0])
            .show(ui.ctx(), |ui| {
                ui.label(egui::RichText::new(&error).color(ui.visuals().error_fg_color));
                if ui.button("Dismiss").clicked() {
                    viewer.diagnostics.error = None;
                }
            });
        if !open {
            viewer.diagnostics.error = None;
        }
    }
    discard::discard_window(ui.ctx(), viewer, state, &mut actions);
    reload_question::reload_question_window(ui.ctx(), viewer);
    recovery::restore_window(ui.ctx(), viewer, state);
    path_prompt::path_prompt_window(ui.ctx(), viewer, state);
    poses::save_pose_window(ui.ctx(), viewer, state);
    if ui.input(|i| i.pointer.any_released()) {
        // A drag of a slider or of a joint in the view ends: its pose changes were one edit.
        viewer.end_gesture();
    }

    let viewport = egui::CentralPanel::default()
        .frame(egui::Frame::NONE)
        .show(ui, |ui| {
            let rect = ui.max_rect();
            let response = ui.allocate_rect(rect, Sense::click_and_drag());
            if !gizmo::pose_tools(ui, &response, rect, viewer, state) {
                viewport::viewport_controls(ui, &response, viewer, state.pose_tools.ik_tool);
            }
            viewport::joint_labels(ui, rect, viewer);
            legend::legend(ui, rect, viewer);
            viewport::toasts(ui, rect, state);
            rect
        })
        .inner;

    joint_map::open_when_loaded(viewer, &mut state.joint_map_open, &mut state.joint_map_after_load);
    help::help_window(ui.ctx(), &mut state.help_open);
    about::about_window(ui.ctx(), &mut state.about_open, &info.adapter);
    audit::audit_window(ui.ctx(), viewer, &mut state.audit);
    repair::repair_window(ui.ctx(), viewer, &mut state.repair, &mut actions);
    crate::ui::compare::compare_window(ui.ctx(), viewer);
    joint_map::joint_map_window(ui.ctx(), viewer, &mut state.joint_map_open);
    curves::curves_window(ui.ctx(), viewer, &mut state.curves);
    engines::engines_window(ui.ctx(), viewer, &mut state.engines_open);

    if !ui.ctx().egui_wants_keyboard_input() {
        commands::run_pressed(ui, viewer, state, &mut actions);
        history::run_undo_keys(ui, viewer, state);
    }
    clip_list::show_notice(viewer, state);
    UiOutput { viewport, actions }
}
