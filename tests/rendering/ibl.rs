//! Image-based light: the split-sum BRDF table and the prefiltered cubes the GPU computes,
//! read back and compared with the f64 integrals of `render::ibl`; the shaded view under an
//! environment against the split sum by hand; `render --environment` and `--light`.

use crate::common;
use crate::common::gpu;

use glam::{DVec3, Quat, Vec3};
use rigscope::render::environment::{Environment, Equirect, Lighting};
use rigscope::render::ibl::{self, IblPipelines, LUT_SIZE, SPECULAR_LEVELS};
use rigscope::render::pbr::{self, Surface, ToneOptions, Tonemap};
use rigscope::rig::{Material, Mesh, MeshInstance, Node, Primitive, Rig, Trs};
use rigscope::screenshot::render_view;
use rigscope::viewer::Viewer;

#[test]
fn the_gpu_brdf_table_is_the_split_sum_integral() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let pipelines = IblPipelines::new(&gpu.device, None);
    let table = pipelines.brdf_lut(&gpu.device, &gpu.queue);
    let values = ibl::read_brdf_lut(&gpu, &table).unwrap();
    let mut worst = 0.0f64;
    // Texel centres across n·v (grazing to face-on) and roughness (smooth to rough).
    for i in [2, 12, 25, 40, 55, 63] {
        for j in [4, 16, 32, 48, 63] {
            let n_dot_v = (f64::from(i) + 0.5) / f64::from(LUT_SIZE);
            let roughness = (f64::from(j) + 0.5) / f64::from(LUT_SIZE);
            let (a, b) = ibl::split_sum(n_dot_v, roughness, 800);
            let [ga, gb] = values[(j * LUT_SIZE + i) as usize];
            let off = (f64::from(ga) - a).abs().max((f64::from(gb) - b).abs());
            worst = worst.max(off);
            // Hammersley's 1024 points estimate each integral to a few thousandths (measured:
            // 6e-3 at most, at grazing n·v where the horizon cuts the lobe; 4e-3 from n·v 0.2
            // up); half floats keep 11 bits. With 512 points it was 1.2e-2.
            assert!(
                off < 7.5e-3,
                "n·v {n_dot_v:.3}, roughness {roughness:.3}: GPU ({ga}, {gb}), f64 ({a:.5}, {b:.5})"
            );
        }
    }
    println!("BRDF table: largest difference from the f64 split sum {worst:.2e}");
}

/// The 26 directions to the faces, edges and corners of a cube: every face of the cube map
/// and the seams between them.
fn directions() -> Vec<Vec3> {
    let mut out = Vec::new();
    for x in -1..=1 {
        for y in -1..=1 {
            for z in -1..=1 {
                if (x, y, z) != (0, 0, 0) {
                    out.push(Vec3::new(x as f32, y as f32, z as f32).normalize());
                }
            }
        }
    }
    out
}

#[test]
fn a_constant_environment_prefilters_to_the_same_constant_in_every_level() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let pipelines = IblPipelines::new(&gpu.device, None);
    let colour = Vec3::new(0.3, 0.6, 1.2);
    let maps = pipelines.prefilter(&gpu.device, &gpu.queue, &Equirect::constant(colour.to_array()));
    let mut worst = 0.0f32;
    for level in 0..SPECULAR_LEVELS {
        let lookups: Vec<(Vec3, f32)> = directions().into_iter().map(|d| (d, level as f32)).collect();
        for got in pipelines.sample_cube(&gpu, &maps.specular, &lookups).unwrap() {
            let off = ((got - colour) / colour).abs().max_element();
            worst = worst.max(off);
            assert!(off < 0.01, "specular level {level}: {got} for {colour}");
        }
    }
    let lookups: Vec<(Vec3, f32)> = directions().into_iter().map(|d| (d, 0.0)).collect();
    for got in pipelines.sample_cube(&gpu, &maps.irradiance, &lookups).unwrap() {
        let off = ((got - colour) / colour).abs().max_element();
        worst = worst.max(off);
        assert!(off < 0.01, "irradiance: {got} for {colour}");
    }
    println!("constant environment: largest relative difference {worst:.2e}");
}

#[test]
fn irradiance_is_the_cosine_weighted_integral_of_the_environment() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let pipelines = IblPipelines::new(&gpu.device, None);
    // A sky bright above the horizon only; a cap around +X; the half of the panorama ahead
    // (−Z), twice as bright: each places light on different faces, so a face put the wrong way
    // round or the panorama turned shows.
    type Radiance = fn(DVec3) -> f64;
    let cases: [(&str, Radiance); 3] = [
        ("sky above", |d| if d.y > 0.0 { 1.0 } else { 0.0 }),
        ("cap around +X", |d| if d.x > 0.5 { 1.0 } else { 0.0 }),
        ("ahead (−Z)", |d| if d.z < 0.0 { 2.0 } else { 0.0 }),
    ];
    let normals = [
        Vec3::Y,
        Vec3::NEG_Y,
        Vec3::X,
        Vec3::NEG_X,
        Vec3::Z,
        Vec3::NEG_Z,
        Vec3::new(0.5, 0.8, -0.3).normalize(),
        Vec3::new(-0.7, -0.2, 0.6).normalize(),
    ];
    let mut worst = 0.0f64;
    for (name, radiance) in cases {
        let map = Equirect::painted(512, 256, 2, |d| DVec3::splat(radiance(d)));
        let maps = pipelines.prefilter(&gpu.device, &gpu.queue, &map);
        let lookups: Vec<(Vec3, f32)> = normals.iter().map(|&n| (n, 0.0)).collect();
        let got = pipelines.sample_cube(&gpu, &maps.irradiance, &lookups).unwrap();
        for (n, got) in normals.iter().zip(got) {
            let want = ibl::cosine_mean(n.as_dvec3(), radiance, 600);
            let off = (f64::from(got.x) - want).abs();
            worst = worst.max(off / radiance(DVec3::Y).max(radiance(DVec3::X)).max(1.0));
            println!("{name}: irradiance/π at {n}: GPU {:.4}, f64 {want:.4}", got.x);
            // The edge of the bright region is blurred by the coarse mips the sparse samples
            // read (within a few percent of the full scale) and by the 16-texel cube's
            // interpolation; a face mapped wrongly is off by tenths.
            // (Measured: 1.1% of the full scale at most.)
            let full_scale = if name.starts_with("ahead") { 2.0 } else { 1.0 };
            assert!(off < 0.025 * full_scale, "{name}: at {n}, GPU {}, f64 {want}", got.x);
        }
        // The sharpest level sees the environment itself.
        let mirror = pipelines
            .sample_cube(&gpu, &maps.specular, &[(Vec3::new(0.3, 0.9, -0.3).normalize(), 0.0)])
            .unwrap();
        let d = Vec3::new(0.3, 0.9, -0.3).normalize().as_dvec3();
        assert!(
            (f64::from(mirror[0].x) - radiance(d)).abs() < 0.02,
            "{name}: mirror {}",
            mirror[0]
        );
    }
    println!("irradiance: largest difference from the f64 integral {worst:.3} of full scale");
}

/// A unit quad facing +Z, metallic-roughness material 0.
fn quad() -> Primitive {
    gpu::unit_quad(0)
}

#[test]
fn a_surface_under_a_constant_environment_shades_as_the_split_sum_says() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let light = Vec3::new(0.7, 0.75, 0.8);
    let cases = [
        (Vec3::new(0.8, 0.3, 0.2), 0.0, 0.5, 0.0),
        (Vec3::new(1.0, 0.78, 0.34), 1.0, 0.3, 0.9),
        (Vec3::new(0.6, 0.6, 0.65), 0.5, 0.8, 1.2),
        (Vec3::new(0.9, 0.9, 0.9), 0.0, 0.15, -1.2),
    ];
    let tone = ToneOptions {
        curve: Tonemap::None,
        exposure: -0.5,
    };
    let size = (160u32, 160u32);
    let mut worst = 0;
    for (base, metallic, roughness, turn) in cases {
        // One quad, turned about Y by `turn` radians: seen at n·v = cos(turn) or so.
        let rotation = Quat::from_rotation_y(turn);
        let rig = Rig {
            name: "quad".into(),
            nodes: vec![Node {
                name: "quad".into(),
                parent: None,
                rest: Trs {
                    rotation,
                    ..Trs::IDENTITY
                },
            }],
            meshes: vec![Mesh {
                name: "quad".into(),
                primitives: vec![quad()],
            }],
            instances: vec![MeshInstance {
                node: 0,
                mesh: 0,
                skin: None,
            }],
            materials: vec![Material {
                base_color: base.extend(1.0),
                metallic,
                roughness,
                ..Material::default()
            }],
            ..Rig::default()
        };
        let mut viewer = Viewer::new(rig, None);
        gpu::look_along_minus_z(&mut viewer, 3.0);
        viewer.view.options.tone = tone;
        viewer.environment = Environment::from_map("grey", Equirect::constant(light.to_array()));
        let image = render_view(&gpu, &mut viewer, size.0, size.1).unwrap();
        let n = (rotation * Vec3::Z).as_dvec3();
        let surface = Surface {
            base: base.as_dvec3(),
            metallic: f64::from(metallic),
            roughness: f64::from(roughness),
            occlusion: 1.0,
            emissive: DVec3::ZERO,
            dielectric: pbr::DielectricLayer::PLAIN,
        };
        let eye = viewer.view.camera.eye().as_dvec3();
        let aspect = size.0 as f32 / size.1 as f32;
        for (px, py) in [(80, 80), (70, 75), (90, 88), (76, 90)] {
            // Where the pixel's ray meets the quad's plane (through the origin).
            let x = (px as f32 + 0.5) / size.0 as f32 * 2.0 - 1.0;
            let y = 1.0 - (py as f32 + 0.5) / size.1 as f32 * 2.0;
            let (origin, direction) = viewer.view.camera.ray(x, y, aspect);
            let (origin, direction) = (origin.as_dvec3(), direction.as_dvec3());
            let p = origin + direction * (-origin.dot(n) / direction.dot(n));
            let n_dot_v = n.dot((eye - p).normalize()).clamp(0.0, 1.0);
            let ab = ibl::split_sum(n_dot_v, surface.roughness.max(f64::from(pbr::MIN_ROUGHNESS)), 400);
            let l = light.as_dvec3();
            let shown = pbr::tone_map(tone, pbr::ibl_radiance(&surface, l, l, ab));
            let got = image.get_pixel(px, py).0;
            let off = (0..3)
                .map(|c| got[c].abs_diff(gpu::srgb8(shown[c] as f32)))
                .max()
                .unwrap();
            worst = worst.max(off);
            // The table is bilinear between 64² texel centres of half floats: a few
            // thousandths, at most two sRGB levels here.
            assert!(
                off <= 2,
                "{base} metallic {metallic} roughness {roughness} at ({px}, {py}): {got:?}, split sum {shown}"
            );
        }
    }
    println!("constant environment: largest pixel difference {worst} sRGB levels");
}

/// A 2:1 panorama as a Radiance file: `top` above the horizon, `bottom` below.
fn write_hdr(path: &std::path::Path, top: [f32; 3], bottom: [f32; 3]) {
    let (width, height) = (64usize, 32usize);
    let pixels: Vec<image::Rgb<f32>> = (0..width * height)
        .map(|k| image::Rgb(if k / width < height / 2 { top } else { bottom }))
        .collect();
    let file = std::fs::File::create(path).unwrap();
    image::codecs::hdr::HdrEncoder::new(file)
        .encode(&pixels, width, height)
        .unwrap();
}

fn mean_brightness(image: &image::RgbaImage) -> f64 {
    image
        .pixels()
        .map(|p| f64::from(p[0]) + f64::from(p[1]) + f64::from(p[2]))
        .sum::<f64>()
        / image.len() as f64
}

#[test]
fn render_lights_with_the_environment_given_and_refuses_one_it_cannot_read() {
    let dir = common::temp_dir("render_environment");
    let out = dir.join("lit.png");
    let render = |extra: &[&str]| {
        let mut args = vec!["render", "demo", "--size", "160x120", "--no-grid", "--out"];
        args.push(out.to_str().unwrap());
        args.extend(extra);
        let output = common::rigscope(&args);
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let missing = dir.join("missing.hdr");
    let (code, stderr) = render(&["--environment", missing.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--environment") && stderr.contains("missing.hdr") && !stderr.contains("panicked"),
        "{stderr}"
    );
    let not_hdr = dir.join("not.hdr");
    std::fs::write(&not_hdr, "not an image").unwrap();
    let (code, stderr) = render(&["--environment", not_hdr.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("not.hdr") && !stderr.contains("panicked"), "{stderr}");
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    // A dim panorama and a bright one: the rig shows the difference; the directional light
    // ignores both.
    let (dim, bright) = (dir.join("dim.hdr"), dir.join("bright.hdr"));
    write_hdr(&dim, [0.05; 3], [0.02; 3]);
    write_hdr(&bright, [2.0; 3], [0.5; 3]);
    let mut brightness = Vec::new();
    for extra in [
        vec!["--environment", dim.to_str().unwrap()],
        vec!["--environment", bright.to_str().unwrap()],
        vec!["--environment", dim.to_str().unwrap(), "--light", "directional"],
        vec!["--environment", bright.to_str().unwrap(), "--light", "directional"],
    ] {
        let (code, stderr) = render(&extra);
        assert_eq!(code, Some(0), "{extra:?}: {stderr}");
        brightness.push(mean_brightness(&image::open(&out).unwrap().to_rgba8()));
    }
    println!("mean brightness: {brightness:?}");
    // Most of the image is the background, the same in all four.
    assert!(brightness[1] > brightness[0] + 5.0, "{brightness:?}");
    assert!((brightness[2] - brightness[3]).abs() < 1e-9, "{brightness:?}");
    let (_, stderr) = render(&["--light", "sun"]);
    assert!(
        stderr.contains("environment") && stderr.contains("directional"),
        "{stderr}"
    );
}

#[test]
fn lighting_is_read_from_settings_and_unknown_names_fall_back() {
    let options: rigscope::render::ViewOptions = toml::from_str("light = \"directional\"").unwrap();
    assert_eq!(options.light, Lighting::Directional);
    let options: rigscope::render::ViewOptions = toml::from_str("light = \"candles\"").unwrap();
    assert_eq!(options.light, Lighting::Environment);
}
