//! Drawing the viewer's state: the one path every picture takes, whether it goes to the
//! window, an offscreen render, a screenshot, a sequence, `render --ui` or `bench`.

use crate::render::detail::ScenePortion;
use crate::render::offscreen::Overlay;
use crate::render::{Gpu, GpuError, Offscreen, PixelRect, RenderTargets, RigGpu, SceneRenderer};
use crate::timings::FrameTimings;
use crate::viewer::Viewer;

/// The scene renderer with the viewer's rig on the GPU.
pub struct ViewRenderer {
    pub scene: SceneRenderer,
    /// The uploaded rig and the viewer's `rig_generation` it came from.
    rig: Option<(u64, RigGpu)>,
    /// The last prepared frame's signature (see [`FrameUpload::signature`]), rig included.
    signature: u64,
}

impl ViewRenderer {
    /// A renderer for targets of `format` with `samples` per pixel.
    pub fn new(gpu: &Gpu, format: wgpu::TextureFormat, samples: u32) -> ViewRenderer {
        ViewRenderer {
            scene: SceneRenderer::new(&gpu.device, &gpu.queue, format, samples, gpu.cache()),
            rig: None,
            signature: 0,
        }
    }

    /// A renderer for [`Offscreen`] targets.
    pub fn offscreen(gpu: &Gpu) -> ViewRenderer {
        use crate::render::{offscreen::OFFSCREEN_FORMAT, scene::OFFSCREEN_SAMPLES};
        ViewRenderer::new(gpu, OFFSCREEN_FORMAT, OFFSCREEN_SAMPLES)
    }

    /// The first stage of a frame: uploads the viewer's rig and its grid when the rig changed
    /// since the last frame, brings the pose up to date, and writes the frame's palettes,
    /// vertices and uniforms for a view of aspect `aspect`. Records what that cost in
    /// `timings`.
    pub fn prepare(&mut self, gpu: &Gpu, viewer: &mut Viewer, aspect: f32, timings: &mut FrameTimings) {
        if self.rig.as_ref().map(|(generation, _)| *generation) != Some(viewer.rig_generation) {
            let uploaded = self.scene.upload_rig(&gpu.device, &gpu.queue, &viewer.rig);
            self.scene.set_grid(&gpu.device, &viewer.rest_bounds);
            self.rig = Some((viewer.rig_generation, uploaded));
        }
        timings.record_stages(viewer.prepare_frame());
        let Some((_, rig_gpu)) = &mut self.rig else { return };
        let upload = self.scene.write_frame(&gpu.queue, rig_gpu, &viewer.frame_state(aspect));
        timings.record_upload(&upload);
        self.signature = upload.signature ^ viewer.rig_generation.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // After the frame is written: a draw's pipeline follows its winding in this pose.
        let built = self
            .scene
            .prepare_pipelines(&gpu.device, gpu.cache(), rig_gpu, &viewer.view);
        if let Some(cache) = gpu.pipeline_cache.as_ref().filter(|_| built > 0) {
            cache.save();
        }
    }

    /// What the last prepared frame draws: equal signatures, with the same targets and
    /// viewport, mean equal pixels.
    pub fn signature(&self) -> u64 {
        self.signature
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
        self.encode_portion(encoder, targets, view, viewer, viewport, &ScenePortion::WHOLE, timestamps);
    }

    /// [`ViewRenderer::encode`] for a portion of the scene.
    #[allow(clippy::too_many_arguments)]
    pub fn encode_portion(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        targets: &RenderTargets,
        view: &wgpu::TextureView,
        viewer: &Viewer,
        viewport: Option<PixelRect>,
        portion: &ScenePortion,
        timestamps: Option<wgpu::RenderPassTimestampWrites>,
    ) {
        self.scene.encode(
            encoder,
            targets,
            view,
            self.rig.as_ref().map(|(_, rig)| rig),
            &viewer.view,
            viewer.skinning_path(),
            viewport,
            portion,
            timestamps,
        );
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
        let aspect = viewport.map_or(target.aspect(), |v| v.width as f32 / v.height as f32);
        self.prepare(gpu, viewer, aspect, &mut FrameTimings::default());
        target.capture(
            gpu,
            &mut |encoder, targets, view| self.encode(encoder, targets, view, viewer, viewport, None),
            overlay,
        )
    }
}

/// The 3D view as the viewer shows it (same camera, pose and view options), without the UI,
/// rendered offscreen at `width`×`height` pixels.
pub fn render_view(gpu: &Gpu, viewer: &mut Viewer, width: u32, height: u32) -> Result<image::RgbaImage, GpuError> {
    let start = std::time::Instant::now();
    let lap = |what: &str| log::debug!("{what}: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    let target = Offscreen::new(gpu, width, height)?;
    let mut renderer = ViewRenderer::offscreen(gpu);
    lap("renderer created");
    renderer.prepare(gpu, viewer, target.aspect(), &mut FrameTimings::default());
    lap("rig uploaded, frame written, mesh pipelines built");
    let image = target.capture(
        gpu,
        &mut |encoder, targets, view| renderer.encode(encoder, targets, view, viewer, None, None),
        None,
    );
    lap("drawn and read back");
    image
}
