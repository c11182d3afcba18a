//! Hand-built minimal files for the extension paths the shared rigs do not reach, each checked
//! against values worked out here by hand: quantized positions, normals, texture coordinates and
//! morph offsets; a meshopt stream with the exponential filter; a texture transform with a
//! rotation and a texture coordinate override; KTX2 textures; alpha modes; a VRM avatar.

use crate::common;

use crate::common::gltf_with;
use glam::{Vec2, Vec3};
use rigscope::rig::{AlphaMode, Rig, RigError, Specular, load_slice};
use serde_json::{Value, json};

fn load(document: Value, bin: &[u8]) -> Result<Rig, RigError> {
    load_slice(&gltf_with(document, bin), None, "test.gltf")
}

fn bytes<T: bytemuck::NoUninit>(values: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(values).to_vec()
}

/// A triangle stored as KHR_mesh_quantization allows: u16 positions (unnormalized), i8 and i16
/// normals (normalized), u8 texture coordinates (normalized), an i16 morph target (unnormalized).
fn quantized_triangle() -> (Value, Vec<u8>) {
    let mut bin = bytes::<u16>(&[0, 0, 0, 0, 100, 0, 0, 0, 0, 200, 0, 0]); // 0..24, stride 8
    bin.extend(bytes::<i8>(&[0, 0, 127, 0, 0, 0, -127, 0, 127, 0, 0, 0])); // 24..36, stride 4
    bin.extend(bytes::<u8>(&[0, 0, 255, 0, 0, 255, 0, 0])); // 36..44: 3 × 2 + padding
    bin.extend(bytes::<i16>(&[1, 2, 3, 0, -4, 5, -6, 0, 0, 0, 7, 0])); // 44..68, stride 8
    let document = json!({
        "extensionsUsed": ["KHR_mesh_quantization"],
        "extensionsRequired": ["KHR_mesh_quantization"],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{
            "attributes": {"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2},
            "targets": [{"POSITION": 3}],
        }], "weights": [0.0]}],
        "accessors": [
            {"bufferView": 0, "componentType": 5123, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [100, 200, 0]},
            {"bufferView": 1, "componentType": 5120, "normalized": true, "count": 3, "type": "VEC3"},
            {"bufferView": 2, "componentType": 5121, "normalized": true, "count": 3, "type": "VEC2"},
            {"bufferView": 3, "componentType": 5122, "count": 3, "type": "VEC3"},
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 24, "byteStride": 8},
            {"buffer": 0, "byteOffset": 24, "byteLength": 12, "byteStride": 4},
            {"buffer": 0, "byteOffset": 36, "byteLength": 6},
            {"buffer": 0, "byteOffset": 44, "byteLength": 24, "byteStride": 8},
        ],
    });
    (document, bin)
}

#[test]
fn quantized_attributes_read_as_the_extension_says() {
    let (document, bin) = quantized_triangle();
    let rig = load(document, &bin).unwrap();
    let primitive = &rig.meshes[0].primitives[0];
    // Unnormalized integers are their integer values.
    assert_eq!(
        primitive.positions,
        [Vec3::ZERO, Vec3::new(100.0, 0.0, 0.0), Vec3::new(0.0, 200.0, 0.0)]
    );
    // i8 normalized: 127 → 1, -127 → -1; quantized normals are renormalized.
    assert_eq!(primitive.normals, [Vec3::Z, Vec3::NEG_Z, Vec3::X]);
    // u8 normalized: 255 → 1.
    assert_eq!(primitive.uvs, [Vec2::ZERO, Vec2::X, Vec2::Y]);
    let target = &rig.morphs.of(0, 0)[0];
    assert_eq!(
        target.dense(3).0,
        [
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(-4.0, 5.0, -6.0),
            Vec3::new(0.0, 0.0, 7.0)
        ]
    );
}

#[test]
fn quantized_attributes_without_the_extension_are_refused() {
    let (mut document, bin) = quantized_triangle();
    document.as_object_mut().unwrap().remove("extensionsUsed");
    document.as_object_mut().unwrap().remove("extensionsRequired");
    let e = load(document, &bin).unwrap_err();
    assert!(matches!(e, RigError::Data(_)), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains("POSITION") && e.contains("VEC3 of unsigned short; expected VEC3 of float"),
        "{e}"
    );
}

#[test]
fn an_i16_normal_is_normalized_and_renormalized() {
    let (mut document, mut bin) = quantized_triangle();
    // (0, 23170, 23170) / 32767 has length 0.99999: renormalized to exactly 45°.
    let at = bin.len();
    bin.extend(bytes::<i16>(&[0, 23170, 23170, 0, 0, -32767, 0, 0, 32767, 0, 0, 0]));
    document["bufferViews"]
        .as_array_mut()
        .unwrap()
        .push(json!({"buffer": 0, "byteOffset": at, "byteLength": 24, "byteStride": 8}));
    document["accessors"][1] =
        json!({"bufferView": 4, "componentType": 5122, "normalized": true, "count": 3, "type": "VEC3"});
    let rig = load(document, &bin).unwrap();
    let normals = &rig.meshes[0].primitives[0].normals;
    let half = std::f32::consts::FRAC_1_SQRT_2;
    assert!((normals[0] - Vec3::new(0.0, half, half)).length() < 1e-6, "{normals:?}");
    assert_eq!(normals[1..], [Vec3::NEG_Y, Vec3::X]);
}

#[test]
fn a_meshopt_stream_with_the_exponential_filter_decodes_to_its_floats() {
    // 2^E × M, E in the top byte and M a signed 24-bit integer: (E, M) = (-2, 6) → 1.5,
    // (3, -5) → -40, (0, 0) → 0, (1, 3) → 6, (-1, 1) → 0.5, (4, 2) → 32.
    let encode = |e: i8, m: i32| ((e as u8 as u32) << 24) | (m as u32 & 0x00ff_ffff);
    let raw: Vec<[u32; 3]> = vec![
        [encode(-2, 6), encode(3, -5), encode(0, 0)],
        [encode(1, 3), encode(-1, 1), encode(4, 2)],
        [encode(0, 0), encode(0, 0), encode(0, 0)],
    ];
    let compressed = meshopt::encoding::encode_vertex_buffer(&raw).unwrap();
    let document = json!({
        "extensionsUsed": ["EXT_meshopt_compression"],
        "extensionsRequired": ["EXT_meshopt_compression"],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, -40, 0], "max": [6, 0.5, 32]}],
        "bufferViews": [{"buffer": 1, "byteLength": 36, "byteStride": 12, "extensions": {
            "EXT_meshopt_compression": {"buffer": 0, "byteLength": compressed.len(), "byteStride": 12,
                                        "count": 3, "mode": "ATTRIBUTES", "filter": "EXPONENTIAL"}}}],
    });
    let mut bytes = gltf_with(document, &compressed);
    // A fallback buffer without data after the real one: it must never be read.
    let mut document: Value = serde_json::from_slice(&bytes).unwrap();
    document["buffers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"byteLength": 36, "extensions": {"EXT_meshopt_compression": {"fallback": true}}}));
    bytes = serde_json::to_vec(&document).unwrap();
    let rig = load_slice(&bytes, None, "meshopt.gltf").unwrap();
    assert_eq!(
        rig.meshes[0].primitives[0].positions,
        [Vec3::new(1.5, -40.0, 0.0), Vec3::new(6.0, 0.5, 32.0), Vec3::ZERO]
    );
    assert!(rig.facts.data_errors.is_empty(), "{:?}", rig.facts.data_errors);
}

/// A textured triangle with TEXCOORD_0 and TEXCOORD_1; `texture_info` is the material's
/// `baseColorTexture` object. The image does not decode (the texture is drawn white), which is
/// all this needs: the coordinates are what is checked.
fn textured_triangle(texture_info: Value) -> (Value, Vec<u8>) {
    let mut bin = bytes::<f32>(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    bin.extend(bytes::<f32>(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0]));
    bin.extend(bytes::<f32>(&[0.25, 0.25, 0.75, 0.25, 0.25, 0.75]));
    let document = json!({
        "extensionsUsed": ["KHR_texture_transform"],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1, "TEXCOORD_1": 2}, "material": 0}]}],
        "materials": [{"pbrMetallicRoughness": {"baseColorTexture": texture_info}}],
        "textures": [{"source": 0}],
        "images": [{"uri": "data:image/png;base64,AAAA"}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
            {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC2"},
            {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC2"},
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 24},
            {"buffer": 0, "byteOffset": 60, "byteLength": 24},
        ],
    });
    (document, bin)
}

fn uvs_of(texture_info: Value) -> Vec<Vec2> {
    let (document, bin) = textured_triangle(texture_info);
    load(document, &bin).unwrap().meshes[0].primitives[0].uvs.clone()
}

fn assert_close(got: &[Vec2], want: &[Vec2]) {
    for (g, w) in got.iter().zip(want) {
        assert!((*g - *w).length() < 1e-6, "got {got:?}, want {want:?}");
    }
}

#[test]
fn a_texture_transform_scales_then_rotates_then_offsets() {
    // KHR_texture_transform: uv' = T · R · S · uv with R's rows (cos, sin) and (−sin, cos).
    // Scale (2, 1), rotation 90°, offset (0.5, 0):
    //   (0, 0) → (0, 0) → (0, 0) → (0.5, 0)
    //   (1, 0) → (2, 0) → (0, −2) → (0.5, −2)
    //   (0, 1) → (0, 1) → (1, 0) → (1.5, 0)
    let info = json!({"index": 0, "extensions": {"KHR_texture_transform": {
        "offset": [0.5, 0.0], "rotation": std::f32::consts::FRAC_PI_2, "scale": [2.0, 1.0]}}});
    assert_close(
        &uvs_of(info),
        &[Vec2::new(0.5, 0.0), Vec2::new(0.5, -2.0), Vec2::new(1.5, 0.0)],
    );
}

#[test]
fn a_texture_reads_the_coordinate_set_it_names() {
    let second = [Vec2::new(0.25, 0.25), Vec2::new(0.75, 0.25), Vec2::new(0.25, 0.75)];
    assert_close(&uvs_of(json!({"index": 0, "texCoord": 1})), &second);
    // The transform's own texCoord overrides the texture info's; offset (0.1, 0.2) only.
    let info = json!({"index": 0, "texCoord": 0, "extensions": {"KHR_texture_transform": {
        "offset": [0.1, 0.2], "texCoord": 1}}});
    let moved: Vec<Vec2> = second.iter().map(|uv| *uv + Vec2::new(0.1, 0.2)).collect();
    assert_close(&uvs_of(info), &moved);
}

/// A triangle whose only texture is the KTX2 file `ktx2` (KHR_texture_basisu, no fallback).
fn ktx2_triangle(ktx2: &[u8]) -> (Value, Vec<u8>) {
    use base64::Engine;
    let (mut document, bin) = textured_triangle(json!({"index": 0}));
    document["extensionsUsed"] = json!(["KHR_texture_basisu"]);
    document["extensionsRequired"] = json!(["KHR_texture_basisu"]);
    document["textures"] = json!([{"extensions": {"KHR_texture_basisu": {"source": 0}}}]);
    let data = base64::engine::general_purpose::STANDARD.encode(ktx2);
    document["images"] = json!([{"uri": format!("data:image/ktx2;base64,{data}")}]);
    (document, bin)
}

/// A `width`×`height` PNG of one color, as a data URI.
fn png_uri(width: u32, height: u32, color: [u8; 4]) -> String {
    use base64::Engine;
    let mut png = Vec::new();
    image::RgbaImage::from_pixel(width, height, image::Rgba(color))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    )
}

#[test]
fn many_textures_decode_to_their_own_pixels() {
    // Twelve images of their own size and color, sixteen textures (four share an image).
    let images: Vec<(u32, u32, [u8; 4])> = (0..12u8)
        .map(|i| {
            (
                40 + u32::from(i),
                24 + 2 * u32::from(i),
                [i * 20, 255 - i * 20, i * 7, 255 - i],
            )
        })
        .collect();
    let (mut document, bin) = textured_triangle(json!({"index": 0}));
    document["images"] = images
        .iter()
        .map(|&(w, h, c)| json!({"uri": png_uri(w, h, c)}))
        .collect();
    document["textures"] = (0..16).map(|i| json!({"source": i % 12})).collect();
    let rig = load(document, &bin).unwrap();
    assert!(rig.warnings.is_empty(), "{:?}", rig.warnings);
    assert_eq!(rig.textures.len(), 16);
    for (i, texture) in rig.textures.iter().enumerate() {
        let (width, height, color) = images[i % 12];
        assert_eq!((texture.width, texture.height), (width, height), "texture {i}");
        assert!(
            texture.rgba8().chunks_exact(4).all(|pixel| pixel == color),
            "texture {i} is not {color:?}"
        );
    }
}

#[test]
fn textures_over_the_memory_budget_are_the_same_ones_every_time() {
    // A small file's budget is 64 MiB and a little: the first 4096×4096 image (64 MiB as RGBA)
    // fits, the second does not, and the small third still does.
    let (mut document, bin) = textured_triangle(json!({"index": 0}));
    document["images"] = json!([
        {"uri": png_uri(4096, 4096, [255, 0, 0, 255])},
        {"uri": png_uri(4096, 4096, [0, 255, 0, 255])},
        {"uri": png_uri(8, 8, [0, 0, 255, 255])},
    ]);
    document["textures"] = json!([{"source": 0}, {"source": 1}, {"source": 2}]);
    for _ in 0..3 {
        let rig = load(document.clone(), &bin).unwrap();
        let sizes: Vec<(u32, u32)> = rig.textures.iter().map(|t| (t.width, t.height)).collect();
        assert_eq!(
            sizes,
            [(4096, 4096), (1, 1), (8, 8)],
            "the second is the missing stand-in"
        );
        assert_eq!(rig.warnings.len(), 1, "{:?}", rig.warnings);
        assert!(
            rig.warnings[0].contains("texture 1")
                && rig.warnings[0].contains("4096×4096 image does not fit the memory budget"),
            "{:?}",
            rig.warnings
        );
    }
}

#[test]
fn ktx2_textures_transcode_to_their_colors() {
    // tests/data/README.md: 8×8, quadrants red, green / blue, white.
    let quadrants = [
        (1, 1, [255, 0, 0]),
        (6, 1, [0, 255, 0]),
        (1, 6, [0, 0, 255]),
        (6, 6, [255, 255, 255]),
    ];
    for (file, tolerance) in [("quadrants-uastc.ktx2", 8), ("quadrants-etc1s.ktx2", 40)] {
        let ktx2 = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data")
                .join(file),
        )
        .unwrap();
        let (document, bin) = ktx2_triangle(&ktx2);
        let rig = load(document, &bin).unwrap();
        assert!(rig.warnings.is_empty(), "{file}: {:?}", rig.warnings);
        let texture = &rig.textures[0];
        assert_eq!((texture.width, texture.height), (8, 8), "{file}");
        let rgba8 = texture.rgba8();
        for (x, y, want) in quadrants {
            let at = (y * 8 + x) * 4;
            let got = &rgba8[at..at + 3];
            let off = got.iter().zip(want).map(|(g, w)| g.abs_diff(w)).max().unwrap();
            assert!(off <= tolerance, "{file} pixel ({x}, {y}): {got:?}, want {want:?}");
        }
    }
}

#[test]
fn a_broken_ktx2_texture_draws_untextured_with_a_warning() {
    let ktx2 = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quadrants-uastc.ktx2")).unwrap();
    for cut in [12, 40, ktx2.len() - 9] {
        let (document, bin) = ktx2_triangle(&ktx2[..cut]);
        let rig = load(document, &bin).unwrap();
        assert!(
            rig.warnings
                .iter()
                .any(|w| w.contains("texture 0") && w.contains("KTX2") && w.contains("drawn untextured")),
            "cut at {cut}: {:?}",
            rig.warnings
        );
    }
}

#[test]
fn alpha_modes_emission_and_unlit_are_read() {
    let (mut document, bin) = textured_triangle(json!({"index": 0}));
    document["extensionsUsed"] = json!(["KHR_materials_unlit", "KHR_materials_emissive_strength"]);
    document["materials"] = json!([
        {"alphaMode": "MASK", "alphaCutoff": 0.3},
        {"alphaMode": "BLEND", "emissiveFactor": [1.0, 0.5, 0.0],
         "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 4.0}}},
        {"extensions": {"KHR_materials_unlit": {}}},
    ]);
    let rig = load(document, &bin).unwrap();
    let m = &rig.materials;
    assert_eq!((m[0].alpha_mode, m[0].alpha_cutoff), (AlphaMode::Mask, 0.3));
    assert_eq!(m[1].alpha_mode, AlphaMode::Blend);
    assert_eq!(m[1].emissive, Vec3::new(4.0, 2.0, 0.0));
    assert!(m[2].unlit && !m[0].unlit);
    assert_eq!(m[2].alpha_mode, AlphaMode::Opaque);
}

#[test]
fn specular_and_ior_are_read_and_values_out_of_range_are_clamped_or_left_at_their_defaults() {
    let (mut document, bin) = textured_triangle(json!({"index": 0}));
    document["extensionsUsed"] = json!(["KHR_materials_specular", "KHR_materials_ior"]);
    document["materials"] = json!([
        {"extensions": {"KHR_materials_specular": {"specularFactor": 0.25, "specularColorFactor": [0.5, 1.0, 2.0]},
                        "KHR_materials_ior": {"ior": 2.0}}},
        {"extensions": {"KHR_materials_specular": {"specularFactor": -1.0, "specularColorFactor": [-1.0, 1.0, 1.0]},
                        "KHR_materials_ior": {"ior": 0.5}}},
        {"extensions": {"KHR_materials_ior": {"ior": 0.0}}},
        {},
    ]);
    let rig = load(document, &bin).unwrap();
    let s: Vec<_> = rig.materials.iter().map(|m| m.specular).collect();
    assert_eq!(
        (s[0].factor, s[0].color, s[0].ior),
        (0.25, Vec3::new(0.5, 1.0, 2.0), 2.0)
    );
    // F0 of index 2 in air: (1/3)².
    assert!((Specular::f0_of_ior(2.0) - 1.0 / 9.0).abs() < 1e-7);
    assert_eq!((s[1].factor, s[1].color, s[1].ior), (0.0, Vec3::ONE, 1.5));
    // Index 0: a specular-glossiness conversion's F0 of 1, the colour alone.
    assert_eq!((s[2].ior, Specular::f0_of_ior(0.0)), (0.0, 1.0));
    assert!(s[3].is_default() && (Specular::f0_of_ior(1.5) - 0.04).abs() < 1e-7);
    assert!(
        !rig.facts.notes.iter().any(|n| n.contains("KHR_materials_specular")),
        "{:?}",
        rig.facts.notes
    );
}

#[test]
fn a_vrm_avatar_opens_as_the_glb_it_is_and_its_extension_is_noted() {
    let (mut document, bin) = quantized_triangle();
    document["extensionsUsed"] = json!(["KHR_mesh_quantization", "VRMC_vrm"]);
    document["extensions"] = json!({"VRMC_vrm": {"specVersion": "1.0", "meta": {"name": "tri"}}});
    document["asset"] = json!({"version": "2.0"});
    document["buffers"] = json!([{"byteLength": bin.len()}]);
    let glb = rigscope::rig::glb_container(&serde_json::to_vec(&document).unwrap(), Some(&bin));
    let dir = common::temp_dir("vrm");
    let file = dir.join("avatar.vrm");
    std::fs::write(&file, glb).unwrap();
    let rig = rigscope::rig::load_file(&file).unwrap();
    assert_eq!(rig.vertex_count(), 3);
    assert!(
        rig.facts
            .notes
            .iter()
            .any(|n| n.starts_with("VRMC_vrm is used and ignored")),
        "{:?}",
        rig.facts.notes
    );
    let inspect = common::rigscope_with(common::rigscope_command().arg("inspect").arg(&file));
    assert_eq!(
        inspect.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&inspect.stderr)
    );
    assert!(String::from_utf8_lossy(&inspect.stdout).contains("VRMC_vrm is used and ignored"));
    std::fs::remove_dir_all(&dir).unwrap();
}
