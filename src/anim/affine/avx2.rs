//! Two 8-wide registers per affine matrix: columns (0 | 1) and (2 | 3).

use crate::rig::{Node, Trs};
use glam::Mat4;
use std::arch::x86_64::*;

/// An affine transform as two registers: columns (0 | 1) and (2 | 3).
type Cols = (__m256, __m256);

/// # Safety
/// AVX2.
#[inline(always)]
unsafe fn load(m: &Mat4) -> Cols {
    let p = m as *const Mat4 as *const f32;
    // SAFETY: the caller's contract; a `Mat4` is 16 readable floats.
    unsafe { (_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8))) }
}

/// # Safety
/// AVX2.
#[inline(always)]
unsafe fn store(m: &mut Mat4, (lo, hi): Cols) {
    let p = m as *mut Mat4 as *mut f32;
    // SAFETY: the caller's contract; a `Mat4` is 16 writable floats.
    unsafe {
        _mm256_storeu_ps(p, lo);
        _mm256_storeu_ps(p.add(8), hi);
    }
}

/// Each column of `a` in both halves of a register.
///
/// The low half goes up with an insert and the high half with a 64-bit permute rather than
/// with `vperm2f128`, which a CPU that splits 256-bit work in two (AMD Zen 1) runs as eight
/// micro-ops; both are one elsewhere.
///
/// # Safety
/// AVX2.
#[inline(always)]
unsafe fn splat_cols((lo, hi): Cols) -> [__m256; 4] {
    // SAFETY: the caller's contract.
    unsafe {
        let low = |v: __m256| _mm256_insertf128_ps::<1>(v, _mm256_castps256_ps128(v));
        let high = |v: __m256| _mm256_castpd_ps(_mm256_permute4x64_pd::<0xEE>(_mm256_castps_pd(v)));
        [low(lo), high(lo), low(hi), high(hi)]
    }
}

/// [`splat_cols`] of a matrix in memory: four broadcast loads, no shuffle.
///
/// # Safety
/// AVX.
#[inline(always)]
unsafe fn columns_of(m: &Mat4) -> [__m256; 4] {
    const _: () = assert!(std::mem::align_of::<Mat4>() >= std::mem::align_of::<__m128>());
    let p = m as *const Mat4 as *const __m128;
    // SAFETY: the caller's contract; a `Mat4` is four readable 16-byte columns, aligned as
    // `__m128` is (asserted above), so each is a valid `&__m128`.
    unsafe {
        [
            _mm256_broadcast_ps(&*p),
            _mm256_broadcast_ps(&*p.add(1)),
            _mm256_broadcast_ps(&*p.add(2)),
            _mm256_broadcast_ps(&*p.add(3)),
        ]
    }
}

/// `a · b` for affine transforms, with `a`'s columns already splatted.
///
/// # Safety
/// AVX2 and FMA.
#[inline(always)]
unsafe fn mul([a0, a1, a2, a3]: [__m256; 4], (lo, hi): Cols) -> Cols {
    // Two short chains added at the end rather than one of three: in a chain of joints the
    // parent (`a`) is on the critical path, and this keeps it one step shorter.
    // SAFETY: the caller's contract.
    unsafe {
        let lo = _mm256_add_ps(
            _mm256_fmadd_ps(
                a1,
                _mm256_permute_ps::<0x55>(lo),
                _mm256_mul_ps(a2, _mm256_permute_ps::<0xAA>(lo)),
            ),
            _mm256_mul_ps(a0, _mm256_permute_ps::<0x00>(lo)),
        );
        let translation = _mm256_blend_ps::<0xF0>(_mm256_setzero_ps(), a3);
        let hi = _mm256_add_ps(
            _mm256_fmadd_ps(
                a1,
                _mm256_permute_ps::<0x55>(hi),
                _mm256_mul_ps(a2, _mm256_permute_ps::<0xAA>(hi)),
            ),
            _mm256_fmadd_ps(a0, _mm256_permute_ps::<0x00>(hi), translation),
        );
        (lo, hi)
    }
}

/// The affine transform of a TRS: rotation matrix (as DirectXMath builds it from a
/// quaternion), columns scaled, translation in column 3.
///
/// # Safety
/// AVX2.
#[inline(always)]
unsafe fn trs(local: &Trs) -> Cols {
    // SAFETY: the caller's contract.
    unsafe {
        let q: __m128 = local.rotation.into();
        let q0 = _mm_add_ps(q, q); // 2x 2y 2z 2w
        let q1 = _mm_mul_ps(q, q0); // 2xx 2yy 2zz 2ww
        let v0 = _mm_shuffle_ps::<0b11_00_00_01>(q1, q1); // yy xx xx
        let v1 = _mm_shuffle_ps::<0b11_01_10_10>(q1, q1); // zz zz yy
        let r0 = _mm_sub_ps(_mm_sub_ps(_mm_set1_ps(1.0), v0), v1); // diagonal
        let v0 = _mm_shuffle_ps::<0b11_01_00_00>(q, q); // x x y
        let v1 = _mm_shuffle_ps::<0b11_10_01_10>(q0, q0); // 2z 2y 2z
        let v0 = _mm_mul_ps(v0, v1); // 2xz 2xy 2yz
        let v1 = _mm_shuffle_ps::<0b11_11_11_11>(q, q); // w
        let v2 = _mm_shuffle_ps::<0b11_00_10_01>(q0, q0); // 2y 2z 2x
        let v1 = _mm_mul_ps(v1, v2); // 2wy 2wz 2wx
        let r1 = _mm_add_ps(v0, v1); // 2xz+2wy 2xy+2wz 2yz+2wx
        let r2 = _mm_sub_ps(v0, v1); // 2xz-2wy 2xy-2wz 2yz-2wx
        // c0 = (r0.x, r1.y, r2.x), c1 = (r2.y, r0.y, r1.z), c2 = (r1.x, r2.z, r0.z); w = 0.
        // insertps: source lane << 6 | destination lane << 4 | zeroed lanes (w).
        let c0 = _mm_insert_ps::<0x28>(_mm_blend_ps::<0b0010>(r0, r1), r2);
        let c1 = _mm_insert_ps::<0x48>(_mm_blend_ps::<0b0100>(r0, r1), r2);
        let c2 = _mm_insert_ps::<0x98>(_mm_blend_ps::<0b0001>(r0, r1), r2);
        let s = local.scale;
        let c0 = _mm_mul_ps(c0, _mm_set1_ps(s.x));
        let c1 = _mm_mul_ps(c1, _mm_set1_ps(s.y));
        let c2 = _mm_mul_ps(c2, _mm_set1_ps(s.z));
        let t = local.translation;
        let c3 = _mm_setr_ps(t.x, t.y, t.z, 1.0);
        (_mm256_set_m128(c1, c0), _mm256_set_m128(c3, c2))
    }
}

/// # Safety
/// AVX2 and FMA must be available; the slices must have equal lengths and parents must
/// come before their children.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn local_to_world(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    // The previous node's world stays in registers: in a chain it is the next parent, and
    // reading it back from memory would add a store-to-load trip to the critical path.
    let mut previous = (_mm256_setzero_ps(), _mm256_setzero_ps());
    for i in 0..nodes.len() {
        // SAFETY: this function's contract; every index is bounds-checked.
        unsafe {
            let local = trs(&locals[i]);
            let world = match nodes[i].parent {
                Some(p) if p + 1 == i => mul(splat_cols(previous), local),
                Some(p) => mul(columns_of(&worlds[p]), local),
                None => local,
            };
            store(&mut worlds[i], world);
            previous = world;
        }
    }
}

/// # Safety
/// AVX2 and FMA must be available; `joints`, `inverse_binds` and `palette` of equal length.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn build_palette(
    joints: &[usize],
    inverse_binds: &[Mat4],
    worlds: &[Mat4],
    to_mesh: Option<&Mat4>,
    palette: &mut [Mat4],
) {
    // SAFETY: this function's contract; every index is bounds-checked.
    unsafe {
        match to_mesh {
            None => {
                for j in 0..palette.len() {
                    let world = columns_of(&worlds[joints[j]]);
                    store(&mut palette[j], mul(world, load(&inverse_binds[j])));
                }
            }
            // to_mesh · (world · inverse bind): the world's columns come from memory and
            // to_mesh's are splatted once, so no product needs a shuffle across halves.
            Some(to_mesh) => {
                let to_mesh = splat_cols(load(to_mesh));
                for j in 0..palette.len() {
                    let bound = mul(columns_of(&worlds[joints[j]]), load(&inverse_binds[j]));
                    store(&mut palette[j], mul(to_mesh, bound));
                }
            }
        }
    }
}
