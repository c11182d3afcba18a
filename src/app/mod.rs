//! The window: a winit event loop that owns the surface, the renderers, egui and the viewer.

pub mod crash;
mod handover;
pub mod log_file;
mod settings;
#[cfg(unix)]
pub mod single_instance;
mod window;

use window::WindowState;

use crate::cli::RigSource;
use crate::draw::{Clock, DetailedView, FrameStep, ViewRenderer};
use crate::render::compute::ComputeSkinner;
use crate::render::timer::GpuTimer;
use crate::render::{Gpu, GpuError, Msaa, PixelRect, RenderTargets};
use crate::screenshot::{self, ScreenshotError, TextureCapture};
use crate::settings::Settings;
use crate::timings::Stage;
use crate::ui::path_prompt::{PathPrompt, PathPurpose};
use crate::ui::{self, FrameInfo, UiAction, UiState};
use crate::viewer::Viewer;
use image::RgbaImage;
pub use settings::{apply_settings, capture_settings};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use winit::application::ApplicationHandler;
use winit::dpi::LogicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::window::{Window, WindowId};

/// Sent to the event loop from other threads (the file watcher) to wake it.
#[derive(Debug, Clone, Copy)]
struct Wake;

/// How often, at most, changed settings are written while the viewer runs (they are also
/// written when it closes).
const SETTINGS_SAVE_INTERVAL: Duration = Duration::from_secs(2);

/// Why the window stopped, or could not open.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error("cannot open a window: {0}")]
    Open(winit::error::OsError),
    #[error("cannot start the window system: {0}")]
    Start(winit::error::EventLoopError),
    #[error("the event loop failed: {0}")]
    EventLoop(winit::error::EventLoopError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("the window surface offers no pixel format")]
    NoPixelFormat,
    #[error("the window surface reported a validation error")]
    SurfaceValidation,
    #[error("{shown}; the demo rig failed too: {demo}")]
    NoRig { shown: String, demo: crate::rig::RigError },
    #[error("the graphics device was lost ({reason}) and could not be recreated: {source}")]
    DeviceLost { reason: String, source: Box<WindowError> },
    #[error("the window screenshot failed: {0}")]
    Screenshot(#[from] ScreenshotError),
    #[error("the window surface cannot be read back for a screenshot")]
    NoReadBack,
    /// egui returned without calling the UI (it always calls it once per run).
    #[error("the UI did not run")]
    UiDidNotRun,
}

/// Opens the viewer window on the rig `source` gives (the demo rig, with the error shown, when
/// a file does not open) and runs until it is closed. `exit_after_frames` closes it after that
/// many drawn frames (used by smoke tests); with `screenshot_on_exit`, the last frame, panels
/// included, is first saved there as a PNG.
pub fn run(
    source: RigSource,
    clips: crate::retarget::ClipFiles,
    exit_after_frames: Option<u64>,
    screenshot_on_exit: Option<PathBuf>,
    new_window: bool,
) -> Result<(), WindowError> {
    // Windows for tests are their own; so is one the user asks for.
    let shared_window = exit_after_frames.is_none() && !new_window;
    if shared_window && handover::hand_over_to_open_window(&source, &clips) {
        return Ok(());
    }
    crash::install();
    let settings = Settings::load();
    let (rig, loaded_path, error) = match source.open_with(&clips.options.read) {
        Ok((rig, path)) => (rig, path, None),
        Err(e) => {
            let shown = match &source {
                RigSource::File(file) => format!("could not open {}: {e}", file.display()),
                _ => e.to_string(),
            };
            let demo = (crate::rig::open(None)).map_err(|demo| WindowError::NoRig {
                shown: shown.clone(),
                demo,
            })?;
            (demo, None, Some(shown))
        }
    };
    let mut viewer = Viewer::new(rig, loaded_path);
    let crashed = crash::folder()
        .map(|f| crash::take_unseen_reports(&f))
        .unwrap_or_default();
    viewer.diagnostics.error = match (crashed.last(), error) {
        (Some(report), error) => Some(format!(
            "Rigscope stopped unexpectedly last time; what it knew is in {} (please attach it to a bug report){}",
            report.display(),
            error.map(|e| format!("\n{e}")).unwrap_or_default()
        )),
        (None, error) => error,
    };
    if let Some(folder) = crate::viewer::journal_folder() {
        // Journals of a window that crashed or was killed: offered in the window, or set aside
        // (and said so) when they do not read whole.
        let unusable = viewer.keep_journals(folder);
        if !unusable.is_empty() {
            let shown = viewer.diagnostics.error.take().into_iter().chain(unusable);
            viewer.diagnostics.error = Some(shown.collect::<Vec<_>>().join("\n"));
        }
    }
    viewer.background_checks = true;
    let mut ui_state = UiState::default();
    apply_settings(&settings, &mut viewer, &mut ui_state);
    // After the settings: their joint maps apply to these clips.
    viewer.clip_carry = (clips.options, clips.pairs);
    if !clips.files.is_empty() {
        viewer.load_clips_from_files(clips.files);
        ui_state.joint_map_after_load = true;
    }
    let event_loop = EventLoop::<Wake>::with_user_event()
        .build()
        .map_err(WindowError::Start)?;
    event_loop.set_control_flow(ControlFlow::Wait);
    let proxy = std::sync::Mutex::new(event_loop.create_proxy());
    viewer.watch_files(Some(Arc::new(move || {
        if let Ok(proxy) = proxy.lock() {
            let _ = proxy.send_event(Wake);
        }
    })));
    let handed_over = Arc::new(std::sync::Mutex::new(Vec::new()));
    let _listener = shared_window
        .then(|| handover::listen_for_files(&event_loop, handed_over.clone()))
        .flatten();
    let mut app = App {
        viewer,
        window: None,
        initial_ui: Some(ui_state),
        window_size: settings.window_size(),
        saved_settings: settings,
        settings_checked: Instant::now(),
        exit_after_frames,
        screenshot_on_exit,
        frames_drawn: 0,
        last_frame: Instant::now(),
        fatal: None,
        handed_over,
    };
    event_loop.run_app(&mut app).map_err(WindowError::EventLoop)?;
    app.save_settings();
    if app.fatal.is_none() {
        // Closed as asked: unsaved edits were let go then. After a failure they stay journaled
        // for the next start.
        app.viewer.close_journals();
    }
    match app.fatal {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

struct App {
    viewer: Viewer,
    window: Option<WindowState>,
    /// The UI state (from the settings) until the window exists to hold it.
    initial_ui: Option<UiState>,
    /// The window's inner size in logical points, for the settings.
    window_size: (f32, f32),
    /// The settings as last read or written.
    saved_settings: Settings,
    settings_checked: Instant,
    exit_after_frames: Option<u64>,
    screenshot_on_exit: Option<PathBuf>,
    frames_drawn: u64,
    last_frame: Instant,
    fatal: Option<WindowError>,
    /// Files other starts of Rigscope handed to this window, not yet taken to it.
    handed_over: Arc<std::sync::Mutex<Vec<PathBuf>>>,
}

impl App {
    /// Writes the settings when they differ from what was last written.
    fn save_settings(&mut self) {
        let Some(state) = &self.window else { return };
        let settings = capture_settings(&self.viewer, &state.ui_state, self.window_size);
        if settings != self.saved_settings {
            settings.save();
            self.saved_settings = settings;
        }
    }

    /// Carries out a request the UI made.
    fn handle(&mut self, event_loop: &ActiveEventLoop, action: UiAction) {
        let Some(state) = self.window.as_mut() else { return };
        match action {
            UiAction::OpenDialog => {
                let mut dialog = DialogWatch::start();
                ui::open_from_dialog(&mut self.viewer, &mut state.ui_state, |folder| {
                    dialog.ended(pick_rig_file("Open a rig", folder))
                });
                dialog.offer_path_field(PathPurpose::Open, &self.viewer, &mut state.ui_state);
                state.window.request_redraw();
            }
            UiAction::LoadClipsDialog => {
                let mut dialog = DialogWatch::start();
                ui::load_clips_from_dialog(&mut self.viewer, &mut state.ui_state, |folder| {
                    dialog.ended(pick_rig_file("Load clips from", folder))
                });
                dialog.offer_path_field(PathPurpose::LoadClips, &self.viewer, &mut state.ui_state);
                state.window.request_redraw();
            }
            UiAction::SaveAsDialog => {
                let mut dialog = DialogWatch::start();
                ui::clip_list::save_as_from_dialog(&mut self.viewer, &mut state.ui_state, |folder, name| {
                    let mut picker = rfd::FileDialog::new()
                        .add_filter("glTF binary", &["glb"])
                        .add_filter("glTF", &["gltf"])
                        .set_title("Save the rig with its clips as edited as")
                        .set_file_name(name);
                    if let Some(folder) = folder {
                        picker = picker.set_directory(folder);
                    }
                    dialog.ended(picker.save_file())
                });
                dialog.offer_path_field(PathPurpose::SaveAs, &self.viewer, &mut state.ui_state);
                state.window.request_redraw();
            }
            UiAction::SaveRepairedDialog => {
                ui::repair::save_repaired_from_dialog(&mut self.viewer, &mut state.ui_state, |folder, name| {
                    let mut dialog = rfd::FileDialog::new()
                        .add_filter("glTF binary", &["glb"])
                        .add_filter("glTF", &["gltf"])
                        .set_title("Save the repaired rig as")
                        .set_file_name(name);
                    if let Some(folder) = folder {
                        dialog = dialog.set_directory(folder);
                    }
                    dialog.save_file()
                });
                state.window.request_redraw();
            }
            UiAction::ExportPoseDialog => {
                let exported = crate::commands::export::export_from_dialog(&mut self.viewer, |folder, name| {
                    let mut dialog = rfd::FileDialog::new()
                        .add_filter("glTF binary", &["glb"])
                        .add_filter("OBJ (with .mtl and PNG textures)", &["obj"])
                        .set_title("Export the pose as")
                        .set_file_name(name);
                    if let Some(folder) = folder {
                        dialog = dialog.set_directory(folder);
                    }
                    dialog.save_file()
                });
                match exported {
                    Some(Ok(exported)) => state
                        .ui_state
                        .toast(format!("Exported {}", exported.written[0].display())),
                    Some(Err(e)) => self.viewer.diagnostics.error = Some(e.to_string()),
                    None => {}
                }
                state.window.request_redraw();
            }
            UiAction::CompareDialog => {
                let mut dialog = DialogWatch::start();
                ui::compare_from_dialog(&mut self.viewer, &mut state.ui_state, |folder| {
                    dialog.ended(pick_rig_file("Compare with", folder))
                });
                dialog.offer_path_field(PathPurpose::Compare, &self.viewer, &mut state.ui_state);
                state.window.request_redraw();
            }
            UiAction::EnvironmentDialog => {
                let mut dialog = DialogWatch::start();
                ui::environment_from_dialog(&mut self.viewer, &mut state.ui_state, |folder| {
                    let mut picker = rfd::FileDialog::new()
                        .add_filter("Radiance HDR panorama", &["hdr"])
                        .set_title("Light with the environment map");
                    if let Some(folder) = folder {
                        picker = picker.set_directory(folder);
                    }
                    dialog.ended(picker.pick_file())
                });
                dialog.offer_path_field(PathPurpose::Environment, &self.viewer, &mut state.ui_state);
                state.window.request_redraw();
            }
            UiAction::Screenshot { with_ui } => self.screenshot(with_ui),
            UiAction::ChooseScreenshotFolder => {
                let picked = rfd::FileDialog::new()
                    .set_title("Save screenshots in")
                    .set_directory(state.ui_state.screenshot.folder())
                    .pick_folder();
                if picked.is_some() {
                    state.ui_state.screenshot.folder = picked;
                }
                state.window.request_redraw();
            }
            UiAction::Quit => {
                if ui::discard::may_quit_now(&mut self.viewer, &mut state.ui_state) {
                    event_loop.exit();
                }
                state.window.request_redraw();
            }
            UiAction::QuitNow => event_loop.exit(),
            UiAction::Compare => {
                let skinner = state.compute.get_or_insert_with(|| ComputeSkinner::new(&state.gpu));
                if let Err(e) = compare_skinning(&mut self.viewer, &state.gpu, skinner) {
                    self.viewer.diagnostics.error = Some(format!("the comparison failed: {e}"));
                }
                state.window.request_redraw();
            }
        }
    }

    /// What a screenshot request does: the window as drawn (read back from the next frame) when
    /// the panels are wanted and the surface can be read, else the 3D view rendered offscreen.
    fn screenshot(&mut self, with_ui: bool) {
        let Some(state) = &mut self.window else { return };
        if with_ui && state.can_capture {
            state.capture_next = true;
            state.window.request_redraw();
            return;
        }
        if with_ui {
            state
                .ui_state
                .toast("This window cannot be read back; saving the 3D view without the panels");
        }
        let viewport = state.last_viewport.unwrap_or(PixelRect {
            x: 0,
            y: 0,
            width: state.config.width,
            height: state.config.height,
        });
        screenshot::save_viewport(&state.gpu, &mut self.viewer, &mut state.ui_state, viewport);
        state.window.request_redraw();
    }
}

impl ApplicationHandler<Wake> for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        match WindowState::new(event_loop, &self.viewer.title(), self.window_size) {
            Ok(mut state) => {
                if let Some(ui_state) = self.initial_ui.take() {
                    state.ui_state = ui_state;
                }
                log::info!(
                    "window open at {}x{} pixels on {}, showing {}",
                    state.config.width,
                    state.config.height,
                    state.info.adapter,
                    self.viewer.rig().name
                );
                state.window.request_redraw();
                self.window = Some(state);
                self.last_frame = Instant::now();
            }
            Err(e) => {
                self.fatal = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(state) = self.window.as_mut() else { return };
        let response = state.egui_state.on_window_event(&state.window, &event);
        if response.repaint {
            state.window.request_redraw();
        }
        match event {
            WindowEvent::CloseRequested => {
                if ui::discard::may_quit_now(&mut self.viewer, &mut state.ui_state) {
                    event_loop.exit();
                }
                state.window.request_redraw();
            }
            WindowEvent::Resized(size) => {
                state.resize(size.width, size.height);
                if size.width > 0 && size.height > 0 {
                    let logical = size.to_logical::<f32>(state.window.scale_factor());
                    self.window_size = (logical.width, logical.height);
                }
                state.window.request_redraw();
            }
            WindowEvent::RedrawRequested => {
                let open = self.viewer.documents().iter().filter_map(|d| d.path.as_deref());
                crash::note_context(&state.info.adapter, open);
                let now = Instant::now();
                let dt = now.duration_since(self.last_frame).as_secs_f32();
                self.last_frame = now;
                if dt > 0.0 {
                    // Smoothed over roughly half a second of frames.
                    state.info.fps += (1.0 / dt - state.info.fps) * 0.1;
                }
                // Long stalls (a dialog, a drag of the window) should not jump the clip ahead.
                self.viewer.tick(dt.min(0.25));
                let size = state.window.inner_size();
                if size.width == 0 || size.height == 0 {
                    return;
                }
                let actions = match state.draw(&mut self.viewer) {
                    Ok(actions) => actions,
                    Err(e) => {
                        self.fatal = Some(e);
                        event_loop.exit();
                        Vec::new()
                    }
                };
                for action in actions {
                    self.handle(event_loop, action);
                }
                // The pose the frame's edits left, journaled once it settles.
                self.viewer.flush_journal();
                let Some(state) = self.window.as_mut() else { return };
                if let Some(error) = state.gpu.take_error() {
                    self.viewer.diagnostics.error = Some(error.to_string());
                }
                if let Some(reason) = state.gpu.lost() {
                    // Start over on a new device; the viewer's state is untouched.
                    match WindowState::for_window(event_loop, state.window.clone()) {
                        Ok(mut fresh) => {
                            fresh.ui_state = std::mem::take(&mut state.ui_state);
                            *state = fresh;
                            self.viewer.diagnostics.error =
                                Some(format!("the graphics device was lost ({reason}) and was recreated"));
                            state.window.request_redraw();
                        }
                        Err(e) => {
                            self.fatal = Some(WindowError::DeviceLost {
                                reason: reason.to_string(),
                                source: Box::new(e),
                            });
                            event_loop.exit();
                        }
                    }
                }
                if let Some(image) = state.captured.take() {
                    match self.screenshot_on_exit.take() {
                        Some(path) => {
                            let saved = image.and_then(|image| crate::screenshot::write_png(&image, &path));
                            match saved {
                                Ok(()) => eprintln!("saved the window to {}", path.display()),
                                Err(e) => self.fatal = Some(WindowError::Screenshot(e)),
                            }
                        }
                        None => {
                            screenshot::save_window(&mut self.viewer, &mut state.ui_state, image);
                            state.window.request_redraw();
                        }
                    }
                }
                self.frames_drawn += 1;
                if self.exit_after_frames.is_some_and(|n| self.frames_drawn >= n) {
                    if self.screenshot_on_exit.is_some() && state.can_capture {
                        // One more frame, read back, then exit.
                        state.capture_next = true;
                        state.window.request_redraw();
                    } else {
                        if self.screenshot_on_exit.is_some() {
                            self.fatal = Some(WindowError::NoReadBack);
                        }
                        let timings = &self.viewer.diagnostics.timings;
                        let median_ms = |stage| timings.median(stage, 120).map_or(f32::NAN, |s| s * 1e3);
                        eprintln!(
                            "drew {} frames; exiting (last 120 frames: median frame {:.1} ms, scene pass on the GPU {:.1} ms, {} sample(s) per pixel)",
                            self.frames_drawn,
                            median_ms(Stage::Frame),
                            median_ms(Stage::GpuPass),
                            state.info.samples
                        );
                        event_loop.exit();
                    }
                }
                if self.settings_checked.elapsed() >= SETTINGS_SAVE_INTERVAL {
                    self.settings_checked = Instant::now();
                    self.save_settings();
                }
            }
            _ => {}
        }
    }

    /// The file watcher or a file handed over woke the loop: `about_to_wait` takes the news.
    fn user_event(&mut self, _event_loop: &ActiveEventLoop, _wake: Wake) {}

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        let Some(state) = &mut self.window else { return };
        if let Ok(mut queue) = self.handed_over.lock()
            && !queue.is_empty()
        {
            state.handed_over.extend(queue.drain(..));
            state.window.focus_window();
            state.window.request_redraw();
        }
        // Changes on disk: mark the title, start a reload once they settle.
        if self.viewer.poll_files(Instant::now()) {
            state.window.request_redraw();
        }
        let wake_at = [state.repaint_after, self.viewer.next_deadline()]
            .into_iter()
            .flatten()
            .min();
        // Redraw continuously only while something moves (or a smoke test counts frames);
        // otherwise sleep until the next input event, egui's requested repaint time or the
        // moment changes on disk have settled.
        if self.viewer.is_animating() || self.exit_after_frames.is_some() {
            state.window.request_redraw();
            event_loop.set_control_flow(ControlFlow::Wait);
        } else if let Some(at) = wake_at {
            if at <= Instant::now() {
                state.repaint_after = None;
                state.window.request_redraw();
                event_loop.set_control_flow(ControlFlow::Wait);
            } else {
                event_loop.set_control_flow(ControlFlow::WaitUntil(at));
            }
        } else {
            event_loop.set_control_flow(ControlFlow::Wait);
        }
    }
}

/// Skins the viewer's current pose with its method on the CPU and in a GPU compute pass (the
/// shader's own skinning function) and keeps the difference in the viewer's `comparison`.
fn compare_skinning(viewer: &mut Viewer, gpu: &Gpu, skinner: &ComputeSkinner) -> Result<(), GpuError> {
    viewer.skin_on_cpu();
    let rig_size = viewer.document().rest_bounds.size().max(f32::MIN_POSITIVE);
    let (pose, skinned) = (viewer.last_pose(), viewer.last_skinned());
    let comparison = skinner.compare(gpu, viewer.rig(), pose, skinned, viewer.skinning_method(), rig_size)?;
    viewer.diagnostics.comparison = Some(comparison);
    Ok(())
}

/// The native dialog for one glTF, VRM or FBX file, titled `title`, opened in `folder`.
/// A native file dialog that answered nothing sooner than anyone could have cancelled it did not
/// open (rfd says so only in the log): the path field is offered in its place.
const DIALOG_FAILED_WITHIN: Duration = Duration::from_millis(150);

/// Watches one native dialog for [`DIALOG_FAILED_WITHIN`].
struct DialogWatch {
    started: Instant,
    failed: bool,
}

impl DialogWatch {
    fn start() -> DialogWatch {
        DialogWatch {
            started: Instant::now(),
            failed: false,
        }
    }

    /// Notes what the dialog answered, and passes it on.
    fn ended(&mut self, picked: Option<PathBuf>) -> Option<PathBuf> {
        self.failed = picked.is_none() && self.started.elapsed() < DIALOG_FAILED_WITHIN;
        picked
    }

    /// Opens the path field for `purpose`, saying why, when the dialog did not open.
    fn offer_path_field(&self, purpose: PathPurpose, viewer: &Viewer, ui_state: &mut UiState) {
        if self.failed {
            log::warn!("no native file dialog opened; offering a path field");
            ui_state.path_prompt = Some(PathPrompt::after_failed_dialog(purpose, viewer));
        }
    }
}

fn pick_rig_file(title: &str, folder: Option<&Path>) -> Option<PathBuf> {
    let mut dialog = rfd::FileDialog::new()
        .add_filter("glTF, VRM, FBX and BVH", crate::rig::RIG_FILE_EXTENSIONS)
        .set_title(title);
    if let Some(folder) = folder {
        dialog = dialog.set_directory(folder);
    }
    dialog.pick_file()
}
