//! The window: a winit event loop that owns the surface, the renderers, egui and the viewer.

mod settings;

use crate::render::compute::ComputeSkinner;
use crate::render::timer::GpuTimer;
use crate::render::{Gpu, PixelRect, RenderTargets, RigGpu, SceneRenderer};
use crate::screenshot::{self, TextureCapture};
use crate::settings::Settings;
use crate::timings::{FrameTimings, Stage};
use crate::ui::{self, FrameInfo, UiAction, UiState};
use crate::viewer::Viewer;
use image::RgbaImage;
pub use settings::{apply_settings, capture_settings};
use std::path::PathBuf;
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

/// Opens the viewer window on `file` (the demo rig when `None`) and runs until it is closed.
/// `exit_after_frames` closes it after that many drawn frames (used by smoke tests); with
/// `screenshot_on_exit`, the last frame, panels included, is first saved there as a PNG.
pub fn run(
    file: Option<PathBuf>,
    exit_after_frames: Option<u64>,
    screenshot_on_exit: Option<PathBuf>,
) -> Result<(), String> {
    let settings = Settings::load();
    let (rig, error) = match crate::rig::open(file.as_deref()) {
        Ok(rig) => (rig, None),
        Err(e) => {
            let shown = file
                .as_ref()
                .map_or(String::new(), |f| format!("could not open {}: ", f.display()));
            let demo = crate::rig::open(None).map_err(|d| format!("{shown}{e}; the demo rig failed too: {d}"))?;
            (demo, Some(format!("{shown}{e}")))
        }
    };
    let loaded_path = if error.is_none() { file } else { None };
    let mut viewer = Viewer::new(rig, loaded_path);
    viewer.error = error;
    let mut ui_state = UiState::default();
    apply_settings(&settings, &mut viewer, &mut ui_state);
    let event_loop = EventLoop::<Wake>::with_user_event()
        .build()
        .map_err(|e| format!("cannot start the window system: {e}"))?;
    event_loop.set_control_flow(ControlFlow::Wait);
    let proxy = std::sync::Mutex::new(event_loop.create_proxy());
    viewer.watch_files(Some(Arc::new(move || {
        if let Ok(proxy) = proxy.lock() {
            let _ = proxy.send_event(Wake);
        }
    })));
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
    };
    event_loop
        .run_app(&mut app)
        .map_err(|e| format!("the event loop failed: {e}"))?;
    app.save_settings();
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
    fatal: Option<String>,
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
                ui::open_from_dialog(&mut self.viewer, &mut state.ui_state, |folder| {
                    let mut dialog = rfd::FileDialog::new()
                        .add_filter("glTF and VRM", &["gltf", "glb", "vrm"])
                        .set_title("Open a rig");
                    if let Some(folder) = folder {
                        dialog = dialog.set_directory(folder);
                    }
                    dialog.pick_file()
                });
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
            UiAction::Quit => event_loop.exit(),
            UiAction::Compare => {
                let skinner = state.compute.get_or_insert_with(|| ComputeSkinner::new(&state.gpu));
                if let Err(e) = self.viewer.compare(&state.gpu, skinner) {
                    self.viewer.error = Some(format!("the comparison failed: {e}"));
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

struct WindowState {
    window: Arc<Window>,
    gpu: Gpu,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    scene: SceneRenderer,
    targets: RenderTargets,
    rig_gpu: Option<(u64, RigGpu)>,
    egui_ctx: egui::Context,
    egui_state: egui_winit::State,
    egui_renderer: egui_wgpu::Renderer,
    info: FrameInfo,
    ui_state: UiState,
    /// Built on the first CPU-vs-GPU comparison.
    compute: Option<ComputeSkinner>,
    /// When egui asked to be redrawn (a tooltip delay, an animation), if it did.
    repaint_after: Option<Instant>,
    /// The surface can be copied from (screenshots with the panels).
    can_capture: bool,
    /// Read the next drawn frame back for a screenshot.
    capture_next: bool,
    /// The frame read back, to be saved.
    captured: Option<Result<RgbaImage, String>>,
    /// Where the 3D view was last drawn, in pixels.
    last_viewport: Option<PixelRect>,
    title: String,
    /// Times the scene pass on the GPU (`None` without timestamp queries).
    gpu_timer: Option<GpuTimer>,
}

impl WindowState {
    fn new(event_loop: &ActiveEventLoop, title: &str, size: (f32, f32)) -> Result<WindowState, String> {
        let attributes = Window::default_attributes()
            .with_title(title)
            .with_inner_size(LogicalSize::new(size.0, size.1))
            .with_min_inner_size(LogicalSize::new(320.0, 240.0));
        let window = Arc::new(
            event_loop
                .create_window(attributes)
                .map_err(|e| format!("cannot open a window: {e}"))?,
        );
        Self::for_window(event_loop, window)
    }

    /// Graphics for an existing window: a new instance, adapter, device and surface (used at
    /// start and again after the device is lost).
    fn for_window(event_loop: &ActiveEventLoop, window: Arc<Window>) -> Result<WindowState, String> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(
            event_loop.owned_display_handle(),
        )));
        let surface = instance
            .create_surface(window.clone())
            .map_err(|e| format!("cannot draw into the window: {e}"))?;
        let gpu = pollster::block_on(Gpu::with_instance(instance, Some(&surface))).map_err(|e| e.to_string())?;
        let capabilities = surface.get_capabilities(&gpu.adapter);
        let format = capabilities
            .formats
            .iter()
            .copied()
            .find(wgpu::TextureFormat::is_srgb)
            .or_else(|| capabilities.formats.first().copied())
            .ok_or("the window surface offers no pixel format")?;
        let size = window.inner_size();
        let can_capture = capabilities.usages.contains(wgpu::TextureUsages::COPY_SRC);
        let config = wgpu::SurfaceConfiguration {
            usage: if can_capture {
                wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC
            } else {
                wgpu::TextureUsages::RENDER_ATTACHMENT
            },
            format,
            width: size.width.max(1),
            height: size.height.max(1),
            present_mode: wgpu::PresentMode::AutoVsync,
            desired_maximum_frame_latency: 2,
            alpha_mode: capabilities
                .alpha_modes
                .first()
                .copied()
                .unwrap_or(wgpu::CompositeAlphaMode::Auto),
            // egui blends in gamma space, so it draws through a non-sRGB view of the same texture.
            view_formats: vec![format.remove_srgb_suffix()],
            color_space: wgpu::SurfaceColorSpace::Auto,
        };
        surface.configure(&gpu.device, &config);
        let scene = SceneRenderer::new(&gpu.device, &gpu.queue, format);
        let targets = RenderTargets::new(&gpu.device, format, config.width, config.height);
        let egui_ctx = egui::Context::default();
        let egui_state = egui_winit::State::new(
            egui_ctx.clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            Some(gpu.device.limits().max_texture_dimension_2d as usize),
        );
        let egui_renderer = egui_wgpu::Renderer::new(
            &gpu.device,
            format.remove_srgb_suffix(),
            egui_wgpu::RendererOptions::default(),
        );
        let info = FrameInfo {
            adapter: gpu.describe(),
            fps: 0.0,
        };
        let title = window.title();
        Ok(WindowState {
            window,
            gpu_timer: GpuTimer::new(&gpu),
            gpu,
            surface,
            config,
            scene,
            targets,
            rig_gpu: None,
            egui_ctx,
            egui_state,
            egui_renderer,
            info,
            ui_state: UiState::default(),
            compute: None,
            repaint_after: None,
            can_capture,
            capture_next: false,
            captured: None,
            last_viewport: None,
            title,
        })
    }

    fn resize(&mut self, width: u32, height: u32) {
        // A minimized window has a zero-size surface, which cannot be configured: skip until
        // it has a size again.
        if width == 0 || height == 0 {
            return;
        }
        self.config.width = width;
        self.config.height = height;
        self.surface.configure(&self.gpu.device, &self.config);
        self.targets = RenderTargets::new(&self.gpu.device, self.config.format, width, height);
    }

    /// Draws one frame. Returns the UI's requests.
    fn draw(&mut self, viewer: &mut Viewer) -> Result<Vec<UiAction>, String> {
        if self.rig_gpu.as_ref().map(|(g, _)| *g) != Some(viewer.rig_generation) {
            let uploaded = self.scene.upload_rig(&self.gpu.device, &self.gpu.queue, &viewer.rig);
            self.scene.set_grid(&self.gpu.device, &viewer.rest_bounds);
            self.rig_gpu = Some((viewer.rig_generation, uploaded));
        }
        let title = viewer.title();
        if title != self.title {
            self.window.set_title(&title);
            self.title = title;
        }
        let mut timings = FrameTimings::default();
        timings.take_pose_timings(&mut viewer.pose, &mut viewer.skinned);
        let egui_start = Instant::now();
        let raw_input = self.egui_state.take_egui_input(&self.window);
        let mut output = None;
        let full_output = self.egui_ctx.run_ui(raw_input, |ui| {
            output = Some(ui::show(ui, viewer, &mut self.ui_state, &self.info));
        });
        self.egui_state
            .handle_platform_output(&self.window, full_output.platform_output);
        let output = output.ok_or("the UI did not run")?;
        let mut egui_time = egui_start.elapsed();

        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(frame) => frame,
            wgpu::CurrentSurfaceTexture::Suboptimal(frame) => {
                // Still drawable; reconfigure for the next frame.
                self.surface.configure(&self.gpu.device, &self.config);
                frame
            }
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => {
                free_textures(&mut self.egui_renderer, &full_output.textures_delta, &self.gpu);
                return Ok(output.actions);
            }
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.gpu.device, &self.config);
                free_textures(&mut self.egui_renderer, &full_output.textures_delta, &self.gpu);
                self.window.request_redraw();
                return Ok(output.actions);
            }
            wgpu::CurrentSurfaceTexture::Validation => {
                return Err("the window surface reported a validation error".into());
            }
        };
        let view = frame.texture.create_view(&wgpu::TextureViewDescriptor::default());
        let egui_view = frame.texture.create_view(&wgpu::TextureViewDescriptor {
            format: Some(self.config.format.remove_srgb_suffix()),
            ..Default::default()
        });
        let ppp = full_output.pixels_per_point;
        let rect = output.viewport;
        let viewport = PixelRect {
            x: (rect.min.x * ppp).round().max(0.0) as u32,
            y: (rect.min.y * ppp).round().max(0.0) as u32,
            width: (rect.width() * ppp).round().max(1.0) as u32,
            height: (rect.height() * ppp).round().max(1.0) as u32,
        };
        self.last_viewport = Some(viewport);
        if let Some((_, rig_gpu)) = &mut self.rig_gpu {
            let aspect = viewport.width as f32 / viewport.height as f32;
            let upload = self
                .scene
                .write_frame(&self.gpu.queue, rig_gpu, &viewer.frame_state(aspect));
            timings.record_upload(&upload);
        }
        let encode_start = Instant::now();
        let mut encoder = self
            .gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("frame") });
        let rig_gpu = self.rig_gpu.as_ref().map(|(_, g)| g);
        self.scene.encode(
            &mut encoder,
            &self.targets,
            &view,
            rig_gpu,
            &viewer.view,
            viewer.skinning_path,
            Some(viewport),
            self.gpu_timer.as_mut().and_then(GpuTimer::pass_writes),
        );
        if let Some(timer) = &mut self.gpu_timer {
            timer.resolve(&mut encoder);
        }
        timings.set_duration(Stage::Encoding, Some(encode_start.elapsed()));

        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [self.config.width, self.config.height],
            pixels_per_point: ppp,
        };
        let egui_start = Instant::now();
        let paint_jobs = self.egui_ctx.tessellate(full_output.shapes, ppp);
        for (id, deltas) in &full_output.textures_delta.set {
            for delta in deltas {
                self.egui_renderer
                    .update_texture(&self.gpu.device, &self.gpu.queue, *id, delta);
            }
        }
        let user_commands = crate::ui::paint::encode_egui(
            &mut self.egui_renderer,
            &self.gpu.device,
            &self.gpu.queue,
            &mut encoder,
            &egui_view,
            &paint_jobs,
            &screen,
        );
        egui_time += egui_start.elapsed();
        timings.set_duration(Stage::Egui, Some(egui_time));
        let capture = if std::mem::take(&mut self.capture_next) {
            TextureCapture::encode(&self.gpu.device, &mut encoder, &frame.texture)
                .ok_or_else(|| format!("the window's pixel format {:?} cannot be saved", self.config.format))
                .map(Some)
        } else {
            Ok(None)
        };
        self.gpu
            .queue
            .submit(user_commands.into_iter().chain([encoder.finish()]));
        if let Some(timer) = &mut self.gpu_timer {
            timer.submitted();
            timings.set(Stage::GpuPass, timer.collect(&self.gpu.device));
        }
        viewer.timings.gpu_timestamps = self.gpu_timer.is_some();
        viewer.timings.record(timings);
        for id in &full_output.textures_delta.free {
            self.egui_renderer.free_texture(id);
        }
        self.window.pre_present_notify();
        self.gpu.queue.present(frame);
        match capture {
            Ok(Some(capture)) => self.captured = Some(capture.read(&self.gpu).map_err(|e| e.to_string())),
            Ok(None) => {}
            Err(e) => self.captured = Some(Err(e)),
        }

        let repaint_delay = full_output
            .viewport_output
            .get(&egui::ViewportId::ROOT)
            .map_or(Duration::MAX, |v| v.repaint_delay);
        if repaint_delay.is_zero() {
            self.window.request_redraw();
        }
        self.repaint_after = (repaint_delay < Duration::from_secs(3600)).then(|| Instant::now() + repaint_delay);
        Ok(output.actions)
    }
}

/// Applies egui's texture changes for a frame that is not drawn, so none are lost.
fn free_textures(renderer: &mut egui_wgpu::Renderer, delta: &egui::TexturesDelta, gpu: &Gpu) {
    for (id, images) in &delta.set {
        for image in images {
            renderer.update_texture(&gpu.device, &gpu.queue, *id, image);
        }
    }
    for id in &delta.free {
        renderer.free_texture(id);
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
                    "window open at {}x{} pixels on {}",
                    state.config.width,
                    state.config.height,
                    state.info.adapter
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
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                state.resize(size.width, size.height);
                if size.width > 0 && size.height > 0 {
                    let logical = size.to_logical::<f32>(state.window.scale_factor());
                    self.window_size = (logical.width, logical.height);
                }
                state.window.request_redraw();
            }
            WindowEvent::RedrawRequested => {
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
                let Some(state) = self.window.as_mut() else { return };
                if let Some(error) = state.gpu.take_error() {
                    self.viewer.error = Some(error.to_string());
                }
                if let Some(reason) = state.gpu.lost() {
                    // Start over on a new device; the viewer's state is untouched.
                    match WindowState::for_window(event_loop, state.window.clone()) {
                        Ok(mut fresh) => {
                            fresh.ui_state = std::mem::take(&mut state.ui_state);
                            *state = fresh;
                            self.viewer.error =
                                Some(format!("the graphics device was lost ({reason}) and was recreated"));
                            state.window.request_redraw();
                        }
                        Err(e) => {
                            self.fatal = Some(format!(
                                "the graphics device was lost ({reason}) and could not be recreated: {e}"
                            ));
                            event_loop.exit();
                        }
                    }
                }
                if let Some(image) = state.captured.take() {
                    match self.screenshot_on_exit.take() {
                        Some(path) => {
                            let saved = image.and_then(|image| {
                                image
                                    .save_with_format(&path, image::ImageFormat::Png)
                                    .map_err(|e| format!("cannot write {}: {e}", path.display()))
                            });
                            match saved {
                                Ok(()) => eprintln!("saved the window to {}", path.display()),
                                Err(e) => self.fatal = Some(format!("the window screenshot failed: {e}")),
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
                            self.fatal = Some("the window surface cannot be read back for a screenshot".into());
                        }
                        eprintln!("drew {} frames; exiting", self.frames_drawn);
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

    /// The file watcher woke the loop: `about_to_wait` takes its news.
    fn user_event(&mut self, _event_loop: &ActiveEventLoop, _wake: Wake) {}

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        let Some(state) = &mut self.window else { return };
        // Changes on disk: mark the title, start a reload once they settle.
        if self.viewer.poll_files() {
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
