//! The JSON side of a save: repointing the repaired accessors at new buffer views, keeping the
//! compression extensions true to what they still describe, and placing the new bytes in the
//! GLB binary chunk or a new `.bin`. Every index and length read from the JSON is checked here
//! before it is used. Placing the bytes is `buffers`.

use super::encode::{Encoded, Layout, encode_joints, encode_weights};
use super::json_text::Origins;
use super::{AttributeProblem, PrimitiveChange, SaveError};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

use super::encode::{FLOAT, UNSIGNED_BYTE, UNSIGNED_SHORT};

mod buffers;
const ARRAY_BUFFER: u64 = 34962;
const DRACO: &str = "KHR_draco_mesh_compression";
const MESHOPT: &str = "EXT_meshopt_compression";

/// A document being edited, with the bytes of its new buffer views (not yet in a buffer).
pub struct Edited {
    json: Value,
    data: Vec<u8>,
    /// The buffer views added, whose `buffer` and `byteOffset` are set when the data is placed.
    new_views: Vec<usize>,
    notes: Vec<String>,
    /// Top-level arrays whose elements moved, for writing the unchanged ones as their text.
    origins: Origins,
    /// Extensions named in parts of the document the edit removed: dropped from the extension
    /// lists when nothing left uses them.
    removed_extensions: BTreeSet<String>,
}

/// The edited document with its bytes placed.
pub struct Placed {
    pub json: Value,
    pub origins: Origins,
    /// The GLB binary chunk (GLB output).
    pub glb_bin: Option<Vec<u8>>,
    /// The bytes of the new `.bin` beside a `.gltf` output.
    pub external_bin: Option<Vec<u8>>,
    pub notes: Vec<String>,
}

pub(super) fn malformed(what: impl Into<String>, problem: impl Into<String>) -> SaveError {
    SaveError::Malformed {
        what: what.into(),
        problem: problem.into(),
    }
}

pub(super) fn as_index(value: &Value) -> Option<usize> {
    value.as_u64().and_then(|i| usize::try_from(i).ok())
}

pub(super) fn array_len(json: &Value, key: &str) -> usize {
    json.get(key).and_then(Value::as_array).map_or(0, Vec::len)
}

/// `json[key]` as a mutable array, created empty when absent.
pub(super) fn array_mut<'a>(json: &'a mut Value, key: &str) -> Result<&'a mut Vec<Value>, SaveError> {
    let object = json
        .as_object_mut()
        .ok_or_else(|| malformed("document", "the JSON is not an object"))?;
    object
        .entry(key)
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| malformed(key, "not an array"))
}

/// The relative URIs (not data URIs) of the document's buffers and images.
pub fn external_uris(json: &Value) -> Vec<String> {
    let mut uris: Vec<String> = ["buffers", "images"]
        .iter()
        .flat_map(|key| json.get(key).and_then(Value::as_array).into_iter().flatten())
        .filter_map(|item| item.get("uri").and_then(Value::as_str))
        .filter(|uri| !uri.starts_with("data:") && !uri.contains("://"))
        .map(str::to_owned)
        .collect();
    uris.sort();
    uris.dedup();
    uris
}

/// `STEM.bin` for `output`, or `STEM-1.bin`, `STEM-2.bin`, … when the document already refers to
/// that name (an in-place save of a `.gltf` never writes over the buffer it reads).
pub fn free_bin_name(output: &Path, json: &Value) -> String {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let taken = external_uris(json);
    (0u32..)
        .map(|n| {
            if n == 0 {
                format!("{stem}.bin")
            } else {
                format!("{stem}-{n}.bin")
            }
        })
        .find(|name| !taken.iter().any(|t| t == name))
        .expect("some name is free")
}

/// How many places of the document read accessor `index` (attributes, indices and morph targets
/// of every primitive, skins, animation samplers, instancing attributes).
fn accessor_uses(json: &Value, index: usize) -> usize {
    let is = |v: &Value| as_index(v) == Some(index);
    let in_map = |v: Option<&Value>| {
        v.and_then(Value::as_object)
            .map_or(0, |m| m.values().filter(|v| is(v)).count())
    };
    let list = |key: &str| json.get(key).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let mut uses = 0;
    for mesh in list("meshes") {
        for primitive in mesh.get("primitives").and_then(Value::as_array).into_iter().flatten() {
            uses += in_map(primitive.get("attributes"));
            uses += primitive.get("indices").is_some_and(is) as usize;
            for target in primitive.get("targets").and_then(Value::as_array).into_iter().flatten() {
                uses += in_map(Some(target));
            }
        }
    }
    for skin in list("skins") {
        uses += skin.get("inverseBindMatrices").is_some_and(is) as usize;
    }
    for animation in list("animations") {
        for sampler in animation
            .get("samplers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            uses += sampler.get("input").is_some_and(is) as usize + sampler.get("output").is_some_and(is) as usize;
        }
    }
    for node in list("nodes") {
        uses += in_map(node.pointer("/extensions/EXT_mesh_gpu_instancing/attributes"));
    }
    uses
}

impl Edited {
    pub fn new(json: Value) -> Edited {
        Edited {
            json,
            data: Vec::new(),
            new_views: Vec::new(),
            notes: Vec::new(),
            origins: Origins::new(),
            removed_extensions: BTreeSet::new(),
        }
    }

    pub(super) fn json(&self) -> &Value {
        &self.json
    }

    pub(super) fn json_mut(&mut self) -> &mut Value {
        &mut self.json
    }

    pub(super) fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// Records that element `k` of the top-level array `key` was element `origins[k]` as read.
    pub(super) fn set_origins(&mut self, key: &str, origins: Vec<Option<usize>>) {
        self.origins.insert(key.to_owned(), origins);
    }

    /// Records the extensions named anywhere in `removed`, a part the edit took out of the
    /// document.
    pub(super) fn removed(&mut self, removed: &Value) {
        extension_names(removed, &mut self.removed_extensions);
    }

    /// Adds `bytes` as a new buffer view (4-byte aligned in the new data, so that the float and
    /// 32-bit accessors in it are aligned) and returns its index. `target` is the GPU binding
    /// glTF asks vertex data to name; animation data names none.
    pub(super) fn add_view(&mut self, bytes: &[u8], target: Option<u64>) -> Result<usize, SaveError> {
        let offset = self.data.len().next_multiple_of(4);
        self.data.resize(offset, 0);
        self.data.extend_from_slice(bytes);
        let mut view = json!({
            "buffer": 0,
            "byteOffset": offset,
            "byteLength": bytes.len(),
        });
        if let Some(target) = target {
            view["target"] = target.into();
        }
        let views = array_mut(&mut self.json, "bufferViews")?;
        views.push(view);
        let index = views.len() - 1;
        self.new_views.push(index);
        Ok(index)
    }

    /// Writes the changed joints and weights of one primitive.
    pub fn rewrite_primitive(&mut self, change: &PrimitiveChange) -> Result<(), SaveError> {
        let (m, p) = (change.mesh, change.primitive);
        let attributes = self
            .json
            .pointer(&format!("/meshes/{m}/primitives/{p}/attributes"))
            .and_then(Value::as_object)
            .ok_or_else(|| {
                malformed(
                    format!("mesh {m} primitive {p}"),
                    "it does not exist or has no attributes",
                )
            })?;
        // The sets the importer reads, in its order: the paired JOINTS_n/WEIGHTS_n with n < 2.
        let sets: Vec<u32> = (0..2)
            .filter(|n| {
                attributes.contains_key(&format!("JOINTS_{n}")) && attributes.contains_key(&format!("WEIGHTS_{n}"))
            })
            .collect();
        let influences = change.influences;
        let attribute_error = |attribute: String, problem| SaveError::Attribute {
            mesh: m,
            primitive: p,
            attribute,
            problem,
        };
        if sets.len() != influences.sets || influences.sets == 0 {
            return Err(attribute_error(
                "JOINTS/WEIGHTS".into(),
                AttributeProblem::Sets {
                    file: sets.len(),
                    repaired: influences.sets,
                },
            ));
        }
        let vertices = influences.joints.len() / influences.sets;
        if influences.weights.len() != influences.joints.len() || vertices * influences.sets != influences.joints.len()
        {
            return Err(SaveError::RigMismatch(format!(
                "mesh {m} primitive {p}: {} joint and {} weight groups for {} sets",
                influences.joints.len(),
                influences.weights.len(),
                influences.sets
            )));
        }
        let layouts = |kind: &str| -> Result<Vec<(usize, Layout)>, SaveError> {
            sets.iter()
                .map(|n| {
                    let name = format!("{kind}_{n}");
                    self.attribute_layout(m, p, &name, vertices, kind == "WEIGHTS")
                        .map_err(|problem| attribute_error(name, problem))
                })
                .collect()
        };
        let joint_layouts = layouts("JOINTS")?;
        let weight_layouts = layouts("WEIGHTS")?;

        let mut encoded: Vec<(String, Encoded)> = Vec::new();
        if change.joints_changed {
            for (slot, (n, &(accessor, layout))) in sets.iter().zip(&joint_layouts).enumerate() {
                let values = (0..vertices).map(|v| influences.joints[v * influences.sets + slot]);
                let joints = encode_joints(values, layout, accessor)
                    .map_err(|problem| attribute_error(format!("JOINTS_{n}"), problem))?;
                encoded.push((format!("JOINTS_{n}"), joints));
            }
        }
        if change.weights_changed {
            let weights = encode_weights(&influences.weights, influences.sets, &weight_layouts);
            encoded.extend(sets.iter().map(|n| format!("WEIGHTS_{n}")).zip(weights));
        }
        for (semantic, data) in encoded {
            self.point_attribute_at(m, p, &semantic, data)?;
        }
        Ok(())
    }

    /// The accessor of attribute `name` of mesh `m` primitive `p`, checked to be a VEC4 of
    /// `vertices` elements in a type glTF allows for joints (or weights).
    fn attribute_layout(
        &self,
        m: usize,
        p: usize,
        name: &str,
        vertices: usize,
        weights: bool,
    ) -> Result<(usize, Layout), AttributeProblem> {
        let value = self
            .json
            .pointer(&format!("/meshes/{m}/primitives/{p}/attributes/{name}"))
            .ok_or(AttributeProblem::Missing)?;
        let raw = value.as_u64().unwrap_or(u64::MAX);
        let accessor = as_index(value)
            .filter(|&a| a < array_len(&self.json, "accessors"))
            .ok_or(AttributeProblem::NoAccessor(raw))?;
        let object = &self.json["accessors"][accessor];
        let component_type = object.get("componentType").and_then(Value::as_u64).unwrap_or(0);
        let normalized = object.get("normalized").and_then(Value::as_bool).unwrap_or(false);
        let kind = object.get("type").and_then(Value::as_str).unwrap_or("?");
        let allowed = if weights {
            matches!(
                (component_type, normalized),
                (FLOAT, false) | (UNSIGNED_BYTE, true) | (UNSIGNED_SHORT, true)
            )
        } else {
            matches!((component_type, normalized), (UNSIGNED_BYTE | UNSIGNED_SHORT, false))
        };
        if kind != "VEC4" || !allowed {
            return Err(AttributeProblem::Layout {
                accessor,
                found: format!(
                    "a {kind} of component type {component_type}{}",
                    if normalized { " (normalized)" } else { "" }
                ),
            });
        }
        let count = object.get("count").and_then(Value::as_u64).unwrap_or(u64::MAX);
        if count != vertices as u64 {
            return Err(AttributeProblem::Count {
                accessor,
                count,
                expected: vertices,
            });
        }
        Ok((
            accessor,
            Layout {
                component_type,
                normalized,
            },
        ))
    }

    /// Points attribute `semantic` of mesh `m` primitive `p` at `data` in a new buffer view: its
    /// accessor is rewritten when nothing else reads it, else a copy is added for this primitive.
    /// A Draco primitive stops taking the attribute from its stream.
    fn point_attribute_at(&mut self, m: usize, p: usize, semantic: &str, data: Encoded) -> Result<(), SaveError> {
        let attribute_pointer = format!("/meshes/{m}/primitives/{p}/attributes/{semantic}");
        let accessor = self
            .json
            .pointer(&attribute_pointer)
            .and_then(as_index)
            .ok_or_else(|| malformed(&attribute_pointer, "not an accessor index"))?;
        let shared = accessor_uses(&self.json, accessor) > 1;
        let view = self.add_view(&data.bytes, Some(ARRAY_BUFFER))?;

        let accessors = array_mut(&mut self.json, "accessors")?;
        let mut object = accessors[accessor]
            .as_object()
            .cloned()
            .ok_or_else(|| malformed(format!("accessor {accessor}"), "not an object"))?;
        let old_view = object.get("bufferView").and_then(as_index);
        object.remove("byteOffset");
        object.remove("sparse");
        object.insert("bufferView".into(), view.into());
        let integers = object.get("componentType").and_then(Value::as_u64) != Some(FLOAT);
        let bound = |values: [f64; 4]| -> Value {
            Value::Array(
                values
                    .iter()
                    // No elements (an empty primitive) leaves the bounds at ±∞: written as 0.
                    .map(|&v| {
                        if !v.is_finite() {
                            json!(0)
                        } else if integers {
                            json!(v as u64)
                        } else {
                            json!(v)
                        }
                    })
                    .collect(),
            )
        };
        if object.contains_key("min") {
            object.insert("min".into(), bound(data.min));
        }
        if object.contains_key("max") {
            object.insert("max".into(), bound(data.max));
        }
        let target = if shared {
            accessors.push(Value::Object(object));
            accessors.len() - 1
        } else {
            accessors[accessor] = Value::Object(object);
            accessor
        };
        if let Some(slot) = self.json.pointer_mut(&attribute_pointer) {
            *slot = target.into();
        }
        let note = if shared {
            format!(
                "mesh {m} primitive {p}: {semantic} written to a new accessor {target} (accessor {accessor} is shared)"
            )
        } else {
            format!("mesh {m} primitive {p}: {semantic} rewritten (accessor {accessor})")
        };
        self.notes.push(note);
        let compressed_view = old_view.filter(|v| {
            self.json
                .pointer(&format!("/bufferViews/{v}/extensions/{MESHOPT}"))
                .is_some()
        });
        if let Some(view) = compressed_view {
            self.notes.push(format!(
                "mesh {m} primitive {p}: {semantic} is now stored uncompressed (it was in {MESHOPT} buffer view {view})"
            ));
        }

        let draco = format!("/meshes/{m}/primitives/{p}/extensions/{DRACO}/attributes");
        if let Some(streamed) = self.json.pointer_mut(&draco).and_then(Value::as_object_mut)
            && streamed.remove(semantic).is_some()
        {
            self.notes.push(format!(
                "mesh {m} primitive {p}: {semantic} is now stored uncompressed; the primitive's {DRACO} stream no longer supplies it"
            ));
        }
        Ok(())
    }

    /// Drops Draco and meshopt, and the extensions of removed parts, from
    /// `extensionsUsed`/`extensionsRequired` when nothing in the document uses them any more (a
    /// note says so). Only those: an extension such as `KHR_mesh_quantization` is used without
    /// naming itself in any `extensions` object.
    fn keep_extension_lists_true(&mut self) {
        let views = self.json.get("bufferViews").and_then(Value::as_array);
        let meshopt_used =
            views.is_some_and(|v| v.iter().any(|v| v.pointer(&format!("/extensions/{MESHOPT}")).is_some()));
        let draco_used = self
            .json
            .get("meshes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|m| m.get("primitives").and_then(Value::as_array).into_iter().flatten())
            .any(|p| p.pointer(&format!("/extensions/{DRACO}")).is_some());
        let mut still_named = BTreeSet::new();
        if !self.removed_extensions.is_empty() {
            extension_names(&self.json, &mut still_named);
        }
        let removed: Vec<(String, bool)> = self
            .removed_extensions
            .iter()
            .filter(|name| name.as_str() != MESHOPT && name.as_str() != DRACO)
            .map(|name| (name.clone(), still_named.contains(name)))
            .collect();
        let compression = [(MESHOPT.to_owned(), meshopt_used), (DRACO.to_owned(), draco_used)];
        for (name, used) in compression.into_iter().chain(removed) {
            if used {
                continue;
            }
            let mut dropped = false;
            for list in ["extensionsUsed", "extensionsRequired"] {
                if let Some(names) = self.json.get_mut(list).and_then(Value::as_array_mut) {
                    let before = names.len();
                    names.retain(|n| n.as_str() != Some(name.as_str()));
                    dropped |= names.len() != before;
                }
            }
            if let Some(object) = self.json.as_object_mut() {
                for list in ["extensionsUsed", "extensionsRequired"] {
                    if object.get(list).and_then(Value::as_array).is_some_and(Vec::is_empty) {
                        object.remove(list);
                    }
                }
            }
            if dropped {
                self.notes.push(format!(
                    "{name} is no longer used and was removed from the extension lists"
                ));
            }
        }
    }
}

/// Adds the keys of every `extensions` object in `value` to `names`.
fn extension_names(value: &Value, names: &mut BTreeSet<String>) {
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                if key == "extensions"
                    && let Some(extensions) = member.as_object()
                {
                    names.extend(extensions.keys().cloned());
                }
                extension_names(member, names);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| extension_names(item, names)),
        _ => {}
    }
}
