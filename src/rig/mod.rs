//! The immutable description of a loaded file: node hierarchy, skins, meshes, materials and clips.
//!
//! Everything is stored in plain arrays indexed by `usize`. Nodes are sorted so that a parent
//! always comes before its children, which lets pose evaluation walk the hierarchy in one pass.

pub mod bind;
pub mod demo;
mod error;
mod glb;
mod hierarchy;
mod import;
mod material;
mod property;
mod skinning;

use glam::{Mat4, Quat, Vec2, Vec3, Vec4};

pub use error::{BudgetExceeded, BvhError, Codec, FbxError, FbxErrorKind, FileError, RigError, UriError};
pub use glb::{GlbError, glb_container, split_glb};
pub use hierarchy::{Hierarchy, HierarchyCache};
pub use import::{
    Budget, BvhErrorKind, BvhFacts, BvhRotationOrder, BvhUnit, CONSTRAINT_EXTENSION, ColliderShape, ConstraintKind,
    FbxFinding, FbxFindingKind, LoadOptions, MorphBind, NodeConstraint, POINTER_EXTENSION, PointerFinding,
    RIG_FILE_EXTENSIONS, SPRING_EXTENSION, SUPPORTED_EXTENSIONS, SpringBones, SpringChain, SpringCollider, SpringJoint,
    SpringSettings, SpringSource, SpringTail, VRM0_TAIL_METRES, VRMA_EXTENSION, VrmExpression, VrmaError, VrmaFacts,
    degrees_between, degrees_from_rotation, human_bytes, is_bvh, is_fbx, load_file, load_file_with, load_slice,
    load_slice_with, mikktspace_tangents, read_file_bounded, read_uri, rotation_from_degrees,
};
pub use material::{AlphaMode, DEFAULT_IOR, Material, Specular, Texture, TextureRef, UvTransform};
pub use property::{LightProperty, MaterialFactor, MaterialTexture, PropertyTarget, PropertyTrack, TransformPart};
pub use skinning::SkinningMethod;

/// Opens `path`, or the built-in demo rig when there is none.
pub fn open(path: Option<&std::path::Path>) -> Result<Rig, RigError> {
    open_with(path, &LoadOptions::default())
}

/// [`open`] with what a file leaves open told by `options`.
pub fn open_with(path: Option<&std::path::Path>, options: &LoadOptions) -> Result<Rig, RigError> {
    match path {
        Some(path) => load_file_with(path, options),
        None => load_slice(demo::DEMO_GLB, None, "demo.glb"),
    }
}

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
        Inf::of(self).of_vertex(v)
    }
}

/// A borrowed run of vertices' influences, `sets` groups of four per vertex (a view of
/// [`Influences`] that can be split between threads, or cut to some vertices, without copying).
#[derive(Debug, Clone, Copy)]
pub struct Inf<'a> {
    pub sets: usize,
    pub joints: &'a [[u16; 4]],
    pub weights: &'a [[f32; 4]],
}

impl<'a> Inf<'a> {
    pub fn of(influences: &'a Influences) -> Inf<'a> {
        Inf {
            sets: influences.sets,
            joints: &influences.joints,
            weights: &influences.weights,
        }
    }

    /// The (joint, weight) pairs of vertex `v`, including zero weights.
    pub fn of_vertex(self, v: usize) -> impl Iterator<Item = (u16, f32)> + 'a {
        let range = v * self.sets..(v + 1) * self.sets;
        self.joints[range.clone()]
            .iter()
            .zip(&self.weights[range])
            .flat_map(|(j, w)| j.iter().copied().zip(w.iter().copied()))
    }

    /// The influences of vertices `range` (vertex 0 of the result is `range.start`).
    ///
    /// # Panics
    /// When the view does not cover `range`.
    pub fn vertices(self, range: std::ops::Range<usize>) -> Inf<'a> {
        let sets = self.sets;
        let slots = range.start * sets..range.end * sets;
        Inf {
            sets,
            joints: &self.joints[slots.clone()],
            weights: &self.weights[slots],
        }
    }
}

#[derive(Debug, Clone)]
pub struct Primitive {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    /// The coordinates the base color texture reads, its transform applied (what the writers
    /// export as `TEXCOORD_0`).
    pub uvs: Vec<Vec2>,
    /// `TEXCOORD_0` and `TEXCOORD_1` as the file gives them, which the other textures read
    /// through their own transforms. Set 0 is empty when `uvs` already is it (the base color
    /// reads set 0 unmoved, or the file has none); set 1 is empty when the file has none.
    pub uv_sets: [Vec<Vec2>; 2],
    /// `TANGENT` (xyz, and the bitangent's sign in w); empty when the file has none.
    pub tangents: Vec<Vec4>,
    pub influences: Option<Influences>,
    /// Triangle list; generated as 0..n when the file has no indices.
    pub indices: Vec<u32>,
    pub material: Option<usize>,
    /// `COLOR_0`, multiplied into the base color; empty when the file has none.
    pub colors: Vec<Vec4>,
}

impl Primitive {
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// The texture coordinates of set `set` (0 or 1) as the file gives them: `uvs` where set 0
    /// is not kept apart, set 0 where set 1 is missing.
    pub fn uv_set(&self, set: u32) -> &[Vec2] {
        match (set, &self.uv_sets) {
            (1, [_, one]) if !one.is_empty() => one,
            (_, [zero, _]) if !zero.is_empty() => zero,
            _ => &self.uvs,
        }
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
#[derive(Debug, Clone, PartialEq)]
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

#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    pub name: String,
    /// Time of the last key of any channel, in seconds.
    pub duration: f32,
    pub channels: Vec<Channel>,
    /// The file the clip was added from (`None`: the rig's own file).
    pub source: Option<std::path::PathBuf>,
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
    /// What the file said that the arrays above do not keep; read by the rig report.
    pub facts: ImportFacts,
    /// External files the rig refers to (buffers and images by relative URI), resolved against
    /// its folder, whether or not they could be read; the viewer watches them for changes.
    pub sources: Vec<std::path::PathBuf>,
    pub morphs: Morphs,
    /// How the file asks for its meshes to be skinned (FBX skin deformers; glTF says nothing).
    pub skinning: FileSkinning,
    /// Node tree facts, computed on first use (the importer asks once, so a loaded rig carries
    /// them); a rig is not edited after that.
    pub hierarchy_cache: HierarchyCache,
}

impl Rig {
    /// The data's own size in bytes, the yardstick of what loading the rig may cost: each
    /// texture decoded with its whole mip chain, every vertex array and index, the morph
    /// targets, and every clip's keys.
    pub fn data_bytes(&self) -> u64 {
        fn bytes<T>(v: &[T]) -> u64 {
            std::mem::size_of_val(v) as u64
        }
        let textures: u64 = (self.textures.iter())
            .map(|t| {
                let (mut w, mut h, mut sum) = (u64::from(t.width), u64::from(t.height), 0);
                loop {
                    sum += w * h * 4;
                    if w <= 1 && h <= 1 {
                        break sum;
                    }
                    (w, h) = ((w / 2).max(1), (h / 2).max(1));
                }
            })
            .sum();
        let vertices: u64 = (self.meshes.iter().flat_map(|m| &m.primitives))
            .map(|p| {
                let influences = p
                    .influences
                    .as_ref()
                    .map_or(0, |i| bytes(&i.joints) + bytes(&i.weights));
                bytes(&p.positions)
                    + bytes(&p.normals)
                    + bytes(&p.uvs)
                    + p.uv_sets.iter().map(|s| bytes(s)).sum::<u64>()
                    + bytes(&p.tangents)
                    + influences
                    + bytes(&p.indices)
                    + bytes(&p.colors)
            })
            .sum();
        let morphs: u64 = (self.morphs.targets.iter().flatten().flatten())
            .map(|t| {
                bytes(&t.vertices) + bytes(&t.position_offsets) + bytes(&t.normal_offsets) + bytes(&t.tangent_offsets)
            })
            .sum::<u64>()
            + (self.morphs.channels.iter())
                .map(|c| bytes(&c.times) + bytes(&c.values))
                .sum::<u64>();
        let clips: u64 = (self.clips.iter().flat_map(|c| &c.channels))
            .map(|c| bytes(&c.times) + bytes(&c.values))
            .sum();
        textures + vertices + morphs + clips
    }

    /// Children, depths and joint facts of the nodes.
    pub fn hierarchy(&self) -> &Hierarchy {
        self.hierarchy_cache.0.get_or_init(|| Hierarchy::of(self))
    }
}

/// One morph target of a primitive: offsets added to the vertices it moves, scaled by the
/// target's weight, before skinning. Only those vertices are kept (a face's targets each move a
/// few percent of it, and it may carry hundreds), made once at load by [`MorphTarget::sparse`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MorphTarget {
    /// The vertices moved, ascending, each once.
    pub vertices: Vec<u32>,
    /// Position offset of each of `vertices`.
    pub position_offsets: Vec<Vec3>,
    /// Normal offset of each of `vertices` (zero when the file gives no NORMAL offsets).
    pub normal_offsets: Vec<Vec3>,
    /// Tangent offset (xyz; the bitangent's sign is not morphed) of each of `vertices`, or empty
    /// when the target moves no tangent (the file gives no TANGENT offsets, or the primitive
    /// has no tangents).
    pub tangent_offsets: Vec<Vec3>,
}

impl MorphTarget {
    /// The sparse form of a target given per vertex (`positions`, `normals`: offsets; missing
    /// ones read as zero) of a primitive whose bind pose is `bind_positions`/`bind_normals`.
    ///
    /// A vertex is left out when all its offsets are zero (either sign) and no component of its
    /// bind position or normal is -0.0. Adding `w·±0` to a sum then leaves its bits alone for any
    /// finite `w`: a sum other than ±0 is unchanged, `+0 + ±0` is +0, and a sum can only be -0.0
    /// where its start was -0.0 (round-to-nearest gives +0 for `x + -x`), which such vertices are
    /// kept for, as `-0 + +0` is +0. So applying the sparse form gives the dense sum's bits; for a
    /// weight that is not finite, every vertex takes its term (the morph's `add_target`).
    pub fn sparse(positions: &[Vec3], normals: &[Vec3], bind_positions: &[Vec3], bind_normals: &[Vec3]) -> Self {
        Self::sparse_with_tangents([positions, normals, &[]], [bind_positions, bind_normals], &[])
    }

    /// [`MorphTarget::sparse`] with tangent offsets: `offsets` and `bind` are positions, normals
    /// and tangents (xyz), `bind_tangents` the primitive's own (the tangent offsets are kept
    /// only when it has tangents and the target gives some). A vertex is kept as `sparse`
    /// keeps it, its tangent's offset and bind value taking part as the normal's do.
    pub fn sparse_with_tangents(offsets: [&[Vec3]; 3], bind: [&[Vec3]; 2], bind_tangents: &[Vec4]) -> Self {
        let [positions, normals, tangents] = offsets;
        let [bind_positions, bind_normals] = bind;
        let with_tangents = !tangents.is_empty() && !bind_tangents.is_empty();
        let vertices = bind_positions.len().max(positions.len()).max(normals.len());
        let negative_zero =
            |v: Option<Vec3>| v.is_some_and(|v| v.to_array().iter().any(|c| c.to_bits() == 0x8000_0000));
        let mut target = MorphTarget::default();
        for v in 0..vertices {
            let p = positions.get(v).copied().unwrap_or(Vec3::ZERO);
            let n = normals.get(v).copied().unwrap_or(Vec3::ZERO);
            let t = if with_tangents {
                tangents.get(v).copied().unwrap_or(Vec3::ZERO)
            } else {
                Vec3::ZERO
            };
            let moves = [p, n, t].iter().flat_map(|o| o.to_array()).any(|c| c != 0.0);
            let keeps_sign = negative_zero(bind_positions.get(v).copied())
                || negative_zero(bind_normals.get(v).copied())
                || (with_tangents && negative_zero(bind_tangents.get(v).map(|t| t.truncate())));
            if moves || keeps_sign {
                target.vertices.push(v as u32);
                target.position_offsets.push(p);
                target.normal_offsets.push(n);
                if with_tangents {
                    target.tangent_offsets.push(t);
                }
            }
        }
        target
    }

    /// The offsets per vertex of a primitive of `vertices` vertices (positions, normals), zero
    /// where the target does not move a vertex: the form files store.
    pub fn dense(&self, vertices: usize) -> (Vec<Vec3>, Vec<Vec3>) {
        let (mut positions, mut normals) = (vec![Vec3::ZERO; vertices], vec![Vec3::ZERO; vertices]);
        for ((&v, &p), &n) in self
            .vertices
            .iter()
            .zip(&self.position_offsets)
            .zip(&self.normal_offsets)
        {
            if let (Some(out_p), Some(out_n)) = (positions.get_mut(v as usize), normals.get_mut(v as usize)) {
                (*out_p, *out_n) = (p, n);
            }
        }
        (positions, normals)
    }

    /// Whether any normal offset is non-zero.
    pub fn has_normals(&self) -> bool {
        self.normal_offsets.iter().any(|n| *n != Vec3::ZERO)
    }

    /// The tangent offsets per vertex of a primitive of `vertices` vertices, zero where the
    /// target moves none (all zero when it moves no tangent).
    pub fn dense_tangents(&self, vertices: usize) -> Vec<Vec3> {
        let mut tangents = vec![Vec3::ZERO; vertices];
        for (&v, &t) in self.vertices.iter().zip(&self.tangent_offsets) {
            if let Some(out) = tangents.get_mut(v as usize) {
                *out = t;
            }
        }
        tangents
    }

    /// Whether the target moves tangents (it keeps tangent offsets).
    pub fn has_tangents(&self) -> bool {
        !self.tangent_offsets.is_empty()
    }
}

/// Animated morph weights of the mesh on one node, in one clip.
#[derive(Debug, Clone, PartialEq)]
pub struct MorphChannel {
    pub clip: usize,
    pub node: usize,
    pub interpolation: Interpolation,
    pub times: Vec<f32>,
    /// Weights per key (`targets` numbers; three such groups per key for cubic splines:
    /// in-tangents, values, out-tangents).
    pub values: Vec<f32>,
    pub targets: usize,
}

/// The skinning a file asks for: Maya's and FBX's dual quaternion and weight blended skins.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileSkinning {
    /// The method the file's skins use, when it names one other than linear blend skinning.
    pub method: Option<SkinningMethod>,
    /// Per mesh, per primitive: each vertex's blend from linear (0) to dual quaternion (1)
    /// skinning, in [0, 1]; empty for 0 everywhere (see [`crate::skin::blend`]).
    pub dqs_blend: Vec<Vec<Vec<f32>>>,
}

/// The rig's morph targets, kept apart from the meshes they deform.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Morphs {
    /// Per mesh, per primitive: its targets (empty when it has none).
    pub targets: Vec<Vec<Vec<MorphTarget>>>,
    /// Per mesh: each target's weight when no clip drives it (the mesh's `weights`, else 0).
    pub default_weights: Vec<Vec<f32>>,
    /// Per mesh: its targets' names (`extras.targetNames`, as exporters write them; empty when
    /// the file gives none). Clips from another file drive targets by these names.
    pub target_names: Vec<Vec<String>>,
    pub channels: Vec<MorphChannel>,
}

impl Morphs {
    /// The targets of primitive `primitive` of mesh `mesh`.
    pub fn of(&self, mesh: usize, primitive: usize) -> &[MorphTarget] {
        self.targets
            .get(mesh)
            .and_then(|p| p.get(primitive))
            .map_or(&[], Vec::as_slice)
    }

    /// Number of weights mesh `mesh` takes (the most targets of any of its primitives).
    pub fn weight_count(&self, mesh: usize) -> usize {
        let targets = self
            .targets
            .get(mesh)
            .map_or(0, |p| p.iter().map(Vec::len).max().unwrap_or(0));
        targets.max(self.default_weights.get(mesh).map_or(0, Vec::len))
    }
}

/// Facts about the file as written, kept for the rig report: raw values the importer
/// normalized, truncated or left out. Indices are rig indices unless named `gltf_*`.
#[derive(Debug, Clone, Default)]
pub struct ImportFacts {
    /// The glTF index of each rig node.
    pub gltf_node: Vec<usize>,
    /// The humanoid bone map the file carries (a VRM avatar's), as (VRM 1.0 bone name, rig
    /// node); empty when it has none.
    pub humanoid: Vec<(String, usize)>,
    /// Each node's local matrix as the file gives it (its `matrix`, or its TRS composed).
    pub node_matrices: Vec<Mat4>,
    /// Per node: whether the file gives its transform as a `matrix` rather than as TRS (engines
    /// that decompose a matrix their own way draw such a node differently).
    pub node_given_as_matrix: Vec<bool>,
    /// Per skin: the `skeleton` node the file names, if any.
    pub skin_skeletons: Vec<Option<usize>>,
    /// Per mesh, per kept primitive (parallel to `Mesh::primitives`).
    pub primitives: Vec<Vec<PrimitiveFacts>>,
    /// Primitives that are not drawn (points and lines).
    pub skipped_primitives: Vec<SkippedPrimitive>,
    /// Per clip, per kept channel (parallel to `Clip::channels`).
    pub channels: Vec<Vec<ChannelFacts>>,
    /// Channels the importer did not keep, and why.
    pub dropped_channels: Vec<DroppedChannel>,
    /// Bytes of decoded data the import allocated (vertex arrays, keys, images).
    pub decoded_bytes: u64,
    /// Errors in the file's data that did not stop the load: buffer views or accessors out of
    /// range but unused, declared accessor bounds that do not match the data.
    pub data_errors: Vec<String>,
    /// What the importer noticed and did without (extensions used and ignored, primitives with
    /// nothing to draw, accessors of unknown types that nothing reads).
    pub notes: Vec<String>,
    /// What an FBX file holds that the report names on its own (empty for glTF).
    pub fbx_findings: Vec<FbxFinding>,
    /// What a BVH file held (`None` for other files).
    pub bvh: Option<BvhFacts>,
    /// What a VRM Animation file's nodes are besides bones (`None` for other files).
    pub vrma: Option<VrmaFacts>,
    /// A VRM avatar's expressions and the morph targets they blend (empty for other files).
    pub expressions: Vec<VrmExpression>,
    /// A VRM avatar's spring bones (`None` when it has none).
    pub springs: Option<SpringBones>,
    /// A VRM avatar's node constraints, in the order they are evaluated in.
    pub constraints: Vec<NodeConstraint>,
    /// `KHR_animation_pointer` channels that do not play: broken or not played targets.
    pub pointer_findings: Vec<PointerFinding>,
    /// `KHR_animation_pointer` channels to material, texture transform, node visibility and
    /// light properties, which play beside the clips' node channels.
    pub property_tracks: Vec<PropertyTrack>,
}

impl ImportFacts {
    /// Where glTF primitive `gltf_primitive` of glTF mesh `mesh` is in `Mesh::primitives`
    /// (`None` when it was not kept).
    pub fn primitive_of_gltf(&self, mesh: usize, gltf_primitive: usize) -> Option<usize> {
        self.primitives
            .get(mesh)?
            .iter()
            .position(|f| f.gltf_index == gltf_primitive)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PrimitiveFacts {
    /// Index of the primitive in the file's mesh.
    pub gltf_index: usize,
    /// glTF mode (4 = triangles).
    pub mode: u32,
    /// Smallest step of the weights' component type: 0 for floats, 1/255 or 1/65535 when
    /// normalized integers.
    pub weight_quantum: f32,
    /// Vertices with non-zero weights in `WEIGHTS_2` or later sets, which skinning ignores.
    pub truncated_vertices: Vec<u32>,
    /// The largest weight sum ignored on one vertex for that reason.
    pub truncated_weight_max: f32,
    /// `JOINTS_n`/`WEIGHTS_n` attributes without their partner, e.g. `"JOINTS_1 without WEIGHTS_1"`.
    pub unpaired_sets: Vec<String>,
}

/// A primitive that is not a triangle list: not drawn, but its weights are still checked.
#[derive(Debug, Clone)]
pub struct SkippedPrimitive {
    pub mesh: usize,
    pub facts: PrimitiveFacts,
    pub vertex_count: usize,
    pub influences: Option<Influences>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChannelFacts {
    /// Index of the channel in the file's animation.
    pub gltf_index: usize,
    /// Rotation channels: the key whose quaternion length is farthest from 1 before it was
    /// normalized, and that length.
    pub worst_quaternion: Option<(usize, f32)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DroppedChannel {
    pub clip: usize,
    /// Index of the channel in the file's animation.
    pub gltf_index: usize,
    /// The rig node it targets.
    pub node: usize,
    /// Why it was left out.
    pub reason: String,
    /// True when the channel is valid but of a kind not played (morph target weights).
    pub unsupported: bool,
}

impl Rig {
    /// What the load left out or worked around, for people to read: the warnings, then the
    /// animation channels left out because their data is invalid (kept apart from the warnings
    /// so that the report can name their nodes).
    pub fn load_warnings(&self) -> Vec<String> {
        let invalid_channels = self.facts.dropped_channels.iter().filter(|d| !d.unsupported);
        self.warnings
            .iter()
            .cloned()
            .chain(invalid_channels.map(|d| {
                let clip = self.clips.get(d.clip).map_or("?", |c| c.name.as_str());
                format!("clip '{clip}' channel {} left out: {}", d.gltf_index, d.reason)
            }))
            .collect()
    }

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

    /// A node by exact name.
    pub fn find_node(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Per node, whether it is one of `roots` or a descendant of one (roots out of range are
    /// ignored). Parents come before their children, so one pass finds them.
    pub fn subtrees(&self, roots: &[usize]) -> Vec<bool> {
        let mut marked = vec![false; self.nodes.len()];
        for &root in roots {
            if let Some(m) = marked.get_mut(root) {
                *m = true;
            }
        }
        for node in 0..self.nodes.len() {
            if let Some(parent) = self.nodes[node].parent.filter(|&p| p < node)
                && marked[parent]
            {
                marked[node] = true;
            }
        }
        marked
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
