//! Weight symmetry: left/right joint pairs found by name and confirmed by their bind positions,
//! the mirror plane fitted to them, and each vertex's weights against its mirror vertex's.
//!
//! Nothing is assumed about the plane (it need not be x = 0) and nothing is guessed: a rig
//! whose joints have no left/right names gets no pairs and no plane, and its vertices are not
//! compared.

use super::mirror::primitive_mirrors;
pub use super::mirror::{Mirrors, NO_MIRROR, NoMirror, Plane, PrimitiveMirror, mirror_vertices};
use super::{BindSpace, VertexRef, node_name};
use crate::anim::Bounds;
use crate::rig::{Influences, Rig};
use glam::Vec3;
use serde::Serialize;
use std::collections::HashMap;

/// How many asymmetric and unmatched vertices the report lists (the counts are exact).
pub const MAX_LISTED: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SymmetryOptions {
    /// How far a vertex's mirror image may be from the vertex matched to it, as a fraction of
    /// the local vertex spacing (the shortest edge at either vertex) of its primitive.
    pub tolerance: f32,
    /// Weight difference (0..1) above which a vertex is asymmetric.
    pub threshold: f32,
    /// How far a joint's mirror image may be from its named partner, as a fraction of the
    /// diagonal of the joints' bind positions, for the pair to count.
    pub joint_tolerance: f32,
}

impl Default for SymmetryOptions {
    fn default() -> Self {
        SymmetryOptions {
            tolerance: 0.25,
            threshold: 0.1,
            joint_tolerance: 0.02,
        }
    }
}

/// A left and a right joint (rig nodes).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MirrorPair {
    pub left: usize,
    pub right: usize,
    pub left_name: String,
    pub right_name: String,
    /// Distance between the left joint's mirror image and the right joint, in bind space.
    pub error: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AsymmetricVertex {
    pub mesh: usize,
    pub primitive: usize,
    pub vertex: u32,
    pub mirror: VertexRef,
    /// Half the sum over joints of |weight − mirror's weight on the mirrored joint|, with both
    /// vertices' weights normalized: 0 symmetric, 1 no joint in common.
    pub difference: f32,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SymmetryReport {
    /// `None` when no pair was confirmed.
    pub plane: Option<Plane>,
    pub pairs: Vec<MirrorPair>,
    /// Name pairs whose bind positions do not mirror each other across the plane.
    pub rejected_pairs: Vec<MirrorPair>,
    /// Vertices compared (those of skinned primitives, when there is a plane).
    pub checked_vertices: usize,
    /// Vertices with a mirror vertex in their own primitive.
    pub matched_vertices: usize,
    /// Largest weight difference between a matched vertex and its mirror (0 when none).
    pub largest_difference: f32,
    /// Vertices with no mirror vertex in their own primitive (unmatched topology): reported,
    /// never compared or repaired.
    pub unmatched_vertices: usize,
    /// At most [`MAX_LISTED`] of them, in file order.
    pub unmatched: Vec<VertexRef>,
    pub asymmetric_count: usize,
    /// Largest difference first; at most [`MAX_LISTED`] in an [`AuditReport`](super::AuditReport).
    pub asymmetric_vertices: Vec<AsymmetricVertex>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// The side a joint name says and the lower-case name of its partner: `Left`/`Right` anywhere
/// (`mixamorig:LeftArm`, `arm_left`), an `L`/`R` token between separators (`hand.l`, `Hand_L`,
/// `l_arm`, `Bip01 L Thigh`), or a capital `L`/`R` against a capitalized word (`LHand`, `HandL`).
fn partner_name(name: &str) -> Option<(Side, String)> {
    let lower = name.to_lowercase();
    match (lower.contains("left"), lower.contains("right")) {
        (true, false) => return Some((Side::Left, lower.replace("left", "right"))),
        (false, true) => return Some((Side::Right, lower.replace("right", "left"))),
        (true, true) => return None,
        _ => {}
    }
    let swap = |at: usize, side: Side| {
        let mut out = lower.clone();
        out.replace_range(at..at + 1, if side == Side::Left { "r" } else { "l" });
        Some((side, out))
    };
    let separator = |c: char| !c.is_alphanumeric();
    // Tokens between separators, with their byte offsets (ASCII letters only need be found).
    let mut tokens = Vec::new();
    let mut start = None;
    for (i, c) in name.char_indices().chain([(name.len(), ' ')]) {
        match (separator(c), start) {
            (true, Some(s)) => {
                tokens.push((s, &name[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if lower.len() != name.len() {
        // Case mapping changed byte offsets; only the `Left`/`Right` rule applies.
        return None;
    }
    let side_of = |c: u8| match c.to_ascii_lowercase() {
        b'l' => Some(Side::Left),
        b'r' => Some(Side::Right),
        _ => None,
    };
    let single: Vec<(usize, Side)> = tokens
        .iter()
        .filter(|(_, t)| t.len() == 1)
        .filter_map(|&(at, t)| side_of(t.as_bytes()[0]).map(|s| (at, s)))
        .collect();
    if let [(at, side)] = single[..] {
        return swap(at, side);
    }
    if !single.is_empty() {
        return None;
    }
    let camel: Vec<(usize, Side)> = tokens
        .iter()
        .filter_map(|&(at, t)| {
            let b = t.as_bytes();
            let n = b.len();
            if n >= 3 && matches!(b[0], b'L' | b'R') && b[1].is_ascii_uppercase() && b[2].is_ascii_lowercase() {
                return side_of(b[0]).map(|s| (at, s));
            }
            if n >= 2 && matches!(b[n - 1], b'L' | b'R') && b[n - 2].is_ascii_lowercase() {
                return side_of(b[n - 1]).map(|s| (at + n - 1, s));
            }
            None
        })
        .collect();
    match camel[..] {
        [(at, side)] => swap(at, side),
        _ => None,
    }
}

/// Left/right pairs among the joints of every skin, by name alone.
pub fn name_pairs(rig: &Rig) -> Vec<(usize, usize)> {
    let mut joints: Vec<usize> = rig.skins.iter().flat_map(|s| s.joints.iter().copied()).collect();
    joints.sort_unstable();
    joints.dedup();
    joints.retain(|&j| j < rig.nodes.len());
    let mut by_name: HashMap<String, Option<usize>> = HashMap::new();
    for &j in &joints {
        by_name
            .entry(rig.nodes[j].name.to_lowercase())
            .and_modify(|n| *n = None)
            .or_insert(Some(j));
    }
    let mut pairs = Vec::new();
    for &j in &joints {
        let Some((Side::Left, partner)) = partner_name(&rig.nodes[j].name) else {
            continue;
        };
        let Some(Some(other)) = by_name.get(&partner).copied() else {
            continue;
        };
        let back = partner_name(&rig.nodes[other].name);
        if other != j
            && by_name.get(&rig.nodes[j].name.to_lowercase()) == Some(&Some(j))
            && back.is_some_and(|(side, name)| side == Side::Right && name == rig.nodes[j].name.to_lowercase())
        {
            pairs.push((j, other));
        }
    }
    pairs
}

/// The plane through the midpoints of `pairs` (bind positions), facing along their mean
/// left − right offset; `None` when the offsets cancel out.
fn fit_plane(pairs: &[(Vec3, Vec3)]) -> Option<Plane> {
    let sum: Vec3 = pairs.iter().map(|(l, r)| *l - *r).sum();
    let normal = sum.try_normalize()?;
    let offset = pairs.iter().map(|(l, r)| normal.dot((*l + *r) * 0.5)).sum::<f32>() / pairs.len() as f32;
    Some(Plane {
        normal: normal.to_array(),
        offset,
    })
}

pub(crate) fn check(rig: &Rig, spaces: &[BindSpace], options: &SymmetryOptions) -> SymmetryReport {
    check_vertices(rig, spaces, options, None)
}

/// The joint pairs and the plane: filled into `report` (pairs kept and rejected, the plane),
/// and the correspondence, or why there is none.
fn find_mirrors(
    rig: &Rig,
    spaces: &[BindSpace],
    options: &SymmetryOptions,
    report: &mut SymmetryReport,
) -> Result<Mirrors, NoMirror> {
    // Bind position of every joint node, from the first skin that lists it.
    let mut bind = vec![None; rig.nodes.len()];
    let mut joint_bounds = Bounds::EMPTY;
    for space in spaces {
        for (k, &node) in rig.skins[space.skin].joints.iter().enumerate() {
            if let (Some(slot), Some(p)) = (bind.get_mut(node), space.pivot(k)) {
                if slot.is_none() {
                    *slot = Some(p);
                }
                joint_bounds.include(p);
            }
        }
    }
    let candidates: Vec<(usize, usize, Vec3, Vec3)> = name_pairs(rig)
        .into_iter()
        .filter_map(|(l, r)| Some((l, r, bind[l]?, bind[r]?)))
        .collect();
    if candidates.is_empty() {
        return Err(NoMirror::NoSideNames);
    }
    let tolerance = options.joint_tolerance * joint_bounds.size();
    // Fit, drop the pairs that do not mirror, and fit again until nothing changes: one pair
    // named by mistake must not tilt the plane.
    let mut kept: Vec<bool> = vec![true; candidates.len()];
    let mut plane = None;
    for _ in 0..4 {
        let positions: Vec<(Vec3, Vec3)> = candidates
            .iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(c, _)| (c.2, c.3))
            .collect();
        plane = if positions.is_empty() {
            None
        } else {
            fit_plane(&positions)
        };
        let Some(p) = plane else { break };
        let next: Vec<bool> = candidates
            .iter()
            .map(|c| (p.mirror(c.2) - c.3).length() <= tolerance)
            .collect();
        if next == kept {
            break;
        }
        kept = next;
    }
    let Some(plane) = plane.filter(|_| kept.iter().any(|k| *k)) else {
        report.rejected_pairs = candidates.iter().map(|c| pair(rig, c, None)).collect();
        return Err(NoMirror::JointsNotMirrored(candidates.len()));
    };
    for (c, &k) in candidates.iter().zip(&kept) {
        let entry = pair(rig, c, Some(&plane));
        if k {
            report.pairs.push(entry);
        } else {
            report.rejected_pairs.push(entry);
        }
    }
    report.plane = Some(plane);
    Ok(Mirrors {
        plane,
        joints: report.pairs.iter().map(|p| (p.left, p.right)).collect(),
        primitives: primitive_mirrors(spaces, &plane, options.tolerance),
    })
}

/// [`check`], also keeping every vertex's difference (or marker) in `values` when given.
fn check_vertices(
    rig: &Rig,
    spaces: &[BindSpace],
    options: &SymmetryOptions,
    values: Option<&mut VertexSymmetry>,
) -> SymmetryReport {
    let mut report = SymmetryReport::default();
    let Ok(mirrors) = find_mirrors(rig, spaces, options, &mut report) else {
        return report;
    };
    compare_weights(rig, spaces, &mirrors, options, &mut report, values);
    report.asymmetric_vertices.sort_by(|a, b| {
        b.difference
            .total_cmp(&a.difference)
            .then(vertex_of(a).cmp(&vertex_of(b)))
    });
    report
}

/// The rig's exact left/right correspondence (what the symmetry check compares and the mirror
/// repair copies through), or why it has none.
pub fn mirrors(rig: &Rig, options: &SymmetryOptions) -> Result<Mirrors, NoMirror> {
    let spaces = super::bind_spaces(rig, &mut Vec::new());
    find_mirrors(rig, &spaces, options, &mut SymmetryReport::default())
}

/// The symmetry check alone, with every asymmetric vertex listed (the rig report groups them by
/// primitive).
pub fn symmetry(rig: &Rig, options: &SymmetryOptions) -> SymmetryReport {
    let spaces = super::bind_spaces(rig, &mut Vec::new());
    check(rig, &spaces, options)
}

/// The symmetry view's value of every vertex: its weight difference from its mirror image, or
/// [`VertexSymmetry::UNMATCHED`], or [`VertexSymmetry::UNCHECKED`]. The weight-difference view
/// of a comparison holds its values the same way, against the matched vertex of the other file
/// (see `compare::WeightsDiff::per_vertex`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VertexSymmetry {
    /// Per mesh, per primitive (index into `Mesh::primitives`), per vertex.
    values: Vec<Vec<Vec<f32>>>,
}

impl VertexSymmetry {
    /// A vertex with no vertex at its mirror image.
    pub const UNMATCHED: f32 = -1.0;
    /// A vertex not compared: not skinned, or the rig has no mirror plane.
    pub const UNCHECKED: f32 = -2.0;

    /// Every vertex unchecked.
    pub(crate) fn unchecked(rig: &Rig) -> VertexSymmetry {
        let values = (rig.meshes.iter())
            .map(|mesh| {
                (mesh.primitives.iter())
                    .map(|p| vec![Self::UNCHECKED; p.vertex_count()])
                    .collect()
            })
            .collect();
        VertexSymmetry { values }
    }

    /// The values of primitive `primitive` (index into `Mesh::primitives`) of mesh `mesh`.
    pub fn of(&self, mesh: usize, primitive: usize) -> Option<&[f32]> {
        Some(self.values.get(mesh)?.get(primitive)?.as_slice())
    }

    /// Sets one vertex's value (nothing for a vertex the rig does not have).
    pub(crate) fn set(&mut self, mesh: usize, primitive: usize, vertex: usize, value: f32) {
        let slot = (self.values.get_mut(mesh)).and_then(|m| m.get_mut(primitive)?.get_mut(vertex));
        if let Some(slot) = slot {
            *slot = value;
        }
    }
}

/// The symmetry check, with every vertex's value for the symmetry view.
pub fn vertex_symmetry(rig: &Rig, options: &SymmetryOptions) -> (SymmetryReport, VertexSymmetry) {
    let spaces = super::bind_spaces(rig, &mut Vec::new());
    let mut values = VertexSymmetry::unchecked(rig);
    let report = check_vertices(rig, &spaces, options, Some(&mut values));
    (report, values)
}

fn vertex_of(a: &AsymmetricVertex) -> VertexRef {
    VertexRef {
        mesh: a.mesh,
        primitive: a.primitive,
        vertex: a.vertex,
    }
}

fn pair(rig: &Rig, c: &(usize, usize, Vec3, Vec3), plane: Option<&Plane>) -> MirrorPair {
    MirrorPair {
        left: c.0,
        right: c.1,
        left_name: node_name(rig, c.0),
        right_name: node_name(rig, c.1),
        error: plane.map_or(f32::NAN, |p| (p.mirror(c.2) - c.3).length()),
    }
}

/// Grid cell of a point for cells `cell` wide.
/// Compares every skinned vertex's weights with its mirror vertex's.
fn compare_weights(
    rig: &Rig,
    spaces: &[BindSpace],
    mirrors: &Mirrors,
    options: &SymmetryOptions,
    report: &mut SymmetryReport,
    mut values: Option<&mut VertexSymmetry>,
) {
    let mut mirror_node: HashMap<usize, usize> = HashMap::new();
    for &(l, r) in &mirrors.joints {
        mirror_node.insert(l, r);
        mirror_node.insert(r, l);
    }
    let influences_of = |mesh: usize, primitive: usize| {
        (spaces.iter())
            .flat_map(|s| &s.parts)
            .find(|p| p.mesh == mesh && p.primitive == primitive)
            .map(|p| p.influences)
    };
    for m in &mirrors.primitives {
        let (Some(own), Some(theirs)) = (
            influences_of(m.mesh, m.primitive),
            influences_of(m.mirror_mesh, m.mirror_primitive),
        ) else {
            continue;
        };
        let (joints, mirror_joints) = (
            rig.skins[m.skin].joints.as_slice(),
            rig.skins[m.mirror_skin].joints.as_slice(),
        );
        let at = |mesh: usize, primitive: usize, v: usize| VertexRef {
            mesh,
            primitive,
            vertex: v as u32,
        };
        for (v, &mirror) in m.vertices.iter().enumerate() {
            report.checked_vertices += 1;
            if mirror == NO_MIRROR {
                if let Some(values) = values.as_deref_mut() {
                    values.set(m.mesh, m.primitive, v, VertexSymmetry::UNMATCHED);
                }
                report.unmatched_vertices += 1;
                if report.unmatched.len() < MAX_LISTED {
                    report.unmatched.push(at(m.mesh, m.gltf_primitive, v));
                }
                continue;
            }
            report.matched_vertices += 1;
            let difference =
                weight_difference((own, v, joints), (theirs, mirror as usize, mirror_joints), &mirror_node);
            report.largest_difference = report.largest_difference.max(difference);
            if let Some(values) = values.as_deref_mut() {
                values.set(m.mesh, m.primitive, v, difference);
            }
            if difference > options.threshold {
                report.asymmetric_count += 1;
                report.asymmetric_vertices.push(AsymmetricVertex {
                    mesh: m.mesh,
                    primitive: m.gltf_primitive,
                    vertex: v as u32,
                    mirror: at(m.mirror_mesh, m.mirror_gltf_primitive, mirror as usize),
                    difference,
                });
            }
        }
    }
}

/// A vertex's influences: the primitive's, the vertex index, and its skin's joint nodes.
type Weights<'a> = (&'a Influences, usize, &'a [usize]);

/// Half the sum over nodes of |normalized weight of `a` − normalized weight of `b` on the
/// mirrored node|. No allocation: at most 8 influences per vertex. Joint indices outside the
/// skin count as nodes of their own, never equal to a real node.
fn weight_difference(a: Weights, b: Weights, mirror_node: &HashMap<usize, usize>) -> f32 {
    let mut nodes = [(0usize, 0.0f32, 0.0f32); 16];
    let mut used = 0;
    let mut add = |node: usize, weight: f32, first: bool| {
        let at = match nodes[..used].iter().position(|e| e.0 == node) {
            Some(at) => at,
            None if used < nodes.len() => {
                nodes[used] = (node, 0.0, 0.0);
                used += 1;
                used - 1
            }
            None => return,
        };
        if first {
            nodes[at].1 += weight;
        } else {
            nodes[at].2 += weight;
        }
    };
    let usable = |w: f32| w > 0.0 && w.is_finite();
    let node_of = |joints: &[usize], j: u16| joints.get(j as usize).copied().unwrap_or(usize::MAX - j as usize);
    let (mut total_a, mut total_b) = (0.0, 0.0);
    for (j, w) in a.0.of_vertex(a.1).filter(|e| usable(e.1)) {
        add(node_of(a.2, j), w, true);
        total_a += w;
    }
    for (j, w) in b.0.of_vertex(b.1).filter(|e| usable(e.1)) {
        let node = node_of(b.2, j);
        add(mirror_node.get(&node).copied().unwrap_or(node), w, false);
        total_b += w;
    }
    let scale = |total: f32| if total > 0.0 { 1.0 / total } else { 0.0 };
    let (sa, sb) = (scale(total_a), scale(total_b));
    nodes[..used].iter().map(|e| (e.1 * sa - e.2 * sb).abs()).sum::<f32>() * 0.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_names_find_their_partners() {
        let cases = [
            ("mixamorig:LeftArm", Side::Left, "mixamorig:rightarm"),
            ("RightHand", Side::Right, "lefthand"),
            ("Hand_L", Side::Left, "hand_r"),
            ("hand.r", Side::Right, "hand.l"),
            ("Foot-L", Side::Left, "foot-r"),
            ("l_arm", Side::Left, "r_arm"),
            ("Bip01 R Thigh", Side::Right, "bip01 l thigh"),
            ("LHand", Side::Left, "rhand"),
            ("UpperArmR", Side::Right, "upperarml"),
            ("Shoulder.L", Side::Left, "shoulder.r"),
        ];
        for (name, side, partner) in cases {
            assert_eq!(partner_name(name), Some((side, partner.to_string())), "{name}");
        }
        for name in ["Hips", "Spine1", "Root", "Lower", "Head", "node 4", "Rl", "L_R"] {
            assert_eq!(partner_name(name), None, "{name}");
        }
    }

    #[test]
    fn the_plane_goes_through_the_midpoints() {
        let n = Vec3::new(1.0, 1.0, 0.0).normalize();
        let pairs = [
            (Vec3::new(2.0, 1.0, 0.0), Vec3::new(0.0, -1.0, 0.0)),
            (Vec3::new(1.5, 1.5, 3.0), Vec3::new(-0.5, -0.5, 3.0)),
        ];
        let plane = fit_plane(&pairs).unwrap();
        assert!(Vec3::from(plane.normal).abs_diff_eq(n, 1e-5));
        assert!((plane.offset - n.dot(Vec3::new(1.0, 0.0, 0.0))).abs() < 1e-5);
        assert!(plane.mirror(pairs[0].0).abs_diff_eq(pairs[0].1, 1e-5));
    }
}
