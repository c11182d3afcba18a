//! Animation runtime: clip sampling, the playback state, and pose → joint palette.
//!
//! Each stage is a function of slices: [`sample_clip`] writes local transforms,
//! [`local_to_world`] turns them into world matrices (parents first), [`build_palette`] turns
//! those into skinning matrices (affine math, see [`affine`]). [`evaluate_pose`] calls them in
//! order, from [`PoseInputs`] into [`PoseBuffers`], which are sized once so that a frame
//! allocates nothing.

pub mod affine;
mod attachments;
pub mod clip_edit;
mod crossfade;
pub mod dual_quat;
mod expressions;
pub mod foot_lock;
pub mod ghosts;
pub mod gizmo;
pub mod ik;
pub mod ik_layer;
pub mod layers;
pub mod look_at;
pub mod look_at_expressions;
pub mod mirror;
pub mod morph;
pub mod node_constraints;
mod player;
mod pose;
pub mod properties;
pub mod root_motion;
mod sample;
mod sampler;
pub mod spring_bones;
mod stack;

pub use affine::{
    build_palette, build_palette_mat4, build_palette_with, is_affine, local_to_world, local_to_world_with,
};
pub use attachments::Attachment;
pub use crossfade::Fade;
pub use expressions::set_expression_morph_weights;
pub use ghosts::GhostOptions;
pub use layers::{BlendMode, Layer, LayerMixer, LayerSample};
pub use player::{FRAME_SECONDS, Player};
pub use pose::{PaletteKernel, PoseBuffers, PoseInputs, StageTimes, evaluate_pose};
pub use root_motion::{RootMotion, RootTrail};
pub use sample::{key_interval, sample_channel};
pub use sampler::{ClipSampler, rig_height};
pub use stack::AnimationStack;

use crate::rig::{Clip, Node, Property, Trs};
use glam::{Quat, Vec3};

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
    /// Turn applied after the sampled rotation, in the node's own axes. Kept as a quaternion so
    /// that bends compose and undo exactly; Euler angles are only ever a read-out of it.
    pub rotation: Quat,
    /// Added to the node's translation (in its parent's space).
    pub translation: Vec3,
    /// Multiplies the node's scale.
    pub scale: f32,
}

impl JointOverride {
    pub const IDENTITY: JointOverride = JointOverride {
        rotation: Quat::IDENTITY,
        translation: Vec3::ZERO,
        scale: 1.0,
    };

    /// A turn only, given as degrees about the node's own X, then Y, then Z axis (the order the
    /// skeleton panel's read-out and `render --bend` use).
    pub fn from_euler_degrees(degrees: Vec3) -> JointOverride {
        JointOverride {
            rotation: euler_degrees_to_rotation(degrees),
            ..JointOverride::IDENTITY
        }
    }

    pub fn is_identity(&self) -> bool {
        *self == Self::IDENTITY
    }

    /// Applies the override to a sampled local transform.
    pub fn apply(&self, local: &mut Trs) {
        local.rotation = (local.rotation * self.rotation).normalize();
        local.translation += self.translation;
        local.scale *= self.scale;
    }

    /// The sampled local transform this override turned into `posed`.
    pub fn removed_from(&self, posed: &Trs) -> Trs {
        Trs {
            rotation: (posed.rotation * self.rotation.inverse()).normalize(),
            translation: posed.translation - self.translation,
            scale: posed.scale / self.scale,
        }
    }

    /// The override that turns the sampled local transform `sampled` into `wanted` (it scales
    /// uniformly: by the mean of the three ratios).
    pub fn between(sampled: &Trs, wanted: &Trs) -> JointOverride {
        JointOverride {
            rotation: (sampled.rotation.inverse() * wanted.rotation).normalize(),
            translation: wanted.translation - sampled.translation,
            scale: (wanted.scale / sampled.scale).element_sum() / 3.0,
        }
    }
}

/// Degrees about X, then Y, then Z (intrinsic), as one rotation.
pub fn euler_degrees_to_rotation(degrees: Vec3) -> Quat {
    let r = degrees * (std::f32::consts::PI / 180.0);
    Quat::from_euler(glam::EulerRot::XYZ, r.x, r.y, r.z)
}

impl Default for JointOverride {
    fn default() -> Self {
        Self::IDENTITY
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
