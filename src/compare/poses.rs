//! Both rigs posed at chosen times of a clip: the largest distance between matched skinned
//! vertices and between matched joints' world positions at each time.
//!
//! A re-export (another tool's glTF of an FBX, a compressed copy) can keep every key and still
//! deform differently: pivots, unit scales and skinning spaces show up only once the rig is
//! posed. Vertices are paired as [`super::compare`] matched them in the bind pose; joints by
//! name (see [`super::NodeMatch`]).

use super::{RigDiff, Sides, Thresholds, VertexRef};
use crate::anim::PoseBuffers;
use crate::rig::Rig;
use crate::skin::{SkinnedPose, SkinningMethod};
use glam::Vec3;
use serde::Serialize;
use std::collections::HashSet;

/// Which clip to pose and when.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoseRequest {
    /// A's clip by name; `None`: A's first animated clip.
    pub clip_a: Option<String>,
    /// B's clip by name; `None`: B's clip of the same name as A's, else B's first animated clip.
    pub clip_b: Option<String>,
    /// Times in A's clip, in seconds; B is posed at the same times of its clip.
    pub times: Vec<f32>,
    /// Also this many times spread evenly from the clip's start to its end (1: the start).
    pub evenly: usize,
    /// Match vertices only where both files draw them at the start of their clips, not in the
    /// bind pose (for files whose bind spaces differ mesh by mesh).
    pub match_at_start: bool,
    /// B is posed this many seconds later in its clip than A (a re-export that moved the clip's
    /// start, as Blender's FBX import does by one frame).
    pub shift_b: f32,
}

/// Why the poses could not be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PoseError {
    #[error("{file} has no clip named '{name}' (it has: {available})")]
    NoSuchClip {
        file: char,
        name: String,
        available: String,
    },
    #[error("{file} has no animated clip to pose")]
    NoAnimatedClip { file: char },
    #[error("the time {0} s is not a finite number")]
    BadTime(f32),
    #[error("the shift of B's clip, {0} s, is not a finite number")]
    BadShift(f32),
}

/// The two rigs' differences at each requested time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoseDiff {
    pub clip_a: String,
    pub clip_b: String,
    pub duration_a: f32,
    pub duration_b: f32,
    /// How much later in its clip B was posed (see [`PoseRequest::shift_b`]).
    pub shift_b: f32,
    /// Vertex pairs and joint pairs compared at each time.
    pub compared_vertices: usize,
    /// How many of the vertex pairs were matched where both files draw them at the start of
    /// their clips, the bind-pose matching having left their vertices without a match.
    pub matched_at_start: usize,
    /// Vertices of either file in no pair: they are not measured.
    pub unpaired_vertices: usize,
    pub compared_joints: usize,
    pub times: Vec<PoseAt>,
}

impl PoseDiff {
    /// Whether some distance, relative to the rig's size, is over `position`.
    pub fn differs(&self, position: f32) -> bool {
        self.times
            .iter()
            .any(|t| t.vertex_relative > position || t.joint_relative > position)
    }
}

/// The largest distances at one time, in the rigs' units (metres for glTF and converted FBX)
/// and relative to A's rest pose size ([`RigDiff::size`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoseAt {
    pub time: f32,
    pub vertex_distance: f32,
    pub vertex_relative: f32,
    /// The pair of vertices that far apart (none without a matched vertex).
    pub worst_vertex_a: Option<VertexRef>,
    pub worst_vertex_b: Option<VertexRef>,
    pub joint_distance: f32,
    pub joint_relative: f32,
    pub worst_joint: Option<String>,
}

/// Whether `clip` of `rig` moves anything (a node or a morph weight).
fn is_animated(rig: &Rig, clip: usize) -> bool {
    !rig.clips[clip].channels.is_empty() || rig.morphs.channels.iter().any(|c| c.clip == clip)
}

fn find_clip(rig: &Rig, file: char, name: &str) -> Result<usize, PoseError> {
    rig.clips
        .iter()
        .position(|c| c.name == name)
        .ok_or_else(|| PoseError::NoSuchClip {
            file,
            name: name.to_string(),
            available: rig
                .clips
                .iter()
                .map(|c| format!("'{}'", c.name))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

fn first_animated(rig: &Rig, file: char) -> Result<usize, PoseError> {
    (0..rig.clips.len())
        .find(|&c| is_animated(rig, c))
        .ok_or(PoseError::NoAnimatedClip { file })
}

/// The clips `request` names, as (A's clip, B's clip).
fn chosen_clips(a: &Rig, b: &Rig, request: &PoseRequest) -> Result<(usize, usize), PoseError> {
    let clip_a = match &request.clip_a {
        Some(name) => find_clip(a, 'A', name)?,
        None => first_animated(a, 'A')?,
    };
    let clip_b = match &request.clip_b {
        Some(name) => find_clip(b, 'B', name)?,
        None => match b.clips.iter().position(|c| c.name == a.clips[clip_a].name) {
            Some(c) => c,
            None => first_animated(b, 'B')?,
        },
    };
    Ok((clip_a, clip_b))
}

/// The requested times, then the evenly spread ones, in the order given.
fn times_of(request: &PoseRequest, duration: f32) -> Result<Vec<f32>, PoseError> {
    if let Some(&bad) = request.times.iter().find(|t| !t.is_finite()) {
        return Err(PoseError::BadTime(bad));
    }
    let duration = if duration.is_finite() { duration.max(0.0) } else { 0.0 };
    let spread = (0..request.evenly).map(|i| match request.evenly {
        1 => 0.0,
        n => duration * i as f32 / (n - 1) as f32,
    });
    Ok(request.times.iter().copied().chain(spread).collect())
}

/// The vertex pairs to measure: every pair the bind-pose matching found (from A's side and from
/// B's: B's seams split vertices A keeps whole; none when `only_at_start`), then, for vertices
/// it left without a match, pairs matched where both files draw them at the start of their
/// clips. Each pair once; the
/// second number is how many came from the clip's start.
fn vertex_pairs(
    sides: &Sides,
    diff: &RigDiff,
    start: (&Posed, &Posed),
    only_at_start: bool,
) -> (Vec<(VertexRef, VertexRef)>, usize) {
    let mut pairs = if only_at_start {
        Vec::new()
    } else {
        diff.weights.pairs.clone()
    };
    pairs.sort_unstable_by_key(|&(a, b)| pair_key(a, b));
    pairs.dedup_by_key(|&mut (a, b)| pair_key(a, b));
    let key = |v: &VertexRef| (v.instance, v.primitive_index, v.vertex);
    let paired_a: HashSet<_> = pairs.iter().map(|(va, _)| key(va)).collect();
    let paired_b: HashSet<_> = pairs.iter().map(|(_, vb)| key(vb)).collect();
    if paired_a.len() == sides.a.vertex_count() && paired_b.len() == sides.b.vertex_count() {
        return (pairs, 0);
    }
    // A pair with both vertices matched in the bind pose is not added again.
    let mut more: Vec<_> = super::vertices::drawn_pairs(sides, start.0.drawn(), start.1.drawn())
        .into_iter()
        .filter(|(va, vb)| !paired_a.contains(&key(va)) || !paired_b.contains(&key(vb)))
        .collect();
    more.sort_unstable_by_key(|&(a, b)| pair_key(a, b));
    more.dedup_by_key(|&mut (a, b)| pair_key(a, b));
    let from_start = more.len();
    pairs.extend(more);
    (pairs, from_start)
}

fn pair_key(a: VertexRef, b: VertexRef) -> (usize, usize, usize, usize, usize, usize) {
    (
        a.instance,
        a.primitive_index,
        a.vertex,
        b.instance,
        b.primitive_index,
        b.vertex,
    )
}

/// One rig posed: joint world matrices and skinned vertices.
struct Posed {
    pose: PoseBuffers,
    skinned: SkinnedPose,
}

impl Posed {
    fn new(rig: &Rig) -> Posed {
        Posed {
            pose: PoseBuffers::new(rig),
            skinned: SkinnedPose::new(rig),
        }
    }

    fn drawn(&self) -> super::vertices::Drawn<'_> {
        super::vertices::Drawn {
            pose: &self.pose,
            skinned: &self.skinned,
        }
    }

    fn evaluate(&mut self, rig: &Rig, clip: usize, time: f32) {
        self.pose.evaluate(rig, Some(clip), time);
        self.skinned.skin(rig, &self.pose, SkinningMethod::Lbs);
    }

    /// Where vertex `v` is drawn in the world (`None` when its indices name nothing).
    fn vertex(&self, rig: &Rig, v: &VertexRef) -> Option<Vec3> {
        let k = v.primitive_index;
        let p = *self.skinned.positions(rig, v.instance, k).get(v.vertex)?;
        Some(self.pose.instance_world(rig, v.instance).transform_point3(p))
    }
}

/// Whether `distance` is past `worst`; a NaN distance (a broken matrix) is the worst there is.
fn is_farther(distance: f32, worst: f32) -> bool {
    distance.is_nan() || distance > worst
}

/// [`compare`](super::compare), and with `request` both rigs posed at its times
/// ([`compare_poses`]): vertices or joints posed farther apart than the position threshold make
/// the rigs different.
pub fn compare_with_poses(
    a: &Rig,
    b: &Rig,
    thresholds: &Thresholds,
    request: Option<&PoseRequest>,
) -> Result<(RigDiff, Option<PoseDiff>), PoseError> {
    let mut diff = super::compare(a, b, thresholds);
    let poses = (request.map(|request| compare_poses(a, b, &diff, request))).transpose()?;
    if poses.as_ref().is_some_and(|p| p.differs(thresholds.position)) {
        diff.identical = false;
    }
    Ok((diff, poses))
}

/// Poses A and B at the times `request` asks for and measures how far apart they are.
pub fn compare_poses(a: &Rig, b: &Rig, diff: &RigDiff, request: &PoseRequest) -> Result<PoseDiff, PoseError> {
    let (clip_a, clip_b) = chosen_clips(a, b, request)?;
    let times = times_of(request, a.clips[clip_a].duration)?;
    let shift = request.shift_b;
    if !shift.is_finite() {
        return Err(PoseError::BadShift(shift));
    }
    let nodes = super::NodeMatch::new(a, b);
    let thresholds = super::Thresholds::default();
    let sides = Sides {
        a,
        b,
        nodes: &nodes,
        size: diff.size,
        bind_size: diff.bind_size,
        thresholds: &thresholds,
    };
    let joints = sides.matched_joints();
    let (mut posed_a, mut posed_b) = (Posed::new(a), Posed::new(b));
    posed_a.evaluate(a, clip_a, 0.0);
    posed_b.evaluate(b, clip_b, shift);
    let (pairs, matched_at_start) = vertex_pairs(&sides, diff, (&posed_a, &posed_b), request.match_at_start);
    let key = |v: &VertexRef| (v.instance, v.primitive_index, v.vertex);
    let paired_a: HashSet<_> = pairs.iter().map(|(va, _)| key(va)).collect();
    let paired_b: HashSet<_> = pairs.iter().map(|(_, vb)| key(vb)).collect();
    let unpaired = a.vertex_count() - paired_a.len() + b.vertex_count() - paired_b.len();
    let size = if diff.size > 0.0 { diff.size } else { 1.0 };
    let mut result = PoseDiff {
        clip_a: a.clips[clip_a].name.clone(),
        clip_b: b.clips[clip_b].name.clone(),
        duration_a: a.clips[clip_a].duration,
        duration_b: b.clips[clip_b].duration,
        shift_b: shift,
        compared_vertices: pairs.len(),
        matched_at_start,
        unpaired_vertices: unpaired,
        compared_joints: joints.len(),
        times: Vec::with_capacity(times.len()),
    };
    for time in times {
        posed_a.evaluate(a, clip_a, time);
        posed_b.evaluate(b, clip_b, time + shift);
        let mut at = PoseAt {
            time,
            vertex_distance: 0.0,
            vertex_relative: 0.0,
            worst_vertex_a: None,
            worst_vertex_b: None,
            joint_distance: 0.0,
            joint_relative: 0.0,
            worst_joint: None,
        };
        for (va, vb) in &pairs {
            let (Some(pa), Some(pb)) = (posed_a.vertex(a, va), posed_b.vertex(b, vb)) else {
                continue;
            };
            let distance = pa.distance(pb);
            if at.worst_vertex_a.is_none() || is_farther(distance, at.vertex_distance) {
                at.vertex_distance = distance;
                at.worst_vertex_a = Some(*va);
                at.worst_vertex_b = Some(*vb);
            }
        }
        for &(n, m) in &joints {
            let distance = (posed_a.pose.worlds[n].w_axis - posed_b.pose.worlds[m].w_axis).length();
            if at.worst_joint.is_none() || is_farther(distance, at.joint_distance) {
                at.joint_distance = distance;
                at.worst_joint = Some(super::node_name(a, n));
            }
        }
        at.vertex_relative = at.vertex_distance / size;
        at.joint_relative = at.joint_distance / size;
        result.times.push(at);
    }
    Ok(result)
}
