//! Writing a glTF file from nothing but a [`Rig`], for inputs there is no glTF JSON to edit: an
//! FBX rig written as glTF by `rigscope clips`, and a posed mesh written by `rigscope export`.
//!
//! The parts both writers share live here: [`Chunk`] (the binary data with its buffer views and
//! accessors, float accessors with their exact bounds), [`Materials`] (the rig's materials with
//! their base colour textures embedded as PNG), [`gltf_files`] (the GLB container, or `.gltf`
//! JSON with a `.bin` beside it) and [`write_files`] (every file through a temporary file that
//! is renamed into place). Clips are encoded by the same code as the writer that edits a file
//! (`super::animations::encode_clip`).
//!
//! [`write_rig`] writes the whole rig: nodes in the order the importer reads them back
//! (in rig order, parents first, see `FileOrder`), meshes with their skins' joints and
//! weights, morph targets with their default weights and names, skins with their inverse bind
//! matrices, materials and textures, and every clip with its morph weight channels.

use super::{OutputFormat, SaveError, folder_of, temp_file_in};
use crate::rig::{AlphaMode, Rig, Texture, TextureRef, UvTransform};
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

    /// An encoded clip's data as a buffer view of its own, and the animation pointing at it.
    pub(super) fn animation(&mut self, encoded: super::animations::EncodedClip) -> Value {
        let view = self.view(&encoded.bytes, None);
        let (animation, accessors) = encoded.placed(view, self.accessors.len());
        self.accessors.extend(accessors);
        animation
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

/// `texture` encoded as PNG (decoded from the file's image again; PNG gives the same pixels back);
/// `None` for an image without pixels, which nothing could show.
pub fn png_bytes(texture: &Texture) -> Option<Vec<u8>> {
    if texture.width == 0 || texture.height == 0 {
        return None;
    }
    let image = image::RgbaImage::from_raw(texture.width, texture.height, texture.rgba8().into_owned())?;
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
                (material.specular.texture, "specularTexture"),
                (material.specular.color_texture, "specularColorTexture"),
            ];
            for (texture, key) in textures {
                let Some((texture, slot)) = texture.and_then(|t| Some((t, slot_of(t.texture)?))) else {
                    continue;
                };
                let info = info(&texture.uv, slot);
                match key {
                    "baseColorTexture" | "metallicRoughnessTexture" => pbr[key] = info,
                    "specularTexture" | "specularColorTexture" => {
                        written["extensions"]["KHR_materials_specular"][key] = info;
                    }
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
            write_specular(&material.specular, &mut written, &mut out.extensions_used);
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

fn rig_data(what: impl Into<String>, problem: impl Into<String>) -> SaveError {
    SaveError::RigData {
        what: what.into(),
        problem: problem.into(),
    }
}

mod unit_scale;
mod whole_rig;

pub use whole_rig::write_rig;

/// KHR_materials_specular and KHR_materials_ior where `specular` is not glTF's plain dielectric:
/// the factors that differ from their defaults (the textures are written with the others).
fn write_specular(specular: &crate::rig::Specular, written: &mut Value, used: &mut Vec<&'static str>) {
    const SPECULAR: &str = "KHR_materials_specular";
    if specular.factor != 1.0 {
        written["extensions"][SPECULAR]["specularFactor"] = json!(specular.factor);
    }
    if specular.color != glam::Vec3::ONE {
        written["extensions"][SPECULAR]["specularColorFactor"] = json!(specular.color.to_array());
    }
    if written.pointer(&format!("/extensions/{SPECULAR}")).is_some() {
        used.push(SPECULAR);
    }
    if specular.ior != crate::rig::DEFAULT_IOR {
        written["extensions"]["KHR_materials_ior"] = json!({ "ior": specular.ior });
        used.push("KHR_materials_ior");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_escaped_as_uris() {
        assert_eq!(uri_escaped("Samba Dancing.bin"), "Samba%20Dancing.bin");
        assert_eq!(uri_escaped("a-b_c~d.bin"), "a-b_c~d.bin");
        assert_eq!(uri_escaped("é#.bin"), "%C3%A9%23.bin");
    }
}
