//! Clips from another file, carried onto this rig's skeleton.
//!
//! Joints are paired by name ([`match_joints`]). Each paired joint's animated rotation is carried
//! as its change from the source's rest pose, in world space (turned to the way the target
//! character faces), onto the target's rest pose, then turned back into a local rotation parent
//! first, so different rest poses (T-pose and A-pose, other bone rolls) still give the same
//! motion. Only the motion root moves: its travel in world space, scaled by the ratio of the two
//! rigs' hip heights. A joint whose rest pose and whose
//! ancestors' rest poses are the same in both rigs takes the source's local transform as it is,
//! so two copies of one skeleton share clips unchanged. The result is baked at the source's key
//! times with the pose evaluation of [`crate::anim`].

mod matching;
mod morph;

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
}

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
                text += &format!(" ({})", clip.dropped_channels.join(", "));
            }
            if let Some(root) = &clip.root {
                text += &format!("; root {root} travel ×{:.3}", clip.root_scale);
            }
            text += "\n";
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
    aligned: Vec<bool>,
    source_rest: Pose,
    target_rest: Pose,
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
        let mut aligned = vec![false; target.nodes.len()];
        for (t, node) in target.nodes.iter().enumerate() {
            let Some(s) = source_of[t] else { continue };
            let parents_aligned = match (node.parent, source.nodes[s].parent) {
                (None, None) => true,
                (Some(tp), Some(sp)) => aligned[tp] && source_of[tp] == Some(sp),
                _ => false,
            };
            aligned[t] = parents_aligned && same_rest(&node.rest, &source.nodes[s].rest);
        }
        let (source_rest, target_rest) = (Pose::new(source), Pose::new(target));
        let facing = facing_turn(target, &source_of, &source_rest, &target_rest);
        Skeletons {
            facing,
            source_floor: floor(source, &source_rest),
            target_floor: floor(target, &target_rest),
            source,
            target,
            target_of: joints.target_of.clone(),
            source_of,
            aligned,
            source_rest,
            target_rest,
        }
    }
}

/// The turn about the vertical (Y) axis from the way the source character faces to the way
/// the target faces, so that a step forward stays a step forward: Soldier.glb is built facing
/// −Z, the other Mixamo rigs +Z. Facing is read from rest positions, which every exporter
/// agrees on (bone axes it does not): the horizontal direction from each matched `Right…`
/// joint to its `Left…` counterpart, summed. Identity when the rigs have no such pairs.
fn facing_turn(target: &Rig, source_of: &[Option<usize>], source_rest: &Pose, target_rest: &Pose) -> Quat {
    let matched: std::collections::HashMap<String, (usize, usize)> = source_of
        .iter()
        .enumerate()
        .filter_map(|(t, s)| Some((normalized_name(&target.nodes[t].name), (t, (*s)?))))
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

/// Carries clip `index` of `skeletons.source` onto the target.
fn retarget_clip(skeletons: &Skeletons, index: usize, options: &RetargetOptions) -> (Clip, ClipReport) {
    let (source, target) = (skeletons.source, skeletons.target);
    let clip = &source.clips[index];
    let target_of = |s: usize| skeletons.target_of.get(s).copied().flatten();
    let mut report = ClipReport {
        name: clip.name.clone(),
        root_scale: 1.0,
        ..ClipReport::default()
    };
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

    // The root: the source's motion root and its counterpart, with the ratio of hip heights.
    let root = motion_root(source, index).and_then(|s| Some((s, target_of(s)?)));
    if let Some((s, t)) = root {
        let source_height = skeletons.source_rest.worlds[s].w_axis.y - skeletons.source_floor;
        let target_height = skeletons.target_rest.worlds[t].w_axis.y - skeletons.target_floor;
        let ratio = target_height / source_height;
        report.root_scale = if ratio.is_finite() && ratio > 0.0 { ratio } else { 1.0 };
        report.root = Some(target.nodes[t].name.clone());
    }
    let root_copied = root.is_some_and(|(_, t)| skeletons.aligned[t] && report.root_scale == 1.0 && !options.in_place);

    // Which target properties the clip drives: rotations of joints whose source joint, or a
    // source joint between it and its matched ancestor, turns; the root's translation; and
    // whatever an aligned joint's source animates.
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
        let aligned = skeletons.aligned[t];
        for (property, driven) in [
            (
                Property::Translation,
                is_root || (aligned && animated[s][Property::Translation as usize]),
            ),
            (Property::Rotation, turns),
            (Property::Scale, aligned && animated[s][Property::Scale as usize]),
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
    for &time in &times {
        sample_clip(&source.nodes, Some(clip), time, &mut hints, &mut source_locals);
        source_pose.set(source, &source_locals);
        for (t, node) in target.nodes.iter().enumerate() {
            let parent_rotation = node.parent.map_or(Quat::IDENTITY, |p| target_rotations[p]);
            let local = &mut target_locals[t];
            *local = node.rest;
            if let Some(s) = skeletons.source_of[t] {
                if skeletons.aligned[t] {
                    *local = source_locals[s];
                } else {
                    // The source joint's turn from its rest, in world space, applied to the
                    // target joint's rest, and expressed in the target parent's posed frame.
                    let turn = skeletons.facing
                        * source_pose.rotations[s]
                        * skeletons.source_rest.rotations[s].conjugate()
                        * skeletons.facing.conjugate();
                    let world = turn * skeletons.target_rest.rotations[t];
                    local.rotation = (parent_rotation.conjugate() * world).normalize();
                }
            }
            target_rotations[t] = parent_rotation * local.rotation;
        }
        if let Some((s, t)) = root.filter(|_| !root_copied) {
            // The parent's world matrix does not depend on the root's own translation.
            local_to_world(&target.nodes, &target_locals, &mut target_worlds);
            let mut travel = skeletons.facing
                * (source_pose.worlds[s].w_axis - skeletons.source_rest.worlds[s].w_axis).truncate()
                * report.root_scale;
            if options.in_place {
                travel.x = 0.0;
                travel.z = 0.0;
            }
            let place = skeletons.target_rest.worlds[t].w_axis.truncate() + travel;
            let parent = target.nodes[t].parent.map_or(Mat4::IDENTITY, |p| target_worlds[p]);
            target_locals[t].translation = parent.inverse().transform_point3(place);
        }
        for value in &mut baked {
            let local = &target_locals[value.node];
            value.values.push(match value.property {
                Property::Translation => local.translation.extend(0.0),
                Property::Rotation => Vec4::from(local.rotation),
                Property::Scale => local.scale.extend(0.0),
            });
        }
    }

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
