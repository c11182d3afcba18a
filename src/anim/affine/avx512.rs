//! A whole affine `Mat4` in one 16-lane register (columns in 128-bit lanes).
//!
//! The world pass converts locals 32 at a time in [`blocks`] when the skeleton is made of
//! chains, and one at a time ([`per_joint`]) otherwise; both give the same bits.

use crate::rig::{Node, Trs};
use glam::Mat4;
use std::arch::x86_64::*;

/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn load(m: &Mat4) -> __m512 {
    // SAFETY: the caller's contract; a `Mat4` is 16 readable floats.
    unsafe { _mm512_loadu_ps(m as *const Mat4 as *const f32) }
}

/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn store(m: &mut Mat4, v: __m512) {
    // SAFETY: the caller's contract; a `Mat4` is 16 writable floats.
    unsafe { _mm512_storeu_ps(m as *mut Mat4 as *mut f32, v) }
}

/// Column `k` of `a` in all four 128-bit lanes.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn columns(a: __m512) -> [__m512; 4] {
    // SAFETY: the caller's contract.
    unsafe {
        [
            _mm512_shuffle_f32x4::<0x00>(a, a),
            _mm512_shuffle_f32x4::<0x55>(a, a),
            _mm512_shuffle_f32x4::<0xAA>(a, a),
            _mm512_shuffle_f32x4::<0xFF>(a, a),
        ]
    }
}

/// [`columns`] of a matrix in memory: four broadcast loads, which need no shuffle.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn columns_of(m: &Mat4) -> [__m512; 4] {
    let p = m as *const Mat4 as *const f32;
    // SAFETY: the caller's contract; a `Mat4` is 16 readable floats.
    unsafe {
        [
            _mm512_broadcast_f32x4(_mm_loadu_ps(p)),
            _mm512_broadcast_f32x4(_mm_loadu_ps(p.add(4))),
            _mm512_broadcast_f32x4(_mm_loadu_ps(p.add(8))),
            _mm512_broadcast_f32x4(_mm_loadu_ps(p.add(12))),
        ]
    }
}

/// `a · b` for affine transforms, with `a`'s columns from [`columns`]: column c of the
/// product is Σₖ a.col(k)·b[k][c]; `b`'s bottom row (0, 0, 0, 1) leaves a.col(3) in column 3.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn mul([a0, a1, a2, a3]: [__m512; 4], b: __m512) -> __m512 {
    // SAFETY: the caller's contract.
    unsafe {
        // Two chains of two, added: in a chain of joints `a` is the parent, on the critical
        // path, and this keeps it a multiply, a fused multiply-add and an add long.
        let translation = _mm512_setr_ps(
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0,
        );
        let near = _mm512_fmadd_ps(
            a1,
            _mm512_permute_ps::<0x55>(b),
            _mm512_mul_ps(a0, _mm512_permute_ps::<0x00>(b)),
        );
        let far = _mm512_fmadd_ps(a3, translation, _mm512_mul_ps(a2, _mm512_permute_ps::<0xAA>(b)));
        _mm512_add_ps(near, far)
    }
}

/// Lane indices and factors for [`trs`]: each element of the rotation matrix is
/// `identity + q[P]·(±2q)[R] + q[S]·(±2q)[U]`, with (±2q) held as (2q, −2q, 0).
const ROTATION: ([i32; 16], [i32; 16], [i32; 16], [i32; 16]) = {
    // Quaternion lanes: x 0, y 1, z 2, w 3; in the factor register 2q at 0–3, −2q at 4–7,
    // zero at 8.
    const X: i32 = 0;
    const Y: i32 = 1;
    const Z: i32 = 2;
    const W: i32 = 3;
    const NEG: i32 = 4;
    const ZERO: i32 = 8;
    (
        // c0 = (1 − 2yy − 2zz, 2xy + 2wz, 2xz − 2wy), c1 = (2xy − 2wz, 1 − 2xx − 2zz,
        // 2yz + 2wx), c2 = (2xz + 2wy, 2yz − 2wx, 1 − 2xx − 2yy), column 3 left to the
        // translation.
        [Y, X, X, X, X, X, Y, X, X, Y, X, X, X, X, X, X],
        [
            NEG + Y,
            Y,
            Z,
            ZERO,
            Y,
            NEG + X,
            Z,
            ZERO,
            Z,
            Z,
            NEG + X,
            ZERO,
            ZERO,
            ZERO,
            ZERO,
            ZERO,
        ],
        [Z, W, W, X, W, Z, W, X, W, W, Y, X, X, X, X, X],
        [
            NEG + Z,
            Z,
            NEG + Y,
            ZERO,
            NEG + Z,
            NEG + Z,
            X,
            ZERO,
            Y,
            NEG + X,
            NEG + Y,
            ZERO,
            ZERO,
            ZERO,
            ZERO,
            ZERO,
        ],
    )
};

/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn indices(i: &[i32; 16]) -> __m512i {
    // SAFETY: the caller's contract; `i` is 64 readable bytes.
    unsafe { _mm512_loadu_si512(i.as_ptr().cast()) }
}

/// x, y, z of a `Vec3` in lanes 0–2: a masked load reads only those three floats.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn vec3(v: &glam::Vec3) -> __m512 {
    // SAFETY: the caller's contract; the mask reads the vector's three floats and no more.
    unsafe { _mm512_maskz_loadu_ps(0b0111, v as *const glam::Vec3 as *const f32) }
}

/// The affine transform of a TRS: the rotation matrix of its quaternion with each column
/// scaled, the translation in column 3.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn trs(local: &Trs) -> __m512 {
    // SAFETY: the caller's contract.
    unsafe {
        let q = _mm512_broadcast_f32x4(local.rotation.into());
        let factors = _mm512_mul_ps(
            q,
            _mm512_setr_ps(
                2.0, 2.0, 2.0, 2.0, -2.0, -2.0, -2.0, -2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            ),
        );
        let (p, r, s, u) = ROTATION;
        let identity = _mm512_setr_ps(
            1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        );
        let to_column_3 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0);
        let base = _mm512_mask_permutexvar_ps(identity, 0x7000, to_column_3, vec3(&local.translation));
        let m = _mm512_fmadd_ps(
            _mm512_permutexvar_ps(indices(&p), q),
            _mm512_permutexvar_ps(indices(&r), factors),
            _mm512_fmadd_ps(
                _mm512_permutexvar_ps(indices(&s), q),
                _mm512_permutexvar_ps(indices(&u), factors),
                base,
            ),
        );
        let spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0);
        let scale = _mm512_mask_permutexvar_ps(_mm512_set1_ps(1.0), 0x0FFF, spread, vec3(&local.scale));
        _mm512_mul_ps(m, scale)
    }
}

/// # Safety
/// AVX-512 F and BW, AVX2 and FMA must be available. (Every index is bounds-checked; a parent
/// stored after its child gives a wrong world, never a read outside the slices.)
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub unsafe fn local_to_world(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    if blocks::PACKED {
        // SAFETY: this function's contract, and `PACKED`.
        unsafe { blocks::local_to_world(nodes, locals, worlds) }
    } else {
        // SAFETY: this function's contract.
        unsafe { local_to_world_per_joint(nodes, locals, worlds) }
    }
}

/// [`local_to_world`] one local at a time: the reference [`blocks`] is tested against, and
/// the kernel where a `Trs` is laid out other than [`blocks`] reads it.
///
/// # Safety
/// As [`local_to_world`].
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub(super) unsafe fn local_to_world_per_joint(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    // SAFETY: this function's contract.
    unsafe { per_joint(nodes, locals, worlds, 0, nodes.len(), _mm512_setzero_ps()) };
}

/// Worlds from node `start` on, `previous` holding the world of node `start − 1`, until node
/// `stop` or the first after it (a pair of links that `stop` splits is finished); returns the
/// next node, its predecessor's world and how many pairs of links the pass took.
///
/// # Safety
/// As [`local_to_world`].
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
unsafe fn per_joint(
    nodes: &[Node],
    locals: &[Trs],
    worlds: &mut [Mat4],
    start: usize,
    stop: usize,
    previous: __m512,
) -> (usize, __m512, usize) {
    // The previous node's world stays in a register: in a chain it is the next parent,
    // and reading it back from memory would lengthen the critical path.
    let mut previous = previous;
    let mut pairs = 0;
    let mut i = start;
    while i < stop.min(nodes.len()) {
        // SAFETY: this function's contract; every index is bounds-checked.
        unsafe {
            let local = trs(&locals[i]);
            let chained = nodes[i].parent.is_some_and(|p| p + 1 == i);
            if chained && nodes.get(i + 1).is_some_and(|n| n.parent == Some(i)) {
                // Two links of a chain at once: both worlds from the grandparent's, the
                // second through the product of the two locals (off the critical path),
                // so that the chain waits for one product per two joints.
                let next = trs(&locals[i + 1]);
                let parent = columns(previous);
                store(&mut worlds[i], mul(parent, local));
                previous = mul(parent, mul(columns(local), next));
                store(&mut worlds[i + 1], previous);
                pairs += 1;
                i += 2;
                continue;
            }
            let world = match nodes[i].parent {
                Some(_) if chained => mul(columns(previous), local),
                Some(p) => mul(columns_of(&worlds[p]), local),
                None => local,
            };
            store(&mut worlds[i], world);
            previous = world;
            i += 1;
        }
    }
    (i, previous, pairs)
}

/// # Safety
/// AVX-512 F and BW, AVX2 and FMA must be available. (Every index is bounds-checked: the
/// slices' lengths need no promise.)
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub unsafe fn build_palette(joints: &[usize], inverse_binds: &[Mat4], worlds: &[Mat4], palette: &mut [Mat4]) {
    let n = palette.len().min(joints.len()).min(inverse_binds.len());
    if n == 0 {
        return;
    }
    // SAFETY: the features are this function's contract; `columns_of`, `load` and `store` take
    // references, so every matrix they touch exists.
    unsafe {
        // Each joint's matrices are read before the previous joint's palette is stored: a load
        // after a store to an address a multiple of 4 KiB away waits for the store on x86 cores,
        // which cost a third of this loop where the caller's buffers happened to lie so.
        let (mut world, mut inverse_bind) = (columns_of(&worlds[joints[0]]), load(&inverse_binds[0]));
        for j in 0..n {
            let (this_world, this_inverse_bind) = (world, inverse_bind);
            if j + 1 < n {
                (world, inverse_bind) = (columns_of(&worlds[joints[j + 1]]), load(&inverse_binds[j + 1]));
            }
            store(&mut palette[j], mul(this_world, this_inverse_bind));
        }
    }
}

mod blocks;

#[cfg(test)]
mod tests;
