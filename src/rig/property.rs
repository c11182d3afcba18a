//! Animated properties other than node transforms and morph weights: the
//! `KHR_animation_pointer` channels that target material factors, texture transforms, a node's
//! visibility (`KHR_node_visibility`) or a light (`KHR_lights_punctual`).

use super::Interpolation;
use glam::Vec4;

/// A material factor a track animates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaterialFactor {
    BaseColor,
    Emissive,
    Metallic,
    Roughness,
    AlphaCutoff,
    NormalScale,
    OcclusionStrength,
    /// `KHR_materials_emissive_strength`.
    EmissiveStrength,
}

/// A material's texture slot, whose KHR_texture_transform a track animates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaterialTexture {
    BaseColor,
    MetallicRoughness,
    Normal,
    Occlusion,
    Emissive,
}

/// One part of a KHR_texture_transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransformPart {
    Offset,
    Rotation,
    Scale,
}

/// A KHR_lights_punctual property a track animates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LightProperty {
    Color,
    Intensity,
    Range,
    InnerConeAngle,
    OuterConeAngle,
}

/// What a property track animates. Indices are the rig's (materials and lights as the file
/// numbers them, nodes as the rig does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropertyTarget {
    Material {
        material: usize,
        factor: MaterialFactor,
    },
    TextureTransform {
        material: usize,
        texture: MaterialTexture,
        part: TransformPart,
    },
    /// `KHR_node_visibility`'s `visible`: values above 0.5 show the node, below hide it and
    /// every node under it.
    NodeVisible {
        node: usize,
    },
    Light {
        light: usize,
        property: LightProperty,
    },
}

impl PropertyTarget {
    /// How many components its values have (1 for a scalar, up to 4).
    pub fn components(&self) -> usize {
        match self {
            PropertyTarget::Material { factor, .. } => match factor {
                MaterialFactor::BaseColor => 4,
                MaterialFactor::Emissive => 3,
                _ => 1,
            },
            PropertyTarget::TextureTransform { part, .. } => match part {
                TransformPart::Rotation => 1,
                TransformPart::Offset | TransformPart::Scale => 2,
            },
            PropertyTarget::NodeVisible { .. } => 1,
            PropertyTarget::Light { property, .. } => match property {
                LightProperty::Color => 3,
                _ => 1,
            },
        }
    }

    /// The glTF accessor type its sampler's output has.
    pub fn accessor_type(&self) -> &'static str {
        match self.components() {
            1 => "SCALAR",
            2 => "VEC2",
            3 => "VEC3",
            _ => "VEC4",
        }
    }

    /// The JSON pointer naming it in the file; `gltf_node` gives each rig node's glTF index (a
    /// node it does not map is written as it is).
    pub fn pointer(&self, gltf_node: &[usize]) -> String {
        match *self {
            PropertyTarget::Material { material, factor } => {
                let property = match factor {
                    MaterialFactor::BaseColor => "pbrMetallicRoughness/baseColorFactor",
                    MaterialFactor::Emissive => "emissiveFactor",
                    MaterialFactor::Metallic => "pbrMetallicRoughness/metallicFactor",
                    MaterialFactor::Roughness => "pbrMetallicRoughness/roughnessFactor",
                    MaterialFactor::AlphaCutoff => "alphaCutoff",
                    MaterialFactor::NormalScale => "normalTexture/scale",
                    MaterialFactor::OcclusionStrength => "occlusionTexture/strength",
                    MaterialFactor::EmissiveStrength => "extensions/KHR_materials_emissive_strength/emissiveStrength",
                };
                format!("/materials/{material}/{property}")
            }
            PropertyTarget::TextureTransform {
                material,
                texture,
                part,
            } => {
                let texture = match texture {
                    MaterialTexture::BaseColor => "pbrMetallicRoughness/baseColorTexture",
                    MaterialTexture::MetallicRoughness => "pbrMetallicRoughness/metallicRoughnessTexture",
                    MaterialTexture::Normal => "normalTexture",
                    MaterialTexture::Occlusion => "occlusionTexture",
                    MaterialTexture::Emissive => "emissiveTexture",
                };
                let part = match part {
                    TransformPart::Offset => "offset",
                    TransformPart::Rotation => "rotation",
                    TransformPart::Scale => "scale",
                };
                format!("/materials/{material}/{texture}/extensions/KHR_texture_transform/{part}")
            }
            PropertyTarget::NodeVisible { node } => {
                let node = gltf_node.get(node).copied().unwrap_or(node);
                format!("/nodes/{node}/extensions/KHR_node_visibility/visible")
            }
            PropertyTarget::Light { light, property } => {
                let property = match property {
                    LightProperty::Color => "color",
                    LightProperty::Intensity => "intensity",
                    LightProperty::Range => "range",
                    LightProperty::InnerConeAngle => "spot/innerConeAngle",
                    LightProperty::OuterConeAngle => "spot/outerConeAngle",
                };
                format!("/extensions/KHR_lights_punctual/lights/{light}/{property}")
            }
        }
    }
}

/// One animated property of one clip: a `KHR_animation_pointer` channel as read.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyTrack {
    /// The clip it belongs to (index into `Rig::clips`).
    pub clip: usize,
    pub target: PropertyTarget,
    pub interpolation: Interpolation,
    /// Key times in seconds, increasing.
    pub times: Vec<f32>,
    /// One value per key (its first [`PropertyTarget::components`] components used); three
    /// per key for cubic splines: in-tangent, value, out-tangent.
    pub values: Vec<Vec4>,
}

impl PropertyTrack {
    /// Its pointer, interpolation and key count, as the Curves window and `inspect --curves`
    /// name it; `gltf_node` as for [`PropertyTarget::pointer`].
    pub fn label(&self, gltf_node: &[usize]) -> String {
        let interpolation = match self.interpolation {
            Interpolation::Step => "step",
            Interpolation::Linear => "linear",
            Interpolation::CubicSpline => "cubic spline",
        };
        format!(
            "{} ({interpolation}, {} keys)",
            self.target.pointer(gltf_node),
            self.times.len()
        )
    }
}
