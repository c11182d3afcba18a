//! The built-in demo rig: a tapered tail of jointed segments with smooth weights and two clips,
//! generated here and written as a GLB. `assets/demo.glb` is this generator's output (a test
//! checks that they match; `rigscope make-demo assets/demo.glb` rewrites it).

use glam::{Mat4, Quat, Vec3};
use serde_json::{Value, json};
use std::f32::consts::{PI, TAU};

/// The GLB the viewer opens when it is given no file.
pub const DEMO_GLB: &[u8] = include_bytes!("../../assets/demo.glb");

/// Joint count of the committed demo rig.
pub const DEMO_JOINTS: usize = 6;

const SEGMENT: f32 = 0.7;
const RINGS_PER_SEGMENT: usize = 10;
const SIDES: usize = 24;
const BASE_RADIUS: f32 = 0.45;
const TAPER: f32 = 0.6;
/// Weights fall off over this many segment lengths from each segment's middle.
const FALLOFF: f32 = 1.5;
const CLIP_SECONDS: f32 = 2.0;
const KEYS: usize = 21;

/// A tail of `joints` joints (at least 1) as GLB bytes.
pub fn demo_glb(joints: usize) -> Vec<u8> {
    let joints = joints.max(1);
    let tail = TailMesh::new(joints);
    let (vertex_joints, vertex_weights): (Vec<[u16; 4]>, Vec<[f32; 4]>) =
        tail.heights.iter().map(|&y| smooth_weights(y, joints)).unzip();

    let mut glb = GlbBuilder::default();
    let positions = &tail.positions;
    let (min, max) = positions.iter().fold(([f32::MAX; 3], [f32::MIN; 3]), |(lo, hi), p| {
        (
            [lo[0].min(p[0]), lo[1].min(p[1]), lo[2].min(p[2])],
            [hi[0].max(p[0]), hi[1].max(p[1]), hi[2].max(p[2])],
        )
    });
    let position = glb.accessor(
        bytemuck::cast_slice(positions),
        FLOAT,
        positions.len(),
        "VEC3",
        Some((&min, &max)),
    );
    let normal = glb.accessor(
        bytemuck::cast_slice(&tail.normals),
        FLOAT,
        tail.normals.len(),
        "VEC3",
        None,
    );
    let uv = glb.accessor(bytemuck::cast_slice(&tail.uvs), FLOAT, tail.uvs.len(), "VEC2", None);
    let joint = glb.accessor(
        bytemuck::cast_slice(&vertex_joints),
        UNSIGNED_SHORT,
        vertex_joints.len(),
        "VEC4",
        None,
    );
    let weight = glb.accessor(
        bytemuck::cast_slice(&vertex_weights),
        FLOAT,
        vertex_weights.len(),
        "VEC4",
        None,
    );
    let index = glb.accessor(
        bytemuck::cast_slice(&tail.indices),
        UNSIGNED_INT,
        tail.indices.len(),
        "SCALAR",
        None,
    );
    let inverse_binds: Vec<[f32; 16]> = (0..joints)
        .map(|j| Mat4::from_translation(Vec3::new(0.0, -(j as f32) * SEGMENT, 0.0)).to_cols_array())
        .collect();
    let inverse_bind = glb.accessor(bytemuck::cast_slice(&inverse_binds), FLOAT, joints, "MAT4", None);
    let animations = clips(&mut glb, joints);

    let document = json!({
        "asset": {"version": "2.0", "generator": "rigscope demo rig"},
        "scene": 0,
        "scenes": [{"name": "Demo", "nodes": [0, 1]}],
        "nodes": chain_nodes(joints),
        "meshes": [{"name": "Tail", "primitives": [{
            "attributes": {"POSITION": position, "NORMAL": normal, "TEXCOORD_0": uv, "JOINTS_0": joint, "WEIGHTS_0": weight},
            "indices": index,
            "material": 0
        }]}],
        "materials": [{"name": "Tail", "doubleSided": false,
            "pbrMetallicRoughness": {"baseColorFactor": [0.95, 0.55, 0.2, 1.0], "metallicFactor": 0.0, "roughnessFactor": 0.6}}],
        "skins": [{"name": "Tail", "joints": (1..=joints).collect::<Vec<_>>(), "inverseBindMatrices": inverse_bind, "skeleton": 1}],
        "animations": animations,
    });
    glb.finish(document)
}

/// The tail's surface: a tapered tube of rings, closed by flat caps.
#[derive(Default)]
struct TailMesh {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    uvs: Vec<[f32; 2]>,
    /// Each vertex's height up the tail, which its weights follow.
    heights: Vec<f32>,
    indices: Vec<u32>,
}

impl TailMesh {
    fn new(joints: usize) -> TailMesh {
        let height = joints as f32 * SEGMENT;
        let mut tail = TailMesh::default();
        tail.tube(joints, height);
        tail.caps(height);
        tail
    }

    fn radius(y: f32, height: f32) -> f32 {
        BASE_RADIUS * (1.0 - TAPER * y / height)
    }

    fn push(&mut self, position: [f32; 3], normal: [f32; 3], uv: [f32; 2], height: f32) {
        self.positions.push(position);
        self.normals.push(normal);
        self.uvs.push(uv);
        self.heights.push(height);
    }

    fn tube(&mut self, joints: usize, height: f32) {
        let slope = -BASE_RADIUS * TAPER / height;
        let rings = joints * RINGS_PER_SEGMENT + 1;
        for ring in 0..rings {
            let y = height * ring as f32 / (rings - 1) as f32;
            for side in 0..=SIDES {
                let angle = TAU * side as f32 / SIDES as f32;
                let (sin, cos) = angle.sin_cos();
                let r = Self::radius(y, height);
                let normal = Vec3::new(cos, -slope, sin).normalize().to_array();
                self.push(
                    [r * cos, y, r * sin],
                    normal,
                    [side as f32 / SIDES as f32, y / height],
                    y,
                );
            }
        }
        let row = (SIDES + 1) as u32;
        for ring in 0..(rings - 1) as u32 {
            for side in 0..SIDES as u32 {
                let a = ring * row + side;
                let (b, c, d) = (a + 1, a + row, a + row + 1);
                self.indices.extend_from_slice(&[a, c, b, b, c, d]);
            }
        }
    }

    /// A centre vertex plus a ring of their own at each end, so the cap normals stay flat.
    fn caps(&mut self, height: f32) {
        for (y, up) in [(0.0, -1.0f32), (height, 1.0)] {
            let centre = self.positions.len() as u32;
            self.push([0.0, y, 0.0], [0.0, up, 0.0], [0.5, y / height], y);
            for side in 0..SIDES {
                let angle = TAU * side as f32 / SIDES as f32;
                let r = Self::radius(y, height);
                let position = [r * angle.cos(), y, r * angle.sin()];
                self.push(position, [0.0, up, 0.0], [side as f32 / SIDES as f32, y / height], y);
            }
            for side in 0..SIDES as u32 {
                let a = centre + 1 + side;
                let b = centre + 1 + (side + 1) % SIDES as u32;
                if up > 0.0 {
                    self.indices.extend_from_slice(&[centre, b, a]);
                } else {
                    self.indices.extend_from_slice(&[centre, a, b]);
                }
            }
        }
    }
}

/// Node 0 holds the mesh; nodes 1.. are the joint chain.
fn chain_nodes(joints: usize) -> Vec<Value> {
    let mut nodes = vec![json!({"name": "Tail", "mesh": 0, "skin": 0})];
    for j in 0..joints {
        let mut node = json!({"name": format!("joint{j}")});
        if j > 0 {
            node["translation"] = json!([0.0, SEGMENT, 0.0]);
        }
        if j + 1 < joints {
            node["children"] = json!([j + 2]);
        }
        nodes.push(node);
    }
    nodes
}

/// The "Wave" and "Twist" clips, keyed on every joint but the root.
fn clips(glb: &mut GlbBuilder, joints: usize) -> Vec<Value> {
    let times: Vec<f32> = (0..KEYS).map(|k| CLIP_SECONDS * k as f32 / (KEYS - 1) as f32).collect();
    let (t_min, t_max) = ([0.0f32], [CLIP_SECONDS]);
    let time = glb.accessor(
        bytemuck::cast_slice(&times),
        FLOAT,
        KEYS,
        "SCALAR",
        Some((&t_min, &t_max)),
    );
    let mut animations = Vec::new();
    for (name, pose) in [("Wave", wave as fn(usize, f32) -> Quat), ("Twist", twist)] {
        let mut samplers = Vec::new();
        let mut channels = Vec::new();
        for j in 1..joints {
            // Cubic spline keys: in-tangent, value, out-tangent, with tangents as the
            // central-difference derivative so the curve passes smoothly through each key.
            let h = 1e-3;
            let values: Vec<[f32; 4]> = times
                .iter()
                .flat_map(|&t| {
                    let slope = (glam::Vec4::from(pose(j, t + h)) - glam::Vec4::from(pose(j, t - h))) / (2.0 * h);
                    [slope.to_array(), pose(j, t).to_array(), slope.to_array()]
                })
                .collect();
            let output = glb.accessor(bytemuck::cast_slice(&values), FLOAT, values.len(), "VEC4", None);
            channels.push(json!({"sampler": samplers.len(), "target": {"node": j + 1, "path": "rotation"}}));
            samplers.push(json!({"input": time, "output": output, "interpolation": "CUBICSPLINE"}));
        }
        animations.push(json!({"name": name, "samplers": samplers, "channels": channels}));
    }
    animations
}

/// Rotation of joint `j` in the "Wave" clip: a wave travelling up the tail, bind pose at t = 0.
fn wave(j: usize, t: f32) -> Quat {
    let phase = 0.6 * j as f32;
    let angle = 0.35 * ((PI * t - phase).sin() + phase.sin());
    Quat::from_rotation_z(angle)
}

/// Rotation of joint `j` in the "Twist" clip: the middle joint twists about the tail's axis (the
/// case where linear blend skinning pinches), the others sway a little.
fn twist(j: usize, t: f32) -> Quat {
    let s = (PI * t).sin();
    if j == 3 {
        Quat::from_rotation_y(2.4 * s)
    } else {
        Quat::from_rotation_x(0.15 * s)
    }
}

/// Up to four joints weighted by distance from the middle of each joint's segment.
fn smooth_weights(y: f32, joints: usize) -> ([u16; 4], [f32; 4]) {
    let mut all: Vec<(f32, u16)> = (0..joints)
        .map(|j| {
            let d = (y - (j as f32 + 0.5) * SEGMENT).abs() / (FALLOFF * SEGMENT);
            ((1.0 - d).max(0.0).powi(2), j as u16)
        })
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0));
    all.truncate(4);
    let total: f32 = all.iter().map(|w| w.0).sum();
    let mut ids = [0u16; 4];
    let mut weights = [0f32; 4];
    for (k, (w, j)) in all.into_iter().enumerate() {
        ids[k] = j;
        weights[k] = if total > 0.0 {
            w / total
        } else if k == 0 {
            1.0
        } else {
            0.0
        };
    }
    (ids, weights)
}

const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
const FLOAT: u32 = 5126;

/// Collects binary data and accessors, then writes a GLB container.
#[derive(Default)]
struct GlbBuilder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl GlbBuilder {
    fn accessor(
        &mut self,
        bytes: &[u8],
        component_type: u32,
        count: usize,
        kind: &str,
        bounds: Option<(&[f32], &[f32])>,
    ) -> usize {
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        self.views
            .push(json!({"buffer": 0, "byteOffset": offset, "byteLength": bytes.len()}));
        let mut accessor =
            json!({"bufferView": self.views.len() - 1, "componentType": component_type, "count": count, "type": kind});
        if let Some((min, max)) = bounds {
            accessor["min"] = json!(min);
            accessor["max"] = json!(max);
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    fn finish(self, mut document: Value) -> Vec<u8> {
        document["buffers"] = json!([{"byteLength": self.bin.len()}]);
        document["bufferViews"] = Value::Array(self.views);
        document["accessors"] = Value::Array(self.accessors);
        let mut json = serde_json::to_vec(&document).expect("a JSON value always serializes");
        json.resize(json.len().next_multiple_of(4), b' ');
        let total = 12 + 8 + json.len() + 8 + self.bin.len();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json);
        out.extend_from_slice(&(self.bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&self.bin);
        out
    }
}
