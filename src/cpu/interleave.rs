//! Sixteen packed `Vec3`s in three AVX-512 registers turned into their x, y and z registers and
//! back: the shape change both the skinning and the morph kernels need, kept below both.

use std::arch::x86_64::*;

/// Lane indices of `_mm512_permutex2var_ps` that gather component `k` of sixteen packed
/// `Vec3`s: first from floats 0–31 (two registers), then the rest from the third register.
const fn deinterleave(k: usize) -> ([i32; 16], [i32; 16]) {
    let (mut first, mut second) = ([0; 16], [0; 16]);
    let mut i = 0;
    while i < 16 {
        let g = 3 * i + k;
        if g < 32 {
            first[i] = g as i32;
            second[i] = i as i32;
        } else {
            second[i] = (16 + g - 32) as i32;
        }
        i += 1;
    }
    (first, second)
}

/// The inverse of [`deinterleave`] for output register `r` (floats 16r … 16r + 15): x and y
/// first, then z.
const fn interleave(r: usize) -> ([i32; 16], [i32; 16]) {
    let (mut first, mut second) = ([0; 16], [0; 16]);
    let mut lane = 0;
    while lane < 16 {
        let g = 16 * r + lane;
        let (i, k) = (g / 3, g % 3);
        match k {
            0 => first[lane] = i as i32,
            1 => first[lane] = 16 + i as i32,
            _ => {}
        }
        second[lane] = if k == 2 { 16 + i as i32 } else { lane as i32 };
        lane += 1;
    }
    (first, second)
}

const DEINTERLEAVE: [([i32; 16], [i32; 16]); 3] = [deinterleave(0), deinterleave(1), deinterleave(2)];
const INTERLEAVE: [([i32; 16], [i32; 16]); 3] = [interleave(0), interleave(1), interleave(2)];

/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn indices(i: &[i32; 16]) -> __m512i {
    // SAFETY: the caller's contract; `i` is 64 readable bytes.
    unsafe { _mm512_loadu_si512(i.as_ptr().cast()) }
}

/// Sixteen packed `Vec3`s (48 floats in three registers) as their x, y and z, vertex i in lane i.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
pub(crate) unsafe fn deinterleave3([a, b, c]: [__m512; 3]) -> [__m512; 3] {
    let mut out = [a; 3];
    // A loop, not a map over the array: a closure does not take its caller's target features,
    // and the intrinsics in it would become calls.
    for (out, (first, second)) in out.iter_mut().zip(&DEINTERLEAVE) {
        // SAFETY: the caller's contract.
        unsafe {
            let ab = _mm512_permutex2var_ps(a, indices(first), b);
            *out = _mm512_permutex2var_ps(ab, indices(second), c);
        }
    }
    out
}

/// The inverse of [`deinterleave3`]: x, y and z packed again into three registers of 48 floats.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
pub(crate) unsafe fn interleave3([x, y, z]: [__m512; 3]) -> [__m512; 3] {
    let mut out = [x; 3];
    for (out, (first, second)) in out.iter_mut().zip(&INTERLEAVE) {
        // SAFETY: the caller's contract.
        unsafe {
            let xy = _mm512_permutex2var_ps(x, indices(first), y);
            *out = _mm512_permutex2var_ps(xy, indices(second), z);
        }
    }
    out
}
