//! Drawing the viewer's state: the one path every picture takes, whether it goes to the
//! window, an offscreen render, a screenshot, a sequence, `render --ui` or `bench`.

pub mod compare;

use crate::render::FrameState;
use crate::render::detail::{DetailPolicy, SceneDraw, ScenePortion};
use crate::render::offscreen::Overlay;
use crate::render::scene_images::SceneImages;
use crate::render::timer::GpuTimer;
use crate::render::{Gpu, GpuError, Offscreen, PixelRect, RenderTargets, RigGpu, SceneRenderer};
use crate::timings::{FrameTimings, Stage};
use crate::viewer::Viewer;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

/// How a frame moves playback before it is drawn: with its target, the one thing in which the
/// window, `render`, `--sequence`, `--ui`, `bench` and `bench --orbit` differ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Clock {
    /// Playback stays where it is: a still render, or the window, whose event loop advances
    /// playback (and polls files) before it asks for a frame.
    Still,
    /// A new moment this many seconds after the last: playback advances and the pose is
    /// evaluated again, even when no clip moves it (a benchmark's frame costs one evaluation).
    Advance(f32),
    /// The clip at this time in seconds (a sequence's frame).
    Seek(f32),
}

/// What a target records into a frame: the encoder, with the renderer (its rig prepared for
/// this frame), the viewer as of this frame and the pass timer.
pub struct Recording<'a> {
    pub gpu: &'a Gpu,
    pub encoder: &'a mut wgpu::CommandEncoder,
    pub renderer: &'a mut ViewRenderer,
    pub viewer: &'a Viewer,
    pub timer: Option<&'a mut GpuTimer>,
    /// Command buffers to submit before the encoder's (an overlay's callbacks).
    pub first: Vec<wgpu::CommandBuffer>,
    /// Time the target spent on work of its own (the UI), not counted as encoding.
    pub own_time: Duration,
}

/// One frame as drawn: what the target answered and what the frame measured.
pub struct DrawnFrame<T> {
    pub drawn: T,
    pub timings: FrameTimings,
    /// The newest finished scene pass: seconds and what the pass was tagged with.
    pub pass: Option<(f64, u64)>,
}

/// The one frame step every picture takes: clock → advance → prepare → encode → submit →
/// collect.
pub struct FrameStep<'a> {
    pub gpu: &'a Gpu,
    pub renderer: &'a mut ViewRenderer,
    pub timer: Option<&'a mut GpuTimer>,
    /// Wait for the GPU to finish the frame, timing the wait and the whole frame (benchmarks).
    /// Without it the pass time arrives with a later frame.
    pub wait: bool,
}

impl FrameStep<'_> {
    /// Moves `viewer` by `clock`, prepares its frame for a view of aspect `aspect`, lets `draw`
    /// record the target, submits, and collects what the frame measured.
    pub fn run<T>(
        self,
        viewer: &mut Viewer,
        clock: Clock,
        aspect: f32,
        draw: impl FnOnce(&mut Recording) -> T,
    ) -> Result<DrawnFrame<T>, GpuError> {
        let FrameStep {
            gpu,
            renderer,
            mut timer,
            wait,
        } = self;
        let start = Instant::now();
        match clock {
            Clock::Still => {}
            Clock::Advance(seconds) => {
                viewer.advance(seconds);
                viewer.mark_dirty();
            }
            Clock::Seek(seconds) => viewer.seek(seconds),
        }
        let mut timings = FrameTimings::default();
        renderer.prepare_viewer(gpu, viewer, aspect, &mut timings);
        let encode_start = Instant::now();
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("frame") });
        let mut recording = Recording {
            gpu,
            encoder: &mut encoder,
            renderer,
            viewer,
            timer: timer.as_deref_mut(),
            first: Vec::new(),
            own_time: Duration::ZERO,
        };
        let drawn = draw(&mut recording);
        let (first, own_time) = (recording.first, recording.own_time);
        let commands = encoder.finish();
        timings.set_duration(Stage::Encoding, Some(encode_start.elapsed().saturating_sub(own_time)));
        let wait_start = Instant::now();
        gpu.queue.submit(first.into_iter().chain([commands]));
        if let Some(timer) = &mut timer {
            timer.submitted();
        }
        if wait {
            gpu.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(GpuError::Poll)?;
            timings.set_duration(Stage::GpuWait, Some(wait_start.elapsed()));
            timings.set_duration(Stage::Frame, Some(start.elapsed()));
        }
        let mut pass = None;
        if let Some(timer) = timer {
            pass = timer.collect_tagged(&gpu.device);
            timings.set(Stage::GpuPass, pass.map(|(seconds, _)| seconds));
        }
        Ok(DrawnFrame { drawn, timings, pass })
    }
}

/// The scene renderer with the viewer's rig on the GPU.
pub struct ViewRenderer {
    pub scene: SceneRenderer,
    /// The uploaded rig and the viewer's `rig_generation` it came from.
    rig: Option<(u64, RigGpu)>,
    /// The last prepared frame's signature (see [`FrameUpload::signature`]), rig included.
    signature: u64,
    /// The environment the shaded view is lit by: the viewer's, as of its last frame.
    environment: crate::render::environment::Environment,
}

impl ViewRenderer {
    /// A renderer for targets of `format` with `samples` per pixel.
    pub fn new(gpu: &Gpu, format: wgpu::TextureFormat, samples: u32) -> ViewRenderer {
        ViewRenderer {
            scene: SceneRenderer::new(&gpu.device, &gpu.queue, format, samples, gpu.cache()),
            rig: None,
            signature: 0,
            environment: Default::default(),
        }
    }

    /// What the uploaded rig takes on the GPU (`None` before one is uploaded).
    pub fn gpu_memory(&self) -> Option<crate::render::GpuMemory> {
        self.rig.as_ref().map(|(_, rig)| rig.gpu_memory())
    }

    /// A renderer for [`Offscreen`] targets.
    pub fn offscreen(gpu: &Gpu) -> ViewRenderer {
        ViewRenderer::offscreen_with(gpu, crate::render::scene::OFFSCREEN_SAMPLES)
    }

    /// An offscreen renderer that draws every mesh from its bind-pose vertices, uploading no
    /// palette: the static baseline `rigscope bench` measures the skinning paths against.
    pub fn static_baseline(gpu: &Gpu) -> ViewRenderer {
        let mut renderer = ViewRenderer::offscreen(gpu);
        renderer.scene.unskinned = true;
        renderer
    }

    /// A renderer for [`Offscreen`] targets of `samples` per pixel.
    pub fn offscreen_with(gpu: &Gpu, samples: u32) -> ViewRenderer {
        ViewRenderer::new(gpu, crate::render::offscreen::OFFSCREEN_FORMAT, samples)
    }

    /// An [`Offscreen`] target of `width`×`height` pixels and `samples` per pixel with its
    /// renderer, made side by side: each is a few milliseconds on a software driver (allocating
    /// the targets; parsing the shaders), and neither needs the other.
    pub fn offscreen_target(
        gpu: &Gpu,
        width: u32,
        height: u32,
        samples: u32,
    ) -> Result<(Offscreen, ViewRenderer), GpuError> {
        let (target, renderer) = rayon::join(
            || Offscreen::with_samples(gpu, width, height, samples),
            || ViewRenderer::offscreen_with(gpu, samples),
        );
        Ok((target?, renderer))
    }

    /// The first stage of a frame: uploads the frame's rig and its grid when the rig changed
    /// since the last frame, and writes the frame's palettes, vertices and uniforms. Reads the
    /// frame state only (the viewer brought it up to date before, see
    /// [`Viewer::prepare_frame`]); records what the upload cost in `timings`.
    pub fn prepare(&mut self, gpu: &Gpu, frame: &FrameState, timings: &mut FrameTimings) {
        let mut built = 0;
        let (rig, options, path) = (frame.rig, frame.view, frame.path);
        if self.rig.as_ref().map(|(generation, _)| *generation) != Some(frame.generation) {
            // The first frame's pipelines compile on one core while the rig uploads on another.
            let scene = &self.scene;
            let skinning = (path, frame.method);
            let (mut uploaded, prebuilt) = rayon::join(
                || scene.upload_rig(&gpu.device, &gpu.queue, rig),
                || scene.prebuild_pipelines(&gpu.device, gpu.cache(), rig, options, skinning),
            );
            built += prebuilt;
            uploaded.start_proxies(rig);
            self.scene.set_grid(&gpu.device, &frame.rest_bounds);
            self.rig = Some((frame.generation, uploaded));
        }
        if options.mode == crate::render::ViewMode::Shaded
            && options.light == crate::render::environment::Lighting::Environment
        {
            (self.scene).ensure_environment(&gpu.device, &gpu.queue, gpu.cache(), &self.environment);
        }
        let Some((_, rig_gpu)) = &mut self.rig else { return };
        rig_gpu.ensure_buffers(&gpu.device, rig, options, path);
        (self.scene).ensure_ghosts(&gpu.device, rig_gpu, rig, options, path);
        let upload = self.scene.write_frame(&gpu.queue, rig_gpu, frame);
        timings.record_upload(&upload);
        self.signature = upload.signature ^ frame.generation.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // After the frame is written: a draw's pipeline follows its winding in this pose.
        built += (self.scene).prepare_pipelines(&gpu.device, gpu.cache(), rig_gpu, options);
        if let Some(cache) = gpu.pipeline_cache.as_ref().filter(|_| built > 0) {
            cache.save();
        }
    }

    /// [`ViewRenderer::prepare`] of the viewer's frame: the viewer brings its state up to date
    /// first (its one changing step, which also records the pose's stage times).
    pub fn prepare_viewer(&mut self, gpu: &Gpu, viewer: &mut Viewer, aspect: f32, timings: &mut FrameTimings) {
        timings.record_stages(viewer.prepare_frame());
        self.light_with(&viewer.environment);
        self.prepare(gpu, &viewer.frame_state(aspect), timings);
    }

    /// Lights the shaded view with `environment` from the next [`ViewRenderer::prepare`] on.
    pub fn light_with(&mut self, environment: &crate::render::environment::Environment) {
        if self.environment.id() != environment.id() {
            self.environment = environment.clone();
        }
    }

    /// What the last prepared frame draws: equal signatures, with the same targets and
    /// viewport, mean equal pixels.
    pub fn signature(&self) -> u64 {
        self.signature
    }

    /// Builds the proxy of the viewer's rig, once per rig, when it is heavy enough to have one.
    pub fn build_proxy(&mut self, gpu: &Gpu, viewer: &Viewer) {
        self.build_proxy_of(gpu, viewer.document().generation, viewer.rig());
    }

    /// [`ViewRenderer::build_proxy`] of `rig`, when it is the rig uploaded here (the document
    /// of that `generation`): a comparison's other side.
    pub fn build_proxy_of(&mut self, gpu: &Gpu, generation: u64, rig: &crate::rig::Rig) {
        if let Some((uploaded, rig_gpu)) = &mut self.rig
            && *uploaded == generation
        {
            rig_gpu.build_proxies(&gpu.device, rig);
        }
    }

    /// Whether the rig has a proxy to draw while it moves (see [`crate::render::detail`]).
    pub fn has_proxy(&self) -> bool {
        self.rig.as_ref().is_some_and(|(_, rig)| rig.has_proxy())
    }

    /// Mesh primitives of the whole scene as `view` draws it (see [`ScenePortion`]).
    pub fn primitive_count(&self, view: &crate::render::ViewOptions) -> u64 {
        self.rig.as_ref().map_or(0, |(_, rig)| rig.primitive_count(view))
    }

    /// The second stage: records the scene pass into `view` (the 3D view in `viewport`, the
    /// whole target when `None`), with `timestamps` written at its beginning and end.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        targets: &RenderTargets,
        view: &wgpu::TextureView,
        viewer: &Viewer,
        viewport: Option<PixelRect>,
        timestamps: Option<wgpu::RenderPassTimestampWrites>,
    ) {
        let drawn = (&viewer.view.options, viewer.skinning_path());
        self.encode_portion(
            encoder,
            targets,
            view,
            drawn,
            viewport,
            &ScenePortion::WHOLE,
            timestamps,
        );
    }

    /// [`ViewRenderer::encode`] for a portion of the scene, drawn with `options` on `path` (the
    /// frame's, as prepared).
    #[allow(clippy::too_many_arguments)]
    pub fn encode_portion(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        targets: &RenderTargets,
        view: &wgpu::TextureView,
        (options, path): (&crate::render::ViewOptions, crate::skin::SkinningPath),
        viewport: Option<PixelRect>,
        portion: &ScenePortion,
        timestamps: Option<wgpu::RenderPassTimestampWrites>,
    ) {
        self.scene.encode(
            encoder,
            targets,
            view,
            self.rig.as_ref().map(|(_, rig)| rig),
            options,
            path,
            viewport,
            portion,
            timestamps,
        );
    }

    /// `frame` alone (one side of a comparison, say) prepared, drawn into `target` and read
    /// back as an image.
    pub fn render_frame_state(
        &mut self,
        gpu: &Gpu,
        target: &Offscreen,
        frame: &FrameState,
    ) -> Result<image::RgbaImage, GpuError> {
        self.prepare(gpu, frame, &mut FrameTimings::default());
        let mut encoder = (gpu.device).create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("frame state"),
        });
        let drawn = (frame.view, frame.path);
        let first = target.encode_capture(
            &mut encoder,
            &mut |encoder, targets, view| {
                self.encode_portion(encoder, targets, view, drawn, None, &ScenePortion::WHOLE, None);
            },
            None,
        );
        gpu.queue.submit(first.into_iter().chain([encoder.finish()]));
        target.read_capture(gpu)
    }

    /// One frame into `target`, with `overlay` drawn on top, read back as an image.
    pub fn render_image(
        &mut self,
        gpu: &Gpu,
        target: &Offscreen,
        viewer: &mut Viewer,
        viewport: Option<PixelRect>,
        overlay: Option<&mut Overlay>,
    ) -> Result<image::RgbaImage, GpuError> {
        self.render_image_at(gpu, target, viewer, Clock::Still, viewport, overlay)
    }

    /// [`ViewRenderer::render_image`] after moving playback by `clock`.
    pub fn render_image_at(
        &mut self,
        gpu: &Gpu,
        target: &Offscreen,
        viewer: &mut Viewer,
        clock: Clock,
        viewport: Option<PixelRect>,
        overlay: Option<&mut Overlay>,
    ) -> Result<image::RgbaImage, GpuError> {
        let aspect = viewport.map_or(target.aspect(), |v| v.width as f32 / v.height as f32);
        let step = FrameStep {
            gpu,
            renderer: self,
            timer: None,
            wait: false,
        };
        step.run(viewer, clock, aspect, |frame| {
            let (renderer, viewer) = (&*frame.renderer, frame.viewer);
            frame.first = target.encode_capture(
                frame.encoder,
                &mut |encoder, targets, view| renderer.encode(encoder, targets, view, viewer, viewport, None),
                overlay,
            );
        })?;
        target.read_capture(gpu)
    }
}

/// How the window shows a scene that may be heavy (see [`crate::render::detail`]): the policy,
/// and the kept images, made when a scene first turns out heavy and dropped when it no longer
/// is.
#[derive(Default)]
pub struct DetailedView {
    pub policy: DetailPolicy,
    images: Option<SceneImages>,
    /// The last frame's line for the status bar (see [`SceneDraw::status`]).
    status: Option<String>,
}

impl DetailedView {
    /// What the view shows when it is not the whole scene as it is now, for the status bar.
    pub fn status(&self) -> Option<&str> {
        self.status.as_deref()
    }

    /// Takes note of a frame drawn without this view's kept images (a comparison's): they no
    /// longer show what is on screen; `draw` is what the frame drew of `total` primitives.
    pub fn drawn_without_images(&mut self, draw: &SceneDraw, total: u64) {
        self.images = None;
        self.status = draw.status(total);
    }

    /// Records the 3D view into `output` (of `format`, drawn with `targets`): whole, or for a
    /// heavy scene its proxy, a portion of the whole scene or the kept image, each followed by
    /// the shown image. `whole` forces the whole scene (a screenshot). A scene pass is timed
    /// with `timer`, tagged with the primitives of the whole scene it drew (0 for the proxy),
    /// for [`DetailPolicy::measured`]. Returns what the frame drew.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &mut self,
        gpu: &Gpu,
        renderer: &mut ViewRenderer,
        encoder: &mut wgpu::CommandEncoder,
        (targets, output, format): (&RenderTargets, &wgpu::TextureView, wgpu::TextureFormat),
        viewer: &Viewer,
        viewport: PixelRect,
        whole: bool,
        mut timer: Option<&mut GpuTimer>,
    ) -> SceneDraw {
        let total = renderer.primitive_count(&viewer.view.options);
        if self.policy.is_heavy(total) {
            renderer.build_proxy(gpu, viewer);
        }
        let has_proxy = renderer.has_proxy();
        let mut signature = std::hash::DefaultHasher::new();
        signature.write_u64(renderer.signature());
        (viewport.x, viewport.y, viewport.width, viewport.height).hash(&mut signature);
        (targets.width, targets.height, targets.samples, format).hash(&mut signature);
        let signature = signature.finish();
        let mut draw = if whole {
            SceneDraw::Whole
        } else {
            self.policy.decide(signature, total, has_proxy)
        };
        let fits = |images: &SceneImages| images.fits(format, targets.width, targets.height);
        if draw == SceneDraw::Whole {
            // A light scene needs no kept images. A heavy one drawn whole for a screenshot
            // keeps them, but the pass cleared the samples and depth a portion would continue
            // from: the next frame starts over from the proxy.
            if whole {
                self.policy.forget();
            } else {
                self.images = None;
            }
        } else if !self.images.as_ref().is_some_and(fits) {
            self.images = Some(SceneImages::new(&gpu.device, format, targets.width, targets.height));
            // New images hold nothing yet: the proxy goes into them first.
            if draw != SceneDraw::Proxy {
                self.policy.forget();
                draw = self.policy.decide(signature, total, has_proxy);
            }
        }
        let (target, portion, timed) = match (&draw, &self.images) {
            (SceneDraw::Whole, _) | (_, None) => (output, ScenePortion::WHOLE, total),
            (SceneDraw::Proxy, Some(images)) => (images.shown(), ScenePortion::PROXY, 0),
            (SceneDraw::Refine(portion), Some(images)) => (
                images.finishing(),
                portion.clone(),
                portion.primitives.end - portion.primitives.start,
            ),
            (SceneDraw::Keep, Some(images)) => {
                images.show(encoder, output);
                self.status = None;
                return draw;
            }
        };
        renderer.encode_portion(
            encoder,
            targets,
            target,
            (&viewer.view.options, viewer.skinning_path()),
            Some(viewport),
            &portion,
            timer.as_deref_mut().and_then(GpuTimer::pass_writes),
        );
        if let Some(timer) = timer {
            timer.resolve(encoder, timed);
        }
        if let Some(images) = self.images.as_mut().filter(|_| draw != SceneDraw::Whole) {
            if portion.last && !portion.proxy {
                images.finish();
            }
            images.show(encoder, output);
        }
        self.status = draw.status(total);
        draw
    }
}
