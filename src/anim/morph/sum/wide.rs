//! The moved normals' renormalization sixteen consecutive vertices at a time with AVX-512.

use super::Vec3;
use crate::skin::fast::lanes::{deinterleave3, interleave3};
use std::arch::x86_64::*;

/// Normalizes the vertices of `run` (at most sixteen) as `super::normalize_four` does each.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn normalize_run(run: &mut [Vec3]) {
    // Float k of the run is lane k % 16 of register k / 16: masks that reach only the run's
    // floats, so the loads and stores touch nothing past it.
    let floats = 3 * run.len().min(16);
    let masks = [0, 16, 32].map(|from: usize| {
        let below = |k: usize| if k >= 64 { u64::MAX } else { (1u64 << k) - 1 };
        ((below(floats) & !below(from)) >> from) as u16
    });
    let p = run.as_mut_ptr().cast::<f32>();
    // SAFETY: the caller's contract; the masked loads and stores touch the run's floats alone.
    unsafe {
        let [x, y, z] = deinterleave3([
            _mm512_maskz_loadu_ps(masks[0], p),
            _mm512_maskz_loadu_ps(masks[1], p.wrapping_add(16)),
            _mm512_maskz_loadu_ps(masks[2], p.wrapping_add(32)),
        ]);
        let dot = _mm512_add_ps(
            _mm512_add_ps(_mm512_mul_ps(x, x), _mm512_mul_ps(y, y)),
            _mm512_mul_ps(z, z),
        );
        let rcp = _mm512_div_ps(_mm512_set1_ps(1.0), _mm512_sqrt_ps(dot));
        // Finite and positive: below infinity and above zero (a NaN is neither); the others
        // give +0 in every component, as `Vec3::ZERO`.
        let keep = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(rcp, _mm512_set1_ps(f32::INFINITY))
            & _mm512_cmp_ps_mask::<_CMP_GT_OQ>(rcp, _mm512_setzero_ps());
        let [a, b, c] = interleave3([
            _mm512_maskz_mul_ps(keep, x, rcp),
            _mm512_maskz_mul_ps(keep, y, rcp),
            _mm512_maskz_mul_ps(keep, z, rcp),
        ]);
        _mm512_mask_storeu_ps(p, masks[0], a);
        _mm512_mask_storeu_ps(p.wrapping_add(16), masks[1], b);
        _mm512_mask_storeu_ps(p.wrapping_add(32), masks[2], c);
    }
}

/// [`super::normalize_listed`] run by run: each stretch of the list that counts up by one
/// from its first vertex, up to sixteen at a time.
///
/// # Safety
/// AVX-512 F and BW.
#[target_feature(enable = "avx512f,avx512bw")]
pub(super) unsafe fn normalize_runs(normals: &mut [Vec3], list: &[u32]) {
    let counting = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let mut i = 0;
    while let Some(&first) = list.get(i) {
        let left = (list.len() - i).min(16);
        let there = (u32::MAX >> (32 - left)) as u16;
        // SAFETY: the features are this function's contract; the mask reads the `left`
        // entries from `i` on, all in the list.
        let run = unsafe {
            let entries = _mm512_maskz_loadu_epi32(there, list.as_ptr().add(i).cast());
            let from_first = _mm512_sub_epi32(entries, _mm512_set1_epi32(first as i32));
            let counts = _mm512_mask_cmpeq_epi32_mask(there, from_first, counting);
            (!counts).trailing_zeros() as usize
        };
        let first = first as usize;
        // SAFETY: the features are this function's contract.
        unsafe { normalize_run(&mut normals[first..first + run]) };
        i += run;
    }
}
