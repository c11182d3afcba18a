//! `rigscope render` end to end: the binary renders offscreen, the PNG is compared pixel by
//! pixel with a stored golden image. `RIGSCOPE_BLESS=1 cargo test --release --test render`
//! rewrites the golden images (check them by eye before committing).

use crate::common;
use crate::common::gpu;

use crate::common::{different_pixels, differs};
use image::RgbaImage;
use rigscope::render::GpuError;
use std::path::{Path, PathBuf};
use std::process::Command;

const SIZE: &str = "320x240";
/// Golden images are compared at 4× on every adapter (`--msaa auto` is off on a CPU one).
const GOLDEN_MSAA: &str = "4x";

fn render(file: &str, clip: &str, time: f32, msaa: &str, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rigscope"))
        .args([
            "render",
            file,
            "--clip",
            clip,
            "--time",
            &time.to_string(),
            "--size",
            SIZE,
            "--no-grid",
            "--msaa",
            msaa,
            "--out",
        ])
        .arg(out)
        .output()
        .expect("the rigscope binary runs")
}

fn render_image(file: &str, clip: &str, time: f32, msaa: &str, name: &str) -> RgbaImage {
    let out = common::temp_dir("render").join(format!("{name}.png"));
    let output = render(file, clip, time, msaa, &out);
    assert!(
        output.status.success(),
        "rigscope render {file} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let image = image::open(&out).expect("the PNG opens").to_rgba8();
    let _ = std::fs::remove_file(&out);
    image
}

/// Pixels that differ from the background (the top-left pixel: the rig is framed with margin).
fn foreground_count(image: &RgbaImage) -> usize {
    let background = *image.get_pixel(0, 0);
    image.pixels().filter(|p| differs(p, &background)).count()
}

fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.png"))
}

fn check_golden(name: &str, image: &RgbaImage) {
    let path = golden_path(name);
    if std::env::var_os("RIGSCOPE_BLESS").is_some() {
        image.save(&path).expect("golden image written");
        eprintln!("blessed {}", path.display());
        return;
    }
    let golden = image::open(&path)
        .unwrap_or_else(|e| {
            panic!(
                "golden image {} missing ({e}); run with RIGSCOPE_BLESS=1 to create it",
                path.display()
            )
        })
        .to_rgba8();
    let total = (golden.width() * golden.height()) as usize;
    let (fg, golden_fg) = (foreground_count(image), foreground_count(&golden));
    println!(
        "{name}: {fg} foreground pixels (golden {golden_fg}), {} differ",
        different_pixels(image, &golden)
    );
    assert!(
        golden_fg > total / 20,
        "{name}: the golden image shows almost nothing ({golden_fg} pixels)"
    );
    assert!(
        fg.abs_diff(golden_fg) <= golden_fg / 50,
        "{name}: {fg} foreground pixels, golden has {golden_fg} (more than 2% apart)"
    );
    let changed = different_pixels(image, &golden);
    assert!(
        changed <= total / 100,
        "{name}: {changed} of {total} pixels differ from the golden image"
    );
}

#[test]
fn demo_rig_matches_golden_and_moves_over_time() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let early = render_image("demo", "Wave", 0.5, GOLDEN_MSAA, "demo-early");
    let late = render_image("demo", "Wave", 1.3, GOLDEN_MSAA, "demo-late");
    check_golden("demo_wave_0.5", &early);
    let changed = different_pixels(&early, &late);
    assert!(
        changed > (320 * 240) / 100,
        "frames 0.5 s and 1.3 s differ in only {changed} pixels"
    );
}

#[test]
fn fox_matches_golden_and_moves_over_time() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let Some(dir) = common::shared_rigs() else { return };
    let fox = dir.join("Fox.glb");
    let fox = fox.to_str().expect("utf-8 path");
    let walk = render_image(fox, "Walk", 0.3, GOLDEN_MSAA, "fox-walk");
    let survey = render_image(fox, "Survey", 1.5, GOLDEN_MSAA, "fox-survey");
    check_golden("fox_walk_0.3", &walk);
    let changed = different_pixels(&walk, &survey);
    assert!(
        changed > (320 * 240) / 100,
        "Walk 0.3 s and Survey 1.5 s differ in only {changed} pixels"
    );
}

#[test]
fn bad_arguments_fail_with_a_clear_message() {
    let out = std::env::temp_dir().join("rigscope-never-written.png");
    let missing = render("/nonexistent/rig.glb", "0", 0.0, "auto", &out);
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("cannot open /nonexistent/rig.glb"), "{stderr}");

    let no_clip = render("demo", "Dance", 0.0, "auto", &out);
    assert!(!no_clip.status.success());
    let stderr = String::from_utf8_lossy(&no_clip.stderr);
    assert!(
        stderr.contains("no clip 'Dance'") && stderr.contains("Wave, Twist"),
        "{stderr}"
    );
    assert!(!out.exists());

    let stderr = refused(&["render", "demo", "--camera", "0,89"], &out);
    assert!(stderr.contains("elevation 89° in '0,89' is beyond ±88.8°"), "{stderr}");
}

/// The binary's standard error for `args` with `--out out`, which must fail without writing
/// `out`.
fn refused(args: &[&str], out: &Path) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_rigscope"))
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("the rigscope binary runs");
    assert!(!output.status.success(), "{args:?} succeeded");
    assert!(!out.exists(), "{args:?} wrote {}", out.display());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn only_the_pipelines_a_frame_needs_are_built_and_they_are_cached_on_disk() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = rigscope::viewer::Viewer::new(common::load_demo(), None);
    let target = rigscope::render::Offscreen::new(&gpu, 64, 48).unwrap();
    let mut renderer = rigscope::draw::ViewRenderer::offscreen(&gpu);
    assert_eq!(renderer.scene.built_mesh_pipelines(), 0, "nothing is compiled up front");
    renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
    assert_eq!(
        renderer.scene.built_mesh_pipelines(),
        1,
        "the demo rig is one culled mesh"
    );
    viewer.view.options.wireframe = true;
    renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
    assert_eq!(
        renderer.scene.built_mesh_pipelines(),
        2,
        "the wireframe when it is asked for"
    );
    viewer.view.options.mode = rigscope::render::ViewMode::Weights;
    renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
    assert_eq!(
        renderer.scene.built_mesh_pipelines(),
        3,
        "the mesh again for the weights view, whose code it alone holds; one wireframe serves every view"
    );
    viewer.set_skinning(rigscope::skin::SkinningPath::Gpu, rigscope::skin::SkinningMethod::Dqs);
    renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
    assert_eq!(
        renderer.scene.built_mesh_pipelines(),
        5,
        "the mesh and the wireframe again for dual quaternions, whose code only their pipelines hold"
    );
    viewer.set_skinning(rigscope::skin::SkinningPath::Cpu, rigscope::skin::SkinningMethod::Dqs);
    renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
    assert_eq!(
        renderer.scene.built_mesh_pipelines(),
        7,
        "and for vertices skinned on the CPU, pipelines with no skinning code"
    );

    // The binary keeps the compiled pipelines in the cache folder, when the adapter can.
    if !gpu.adapter.features().contains(wgpu::Features::PIPELINE_CACHE) {
        return;
    }
    let cache = common::temp_dir("pipeline-cache");
    let out = cache.join("demo.png");
    let status = Command::new(env!("CARGO_BIN_EXE_rigscope"))
        .args(["render", "demo", "--size", "64x48", "--out"])
        .arg(&out)
        .env(rigscope::render::pipeline_cache::CACHE_DIR_ENV, &cache)
        .status()
        .expect("the rigscope binary runs");
    assert!(status.success());
    let files: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("wgpu_pipeline_cache"))
        .collect();
    assert_eq!(files.len(), 1, "one cache file for this adapter: {files:?}");
    std::fs::remove_dir_all(&cache).unwrap();
}

#[test]
fn an_offscreen_size_beyond_the_device_limits_is_refused_by_kind() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let limit = gpu.device.limits().max_texture_dimension_2d;
    for (w, h) in [(0, 48), (64, limit + 1)] {
        let Err(e) = rigscope::render::Offscreen::new(&gpu, w, h) else {
            panic!("{w}x{h} was accepted")
        };
        assert!(
            matches!(e, GpuError::ImageSize { width, height, max } if (width, height, max) == (w, h, limit)),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!("image size {w}x{h} is outside 1..={limit} pixels per side")
        );
    }
}

#[test]
fn the_cpu_path_uploads_its_vertices_only_after_skinning_them_again() {
    use rigscope::skin::{SkinningMethod, SkinningPath};
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = rigscope::viewer::Viewer::new(common::load_demo(), None);
    viewer.select_clip(Some(0));
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    let format = rigscope::render::offscreen::OFFSCREEN_FORMAT;
    let scene = rigscope::render::SceneRenderer::new(&gpu.device, &gpu.queue, format, 1, None);
    let mut rig_gpu = scene.upload_rig(&gpu.device, &gpu.queue, viewer.rig());
    let skinned_vertices: usize = viewer
        .rig()
        .instances
        .iter()
        .filter(|instance| instance.skin.is_some())
        .flat_map(|instance| &viewer.rig().meshes[instance.mesh].primitives)
        .map(|primitive| primitive.positions.len())
        .sum();
    assert!(skinned_vertices > 0);
    let all_vertices = (skinned_vertices * 2 * std::mem::size_of::<glam::Vec3>()) as u64;
    let mut frame = |viewer: &mut rigscope::viewer::Viewer| {
        rig_gpu.ensure_buffers(&gpu.device, viewer.rig(), &viewer.view.options, viewer.skinning_path());
        viewer.prepare_frame();
        let state = viewer.frame_state(1.0);
        scene.write_frame(&gpu.queue, &mut rig_gpu, &state).vertex_bytes
    };
    assert_eq!(frame(&mut viewer), all_vertices, "the first frame");
    assert_eq!(frame(&mut viewer), 0, "nothing changed");
    viewer.seek(0.4);
    assert_eq!(frame(&mut viewer), all_vertices, "a new pose");
    assert_eq!(frame(&mut viewer), 0, "nothing changed");
    // Posed again on the GPU path: the CPU path skins and uploads when it comes back.
    viewer.set_skinning(SkinningPath::Gpu, SkinningMethod::Lbs);
    viewer.seek(0.8);
    assert_eq!(frame(&mut viewer), 0, "the GPU path uploads palettes only");
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    assert_eq!(frame(&mut viewer), all_vertices, "back on the CPU path");
    viewer.set_skinning(SkinningPath::Gpu, SkinningMethod::Lbs);
    frame(&mut viewer);
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    assert_eq!(
        frame(&mut viewer),
        0,
        "back on the CPU path in the same pose: still current"
    );
}

#[test]
fn anti_aliasing_auto_is_off_on_a_cpu_adapter_and_counts_are_supported() {
    use rigscope::render::Msaa;
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let format = rigscope::render::offscreen::OFFSCREEN_FORMAT;
    let cpu = gpu.adapter.get_info().device_type == wgpu::DeviceType::Cpu;
    assert_eq!(Msaa::Auto.samples(&gpu.adapter, format), if cpu { 1 } else { 4 });
    assert_eq!(Msaa::Off.samples(&gpu.adapter, format), 1);
    // WebGPU guarantees 4× for renderable formats; 2× where the adapter has it.
    assert_eq!(Msaa::X4.samples(&gpu.adapter, format), 4);
    assert!([1, 2].contains(&Msaa::X2.samples(&gpu.adapter, format)));
    // Without multisampling the pass draws into the output itself: the same picture, but for
    // the edges that 4× smooths.
    let mut viewer = rigscope::viewer::Viewer::new(common::load_demo(), None);
    // One-pixel grid lines are all edge; the mesh is what is compared.
    viewer.view.options.grid = false;
    // Under the directional light the tail's far side is dark, near the background, and its edge
    // hardly changes with anti-aliasing; the environment lights both sides, so that both edges of
    // a tail a dozen pixels wide change (291 of 1571 pixels), past this test's tenth.
    viewer.view.options.light = rigscope::render::environment::Lighting::Directional;
    let (width, height) = (160, 120);
    let smooth = rigscope::screenshot::render_view(&gpu, &mut viewer, width, height).unwrap();
    let target = rigscope::render::Offscreen::with_samples(&gpu, width, height, 1).unwrap();
    let mut renderer = rigscope::draw::ViewRenderer::new(&gpu, format, 1);
    let aliased = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
    let drawn = foreground_count(&aliased);
    let differing = different_pixels(&smooth, &aliased);
    println!("1× against 4×: {drawn} foreground pixels, {differing} differ");
    assert!(drawn > 500, "the rig is drawn without multisampling: {drawn}");
    let smooth_drawn = foreground_count(&smooth);
    assert!(
        smooth_drawn.abs_diff(drawn) < drawn / 10,
        "the same silhouette: {smooth_drawn} against {drawn} pixels"
    );
    assert!(differing < drawn / 10, "only edges differ: {differing} of {drawn}");
}

#[test]
fn render_msaa_auto_follows_the_adapter_and_only_edges_change() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let cpu = gpu.adapter.get_info().device_type == wgpu::DeviceType::Cpu;
    let off = render_image("demo", "Wave", 0.5, "off", "msaa-off");
    let four = render_image("demo", "Wave", 0.5, "4x", "msaa-4x");
    let auto = render_image("demo", "Wave", 0.5, "auto", "msaa-auto");
    let same_as = if cpu { &off } else { &four };
    let exact = auto.pixels().zip(same_as.pixels()).filter(|(a, b)| a != b).count();
    assert_eq!(
        exact,
        0,
        "auto draws as {} on this adapter",
        if cpu { "off" } else { "4x" }
    );
    let drawn = foreground_count(&off);
    let differing = different_pixels(&off, &four);
    println!("--msaa off against 4x: {drawn} foreground pixels, {differing} differ");
    assert!(drawn > 500, "the rig is drawn without multisampling: {drawn}");
    assert!(differing > 0, "4x smooths some edge");
    assert!(differing < drawn / 10, "only edges differ: {differing} of {drawn}");
    let out = common::temp_dir("render").join("msaa-bad.png");
    let stderr = refused(&["render", "demo", "--msaa", "3x"], &out);
    assert!(stderr.contains("3x") && stderr.contains("4x"), "{stderr}");
}

#[test]
fn headless_commands_leave_out_the_display_device_select_layer() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let folders = [
        "/usr/share/vulkan/implicit_layer.d",
        "/etc/vulkan/implicit_layer.d",
        "/usr/local/share/vulkan/implicit_layer.d",
    ];
    let installed = folders
        .iter()
        .filter_map(|folder| std::fs::read_dir(folder).ok())
        .flatten()
        .filter_map(Result::ok)
        .any(|entry| entry.file_name().to_string_lossy().contains("device_select"));
    if !installed {
        return;
    }
    let out = common::temp_dir("render").join("device-select.png");
    let layer_loaded = |env: &[(&str, &str)]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rigscope"));
        command.args(["render", "demo", "--size", "64x48", "--out"]).arg(&out);
        for (name, _) in std::env::vars() {
            if name.starts_with("MESA_VK_DEVICE_SELECT") || name == "NODEVICE_SELECT" {
                command.env_remove(name);
            }
        }
        let output = command
            .env("VK_LOADER_DEBUG", "layer")
            .envs(env.iter().copied())
            .output()
            .expect("the rigscope binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        stderr.contains("Insert instance layer \"VK_LAYER_MESA_device_select\"")
    };
    assert!(!layer_loaded(&[]), "render loads the device-select layer");
    assert!(
        layer_loaded(&[("MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE", "1")]),
        "a device chosen through the layer keeps it (and the loader reports loading it)"
    );
}

#[test]
fn render_audit_needs_the_whole_window() {
    let out = common::temp_dir("render").join("audit.png");
    let stderr = refused(&["render", "demo", "--audit"], &out);
    assert!(stderr.contains("--ui"), "{stderr}");
}

#[test]
fn no_skeleton_leaves_the_overlay_out_and_contradicting_flags_are_refused() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let dir = common::temp_dir("no-skeleton");
    let run = |extra: &[&str], name: &str| {
        let out = dir.join(format!("{name}.png"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_rigscope"));
        command.args([
            "render",
            "demo",
            "--time",
            "0.5",
            "--size",
            SIZE,
            "--no-grid",
            "--msaa",
            GOLDEN_MSAA,
        ]);
        let output = command
            .args(extra)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("the rigscope binary runs");
        (output, out)
    };
    let (output, with) = run(&[], "with");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let (output, without) = run(&["--no-skeleton"], "without");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let (with, without) = (
        image::open(with).unwrap().to_rgba8(),
        image::open(without).unwrap().to_rgba8(),
    );
    // The overlay draws over the mesh (no depth test by default): its bones and joints.
    let overlay = different_pixels(&with, &without);
    assert!(overlay > 40, "{overlay} pixels of skeleton");
    assert_eq!(
        foreground_count(&with),
        foreground_count(&without),
        "the demo's bones lie inside its mesh: the silhouette is the same"
    );
    let (output, _) = run(&["--skeleton", "--no-skeleton"], "both");
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
