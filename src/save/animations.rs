//! The JSON side of writing clips: the file's `animations` array rebuilt from a plan that keeps
//! (and may rename) the file's own animations as read and encodes the rig's clips anew.
//!
//! Node indices: the importer sorts nodes parents-first, so rig node `i` is glTF node
//! `rig.facts.gltf_node[i]`, not `i`; channels are written through that map, after checking that
//! the rig's nodes are the file's (same count, same names).
//!
//! Layout of an encoded clip: one new buffer view per clip holding its key times and values as
//! tightly packed little-endian floats, each accessor 4-byte aligned; channels with the same key
//! times share one time accessor, as exporters write them.

use super::SaveError;
use super::document::{Edited, array_len, as_index, malformed};
use crate::rig::{Interpolation, MorphChannel, POINTER_EXTENSION, Property, PropertyTarget, PropertyTrack, Rig};
use glam::Vec4;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

const FLOAT: u64 = 5126;
/// How far a keyed rotation's length may be from 1: glTF asks for unit quaternions, and the
/// Khronos validator reports lengths off by more than this (about the precision of 8-bit
/// normalized components) as errors.
const UNIT_LENGTH_TOLERANCE: f32 = 0.00769;

/// One animation of the file being written, in the order the file will hold them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedAnimation {
    /// The file's own animation `index`, its JSON kept as read; `name` renames it.
    Original { index: usize, name: Option<String> },
    /// `rig.clips[clip]` encoded anew, with the morph weight channels of `rig.morphs.channels`
    /// whose `clip` is `clip`.
    Clip { clip: usize },
}

/// Which channel of a clip a [`ClipProblem`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelRef {
    /// `clip.channels[k]`.
    Node(usize),
    /// The `k`th of the clip's morph weight channels, in `rig.morphs.channels` order.
    Weights(usize),
    /// The `k`th of the clip's property tracks, in `rig.facts.property_tracks` order.
    Property(usize),
}

impl std::fmt::Display for ChannelRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChannelRef::Node(k) => write!(f, "channel {k}"),
            ChannelRef::Weights(k) => write!(f, "morph weights channel {k}"),
            ChannelRef::Property(k) => write!(f, "property channel {k}"),
        }
    }
}

/// Why a clip cannot be written as a valid glTF animation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClipProblem {
    #[error("it has no channels (a glTF animation needs at least one)")]
    NoChannels,
    #[error("{channel} has no keys")]
    NoKeys { channel: ChannelRef },
    #[error("{channel}: key {key}'s time {time} is not a finite time at or after 0")]
    BadTime { channel: ChannelRef, key: usize, time: f32 },
    #[error("{channel}: key times must increase, but key {key} is at {time} after {previous}")]
    TimesNotIncreasing {
        channel: ChannelRef,
        key: usize,
        time: f32,
        previous: f32,
    },
    #[error("{channel} has {values} values for {keys} keys, not {expected}")]
    ValueCount {
        channel: ChannelRef,
        keys: usize,
        values: usize,
        expected: usize,
    },
    #[error("{channel}: value {index} is not finite")]
    NotFinite { channel: ChannelRef, index: usize },
    #[error("{channel}: the rotation at key {key} has length {length}, not 1")]
    RotationNotUnit {
        channel: ChannelRef,
        key: usize,
        length: f32,
    },
    #[error("{channel} animates rig node {node}, which the rig does not have")]
    NoNode { channel: ChannelRef, node: usize },
    #[error("{first} and {second} both animate the {path} of node {node}")]
    SameTarget {
        first: ChannelRef,
        second: ChannelRef,
        node: usize,
        path: &'static str,
    },
    #[error("{channel} drives {channel_targets} morph weights of node {node}, whose mesh has {mesh_targets} targets")]
    MorphTargets {
        channel: ChannelRef,
        node: usize,
        channel_targets: usize,
        mesh_targets: usize,
    },
}

impl Edited {
    /// Makes the document's `animations` exactly `plan`, in order: originals copied as read
    /// (renamed where asked), clips of `rig` (the rig loaded from this document, its clips
    /// edited or carried) encoded into a new buffer view each. An animation the plan leaves out
    /// is dropped; its accessors stay in the file, unused.
    pub fn set_animations(&mut self, rig: &Rig, plan: &[PlannedAnimation]) -> Result<(), SaveError> {
        let originals: Vec<Value> = match self.json().get("animations") {
            None => Vec::new(),
            Some(Value::Array(items)) => items.clone(),
            Some(_) => return Err(malformed("animations", "not an array")),
        };
        let mut animations = Vec::with_capacity(plan.len());
        let mut origins = Vec::with_capacity(plan.len());
        let mut kept = vec![false; originals.len()];
        for (at, planned) in plan.iter().enumerate() {
            match planned {
                PlannedAnimation::Original { index, name } => {
                    let mut animation = originals.get(*index).cloned().ok_or(SaveError::NoAnimation {
                        index: *index,
                        count: originals.len(),
                    })?;
                    if let Some(name) = name {
                        animation
                            .as_object_mut()
                            .ok_or_else(|| malformed(format!("animation {index}"), "not an object"))?
                            .insert("name".into(), name.clone().into());
                        self.note(format!(
                            "animation {at}: the file's animation {index}, renamed '{name}'"
                        ));
                    } else if *index != at {
                        self.note(format!("animation {at}: the file's animation {index}"));
                    }
                    kept[*index] = true;
                    animations.push(animation);
                    origins.push(Some(*index));
                }
                PlannedAnimation::Clip { clip } => {
                    let animation = self.encode_clip(rig, *clip)?;
                    self.note(format!(
                        "animation {at}: clip '{}' written anew ({} channels)",
                        rig.clips[*clip].name,
                        animation["channels"].as_array().map_or(0, Vec::len)
                    ));
                    animations.push(animation);
                    origins.push(None);
                }
            }
        }
        for (index, original) in originals.iter().enumerate().filter(|(i, _)| !kept[*i]) {
            let name = original.get("name").and_then(Value::as_str).unwrap_or("unnamed");
            self.note(format!("the file's animation {index} ('{name}') left out"));
            self.removed(original);
        }
        let document = self
            .json_mut()
            .as_object_mut()
            .ok_or_else(|| malformed("document", "the JSON is not an object"))?;
        // glTF allows no empty `animations` array: no animations is no member.
        if animations.is_empty() {
            document.remove("animations");
        } else {
            document.insert("animations".into(), Value::Array(animations));
        }
        self.set_origins("animations", origins);
        Ok(())
    }

    /// Rig clip `clip` as a glTF animation, its data in a new buffer view.
    fn encode_clip(&mut self, rig: &Rig, clip: usize) -> Result<Value, SaveError> {
        let nodes = NodeMap::new(rig, self.json())?;
        let json = self.json();
        let encoded = encode_clip(
            rig,
            clip,
            |node| nodes.gltf(node),
            |node| morph_target_count(json, node),
        )?;
        let view = self.add_view(&encoded.bytes, None)?;
        let accessors = super::document::array_mut(self.json_mut(), "accessors")?;
        let first = accessors.len();
        let (animation, new_accessors) = encoded.placed(view, first);
        accessors.extend(new_accessors);
        if encoded_pointers(&animation) {
            let used = super::document::array_mut(self.json_mut(), "extensionsUsed")?;
            if !used.iter().any(|name| name.as_str() == Some(POINTER_EXTENSION)) {
                used.push(POINTER_EXTENSION.into());
            }
        }
        Ok(animation)
    }
}

/// A clip encoded as a glTF animation whose data is not yet in a buffer: the bytes of its one
/// buffer view, its accessors (without `bufferView`, offsets within those bytes), and channels
/// and samplers whose accessor indices count from the clip's first accessor.
pub(super) struct EncodedClip {
    name: String,
    pub(super) bytes: Vec<u8>,
    accessors: Vec<Value>,
    channels: Vec<Value>,
    samplers: Vec<Value>,
}

impl EncodedClip {
    /// The animation and its accessors once the bytes are buffer view `view` and the accessors
    /// start at index `first` of the document's.
    pub(super) fn placed(self, view: usize, first: usize) -> (Value, Vec<Value>) {
        let accessors = (self.accessors.into_iter())
            .map(|mut accessor| {
                accessor["bufferView"] = view.into();
                accessor
            })
            .collect();
        let mut samplers = self.samplers;
        for sampler in &mut samplers {
            for key in ["input", "output"] {
                let local = sampler[key].as_u64().unwrap_or(0) as usize;
                sampler[key] = (first + local).into();
            }
        }
        let mut animation = Map::new();
        animation.insert("name".into(), self.name.into());
        animation.insert("channels".into(), self.channels.into());
        animation.insert("samplers".into(), samplers.into());
        (Value::Object(animation), accessors)
    }
}

/// Rig clip `clip` (with its morph weight channels) checked and encoded for a glTF document in
/// which rig node `n` is glTF node `gltf_node(n)` and glTF node `g`'s mesh has
/// `mesh_targets(g)` morph targets: both the writer that edits a file and the one that writes a
/// rig anew go through here.
pub(super) fn encode_clip(
    rig: &Rig,
    clip: usize,
    gltf_node: impl Fn(usize) -> Option<usize>,
    mesh_targets: impl Fn(usize) -> Result<usize, SaveError>,
) -> Result<EncodedClip, SaveError> {
    let source = rig.clips.get(clip).ok_or(SaveError::NoClip {
        clip,
        count: rig.clips.len(),
    })?;
    let problem = |problem: ClipProblem| SaveError::Clip {
        clip,
        name: source.name.clone(),
        problem,
    };
    let morphs: Vec<&MorphChannel> = rig.morphs.channels.iter().filter(|m| m.clip == clip).collect();
    let properties: Vec<&PropertyTrack> = (rig.facts.property_tracks.iter()).filter(|t| t.clip == clip).collect();
    if source.channels.is_empty() && morphs.is_empty() && properties.is_empty() {
        return Err(problem(ClipProblem::NoChannels));
    }
    let mut data = ClipData::default();
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    let mut targets: HashMap<(usize, &'static str), ChannelRef> = HashMap::new();
    let mut add = |channel: ChannelRef,
                   node: usize,
                   path: &'static str,
                   interpolation: Interpolation,
                   input: usize,
                   output: usize|
     -> Result<(), SaveError> {
        let gltf_node = gltf_node(node).ok_or(problem(ClipProblem::NoNode { channel, node }))?;
        if let Some(&first) = targets.get(&(node, path)) {
            return Err(problem(ClipProblem::SameTarget {
                first,
                second: channel,
                node,
                path,
            }));
        }
        targets.insert((node, path), channel);
        channels.push(json!({
            "sampler": samplers.len(),
            "target": { "node": gltf_node, "path": path },
        }));
        samplers.push(json!({
            "input": input,
            "output": output,
            "interpolation": interpolation_name(interpolation),
        }));
        Ok(())
    };
    for (k, channel) in source.channels.iter().enumerate() {
        let id = ChannelRef::Node(k);
        let per_key = keys_per_time(channel.interpolation);
        check_times(&channel.times, id).map_err(problem)?;
        check_count(
            channel.times.len() * per_key,
            channel.values.len(),
            channel.times.len(),
            id,
        )
        .map_err(problem)?;
        let components = match channel.property {
            Property::Rotation => 4,
            Property::Translation | Property::Scale => 3,
        };
        let values: Vec<f32> = channel
            .values
            .iter()
            .flat_map(|v| Vec4::to_array(v).into_iter().take(components))
            .collect();
        check_finite(&values, components, id).map_err(problem)?;
        if channel.property == Property::Rotation {
            check_unit(&channel.values, per_key, id).map_err(problem)?;
        }
        let input = data.times(&channel.times);
        let output = data.floats(&values, components);
        let path = match channel.property {
            Property::Translation => "translation",
            Property::Rotation => "rotation",
            Property::Scale => "scale",
        };
        add(id, channel.node, path, channel.interpolation, input, output)?;
    }
    for (k, channel) in morphs.iter().enumerate() {
        let id = ChannelRef::Weights(k);
        let per_key = keys_per_time(channel.interpolation);
        check_times(&channel.times, id).map_err(problem)?;
        let expected = channel.times.len() * per_key * channel.targets;
        check_count(expected, channel.values.len(), channel.times.len(), id).map_err(problem)?;
        check_finite(&channel.values, 1, id).map_err(problem)?;
        let node = gltf_node(channel.node).ok_or(problem(ClipProblem::NoNode {
            channel: id,
            node: channel.node,
        }))?;
        let mesh_targets = mesh_targets(node)?;
        if mesh_targets != channel.targets || mesh_targets == 0 {
            return Err(problem(ClipProblem::MorphTargets {
                channel: id,
                node: channel.node,
                channel_targets: channel.targets,
                mesh_targets,
            }));
        }
        let input = data.times(&channel.times);
        let output = data.floats(&channel.values, 1);
        add(id, channel.node, "weights", channel.interpolation, input, output)?;
    }
    encode_property_tracks(&properties, &gltf_node, &mut data, &mut channels, &mut samplers).map_err(problem)?;
    Ok(EncodedClip {
        name: source.name.clone(),
        bytes: data.bytes,
        accessors: data.accessors,
        channels,
        samplers,
    })
}

/// Appends `properties` to an animation being encoded as `KHR_animation_pointer` channels (a
/// node named by the glTF index `gltf_node` gives), their keys in `data`.
fn encode_property_tracks(
    properties: &[&PropertyTrack],
    gltf_node: &impl Fn(usize) -> Option<usize>,
    data: &mut ClipData,
    channels: &mut Vec<Value>,
    samplers: &mut Vec<Value>,
) -> Result<(), ClipProblem> {
    for (k, track) in properties.iter().enumerate() {
        let id = ChannelRef::Property(k);
        let per_key = keys_per_time(track.interpolation);
        check_times(&track.times, id)?;
        check_count(track.times.len() * per_key, track.values.len(), track.times.len(), id)?;
        let components = track.target.components();
        let values: Vec<f32> = (track.values.iter())
            .flat_map(|v| v.to_array().into_iter().take(components))
            .collect();
        check_finite(&values, components, id)?;
        // A node is named by its glTF index; the pointer keeps an index `gltf_node` does not map.
        let target = match track.target {
            PropertyTarget::NodeVisible { node } => PropertyTarget::NodeVisible {
                node: gltf_node(node).ok_or(ClipProblem::NoNode { channel: id, node })?,
            },
            target => target,
        };
        let (input, output) = (data.times(&track.times), data.floats(&values, components));
        let pointer = json!({ POINTER_EXTENSION: { "pointer": target.pointer(&[]) } });
        channels.push(json!({
            "sampler": samplers.len(),
            "target": { "path": "pointer", "extensions": pointer },
        }));
        samplers.push(json!({
            "input": input,
            "output": output,
            "interpolation": interpolation_name(track.interpolation),
        }));
    }
    Ok(())
}

/// Whether an encoded animation has `KHR_animation_pointer` channels.
pub(super) fn encoded_pointers(animation: &Value) -> bool {
    (animation
        .get("channels")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .any(|c| c.pointer("/target/path").and_then(Value::as_str) == Some("pointer"))
}

/// The glTF index of each rig node, checked against the document's nodes.
struct NodeMap<'a> {
    gltf: &'a [usize],
}

impl<'a> NodeMap<'a> {
    /// The map the importer kept, once every rig node is found in the document under its name
    /// (the importer names an unnamed node `node N`, N its glTF index): a rig loaded from
    /// another file is refused.
    fn new(rig: &'a Rig, json: &Value) -> Result<NodeMap<'a>, SaveError> {
        let file_nodes = array_len(json, "nodes");
        let gltf = &rig.facts.gltf_node;
        if gltf.len() != rig.nodes.len() || rig.nodes.len() != file_nodes {
            return Err(SaveError::RigMismatch(format!(
                "the rig has {} nodes ({} with a glTF index), the file {file_nodes}",
                rig.nodes.len(),
                gltf.len()
            )));
        }
        for (node, &index) in rig.nodes.iter().zip(gltf) {
            let file_name = json.pointer(&format!("/nodes/{index}")).map(|n| {
                n.get("name")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("node {index}"), str::to_owned)
            });
            if file_name.as_deref() != Some(node.name.as_str()) {
                return Err(SaveError::RigMismatch(format!(
                    "rig node '{}' is not the file's node {index} ({})",
                    node.name,
                    file_name.map_or_else(|| "no such node".to_owned(), |n| format!("'{n}'"))
                )));
            }
        }
        Ok(NodeMap { gltf })
    }

    fn gltf(&self, node: usize) -> Option<usize> {
        self.gltf.get(node).copied()
    }
}

/// The morph targets of the mesh on glTF node `node` (the most of any of its primitives; 0 when
/// it has no mesh).
fn morph_target_count(json: &Value, node: usize) -> Result<usize, SaveError> {
    let Some(mesh) = json.pointer(&format!("/nodes/{node}/mesh")) else {
        return Ok(0);
    };
    let mesh = as_index(mesh)
        .filter(|&m| m < array_len(json, "meshes"))
        .ok_or_else(|| malformed(format!("node {node}"), "its mesh is not a mesh index"))?;
    let primitives = json
        .pointer(&format!("/meshes/{mesh}/primitives"))
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(format!("mesh {mesh}"), "it has no primitives array"))?;
    Ok(primitives
        .iter()
        .map(|p| p.get("targets").and_then(Value::as_array).map_or(0, Vec::len))
        .max()
        .unwrap_or(0))
}

fn interpolation_name(interpolation: Interpolation) -> &'static str {
    match interpolation {
        Interpolation::Step => "STEP",
        Interpolation::Linear => "LINEAR",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

/// Values per key time: cubic splines store in-tangent, value and out-tangent.
fn keys_per_time(interpolation: Interpolation) -> usize {
    if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    }
}

/// glTF key times: at least one, finite, not negative, strictly increasing.
fn check_times(times: &[f32], channel: ChannelRef) -> Result<(), ClipProblem> {
    if times.is_empty() {
        return Err(ClipProblem::NoKeys { channel });
    }
    if let Some((key, &time)) = times.iter().enumerate().find(|(_, t)| !t.is_finite() || **t < 0.0) {
        return Err(ClipProblem::BadTime { channel, key, time });
    }
    if let Some(k) = times.windows(2).position(|w| w[1] <= w[0]) {
        return Err(ClipProblem::TimesNotIncreasing {
            channel,
            key: k + 1,
            time: times[k + 1],
            previous: times[k],
        });
    }
    Ok(())
}

fn check_count(expected: usize, values: usize, keys: usize, channel: ChannelRef) -> Result<(), ClipProblem> {
    if values != expected {
        return Err(ClipProblem::ValueCount {
            channel,
            keys,
            values,
            expected,
        });
    }
    Ok(())
}

fn check_finite(values: &[f32], components: usize, channel: ChannelRef) -> Result<(), ClipProblem> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(ClipProblem::NotFinite {
            channel,
            index: i / components,
        }),
        None => Ok(()),
    }
}

/// Keyed rotations (not cubic-spline tangents, which have any length) of unit length.
fn check_unit(values: &[Vec4], per_key: usize, channel: ChannelRef) -> Result<(), ClipProblem> {
    let keyed = values.iter().skip(per_key / 2).step_by(per_key);
    match keyed
        .enumerate()
        .find(|(_, q)| (q.length() - 1.0).abs() > UNIT_LENGTH_TOLERANCE)
    {
        Some((key, q)) => Err(ClipProblem::RotationNotUnit {
            channel,
            key,
            length: q.length(),
        }),
        None => Ok(()),
    }
}

/// The bytes and accessors of one clip; accessor `bufferView`s are set once the bytes are placed,
/// and sampler indices are local until then.
#[derive(Default)]
struct ClipData {
    bytes: Vec<u8>,
    accessors: Vec<Value>,
    /// Time accessors by the bits of their times.
    times: HashMap<Vec<u32>, usize>,
}

impl ClipData {
    /// The accessor of `times`, shared by every channel keyed at the same times.
    fn times(&mut self, times: &[f32]) -> usize {
        let bits: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        if let Some(&accessor) = self.times.get(&bits) {
            return accessor;
        }
        // Times are checked increasing, so the first and last are the bounds glTF requires.
        let (min, max) = (times[0], times[times.len() - 1]);
        let accessor = self.floats(times, 1);
        self.accessors[accessor]["min"] = json!([f64::from(min)]);
        self.accessors[accessor]["max"] = json!([f64::from(max)]);
        self.times.insert(bits, accessor);
        accessor
    }

    fn floats(&mut self, values: &[f32], components: usize) -> usize {
        let offset = self.bytes.len();
        self.bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
        let kind = match components {
            1 => "SCALAR",
            2 => "VEC2",
            3 => "VEC3",
            _ => "VEC4",
        };
        let mut accessor = json!({
            "componentType": FLOAT,
            "count": values.len() / components,
            "type": kind,
        });
        if offset > 0 {
            accessor["byteOffset"] = offset.into();
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }
}

#[cfg(test)]
mod tests;
