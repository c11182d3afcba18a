//! The AVX-512 kernel: blocks of sixteen vertices. A 4×4 palette matrix is one 16-lane register,
//! so blending costs one fused multiply-add per influence; the sixteen blended matrices are then
//! transposed into one register per element (the w row left out).

use super::Job;
use super::block::{Blend, run};
use super::lanes::V3;
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
