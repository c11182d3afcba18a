//! Animated properties at one time: the clip's property tracks (`KHR_animation_pointer`
//! channels to materials, texture transforms, node visibility and lights) sampled into overrides
//! of what the rig holds. The renderer reads the overrides; the rig stays as read.
//!
//! The buffers are sized once per rig, so sampling allocates nothing.

use super::sample::{hermite, key_interval};
use crate::rig::{
    Interpolation, LightProperty, Material, MaterialFactor, MaterialTexture, PropertyTarget, PropertyTrack, Rig,
    TransformPart, UvTransform,
};
use glam::{Vec2, Vec3, Vec4};

/// A material's factors and texture transforms as its tracks set them (`None`: as the rig holds
/// them).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MaterialOverride {
    pub base_color: Option<Vec4>,
    pub emissive: Option<Vec3>,
    pub metallic: Option<f32>,
    pub roughness: Option<f32>,
    pub alpha_cutoff: Option<f32>,
    pub normal_scale: Option<f32>,
    pub occlusion_strength: Option<f32>,
    pub emissive_strength: Option<f32>,
    /// Per [`MaterialTexture`] (in its declaration order): the texture transform.
    pub uv: [Option<UvTransform>; 5],
}

impl MaterialOverride {
    /// The emitted color: the animated factor (else the rig's, which already holds the file's
    /// strength) times the animated strength (else 1).
    pub fn emissive_of(&self, material: &Material) -> Vec3 {
        self.emissive.unwrap_or(material.emissive) * self.emissive_strength.unwrap_or(1.0)
    }

    /// The texture transform of `texture` of `material`, animated or as read.
    pub fn uv_of(&self, material: &Material, texture: MaterialTexture) -> UvTransform {
        self.uv[texture as usize].unwrap_or_else(|| base_uv(material, texture))
    }
}

/// A light's properties as its tracks set them (`None`: as the file gives them).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LightOverride {
    pub color: Option<Vec3>,
    pub intensity: Option<f32>,
    pub range: Option<f32>,
    pub inner_cone_angle: Option<f32>,
    pub outer_cone_angle: Option<f32>,
}

/// The animated properties of one time of one clip.
#[derive(Debug, Clone, Default)]
pub struct PropertyState {
    /// Per material (empty when the rig has no property tracks).
    pub materials: Vec<MaterialOverride>,
    /// Per node: hidden by an animated `KHR_node_visibility` of its own or of a node above it.
    pub hidden: Vec<bool>,
    /// Per light the tracks animate (indexed as `KHR_lights_punctual` numbers them).
    pub lights: Vec<LightOverride>,
    /// Per track of the rig: each track's value at the time sampled.
    pub values: Vec<Vec4>,
    /// Key-interval hints, per track.
    hints: Vec<usize>,
}

impl PropertyState {
    /// Buffers for `rig`'s property tracks; all empty when it has none.
    pub fn new(rig: &Rig) -> PropertyState {
        let tracks = &rig.facts.property_tracks;
        if tracks.is_empty() {
            return PropertyState::default();
        }
        let lights = (tracks.iter())
            .filter_map(|t| match t.target {
                PropertyTarget::Light { light, .. } => Some(light + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        PropertyState {
            materials: vec![MaterialOverride::default(); rig.materials.len()],
            hidden: vec![false; rig.nodes.len()],
            lights: vec![LightOverride::default(); lights],
            values: vec![Vec4::ZERO; tracks.len()],
            hints: vec![0; tracks.len()],
        }
    }

    /// The overrides of material `material`, when a track animates it.
    pub fn material(&self, material: usize) -> Option<&MaterialOverride> {
        self.materials
            .get(material)
            .filter(|o| **o != MaterialOverride::default())
    }

    /// Whether node `node` is hidden.
    pub fn is_hidden(&self, node: usize) -> bool {
        self.hidden.get(node).copied().unwrap_or(false)
    }
}

/// The texture transform `texture` of `material` has as read.
fn base_uv(material: &Material, texture: MaterialTexture) -> UvTransform {
    let reference = match texture {
        MaterialTexture::BaseColor => return material.base_color_uv,
        MaterialTexture::MetallicRoughness => material.metallic_roughness_texture,
        MaterialTexture::Normal => material.normal_texture,
        MaterialTexture::Occlusion => material.occlusion_texture,
        MaterialTexture::Emissive => material.emissive_texture,
    };
    reference.map(|r| r.uv).unwrap_or_default()
}

/// `track`'s value at `time` (seconds): before the first key or after the last, that key's
/// value; between keys, as its interpolation says (glTF 2.0, Appendix C).
pub fn sample_track(track: &PropertyTrack, time: f32, hint: &mut usize) -> Vec4 {
    let (times, values) = (&track.times, &track.values);
    let cubic = track.interpolation == Interpolation::CubicSpline;
    let value_at = |k: usize| if cubic { values[3 * k + 1] } else { values[k] };
    let Some(last) = times.len().checked_sub(1) else {
        return Vec4::ZERO;
    };
    if last == 0 || time <= times[0] {
        return value_at(0);
    }
    if time >= times[last] {
        return value_at(last);
    }
    let k = key_interval(times, time, hint);
    let dt = times[k + 1] - times[k];
    let s = if dt > 0.0 { (time - times[k]) / dt } else { 0.0 };
    match track.interpolation {
        Interpolation::Step => values[k],
        Interpolation::Linear => values[k].lerp(values[k + 1], s),
        Interpolation::CubicSpline => hermite(
            values[3 * k + 1],
            values[3 * k + 2] * dt,
            values[3 * (k + 1) + 1],
            values[3 * (k + 1)] * dt,
            s,
        ),
    }
}

/// Samples the property tracks of `clip` at `time` into `state` (made by
/// [`PropertyState::new`] for `rig`): no clip, or a clip without tracks, leaves every property
/// as the rig holds it.
pub fn sample_properties(rig: &Rig, clip: Option<usize>, time: f32, state: &mut PropertyState) {
    let tracks = &rig.facts.property_tracks;
    if state.values.len() != tracks.len() {
        return;
    }
    state.materials.fill(MaterialOverride::default());
    state.lights.fill(LightOverride::default());
    state.hidden.fill(false);
    for (t, track) in tracks.iter().enumerate() {
        if Some(track.clip) != clip {
            continue;
        }
        let value = sample_track(track, time, &mut state.hints[t]);
        state.values[t] = value;
        apply(rig, track.target, value, state);
    }
    // Parents come before their children: a hidden node hides what hangs under it.
    for n in 0..state.hidden.len() {
        if let Some(parent) = rig.nodes[n].parent
            && state.hidden.get(parent).copied().unwrap_or(false)
        {
            state.hidden[n] = true;
        }
    }
}

/// Sets the property `target` names to `value` in `state`; a target out of the rig's range
/// changes nothing.
fn apply(rig: &Rig, target: PropertyTarget, value: Vec4, state: &mut PropertyState) {
    match target {
        PropertyTarget::Material { material, factor } => {
            let Some(o) = state.materials.get_mut(material) else {
                return;
            };
            match factor {
                MaterialFactor::BaseColor => o.base_color = Some(value),
                MaterialFactor::Emissive => o.emissive = Some(value.truncate()),
                MaterialFactor::Metallic => o.metallic = Some(value.x),
                MaterialFactor::Roughness => o.roughness = Some(value.x),
                MaterialFactor::AlphaCutoff => o.alpha_cutoff = Some(value.x),
                MaterialFactor::NormalScale => o.normal_scale = Some(value.x),
                MaterialFactor::OcclusionStrength => o.occlusion_strength = Some(value.x),
                MaterialFactor::EmissiveStrength => o.emissive_strength = Some(value.x),
            }
        }
        PropertyTarget::TextureTransform {
            material,
            texture,
            part,
        } => {
            let (Some(o), Some(base)) = (state.materials.get_mut(material), rig.materials.get(material)) else {
                return;
            };
            let mut uv = o.uv_of(base, texture);
            match part {
                TransformPart::Offset => uv.offset = Vec2::new(value.x, value.y),
                TransformPart::Rotation => uv.rotation = value.x,
                TransformPart::Scale => uv.scale = Vec2::new(value.x, value.y),
            }
            o.uv[texture as usize] = Some(uv);
        }
        PropertyTarget::NodeVisible { node } => {
            if let Some(hidden) = state.hidden.get_mut(node) {
                *hidden = value.x == 0.0;
            }
        }
        PropertyTarget::Light { light, property } => {
            let Some(o) = state.lights.get_mut(light) else {
                return;
            };
            match property {
                LightProperty::Color => o.color = Some(value.truncate()),
                LightProperty::Intensity => o.intensity = Some(value.x),
                LightProperty::Range => o.range = Some(value.x),
                LightProperty::InnerConeAngle => o.inner_cone_angle = Some(value.x),
                LightProperty::OuterConeAngle => o.outer_cone_angle = Some(value.x),
            }
        }
    }
}
