//! Which vertex mirrors which: the mirror plane, and each primitive's vertices paired with their
//! mirror images (mutual nearest, within a fraction of the local vertex spacing), in the
//! primitive itself or in a twin primitive that mirrors it whole.

use super::{BindSpace, Part};
use crate::anim::Bounds;
use glam::Vec3;
use serde::Serialize;
use std::collections::HashMap;

/// The points p with `normal · p = offset`, in bind space.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Plane {
    pub normal: [f32; 3],
    pub offset: f32,
}

impl Plane {
    pub fn mirror(&self, p: Vec3) -> Vec3 {
        let n = Vec3::from(self.normal);
        p - 2.0 * (n.dot(p) - self.offset) * n
    }
}

fn cell_of(p: Vec3, cell: f32) -> [i64; 3] {
    (p / cell).floor().to_array().map(|c| c as i64)
}

/// Sentinel of [`mirror_vertices`]: the vertex has no mirror.
pub const NO_MIRROR: u32 = u32::MAX;

/// One primitive's vertices welded into points (vertices at one position, as at seams, are one
/// point), each with its matching tolerance, and a grid to find the points near a position.
struct Welded {
    /// Vertex indices sorted by position; point `p`'s copies are `order[starts[p]..starts[p + 1]]`.
    order: Vec<u32>,
    starts: Vec<usize>,
    points: Vec<Vec3>,
    /// `fraction` of the shortest triangle edge at each point (of the primitive's median
    /// shortest edge for a point on no triangle).
    tolerance: Vec<f32>,
    cell: f32,
    /// (cell, point) sorted by cell, and each occupied cell's range in it.
    grid: Vec<([i64; 3], u32)>,
    cells: HashMap<[i64; 3], (usize, usize)>,
}

impl Welded {
    /// `None` when no finite vertex or no usable spacing is left.
    fn new(positions: &[Vec3], triangles: &[[u32; 3]], fraction: f32) -> Option<Welded> {
        let key = |p: Vec3| p.to_array().map(|c| (c + 0.0).to_bits());
        let mut order: Vec<u32> = (0..positions.len() as u32)
            .filter(|&v| positions[v as usize].is_finite())
            .collect();
        order.sort_unstable_by_key(|&v| (key(positions[v as usize]), v));
        let mut point_of = vec![u32::MAX; positions.len()];
        let mut starts: Vec<usize> = Vec::new();
        for (k, &v) in order.iter().enumerate() {
            if k == 0 || key(positions[order[k - 1] as usize]) != key(positions[v as usize]) {
                starts.push(k);
            }
            point_of[v as usize] = (starts.len() - 1) as u32;
        }
        starts.push(order.len());
        let points: Vec<Vec3> = starts[..starts.len() - 1]
            .iter()
            .map(|&s| positions[order[s] as usize])
            .collect();
        if points.is_empty() {
            return None;
        }
        let mut spacing = vec![f32::INFINITY; points.len()];
        for t in triangles {
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                let (Some(&pa), Some(&pb)) = (point_of.get(a as usize), point_of.get(b as usize)) else {
                    continue;
                };
                if pa == u32::MAX || pb == u32::MAX || pa == pb {
                    continue;
                }
                let length = (points[pa as usize] - points[pb as usize]).length();
                for p in [pa, pb] {
                    spacing[p as usize] = spacing[p as usize].min(length);
                }
            }
        }
        let usable = |s: f32| s.is_finite() && s > 0.0;
        let mut known: Vec<f32> = spacing.iter().copied().filter(|&s| usable(s)).collect();
        let typical = if known.is_empty() {
            // No triangle edges: the spacing of points spread evenly through their bounds.
            let mut bounds = Bounds::EMPTY;
            points.iter().for_each(|&p| bounds.include(p));
            bounds.size() / (points.len() as f32).cbrt()
        } else {
            let middle = known.len() / 2;
            *known.select_nth_unstable_by(middle, f32::total_cmp).1
        };
        if !(usable(typical) && fraction > 0.0) {
            return None;
        }
        let tolerance = (spacing.iter())
            .map(|&s| fraction * if usable(s) { s } else { typical })
            .collect();
        let cell = typical;
        let mut grid: Vec<([i64; 3], u32)> = (points.iter().enumerate())
            .map(|(i, &p)| (cell_of(p, cell), i as u32))
            .collect();
        grid.sort_unstable();
        let mut cells: HashMap<[i64; 3], (usize, usize)> = HashMap::new();
        for (k, &(key, _)) in grid.iter().enumerate() {
            cells.entry(key).or_insert((k, k)).1 = k + 1;
        }
        Some(Welded {
            order,
            starts,
            points,
            tolerance,
            cell,
            grid,
            cells,
        })
    }

    /// The point nearest `at` no farther than `radius`.
    fn nearest(&self, at: Vec3, radius: f32) -> Option<u32> {
        let (low, high) = (cell_of(at - radius, self.cell), cell_of(at + radius, self.cell));
        // A radius many cells wide (a sparse point in a dense primitive) is not searched cell
        // by cell: every point is a candidate then.
        let span: i64 = (0..3).map(|a| (high[a] - low[a] + 1).max(1)).product();
        let mut best: Option<(f32, u32)> = None;
        let mut consider = |j: u32| {
            let candidate = ((self.points[j as usize] - at).length(), j);
            if candidate.0 <= radius && best.is_none_or(|b| candidate < b) {
                best = Some(candidate);
            }
        };
        if span as usize > self.points.len() {
            (0..self.points.len() as u32).for_each(&mut consider);
        } else {
            for x in low[0]..=high[0] {
                for y in low[1]..=high[1] {
                    for z in low[2]..=high[2] {
                        if let Some(&(from, to)) = self.cells.get(&[x, y, z]) {
                            self.grid[from..to].iter().for_each(|&(_, j)| consider(j));
                        }
                    }
                }
            }
        }
        best.map(|b| b.1)
    }

    /// For each point, the point of `other` nearest its mirror image within its tolerance.
    fn images_in(&self, other: &Welded, plane: &Plane) -> Vec<Option<u32>> {
        (self.points.iter().zip(&self.tolerance))
            .map(|(&p, &radius)| other.nearest(plane.mirror(p), radius))
            .collect()
    }

    fn copies(&self, point: usize) -> &[u32] {
        &self.order[self.starts[point]..self.starts[point + 1]]
    }

    fn vertex_count(&self) -> usize {
        self.order.len()
    }
}

/// The mirror vertex in `b` of every vertex of `a` ([`NO_MIRROR`] where none) of `vertices`
/// vertices: points that are each other's nearest to their images (mutual nearest). Copies
/// at one position pair in order when both points hold as many, else with the first copy.
fn pair_points(a: &Welded, b: &Welded, plane: &Plane, vertices: usize) -> Vec<u32> {
    let forward = a.images_in(b, plane);
    let backward = if std::ptr::eq(a, b) {
        forward.clone()
    } else {
        b.images_in(a, plane)
    };
    let mut mirrors = vec![NO_MIRROR; vertices];
    for (p, q) in forward.iter().enumerate() {
        let Some(q) = *q else { continue };
        if backward[q as usize] != Some(p as u32) {
            continue;
        }
        let (mine, theirs) = (a.copies(p), b.copies(q as usize));
        for (k, &v) in mine.iter().enumerate() {
            mirrors[v as usize] = if mine.len() == theirs.len() {
                theirs[k]
            } else {
                theirs[0]
            };
        }
    }
    mirrors
}

/// The mirror vertex of every vertex of one primitive ([`NO_MIRROR`] where there is none): the
/// vertex at the mirror image of its position in the same primitive, each the other's nearest
/// to its image (mutual nearest), within `fraction` of the local vertex spacing (the shortest
/// triangle edge at the vertex). Seam copies at one position pair in order; a vertex on the
/// plane is its own mirror.
pub fn mirror_vertices(positions: &[Vec3], triangles: &[[u32; 3]], plane: &Plane, fraction: f32) -> Vec<u32> {
    match Welded::new(positions, triangles, fraction) {
        Some(welded) => pair_points(&welded, &welded, plane, positions.len()),
        None => vec![NO_MIRROR; positions.len()],
    }
}

/// Where a primitive's vertices find their mirrors: in itself, or in a twin primitive that is
/// its mirror image vertex for vertex (a left hand and a right hand as two meshes).
#[derive(Debug, Clone, PartialEq)]
pub struct PrimitiveMirror {
    pub mesh: usize,
    /// Index into `Mesh::primitives`.
    pub primitive: usize,
    pub gltf_primitive: usize,
    pub skin: usize,
    /// The primitive holding the mirror vertices: this one, or its twin.
    pub mirror_mesh: usize,
    pub mirror_primitive: usize,
    pub mirror_gltf_primitive: usize,
    pub mirror_skin: usize,
    /// The mirror vertex of every vertex, or [`NO_MIRROR`].
    pub vertices: Vec<u32>,
}

/// The exact left/right correspondence of a rig: joint pairs by name, the plane they mirror
/// about, and each skinned primitive's vertex mirrors.
#[derive(Debug, Clone, PartialEq)]
pub struct Mirrors {
    pub plane: Plane,
    /// (left, right) rig nodes.
    pub joints: Vec<(usize, usize)>,
    pub primitives: Vec<PrimitiveMirror>,
}

impl Mirrors {
    /// The partner of rig node `node`, or `node` itself when it has none (a centre joint).
    pub fn mirror_node(&self, node: usize) -> usize {
        (self.joints.iter())
            .find_map(|&(l, r)| if l == node { Some(r) } else { (r == node).then_some(l) })
            .unwrap_or(node)
    }
}

/// Why a rig has no left/right correspondence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoMirror {
    #[error("no joints have left/right names, so nothing is known to mirror")]
    NoSideNames,
    #[error(
        "{0} left/right joint name pairs were found but their bind positions do not mirror each other about one plane"
    )]
    JointsNotMirrored(usize),
}

/// Each skinned primitive's vertex mirrors: within the primitive itself, or, for a primitive
/// with no vertex mirrored in itself, in a twin primitive whose every vertex is its mirror
/// image (same vertex count, all mutual nearest). A primitive drawn by several skins counts
/// once, with the first skin.
pub(super) fn primitive_mirrors(spaces: &[BindSpace], plane: &Plane, fraction: f32) -> Vec<PrimitiveMirror> {
    let mut seen = std::collections::HashSet::new();
    let parts: Vec<(usize, &Part)> = (spaces.iter())
        .flat_map(|space| space.parts.iter().map(move |part| (space.skin, part)))
        .filter(|(_, part)| seen.insert((part.mesh, part.primitive)))
        .collect();
    let welded: Vec<Option<Welded>> = (parts.iter())
        .map(|(_, part)| Welded::new(part.positions, &part.triangles, fraction))
        .collect();
    let mut out = Vec::with_capacity(parts.len());
    for (i, &(skin, part)) in parts.iter().enumerate() {
        let count = part.positions.len();
        let mut entry = PrimitiveMirror {
            mesh: part.mesh,
            primitive: part.primitive,
            gltf_primitive: part.gltf_primitive,
            skin,
            mirror_mesh: part.mesh,
            mirror_primitive: part.primitive,
            mirror_gltf_primitive: part.gltf_primitive,
            mirror_skin: skin,
            vertices: vec![NO_MIRROR; count],
        };
        if let Some(own) = &welded[i] {
            entry.vertices = pair_points(own, own, plane, count);
            if entry.vertices.iter().all(|&m| m == NO_MIRROR) {
                let twin = (welded.iter().enumerate())
                    .filter(|&(j, w)| {
                        j != i
                            && parts[j].1.positions.len() == count
                            && w.as_ref().is_some_and(|w| w.vertex_count() == own.vertex_count())
                    })
                    .find_map(|(j, w)| {
                        let vertices = pair_points(own, w.as_ref()?, plane, count);
                        let complete = (0..count).all(|v| vertices[v] != NO_MIRROR || !part.positions[v].is_finite());
                        complete.then_some((j, vertices))
                    });
                if let Some((j, vertices)) = twin {
                    let (twin_skin, twin) = parts[j];
                    entry.mirror_mesh = twin.mesh;
                    entry.mirror_primitive = twin.primitive;
                    entry.mirror_gltf_primitive = twin.gltf_primitive;
                    entry.mirror_skin = twin_skin;
                    entry.vertices = vertices;
                }
            }
        }
        out.push(entry);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 5 × 3 grid of unit squares in z = 0, x from −2 to 2, two triangles each.
    fn grid() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let positions: Vec<Vec3> = (0..3)
            .flat_map(|y| (0..5).map(move |x| Vec3::new(x as f32 - 2.0, y as f32, 0.0)))
            .collect();
        let mut triangles = Vec::new();
        for y in 0..2u32 {
            for x in 0..4u32 {
                let at = |dx: u32, dy: u32| (y + dy) * 5 + x + dx;
                triangles.push([at(0, 0), at(1, 0), at(1, 1)]);
                triangles.push([at(0, 0), at(1, 1), at(0, 1)]);
            }
        }
        (positions, triangles)
    }

    const X_PLANE: Plane = Plane {
        normal: [1.0, 0.0, 0.0],
        offset: 0.0,
    };

    #[test]
    fn each_grid_vertex_mirrors_to_the_vertex_at_minus_x() {
        let (positions, triangles) = grid();
        let mirrors = mirror_vertices(&positions, &triangles, &X_PLANE, 0.25);
        for (v, &m) in mirrors.iter().enumerate() {
            let expected = positions
                .iter()
                .position(|q| *q == positions[v] * Vec3::new(-1.0, 1.0, 1.0));
            assert_eq!(Some(m as usize), expected, "vertex {v} at {}", positions[v]);
        }
    }

    #[test]
    fn seam_copies_pair_in_order_and_a_lone_vertex_has_no_mirror() {
        let (mut positions, mut triangles) = grid();
        // Seam copies of (−1, 1) and (1, 1): two each, used by a triangle of their own.
        let (left, right) = (6u32, 8u32);
        for v in [left, left, right, right] {
            positions.push(positions[v as usize]);
        }
        triangles.push([15, 16, 0]);
        triangles.push([17, 18, 4]);
        // A vertex 0.4 right of (1, 2): its image (−1.4, 2) is 0.4 from (−1, 2), past a quarter
        // of its shortest edge (0.4).
        positions.push(Vec3::new(1.4, 2.0, 0.0));
        triangles.push([13, 19, 8]);
        let mirrors = mirror_vertices(&positions, &triangles, &X_PLANE, 0.25);
        // Each welded point holds three copies on either side: they pair in order.
        assert_eq!([mirrors[6], mirrors[15], mirrors[16]], [8, 17, 18]);
        assert_eq!([mirrors[8], mirrors[17], mirrors[18]], [6, 15, 16]);
        assert_eq!(mirrors[19], NO_MIRROR);
        // (1, 2)'s image is (−1, 2), whose image is (1, 2) again: the lone vertex does not
        // take its place.
        assert_eq!((mirrors[13], mirrors[11]), (11, 13));
        // The centre column is its own mirror.
        assert_eq!((mirrors[2], mirrors[7], mirrors[12]), (2, 7, 12));
    }

    #[test]
    fn a_near_neighbour_that_is_not_the_mirror_is_not_taken() {
        // Left: a vertex at x = −1 whose mirror is missing; right: a vertex at x = 1.2 on a
        // fine strip (edges 0.1), so −1's image (1) is 0.2 from it, two local spacings.
        let mut positions = vec![
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(-1.0, 1.0, 0.0),
            Vec3::new(-2.0, 0.0, 0.0),
        ];
        positions.extend([
            Vec3::new(1.2, 0.0, 0.0),
            Vec3::new(1.3, 0.0, 0.0),
            Vec3::new(1.2, 0.1, 0.0),
        ]);
        let triangles = [[0, 1, 2], [3, 4, 5]];
        // A quarter of −1's spacing (1) reaches 1.2; a quarter of 1.2's (0.1) does not reach
        // back: not mutual.
        let mirrors = mirror_vertices(&positions, &triangles, &X_PLANE, 0.25);
        assert!(mirrors.iter().all(|&m| m == NO_MIRROR), "{mirrors:?}");
    }
}
