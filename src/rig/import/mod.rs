//! glTF 2.0 (`.gltf`, `.glb`, `.vrm`) → [`Rig`]; FBX files go to [`fbx`] and BVH motion
//! capture to [`bvh`].
//!
//! The `gltf` crate parses the JSON; [`validate`] checks it (with the extensions Rigscope
//! implements); everything that touches bytes is done here, one module per concern:
//! [`source`] resolves the GLB container, buffers and URIs, [`meshopt`] and [`draco`] decode
//! compressed buffer views and primitives, [`accessor`] reads accessors, checking every size
//! claim against the real data and charging a memory [`Budget`] before allocating, and
//! [`skeleton`], [`geometry`], [`material`] and [`animation`] turn them into the rig. A file may
//! only reference files inside its own folder (no absolute paths, no `..` that climbs out of it,
//! no symbolic link that leads out of it).
//!
//! What stops a load and what does not:
//! - the structure the pose depends on (node tree, transforms, skins, inverse bind matrices,
//!   mesh geometry) must be sound, or the load fails with a message naming the problem;
//! - an animation channel that cannot be played (bad keys, non-finite values) is left out with
//!   a warning, a texture that cannot be loaded is replaced by white with a warning, and a
//!   primitive that has nothing to draw (no POSITION, not triangles) is skipped with a note, so
//!   the rest of the file can still be viewed and its report read;
//! - data that nothing reads (a placeholder buffer, a compression fallback, an accessor of an
//!   unknown type) is never an error.

mod accessor;
mod accessor_check;
mod animation;
mod bvh;
mod draco;
mod extensions;
mod fbx;
mod geometry;
pub(in crate::rig) mod material;
mod meshopt;
mod pointer;
mod property;
mod skeleton;
mod source;
mod tangents;
mod validate;
mod vrm;
mod vrm_constraints;
mod vrm_springs;

use super::*;
use accessor::Buffers;
use std::path::Path;

pub use accessor::{Budget, BudgetExceeded, human_bytes};
pub use bvh::{
    BvhError, BvhErrorKind, BvhFacts, BvhRotationOrder, BvhUnit, degrees_between, degrees_from_rotation, is_bvh,
    rotation_from_degrees,
};
pub use extensions::SUPPORTED_EXTENSIONS;
pub use fbx::{FbxError, FbxErrorKind, FbxFinding, FbxFindingKind, is_fbx};
pub use pointer::{POINTER_EXTENSION, PointerFinding};
pub use source::{FileError, UriError, read_file_bounded, read_uri};
pub use tangents::mikktspace_tangents;
pub use vrm::{MorphBind, VRMA_EXTENSION, VrmExpression, VrmaError, VrmaFacts};
pub use vrm_constraints::{CONSTRAINT_EXTENSION, ConstraintKind, NodeConstraint};
pub use vrm_springs::{
    ColliderShape, SPRING_EXTENSION, SpringBones, SpringChain, SpringCollider, SpringJoint, SpringSettings,
    SpringSource, SpringTail, VRM0_TAIL_METRES,
};

/// Bytes the GPU and pose evaluation will need per drawn vertex and per palette entry, charged
/// to the budget so that a small file cannot make the viewer allocate without bound downstream.
const DRAWN_VERTEX_BYTES: u64 = 64;
const PALETTE_ENTRY_BYTES: u64 = 64 * 2;

/// The extensions of the files [`load_file`] reads, as file dialogs and the path field offer them.
pub const RIG_FILE_EXTENSIONS: &[&str] = &["glb", "gltf", "vrm", "vrma", "fbx", "bvh"];

/// What a reader cannot tell from a file and is told instead.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadOptions {
    /// Metres per length unit of a BVH file; `None` guesses the unit from the skeleton's size
    /// (see [`BvhUnit::guess`]).
    pub bvh_scale: Option<f64>,
}

/// Loads a `.gltf`, `.glb`, `.vrm`, `.fbx` or `.bvh` file; external buffers and images are
/// looked up next to it.
pub fn load_file(path: &Path) -> Result<Rig, RigError> {
    load_file_with(path, &LoadOptions::default())
}

/// [`load_file`] with what the file leaves open told by `options`.
pub fn load_file_with(path: &Path, options: &LoadOptions) -> Result<Rig, RigError> {
    let bytes = source::read_file_bounded(path)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    load_slice_with(&bytes, path.parent(), &name, options)
}

/// Loads glTF JSON, GLB, FBX or BVH bytes (FBX and BVH told by their content, or by a `.fbx`
/// or `.bvh` `name`). `base_dir` is where relative URIs point; `None` allows only embedded data
/// (GLB chunks and data URIs, textures embedded in FBX).
///
/// A panic inside the import (a bug, or a crate's check that a hostile file got past) becomes
/// a load error naming it, so that neither the viewer nor a command crashes on a file.
pub fn load_slice(bytes: &[u8], base_dir: Option<&Path>, name: &str) -> Result<Rig, RigError> {
    load_slice_with(bytes, base_dir, name, &LoadOptions::default())
}

/// [`load_slice`] with what the file leaves open told by `options`.
pub fn load_slice_with(
    bytes: &[u8],
    base_dir: Option<&Path>,
    name: &str,
    options: &LoadOptions,
) -> Result<Rig, RigError> {
    std::panic::catch_unwind(|| {
        if bvh::is_bvh(bytes, name) {
            bvh::load(bytes, name, options)
        } else if fbx::is_fbx(bytes, name) {
            fbx::load(bytes, base_dir, name)
        } else {
            load_unguarded(bytes, base_dir, name)
        }
    })
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        Err(RigError::Panic(what.to_owned()))
    })
}

/// The document's JSON parsed, its `KHR_animation_pointer` channels rewritten as node channels or
/// taken out first (the typed parse refuses a `pointer` path).
fn parse_resolving_pointers(json: &[u8]) -> Result<(gltf::json::Root, pointer::Pointers), RigError> {
    let has_pointers = json
        .windows(POINTER_EXTENSION.len())
        .any(|w| w == POINTER_EXTENSION.as_bytes());
    if !has_pointers {
        let root = gltf::json::deserialize::from_slice(json).map_err(|e| RigError::Json(e.into()))?;
        return Ok((root, pointer::Pointers::default()));
    }
    let mut value: serde_json::Value = serde_json::from_slice(json).map_err(|e| RigError::Json(e.into()))?;
    let pointers = pointer::resolve_pointers(&mut value);
    let root = gltf::json::deserialize::from_value(value).map_err(|e| RigError::Json(e.into()))?;
    Ok((root, pointers))
}

fn load_unguarded(bytes: &[u8], base_dir: Option<&Path>, name: &str) -> Result<Rig, RigError> {
    let (json, blob) = if bytes.starts_with(b"glTF") {
        glb::split_glb(bytes).map_err(RigError::Glb)?
    } else if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(RigError::NotGltf);
    } else {
        (bytes, None)
    };
    let (root, mut pointers) = parse_resolving_pointers(json)?;
    let tolerated = validate::validate(&root)?;
    let mut notes = extensions::notes(&root);
    if pointers.played > 0 {
        notes.push(format!(
            "{} animation channels given as {POINTER_EXTENSION} pointers to node properties play as node channels",
            pointers.played
        ));
    }
    let vrma = vrm::read_vrma(&root)?;
    let vrm_humanoid = match &vrma {
        Some(vrma) => vrma.humanoid.clone(),
        None => extensions::vrm_humanoid(&root),
    };
    let document = gltf::Document::from_json_without_validation(root);

    let mut warnings = Vec::new();
    let (buffers, external_bytes) = source::load_buffers(&document, blob, base_dir, &mut warnings)?;
    let mut buffers = buffers;
    for (accessor, why) in &tolerated.unknown_layouts {
        notes.push(format!(
            "accessor {accessor} cannot be read ({why}); nothing may use it"
        ));
    }
    buffers.unknown_layouts = tolerated.unknown_layouts;
    buffers.quantized_geometry = document.extensions_used().any(|e| e == "KHR_mesh_quantization");
    let input_bytes = bytes.len() as u64 + external_bytes;
    let mut budget = Budget::for_input(input_bytes);
    meshopt::decode_views(&document, &mut buffers, &mut budget)?;
    draco::decode_primitives(&document, &mut buffers, &mut budget)?;
    let data_errors = check_views_and_accessors(&document, &buffers, input_bytes);
    let textures = material::load_textures(&document, &buffers, base_dir, &mut budget, &mut warnings);

    let skeleton::Hierarchy {
        nodes,
        slot,
        order,
        node_matrices,
        given_as_matrix,
    } = skeleton::read_nodes(&document)?;
    let humanoid = vrm_humanoid
        .into_iter()
        .filter_map(|(bone, node)| Some((bone, *slot.get(node)?)))
        .collect();
    let mut facts = ImportFacts {
        pointer_findings: std::mem::take(&mut pointers.findings),
        data_errors,
        humanoid,
        gltf_node: order,
        node_matrices,
        node_given_as_matrix: given_as_matrix,
        notes,
        ..ImportFacts::default()
    };
    let mut skins = Vec::new();
    for skin in document.skins() {
        skins.push(skeleton::read_skin(&skin, &slot, &buffers, &mut budget)?);
        facts.skin_skeletons.push(skin.skeleton().map(|n| slot[n.index()]));
    }
    let materials: Vec<Material> = document
        .materials()
        .map(|m| material::read_material(&m, textures.len(), &mut warnings))
        .collect();
    let mut read = ReadState {
        buffers: &buffers,
        budget: &mut budget,
        facts: &mut facts,
        warnings: &mut warnings,
    };
    let (meshes, mut morphs) = read.meshes(&document, &materials)?;
    read.facts.expressions = expressions(&document, &slot, &morphs, read.warnings);
    read.facts.springs = springs(&document, &slot, &nodes, read.warnings);
    let parents: Vec<Option<usize>> = nodes.iter().map(|n| n.parent).collect();
    read.facts.constraints = vrm_constraints::read_constraints(document.as_json(), &slot, &parents, read.warnings);
    read.facts.vrma = vrma.map(|vrma| VrmaFacts {
        expressions: (vrma.expressions.into_iter())
            .map(|(name, node)| (name, slot[node]))
            .collect(),
        look_at: vrma.look_at.map(|node| slot[node]),
    });
    let clips = read.clips(&document, &slot, &mut morphs, &pointers.properties)?;
    let instances = mesh_instances(&document, &slot);
    charge_downstream(&instances, &meshes, &skins, nodes.len(), &mut budget)?;
    facts.decoded_bytes = budget.used();

    let rig = Rig {
        name: name.to_owned(),
        nodes,
        skins,
        meshes,
        instances,
        materials,
        textures: textures
            .into_iter()
            .map(|t| t.unwrap_or_else(material::missing_texture))
            .collect(),
        clips,
        warnings,
        facts,
        sources: source::external_sources(&document, base_dir),
        morphs,
        skinning: Default::default(),
        hierarchy_cache: Default::default(),
    };
    rig.hierarchy();
    Ok(rig)
}

/// What reading a file's meshes and clips draws on and adds to.
struct ReadState<'a> {
    buffers: &'a Buffers<'a>,
    budget: &'a mut Budget,
    facts: &'a mut ImportFacts,
    warnings: &'a mut Vec<String>,
}

impl ReadState<'_> {
    /// Every mesh, with its morph targets, default weights and target names.
    fn meshes(&mut self, document: &gltf::Document, materials: &[Material]) -> Result<(Vec<Mesh>, Morphs), RigError> {
        let mut meshes = Vec::new();
        let mut morphs = Morphs::default();
        for mesh in document.meshes() {
            let read = geometry::read_mesh(
                document,
                &mesh,
                materials,
                self.buffers,
                self.budget,
                self.facts,
                self.warnings,
            )?;
            morphs.targets.push(read.morph_targets);
            morphs
                .default_weights
                .push(mesh.weights().map(<[f32]>::to_vec).unwrap_or_default());
            morphs.target_names.push(geometry::target_names(&mesh));
            meshes.push(read.mesh);
            self.facts.primitives.push(read.facts);
        }
        Ok((meshes, morphs))
    }

    /// Every animation as a clip over the nodes' slots; its morph weight channels go to `morphs`,
    /// its `properties` (pointer channels to properties) to the facts' property tracks.
    fn clips(
        &mut self,
        document: &gltf::Document,
        slot: &[usize],
        morphs: &mut Morphs,
        properties: &[pointer::PropertyChannel],
    ) -> Result<Vec<Clip>, RigError> {
        let mut clips = Vec::new();
        for animation in document.animations() {
            let read = animation::read_clip(
                &animation,
                clips.len(),
                slot,
                self.buffers,
                self.budget,
                self.facts,
                self.warnings,
            )?;
            morphs.channels.extend(read.morph_channels);
            clips.push(read.clip);
            self.facts.channels.push(read.facts);
        }
        let inputs = property::PropertyInputs {
            document,
            buffers: self.buffers,
            slot,
        };
        let findings = &mut self.facts.pointer_findings;
        let tracks = property::read_property_tracks(properties, &inputs, self.budget, &mut clips, findings)?;
        self.facts.property_tracks = tracks;
        Ok(clips)
    }
}

/// An avatar's expressions, their binds checked against the meshes as read.
fn expressions(
    document: &gltf::Document,
    slot: &[usize],
    morphs: &Morphs,
    warnings: &mut Vec<String>,
) -> Vec<VrmExpression> {
    let node_mesh: Vec<Option<usize>> = document.nodes().map(|n| n.mesh().map(|m| m.index())).collect();
    let mesh_targets: Vec<usize> = (0..document.meshes().len()).map(|m| morphs.weight_count(m)).collect();
    let targets = vrm::BindTargets {
        node_mesh: &node_mesh,
        mesh_targets: &mesh_targets,
        slot,
    };
    vrm::vrm_expressions(document.as_json(), &targets, warnings)
}

/// An avatar's spring bones, their nodes checked against the node tree as read.
fn springs(
    document: &gltf::Document,
    slot: &[usize],
    nodes: &[Node],
    warnings: &mut Vec<String>,
) -> Option<SpringBones> {
    let children: Vec<Vec<usize>> = document
        .nodes()
        .map(|n| n.children().map(|c| c.index()).collect())
        .collect();
    let parents: Vec<Option<usize>> = nodes.iter().map(|n| n.parent).collect();
    let spring_nodes = vrm_springs::SpringNodes {
        slot,
        parents: &parents,
        children: &children,
    };
    vrm_springs::read_springs(document.as_json(), &spring_nodes, warnings)
}

/// The nodes that place a mesh, in node order.
fn mesh_instances(document: &gltf::Document, slot: &[usize]) -> Vec<MeshInstance> {
    let mut instances: Vec<MeshInstance> = document
        .nodes()
        .filter_map(|node| {
            node.mesh().map(|mesh| MeshInstance {
                node: slot[node.index()],
                mesh: mesh.index(),
                skin: node.skin().map(|s| s.index()),
            })
        })
        .collect();
    instances.sort_by_key(|i| i.node);
    instances
}

/// Problems in buffer views and accessors that do not stop the load by themselves (the data may
/// be unused, or the problem may be only in its declared bounds). Data that is used and out of
/// range fails the load later, when it is read.
fn check_views_and_accessors(document: &gltf::Document, buffers: &Buffers, input_bytes: u64) -> Vec<String> {
    // Views of buffers without data are an error only when something reads them.
    let mut problems: Vec<String> = document
        .views()
        .filter(|view| buffers.has_data(view.buffer().index()))
        .filter_map(|view| buffers.view(&view).err().map(|e| e.to_string()))
        .collect();
    // Comparing min/max reads the data; many accessors over one big view must not make that
    // quadratic, so the bytes scanned are limited the way decoded memory is.
    let mut scan = Budget::for_input(input_bytes);
    for accessor in document.accessors() {
        problems.extend(accessor_check::check_accessor(&accessor, buffers, &mut scan));
    }
    problems
}

/// Charges what the viewer will allocate for this rig after the import (GPU vertex buffers per
/// drawn instance, joint palettes per skinned instance, per-node pose arrays), so that a few
/// kilobytes of JSON instancing a big mesh a million times are refused here.
fn charge_downstream(
    instances: &[MeshInstance],
    meshes: &[Mesh],
    skins: &[Skin],
    nodes: usize,
    budget: &mut Budget,
) -> Result<(), accessor::BudgetExceeded> {
    let mut bytes = (nodes as u64).saturating_mul(128);
    for instance in instances {
        for primitive in &meshes[instance.mesh].primitives {
            bytes = bytes.saturating_add(
                (primitive.vertex_count() as u64)
                    .saturating_mul(DRAWN_VERTEX_BYTES)
                    .saturating_add(primitive.indices.len() as u64 * 4),
            );
        }
        if let Some(skin) = instance.skin {
            bytes = bytes.saturating_add((skins[skin].joints.len() as u64).saturating_mul(PALETTE_ENTRY_BYTES));
        }
    }
    budget.charge(
        bytes,
        &format!("drawing {} mesh instances of {nodes} nodes", instances.len()),
    )
}
