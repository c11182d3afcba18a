//! Clips from another file, carried onto this rig's skeleton.
//!
//! Joints are paired by name ([`match_joints`]). The target is first turned into the source's
//! rest pose, bone by bone and parents first (its *retarget pose*, see `alignment`); each
//! paired joint's animated rotation is then carried as its change from the source's rest, in
//! world space (turned to the way the target character faces), onto that retarget pose, and
//! turned back into a local rotation parent first. Different rest poses (T-pose and A-pose,
//! other bone rolls) so give the same limb directions as the source's. Only the motion root
//! moves: its travel in world space, scaled by the ratio of the two rigs' hip heights. A joint
//! whose rest pose and whose ancestors' rest poses are the same in both rigs takes the source's
//! local transform as it is, so two copies of one skeleton share clips unchanged. The result is
//! baked at the source's key times with the pose evaluation of [`crate::anim`].

mod alignment;
mod bake;
mod humanoid;
mod limbs;
mod matching;
mod morph;
pub mod pose_copy;
mod report;
mod vrma;

pub use alignment::{DirectionPair, JointDirections, align};
use bake::retarget_clip;
pub use humanoid::{bone_by_name, chain_end_for_pick, human_bones};
pub use limbs::LimbError;
pub use report::{ClipReport, RetargetReport};
pub use vrma::gaze_turn;

pub use matching::{
    JointMap, JointMaps, JointMatch, SkeletonSignature, match_joints, name_without_suffix, normalized_name,
};

use crate::anim::local_to_world;
use crate::rig::{Clip, LoadOptions, MorphChannel, Rig, RigError, Trs};
use glam::{Mat4, Quat, Vec3};
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
    /// How the clip files are read (a BVH file's unit).
    pub read: LoadOptions,
}

impl Default for RetargetOptions {
    fn default() -> Self {
        RetargetOptions {
            in_place: false,
            resample_rate: 30.0,
            read: LoadOptions::default(),
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
    /// Lowest height of the reported joints at rest (the ground hip heights are measured from),
    /// the target's in its retarget pose.
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
        // The hip heights compared are those of the two rigs standing in the same pose: legs
        // spread or bent at rest raise the target's feet, which says nothing of its size.
        let mut standing = Pose::new(target);
        standing.set(target, &skeletons.retarget_locals());
        skeletons.target_floor = floor(target, &standing);
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
        let human = human_bones(target);
        let turns_freely = |node: usize| {
            (human[node].as_deref()).is_some_and(|bone| BALL_JOINTS.iter().any(|ball| bone.ends_with(ball)))
        };
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
            // The next bone along the chain, rigid with this joint until its own turn; no bend
            // plane where the child is a ball joint, whose rest angle is a pose: a shoulder's
            // arm hangs below it in an A-pose and above it in a T-pose, and matching those
            // would roll the shoulder half a turn about its own bone.
            let next = self.bones[child]
                .filter(|_| !turns_freely(child))
                .map(|(grandchild, source_grandchild)| DirectionPair {
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

/// The humanoid joints that turn freely about every axis (`leftUpperArm`, `rightUpperLeg`, …).
const BALL_JOINTS: [&str; 2] = ["UpperArm", "UpperLeg"];

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
        .map(|index| {
            let (mut clip, mut report) = retarget_clip(&skeletons, index, options);
            vrma::drive_gaze(&skeletons, index, &mut clip, &mut report);
            (clip, report)
        })
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

/// A clip file's clips carried onto a rig but not yet added to it: what adding them as one edit
/// of a document puts in (see [`CarriedClips::add_to`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CarriedClips {
    /// The file the clips come from.
    pub origin: PathBuf,
    /// Bound to the rig's nodes, named as in the file.
    pub clips: Vec<Clip>,
    /// Morph weights following meshes whose targets share names, their `clip` counted from the
    /// first carried clip.
    pub morph_channels: Vec<MorphChannel>,
    /// What the carrying matched and left out (clip names as in the file).
    pub report: RetargetReport,
    /// How they were carried (with `report.map`, enough to carry them again the same way).
    pub options: RetargetOptions,
}

impl CarriedClips {
    /// Every clip of `source` carried onto `rig` (see [`retarget_clips`]), with morph weights.
    pub fn carry(rig: &Rig, source: &Rig, origin: &Path, map: &JointMap, options: &RetargetOptions) -> CarriedClips {
        let (clips, mut report) = retarget_clips(source, rig, map, options);
        let mut morph = morph::carry_morph_channels(source, rig, 0);
        let expressions = vrma::expression_channels(source, rig, 0, &mut report.clips);
        morph.channels.extend(expressions.channels);
        for ((clip_report, counts), more) in report.clips.iter_mut().zip(&morph.counts).zip(&expressions.counts) {
            clip_report.matched_morph_channels = counts.0 + more.0;
            clip_report.dropped_morph_channels = counts.1 + more.1;
        }
        CarriedClips {
            origin: origin.to_path_buf(),
            clips,
            morph_channels: morph.channels,
            report,
            options: *options,
        }
    }

    /// Appends the clips to `rig` (the rig they were carried onto, or one with the same nodes),
    /// each marked as coming from the file and renamed `name (file)` where the rig already has
    /// a clip of that name; the clips and the report here take the names the clips got.
    pub fn add_to(&mut self, rig: &mut Rig) {
        let first = rig.clips.len();
        rig.morphs
            .channels
            .extend(self.morph_channels.iter().map(|channel| MorphChannel {
                clip: first + channel.clip,
                ..channel.clone()
            }));
        let file = (self.origin.file_name()).map_or_else(
            || self.origin.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        );
        for (clip, clip_report) in self.clips.iter_mut().zip(&mut self.report.clips) {
            if rig.clips.iter().any(|c| c.name == clip.name) {
                clip.name = format!("{} ({file})", clip.name);
            }
            clip.source = Some(self.origin.clone());
            clip_report.name = clip.name.clone();
            // The import facts are per clip, index for index.
            if rig.facts.channels.len() == rig.clips.len() {
                rig.facts.channels.push(Vec::new());
            }
            rig.clips.push(clip.clone());
        }
        // Without skins, which nodes count as bones depends on the clips' channels.
        rig.hierarchy_cache = Default::default();
    }

    /// Loads `path` and carries its clips onto `rig` (see [`CarriedClips::carry`]), its joints
    /// matched with the map `maps` keeps for the two skeletons, if any, and over it the pairs
    /// of `pairs`.
    pub fn load(
        rig: &Rig,
        path: &Path,
        (maps, pairs): (&JointMaps, &JointMap),
        options: &RetargetOptions,
    ) -> Result<CarriedClips, RetargetError> {
        let source = crate::rig::load_file_with(path, &options.read).map_err(|source| RetargetError::Load {
            path: path.to_path_buf(),
            source,
        })?;
        if source.clips.is_empty() {
            return Err(RetargetError::NoClips {
                path: path.to_path_buf(),
            });
        }
        let mut map = maps.get(&JointMap::key(&source, rig)).cloned().unwrap_or_default();
        map.by_hand
            .extend(pairs.by_hand.iter().map(|(from, to)| (from.clone(), to.clone())));
        Ok(CarriedClips::carry(rig, &source, path, &map, options))
    }
}

/// `rig` with every clip of `source` carried onto it and appended (see [`CarriedClips`]).
pub fn with_clips_from(
    mut rig: Rig,
    source: &Rig,
    origin: &Path,
    map: &JointMap,
    options: &RetargetOptions,
) -> (Rig, RetargetReport) {
    let mut carried = CarriedClips::carry(&rig, source, origin, map, options);
    carried.add_to(&mut rig);
    (rig, carried.report)
}

/// Loads `path` and adds its clips to `rig` (see [`CarriedClips::load`]).
pub fn load_clips_into(
    mut rig: Rig,
    path: &Path,
    maps: (&JointMaps, &JointMap),
    options: &RetargetOptions,
) -> Result<(Rig, RetargetReport), RetargetError> {
    let mut carried = CarriedClips::load(&rig, path, maps, options)?;
    carried.add_to(&mut rig);
    Ok((rig, carried.report))
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
