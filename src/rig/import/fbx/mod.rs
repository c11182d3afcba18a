//! FBX (binary and ASCII, 6.x and 7.x) → [`Rig`], through the ufbx C library.
//!
//! ufbx parses the file and already does what FBX needs before it looks like glTF: units and
//! axes converted to metres and Y up (right-handed) by changing the geometry, pivots and
//! pre/post-rotations folded into each node's translation/rotation/scale, geometric
//! (object-offset) transforms moved into the vertices, and inherit modes compensated where it
//! can. This module copies the result into the rig's arrays, one module per concern:
//! [`geometry`] (meshes, skins, blend shapes), [`animation`] (every stack baked to keys) and
//! [`material`] (base colour and diffuse texture). Every count and index ufbx hands over is
//! checked again before use, as the glTF path checks a file's.

mod animation;
mod blend_shapes;
mod findings;
mod geometry;
mod material;
mod unweighted;

pub use findings::{FbxFinding, FbxFindingKind};

use super::accessor::Budget;
use crate::rig::{ImportFacts, Node, Rig, RigError, Trs};
use glam::{Mat4, Quat, Vec3, Vec4};
use std::path::Path;

/// What a binary FBX file starts with.
const BINARY_MAGIC: &[u8] = b"Kaydara FBX Binary";

/// Deepest node hierarchy read: deeper files are refused rather than risking the C library's
/// recursion.
const NODE_DEPTH_LIMIT: u32 = 1024;

/// Why ufbx could not read a file, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display)]
pub enum FbxErrorKind {
    /// The file ends before its structure does.
    #[strum(to_string = "truncated")]
    Truncated,
    /// The bytes are not an FBX file ufbx recognizes.
    #[strum(to_string = "not FBX")]
    NotFbx,
    /// An FBX version outside what is read (before 6.0).
    #[strum(to_string = "unsupported version")]
    UnsupportedVersion,
    /// Reading it would take more memory than a file of its size may use.
    #[strum(to_string = "over the memory budget")]
    OverBudget,
    /// The node tree is deeper than the importer follows.
    #[strum(to_string = "hierarchy too deep")]
    TooDeep,
    /// Anything else: an index out of range, a broken value, a bad compressed array.
    #[strum(to_string = "corrupt")]
    Corrupt,
}

/// A file ufbx refused, with the kind of failure and ufbx's own description.
#[derive(Debug, Clone, thiserror::Error)]
#[error("not a readable FBX file ({kind}): {message}")]
pub struct FbxError {
    pub kind: FbxErrorKind,
    pub message: String,
}

impl From<&ufbx::Error> for FbxError {
    fn from(error: &ufbx::Error) -> FbxError {
        use ufbx::ErrorType as E;
        let kind = match error.type_ {
            E::TruncatedFile | E::EmptyFile | E::TruncatedVertexStream => FbxErrorKind::Truncated,
            E::UnrecognizedFileFormat => FbxErrorKind::NotFbx,
            E::UnsupportedVersion => FbxErrorKind::UnsupportedVersion,
            E::OutOfMemory | E::MemoryLimit | E::AllocationLimit => FbxErrorKind::OverBudget,
            E::NodeDepthLimit => FbxErrorKind::TooDeep,
            _ => FbxErrorKind::Corrupt,
        };
        let description: &str = &error.description;
        FbxError {
            kind,
            message: format!("{:?}: {description}", error.type_),
        }
    }
}

/// True when `bytes` (named `name`) are FBX: the binary magic, an ASCII file's `; FBX` header
/// comment, or the `.fbx` extension on something that is neither GLB nor JSON.
pub fn is_fbx(bytes: &[u8], name: &str) -> bool {
    if bytes.starts_with(BINARY_MAGIC) {
        return true;
    }
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let first = text.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(text.len());
    if text[first..].starts_with(b"; FBX") {
        return true;
    }
    let looks_gltf = bytes.starts_with(b"glTF") || text.get(first) == Some(&b'{');
    !looks_gltf && name.to_ascii_lowercase().ends_with(".fbx")
}

/// Loads FBX bytes; `base_dir` is where external textures are looked for.
pub fn load(bytes: &[u8], base_dir: Option<&Path>, name: &str) -> Result<Rig, RigError> {
    let mut budget = Budget::for_input(bytes.len() as u64);
    let scene = read_scene(bytes, name, &budget)?;
    budget.charge(
        (scene.metadata.result_memory_used as u64).saturating_add(scene.metadata.temp_memory_used as u64),
        "reading the FBX file",
    )?;
    let mut warnings = Vec::new();
    let mut facts = ImportFacts {
        fbx_findings: vec![findings::source_system(&scene)],
        ..ImportFacts::default()
    };

    let nodes = read_nodes(&scene, &mut facts)?;
    findings::inherited_scale(&nodes, &mut facts);
    findings::skin_bindings(&scene, &nodes, &mut facts);
    let (textures, texture_of) = material::load_textures(&scene, base_dir, &mut budget, &mut warnings, &mut facts);
    let materials = material::read_materials(&scene, &texture_of);
    let mut geometry = geometry::read(&scene, &nodes, &mut budget, &mut facts, &mut warnings)?;
    unweighted::follow_mesh_node(&mut geometry, &nodes.nodes, &mut facts)?;
    let (clips, morph_channels) =
        animation::read_clips(&scene, &nodes, &geometry, &mut budget, &mut facts, &mut warnings)?;
    geometry.morphs.channels = morph_channels;
    super::charge_downstream(
        &geometry.instances,
        &geometry.meshes,
        &geometry.skins,
        nodes.nodes.len(),
        &mut budget,
    )?;
    facts.decoded_bytes = budget.used();
    let rig = Rig {
        name: name.to_owned(),
        nodes: nodes.nodes,
        skins: geometry.skins,
        meshes: geometry.meshes,
        instances: geometry.instances,
        materials,
        textures,
        clips,
        warnings,
        facts,
        sources: Vec::new(),
        morphs: geometry.morphs,
        skinning: geometry.skinning,
        hierarchy_cache: Default::default(),
    };
    rig.hierarchy();
    Ok(rig)
}

/// Parses the file with the conversions glTF needs and ufbx's memory limits set from `budget`.
fn read_scene(bytes: &[u8], name: &str, budget: &Budget) -> Result<ufbx::SceneRoot, FbxError> {
    let opts = ufbx::LoadOpts {
        temp_allocator: allocator_within(budget),
        result_allocator: allocator_within(budget),
        // Only FBX: ufbx would otherwise also read OBJ or MTL text given a `.fbx` name.
        file_format: ufbx::FileFormat::Fbx,
        // Textures are looked up by the importer itself, inside the file's folder only.
        load_external_files: false,
        ignore_missing_external_files: true,
        generate_missing_normals: true,
        clean_skin_weights: true,
        node_depth_limit: NODE_DEPTH_LIMIT,
        target_axes: ufbx::CoordinateAxes::right_handed_y_up(),
        target_unit_meters: 1.0,
        space_conversion: ufbx::SpaceConversion::ModifyGeometry,
        geometry_transform_handling: ufbx::GeometryTransformHandling::ModifyGeometry,
        inherit_mode_handling: ufbx::InheritModeHandling::Compensate,
        filename: name.into(),
        ..Default::default()
    };
    ufbx::load_memory(bytes, opts).map_err(|e| FbxError::from(&e))
}

/// A ufbx allocator limited to half of what `budget` has left, so that its temporary and result
/// allocators together stay within it. ufbx reads a limit of 0 as none, so the limit is at
/// least one byte.
pub(super) fn allocator_within(budget: &Budget) -> ufbx::AllocatorOpts {
    let half = usize::try_from(budget.left() / 2).unwrap_or(usize::MAX);
    ufbx::AllocatorOpts {
        memory_limit: half.max(1),
        ..Default::default()
    }
}

/// The rig's nodes, parents first, and the rig index of each ufbx node (by typed id).
pub(super) struct Nodes {
    pub nodes: Vec<Node>,
    pub of_fbx: Vec<Option<usize>>,
    /// Rig nodes whose inherit type in the file is not glTF's (ufbx compensates for it).
    pub inherit_differs: Vec<usize>,
    /// Rig nodes ufbx added to carry a scale that children of the node above do not inherit.
    pub scale_helpers: Vec<usize>,
}

impl Nodes {
    /// The rig node of a ufbx node, if it was kept.
    pub fn of(&self, node: &ufbx::Node) -> Option<usize> {
        self.of_fbx.get(node.element.typed_id as usize).copied().flatten()
    }
}

/// Walks the tree from the root, parents before children. The root ufbx adds is left out when
/// its transform is the identity (it is after the conversion, unless the file moved it).
fn read_nodes(scene: &ufbx::Scene, facts: &mut ImportFacts) -> Result<Nodes, RigError> {
    let count = scene.nodes.len();
    let mut of_fbx = vec![None; count];
    let mut nodes: Vec<Node> = Vec::with_capacity(count);
    let mut stack: Vec<(&ufbx::Node, Option<usize>)> = vec![(&*scene.root_node, None)];
    let mut visited = 0usize;
    let mut inherit_differs = Vec::new();
    let mut scale_helpers = Vec::new();
    while let Some((node, parent)) = stack.pop() {
        visited += 1;
        let id = node.element.typed_id as usize;
        if visited > count || of_fbx.get(id).is_none_or(|slot: &Option<usize>| slot.is_some()) {
            return Err(RigError::Data(format!(
                "FBX node {id} ('{}') is out of range or reached twice",
                &*node.element.name
            )));
        }
        let rest = trs(&node.local_transform)
            .ok_or_else(|| RigError::Data(format!("FBX node '{}' has a non-finite transform", &*node.element.name)))?;
        let keep = !node.is_root || rest != Trs::IDENTITY;
        let index = if keep {
            // ufbx names its scale helpers all alike (empty): each is named after its node.
            let name = match parent {
                Some(p) if node.is_scale_helper => {
                    scale_helpers.push(nodes.len());
                    format!("{} (scale)", nodes[p].name)
                }
                _ => node.element.name.to_string(),
            };
            nodes.push(Node { name, parent, rest });
            facts.node_matrices.push(rest.to_mat4());
            of_fbx[id] = Some(nodes.len() - 1);
            Some(nodes.len() - 1)
        } else {
            parent
        };
        if keep && node.original_inherit_mode != ufbx::InheritMode::Normal {
            inherit_differs.push(nodes.len() - 1);
        }
        // Reversed so that children keep the file's order.
        for child in node.children.iter().rev() {
            stack.push((&**child, index));
        }
    }
    facts.gltf_node = (0..nodes.len()).collect();
    Ok(Nodes {
        nodes,
        of_fbx,
        inherit_differs,
        scale_helpers,
    })
}

pub(super) fn vec3(v: ufbx::Vec3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

fn quat(q: ufbx::Quat) -> Quat {
    Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32)
}

/// A ufbx transform as a rig transform, `None` when a component is not finite.
pub(super) fn trs(t: &ufbx::Transform) -> Option<Trs> {
    let trs = Trs {
        translation: vec3(t.translation),
        rotation: quat(t.rotation).normalize(),
        scale: vec3(t.scale),
    };
    let finite = trs.translation.is_finite() && trs.rotation.is_finite() && trs.scale.is_finite();
    finite.then_some(trs)
}

/// ufbx's 3×4 affine matrix (columns m·0, m·1, m·2 and the translation m·3) as a `Mat4`.
pub(super) fn mat4(m: &ufbx::Matrix) -> Mat4 {
    Mat4::from_cols(
        Vec4::new(m.m00 as f32, m.m10 as f32, m.m20 as f32, 0.0),
        Vec4::new(m.m01 as f32, m.m11 as f32, m.m21 as f32, 0.0),
        Vec4::new(m.m02 as f32, m.m12 as f32, m.m22 as f32, 0.0),
        Vec4::new(m.m03 as f32, m.m13 as f32, m.m23 as f32, 1.0),
    )
}
