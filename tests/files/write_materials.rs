//! The glTF writer keeps what the viewer shades with: physically based materials with every
//! texture, each reading the coordinates and transform it read before; tangents; and morph
//! targets' tangent offsets. A file built here is loaded, written and loaded again.

use crate::common;

use base64::Engine;
use glam::{Vec2, Vec3};
use rigscope::rig::{Rig, load_file, load_slice};
use serde_json::json;

/// A 2×2 PNG of four colours.
fn png() -> Vec<u8> {
    let mut image = image::RgbaImage::new(2, 2);
    for (k, pixel) in image.pixels_mut().enumerate() {
        *pixel = image::Rgba([60 * k as u8, 255 - 50 * k as u8, 128, 255]);
    }
    let mut bytes = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .unwrap();
    bytes
}

/// Float data as a data URI, and the accessors reading it (count and type per accessor).
struct Buffer {
    bytes: Vec<u8>,
    views: Vec<serde_json::Value>,
    accessors: Vec<serde_json::Value>,
}

impl Buffer {
    fn floats(&mut self, values: &[f32], components: usize, kind: &str, bounds: bool) -> usize {
        let offset = self.bytes.len();
        self.bytes.extend(values.iter().flat_map(|f| f.to_le_bytes()));
        self.views
            .push(json!({ "buffer": 0, "byteOffset": offset, "byteLength": values.len() * 4 }));
        let mut accessor = json!({
            "bufferView": self.views.len() - 1,
            "componentType": 5126,
            "count": values.len() / components,
            "type": kind,
        });
        if bounds {
            let column = |c: usize| values.iter().skip(c).step_by(components).copied();
            let min: Vec<f32> = (0..components).map(|c| column(c).fold(f32::MAX, f32::min)).collect();
            let max: Vec<f32> = (0..components).map(|c| column(c).fold(f32::MIN, f32::max)).collect();
            (accessor["min"], accessor["max"]) = (json!(min), json!(max));
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }
}

/// A quad with a physically based material whose five textures read two coordinate sets, two
/// of them through KHR_texture_transform, its own tangents, and one morph target that moves
/// positions and tangents.
fn textured_quad() -> Rig {
    let mut buffer = Buffer {
        bytes: Vec::new(),
        views: Vec::new(),
        accessors: Vec::new(),
    };
    let positions = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0];
    let position = buffer.floats(&positions, 3, "VEC3", true);
    let normal = buffer.floats(&[0.0, 0.0, 1.0].repeat(4), 3, "VEC3", false);
    let tangents = [
        1.0, 0.0, 0.0, 1.0, 0.8, 0.6, 0.0, 1.0, 0.6, 0.8, 0.0, -1.0, 0.0, 1.0, 0.0, 1.0,
    ];
    let tangent = buffer.floats(&tangents, 4, "VEC4", false);
    let uv0 = buffer.floats(&[0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0], 2, "VEC2", false);
    let uv1 = buffer.floats(&[0.1, 0.9, 0.4, 0.9, 0.4, 0.2, 0.1, 0.2], 2, "VEC2", false);
    let lift = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0];
    let target_position = buffer.floats(&lift, 3, "VEC3", true);
    let turn = [0.0, 0.0, 0.0, -0.3, 0.2, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0, 0.1];
    let target_tangent = buffer.floats(&turn, 3, "VEC3", false);
    let indices_offset = buffer.bytes.len();
    buffer
        .bytes
        .extend([0u16, 1, 2, 0, 2, 3].iter().flat_map(|i| i.to_le_bytes()));
    buffer
        .views
        .push(json!({ "buffer": 0, "byteOffset": indices_offset, "byteLength": 12 }));
    buffer.accessors.push(json!({
        "bufferView": buffer.views.len() - 1, "componentType": 5123, "count": 6, "type": "SCALAR"
    }));
    let indices = buffer.accessors.len() - 1;
    let data = |bytes: &[u8], mime: &str| {
        format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    };
    let transform = |offset: [f32; 2], rotation: f32, scale: [f32; 2]| json!({ "KHR_texture_transform": { "offset": offset, "rotation": rotation, "scale": scale } });
    let document = json!({
        "asset": { "version": "2.0" },
        "extensionsUsed": ["KHR_texture_transform", "KHR_materials_specular", "KHR_materials_ior"],
        "buffers": [{ "byteLength": buffer.bytes.len(), "uri": data(&buffer.bytes, "application/octet-stream") }],
        "bufferViews": buffer.views,
        "accessors": buffer.accessors,
        "images": [{ "uri": data(&png(), "image/png") }, { "uri": data(&png(), "image/png") }],
        "textures": [{ "source": 0 }, { "source": 1 }],
        "materials": [{
            "name": "painted",
            "pbrMetallicRoughness": {
                "baseColorFactor": [0.9, 0.8, 0.7, 1.0],
                "baseColorTexture": { "index": 0, "extensions": transform([0.25, 0.0], 0.0, [0.5, 0.5]) },
                "metallicFactor": 0.3,
                "roughnessFactor": 0.8,
                "metallicRoughnessTexture": { "index": 1, "texCoord": 1, "extensions": transform([0.1, 0.2], 0.5, [2.0, 3.0]) },
            },
            "normalTexture": { "index": 1, "scale": 0.7 },
            "occlusionTexture": { "index": 0, "texCoord": 1, "strength": 0.6 },
            "emissiveTexture": { "index": 0, "extensions": transform([0.25, 0.0], 0.0, [0.5, 0.5]) },
            "emissiveFactor": [0.5, 0.25, 0.0],
            "extensions": {
                "KHR_materials_specular": {
                    "specularFactor": 0.6,
                    "specularTexture": { "index": 1 },
                    "specularColorFactor": [1.0, 0.5, 0.25],
                    "specularColorTexture": { "index": 0, "texCoord": 1, "extensions": transform([0.5, 0.0], 0.0, [1.0, 2.0]) },
                },
                "KHR_materials_ior": { "ior": 1.33 },
            },
        }],
        "meshes": [{
            "primitives": [{
                "attributes": { "POSITION": position, "NORMAL": normal, "TANGENT": tangent, "TEXCOORD_0": uv0, "TEXCOORD_1": uv1 },
                "indices": indices,
                "material": 0,
                "targets": [{ "POSITION": target_position, "TANGENT": target_tangent }],
            }],
            "weights": [0.0],
        }],
        "nodes": [{ "mesh": 0, "name": "quad" }],
        "scenes": [{ "nodes": [0] }],
    });
    load_slice(document.to_string().as_bytes(), None, "quad.gltf").expect("the quad loads")
}

/// Per texture of `rig`'s first material: the coordinates each vertex reads it at (its set,
/// its transform applied), as the shader computes them.
fn texture_coordinates(rig: &Rig) -> Vec<Vec<Vec2>> {
    let material = &rig.materials[0];
    let primitive = &rig.meshes[0].primitives[0];
    let refs = [
        material.metallic_roughness_texture,
        material.normal_texture,
        material.occlusion_texture,
        material.emissive_texture,
        material.specular.texture,
        material.specular.color_texture,
    ];
    let mut read = vec![primitive.uvs.clone()];
    for texture in refs {
        let texture = texture.expect("every texture is kept");
        read.push(
            primitive
                .uv_set(texture.uv.set)
                .iter()
                .map(|&uv| texture.uv.apply(uv))
                .collect(),
        );
    }
    read
}

fn assert_close(a: &[Vec2], b: &[Vec2], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.iter().zip(b) {
        assert!((*x - *y).length() < 1e-6, "{what}: {x} against {y}");
    }
}

#[test]
fn a_written_quad_keeps_its_materials_textures_tangents_and_tangent_offsets() {
    let rig = textured_quad();
    let material = &rig.materials[0];
    assert!(material.normal_texture.is_some() && material.occlusion_texture.is_some());
    let target = &rig.morphs.of(0, 0)[0];
    assert!(target.has_tangents(), "the target's TANGENT offsets are read");

    let dir = common::temp_dir("write_materials");
    let out = dir.join("quad.glb");
    rigscope::save::write_rig(&rig, &out, &[], "test").expect("the quad is written");
    let again = load_file(&out).expect("the written quad loads");

    let (before, after) = (&rig.materials[0], &again.materials[0]);
    assert_eq!(after.metallic, before.metallic);
    assert_eq!(after.roughness, before.roughness);
    assert_eq!(after.normal_scale, 0.7);
    assert_eq!(after.occlusion_strength, 0.6);
    assert!((after.emissive - before.emissive).length() < 1e-6);
    assert!((after.base_color - before.base_color).length() < 1e-6);
    let specular = &before.specular;
    assert_eq!(
        (specular.factor, specular.color, specular.ior),
        (0.6, Vec3::new(1.0, 0.5, 0.25), 1.33)
    );
    assert_eq!(specular.color_texture.map(|t| (t.texture, t.uv.set)), Some((0, 1)));
    assert_eq!(
        (after.specular.factor, after.specular.color, after.specular.ior),
        (0.6, specular.color, 1.33)
    );
    for (k, (a, b)) in texture_coordinates(&rig)
        .iter()
        .zip(texture_coordinates(&again))
        .enumerate()
    {
        assert_close(a, &b, &format!("texture {k}'s coordinates"));
    }
    let pixels =
        |rig: &Rig, t: Option<rigscope::rig::TextureRef>| rig.textures[t.unwrap().texture].rgba8().into_owned();
    assert_eq!(
        pixels(&again, after.metallic_roughness_texture),
        pixels(&rig, before.metallic_roughness_texture)
    );
    assert_eq!(
        pixels(&again, after.normal_texture),
        pixels(&rig, before.normal_texture)
    );

    let (p, q) = (&rig.meshes[0].primitives[0], &again.meshes[0].primitives[0]);
    assert_eq!(q.tangents, p.tangents);
    let written = &again.morphs.of(0, 0)[0];
    assert_eq!(written.dense_tangents(4), target.dense_tangents(4));
    assert_eq!(written.dense(4), target.dense(4));
    assert_eq!(written.dense_tangents(4)[1], Vec3::new(-0.3, 0.2, 0.0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_normal_map_a_file_s_tangent_offsets_are_not_kept() {
    let mut rig = textured_quad();
    // The same file read as if it had no normal map: a rig without tangents keeps no offsets,
    // and its written targets carry none (glTF asks for TANGENT beside the primitive's own).
    rig.meshes[0].primitives[0].tangents.clear();
    for target in &mut rig.morphs.targets[0][0] {
        target.tangent_offsets.clear();
    }
    let dir = common::temp_dir("write_materials_plain");
    let out = dir.join("plain.glb");
    rigscope::save::write_rig(&rig, &out, &[], "test").expect("written");
    let again = load_file(&out).expect("loads");
    // The normal map is still there, so the importer generates MikkTSpace tangents again.
    assert_eq!(again.meshes[0].primitives[0].tangents.len(), 4);
    assert!(!again.morphs.of(0, 0)[0].has_tangents());
    let document = common::Doc::open(&out);
    let primitive = &document.array("meshes")[0]["primitives"][0];
    assert!(primitive["attributes"].get("TANGENT").is_none());
    assert!(primitive["targets"][0].get("TANGENT").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
