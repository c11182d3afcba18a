//! Look-at as a layer over the pose: the head aims at a point, the neck and spine taking a share
//! of the turn, after the clip, its layers, the bends and the two-bone goals — ozz-animation's
//! look-at sample over [`super::ik::AimChain`].

use super::ik::{AimChain, fill_chain_weights};
use crate::anim::local_to_world;
use crate::rig::{Node, Rig, Trs};
use glam::{Mat4, Quat, Vec3};

/// Most joints a look-at turns (the head and its ancestors): the work happens in fixed arrays.
pub const MAX_LOOK_AT_JOINTS: usize = 6;

/// The head, neck and spine joints of a look-at, and where it looks.
#[derive(Debug, Clone, PartialEq)]
pub struct LookAt {
    /// The aiming joint first (the head), then its ancestors in order (neck, spine…); at most
    /// [`MAX_LOOK_AT_JOINTS`].
    pub chain: Vec<usize>,
    /// The point looked at, in world space.
    pub target: Vec3,
    /// The head's forward and up axes in its own space.
    pub forward: Vec3,
    pub up: Vec3,
    /// The share of the turn each joint below the head takes (the head finishes it).
    pub share: f32,
    /// 0: the pose as it is; 1: the head on the target.
    pub weight: f32,
    pub enabled: bool,
}

/// The rig's head: a humanoid map's `head` (a VRM avatar's), else the shallowest bone whose
/// name says head (not a head's end or top marker).
pub fn find_head(rig: &Rig) -> Option<usize> {
    if let Some(&(_, head)) = rig.facts.humanoid.iter().find(|(bone, _)| bone == "head") {
        return Some(head);
    }
    let hierarchy = rig.hierarchy();
    (0..rig.nodes.len())
        .filter(|&n| hierarchy.bones[n])
        .filter(|&n| {
            let name = rig.nodes[n].name.to_lowercase();
            name.contains("head") && !name.contains("end") && !name.contains("top")
        })
        .min_by_key(|&n| hierarchy.depth[n])
}

/// The way a character faces at rest, in the world: where glTF puts one (+Z), unless its
/// humanoid map's left and right legs and arms say otherwise (VRM 0.x avatars face −Z). The
/// forward is the horizontal direction from right to left turned a quarter about +Y.
pub fn rest_forward(rig: &Rig, rest_worlds: &[Mat4]) -> Vec3 {
    let bone = |name: &str| {
        (rig.facts.humanoid.iter())
            .find(|(bone, _)| bone == name)
            .and_then(|&(_, node)| rest_worlds.get(node))
            .map(|world| world.w_axis.truncate())
    };
    let mut right_to_left = Vec3::ZERO;
    for (left, right) in [("leftUpperLeg", "rightUpperLeg"), ("leftUpperArm", "rightUpperArm")] {
        if let (Some(left), Some(right)) = (bone(left), bone(right)) {
            right_to_left += left - right;
        }
    }
    // Facing +Z the character's left is +X, and +X × +Y is +Z.
    let forward = right_to_left.cross(Vec3::Y).with_y(0.0);
    if forward.length_squared() > 1e-12 {
        forward.normalize()
    } else {
        Vec3::Z
    }
}

impl LookAt {
    /// A look-at of `head` and up to [`MAX_LOOK_AT_JOINTS`] − 1 of its ancestors that are
    /// bones (`joints` in all), at `target`. The head's up is +Y in the world at rest, and its
    /// forward the way the character faces (see [`rest_forward`]).
    pub fn for_head(rig: &Rig, head: usize, joints: usize, target: Vec3) -> Option<LookAt> {
        let bones = &rig.hierarchy().bones;
        let mut chain = vec![head];
        let mut above = rig.nodes.get(head)?.parent;
        while let Some(node) = above.filter(|_| chain.len() < joints.clamp(1, MAX_LOOK_AT_JOINTS)) {
            if !bones[node] {
                break;
            }
            chain.push(node);
            above = rig.nodes[node].parent;
        }
        let locals: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        let mut worlds = vec![Mat4::IDENTITY; rig.nodes.len()];
        local_to_world(&rig.nodes, &locals, &mut worlds);
        let to_head = super::ik_layer::rotation_of(&worlds[head])?.conjugate();
        Some(LookAt {
            chain,
            target,
            forward: (to_head * rest_forward(rig, &worlds)).normalize(),
            up: (to_head * Vec3::Y).normalize(),
            share: 0.5,
            weight: 1.0,
            enabled: true,
        })
    }

    /// Turns the chain of `locals` (with `worlds` their world matrices, current on entry and on
    /// return) so that the head looks at the target; returns whether it reaches it. Nothing
    /// happens when it is off or its joints are not in the rig.
    pub fn apply(&self, nodes: &[Node], locals: &mut [Trs], worlds: &mut [Mat4]) -> bool {
        let count = self.chain.len();
        if !self.enabled
            || count == 0
            || count > MAX_LOOK_AT_JOINTS
            || locals.len() != nodes.len()
            || worlds.len() != nodes.len()
            || self.chain.iter().any(|&j| j >= nodes.len())
        {
            return false;
        }
        let mut models = [Mat4::IDENTITY; MAX_LOOK_AT_JOINTS];
        for (model, &joint) in models.iter_mut().zip(&self.chain) {
            *model = worlds[joint];
        }
        let mut weights = [0.0f32; MAX_LOOK_AT_JOINTS];
        fill_chain_weights(self.share.clamp(0.0, 1.0), &mut weights[..count]);
        let aim = AimChain {
            joint_models: &models[..count],
            joint_weights: &weights[..count],
            chain_weight: self.weight.clamp(0.0, 1.0),
            target: self.target,
            forward: self.forward,
            up: self.up,
            offset: Vec3::ZERO,
            pole: Vec3::Y,
            twist: 0.0,
        };
        let mut corrections = [Quat::IDENTITY; MAX_LOOK_AT_JOINTS];
        let Ok(reached) = aim.solve(&mut corrections[..count]) else {
            return false;
        };
        for (&joint, correction) in self.chain.iter().zip(&corrections) {
            locals[joint].rotation = (locals[joint].rotation * *correction).normalize();
        }
        local_to_world(nodes, locals, worlds);
        reached
    }
}
