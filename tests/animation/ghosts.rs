//! Onion skin: ghosts are the poses at the moments around the current time, evaluated without
//! allocating once shown, and drawn where a plain render at their moment has the mesh, in their
//! tint, the same on both skinning paths.

use crate::common;
use crate::common::gpu;

use egui_kittest::kittest::Queryable;
use image::RgbaImage;
use rigscope::anim::ghosts::ghost_tint;
use rigscope::anim::{FRAME_SECONDS, GhostOptions, PoseBuffers};
use rigscope::render::material::GHOST_TINT_SHARE;
use rigscope::skin::{SkinningMethod, SkinningPath};
use rigscope::viewer::Viewer;

fn ghosts(count: u32, every: u32) -> GhostOptions {
    GhostOptions {
        show: true,
        count,
        every,
        skeleton: false,
    }
}

/// The demo rig's Wave clip, paused at `time`, its whole mesh in view.
fn demo_at(time: f32) -> Viewer {
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.view.options.grid = false;
    viewer.view.options.skeleton.show = false;
    viewer.set_playing(false);
    viewer.seek(time);
    viewer
}

#[test]
fn ghost_poses_are_the_clip_at_whole_frames_around_the_current_time() {
    let mut viewer = demo_at(1.0);
    viewer.view.options.ghosts = ghosts(2, 4);
    let rig = viewer.rig().clone();
    viewer.prepare_frame();
    let state = viewer.frame_state(1.0);
    let offsets: Vec<i32> = state.ghosts.iter().map(|g| g.offset).collect();
    assert_eq!(offsets, [-2, 2, -1, 1], "farthest first, past before future");
    let mut reference = PoseBuffers::new(&rig);
    for ghost in state.ghosts {
        // Computed apart from the options: 4 frames of 1/30 s per ghost.
        let time = 1.0 + f64::from(ghost.offset) * 4.0 / 30.0;
        assert!(
            (f64::from(ghost.time) - time).abs() < 1e-6,
            "{} against {time}",
            ghost.time
        );
        reference.evaluate(&rig, Some(0), time as f32);
        assert_eq!(ghost.pose.worlds, reference.worlds, "ghost {}", ghost.offset);
        assert_eq!(ghost.pose.palettes, reference.palettes, "ghost {}", ghost.offset);
    }
    // The clip loops: near its start the past ghosts come from its end.
    viewer.seek(0.1);
    viewer.prepare_frame();
    let state = viewer.frame_state(1.0);
    let farthest_past = state.ghosts.iter().find(|g| g.offset == -2).unwrap();
    let wrapped = 2.0 + 0.1 - 8.0 * f64::from(FRAME_SECONDS);
    assert!((f64::from(farthest_past.time) - wrapped).abs() < 1e-5);
    // Off: none.
    viewer.view.options.ghosts.show = false;
    viewer.prepare_frame();
    assert!(viewer.frame_state(1.0).ghosts.is_empty());
}

#[test]
fn eight_ghosts_each_side_cost_no_allocation_per_frame_after_the_first() {
    let mut viewer = demo_at(0.0);
    viewer.set_playing(true);
    viewer.view.options.ghosts = ghosts(8, 2);
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs] {
        viewer.set_skinning(SkinningPath::Cpu, method);
        let frame = |viewer: &mut Viewer| {
            viewer.advance(1.0 / 60.0);
            viewer.prepare_frame();
            viewer.frame_state(1.0).ghosts.len()
        };
        assert_eq!(frame(&mut viewer), 16);
        let (shown, allocated) = common::counting::watch(|| (0..100).map(|_| frame(&mut viewer)).min());
        assert_eq!(shown, Some(16));
        assert_eq!(allocated.count, 0, "{method:?}: 100 frames with 16 ghosts allocated");
    }
}

/// Pixels that differ from `background` (by more than antialiasing noise in a flat area).
fn covered(image: &RgbaImage, background: [u8; 4]) -> Vec<bool> {
    image
        .pixels()
        .map(|p| p.0.iter().zip(background).take(3).any(|(a, b)| a.abs_diff(b) > 12))
        .collect()
}

/// `mask` grown by `radius` pixels.
fn grown(mask: &[bool], width: u32, radius: i32) -> Vec<bool> {
    let (w, h) = (width as i32, (mask.len() / width as usize) as i32);
    (0..mask.len())
        .map(|i| {
            let (x, y) = ((i as i32) % w, (i as i32) / w);
            (-radius..=radius).any(|dy| {
                (-radius..=radius).any(|dx| {
                    let (px, py) = (x + dx, y + dy);
                    px >= 0 && py >= 0 && px < w && py < h && mask[(py * w + px) as usize]
                })
            })
        })
        .collect()
}

fn render(gpu: &rigscope::render::Gpu, viewer: &mut Viewer) -> RgbaImage {
    viewer.mark_dirty();
    rigscope::screenshot::render_view(gpu, viewer, SIDE, SIDE).unwrap()
}

const SIDE: u32 = 240;

/// The color a ghost gives a pixel the plain render at its moment colors `plain`, over
/// `background` (8-bit sRGB), blended in linear light as the render target does.
fn ghost_color(plain: [u8; 4], background: [u8; 4], offset: i32, per_side: u32) -> [f32; 3] {
    let tint = ghost_tint(offset, per_side);
    let mut out = [0.0; 3];
    for c in 0..3 {
        let tinted = gpu::linear(plain[c]) * (1.0 - GHOST_TINT_SHARE) + tint[c] * GHOST_TINT_SHARE;
        let over = gpu::linear(background[c]) * (1.0 - tint.w) + tinted * tint.w;
        out[c] = f32::from(gpu::srgb8(over));
    }
    out
}

#[test]
fn a_ghost_is_drawn_where_the_clip_has_the_mesh_at_its_moment_in_its_tint() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let (time, every) = (0.5, 9);
    let spacing = every as f32 * FRAME_SECONDS;
    let mut viewer = demo_at(time);
    let current = render(&gpu, &mut viewer);
    let background = current.get_pixel(0, 0).0;
    viewer.seek(time - spacing);
    let past = render(&gpu, &mut viewer);
    viewer.seek(time + spacing);
    let future = render(&gpu, &mut viewer);
    viewer.seek(time);
    viewer.view.options.ghosts = ghosts(1, every);
    let ghosted = render(&gpu, &mut viewer);
    let [current_mask, past_mask, future_mask] = [&current, &past, &future].map(|i| covered(i, background));
    let changed: Vec<bool> = ghosted
        .pixels()
        .zip(current.pixels())
        .map(|(a, b)| a.0.iter().zip(b.0).take(3).any(|(x, y)| x.abs_diff(y) > 12))
        .collect();
    // Every changed pixel is one a render at a ghost's moment covers (or borders).
    let either: Vec<bool> = past_mask.iter().zip(&future_mask).map(|(a, b)| *a || *b).collect();
    let near_either = grown(&either, SIDE, 1);
    let stray = changed.iter().zip(&near_either).filter(|(c, n)| **c && !**n).count();
    assert_eq!(stray, 0, "pixels changed where no ghost's moment has the mesh");
    // Where only one ghost's moment has the mesh, away from every edge, the ghost is that
    // render's color pulled towards its tint, over the background.
    let near_current = grown(&current_mask, SIDE, 2);
    for (offset, own, other, plain) in [
        (-1, &past_mask, &future_mask, &past),
        (1, &future_mask, &past_mask, &future),
    ] {
        let inside: Vec<bool> = own.iter().map(|c| !c).collect();
        let near_outside = grown(&inside, SIDE, 2);
        let near_other = grown(other, SIDE, 2);
        let mut checked = 0;
        for i in 0..own.len() {
            if !own[i] || near_outside[i] || near_current[i] || near_other[i] {
                continue;
            }
            let (x, y) = (i as u32 % SIDE, i as u32 / SIDE);
            let expected = ghost_color(plain.get_pixel(x, y).0, background, offset, 1);
            let got = ghosted.get_pixel(x, y).0;
            for c in 0..3 {
                assert!(
                    (f32::from(got[c]) - expected[c]).abs() <= 3.0,
                    "ghost {offset} at ({x}, {y}): {got:?} against {expected:?}"
                );
            }
            // The tint shows: blue before, orange after.
            assert_eq!(got[2] > got[0], offset < 0, "ghost {offset} at ({x}, {y}): {got:?}");
            checked += 1;
        }
        assert!(
            checked > 100,
            "ghost {offset}: only {checked} pixels of its own to check"
        );
    }
}

#[test]
fn ghosts_skinned_on_the_gpu_and_on_the_cpu_draw_the_same_picture() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs] {
        let mut viewer = demo_at(0.7);
        viewer.view.options.ghosts = ghosts(3, 4);
        viewer.set_skinning(SkinningPath::Gpu, method);
        let on_gpu = render(&gpu, &mut viewer);
        viewer.set_skinning(SkinningPath::Cpu, method);
        let on_cpu = render(&gpu, &mut viewer);
        let plain = {
            viewer.view.options.ghosts.show = false;
            render(&gpu, &mut viewer)
        };
        let differing = |a: &RgbaImage, b: &RgbaImage, by: u8| {
            a.pixels()
                .zip(b.pixels())
                .filter(|(p, q)| p.0.iter().zip(q.0).any(|(x, y)| x.abs_diff(y) > by))
                .count()
        };
        let ghost_pixels = differing(&on_gpu, &plain, 12);
        assert!(
            ghost_pixels > 2000,
            "{method:?}: the ghosts cover {ghost_pixels} pixels"
        );
        // The plain pictures of the two paths agree to the pixel; with ghosts, where a ghost
        // near the tail's root lies on the current surface, the last bits of the skinned
        // positions decide their depth test: about one pixel in two hundred of the ghosts'.
        viewer.set_skinning(SkinningPath::Gpu, method);
        let plain_on_gpu = render(&gpu, &mut viewer);
        assert_eq!(
            differing(&plain_on_gpu, &plain, 6),
            0,
            "{method:?}: the plain pictures differ"
        );
        let apart = differing(&on_gpu, &on_cpu, 6);
        assert!(
            apart * 100 <= ghost_pixels,
            "{method:?}: {apart} pixels of {ghost_pixels} differ between the paths"
        );
    }
}

#[test]
fn rigscope_render_draws_ghosts_and_refuses_bad_counts() {
    let dir = common::temp_dir("ghosts-render");
    let out = dir.join("ghosts.png");
    let render = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_rigscope"))
            .args(["render", "demo", "--time", "0.5", "--size", "160x120", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    for bad in ["0", "9", "2,0", "two"] {
        let output = render(&["--ghosts", bad]);
        assert_eq!(output.status.code(), Some(2), "--ghosts {bad}");
        assert!(String::from_utf8_lossy(&output.stderr).contains(bad));
    }
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let plain = render(&[]);
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
    let plain = image::open(&out).unwrap().to_rgba8();
    for extra in [&["--ghosts", "2,6"][..], &["--ghosts", "2,6", "--ghost-skeletons"]] {
        let output = render(extra);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let ghosted = image::open(&out).unwrap().to_rgba8();
        let blue = ghosted
            .pixels()
            .zip(plain.pixels())
            .filter(|(g, p)| g.0 != p.0 && g.0[2] > g.0[0] + 20)
            .count();
        assert!(
            blue > 20,
            "{extra:?}: {blue} bluish pixels where the plain render has none"
        );
    }
}

#[test]
fn the_layers_panel_turns_the_onion_skin_on_and_its_options_are_kept_in_the_settings() {
    let mut harness = egui_kittest::Harness::builder()
        .with_size(egui::vec2(500.0, 1000.0))
        .build_ui_state(
            |ui, viewer: &mut Viewer| rigscope::ui::layers::layers_panel(ui, viewer),
            demo_at(0.5),
        );
    harness.get_by_label("Onion skin").click();
    harness.run();
    harness.get_by_label("Ghosts as skeletons").click();
    harness.run();
    let options = harness.state().view.options.ghosts;
    assert!(options.show && options.skeleton, "{options:?}");
    harness.state_mut().prepare_frame();
    assert_eq!(harness.state_mut().frame_state(1.0).ghosts.len(), 6);
    // Kept in the settings file with the view options, and left out while at their defaults.
    let dir = common::temp_dir("ghost-settings");
    let file = dir.join(rigscope::settings::FILE_NAME);
    let mut settings = rigscope::settings::Settings::default();
    settings.save_to(&file).unwrap();
    assert!(!std::fs::read_to_string(&file).unwrap().contains("ghosts"));
    settings.view.ghosts = GhostOptions { count: 5, ..options };
    settings.save_to(&file).unwrap();
    assert_eq!(
        rigscope::settings::Settings::load_from(&file).view.ghosts,
        settings.view.ghosts
    );
}
