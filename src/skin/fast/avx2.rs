//! The AVX2 + FMA kernel: blocks of eight vertices, each matrix blended as two 8-wide registers
//! (columns 0–1 and 2–3) with one fused multiply-add each per influence, then transposed into
//! one register per element.

use super::block::{Blend, run};
use super::lanes::V3;
use super::{Inf, Job};
use std::arch::x86_64::*;

/// Vertices per block.
const BLOCK: usize = 8;

/// Skins every vertex of `job`: blocks of eight with AVX2, the rest on the portable path.
///
/// # Safety
/// AVX2 and FMA must be available; `job` must hold 1 or 2 influence sets per vertex. (That its
/// slices cover its vertices is every `Job`'s invariant: only `Job::new`'s checks make one.)
#[target_feature(enable = "avx2,fma")]
pub unsafe fn skin(job: Job<'_>) {
    // SAFETY: this function's contract, and `run`'s `SETS` and `NORMALS` match the job.
    unsafe {
        match (job.influences.sets, job.with_normals()) {
            (1, true) => run::<Avx2, 1, true>(job),
            (1, false) => run::<Avx2, 1, false>(job),
            (_, true) => run::<Avx2, 2, true>(job),
            (_, false) => run::<Avx2, 2, false>(job),
        }
    }
}

pub struct Avx2;

// SAFETY: every method is AVX2/FMA arithmetic on registers, or reads the 16 floats its caller
// vouches for.
unsafe impl Blend for Avx2 {
    type V = __m256;
    /// Columns (0|1) and (2|3).
    type M = [__m256; 2];

    #[inline(always)]
    unsafe fn zero() -> [__m256; 2] {
        // SAFETY: the trait's contract (AVX2 and FMA) covers every method here.
        unsafe { [_mm256_setzero_ps(); 2] }
    }

    #[inline(always)]
    unsafe fn identity() -> [__m256; 2] {
        // SAFETY: as `zero`.
        unsafe {
            [
                _mm256_setr_ps(1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0),
                _mm256_setr_ps(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            ]
        }
    }

    #[inline(always)]
    unsafe fn add_weighted([lo, hi]: [__m256; 2], w: f32, m: *const f32) -> [__m256; 2] {
        // SAFETY: as `zero`; `m` covers 16 floats (the trait's contract).
        unsafe {
            let w = _mm256_set1_ps(w);
            [
                _mm256_fmadd_ps(w, _mm256_loadu_ps(m), lo),
                _mm256_fmadd_ps(w, _mm256_loadu_ps(m.add(8)), hi),
            ]
        }
    }

    type Weights = __m256;

    // Not `inline(always)`, which cannot go with target features (the inline assembly needs
    // them); inlined all the same into the kernel, which has them.
    #[inline]
    #[target_feature(enable = "avx")]
    unsafe fn weights(w: &[f32; 4]) -> __m256 {
        // SAFETY: as `zero`; `w` is 16 readable bytes; `opaque!` is sound under this function's
        // target feature.
        unsafe {
            let four = _mm_loadu_ps(w.as_ptr());
            opaque!(_mm256_set_m128(four, four), ymm_reg)
        }
    }

    #[inline(always)]
    unsafe fn add_weighted_slot([lo, hi]: [__m256; 2], w: __m256, slot: usize, m: *const f32) -> [__m256; 2] {
        // SAFETY: as `add_weighted`.
        unsafe {
            let w = spread(w, slot);
            [
                _mm256_fmadd_ps(w, _mm256_loadu_ps(m), lo),
                _mm256_fmadd_ps(w, _mm256_loadu_ps(m.add(8)), hi),
            ]
        }
    }

    const POINTWISE: bool = true;

    #[inline(always)]
    unsafe fn transform_point([lo, hi]: [__m256; 2], pin: *const f32, pout: *mut f32, lane: usize) {
        // SAFETY: the trait's contract, which is `transform_point`'s with `BLOCK` lanes.
        unsafe { transform_point::<BLOCK>(lo, hi, pin, pout, lane) }
    }

    #[inline(always)]
    unsafe fn transpose(mats: &[[__m256; 2]; 16]) -> [V3<__m256>; 4] {
        // SAFETY: as `zero`.
        unsafe {
            let [c0x, c0y, c0z, c1x, c1y, c1z] = transpose(mats, 0);
            let [c2x, c2y, c2z, c3x, c3y, c3z] = transpose(mats, 1);
            [[c0x, c0y, c0z], [c1x, c1y, c1z], [c2x, c2y, c2z], [c3x, c3y, c3z]]
        }
    }
}

/// `m · (p, 1)` for vertex `lane` of a block of `LANES` packed positions at `pin` (outputs at
/// `pout`), from the matrix's columns 0–1 (`lo`) and 2–3 (`hi`): `(c0·x + c2·z | c1·y + c3)` in
/// one multiply and one multiply-add, then the two halves added — three broadcast loads, two
/// blends and one extract per vertex, where the transpose costs five shuffles and a spill of
/// each matrix. Both kernels transform positions without normals this way.
///
/// # Safety
/// AVX2 and FMA; `lane < LANES`; `pin` and `pout` cover `3 × LANES` floats.
#[inline(always)]
pub(super) unsafe fn transform_point<const LANES: usize>(
    lo: __m256,
    hi: __m256,
    pin: *const f32,
    pout: *mut f32,
    lane: usize,
) {
    // SAFETY: this function's contract: floats 3·lane … 3·lane + 2 are the vertex's own.
    unsafe {
        let p = pin.add(3 * lane);
        let x_y = _mm256_blend_ps::<0xF0>(_mm256_broadcast_ss(&*p), _mm256_broadcast_ss(&*p.add(1)));
        let z_1 = _mm256_blend_ps::<0xF0>(_mm256_broadcast_ss(&*p.add(2)), _mm256_set1_ps(1.0));
        let halves = _mm256_fmadd_ps(hi, z_1, _mm256_mul_ps(lo, x_y));
        let out = _mm_add_ps(_mm256_castps256_ps128(halves), _mm256_extractf128_ps::<1>(halves));
        let o = pout.add(3 * lane);
        if lane + 1 < LANES {
            // The fourth float lands on the next vertex's x, written after this.
            _mm_storeu_ps(o, out);
        } else {
            _mm_storel_epi64(o.cast(), _mm_castps_si128(out));
            _mm_store_ss(o.add(2), _mm_movehl_ps(out, out));
        }
    }
}

/// Skins the positions of `job` with [`Avx2Exact`]: the portable path's bits, eight vertices
/// at a time.
///
/// # Safety
/// As [`skin`]; `job` has no normals.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn skin_exact(job: Job<'_>) {
    debug_assert!(!job.with_normals());
    // SAFETY: this function's contract, and `run`'s `SETS` and `NORMALS` match the job.
    unsafe {
        match job.influences.sets {
            1 => run::<Avx2Exact, 1, false>(job),
            _ => run::<Avx2Exact, 2, false>(job),
        }
    }
}

/// [`Avx2`] with a multiply and an add where it fuses them: `acc + m·w` rounded twice, as the
/// portable path's `Vec4` arithmetic does.
pub struct Avx2Exact;

// SAFETY: as for `Avx2`.
unsafe impl Blend for Avx2Exact {
    type V = __m256;
    type M = [__m256; 2];
    const EXACT: bool = true;

    #[inline(always)]
    unsafe fn zero() -> [__m256; 2] {
        // SAFETY: the trait's contract.
        unsafe { Avx2::zero() }
    }

    #[inline(always)]
    unsafe fn identity() -> [__m256; 2] {
        // SAFETY: the trait's contract.
        unsafe { Avx2::identity() }
    }

    #[inline(always)]
    unsafe fn add_weighted([lo, hi]: [__m256; 2], w: f32, m: *const f32) -> [__m256; 2] {
        // SAFETY: the trait's contract.
        let [plo, phi] = unsafe { Self::weighted(w, m) };
        // SAFETY: the trait's contract.
        unsafe { [_mm256_add_ps(lo, plo), _mm256_add_ps(hi, phi)] }
    }

    #[inline(always)]
    unsafe fn weighted(w: f32, m: *const f32) -> [__m256; 2] {
        // SAFETY: the trait's contract; `m` covers 16 floats.
        unsafe { product(_mm256_set1_ps(w), m) }
    }

    type Weights = __m256;

    #[inline(always)]
    unsafe fn weights(w: &[f32; 4]) -> __m256 {
        // SAFETY: the trait's contract.
        unsafe { Avx2::weights(w) }
    }

    #[inline(always)]
    unsafe fn add_weighted_slot([lo, hi]: [__m256; 2], w: __m256, slot: usize, m: *const f32) -> [__m256; 2] {
        // SAFETY: the trait's contract.
        let [plo, phi] = unsafe { Self::weighted_slot(w, slot, m) };
        // SAFETY: the trait's contract.
        unsafe { [_mm256_add_ps(lo, plo), _mm256_add_ps(hi, phi)] }
    }

    #[inline(always)]
    unsafe fn weighted_slot(w: __m256, slot: usize, m: *const f32) -> [__m256; 2] {
        // SAFETY: the trait's contract; `m` covers 16 floats.
        unsafe { product(spread(w, slot), m) }
    }

    #[inline(always)]
    unsafe fn transpose(mats: &[[__m256; 2]; 16]) -> [V3<__m256>; 4] {
        // SAFETY: the trait's contract.
        unsafe { Avx2::transpose(mats) }
    }
}

/// The 16 floats at `m` times `w`, unfused, as two 8-wide halves.
///
/// # Safety
/// The CPU has AVX; `m` covers 16 floats.
#[inline(always)]
unsafe fn product(w: __m256, m: *const f32) -> [__m256; 2] {
    // SAFETY: this function's contract.
    unsafe {
        [
            _mm256_mul_ps(_mm256_loadu_ps(m), w),
            _mm256_mul_ps(_mm256_loadu_ps(m.add(8)), w),
        ]
    }
}

/// Weight `slot` of the four repeated in each 128-bit half of `w`, in every lane: one in-lane
/// shuffle (`slot` is a constant once the slot loop is unrolled).
///
/// # Safety
/// AVX.
#[inline(always)]
unsafe fn spread(w: __m256, slot: usize) -> __m256 {
    // SAFETY: the caller's contract.
    unsafe {
        match slot {
            0 => _mm256_shuffle_ps::<0x00>(w, w),
            1 => _mm256_shuffle_ps::<0x55>(w, w),
            2 => _mm256_shuffle_ps::<0xAA>(w, w),
            _ => _mm256_shuffle_ps::<0xFF>(w, w),
        }
    }
}

/// The same answer as [`super::block::block_slots`] in a handful of 8-lane integer
/// operations: left to the compiler, the generic scan of 16 lanes becomes scalar code on
/// AVX2, about a third of the kernel's time.
///
/// # Safety
/// AVX2.
#[inline(always)]
pub(crate) unsafe fn block_slots<const SETS: usize>(
    influences: Inf<'_>,
    range: std::ops::Range<usize>,
    palette: usize,
) -> Option<usize> {
    let weights = influences.weights[range.clone()].as_flattened();
    let joints = influences.joints[range].as_flattened();
    // Eight vertices: 32·SETS weights (4·SETS registers) and as many joints (2·SETS).
    assert!(weights.len() == 32 * SETS && joints.len() == 32 * SETS);
    // SAFETY: the caller's contract; the reads stay inside the two slices (lengths asserted above).
    unsafe {
        let w = weights.as_ptr() as *const __m256i;
        let (mut any, mut highest, mut lowest) =
            (_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_set1_epi32(-1));
        for r in 0..4 * SETS {
            let bits = _mm256_loadu_si256(w.add(r));
            any = _mm256_or_si256(any, bits);
            highest = _mm256_max_epu32(highest, bits);
            lowest = _mm256_min_epu32(lowest, bits);
        }
        let j = joints.as_ptr() as *const __m256i;
        let mut joint = _mm256_setzero_si256();
        for r in 0..2 * SETS {
            joint = _mm256_max_epu16(joint, _mm256_loadu_si256(j.add(r)));
        }
        // The same tests as `slots_of_lanes`, lane-wise with one mask per test.
        let zero = _mm256_setzero_si256();
        let mut used = !lanes_where(_mm256_cmpeq_epi32(any, zero)) & 0xFF;
        // A vertex's slots are 4·SETS lanes apart: with one set two vertices share a
        // register, so slot k is in lanes k and k + 4.
        let first_slot = if SETS == 1 {
            used = (used | used >> 4) & 0xF;
            0x11
        } else {
            0x01
        };
        let slots = super::block::slots_through(used);
        let most = _mm256_set1_epi32(0x7F80_0000);
        let weights_valid = lanes_where(_mm256_cmpeq_epi32(_mm256_min_epu32(highest, most), highest)) == 0xFF;
        let first_positive = lanes_where(_mm256_cmpeq_epi32(lowest, zero)) & first_slot == 0;
        let joints_inside = match u16::try_from(palette) {
            Ok(0) => false,
            Ok(len) => {
                let last = _mm256_set1_epi16((len - 1) as i16);
                _mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_max_epu16(joint, last), last)) == -1
            }
            Err(_) => true,
        };
        (weights_valid && first_positive && joints_inside).then_some(slots)
    }
}

/// Bit `i` set where 32-bit lane `i` of `v` has its sign bit set (a comparison's true).
///
/// # Safety
/// AVX.
#[inline(always)]
unsafe fn lanes_where(v: __m256i) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { _mm256_movemask_ps(_mm256_castsi256_ps(v)) as u32 }
}

/// Elements x, y, z of both columns held in `mats[i][half]` (lanes 0–2 and 4–6), as one
/// register per element with vertex `i` in lane `i`: an 8×8 transpose without the w rows.
///
/// # Safety
/// AVX2.
#[inline(always)]
unsafe fn transpose(mats: &[[__m256; 2]; 16], half: usize) -> [__m256; 6] {
    let mut r = [mats[0][half]; BLOCK];
    for (r, mat) in r.iter_mut().zip(mats) {
        *r = mat[half];
    }
    // SAFETY: the caller's contract.
    unsafe {
        let t0 = _mm256_unpacklo_ps(r[0], r[1]);
        let t1 = _mm256_unpackhi_ps(r[0], r[1]);
        let t2 = _mm256_unpacklo_ps(r[2], r[3]);
        let t3 = _mm256_unpackhi_ps(r[2], r[3]);
        let t4 = _mm256_unpacklo_ps(r[4], r[5]);
        let t5 = _mm256_unpackhi_ps(r[4], r[5]);
        let t6 = _mm256_unpacklo_ps(r[6], r[7]);
        let t7 = _mm256_unpackhi_ps(r[6], r[7]);
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
