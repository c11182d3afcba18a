//! `KHR_animation_pointer`: animation channels whose target is a JSON pointer into the document
//! (`path: "pointer"`). Pointers to a node's translation, rotation, scale or morph weights are
//! the plain channels they stand for and are rewritten as such before the document is parsed
//! (the `gltf` crate knows no `pointer` path), so they play as any channel does. Every other
//! channel with a pointer is taken out of the document and listed: a pointer that does not
//! resolve, or whose sampler's output type does not match its target, as an error; a target that
//! resolves but is not played (material factors, texture transforms, `KHR_node_visibility`,
//! lights, cameras) as such.

use serde_json::Value;

pub const POINTER_EXTENSION: &str = "KHR_animation_pointer";

/// A pointer channel that does not play, as the file gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct PointerFinding {
    /// The glTF animation and its channel.
    pub animation: usize,
    pub channel: usize,
    /// The pointer as written (empty when there is none).
    pub pointer: String,
    /// Why it does not play.
    pub reason: String,
    /// The pointer is broken (does not resolve, or its type is not the target's), rather than
    /// valid and not played.
    pub invalid: bool,
}

/// What the document's pointer channels became.
#[derive(Debug, Default)]
pub(super) struct Pointers {
    /// Channels rewritten as node channels, and so played.
    pub played: usize,
    pub findings: Vec<PointerFinding>,
}

/// Where a pointer leads: a node channel it stands for, or a property that is not played, with
/// the accessor type its sampler's output must have.
enum Target {
    Node { node: u64, path: &'static str },
    NotPlayed(&'static str),
}

/// The accessor type a pointer's target takes, and what it is.
fn resolve(document: &Value, pointer: &str) -> Result<(Target, &'static str), String> {
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err("is not a JSON pointer (it must start with '/')".into());
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let exists = |prefix: &[&str]| {
        let path: String = prefix.iter().map(|p| format!("/{p}")).collect();
        document.pointer(&path).is_some()
    };
    let index = |s: &str| s.parse::<u64>().ok().filter(|_| !s.starts_with('+'));
    let missing = |what: &str| Err(format!("names {what}, which the document does not have"));
    match parts.as_slice() {
        ["nodes", n, property @ ..] => {
            if index(n).is_none() || !exists(&parts[..2]) {
                return missing(&format!("node {n}"));
            }
            let node = index(n).unwrap_or(0);
            match property {
                ["translation"] => Ok((
                    Target::Node {
                        node,
                        path: "translation",
                    },
                    "VEC3",
                )),
                ["rotation"] => Ok((Target::Node { node, path: "rotation" }, "VEC4")),
                ["scale"] => Ok((Target::Node { node, path: "scale" }, "VEC3")),
                ["weights"] => Ok((Target::Node { node, path: "weights" }, "SCALAR")),
                ["extensions", "KHR_node_visibility", "visible"] => {
                    Ok((Target::NotPlayed("a node's visibility (KHR_node_visibility)"), "SCALAR"))
                }
                _ => Err("names no animatable property of a node".into()),
            }
        }
        ["materials", m, property @ ..] => {
            if index(m).is_none() || !exists(&parts[..2]) {
                return missing(&format!("material {m}"));
            }
            let texture_transform = |p: &[&str]| match p {
                ["extensions", "KHR_texture_transform", "offset" | "scale"] => Some("VEC2"),
                ["extensions", "KHR_texture_transform", "rotation"] => Some("SCALAR"),
                _ => None,
            };
            let kind = match property {
                ["pbrMetallicRoughness", "baseColorFactor"] => "VEC4",
                ["pbrMetallicRoughness", "metallicFactor" | "roughnessFactor"] => "SCALAR",
                ["emissiveFactor"] => "VEC3",
                ["alphaCutoff"] => "SCALAR",
                ["normalTexture", "scale"] | ["occlusionTexture", "strength"] => "SCALAR",
                ["extensions", "KHR_materials_emissive_strength", "emissiveStrength"] => "SCALAR",
                [
                    "pbrMetallicRoughness",
                    "baseColorTexture" | "metallicRoughnessTexture",
                    transform @ ..,
                ]
                | ["normalTexture" | "occlusionTexture" | "emissiveTexture", transform @ ..] => {
                    match texture_transform(transform) {
                        Some(kind) => return Ok((Target::NotPlayed("a texture transform"), kind)),
                        None => return Err("names no animatable property of a material".into()),
                    }
                }
                _ => return Err("names no animatable property of a material".into()),
            };
            Ok((Target::NotPlayed("a material factor"), kind))
        }
        ["extensions", "KHR_lights_punctual", "lights", l, property @ ..] => {
            if index(l).is_none() || !exists(&parts[..4]) {
                return missing(&format!("light {l}"));
            }
            let kind = match property {
                ["color"] => "VEC3",
                ["intensity" | "range"] => "SCALAR",
                ["spot", "innerConeAngle" | "outerConeAngle"] => "SCALAR",
                _ => return Err("names no animatable property of a light".into()),
            };
            Ok((Target::NotPlayed("a light property (KHR_lights_punctual)"), kind))
        }
        ["cameras", c, ..] => {
            if index(c).is_none() || !exists(&parts[..2]) {
                return missing(&format!("camera {c}"));
            }
            Ok((Target::NotPlayed("a camera property"), "SCALAR"))
        }
        _ => Err("leads to no property Rigscope knows to be animatable".into()),
    }
}

/// Rewrites the pointer channels of `document` that stand for node channels as those, and
/// takes the others out (an animation left without channels goes too), listing them.
pub(super) fn resolve_pointers(document: &mut Value) -> Pointers {
    let mut result = Pointers::default();
    let Some(animations) = document.get("animations").and_then(Value::as_array) else {
        return result;
    };
    // Decisions first, against the document as written; edits after.
    let mut edits: Vec<(usize, usize, Option<Value>)> = Vec::new();
    for (a, animation) in animations.iter().enumerate() {
        let channels = animation.get("channels").and_then(Value::as_array);
        for (c, channel) in channels.into_iter().flatten().enumerate() {
            let target = channel.get("target");
            if target.and_then(|t| t.get("path")).and_then(Value::as_str) != Some("pointer") {
                continue;
            }
            let pointer = target
                .and_then(|t| t.pointer(&format!("/extensions/{POINTER_EXTENSION}/pointer")))
                .and_then(Value::as_str);
            let output_type = (channel.get("sampler").and_then(Value::as_u64))
                .and_then(|s| animation.get("samplers")?.get(usize::try_from(s).ok()?))
                .and_then(|s| s.get("output")?.as_u64())
                .and_then(|o| document.get("accessors")?.get(usize::try_from(o).ok()?))
                .and_then(|a| a.get("type")?.as_str());
            let mut finding = |reason: String, invalid: bool| {
                result.findings.push(PointerFinding {
                    animation: a,
                    channel: c,
                    pointer: pointer.unwrap_or_default().to_owned(),
                    reason,
                    invalid,
                });
            };
            let Some(pointer) = pointer else {
                finding(
                    format!("its target has path 'pointer' but no {POINTER_EXTENSION} pointer"),
                    true,
                );
                edits.push((a, c, None));
                continue;
            };
            match resolve(document, pointer) {
                Err(reason) => {
                    finding(reason, true);
                    edits.push((a, c, None));
                }
                Ok((_, kind)) if output_type.is_some_and(|t| t != kind) => {
                    let given = output_type.unwrap_or_default();
                    finding(
                        format!("its target takes {kind} values, its sampler gives {given}"),
                        true,
                    );
                    edits.push((a, c, None));
                }
                Ok((Target::NotPlayed(what), _)) => {
                    finding(format!("animates {what}, which is not played"), false);
                    edits.push((a, c, None));
                }
                Ok((Target::Node { node, path }, _)) => {
                    let mut plain = channel.clone();
                    plain["target"] = serde_json::json!({ "node": node, "path": path });
                    edits.push((a, c, Some(plain)));
                    result.played += 1;
                }
            }
        }
    }
    let Some(animations) = document.get_mut("animations").and_then(Value::as_array_mut) else {
        return result;
    };
    for (a, c, plain) in edits.iter().rev() {
        if let Some(channels) = animations[*a].get_mut("channels").and_then(Value::as_array_mut) {
            match plain {
                Some(plain) => channels[*c] = plain.clone(),
                None => {
                    channels.remove(*c);
                }
            }
        }
    }
    animations.retain(|a| {
        a.get("channels")
            .and_then(Value::as_array)
            .is_none_or(|c| !c.is_empty())
    });
    result
}
