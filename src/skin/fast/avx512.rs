//! The AVX-512 kernel: blocks of sixteen vertices. A 4×4 palette matrix is one 16-lane register,
//! so blending costs one fused multiply-add per influence; the sixteen blended matrices are then
//! transposed into one register per element (the w row left out).

use super::block::{Blend, run};
use super::lanes::V3;
use super::{Inf, Job};
use std::arch::x86_64::*;

/// Vertices per block.
const BLOCK: usize = 16;

/// Skins every vertex of `job`: blocks of sixteen with AVX-512, the rest on the portable path.
///
/// # Safety
/// AVX-512 F and BW, AVX2 and FMA must be available; `job` must hold 1 or 2 influence sets per
/// vertex. (That its slices cover its vertices is every `Job`'s invariant: only `Job::new`'s
/// checks make one.)
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub unsafe fn skin(job: Job<'_>) {
    // SAFETY: this function's contract, and `run`'s `SETS` and `NORMALS` match the job.
    unsafe {
        match (job.influences.sets, job.with_normals()) {
            (1, true) => run::<Avx512, 1, true>(job),
            (1, false) => run::<Avx512, 1, false>(job),
            (_, true) => run::<Avx512, 2, true>(job),
            (_, false) => run::<Avx512, 2, false>(job),
        }
        // Streamed stores are weakly ordered: fenced here, so that whatever later tells another
        // thread that the outputs are written (the end of a rayon task) is ordered after them.
        _mm_sfence();
    }
}

pub struct Avx512;

// SAFETY: every method is AVX-512 F arithmetic on registers, or reads the 16 floats its caller
// vouches for.
unsafe impl Blend for Avx512 {
    type V = __m512;
    type M = __m512;

    #[inline(always)]
    unsafe fn zero() -> __m512 {
        // SAFETY: the trait's contract (AVX-512 F) covers every method here.
        unsafe { _mm512_setzero_ps() }
    }

    #[inline(always)]
    unsafe fn identity() -> __m512 {
        // SAFETY: as `zero`.
        unsafe {
            _mm512_setr_ps(
                1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
            )
        }
    }

    #[inline(always)]
    unsafe fn add_weighted(acc: __m512, w: f32, m: *const f32) -> __m512 {
        // SAFETY: as `zero`; `m` covers 16 floats (the trait's contract).
        unsafe { _mm512_fmadd_ps(_mm512_set1_ps(w), _mm512_loadu_ps(m), acc) }
    }

    type Weights = __m512;

    // Not `inline(always)`, which cannot go with target features (the inline assembly needs
    // them); inlined all the same into the kernel, which has them.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn weights(w: &[f32; 4]) -> __m512 {
        // SAFETY: as `zero`; `w` is 16 readable bytes; `opaque!` is sound under this function's
        // target feature.
        unsafe { opaque!(_mm512_broadcast_f32x4(_mm_loadu_ps(w.as_ptr())), zmm_reg) }
    }

    #[inline(always)]
    unsafe fn add_weighted_slot(acc: __m512, w: __m512, slot: usize, m: *const f32) -> __m512 {
        // SAFETY: as `add_weighted`.
        unsafe {
            let w = match slot {
                0 => _mm512_shuffle_ps::<0x00>(w, w),
                1 => _mm512_shuffle_ps::<0x55>(w, w),
                2 => _mm512_shuffle_ps::<0xAA>(w, w),
                _ => _mm512_shuffle_ps::<0xFF>(w, w),
            };
            _mm512_fmadd_ps(w, _mm512_loadu_ps(m), acc)
        }
    }

    const POINTWISE: bool = true;

    /// As the AVX2 kernel's, from the matrix's two 256-bit halves: cheaper than the
    /// transpose and the deinterleaving of positions.
    #[inline(always)]
    unsafe fn transform_point(m: __m512, pin: *const f32, pout: *mut f32, lane: usize) {
        // SAFETY: the trait's contract, which is `transform_point`'s with `BLOCK` lanes (AVX2
        // and FMA come with this kernel's features).
        unsafe {
            let lo = _mm512_castps512_ps256(m);
            let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(m)));
            super::avx2::transform_point::<BLOCK>(lo, hi, pin, pout, lane)
        }
    }

    #[inline(always)]
    unsafe fn transpose(mats: &[__m512; 16]) -> [V3<__m512>; 4] {
        // SAFETY: as `zero`.
        unsafe { transpose(mats) }
    }
}

/// Elements x, y, z of the four columns of sixteen matrices (register `i` holding vertex `i`'s,
/// column-major), as one register per element with vertex `i` in lane `i`.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn transpose(r: &[__m512; BLOCK]) -> [V3<__m512>; 4] {
    // SAFETY: the caller's contract.
    unsafe {
        // Pairs: per 128-bit lane (one column), x and y (lo) or z and w (hi) of vertices 2m, 2m+1.
        let mut lo = [_mm512_setzero_ps(); 8];
        let mut hi = lo;
        for m in 0..8 {
            lo[m] = _mm512_unpacklo_ps(r[2 * m], r[2 * m + 1]);
            hi[m] = _mm512_unpackhi_ps(r[2 * m], r[2 * m + 1]);
        }
        // Quads: per 128-bit lane (column), one element of vertices 4q … 4q + 3.
        let (mut x, mut y, mut z) = ([lo[0]; 4], [lo[0]; 4], [lo[0]; 4]);
        for q in 0..4 {
            x[q] = _mm512_shuffle_ps::<0x44>(lo[2 * q], lo[2 * q + 1]);
            y[q] = _mm512_shuffle_ps::<0xEE>(lo[2 * q], lo[2 * q + 1]);
            z[q] = _mm512_shuffle_ps::<0x44>(hi[2 * q], hi[2 * q + 1]);
        }
        let ([x0, x1, x2, x3], [y0, y1, y2, y3], [z0, z1, z2, z3]) = (columns(x), columns(y), columns(z));
        [[x0, y0, z0], [x1, y1, z1], [x2, y2, z2], [x3, y3, z3]]
    }
}

/// A 4×4 transpose of 128-bit lanes: lane c of register q goes to lane q of register c.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn columns([e0, e1, e2, e3]: [__m512; 4]) -> [__m512; 4] {
    // SAFETY: the caller's contract.
    unsafe {
        let u0 = _mm512_shuffle_f32x4::<0x44>(e0, e1);
        let u1 = _mm512_shuffle_f32x4::<0xEE>(e0, e1);
        let u2 = _mm512_shuffle_f32x4::<0x44>(e2, e3);
        let u3 = _mm512_shuffle_f32x4::<0xEE>(e2, e3);
        [
            _mm512_shuffle_f32x4::<0x88>(u0, u2),
            _mm512_shuffle_f32x4::<0xDD>(u0, u2),
            _mm512_shuffle_f32x4::<0x88>(u1, u3),
            _mm512_shuffle_f32x4::<0xDD>(u1, u3),
        ]
    }
}

/// The same answer as [`super::block::block_slots`] for sixteen vertices in a handful of
/// 16-lane integer operations and mask tests (the generic scan compiles to 128-bit pieces).
///
/// # Safety
/// AVX-512 F and BW.
#[inline(always)]
pub(crate) unsafe fn block_slots<const SETS: usize>(
    influences: Inf<'_>,
    range: std::ops::Range<usize>,
    palette: usize,
) -> Option<usize> {
    let weights = influences.weights[range.clone()].as_flattened();
    let joints = influences.joints[range].as_flattened();
    // Sixteen vertices: 64·SETS weights (4·SETS registers) and as many joints (2·SETS).
    assert!(weights.len() == 64 * SETS && joints.len() == 64 * SETS);
    // SAFETY: the caller's contract; the reads stay inside the two slices (lengths asserted above).
    unsafe {
        let w = weights.as_ptr() as *const __m512i;
        let (mut any, mut highest, mut lowest) =
            (_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_set1_epi32(-1));
        for r in 0..4 * SETS {
            let bits = _mm512_loadu_si512(w.add(r));
            any = _mm512_or_si512(any, bits);
            highest = _mm512_max_epu32(highest, bits);
            lowest = _mm512_min_epu32(lowest, bits);
        }
        let j = joints.as_ptr() as *const __m512i;
        let mut joint = _mm512_setzero_si512();
        for r in 0..2 * SETS {
            joint = _mm512_max_epu16(joint, _mm512_loadu_si512(j.add(r)));
        }
        // The same tests as `slots_of_lanes`, one mask per test. A vertex's slots are 4·SETS
        // lanes apart, so slot k is in lanes k, k + 4, k + 8 and k + 12 with one set, k and
        // k + 8 with two.
        let zero = _mm512_setzero_si512();
        let used = u32::from(_mm512_cmpneq_epi32_mask(any, zero));
        let (used, first_slot) = if SETS == 1 {
            ((used | used >> 4 | used >> 8 | used >> 12) & 0xF, 0x1111)
        } else {
            ((used | used >> 8) & 0xFF, 0x0101)
        };
        let slots = super::block::slots_through(used);
        let weights_valid = _mm512_cmple_epu32_mask(highest, _mm512_set1_epi32(0x7F80_0000)) == 0xFFFF;
        let first_positive = _mm512_cmpeq_epi32_mask(lowest, zero) & first_slot == 0;
        let joints_inside = match u16::try_from(palette) {
            Ok(0) => false,
            Ok(len) => _mm512_cmpgt_epu16_mask(joint, _mm512_set1_epi16((len - 1) as i16)) == 0,
            Err(_) => true,
        };
        (weights_valid && first_positive && joints_inside).then_some(slots)
    }
}
