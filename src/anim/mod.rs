//! Animation runtime: clip sampling, the playback state, and pose → joint palette.
//!
//! Each stage is a function of slices: [`sample_clip`] writes local transforms,
//! [`local_to_world`] turns them into world matrices (parents first), [`build_palette`] turns
//! those into skinning matrices (affine math, see [`affine`]). [`PoseEvaluator`] owns the
//! scratch arrays so that a frame allocates nothing.

pub mod affine;
pub mod layers;
pub mod morph;
mod player;
mod sample;
pub mod stack;

pub use affine::{build_palette, build_palette_mat4, is_affine, local_to_world};
pub use layers::{BlendMode, Layer, LayerMixer, LayerSample};
pub use player::{FRAME_SECONDS, Player};
pub use sample::{key_interval, sample_channel};
pub use stack::{AnimationStack, Attachment, Fade, RootMotion};

use crate::rig::{Clip, Node, Property, Rig, Trs};
use glam::{Mat4, Quat, Vec3};

/// Resets `locals` to the rest pose, then writes every channel of `clip` at `time`.
/// `hints` holds one key-interval hint per channel (see [`key_interval`]).
pub fn sample_clip(nodes: &[Node], clip: Option<&Clip>, time: f32, hints: &mut [usize], locals: &mut [Trs]) {
    for (local, node) in locals.iter_mut().zip(nodes) {
        *local = node.rest;
    }
    let Some(clip) = clip else { return };
    // Channels this far ahead have their keys prefetched.
    const AHEAD: usize = 4;
    for (i, channel) in clip.channels.iter().enumerate() {
        if let (Some(next), Some(&next_hint)) = (clip.channels.get(i + AHEAD), hints.get(i + AHEAD)) {
            sample::prefetch_keys(next, next_hint);
        }
        let Some(hint) = hints.get_mut(i) else { break };
        let v = sample_channel(channel, time, hint);
        let local = &mut locals[channel.node];
        match channel.property {
            Property::Translation => local.translation = v.truncate(),
            Property::Rotation => local.rotation = Quat::from_vec4(v),
            Property::Scale => local.scale = v.truncate(),
        }
    }
}

/// A change made by hand to one node's pose, applied on top of whatever the clip samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointOverride {
    /// Rotation in degrees about the node's own X, then Y, then Z axis.
    pub euler_degrees: Vec3,
    /// Added to the node's translation (in its parent's space).
    pub translation: Vec3,
    /// Multiplies the node's scale.
    pub scale: f32,
}

impl JointOverride {
    pub const IDENTITY: JointOverride = JointOverride {
        euler_degrees: Vec3::ZERO,
        translation: Vec3::ZERO,
        scale: 1.0,
    };

    pub fn rotation(&self) -> Quat {
        let r = self.euler_degrees * (std::f32::consts::PI / 180.0);
        Quat::from_euler(glam::EulerRot::XYZ, r.x, r.y, r.z)
    }

    pub fn is_identity(&self) -> bool {
        *self == Self::IDENTITY
    }

    /// Applies the override to a sampled local transform.
    pub fn apply(&self, local: &mut Trs) {
        local.rotation = (local.rotation * self.rotation()).normalize();
        local.translation += self.translation;
        local.scale *= self.scale;
    }
}

impl Default for JointOverride {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// Scratch state for evaluating a rig's pose, reused frame after frame.
pub struct PoseEvaluator {
    /// Hand-made changes per node, applied after sampling; they stay when the clip or time
    /// changes, until reset.
    pub overrides: Vec<JointOverride>,
    pub locals: Vec<Trs>,
    /// Morph target weights per mesh instance (empty for meshes without targets).
    pub morph_weights: Vec<Vec<f32>>,
    /// Weights set by hand per mesh instance and target, in place of the sampled ones.
    pub morph_overrides: Vec<Vec<Option<f32>>>,
    pub worlds: Vec<Mat4>,
    /// One palette per mesh instance (empty for unskinned instances).
    pub palettes: Vec<Vec<Mat4>>,
    hints: Vec<usize>,
    hint_clip: Option<usize>,
    /// Per skin: whether all its inverse bind matrices are affine (else its palettes take the
    /// 4×4 path).
    affine_binds: Vec<bool>,
    /// How long the last sampling and palette build took (see [`PoseEvaluator::take_timings`]).
    timings: PoseTimings,
}

/// Wall time of the last pose evaluation's stages; `None` for a stage that has not run since
/// the timings were last taken.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PoseTimings {
    /// Clip sampling, layers and overrides.
    pub sampling: Option<std::time::Duration>,
    /// World matrices and palettes.
    pub palette: Option<std::time::Duration>,
}

impl PoseEvaluator {
    pub fn new(rig: &Rig) -> Self {
        let max_channels = rig.clips.iter().map(|c| c.channels.len()).max().unwrap_or(0);
        let mut evaluator = PoseEvaluator {
            overrides: vec![JointOverride::IDENTITY; rig.nodes.len()],
            locals: rig.nodes.iter().map(|n| n.rest).collect(),
            morph_weights: rig
                .instances
                .iter()
                .map(|i| vec![0.0; rig.morphs.weight_count(i.mesh)])
                .collect(),
            morph_overrides: rig
                .instances
                .iter()
                .map(|i| vec![None; rig.morphs.weight_count(i.mesh)])
                .collect(),
            worlds: vec![Mat4::IDENTITY; rig.nodes.len()],
            palettes: rig
                .instances
                .iter()
                .map(|i| vec![Mat4::IDENTITY; i.skin.map_or(0, |s| rig.skins[s].joints.len())])
                .collect(),
            hints: vec![0; max_channels],
            hint_clip: None,
            affine_binds: rig
                .skins
                .iter()
                .map(|s| s.inverse_binds.iter().all(is_affine))
                .collect(),
            timings: PoseTimings::default(),
        };
        evaluator.evaluate(rig, None, 0.0);
        evaluator
    }

    /// Samples `clip` at `time` into the local pose (rest pose when `clip` is `None`).
    pub fn sample(&mut self, rig: &Rig, clip: Option<usize>, time: f32) {
        self.sample_layered(rig, clip, time, None, &[]);
    }

    /// Samples the base `clip` at `time`, blends the `layers` over it with `mixer` (morph weights
    /// too), then applies the hand-made overrides.
    pub fn sample_layered(
        &mut self,
        rig: &Rig,
        clip: Option<usize>,
        time: f32,
        mixer: Option<&mut LayerMixer>,
        layers: &[LayerSample],
    ) {
        let start = std::time::Instant::now();
        if self.hint_clip != clip {
            self.hints.fill(0);
            self.hint_clip = clip;
        }
        let clip = clip.and_then(|c| rig.clips.get(c));
        sample_clip(&rig.nodes, clip, time, &mut self.hints, &mut self.locals);
        morph::sample_morph_weights(rig, self.hint_clip, time, &mut self.morph_weights);
        for layer in layers {
            morph::blend_layer_morph_weights(rig, layer, &mut self.morph_weights);
        }
        for (weights, overrides) in self.morph_weights.iter_mut().zip(&self.morph_overrides) {
            for (w, o) in weights.iter_mut().zip(overrides) {
                if let Some(o) = o {
                    *w = *o;
                }
            }
        }
        if let Some(mixer) = mixer {
            mixer.apply(rig, layers, &mut self.locals);
        }
        for (local, joint_override) in self.locals.iter_mut().zip(&self.overrides) {
            if !joint_override.is_identity() {
                joint_override.apply(local);
            }
        }
        self.timings.sampling = Some(start.elapsed());
    }

    /// The stage timings recorded since the last call, and forgets them.
    pub fn take_timings(&mut self) -> PoseTimings {
        std::mem::take(&mut self.timings)
    }

    /// Whether any node has a hand-made change.
    pub fn has_overrides(&self) -> bool {
        self.overrides.iter().any(|o| !o.is_identity())
    }

    /// World matrices and palettes from the current local pose.
    ///
    /// Palettes are in world space: `palette[j] = joint world · inverseBind`, and the skinned
    /// vertices they make are drawn without the mesh node's transform, which glTF ignores for
    /// skinned meshes. Folding `inverse(mesh node world)` into them instead would put that
    /// node's scale (×100 under a Mixamo/Blender armature) into every matrix, which dual
    /// quaternions cannot carry.
    pub fn update(&mut self, rig: &Rig) {
        let start = std::time::Instant::now();
        local_to_world(&rig.nodes, &self.locals, &mut self.worlds);
        for (instance, palette) in rig.instances.iter().zip(&mut self.palettes) {
            let Some(skin) = instance.skin else { continue };
            let (joints, inverse_binds) = (&rig.skins[skin].joints, &rig.skins[skin].inverse_binds);
            if self.affine_binds[skin] {
                build_palette(joints, inverse_binds, &self.worlds, &Mat4::IDENTITY, palette);
            } else {
                build_palette_mat4(joints, inverse_binds, &self.worlds, &Mat4::IDENTITY, palette);
            }
        }
        self.timings.palette = Some(start.elapsed());
    }

    pub fn evaluate(&mut self, rig: &Rig, clip: Option<usize>, time: f32) {
        self.sample(rig, clip, time);
        self.update(rig);
    }

    /// Matrix placing instance `i`'s vertices in the world: its node's world matrix, or the
    /// identity for a skinned instance, whose palette already puts them there.
    pub fn instance_world(&self, rig: &Rig, i: usize) -> Mat4 {
        let instance = &rig.instances[i];
        match instance.skin {
            Some(_) => Mat4::IDENTITY,
            None => self.worlds[instance.node],
        }
    }
}

/// Axis-aligned bounds of a set of points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub min: Vec3,
    pub max: Vec3,
}

impl Bounds {
    pub const EMPTY: Bounds = Bounds {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    pub fn include(&mut self, p: Vec3) {
        self.min = self.min.min(p);
        self.max = self.max.max(p);
    }

    pub fn is_empty(&self) -> bool {
        self.min.x > self.max.x
    }

    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    pub fn size(&self) -> f32 {
        if self.is_empty() {
            0.0
        } else {
            (self.max - self.min).length()
        }
    }
}
