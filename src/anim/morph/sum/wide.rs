//! The moved normals' renormalization, and the terms of a frame that follows its plan, sixteen
//! consecutive vertices at a time with AVX-512.

use super::{AddTerms, ChunkTaker, Plan, Vec3};
use crate::cpu::interleave::{deinterleave3, interleave3};
use crate::rig::MorphTarget;
use std::arch::x86_64::*;

/// The masks that reach the first `vertices` (at most sixteen) of sixteen packed `Vec3`s in
/// three registers: float k is lane k % 16 of register k / 16, so loads and stores under them
/// touch nothing past those vertices.
#[inline(always)]
fn float_masks(vertices: usize) -> [u16; 3] {
    let floats = 3 * vertices.min(16);
    let below = |k: usize| if k >= 64 { u64::MAX } else { (1u64 << k) - 1 };
    [0, 16, 32].map(|from: usize| ((below(floats) & !below(from)) >> from) as u16)
}

/// The packed `Vec3`s at `p` that `masks` reach (see [`float_masks`]), in three registers,
/// zeros elsewhere.
///
/// # Safety
/// AVX-512 F; the floats the masks reach readable.
#[inline(always)]
unsafe fn load_packed(p: *const f32, masks: [u16; 3]) -> [__m512; 3] {
    // SAFETY: the caller's contract; masked lanes are not read.
    unsafe {
        [
            _mm512_maskz_loadu_ps(masks[0], p),
            _mm512_maskz_loadu_ps(masks[1], p.wrapping_add(16)),
            _mm512_maskz_loadu_ps(masks[2], p.wrapping_add(32)),
        ]
    }
}

/// Stores the floats of `packed` that `masks` reach at `p`, as [`load_packed`] read them.
///
/// # Safety
/// AVX-512 F; the floats the masks reach writable.
#[inline(always)]
unsafe fn store_packed(p: *mut f32, masks: [u16; 3], packed: [__m512; 3]) {
    // SAFETY: the caller's contract; masked lanes are not written.
    unsafe {
        _mm512_mask_storeu_ps(p, masks[0], packed[0]);
        _mm512_mask_storeu_ps(p.wrapping_add(16), masks[1], packed[1]);
        _mm512_mask_storeu_ps(p.wrapping_add(32), masks[2], packed[2]);
    }
}

/// Sixteen packed `Vec3`s (48 floats in three registers), each normalized as
/// `super::normalize_four` normalizes it.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn normalized(packed: [__m512; 3]) -> [__m512; 3] {
    // SAFETY: the caller's contract.
    unsafe {
        let [x, y, z] = deinterleave3(packed);
        let dot = _mm512_add_ps(
            _mm512_add_ps(_mm512_mul_ps(x, x), _mm512_mul_ps(y, y)),
            _mm512_mul_ps(z, z),
        );
        let rcp = _mm512_div_ps(_mm512_set1_ps(1.0), _mm512_sqrt_ps(dot));
        // Finite and positive: below infinity and above zero (a NaN is neither); the others
        // give +0 in every component, as `Vec3::ZERO`.
        let keep = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(rcp, _mm512_set1_ps(f32::INFINITY))
            & _mm512_cmp_ps_mask::<_CMP_GT_OQ>(rcp, _mm512_setzero_ps());
        interleave3([
            _mm512_maskz_mul_ps(keep, x, rcp),
            _mm512_maskz_mul_ps(keep, y, rcp),
            _mm512_maskz_mul_ps(keep, z, rcp),
        ])
    }
}

/// Normalizes the vertices of `run` (at most sixteen) as `super::normalize_four` does each.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn normalize_run(run: &mut [Vec3]) {
    let masks = float_masks(run.len());
    let p = run.as_mut_ptr().cast::<f32>();
    // SAFETY: the caller's contract; the masked loads and stores touch the run's floats alone.
    unsafe { store_packed(p, masks, normalized(load_packed(p, masks))) }
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

/// [`AddTerms`] sixteen vertices at a time, the sums normalized in the registers they are made in.
struct Sixteen;

impl AddTerms for Sixteen {
    /// # Safety
    /// AVX-512 F.
    #[inline(always)]
    unsafe fn add(out: &mut [Vec3], from: Option<&[Vec3]>, offsets: &[Vec3], w: f32, normalize: bool) {
        let n = out.len();
        assert!(offsets.len() == n && from.is_none_or(|from| from.len() == n));
        let mut k = 0;
        while k < n {
            let masks = float_masks(n - k);
            // SAFETY: the caller's contract (AVX-512 F); the masks reach vertices k to
            // min(k + 16, n) alone, all in the three slices (lengths asserted above), and
            // `out` is read before it is written.
            unsafe {
                let o = out.as_mut_ptr().add(k).cast::<f32>();
                let f = from.map_or(o.cast_const(), |from| from.as_ptr().add(k).cast::<f32>());
                let d = offsets.as_ptr().add(k).cast::<f32>();
                let w = _mm512_set1_ps(w);
                let ([f0, f1, f2], [d0, d1, d2]) = (load_packed(f, masks), load_packed(d, masks));
                // Written out, not through a closure, which would not have this code's features.
                let mut sums = [
                    _mm512_add_ps(f0, _mm512_mul_ps(d0, w)),
                    _mm512_add_ps(f1, _mm512_mul_ps(d1, w)),
                    _mm512_add_ps(f2, _mm512_mul_ps(d2, w)),
                ];
                if normalize {
                    sums = normalized(sums);
                }
                store_packed(o, masks, sums);
            }
            k += 16;
        }
    }
}

/// `super::morph_part_again` with the terms added sixteen vertices at a time.
///
/// # Safety
/// AVX-512 F and BW.
#[target_feature(enable = "avx512f,avx512bw")]
pub(super) unsafe fn follow_plan(
    targets: &[MorphTarget],
    active: &[(u32, f32)],
    out: (&mut [Vec3], &mut [Vec3]),
    plan: &Plan,
    then: &mut ChunkTaker<'_>,
) {
    // SAFETY: `Sixteen` needs AVX-512 F, this function's contract.
    unsafe { super::follow_plan::<Sixteen>(targets, active, out, plan, then) }
}
