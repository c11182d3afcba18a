//! Dual quaternion skinning eight (AVX2) or sixteen (AVX-512) vertices at a time, in
//! structure-of-arrays form: per influence, the joints' quaternions are read as rows of four
//! floats and transposed into one register per element, then the antipodality test, the blend,
//! the normalization and both rotations run across the lanes. A block whose weights are not
//! sorted heaviest first, or that names a joint outside the palette, is blended from a copy
//! with the influences the reference skips taken out. Vertices whose blended rotation is zero,
//! whose weights cancel, and normals whose length is not normal go through the reference's
//! per-vertex code; so does everything when the palette is not finite.

use super::{DualQuat, dqs_vertex};
use crate::rig::Influences;
use crate::skin::fast::lanes::{Lanes, V3, cross, normalize, scale as lanes_scale};
use crate::skin::fast::{Inf, Kernel};
use crate::skin::{ShapeError, check_shape};
use glam::Vec3;
use std::arch::x86_64::{__m256, __m512};

/// Skins every vertex with `kernel`, or hands `job` back untouched when the kernel does not
/// apply (not available here, the portable one, or neither 1 nor 2 influence sets).
pub(super) fn skin<'a, 'b>(kernel: Kernel, job: Job<'a, 'b>) -> Result<(), Job<'a, 'b>> {
    if !matches!(job.influences.sets, 1 | 2) || !kernel.is_available() {
        return Err(job);
    }
    match kernel {
        // SAFETY: the CPU has AVX-512 F and BW, AVX2 and FMA (`is_available`); 1 or 2 sets
        // (matched above); `Job::new` checked that every slice covers the vertices.
        Kernel::Avx512 => unsafe { skin_avx512(job) },
        // SAFETY: the CPU has AVX2 and FMA (`is_available`); the sets and slices as above.
        Kernel::Avx2Fma => unsafe { skin_avx2(job) },
        Kernel::Portable => return Err(job),
    }
    Ok(())
}

/// One call's slices, every one covering `positions.len()` vertices (`normals` and
/// `out_normals` empty for positions only): private, so that only [`Job::new`]'s check makes
/// one, since the kernels read and write through raw pointers.
pub(super) struct Job<'a, 'b> {
    palette: &'a [DualQuat],
    influences: &'a Influences,
    positions: &'a [Vec3],
    normals: &'a [Vec3],
    out_positions: &'b mut [Vec3],
    out_normals: &'b mut [Vec3],
}

impl<'a, 'b> Job<'a, 'b> {
    /// The slices cut to `positions.len()` vertices, or why they cannot be.
    pub(super) fn new(
        palette: &'a [DualQuat],
        influences: &'a Influences,
        positions: &'a [Vec3],
        normals: Option<(&'a [Vec3], &'b mut [Vec3])>,
        out_positions: &'b mut [Vec3],
    ) -> Result<Job<'a, 'b>, ShapeError> {
        let n = positions.len();
        let normal_lengths = normals.as_ref().map(|(input, output)| (input.len(), output.len()));
        check_shape(n, Inf::of(influences), normal_lengths, out_positions.len())?;
        let (normals, out_normals) = match normals {
            Some((input, output)) => (&input[..n], &mut output[..n]),
            None => (&[][..], &mut [][..]),
        };
        Ok(Job {
            palette,
            influences,
            positions,
            normals,
            out_positions: &mut out_positions[..n],
            out_normals,
        })
    }

    fn with_normals(&self) -> bool {
        !self.normals.is_empty()
    }

    /// Vertices `range` with the reference's code (every vertex, for a job no kernel took).
    pub(super) fn reference(&mut self, range: std::ops::Range<usize>) {
        let with_normals = self.with_normals();
        for v in range {
            let normal = if with_normals { self.normals[v] } else { Vec3::ZERO };
            let (position, normal) = dqs_vertex(self.palette, self.influences, v, self.positions[v], normal);
            self.out_positions[v] = position;
            if with_normals {
                self.out_normals[v] = normal;
            }
        }
    }

    /// The vertices of the block at `base` whose bit is set in `lanes`, with the reference's code.
    #[cold]
    #[inline(never)]
    fn fix_lanes(&mut self, base: usize, lanes: u32) {
        for lane in 0..32 {
            if lanes & (1 << lane) != 0 {
                self.reference(base + lane..base + lane + 1);
            }
        }
    }
}

/// The most lanes a kernel has (AVX-512).
const MAX_LANES: usize = 16;

fn all_finite(palette: &[DualQuat]) -> bool {
    palette
        .iter()
        .all(|dq| dq.real.is_finite() && dq.dual.is_finite() && dq.scale.is_finite())
}

/// Room for a block's influences with the reference's skipped ones taken out (see `compact`).
struct Compacted {
    joints: [u16; MAX_LANES * 8],
    weights: [f32; MAX_LANES * 8],
}

impl Default for Compacted {
    fn default() -> Self {
        Compacted {
            joints: [0; MAX_LANES * 8],
            weights: [0.0; MAX_LANES * 8],
        }
    }
}

impl Compacted {
    /// The joints and weights the block of `V::LANES` vertices at `base` blends (`SETS · 4`
    /// slots a vertex, joints inside the palette) and how many slots it uses: the job's own
    /// when every weight is ≥ 0 with each vertex's first > 0 (the first influence is then the
    /// reference's pivot and zero weights add nothing), else a compacted copy held here.
    ///
    /// # Safety
    /// `V`'s features; `base + V::LANES` is at most the job's vertex count; `SETS` influence
    /// sets per vertex.
    #[inline(always)]
    unsafe fn block<V: Lanes, const SETS: usize>(
        &mut self,
        job: &Job<'_, '_>,
        base: usize,
    ) -> (*const u16, *const f32, usize) {
        let range = base * SETS..(base + V::LANES) * SETS;
        // SAFETY: `V`'s features are this function's contract.
        match unsafe { V::block_slots::<SETS>(Inf::of(job.influences), range, job.palette.len()) } {
            // SAFETY: `base + LANES` is inside the vertices and the influences cover them.
            Some(slots) => unsafe {
                (
                    job.influences.joints.as_ptr().add(base * SETS) as *const u16,
                    job.influences.weights.as_ptr().add(base * SETS) as *const f32,
                    slots,
                )
            },
            None => {
                let slots = compact::<SETS>(job, base..base + V::LANES, &mut self.joints, &mut self.weights);
                (self.joints.as_ptr(), self.weights.as_ptr(), slots)
            }
        }
    }
}

/// The influences of the vertices `range` as the reference uses them, `per` slots a vertex
/// into `joints` and `weights`: zero weights and joints outside the palette left out, the rest
/// moved to the front in their order, then zeros on joint 0. The first slot is then the
/// reference's pivot, and the blend adds the same terms in the same order. A vertex with no
/// influence left blends to zero and goes to the reference. Returns the most slots a vertex
/// uses (at least 1): the blend stops there.
fn compact<const SETS: usize>(
    job: &Job<'_, '_>,
    range: std::ops::Range<usize>,
    joints: &mut [u16],
    weights: &mut [f32],
) -> usize {
    let per = SETS * 4;
    let palette = job.palette.len();
    let mut most = 1;
    for (lane, v) in range.enumerate() {
        let (joints, weights) = (&mut joints[lane * per..][..per], &mut weights[lane * per..][..per]);
        let joints_in = job.influences.joints[v * SETS..(v + 1) * SETS].as_flattened();
        let weights_in = job.influences.weights[v * SETS..(v + 1) * SETS].as_flattened();
        // Each influence is written at the next free slot, which moves on only when it is
        // kept; the slots after the kept ones are then zeroed. No branch on the data, and no
        // call to `memset` for a few bytes.
        let mut kept = 0;
        for (&joint, &weight) in joints_in.iter().zip(weights_in) {
            let at = kept.min(per - 1);
            joints[at] = joint;
            weights[at] = weight;
            kept += usize::from(weight != 0.0 && usize::from(joint) < palette);
        }
        for slot in 0..per {
            let live = slot < kept;
            joints[slot] *= u16::from(live);
            weights[slot] = if live { weights[slot] } else { 0.0 };
        }
        most = most.max(kept);
    }
    most
}

/// # Safety
/// AVX2 and FMA; every slice of `job` covers its vertices; 1 or 2 influence sets.
#[target_feature(enable = "avx2,fma")]
unsafe fn skin_avx2(job: Job<'_, '_>) {
    // SAFETY: this function's contract.
    unsafe {
        match job.influences.sets {
            1 => run::<__m256, 1>(job),
            _ => run::<__m256, 2>(job),
        }
    }
}

/// # Safety
/// AVX-512 F and BW, AVX2 and FMA; every slice of `job` covers its vertices; 1 or 2 sets.
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
unsafe fn skin_avx512(job: Job<'_, '_>) {
    // SAFETY: this function's contract.
    unsafe {
        match job.influences.sets {
            1 => run::<__m512, 1>(job),
            _ => run::<__m512, 2>(job),
        }
    }
}

/// `q`'s rotation applied to `v`: `v + 2·a × (a × v + w·v)` with `a = q.xyz`, as the reference.
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
unsafe fn rotate<V: Lanes>([x, y, z, w]: [V; 4], v: V3<V>) -> V3<V> {
    // SAFETY: this function's contract.
    unsafe {
        let a = [x, y, z];
        let inner = cross(a, v);
        let inner = [
            w.mul_add(v[0], inner[0]),
            w.mul_add(v[1], inner[1]),
            w.mul_add(v[2], inner[2]),
        ];
        let outer = cross(a, inner);
        let two = V::splat(2.0);
        [
            outer[0].mul_add(two, v[0]),
            outer[1].mul_add(two, v[1]),
            outer[2].mul_add(two, v[2]),
        ]
    }
}

/// # Safety
/// `V`'s features; every slice of `job` covers its vertices; `SETS` influence sets per vertex.
#[inline(always)]
unsafe fn run<V: Lanes, const SETS: usize>(mut job: Job<'_, '_>) {
    let lanes = V::LANES;
    let per = SETS * 4;
    let n = job.positions.len();
    let blocks = n / lanes;
    // A zero weight adds exactly nothing only to finite dual quaternions; an empty palette
    // leaves every vertex in its bind pose, which the reference does.
    let finite = !job.palette.is_empty() && all_finite(job.palette);
    let mut compacted = Compacted::default();
    for block in 0..blocks {
        let base = block * lanes;
        if !finite {
            job.reference(base..base + lanes);
            continue;
        }
        // SAFETY: `base + lanes <= n`; `V`'s features are this function's contract.
        let (joints, weights, slots) = unsafe { compacted.block::<V, SETS>(&job, base) };
        // SAFETY: `base + lanes <= n` and every slice covers `n` vertices, so every pointer
        // below reads or writes inside its slice; `joints` and `weights` hold `per` slots for
        // each of the block's vertices, with joints inside the palette (`block_slots`, or
        // `compact`); the features are this function's contract. The output pointers are taken
        // afresh each block, after the fix-ups borrowed the slices.
        let odd = unsafe {
            let pal = job.palette.as_ptr() as *const f32;
            // Floats of joint `k` of lane `i`'s dual quaternion, from `offset` (0 real, 4 dual,
            // 8 scale).
            let row =
                |k: usize, offset: usize| move |i: usize| pal.add(usize::from(*joints.add(i * per + k)) * 12 + offset);
            let mut real = [V::splat(0.0); 4];
            let mut dual = [V::splat(0.0); 4];
            let mut pivot = real;
            let (mut scale, mut total) = (V::splat(0.0), V::splat(0.0));
            for set in 0..slots.div_ceil(4) {
                let w = V::gather4(|i| weights.add(i * per + set * 4));
                for (slot, &weight) in w.iter().enumerate().take(slots - set * 4) {
                    let k = set * 4 + slot;
                    let r = V::gather4(row(k, 0));
                    let d = V::gather4(row(k, 4));
                    let s = V::gather4(row(k, 8))[0];
                    if k == 0 {
                        pivot = r;
                    }
                    let dot = r[0].mul_add(
                        pivot[0],
                        r[1].mul_add(pivot[1], r[2].mul_add(pivot[2], r[3].mul(pivot[3]))),
                    );
                    let signed = weight.xor(dot.sign_where_negative());
                    for e in 0..4 {
                        real[e] = r[e].mul_add(signed, real[e]);
                        dual[e] = d[e].mul_add(signed, dual[e]);
                    }
                    scale = s.mul_add(weight, scale);
                    total = total.add(weight);
                }
            }
            let len = real[0]
                .mul_add(
                    real[0],
                    real[1].mul_add(real[1], real[2].mul_add(real[2], real[3].mul(real[3]))),
                )
                .sqrt();
            let zero = len.is_zero();
            // One division, eight multiplies: a division costs several multiplies' time, and
            // the extra rounding stays near 1e-7 relative.
            let inverse = V::splat(1.0).div(len);
            for e in 0..4 {
                real[e] = real[e].mul(inverse);
                dual[e] = dual[e].mul(inverse);
            }
            let (r, rw, d, dw) = (
                [real[0], real[1], real[2]],
                real[3],
                [dual[0], dual[1], dual[2]],
                dual[3],
            );
            let rd = cross(r, d);
            let two = V::splat(2.0);
            let mut translation = rd;
            for e in 0..3 {
                translation[e] = rw.mul_sub(d[e], dw.mul(r[e])).add(rd[e]).mul(two);
            }
            // Weights that cancel (negative ones) leave the scale to the reference.
            let cancelled = total.is_zero();
            let scale = scale.div(total);
            let p = V::load3(job.positions.as_ptr().add(base) as *const f32);
            let moved = rotate(real, lanes_scale(p, scale));
            let moved = [
                moved[0].add(translation[0]),
                moved[1].add(translation[1]),
                moved[2].add(translation[2]),
            ];
            V::store3(job.out_positions.as_mut_ptr().add(base) as *mut f32, moved);
            if job.with_normals() {
                let (unit, odd) = normalize(rotate(real, V::load3(job.normals.as_ptr().add(base) as *const f32)));
                V::store3(job.out_normals.as_mut_ptr().add(base) as *mut f32, unit);
                odd | zero | cancelled
            } else {
                zero | cancelled
            }
        };
        if odd != 0 {
            job.fix_lanes(base, odd);
        }
    }
    job.reference(blocks * lanes..n);
}

/// Positions only, with the reference's own arithmetic across eight lanes: every operation of
/// [`dqs_vertex`] in its order (glam's `Vec4::dot` sums `(x + z) + (y + w)`), no fused
/// multiply-add and a true division, so each position has the reference's bits on every CPU
/// and results do not depend on which machine computed them. Hands `job` back when AVX2 is
/// missing, the sets are neither 1 nor 2, or normals are asked for.
pub(super) fn skin_exact<'a, 'b>(job: Job<'a, 'b>) -> Result<(), Job<'a, 'b>> {
    if !matches!(job.influences.sets, 1 | 2) || job.with_normals() || !Kernel::Avx2Fma.is_available() {
        return Err(job);
    }
    // SAFETY: the CPU has AVX2 and FMA (`is_available`); 1 or 2 sets (matched above);
    // `Job::new` checked that every slice covers the vertices.
    unsafe { exact_avx2(job) };
    Ok(())
}

/// # Safety
/// AVX2 and FMA; every slice of `job` covers its vertices; 1 or 2 influence sets.
#[target_feature(enable = "avx2,fma")]
unsafe fn exact_avx2(job: Job<'_, '_>) {
    // SAFETY: this function's contract.
    unsafe {
        match job.influences.sets {
            1 => run_exact::<__m256, 1>(job),
            _ => run_exact::<__m256, 2>(job),
        }
    }
}

/// glam's `Vec4::dot` order: `(a.x·b.x + a.z·b.z) + (a.y·b.y + a.w·b.w)`.
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
unsafe fn dot4_exact<V: Lanes>(a: [V; 4], b: [V; 4]) -> V {
    // SAFETY: this function's contract.
    unsafe {
        let xz = a[0].mul(b[0]).add(a[2].mul(b[2]));
        let yw = a[1].mul(b[1]).add(a[3].mul(b[3]));
        xz.add(yw)
    }
}

/// glam's `Vec3::cross`, unfused.
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
unsafe fn cross_exact<V: Lanes>(a: V3<V>, b: V3<V>) -> V3<V> {
    // SAFETY: this function's contract.
    unsafe {
        [
            a[1].mul(b[2]).sub(b[1].mul(a[2])),
            a[2].mul(b[0]).sub(b[2].mul(a[0])),
            a[0].mul(b[1]).sub(b[0].mul(a[1])),
        ]
    }
}

/// # Safety
/// `V`'s features; every slice of `job` covers its vertices; `SETS` influence sets per vertex;
/// no normals.
#[inline(always)]
unsafe fn run_exact<V: Lanes, const SETS: usize>(mut job: Job<'_, '_>) {
    let lanes = V::LANES;
    let per = SETS * 4;
    let n = job.positions.len();
    let blocks = n / lanes;
    // Zero weights the blocks add (see `run`) change nothing only with finite quaternions.
    if job.palette.is_empty() || !all_finite(job.palette) {
        job.reference(0..n);
        return;
    }
    let mut compacted = Compacted::default();
    for block in 0..blocks {
        let base = block * lanes;
        // SAFETY: `base + lanes <= n`; `V`'s features are this function's contract.
        let (joints, weights, slots) = unsafe { compacted.block::<V, SETS>(&job, base) };
        // SAFETY: as in `run`: every pointer reads or writes inside its slice, the joints are
        // inside the palette, and the features are this function's contract.
        let odd = unsafe {
            let pal = job.palette.as_ptr() as *const f32;
            let row =
                |k: usize, offset: usize| move |i: usize| pal.add(usize::from(*joints.add(i * per + k)) * 12 + offset);
            // Accumulators start at +0 and so never become -0: the zero-weight slots a block
            // adds beyond a vertex's own influences leave every sum's bits as they were.
            let mut real = [V::splat(0.0); 4];
            let mut dual = real;
            let mut pivot = real;
            let (mut scale, mut total) = (V::splat(0.0), V::splat(0.0));
            for set in 0..slots.div_ceil(4) {
                let w = V::gather4(|i| weights.add(i * per + set * 4));
                for (slot, &weight) in w.iter().enumerate().take(slots - set * 4) {
                    let k = set * 4 + slot;
                    let r = V::gather4(row(k, 0));
                    let d = V::gather4(row(k, 4));
                    let s = V::gather4(row(k, 8))[0];
                    if k == 0 {
                        pivot = r;
                    }
                    let signed = weight.xor(dot4_exact(r, pivot).sign_where_negative());
                    for e in 0..4 {
                        real[e] = real[e].add(r[e].mul(signed));
                        dual[e] = dual[e].add(d[e].mul(signed));
                    }
                    scale = scale.add(s.mul(weight));
                    total = total.add(weight);
                }
            }
            let len = dot4_exact(real, real).sqrt();
            for e in 0..4 {
                real[e] = real[e].div(len);
                dual[e] = dual[e].div(len);
            }
            let (r, rw, d, dw) = (
                [real[0], real[1], real[2]],
                real[3],
                [dual[0], dual[1], dual[2]],
                dual[3],
            );
            let rd = cross_exact(r, d);
            let two = V::splat(2.0);
            let scale = scale.div(total);
            let p = V::load3(job.positions.as_ptr().add(base) as *const f32);
            let v = [p[0].mul(scale), p[1].mul(scale), p[2].mul(scale)];
            // `v + 2·a × (a × v + w·v)`, then the translation `2·(w·d − dw·a + a × d)`.
            // Loops, not closures: a closure would not share this function's target features.
            let mut inner = cross_exact(r, v);
            for e in 0..3 {
                inner[e] = inner[e].add(rw.mul(v[e]));
            }
            let outer = cross_exact(r, inner);
            let mut moved = v;
            for e in 0..3 {
                let translation = rw.mul(d[e]).sub(dw.mul(r[e])).add(rd[e]).mul(two);
                moved[e] = v[e].add(outer[e].mul(two)).add(translation);
            }
            V::store3(job.out_positions.as_mut_ptr().add(base) as *mut f32, moved);
            // The reference keeps the bind pose where the rotation blends to zero, and the
            // scale 1 where the weights cancel.
            len.is_zero() | total.is_zero()
        };
        if odd != 0 {
            job.fix_lanes(base, odd);
        }
    }
    job.reference(blocks * lanes..n);
}

#[cfg(test)]
mod tests {
    use super::super::{dual_quat_palette, skin_dqs_reference, skin_dqs_with, skin_job};
    use crate::skin::fast::tests::{Rng, influences, palette};
    use glam::{Mat4, Vec3};

    /// Every SIMD kernel against the reference, with joints whose quaternions
    /// lie in opposite hemispheres, non-rigid matrices, zero and negative weights, joints
    /// outside the palette and vertices with nothing left (see the influence generator).
    fn check(sets: usize, vertices: usize, joints: usize, seed: u64) {
        let mut rng = Rng(seed);
        let matrices: Vec<Mat4> = palette(&mut rng, joints);
        let mut dual_quats = vec![super::DualQuat::IDENTITY; joints];
        dual_quat_palette(&matrices, &mut dual_quats);
        for dq in dual_quats.iter_mut().skip(1).step_by(3) {
            dq.real = -dq.real;
            dq.dual = -dq.dual;
        }
        let influences = influences(&mut rng, vertices, sets, joints);
        let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
        let mut normals: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(1.0)).collect();
        normals[vertices / 2] = Vec3::ZERO;
        let (mut want_p, mut want_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
        skin_dqs_reference(&dual_quats, &influences, &positions, &normals, &mut want_p, &mut want_n);
        for kernel in crate::cpu::report_kernels("DQS") {
            let (mut got_p, mut got_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
            skin_dqs_with(
                kernel,
                &dual_quats,
                &influences,
                &positions,
                &normals,
                &mut got_p,
                &mut got_n,
            );
            for v in 0..vertices {
                for (what, got, want) in [("position", got_p[v], want_p[v]), ("normal", got_n[v], want_n[v])] {
                    let tolerance = 1e-5 * want.length().max(1.0);
                    assert!(
                        (got - want).length() <= tolerance,
                        "{kernel:?}, {sets} set(s), {vertices} vertices: vertex {v}: {what} {got} vs the reference's {want}"
                    );
                }
            }
            assert_eq!(got_n[vertices / 2], Vec3::ZERO, "a zero normal stays zero");
            // Positions only: the same positions, with no normal to send a vertex elsewhere.
            let mut only_p = vec![Vec3::NAN; vertices];
            skin_job(kernel, &dual_quats, &influences, &positions, None, &mut only_p);
            for v in 0..vertices {
                let tolerance = 1e-5 * want_p[v].length().max(1.0);
                assert!(
                    (only_p[v] - want_p[v]).length() <= tolerance,
                    "{kernel:?}, {sets} set(s), positions only: vertex {v}: {} vs the reference's {}",
                    only_p[v],
                    want_p[v]
                );
            }
        }
    }

    #[test]
    fn the_simd_kernels_match_the_reference() {
        for sets in [1, 2, 3] {
            check(sets, 1029, 64, 0xD1B5_4A32_D192_ED03 + sets as u64);
            check(sets, 203, 7, 4242 + sets as u64);
            for vertices in [1, 2, 7, 15, 17, 31] {
                check(sets, vertices, 64, 7 + vertices as u64);
            }
        }
    }

    #[test]
    fn the_exact_kernel_has_the_references_bits() {
        // The same hostile data as `check`: antipodal joints, non-rigid matrices, zero and
        // negative weights, joints outside the palette, vertices with nothing left.
        for sets in [1, 2, 3] {
            for (vertices, joints, seed) in [(1029, 64, 3), (203, 7, 5), (31, 64, 9), (5, 3, 1)] {
                let mut rng = Rng(seed + sets as u64);
                let mut dual_quats = vec![super::DualQuat::IDENTITY; joints];
                dual_quat_palette(&palette(&mut rng, joints), &mut dual_quats);
                for dq in dual_quats.iter_mut().skip(1).step_by(3) {
                    dq.real = -dq.real;
                    dq.dual = -dq.dual;
                }
                let influences = influences(&mut rng, vertices, sets, joints);
                let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
                let normals = vec![Vec3::Z; vertices];
                let (mut want, mut unused) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
                skin_dqs_reference(&dual_quats, &influences, &positions, &normals, &mut want, &mut unused);
                let mut got = vec![Vec3::NAN; vertices];
                super::super::skin_dqs_positions_exact(&dual_quats, &influences, &positions, &mut got);
                for v in 0..vertices {
                    assert_eq!(
                        got[v].to_array().map(f32::to_bits),
                        want[v].to_array().map(f32::to_bits),
                        "{sets} set(s), {vertices} vertices: vertex {v}: {} vs the reference's {}",
                        got[v],
                        want[v]
                    );
                }
            }
        }
    }

    #[test]
    fn unused_slots_match_the_reference() {
        // Sorted weights that leave the last slots empty, on antipodal and scaled joints.
        let mut rng = Rng(11);
        let matrices = palette(&mut rng, 12);
        let mut dual_quats = vec![super::DualQuat::IDENTITY; 12];
        dual_quat_palette(&matrices, &mut dual_quats);
        for dq in dual_quats.iter_mut().step_by(2) {
            dq.real = -dq.real;
            dq.dual = -dq.dual;
        }
        for (sets, used) in [(1, 1), (1, 3), (2, 2), (2, 6)] {
            let vertices = 53;
            let mut influences = crate::rig::Influences {
                sets,
                joints: Vec::new(),
                weights: Vec::new(),
            };
            for _ in 0..vertices * sets {
                influences.joints.push([0; 4].map(|_| rng.below(12) as u16));
                influences.weights.push([0.0; 4]);
            }
            for v in 0..vertices {
                for k in 0..used {
                    influences.weights[v * sets + k / 4][k % 4] = rng.range(0.1, 1.0);
                }
            }
            let p: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
            let n: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(1.0)).collect();
            let (mut want_p, mut want_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
            skin_dqs_reference(&dual_quats, &influences, &p, &n, &mut want_p, &mut want_n);
            for kernel in crate::cpu::report_kernels("DQS") {
                let (mut op, mut on) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
                skin_dqs_with(kernel, &dual_quats, &influences, &p, &n, &mut op, &mut on);
                for v in 0..vertices {
                    let close = |a: Vec3, b: Vec3| (a - b).length() <= 1e-5 * b.length().max(1.0);
                    assert!(
                        close(op[v], want_p[v]),
                        "{kernel:?} {sets}/{used} {v}: {} {}",
                        op[v],
                        want_p[v]
                    );
                    assert!(
                        close(on[v], want_n[v]),
                        "{kernel:?} {sets}/{used} {v}: {} {}",
                        on[v],
                        want_n[v]
                    );
                }
            }
        }
    }

    #[test]
    fn blocks_of_antipodal_joints_blend_as_one_rotation() {
        // Every vertex of two whole blocks on a joint and its antipode, half and half.
        let m = Mat4::from_rotation_translation(glam::Quat::from_rotation_y(0.4), Vec3::new(1.0, 0.0, -2.0));
        let mut dual_quats = [super::DualQuat::from_mat4(&m); 2];
        dual_quats[1].real = -dual_quats[1].real;
        dual_quats[1].dual = -dual_quats[1].dual;
        let influences = crate::rig::Influences {
            sets: 1,
            joints: vec![[0, 1, 1, 0]; 32],
            weights: vec![[0.25, 0.25, 0.25, 0.25]; 32],
        };
        let p: Vec<Vec3> = (0..32).map(|i| Vec3::new(i as f32 * 0.1, 1.0, -0.5)).collect();
        let n = vec![Vec3::Z; 32];
        for kernel in crate::cpu::report_kernels("DQS") {
            let (mut op, mut on) = (vec![Vec3::ZERO; 32], vec![Vec3::ZERO; 32]);
            skin_dqs_with(kernel, &dual_quats, &influences, &p, &n, &mut op, &mut on);
            for v in 0..32 {
                assert!(
                    (op[v] - m.transform_point3(p[v])).length() < 1e-5,
                    "{kernel:?} {v}: {}",
                    op[v]
                );
                assert!(
                    (on[v] - m.transform_vector3(n[v])).length() < 1e-5,
                    "{kernel:?} {v}: {}",
                    on[v]
                );
            }
        }
    }
}
