//! A comparison drawn offscreen: the two sides side by side (each half a render of its side
//! through the shared camera), or the other side's wireframe drawn into the active side's
//! image, hidden where the active side's surface is in front of it.

use super::{ViewRenderer, render_one_side};
use crate::render::detail::ScenePortion;
use crate::render::{Gpu, GpuError, Offscreen, ViewOptions};
use crate::timings::FrameTimings;
use crate::viewer::{CompareLayout, Viewer};

/// The active side's meshes; the samples and depth stay for the other side's wireframe.
const ACTIVE_MESHES: ScenePortion = ScenePortion {
    proxy: false,
    primitives: 0..u64::MAX,
    first: true,
    last: false,
};

/// No meshes, then the active side's grid and overlays over both sides, ending the image.
const ACTIVE_OVERLAYS: ScenePortion = ScenePortion {
    proxy: false,
    primitives: u64::MAX..u64::MAX,
    first: false,
    last: true,
};

/// The widths of the left and right halves of an image `width` pixels wide (each at least
/// one pixel, which an offscreen target needs).
pub fn split_width(width: u32) -> (u32, u32) {
    let left = (width / 2).max(1);
    (left, width.saturating_sub(left).max(1))
}

/// Both sides of the viewer's comparison at `width`×`height` pixels, as its layout shows
/// them, the other side following the active one first; the active side alone without one.
pub fn render_comparison(
    gpu: &Gpu,
    viewer: &mut Viewer,
    width: u32,
    height: u32,
) -> Result<image::RgbaImage, GpuError> {
    viewer.follow_comparison();
    match viewer.comparison().map(|c| c.layout) {
        None => render_one_side(gpu, viewer, width, height),
        Some(CompareLayout::Side) => {
            let (left, right) = split_width(width);
            let active = render_one_side(gpu, viewer, left, height)?;
            let Some(comparison) = viewer.comparison_mut() else {
                return Ok(active);
            };
            let other = render_one_side(gpu, comparison.other_mut(), right, height)?;
            let mut image = image::RgbaImage::new(width, height);
            image::imageops::replace(&mut image, &active, 0, 0);
            image::imageops::replace(&mut image, &other, i64::from(left), 0);
            Ok(image)
        }
        Some(CompareLayout::Overlay) => render_overlay(gpu, viewer, width, height),
    }
}

/// The overlay layout: the active side's meshes, the other side's wireframe with the same
/// depth, then the active side's grid and overlays.
fn render_overlay(gpu: &Gpu, viewer: &mut Viewer, width: u32, height: u32) -> Result<image::RgbaImage, GpuError> {
    let target = Offscreen::new(gpu, width, height)?;
    let aspect = target.aspect();
    let mut timings = FrameTimings::default();
    let mut active = ViewRenderer::offscreen(gpu);
    active.prepare(gpu, viewer, aspect, &mut timings);
    let mut ghost = ViewRenderer::offscreen(gpu);
    let mut ghost_portion = ScenePortion {
        first: false,
        last: false,
        ..ScenePortion::WHOLE
    };
    if let Some(comparison) = viewer.comparison_mut() {
        let other = comparison.other_mut();
        other.view.options.wireframe = true;
        ghost.prepare(gpu, other, aspect, &mut timings);
        // The wireframe's lines follow the triangles in the scene's drawing order.
        let triangles = ghost.primitive_count(&ViewOptions {
            wireframe: false,
            ..other.view.options
        });
        ghost_portion.primitives = triangles..u64::MAX;
    }
    let viewer: &Viewer = viewer;
    let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("comparison"),
    });
    let first = target.encode_capture(
        &mut encoder,
        &mut |encoder, targets, view| {
            active.encode_portion(encoder, targets, view, viewer, None, &ACTIVE_MESHES, None);
            if let Some(comparison) = viewer.comparison() {
                ghost.encode_portion(encoder, targets, view, comparison.other(), None, &ghost_portion, None);
            }
            active.encode_portion(encoder, targets, view, viewer, None, &ACTIVE_OVERLAYS, None);
        },
        None,
    );
    gpu.queue.submit(first.into_iter().chain([encoder.finish()]));
    target.read_capture(gpu)
}
