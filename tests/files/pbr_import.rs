//! Physically based materials as the importer reads them: factors, every texture's index, its
//! texture coordinate set and KHR_texture_transform, the raw coordinate sets and tangents those
//! textures need, against the shared files' JSON and hand-written documents.

use crate::common;

use crate::common::{Doc, gltf_with};
use glam::{Vec2, Vec4};
use rigscope::rig::{Material, Rig, TextureRef, UvTransform, load_slice};
use serde_json::{Value, json};

fn corpus_rig(file: &str) -> Option<(Rig, Doc)> {
    let dir = common::shared_folder("corpus")?.join("rigs");
    Some((common::load_rig(&dir, file), Doc::open(&dir.join(file))))
}

fn texture(index: usize, set: u32) -> Option<TextureRef> {
    Some(TextureRef {
        texture: index,
        uv: UvTransform {
            set,
            ..UvTransform::default()
        },
    })
}

fn close(a: f32, b: f64) -> bool {
    (f64::from(a) - b).abs() < 1e-6
}

#[test]
fn readyplayer_me_materials_keep_their_factors_and_textures() {
    let Some((rig, doc)) = corpus_rig("readyplayer.me.glb") else {
        return;
    };
    let by_name = |name: &str| -> &Material {
        rig.materials
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no material {name}"))
    };
    // Wolf3D_Headwear: metallic 0, roughness absent (1), every texture on set 0.
    let headwear = by_name("Wolf3D_Headwear");
    assert_eq!((headwear.metallic, headwear.roughness), (0.0, 1.0));
    assert_eq!(headwear.base_color_texture, Some(5));
    assert_eq!(headwear.metallic_roughness_texture, texture(7, 0));
    assert_eq!(headwear.normal_texture, texture(6, 0));
    assert_eq!((headwear.normal_scale, headwear.occlusion_texture), (1.0, None));
    // Wolf3D_Beard: fractional factors, a normal map and no metallic-roughness texture.
    let beard = by_name("Wolf3D_Beard");
    let json = &doc.json["materials"][3]["pbrMetallicRoughness"];
    assert!(close(beard.metallic, json["metallicFactor"].as_f64().unwrap()));
    assert!(close(beard.roughness, json["roughnessFactor"].as_f64().unwrap()));
    assert_eq!(beard.normal_texture, texture(4, 0));
    assert_eq!(beard.metallic_roughness_texture, None);
    // The file gives TANGENT with its normal maps: every normal-mapped primitive carries them,
    // as the file stores them.
    let mut tangent_primitives = 0;
    for (m, mesh) in rig.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let material = &rig.materials[primitive.material.unwrap()];
            let attributes = &doc.json["meshes"][m]["primitives"][p]["attributes"];
            match (material.normal_texture, attributes["TANGENT"].as_u64()) {
                (Some(_), Some(accessor)) => {
                    let stored = doc.read_floats(accessor as usize);
                    assert_eq!(primitive.tangents.len(), stored.len(), "mesh {m} primitive {p}");
                    for (t, s) in primitive.tangents.iter().zip(&stored) {
                        let s = Vec4::new(s[0] as f32, s[1] as f32, s[2] as f32, s[3] as f32);
                        assert_eq!(*t, s, "mesh {m} primitive {p}");
                    }
                    tangent_primitives += 1;
                }
                // A normal map without TANGENT: generated (tests/rendering/tangents.rs checks how).
                (Some(_), None) => assert_eq!(primitive.tangents.len(), primitive.vertex_count()),
                // Without a normal map the tangents are not read.
                _ => assert!(primitive.tangents.is_empty(), "mesh {m} primitive {p}"),
            }
            // Every texture reads set 0 unmoved: `uvs` is that set, nothing is kept twice.
            assert!(primitive.uv_sets.iter().all(Vec::is_empty), "mesh {m} primitive {p}");
        }
    }
    assert!(tangent_primitives >= 4, "{tangent_primitives} primitives with tangents");
}

#[test]
fn michelle_is_half_metallic_with_textures_and_gets_generated_tangents() {
    let Some((rig, _)) = corpus_rig("Michelle.glb") else {
        return;
    };
    let body = &rig.materials[0];
    assert_eq!((body.metallic, body.roughness), (0.5, 1.0));
    assert_eq!(body.base_color_texture, Some(2));
    assert_eq!(body.metallic_roughness_texture, texture(3, 0));
    assert_eq!(body.normal_texture, texture(1, 0));
    // A normal map without TANGENT: the importer generates them (tests/rendering/tangents.rs).
    let primitive = &rig.meshes[0].primitives[0];
    assert_eq!(primitive.tangents.len(), primitive.vertex_count());
}

#[test]
fn an_occlusion_texture_on_the_second_set_reads_texcoord_1_as_stored() {
    let Some((rig, doc)) = corpus_rig("MorphStressTest.gltf") else {
        return;
    };
    let base = rig.materials.iter().find(|m| m.name == "Base").expect("material Base");
    assert_eq!(base.occlusion_texture, texture(0, 1));
    assert_eq!(
        (base.occlusion_strength, base.metallic, base.roughness),
        (1.0, 0.0, 0.4)
    );
    let mut checked = 0;
    for (m, mesh) in rig.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let attributes = &doc.json["meshes"][m]["primitives"][p]["attributes"];
            let Some(accessor) = attributes["TEXCOORD_1"].as_u64() else {
                continue;
            };
            if rig.materials[primitive.material.unwrap()].occlusion_texture.is_none() {
                continue;
            }
            let stored = doc.read_accessor(accessor as usize);
            let set = primitive.uv_set(1);
            assert_eq!(set.len(), stored.len());
            for (got, want) in set.iter().zip(&stored) {
                assert!((*got - Vec2::new(want[0] as f32, want[1] as f32)).length() < 1e-6);
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no primitive read TEXCOORD_1");
}

#[test]
fn littlest_tokyo_keeps_its_emissive_texture_and_factor() {
    let Some((rig, _)) = corpus_rig("LittlestTokyo.glb") else {
        return;
    };
    let interiors = rig.materials.iter().find(|m| m.name == "interiors").expect("interiors");
    assert_eq!(interiors.emissive_texture, texture(2, 0));
    assert_eq!(interiors.emissive.to_array(), [0.1; 3]);
    let metal = rig.materials.iter().find(|m| m.name == "metalmat").expect("metalmat");
    assert_eq!((metal.metallic, metal.roughness), (1.0, 0.65));
    assert_eq!(metal.occlusion_texture, texture(1, 1));
}

fn bytes<T: bytemuck::NoUninit>(values: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(values).to_vec()
}

/// A triangle with two coordinate sets (set 1 = set 0 + 10) and a tangent, drawn with `material`.
fn triangle(material: Value) -> Result<Rig, rigscope::rig::RigError> {
    let mut bin = bytes::<f32>(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    bin.extend(bytes::<f32>(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0]));
    bin.extend(bytes::<f32>(&[10.0, 10.0, 11.0, 10.0, 10.0, 11.0]));
    bin.extend(bytes::<f32>(&[1.0, 0.0, 0.0, -1.0].repeat(3)));
    let textures: Vec<Value> = (0..4).map(|_| json!({"source": 0})).collect();
    let document = json!({
        "extensionsUsed": ["KHR_texture_transform"],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1, "TEXCOORD_1": 2, "TANGENT": 3}, "material": 0}]}],
        "materials": [material],
        "textures": textures,
        "images": [{"uri": "data:image/png;base64,AAAA"}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
            {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC2"},
            {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC2"},
            {"bufferView": 3, "componentType": 5126, "count": 3, "type": "VEC4"},
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 24},
            {"buffer": 0, "byteOffset": 60, "byteLength": 24},
            {"buffer": 0, "byteOffset": 84, "byteLength": 48},
        ],
    });
    load_slice(&gltf_with(document, &bin), None, "test.gltf")
}

#[test]
fn each_texture_keeps_its_own_set_and_transform() {
    let transform = json!({"KHR_texture_transform": {"offset": [0.5, 0.25], "rotation": 0.5, "scale": [2.0, 3.0]}});
    let rig = triangle(json!({
        "pbrMetallicRoughness": {
            "baseColorTexture": {"index": 0, "extensions": transform},
            "metallicRoughnessTexture": {"index": 1, "texCoord": 1},
            "metallicFactor": 0.25,
            "roughnessFactor": 0.75,
        },
        "normalTexture": {"index": 2, "scale": 0.5, "extensions": {"KHR_texture_transform": {"scale": [4.0, 4.0], "texCoord": 1}}},
        "occlusionTexture": {"index": 3, "strength": 0.3},
        "emissiveTexture": {"index": 0, "texCoord": 1},
        "emissiveFactor": [1.0, 1.0, 1.0],
    }))
    .unwrap();
    let material = &rig.materials[0];
    assert_eq!((material.metallic, material.roughness), (0.25, 0.75));
    assert_eq!(material.metallic_roughness_texture, texture(1, 1));
    let normal = material.normal_texture.expect("normal texture");
    assert_eq!(
        (normal.texture, normal.uv.set, normal.uv.scale),
        (2, 1, Vec2::splat(4.0))
    );
    assert_eq!(material.normal_scale, 0.5);
    assert_eq!(material.occlusion_texture, texture(3, 0));
    assert!((material.occlusion_strength - 0.3).abs() < 1e-7);
    assert_eq!(material.emissive_texture, texture(0, 1));
    let primitive = &rig.meshes[0].primitives[0];
    // The base color reads set 0 moved: `uvs` is that, and the occlusion texture's unmoved set 0
    // is kept apart.
    let base = material.base_color_uv;
    assert_eq!(
        primitive.uvs,
        [base.apply(Vec2::ZERO), base.apply(Vec2::X), base.apply(Vec2::Y)]
    );
    assert_eq!(primitive.uv_set(0), [Vec2::ZERO, Vec2::X, Vec2::Y]);
    assert_eq!(
        primitive.uv_set(1),
        [Vec2::splat(10.0), Vec2::new(11.0, 10.0), Vec2::new(10.0, 11.0)]
    );
    assert_eq!(primitive.tangents, [Vec4::new(1.0, 0.0, 0.0, -1.0); 3]);
    // The 3×2 rows the shader reads move a point as `apply` does.
    let rows = base.rows();
    for uv in [Vec2::new(0.3, 0.7), Vec2::new(-2.0, 5.0)] {
        let moved = Vec2::new(rows[0].dot(uv.extend(1.0)), rows[1].dot(uv.extend(1.0)));
        assert!(
            (moved - base.apply(uv)).length() < 1e-5,
            "{moved} vs {}",
            base.apply(uv)
        );
    }
}

#[test]
fn a_texture_on_a_set_beyond_the_second_is_left_out_with_a_warning() {
    let rig = triangle(json!({
        "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}},
        "normalTexture": {"index": 2, "texCoord": 2},
    }))
    .unwrap();
    assert_eq!(rig.materials[0].normal_texture, None);
    assert_eq!(rig.materials[0].base_color_texture, Some(0));
    let warning = rig
        .warnings
        .iter()
        .find(|w| w.contains("normal texture"))
        .expect("a warning");
    assert!(warning.contains("TEXCOORD_2"), "{warning}");
    // No normal map: its tangents are not read.
    assert!(rig.meshes[0].primitives[0].tangents.is_empty());
}

#[test]
fn a_material_naming_a_texture_the_file_lacks_is_refused_by_name() {
    let error = triangle(json!({"normalTexture": {"index": 9}}))
        .unwrap_err()
        .to_string();
    assert!(error.contains("normalTexture"), "{error}");
}
