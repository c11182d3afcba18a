//! Skinned test meshes built from tubes (open cylinders) and written as GLB files, so that
//! tests go through the importer exactly as a file from disk does.

use glam::{Mat4, Vec3};
use serde_json::json;
use std::ops::Range;

/// A joint at a bind position (no rotation), under `parent` (an index into the joint list).
pub struct TestJoint {
    pub name: String,
    pub parent: Option<usize>,
    pub position: Vec3,
}

impl TestJoint {
    pub fn new(name: &str, parent: Option<usize>, position: Vec3) -> TestJoint {
        TestJoint {
            name: name.to_string(),
            parent,
            position,
        }
    }
}

/// One skinned primitive (no normals: the importer computes them) and its skeleton.
pub struct SkinnedMesh {
    pub joints: Vec<TestJoint>,
    pub positions: Vec<Vec3>,
    pub indices: Vec<u32>,
    pub joint_ids: Vec<[u16; 4]>,
    pub weights: Vec<[f32; 4]>,
}

impl SkinnedMesh {
    pub fn new(joints: Vec<TestJoint>) -> SkinnedMesh {
        SkinnedMesh {
            joints,
            positions: Vec::new(),
            indices: Vec::new(),
            joint_ids: Vec::new(),
            weights: Vec::new(),
        }
    }

    /// Adds a tube of `rings` rings of `sides` vertices from `from` to `to`, each vertex
    /// weighted by `weigh(position)`; returns the new vertices' range.
    pub fn add_tube(
        &mut self,
        from: Vec3,
        to: Vec3,
        radius: f32,
        rings: usize,
        sides: usize,
        weigh: impl Fn(Vec3) -> ([u16; 4], [f32; 4]),
    ) -> Range<usize> {
        let start = self.positions.len();
        let axis = (to - from).normalize();
        let u = axis.any_orthonormal_vector();
        let v = axis.cross(u);
        for ring in 0..rings {
            let centre = from + (to - from) * (ring as f32 / (rings - 1) as f32);
            for side in 0..sides {
                let (sin, cos) = (std::f32::consts::TAU * side as f32 / sides as f32).sin_cos();
                let p = centre + radius * (cos * u + sin * v);
                let (j, w) = weigh(p);
                self.positions.push(p);
                self.joint_ids.push(j);
                self.weights.push(w);
            }
        }
        for ring in 0..rings - 1 {
            for side in 0..sides {
                let at = |r: usize, s: usize| (start + r * sides + s % sides) as u32;
                let (a, b) = (at(ring, side), at(ring, side + 1));
                let (c, d) = (at(ring + 1, side), at(ring + 1, side + 1));
                self.indices.extend_from_slice(&[a, b, c, b, d, c]);
            }
        }
        start..self.positions.len()
    }

    /// Copies the vertices in `range` (and the triangles among them, wound the other way) through
    /// `mirror`, with their joints renamed by `joint_map`; returns the copies' range, in the same
    /// order as `range`.
    pub fn add_mirrored(
        &mut self,
        range: Range<usize>,
        mirror: impl Fn(Vec3) -> Vec3,
        joint_map: impl Fn(u16) -> u16,
    ) -> Range<usize> {
        let start = self.positions.len();
        for v in range.clone() {
            self.positions.push(mirror(self.positions[v]));
            self.joint_ids.push(self.joint_ids[v].map(&joint_map));
            self.weights.push(self.weights[v]);
        }
        let shift = |i: u32| (i as usize - range.start + start) as u32;
        let triangles: Vec<[u32; 3]> = self
            .indices
            .chunks_exact(3)
            .filter(|t| t.iter().all(|&i| range.contains(&(i as usize))))
            .map(|t| [shift(t[0]), shift(t[2]), shift(t[1])])
            .collect();
        self.indices.extend(triangles.into_iter().flatten());
        start..self.positions.len()
    }

    /// The mesh as a GLB file: node 0 holds the mesh and the skin, nodes 1.. are the joints.
    pub fn glb(&self) -> Vec<u8> {
        let mut bin: Vec<u8> = Vec::new();
        let mut views = Vec::new();
        let mut accessors = Vec::new();
        let mut push = |bytes: &[u8], component: u32, count: usize, kind: &str, bounds: Option<(Vec3, Vec3)>| {
            let offset = bin.len();
            bin.extend_from_slice(bytes);
            bin.resize(bin.len().next_multiple_of(4), 0);
            views.push(json!({"buffer": 0, "byteOffset": offset, "byteLength": bytes.len()}));
            let mut accessor =
                json!({"bufferView": views.len() - 1, "componentType": component, "count": count, "type": kind});
            if let Some((min, max)) = bounds {
                accessor["min"] = json!(min.to_array());
                accessor["max"] = json!(max.to_array());
            }
            accessors.push(accessor);
            accessors.len() - 1
        };
        let (min, max) = self
            .positions
            .iter()
            .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), p| {
                (lo.min(*p), hi.max(*p))
            });
        let positions: Vec<[f32; 3]> = self.positions.iter().map(|p| p.to_array()).collect();
        let position = push(
            bytemuck::cast_slice(&positions),
            5126,
            positions.len(),
            "VEC3",
            Some((min, max)),
        );
        let joints = push(
            bytemuck::cast_slice(&self.joint_ids),
            5123,
            self.joint_ids.len(),
            "VEC4",
            None,
        );
        let weights = push(
            bytemuck::cast_slice(&self.weights),
            5126,
            self.weights.len(),
            "VEC4",
            None,
        );
        let indices = push(
            bytemuck::cast_slice(&self.indices),
            5125,
            self.indices.len(),
            "SCALAR",
            None,
        );
        let inverse_binds: Vec<[f32; 16]> = self
            .joints
            .iter()
            .map(|j| Mat4::from_translation(-j.position).to_cols_array())
            .collect();
        let inverse_bind = push(
            bytemuck::cast_slice(&inverse_binds),
            5126,
            inverse_binds.len(),
            "MAT4",
            None,
        );
        let mut nodes = vec![json!({"name": "body", "mesh": 0, "skin": 0})];
        for (k, joint) in self.joints.iter().enumerate() {
            let parent = joint.parent.map_or(Vec3::ZERO, |p| self.joints[p].position);
            let mut node = json!({"name": joint.name, "translation": (joint.position - parent).to_array()});
            let children: Vec<usize> = (0..self.joints.len())
                .filter(|&c| self.joints[c].parent == Some(k))
                .map(|c| c + 1)
                .collect();
            if !children.is_empty() {
                node["children"] = json!(children);
            }
            nodes.push(node);
        }
        let roots: Vec<usize> = std::iter::once(0)
            .chain(
                (0..self.joints.len())
                    .filter(|&k| self.joints[k].parent.is_none())
                    .map(|k| k + 1),
            )
            .collect();
        let document = json!({
            "asset": {"version": "2.0"},
            "scene": 0,
            "scenes": [{"nodes": roots}],
            "nodes": nodes,
            "meshes": [{"name": "body", "primitives": [{
                "attributes": {"POSITION": position, "JOINTS_0": joints, "WEIGHTS_0": weights},
                "indices": indices
            }]}],
            "skins": [{"joints": (1..=self.joints.len()).collect::<Vec<_>>(), "inverseBindMatrices": inverse_bind}],
            "buffers": [{"byteLength": bin.len()}],
            "bufferViews": views,
            "accessors": accessors,
        });
        rigscope::rig::glb_container(&serde_json::to_vec(&document).unwrap(), Some(&bin))
    }

    /// The mesh loaded through the importer.
    pub fn rig(&self) -> rigscope::rig::Rig {
        rigscope::rig::load_slice(&self.glb(), None, "test.glb").unwrap_or_else(|e| panic!("test mesh: {e}"))
    }
}

/// Influences of one joint.
pub fn only(joint: u16) -> ([u16; 4], [f32; 4]) {
    ([joint, 0, 0, 0], [1.0, 0.0, 0.0, 0.0])
}

/// Influences of two joints, `b` with weight `t` (clamped to 0..1).
pub fn blend(a: u16, b: u16, t: f32) -> ([u16; 4], [f32; 4]) {
    let t = t.clamp(0.0, 1.0);
    ([a, b, 0, 0], [1.0 - t, t, 0.0, 0.0])
}

/// Joints `upper` (y = 0), `lower` (y = 1, child of `upper`) and `tip` (y = 2, child of
/// `lower`): an arm along +Y bent at its elbow.
pub fn elbow_joints() -> Vec<TestJoint> {
    vec![
        TestJoint::new("upper", None, Vec3::ZERO),
        TestJoint::new("lower", Some(0), Vec3::Y),
        TestJoint::new("tip", Some(1), 2.0 * Vec3::Y),
    ]
}

/// A tube of radius 0.2 along +Y from 0 to 2 around [`elbow_joints`], weighted by `weigh`;
/// rings every 0.05, so one ring lies exactly at the elbow.
pub fn elbow(weigh: impl Fn(Vec3) -> ([u16; 4], [f32; 4])) -> SkinnedMesh {
    let mut mesh = SkinnedMesh::new(elbow_joints());
    mesh.add_tube(Vec3::ZERO, 2.0 * Vec3::Y, 0.2, 41, 24, weigh);
    mesh
}

/// [`elbow`] with every vertex from the elbow ring up following `lower` alone and the rest
/// `upper`: bending `lower` folds the elbow ring.
pub fn hard_elbow() -> SkinnedMesh {
    elbow(|p| if p.y < 1.0 - 1e-4 { only(0) } else { only(1) })
}
