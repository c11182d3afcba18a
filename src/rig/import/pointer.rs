//! `KHR_animation_pointer`: animation channels whose target is a JSON pointer into the document
//! (`path: "pointer"`). Pointers to a node's translation, rotation, scale or morph weights are
//! the plain channels they stand for and are rewritten as such before the document is parsed
//! (the `gltf` crate knows no `pointer` path), so they play as any channel does. Pointers to
//! material factors, texture transforms, `KHR_node_visibility` and lights are taken out of the
//! document and kept as property channels, read once the buffers are ([`super::property`]).
//! Every other channel with a pointer is taken out and listed: a pointer that does not resolve,
//! or whose sampler's output type does not match its target, as an error; a target that
//! resolves but is not played (cameras) as such.

use crate::rig::{Interpolation, LightProperty, MaterialFactor, MaterialTexture, PropertyTarget, TransformPart};
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

/// A pointer channel to a property that plays, as the document gives it; its keys are read
/// once the buffers are.
#[derive(Debug, Clone)]
pub(super) struct PropertyChannel {
    /// The glTF animation (after animations left empty are taken out: the clip's index) and
    /// the channel's index as written.
    pub animation: usize,
    pub channel: usize,
    pub pointer: String,
    /// The target, with a node named by its glTF index.
    pub target: PropertyTarget,
    pub interpolation: Interpolation,
    /// Accessors of the sampler's key times and values.
    pub input: usize,
    pub output: usize,
}

/// What the document's pointer channels became.
#[derive(Debug, Default)]
pub(super) struct Pointers {
    /// Channels rewritten as node channels, and so played.
    pub played: usize,
    /// Channels to properties that play, taken out of the document.
    pub properties: Vec<PropertyChannel>,
    pub findings: Vec<PointerFinding>,
}

/// Where a pointer leads: a node channel it stands for, a property that plays, or one that is
/// not played, with the accessor type its sampler's output must have.
enum Target {
    Node { node: u64, path: &'static str },
    Property(PropertyTarget),
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
                    let node = usize::try_from(node).unwrap_or(usize::MAX);
                    Ok((Target::Property(PropertyTarget::NodeVisible { node }), "SCALAR"))
                }
                _ => Err("names no animatable property of a node".into()),
            }
        }
        ["materials", m, property @ ..] => {
            if index(m).is_none() || !exists(&parts[..2]) {
                return missing(&format!("material {m}"));
            }
            let material = index(m).and_then(|m| usize::try_from(m).ok()).unwrap_or(usize::MAX);
            let target = material_target(material, property)
                .ok_or_else(|| "names no animatable property of a material".to_owned())?;
            Ok((Target::Property(target), target.accessor_type()))
        }
        ["extensions", "KHR_lights_punctual", "lights", l, property @ ..] => {
            if index(l).is_none() || !exists(&parts[..4]) {
                return missing(&format!("light {l}"));
            }
            let light = index(l).and_then(|l| usize::try_from(l).ok()).unwrap_or(usize::MAX);
            let property = match property {
                ["color"] => LightProperty::Color,
                ["intensity"] => LightProperty::Intensity,
                ["range"] => LightProperty::Range,
                ["spot", "innerConeAngle"] => LightProperty::InnerConeAngle,
                ["spot", "outerConeAngle"] => LightProperty::OuterConeAngle,
                _ => return Err("names no animatable property of a light".into()),
            };
            let target = PropertyTarget::Light { light, property };
            Ok((Target::Property(target), target.accessor_type()))
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

/// The material property `property` (the pointer's parts after `/materials/N`) names.
fn material_target(material: usize, property: &[&str]) -> Option<PropertyTarget> {
    let factor = |factor| Some(PropertyTarget::Material { material, factor });
    let (texture, transform) = match property {
        ["pbrMetallicRoughness", "baseColorFactor"] => return factor(MaterialFactor::BaseColor),
        ["pbrMetallicRoughness", "metallicFactor"] => return factor(MaterialFactor::Metallic),
        ["pbrMetallicRoughness", "roughnessFactor"] => return factor(MaterialFactor::Roughness),
        ["emissiveFactor"] => return factor(MaterialFactor::Emissive),
        ["alphaCutoff"] => return factor(MaterialFactor::AlphaCutoff),
        ["normalTexture", "scale"] => return factor(MaterialFactor::NormalScale),
        ["occlusionTexture", "strength"] => return factor(MaterialFactor::OcclusionStrength),
        ["extensions", "KHR_materials_emissive_strength", "emissiveStrength"] => {
            return factor(MaterialFactor::EmissiveStrength);
        }
        ["pbrMetallicRoughness", "baseColorTexture", transform @ ..] => (MaterialTexture::BaseColor, transform),
        ["pbrMetallicRoughness", "metallicRoughnessTexture", transform @ ..] => {
            (MaterialTexture::MetallicRoughness, transform)
        }
        ["normalTexture", transform @ ..] => (MaterialTexture::Normal, transform),
        ["occlusionTexture", transform @ ..] => (MaterialTexture::Occlusion, transform),
        ["emissiveTexture", transform @ ..] => (MaterialTexture::Emissive, transform),
        _ => return None,
    };
    let part = match transform {
        ["extensions", "KHR_texture_transform", "offset"] => TransformPart::Offset,
        ["extensions", "KHR_texture_transform", "rotation"] => TransformPart::Rotation,
        ["extensions", "KHR_texture_transform", "scale"] => TransformPart::Scale,
        _ => return None,
    };
    Some(PropertyTarget::TextureTransform {
        material,
        texture,
        part,
    })
}

/// The interpolation and key accessors (input, output) of sampler `sampler` of `animation`.
fn sampler_of(animation: &Value, sampler: Option<u64>) -> Option<(Interpolation, usize, usize)> {
    let sampler = animation.get("samplers")?.get(usize::try_from(sampler?).ok()?)?;
    let accessor = |key: &str| usize::try_from(sampler.get(key)?.as_u64()?).ok();
    let interpolation = match sampler.get("interpolation").and_then(Value::as_str) {
        None | Some("LINEAR") => Interpolation::Linear,
        Some("STEP") => Interpolation::Step,
        Some("CUBICSPLINE") => Interpolation::CubicSpline,
        Some(_) => return None,
    };
    Some((interpolation, accessor("input")?, accessor("output")?))
}

/// Rewrites the pointer channels of `document` that stand for node channels as those, keeps
/// those to played properties apart, and takes the others out (an animation left with neither
/// node nor property channels goes too), listing them.
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
                Ok((Target::Property(target), _)) => {
                    match sampler_of(animation, channel.get("sampler").and_then(Value::as_u64)) {
                        Some((interpolation, input, output)) => result.properties.push(PropertyChannel {
                            animation: a,
                            channel: c,
                            pointer: pointer.to_owned(),
                            target,
                            interpolation,
                            input,
                            output,
                        }),
                        None => finding("its sampler is missing or malformed".into(), true),
                    }
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
    apply_edits(document, &edits, &mut result.properties);
    result
}

/// Replaces (`Some`) or takes out (`None`) the channels `edits` name, then the animations left
/// with neither channels nor `properties`, renumbering the animations `properties` name.
fn apply_edits(document: &mut Value, edits: &[(usize, usize, Option<Value>)], properties: &mut [PropertyChannel]) {
    let Some(animations) = document.get_mut("animations").and_then(Value::as_array_mut) else {
        return;
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
    let mut kept = Vec::with_capacity(animations.len());
    for (a, animation) in animations.iter().enumerate() {
        let has_channels = (animation.get("channels").and_then(Value::as_array)).is_none_or(|c| !c.is_empty());
        kept.push(has_channels || properties.iter().any(|p| p.animation == a));
    }
    let mut index = 0;
    animations.retain(|_| {
        index += 1;
        kept[index - 1]
    });
    for property in properties {
        property.animation = kept[..property.animation].iter().filter(|&&k| k).count();
    }
}
