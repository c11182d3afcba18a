//! Vertices matched by bind position, and their position and weight changes.
//!
//! Encoders reorder, weld and split vertices, so vertex indices say nothing: each vertex of A
//! is matched to the vertices of B within a tolerance of its bind position (a fraction of the
//! typical edge length of its primitive), found through a grid of cells.

use super::{MAX_LISTED, Sides, SkinRebase, bind_placement};
use crate::anim::PoseBuffers;
use crate::audit::VertexSymmetry;
use crate::rig::Rig;
use crate::skin::SkinnedPose;
use glam::{IVec3, Mat4, Vec3};
use rayon::prelude::*;
use serde::Serialize;

/// One vertex of one drawn primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VertexRef {
    /// The mesh instance (`Rig::instances`) drawing it.
    pub instance: usize,
    pub mesh: usize,
    /// The primitive's index in the file's mesh (as `inspect --vertex` takes it).
    pub primitive: usize,
    /// The primitive's index in `Mesh::primitives`.
    #[serde(skip)]
    pub primitive_index: usize,
    pub vertex: usize,
}

/// A vertex of A and the vertex of B it matched.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VertexChange {
    #[serde(flatten)]
    pub a: VertexRef,
    pub b: VertexRef,
    /// ½ Σ|w − w′| over joints matched by name.
    pub difference: f32,
    /// Distance between the two bind positions, relative to the bind pose's size.
    pub position_change: f32,
}

/// A vertex with no vertex of the other file within the tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UnmatchedVertex {
    /// `a` or `b`: the file the vertex is in.
    pub file: char,
    #[serde(flatten)]
    pub vertex: VertexRef,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct WeightsDiff {
    /// Vertices of A matched to a vertex of B.
    pub compared_vertices: usize,
    /// Vertices of either file without a match.
    pub unmatched_vertices: usize,
    /// The first [`MAX_LISTED`] of them.
    pub unmatched: Vec<UnmatchedVertex>,
    /// The largest weight difference of a matched vertex.
    pub max_difference: f32,
    /// How many matched vertices differ by more than the weight threshold.
    pub changed_count: usize,
    /// Those vertices, worst first (the first [`MAX_LISTED`]).
    pub changed_vertices: Vec<VertexChange>,
    /// The largest bind position change of a matched vertex, relative to the bind pose's size
    /// ([`super::RigDiff::bind_size`]), and the vertex.
    pub max_position_change: f32,
    pub worst_position: Option<VertexChange>,
    /// How many matched vertices moved by more than the position threshold.
    pub moved_count: usize,
    /// Every vertex of A: its weight difference from its match in B, or
    /// [`VertexSymmetry::UNMATCHED`] (the largest over the instances of a mesh drawn more than
    /// once); the weight-difference view draws them.
    #[serde(skip)]
    pub per_vertex: VertexSymmetry,
    /// Every vertex of B the same way, against its match in A (the other side's
    /// weight-difference view).
    #[serde(skip)]
    pub per_vertex_b: VertexSymmetry,
    /// Every matched pair (A's vertex, B's vertex), from A's side then from B's; a pair both
    /// sides found is there twice. Posing both rigs compares these (see `super::poses`).
    #[serde(skip)]
    pub pairs: Vec<(VertexRef, VertexRef)>,
}

impl WeightsDiff {
    pub fn differs(&self) -> bool {
        self.unmatched_vertices > 0 || self.changed_count > 0 || self.moved_count > 0
    }
}

/// Every drawn vertex of one rig: where it is in the bind pose and how close a match must be.
struct VertexTable {
    refs: Vec<VertexRef>,
    positions: Vec<Vec3>,
    /// Per vertex, the match tolerance of its primitive.
    tolerances: Vec<f32>,
}

impl VertexTable {
    /// `rebases` (by skin of the rig): the transform that puts the skin's bind positions where
    /// the other file has them.
    fn new(rig: &Rig, rebase_of_skin: &[Mat4], match_fraction: f32, size: f32) -> VertexTable {
        let pose = crate::anim::PoseBuffers::new(rig);
        VertexTable::placed(rig, match_fraction, size, |i, k, out| {
            let instance = &rig.instances[i];
            let rebase = instance.skin.and_then(|s| rebase_of_skin.get(s)).copied();
            let place = rebase.unwrap_or(Mat4::IDENTITY) * bind_placement(rig, &pose, i);
            let primitive = &rig.meshes[instance.mesh].primitives[k];
            out.extend(primitive.positions.iter().map(|&p| place.transform_point3(p)));
        })
    }

    /// Every vertex where `pose` and `skinned` draw it in the world.
    fn drawn(rig: &Rig, pose: &PoseBuffers, skinned: &SkinnedPose, match_fraction: f32, size: f32) -> VertexTable {
        VertexTable::placed(rig, match_fraction, size, |i, k, out| {
            let world = pose.instance_world(rig, i);
            out.extend(skinned.positions(rig, i, k).iter().map(|&p| world.transform_point3(p)));
        })
    }

    /// The table of the vertices `place(instance, primitive, out)` appends to `out`, one per
    /// vertex of the primitive.
    fn placed(
        rig: &Rig,
        match_fraction: f32,
        size: f32,
        mut place: impl FnMut(usize, usize, &mut Vec<Vec3>),
    ) -> VertexTable {
        let mut table = VertexTable {
            refs: Vec::new(),
            positions: Vec::new(),
            tolerances: Vec::new(),
        };
        for (i, instance) in rig.instances.iter().enumerate() {
            let Some(mesh) = rig.meshes.get(instance.mesh) else {
                continue;
            };
            for (k, primitive) in mesh.primitives.iter().enumerate() {
                let start = table.positions.len();
                place(i, k, &mut table.positions);
                table.positions.truncate(start + primitive.positions.len());
                table.positions.resize(start + primitive.positions.len(), Vec3::NAN);
                let spacing = typical_edge(&table.positions[start..], &primitive.indices);
                let tolerance = match spacing {
                    Some(edge) => edge * match_fraction,
                    None => size * 1e-4,
                };
                let gltf_primitive = rig
                    .facts
                    .primitives
                    .get(instance.mesh)
                    .and_then(|f| f.get(k))
                    .map_or(k, |f| f.gltf_index);
                for v in 0..primitive.positions.len() {
                    table.refs.push(VertexRef {
                        instance: i,
                        mesh: instance.mesh,
                        primitive: gltf_primitive,
                        primitive_index: k,
                        vertex: v,
                    });
                    table.tolerances.push(tolerance);
                }
            }
        }
        table
    }

    /// The joints (as keys shared by both files, see [`JointKeys`]) and weights of a vertex.
    fn influences(&self, rig: &Rig, keys: &[i64], v: usize, out: &mut Influence) {
        out.len = 0;
        let r = self.refs[v];
        let primitive = &rig.meshes[r.mesh].primitives[r.primitive_index];
        let (Some(influences), Some(skin)) = (&primitive.influences, rig.instances[r.instance].skin) else {
            return;
        };
        let joints = &rig.skins[skin].joints;
        for (joint, weight) in influences.of_vertex(r.vertex) {
            // A joint index outside the skin names no joint: the report flags it; it weighs
            // nothing here.
            let Some(&node) = joints.get(usize::from(joint)) else {
                continue;
            };
            if weight != 0.0 {
                out.add(keys[node], weight);
            }
        }
    }
}

/// The median length of a primitive's non-degenerate triangle edges.
fn typical_edge(positions: &[Vec3], indices: &[u32]) -> Option<f32> {
    let mut lengths: Vec<f32> = indices
        .chunks_exact(3)
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .filter_map(|(i, j)| Some((*positions.get(i as usize)? - *positions.get(j as usize)?).length()))
        .filter(|l| l.is_finite() && *l > 0.0)
        .collect();
    if lengths.is_empty() {
        return None;
    }
    let middle = lengths.len() / 2;
    Some(*lengths.select_nth_unstable_by(middle, f32::total_cmp).1)
}

/// Most (joint, weight) pairs a vertex has: two sets of four.
const MAX_INFLUENCES: usize = 8;

/// A vertex's weights per joint key, repeated joints summed.
#[derive(Clone, Copy)]
struct Influence {
    pairs: [(i64, f32); MAX_INFLUENCES],
    len: usize,
}

impl Influence {
    const EMPTY: Influence = Influence {
        pairs: [(0, 0.0); MAX_INFLUENCES],
        len: 0,
    };

    fn add(&mut self, key: i64, weight: f32) {
        if let Some(pair) = self.pairs[..self.len].iter_mut().find(|p| p.0 == key) {
            pair.1 += weight;
        } else if self.len < MAX_INFLUENCES {
            self.pairs[self.len] = (key, weight);
            self.len += 1;
        }
    }

    fn weight(&self, key: i64) -> f32 {
        self.pairs[..self.len].iter().find(|p| p.0 == key).map_or(0.0, |p| p.1)
    }

    /// ½ Σ|w − w′| over the joints of either.
    fn difference(&self, other: &Influence) -> f32 {
        let mine: f32 = self.pairs[..self.len]
            .iter()
            .map(|&(key, w)| (w - other.weight(key)).abs())
            .sum();
        let theirs: f32 = other.pairs[..other.len]
            .iter()
            .filter(|&&(key, _)| !self.pairs[..self.len].iter().any(|p| p.0 == key))
            .map(|&(_, w)| w.abs())
            .sum();
        0.5 * (mine + theirs)
    }
}

/// Keys naming each node the same way in both files: B's node index for nodes of B and for
/// nodes of A matched to one, `-(node + 1)` for nodes of A without a match.
fn joint_keys(sides: &Sides) -> (Vec<i64>, Vec<i64>) {
    let keys_a = (0..sides.a.nodes.len())
        .map(|n| match sides.nodes.a_to_b[n] {
            Some(m) => m as i64,
            None => -(n as i64) - 1,
        })
        .collect();
    let keys_b = (0..sides.b.nodes.len()).map(|m| m as i64).collect();
    (keys_a, keys_b)
}

/// Vertex indices sorted by grid cell, to find the vertices near a point.
struct Grid {
    cell: f32,
    /// (cell key, vertex), sorted.
    entries: Vec<(u64, u32)>,
}

impl Grid {
    /// Cells a query may reach out to on each side; the cell grows to keep to it.
    const REACH: f32 = 4.0;

    fn new(positions: &[Vec3], tolerances: &[f32]) -> Grid {
        let mut sorted: Vec<f32> = tolerances.iter().copied().filter(|t| *t > 0.0).collect();
        let median = if sorted.is_empty() {
            1.0
        } else {
            let middle = sorted.len() / 2;
            *sorted.select_nth_unstable_by(middle, f32::total_cmp).1
        };
        let widest = tolerances.iter().copied().fold(0.0f32, f32::max);
        let cell = median.max(widest / Self::REACH).max(f32::MIN_POSITIVE);
        let cell_of = |p: Vec3| cell_key((p / cell).floor().as_ivec3());
        let mut entries: Vec<(u64, u32)> = positions
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_finite())
            .map(|(v, &p)| (cell_of(p), v as u32))
            .collect();
        entries.sort_unstable();
        Grid { cell, entries }
    }

    fn cell_of(&self, p: Vec3) -> IVec3 {
        (p / self.cell).floor().as_ivec3()
    }

    /// Calls `visit` with every vertex in the cells within `radius` of `p`.
    fn near(&self, p: Vec3, radius: f32, mut visit: impl FnMut(usize)) {
        if !p.is_finite() {
            return;
        }
        let reach = (radius / self.cell).ceil().min(Self::REACH) as i32;
        let center = self.cell_of(p);
        for x in -reach..=reach {
            for y in -reach..=reach {
                for z in -reach..=reach {
                    let key = cell_key(center + IVec3::new(x, y, z));
                    let start = self.entries.partition_point(|e| e.0 < key);
                    for &(k, v) in &self.entries[start..] {
                        if k != key {
                            break;
                        }
                        visit(v as usize);
                    }
                }
            }
        }
    }
}

/// Packs a cell's coordinates into one sortable key (21 bits each; far cells may share a key,
/// which only adds candidates that the distance check then rejects).
fn cell_key(c: IVec3) -> u64 {
    let part = |v: i32| (v as i64 + (1 << 20)) as u64 & ((1 << 21) - 1);
    (part(c.x) << 42) | (part(c.y) << 21) | part(c.z)
}

/// One file's vertices, for matching against the other's.
struct Side<'a> {
    rig: &'a Rig,
    table: &'a VertexTable,
    keys: &'a [i64],
    grid: &'a Grid,
}

/// For every vertex of `from`, its best match in `to`: the nearest within the tolerance, and of
/// the vertices at that place (seams, welds) the one weighted most alike.
fn best_matches(from: &Side, to: &Side) -> Vec<Match> {
    (0..from.table.refs.len())
        .into_par_iter()
        .map_init(
            || (Influence::EMPTY, Influence::EMPTY),
            |(mine, theirs), v| {
                let (p, tolerance) = (from.table.positions[v], from.table.tolerances[v]);
                let mut nearest = f32::INFINITY;
                to.grid.near(p, tolerance, |w| {
                    nearest = nearest.min(p.distance(to.table.positions[w]))
                });
                if nearest > tolerance {
                    return None;
                }
                from.table.influences(from.rig, from.keys, v, mine);
                let same_place = nearest + tolerance * SAME_PLACE;
                let mut best: Match = None;
                to.grid.near(p, tolerance, |w| {
                    let distance = p.distance(to.table.positions[w]);
                    if distance > same_place {
                        return;
                    }
                    to.table.influences(to.rig, to.keys, w, theirs);
                    let difference = mine.difference(theirs);
                    if best.is_none_or(|(_, d, diff)| (difference, distance) < (diff, d)) {
                        best = Some((w, distance, difference));
                    }
                });
                best
            },
        )
        .collect()
}

/// Vertices closer than this fraction of the match tolerance to the nearest one count as being
/// at the same place.
const SAME_PLACE: f32 = 0.05;

/// The match of one vertex: (vertex of the other file, distance, weight difference).
type Match = Option<(usize, f32, f32)>;

/// Every vertex of `rig`: the weight difference from its match, [`VertexSymmetry::UNMATCHED`]
/// without one (the largest over the instances of a mesh drawn more than once).
fn per_vertex(rig: &Rig, table: &VertexTable, matches: &[Match]) -> VertexSymmetry {
    let mut values = VertexSymmetry::unchecked(rig);
    for (r, found) in table.refs.iter().zip(matches) {
        let value = found.map_or(VertexSymmetry::UNMATCHED, |(_, _, difference)| difference);
        let old = values.of(r.mesh, r.primitive_index).and_then(|v| v.get(r.vertex));
        if old.is_some_and(|&old| value > old) {
            values.set(r.mesh, r.primitive_index, r.vertex, value);
        }
    }
    values
}

pub(super) fn compare_vertices(sides: &Sides, rebases: &[SkinRebase]) -> WeightsDiff {
    let (a, b, size) = (sides.a, sides.b, sides.bind_size);
    let fraction = sides.thresholds.vertex_match;
    let mut rebase_of_skin = vec![Mat4::IDENTITY; b.skins.len()];
    for rebase in rebases {
        // B's positions are S⁻¹ of A's (see `SkinRebase`).
        rebase_of_skin[rebase.skin_b] = rebase.transform;
    }
    let table_a = VertexTable::new(a, &[], fraction, size);
    let table_b = VertexTable::new(b, &rebase_of_skin, fraction, size);
    let (matches, matches_from_b) = match_both_ways(sides, &table_a, &table_b);
    let unmatched_b: Vec<usize> = (0..table_b.refs.len())
        .filter(|&w| matches_from_b[w].is_none())
        .collect();

    let mut diff = WeightsDiff {
        per_vertex: per_vertex(a, &table_a, &matches),
        per_vertex_b: per_vertex(b, &table_b, &matches_from_b),
        ..WeightsDiff::default()
    };
    let mut changed = Vec::new();
    for (v, found) in matches.iter().enumerate() {
        let Some((w, distance, difference)) = *found else {
            diff.unmatched_vertices += 1;
            if diff.unmatched.len() < MAX_LISTED {
                diff.unmatched.push(UnmatchedVertex {
                    file: 'a',
                    vertex: table_a.refs[v],
                });
            }
            continue;
        };
        diff.compared_vertices += 1;
        let change = VertexChange {
            a: table_a.refs[v],
            b: table_b.refs[w],
            difference,
            position_change: distance / size,
        };
        diff.max_difference = diff.max_difference.max(difference);
        if change.position_change > diff.max_position_change || diff.worst_position.is_none() {
            diff.max_position_change = change.position_change;
            diff.worst_position = Some(change);
        }
        if change.position_change > sides.thresholds.position {
            diff.moved_count += 1;
        }
        if difference > sides.thresholds.weight {
            changed.push(change);
        }
    }
    diff.unmatched_vertices += unmatched_b.len();
    for &w in &unmatched_b {
        if diff.unmatched.len() < MAX_LISTED {
            diff.unmatched.push(UnmatchedVertex {
                file: 'b',
                vertex: table_b.refs[w],
            });
        }
    }
    let matched_pairs: std::collections::HashSet<(usize, usize)> = matches
        .iter()
        .enumerate()
        .filter_map(|(v, m)| m.map(|(w, _, _)| (v, w)))
        .collect();
    for (w, found) in matches_from_b.iter().enumerate() {
        let Some((v, distance, difference)) = *found else {
            continue;
        };
        diff.max_difference = diff.max_difference.max(difference);
        if difference > sides.thresholds.weight && !matched_pairs.contains(&(v, w)) {
            changed.push(VertexChange {
                a: table_a.refs[v],
                b: table_b.refs[w],
                difference,
                position_change: distance / size,
            });
        }
    }
    diff.pairs = pairs_of(&table_a, &table_b, &matches, &matches_from_b);
    changed.sort_by(|x, y| y.difference.total_cmp(&x.difference));
    diff.changed_count = changed.len();
    changed.truncate(MAX_LISTED);
    diff.changed_vertices = changed;
    diff
}

/// One rig as posed for [`drawn_pairs`].
pub(super) struct Drawn<'a> {
    pub pose: &'a PoseBuffers,
    pub skinned: &'a SkinnedPose,
}

/// Vertex pairs matched where the two rigs draw their vertices in the world in the given poses,
/// from both sides as [`compare_vertices`] matches them in the bind pose; for files whose bind
/// spaces differ in more than one transform per skin (another tool's bone orientations).
pub(super) fn drawn_pairs(sides: &Sides, a: Drawn, b: Drawn) -> Vec<(VertexRef, VertexRef)> {
    let (fraction, size) = (sides.thresholds.vertex_match, sides.size);
    let table_a = VertexTable::drawn(sides.a, a.pose, a.skinned, fraction, size);
    let table_b = VertexTable::drawn(sides.b, b.pose, b.skinned, fraction, size);
    let (from_a, from_b) = match_both_ways(sides, &table_a, &table_b);
    pairs_of(&table_a, &table_b, &from_a, &from_b)
}

/// The best match of every vertex of A in B, and of every vertex of B in A. Matching from B's
/// side too finds a changed vertex that has an unchanged twin at the same place in A (a seam):
/// A's vertices both match B's unchanged twin, B's changed one matches neither.
fn match_both_ways(sides: &Sides, table_a: &VertexTable, table_b: &VertexTable) -> (Vec<Match>, Vec<Match>) {
    let (keys_a, keys_b) = joint_keys(sides);
    let (grid_a, grid_b) = (
        Grid::new(&table_a.positions, &table_a.tolerances),
        Grid::new(&table_b.positions, &table_b.tolerances),
    );
    let side_a = Side {
        rig: sides.a,
        table: table_a,
        keys: &keys_a,
        grid: &grid_a,
    };
    let side_b = Side {
        rig: sides.b,
        table: table_b,
        keys: &keys_b,
        grid: &grid_b,
    };
    (best_matches(&side_a, &side_b), best_matches(&side_b, &side_a))
}

/// Every matched pair (A's vertex, B's vertex): A's matches, then B's.
fn pairs_of(
    table_a: &VertexTable,
    table_b: &VertexTable,
    from_a: &[Match],
    from_b: &[Match],
) -> Vec<(VertexRef, VertexRef)> {
    let pairs_a = from_a
        .iter()
        .enumerate()
        .filter_map(|(v, m)| m.map(|(w, _, _)| (table_a.refs[v], table_b.refs[w])));
    let pairs_b = from_b
        .iter()
        .enumerate()
        .filter_map(|(w, m)| m.map(|(v, _, _)| (table_a.refs[v], table_b.refs[w])));
    pairs_a.chain(pairs_b).collect()
}
