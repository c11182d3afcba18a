//! A comparison drawn into one target, the window's or an offscreen one: the two sides side by
//! side in the two halves of the viewport through the shared camera, or the other side's
//! wireframe drawn into the active side's view, hidden where the active side's surface is in
//! front of it.

use super::ViewRenderer;
use crate::render::detail::ScenePortion;
use crate::render::{Gpu, GpuError, Offscreen, PixelRect, RenderTargets, ViewMode, ViewOptions};
use crate::timings::FrameTimings;
use crate::viewer::{CompareLayout, Viewer};

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

/// Moves the other side of the viewer's comparison to the active side's state and prepares
/// its frame in `renderer` for the viewer's layout in `viewport`. Returns the aspect the
/// active side is to be prepared for (`None` without a comparison).
pub fn prepare_other_side(
    gpu: &Gpu,
    renderer: &mut ViewRenderer,
    viewer: &mut Viewer,
    viewport: PixelRect,
) -> Option<f32> {
    if viewer.view.options.mode == ViewMode::WeightDifference {
        // Before the other side follows: its colours come from the comparison.
        viewer.ensure_comparison_diff();
    }
    viewer.follow_comparison();
    let comparison = viewer.comparison_mut()?;
    let (active, other_rect) = side_viewports(comparison.layout, viewport);
    let overlay = comparison.layout == CompareLayout::Overlay;
    let other = comparison.other_mut();
    if overlay {
        other.view.options.wireframe = true;
    }
    renderer.prepare(gpu, other, aspect(other_rect), &mut FrameTimings::default());
    Some(aspect(active))
}

/// Records both sides of the viewer's comparison into `output` within `viewport`, both
/// renderers prepared (see [`prepare_other_side`]); the active side alone without one.
pub fn encode_comparison(
    encoder: &mut wgpu::CommandEncoder,
    (targets, output): (&RenderTargets, &wgpu::TextureView),
    (active, other): (&ViewRenderer, &ViewRenderer),
    viewer: &Viewer,
    viewport: PixelRect,
) {
    let Some(comparison) = viewer.comparison() else {
        active.encode(encoder, targets, output, viewer, Some(viewport), None);
        return;
    };
    let (active_rect, other_rect) = side_viewports(comparison.layout, viewport);
    let other_portion = match comparison.layout {
        CompareLayout::Side => OTHER_SIDE,
        // The wireframe's lines follow the triangles in the scene's drawing order.
        CompareLayout::Overlay => ScenePortion {
            primitives: other.primitive_count(&ViewOptions {
                wireframe: false,
                ..comparison.other().view.options
            })..u64::MAX,
            last: false,
            overlays: false,
            ..OTHER_SIDE
        },
    };
    let overlay = comparison.layout == CompareLayout::Overlay;
    let active_portion = ScenePortion {
        overlays: !overlay,
        ..ACTIVE_SIDE
    };
    let (first, second) = (Some(active_rect), Some(other_rect));
    active.encode_portion(encoder, targets, output, viewer, first, &active_portion, None);
    other.encode_portion(
        encoder,
        targets,
        output,
        comparison.other(),
        second,
        &other_portion,
        None,
    );
    if overlay {
        // The active side's grid and overlays over the other side's lines, ending the image.
        let overlays = ScenePortion {
            primitives: u64::MAX..u64::MAX,
            ..OTHER_SIDE
        };
        active.encode_portion(encoder, targets, output, viewer, first, &overlays, None);
    }
}

/// Both sides of the viewer's comparison at `width`×`height` pixels, as its layout shows them,
/// with `samples` per pixel.
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
    let aspect = prepare_other_side(gpu, &mut other, viewer, viewport).unwrap_or(target.aspect());
    active.prepare(gpu, viewer, aspect, &mut FrameTimings::default());
    let viewer: &Viewer = viewer;
    let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("comparison"),
    });
    let first = target.encode_capture(
        &mut encoder,
        &mut |encoder, targets, view| {
            encode_comparison(encoder, (targets, view), (&active, &other), viewer, viewport);
        },
        None,
    );
    gpu.queue.submit(first.into_iter().chain([encoder.finish()]));
    target.read_capture(gpu)
}
