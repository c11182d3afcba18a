//! The range-of-motion sweep: each weighted joint is twisted about its bone and bent about two
//! axes across it, on top of the bind pose, and every pose is skinned on the CPU with linear
//! blend and dual quaternion skinning and measured against the bind pose.
//!
//! Choices the numbers depend on:
//!
//! - **Bone axis**: from the joint to the child joint whose subtree carries the most skin
//!   weight (ties: the lower node index), skipping children at the joint's own position. That
//!   points a hip at the spine rather than at one leg and a hand at its heaviest finger. A joint
//!   without such a child continues its parent's bone (parent → joint); a root without children
//!   uses its bind frame's +Y, the direction glTF exporters lay bones along.
//! - **Bend axes**: `bend_a` is the bind frame axis (X, Y or Z of the joint's bind world) least
//!   aligned with the bone, made perpendicular to it; `bend_b` = bone × `bend_a`.
//! - **Pose**: the joint and every node under it rotate about the joint's bind position;
//!   nothing else moves.
//! - **Measured**: triangles with a corner weighted to the joint or a joint under it, and their
//!   corners. Area ratio = posed area / bind area per triangle; edges shorter than 1e-4 of the
//!   mesh's bounding diagonal (and triangles of that size squared) are left out, since their
//!   ratios are rounding noise. Edge stretch = max(r, 1/r) of each edge's posed / bind length, so 2 means doubled
//!   or halved. A triangle is flipped when its posed normal points away (negative dot product)
//!   from its bind normal turned towards the joint's rotated normal by the triangle's mean
//!   weight on the swept joints, i.e. from where a smooth blend would face it.
//! - **Radius**: the vertices weighted to the joint itself within half a bone length of it
//!   along the bone (the near-joint slice). Each one's distance from the bone axis through the
//!   joint, posed over bind, where the posed axis is the bone axis turned by the vertex's share
//!   of the rotation (its weight on the swept joints), so a vertex that follows the blend
//!   rigidly keeps ratio 1. The minimum is the candy-wrapper collapse (≈ cos(θ/2) for an even two-joint blend twisted by θ
//!   with linear blend skinning).
//! - **Badness** of a pose: ln of the largest distortion factor among 1/min area ratio, max
//!   area ratio, max edge stretch and 1/min radius ratio, plus ln(1 + flipped triangles). 0 is
//!   undeformed; ln 2 ≈ 0.69 is a factor of two. A joint's badness is its worst pose's.

use super::measure::{Region, measure, region};
use super::triangles::Selection;
use super::{AuditOptions, BindSpace, VertexRef, joint_parents, node_name};
use crate::anim::PaletteKernel;
use crate::rig::Rig;
use crate::skin::SkinningMethod;
use crate::skin::blend::{mask_share, mix_position};
use crate::skin::dqs::{DualQuat, dual_quat_palette, skin_dqs_positions_exact};
use crate::skin::fast::skin_lbs_positions_exact;
use glam::{Mat4, Quat, Vec3};
use rayon::prelude::*;
use serde::Serialize;

/// An axis of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// About the bone.
    Twist,
    /// About the first axis across the bone.
    BendA,
    /// About the second axis across the bone.
    BendB,
}

impl Axis {
    pub const ALL: [Axis; 3] = [Axis::Twist, Axis::BendA, Axis::BendB];

    pub fn label(self) -> &'static str {
        match self {
            Axis::Twist => "twist",
            Axis::BendA => "bend_a",
            Axis::BendB => "bend_b",
        }
    }
}

/// The measures of one pose against the bind pose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoseSample {
    pub angle_deg: f32,
    /// Smallest posed / bind triangle area (1 when no triangle is measured).
    pub min_area_ratio: f32,
    /// Largest posed / bind triangle area.
    pub max_area_ratio: f32,
    /// Largest max(stretch, 1/compression) of an edge.
    pub max_edge_stretch: f32,
    pub flipped_triangles: usize,
    /// Smallest posed / bind distance from the bone axis in the near-joint slice; `None` when
    /// the slice is empty.
    pub min_radius_ratio: Option<f32>,
    pub badness: f32,
    /// The vertices deformed most, worst first: corners of flipped triangles, then by their
    /// largest distortion factor.
    pub worst_vertices: Vec<VertexRef>,
}

/// One axis and method of one joint: a sample per angle, in increasing angle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    pub axis: Axis,
    pub method: SkinningMethod,
    pub samples: Vec<PoseSample>,
}

/// The sweep of one joint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointAudit {
    pub skin: usize,
    /// Index of the joint in its skin.
    pub joint: usize,
    /// Its rig node.
    pub node: usize,
    pub name: String,
    /// Bind position and axes, in the skin's bind space.
    pub pivot: [f32; 3],
    pub bone_axis: [f32; 3],
    pub bend_a: [f32; 3],
    pub bend_b: [f32; 3],
    /// The child node the bone axis points at, if it points at one.
    pub bone_child: Option<usize>,
    /// Vertices weighted to the joint or a joint under it.
    pub influenced_vertices: usize,
    pub measured_triangles: usize,
    /// The worst pose's badness.
    pub badness: f32,
    pub curves: Vec<Curve>,
}

impl JointAudit {
    /// The worst pose: its curve and sample.
    pub fn worst(&self) -> Option<(&Curve, &PoseSample)> {
        self.samples()
            .fold(None, |best: Option<(&Curve, &PoseSample)>, (c, s)| match best {
                Some((_, b)) if b.badness >= s.badness => best,
                _ => Some((c, s)),
            })
    }

    /// The bind-space axis the sweep turned the joint about for `axis`.
    pub fn axis_direction(&self, axis: Axis) -> Vec3 {
        Vec3::from_array(match axis {
            Axis::Twist => self.bone_axis,
            Axis::BendA => self.bend_a,
            Axis::BendB => self.bend_b,
        })
    }

    /// The bend by hand that poses the joint as the sweep did at `angle_deg` about `axis`,
    /// when the rest of the rig stands in its bind pose. An override turns the joint in its own
    /// frame, so the bind-space axis is carried into that frame by the bind world's rotation.
    pub fn bend(&self, rig: &Rig, axis: Axis, angle_deg: f32) -> crate::anim::JointOverride {
        let bind_rotation = rig
            .skins
            .get(self.skin)
            .and_then(|s| s.inverse_binds.get(self.joint))
            .map(|ibm| ibm.inverse())
            .filter(|w| w.is_finite())
            .map_or(Quat::IDENTITY, |w| w.to_scale_rotation_translation().1);
        let local = (bind_rotation.inverse() * self.axis_direction(axis)).normalize_or(Vec3::X);
        crate::anim::JointOverride {
            rotation: Quat::from_axis_angle(local, angle_deg.to_radians()),
            ..crate::anim::JointOverride::IDENTITY
        }
    }

    /// The measures of the pose the sweep took at `angle_deg` about `axis` with `method`.
    pub fn sample(&self, axis: Axis, method: SkinningMethod, angle_deg: f32) -> Option<&PoseSample> {
        self.curves
            .iter()
            .filter(|c| c.axis == axis && c.method == method)
            .flat_map(|c| c.samples.iter())
            .find(|s| s.angle_deg == angle_deg)
    }

    fn samples(&self) -> impl Iterator<Item = (&Curve, &PoseSample)> {
        self.curves.iter().flat_map(|c| c.samples.iter().map(move |s| (c, s)))
    }

    /// Each threshold this joint crosses, at its worst pose for that measure.
    pub fn violations(&self, t: &Thresholds) -> Vec<Violation> {
        type Measure = fn(&PoseSample) -> Option<f32>;
        let checks: [(&'static str, Measure, f32, bool); 5] = [
            ("min_area_ratio", |s| Some(s.min_area_ratio), t.min_area_ratio, false),
            ("max_area_ratio", |s| Some(s.max_area_ratio), t.max_area_ratio, true),
            (
                "max_edge_stretch",
                |s| Some(s.max_edge_stretch),
                t.max_edge_stretch,
                true,
            ),
            ("min_radius_ratio", |s| s.min_radius_ratio, t.min_radius_ratio, false),
            (
                "flipped_triangles",
                |s| Some(s.flipped_triangles as f32),
                t.max_flipped as f32,
                true,
            ),
        ];
        let mut found = Vec::new();
        for (measure, value, limit, upper) in checks {
            let worst = self.samples().filter_map(|(c, s)| value(s).map(|v| (c, s, v))).fold(
                None,
                |best: Option<(&Curve, &PoseSample, f32)>, item| match best {
                    Some(b) if (upper && b.2 >= item.2) || (!upper && b.2 <= item.2) => Some(b),
                    _ => Some(item),
                },
            );
            if let Some((curve, sample, v)) = worst
                && (if upper { v > limit } else { v < limit })
            {
                found.push(Violation {
                    skin: self.skin,
                    node: self.node,
                    joint: self.name.clone(),
                    measure,
                    value: v,
                    limit,
                    axis: curve.axis,
                    method: curve.method,
                    angle_deg: sample.angle_deg,
                });
            }
        }
        found
    }
}

/// Limits a joint must stay within over its sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    pub min_area_ratio: f32,
    pub max_area_ratio: f32,
    pub max_edge_stretch: f32,
    pub min_radius_ratio: f32,
    pub max_flipped: usize,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            min_area_ratio: 0.05,
            max_area_ratio: 5.0,
            max_edge_stretch: 4.0,
            min_radius_ratio: 0.3,
            max_flipped: 100,
        }
    }
}

/// A threshold a joint crosses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub skin: usize,
    pub node: usize,
    pub joint: String,
    pub measure: &'static str,
    pub value: f32,
    pub limit: f32,
    pub axis: Axis,
    pub method: SkinningMethod,
    pub angle_deg: f32,
}

/// One joint to sweep.
struct Task {
    space: usize,
    joint: usize,
    /// Skin weight on the joint and the joints under it: a rough cost, to start big ones first.
    cost: f32,
}

/// Per skin: which joints are weighted and how the skeleton hangs together.
pub(super) struct SkinFacts {
    pub(super) parents: Vec<Option<usize>>,
    /// Total weight of each joint over the skin's vertices, and of its subtree.
    pub(super) weight: Vec<f32>,
    pub(super) subtree_weight: Vec<f32>,
    pub(super) sets: usize,
    pub(super) palette_kernel: PaletteKernel,
    pub(super) diagonal: f32,
}

pub(super) fn skin_facts(rig: &Rig, space: &BindSpace) -> SkinFacts {
    let skin = &rig.skins[space.skin];
    let n = skin.joints.len();
    let parents = joint_parents(rig, &skin.joints);
    let mut weight = vec![0.0f32; n];
    let mut sets = 1;
    for part in &space.parts {
        sets = sets.max(part.influences.sets);
        for v in 0..part.positions.len() {
            for (j, w) in part.influences.of_vertex(v) {
                if let Some(total) = weight.get_mut(j as usize).filter(|_| w > 0.0 && w.is_finite()) {
                    *total += w;
                }
            }
        }
    }
    let mut subtree_weight = weight.clone();
    // Parents come before children in the rig, so deepest nodes go first.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(skin.joints[k]));
    for k in order {
        if let Some(p) = parents[k] {
            subtree_weight[p] += subtree_weight[k];
        }
    }
    SkinFacts {
        parents,
        weight,
        subtree_weight,
        sets,
        palette_kernel: PaletteKernel::for_skin(skin),
        diagonal: space.bounds.size(),
    }
}

/// The sweep of every weighted joint (or those named in `options.joints`), worst first.
pub(crate) fn audit_joints(
    rig: &Rig,
    spaces: &[BindSpace],
    options: &AuditOptions,
    progress: &super::AuditProgress,
    notes: &mut Vec<String>,
) -> Vec<JointAudit> {
    let facts: Vec<SkinFacts> = spaces.iter().map(|s| skin_facts(rig, s)).collect();
    for name in &options.joints {
        let known = spaces
            .iter()
            .any(|s| rig.skins[s.skin].joints.iter().any(|&n| node_name(rig, n) == *name));
        if !known {
            notes.push(format!("no joint is named '{name}'"));
        }
    }
    let mut tasks = Vec::new();
    for (i, space) in spaces.iter().enumerate() {
        let skin = &rig.skins[space.skin];
        for (k, &node) in skin.joints.iter().enumerate() {
            if facts[i].weight[k] <= 0.0 || space.pivot(k).is_none() {
                continue;
            }
            if !options.joints.is_empty() && !options.joints.contains(&node_name(rig, node)) {
                continue;
            }
            tasks.push(Task {
                space: i,
                joint: k,
                cost: facts[i].subtree_weight[k],
            });
        }
    }
    tasks.sort_by(|a, b| b.cost.total_cmp(&a.cost));
    progress.start(tasks.len());
    // One joint per work item: sweeps differ by orders of magnitude, the heaviest go first.
    // They run in the thread pool of the caller (see [`super::audit_with_progress`]).
    let mut joints: Vec<JointAudit> = tasks
        .par_iter()
        .with_max_len(1)
        .filter_map(|task| {
            if progress.is_cancelled() {
                return None;
            }
            let result = sweep_joint(rig, &spaces[task.space], &facts[task.space], task.joint, options);
            progress.joint_done();
            Some(result)
        })
        .collect();
    // Each joint's numbers do not depend on the thread that computed them; the order is fixed
    // here.
    joints.sort_by(|a, b| {
        b.badness
            .total_cmp(&a.badness)
            .then(a.skin.cmp(&b.skin))
            .then(a.node.cmp(&b.node))
            .then(a.joint.cmp(&b.joint))
    });
    joints
}

/// A joint's bone axis, the child it points at, and the bone's length.
pub(super) fn bone(rig: &Rig, space: &BindSpace, facts: &SkinFacts, k: usize) -> (Vec3, Option<usize>, f32) {
    let skin = &rig.skins[space.skin];
    let pivot = space.pivot(k).unwrap_or(Vec3::ZERO);
    let tiny = 1e-5 * facts.diagonal.max(f32::MIN_POSITIVE);
    let child = (0..skin.joints.len())
        .filter(|&c| facts.parents[c] == Some(k))
        .filter_map(|c| {
            let offset = space.pivot(c)? - pivot;
            (offset.length() > tiny).then_some((c, offset))
        })
        .max_by(|a, b| {
            facts.subtree_weight[a.0]
                .total_cmp(&facts.subtree_weight[b.0])
                .then(skin.joints[b.0].cmp(&skin.joints[a.0]))
        });
    if let Some((c, offset)) = child {
        return (offset.normalize(), Some(skin.joints[c]), offset.length());
    }
    if let Some(offset) = facts.parents[k]
        .and_then(|p| space.pivot(p))
        .map(|p| pivot - p)
        .filter(|o| o.length() > tiny)
    {
        return (offset.normalize(), None, offset.length());
    }
    let y = space.world(k).map_or(Vec3::Y, |m| m.y_axis.truncate());
    (y.try_normalize().unwrap_or(Vec3::Y), None, 0.0)
}

/// Two unit axes across `bone`, from the bind frame `world`.
pub(super) fn bend_axes(world: &Mat4, bone: Vec3) -> (Vec3, Vec3) {
    let candidates = [world.x_axis, world.y_axis, world.z_axis].map(|c| c.truncate().normalize_or_zero());
    let least = candidates
        .into_iter()
        .chain([Vec3::X, Vec3::Y, Vec3::Z])
        .map(|c| c - c.dot(bone) * bone)
        .filter(|c| c.length() > 1e-3)
        .max_by(|a, b| a.length().total_cmp(&b.length()))
        .unwrap_or(bone.any_orthonormal_vector());
    let a = least.normalize();
    (a, bone.cross(a).normalize())
}

/// Per-joint scratch, allocated once and reused by every pose.
pub(super) struct Scratch {
    pub(super) worlds: Vec<Mat4>,
    pub(super) palette: Vec<Mat4>,
    pub(super) dual_quats: Vec<DualQuat>,
    pub(super) posed: Vec<Vec3>,
    /// The DQS positions the blended method mixes in (empty unless it is swept).
    pub(super) dqs_posed: Vec<Vec3>,
    pub(super) score: Vec<f32>,
    pub(super) worst: Vec<(f32, u32)>,
    pub(super) selection: Selection,
}

fn sweep_joint(rig: &Rig, space: &BindSpace, facts: &SkinFacts, k: usize, options: &AuditOptions) -> JointAudit {
    let skin = &rig.skins[space.skin];
    let node = skin.joints[k];
    let pivot = space.pivot(k).unwrap_or(Vec3::ZERO);
    let (axis, bone_child, bone_length) = bone(rig, space, facts, k);
    let (bend_a, bend_b) = bend_axes(&space.world(k).unwrap_or(Mat4::IDENTITY), axis);
    let under = rig.subtrees(&[node]);
    let moved: Vec<bool> = skin
        .joints
        .iter()
        .map(|&n| under.get(n).copied().unwrap_or(false))
        .collect();
    let mut region = region(space, facts, k, &moved, pivot, axis, bone_length);
    let blended = options.methods.contains(&SkinningMethod::Blended);
    if blended {
        region.dqs_blend = if options.dqs_mask.is_empty() {
            region.vertices.iter().map(|&v| file_blend(rig, v)).collect()
        } else {
            let masked = rig.subtrees(&options.dqs_mask);
            let masked_joints: Vec<bool> = (skin.joints.iter())
                .map(|&node| masked.get(node).copied().unwrap_or(false))
                .collect();
            mask_share(&region.influences, &masked_joints, region.positions.len())
        };
    }
    let n = region.positions.len();
    let mut scratch = Scratch {
        worlds: vec![Mat4::IDENTITY; rig.nodes.len()],
        palette: vec![Mat4::IDENTITY; skin.joints.len()],
        dual_quats: vec![DualQuat::IDENTITY; skin.joints.len()],
        posed: vec![Vec3::ZERO; n],
        dqs_posed: if blended { vec![Vec3::ZERO; n] } else { Vec::new() },
        score: vec![0.0; n],
        worst: Vec::with_capacity(options.worst_vertices + 1),
        selection: Selection::default(),
    };
    let steps = options.steps.max(1);
    let mut curves = Vec::new();
    for axis_kind in Axis::ALL {
        let (direction, limit) = match axis_kind {
            Axis::Twist => (axis, options.twist_degrees),
            Axis::BendA => (bend_a, options.bend_degrees),
            Axis::BendB => (bend_b, options.bend_degrees),
        };
        let angles: Vec<f32> = (1..=steps)
            .rev()
            .map(|i| -limit * i as f32 / steps as f32)
            .chain((1..=steps).map(|i| limit * i as f32 / steps as f32))
            .collect();
        for &method in &options.methods {
            let samples = angles
                .iter()
                .map(|&angle| {
                    pose(
                        rig,
                        space,
                        facts,
                        &moved,
                        pivot,
                        direction,
                        angle,
                        method,
                        &region,
                        &mut scratch,
                    );
                    measure(
                        &region,
                        &mut scratch,
                        pivot,
                        axis,
                        direction,
                        angle,
                        options.worst_vertices,
                    )
                })
                .collect();
            curves.push(Curve {
                axis: axis_kind,
                method,
                samples,
            });
        }
    }
    let mut audit = JointAudit {
        skin: space.skin,
        joint: k,
        node,
        name: node_name(rig, node),
        pivot: pivot.to_array(),
        bone_axis: axis.to_array(),
        bend_a: bend_a.to_array(),
        bend_b: bend_b.to_array(),
        bone_child,
        influenced_vertices: region.influenced,
        measured_triangles: region.triangles.len(),
        badness: 0.0,
        curves,
    };
    audit.badness = audit.worst().map_or(0.0, |(_, s)| s.badness);
    audit
}

/// Skins the region with the joint turned by `angle` degrees about `direction` through
/// `pivot`, into `scratch.posed`.
#[allow(clippy::too_many_arguments)]
fn pose(
    rig: &Rig,
    space: &BindSpace,
    facts: &SkinFacts,
    moved: &[bool],
    pivot: Vec3,
    direction: Vec3,
    angle: f32,
    method: SkinningMethod,
    region: &Region,
    scratch: &mut Scratch,
) {
    let skin = &rig.skins[space.skin];
    let turn = Mat4::from_translation(pivot)
        * Mat4::from_quat(Quat::from_axis_angle(direction, angle.to_radians()))
        * Mat4::from_translation(-pivot);
    for (k, &node) in skin.joints.iter().enumerate() {
        let bind = space.world(k).unwrap_or(Mat4::IDENTITY);
        if let Some(world) = scratch.worlds.get_mut(node) {
            *world = if moved[k] { turn * bind } else { bind };
        }
    }
    facts.palette_kernel.build(skin, &scratch.worlds, &mut scratch.palette);
    // Joints without a usable bind world (and a node listed twice with two different inverse
    // binds) get the palette the pose means for them directly.
    for (k, m) in scratch.palette.iter_mut().enumerate() {
        if space.world(k).is_none() || !m.is_finite() {
            *m = if moved[k] { turn } else { Mat4::IDENTITY };
        }
    }
    // Every method with one arithmetic on every CPU: the fast kernels agree with it to
    // rounding, which is enough to move the ratios of near-degenerate triangles and the order
    // of tied vertices, and the audit's findings must not depend on the machine.
    let (influences, positions) = (&region.influences, &region.positions);
    if method != SkinningMethod::Dqs {
        skin_lbs_positions_exact(&scratch.palette, influences, positions, &mut scratch.posed);
    }
    if method == SkinningMethod::Lbs {
        return;
    }
    dual_quat_palette(&scratch.palette, &mut scratch.dual_quats);
    if method == SkinningMethod::Dqs {
        skin_dqs_positions_exact(&scratch.dual_quats, influences, positions, &mut scratch.posed);
        return;
    }
    // Weight blended: each vertex's LBS position moved toward its DQS one by its blend.
    skin_dqs_positions_exact(&scratch.dual_quats, influences, positions, &mut scratch.dqs_posed);
    let vertices = scratch.posed.iter_mut().zip(&scratch.dqs_posed).zip(&region.dqs_blend);
    for ((posed, &dqs), &b) in vertices {
        if b > 0.0 {
            *posed = mix_position(b, *posed, dqs);
        }
    }
}

/// The file's blend toward dual quaternion skinning of vertex `v` (0 where it gives none).
fn file_blend(rig: &Rig, v: VertexRef) -> f32 {
    let blend = rig
        .skinning
        .dqs_blend
        .get(v.mesh)
        .and_then(|mesh| mesh.get(v.primitive));
    blend.and_then(|b| b.get(v.vertex as usize)).copied().unwrap_or(0.0)
}
