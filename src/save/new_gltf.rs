//! Writing a glTF file from nothing but a [`Rig`], for inputs there is no glTF JSON to edit: an
//! FBX rig written as glTF by `rigscope clips`, and a posed mesh written by `rigscope export`.
//!
//! The parts both writers share live here: [`Chunk`] (the binary data with its buffer views and
//! accessors, float accessors with their exact bounds), [`Materials`] (the rig's materials with
//! their base colour textures embedded as PNG), [`gltf_files`] (the GLB container, or `.gltf`
//! JSON with a `.bin` beside it) and [`write_files`] (every file through a temporary file that
//! is renamed into place). Clips are encoded by the same code as the writer that edits a file
//! ([`super::animations::encode_clip`]).
//!
//! [`write_rig`] writes the whole rig: nodes in the order the importer reads them back
//! (breadth first from the roots, see [`FileOrder`]), meshes with their skins' joints and
//! weights, morph targets with their default weights and names, skins with their inverse bind
//! matrices, materials and textures, and every clip with its morph weight channels.

use super::animations::encode_clip;
use super::{OutputFormat, SaveError, Saved, folder_of, same_file, temp_file_in};
use crate::rig::{AlphaMode, Influences, Rig, Texture, TextureRef, Trs, UvTransform};
use glam::{Quat, Vec3};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// glTF's component types and buffer view targets.
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
const FLOAT: u32 = 5126;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// The binary data of a document being built, with the buffer views and accessors that
/// describe it (all in buffer 0).
#[derive(Default)]
pub struct Chunk {
    pub bytes: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Chunk {
    /// Appends `data` as a buffer view, 4-byte aligned as every accessor written here needs.
    pub fn view(&mut self, data: &[u8], target: Option<u32>) -> usize {
        self.bytes.resize(self.bytes.len().next_multiple_of(4), 0);
        let mut view = json!({ "buffer": 0, "byteOffset": self.bytes.len(), "byteLength": data.len() });
        if let Some(target) = target {
            view["target"] = json!(target);
        }
        self.bytes.extend_from_slice(data);
        self.views.push(view);
        self.views.len() - 1
    }

    /// A vertex attribute of `N`-component floats (`N` of 1 to 4), with their exact bounds: the
    /// validator checks them, readers frame and cull by them, and glTF requires them on
    /// POSITION. The caller has checked the values finite (JSON has no NaN).
    pub fn floats<const N: usize>(&mut self, items: &[[f32; N]]) -> usize {
        self.floats_in(items, Some(ARRAY_BUFFER))
    }

    fn floats_in<const N: usize>(&mut self, items: &[[f32; N]], target: Option<u32>) -> usize {
        let mut min = [f32::INFINITY; N];
        let mut max = [f32::NEG_INFINITY; N];
        for item in items {
            for c in 0..N {
                min[c] = min[c].min(item[c]);
                max[c] = max[c].max(item[c]);
            }
        }
        let view = self.view(bytemuck::cast_slice(items), target);
        self.accessor(json!({
            "bufferView": view, "componentType": FLOAT, "count": items.len(), "type": type_name(N),
            "min": min.to_vec(), "max": max.to_vec(),
        }))
    }

    /// Triangle indices, as 32-bit integers.
    pub fn indices(&mut self, indices: &[u32]) -> usize {
        let (min, max) = (indices.iter().min(), indices.iter().max());
        let view = self.view(bytemuck::cast_slice(indices), Some(ELEMENT_ARRAY_BUFFER));
        self.accessor(json!({
            "bufferView": view, "componentType": UNSIGNED_INT, "count": indices.len(), "type": "SCALAR",
            "min": [min], "max": [max],
        }))
    }

    /// A `JOINTS_n` attribute: unsigned shorts, which hold any joint index the rig keeps.
    fn joints(&mut self, joints: &[[u16; 4]]) -> usize {
        let mut min = [u16::MAX; 4];
        let mut max = [0u16; 4];
        for item in joints {
            for c in 0..4 {
                min[c] = min[c].min(item[c]);
                max[c] = max[c].max(item[c]);
            }
        }
        let view = self.view(bytemuck::cast_slice(joints), Some(ARRAY_BUFFER));
        self.accessor(json!({
            "bufferView": view, "componentType": UNSIGNED_SHORT, "count": joints.len(), "type": "VEC4",
            "min": min, "max": max,
        }))
    }

    fn accessor(&mut self, accessor: Value) -> usize {
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }
}

fn type_name(components: usize) -> &'static str {
    match components {
        1 => "SCALAR",
        2 => "VEC2",
        3 => "VEC3",
        4 => "VEC4",
        _ => "MAT4",
    }
}

/// `texture` encoded as PNG (the rig keeps images decoded; PNG gives the same pixels back);
/// `None` for an image without pixels, which nothing could show.
pub fn png_bytes(texture: &Texture) -> Option<Vec<u8>> {
    if texture.width == 0 || texture.height == 0 {
        return None;
    }
    let image = image::RgbaImage::from_raw(texture.width, texture.height, texture.rgba8.clone())?;
    let mut png = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .ok()?;
    Some(png)
}

/// The rig's materials as glTF, in the rig's order (primitives keep their material indices),
/// with the textures they show embedded as PNG in the chunk: base colour, metallic-roughness,
/// normal (with its scale), occlusion (with its strength) and emissive.
#[derive(Default)]
pub struct Materials {
    materials: Vec<Value>,
    images: Vec<Value>,
    textures: Vec<Value>,
    extensions_used: Vec<&'static str>,
    /// Per material, whether a texture reads TEXCOORD_1 (see [`Materials::write_uvs`]).
    reads_set_1: Vec<bool>,
}

impl Materials {
    pub fn of(rig: &Rig, chunk: &mut Chunk) -> Materials {
        let mut out = Materials::default();
        // Only the textures a material shows are written (the validator flags unused ones), each
        // once, renumbered in the order the materials name them.
        let mut texture_slots: Vec<usize> = Vec::new();
        for material in &rig.materials {
            let mut pbr = json!({
                "baseColorFactor": material.base_color.to_array().map(|c| c.clamp(0.0, 1.0)),
                "metallicFactor": material.metallic,
                "roughnessFactor": material.roughness,
            });
            let mut written = json!({ "name": material.name });
            let mut slot_of = |t: usize| out.texture_slot(rig, t, &mut texture_slots, chunk);
            // Each texture reads the file's own set through its own transform, as it did there.
            let mut reads_set_1 = false;
            let mut transforms_used = false;
            let mut info = |uv: &UvTransform, slot: usize| {
                let mut info = json!({ "index": slot });
                if uv.set != 0 {
                    info["texCoord"] = json!(uv.set);
                    reads_set_1 = true;
                }
                if !uv.is_identity() {
                    info["extensions"]["KHR_texture_transform"] = json!({ "offset": uv.offset.to_array(), "rotation": uv.rotation, "scale": uv.scale.to_array() });
                    transforms_used = true;
                }
                info
            };
            let base_color = material.base_color_texture.map(|texture| TextureRef {
                texture,
                uv: material.base_color_uv,
            });
            let textures = [
                (base_color, "baseColorTexture"),
                (material.metallic_roughness_texture, "metallicRoughnessTexture"),
                (material.normal_texture, "normalTexture"),
                (material.occlusion_texture, "occlusionTexture"),
                (material.emissive_texture, "emissiveTexture"),
            ];
            for (texture, key) in textures {
                let Some((texture, slot)) = texture.and_then(|t| Some((t, slot_of(t.texture)?))) else {
                    continue;
                };
                let info = info(&texture.uv, slot);
                match key {
                    "baseColorTexture" | "metallicRoughnessTexture" => pbr[key] = info,
                    _ => written[key] = info,
                }
            }
            if written.get("normalTexture").is_some() && material.normal_scale != 1.0 {
                written["normalTexture"]["scale"] = json!(material.normal_scale);
            }
            if written.get("occlusionTexture").is_some() && material.occlusion_strength != 1.0 {
                written["occlusionTexture"]["strength"] = json!(material.occlusion_strength);
            }
            if transforms_used {
                out.extensions_used.push("KHR_texture_transform");
            }
            written["pbrMetallicRoughness"] = pbr;
            if material.double_sided {
                written["doubleSided"] = json!(true);
            }
            match material.alpha_mode {
                AlphaMode::Opaque => {}
                AlphaMode::Mask => {
                    written["alphaMode"] = json!("MASK");
                    written["alphaCutoff"] = json!(material.alpha_cutoff.max(0.0));
                }
                AlphaMode::Blend => written["alphaMode"] = json!("BLEND"),
            }
            // The rig keeps emission as factor × strength: above 1 it needs the strength back.
            let strength = material.emissive.max_element();
            if strength > 0.0 {
                let scale = strength.max(1.0);
                written["emissiveFactor"] = json!((material.emissive / scale).to_array());
                if scale > 1.0 {
                    written["extensions"]["KHR_materials_emissive_strength"] = json!({ "emissiveStrength": scale });
                    out.extensions_used.push("KHR_materials_emissive_strength");
                }
            }
            if material.unlit {
                written["extensions"]["KHR_materials_unlit"] = json!({});
                out.extensions_used.push("KHR_materials_unlit");
            }
            out.materials.push(written);
            out.reads_set_1.push(reads_set_1);
        }
        out.extensions_used.sort_unstable();
        out.extensions_used.dedup();
        out
    }

    /// The glTF texture written for the rig's texture `t` (embedded as PNG the first time it is
    /// named); `None` when it has no pixels to write.
    fn texture_slot(&mut self, rig: &Rig, t: usize, slots: &mut Vec<usize>, chunk: &mut Chunk) -> Option<usize> {
        if let Some(slot) = slots.iter().position(|&s| s == t) {
            return Some(slot);
        }
        let texture = rig.textures.get(t)?;
        let png = png_bytes(texture)?;
        let view = chunk.view(&png, None);
        let mut image = json!({ "bufferView": view, "mimeType": "image/png" });
        if !texture.name.is_empty() {
            image["name"] = json!(texture.name);
        }
        self.images.push(image);
        self.textures.push(json!({ "source": self.images.len() - 1 }));
        slots.push(t);
        Some(slots.len() - 1)
    }

    /// Writes a primitive's texture coordinates into `attributes` for its `material`: the
    /// file's own sets (`file_set(set)`; the textures name their set and transform), TEXCOORD_0
    /// when it is not all zero (the importers fill in zeros where a file has none, and those
    /// come back as zeros) or the material reads TEXCOORD_1 too, which then follows.
    pub fn write_uvs<'a>(
        &self,
        material: Option<usize>,
        file_set: impl Fn(u32) -> &'a [glam::Vec2],
        chunk: &mut Chunk,
        attributes: &mut Value,
        what: &str,
    ) -> Result<(), SaveError> {
        let reads_set_1 = material.and_then(|m| self.reads_set_1.get(m)).is_some_and(|&r| r);
        let (set_0, set_1) = (file_set(0), file_set(1));
        let mut write = |name: &str, values: &[glam::Vec2]| {
            let values: Vec<[f32; 2]> = values.iter().map(|v| v.to_array()).collect();
            if !values.as_flattened().iter().all(|v| v.is_finite()) {
                return Err(rig_data(what, "a texture coordinate value is not finite"));
            }
            attributes[name] = json!(chunk.floats(&values));
            Ok(())
        };
        if !set_0.is_empty() && (reads_set_1 || set_0.iter().any(|uv| *uv != glam::Vec2::ZERO)) {
            write("TEXCOORD_0", set_0)?;
        }
        if reads_set_1 && !set_0.is_empty() {
            if set_1.len() != set_0.len() {
                let (one, zero) = (set_1.len(), set_0.len());
                return Err(rig_data(
                    what,
                    format!("texture coordinate set 1 has {one} values for {zero} vertices"),
                ));
            }
            write("TEXCOORD_1", set_1)?;
        }
        Ok(())
    }

    /// Puts the materials, images, textures and the extensions they use into `document`.
    pub fn add_to(self, document: &mut Value) {
        set_list(document, "materials", self.materials);
        set_list(document, "images", self.images);
        set_list(document, "textures", self.textures);
        if !self.extensions_used.is_empty() {
            document["extensionsUsed"] = json!(self.extensions_used);
        }
    }
}

/// Sets `document[key]` to `list` unless it is empty: glTF allows no empty top-level arrays.
pub fn set_list(document: &mut Value, key: &str, list: Vec<Value>) {
    if !list.is_empty() {
        document[key] = Value::Array(list);
    }
}

/// The files of `document` with `chunk` as its buffer: one GLB, or the `.gltf` JSON and its
/// `.bin` beside it (the `.bin` first), at `out`.
pub fn gltf_files(
    mut document: Value,
    chunk: Chunk,
    out: &Path,
    format: OutputFormat,
) -> Result<Vec<(PathBuf, Vec<u8>)>, SaveError> {
    let Chunk {
        bytes,
        views,
        accessors,
    } = chunk;
    set_list(&mut document, "accessors", accessors);
    set_list(&mut document, "bufferViews", views);
    let mut files = Vec::new();
    // A buffer must hold at least one byte: a document without data has none.
    if !bytes.is_empty() {
        let mut buffer = json!({ "byteLength": bytes.len() });
        if format == OutputFormat::Gltf {
            let stem = out.file_stem().map_or_else(|| "model".into(), |s| s.to_string_lossy());
            let bin_name = format!("{stem}.bin");
            buffer["uri"] = json!(uri_escaped(&bin_name));
            files.push((out.with_file_name(bin_name), bytes.clone()));
        }
        document["buffers"] = json!([buffer]);
    }
    let json = serde_json::to_vec(&document).map_err(SaveError::Json)?;
    let model = match format {
        OutputFormat::Glb => crate::rig::glb_container(&json, (!bytes.is_empty()).then_some(&bytes[..])),
        OutputFormat::Gltf => json,
    };
    files.push((out.to_owned(), model));
    Ok(files)
}

/// `name` as a relative URI: every byte but unreserved characters percent-encoded (a space in a
/// file name is not allowed in a URI; the importer decodes it back).
fn uri_escaped(name: &str) -> String {
    use std::fmt::Write as _;
    let mut uri = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            uri.push(byte as char);
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}

/// Writes every file to a temporary file beside it, then renames them all into place, so that
/// a failure leaves no partial file (and, before the renames, no file at all).
pub fn write_files(files: &[(PathBuf, Vec<u8>)]) -> Result<(), SaveError> {
    use std::io::Write as _;
    let mut temps = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let failed = |source| SaveError::Write {
            path: path.clone(),
            source,
        };
        let folder = folder_of(path);
        let mut temp = temp_file_in(&folder, ".rigscope-new-").map_err(|e| match folder.is_dir() {
            true => failed(e),
            false => failed(std::io::Error::new(
                e.kind(),
                format!("there is no folder {}", folder.display()),
            )),
        })?;
        temp.write_all(bytes).map_err(failed)?;
        temp.as_file().sync_all().map_err(failed)?;
        temps.push(temp);
    }
    let mut written: Vec<&Path> = Vec::new();
    for ((path, _), temp) in files.iter().zip(temps) {
        if let Err(e) = temp.persist(path) {
            for done in written {
                let _ = std::fs::remove_file(done);
            }
            return Err(SaveError::Write {
                path: path.clone(),
                source: e.error,
            });
        }
        written.push(path);
    }
    Ok(())
}

/// Where each rig node goes in the file: breadth first from the roots, each node's children in
/// rig order, which is the order the importer sorts a file's nodes into, so the file's node `i`
/// is node `i` of the rig read back from it.
///
/// glTF asks a skin's joints for a common root. An FBX scene's root is one, but the importer
/// leaves it out when it is the identity, so a skin whose joints are in two of the rig's trees
/// (Blender's barbarian: the armature, and the hair mesh that is its own joint) gets that root
/// back: an identity node, file node 0, above all the rig's roots.
struct FileOrder {
    /// The file index of each rig node.
    file_of: Vec<usize>,
    /// The rig node of each file index after the added root.
    rig_of: Vec<usize>,
    /// Per rig node, its children in rig order.
    children: Vec<Vec<usize>>,
    /// The name of the node added above the roots, when one is.
    added_root: Option<String>,
}

impl FileOrder {
    fn of(rig: &Rig) -> Result<FileOrder, SaveError> {
        let count = rig.nodes.len();
        let mut children = vec![Vec::new(); count];
        let mut roots = Vec::new();
        // The root of each node's tree, found in one pass since parents come first.
        let mut top = Vec::with_capacity(count);
        for (node, n) in rig.nodes.iter().enumerate() {
            match n.parent {
                // The rig keeps parents before children; anything else would be a cycle.
                Some(parent) if parent >= node => {
                    return Err(rig_data(
                        format!("node {node} ('{}')", n.name),
                        "its parent comes after it",
                    ));
                }
                Some(parent) => {
                    children[parent].push(node);
                    top.push(top[parent]);
                }
                None => {
                    roots.push(node);
                    top.push(node);
                }
            }
        }
        let split_skin = rig.skins.iter().any(|skin| {
            let mut tops = skin.joints.iter().filter_map(|&j| top.get(j));
            tops.next().is_some_and(|first| tops.any(|t| t != first))
        });
        let added_root = split_skin.then(|| {
            (1..)
                .map(|n| {
                    if n == 1 {
                        "RootNode".to_owned()
                    } else {
                        format!("RootNode_{n}")
                    }
                })
                .find(|name| rig.find_node(name).is_none())
                .expect("some name is free")
        });
        let offset = usize::from(added_root.is_some());
        let mut rig_of = roots;
        let mut next = 0;
        while next < rig_of.len() {
            rig_of.extend_from_slice(&children[rig_of[next]]);
            next += 1;
        }
        let mut file_of = vec![0; count];
        for (file, &node) in rig_of.iter().enumerate() {
            file_of[node] = file + offset;
        }
        Ok(FileOrder {
            file_of,
            rig_of,
            children,
            added_root,
        })
    }

    /// The rig node at file index `file` (`None` for the added root).
    fn rig_node(&self, file: usize) -> Option<usize> {
        let offset = usize::from(self.added_root.is_some());
        file.checked_sub(offset).and_then(|f| self.rig_of.get(f)).copied()
    }

    /// The file indices of the rig's roots.
    fn rig_roots(&self, rig: &Rig) -> Vec<usize> {
        (self.rig_of.iter())
            .filter(|&&node| rig.nodes[node].parent.is_none())
            .map(|&node| self.file_of[node])
            .collect()
    }
}

fn rig_data(what: impl Into<String>, problem: impl Into<String>) -> SaveError {
    SaveError::RigData {
        what: what.into(),
        problem: problem.into(),
    }
}

/// Writes `rig` as a new glTF file at `out` (`.glb`, or `.gltf` with a `.bin` beside it), with
/// every clip of `rig.clips` as an animation. `inputs` are the files the rig was read from,
/// never written over. Nothing is left at `out` when an error is returned.
pub fn write_rig(rig: &Rig, out: &Path, inputs: &[PathBuf], generator: &str) -> Result<Saved, SaveError> {
    let format = OutputFormat::of(out)?;
    let mut notes = Vec::new();
    let order = FileOrder::of(rig)?;
    let mut chunk = Chunk::default();
    let mesh_of_node = meshes_of_nodes(rig)?;
    let materials = Materials::of(rig, &mut chunk);
    let (meshes, written_mesh) = meshes_json(rig, &mesh_of_node, &materials, &mut chunk, &mut notes)?;
    let skins = skins_json(rig, &order, &mut chunk)?;
    let mut nodes = nodes_json(rig, &order, &mesh_of_node, &written_mesh)?;
    let animations = animations_json(rig, &order, &mesh_of_node, &written_mesh, &mut chunk, &mut notes)?;
    if let Some(method) = rig.skinning.method.filter(|m| *m != crate::skin::SkinningMethod::Lbs) {
        notes.push(format!(
            "the file asks for {} skinning, which glTF cannot say: the meshes are written for linear blend skinning",
            crate::names::Named::name(method)
        ));
    }

    let roots = match &order.added_root {
        Some(name) => {
            notes.push(format!(
                "a skin's joints are in more than one tree: node '{name}' is added above the roots, as the FBX scene's root"
            ));
            nodes.insert(0, json!({ "name": name, "children": order.rig_roots(rig) }));
            vec![0]
        }
        None => order.rig_roots(rig),
    };
    let mut scene = json!({ "name": rig.name });
    if !roots.is_empty() {
        scene["nodes"] = json!(roots);
    }
    let mut document = json!({
        "asset": { "version": "2.0", "generator": generator },
        "scene": 0,
        "scenes": [scene],
    });
    set_list(&mut document, "nodes", nodes);
    set_list(&mut document, "meshes", meshes);
    set_list(&mut document, "skins", skins);
    set_list(&mut document, "animations", animations);
    materials.add_to(&mut document);

    let files = gltf_files(document, chunk, out, format)?;
    for (path, _) in &files {
        if inputs.iter().any(|input| same_file(input, path)) {
            return Err(SaveError::WouldOverwriteInput { path: path.clone() });
        }
    }
    write_files(&files)?;
    Ok(Saved {
        written: files.into_iter().map(|(path, _)| path).collect(),
        backup: None,
        notes,
    })
}

/// The mesh (by index in the rig) and skin a node holds.
type MeshOfNode = Option<(usize, Option<usize>)>;

/// Each node's mesh and skin. One mesh per node in glTF, as in both importers; a mesh node's
/// skin is the instance's.
fn meshes_of_nodes(rig: &Rig) -> Result<Vec<MeshOfNode>, SaveError> {
    let mut mesh_of_node: Vec<MeshOfNode> = vec![None; rig.nodes.len()];
    for instance in &rig.instances {
        let what = || format!("the instance of mesh {} on node {}", instance.mesh, instance.node);
        if instance.mesh >= rig.meshes.len() || instance.skin.is_some_and(|s| s >= rig.skins.len()) {
            return Err(rig_data(what(), "its mesh or skin does not exist"));
        }
        let slot = (mesh_of_node.get_mut(instance.node)).ok_or_else(|| rig_data(what(), "the node does not exist"))?;
        if slot.replace((instance.mesh, instance.skin)).is_some() {
            return Err(rig_data(
                what(),
                "the node already holds a mesh, and a glTF node holds one",
            ));
        }
    }
    Ok(mesh_of_node)
}

/// The meshes, and where each of the rig's meshes is written. glTF asks every mesh for a
/// primitive: a mesh the importer kept none of (no triangles) is left out, and the nodes that
/// held it hold none.
fn meshes_json(
    rig: &Rig,
    mesh_of_node: &[MeshOfNode],
    materials: &Materials,
    chunk: &mut Chunk,
    notes: &mut Vec<String>,
) -> Result<(Vec<Value>, Vec<Option<usize>>), SaveError> {
    let mut meshes = Vec::new();
    let mut written_mesh = vec![None; rig.meshes.len()];
    for (m, mesh) in rig.meshes.iter().enumerate() {
        if mesh.primitives.is_empty() {
            notes.push(format!("mesh '{}' has no triangles and was left out", mesh.name));
            continue;
        }
        meshes.push(mesh_json(rig, m, mesh_of_node, materials, chunk)?);
        written_mesh[m] = Some(meshes.len() - 1);
    }
    Ok((meshes, written_mesh))
}

/// The skins, with their joints in file order and their inverse bind matrices in `chunk`.
fn skins_json(rig: &Rig, order: &FileOrder, chunk: &mut Chunk) -> Result<Vec<Value>, SaveError> {
    (rig.skins.iter().enumerate())
        .map(|(s, skin)| {
            let what = || format!("skin {s} ('{}')", skin.name);
            if skin.joints.is_empty() {
                return Err(rig_data(what(), "it has no joints"));
            }
            if skin.inverse_binds.len() != skin.joints.len() {
                return Err(rig_data(
                    what(),
                    format!(
                        "{} joints, {} inverse bind matrices",
                        skin.joints.len(),
                        skin.inverse_binds.len()
                    ),
                ));
            }
            let joints = (skin.joints.iter())
                .map(|&j| order.file_of.get(j).copied())
                .collect::<Option<Vec<usize>>>()
                .ok_or_else(|| rig_data(what(), "a joint is not a node of the rig"))?;
            let matrices: Vec<[f32; 16]> = skin.inverse_binds.iter().map(|m| m.to_cols_array()).collect();
            if !matrices.iter().flatten().all(|v| v.is_finite()) {
                return Err(rig_data(what(), "an inverse bind matrix is not finite"));
            }
            // Inverse bind matrices are read by the CPU, not bound as vertex data: no target.
            let inverse = chunk.floats_in(&matrices, None);
            Ok(json!({ "name": skin.name, "joints": joints, "inverseBindMatrices": inverse }))
        })
        .collect::<Result<Vec<_>, _>>()
}

/// The nodes in file order, with their rest transforms, children, meshes and skins.
fn nodes_json(
    rig: &Rig,
    order: &FileOrder,
    mesh_of_node: &[MeshOfNode],
    written_mesh: &[Option<usize>],
) -> Result<Vec<Value>, SaveError> {
    if let Some((node, n)) = rig.nodes.iter().enumerate().find(|(_, n)| !trs_finite(&n.rest)) {
        return Err(rig_data(
            format!("node {node} ('{}')", n.name),
            "its rest transform is not finite",
        ));
    }
    let nodes: Vec<Value> = (order.rig_of.iter())
        .map(|&node| {
            let n = &rig.nodes[node];
            let mut written = json!({ "name": n.name });
            trs_json(&n.rest, &mut written);
            let children: Vec<usize> = order.children[node].iter().map(|&c| order.file_of[c]).collect();
            if !children.is_empty() {
                written["children"] = json!(children);
            }
            if let Some((mesh, skin)) = mesh_of_node[node]
                && let Some(mesh) = written_mesh[mesh]
            {
                written["mesh"] = json!(mesh);
                if let Some(skin) = skin {
                    written["skin"] = json!(skin);
                }
            }
            written
        })
        .collect();
    Ok(nodes)
}

/// The clips as glTF animations, their keys in `chunk`.
fn animations_json(
    rig: &Rig,
    order: &FileOrder,
    mesh_of_node: &[MeshOfNode],
    written_mesh: &[Option<usize>],
    chunk: &mut Chunk,
    notes: &mut Vec<String>,
) -> Result<Vec<Value>, SaveError> {
    let mut animations = Vec::new();
    for (clip, c) in rig.clips.iter().enumerate() {
        let targets_on = |file_node: usize| {
            let mesh = order.rig_node(file_node).and_then(|n| mesh_of_node[n]);
            let written = mesh.filter(|(mesh, _)| written_mesh[*mesh].is_some());
            Ok(written.map_or(0, |(mesh, _)| target_count(rig, mesh)))
        };
        let file_node = |node: usize| order.file_of.get(node).copied();
        let weights = rig.morphs.channels.iter().any(|m| m.clip == clip);
        // A glTF animation needs a channel: a clip without any (an FBX take that animates
        // nothing, say) holds the first root at rest, which poses the rig as the clip does.
        let held = (c.channels.is_empty() && !weights)
            .then(|| held_rest(rig, clip))
            .flatten();
        let encoded = match &held {
            Some(held) => {
                notes.push(format!(
                    "clip '{}' animates nothing: written as one key of '{}' at rest",
                    c.name, rig.nodes[0].name
                ));
                encode_clip(held, 0, file_node, targets_on)?
            }
            None => encode_clip(rig, clip, file_node, targets_on)?,
        };
        let view = chunk.view(&encoded.bytes, None);
        let (animation, accessors) = encoded.placed(view, chunk.accessors.len());
        chunk.accessors.extend(accessors);
        animations.push(animation);
    }
    Ok(animations)
}

/// A rig of clip `clip` alone (no morph channels), keyed once at time 0 with node 0's rest
/// translation; `None` for a rig without nodes.
fn held_rest(rig: &Rig, clip: usize) -> Option<Rig> {
    let rest = rig.nodes.first()?.rest.translation;
    let held = crate::rig::Clip {
        name: rig.clips.get(clip)?.name.clone(),
        duration: 0.0,
        channels: vec![crate::rig::Channel {
            node: 0,
            property: crate::rig::Property::Translation,
            interpolation: crate::rig::Interpolation::Step,
            times: vec![0.0],
            values: vec![rest.extend(0.0)],
        }],
        source: None,
    };
    Some(Rig {
        clips: vec![held],
        ..Rig::default()
    })
}

fn trs_finite(trs: &Trs) -> bool {
    trs.translation.is_finite() && trs.rotation.is_finite() && trs.scale.is_finite()
}

/// A node's rest transform as glTF TRS, leaving out the parts that are glTF's defaults.
fn trs_json(trs: &Trs, node: &mut Value) {
    if trs.translation != Vec3::ZERO {
        node["translation"] = json!(trs.translation.to_array());
    }
    if trs.rotation != Quat::IDENTITY {
        node["rotation"] = json!(trs.rotation.to_array());
    }
    if trs.scale != Vec3::ONE {
        node["scale"] = json!(trs.scale.to_array());
    }
}

/// The morph targets every primitive of mesh `mesh` is written with: glTF asks all primitives
/// of a mesh for the same number, so the most of any (fewer are filled with zero offsets).
fn target_count(rig: &Rig, mesh: usize) -> usize {
    rig.morphs
        .targets
        .get(mesh)
        .map_or(0, |p| p.iter().map(Vec::len).max().unwrap_or(0))
}

/// The primitive's tangents as glTF's TANGENT, when it has them with its normals (glTF reads
/// them only beside normals) and each is one glTF accepts: xyz of unit length, w ±1. Otherwise
/// none is written and readers generate MikkTSpace tangents, as this rig's importer does.
fn writable_tangents(primitive: &crate::rig::Primitive) -> Option<Vec<[f32; 4]>> {
    let n = primitive.vertex_count();
    let unit = |t: &glam::Vec4| (t.truncate().length() - 1.0).abs() <= 1e-4 && t.w.abs() == 1.0;
    (primitive.tangents.len() == n && primitive.normals.len() == n && primitive.tangents.iter().all(unit))
        .then(|| primitive.tangents.iter().map(|t| t.to_array()).collect())
}

/// Morph target `t` of a primitive of `n` vertices as glTF (`None`: a target the primitive lacks,
/// written as zero offsets), its offsets in the chunk; its TANGENT offsets only where the
/// primitive's TANGENT is written (`with_tangents`), as glTF asks. An error naming `what` if the
/// target does not fit the primitive.
fn target_json(
    target: Option<&crate::rig::MorphTarget>,
    t: usize,
    n: usize,
    with_tangents: bool,
    chunk: &mut Chunk,
    what: &str,
) -> Result<Value, SaveError> {
    let zero = crate::rig::MorphTarget::default();
    let target = target.unwrap_or(&zero);
    if let Some(&v) = target.vertices.iter().find(|&&v| v as usize >= n) {
        return Err(rig_data(
            what,
            format!("morph target {t} moves vertex {v} of {n} vertices"),
        ));
    }
    let (positions, normals) = target.dense(n);
    let offsets = |values: &[Vec3], name: &str| -> Result<Vec<[f32; 3]>, SaveError> {
        let values: Vec<[f32; 3]> = values.iter().map(|v| v.to_array()).collect();
        match values.as_flattened().iter().all(|v| v.is_finite()) {
            true => Ok(values),
            false => Err(rig_data(what, format!("a morph target {name} offset is not finite"))),
        }
    };
    // glTF's POSITION of a target is required to have bounds, so it is always written.
    let mut written = json!({ "POSITION": chunk.floats(&offsets(&positions, "position")?) });
    if target.has_normals() {
        written["NORMAL"] = json!(chunk.floats(&offsets(&normals, "normal")?));
    }
    if with_tangents && target.has_tangents() {
        written["TANGENT"] = json!(chunk.floats(&offsets(&target.dense_tangents(n), "tangent")?));
    }
    Ok(written)
}

/// Mesh `m` as glTF, its data in the chunk; `mesh_of_node` holds each node's (mesh, skin), to
/// check the joint indices against every skin the mesh is drawn with.
fn mesh_json(
    rig: &Rig,
    m: usize,
    mesh_of_node: &[Option<(usize, Option<usize>)>],
    materials: &Materials,
    chunk: &mut Chunk,
) -> Result<Value, SaveError> {
    let mesh = &rig.meshes[m];
    let targets = target_count(rig, m);
    // The fewest joints of the skins the mesh is drawn with bounds its joint indices.
    let joint_limit = (mesh_of_node.iter().flatten())
        .filter(|(mesh, _)| *mesh == m)
        .filter_map(|(_, skin)| skin.map(|s| rig.skins[s].joints.len()))
        .min();
    let mut primitives = Vec::with_capacity(mesh.primitives.len());
    for (k, primitive) in mesh.primitives.iter().enumerate() {
        let what = || format!("mesh {m} ('{}') primitive {k}", mesh.name);
        let n = primitive.vertex_count();
        if n == 0 {
            return Err(rig_data(what(), "it has no vertices"));
        }
        let per_vertex = |len: usize, name: &str| match len == n || len == 0 {
            true => Ok(()),
            false => Err(rig_data(what(), format!("{len} {name} for {n} vertices"))),
        };
        per_vertex(primitive.normals.len(), "normals")?;
        per_vertex(primitive.uvs.len(), "texture coordinates")?;
        per_vertex(primitive.colors.len(), "colours")?;
        let finite = |values: &[f32], name: &str| match values.iter().all(|v| v.is_finite()) {
            true => Ok(()),
            false => Err(rig_data(what(), format!("a {name} value is not finite"))),
        };
        let positions: Vec<[f32; 3]> = primitive.positions.iter().map(|v| v.to_array()).collect();
        finite(positions.as_flattened(), "position")?;
        let mut attributes = json!({ "POSITION": chunk.floats(&positions) });
        if !primitive.normals.is_empty() {
            let normals: Vec<[f32; 3]> = primitive.normals.iter().map(|v| v.to_array()).collect();
            finite(normals.as_flattened(), "normal")?;
            attributes["NORMAL"] = json!(chunk.floats(&normals));
        }
        materials.write_uvs(
            primitive.material,
            |set| primitive.uv_set(set),
            chunk,
            &mut attributes,
            &what(),
        )?;
        if !primitive.colors.is_empty() {
            let colors: Vec<[f32; 4]> = primitive.colors.iter().map(|v| v.to_array()).collect();
            finite(colors.as_flattened(), "colour")?;
            attributes["COLOR_0"] = json!(chunk.floats(&colors));
        }
        let tangents = writable_tangents(primitive);
        if let Some(tangents) = &tangents {
            attributes["TANGENT"] = json!(chunk.floats(tangents));
        }
        if let Some(influences) = &primitive.influences {
            write_influences(influences, n, joint_limit, chunk, &mut attributes, &what())?;
        }
        if primitive.indices.len() % 3 != 0 {
            return Err(rig_data(
                what(),
                format!("{} indices do not make triangles", primitive.indices.len()),
            ));
        }
        if let Some(&bad) = primitive.indices.iter().find(|&&i| i as usize >= n) {
            return Err(rig_data(what(), format!("index {bad} is past its {n} vertices")));
        }
        let mut written = json!({ "attributes": attributes });
        if !primitive.indices.is_empty() {
            written["indices"] = json!(chunk.indices(&primitive.indices));
        } else if n % 3 != 0 {
            return Err(rig_data(
                what(),
                format!("{n} vertices without indices do not make triangles"),
            ));
        }
        if let Some(material) = primitive.material {
            if material >= rig.materials.len() {
                return Err(rig_data(what(), format!("material {material} does not exist")));
            }
            written["material"] = json!(material);
        }
        if targets > 0 {
            let own = rig.morphs.of(m, k);
            let written_targets = (0..targets)
                .map(|t| target_json(own.get(t), t, n, tangents.is_some(), chunk, &what()))
                .collect::<Result<Vec<_>, _>>()?;
            written["targets"] = json!(written_targets);
        }
        primitives.push(written);
    }
    let mut written = json!({ "name": mesh.name, "primitives": primitives });
    if targets > 0 {
        // glTF asks for one default weight per target; the rig's default weights are 0 where
        // the file gave none.
        let defaults = rig.morphs.default_weights.get(m).map_or(&[][..], Vec::as_slice);
        let weights: Vec<f32> = (0..targets).map(|t| defaults.get(t).copied().unwrap_or(0.0)).collect();
        if !weights.iter().all(|w| w.is_finite()) {
            return Err(rig_data(
                format!("mesh {m} ('{}')", mesh.name),
                "a default morph weight is not finite",
            ));
        }
        written["weights"] = json!(weights);
        let names = rig.morphs.target_names.get(m).filter(|names| names.len() == targets);
        if let Some(names) = names {
            written["extras"] = json!({ "targetNames": names });
        }
    }
    Ok(written)
}

/// `JOINTS_n`/`WEIGHTS_n` for each set of four influences (the rig keeps `sets` per vertex,
/// two when a vertex has more than four). Weights are written as floats, as the rig holds
/// them, so they come back unchanged.
fn write_influences(
    influences: &Influences,
    n: usize,
    joint_limit: Option<usize>,
    chunk: &mut Chunk,
    attributes: &mut Value,
    what: &str,
) -> Result<(), SaveError> {
    let sets = influences.sets;
    if sets == 0 || influences.joints.len() != n * sets || influences.weights.len() != n * sets {
        return Err(rig_data(
            what,
            format!(
                "{} joints and {} weights in {sets} sets for {n} vertices",
                influences.joints.len(),
                influences.weights.len()
            ),
        ));
    }
    if !influences.weights.as_flattened().iter().all(|w| w.is_finite()) {
        return Err(rig_data(what, "a weight is not finite"));
    }
    if let Some(limit) = joint_limit
        && let Some(joint) = influences
            .joints
            .as_flattened()
            .iter()
            .find(|&&j| usize::from(j) >= limit)
    {
        return Err(rig_data(
            what,
            format!("joint {joint} is past the {limit} joints of its skin"),
        ));
    }
    for set in 0..sets {
        let joints: Vec<[u16; 4]> = influences.joints.iter().skip(set).step_by(sets).copied().collect();
        let weights: Vec<[f32; 4]> = influences.weights.iter().skip(set).step_by(sets).copied().collect();
        attributes[format!("JOINTS_{set}")] = json!(chunk.joints(&joints));
        attributes[format!("WEIGHTS_{set}")] = json!(chunk.floats(&weights));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::Node;

    #[test]
    fn nodes_go_breadth_first_as_the_importer_sorts_them() {
        // Rig order (parents first, depth first): a, a/b, a/b/c, a/d, e.
        let node = |name: &str, parent| Node {
            name: name.into(),
            parent,
            rest: Trs::IDENTITY,
        };
        let rig = Rig {
            nodes: vec![
                node("a", None),
                node("b", Some(0)),
                node("c", Some(1)),
                node("d", Some(0)),
                node("e", None),
            ],
            ..Rig::default()
        };
        let order = FileOrder::of(&rig).unwrap();
        let names: Vec<&str> = order.rig_of.iter().map(|&n| rig.nodes[n].name.as_str()).collect();
        assert_eq!(names, ["a", "e", "b", "d", "c"]);
        assert_eq!(order.file_of, [0, 2, 4, 3, 1]);
        let mut bad = rig.clone();
        bad.nodes[1].parent = Some(3);
        assert!(matches!(FileOrder::of(&bad), Err(SaveError::RigData { .. })));
    }

    #[test]
    fn file_names_are_escaped_as_uris() {
        assert_eq!(uri_escaped("Samba Dancing.bin"), "Samba%20Dancing.bin");
        assert_eq!(uri_escaped("a-b_c~d.bin"), "a-b_c~d.bin");
        assert_eq!(uri_escaped("é#.bin"), "%C3%A9%23.bin");
    }
}
