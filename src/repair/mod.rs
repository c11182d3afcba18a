//! Weight repairs: pure functions of a rig's skin weights, each giving the repaired influences
//! of every skinned primitive and how many of its vertices changed, and [`apply`], which runs
//! the repairs a [`RepairPlan`] asks for on a copy of the rig.
//!
//! Order in [`apply`]: fill, mirror, prune, limit, normalize — weights are first given where
//! there are none and copied across, then trimmed, then made to sum to 1.

mod least_deformation;
mod options;
pub use least_deformation::{EXTRA_CANDIDATES, PosePalettes, limit_least_deformation};
pub use options::{REPAIRS, RepairOptions};

use crate::audit::symmetry::{Mirrors, NO_MIRROR, NoMirror, SymmetryOptions, mirrors};
use crate::audit::{BindSpace, VertexRef, bind_spaces, joint_parents};
use crate::rig::{Influences, Rig};
use glam::Vec3;
use serde::Serialize;

/// Influence slots a vertex may have (two sets of four, `JOINTS_0`/`JOINTS_1`); vertices of
/// primitives with more sets are left as they are.
const MAX_ENTRIES: usize = 8;

/// How far from 1 a float weight sum may be and count as normalized: inside the 2e-7 per weight
/// the Khronos validator allows. Normalized integer weights may be off by half their step.
pub const FLOAT_SUM_TOLERANCE: f64 = 1e-7;

/// The default pruning threshold: one step of a normalized u8 weight.
pub const DEFAULT_PRUNE: f32 = 1.0 / 255.0;

/// The default influence limit (what most engines skin with).
pub const DEFAULT_LIMIT: usize = 4;

/// Which way [`mirror`] copies weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum MirrorDirection {
    /// The left side's weights, joints swapped, replace the right side's.
    LeftToRight,
    RightToLeft,
}

/// What [`fill`] does with vertices that have no weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FillMode {
    /// Weight 1 on the joint whose bone is nearest in the bind pose.
    NearestBone,
    /// Only list them.
    ListOnly,
}

/// The repairs to run; `Default` runs none.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct RepairPlan {
    pub normalize: bool,
    /// Keep at most this many influences per vertex.
    pub limit: Option<usize>,
    /// Drop weights below this.
    pub prune: Option<f32>,
    pub fill: Option<FillMode>,
    pub mirror: Option<MirrorDirection>,
}

impl RepairPlan {
    pub fn is_empty(&self) -> bool {
        *self == RepairPlan::default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Repair {
    Normalize,
    Limit,
    Prune,
    Fill,
    Mirror,
}

/// How many vertices of one primitive a repair changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PrimitiveChanges {
    pub mesh: usize,
    /// Index into `Mesh::primitives`.
    pub primitive: usize,
    pub gltf_primitive: usize,
    pub changed: usize,
}

/// What one repair did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepairCounts {
    pub repair: Repair,
    /// Every skinned primitive, changed or not.
    pub primitives: Vec<PrimitiveChanges>,
    /// Vertices the repair could not fix and left as they were (all weights zero for normalize,
    /// limit and prune; no weight, with fill listing only; no joint to copy through for mirror),
    /// at most [`MAX_LISTED`].
    pub left: Vec<VertexRef>,
    /// How many there are.
    pub left_count: usize,
    /// Why the repair did nothing at all, when it could not run.
    pub note: Option<String>,
}

impl RepairCounts {
    fn new(repair: Repair) -> RepairCounts {
        RepairCounts {
            repair,
            primitives: Vec::new(),
            left: Vec::new(),
            left_count: 0,
            note: None,
        }
    }

    /// Vertices changed in every primitive.
    pub fn changed(&self) -> usize {
        self.primitives.iter().map(|p| p.changed).sum()
    }

    fn leave(&mut self, at: VertexRef) {
        self.left_count += 1;
        if self.left.len() < MAX_LISTED {
            self.left.push(at);
        }
    }
}

/// How many vertices a repair lists as left unrepaired (the count is exact).
pub const MAX_LISTED: usize = 1000;

/// The repaired influences of every primitive (per mesh, per primitive; `None` where the rig
/// has none or they were not repaired) and what the repair did.
#[derive(Debug, Clone)]
pub struct Repaired {
    pub influences: Vec<Vec<Option<Influences>>>,
    pub counts: RepairCounts,
}

/// What [`apply`] did, one entry per repair run, in the order run.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RepairSummary {
    pub repairs: Vec<RepairCounts>,
}

impl RepairSummary {
    /// Vertices changed by any repair (a vertex two repairs changed counts twice).
    pub fn changed(&self) -> usize {
        self.repairs.iter().map(RepairCounts::changed).sum()
    }
}

/// One skinned primitive whose influences cover every vertex.
struct Target<'a> {
    mesh: usize,
    primitive: usize,
    gltf_primitive: usize,
    skin: usize,
    positions: &'a [Vec3],
    influences: &'a Influences,
}

impl Target<'_> {
    fn at(&self, v: usize) -> VertexRef {
        VertexRef {
            mesh: self.mesh,
            primitive: self.gltf_primitive,
            vertex: v as u32,
        }
    }
}

/// Each skinned primitive once (with the first skin that draws it).
fn targets<'a>(spaces: &'a [BindSpace<'a>]) -> Vec<Target<'a>> {
    let mut seen = std::collections::HashSet::new();
    (spaces.iter())
        .flat_map(|space| space.parts.iter().map(move |part| (space.skin, part)))
        .filter(|(_, part)| seen.insert((part.mesh, part.primitive)))
        .map(|(skin, part)| Target {
            mesh: part.mesh,
            primitive: part.primitive,
            gltf_primitive: part.gltf_primitive,
            skin,
            positions: part.positions,
            influences: part.influences,
        })
        .collect()
}

/// One vertex's influences: up to [`MAX_ENTRIES`] (joint, weight) entries.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Entries {
    entries: [(u16, f32); MAX_ENTRIES],
    len: usize,
}

impl Entries {
    fn read(influences: &Influences, v: usize) -> Option<Entries> {
        let mut out = Entries {
            entries: [(0, 0.0); MAX_ENTRIES],
            len: 0,
        };
        if influences.sets * 4 > MAX_ENTRIES {
            return None;
        }
        for e in influences.of_vertex(v) {
            out.entries[out.len] = e;
            out.len += 1;
        }
        Some(out)
    }

    fn write(&self, influences: &mut Influences, v: usize) {
        let sets = influences.sets;
        for k in 0..sets * 4 {
            let (j, w) = if k < self.len { self.entries[k] } else { (0, 0.0) };
            influences.joints[v * sets + k / 4][k % 4] = j;
            influences.weights[v * sets + k / 4][k % 4] = w;
        }
    }

    fn slice(&self) -> &[(u16, f32)] {
        &self.entries[..self.len]
    }

    fn slice_mut(&mut self) -> &mut [(u16, f32)] {
        &mut self.entries[..self.len]
    }

    /// Weights that are not finite or negative become 0 (with joint 0).
    fn clear_unusable(&mut self) {
        for e in self.slice_mut() {
            if !(e.1.is_finite() && e.1 >= 0.0) {
                *e = (0, 0.0);
            }
        }
    }

    fn sum(&self) -> f64 {
        (self.slice().iter())
            .map(|e| e.1)
            .filter(|w| w.is_finite() && *w > 0.0)
            .map(f64::from)
            .sum()
    }

    fn nonzero(&self) -> usize {
        self.slice().iter().filter(|e| e.1 > 0.0).count()
    }

    /// Divides every weight by the sum, then gives what rounding to f32 left over to the
    /// largest weight, so that the f32 weights sum to 1 as closely as f32 allows; `false`
    /// (nothing done) when the sum is 0.
    fn renormalize(&mut self) -> bool {
        let sum = self.sum();
        if sum <= 0.0 {
            return false;
        }
        for e in self.slice_mut() {
            e.1 = (f64::from(e.1) / sum) as f32;
        }
        let left_over = 1.0 - self.sum();
        if let Some(largest) = self.slice_mut().iter_mut().max_by(|a, b| a.1.total_cmp(&b.1)) {
            largest.1 = (f64::from(largest.1) + left_over) as f32;
        }
        true
    }

    /// Largest weight first (then lowest joint), zero entries last.
    fn sort_by_weight(&mut self) {
        self.slice_mut().sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    }

    /// Whether `other` gives every joint the same weight (to `tolerance`), in any slot order.
    fn same_weights(&self, other: &Entries, tolerance: f32) -> bool {
        let weight_of = |entries: &Entries, joint: u16| -> f32 {
            (entries.slice().iter())
                .filter(|e| e.0 == joint && e.1 > 0.0)
                .map(|e| e.1)
                .sum()
        };
        (self.slice().iter().chain(other.slice()))
            .filter(|e| e.1 > 0.0)
            .all(|e| (weight_of(self, e.0) - weight_of(other, e.0)).abs() <= tolerance)
    }
}

/// Runs `repair` on every vertex of every skinned primitive: `repair` gets the target, the
/// vertex and its entries, and returns whether it changed them (`None`: left as it was and
/// listed).
fn per_vertex(
    rig: &Rig,
    kind: Repair,
    mut repair: impl FnMut(&Target, usize, &mut Entries) -> Option<bool>,
) -> Repaired {
    let spaces = bind_spaces(rig, &mut Vec::new());
    let mut influences: Vec<Vec<Option<Influences>>> =
        (rig.meshes.iter()).map(|m| vec![None; m.primitives.len()]).collect();
    let mut counts = RepairCounts::new(kind);
    for target in targets(&spaces) {
        let mut repaired = target.influences.clone();
        let mut changed = 0;
        for v in 0..target.positions.len() {
            let Some(mut entries) = Entries::read(target.influences, v) else {
                continue;
            };
            match repair(&target, v, &mut entries) {
                Some(true) => {
                    entries.write(&mut repaired, v);
                    changed += 1;
                }
                Some(false) => {}
                None => counts.leave(target.at(v)),
            }
        }
        counts.primitives.push(PrimitiveChanges {
            mesh: target.mesh,
            primitive: target.primitive,
            gltf_primitive: target.gltf_primitive,
            changed,
        });
        influences[target.mesh][target.primitive] = Some(repaired);
    }
    Repaired { influences, counts }
}

/// Every vertex's weights divided by their sum, where the sum is off 1 by more than
/// [`FLOAT_SUM_TOLERANCE`] (half a step for normalized integers) or a weight is negative or not finite (those become 0). Vertices whose
/// weights are all zero are left and listed.
pub fn normalize(rig: &Rig) -> Repaired {
    per_vertex(rig, Repair::Normalize, |target, _, entries| {
        let quantum = (rig.facts.primitives.get(target.mesh))
            .and_then(|primitives| primitives.get(target.primitive))
            .map_or(0.0, |facts| facts.weight_quantum);
        let tolerance = if quantum > 0.0 {
            0.5 * f64::from(quantum)
        } else {
            FLOAT_SUM_TOLERANCE
        };
        let before = *entries;
        entries.clear_unusable();
        let sum = entries.sum();
        if sum <= 0.0 {
            return None;
        }
        if (sum - 1.0).abs() > tolerance {
            entries.renormalize();
        }
        Some(*entries != before)
    })
}

/// At most `limit` influences per vertex: the largest kept (moved to the first slots), the
/// rest dropped and the kept ones renormalized. Vertices with `limit` or fewer are untouched.
pub fn limit(rig: &Rig, limit: usize) -> Repaired {
    per_vertex(rig, Repair::Limit, |_, _, entries| {
        entries.clear_unusable();
        if entries.nonzero() <= limit {
            return Some(false);
        }
        entries.sort_by_weight();
        for e in &mut entries.slice_mut()[limit..] {
            *e = (0, 0.0);
        }
        entries.renormalize();
        Some(true)
    })
}

/// Weights below `epsilon` dropped and the rest renormalized. A vertex all of whose weights are
/// below `epsilon` keeps its largest.
pub fn prune(rig: &Rig, epsilon: f32) -> Repaired {
    per_vertex(rig, Repair::Prune, |_, _, entries| {
        entries.clear_unusable();
        let pruned = |w: f32| w > 0.0 && w < epsilon;
        if !entries.slice().iter().any(|e| pruned(e.1)) {
            return Some(false);
        }
        if entries.sum() <= 0.0 {
            return None;
        }
        entries.sort_by_weight();
        let keep_first = pruned(entries.entries[0].1) as usize;
        for e in &mut entries.slice_mut()[keep_first..] {
            if pruned(e.1) {
                *e = (0, 0.0);
            }
        }
        entries.renormalize();
        Some(true)
    })
}

/// Vertices with no weight (every weight zero, negative or not finite): with
/// [`FillMode::NearestBone`] weight 1 on the skin joint whose bone (the segment from the joint
/// to each child joint, or the joint's own position when it has none) is nearest in the bind
/// pose; with [`FillMode::ListOnly`] listed and left.
pub fn fill(rig: &Rig, mode: FillMode) -> Repaired {
    let spaces = bind_spaces(rig, &mut Vec::new());
    // Per skin: each bone as (joint index in the skin, start, end) in bind space.
    let bones: Vec<Vec<(u16, Vec3, Vec3)>> = (0..rig.skins.len())
        .map(|s| {
            let Some(space) = spaces.iter().find(|space| space.skin == s) else {
                return Vec::new();
            };
            let joints = &rig.skins[s].joints;
            let parents = joint_parents(rig, joints);
            let mut bones = Vec::new();
            for k in 0..joints.len().min(u16::MAX as usize) {
                let Some(head) = space.pivot(k) else { continue };
                let tails: Vec<Vec3> = (0..joints.len())
                    .filter(|&c| parents[c] == Some(k))
                    .filter_map(|c| space.pivot(c))
                    .collect();
                if tails.is_empty() {
                    bones.push((k as u16, head, head));
                }
                bones.extend(tails.into_iter().map(|tail| (k as u16, head, tail)));
            }
            bones
        })
        .collect();
    per_vertex(rig, Repair::Fill, |target, v, entries| {
        if entries.sum() > 0.0 {
            return Some(false);
        }
        let p = target.positions[v];
        let nearest = (bones[target.skin].iter())
            .map(|&(joint, a, b)| (distance_to_segment(p, a, b), joint))
            .min_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        match (mode, nearest) {
            (FillMode::NearestBone, Some((d, joint))) if d.is_finite() => {
                entries.slice_mut().fill((0, 0.0));
                entries.entries[0] = (joint, 1.0);
                Some(true)
            }
            _ => None,
        }
    })
}

fn distance_to_segment(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    let ab = b - a;
    let t = if ab.length_squared() > 0.0 {
        ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p - (a + t * ab)).length()
}

/// The weights of every vertex on the source side copied, left and right joints swapped, onto
/// its mirror vertex on the other side, through the symmetry check's exact vertex and joint
/// pairs ([`mirrors`]). Only vertices with a mirror change, and only when the copy differs;
/// vertices on the plane (their own mirror) are left as they are. A rig with no left/right
/// correspondence changes nothing and its note says why.
pub fn mirror(rig: &Rig, direction: MirrorDirection) -> Repaired {
    match mirrors(rig, &SymmetryOptions::default()) {
        Ok(correspondence) => mirror_through(rig, &correspondence, direction),
        Err(why) => {
            let mut repaired = per_vertex(rig, Repair::Mirror, |_, _, _| Some(false));
            repaired.counts.note = Some(mirror_note(why));
            repaired
        }
    }
}

fn mirror_note(why: NoMirror) -> String {
    format!("nothing mirrored: {why}")
}

/// [`mirror`] through a known correspondence.
pub fn mirror_through(rig: &Rig, correspondence: &Mirrors, direction: MirrorDirection) -> Repaired {
    let normal = Vec3::from(correspondence.plane.normal);
    let offset = correspondence.plane.offset;
    // The plane's normal faces the left joints.
    let receives = |p: Vec3| {
        let side = normal.dot(p) - offset;
        match direction {
            MirrorDirection::LeftToRight => side < 0.0,
            MirrorDirection::RightToLeft => side > 0.0,
        }
    };
    // The joint index in skin `to` of the mirror of joint `joint` of skin `from`.
    let mirrored_joint = |from: usize, to: usize, joint: u16| -> Option<u16> {
        let node = *rig.skins.get(from)?.joints.get(joint as usize)?;
        let target = correspondence.mirror_node(node);
        let at = rig.skins.get(to)?.joints.iter().position(|&n| n == target)?;
        u16::try_from(at).ok()
    };
    per_vertex(rig, Repair::Mirror, |target, v, entries| {
        if !receives(target.positions[v]) {
            return Some(false);
        }
        let Some(m) =
            (correspondence.primitives.iter()).find(|m| m.mesh == target.mesh && m.primitive == target.primitive)
        else {
            return Some(false);
        };
        let w = m.vertices[v];
        if w == NO_MIRROR {
            return Some(false);
        }
        let source = rig.meshes[m.mirror_mesh].primitives[m.mirror_primitive]
            .influences
            .as_ref()
            .and_then(|i| Entries::read(i, w as usize));
        let mut source = source?;
        if m.mirror_mesh == m.mesh
            && m.mirror_primitive == m.primitive
            && target.positions[w as usize] == target.positions[v]
        {
            return Some(false);
        }
        source.clear_unusable();
        let mut copy = Entries {
            entries: [(0, 0.0); MAX_ENTRIES],
            len: entries.len,
        };
        let mut used = 0;
        source.sort_by_weight();
        for &(joint, weight) in source.slice().iter().filter(|e| e.1 > 0.0) {
            let mirrored = mirrored_joint(m.mirror_skin, m.skin, joint)?;
            if used < copy.len {
                copy.entries[used] = (mirrored, weight);
                used += 1;
            }
        }
        if used < source.nonzero() {
            // More influences than the receiving vertex has slots: the smallest were dropped.
            copy.renormalize();
        }
        if used == 0 || copy.same_weights(entries, 1e-6) {
            return Some(false);
        }
        *entries = copy;
        Some(true)
    })
}

/// Runs the repairs of `plan` (fill, mirror, prune, limit, normalize) on a copy of `rig`, the
/// limit keeping each vertex's largest weights ([`limit`]).
pub fn apply(rig: &Rig, plan: &RepairPlan) -> (Rig, RepairSummary) {
    apply_limiting_with(rig, plan, limit)
}

/// [`apply`] with the limit repair done by `limiter` (given the rig as the earlier repairs left
/// it and the limit), such as [`limit_least_deformation`].
pub fn apply_limiting_with(
    rig: &Rig,
    plan: &RepairPlan,
    limiter: impl Fn(&Rig, usize) -> Repaired,
) -> (Rig, RepairSummary) {
    let mut out = rig.clone();
    let mut summary = RepairSummary::default();
    type Step<'a> = Box<dyn Fn(&Rig) -> Repaired + 'a>;
    let steps: [Option<Step>; 5] = [
        plan.fill.map(|mode| Box::new(move |rig: &Rig| fill(rig, mode)) as Step),
        plan.mirror
            .map(|direction| Box::new(move |rig: &Rig| mirror(rig, direction)) as Step),
        plan.prune
            .map(|epsilon| Box::new(move |rig: &Rig| prune(rig, epsilon)) as Step),
        plan.limit.map(|n| Box::new(move |rig: &Rig| limiter(rig, n)) as Step),
        plan.normalize.then(|| Box::new(normalize) as Step),
    ];
    for step in steps.into_iter().flatten() {
        let repaired = step(&out);
        for (mesh, primitives) in repaired.influences.into_iter().enumerate() {
            for (primitive, influences) in primitives.into_iter().enumerate() {
                if let Some(influences) = influences {
                    out.meshes[mesh].primitives[primitive].influences = Some(influences);
                }
            }
        }
        summary.repairs.push(repaired.counts);
    }
    (out, summary)
}
