//! A comparison drawn into one target, the window's or an offscreen one: the two sides side by
//! side in the two halves of the viewport through the shared camera, or the other side's
//! wireframe drawn into the active side's view, hidden where the active side's surface is in
//! front of it.

use super::{Clock, DetailedView, FrameStep, ViewRenderer};
use crate::render::detail::SceneDraw;
use crate::render::detail::ScenePortion;
use crate::render::timer::GpuTimer;
use crate::render::{Gpu, GpuError, Offscreen, PixelRect, RenderTargets, ViewOptions};
use crate::timings::FrameTimings;
use crate::viewer::CompareLayout;
use crate::viewer::Viewer;
use std::hash::{Hash, Hasher};

/// Side by side, the active side first: its meshes and overlays, the samples and depth kept
/// for the other side.
const ACTIVE_SIDE: ScenePortion = ScenePortion {
    first: true,
    last: false,
    overlays: true,
    ..ScenePortion::WHOLE
};

/// Side by side, the other side ending the image.
const OTHER_SIDE: ScenePortion = ScenePortion {
    first: false,
    last: true,
    overlays: true,
    ..ScenePortion::WHOLE
};

/// The widths of the left and right halves of a view `width` pixels wide (each at least one
/// pixel).
pub fn split_width(width: u32) -> (u32, u32) {
    let left = (width / 2).max(1);
    (left, width.saturating_sub(left).max(1))
}

/// Where the active side and the other side are drawn in `viewport`.
pub fn side_viewports(layout: CompareLayout, viewport: PixelRect) -> (PixelRect, PixelRect) {
    match layout {
        CompareLayout::Side => {
            let (left, right) = split_width(viewport.width);
            (
                PixelRect {
                    width: left,
                    ..viewport
                },
                PixelRect {
                    x: viewport.x + left,
                    width: right,
                    ..viewport
                },
            )
        }
        CompareLayout::Overlay => (viewport, viewport),
    }
}

fn aspect(rect: PixelRect) -> f32 {
    rect.width as f32 / rect.height.max(1) as f32
}

/// Where the active side is drawn when `viewer` shows its comparison (or the active side
/// alone) in `viewport`.
pub fn active_viewport(viewer: &Viewer, viewport: PixelRect) -> PixelRect {
    viewer
        .comparison()
        .map_or(viewport, |comparison| side_viewports(comparison.layout, viewport).0)
}

/// The aspect of a view drawn in `viewport` by `viewer`'s active side.
pub fn active_aspect(viewer: &Viewer, viewport: PixelRect) -> f32 {
    aspect(active_viewport(viewer, viewport))
}

/// Prepares the other side of the viewer's comparison in `renderer` for the viewer's layout in
/// `viewport`, from the frame state the viewer prepared (see [`Viewer::prepare_frame`]);
/// nothing without a comparison.
pub fn prepare_other_side(gpu: &Gpu, renderer: &mut ViewRenderer, viewer: &Viewer, viewport: PixelRect) {
    let Some(comparison) = viewer.comparison() else {
        return;
    };
    let (_, other_rect) = side_viewports(comparison.layout, viewport);
    if let Some(frame) = viewer.other_frame_state(aspect(other_rect)) {
        renderer.light_with(&viewer.environment);
        renderer.prepare(gpu, &frame, &mut FrameTimings::default());
    }
}

/// Records both sides of the viewer's comparison into `output` within `viewport`, both
/// renderers prepared (see [`prepare_other_side`]); the active side alone without one. With
/// `proxy`, each side draws its proxy where it has one (the overlay's wireframe stays whole);
/// with a timer, the active side's pass is timed, tagged with the primitives it drew.
pub fn encode_comparison(
    encoder: &mut wgpu::CommandEncoder,
    (targets, output): (&RenderTargets, &wgpu::TextureView),
    (active, other): (&ViewRenderer, &ViewRenderer),
    viewer: &Viewer,
    viewport: PixelRect,
    (proxy, mut timer): (bool, Option<(&mut GpuTimer, u64)>),
) {
    let Some(comparison) = viewer.comparison() else {
        active.encode(encoder, targets, output, viewer, Some(viewport), None);
        return;
    };
    let (active_rect, other_rect) = side_viewports(comparison.layout, viewport);
    let side = comparison.other();
    let other_options = &side.view().options;
    let other_portion = match comparison.layout {
        CompareLayout::Side => OTHER_SIDE,
        // The wireframe's lines follow the triangles in the scene's drawing order.
        CompareLayout::Overlay => ScenePortion {
            primitives: other.primitive_count(&ViewOptions {
                wireframe: false,
                ..*other_options
            })..u64::MAX,
            last: false,
            overlays: false,
            ..OTHER_SIDE
        },
    };
    let overlay = comparison.layout == CompareLayout::Overlay;
    let other_portion = ScenePortion {
        proxy: proxy && !overlay,
        ..other_portion
    };
    let active_portion = ScenePortion {
        proxy,
        overlays: !overlay,
        ..ACTIVE_SIDE
    };
    let (first, second) = (Some(active_rect), Some(other_rect));
    let active_drawn = (&viewer.view.options, viewer.skinning_path());
    let other_drawn = (other_options, side.skinning_path());
    let writes = timer.as_mut().and_then(|(timer, _)| timer.pass_writes());
    active.encode_portion(encoder, targets, output, active_drawn, first, &active_portion, writes);
    if let Some((timer, primitives)) = timer {
        timer.resolve(encoder, primitives);
    }
    other.encode_portion(encoder, targets, output, other_drawn, second, &other_portion, None);
    if overlay {
        // The active side's grid and overlays over the other side's lines, ending the image.
        let overlays = ScenePortion {
            primitives: u64::MAX..u64::MAX,
            ..OTHER_SIDE
        };
        active.encode_portion(encoder, targets, output, active_drawn, first, &overlays, None);
    }
}

/// Records both sides of the viewer's comparison for `detail`, the window's view (see
/// [`encode_comparison`]): each side's proxy while the view moves and the two together are
/// heavy, both whole the frame after it holds still (a comparison keeps no images). The active
/// side's pass is timed with `timer` for
/// [`DetailPolicy::measured`](crate::render::detail::DetailPolicy::measured). Returns what the
/// frame drew.
#[allow(clippy::too_many_arguments)]
pub fn encode_detailed(
    detail: &mut DetailedView,
    gpu: &Gpu,
    (active, other): (&mut ViewRenderer, &mut ViewRenderer),
    encoder: &mut wgpu::CommandEncoder,
    (targets, output): (&RenderTargets, &wgpu::TextureView),
    viewer: &Viewer,
    viewport: PixelRect,
    timer: Option<&mut GpuTimer>,
) -> SceneDraw {
    let Some(comparison) = viewer.comparison() else {
        active.encode(encoder, targets, output, viewer, Some(viewport), None);
        return SceneDraw::Whole;
    };
    let side = comparison.other();
    let active_total = active.primitive_count(&viewer.view.options);
    let total = active_total + other.primitive_count(&side.view().options);
    if detail.policy.is_heavy(total) {
        active.build_proxy(gpu, viewer);
        other.build_proxy_of(gpu, side.document().generation, side.rig());
    }
    let has_proxy = active.has_proxy() || other.has_proxy();
    let mut signature = std::hash::DefaultHasher::new();
    (active.signature(), other.signature(), comparison.layout as u8).hash(&mut signature);
    (viewport.x, viewport.y, viewport.width, viewport.height).hash(&mut signature);
    (targets.width, targets.height, targets.samples).hash(&mut signature);
    let draw = detail.policy.decide_unkept(signature.finish(), total, has_proxy);
    let proxy = draw == SceneDraw::Proxy;
    let timed = if proxy { 0 } else { active_total };
    encode_comparison(
        encoder,
        (targets, output),
        (active, other),
        viewer,
        viewport,
        (proxy, timer.map(|timer| (timer, timed))),
    );
    detail.drawn_without_images(&draw, total);
    draw
}

/// Both sides of the viewer's comparison at `width`×`height` pixels, as its layout shows them,
/// with `samples` per pixel: one frame step, the other side prepared from the same frame.
pub fn render_comparison(
    gpu: &Gpu,
    viewer: &mut Viewer,
    width: u32,
    height: u32,
    samples: u32,
) -> Result<image::RgbaImage, GpuError> {
    let target = Offscreen::with_samples(gpu, width, height, samples)?;
    let viewport = PixelRect {
        x: 0,
        y: 0,
        width,
        height,
    };
    let mut active = ViewRenderer::offscreen_with(gpu, samples);
    let mut other = ViewRenderer::offscreen_with(gpu, samples);
    let step = FrameStep {
        gpu,
        renderer: &mut active,
        timer: None,
        wait: false,
    };
    step.run(viewer, Clock::Still, active_aspect(viewer, viewport), |frame| {
        prepare_other_side(gpu, &mut other, frame.viewer, viewport);
        let (active, viewer, other) = (&*frame.renderer, frame.viewer, &other);
        frame.first = target.encode_capture(
            frame.encoder,
            &mut |encoder, targets, view| {
                encode_comparison(
                    encoder,
                    (targets, view),
                    (active, other),
                    viewer,
                    viewport,
                    (false, None),
                );
            },
            None,
        );
    })?;
    target.read_capture(gpu)
}
