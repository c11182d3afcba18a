//! Rigs re-encoded by gltfpack and glTF-Transform (`../shared/rigs/compressed/`: quantized,
//! meshopt, Draco, WebP) against their originals: the same joints and clips, the same skinned
//! surface at a clip time within the encoding's quantization, and the same picture.

use crate::common;
use crate::common::gpu;

use crate::common::shared_rigs;
use glam::Vec3;
use rigscope::anim::PoseBuffers;
use rigscope::rig::{Codec, Rig, RigError};
use rigscope::screenshot::render_view;
use rigscope::skin::{SkinnedPose, SkinningMethod};
use rigscope::viewer::Viewer;
use std::collections::HashMap;
use std::path::Path;

/// Each variant and the original it was made from (relative to `../shared/rigs`).
const VARIANTS: &[(&str, &str)] = &[
    ("compressed/Fox.draco.glb", "Fox.glb"),
    ("compressed/Fox.gltfpack-cc.glb", "Fox.glb"),
    ("compressed/Fox.gltfpack.glb", "Fox.glb"),
    ("compressed/Fox.meshopt.glb", "Fox.glb"),
    ("compressed/Fox.quantize.glb", "Fox.glb"),
    ("compressed/Fox.webp.glb", "Fox.glb"),
    ("compressed/RobotExpressive.gltfpack.glb", "real/RobotExpressive.glb"),
    ("compressed/RobotExpressive.meshopt.glb", "real/RobotExpressive.glb"),
    ("compressed/Xbot.draco.glb", "real/Xbot.glb"),
    ("compressed/Xbot.gltfpack-cc.glb", "real/Xbot.glb"),
];

/// The clip each family is compared at, and the fraction of its duration.
fn clip_of(original: &str) -> (&'static str, f32) {
    match original {
        "Fox.glb" => ("Run", 0.3),
        "real/Xbot.glb" => ("walk", 0.4),
        _ => ("Dance", 0.35),
    }
}

/// Largest distance from a vertex of one posed surface to the nearest vertex of the other,
/// relative to the original's size, is allowed this much (measured: at most 3.1e-4). Positions
/// are quantized to 14–16 bits (≈ 6e-5 of the size); weights quantized to 8 bits and keys
/// resampled by gltfpack move a posed vertex a little more.
const POSED_TOLERANCE: f32 = 1e-3;

/// Every drawn vertex of the rig in world space, posed at `time` of clip `clip` and skinned on
/// the CPU with linear blend skinning.
fn posed_points(rig: &Rig, clip: usize, time: f32) -> Vec<Vec3> {
    let mut pose = PoseBuffers::new(rig);
    pose.evaluate(rig, Some(clip), time);
    let mut skinned = SkinnedPose::new(rig);
    skinned.skin(rig, &pose, SkinningMethod::Lbs);
    let mut points = Vec::new();
    for (i, instance) in rig.instances.iter().enumerate() {
        let world = pose.instance_world(rig, i);
        for (k, primitive) in rig.meshes[instance.mesh].primitives.iter().enumerate() {
            let positions = match skinned.meshes[i].get(k) {
                Some(s) if primitive.influences.is_some() => &s.positions,
                _ => &primitive.positions,
            };
            points.extend(positions.iter().map(|&p| world.transform_point3(p)));
        }
    }
    points
}

/// For every point of `a`, the distance to the nearest point of `b`; the largest of those.
fn one_sided_distance(a: &[Vec3], b: &[Vec3], cell: f32) -> f32 {
    let key = |p: Vec3| ((p / cell).floor()).as_ivec3();
    let mut grid: HashMap<glam::IVec3, Vec<Vec3>> = HashMap::new();
    for &p in b {
        grid.entry(key(p)).or_default().push(p);
    }
    let mut worst = 0.0f32;
    for &p in a {
        let c = key(p);
        let mut nearest = f32::INFINITY;
        for radius in 1..=64 {
            for x in -radius..=radius {
                for y in -radius..=radius {
                    for z in -radius..=radius {
                        if let Some(points) = grid.get(&(c + glam::IVec3::new(x, y, z))) {
                            for &q in points {
                                nearest = nearest.min(p.distance(q));
                            }
                        }
                    }
                }
            }
            // Cells within `radius` cover every point closer than `radius × cell`.
            if nearest <= radius as f32 * cell {
                break;
            }
        }
        worst = worst.max(nearest);
    }
    worst
}

fn size_of(points: &[Vec3]) -> f32 {
    let (min, max) = points
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &p| {
            (lo.min(p), hi.max(p))
        });
    (max - min).length()
}

#[test]
fn every_compressed_variant_has_the_original_joints_clips_and_posed_surface() {
    let Some(dir) = shared_rigs() else { return };
    let files: Vec<String> = std::fs::read_dir(dir.join("compressed"))
        .expect("the compressed folder is readable")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".glb"))
        .collect();
    for file in &files {
        assert!(
            VARIANTS.iter().any(|(v, _)| v.ends_with(file.as_str())),
            "compressed/{file} is not in the test's table"
        );
    }
    let mut failures = Vec::new();
    for &(variant, original) in VARIANTS {
        let (reference, rig) = (
            common::with_normalized_weights(common::load_rig(&dir, original)),
            common::load_rig(&dir, variant),
        );
        assert_eq!(rig.joint_count(), reference.joint_count(), "{variant}: joint count");
        assert_eq!(rig.skins.len(), reference.skins.len(), "{variant}: skins");
        let names = |r: &Rig| r.clips.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&rig), names(&reference), "{variant}: clip names");
        // gltfpack resamples clips at 30 Hz, which can end them up to one sample later.
        for (a, b) in rig.clips.iter().zip(&reference.clips) {
            assert!(
                (a.duration - b.duration).abs() <= 1.0 / 30.0 + 1e-4,
                "{variant}: clip '{}' lasts {} s, the original {} s",
                a.name,
                a.duration,
                b.duration
            );
        }
        let (clip_name, fraction) = clip_of(original);
        let time = reference.clips[reference.find_clip(clip_name).unwrap()].duration * fraction;
        let expected = posed_points(&reference, reference.find_clip(clip_name).unwrap(), time);
        let got = posed_points(&rig, rig.find_clip(clip_name).unwrap(), time);
        let size = size_of(&expected);
        let cell = size / 256.0;
        let distance = one_sided_distance(&got, &expected, cell).max(one_sided_distance(&expected, &got, cell));
        println!(
            "{variant}: {} vertices (original {}), posed at '{clip_name}' {time:.3} s: largest distance {:.2e} of the size",
            got.len(),
            expected.len(),
            distance / size
        );
        if distance > POSED_TOLERANCE * size {
            failures.push(format!(
                "{variant}: a posed vertex is {:.2e} of the size from the original surface",
                distance / size
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `rig` rendered offscreen at `time` of `clip`, without the grid.
fn render(gpu: &rigscope::render::Gpu, rig: Rig, clip: &str, time: f32) -> image::RgbaImage {
    let clip = rig.find_clip(clip);
    let mut viewer = Viewer::new(rig, None);
    viewer.view.options.grid = false;
    viewer.hold(clip, time);
    render_view(gpu, &mut viewer, 240, 180).expect("the rig renders")
}

#[test]
fn every_compressed_variant_renders_like_its_original() {
    let Some(dir) = shared_rigs() else { return };
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut failures = Vec::new();
    for &(variant, original) in VARIANTS {
        let (clip, fraction) = clip_of(original);
        let reference = common::with_normalized_weights(common::load_rig(&dir, original));
        let time = reference.clips[reference.find_clip(clip).unwrap()].duration * fraction;
        let reference = render(&gpu, reference, clip, time);
        let image = render(&gpu, common::load_rig(&dir, variant), clip, time);
        let background = *reference.get_pixel(0, 0);
        let is_rig = |p: &image::Rgba<u8>| p.0.iter().zip(background.0).any(|(a, b)| a.abs_diff(b) > 24);
        let (mut both, mut either, mut color_difference) = (0usize, 0usize, 0u64);
        for (a, b) in image.pixels().zip(reference.pixels()) {
            let (in_a, in_b) = (is_rig(a), is_rig(b));
            either += usize::from(in_a || in_b);
            if in_a && in_b {
                both += 1;
                color_difference += a.0[..3]
                    .iter()
                    .zip(&b.0[..3])
                    .map(|(x, y)| x.abs_diff(*y) as u64)
                    .sum::<u64>();
            }
        }
        let overlap = both as f64 / either.max(1) as f64;
        let mean_difference = color_difference as f64 / (3 * both.max(1)) as f64;
        println!("{variant}: silhouette overlap {overlap:.4}, mean color difference {mean_difference:.2} levels");
        // A misplaced texture (UVs not dequantized, no texture transform) changes the colors
        // inside the silhouette by tens of levels. What the encoders change moves them by a few:
        // Draco and gltfpack weld the Fox's unshared vertices, so its generated normals turn
        // from flat to smooth (≈ 7 levels).
        if overlap < 0.97 || mean_difference > 10.0 {
            failures.push(format!(
                "{variant}: silhouette overlap {overlap:.4}, mean color difference {mean_difference:.2}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `file`'s JSON edited by `edit` and its binary chunk by `corrupt`, loaded from memory.
fn load_edited(
    dir: &Path,
    file: &str,
    edit: impl FnOnce(&mut serde_json::Value),
    corrupt: impl FnOnce(&mut Vec<u8>),
) -> Result<Rig, RigError> {
    let bytes = std::fs::read(dir.join(file)).unwrap();
    let (json, bin) = common::split_glb(&bytes);
    let mut document: serde_json::Value = serde_json::from_slice(json).unwrap();
    let mut bin = bin.unwrap().to_vec();
    edit(&mut document);
    corrupt(&mut bin);
    let glb = rigscope::rig::glb_container(&serde_json::to_vec(&document).unwrap(), Some(&bin));
    let result = rigscope::rig::load_slice(&glb, None, file);
    if let Err(e) = &result {
        assert!(!matches!(e, RigError::Panic(_)), "{file}: the importer panicked: {e}");
    }
    result
}

/// The error loading `file` with its JSON edited by `edit` gives; fails if it loads.
fn edit_error(dir: &Path, file: &str, edit: &dyn Fn(&mut serde_json::Value)) -> RigError {
    match load_edited(dir, file, edit, |_| {}) {
        Ok(_) => panic!("{file}: the edited file loaded"),
        Err(e) => e,
    }
}

/// Fails unless `e` is a failure to decode `codec`'s data whose message mentions every part.
fn assert_decoder_error(e: &RigError, codec: Codec, parts: &[&str]) {
    assert!(
        matches!(e, RigError::Decoder { codec: c, .. } if *c == codec),
        "expected a {codec:?} decoder error: {e:?}"
    );
    let message = e.to_string();
    for part in parts {
        assert!(message.contains(part), "'{message}' should mention '{part}'");
    }
}

/// Loads `file` 64 times, each time with one byte of its binary chunk changed by `change`
/// (given the seed): an error or a rig, never a panic (`load_edited` checks).
fn survives_changed_bytes(dir: &Path, file: &str, change: impl Fn(&mut Vec<u8>, u32)) {
    for seed in 0..64u32 {
        let _ = load_edited(dir, file, |_| {}, |bin| change(bin, seed));
    }
}

/// The first buffer view compressed with `mode`, and its extension object.
fn meshopt_view(document: &mut serde_json::Value, mode: &str) -> serde_json::Value {
    document["bufferViews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["extensions"]["EXT_meshopt_compression"].clone())
        .find(|e| e["mode"] == mode)
        .unwrap()
}

fn edit_meshopt(document: &mut serde_json::Value, mode: &str, field: &str, value: serde_json::Value) {
    let views = document["bufferViews"].as_array_mut().unwrap();
    let view = views
        .iter_mut()
        .find(|v| v["extensions"]["EXT_meshopt_compression"]["mode"] == mode)
        .unwrap();
    view["extensions"]["EXT_meshopt_compression"][field] = value;
}

#[test]
fn hostile_meshopt_streams_are_clear_errors() {
    let Some(dir) = shared_rigs() else { return };
    let file = "compressed/Fox.gltfpack-cc.glb";
    let error = |edit: &dyn Fn(&mut serde_json::Value)| edit_error(&dir, file, edit);

    let e = error(&|d| {
        let length = meshopt_view(d, "ATTRIBUTES")["byteLength"].as_u64().unwrap();
        edit_meshopt(d, "ATTRIBUTES", "byteLength", (length / 2).into());
    });
    assert_decoder_error(&e, Codec::Meshopt, &["(EXT_meshopt_compression)", "do not decode to"]);

    let e = error(&|d| edit_meshopt(d, "TRIANGLES", "count", 3_000_000_000u64.into()));
    assert!(matches!(e, RigError::Budget(_)), "{e:?}");
    assert!(e.to_string().contains("of memory, beyond the"), "{e}");

    let e = error(&|d| edit_meshopt(d, "ATTRIBUTES", "byteOffset", 1_000_000_000u64.into()));
    assert_decoder_error(&e, Codec::Meshopt, &["do not exist"]);

    let e = error(&|d| edit_meshopt(d, "ATTRIBUTES", "byteStride", 260.into()));
    assert_decoder_error(&e, Codec::Meshopt, &["multiple of 4 up to 256, not 260"]);

    let e = error(&|d| edit_meshopt(d, "ATTRIBUTES", "count", 3.into()));
    assert_decoder_error(&e, Codec::Meshopt, &["3 elements of 8 bytes are fewer than the view's"]);

    let e = error(&|d| edit_meshopt(d, "TRIANGLES", "filter", "QUATERNION".into()));
    assert_decoder_error(
        &e,
        Codec::Meshopt,
        &["filter Quaternion cannot apply to mode TRIANGLES"],
    );

    // Flipped bytes inside the compressed data: an error, or garbage that loads; never a panic.
    survives_changed_bytes(&dir, file, |bin, seed| {
        let at = (seed as usize * 7919) % bin.len();
        bin[at] ^= 0x5a;
    });
}

#[test]
fn hostile_draco_streams_are_clear_errors() {
    let Some(dir) = shared_rigs() else { return };
    let file = "compressed/Fox.draco.glb";
    let draco_view = |d: &serde_json::Value| {
        d["meshes"][0]["primitives"][0]["extensions"]["KHR_draco_mesh_compression"]["bufferView"]
            .as_u64()
            .unwrap() as usize
    };
    let error = |edit: &dyn Fn(&mut serde_json::Value)| edit_error(&dir, file, edit);

    let e = error(&|d| {
        let view = draco_view(d);
        let length = d["bufferViews"][view]["byteLength"].as_u64().unwrap();
        d["bufferViews"][view]["byteLength"] = (length / 3).into();
    });
    assert_decoder_error(&e, Codec::Draco, &["(KHR_draco_mesh_compression)", "does not decode"]);

    let e = error(&|d| {
        let position = d["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
            .as_u64()
            .unwrap() as usize;
        d["accessors"][position]["count"] = 5.into();
    });
    assert_decoder_error(
        &e,
        Codec::Draco,
        &["POSITION: its accessor has 5 elements but the stream decodes"],
    );

    let e = error(&|d| {
        d["meshes"][0]["primitives"][0]["extensions"]["KHR_draco_mesh_compression"]["attributes"]["POSITION"] =
            77.into();
    });
    assert_decoder_error(&e, Codec::Draco, &["POSITION: the stream has no attribute with id 77"]);

    survives_changed_bytes(&dir, file, |bin, seed| {
        let at = (seed as usize * 104_729) % bin.len();
        bin[at] = bin[at].wrapping_add(1 + seed as u8);
    });
}
