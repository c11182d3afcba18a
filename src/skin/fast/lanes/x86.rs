//! The AVX2 and AVX-512 registers' [`Lanes`].

use super::Lanes;
use crate::cpu::interleave::{deinterleave3, interleave3};
use std::arch::x86_64::*;

/// The methods of [`Lanes`] that are one intrinsic each (and the block check of the kernel
/// module named last), given in the order of the names below; the CPU check is the trait's
/// contract on the caller.
macro_rules! one_intrinsic_each {
    ($splat:ident, $add:ident, $sub:ident, $mul:ident, $div:ident, $sqrt:ident, $mul_add:ident,
     $mul_sub:ident, $neg_mul_add:ident, $rsqrt_estimate:ident, $load:ident,
     $kernel:ident) => {
        #[inline(always)]
        unsafe fn block_slots<const SETS: usize>(
            influences: crate::skin::fast::Inf<'_>,
            range: std::ops::Range<usize>,
            palette: usize,
        ) -> Option<usize> {
            // SAFETY: the trait's contract: the CPU has the register's features, which
            // include those of its kernel's block check.
            unsafe { crate::skin::fast::$kernel::block_slots::<SETS>(influences, range, palette) }
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> Self {
            // SAFETY: the trait's contract: the CPU has the register's features.
            unsafe { $splat(x) }
        }
        #[inline(always)]
        unsafe fn add(self, b: Self) -> Self {
            // SAFETY: as `splat`.
            unsafe { $add(self, b) }
        }
        #[inline(always)]
        unsafe fn sub(self, b: Self) -> Self {
            // SAFETY: as `splat`.
            unsafe { $sub(self, b) }
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            // SAFETY: as `splat`.
            unsafe { $mul(self, b) }
        }
        #[inline(always)]
        unsafe fn div(self, b: Self) -> Self {
            // SAFETY: as `splat`.
            unsafe { $div(self, b) }
        }
        #[inline(always)]
        unsafe fn sqrt(self) -> Self {
            // SAFETY: as `splat`.
            unsafe { $sqrt(self) }
        }
        #[inline(always)]
        unsafe fn mul_add(self, b: Self, c: Self) -> Self {
            // SAFETY: as `splat`.
            unsafe { $mul_add(self, b, c) }
        }
        #[inline(always)]
        unsafe fn mul_sub(self, b: Self, c: Self) -> Self {
            // SAFETY: as `splat`.
            unsafe { $mul_sub(self, b, c) }
        }
        #[inline(always)]
        unsafe fn neg_mul_add(self, b: Self, c: Self) -> Self {
            // SAFETY: as `splat`.
            unsafe { $neg_mul_add(self, b, c) }
        }
        #[inline(always)]
        unsafe fn rsqrt_estimate(self) -> Self {
            // SAFETY: as `splat`.
            unsafe { $rsqrt_estimate(self) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            // SAFETY: as `splat`; `p` covers `LANES` floats (the trait's contract).
            unsafe { $load(p) }
        }
    };
}

// SAFETY: every method is an AVX2/FMA intrinsic; the trait's contract puts the CPU check on the
// caller.
unsafe impl Lanes for __m256 {
    const LANES: usize = 8;
    one_intrinsic_each!(
        _mm256_set1_ps,
        _mm256_add_ps,
        _mm256_sub_ps,
        _mm256_mul_ps,
        _mm256_div_ps,
        _mm256_sqrt_ps,
        _mm256_fmadd_ps,
        _mm256_fmsub_ps,
        _mm256_fnmadd_ps,
        _mm256_rsqrt_ps,
        _mm256_loadu_ps,
        avx2
    );
    #[inline(always)]
    unsafe fn sign_where_negative(self) -> Self {
        // SAFETY: as `splat`.
        unsafe {
            let negative = _mm256_cmp_ps::<_CMP_LT_OQ>(self, _mm256_setzero_ps());
            _mm256_and_ps(negative, _mm256_set1_ps(-0.0))
        }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: as `splat`.
        unsafe { _mm256_xor_ps(self, b) }
    }
    #[inline(always)]
    unsafe fn outside(self, lo: f32, hi: f32) -> u32 {
        // SAFETY: as `splat`.
        unsafe {
            let inside = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_GE_OQ>(self, _mm256_set1_ps(lo)),
                _mm256_cmp_ps::<_CMP_LE_OQ>(self, _mm256_set1_ps(hi)),
            );
            !(_mm256_movemask_ps(inside) as u32) & 0xFF
        }
    }
    #[inline(always)]
    unsafe fn is_zero(self) -> u32 {
        // SAFETY: as `splat`.
        unsafe { _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(self, _mm256_setzero_ps())) as u32 }
    }
    #[inline(always)]
    unsafe fn load3(p: *const f32) -> [Self; 3] {
        // SAFETY: as `splat`; `p` covers 24 floats (the trait's contract).
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
    #[inline(always)]
    unsafe fn store3(p: *mut f32, [x, y, z]: [Self; 3]) {
        // SAFETY: as `splat`; `p` covers 24 floats (the trait's contract).
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
    #[inline(always)]
    unsafe fn gather4(p: impl Fn(usize) -> *const f32) -> [Self; 4] {
        // SAFETY: as `splat`; each `p(i)` covers four floats (the trait's contract).
        unsafe {
            // Register g holds rows g and g + 4; a 4×4 transpose in each 128-bit half follows.
            let mut r = [_mm256_setzero_ps(); 4];
            for (g, r) in r.iter_mut().enumerate() {
                *r = _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm_loadu_ps(p(g))), _mm_loadu_ps(p(g + 4)));
            }
            let [r0, r1, r2, r3] = r;
            let (t0, t1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpackhi_ps(r0, r1));
            let (t2, t3) = (_mm256_unpacklo_ps(r2, r3), _mm256_unpackhi_ps(r2, r3));
            [
                _mm256_shuffle_ps::<0x44>(t0, t2),
                _mm256_shuffle_ps::<0xEE>(t0, t2),
                _mm256_shuffle_ps::<0x44>(t1, t3),
                _mm256_shuffle_ps::<0xEE>(t1, t3),
            ]
        }
    }
}

// SAFETY: every method is an AVX-512 F intrinsic (BW for `block_slots`'s 16-bit joints, which
// every AVX-512 kernel enables); the trait's contract puts the CPU check on
// the caller.
unsafe impl Lanes for __m512 {
    const LANES: usize = 16;
    one_intrinsic_each!(
        _mm512_set1_ps,
        _mm512_add_ps,
        _mm512_sub_ps,
        _mm512_mul_ps,
        _mm512_div_ps,
        _mm512_sqrt_ps,
        _mm512_fmadd_ps,
        _mm512_fmsub_ps,
        _mm512_fnmadd_ps,
        _mm512_rsqrt14_ps,
        _mm512_loadu_ps,
        avx512
    );
    #[inline(always)]
    unsafe fn sign_where_negative(self) -> Self {
        // SAFETY: as `splat`.
        unsafe {
            let negative = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(self, _mm512_setzero_ps());
            _mm512_maskz_mov_ps(negative, _mm512_set1_ps(-0.0))
        }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: as `splat` (the integer form needs only AVX-512 F, not DQ).
        unsafe { _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(self), _mm512_castps_si512(b))) }
    }
    #[inline(always)]
    unsafe fn outside(self, lo: f32, hi: f32) -> u32 {
        // SAFETY: as `splat`.
        unsafe {
            let ge = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(self, _mm512_set1_ps(lo));
            let inside = _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(ge, self, _mm512_set1_ps(hi));
            u32::from(!inside)
        }
    }
    #[inline(always)]
    unsafe fn is_zero(self) -> u32 {
        // SAFETY: as `splat`.
        unsafe { u32::from(_mm512_cmp_ps_mask::<_CMP_EQ_OQ>(self, _mm512_setzero_ps())) }
    }
    #[inline(always)]
    unsafe fn load3(p: *const f32) -> [Self; 3] {
        // SAFETY: as `splat`; `p` covers 48 floats (the trait's contract).
        unsafe {
            deinterleave3([
                _mm512_loadu_ps(p),
                _mm512_loadu_ps(p.add(16)),
                _mm512_loadu_ps(p.add(32)),
            ])
        }
    }
    #[inline(always)]
    unsafe fn store3(p: *mut f32, [x, y, z]: [Self; 3]) {
        // SAFETY: as `splat`; `p` covers 48 floats (the trait's contract).
        unsafe {
            for (r, packed) in interleave3([x, y, z]).into_iter().enumerate() {
                _mm512_storeu_ps(p.add(16 * r), packed);
            }
        }
    }
    const STREAMS: bool = true;
    #[inline(always)]
    unsafe fn stream3(p: *mut f32, [x, y, z]: [Self; 3]) {
        // SAFETY: as `splat`; `p` covers 48 floats and is aligned on 64 bytes (the trait's
        // contract).
        unsafe {
            for (r, packed) in interleave3([x, y, z]).into_iter().enumerate() {
                _mm512_stream_ps(p.add(16 * r), packed);
            }
        }
    }
    #[inline(always)]
    unsafe fn gather4(p: impl Fn(usize) -> *const f32) -> [Self; 4] {
        // SAFETY: as `splat`; each `p(i)` covers four floats (the trait's contract).
        unsafe {
            // Register g holds rows g, g + 4, g + 8 and g + 12; a 4×4 transpose in each 128-bit
            // lane follows.
            let mut r = [_mm512_setzero_ps(); 4];
            for (g, r) in r.iter_mut().enumerate() {
                let row = _mm512_castps128_ps512(_mm_loadu_ps(p(g)));
                let row = _mm512_insertf32x4::<1>(row, _mm_loadu_ps(p(g + 4)));
                let row = _mm512_insertf32x4::<2>(row, _mm_loadu_ps(p(g + 8)));
                *r = _mm512_insertf32x4::<3>(row, _mm_loadu_ps(p(g + 12)));
            }
            let [r0, r1, r2, r3] = r;
            let (t0, t1) = (_mm512_unpacklo_ps(r0, r1), _mm512_unpackhi_ps(r0, r1));
            let (t2, t3) = (_mm512_unpacklo_ps(r2, r3), _mm512_unpackhi_ps(r2, r3));
            [
                _mm512_shuffle_ps::<0x44>(t0, t2),
                _mm512_shuffle_ps::<0xEE>(t0, t2),
                _mm512_shuffle_ps::<0x44>(t1, t3),
                _mm512_shuffle_ps::<0xEE>(t1, t3),
            ]
        }
    }
}
