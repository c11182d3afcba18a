//! Measures of one posed region against its bind pose: per triangle area ratio, edge stretch
//! and flips, the near-joint slice's radius ratio, and the vertices that score worst (see the
//! choices listed in [`super::motion`]).

use super::motion::{PoseSample, Scratch, SkinFacts};
use super::triangles::{TriangleBlock, TriangleTotals, measure_triangles, triangle_blocks};
use super::{BindSpace, VertexRef};
use crate::rig::Influences;
use glam::{Mat3, Quat, Vec3};

/// Smallest ratio the factors use, so that a collapsed triangle or radius gives a large finite
/// badness rather than infinity.
const FLOOR: f32 = 1e-6;
/// Added to the per-vertex score (a squared distortion factor) of a flipped triangle's corners
/// so that they rank first.
pub(super) const FLIPPED_SCORE: f32 = 1e9;

/// A measured triangle and what its pose is compared with. Squared inverses so that the
/// per-pose loop needs no square root or division.
pub(super) struct TriangleBind {
    pub(super) corners: [u32; 3],
    /// 1 / bind length² of edges ab, bc, ca; 0 for an edge too short to measure.
    pub(super) inv_edges2: [f32; 3],
    /// 1 / (2 · bind area)²; 0 for a triangle too small to measure.
    pub(super) inv_area2: f32,
    pub(super) normal: Vec3,
    /// Mean share of its corners' weight on the swept joints.
    pub(super) moved: f32,
}

/// The vertices and triangles a joint's sweep measures, compacted, with their bind measures.
pub(super) struct Region {
    pub(super) vertices: Vec<VertexRef>,
    pub(super) positions: Vec<Vec3>,
    pub(super) influences: Influences,
    /// Per vertex: share of its weight on the swept joints.
    pub(super) moved_weight: Vec<f32>,
    /// Per vertex: the file's blend toward dual quaternions (weight blended skinning), filled
    /// only when the blended method is swept.
    pub(super) dqs_blend: Vec<f32>,
    pub(super) triangles: Vec<TriangleBind>,
    /// `triangles` laid out for the lanes (see [`super::triangles`]).
    pub(super) blocks: Vec<TriangleBlock>,
    /// The near-joint slice: vertex, bind distance from the bone axis, moved weight.
    pub(super) slice: Vec<(u32, f32, f32)>,
    pub(super) influenced: usize,
    /// Every triangle's bind measures are finite (see [`super::triangles`]).
    pub(super) bind_finite: bool,
}

pub(super) fn region(
    space: &BindSpace,
    facts: &SkinFacts,
    k: usize,
    moved: &[bool],
    pivot: Vec3,
    axis: Vec3,
    bone_length: f32,
) -> Region {
    let sets = facts.sets;
    // Edges and triangles this small are seams and slivers whose ratios are rounding noise.
    let tiny_edge = 1e-4 * facts.diagonal;
    let tiny_area = tiny_edge * tiny_edge;
    let mut r = Region {
        vertices: Vec::new(),
        positions: Vec::new(),
        influences: Influences {
            sets,
            joints: Vec::new(),
            weights: Vec::new(),
        },
        moved_weight: Vec::new(),
        dqs_blend: Vec::new(),
        triangles: Vec::new(),
        blocks: Vec::new(),
        slice: Vec::new(),
        influenced: 0,
        bind_finite: true,
    };
    let is_moved = |j: u16| moved.get(j as usize).copied().unwrap_or(false);
    let usable = |w: f32| w > 0.0 && w.is_finite();
    for part in &space.parts {
        let n = part.positions.len();
        let influenced: Vec<bool> = (0..n)
            .map(|v| part.influences.of_vertex(v).any(|(j, w)| usable(w) && is_moved(j)))
            .collect();
        let mut local = vec![u32::MAX; n];
        let mut add = |v: usize, r: &mut Region| -> u32 {
            if local[v] == u32::MAX {
                local[v] = r.positions.len() as u32;
                r.vertices.push(VertexRef {
                    mesh: part.mesh,
                    primitive: part.gltf_primitive,
                    vertex: v as u32,
                });
                r.positions.push(part.positions[v]);
                let (mut total, mut on_moved, mut own) = (0.0, 0.0, 0.0);
                let range = v * part.influences.sets..(v + 1) * part.influences.sets;
                for (joints, weights) in part.influences.joints[range.clone()]
                    .iter()
                    .zip(&part.influences.weights[range])
                {
                    r.influences.joints.push(*joints);
                    r.influences.weights.push(*weights);
                    for (&j, &w) in joints.iter().zip(weights).filter(|(_, w)| usable(**w)) {
                        total += w;
                        if is_moved(j) {
                            on_moved += w;
                        }
                        if j as usize == k {
                            own += w;
                        }
                    }
                }
                for _ in part.influences.sets..sets {
                    r.influences.joints.push([0; 4]);
                    r.influences.weights.push([0.0; 4]);
                }
                r.moved_weight.push(if total > 0.0 { on_moved / total } else { 0.0 });
                if own > 0.0 && bone_length > 0.0 {
                    let d = part.positions[v] - pivot;
                    let along = d.dot(axis);
                    let radius = (d - along * axis).length();
                    if along.abs() <= 0.5 * bone_length && radius > 1e-3 * bone_length {
                        let moved = r.moved_weight[local[v] as usize];
                        r.slice.push((local[v], radius, moved));
                    }
                }
            }
            local[v]
        };
        for (v, _) in influenced.iter().enumerate().filter(|(_, i)| **i) {
            add(v, &mut r);
            r.influenced += 1;
        }
        for t in &part.triangles {
            if !t.iter().any(|&i| influenced[i as usize]) {
                continue;
            }
            let corners = t.map(|i| add(i as usize, &mut r));
            let [a, b, c] = t.map(|i| part.positions[i as usize]);
            let normal = (b - a).cross(c - a);
            let inverse2 = |x: f32, tiny: f32| if x > tiny { 1.0 / (x * x) } else { 0.0 };
            r.triangles.push(TriangleBind {
                corners,
                inv_edges2: [b - a, c - b, a - c].map(|e| inverse2(e.length(), tiny_edge)),
                inv_area2: inverse2(normal.length(), tiny_area),
                normal: normal.normalize_or_zero(),
                moved: corners.iter().map(|&i| r.moved_weight[i as usize]).sum::<f32>() / 3.0,
            });
        }
    }
    r.bind_finite = r.triangles.iter().all(|t| {
        t.inv_edges2.iter().all(|x| x.is_finite())
            && t.inv_area2.is_finite()
            && t.normal.is_finite()
            && t.moved.is_finite()
    });
    r.blocks = triangle_blocks(&r.triangles);
    r
}

/// The measures of the pose in `scratch.posed`.
pub(super) fn measure(
    region: &Region,
    scratch: &mut Scratch,
    pivot: Vec3,
    bone_axis: Vec3,
    direction: Vec3,
    angle: f32,
    keep: usize,
) -> PoseSample {
    let rotation = Mat3::from_quat(Quat::from_axis_angle(direction, angle.to_radians()));
    let posed = &scratch.posed;
    let score = &mut scratch.score;
    score.fill(0.0);
    // Squared ratios and factors throughout; square roots once at the end.
    let floor2 = FLOOR * FLOOR;
    let TriangleTotals {
        min_area2,
        max_area2,
        max_edge2,
        flipped,
    } = measure_triangles(
        &region.triangles,
        &region.blocks,
        posed,
        &rotation,
        floor2,
        region.bind_finite,
        keep,
        &mut scratch.selection,
        score,
    );
    let (mut min_area, mut max_area) = (min_area2.sqrt(), max_area2.sqrt());
    let max_edge = max_edge2.sqrt();
    let mut min_radius: Option<f32> = None;
    // Most of the slice follows the joint wholly or in a few shares: the turned axis of the
    // previous vertex is reused for the same share (the same bits) instead of another sine
    // and cosine.
    let mut turned: Option<(u32, Vec3)> = None;
    for &(v, bind_radius, moved) in &region.slice {
        let d = posed[v as usize] - pivot;
        let axis = match turned {
            Some((share, axis)) if share == moved.to_bits() => axis,
            _ => {
                let axis = Quat::from_axis_angle(direction, (angle * moved).to_radians()) * bone_axis;
                turned = Some((moved.to_bits(), axis));
                axis
            }
        };
        let ratio = (d - d.dot(axis) * axis).length() / bind_radius;
        min_radius = Some(min_radius.map_or(ratio, |m| m.min(ratio)));
        let s = &mut score[v as usize];
        *s = s.max((1.0 / ratio.max(FLOOR)).powi(2));
    }
    if region.triangles.is_empty() || !min_area.is_finite() {
        min_area = 1.0;
        max_area = 1.0;
    }
    // Worst vertices: a short list kept sorted (highest score first, then lowest index).
    let worst = &mut scratch.worst;
    worst.clear();
    for (v, &s) in score.iter().enumerate() {
        if s <= 1.0 || keep == 0 {
            continue;
        }
        if worst.len() == keep && worst.last().is_some_and(|w| w.0 >= s) {
            continue;
        }
        let at = worst.partition_point(|w| w.0 >= s);
        worst.insert(at, (s, v as u32));
        worst.truncate(keep);
    }
    let distortion = [
        1.0 / min_area.max(FLOOR),
        max_area,
        max_edge,
        1.0 / min_radius.unwrap_or(1.0).max(FLOOR),
    ]
    .into_iter()
    .fold(1.0f32, f32::max);
    PoseSample {
        angle_deg: angle,
        min_area_ratio: min_area,
        max_area_ratio: max_area,
        max_edge_stretch: max_edge,
        flipped_triangles: flipped,
        min_radius_ratio: min_radius,
        badness: distortion.ln() + (1.0 + flipped as f32).ln(),
        worst_vertices: worst.iter().map(|&(_, v)| region.vertices[v as usize]).collect(),
    }
}
