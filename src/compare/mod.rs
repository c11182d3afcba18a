//! What changed between two files of the same rig: joints, bind and rest poses, vertices and
//! their weights, clips, materials and the report's findings.
//!
//! [`compare`] is a pure function of two loaded [`Rig`]s (no I/O, no GPU). Every part of the
//! result keeps the node, vertex and time it is about on both sides, worst first, so that a
//! list of differences can select what it names.
//!
//! Matching follows DESIGN.md ("Two documents"): joints by exact name (by path when names
//! repeat), vertices by bind position within a tolerance from the mesh's own vertex spacing,
//! clips by name.
//!
//! The feature's other parts are in the modules of their layers (see the crate's layers): the
//! comparison the viewer keeps (`viewer::Comparison`: the other side's document and playback,
//! following the active side), its drawing (`draw::compare`), the Compare window
//! (`ui::compare`); the text of `rigscope diff` is `output.rs` here (the command is
//! `commands/diff.rs`). This module uses none of them.

mod clips;
mod materials;
mod output;
mod poses;
mod progress;
mod skeleton;
mod vertices;

use crate::anim::{Bounds, PoseBuffers};
use crate::rig::Rig;
use crate::skin::{SkinnedPose, SkinningMethod, posed_bounds};
use glam::{Mat4, Vec3};
use serde::Serialize;
use std::collections::HashMap;

pub use clips::{ClipDiff, ClipStatus, JointError};
pub use materials::{FindingChange, MaterialChange, TextureChange};
pub use poses::{PoseAt, PoseDiff, PoseError, PoseRequest, compare_poses, compare_with_poses};
pub use progress::{CompareProgress, ProgressFn};
pub use skeleton::{JointChange, Reparented, SkeletonDiff, SkinRebase};
pub use vertices::{UnmatchedVertex, VertexChange, VertexRef, WeightsDiff};

/// Where two rigs may differ before they count as different.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    /// Largest joint or vertex position change, relative to the rig's size.
    pub position: f32,
    /// Largest joint rotation change, in degrees.
    pub rotation_degrees: f32,
    /// Largest weight difference of a vertex, ½ Σ|w − w′| (0 same, 1 disjoint).
    pub weight: f32,
    /// Largest change of a clip's duration, in seconds.
    pub duration: f32,
    /// Largest mean difference of a texture's pixels, as a fraction of full scale.
    pub texture: f32,
    /// Vertices match when their bind positions are closer than this fraction of the typical
    /// edge length of their primitive.
    pub vertex_match: f32,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            position: 2e-3,
            rotation_degrees: 1.0,
            weight: 0.02,
            duration: 1.0 / 120.0,
            texture: 0.02,
            vertex_match: 0.25,
        }
    }
}

/// Everything [`compare`] found.
#[derive(Debug, Clone, Serialize)]
pub struct RigDiff {
    /// True when the rigs agree within the thresholds.
    pub identical: bool,
    /// Diagonal of the bounding box of A's rest pose; joint positions in the rest pose and in
    /// clips are relative to it.
    pub size: f32,
    /// Diagonal of the bounding box of A's vertices in the bind pose (the meshes' own units);
    /// bind matrix and vertex position changes are relative to it.
    pub bind_size: f32,
    pub skeleton: SkeletonDiff,
    pub weights: WeightsDiff,
    /// Clips of A, then clips only B has; worst first.
    pub clips: Vec<ClipDiff>,
    pub materials: Vec<MaterialChange>,
    pub textures: Vec<TextureChange>,
    /// Report findings B has and A has not.
    pub findings_appeared: Vec<FindingChange>,
    /// Report findings A has and B has not.
    pub findings_disappeared: Vec<FindingChange>,
}

impl RigDiff {
    /// Whether any part differs beyond the thresholds (what `identical` is the negation of).
    fn differs(&self) -> bool {
        self.skeleton.differs()
            || self.weights.differs()
            || self.clips.iter().any(|c| c.status != ClipStatus::Same)
            || !self.materials.is_empty()
            || self.textures.iter().any(|t| t.changed)
            || self
                .findings_appeared
                .iter()
                .any(|f| f.severity == crate::report::Severity::Error)
    }
}

/// Compares rig `a` with rig `b` (see the module documentation).
pub fn compare(a: &Rig, b: &Rig, thresholds: &Thresholds) -> RigDiff {
    compare_with_progress(a, b, thresholds, &mut |_, _| {})
}

/// [`compare`], telling `progress` as each step starts (the skeleton, the vertices, each clip
/// of `a`, the materials and findings) what fraction is done and what the step does.
pub fn compare_with_progress(a: &Rig, b: &Rig, thresholds: &Thresholds, progress: &mut ProgressFn) -> RigDiff {
    let mut steps = progress::Steps::new(3 + a.clips.len(), progress);
    steps.start("comparing the skeletons");
    let nodes = NodeMatch::new(a, b);
    let (rest_a, rest_b) = (RestPose::new(a), RestPose::new(b));
    let size = rest_a.size;
    let bind_size = bind_size(a).unwrap_or(size);
    let sides = Sides {
        a,
        b,
        nodes: &nodes,
        size,
        bind_size,
        thresholds,
    };
    let skeleton = skeleton::compare_skeletons(&sides, &rest_a, &rest_b);
    steps.start("matching vertices and comparing weights");
    let weights = vertices::compare_vertices(&sides, &skeleton.rebases);
    let clips = clips::compare_clips(&sides, &mut |index, name| {
        steps.start(&format!("clip '{name}' ({} of {})", index + 1, a.clips.len()));
    });
    steps.start("comparing materials and report findings");
    let (materials, textures) = materials::compare_materials(a, b, thresholds);
    let (findings_appeared, findings_disappeared) = materials::compare_findings(a, b);
    steps.finish();
    let mut diff = RigDiff {
        identical: false,
        size,
        bind_size,
        skeleton,
        weights,
        clips,
        materials,
        textures,
        findings_appeared,
        findings_disappeared,
    };
    diff.identical = !diff.differs();
    diff
}

/// The two rigs and what every part of the comparison shares.
struct Sides<'a> {
    a: &'a Rig,
    b: &'a Rig,
    nodes: &'a NodeMatch,
    /// A's sizes (see [`RigDiff::size`] and [`RigDiff::bind_size`]).
    size: f32,
    bind_size: f32,
    thresholds: &'a Thresholds,
}

impl Sides<'_> {
    /// The joints of A that B has as joints too, as (A node, B node).
    fn matched_joints(&self) -> Vec<(usize, usize)> {
        let (joints_a, joints_b) = (&self.a.hierarchy().is_joint, &self.b.hierarchy().is_joint);
        (0..self.a.nodes.len())
            .filter(|&n| joints_a[n])
            .filter_map(|n| self.nodes.a_to_b[n].map(|m| (n, m)))
            .filter(|&(_, m)| joints_b[m])
            .collect()
    }
}

/// Which node of B each node of A is: the node of the same name when the name is unique in
/// both rigs, else the node at the same path of names from the root. Joints the file leaves
/// unnamed match the unnamed joint in the same place of the same skin.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeMatch {
    pub a_to_b: Vec<Option<usize>>,
    pub b_to_a: Vec<Option<usize>>,
}

impl NodeMatch {
    pub fn new(a: &Rig, b: &Rig) -> NodeMatch {
        let (names_a, names_b) = (name_counts(a), name_counts(b));
        let paths_b = node_paths(b);
        let mut by_path: HashMap<&str, Option<usize>> = HashMap::new();
        for (n, path) in paths_b.iter().enumerate().filter(|&(n, _)| is_named(b, n)) {
            // A path that repeats names no single node.
            by_path.entry(path).and_modify(|e| *e = None).or_insert(Some(n));
        }
        let by_name: HashMap<&str, usize> = b
            .nodes
            .iter()
            .enumerate()
            .filter(|&(n, node)| names_b[node.name.as_str()] == 1 && is_named(b, n))
            .map(|(n, node)| (node.name.as_str(), n))
            .collect();
        let paths_a = node_paths(a);
        let mut matches = NodeMatch {
            a_to_b: vec![None; a.nodes.len()],
            b_to_a: vec![None; b.nodes.len()],
        };
        for (n, node) in a.nodes.iter().enumerate().filter(|&(n, _)| is_named(a, n)) {
            let unique = names_a[node.name.as_str()] == 1;
            let found = match by_name.get(node.name.as_str()) {
                Some(&m) if unique => Some(m),
                _ => by_path.get(paths_a[n].as_str()).copied().flatten(),
            };
            if let Some(m) = found {
                matches.pair(n, m);
            }
        }
        for (skin_a, skin_b) in a.skins.iter().zip(&b.skins) {
            if skin_a.joints.len() != skin_b.joints.len() {
                continue;
            }
            for (&n, &m) in skin_a.joints.iter().zip(&skin_b.joints) {
                if n < a.nodes.len() && m < b.nodes.len() && !is_named(a, n) && !is_named(b, m) {
                    matches.pair(n, m);
                }
            }
        }
        matches
    }

    /// Pairs A's node `n` with B's node `m` unless either is paired already.
    fn pair(&mut self, n: usize, m: usize) {
        if self.a_to_b[n].is_none() && self.b_to_a[m].is_none() {
            self.a_to_b[n] = Some(m);
            self.b_to_a[m] = Some(n);
        }
    }
}

/// Whether the file names node `n` (the importer calls an unnamed node `node <its index>`).
fn is_named(rig: &Rig, n: usize) -> bool {
    let gltf_index = rig.facts.gltf_node.get(n).copied().unwrap_or(n);
    rig.nodes[n].name != format!("node {gltf_index}")
}

fn name_counts(rig: &Rig) -> HashMap<&str, usize> {
    let mut counts = HashMap::new();
    for node in &rig.nodes {
        *counts.entry(node.name.as_str()).or_insert(0) += 1;
    }
    counts
}

/// Each node's names from its root down to itself, joined by `/`.
fn node_paths(rig: &Rig) -> Vec<String> {
    let mut paths: Vec<String> = Vec::with_capacity(rig.nodes.len());
    for node in &rig.nodes {
        // Parents come before their children, so the parent's path is already there.
        let path = match node.parent.and_then(|p| paths.get(p)) {
            Some(parent) => format!("{parent}/{}", node.name),
            None => node.name.clone(),
        };
        paths.push(path);
    }
    paths
}

/// A rig's rest pose: world matrices of its nodes and its size.
struct RestPose {
    worlds: Vec<Mat4>,
    size: f32,
}

impl RestPose {
    fn new(rig: &Rig) -> RestPose {
        let pose = PoseBuffers::new(rig);
        let mut skinned = SkinnedPose::new(rig);
        skinned.skin(rig, &pose, SkinningMethod::Lbs);
        let mut size = posed_bounds(rig, &pose, &skinned).size();
        if !(size.is_finite() && size > 0.0) {
            // No drawn vertices: the joints' spread, else unit size.
            let mut joints = Bounds::EMPTY;
            for world in &pose.worlds {
                joints.include(world.w_axis.truncate());
            }
            size = Some(joints.size()).filter(|s| s.is_finite() && *s > 0.0).unwrap_or(1.0);
        }
        RestPose {
            worlds: pose.worlds,
            size,
        }
    }
}

/// Where a vertex of instance `instance` of `rig` is in the bind pose: skinned vertices are
/// there already (glTF ignores a skinned mesh's node transform); unskinned ones are placed by
/// their node in the rest pose.
fn bind_placement(rig: &Rig, rest: &PoseBuffers, instance: usize) -> Mat4 {
    match rig.instances[instance].skin {
        Some(_) => Mat4::IDENTITY,
        None => rest.instance_world(rig, instance),
    }
}

/// Diagonal of the bounding box of `rig`'s vertices in the bind pose; `None` without any.
fn bind_size(rig: &Rig) -> Option<f32> {
    let rest = PoseBuffers::new(rig);
    let mut bounds = Bounds::EMPTY;
    for (i, instance) in rig.instances.iter().enumerate() {
        let place = bind_placement(rig, &rest, i);
        let Some(mesh) = rig.meshes.get(instance.mesh) else {
            continue;
        };
        for &p in mesh.primitives.iter().flat_map(|p| &p.positions) {
            let p = place.transform_point3(p);
            if p.is_finite() {
                bounds.include(p);
            }
        }
    }
    Some(bounds.size()).filter(|s| *s > 0.0)
}

/// How far apart two placements are: their origins' distance relative to `size`, and the
/// angle between their rotations in degrees.
fn placement_change(a: &Mat4, b: &Mat4, size: f32) -> (f32, f32) {
    let distance = (a.w_axis.truncate() - b.w_axis.truncate()).length() / size;
    (distance, rotation_between(a, b))
}

/// Angle of the rotation taking `a`'s axes to `b`'s (scale removed), in degrees.
pub fn rotation_between(a: &Mat4, b: &Mat4) -> f32 {
    let rotation = |m: &Mat4| {
        let axis = |v: Vec3| v.try_normalize().unwrap_or(Vec3::ZERO);
        glam::Quat::from_mat3(&glam::Mat3::from_cols(
            axis(m.x_axis.truncate()),
            axis(m.y_axis.truncate()),
            axis(m.z_axis.truncate()),
        ))
        .normalize()
    };
    // atan2 of the relative quaternion keeps hundredths of a degree that acos(w) rounds away.
    let relative = rotation(a).conjugate() * rotation(b);
    let degrees = (2.0 * relative.xyz().length().atan2(relative.w.abs())).to_degrees();
    if degrees.is_finite() { degrees } else { 180.0 }
}

/// The name of node `node` of `rig`, or `?` when there is none.
fn node_name(rig: &Rig, node: usize) -> String {
    rig.nodes.get(node).map_or_else(|| "?".to_string(), |n| n.name.clone())
}

/// Keeps at most this many entries of a list that can be as long as a mesh (the count stays
/// exact).
pub const MAX_LISTED: usize = 1000;
