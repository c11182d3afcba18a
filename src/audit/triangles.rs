//! The per-triangle part of a pose's measures (area ratios, edge stretch, flips and each
//! corner's score), eight triangles at a time.
//!
//! Every triangle's numbers are computed with the same operations in the same order as one at
//! a time, so they have the same bits; only the order in which minima, maxima, the flip count
//! and the corners' scores are gathered changes, and that order matters only for NaN, which
//! `f32::min` and `f32::max` skip while a plain comparison does not. So the lanes run only on
//! poses whose coordinates are all below [`LANE_LIMIT`] in size (no NaN, and no infinity
//! minus infinity in a cross product) and on regions whose bind measures are finite; anything
//! else goes one triangle at a time, in order.
//!
//! A pose reports only its few worst vertices, so the lanes raise the corners' scores only for
//! triangles whose factor can still be among them (see [`Selection`]); the scores of the
//! vertices that can be reported are the same as if every triangle had raised them.

use super::measure::{FLIPPED_SCORE, TriangleBind};
use glam::{Mat3, Vec3};

/// Triangles a step.
const LANES: usize = 8;
/// Largest coordinate the lanes take: products of two edge components stay far from
/// overflow, so no cross product subtracts infinities.
const LANE_LIMIT: f32 = 1e15;

/// Most worst vertices a pose selects triangles for: keeping the block maxima sorted costs
/// up to this many moves a block, so more reported vertices raise every score instead.
const MAX_SELECTED: usize = 64;

/// What one pose's triangles add up to (squared ratios).
pub(super) struct TriangleTotals {
    pub(super) min_area2: f32,
    pub(super) max_area2: f32,
    pub(super) max_edge2: f32,
    pub(super) flipped: usize,
}

/// [`LANES`] triangles' bind measures, each measure lane by lane: laid out once per joint so
/// that every pose reads them as whole registers instead of copying them out of
/// [`TriangleBind`]s.
#[derive(Clone, Copy, Default)]
pub(super) struct TriangleBlock {
    /// Corner, then lane.
    corners: [[u32; LANES]; 3],
    inv_edges2: [[f32; LANES]; 3],
    inv_area2: [f32; LANES],
    /// Coordinate, then lane.
    normal: [[f32; LANES]; 3],
    moved: [f32; LANES],
}

/// The whole blocks of `triangles`, in order; the last `triangles.len() % LANES` are left to
/// one at a time.
pub(super) fn triangle_blocks(triangles: &[TriangleBind]) -> Vec<TriangleBlock> {
    triangles
        .chunks_exact(LANES)
        .map(|chunk| {
            let mut block = TriangleBlock::default();
            for (lane, t) in chunk.iter().enumerate() {
                for k in 0..3 {
                    block.corners[k][lane] = t.corners[k];
                    block.inv_edges2[k][lane] = t.inv_edges2[k];
                }
                block.inv_area2[lane] = t.inv_area2;
                block.normal[0][lane] = t.normal.x;
                block.normal[1][lane] = t.normal.y;
                block.normal[2][lane] = t.normal.z;
                block.moved[lane] = t.moved;
            }
            block
        })
        .collect()
}

/// Which triangles raise their corners' scores in the lanes.
///
/// With `keep` vertices reported, let τ be the smallest of the `keep` largest block maxima
/// (each block's largest factor). Only triangles with a factor of at least τ can give a vertex
/// a score of τ or more, so a vertex scoring τ or more gets its exact score from them (or from
/// the triangles and slice measured one at a time, which raise every score). When the
/// triangles behind those block maxima have `keep` distinct corners, that many vertices score
/// τ or more, every reported vertex is among them, and a vertex left lower cannot displace one.
/// The threshold in force while the blocks are measured never exceeds the final τ, so every
/// triangle needed has raised its corners. Otherwise every triangle raises them.
#[derive(Debug, Default)]
pub(super) struct Selection {
    /// The largest block maxima so far with their triangle's corners, largest first.
    best: Vec<(f32, [u32; 3])>,
    /// Scratch for counting the distinct corners of `best`.
    corners: Vec<u32>,
    /// Each block triangle's squared distortion factor, in order.
    factors: Vec<f32>,
}

impl Selection {
    /// Whether the triangles in `best` have `keep` distinct corners.
    fn enough_corners(&mut self, keep: usize) -> bool {
        self.corners.clear();
        self.corners.extend(self.best.iter().flat_map(|b| b.1));
        self.corners.sort_unstable();
        self.corners.dedup();
        self.corners.len() >= keep
    }
}

/// Measures every triangle of `triangles` on `posed`, raising the corners' `score` to the
/// triangles' squared distortion factors as far as the `keep` worst vertices need them (see
/// [`Selection`]). `blocks`: [`triangle_blocks`] of `triangles`; `bind_finite`: every
/// triangle's bind measures are finite (see [`super::measure::Region`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn measure_triangles(
    triangles: &[TriangleBind],
    blocks: &[TriangleBlock],
    posed: &[Vec3],
    rotation: &Mat3,
    floor2: f32,
    bind_finite: bool,
    keep: usize,
    selection: &mut Selection,
    score: &mut [f32],
) -> TriangleTotals {
    let mut totals = TriangleTotals {
        min_area2: f32::INFINITY,
        max_area2: 0.0,
        max_edge2: 1.0,
        flipped: 0,
    };
    let tame = bind_finite && posed.iter().all(|p| p.abs().max_element() < LANE_LIMIT);
    let mut rest = triangles;
    if tame {
        let pose = Pose {
            blocks,
            posed,
            rotation,
            floor2,
        };
        let factors = &mut selection.factors;
        factors.resize(blocks.len() * LANES, 0.0);
        lanes(&pose, &mut totals, factors);
        selection.best.clear();
        if keep > MAX_SELECTED {
            raise_scores(blocks, &selection.factors, score, None);
        } else {
            raise_scores(blocks, &selection.factors, score, Some((keep, &mut selection.best)));
            if keep > 0 && selection.best.len() == keep && !selection.enough_corners(keep) {
                raise_scores(blocks, &selection.factors, score, None);
            }
        }
        rest = &triangles[blocks.len() * LANES..];
    }
    for t in rest {
        one(t, posed, rotation, floor2, &mut totals, score);
    }
    totals
}

/// One triangle, the measures gathered with `f32::min` and `f32::max`.
#[inline(always)]
fn one(t: &TriangleBind, posed: &[Vec3], rotation: &Mat3, floor2: f32, totals: &mut TriangleTotals, score: &mut [f32]) {
    let [a, b, c] = t.corners.map(|i| posed[i as usize]);
    let edges = [b - a, c - b, a - c];
    // The factor is the largest of every ratio and of its inverse. A correctly rounded
    // reciprocal never increases as its argument grows, so the largest inverse is the inverse
    // of the smallest ratio: one division where there were one per ratio, with the same bits.
    let (mut least2, mut factor2) = (f32::INFINITY, 1.0f32);
    for (edge, inverse) in edges.iter().zip(t.inv_edges2) {
        if inverse > 0.0 {
            let r2 = (edge.length_squared() * inverse).max(floor2);
            least2 = least2.min(r2);
            factor2 = factor2.max(r2);
        }
    }
    factor2 = factor2.max(1.0 / least2);
    totals.max_edge2 = totals.max_edge2.max(factor2);
    if t.inv_area2 > 0.0 {
        let normal = edges[0].cross(-edges[2]);
        let r2 = normal.length_squared() * t.inv_area2;
        totals.min_area2 = totals.min_area2.min(r2);
        totals.max_area2 = totals.max_area2.max(r2);
        let r2 = r2.max(floor2);
        factor2 = factor2.max(r2.max(1.0 / r2));
        if normal.dot(expected_normal(t, rotation)) < 0.0 {
            totals.flipped += 1;
            factor2 += FLIPPED_SCORE;
        }
    }
    for &i in &t.corners {
        let s = &mut score[i as usize];
        *s = s.max(factor2);
    }
}

/// The bind normal turned towards the joint's rotated normal by the triangle's moved weight.
#[inline(always)]
fn expected_normal(t: &TriangleBind, rotation: &Mat3) -> Vec3 {
    t.normal + t.moved * (*rotation * t.normal - t.normal)
}

/// `a < b ? a : b` and its mirror: `f32::min` and `f32::max` where no NaN can occur, in a form
/// the compiler turns into packed minimum and maximum instructions.
#[inline(always)]
fn lesser(a: f32, b: f32) -> f32 {
    if a < b { a } else { b }
}

#[inline(always)]
fn greater(a: f32, b: f32) -> f32 {
    if a > b { a } else { b }
}

/// Whole blocks of [`LANES`] triangles on a tame pose.
struct Pose<'a> {
    blocks: &'a [TriangleBlock],
    posed: &'a [Vec3],
    rotation: &'a Mat3,
    floor2: f32,
}

/// The `keep` worst vertices a pose reports and the block maxima kept for them (see
/// [`Selection`]); `None` raises every corner's score.
type Select<'a> = Option<(usize, &'a mut Vec<(f32, [u32; 3])>)>;

/// Measures `pose`'s triangles into `totals` and each one's squared factor into `factors`.
fn lanes(pose: &Pose<'_>, totals: &mut TriangleTotals, factors: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::Kernel::Avx2Fma.is_enabled() {
        // SAFETY: the CPU has AVX2 (`is_enabled` implies `is_available`, which checks it); the
        // function is otherwise safe code.
        return unsafe { lanes_avx2(pose, totals, factors) };
    }
    lanes_body(pose, totals, factors);
}

/// [`lanes_body`] compiled for eight-wide registers. The compiler does not fuse multiplies
/// and adds on its own, so the bits stay those of the baseline build.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lanes_avx2(pose: &Pose<'_>, totals: &mut TriangleTotals, factors: &mut [f32]) {
    lanes_body(pose, totals, factors);
}

#[inline(always)]
fn lanes_body(pose: &Pose<'_>, totals: &mut TriangleTotals, factors: &mut [f32]) {
    let &Pose {
        blocks,
        posed,
        rotation,
        floor2,
    } = pose;
    let mut min_area2 = [f32::INFINITY; LANES];
    let mut max_area2 = [0.0f32; LANES];
    let mut max_edge2 = [1.0f32; LANES];
    let mut flipped = [0u32; LANES];
    // Corner, then coordinate, then lane: the only part of a block that is fetched per pose.
    let mut corners = [[[0.0f32; LANES]; 3]; 3];
    let [rx, ry, rz] = [rotation.x_axis, rotation.y_axis, rotation.z_axis];
    for (block, factor2) in blocks.iter().zip(factors.as_chunks_mut::<LANES>().0) {
        for (k, gathered) in corners.iter_mut().enumerate() {
            for (lane, &i) in block.corners[k].iter().enumerate() {
                let p = posed[i as usize];
                gathered[0][lane] = p.x;
                gathered[1][lane] = p.y;
                gathered[2][lane] = p.z;
            }
        }
        // One flat loop over the lanes, glam's operations written out in its order (`Vec3`
        // subtraction, `length_squared` as (x² + y²) + z², `cross`, `dot`, `Mat3 * Vec3` as
        // (x_axis·x + y_axis·y) + z_axis·z), so that the compiler vectorizes it across the lanes.
        let [[ax, ay, az], [bx, by, bz], [cx, cy, cz]] = &corners;
        let [inv0, inv1, inv2] = &block.inv_edges2;
        let [bind_x, bind_y, bind_z] = &block.normal;
        for l in 0..LANES {
            let (e0x, e0y, e0z) = (bx[l] - ax[l], by[l] - ay[l], bz[l] - az[l]);
            let (e1x, e1y, e1z) = (cx[l] - bx[l], cy[l] - by[l], cz[l] - bz[l]);
            let (e2x, e2y, e2z) = (ax[l] - cx[l], ay[l] - cy[l], az[l] - cz[l]);
            let length2 = |x: f32, y: f32, z: f32| x * x + y * y + z * z;
            let r0 = greater(length2(e0x, e0y, e0z) * inv0[l], floor2);
            let r1 = greater(length2(e1x, e1y, e1z) * inv1[l], floor2);
            let r2 = greater(length2(e2x, e2y, e2z) * inv2[l], floor2);
            // An edge too short to measure adds nothing: infinity to the least, 1 to the
            // factor, which starts there.
            let (m0, m1, m2) = (inv0[l] > 0.0, inv1[l] > 0.0, inv2[l] > 0.0);
            let least2 = lesser(
                lesser(if m0 { r0 } else { f32::INFINITY }, if m1 { r1 } else { f32::INFINITY }),
                if m2 { r2 } else { f32::INFINITY },
            );
            let mut factor = greater(
                greater(if m0 { r0 } else { 1.0 }, if m1 { r1 } else { 1.0 }),
                greater(if m2 { r2 } else { 1.0 }, 1.0),
            );
            factor = greater(factor, 1.0 / least2);
            max_edge2[l] = greater(max_edge2[l], factor);
            // `edges[0].cross(-edges[2])`.
            let (mx, my, mz) = (-e2x, -e2y, -e2z);
            let (nx, ny, nz) = (e0y * mz - my * e0z, e0z * mx - mz * e0x, e0x * my - mx * e0y);
            let measured = block.inv_area2[l] > 0.0;
            let area2 = length2(nx, ny, nz) * block.inv_area2[l];
            min_area2[l] = lesser(min_area2[l], if measured { area2 } else { f32::INFINITY });
            max_area2[l] = greater(max_area2[l], if measured { area2 } else { 0.0 });
            let floored = greater(area2, floor2);
            let area_factor = greater(floored, 1.0 / floored);
            factor = greater(factor, if measured { area_factor } else { 1.0 });
            // `expected_normal`.
            let (sx, sy, sz, moved) = (bind_x[l], bind_y[l], bind_z[l], block.moved[l]);
            let turned_x = rx.x * sx + ry.x * sy + rz.x * sz;
            let turned_y = rx.y * sx + ry.y * sy + rz.y * sz;
            let turned_z = rx.z * sx + ry.z * sy + rz.z * sz;
            let expected_x = sx + moved * (turned_x - sx);
            let expected_y = sy + moved * (turned_y - sy);
            let expected_z = sz + moved * (turned_z - sz);
            // `&`, not `&&`: both sides are computed in every lane, so the compiler needs no masked
            // loads or stores, which are slow on AMD cores.
            let flip = measured & (nx * expected_x + ny * expected_y + nz * expected_z < 0.0);
            flipped[l] += u32::from(flip);
            factor2[l] = if flip { factor + FLIPPED_SCORE } else { factor };
        }
    }
    for lane in 0..LANES {
        totals.min_area2 = lesser(totals.min_area2, min_area2[lane]);
        totals.max_area2 = greater(totals.max_area2, max_area2[lane]);
        totals.max_edge2 = greater(totals.max_edge2, max_edge2[lane]);
        totals.flipped += flipped[lane] as usize;
    }
}

/// Raises the corners' scores to the blocks' `factors`, all of them or as [`Selection`] needs.
fn raise_scores(blocks: &[TriangleBlock], factors: &[f32], score: &mut [f32], mut select: Select<'_>) {
    // Factors below it raise no score; nothing is reported when nothing is kept.
    let mut threshold = match select {
        Some((0, _)) => f32::INFINITY,
        _ => f32::NEG_INFINITY,
    };
    for (block, factor2) in blocks.iter().zip(factors.as_chunks::<LANES>().0) {
        let block_max = factor2.iter().fold(f32::NEG_INFINITY, |m, &f| greater(m, f));
        if block_max < threshold {
            continue;
        }
        for corner in &block.corners {
            for (&i, &factor) in corner.iter().zip(factor2) {
                if factor >= threshold {
                    let s = &mut score[i as usize];
                    *s = greater(*s, factor);
                }
            }
        }
        if let Some((keep, best)) = &mut select
            && block_max > threshold
        {
            let lane = factor2.iter().position(|&f| f == block_max).unwrap_or(0);
            let at = best.partition_point(|b| b.0 >= block_max);
            best.insert(at, (block_max, block.corners.map(|c| c[lane])));
            best.truncate(*keep);
            if best.len() == *keep {
                threshold = best[*keep - 1].0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skin::fast::tests::Rng;
    use glam::Quat;

    /// Triangles over `vertices` random vertices, some with edges or areas left unmeasured.
    fn triangles(rng: &mut Rng, count: usize, vertices: u64) -> Vec<TriangleBind> {
        (0..count)
            .map(|i| TriangleBind {
                corners: [0; 3].map(|_| rng.below(vertices) as u32),
                inv_edges2: [0; 3].map(|_| if rng.below(7) == 0 { 0.0 } else { rng.range(0.1, 50.0) }),
                inv_area2: if i % 5 == 0 { 0.0 } else { rng.range(0.1, 80.0) },
                normal: rng.vec3(1.0).normalize_or_zero(),
                moved: rng.range(0.0, 1.0),
            })
            .collect()
    }

    /// Every triangle on its own, in order: what the measures were before the lanes.
    fn one_at_a_time(triangles: &[TriangleBind], posed: &[Vec3], rotation: &Mat3, score: &mut [f32]) -> TriangleTotals {
        let mut totals = TriangleTotals {
            min_area2: f32::INFINITY,
            max_area2: 0.0,
            max_edge2: 1.0,
            flipped: 0,
        };
        for t in triangles {
            one(t, posed, rotation, 1e-12, &mut totals, score);
        }
        totals
    }

    fn bits(t: &TriangleTotals) -> [u32; 4] {
        [
            t.min_area2.to_bits(),
            t.max_area2.to_bits(),
            t.max_edge2.to_bits(),
            t.flipped as u32,
        ]
    }

    /// The `keep` highest scores above 1 with their vertices, highest first, then the lowest
    /// vertex: what a pose reports.
    fn reported(score: &[f32], keep: usize) -> Vec<(u32, usize)> {
        let mut listed: Vec<(f32, usize)> = score
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 1.0)
            .map(|(v, &s)| (s, v))
            .collect();
        listed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        listed.truncate(keep);
        listed.into_iter().map(|(s, v)| (s.to_bits(), v)).collect()
    }

    #[test]
    fn the_lanes_give_the_bits_and_worst_vertices_of_one_triangle_at_a_time() {
        let mut rng = Rng(0x5EED_1234_ABCD_0001);
        let rotation = Mat3::from_quat(Quat::from_axis_angle(Vec3::new(0.3, -0.8, 0.5).normalize(), 1.3));
        let mut selection = Selection::default();
        // (64, 3): eight blocks over three vertices, too few corners for five worst vertices.
        for (count, vertices) in [(1003, 400), (64, 20), (7, 9), (17, 3), (64, 3)] {
            let triangles = triangles(&mut rng, count, vertices);
            let blocks = triangle_blocks(&triangles);
            let mut posed: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
            // Degenerate corners: a repeated position collapses an edge and the area.
            posed[1] = posed[0];
            let collapsed = vec![posed[0]; posed.len()];
            for bad in [
                None,
                Some(Vec3::NAN),
                Some(Vec3::splat(f32::INFINITY)),
                Some(Vec3::splat(3e20)),
            ] {
                if let Some(bad) = bad {
                    posed[2] = bad;
                }
                // Every triangle collapsed: all factors tie, so the lowest vertices are reported.
                let poses: &[&[Vec3]] = if bad.is_none() {
                    &[&posed, &collapsed]
                } else {
                    &[&posed]
                };
                for (which, &posed) in poses.iter().enumerate() {
                    let mut want_score = vec![0.0; posed.len()];
                    let want = one_at_a_time(&triangles, posed, &rotation, &mut want_score);
                    if count >= 64 && vertices > 3 && bad.is_none() && which == 0 {
                        assert!(want.flipped > 0 && want.flipped < count, "{}", want.flipped);
                    }
                    for keep in [0, 1, 5, MAX_SELECTED, MAX_SELECTED + 1, vertices as usize] {
                        let mut got_score = vec![0.0; posed.len()];
                        let got = measure_triangles(
                            &triangles,
                            &blocks,
                            posed,
                            &rotation,
                            1e-12,
                            true,
                            keep,
                            &mut selection,
                            &mut got_score,
                        );
                        assert_eq!(bits(&got), bits(&want), "{count} triangles, {bad:?}, keep {keep}");
                        assert_eq!(
                            reported(&got_score, keep),
                            reported(&want_score, keep),
                            "{count} triangles, {bad:?}, keep {keep}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn worst_triangles_sharing_their_corners_leave_no_vertex_unscored() {
        let mut rng = Rng(0x5EED_1234_ABCD_0002);
        let rotation = Mat3::from_quat(Quat::from_axis_angle(Vec3::Z, 0.4));
        // Five blocks of collapsed triangles on vertices 0 and 1 set the threshold out of
        // reach; the sixth block's other triangles fall below it, yet their corners 2 to 4 are
        // among the five worst vertices.
        let mut triangles = triangles(&mut rng, 48, 5);
        for (i, t) in triangles.iter_mut().enumerate() {
            t.inv_edges2 = [1.0; 3];
            t.inv_area2 = 1.0;
            t.corners = if i < 40 || i == 47 { [0, 1, 0] } else { [2, 3, 4] };
        }
        let blocks = triangle_blocks(&triangles);
        let mut posed: Vec<Vec3> = (0..5).map(|_| rng.vec3(2.0)).collect();
        posed[1] = posed[0];
        let mut want_score = vec![0.0; posed.len()];
        let want = one_at_a_time(&triangles, &posed, &rotation, &mut want_score);
        let mut got_score = vec![0.0; posed.len()];
        let got = measure_triangles(
            &triangles,
            &blocks,
            &posed,
            &rotation,
            1e-12,
            true,
            5,
            &mut Selection::default(),
            &mut got_score,
        );
        assert_eq!(bits(&got), bits(&want));
        assert_eq!(reported(&want_score, 5).len(), 5);
        assert_eq!(reported(&got_score, 5), reported(&want_score, 5));
    }
}
