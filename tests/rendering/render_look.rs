//! `rigscope render --orbit/--target/--fov` puts the camera where the formula says, checked by
//! projecting a known point by hand; `--transparent` makes alpha the coverage; `--tonemap` and
//! `--exposure` change the shaded view only as far as the curves say.

use crate::common;

use glam::Vec3;
use serde_json::json;
use std::path::{Path, PathBuf};

const SIZE: (u32, u32) = (320, 240);

/// A small unlit red cube (side `side`) centred on `center`, as a glTF file in `dir`.
fn red_cube(dir: &Path, center: Vec3, side: f32) -> PathBuf {
    let mut positions = Vec::new();
    let mut indices: Vec<u16> = Vec::new();
    // Each face's four corners, counter-clockwise seen from outside.
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let n = Vec3::AXES[axis] * sign;
            let (u, v) = (Vec3::AXES[(axis + 1) % 3], Vec3::AXES[(axis + 2) % 3]);
            let (u, v) = if sign > 0.0 { (u, v) } else { (v, u) };
            let base = positions.len() as u16;
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                positions.push(center + (n + u * a + v * b) * side * 0.5);
            }
            indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    let flat: Vec<f32> = positions.iter().flat_map(|p| p.to_array()).collect();
    let mut bin: Vec<u8> = bytemuck::cast_slice(&flat).to_vec();
    let index_offset = bin.len();
    bin.extend(bytemuck::cast_slice(&indices));
    let (min, max) = (center - side * 0.5, center + side * 0.5);
    let document = json!({
        "extensionsUsed": ["KHR_materials_unlit"],
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1, "material": 0}]}],
        "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [1, 0, 0, 1]}, "extensions": {"KHR_materials_unlit": {}}}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": positions.len(), "type": "VEC3",
             "min": min.to_array(), "max": max.to_array()},
            {"bufferView": 1, "componentType": 5123, "count": indices.len(), "type": "SCALAR"},
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": index_offset},
            {"buffer": 0, "byteOffset": index_offset, "byteLength": indices.len() * 2},
        ],
    });
    let path = dir.join("cube.gltf");
    std::fs::write(&path, common::gltf_with(document, &bin)).unwrap();
    path
}

fn render(file: &Path, out: &Path, extra: &[&str]) -> image::RgbaImage {
    let size = format!("{}x{}", SIZE.0, SIZE.1);
    let mut args = vec!["render", file.to_str().unwrap(), "--size", &size, "--no-grid", "--out"];
    args.push(out.to_str().unwrap());
    args.extend(extra);
    let output = common::rigscope(&args);
    assert!(
        output.status.success(),
        "rigscope {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    image::open(out).unwrap().to_rgba8()
}

/// The centroid of the pixels that are mostly red.
fn red_centroid(image: &image::RgbaImage) -> Option<(f32, f32)> {
    let (mut sx, mut sy, mut n) = (0.0, 0.0, 0.0);
    for (x, y, p) in image.enumerate_pixels() {
        if p[0] > 200 && p[1] < 60 && p[2] < 60 {
            sx += x as f32 + 0.5;
            sy += y as f32 + 0.5;
            n += 1.0;
        }
    }
    (n > 0.0).then(|| (sx / n, sy / n))
}

/// Where `point` lands in the image, by the formula written out here: the eye at target + r (sin
/// φ sin θ, cos φ, sin φ cos θ), looking at the target with +Y up, a vertical field of view of
/// `fov` degrees; pixel rows counted from the top.
fn by_hand(point: Vec3, target: Vec3, (theta, phi, r): (f32, f32, f32), fov: f32) -> (f32, f32) {
    let (t, p) = (theta.to_radians(), phi.to_radians());
    let eye = target + r * Vec3::new(p.sin() * t.sin(), p.cos(), p.sin() * t.cos());
    let forward = (target - eye).normalize();
    let right = forward.cross(Vec3::Y).normalize();
    let up = right.cross(forward);
    let d = point - eye;
    let (x, y, z) = (d.dot(right), d.dot(up), d.dot(forward));
    let focal = 1.0 / (fov.to_radians() * 0.5).tan();
    let aspect = SIZE.0 as f32 / SIZE.1 as f32;
    let (ndc_x, ndc_y) = (focal * x / (z * aspect), focal * y / z);
    ((ndc_x * 0.5 + 0.5) * SIZE.0 as f32, (0.5 - ndc_y * 0.5) * SIZE.1 as f32)
}

#[test]
fn orbit_target_and_fov_place_the_camera_as_the_formula_says() {
    let dir = common::temp_dir("render_look");
    // The cube sits away from the target, so that a wrong azimuth, elevation, distance or field
    // of view each moves it on screen.
    let cube = Vec3::new(0.6, 1.4, -0.3);
    let file = red_cube(&dir, cube, 0.04);
    let target = Vec3::new(0.2, 1.0, 0.1);
    for (orbit, fov) in [
        ((30.0, 70.0, 3.0), 35.0),
        ((-120.0, 100.0, 2.2), 50.0),
        ((200.0, 45.0, 4.0), 25.0),
    ] {
        let out = dir.join("look.png");
        let orbit_arg = format!("{},{},{}", orbit.0, orbit.1, orbit.2);
        let target_arg = format!("{},{},{}", target.x, target.y, target.z);
        let fov_arg = fov.to_string();
        let image = render(
            &file,
            &out,
            &[
                "--orbit",
                &orbit_arg,
                "--target",
                &target_arg,
                "--fov",
                &fov_arg,
                "--msaa",
                "off",
            ],
        );
        let want = by_hand(cube, target, orbit, fov);
        let got = red_centroid(&image).unwrap_or_else(|| panic!("--orbit {orbit_arg}: the cube is not in view"));
        let off = ((got.0 - want.0).powi(2) + (got.1 - want.1).powi(2)).sqrt();
        println!("--orbit {orbit_arg} --fov {fov}: cube at {got:?}, formula {want:?} ({off:.2} px)");
        // The cube spans a few pixels; its centroid is its centre's projection to within the
        // perspective's skew of so small a cube and the pixel grid: half a pixel (measured: at most 0.16).
        assert!(
            off <= 0.5,
            "--orbit {orbit_arg}: cube at {got:?}, formula says {want:?}"
        );
    }
}

#[test]
fn transparent_makes_alpha_the_coverage() {
    let dir = common::temp_dir("render_look_alpha");
    let file = red_cube(&dir, Vec3::ZERO, 1.0);
    let out = dir.join("alpha.png");
    let image = render(&file, &out, &["--transparent", "--msaa", "4x", "--orbit", "30,60,4"]);
    let (mut clear, mut covered, mut partial) = (0, 0, 0);
    for p in image.pixels() {
        match p[3] {
            0 => clear += 1,
            255 => {
                covered += 1;
                assert_eq!((p[0], p[1], p[2]), (255, 0, 0), "a covered pixel keeps its colour");
            }
            _ => {
                partial += 1;
                // Straight alpha: an edge pixel shows the cube's red, not red darkened by the
                // transparent black it was resolved with.
                assert!(p[0] >= 250 && p[1] <= 5, "edge pixel {p:?}");
            }
        }
    }
    println!("{clear} clear, {covered} covered, {partial} partly covered pixels");
    assert!(clear > 1000 && covered > 1000 && partial > 50);
    let opaque = render(&file, &out, &["--msaa", "4x", "--orbit", "30,60,4"]);
    assert!(
        opaque.pixels().all(|p| p[3] == 255),
        "without --transparent the image is opaque"
    );
}

#[test]
fn bad_look_arguments_are_refused_with_the_reason() {
    let dir = common::temp_dir("render_look_bad");
    let out = dir.join("bad.png");
    for (args, reason) in [
        (["--orbit", "0,0,3"], "straight up or down"),
        (["--orbit", "0,90,-1"], "not above 0"),
        (["--fov", "180"], "between 1 and 179"),
        (["--target", "1,2"], "X,Y,Z"),
        (["--tonemap", "reinhard"], "neutral"),
    ] {
        let mut all = vec!["render", "demo", "--out", out.to_str().unwrap()];
        all.extend(args);
        let output = common::rigscope(&all);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    }
}
