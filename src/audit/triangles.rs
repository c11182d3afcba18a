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

use super::measure::{FLIPPED_SCORE, TriangleBind};
use glam::{Mat3, Vec3};

/// Triangles a step.
const LANES: usize = 8;
/// Largest coordinate the lanes take: products of two edge components stay far from
/// overflow, so no cross product subtracts infinities.
const LANE_LIMIT: f32 = 1e15;

/// What one pose's triangles add up to (squared ratios).
pub(super) struct TriangleTotals {
    pub(super) min_area2: f32,
    pub(super) max_area2: f32,
    pub(super) max_edge2: f32,
    pub(super) flipped: usize,
}

/// Measures every triangle of `triangles` on `posed`, raising each corner's `score` to the
/// triangle's squared distortion factor. `bind_finite`: every triangle's bind measures are
/// finite (see [`super::measure::Region`]).
pub(super) fn measure_triangles(
    triangles: &[TriangleBind],
    posed: &[Vec3],
    rotation: &Mat3,
    floor2: f32,
    bind_finite: bool,
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
        let whole = triangles.len() / LANES * LANES;
        let pose = Pose {
            triangles: &triangles[..whole],
            posed,
            rotation,
            floor2,
        };
        lanes(&pose, &mut totals, score);
        rest = &triangles[whole..];
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

/// Whole steps of [`LANES`] triangles on a tame pose.
struct Pose<'a> {
    /// A multiple of [`LANES`] of them.
    triangles: &'a [TriangleBind],
    posed: &'a [Vec3],
    rotation: &'a Mat3,
    floor2: f32,
}

/// Measures `pose`'s triangles into `totals` and `score`.
fn lanes(pose: &Pose<'_>, totals: &mut TriangleTotals, score: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above; the function is otherwise safe code.
        return unsafe { lanes_avx2(pose, totals, score) };
    }
    lanes_body(pose, totals, score);
}

/// [`lanes_body`] compiled for eight-wide registers. The compiler does not fuse multiplies
/// and adds on its own, so the bits stay those of the baseline build.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lanes_avx2(pose: &Pose<'_>, totals: &mut TriangleTotals, score: &mut [f32]) {
    lanes_body(pose, totals, score);
}

/// Per lane: the corners' coordinates, the bind measures and the expected normal, copied out
/// of the triangles so that the arithmetic runs across lanes.
#[derive(Default)]
struct Step {
    /// Corner, then coordinate.
    corners: [[[f32; LANES]; 3]; 3],
    inv_edges2: [[f32; LANES]; 3],
    inv_area2: [f32; LANES],
    expected: [[f32; LANES]; 3],
}

#[inline(always)]
fn lanes_body(pose: &Pose<'_>, totals: &mut TriangleTotals, score: &mut [f32]) {
    let &Pose {
        triangles,
        posed,
        rotation,
        floor2,
    } = pose;
    let mut min_area2 = [f32::INFINITY; LANES];
    let mut max_area2 = [0.0f32; LANES];
    let mut max_edge2 = [1.0f32; LANES];
    let mut flipped = [0u32; LANES];
    let mut step = Step::default();
    for chunk in triangles.chunks_exact(LANES) {
        for (lane, t) in chunk.iter().enumerate() {
            for (corner, &i) in t.corners.iter().enumerate() {
                let p = posed[i as usize];
                step.corners[corner][0][lane] = p.x;
                step.corners[corner][1][lane] = p.y;
                step.corners[corner][2][lane] = p.z;
            }
            for edge in 0..3 {
                step.inv_edges2[edge][lane] = t.inv_edges2[edge];
            }
            step.inv_area2[lane] = t.inv_area2;
            let e = expected_normal(t, rotation);
            step.expected[0][lane] = e.x;
            step.expected[1][lane] = e.y;
            step.expected[2][lane] = e.z;
        }
        let mut factor2 = [1.0f32; LANES];
        // One flat loop over the lanes, glam's operations written out in its order (`Vec3`
        // subtraction, `length_squared` as (x² + y²) + z², `cross`, `dot`), so that the
        // compiler vectorizes it across the lanes.
        let [[ax, ay, az], [bx, by, bz], [cx, cy, cz]] = &step.corners;
        let [inv0, inv1, inv2] = &step.inv_edges2;
        let [nx0, ny0, nz0] = &step.expected;
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
            let measured = step.inv_area2[l] > 0.0;
            let area2 = length2(nx, ny, nz) * step.inv_area2[l];
            min_area2[l] = lesser(min_area2[l], if measured { area2 } else { f32::INFINITY });
            max_area2[l] = greater(max_area2[l], if measured { area2 } else { 0.0 });
            let floored = greater(area2, floor2);
            let area_factor = greater(floored, 1.0 / floored);
            factor = greater(factor, if measured { area_factor } else { 1.0 });
            let flip = measured && nx * nx0[l] + ny * ny0[l] + nz * nz0[l] < 0.0;
            flipped[l] += u32::from(flip);
            factor2[l] = if flip { factor + FLIPPED_SCORE } else { factor };
        }
        for (t, &factor) in chunk.iter().zip(&factor2) {
            for &i in &t.corners {
                let s = &mut score[i as usize];
                *s = greater(*s, factor);
            }
        }
    }
    for lane in 0..LANES {
        totals.min_area2 = lesser(totals.min_area2, min_area2[lane]);
        totals.max_area2 = greater(totals.max_area2, max_area2[lane]);
        totals.max_edge2 = greater(totals.max_edge2, max_edge2[lane]);
        totals.flipped += flipped[lane] as usize;
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

    #[test]
    fn the_lanes_give_the_bits_of_one_triangle_at_a_time() {
        let mut rng = Rng(0x5EED_1234_ABCD_0001);
        let rotation = Mat3::from_quat(Quat::from_axis_angle(Vec3::new(0.3, -0.8, 0.5).normalize(), 1.3));
        for (count, vertices) in [(1003, 400), (64, 20), (7, 9), (17, 3)] {
            let triangles = triangles(&mut rng, count, vertices);
            let mut posed: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
            // Degenerate corners: a repeated position collapses an edge and the area.
            posed[1] = posed[0];
            for bad in [
                None,
                Some(Vec3::NAN),
                Some(Vec3::splat(f32::INFINITY)),
                Some(Vec3::splat(3e20)),
            ] {
                if let Some(bad) = bad {
                    posed[2] = bad;
                }
                let (mut want_score, mut got_score) = (vec![0.0; posed.len()], vec![0.0; posed.len()]);
                let want = one_at_a_time(&triangles, &posed, &rotation, &mut want_score);
                let got = measure_triangles(&triangles, &posed, &rotation, 1e-12, true, &mut got_score);
                assert_eq!(bits(&got), bits(&want), "{count} triangles, {bad:?}");
                if count >= 64 && bad.is_none() {
                    assert!(want.flipped > 0 && want.flipped < count, "{}", want.flipped);
                }
                let score_bits = |s: &[f32]| s.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    score_bits(&got_score),
                    score_bits(&want_score),
                    "{count} triangles, {bad:?}"
                );
            }
        }
    }
}
