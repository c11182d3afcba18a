//! A small glTF scene whose one animation drives properties through `KHR_animation_pointer`
//! (material factors, a texture transform, a node's visibility, a light, a camera), built here
//! key by key so the tests know every value the file holds.

use serde_json::{Value, json};

/// Two unit quads facing +Z: node 0 (material 0) at x = −[`QUAD_X`], node 1 (material 1) at
/// x = +[`QUAD_X`]; both materials unlit.
pub const QUAD_X: f32 = 0.6;

/// Material 0's base colour: linear from red at 0 s to blue at 1 s.
pub const BASE_COLOR_KEYS: [(f32, [f32; 4]); 2] = [(0.0, [1.0, 0.0, 0.0, 1.0]), (1.0, [0.0, 0.0, 1.0, 1.0])];
/// Material 0's roughness: held (STEP) keys.
pub const ROUGHNESS_KEYS: [(f32, f32); 3] = [(0.0, 0.2), (0.4, 0.9), (0.8, 0.5)];
/// Material 1's emissive factor: a cubic spline, (time, in-tangent, value, out-tangent).
/// A cubic spline key: time, in-tangent, value, out-tangent.
pub type CubicKey = (f32, [f32; 3], [f32; 3], [f32; 3]);

pub const EMISSIVE_KEYS: [CubicKey; 2] = [
    (0.0, [0.0; 3], [0.0, 0.0, 0.0], [0.0, 0.4, 0.0]),
    (1.0, [0.0, 0.2, 0.0], [0.0, 0.3, 0.0], [0.0; 3]),
];
/// Material 1's occlusion texture offset: linear.
pub const OFFSET_KEYS: [(f32, [f32; 2]); 2] = [(0.0, [0.0, 0.0]), (1.0, [0.5, -1.0])];
/// Node 1's visibility (unsigned bytes, held): shown until 0.5 s, hidden after.
pub const VISIBLE_KEYS: [(f32, u8); 2] = [(0.0, 1), (0.5, 0)];
/// Light 0's intensity: linear.
pub const INTENSITY_KEYS: [(f32, f32); 2] = [(0.0, 1.0), (1.0, 5.0)];

/// Binary data and the buffer views and accessors that describe it.
#[derive(Default)]
struct Data {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Data {
    /// Adds `bytes` as a view and an accessor of `count` elements; returns the accessor.
    fn add(&mut self, bytes: &[u8], count: usize, kind: &str, component: u32) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        self.bin.extend_from_slice(bytes);
        let mut accessor =
            json!({"bufferView": self.views.len() - 1, "count": count, "type": kind, "componentType": component});
        if kind == "SCALAR" && component == 5126 && count > 0 {
            // Key times: glTF asks for their bounds.
            let floats: Vec<f32> = bytes
                .chunks(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            accessor["min"] = json!([floats.iter().copied().fold(f32::INFINITY, f32::min)]);
            accessor["max"] = json!([floats.iter().copied().fold(f32::NEG_INFINITY, f32::max)]);
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    fn floats(&mut self, values: &[f32], kind: &str, per: usize) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.add(&bytes, values.len() / per, kind, 5126)
    }
}

fn pointer_channel(sampler: usize, pointer: &str) -> Value {
    json!({"sampler": sampler, "target": {"path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer": pointer}}}})
}

/// The scene's document and its one buffer's bytes (see [`crate::common::gltf_with`]).
pub fn property_scene() -> (Value, Vec<u8>) {
    let mut data = Data::default();
    let corners: [f32; 12] = [-0.5, -0.5, 0.0, 0.5, -0.5, 0.0, 0.5, 0.5, 0.0, -0.5, 0.5, 0.0];
    let positions = data.floats(&corners, "VEC3", 3);
    data.accessors[positions]["min"] = json!([-0.5, -0.5, 0.0]);
    data.accessors[positions]["max"] = json!([0.5, 0.5, 0.0]);
    let indices: Vec<u8> = [0u16, 1, 2, 0, 2, 3].iter().flat_map(|i| i.to_le_bytes()).collect();
    let indices = data.add(&indices, 6, "SCALAR", 5123);
    let mut samplers = Vec::new();
    let mut sampler = |data: &mut Data, times: &[f32], values: &[f32], kind: &str, per: usize, interpolation: &str| {
        let input = data.floats(times, "SCALAR", 1);
        let output = data.floats(values, kind, per);
        samplers.push(json!({"input": input, "output": output, "interpolation": interpolation}));
        samplers.len() - 1
    };
    let base = sampler(
        &mut data,
        &BASE_COLOR_KEYS.map(|k| k.0),
        &BASE_COLOR_KEYS.iter().flat_map(|k| k.1).collect::<Vec<f32>>(),
        "VEC4",
        4,
        "LINEAR",
    );
    let roughness = sampler(
        &mut data,
        &ROUGHNESS_KEYS.map(|k| k.0),
        &ROUGHNESS_KEYS.map(|k| k.1),
        "SCALAR",
        1,
        "STEP",
    );
    let emissive_values: Vec<f32> = EMISSIVE_KEYS.iter().flat_map(|k| [k.1, k.2, k.3].concat()).collect();
    let emissive = sampler(
        &mut data,
        &EMISSIVE_KEYS.map(|k| k.0),
        &emissive_values,
        "VEC3",
        3,
        "CUBICSPLINE",
    );
    let offset = sampler(
        &mut data,
        &OFFSET_KEYS.map(|k| k.0),
        &OFFSET_KEYS.iter().flat_map(|k| k.1).collect::<Vec<f32>>(),
        "VEC2",
        2,
        "LINEAR",
    );
    let intensity = sampler(
        &mut data,
        &INTENSITY_KEYS.map(|k| k.0),
        &INTENSITY_KEYS.map(|k| k.1),
        "SCALAR",
        1,
        "LINEAR",
    );
    let camera = sampler(&mut data, &[0.0, 1.0], &[0.5, 0.9], "SCALAR", 1, "LINEAR");
    let visible_times = data.floats(&VISIBLE_KEYS.map(|k| k.0), "SCALAR", 1);
    let visible_values = data.add(&VISIBLE_KEYS.map(|k| k.1), VISIBLE_KEYS.len(), "SCALAR", 5121);
    samplers.push(json!({"input": visible_times, "output": visible_values, "interpolation": "STEP"}));
    let visible = samplers.len() - 1;
    let channels = vec![
        pointer_channel(base, "/materials/0/pbrMetallicRoughness/baseColorFactor"),
        pointer_channel(roughness, "/materials/0/pbrMetallicRoughness/roughnessFactor"),
        pointer_channel(emissive, "/materials/1/emissiveFactor"),
        pointer_channel(
            offset,
            "/materials/1/occlusionTexture/extensions/KHR_texture_transform/offset",
        ),
        pointer_channel(visible, "/nodes/1/extensions/KHR_node_visibility/visible"),
        pointer_channel(intensity, "/extensions/KHR_lights_punctual/lights/0/intensity"),
        pointer_channel(camera, "/cameras/0/perspective/yfov"),
    ];
    let unlit = |color: [f32; 4]| json!({"pbrMetallicRoughness": {"baseColorFactor": color}, "extensions": {"KHR_materials_unlit": {}}});
    let mesh = |material: usize| json!({"primitives": [{"attributes": {"POSITION": positions}, "indices": indices, "material": material}]});
    let document = json!({
        "extensionsUsed": ["KHR_animation_pointer", "KHR_materials_unlit", "KHR_node_visibility", "KHR_lights_punctual"],
        "extensions": {"KHR_lights_punctual": {"lights": [{"type": "point", "intensity": 1.0}]}},
        "scene": 0,
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [
            {"name": "left", "mesh": 0, "translation": [-QUAD_X, 0.0, 0.0]},
            {"name": "right", "mesh": 1, "translation": [QUAD_X, 0.0, 0.0]},
        ],
        "meshes": [mesh(0), mesh(1)],
        "materials": [unlit([1.0, 1.0, 1.0, 1.0]), unlit([0.0, 1.0, 0.0, 1.0])],
        "cameras": [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}}],
        "animations": [{"name": "properties", "channels": channels, "samplers": samplers}],
        "buffers": [{"byteLength": data.bin.len()}],
        "bufferViews": data.views,
        "accessors": data.accessors,
    });
    (document, data.bin)
}
