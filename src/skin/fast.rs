//! Fast linear blend skinning: the same results as [`skin_lbs_reference`](super::skin_lbs_reference)
//! up to rounding, at a fraction of its cost.
//!
//! Slices in, slices out; no allocation, no locks, no state. Two kernels:
//!
//! - **AVX2 + FMA** (x86-64, chosen at run time with `is_x86_feature_detected!`). Vertices go in
//!   blocks of eight. Each vertex's palette matrices are blended as two 8-wide registers (columns
//!   0–1 and 2–3) with one fused multiply-add each per influence. The eight blended matrices are
//!   then transposed into structure-of-arrays form (one register per matrix element, eight
//!   vertices per register), and positions, the cofactor normal matrix, its determinant's sign and
//!   the normalization are computed eight vertices at a time. Positions and normals are
//!   de-interleaved and re-interleaved with blends and one permute per component.
//!   Validity (weights > 0, joints inside the palette) is checked once per block; a block that
//!   fails it blends each vertex with the reference's checks (zero weights and joints outside the
//!   palette skipped, identity when nothing is left).
//! - **Portable**: one vertex at a time, blending only the matrix columns the result needs; used
//!   on other CPUs, for the last `len % 8` vertices, and for the rare normals whose length is
//!   zero, subnormal or not finite.

use crate::rig::Influences;
use glam::{Mat4, Vec3, Vec4};

/// Which implementation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// One vertex at a time, any CPU.
    Portable,
    /// Eight vertices at a time with AVX2 and FMA (x86-64 only).
    Avx2Fma,
}

impl Kernel {
    /// The fastest kernel this CPU can run.
    pub fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                return Kernel::Avx2Fma;
            }
        }
        Kernel::Portable
    }

    pub fn is_available(self) -> bool {
        match self {
            Kernel::Portable => true,
            Kernel::Avx2Fma => Kernel::detect() == Kernel::Avx2Fma,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Avx2Fma => "AVX2+FMA",
        }
    }
}

/// Skins positions and normals with linear blend skinning (see the reference for the rules:
/// joints outside the palette and zero weights are ignored, a vertex with no weight left keeps
/// its bind pose; normals use the sign-corrected cofactor of the blended 3×3 and are normalized).
///
/// # Panics
/// When the output slices, `normals` or `influences` are shorter than `positions`.
pub fn skin_lbs(
    palette: &[Mat4],
    influences: &Influences,
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    skin_lbs_with(
        Kernel::detect(),
        palette,
        influences,
        positions,
        Some((normals, out_normals)),
        out_positions,
    );
}

/// [`skin_lbs`] for positions only.
pub fn skin_lbs_positions(palette: &[Mat4], influences: &Influences, positions: &[Vec3], out_positions: &mut [Vec3]) {
    skin_lbs_with(Kernel::detect(), palette, influences, positions, None, out_positions);
}

/// [`skin_lbs`] with a chosen kernel (falls back to the portable one when `kernel` is not
/// available on this CPU). `normals` is `(input, output)`, or `None` for positions only.
pub fn skin_lbs_with(
    kernel: Kernel,
    palette: &[Mat4],
    influences: &Influences,
    positions: &[Vec3],
    normals: Option<(&[Vec3], &mut [Vec3])>,
    out_positions: &mut [Vec3],
) {
    let n = positions.len();
    assert!(out_positions.len() >= n, "out_positions is shorter than positions");
    assert!(
        influences.joints.len() >= n * influences.sets && influences.weights.len() >= n * influences.sets,
        "influences do not cover every vertex"
    );
    if let Some((input, output)) = &normals {
        assert!(
            input.len() >= n && output.len() >= n,
            "normals are shorter than positions"
        );
    }
    #[cfg(target_arch = "x86_64")]
    if kernel == Kernel::Avx2Fma && kernel.is_available() && matches!(influences.sets, 1 | 2) {
        // SAFETY: AVX2 and FMA are present (checked above); every slice was checked to cover
        // `n` vertices.
        unsafe {
            match (influences.sets, normals) {
                (1, Some((input, output))) => {
                    avx2::skin::<1, true>(palette, influences, positions, input, out_positions, output)
                }
                (1, None) => avx2::skin::<1, false>(palette, influences, positions, &[], out_positions, &mut []),
                (_, Some((input, output))) => {
                    avx2::skin::<2, true>(palette, influences, positions, input, out_positions, output)
                }
                (_, None) => avx2::skin::<2, false>(palette, influences, positions, &[], out_positions, &mut []),
            }
        }
        return;
    }
    let _ = kernel;
    match normals {
        Some((input, output)) => portable_range(palette, influences, positions, input, out_positions, output, 0..n),
        None => portable_range(palette, influences, positions, &[], out_positions, &mut [], 0..n),
    }
}

/// Blended columns 0–3 of one vertex (column `w` components included but unused), or `None`
/// when no weight is left (the vertex keeps its bind pose). Same order and rules as the reference.
#[inline(always)]
fn blend_portable(palette: &[Mat4], influences: &Influences, v: usize) -> Option<[Vec4; 4]> {
    let sets = influences.sets;
    let range = v * sets..(v + 1) * sets;
    let mut c = [Vec4::ZERO; 4];
    let mut total = 0.0;
    for (joints, weights) in influences.joints[range.clone()].iter().zip(&influences.weights[range]) {
        for k in 0..4 {
            let w = weights[k];
            if w != 0.0
                && let Some(m) = palette.get(joints[k] as usize)
            {
                c[0] += m.x_axis * w;
                c[1] += m.y_axis * w;
                c[2] += m.z_axis * w;
                c[3] += m.w_axis * w;
                total += w;
            }
        }
    }
    (total != 0.0).then_some(c)
}

/// One vertex on the portable path.
#[inline(always)]
fn portable_vertex(
    palette: &[Mat4],
    influences: &Influences,
    v: usize,
    position: Vec3,
    normal: Option<Vec3>,
) -> (Vec3, Vec3) {
    match blend_portable(palette, influences, v) {
        None => (position, normal.map_or(Vec3::ZERO, Vec3::normalize_or_zero)),
        Some([c0, c1, c2, c3]) => {
            let p = (c0 * position.x + c1 * position.y + c2 * position.z + c3).truncate();
            let n = normal.map_or(Vec3::ZERO, |n| {
                let (c0, c1, c2) = (c0.truncate(), c1.truncate(), c2.truncate());
                let (k0, k1, k2) = (c1.cross(c2), c2.cross(c0), c0.cross(c1));
                let skinned = k0 * n.x + k1 * n.y + k2 * n.z;
                let signed = if c0.dot(k0) < 0.0 { -skinned } else { skinned };
                signed.normalize_or_zero()
            });
            (p, n)
        }
    }
}

/// Portable skinning of the vertices in `range`; `normals` empty means positions only.
fn portable_range(
    palette: &[Mat4],
    influences: &Influences,
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
    range: std::ops::Range<usize>,
) {
    let with_normals = !normals.is_empty();
    for v in range {
        let (p, n) = portable_vertex(palette, influences, v, positions[v], with_normals.then(|| normals[v]));
        out_positions[v] = p;
        if with_normals {
            out_normals[v] = n;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Influences, Mat4, Vec3, portable_range};
    use std::arch::x86_64::*;

    /// Vertices per block.
    const BLOCK: usize = 8;

    /// Skins every vertex: blocks of eight with AVX2, the rest on the portable path.
    ///
    /// # Safety
    /// AVX2 and FMA must be available; `influences` must hold `SETS` sets for at least
    /// `positions.len()` vertices; the outputs (and `normals` when `NORMALS`) at least as many.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn skin<const SETS: usize, const NORMALS: bool>(
        palette: &[Mat4],
        influences: &Influences,
        positions: &[Vec3],
        normals: &[Vec3],
        out_positions: &mut [Vec3],
        out_normals: &mut [Vec3],
    ) {
        let n = positions.len();
        let blocks = n / BLOCK;
        let pal = palette.as_ptr() as *const f32;
        let joints = influences.joints.as_ptr() as *const u16;
        let weights = influences.weights.as_ptr() as *const f32;
        let pin = positions.as_ptr() as *const f32;
        let pout = out_positions.as_mut_ptr() as *mut f32;
        let nin = normals.as_ptr() as *const f32;
        let nout = out_normals.as_mut_ptr() as *mut f32;
        let mut mats = [[_mm256_setzero_ps(); 2]; BLOCK];
        for block in 0..blocks {
            let base = block * BLOCK;
            // SAFETY (whole block): `base + BLOCK <= n`, and every array covers `n` vertices.
            unsafe {
                let simple = block_is_simple::<SETS>(joints, weights, base, palette.len());
                for (i, mat) in mats.iter_mut().enumerate() {
                    *mat = if simple {
                        blend_simple::<SETS>(pal, joints, weights, base + i)
                    } else {
                        blend_checked::<SETS>(pal, palette.len(), joints, weights, base + i)
                    };
                }
                let lo = transpose(&mats, 0);
                let hi = transpose(&mats, 1);
                // Columns: c0 = lo[0..3], c1 = lo[3..6], c2 = hi[0..3], c3 = hi[3..6].
                let [c0x, c0y, c0z, c1x, c1y, c1z] = lo;
                let [c2x, c2y, c2z, c3x, c3y, c3z] = hi;
                let [px, py, pz] = load3(pin.add(base * 3));
                let ox = _mm256_fmadd_ps(c0x, px, _mm256_fmadd_ps(c1x, py, _mm256_fmadd_ps(c2x, pz, c3x)));
                let oy = _mm256_fmadd_ps(c0y, px, _mm256_fmadd_ps(c1y, py, _mm256_fmadd_ps(c2y, pz, c3y)));
                let oz = _mm256_fmadd_ps(c0z, px, _mm256_fmadd_ps(c1z, py, _mm256_fmadd_ps(c2z, pz, c3z)));
                store3(pout.add(base * 3), ox, oy, oz);
                if NORMALS {
                    let [nx, ny, nz] = load3(nin.add(base * 3));
                    // Cofactor columns: k0 = c1 × c2, k1 = c2 × c0, k2 = c0 × c1.
                    let (k0x, k0y, k0z) = cross(c1x, c1y, c1z, c2x, c2y, c2z);
                    let (k1x, k1y, k1z) = cross(c2x, c2y, c2z, c0x, c0y, c0z);
                    let (k2x, k2y, k2z) = cross(c0x, c0y, c0z, c1x, c1y, c1z);
                    let det = _mm256_fmadd_ps(c0x, k0x, _mm256_fmadd_ps(c0y, k0y, _mm256_mul_ps(c0z, k0z)));
                    let mx = _mm256_fmadd_ps(k0x, nx, _mm256_fmadd_ps(k1x, ny, _mm256_mul_ps(k2x, nz)));
                    let my = _mm256_fmadd_ps(k0y, nx, _mm256_fmadd_ps(k1y, ny, _mm256_mul_ps(k2y, nz)));
                    let mz = _mm256_fmadd_ps(k0z, nx, _mm256_fmadd_ps(k1z, ny, _mm256_mul_ps(k2z, nz)));
                    // Flip where det < 0 (not for -0.0, as the reference).
                    let negative = _mm256_cmp_ps::<_CMP_LT_OQ>(det, _mm256_setzero_ps());
                    let flip = _mm256_and_ps(negative, _mm256_set1_ps(-0.0));
                    let (mx, my, mz) = (
                        _mm256_xor_ps(mx, flip),
                        _mm256_xor_ps(my, flip),
                        _mm256_xor_ps(mz, flip),
                    );
                    let len2 = _mm256_fmadd_ps(mx, mx, _mm256_fmadd_ps(my, my, _mm256_mul_ps(mz, mz)));
                    // 1/sqrt: the 12-bit estimate and one Newton step (≈ 2e-7 relative).
                    let r0 = _mm256_rsqrt_ps(len2);
                    let half = _mm256_mul_ps(len2, _mm256_set1_ps(0.5));
                    let step = _mm256_fnmadd_ps(_mm256_mul_ps(half, r0), r0, _mm256_set1_ps(1.5));
                    let r = _mm256_mul_ps(r0, step);
                    store3(
                        nout.add(base * 3),
                        _mm256_mul_ps(mx, r),
                        _mm256_mul_ps(my, r),
                        _mm256_mul_ps(mz, r),
                    );
                    // Lengths that are zero, subnormal, huge or NaN: redo those vertices exactly.
                    let normal_range = _mm256_and_ps(
                        _mm256_cmp_ps::<_CMP_GE_OQ>(len2, _mm256_set1_ps(f32::MIN_POSITIVE)),
                        _mm256_cmp_ps::<_CMP_LE_OQ>(len2, _mm256_set1_ps(f32::MAX / 4.0)),
                    );
                    let odd = !_mm256_movemask_ps(normal_range) & 0xFF;
                    if odd != 0 {
                        fix_lanes(
                            palette,
                            influences,
                            positions,
                            normals,
                            out_positions,
                            out_normals,
                            base,
                            odd,
                        );
                    }
                }
            }
        }
        portable_range(
            palette,
            influences,
            positions,
            normals,
            out_positions,
            out_normals,
            blocks * BLOCK..n,
        );
    }

    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn fix_lanes(
        palette: &[Mat4],
        influences: &Influences,
        positions: &[Vec3],
        normals: &[Vec3],
        out_positions: &mut [Vec3],
        out_normals: &mut [Vec3],
        base: usize,
        lanes: i32,
    ) {
        for lane in 0..BLOCK {
            if lanes & (1 << lane) != 0 {
                let v = base + lane;
                portable_range(
                    palette,
                    influences,
                    positions,
                    normals,
                    out_positions,
                    out_normals,
                    v..v + 1,
                );
            }
        }
    }

    /// Whether every influence of the block's vertices has a weight > 0 and a joint inside the
    /// palette, so that no per-influence check is needed.
    #[inline(always)]
    unsafe fn block_is_simple<const SETS: usize>(
        joints: *const u16,
        weights: *const f32,
        base: usize,
        len: usize,
    ) -> bool {
        if len == 0 {
            return false;
        }
        unsafe {
            // Weights: 8 vertices × SETS × 4 floats = SETS × 4 registers.
            let w = weights.add(base * SETS * 4);
            let zero = _mm256_setzero_ps();
            let mut positive = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
            for r in 0..SETS * 4 {
                positive = _mm256_and_ps(
                    positive,
                    _mm256_cmp_ps::<_CMP_GT_OQ>(_mm256_loadu_ps(w.add(r * 8)), zero),
                );
            }
            if _mm256_movemask_ps(positive) != 0xFF {
                return false;
            }
            if len > usize::from(u16::MAX) {
                return true;
            }
            // Joints: 8 vertices × SETS × 4 u16 = SETS × 2 registers; j < len ⇔ min(j, len-1) == j.
            let j = joints.add(base * SETS * 4) as *const __m256i;
            let last = _mm256_set1_epi16((len - 1) as u16 as i16);
            let mut inside = _mm256_set1_epi32(-1);
            for r in 0..SETS * 2 {
                let v = _mm256_loadu_si256(j.add(r));
                inside = _mm256_and_si256(inside, _mm256_cmpeq_epi16(_mm256_min_epu16(v, last), v));
            }
            _mm256_movemask_epi8(inside) == -1
        }
    }

    /// Blended matrix of vertex `v` as columns (0|1) and (2|3), no checks needed.
    #[inline(always)]
    unsafe fn blend_simple<const SETS: usize>(
        pal: *const f32,
        joints: *const u16,
        weights: *const f32,
        v: usize,
    ) -> [__m256; 2] {
        unsafe {
            let j = joints.add(v * SETS * 4);
            let w = weights.add(v * SETS * 4);
            let m = pal.add(usize::from(*j) * 16);
            let wk = _mm256_broadcast_ss(&*w);
            let mut lo = _mm256_mul_ps(wk, _mm256_loadu_ps(m));
            let mut hi = _mm256_mul_ps(wk, _mm256_loadu_ps(m.add(8)));
            for k in 1..SETS * 4 {
                let m = pal.add(usize::from(*j.add(k)) * 16);
                let wk = _mm256_broadcast_ss(&*w.add(k));
                lo = _mm256_fmadd_ps(wk, _mm256_loadu_ps(m), lo);
                hi = _mm256_fmadd_ps(wk, _mm256_loadu_ps(m.add(8)), hi);
            }
            [lo, hi]
        }
    }

    /// Blended matrix of vertex `v` with the reference's rules: zero weights and joints outside
    /// the palette skipped, identity when the weights left sum to zero.
    #[inline(always)]
    unsafe fn blend_checked<const SETS: usize>(
        pal: *const f32,
        len: usize,
        joints: *const u16,
        weights: *const f32,
        v: usize,
    ) -> [__m256; 2] {
        unsafe {
            let j = joints.add(v * SETS * 4);
            let w = weights.add(v * SETS * 4);
            let mut lo = _mm256_setzero_ps();
            let mut hi = _mm256_setzero_ps();
            let mut total = 0.0f32;
            for k in 0..SETS * 4 {
                let (joint, weight) = (usize::from(*j.add(k)), *w.add(k));
                if weight != 0.0 && joint < len {
                    let m = pal.add(joint * 16);
                    let wk = _mm256_set1_ps(weight);
                    lo = _mm256_fmadd_ps(wk, _mm256_loadu_ps(m), lo);
                    hi = _mm256_fmadd_ps(wk, _mm256_loadu_ps(m.add(8)), hi);
                    total += weight;
                }
            }
            if total == 0.0 {
                [
                    _mm256_setr_ps(1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0),
                    _mm256_setr_ps(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0),
                ]
            } else {
                [lo, hi]
            }
        }
    }

    /// Elements x, y, z of both columns held in `mats[i][half]` (lanes 0–2 and 4–6), as one
    /// register per element with vertex `i` in lane `i`: an 8×8 transpose without the w rows.
    #[inline(always)]
    unsafe fn transpose(mats: &[[__m256; 2]; BLOCK], half: usize) -> [__m256; 6] {
        let r = |i: usize| mats[i][half];
        unsafe {
            let t0 = _mm256_unpacklo_ps(r(0), r(1));
            let t1 = _mm256_unpackhi_ps(r(0), r(1));
            let t2 = _mm256_unpacklo_ps(r(2), r(3));
            let t3 = _mm256_unpackhi_ps(r(2), r(3));
            let t4 = _mm256_unpacklo_ps(r(4), r(5));
            let t5 = _mm256_unpackhi_ps(r(4), r(5));
            let t6 = _mm256_unpacklo_ps(r(6), r(7));
            let t7 = _mm256_unpackhi_ps(r(6), r(7));
            let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let s1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let s4 = _mm256_shuffle_ps::<0x44>(t4, t6);
            let s5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
            let s6 = _mm256_shuffle_ps::<0x44>(t5, t7);
            [
                _mm256_permute2f128_ps::<0x20>(s0, s4),
                _mm256_permute2f128_ps::<0x20>(s1, s5),
                _mm256_permute2f128_ps::<0x20>(s2, s6),
                _mm256_permute2f128_ps::<0x31>(s0, s4),
                _mm256_permute2f128_ps::<0x31>(s1, s5),
                _mm256_permute2f128_ps::<0x31>(s2, s6),
            ]
        }
    }

    /// Eight packed `Vec3`s (24 floats) as x, y and z registers.
    #[inline(always)]
    unsafe fn load3(p: *const f32) -> [__m256; 3] {
        unsafe {
            let a = _mm256_loadu_ps(p);
            let b = _mm256_loadu_ps(p.add(8));
            let c = _mm256_loadu_ps(p.add(16));
            // Vertex i component k is float 3i + k: each component takes lanes {0,3,6}, {1,4,7}
            // and {2,5} from a, b and c in some order; blend them together, then permute.
            let x = _mm256_blend_ps::<0b0010_0100>(_mm256_blend_ps::<0b1001_0010>(a, b), c);
            let y = _mm256_blend_ps::<0b0100_1001>(_mm256_blend_ps::<0b0010_0100>(a, b), c);
            let z = _mm256_blend_ps::<0b1001_0010>(_mm256_blend_ps::<0b0100_1001>(a, b), c);
            [
                _mm256_permutevar8x32_ps(x, _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5)),
                _mm256_permutevar8x32_ps(y, _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6)),
                _mm256_permutevar8x32_ps(z, _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7)),
            ]
        }
    }

    /// The inverse of [`load3`]: writes eight `Vec3`s (24 floats).
    #[inline(always)]
    unsafe fn store3(p: *mut f32, x: __m256, y: __m256, z: __m256) {
        unsafe {
            let x = _mm256_permutevar8x32_ps(x, _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5));
            let y = _mm256_permutevar8x32_ps(y, _mm256_setr_epi32(5, 0, 3, 6, 1, 4, 7, 2));
            let z = _mm256_permutevar8x32_ps(z, _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7));
            let a = _mm256_blend_ps::<0b0010_0100>(_mm256_blend_ps::<0b1001_0010>(x, y), z);
            let b = _mm256_blend_ps::<0b0100_1001>(_mm256_blend_ps::<0b0010_0100>(x, y), z);
            let c = _mm256_blend_ps::<0b1001_0010>(_mm256_blend_ps::<0b0100_1001>(x, y), z);
            _mm256_storeu_ps(p, a);
            _mm256_storeu_ps(p.add(8), b);
            _mm256_storeu_ps(p.add(16), c);
        }
    }

    /// `a × b` for eight vectors at once (component order as glam's `Vec3::cross`).
    #[inline(always)]
    fn cross(ax: __m256, ay: __m256, az: __m256, bx: __m256, by: __m256, bz: __m256) -> (__m256, __m256, __m256) {
        // Inside a `target_feature(enable = "avx2,fma")` caller these inline to single instructions.
        unsafe {
            (
                _mm256_fmsub_ps(ay, bz, _mm256_mul_ps(by, az)),
                _mm256_fmsub_ps(az, bx, _mm256_mul_ps(bz, ax)),
                _mm256_fmsub_ps(ax, by, _mm256_mul_ps(bx, ay)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skin::skin_lbs_reference;
    use glam::Quat;

    /// A small xorshift generator: reproducible test data without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        /// Uniform in [lo, hi).
        fn range(&mut self, lo: f32, hi: f32) -> f32 {
            lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn vec3(&mut self, s: f32) -> Vec3 {
            Vec3::new(self.range(-s, s), self.range(-s, s), self.range(-s, s))
        }
    }

    /// Affine matrices with rotation, translation, non-uniform scale, some shear and some
    /// mirroring, and a bottom row that is not (0, 0, 0, 1) in a few (which LBS ignores).
    fn palette(rng: &mut Rng, joints: usize) -> Vec<Mat4> {
        (0..joints)
            .map(|j| {
                let rotation = Quat::from_euler(
                    glam::EulerRot::XYZ,
                    rng.range(-3.0, 3.0),
                    rng.range(-3.0, 3.0),
                    rng.range(-3.0, 3.0),
                );
                let mut scale = Vec3::new(rng.range(0.5, 2.0), rng.range(0.5, 2.0), rng.range(0.5, 2.0));
                if j % 7 == 3 {
                    scale.x = -scale.x;
                }
                let mut m = Mat4::from_scale_rotation_translation(scale, rotation, rng.vec3(3.0));
                if j % 5 == 1 {
                    m.x_axis.y += 0.3;
                }
                if j % 11 == 2 {
                    m.x_axis.w = 0.25;
                    m.w_axis.w = 2.0;
                }
                m
            })
            .collect()
    }

    /// Influences covering the awkward cases: normalized random weights, zero weights,
    /// joints outside the palette, all-zero vertices, weights that cancel to a zero sum, and
    /// weights that do not sum to one.
    fn influences(rng: &mut Rng, vertices: usize, sets: usize, joints: usize) -> Influences {
        let mut out = Influences {
            sets,
            joints: Vec::with_capacity(vertices * sets),
            weights: Vec::with_capacity(vertices * sets),
        };
        for v in 0..vertices {
            let count = sets * 4;
            let mut j: Vec<u16> = (0..count).map(|_| rng.below(joints as u64) as u16).collect();
            let mut w: Vec<f32> = (0..count).map(|_| rng.range(0.01, 1.0)).collect();
            match v % 13 {
                0 => w.iter_mut().for_each(|w| *w = 0.0),
                1 => w[1..].iter_mut().for_each(|w| *w = 0.0),
                2 => {
                    w[2] = 0.0;
                    j[2] = u16::MAX;
                }
                3 => j[1] = joints as u16,
                4 => j[count - 1] = 60_000,
                5 => {
                    w.iter_mut().for_each(|w| *w = 0.0);
                    w[0] = 0.5;
                    w[1] = -0.5;
                }
                6 => j.iter_mut().for_each(|j| *j = joints as u16 + 3),
                7 => w[0] = -0.25,
                _ => {}
            }
            if v % 13 != 8 {
                let sum: f32 = w.iter().sum();
                if sum != 0.0 && v % 13 != 5 && v % 13 != 7 {
                    w.iter_mut().for_each(|w| *w /= sum);
                }
            }
            for s in 0..sets {
                out.joints.push([j[4 * s], j[4 * s + 1], j[4 * s + 2], j[4 * s + 3]]);
                out.weights.push([w[4 * s], w[4 * s + 1], w[4 * s + 2], w[4 * s + 3]]);
            }
        }
        out
    }

    fn assert_close(what: &str, got: &[Vec3], want: &[Vec3]) {
        assert_eq!(got.len(), want.len());
        for (v, (g, w)) in got.iter().zip(want).enumerate() {
            let tolerance = 1e-5 * w.length().max(1.0);
            assert!(
                (*g - *w).length() <= tolerance,
                "{what}: vertex {v}: {g} differs from the reference {w} by {}",
                (*g - *w).length()
            );
        }
    }

    fn check(kernel: Kernel, sets: usize, vertices: usize, joints: usize, scale: f32, seed: u64) {
        let mut rng = Rng(seed);
        let palette: Vec<Mat4> = palette(&mut rng, joints)
            .into_iter()
            .map(|mut m| {
                m.w_axis = (m.w_axis.truncate() * scale).extend(m.w_axis.w);
                m
            })
            .collect();
        let influences = influences(&mut rng, vertices, sets, joints);
        let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(scale)).collect();
        let mut normals: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(1.0).normalize()).collect();
        normals[vertices / 2] = Vec3::ZERO;
        let (mut want_p, mut want_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
        skin_lbs_reference(&palette, &influences, &positions, &normals, &mut want_p, &mut want_n);
        let (mut got_p, mut got_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
        skin_lbs_with(
            kernel,
            &palette,
            &influences,
            &positions,
            Some((&normals, &mut got_n)),
            &mut got_p,
        );
        let what = format!("{kernel:?}, {sets} set(s), {vertices} vertices");
        assert_close(&format!("{what}: positions"), &got_p, &want_p);
        assert_close(&format!("{what}: normals"), &got_n, &want_n);
        assert_eq!(got_n[vertices / 2], Vec3::ZERO, "a zero normal stays zero");
        let mut only_p = vec![Vec3::NAN; vertices];
        skin_lbs_with(kernel, &palette, &influences, &positions, None, &mut only_p);
        assert_close(&format!("{what}: positions only"), &only_p, &want_p);
    }

    #[test]
    fn every_kernel_matches_the_reference_with_four_and_eight_influences() {
        for kernel in [Kernel::Portable, Kernel::detect()] {
            for sets in [1, 2] {
                // 8k + 5 vertices: whole blocks, mixed blocks and a tail.
                check(kernel, sets, 1029, 64, 1.0, 0x9E37_79B9_7F4A_7C15 + sets as u64);
                check(kernel, sets, 203, 7, 1000.0, 12345 + sets as u64);
            }
        }
    }

    #[test]
    fn three_sets_fall_back_to_the_portable_path() {
        check(Kernel::detect(), 3, 101, 16, 1.0, 77);
    }

    #[test]
    fn no_influence_sets_keep_the_bind_pose_like_the_reference() {
        let influences = Influences {
            sets: 0,
            joints: Vec::new(),
            weights: Vec::new(),
        };
        let palette = [Mat4::from_translation(Vec3::X)];
        let p = vec![Vec3::new(1.0, 2.0, 3.0); 9];
        let n = vec![Vec3::new(0.0, 0.0, 2.0); 9];
        let (mut want_p, mut want_n) = (vec![Vec3::NAN; 9], vec![Vec3::NAN; 9]);
        skin_lbs_reference(&palette, &influences, &p, &n, &mut want_p, &mut want_n);
        let (mut op, mut on) = (vec![Vec3::NAN; 9], vec![Vec3::NAN; 9]);
        skin_lbs(&palette, &influences, &p, &n, &mut op, &mut on);
        assert_eq!(op, want_p);
        assert_eq!(on, want_n);
        assert_eq!(op[0], p[0]);
    }

    #[test]
    fn the_special_cases_follow_the_reference_exactly() {
        let m = Mat4::from_scale_rotation_translation(Vec3::new(2.0, 1.0, 0.5), Quat::from_rotation_z(0.7), Vec3::X);
        let palette = [m, Mat4::from_translation(Vec3::Y)];
        // 16 vertices (two AVX2 blocks): no weight, joint outside, cancelling weights, mixed.
        let cases: [([u16; 4], [f32; 4]); 4] = [
            ([0, 1, 0, 0], [0.0; 4]),
            ([9, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]),
            ([0, 1, 0, 0], [0.5, -0.5, 0.0, 0.0]),
            ([0, 1, 5, 1], [0.25, 0.25, 0.25, 0.5]),
        ];
        let influences = Influences {
            sets: 1,
            joints: (0..16).map(|v| cases[v % 4].0).collect(),
            weights: (0..16).map(|v| cases[v % 4].1).collect(),
        };
        let p = vec![Vec3::new(0.3, -0.2, 0.9); 16];
        let n = vec![Vec3::new(0.0, 3.0, 4.0); 16];
        for kernel in [Kernel::Portable, Kernel::detect()] {
            let (mut op, mut on) = (vec![Vec3::NAN; 16], vec![Vec3::NAN; 16]);
            skin_lbs_with(kernel, &palette, &influences, &p, Some((&n, &mut on)), &mut op);
            for v in 0..16 {
                match v % 4 {
                    // No weight, the only weight on a joint outside the palette, weights that
                    // cancel: each keeps the bind pose.
                    0..=2 => {
                        assert_eq!(op[v], p[v], "{kernel:?}: vertex {v} keeps the bind pose");
                        assert!((on[v] - Vec3::new(0.0, 0.6, 0.8)).length() < 1e-6);
                    }
                    _ => {
                        // Joint 5 is outside: 0.25·m + 0.75·translate(Y), computed here by hand.
                        let blended = m * 0.25 + Mat4::from_translation(Vec3::Y) * 0.75;
                        let want = blended.transform_point3(p[v]);
                        assert!((op[v] - want).length() < 1e-6, "{kernel:?}: {} vs {want}", op[v]);
                    }
                }
            }
        }
    }

    #[test]
    fn normals_of_a_mirroring_matrix_keep_their_side() {
        let mirror = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
        let influences = Influences {
            sets: 1,
            joints: vec![[0; 4]; 8],
            weights: vec![[1.0, 0.0, 0.0, 0.0]; 8],
        };
        let p = vec![Vec3::ONE; 8];
        let n = vec![Vec3::X; 8];
        let (mut op, mut on) = (vec![Vec3::ZERO; 8], vec![Vec3::ZERO; 8]);
        skin_lbs(&[mirror], &influences, &p, &n, &mut op, &mut on);
        // The inverse transpose of a mirror in x sends +x to -x.
        assert!(on.iter().all(|n| (*n - Vec3::NEG_X).length() < 1e-6), "{on:?}");
        assert!(op.iter().all(|p| *p == Vec3::new(-1.0, 1.0, 1.0)));
    }
}
