//! Joints added, removed and re-parented, and per joint the change of its bind matrix and of
//! its rest pose.

use super::{RestPose, Sides, node_name, placement_change};
use crate::rig::{Rig, Skin};
use glam::Mat4;
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize)]
pub struct SkeletonDiff {
    /// Joints only B has, by name.
    pub added: Vec<String>,
    /// Joints only A has, by name.
    pub removed: Vec<String>,
    pub reparented: Vec<Reparented>,
    /// Joints whose bind matrix moved past the thresholds, worst first.
    pub bind_changed: Vec<String>,
    /// Joints whose rest pose moved past the thresholds, worst first.
    pub rest_changed: Vec<String>,
    /// Every joint both rigs have, most changed first.
    pub joints: Vec<JointChange>,
    /// Skins of B whose inverse bind matrices all carry the same extra transform (encoders fold
    /// the dequantization of positions into them); the comparison takes it out.
    pub rebases: Vec<SkinRebase>,
}

impl SkeletonDiff {
    pub fn differs(&self) -> bool {
        !(self.added.is_empty()
            && self.removed.is_empty()
            && self.reparented.is_empty()
            && self.bind_changed.is_empty()
            && self.rest_changed.is_empty())
    }
}

/// A joint whose nearest joint ancestor differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reparented {
    pub joint: String,
    /// The parent joint in A and in B (`None`: a root joint).
    pub from: Option<String>,
    pub to: Option<String>,
}

/// How one joint differs, rotations in degrees: bind positions relative to the bind pose's
/// size, rest positions relative to the rest pose's (see [`super::RigDiff`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointChange {
    pub joint: String,
    /// The joint's node in A and in B.
    pub node_a: usize,
    pub node_b: usize,
    /// The joint's bind placement (the inverse of its inverse bind matrix).
    pub bind_position: f32,
    pub bind_rotation_deg: f32,
    /// The joint's world placement in the rest pose.
    pub rest_position: f32,
    pub rest_rotation_deg: f32,
}

impl JointChange {
    /// The largest of its changes, each divided by its threshold (above 1: past the threshold).
    pub fn severity(&self, position: f32, degrees: f32) -> f32 {
        (self.bind_position.max(self.rest_position) / position)
            .max(self.bind_rotation_deg.max(self.rest_rotation_deg) / degrees)
    }
}

/// The transform `S` every inverse bind matrix of B's skin `skin_b` carries on top of A's
/// (`inverseBind_B = inverseBind_A · S`); B's bind positions are `S⁻¹` of A's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkinRebase {
    pub skin_b: usize,
    pub skin_a: usize,
    /// How many of the skin's joints agree on `S`, of how many both skins have.
    pub agreeing: usize,
    pub shared: usize,
    /// `S`'s uniform scale (cube root of its determinant).
    pub scale: f32,
    #[serde(skip)]
    pub transform: Mat4,
}

pub(super) fn compare_skeletons(sides: &Sides, rest_a: &RestPose, rest_b: &RestPose) -> SkeletonDiff {
    let (a, b, nodes) = (sides.a, sides.b, sides.nodes);
    let (joints_a, joints_b) = (&a.hierarchy().is_joint, &b.hierarchy().is_joint);
    let mut diff = SkeletonDiff::default();
    for n in (0..a.nodes.len()).filter(|&n| joints_a[n]) {
        if !nodes.a_to_b[n].is_some_and(|m| joints_b[m]) {
            diff.removed.push(node_name(a, n));
        }
    }
    for m in (0..b.nodes.len()).filter(|&m| joints_b[m]) {
        if !nodes.b_to_a[m].is_some_and(|n| joints_a[n]) {
            diff.added.push(node_name(b, m));
        }
    }
    let matched = sides.matched_joints();
    for &(n, m) in &matched {
        let (from, to) = (parent_joint(a, n), parent_joint(b, m));
        if from.and_then(|p| nodes.a_to_b[p]) != to || (from.is_none() && to.is_some()) {
            diff.reparented.push(Reparented {
                joint: node_name(a, n),
                from: from.map(|p| node_name(a, p)),
                to: to.map(|p| node_name(b, p)),
            });
        }
    }

    let mut binds = vec![None::<(f32, f32)>; a.nodes.len()];
    for (skin_b, skin) in b.skins.iter().enumerate() {
        let Some(pairing) = SkinPairing::new(sides, skin_b) else {
            continue;
        };
        let rebase = pairing.rebase(a, b);
        let undo = rebase.as_ref().map_or(Mat4::IDENTITY, |r| r.transform.inverse());
        for &(slot_b, slot_a) in &pairing.slots {
            let ibm_a = a.skins[pairing.skin_a].inverse_binds[slot_a];
            let ibm_b = skin.inverse_binds[slot_b] * undo;
            let change = placement_change(&ibm_a.inverse(), &ibm_b.inverse(), sides.bind_size);
            let node = a.skins[pairing.skin_a].joints[slot_a];
            let worst = binds[node].get_or_insert((0.0, 0.0));
            *worst = (worst.0.max(change.0), worst.1.max(change.1));
        }
        diff.rebases.extend(rebase);
    }

    let t = sides.thresholds;
    for &(n, m) in &matched {
        let (bind_position, bind_rotation_deg) = binds[n].unwrap_or((0.0, 0.0));
        let (rest_position, rest_rotation_deg) = placement_change(&rest_a.worlds[n], &rest_b.worlds[m], sides.size);
        diff.joints.push(JointChange {
            joint: node_name(a, n),
            node_a: n,
            node_b: m,
            bind_position,
            bind_rotation_deg,
            rest_position,
            rest_rotation_deg,
        });
    }
    let severity = |j: &JointChange| j.severity(t.position, t.rotation_degrees);
    diff.joints.sort_by(|x, y| severity(y).total_cmp(&severity(x)));
    for joint in &diff.joints {
        if joint.bind_position > t.position || joint.bind_rotation_deg > t.rotation_degrees {
            diff.bind_changed.push(joint.joint.clone());
        }
        if joint.rest_position > t.position || joint.rest_rotation_deg > t.rotation_degrees {
            diff.rest_changed.push(joint.joint.clone());
        }
    }
    diff
}

/// `node`'s nearest ancestor that is a joint (nodes between joints are not part of the
/// skeleton; encoders remove or merge them).
fn parent_joint(rig: &Rig, node: usize) -> Option<usize> {
    let is_joint = &rig.hierarchy().is_joint;
    let mut parent = rig.nodes[node].parent;
    while let Some(p) = parent {
        if is_joint[p] {
            return Some(p);
        }
        parent = rig.nodes[p].parent;
    }
    None
}

/// A skin of B and the skin of A that shares most of its joints, slot by slot.
struct SkinPairing {
    skin_b: usize,
    skin_a: usize,
    /// (slot in B's skin, slot in A's skin) of each joint both have.
    slots: Vec<(usize, usize)>,
}

impl SkinPairing {
    fn new(sides: &Sides, skin_b: usize) -> Option<SkinPairing> {
        let skin = &sides.b.skins[skin_b];
        let slots_in = |skin_a: &Skin| -> Vec<(usize, usize)> {
            skin.joints
                .iter()
                .enumerate()
                .filter_map(|(slot_b, &m)| {
                    let n = sides.nodes.b_to_a.get(m).copied().flatten()?;
                    let slot_a = skin_a.joints.iter().position(|&j| j == n)?;
                    Some((slot_b, slot_a))
                })
                .filter(|&(slot_b, slot_a)| slot_b < skin.inverse_binds.len() && slot_a < skin_a.inverse_binds.len())
                .collect()
        };
        let (skin_a, slots) = sides
            .a
            .skins
            .iter()
            .enumerate()
            .map(|(s, skin_a)| (s, slots_in(skin_a)))
            .max_by_key(|(s, slots)| (slots.len(), std::cmp::Reverse(*s)))?;
        (!slots.is_empty()).then_some(SkinPairing { skin_b, skin_a, slots })
    }

    /// The transform most joints of B's skin carry on top of A's, when more than half of them
    /// agree on one that is not the identity.
    fn rebase(&self, a: &Rig, b: &Rig) -> Option<SkinRebase> {
        /// Joints tried as the source of `S`; plenty to find a majority.
        const CANDIDATES: usize = 64;
        let (skin_a, skin) = (&a.skins[self.skin_a], &b.skins[self.skin_b]);
        let carried: Vec<Mat4> = self
            .slots
            .iter()
            .map(|&(slot_b, slot_a)| skin_a.inverse_binds[slot_a].inverse() * skin.inverse_binds[slot_b])
            .collect();
        let (transform, agreeing) = carried
            .iter()
            .take(CANDIDATES)
            .map(|s| (*s, carried.iter().filter(|t| same_matrix(s, t)).count()))
            .max_by_key(|&(_, count)| count)?;
        if 2 * agreeing <= carried.len() || same_matrix(&transform, &Mat4::IDENTITY) {
            return None;
        }
        Some(SkinRebase {
            skin_b: self.skin_b,
            skin_a: self.skin_a,
            agreeing,
            shared: carried.len(),
            scale: transform.determinant().abs().cbrt(),
            transform,
        })
    }
}

/// Whether two matrices are equal up to float rounding of their largest element.
fn same_matrix(s: &Mat4, t: &Mat4) -> bool {
    let scale = s.to_cols_array().iter().fold(1.0f32, |m, v| m.max(v.abs()));
    let tolerance = 1e-4 * scale;
    s.to_cols_array()
        .iter()
        .zip(t.to_cols_array())
        .all(|(x, y)| (x - y).abs() <= tolerance)
}
