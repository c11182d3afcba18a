//! One window's state: the surface, the scene renderer and its targets, egui, and drawing a
//! frame of the viewer into it.

use super::*;

pub(super) struct WindowState {
    pub(super) window: Arc<Window>,
    pub(super) gpu: Gpu,
    pub(super) surface: wgpu::Surface<'static>,
    pub(super) config: wgpu::SurfaceConfiguration,
    pub(super) renderer: ViewRenderer,
    pub(super) targets: RenderTargets,
    pub(super) egui_ctx: egui::Context,
    pub(super) egui_state: egui_winit::State,
    pub(super) egui_renderer: egui_wgpu::Renderer,
    pub(super) info: FrameInfo,
    pub(super) ui_state: UiState,
    /// Built on the first CPU-vs-GPU comparison.
    pub(super) compute: Option<ComputeSkinner>,
    /// When egui asked to be redrawn (a tooltip delay, an animation), if it did.
    pub(super) repaint_after: Option<Instant>,
    /// The surface can be copied from (screenshots with the panels).
    pub(super) can_capture: bool,
    /// Read the next drawn frame back for a screenshot.
    pub(super) capture_next: bool,
    /// The frame read back, to be saved.
    pub(super) captured: Option<Result<RgbaImage, ScreenshotError>>,
    /// Where the 3D view was last drawn, in pixels.
    pub(super) last_viewport: Option<PixelRect>,
    pub(super) title: String,
    /// Times the scene pass on the GPU (`None` without timestamp queries).
    pub(super) gpu_timer: Option<GpuTimer>,
    /// How each frame shows a heavy scene.
    pub(super) detail: DetailedView,
    /// The renderer of a comparison's other side, made when a comparison is first drawn.
    pub(super) other_side: Option<ViewRenderer>,
    /// Files another `rigscope FILE` handed to this window, opened one a frame as dropped files.
    pub(super) handed_over: std::collections::VecDeque<PathBuf>,
}

/// The title bar and taskbar show the icon build.rs puts in rigscope.exe (resource 1); a build made
/// without one (no `RIGSCOPE_WINDOWS_ICON`) keeps Windows' default.
#[cfg(windows)]
fn with_exe_icon(attributes: winit::window::WindowAttributes) -> winit::window::WindowAttributes {
    use winit::platform::windows::{IconExtWindows, WindowAttributesExtWindows};
    match winit::window::Icon::from_resource(1, None) {
        Ok(icon) => attributes
            .with_window_icon(Some(icon.clone()))
            .with_taskbar_icon(Some(icon)),
        Err(_) => attributes,
    }
}

impl WindowState {
    pub(super) fn new(event_loop: &ActiveEventLoop, title: &str, size: (f32, f32)) -> Result<WindowState, WindowError> {
        let attributes = Window::default_attributes()
            .with_title(title)
            .with_inner_size(LogicalSize::new(size.0, size.1))
            .with_min_inner_size(LogicalSize::new(320.0, 240.0));
        #[cfg(windows)]
        let attributes = with_exe_icon(attributes);
        let window = Arc::new(event_loop.create_window(attributes).map_err(WindowError::Open)?);
        Self::for_window(event_loop, window)
    }

    /// Graphics for an existing window: a new instance, adapter, device and surface (used at
    /// start and again after the device is lost).
    pub(super) fn for_window(event_loop: &ActiveEventLoop, window: Arc<Window>) -> Result<WindowState, WindowError> {
        let (gpu, surface) = Gpu::with_backends(|backends| {
            let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
                backends,
                ..wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(
                    event_loop.owned_display_handle(),
                ))
            });
            let surface = instance.create_surface(window.clone()).map_err(GpuError::Surface)?;
            let gpu = pollster::block_on(Gpu::with_instance(instance, Some(&surface)))?;
            Ok((gpu, surface))
        })?;
        let capabilities = surface.get_capabilities(&gpu.adapter);
        let format = capabilities
            .formats
            .iter()
            .copied()
            .find(wgpu::TextureFormat::is_srgb)
            .or_else(|| capabilities.formats.first().copied())
            .ok_or(WindowError::NoPixelFormat)?;
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
            view_formats: gpu.overlay_view_formats(format),
            color_space: wgpu::SurfaceColorSpace::Auto,
        };
        surface.configure(&gpu.device, &config);
        let samples = Msaa::default().samples(&gpu.adapter, format);
        let renderer = ViewRenderer::new(&gpu, format, samples);
        let targets = RenderTargets::new(&gpu.device, format, config.width, config.height, samples);
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
            gpu.overlay_format(format),
            egui_wgpu::RendererOptions::default(),
        );
        let info = FrameInfo {
            adapter: gpu.describe(),
            fps: 0.0,
            samples,
            detail: None,
        };
        let title = window.title();
        Ok(WindowState {
            window,
            gpu_timer: GpuTimer::new(&gpu),
            gpu,
            surface,
            config,
            renderer,
            targets,
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
            handed_over: Default::default(),
            title,
            detail: DetailedView::default(),
            other_side: None,
        })
    }

    pub(super) fn resize(&mut self, width: u32, height: u32) {
        // A minimized window has a zero-size surface, which cannot be configured: skip until
        // it has a size again.
        if width == 0 || height == 0 {
            return;
        }
        self.config.width = width;
        self.config.height = height;
        self.surface.configure(&self.gpu.device, &self.config);
        self.targets = RenderTargets::new(&self.gpu.device, self.config.format, width, height, self.info.samples);
    }

    /// Follows the anti-aliasing setting: a new sample count needs new targets and pipelines.
    fn apply_msaa(&mut self) {
        let samples = self.ui_state.msaa.samples(&self.gpu.adapter, self.config.format);
        if samples != self.info.samples {
            log::info!("drawing the view with {samples} sample(s) per pixel");
            self.info.samples = samples;
            self.renderer = ViewRenderer::new(&self.gpu, self.config.format, samples);
            self.other_side = None;
            let (width, height) = (self.config.width, self.config.height);
            self.targets = RenderTargets::new(&self.gpu.device, self.config.format, width, height, samples);
        }
    }

    /// Draws one frame. Returns the UI's requests.
    /// Runs the panels on this frame's input (and a file handed over by another start, as a
    /// dropped file) and hands egui's platform output to the window; the rest of egui's output
    /// (shapes, textures) is the frame's to draw.
    fn run_ui(&mut self, viewer: &mut Viewer) -> Result<(ui::UiOutput, egui::FullOutput), WindowError> {
        let mut raw_input = self.egui_state.take_egui_input(&self.window);
        if let Some(path) = self.handed_over.pop_front() {
            raw_input.dropped_files.push(Arc::new(HandedOverFile(path)));
            if !self.handed_over.is_empty() {
                self.window.request_redraw();
            }
        }
        let mut output = None;
        let mut full_output = self.egui_ctx.run_ui(raw_input, |ui| {
            output = Some(ui::show(ui, viewer, &mut self.ui_state, &self.info));
        });
        let platform_output = std::mem::take(&mut full_output.platform_output);
        self.egui_state.handle_platform_output(&self.window, platform_output);
        Ok((output.ok_or(WindowError::UiDidNotRun)?, full_output))
    }

    pub(super) fn draw(&mut self, viewer: &mut Viewer) -> Result<Vec<UiAction>, WindowError> {
        self.apply_msaa();
        self.show_title(viewer);
        let egui_start = Instant::now();
        let (output, full_output) = self.run_ui(viewer)?;
        let mut egui_time = egui_start.elapsed();

        let Some(frame) = self.acquire_frame(&full_output.textures_delta)? else {
            return Ok(output.actions);
        };
        let view = frame.texture.create_view(&wgpu::TextureViewDescriptor::default());
        let egui_view = frame.texture.create_view(&wgpu::TextureViewDescriptor {
            format: Some(self.gpu.overlay_format(self.config.format)),
            ..Default::default()
        });
        let ppp = full_output.pixels_per_point;
        let viewport = ui::viewport_pixels(output.viewport, ppp);
        self.last_viewport = Some(viewport);
        let aspect = crate::draw::compare::active_aspect(viewer, viewport);
        self.keep_other_side_renderer(viewer.comparison().is_some());
        let other_side = self.other_side.as_mut();
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [self.config.width, self.config.height],
            pixels_per_point: ppp,
        };
        let step = FrameStep {
            gpu: &self.gpu,
            renderer: &mut self.renderer,
            timer: self.gpu_timer.as_mut(),
            wait: false,
        };
        let (detail, egui_ctx, egui_renderer) = (&mut self.detail, &self.egui_ctx, &mut self.egui_renderer);
        let (targets, format, capture_next) = (&self.targets, self.config.format, self.capture_next);
        let texture = &frame.texture;
        let drawn = step.run(viewer, Clock::Still, aspect, |recording| {
            let scene_draw = match other_side {
                Some(other) => {
                    // The other side from the frame state the step prepared.
                    crate::draw::compare::prepare_other_side(recording.gpu, other, recording.viewer, viewport);
                    crate::draw::compare::encode_detailed(
                        detail,
                        recording.gpu,
                        (recording.renderer, other),
                        recording.encoder,
                        (targets, &view),
                        recording.viewer,
                        viewport,
                        recording.timer.as_deref_mut(),
                    )
                }
                None => detail.encode(
                    recording.gpu,
                    recording.renderer,
                    recording.encoder,
                    (targets, &view, format),
                    recording.viewer,
                    viewport,
                    capture_next,
                    recording.timer.as_deref_mut(),
                ),
            };
            let egui_start = Instant::now();
            let gpu = recording.gpu;
            let paint_jobs = egui_ctx.tessellate(full_output.shapes, ppp);
            for (id, deltas) in &full_output.textures_delta.set {
                for delta in deltas {
                    egui_renderer.update_texture(&gpu.device, &gpu.queue, *id, delta);
                }
            }
            recording.first = crate::ui::paint::encode_egui(
                egui_renderer,
                &gpu.device,
                &gpu.queue,
                recording.encoder,
                &egui_view,
                &paint_jobs,
                &screen,
            );
            let egui_end = Instant::now();
            recording.own_time = egui_end - egui_start;
            egui_time += recording.own_time;
            let capture = if capture_next {
                TextureCapture::encode(&gpu.device, recording.encoder, texture)
                    .ok_or(ScreenshotError::PixelFormat(format))
                    .map(Some)
            } else {
                Ok(None)
            };
            recording.own_time += egui_end.elapsed();
            (scene_draw, capture)
        })?;
        self.capture_next = false;
        let (scene_draw, capture) = drawn.drawn;
        let mut timings = drawn.timings;
        timings.set_duration(Stage::Egui, Some(egui_time));
        if let Some((seconds, primitives)) = drawn.pass {
            self.detail.policy.measured(seconds, primitives);
        }
        viewer.diagnostics.timings.gpu_timestamps = self.gpu_timer.is_some();
        viewer.diagnostics.timings.record(timings);
        viewer.diagnostics.gpu_memory = self.renderer.gpu_memory();
        for id in &full_output.textures_delta.free {
            self.egui_renderer.free_texture(id);
        }
        self.present(frame, capture);
        if scene_draw.is_unfinished() {
            self.window.request_redraw();
        }
        self.info.detail = self.detail.status().map(str::to_owned);
        self.schedule_repaint(&full_output.viewport_output);
        Ok(output.actions)
    }

    fn show_title(&mut self, viewer: &Viewer) {
        let title = viewer.title();
        if title != self.title {
            self.window.set_title(&title);
            self.title = title;
        }
    }

    /// Makes the renderer of a comparison's other side when a comparison opens, and drops it
    /// when it closes.
    fn keep_other_side_renderer(&mut self, comparing: bool) {
        if !comparing {
            self.other_side = None;
        } else if self.other_side.is_none() {
            self.other_side = Some(ViewRenderer::new(&self.gpu, self.config.format, self.info.samples));
        }
    }

    /// Shows `frame`, then reads back the screenshot `capture` recorded from it, if any.
    fn present(&mut self, frame: wgpu::SurfaceTexture, capture: Result<Option<TextureCapture>, ScreenshotError>) {
        self.window.pre_present_notify();
        self.gpu.queue.present(frame);
        match capture {
            Ok(Some(capture)) => self.captured = Some(capture.read(&self.gpu).map_err(ScreenshotError::from)),
            Ok(None) => {}
            Err(e) => self.captured = Some(Err(e)),
        }
    }

    /// The surface's next texture, or `None` when this frame cannot be drawn (egui's texture
    /// changes are applied all the same, and a lost surface is configured again).
    fn acquire_frame(
        &mut self,
        textures_delta: &egui::TexturesDelta,
    ) -> Result<Option<wgpu::SurfaceTexture>, WindowError> {
        match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(frame) => Ok(Some(frame)),
            wgpu::CurrentSurfaceTexture::Suboptimal(frame) => {
                // Still drawable; reconfigure for the next frame.
                self.surface.configure(&self.gpu.device, &self.config);
                Ok(Some(frame))
            }
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => {
                free_textures(&mut self.egui_renderer, textures_delta, &self.gpu);
                Ok(None)
            }
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.gpu.device, &self.config);
                free_textures(&mut self.egui_renderer, textures_delta, &self.gpu);
                self.window.request_redraw();
                Ok(None)
            }
            wgpu::CurrentSurfaceTexture::Validation => Err(WindowError::SurfaceValidation),
        }
    }

    /// When egui wants the next frame: now, after a delay, or when an event comes.
    fn schedule_repaint(&mut self, viewports: &std::collections::BTreeMap<egui::ViewportId, egui::ViewportOutput>) {
        let repaint_delay = viewports
            .get(&egui::ViewportId::ROOT)
            .map_or(Duration::MAX, |v| v.repaint_delay);
        if repaint_delay.is_zero() {
            self.window.request_redraw();
        }
        self.repaint_after = (repaint_delay < Duration::from_secs(3600)).then(|| Instant::now() + repaint_delay);
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

/// A file another start of Rigscope handed to this window, given to the UI as a dropped file.
#[derive(Debug)]
struct HandedOverFile(PathBuf);

impl egui::DroppedFile for HandedOverFile {
    fn path(&self) -> &std::path::Path {
        &self.0
    }

    // The trait's own error type.
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}
