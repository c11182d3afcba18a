//! The immutable description of a loaded file: node hierarchy, skins, meshes, materials and clips.
//!
//! Everything is stored in plain arrays indexed by `usize`. Nodes are sorted so that a parent
//! always comes before its children, which lets pose evaluation walk the hierarchy in one pass.

pub mod demo;
mod import;

use glam::{Mat4, Quat, Vec2, Vec3, Vec4};
use std::fmt;

pub use import::{load_file, load_slice};

/// A load or validation failure, worded for the person who opened the file.
#[derive(Debug, Clone, PartialEq)]
pub struct RigError(pub String);

impl fmt::Display for RigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RigError {}

/// Translation, rotation and scale of one node relative to its parent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trs {
    pub translation: Vec3,
    pub rotation: Quat,
    pub scale: Vec3,
}

impl Trs {
    pub const IDENTITY: Trs = Trs {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

impl Default for Trs {
    fn default() -> Self {
        Self::IDENTITY
    }
}

#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    /// Index of the parent node; always smaller than this node's own index.
    pub parent: Option<usize>,
    /// The transform the file gives the node (its pose when no clip drives it).
    pub rest: Trs,
}

#[derive(Debug, Clone)]
pub struct Skin {
    pub name: String,
    /// Node index of each joint; joints may be any nodes of the file.
    pub joints: Vec<usize>,
    /// One per joint; identity when the file gives none.
    pub inverse_binds: Vec<Mat4>,
}

/// Joint indices and weights of every vertex of a primitive: `sets` groups of four per vertex
/// (1 for `JOINTS_0`/`WEIGHTS_0`, 2 when `JOINTS_1`/`WEIGHTS_1` are present), stored vertex-major.
#[derive(Debug, Clone)]
pub struct Influences {
    pub sets: usize,
    pub joints: Vec<[u16; 4]>,
    pub weights: Vec<[f32; 4]>,
}

impl Influences {
    /// The (joint, weight) pairs of vertex `v`, including zero weights.
    pub fn of_vertex(&self, v: usize) -> impl Iterator<Item = (u16, f32)> + '_ {
        let range = v * self.sets..(v + 1) * self.sets;
        self.joints[range.clone()]
            .iter()
            .zip(&self.weights[range])
            .flat_map(|(j, w)| j.iter().copied().zip(w.iter().copied()))
    }
}

#[derive(Debug, Clone)]
pub struct Primitive {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub uvs: Vec<Vec2>,
    pub influences: Option<Influences>,
    /// Triangle list; generated as 0..n when the file has no indices.
    pub indices: Vec<u32>,
    pub material: Option<usize>,
}

impl Primitive {
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }
}

#[derive(Debug, Clone)]
pub struct Mesh {
    pub name: String,
    pub primitives: Vec<Primitive>,
}

/// A mesh placed in the scene by a node, skinned when `skin` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeshInstance {
    pub node: usize,
    pub mesh: usize,
    pub skin: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct Material {
    pub name: String,
    pub base_color: Vec4,
    pub base_color_texture: Option<usize>,
    pub double_sided: bool,
}

impl Default for Material {
    fn default() -> Self {
        Material {
            name: "default".into(),
            base_color: Vec4::new(0.8, 0.8, 0.8, 1.0),
            base_color_texture: None,
            double_sided: false,
        }
    }
}

/// An sRGB RGBA8 image.
#[derive(Debug, Clone)]
pub struct Texture {
    pub name: String,
    pub width: u32,
    pub height: u32,
    pub rgba8: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    Translation,
    Rotation,
    Scale,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    Step,
    Linear,
    CubicSpline,
}

/// One animated property of one node.
#[derive(Debug, Clone)]
pub struct Channel {
    pub node: usize,
    pub property: Property,
    pub interpolation: Interpolation,
    /// Key times in seconds, increasing.
    pub times: Vec<f32>,
    /// One value per key (xyz in `.xyz` for translation and scale, a quaternion for rotation);
    /// three per key for cubic splines: in-tangent, value, out-tangent.
    pub values: Vec<Vec4>,
}

#[derive(Debug, Clone)]
pub struct Clip {
    pub name: String,
    /// Time of the last key of any channel, in seconds.
    pub duration: f32,
    pub channels: Vec<Channel>,
}

#[derive(Debug, Clone, Default)]
pub struct Rig {
    pub name: String,
    pub nodes: Vec<Node>,
    pub skins: Vec<Skin>,
    pub meshes: Vec<Mesh>,
    pub instances: Vec<MeshInstance>,
    pub materials: Vec<Material>,
    pub textures: Vec<Texture>,
    pub clips: Vec<Clip>,
    /// Problems that did not stop the load (a missing texture, say).
    pub warnings: Vec<String>,
}

impl Rig {
    pub fn joint_count(&self) -> usize {
        self.skins.iter().map(|s| s.joints.len()).sum()
    }

    pub fn vertex_count(&self) -> usize {
        self.instances
            .iter()
            .flat_map(|i| &self.meshes[i.mesh].primitives)
            .map(Primitive::vertex_count)
            .sum()
    }

    pub fn triangle_count(&self) -> usize {
        self.instances
            .iter()
            .flat_map(|i| &self.meshes[i.mesh].primitives)
            .map(|p| p.indices.len() / 3)
            .sum()
    }

    /// A clip by exact name, or by index when `key` is a number.
    pub fn find_clip(&self, key: &str) -> Option<usize> {
        self.clips
            .iter()
            .position(|c| c.name == key)
            .or_else(|| key.parse::<usize>().ok().filter(|&i| i < self.clips.len()))
    }
}

/// Area-weighted vertex normals of an indexed triangle list (used when a file has no NORMAL).
pub fn smooth_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::ZERO; positions.len()];
    for tri in indices.chunks_exact(3) {
        let [a, b, c] = [tri[0], tri[1], tri[2]].map(|i| i as usize);
        if a >= positions.len() || b >= positions.len() || c >= positions.len() {
            continue;
        }
        // The cross product's length is twice the triangle's area, so big faces weigh more.
        let n = (positions[b] - positions[a]).cross(positions[c] - positions[a]);
        normals[a] += n;
        normals[b] += n;
        normals[c] += n;
    }
    for n in &mut normals {
        *n = n.try_normalize().unwrap_or(Vec3::Y);
    }
    normals
}
