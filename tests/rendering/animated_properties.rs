//! Animated properties on screen: a base colour driven through KHR_animation_pointer draws the
//! colour its keys give at the time shown, and a node hidden by KHR_node_visibility draws
//! nothing; the same in the viewer's frame and in `rigscope render --time`.

use crate::common;

use common::gpu::{self, srgb8};
use common::property_scene::{BASE_COLOR_KEYS, QUAD_X, property_scene};
use glam::Vec3;
use rigscope::rig::load_slice;
use rigscope::screenshot::render_view;
use rigscope::viewer::Viewer;

/// Material 0's base colour at `t` (linear between its two keys), as 8-bit sRGB.
fn base_color_at(t: f32) -> [u8; 3] {
    let (t0, t1) = (f64::from(BASE_COLOR_KEYS[0].0), f64::from(BASE_COLOR_KEYS[1].0));
    let s = ((f64::from(t) - t0) / (t1 - t0)).clamp(0.0, 1.0);
    std::array::from_fn(|c| {
        let (a, b) = (f64::from(BASE_COLOR_KEYS[0].1[c]), f64::from(BASE_COLOR_KEYS[1].1[c]));
        srgb8((a + (b - a) * s) as f32)
    })
}

fn off(got: [u8; 4], want: [u8; 3]) -> u8 {
    (0..3).map(|c| got[c].abs_diff(want[c])).max().unwrap()
}

#[test]
fn an_animated_base_colour_and_a_hidden_node_draw_as_their_keys_say() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let (document, bin) = property_scene();
    let rig = load_slice(&common::gltf_with(document, &bin), None, "properties.gltf").unwrap();
    let mut viewer = Viewer::new(rig, None);
    gpu::look_along_minus_z(&mut viewer, 4.0);
    viewer.select_clip(Some(0));
    let (width, height) = (160, 80);
    for t in [0.0, 0.25, 0.5, 0.75, 0.9] {
        viewer.seek(t);
        let image = render_view(&gpu, &mut viewer, width, height).unwrap();
        let background = image.get_pixel(0, 0).0;
        let vp = viewer.view.camera.view_projection(width as f32 / height as f32);
        let pixel = |x: f32| {
            let ndc = vp.project_point3(Vec3::new(x, 0.0, 0.0));
            let (px, py) = ((ndc.x * 0.5 + 0.5) * width as f32, (0.5 - ndc.y * 0.5) * height as f32);
            image.get_pixel(px as u32, py as u32).0
        };
        let left = pixel(-QUAD_X);
        let want = base_color_at(t);
        assert!(
            off(left, want) <= 3,
            "at {t} s the left quad is {left:?}, its keys give {want:?}"
        );
        let right = pixel(QUAD_X);
        let hidden = t >= 0.5;
        let as_background = off(right, [background[0], background[1], background[2]]) <= 3;
        assert_eq!(
            as_background, hidden,
            "at {t} s the right quad is {right:?} (hidden: {hidden})"
        );
    }
}

/// The same scene through the command line: at 0.5 s the image holds the half-way colour and
/// nothing of the hidden node's green; at 0.25 s the green is there.
#[test]
fn render_time_draws_the_animated_properties() {
    let Some(_gpu) = gpu::gpu_or_skip() else { return };
    let (document, bin) = property_scene();
    let dir = common::temp_dir("animated-properties-render");
    let file = dir.join("properties.gltf");
    std::fs::write(&file, common::gltf_with(document, &bin)).unwrap();
    let has_color = |t: f32, want: [u8; 3]| {
        let out = dir.join(format!("at-{t}.png"));
        let (code, _, stderr) = common::run_rigscope(&[
            "render",
            file.to_str().unwrap(),
            "--time",
            &t.to_string(),
            "--size",
            "160x120",
            "--no-grid",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0), "{stderr}");
        let image = image::open(&out).unwrap().to_rgba8();
        image.pixels().any(|p| off(p.0, want) <= 3)
    };
    assert!(has_color(0.5, base_color_at(0.5)), "the half-way base colour is drawn");
    let green_only = |t| has_color(t, [0, 255, 0]);
    assert!(green_only(0.0), "the right quad is drawn before it is hidden");
    assert!(!green_only(0.75), "the hidden right quad draws nothing");
}
