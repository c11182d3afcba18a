//! The range-of-motion audit and the weight symmetry check: how each joint's skinning holds up
//! when the joint is swept through twists and bends away from the bind pose, and whether the
//! weights of a left/right symmetric rig are symmetric too.
//!
//! Everything is measured in each skin's bind space: the space where the palette is the
//! identity, so a joint's bind world is the inverse of its inverse bind matrix and a vertex's
//! bind position is its position in the file.

mod measure;
pub mod mirror;
pub mod motion;
pub mod symmetry;
mod triangles;
pub mod turns;

pub use motion::{Axis, Curve, JointAudit, PoseSample, Thresholds, Violation};
pub use symmetry::{
    AsymmetricVertex, MirrorPair, Plane, SymmetryOptions, SymmetryReport, VertexSymmetry, vertex_symmetry,
};

use crate::anim::Bounds;
use crate::rig::{Influences, Rig};
use crate::skin::SkinningMethod;
use glam::{Mat4, Vec3};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A vertex of the file: glTF mesh index, glTF primitive index, vertex index in that primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct VertexRef {
    pub mesh: usize,
    pub primitive: usize,
    pub vertex: u32,
}

/// What to sweep and how finely.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditOptions {
    /// Largest bend either way about each of the two axes across the bone, in degrees.
    pub bend_degrees: f32,
    /// Largest twist either way about the bone, in degrees.
    pub twist_degrees: f32,
    /// Poses per side of each axis, evenly spaced up to the largest angle.
    pub steps: usize,
    /// Joints to audit by node name; every weighted joint when empty.
    pub joints: Vec<String>,
    /// The skinning methods each pose is skinned with; `Blended` moves each vertex from LBS
    /// toward DQS by the file's blend weights, or by `dqs_mask`'s.
    pub methods: Vec<SkinningMethod>,
    /// A DQS mask (nodes whose subtrees skin toward dual quaternions, as the viewer's): with it,
    /// a vertex's blend is its share of weight on the masked joints instead of the file's.
    pub dqs_mask: Vec<usize>,
    /// Worker threads; `None` for the machine's available parallelism.
    pub threads: Option<usize>,
    /// Vertices kept per pose, worst first.
    pub worst_vertices: usize,
    pub symmetry: SymmetryOptions,
}

impl AuditOptions {
    /// The defaults, sweeping weight blended skinning too when it blends some vertex: by the
    /// DQS mask `dqs_mask` when it masks a joint, else by the file's blend weights. What the
    /// audit window runs.
    pub fn for_rig(rig: &Rig, dqs_mask: &[usize]) -> AuditOptions {
        let mut options = AuditOptions {
            dqs_mask: dqs_mask.to_vec(),
            ..AuditOptions::default()
        };
        if !dqs_mask.is_empty() || crate::skin::DqsBlend::of_file(rig).any() {
            options.methods.push(SkinningMethod::Blended);
        }
        options
    }
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            bend_degrees: 90.0,
            twist_degrees: 90.0,
            steps: 6,
            joints: Vec::new(),
            methods: vec![SkinningMethod::Lbs, SkinningMethod::Dqs],
            dqs_mask: Vec::new(),
            threads: None,
            worst_vertices: 5,
            symmetry: SymmetryOptions::default(),
        }
    }
}

/// The result of [`audit`].
#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    /// Audited joints, worst first (see [`JointAudit::badness`]).
    pub joints: Vec<JointAudit>,
    pub symmetry: SymmetryReport,
    /// Things skipped and why (primitives with out-of-range indices, joints that cannot be
    /// inverted, names given in `joints` that match no joint).
    pub notes: Vec<String>,
    pub seconds: f64,
}

impl AuditReport {
    /// Joints that cross a threshold, with what they crossed.
    pub fn violations(&self, thresholds: &Thresholds) -> Vec<Violation> {
        self.joints.iter().flat_map(|j| j.violations(thresholds)).collect()
    }
}

/// How far a running audit has got, shared with whoever watches it (the viewer's progress bar)
/// and the way to stop it early.
#[derive(Debug, Default)]
pub struct AuditProgress {
    joints_done: AtomicUsize,
    joints_total: AtomicUsize,
    cancelled: AtomicBool,
}

impl AuditProgress {
    pub fn start(&self, total: usize) {
        self.joints_done.store(0, Ordering::Relaxed);
        self.joints_total.store(total, Ordering::Relaxed);
    }

    pub fn joint_done(&self) {
        self.joints_done.fetch_add(1, Ordering::Relaxed);
    }

    /// Joints swept and joints to sweep.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.joints_done.load(Ordering::Relaxed),
            self.joints_total.load(Ordering::Relaxed),
        )
    }

    /// 0 before the sweep knows its joints, 1 when every joint is swept.
    pub fn fraction(&self) -> f32 {
        let (done, total) = self.counts();
        if total == 0 {
            0.0
        } else {
            (done as f32 / total as f32).min(1.0)
        }
    }

    /// Joints already taken finish; no new one starts.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
}

/// An audit runs as a background job that can be stopped (the job module knows no job kind).
impl crate::job::Progress for AuditProgress {
    fn cancel(&self) {
        AuditProgress::cancel(self);
    }

    fn is_cancelled(&self) -> bool {
        AuditProgress::is_cancelled(self)
    }
}

/// Runs the range-of-motion audit and the symmetry check.
pub fn audit(rig: &Rig, options: &AuditOptions) -> AuditReport {
    audit_with_progress(rig, options, &AuditProgress::default())
}

/// [`audit`], reporting each swept joint to `progress`; once it is cancelled the report holds
/// the joints swept so far and a note saying so.
pub fn audit_with_progress(rig: &Rig, options: &AuditOptions, progress: &AuditProgress) -> AuditReport {
    let started = std::time::Instant::now();
    let mut notes = Vec::new();
    let spaces = bind_spaces(rig, &mut notes);
    // The symmetry check needs nothing from the sweep: it runs beside it, in the same threads.
    let both = || {
        rayon::join(
            || {
                let mut notes = Vec::new();
                (motion::audit_joints(rig, &spaces, options, progress, &mut notes), notes)
            },
            || symmetry::check(rig, &spaces, &options.symmetry),
        )
    };
    let ((joints, sweep_notes), mut symmetry) = match options.threads {
        Some(threads) => rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_or_else(|_| both(), |pool| pool.install(both)),
        None => both(),
    };
    notes.extend(sweep_notes);
    if progress.is_cancelled() {
        notes.push("cancelled: only the joints swept before are listed".to_string());
    }
    symmetry.asymmetric_vertices.truncate(symmetry::MAX_LISTED);
    AuditReport {
        joints,
        symmetry,
        notes,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// One primitive drawn with a skin, checked: every index is inside the vertex arrays and the
/// influences cover every vertex.
pub(crate) struct Part<'r> {
    pub mesh: usize,
    /// Index into `Mesh::primitives`.
    pub primitive: usize,
    pub gltf_primitive: usize,
    pub positions: &'r [Vec3],
    pub influences: &'r Influences,
    /// Whole triangles whose corners are all inside `positions`.
    pub triangles: Vec<[u32; 3]>,
}

/// A skin and the primitives drawn with it, in its bind space.
pub(crate) struct BindSpace<'r> {
    pub skin: usize,
    /// World matrix of each of the skin's joints in the bind pose (the inverse of its inverse
    /// bind matrix); `None` where that cannot be inverted.
    pub worlds: Vec<Option<Mat4>>,
    pub parts: Vec<Part<'r>>,
    /// Bounds of every vertex of `parts`.
    pub bounds: Bounds,
}

impl BindSpace<'_> {
    /// The bind world of skin joint `joint`, if it has a usable inverse bind matrix.
    pub fn world(&self, joint: usize) -> Option<Mat4> {
        self.worlds.get(joint).copied().flatten()
    }

    pub fn pivot(&self, joint: usize) -> Option<Vec3> {
        self.world(joint).map(|m| m.w_axis.truncate())
    }
}

/// The skins and their primitives; a mesh drawn twice with the same skin counts once.
pub(crate) fn bind_spaces<'r>(rig: &'r Rig, notes: &mut Vec<String>) -> Vec<BindSpace<'r>> {
    let mut spaces = Vec::new();
    for (s, skin) in rig.skins.iter().enumerate() {
        let worlds = skin
            .inverse_binds
            .iter()
            .map(|ibm| {
                let det = ibm.determinant();
                let world = ibm.inverse();
                (det.is_finite() && det.abs() > 1e-12 && world.is_finite()).then_some(world)
            })
            .collect::<Vec<_>>();
        for (k, _) in worlds.iter().enumerate().filter(|(_, w)| w.is_none()) {
            notes.push(format!(
                "skin '{}' joint {k}: its inverse bind matrix cannot be inverted; it is held still",
                skin.name
            ));
        }
        let mut meshes: Vec<usize> = rig
            .instances
            .iter()
            .filter(|i| i.skin == Some(s))
            .map(|i| i.mesh)
            .collect();
        meshes.sort_unstable();
        meshes.dedup();
        let mut parts = Vec::new();
        let mut bounds = Bounds::EMPTY;
        for mesh in meshes {
            let Some(m) = rig.meshes.get(mesh) else { continue };
            for (p, primitive) in m.primitives.iter().enumerate() {
                let gltf_primitive = rig
                    .facts
                    .primitives
                    .get(mesh)
                    .and_then(|f| f.get(p))
                    .map_or(p, |f| f.gltf_index);
                let Some(influences) = &primitive.influences else {
                    continue;
                };
                let n = primitive.positions.len();
                if influences.sets == 0
                    || influences.joints.len() < n * influences.sets
                    || influences.weights.len() < n * influences.sets
                {
                    notes.push(format!(
                        "mesh {mesh} primitive {gltf_primitive}: the weights do not cover every vertex; skipped"
                    ));
                    continue;
                }
                let mut triangles = Vec::with_capacity(primitive.indices.len() / 3);
                let mut outside = 0;
                for t in primitive.indices.chunks_exact(3) {
                    if t.iter().all(|&i| (i as usize) < n) {
                        triangles.push([t[0], t[1], t[2]]);
                    } else {
                        outside += 1;
                    }
                }
                if outside > 0 {
                    notes.push(format!(
                        "mesh {mesh} primitive {gltf_primitive}: {outside} triangles index past the vertices; left out"
                    ));
                }
                if primitive.indices.len() % 3 != 0 {
                    notes.push(format!(
                        "mesh {mesh} primitive {gltf_primitive}: the index count is not a multiple of 3; the last indices are left out"
                    ));
                }
                for &p in &primitive.positions {
                    if p.is_finite() {
                        bounds.include(p);
                    }
                }
                parts.push(Part {
                    mesh,
                    primitive: p,
                    gltf_primitive,
                    positions: &primitive.positions,
                    influences,
                    triangles,
                });
            }
        }
        spaces.push(BindSpace {
            skin: s,
            worlds,
            parts,
            bounds,
        });
    }
    spaces
}

/// Index of the nearest ancestor of each of `joints` (rig nodes) that is itself in `joints`.
pub(crate) fn joint_parents(rig: &Rig, joints: &[usize]) -> Vec<Option<usize>> {
    let mut slot = vec![None; rig.nodes.len()];
    for (k, &node) in joints.iter().enumerate() {
        if let Some(s) = slot.get_mut(node) {
            // The first listing wins when a skin repeats a node.
            s.get_or_insert(k);
        }
    }
    joints
        .iter()
        .map(|&node| {
            let mut at = rig.nodes.get(node)?.parent;
            while let Some(p) = at {
                if let Some(k) = slot.get(p).copied().flatten() {
                    return Some(k);
                }
                at = rig.nodes.get(p)?.parent.filter(|&q| q < p);
            }
            None
        })
        .collect()
}

/// The name the report gives rig node `node`.
pub(crate) fn node_name(rig: &Rig, node: usize) -> String {
    rig.nodes
        .get(node)
        .map_or_else(|| format!("node {node}"), |n| n.name.clone())
}
