//! Heavy scenes on lavapipe: the whole scene drawn in portions over several passes equals it
//! drawn in one; the proxy of a heavy rig covers what the whole mesh covers with far fewer
//! triangles; a kept image copied onto the frame equals the scene drawn straight into it.

use crate::common::gpu;

use image::RgbaImage;
use rigscope::draw::ViewRenderer;
use rigscope::render::detail::ScenePortion;
use rigscope::render::offscreen::OFFSCREEN_FORMAT;
use rigscope::render::scene::PROXY_ABOVE_TRIANGLES;
use rigscope::render::scene_images::SceneImages;
use rigscope::render::{Gpu, Offscreen};
use rigscope::synthetic::skinned_tube;
use rigscope::timings::FrameTimings;
use rigscope::viewer::Viewer;

/// `viewer`'s scene drawn as `portions`, in order, into `target`.
fn draw(
    gpu: &Gpu,
    renderer: &ViewRenderer,
    target: &Offscreen,
    viewer: &Viewer,
    portions: &[ScenePortion],
) -> RgbaImage {
    target
        .capture(
            gpu,
            &mut |encoder, targets, view| {
                for portion in portions {
                    renderer.encode_portion(
                        encoder,
                        targets,
                        view,
                        (&viewer.view.options, viewer.skinning_path()),
                        None,
                        portion,
                        None,
                    );
                }
            },
            None,
        )
        .expect("drawn")
}

/// Pixels that differ from the background (the top-left pixel) by more than 8 in a channel.
fn foreground(image: &RgbaImage) -> Vec<bool> {
    let background = *image.get_pixel(0, 0);
    image
        .pixels()
        .map(|p| p.0.iter().zip(background.0).any(|(a, b)| a.abs_diff(b) > 8))
        .collect()
}

/// The largest difference of any channel of any pixel.
fn largest_difference(a: &RgbaImage, b: &RgbaImage) -> u8 {
    a.as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

/// A posed viewer of `rig` (its clip at 0.3 s) with a renderer that has written the frame.
fn prepared(gpu: &Gpu, rig: rigscope::rig::Rig, aspect: f32) -> (Viewer, ViewRenderer) {
    let mut viewer = Viewer::new(rig, None);
    viewer.select_clip(Some(0));
    viewer.set_playing(false);
    viewer.seek(0.3);
    let mut renderer = ViewRenderer::offscreen(gpu);
    renderer.prepare_viewer(gpu, &mut viewer, aspect, &mut FrameTimings::default());
    (viewer, renderer)
}

#[test]
fn the_whole_scene_drawn_in_portions_equals_it_drawn_at_once() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let target = Offscreen::new(&gpu, 240, 180).unwrap();
    let (mut viewer, mut renderer) = prepared(&gpu, skinned_tube(6_000, 12), target.aspect());
    // The wireframe's lines are portions too; the grid and the skeleton come with the last.
    viewer.view.options.wireframe = true;
    viewer.view.options.skeleton.show = true;
    renderer.prepare_viewer(&gpu, &mut viewer, target.aspect(), &mut FrameTimings::default());
    let total = renderer.primitive_count(&viewer.view.options);
    assert!(total > 20_000, "{total} primitives");
    let whole = draw(&gpu, &renderer, &target, &viewer, &[ScenePortion::WHOLE]);
    let covered = foreground(&whole).iter().filter(|f| **f).count();
    assert!(covered > 2_000, "the tube covers {covered} pixels");
    for per_pass in [total / 3 + 1, 997] {
        let portions: Vec<ScenePortion> = ScenePortion::split(total, per_pass).collect();
        let image = draw(&gpu, &renderer, &target, &viewer, &portions);
        assert_eq!(
            largest_difference(&whole, &image),
            0,
            "{} portions of {per_pass} differ from one pass",
            portions.len()
        );
    }
    // A first portion alone, ended early, shows less: the portions do split the mesh.
    let mut half = ScenePortion::split(total, total / 2 + 1).next().unwrap();
    half.last = true;
    let part = draw(&gpu, &renderer, &target, &viewer, &[half]);
    let part_covered = foreground(&part).iter().filter(|f| **f).count();
    assert!(part_covered < covered * 9 / 10, "{part_covered} of {covered}");
    // The wireframe's edges, made when it was first shown, are drawn over the shading.
    viewer.view.options.wireframe = false;
    renderer.prepare_viewer(&gpu, &mut viewer, target.aspect(), &mut FrameTimings::default());
    assert!(renderer.primitive_count(&viewer.view.options) < total);
    let shaded = draw(&gpu, &renderer, &target, &viewer, &[ScenePortion::WHOLE]);
    let lined = whole.pixels().zip(shaded.pixels()).filter(|(a, b)| a != b).count();
    assert!(lined > 500, "the wireframe changed {lined} pixels");
}

#[test]
fn a_heavy_rigs_proxy_covers_what_the_whole_mesh_covers() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let rig = skinned_tube(200_000, 8);
    assert!(rig.triangle_count() >= PROXY_ABOVE_TRIANGLES);
    let target = Offscreen::new(&gpu, 200, 200).unwrap();
    let (mut viewer, mut renderer) = prepared(&gpu, rig, target.aspect());
    viewer.view.options.grid = false;
    viewer.view.options.skeleton.show = false;
    renderer.prepare_viewer(&gpu, &mut viewer, target.aspect(), &mut FrameTimings::default());
    assert!(!renderer.has_proxy(), "built only when asked for");
    renderer.build_proxy(&gpu, &viewer);
    assert!(renderer.has_proxy());
    let whole = foreground(&draw(&gpu, &renderer, &target, &viewer, &[ScenePortion::WHOLE]));
    let proxy = foreground(&draw(&gpu, &renderer, &target, &viewer, &[ScenePortion::PROXY]));
    let both = whole.iter().zip(&proxy).filter(|(a, b)| **a && **b).count();
    let either = whole.iter().zip(&proxy).filter(|(a, b)| **a || **b).count();
    let covered = whole.iter().filter(|f| **f).count();
    assert!(covered > 1_000, "the tube covers {covered} pixels");
    // Posed by the same palette: the silhouettes agree to within their coarser edge.
    let overlap = both as f64 / either as f64;
    eprintln!("proxy and whole overlap {overlap:.3} ({both} of {either} pixels)");
    assert!(
        overlap > 0.9,
        "proxy and whole overlap {overlap:.3} ({both} of {either} pixels)"
    );
}

#[test]
fn a_kept_image_shown_on_the_frame_equals_the_scene_drawn_into_it() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let target = Offscreen::new(&gpu, 160, 120).unwrap();
    let (viewer, renderer) = prepared(&gpu, skinned_tube(4_000, 6), target.aspect());
    let straight = draw(&gpu, &renderer, &target, &viewer, &[ScenePortion::WHOLE]);
    let mut images = SceneImages::new(&gpu.device, OFFSCREEN_FORMAT, 160, 120);
    assert!(images.fits(OFFSCREEN_FORMAT, 160, 120) && !images.fits(OFFSCREEN_FORMAT, 161, 120));
    // Drawn into the image being finished, then shown once finished.
    let kept = target
        .capture(
            &gpu,
            &mut |encoder, targets, view| {
                renderer.encode_portion(
                    encoder,
                    targets,
                    images.finishing(),
                    (&viewer.view.options, viewer.skinning_path()),
                    None,
                    &ScenePortion::WHOLE,
                    None,
                );
                images.finish();
                images.show(encoder, view);
            },
            None,
        )
        .expect("drawn");
    assert!(foreground(&straight).iter().filter(|f| **f).count() > 500);
    assert!(
        largest_difference(&straight, &kept) <= 1,
        "the kept image differs by {}",
        largest_difference(&straight, &kept)
    );
}

#[test]
fn the_window_way_ends_on_the_whole_scene_even_after_a_screenshot_cut_in() {
    use rigscope::draw::DetailedView;
    use rigscope::render::PixelRect;
    use rigscope::render::detail::SceneDraw;
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let target = Offscreen::new(&gpu, 200, 200).unwrap();
    let (mut viewer, mut renderer) = prepared(&gpu, skinned_tube(200_000, 8), target.aspect());
    viewer.view.options.grid = false;
    renderer.prepare_viewer(&gpu, &mut viewer, target.aspect(), &mut FrameTimings::default());
    let whole = draw(&gpu, &renderer, &target, &viewer, &[ScenePortion::WHOLE]);
    let total = renderer.primitive_count(&viewer.view.options);
    let mut detail = DetailedView::default();
    // As if the whole scene had been timed at 100 ms: heavy, five portions of 20 ms.
    detail.policy.measured(0.1, total);
    let viewport = PixelRect {
        x: 0,
        y: 0,
        width: 200,
        height: 200,
    };
    let mut frame = |whole: bool| {
        let mut drawn = SceneDraw::Keep;
        let image = target
            .capture(
                &gpu,
                &mut |encoder, targets, view| {
                    drawn = detail.encode(
                        &gpu,
                        &mut renderer,
                        encoder,
                        (targets, view, OFFSCREEN_FORMAT),
                        &viewer,
                        viewport,
                        whole,
                        None,
                    );
                },
                None,
            )
            .expect("drawn");
        (drawn, image)
    };
    let (first, proxy) = frame(false);
    assert_eq!(first, SceneDraw::Proxy);
    assert!(largest_difference(&proxy, &whole) > 8, "the proxy is coarser");
    let (second, shown) = frame(false);
    assert!(
        matches!(&second, SceneDraw::Refine(p) if p.first && !p.last),
        "{second:?}"
    );
    assert_eq!(
        largest_difference(&shown, &proxy),
        0,
        "the proxy stays on screen meanwhile"
    );
    // A screenshot draws the whole scene at once, in the middle of the portions.
    let (shot, screenshot) = frame(true);
    assert_eq!(shot, SceneDraw::Whole);
    assert_eq!(largest_difference(&screenshot, &whole), 0);
    // Then the frames start over and end on the whole scene, kept.
    let mut frames = 0;
    let kept = loop {
        let (drawn, image) = frame(false);
        if drawn == SceneDraw::Keep {
            break image;
        }
        frames += 1;
        assert!(frames < 20, "never finished");
    };
    assert!(frames >= 5, "proxy, then the five portions: {frames}");
    assert!(
        largest_difference(&kept, &whole) <= 1,
        "the kept image differs by {}",
        largest_difference(&kept, &whole)
    );
}

#[test]
fn a_heavy_comparison_shows_each_sides_proxy_while_the_view_moves_then_both_whole() {
    use rigscope::draw::DetailedView;
    use rigscope::draw::compare::{encode_comparison, encode_detailed, prepare_other_side};
    use rigscope::render::PixelRect;
    use rigscope::render::detail::SceneDraw;
    use rigscope::viewer::CompareLayout;
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let rig = skinned_tube(200_000, 8);
    assert!(rig.triangle_count() >= PROXY_ABOVE_TRIANGLES);
    let target = Offscreen::new(&gpu, 240, 160).unwrap();
    let viewport = PixelRect {
        x: 0,
        y: 0,
        width: 240,
        height: 160,
    };
    let aspect = rigscope::draw::compare::active_aspect;
    let (mut viewer, mut active) = prepared(&gpu, rig.clone(), target.aspect());
    viewer.view.options.grid = false;
    viewer.view.options.skeleton.show = false;
    viewer.compare_with(rig, None, CompareLayout::Side);
    let mut other = ViewRenderer::offscreen(&gpu);
    let mut detail = DetailedView::default();
    // Whatever the machine, the scene counts as heavy.
    detail.policy.measured(1.0, 1);
    let mut frame = |viewer: &mut Viewer, active: &mut ViewRenderer, other: &mut ViewRenderer| {
        active.prepare_viewer(&gpu, viewer, aspect(viewer, viewport), &mut FrameTimings::default());
        prepare_other_side(&gpu, other, viewer, viewport);
        let mut drawn = None;
        let image = target
            .capture(
                &gpu,
                &mut |encoder, targets, view| {
                    let sides = (&mut *active, &mut *other);
                    drawn = Some(encode_detailed(
                        &mut detail,
                        &gpu,
                        sides,
                        encoder,
                        (targets, view),
                        viewer,
                        viewport,
                        None,
                    ));
                },
                None,
            )
            .expect("drawn");
        let whole = target
            .capture(
                &gpu,
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
            )
            .expect("drawn whole");
        (
            drawn.expect("a frame"),
            image,
            whole,
            detail.status().map(str::to_owned),
        )
    };

    let (drawn, moving, whole, status) = frame(&mut viewer, &mut active, &mut other);
    assert_eq!(drawn, SceneDraw::Proxy, "the first frame of a heavy comparison");
    assert!(active.has_proxy() && other.has_proxy(), "both sides got their proxies");
    assert!(status.is_some_and(|s| s.contains("proxy")), "the status bar says so");
    assert!(
        largest_difference(&moving, &whole) > 0,
        "the proxy is not the whole mesh"
    );
    // Each half's proxy covers what its whole mesh covers.
    let (a, b) = (foreground(&moving), foreground(&whole));
    for half in [0..120u32, 120..240] {
        let pixels = |f: &Vec<bool>| -> Vec<bool> {
            (0..160u32)
                .flat_map(|y| half.clone().map(move |x| (y * 240 + x) as usize))
                .map(|i| f[i])
                .collect()
        };
        let (pa, pb) = (pixels(&a), pixels(&b));
        let both = pa.iter().zip(&pb).filter(|(x, y)| **x && **y).count();
        let either = pa.iter().zip(&pb).filter(|(x, y)| **x || **y).count();
        assert!(
            either > 200 && both as f64 / either as f64 > 0.85,
            "{half:?}: {both} of {either}"
        );
    }

    let (drawn, still, whole, status) = frame(&mut viewer, &mut active, &mut other);
    assert_eq!(drawn, SceneDraw::Whole, "held still: both sides whole");
    assert_eq!(largest_difference(&still, &whole), 0);
    assert_eq!(status, None);

    viewer.view.camera.yaw += 0.3;
    let (drawn, ..) = frame(&mut viewer, &mut active, &mut other);
    assert_eq!(drawn, SceneDraw::Proxy, "moved again");
}
