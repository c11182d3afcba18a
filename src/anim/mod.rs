//! Animation runtime: clip sampling, the playback state, and pose → joint palette.
//!
//! Each stage is a function of slices: [`sample_clip`] writes local transforms,
//! [`local_to_world`] turns them into world matrices (parents first), [`build_palette`] turns
//! those into skinning matrices. [`PoseEvaluator`] owns the scratch arrays so that a frame
//! allocates nothing.

mod player;
mod sample;

pub use player::{FRAME_SECONDS, Player};
pub use sample::{key_interval, sample_channel};

use crate::rig::{Clip, Node, Property, Rig, Trs};
use glam::{Affine3A, Mat4, Quat, Vec3, Vec4};

/// Resets `locals` to the rest pose, then writes every channel of `clip` at `time`.
/// `hints` holds one key-interval hint per channel (see [`key_interval`]).
pub fn sample_clip(nodes: &[Node], clip: Option<&Clip>, time: f32, hints: &mut [usize], locals: &mut [Trs]) {
    for (local, node) in locals.iter_mut().zip(nodes) {
        *local = node.rest;
    }
    let Some(clip) = clip else { return };
    for (channel, hint) in clip.channels.iter().zip(hints.iter_mut()) {
        let v = sample_channel(channel, time, hint);
        let local = &mut locals[channel.node];
        match channel.property {
            Property::Translation => local.translation = v.truncate(),
            Property::Rotation => local.rotation = Quat::from_vec4(v),
            Property::Scale => local.scale = v.truncate(),
        }
    }
}

/// World transform of every node; relies on parents being stored before their children.
/// Affine math throughout: a node's TRS becomes a 3×4 transform and each product is a 3×3
/// product plus a translation, a quarter less work than 4×4 matrices.
pub fn local_to_world(nodes: &[Node], locals: &[Trs], worlds: &mut [Affine3A]) {
    for i in 0..nodes.len().min(locals.len()).min(worlds.len()) {
        let local = &locals[i];
        let local = Affine3A::from_scale_rotation_translation(local.scale, local.rotation, local.translation);
        worlds[i] = match nodes[i].parent {
            Some(p) => worlds[p] * local,
            None => local,
        };
    }
}

/// Whether `m` is affine (bottom row 0, 0, 0, 1), so that [`Affine3A`] represents it exactly.
pub fn is_affine(m: &Mat4) -> bool {
    m.row(3) == Vec4::W
}

/// `palette[j] = inverse(mesh_world) · world(joint j) · inverseBind[j]`: the matrix that takes a
/// bind-pose vertex to its posed place in the space of the node that holds the mesh.
///
/// `inverse_binds` are the skin's inverse bind matrices as affine transforms (see
/// [`is_affine`]; [`PoseEvaluator`] uses the 4×4 path for skins whose matrices are not affine).
/// One affine inverse per call (the mesh node's), none per joint; no allocation.
pub fn build_palette(
    joints: &[usize],
    inverse_binds: &[Affine3A],
    worlds: &[Affine3A],
    mesh_world: &Affine3A,
    palette: &mut [Mat4],
) {
    if *mesh_world == Affine3A::IDENTITY {
        for ((out, &joint), inverse_bind) in palette.iter_mut().zip(joints).zip(inverse_binds) {
            *out = Mat4::from(worlds[joint] * *inverse_bind);
        }
    } else {
        let to_mesh = mesh_world.inverse();
        for ((out, &joint), inverse_bind) in palette.iter_mut().zip(joints).zip(inverse_binds) {
            *out = Mat4::from(to_mesh * worlds[joint] * *inverse_bind);
        }
    }
}

/// [`build_palette`] for inverse bind matrices that are not affine: the same formula in 4×4.
pub fn build_palette_mat4(
    joints: &[usize],
    inverse_binds: &[Mat4],
    worlds: &[Affine3A],
    mesh_world: &Affine3A,
    palette: &mut [Mat4],
) {
    let to_mesh = mesh_world.inverse();
    for ((out, &joint), inverse_bind) in palette.iter_mut().zip(joints).zip(inverse_binds) {
        *out = Mat4::from(to_mesh * worlds[joint]) * *inverse_bind;
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
    pub worlds: Vec<Mat4>,
    /// One palette per mesh instance (empty for unskinned instances).
    pub palettes: Vec<Vec<Mat4>>,
    hints: Vec<usize>,
    hint_clip: Option<usize>,
    /// World transforms as computed (affine); `worlds` is their 4×4 copy.
    world_affines: Vec<Affine3A>,
    /// Per skin: its inverse bind matrices as affine transforms, or `None` when one of them is
    /// not affine (that skin's palettes are then built in 4×4).
    inverse_binds: Vec<Option<Vec<Affine3A>>>,
}

impl PoseEvaluator {
    pub fn new(rig: &Rig) -> Self {
        let max_channels = rig.clips.iter().map(|c| c.channels.len()).max().unwrap_or(0);
        let mut evaluator = PoseEvaluator {
            overrides: vec![JointOverride::IDENTITY; rig.nodes.len()],
            locals: rig.nodes.iter().map(|n| n.rest).collect(),
            worlds: vec![Mat4::IDENTITY; rig.nodes.len()],
            palettes: rig
                .instances
                .iter()
                .map(|i| vec![Mat4::IDENTITY; i.skin.map_or(0, |s| rig.skins[s].joints.len())])
                .collect(),
            hints: vec![0; max_channels],
            hint_clip: None,
            world_affines: vec![Affine3A::IDENTITY; rig.nodes.len()],
            inverse_binds: rig
                .skins
                .iter()
                .map(|skin| {
                    skin.inverse_binds
                        .iter()
                        .all(is_affine)
                        .then(|| skin.inverse_binds.iter().map(|m| Affine3A::from_mat4(*m)).collect())
                })
                .collect(),
        };
        evaluator.evaluate(rig, None, 0.0);
        evaluator
    }

    /// Samples `clip` at `time` into the local pose (rest pose when `clip` is `None`).
    pub fn sample(&mut self, rig: &Rig, clip: Option<usize>, time: f32) {
        if self.hint_clip != clip {
            self.hints.fill(0);
            self.hint_clip = clip;
        }
        let clip = clip.and_then(|c| rig.clips.get(c));
        sample_clip(&rig.nodes, clip, time, &mut self.hints, &mut self.locals);
        for (local, joint_override) in self.locals.iter_mut().zip(&self.overrides) {
            if !joint_override.is_identity() {
                joint_override.apply(local);
            }
        }
    }

    /// Whether any node has a hand-made change.
    pub fn has_overrides(&self) -> bool {
        self.overrides.iter().any(|o| !o.is_identity())
    }

    /// World matrices and palettes from the current local pose.
    pub fn update(&mut self, rig: &Rig) {
        local_to_world(&rig.nodes, &self.locals, &mut self.world_affines);
        for (world, affine) in self.worlds.iter_mut().zip(&self.world_affines) {
            *world = Mat4::from(*affine);
        }
        for (instance, palette) in rig.instances.iter().zip(&mut self.palettes) {
            let Some(skin) = instance.skin else { continue };
            let mesh_world = &self.world_affines[instance.node];
            let joints = &rig.skins[skin].joints;
            match &self.inverse_binds[skin] {
                Some(inverse_binds) => build_palette(joints, inverse_binds, &self.world_affines, mesh_world, palette),
                None => build_palette_mat4(
                    joints,
                    &rig.skins[skin].inverse_binds,
                    &self.world_affines,
                    mesh_world,
                    palette,
                ),
            }
        }
    }

    pub fn evaluate(&mut self, rig: &Rig, clip: Option<usize>, time: f32) {
        self.sample(rig, clip, time);
        self.update(rig);
    }

    /// Matrix placing instance `i`'s (skinned) vertices in the world.
    pub fn instance_world(&self, rig: &Rig, i: usize) -> Mat4 {
        self.worlds[rig.instances[i].node]
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
