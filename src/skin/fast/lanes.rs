//! The per-vertex math the SIMD skinning kernels share, written once over a register type
//! ([`Lanes`]: four lanes of glam's `Vec4` on any CPU, eight with AVX2, sixteen with AVX-512),
//! so that the kernels differ only in how they blend and transpose.

use super::block::Stores;
use glam::{Mat4, Vec4};

/// A register of [`Lanes::LANES`] `f32`s, one vertex per lane.
///
/// # Safety
/// Every method runs instructions of the implementation's target features: callers must run
/// only where the CPU has them (the kernels check once, before their loops). Pointer methods
/// read or write `3 × LANES` (`load3`, `store3`) or `LANES` (`load`) floats.
// Off x86-64 only the portable LBS kernel uses this, and not every operation.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub unsafe trait Lanes: Copy {
    const LANES: usize;
    unsafe fn splat(x: f32) -> Self;
    unsafe fn add(self, b: Self) -> Self;
    unsafe fn sub(self, b: Self) -> Self;
    unsafe fn mul(self, b: Self) -> Self;
    unsafe fn div(self, b: Self) -> Self;
    unsafe fn sqrt(self) -> Self;
    /// `self · b + c`, fused where the register's features have it.
    unsafe fn mul_add(self, b: Self, c: Self) -> Self;
    /// `self · b − c`, as [`Lanes::mul_add`].
    unsafe fn mul_sub(self, b: Self, c: Self) -> Self;
    /// `c − self · b`, as [`Lanes::mul_add`].
    unsafe fn neg_mul_add(self, b: Self, c: Self) -> Self;
    /// An estimate of `1/√self` with at least 11 bits.
    unsafe fn rsqrt_estimate(self) -> Self;
    /// Whether [`Lanes::rsqrt_estimate`] is exact (a square root and a division), so that
    /// normalizing needs no Newton step.
    const EXACT_RSQRT: bool = false;
    /// `-0.0` in the lanes where `self < 0` (not for `-0.0` or NaN), `+0.0` elsewhere: a sign
    /// to flip with [`Lanes::xor`].
    unsafe fn sign_where_negative(self) -> Self;
    unsafe fn xor(self, b: Self) -> Self;
    /// Bit `i` set where lane `i` is outside `[lo, hi]` or NaN.
    unsafe fn outside(self, lo: f32, hi: f32) -> u32;
    /// Bit `i` set where lane `i` is `== 0` (either sign).
    unsafe fn is_zero(self) -> u32;
    /// `LANES` consecutive floats.
    unsafe fn load(p: *const f32) -> Self;
    /// `LANES` packed `Vec3`s as x, y and z registers.
    unsafe fn load3(p: *const f32) -> [Self; 3];
    /// The inverse of [`Lanes::load3`].
    unsafe fn store3(p: *mut f32, v: [Self; 3]);
    /// Whether [`Lanes::stream3`] streams (writes around the caches).
    const STREAMS: bool = false;
    /// [`Lanes::store3`] with streaming stores, for outputs too large to be read again from
    /// the caches: their lines are written without being read first. `p` is aligned on
    /// `4 × LANES` bytes; the kernel that streams fences before it returns.
    unsafe fn stream3(p: *mut f32, v: [Self; 3]) {
        // SAFETY: the caller's contract is `store3`'s and more.
        unsafe { Self::store3(p, v) }
    }
    /// Four consecutive floats at `p(i)` for each lane `i`, as four registers (element-major):
    /// a gather of short rows, with plain loads.
    unsafe fn gather4(p: impl Fn(usize) -> *const f32) -> [Self; 4];

    /// [`block_slots`](super::block::block_slots) for a block of `LANES` vertices; a width may
    /// answer the same faster.
    #[inline(always)]
    unsafe fn block_slots<const SETS: usize>(
        influences: super::Inf<'_>,
        range: std::ops::Range<usize>,
        palette: usize,
    ) -> Option<usize> {
        super::block::block_slots::<SETS>(influences, range, palette)
    }
}

/// Three registers: x, y and z of `LANES` vectors.
pub type V3<V> = [V; 3];

/// # Safety
/// See [`Lanes`].
#[inline(always)]
pub unsafe fn dot<V: Lanes>(a: V3<V>, b: V3<V>) -> V {
    // SAFETY: this function's contract.
    unsafe { a[0].mul_add(b[0], a[1].mul_add(b[1], a[2].mul(b[2]))) }
}

/// `a × b` (component order as glam's `Vec3::cross`).
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
pub unsafe fn cross<V: Lanes>(a: V3<V>, b: V3<V>) -> V3<V> {
    // SAFETY: this function's contract.
    unsafe {
        [
            a[1].mul_sub(b[2], b[1].mul(a[2])),
            a[2].mul_sub(b[0], b[2].mul(a[0])),
            a[0].mul_sub(b[1], b[0].mul(a[1])),
        ]
    }
}

/// `m0·v.x + m1·v.y + m2·v.z (+ add)`.
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
pub unsafe fn combine<V: Lanes>(m: [V3<V>; 3], v: V3<V>, add: Option<V3<V>>) -> V3<V> {
    // SAFETY: this function's contract.
    unsafe {
        [
            combine_one(&m, v, add, 0),
            combine_one(&m, v, add, 1),
            combine_one(&m, v, add, 2),
        ]
    }
}

/// Element `e` of [`combine`]. (Helpers here are functions, never closures: a closure would not
/// inherit the kernels' target features, and its intrinsics would become calls.)
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
unsafe fn combine_one<V: Lanes>(m: &[V3<V>; 3], v: V3<V>, add: Option<V3<V>>, e: usize) -> V {
    // SAFETY: this function's contract.
    unsafe {
        let last = match add {
            Some(t) => m[2][e].mul_add(v[2], t[e]),
            None => m[2][e].mul(v[2]),
        };
        m[0][e].mul_add(v[0], m[1][e].mul_add(v[1], last))
    }
}

/// `((c0·p.x + c1·p.y) + c2·p.z) + c3` with a multiply and an add each, the portable path's
/// `Vec4` arithmetic in its order.
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
unsafe fn transform_exact<V: Lanes>([c0, c1, c2, c3]: [V3<V>; 4], p: V3<V>) -> V3<V> {
    // SAFETY: this function's contract.
    unsafe {
        [
            transform_exact_one(&[c0, c1, c2, c3], p, 0),
            transform_exact_one(&[c0, c1, c2, c3], p, 1),
            transform_exact_one(&[c0, c1, c2, c3], p, 2),
        ]
    }
}

/// Element `e` of [`transform_exact`].
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
unsafe fn transform_exact_one<V: Lanes>(c: &[V3<V>; 4], p: V3<V>, e: usize) -> V {
    // SAFETY: this function's contract.
    unsafe {
        c[0][e]
            .mul(p[0])
            .add(c[1][e].mul(p[1]))
            .add(c[2][e].mul(p[2]))
            .add(c[3][e])
    }
}

/// Every element of `v` times `s`.
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
pub unsafe fn scale<V: Lanes>(v: V3<V>, s: V) -> V3<V> {
    // SAFETY: this function's contract.
    unsafe { [v[0].mul(s), v[1].mul(s), v[2].mul(s)] }
}

/// `v` normalized, and the lanes whose squared length is zero, subnormal, huge or NaN (to be
/// redone exactly by the caller, as `normalize_or_zero` would).
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub unsafe fn normalize<V: Lanes>(v: V3<V>) -> (V3<V>, u32) {
    // SAFETY: this function's contract.
    unsafe { normalize_flipped(v, None) }
}

/// [`normalize`], negated in the lanes where `flip` is `-0.0` (a sign from
/// [`Lanes::sign_where_negative`]).
///
/// The estimate and one Newton step (none where the estimate is exact), ≈ 2e-7 relative (well
/// inside the 1e-5 allowed), ordered for the shortest chain after the estimate:
/// `(v·r0)·(1.5 − ½·len²·r0·r0)`, the sign riding on `r0`, the products `v·r0` made while the
/// step's factor is.
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
pub unsafe fn normalize_flipped<V: Lanes>(v: V3<V>, flip: Option<V>) -> (V3<V>, u32) {
    // SAFETY: this function's contract.
    unsafe {
        let len2 = dot(v, v);
        let r0 = len2.rsqrt_estimate();
        let signed = match flip {
            Some(flip) => r0.xor(flip),
            None => r0,
        };
        let odd = len2.outside(f32::MIN_POSITIVE, f32::MAX / 4.0);
        if V::EXACT_RSQRT {
            return (scale(v, signed), odd);
        }
        let half = len2.mul(V::splat(0.5));
        let step = half.mul(r0).neg_mul_add(r0, V::splat(1.5));
        (scale(scale(v, signed), step), odd)
    }
}

/// Linear blend skinning of one block once the blended matrices are in registers: positions
/// (and normals when `nin` is not null) read from `pin`/`nin` and written to `pout`/`nout`.
/// Returns the lanes whose normal the caller must redo (see [`normalize`]).
///
/// # Safety
/// See [`Lanes`]; the pointers must cover `LANES` `Vec3`s each (the normal ones when used).
#[inline(always)]
pub unsafe fn lbs_block<V: Lanes, const NORMALS: bool>(
    exact: bool,
    stores: Stores,
    [c0, c1, c2, c3]: [V3<V>; 4],
    pin: *const f32,
    pout: *mut f32,
    nin: *const f32,
    nout: *mut f32,
) -> u32 {
    // SAFETY: this function's contract.
    unsafe {
        let p = V::load3(pin);
        let moved = if exact {
            transform_exact([c0, c1, c2, c3], p)
        } else {
            combine([c0, c1, c2], p, Some(c3))
        };
        store(pout, moved, stores.positions);
        if !NORMALS {
            return 0;
        }
        let n = V::load3(nin);
        // The cofactor matrix's columns are c1 × c2, c2 × c0 and c0 × c1, and its product with
        // n regroups as c2 × (n.y·c0 − n.x·c1) + n.z·(c0 × c1): two cross products instead of
        // three, the second shared with the determinant c2 · (c0 × c1).
        let k2 = cross(c0, c1);
        let q = [
            n[1].mul_sub(c0[0], n[0].mul(c1[0])),
            n[1].mul_sub(c0[1], n[0].mul(c1[1])),
            n[1].mul_sub(c0[2], n[0].mul(c1[2])),
        ];
        let turned = cross(c2, q);
        let m = [
            n[2].mul_add(k2[0], turned[0]),
            n[2].mul_add(k2[1], turned[1]),
            n[2].mul_add(k2[2], turned[2]),
        ];
        let flip = dot(c2, k2).sign_where_negative();
        let (unit, odd) = normalize_flipped(m, Some(flip));
        store(nout, unit, stores.normals);
        odd
    }
}

/// [`Lanes::stream3`] when `stream`, else [`Lanes::store3`].
///
/// # Safety
/// As the one called.
#[inline(always)]
unsafe fn store<V: Lanes>(p: *mut f32, v: V3<V>, stream: bool) {
    // SAFETY: this function's contract.
    unsafe { if stream { V::stream3(p, v) } else { V::store3(p, v) } }
}

/// Four vertices in glam's `Vec4` (SSE2 on x86-64, NEON on AArch64, scalar elsewhere): the
/// portable kernel's register. Its "fused" operations round twice, as the portable path's
/// `Vec4` arithmetic does.
// SAFETY: plain arithmetic with no target features; the pointer methods read or write exactly
// the floats the trait's contract vouches for.
unsafe impl Lanes for Vec4 {
    const LANES: usize = 4;
    #[inline(always)]
    unsafe fn block_slots<const SETS: usize>(
        influences: super::Inf<'_>,
        range: std::ops::Range<usize>,
        palette: usize,
    ) -> Option<usize> {
        super::portable::block_slots::<SETS>(influences, range, palette)
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> Self {
        Vec4::splat(x)
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        self + b
    }
    #[inline(always)]
    unsafe fn sub(self, b: Self) -> Self {
        self - b
    }
    #[inline(always)]
    unsafe fn mul(self, b: Self) -> Self {
        self * b
    }
    #[inline(always)]
    unsafe fn div(self, b: Self) -> Self {
        self / b
    }
    #[inline(always)]
    unsafe fn sqrt(self) -> Self {
        Vec4::sqrt(self)
    }
    #[inline(always)]
    unsafe fn mul_add(self, b: Self, c: Self) -> Self {
        self * b + c
    }
    #[inline(always)]
    unsafe fn mul_sub(self, b: Self, c: Self) -> Self {
        self * b - c
    }
    #[inline(always)]
    unsafe fn neg_mul_add(self, b: Self, c: Self) -> Self {
        c - self * b
    }
    const EXACT_RSQRT: bool = !cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));
    /// The hardware's estimate where the baseline has one (SSE: 12 bits; NEON: 8, refined here
    /// to 16), which the Newton step brings to the SIMD kernels' precision: the exact square
    /// root and division it replaces were a chain of about 30 cycles per block that a quarter of
    /// the kernel's time waited on. Exact elsewhere (glam has no estimate).
    #[inline(always)]
    unsafe fn rsqrt_estimate(self) -> Self {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE is part of the x86-64 baseline.
        return Vec4::from(unsafe { std::arch::x86_64::_mm_rsqrt_ps(self.into()) });
        #[cfg(target_arch = "aarch64")]
        // SAFETY: NEON is part of the AArch64 baseline; the loads and stores cover the four
        // floats of `self` and of `out`.
        return unsafe {
            use std::arch::aarch64::{vld1q_f32, vmulq_f32, vrsqrteq_f32, vrsqrtsq_f32, vst1q_f32};
            let x = vld1q_f32(self.to_array().as_ptr());
            let estimate = vrsqrteq_f32(x);
            let refined = vmulq_f32(estimate, vrsqrtsq_f32(vmulq_f32(x, estimate), estimate));
            let mut out = [0.0f32; 4];
            vst1q_f32(out.as_mut_ptr(), refined);
            Vec4::from_array(out)
        };
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        return Vec4::ONE / Vec4::sqrt(self);
    }
    #[inline(always)]
    unsafe fn sign_where_negative(self) -> Self {
        Vec4::select(self.cmplt(Vec4::ZERO), Vec4::splat(-0.0), Vec4::ZERO)
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        let (a, b) = (self.to_array(), b.to_array());
        let bits = |i: usize| f32::from_bits(a[i].to_bits() ^ b[i].to_bits());
        Vec4::new(bits(0), bits(1), bits(2), bits(3))
    }
    #[inline(always)]
    unsafe fn outside(self, lo: f32, hi: f32) -> u32 {
        (self.cmplt(Vec4::splat(lo)) | self.cmpgt(Vec4::splat(hi)) | self.is_nan_mask()).bitmask()
    }
    #[inline(always)]
    unsafe fn is_zero(self) -> u32 {
        self.cmpeq(Vec4::ZERO).bitmask()
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: `p` covers 4 floats (the trait's contract).
        Vec4::from_array(unsafe { p.cast::<[f32; 4]>().read_unaligned() })
    }
    /// Three loads and five shuffles on x86-64, one de-interleaving load on AArch64: the
    /// element-by-element gather it replaces was a fifth of a block's instructions.
    #[inline(always)]
    unsafe fn load3(p: *const f32) -> [Self; 3] {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE is part of the x86-64 baseline; `p` covers 12 floats (the trait's
        // contract), three unaligned loads of four.
        return unsafe {
            use std::arch::x86_64::{_mm_loadu_ps, _mm_shuffle_ps};
            // a = x0 y0 z0 x1, b = y1 z1 x2 y2, c = z2 x3 y3 z3.
            let (a, b, c) = (_mm_loadu_ps(p), _mm_loadu_ps(p.add(4)), _mm_loadu_ps(p.add(8)));
            let y0z0y1z1 = _mm_shuffle_ps::<0b01_00_10_01>(a, b);
            let x2y2x3y3 = _mm_shuffle_ps::<0b10_01_11_10>(b, c);
            [
                Vec4::from(_mm_shuffle_ps::<0b10_00_11_00>(a, x2y2x3y3)),
                Vec4::from(_mm_shuffle_ps::<0b11_01_10_00>(y0z0y1z1, x2y2x3y3)),
                Vec4::from(_mm_shuffle_ps::<0b11_00_11_01>(y0z0y1z1, c)),
            ]
        };
        #[cfg(target_arch = "aarch64")]
        // SAFETY: NEON is part of the AArch64 baseline; `p` covers 12 floats (the trait's
        // contract), which `vld3q_f32` reads.
        return unsafe {
            let v = std::arch::aarch64::vld3q_f32(p);
            [Vec4::from(v.0), Vec4::from(v.1), Vec4::from(v.2)]
        };
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            // SAFETY: `p` covers 12 floats (the trait's contract).
            let f = unsafe { p.cast::<[f32; 12]>().read_unaligned() };
            [
                Vec4::new(f[0], f[3], f[6], f[9]),
                Vec4::new(f[1], f[4], f[7], f[10]),
                Vec4::new(f[2], f[5], f[8], f[11]),
            ]
        }
    }
    /// The inverse of [`Lanes::load3`]: seven shuffles and three stores on x86-64, one
    /// interleaving store on AArch64.
    #[inline(always)]
    unsafe fn store3(p: *mut f32, [x, y, z]: [Self; 3]) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE is part of the x86-64 baseline; `p` covers 12 floats (the trait's
        // contract), three unaligned stores of four.
        unsafe {
            use std::arch::x86_64::{__m128, _mm_shuffle_ps, _mm_storeu_ps, _mm_unpackhi_ps, _mm_unpacklo_ps};
            let (x, y, z): (__m128, __m128, __m128) = (x.into(), y.into(), z.into());
            let x0y0x1y1 = _mm_unpacklo_ps(x, y);
            let x2y2x3y3 = _mm_unpackhi_ps(x, y);
            let z0z1x1y1 = _mm_shuffle_ps::<0b11_10_01_00>(z, x0y0x1y1);
            let z2z3x3y3 = _mm_shuffle_ps::<0b11_10_11_10>(z, x2y2x3y3);
            _mm_storeu_ps(p, _mm_shuffle_ps::<0b10_00_01_00>(x0y0x1y1, z0z1x1y1));
            _mm_storeu_ps(p.add(4), _mm_shuffle_ps::<0b01_00_01_11>(z0z1x1y1, x2y2x3y3));
            _mm_storeu_ps(p.add(8), _mm_shuffle_ps::<0b01_11_10_00>(z2z3x3y3, z2z3x3y3));
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: NEON is part of the AArch64 baseline; `p` covers 12 floats (the trait's
        // contract), which `vst3q_f32` writes.
        unsafe {
            std::arch::aarch64::vst3q_f32(p, std::arch::aarch64::float32x4x3_t(x.into(), y.into(), z.into()));
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            let f = [x.x, y.x, z.x, x.y, y.y, z.y, x.z, y.z, z.z, x.w, y.w, z.w];
            // SAFETY: `p` covers 12 floats (the trait's contract).
            unsafe { p.cast::<[f32; 12]>().write_unaligned(f) }
        }
    }
    #[inline(always)]
    unsafe fn gather4(p: impl Fn(usize) -> *const f32) -> [Self; 4] {
        // SAFETY: each `p(i)` covers four floats (the trait's contract).
        let row = |i: usize| unsafe { Self::load(p(i)) };
        let t = Mat4::from_cols(row(0), row(1), row(2), row(3)).transpose();
        [t.x_axis, t.y_axis, t.z_axis, t.w_axis]
    }
}

#[cfg(target_arch = "x86_64")]
mod x86;
