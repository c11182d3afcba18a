//! Clips from another file, carried onto this rig's skeleton.
//!
//! Joints are paired by name ([`match_joints`]). The target is first turned into the source's
//! rest pose, bone by bone and parents first (its *retarget pose*, see [`alignment`]); each
//! paired joint's animated rotation is then carried as its change from the source's rest, in
//! world space (turned to the way the target character faces), onto that retarget pose, and
//! turned back into a local rotation parent first. Different rest poses (T-pose and A-pose,
//! other bone rolls) so give the same limb directions as the source's. Only the motion root
//! moves: its travel in world space, scaled by the ratio of the two rigs' hip heights. A joint
//! whose rest pose and whose ancestors' rest poses are the same in both rigs takes the source's
//! local transform as it is, so two copies of one skeleton share clips unchanged. The result is
//! baked at the source's key times with the pose evaluation of [`crate::anim`].

mod alignment;
mod humanoid;
mod limbs;
mod matching;
mod morph;
pub mod pose_copy;

pub use alignment::{DirectionPair, JointDirections, align};
pub use humanoid::{bone_by_name, human_bones};
pub use limbs::LimbError;
use limbs::LimbTracker;

pub use matching::{
    JointMap, JointMaps, JointMatch, SkeletonSignature, match_joints, name_without_suffix, normalized_name,
};

use crate::anim::root_motion::motion_root;
use crate::anim::{local_to_world, sample_clip};
use crate::rig::{Channel, Clip, Interpolation, Property, Rig, RigError, Trs};
use glam::{Mat4, Quat, Vec3, Vec4};
use std::path::{Path, PathBuf};

/// How clips are carried over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetargetOptions {
    /// Keep the root over its rest place on the ground: its horizontal travel is dropped, its
    /// height still moves.
    pub in_place: bool,
    /// Samples per second added between the source's keys where those keys alone do not carry
    /// the motion (clips with step or cubic spline channels).
    pub resample_rate: f32,
}

impl Default for RetargetOptions {
    fn default() -> Self {
        RetargetOptions {
            in_place: false,
            resample_rate: 30.0,
        }
    }
}

/// Why clips could not be added from another file.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RetargetError {
    #[error("cannot load clips from {}: {source}", path.display())]
    Load {
        path: PathBuf,
        #[source]
        source: RigError,
    },
    #[error("{} has no clips to add", path.display())]
    NoClips { path: PathBuf },
}

/// What happened to one clip.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClipReport {
    /// The clip's name on the target rig.
    pub name: String,
    /// Source channels whose node has a counterpart on the target.
    pub matched_channels: usize,
    /// Source channels left out because their node has none, as `node property`.
    pub dropped_channels: Vec<String>,
    /// The target node that carries the clip's travel, if any.
    pub root: Option<String>,
    /// Target hip height over source hip height: the factor on the root's travel.
    pub root_scale: f32,
    /// Morph weight channels carried over and left out.
    pub matched_morph_channels: usize,
    pub dropped_morph_channels: usize,
    /// Per bone of the target that has a counterpart in the source, the largest angle between
    /// its direction and the source bone's over the clip, largest first.
    pub limbs: Vec<LimbError>,
}

impl ClipReport {
    /// The bone whose direction strays furthest from the source's, if the clip has bones.
    pub fn worst_limb(&self) -> Option<&LimbError> {
        self.limbs.first()
    }
}

/// How many of a clip's dropped channels the summary names (a pack for another skeleton drops
/// hundreds).
const DROPPED_LISTED: usize = 6;

/// How many of a clip's worst bones the summary names.
const LIMBS_LISTED: usize = 3;

/// What carrying a file's clips onto a rig matched and left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RetargetReport {
    pub joints: JointMatch,
    /// The [`JointMap::key`] of the source's skeleton and the target's, under which a
    /// hand-made map for them is kept.
    pub map_key: String,
    /// The hand-made map the joints were matched with (empty when none was kept).
    pub map: JointMap,
    pub clips: Vec<ClipReport>,
    /// The target's locals in its retarget pose for this source (see [`retarget_pose`]).
    pub retarget_pose: Vec<Trs>,
}

impl RetargetReport {
    /// A few lines for the command line: per clip its channels, and the joints left unmatched.
    pub fn summary(&self) -> String {
        let mut text = String::new();
        for clip in &self.clips {
            text += &format!(
                "clip '{}': {} channels matched, {} dropped",
                clip.name,
                clip.matched_channels,
                clip.dropped_channels.len()
            );
            if !clip.dropped_channels.is_empty() {
                let listed = &clip.dropped_channels[..clip.dropped_channels.len().min(DROPPED_LISTED)];
                let more = clip.dropped_channels.len() - listed.len();
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                text += &format!(" ({}{more})", listed.join(", "));
            }
            if let Some(root) = &clip.root {
                text += &format!("; root {root} travel ×{:.3}", clip.root_scale);
            }
            text += "\n";
            if let Some(worst) = clip.worst_limb() {
                let listed: Vec<String> = clip
                    .limbs
                    .iter()
                    .take(LIMBS_LISTED)
                    .map(|l| format!("{} {:.2}° at {:.2} s", l.joint, l.degrees, l.time))
                    .collect();
                text += &format!(
                    "  limb directions against the source, {} bones: worst {:.2}° ({})\n",
                    clip.limbs.len(),
                    worst.degrees,
                    listed.join(", ")
                );
            }
        }
        let list = |names: &[String]| {
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        };
        text += &format!("source joints unmatched: {}\n", list(&self.joints.unmatched_source));
        text += &format!("target joints unmatched: {}\n", list(&self.joints.unmatched_target));
        for (from, to) in &self.joints.stale_by_hand {
            text += &format!("hand-made pair {from} → {to} names no such joint; left out\n");
        }
        text
    }
}

/// Rest-pose facts of both rigs that every clip's retargeting reads.
struct Skeletons<'a> {
    source: &'a Rig,
    target: &'a Rig,
    /// Per source node: the target node it drives; per target node: the source node driving it.
    target_of: Vec<Option<usize>>,
    source_of: Vec<Option<usize>>,
    /// Per target node: its rest local and every ancestor's equal the source's, so it copies
    /// the source's locals.
    copies_locals: Vec<bool>,
    /// Per target node: its parent copies the source's locals and its rest translation equals
    /// the source's, so the source's animated translation (a Mixamo arm's, say) stays exact here
    /// even where the joint's own rest turn differs.
    copies_translation: Vec<bool>,
    source_rest: Pose,
    target_rest: Pose,
    /// Per target node: its world rotation in the retarget pose (the target standing in the
    /// source's rest pose), which the source's turns from its rest are carried onto.
    retarget_rotations: Vec<Quat>,
    /// Per target node: its bone, as (target child, source child), whose direction the
    /// alignment matched and the limb errors measure.
    bones: Vec<Option<(usize, usize)>>,
    /// Lowest rest height of the reported joints (the ground hip heights are measured from).
    source_floor: f32,
    target_floor: f32,
    /// Turn about the vertical from the way the source character faces to the way the target
    /// faces (see [`facing_turn`]).
    facing: Quat,
}

/// World rotations and matrices of a pose.
#[derive(Clone)]
struct Pose {
    rotations: Vec<Quat>,
    worlds: Vec<Mat4>,
}

impl Pose {
    fn new(rig: &Rig) -> Pose {
        let mut pose = Pose {
            rotations: vec![Quat::IDENTITY; rig.nodes.len()],
            worlds: vec![Mat4::IDENTITY; rig.nodes.len()],
        };
        let rest: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        pose.set(rig, &rest);
        pose
    }

    /// World rotations composed from the locals' rotations (scale left out), and world matrices.
    fn set(&mut self, rig: &Rig, locals: &[Trs]) {
        world_rotations(rig, locals, &mut self.rotations);
        local_to_world(&rig.nodes, locals, &mut self.worlds);
    }
}

/// Each node's world rotation, its parent's times its own, parents first.
fn world_rotations(rig: &Rig, locals: &[Trs], rotations: &mut [Quat]) {
    for (i, node) in rig.nodes.iter().enumerate() {
        let local = locals[i].rotation;
        rotations[i] = match node.parent {
            Some(p) => rotations[p] * local,
            None => local,
        };
    }
}

/// A joint's animated scale over its rest scale, per axis (1 where the rest scale is zero):
/// what the source's scale keys carry onto a target joint of another rest scale.
fn relative_scale(animated: Vec3, rest: Vec3) -> Vec3 {
    let ratio = animated / rest;
    Vec3::select(ratio.is_finite_mask(), ratio, Vec3::ONE)
}

/// Whether two rest transforms are the same up to float noise.
fn same_rest(a: &Trs, b: &Trs) -> bool {
    const TOLERANCE: f32 = 1e-6;
    let close = |a: Vec3, b: Vec3| (a - b).abs().max_element() <= TOLERANCE * (1.0 + a.abs().max_element());
    close(a.translation, b.translation)
        && close(a.scale, b.scale)
        && a.rotation.dot(b.rotation).abs() >= 1.0 - TOLERANCE
}

impl<'a> Skeletons<'a> {
    fn new(source: &'a Rig, target: &'a Rig, joints: &JointMatch) -> Skeletons<'a> {
        let mut source_of = vec![None; target.nodes.len()];
        for (s, t) in joints.target_of.iter().enumerate() {
            if let Some(t) = *t {
                source_of[t] = Some(s);
            }
        }
        let mut copies_locals = vec![false; target.nodes.len()];
        for (t, node) in target.nodes.iter().enumerate() {
            let Some(s) = source_of[t] else { continue };
            let parents_copy = match (node.parent, source.nodes[s].parent) {
                (None, None) => true,
                (Some(tp), Some(sp)) => copies_locals[tp] && source_of[tp] == Some(sp),
                _ => false,
            };
            copies_locals[t] = parents_copy && same_rest(&node.rest, &source.nodes[s].rest);
        }
        let copies_translation = (0..target.nodes.len())
            .map(|t| {
                let Some(s) = source_of[t] else { return false };
                let place_only = |rest: &Trs| Trs {
                    translation: rest.translation,
                    ..Trs::IDENTITY
                };
                let parents_copy = match (target.nodes[t].parent, source.nodes[s].parent) {
                    (None, None) => true,
                    (Some(tp), Some(sp)) => copies_locals[tp] && source_of[tp] == Some(sp),
                    _ => false,
                };
                parents_copy && same_rest(&place_only(&target.nodes[t].rest), &place_only(&source.nodes[s].rest))
            })
            .collect();
        let (source_rest, target_rest) = (Pose::new(source), Pose::new(target));
        let facing = facing_turn(target, &source_of, &source_rest, &target_rest);
        let bones = mapped_bones(source, target, &source_of, &target_rest);
        let mut skeletons = Skeletons {
            facing,
            source_floor: floor(source, &source_rest),
            target_floor: floor(target, &target_rest),
            source,
            target,
            target_of: joints.target_of.clone(),
            source_of,
            copies_locals,
            copies_translation,
            retarget_rotations: Vec::new(),
            bones,
            source_rest,
            target_rest,
        };
        skeletons.retarget_rotations = skeletons.retarget_pose();
        skeletons
    }

    /// The target's locals in its retarget pose: its rest with the turns of the alignment.
    fn retarget_locals(&self) -> Vec<Trs> {
        (self.target.nodes.iter().enumerate())
            .map(|(t, node)| {
                let parent = node.parent.map_or(Quat::IDENTITY, |p| self.retarget_rotations[p]);
                Trs {
                    rotation: (parent.conjugate() * self.retarget_rotations[t]).normalize(),
                    ..node.rest
                }
            })
            .collect()
    }

    /// Where a point of the source's rest pose lies relative to `from`, turned as the target faces.
    fn source_offset(&self, from: usize, to: usize) -> Vec3 {
        let position = |n: usize| self.source_rest.worlds[n].w_axis.truncate();
        self.facing * (position(to) - position(from))
    }

    fn target_offset(&self, from: usize, to: usize) -> Vec3 {
        let position = |n: usize| self.target_rest.worlds[n].w_axis.truncate();
        position(to) - position(from)
    }

    /// The target's world rotations in its retarget pose: parents first, each bone joint turned
    /// from where its parent's turn left it so that its bone points along the source's rest bone
    /// (see [`alignment::align`]); other nodes follow their parents.
    fn retarget_pose(&self) -> Vec<Quat> {
        let target = self.target;
        let children = &target.hierarchy().children;
        let mut rotations = vec![Quat::IDENTITY; target.nodes.len()];
        for (t, node) in target.nodes.iter().enumerate() {
            let following = match node.parent {
                Some(p) => rotations[p] * node.rest.rotation,
                None => node.rest.rotation,
            };
            rotations[t] = following;
            let (Some((child, source_child)), Some(s)) = (self.bones[t], self.source_of[t]) else {
                continue;
            };
            if self.copies_locals[t] {
                continue;
            }
            // The turn that carried the joint, and everything under it, from its rest here.
            let carried = following * self.target_rest.rotations[t].conjugate();
            let pair = |target_child: usize, source_child: usize| DirectionPair {
                target: carried * self.target_offset(t, target_child),
                source: self.source_offset(s, source_child),
            };
            let siblings = mapped_children(&self.source_of, children, t)
                .filter(|&c| c != child)
                .filter_map(|c| Some((c, self.source_of[c]?)))
                .filter(|&(_, sc)| is_under(self.source, sc, s))
                .map(|(c, sc)| pair(c, sc))
                .collect();
            // The next bone along the chain, rigid with this joint until its own turn.
            let next = self.bones[child].map(|(grandchild, source_grandchild)| DirectionPair {
                target: carried * self.target_offset(child, grandchild),
                source: self.source_offset(source_child, source_grandchild),
            });
            let directions = JointDirections {
                bone: Some(pair(child, source_child)),
                siblings,
                next,
            };
            rotations[t] = (align(&directions) * following).normalize();
        }
        rotations
    }
}

/// The nearest mapped nodes under `node` (through unmapped ones: twist and helper joints).
fn mapped_children<'h>(
    source_of: &'h [Option<usize>],
    children: &'h [Vec<usize>],
    node: usize,
) -> impl Iterator<Item = usize> + 'h {
    let mut stack: Vec<usize> = children[node].iter().rev().copied().collect();
    std::iter::from_fn(move || {
        while let Some(n) = stack.pop() {
            if source_of[n].is_some() {
                return Some(n);
            }
            stack.extend(children[n].iter().rev().copied());
        }
        None
    })
}

fn is_under(rig: &Rig, node: usize, ancestor: usize) -> bool {
    let mut above = rig.nodes[node].parent;
    while let Some(p) = above {
        if p == ancestor {
            return true;
        }
        above = rig.nodes[p].parent;
    }
    false
}

/// Per target node that is a bone of the skeleton and mapped: the bone the alignment turns it
/// by, from it to one of its nearest mapped children whose source counterpart lies under its own
/// counterpart. The child is the one that carries on the way into the joint (a chest's neck, not
/// its shoulders); at the top of the skeleton, the one with the most mapped joints under it (the
/// hips' spine).
fn mapped_bones(
    source: &Rig,
    target: &Rig,
    source_of: &[Option<usize>],
    target_rest: &Pose,
) -> Vec<Option<(usize, usize)>> {
    let hierarchy = target.hierarchy();
    let position = |n: usize| target_rest.worlds[n].w_axis.truncate();
    let mut mapped_below = vec![0usize; target.nodes.len()];
    for t in (0..target.nodes.len()).rev() {
        if let Some(p) = target.nodes[t].parent {
            mapped_below[p] += mapped_below[t] + usize::from(source_of[t].is_some());
        }
    }
    let mapped_parent = |t: usize| {
        let mut above = target.nodes[t].parent;
        while let Some(p) = above {
            if source_of[p].is_some() {
                return Some(p);
            }
            above = target.nodes[p].parent;
        }
        None
    };
    (0..target.nodes.len())
        .map(|t| {
            let s = source_of[t].filter(|_| hierarchy.bones[t])?;
            let incoming = mapped_parent(t)
                .filter(|&p| hierarchy.bones[p])
                .map(|p| position(t) - position(p))
                .and_then(|v| v.try_normalize());
            let candidates = mapped_children(source_of, &hierarchy.children, t).filter_map(|c| {
                let sc = source_of[c]?;
                let offset = position(c) - position(t);
                (is_under(source, sc, s) && offset.length() > 0.0).then_some((c, sc, offset))
            });
            let best = match incoming {
                Some(way) => candidates.max_by(|a, b| way.dot(a.2.normalize()).total_cmp(&way.dot(b.2.normalize()))),
                None => candidates.max_by_key(|&(c, _, _)| mapped_below[c]),
            };
            best.map(|(c, sc, _)| (c, sc))
        })
        .collect()
}

/// The turn about the vertical (Y) axis from the way the source character faces to the way
/// the target faces, so that a step forward stays a step forward: Soldier.glb is built facing
/// −Z, the other Mixamo rigs +Z. Facing is read from rest positions, which every exporter
/// agrees on (bone axes it does not): the horizontal direction from each matched `Right…`
/// joint to its `Left…` counterpart, summed. Identity when the rigs have no such pairs.
fn facing_turn(target: &Rig, source_of: &[Option<usize>], source_rest: &Pose, target_rest: &Pose) -> Quat {
    // Sides by humanoid bone where the joint is one (`UpperArm.L`), else by name.
    let bones = human_bones(target);
    let side_key = |t: usize| {
        bones[t]
            .as_deref()
            .map_or_else(|| normalized_name(&target.nodes[t].name), str::to_lowercase)
    };
    let matched: std::collections::HashMap<String, (usize, usize)> = source_of
        .iter()
        .enumerate()
        .filter_map(|(t, s)| Some((side_key(t), (t, (*s)?))))
        .collect();
    let position = |pose: &Pose, n: usize| pose.worlds[n].w_axis.truncate();
    let (mut source_side, mut target_side) = (Vec3::ZERO, Vec3::ZERO);
    for (name, &(left_t, left_s)) in &matched {
        let Some(&(right_t, right_s)) = name
            .strip_prefix("left")
            .and_then(|rest| matched.get(&format!("right{rest}")))
        else {
            continue;
        };
        source_side += position(source_rest, left_s) - position(source_rest, right_s);
        target_side += position(target_rest, left_t) - position(target_rest, right_t);
    }
    // Angle from +Z towards +X of the horizontal part; a turn by θ about Y adds θ to it.
    let heading = |side: Vec3| (side.x * side.x + side.z * side.z > 1e-12).then(|| side.x.atan2(side.z));
    match (heading(source_side), heading(target_side)) {
        (Some(source), Some(target)) if source.is_finite() && target.is_finite() => {
            Quat::from_rotation_y(target - source)
        }
        _ => Quat::IDENTITY,
    }
}

/// Lowest rest height of a rig's joints (of every node when it has no skin).
fn floor(rig: &Rig, rest: &Pose) -> f32 {
    let joints: Vec<usize> = rig.skins.iter().flat_map(|s| s.joints.iter().copied()).collect();
    let nodes: Box<dyn Iterator<Item = usize>> = if joints.is_empty() {
        Box::new(0..rig.nodes.len())
    } else {
        Box::new(joints.into_iter())
    };
    nodes
        .filter_map(|n| rest.worlds.get(n))
        .map(|w| w.w_axis.y)
        .fold(f32::INFINITY, f32::min)
}

/// The sorted, distinct times a clip is baked at: every key of every channel, and samples at
/// `rate` per second over the clip when a channel steps or follows a spline.
fn bake_times(clip: &Clip, rate: f32) -> Vec<f32> {
    let mut times: Vec<f32> = clip
        .channels
        .iter()
        .flat_map(|c| c.times.iter().copied())
        .filter(|t| t.is_finite())
        .collect();
    let resample = clip.channels.iter().any(|c| c.interpolation != Interpolation::Linear);
    if resample && rate > 0.0 && clip.duration.is_finite() && clip.duration > 0.0 {
        // Bounded: a clip of an hour at 30 Hz is about 100 000 samples.
        let steps = (clip.duration * rate).ceil().min(1e6) as usize;
        times.extend((0..=steps).map(|k| (k as f32 / rate).min(clip.duration)));
    }
    times.sort_by(f32::total_cmp);
    // Keys closer than this are one key (exporters write 1/30 s keys as 0.0333333 and 0.0333334).
    const SAME_TIME: f32 = 1e-6;
    times.dedup_by(|b, a| *b - *a <= SAME_TIME);
    if times.is_empty() {
        times.push(0.0);
    }
    times
}

fn property_name(property: Property) -> &'static str {
    match property {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
    }
}

/// One output channel being baked: the target node and property, and its values so far.
struct Baked {
    node: usize,
    property: Property,
    values: Vec<Vec4>,
}

/// A target joint whose source moves off its rest offset: the turn and stretch that take the
/// source's offset (from its parent, as the parent carries it) to where the clip puts it are
/// applied, in world space, to the target's offset, so that a target of other proportions keeps
/// them where the source does not move.
struct Stretch {
    joint: usize,
    parent: usize,
    /// The source's parent and joint.
    source: (usize, usize),
}

/// The [`Stretch`] of target joint `t` (driven by source joint `s`), when its parent is the
/// counterpart of `s`'s parent.
fn stretch_of(skeletons: &Skeletons, t: usize, s: usize) -> Option<Stretch> {
    let parent = skeletons.target.nodes[t].parent?;
    let source_parent = skeletons.source.nodes[s].parent?;
    (skeletons.source_of[parent] == Some(source_parent)).then_some(Stretch {
        joint: t,
        parent,
        source: (source_parent, s),
    })
}

/// The target's locals at one moment of the source's clip, parents first: a joint whose rest
/// and ancestors' rests are the source's copies its locals; another mapped joint takes the
/// source joint's world turn from its rest (turned as the target faces) onto its retarget pose,
/// and the source's translation where the rests agree and its scale relative to rest; the rest
/// keep their rest locals. `rotations` gets the world rotations those locals compose.
fn carry_turns(
    skeletons: &Skeletons,
    source_locals: &[Trs],
    source_pose: &Pose,
    locals: &mut [Trs],
    rotations: &mut [Quat],
) {
    let source = skeletons.source;
    for (t, node) in skeletons.target.nodes.iter().enumerate() {
        let parent_rotation = node.parent.map_or(Quat::IDENTITY, |p| rotations[p]);
        let local = &mut locals[t];
        *local = node.rest;
        if let Some(s) = skeletons.source_of[t] {
            if skeletons.copies_locals[t] {
                *local = source_locals[s];
            } else {
                let turn = skeletons.facing
                    * source_pose.rotations[s]
                    * skeletons.source_rest.rotations[s].conjugate()
                    * skeletons.facing.conjugate();
                let world = turn * skeletons.retarget_rotations[t];
                local.rotation = (parent_rotation.conjugate() * world).normalize();
                if skeletons.copies_translation[t] {
                    local.translation = source_locals[s].translation;
                }
                local.scale = node.rest.scale * relative_scale(source_locals[s].scale, source.nodes[s].rest.scale);
            }
        }
        rotations[t] = parent_rotation * local.rotation;
    }
}

/// Sets the translation of every [`Stretch`] joint: its rest offset, as its parent carries it
/// in `worlds`, given the turn and stretch that took the source's offset from where the source
/// parent carries it to where the clip puts it.
fn stretch_offsets(
    skeletons: &Skeletons,
    stretched: &[Stretch],
    source_pose: &Pose,
    worlds: &[Mat4],
    locals: &mut [Trs],
) {
    let (source, target) = (skeletons.source, skeletons.target);
    for stretch in stretched {
        let source_parent = glam::Mat3::from_mat4(source_pose.worlds[stretch.source.0]);
        let (rigid, actual) = (
            source_parent * source.nodes[stretch.source.1].rest.translation,
            (source_pose.worlds[stretch.source.1].w_axis - source_pose.worlds[stretch.source.0].w_axis).truncate(),
        );
        let (Some(from), Some(to)) = (rigid.try_normalize(), actual.try_normalize()) else {
            continue;
        };
        let turn = skeletons.facing * Quat::from_rotation_arc(from, to) * skeletons.facing.conjugate();
        let parent = glam::Mat3::from_mat4(worlds[stretch.parent]);
        let offset =
            turn * (parent * target.nodes[stretch.joint].rest.translation) * (actual.length() / rigid.length());
        let local = parent.inverse() * offset;
        if local.is_finite() {
            locals[stretch.joint].translation = local;
        }
    }
}

/// Carries clip `index` of `skeletons.source` onto the target.
fn retarget_clip(skeletons: &Skeletons, index: usize, options: &RetargetOptions) -> (Clip, ClipReport) {
    let (source, target) = (skeletons.source, skeletons.target);
    let clip = &source.clips[index];
    let mut report = ClipReport {
        name: clip.name.clone(),
        root_scale: 1.0,
        ..ClipReport::default()
    };
    let animated = animated_properties(skeletons, clip, &mut report);

    let root = clip_root(skeletons, index, &mut report);
    let root_copied =
        root.is_some_and(|(_, t)| skeletons.copies_locals[t] && report.root_scale == 1.0 && !options.in_place);

    let (mut baked, stretched) = driven_properties(skeletons, &animated, root);

    let times = bake_times(clip, options.resample_rate);
    let mut hints = vec![0; clip.channels.len()];
    let mut source_locals: Vec<Trs> = source.nodes.iter().map(|n| n.rest).collect();
    let mut source_pose = skeletons.source_rest.clone();
    let mut target_locals: Vec<Trs> = target.nodes.iter().map(|n| n.rest).collect();
    let mut target_rotations = vec![Quat::IDENTITY; target.nodes.len()];
    let mut target_worlds = vec![Mat4::IDENTITY; target.nodes.len()];
    for value in &mut baked {
        value.values.reserve_exact(times.len());
    }
    let mut limbs = LimbTracker::new(skeletons);
    for &time in &times {
        sample_clip(&source.nodes, Some(clip), time, &mut hints, &mut source_locals);
        source_pose.set(source, &source_locals);
        carry_turns(
            skeletons,
            &source_locals,
            &source_pose,
            &mut target_locals,
            &mut target_rotations,
        );
        if !stretched.is_empty() {
            // A parent's world rotation and scale do not depend on any translation.
            local_to_world(&target.nodes, &target_locals, &mut target_worlds);
            stretch_offsets(skeletons, &stretched, &source_pose, &target_worlds, &mut target_locals);
        }
        if let Some((s, t)) = root.filter(|_| !root_copied) {
            // The parent's world matrix does not depend on the root's own translation.
            local_to_world(&target.nodes, &target_locals, &mut target_worlds);
            target_locals[t].translation = root_translation(
                skeletons,
                (s, t),
                &source_pose,
                &target_worlds,
                report.root_scale,
                options.in_place,
            );
        }
        local_to_world(&target.nodes, &target_locals, &mut target_worlds);
        limbs.measure(skeletons, &source_pose, &target_worlds, time);
        for value in &mut baked {
            let local = &target_locals[value.node];
            value.values.push(match value.property {
                Property::Translation => local.translation.extend(0.0),
                Property::Rotation => Vec4::from(local.rotation),
                Property::Scale => local.scale.extend(0.0),
            });
        }
    }

    report.limbs = limbs.finish(target);
    let duration = clip.duration.max(times.last().copied().unwrap_or(0.0));
    let channels = baked
        .into_iter()
        .map(|b| Channel {
            node: b.node,
            property: b.property,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: b.values,
        })
        .collect();
    let clip = Clip {
        name: clip.name.clone(),
        duration,
        channels,
        source: None,
    };
    (clip, report)
}

/// Which properties of each source node the clip animates (translation, rotation, scale);
/// counts in `report` the channels that reach a target joint and names those that do not.
fn animated_properties(skeletons: &Skeletons, clip: &Clip, report: &mut ClipReport) -> Vec<[bool; 3]> {
    let source = skeletons.source;
    let target_of = |s: usize| skeletons.target_of.get(s).copied().flatten();
    let mut animated = vec![[false; 3]; source.nodes.len()];
    for channel in &clip.channels {
        let Some(flags) = animated.get_mut(channel.node) else {
            continue;
        };
        flags[channel.property as usize] = true;
        if target_of(channel.node).is_some() {
            report.matched_channels += 1;
        } else {
            report.dropped_channels.push(format!(
                "{} {}",
                source.nodes[channel.node].name,
                property_name(channel.property)
            ));
        }
    }
    animated
}

/// The root: the source's motion root of clip `index` and its counterpart (source, target);
/// sets in `report` the target root's name and the ratio of hip heights its travel is scaled by.
fn clip_root(skeletons: &Skeletons, index: usize, report: &mut ClipReport) -> Option<(usize, usize)> {
    let (source, target) = (skeletons.source, skeletons.target);
    let target_of = |s: usize| skeletons.target_of.get(s).copied().flatten();
    let root = motion_root(source, index).and_then(|s| Some((s, target_of(s)?)));
    if let Some((s, t)) = root {
        let source_height = skeletons.source_rest.worlds[s].w_axis.y - skeletons.source_floor;
        let target_height = skeletons.target_rest.worlds[t].w_axis.y - skeletons.target_floor;
        let ratio = target_height / source_height;
        report.root_scale = if ratio.is_finite() && ratio > 0.0 { ratio } else { 1.0 };
        report.root = Some(target.nodes[t].name.clone());
    }
    root
}

/// Which target properties the clip drives: rotations of joints whose source joint, or a
/// source joint between it and its matched ancestor, turns; the root's translation; and
/// whatever an aligned joint's source animates. Also the joints whose source moves them off
/// their rest offset and whose offset is not copied: their offsets follow the source's
/// directions instead (a Mixamo pose that moves a knee).
fn driven_properties(
    skeletons: &Skeletons,
    animated: &[[bool; 3]],
    root: Option<(usize, usize)>,
) -> (Vec<Baked>, Vec<Stretch>) {
    let source = skeletons.source;
    let target_of = |s: usize| skeletons.target_of.get(s).copied().flatten();
    let mut stretched: Vec<Stretch> = Vec::new();
    let mut baked = Vec::new();
    for (t, source_node) in skeletons.source_of.iter().enumerate() {
        let Some(s) = *source_node else { continue };
        let mut turns = animated[s][Property::Rotation as usize];
        let mut above = source.nodes[s].parent;
        while let Some(p) = above.filter(|&p| target_of(p).is_none()) {
            turns |= animated[p][Property::Rotation as usize];
            above = source.nodes[p].parent;
        }
        let is_root = root.is_some_and(|(_, root)| root == t);
        let moves = animated[s][Property::Translation as usize];
        if moves && !is_root && !skeletons.copies_translation[t] {
            stretched.extend(stretch_of(skeletons, t, s));
        }
        for (property, driven) in [
            (Property::Translation, is_root || moves),
            (Property::Rotation, turns),
            (Property::Scale, animated[s][Property::Scale as usize]),
        ] {
            if driven {
                baked.push(Baked {
                    node: t,
                    property,
                    values: Vec::new(),
                });
            }
        }
    }
    (baked, stretched)
}

/// The target root's local translation at this sample: its rest place moved by the source
/// root's travel from rest, turned to the target's facing and scaled by `root_scale` (kept
/// vertical only when `in_place`). `target_worlds` has the root's parent posed.
fn root_translation(
    skeletons: &Skeletons,
    (s, t): (usize, usize),
    source_pose: &Pose,
    target_worlds: &[Mat4],
    root_scale: f32,
    in_place: bool,
) -> Vec3 {
    let target = skeletons.target;
    let mut travel = skeletons.facing
        * (source_pose.worlds[s].w_axis - skeletons.source_rest.worlds[s].w_axis).truncate()
        * root_scale;
    if in_place {
        travel.x = 0.0;
        travel.z = 0.0;
    }
    let place = skeletons.target_rest.worlds[t].w_axis.truncate() + travel;
    let parent = target.nodes[t].parent.map_or(Mat4::IDENTITY, |p| target_worlds[p]);
    parent.inverse().transform_point3(place)
}

/// `target`'s local transforms in its retarget pose for `source` (joints paired by
/// [`match_joints`] with `map`): standing in the source's rest pose, the pose every carried clip
/// starts from. Translations and scales stay the target's rest.
pub fn retarget_pose(source: &Rig, target: &Rig, map: &JointMap) -> Vec<Trs> {
    let joints = match_joints(source, target, map);
    Skeletons::new(source, target, &joints).retarget_locals()
}

/// Every clip of `source` carried onto `target`'s skeleton (joints paired by [`match_joints`]
/// with `map`), bound to `target`'s nodes. Morph weights are not included (see
/// [`with_clips_from`]).
pub fn retarget_clips(
    source: &Rig,
    target: &Rig,
    map: &JointMap,
    options: &RetargetOptions,
) -> (Vec<Clip>, RetargetReport) {
    let joints = match_joints(source, target, map);
    let skeletons = Skeletons::new(source, target, &joints);
    let (clips, reports) = (0..source.clips.len())
        .map(|index| retarget_clip(&skeletons, index, options))
        .unzip();
    let report = RetargetReport {
        joints,
        map_key: JointMap::key(source, target),
        map: map.clone(),
        clips: reports,
        retarget_pose: skeletons.retarget_locals(),
    };
    (clips, report)
}

/// `rig` with every clip of `source` carried onto it and appended, each marked as coming from
/// `origin` and renamed `name (file)` when the rig already has a clip of that name. Morph
/// weights follow meshes whose targets share names.
pub fn with_clips_from(
    mut rig: Rig,
    source: &Rig,
    origin: &Path,
    map: &JointMap,
    options: &RetargetOptions,
) -> (Rig, RetargetReport) {
    let (clips, mut report) = retarget_clips(source, &rig, map, options);
    let first = rig.clips.len();
    let morph = morph::carry_morph_channels(source, &rig, first);
    for (clip_report, counts) in report.clips.iter_mut().zip(&morph.counts) {
        (clip_report.matched_morph_channels, clip_report.dropped_morph_channels) = *counts;
    }
    rig.morphs.channels.extend(morph.channels);
    let file = origin
        .file_name()
        .map_or_else(|| origin.display().to_string(), |f| f.to_string_lossy().into_owned());
    for (mut clip, clip_report) in clips.into_iter().zip(&mut report.clips) {
        if rig.clips.iter().any(|c| c.name == clip.name) {
            clip.name = format!("{} ({file})", clip.name);
        }
        clip.source = Some(origin.to_path_buf());
        clip_report.name = clip.name.clone();
        rig.clips.push(clip);
    }
    (rig, report)
}

/// Loads `path` and adds its clips to `rig` (see [`with_clips_from`]), its joints matched with
/// the map `maps` keeps for the two skeletons, if any, and over it the pairs of `pairs`.
pub fn load_clips_into(
    rig: Rig,
    path: &Path,
    (maps, pairs): (&JointMaps, &JointMap),
    options: &RetargetOptions,
) -> Result<(Rig, RetargetReport), RetargetError> {
    let source = crate::rig::load_file(path).map_err(|source| RetargetError::Load {
        path: path.to_path_buf(),
        source,
    })?;
    if source.clips.is_empty() {
        return Err(RetargetError::NoClips {
            path: path.to_path_buf(),
        });
    }
    let mut map = maps.get(&JointMap::key(&source, &rig)).cloned().unwrap_or_default();
    map.by_hand
        .extend(pairs.by_hand.iter().map(|(from, to)| (from.clone(), to.clone())));
    Ok(with_clips_from(rig, &source, path, &map, options))
}

/// Files whose clips are added to a rig, and how they are carried over (`--clips FILE`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClipFiles {
    pub files: Vec<PathBuf>,
    pub options: RetargetOptions,
    /// Hand-made joint maps by skeleton pair, used where one is kept for a file's skeleton and
    /// the rig's.
    pub maps: JointMaps,
    /// Pairs for every file, over those maps (`--map-joint`).
    pub pairs: JointMap,
}

impl ClipFiles {
    /// `rig` with the clips of every file added in order (joints matched by name and by the
    /// kept maps), and what each file's retargeting matched and left out.
    pub fn add_to(&self, mut rig: Rig) -> Result<(Rig, Vec<RetargetReport>), RetargetError> {
        let mut reports = Vec::with_capacity(self.files.len());
        for file in &self.files {
            let (with_clips, report) = load_clips_into(rig, file, (&self.maps, &self.pairs), &self.options)?;
            rig = with_clips;
            reports.push(report);
        }
        Ok((rig, reports))
    }
}
