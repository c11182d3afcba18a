//! One 4-wide register per column of an affine matrix; each product takes the right-hand
//! matrix's elements as broadcast scalars.
//!
//! A column of `a · b` is Σₖ a.col(k)·b[k][c]: with `b`'s elements broadcast from memory
//! (`vbroadcastss` is a plain load) the product needs no shuffle at all, where keeping two
//! columns per 8-wide register needs lane-crossing splats (`vperm2f128`, microcoded on some
//! AVX2 cores) and an in-lane permute per element. The rotation and scale of the locals are
//! computed first, four joints per register (structure of arrays), into a small buffer on the
//! stack that the world pass reads those broadcasts from.

use crate::rig::{Node, Trs};
use glam::Mat4;
use std::arch::x86_64::*;

/// An affine transform's four columns.
type Cols = [__m128; 4];

/// Elements (k, c), k < 3, of an affine transform, each in all four lanes: `[c][k]`.
type Splat = [[__m128; 3]; 4];

/// # Safety
/// AVX.
#[inline(always)]
unsafe fn load(m: &Mat4) -> Cols {
    let p = m as *const Mat4 as *const f32;
    // SAFETY: the caller's contract; a `Mat4` is 16 readable floats.
    unsafe {
        [
            _mm_loadu_ps(p),
            _mm_loadu_ps(p.add(4)),
            _mm_loadu_ps(p.add(8)),
            _mm_loadu_ps(p.add(12)),
        ]
    }
}

/// # Safety
/// AVX.
#[inline(always)]
unsafe fn store(m: &mut Mat4, [c0, c1, c2, c3]: Cols) {
    let p = m as *mut Mat4 as *mut f32;
    // SAFETY: the caller's contract; a `Mat4` is 16 writable floats.
    unsafe {
        _mm_storeu_ps(p, c0);
        _mm_storeu_ps(p.add(4), c1);
        _mm_storeu_ps(p.add(8), c2);
        _mm_storeu_ps(p.add(12), c3);
    }
}

/// The elements of an affine matrix in memory, broadcast by loads.
///
/// # Safety
/// AVX.
#[inline(always)]
unsafe fn splat_of(m: &Mat4) -> Splat {
    let p = m as *const Mat4 as *const f32;
    // SAFETY: the caller's contract; every index is below 16.
    unsafe {
        let s = |i: usize| _mm_broadcast_ss(&*p.add(i));
        [
            [s(0), s(1), s(2)],
            [s(4), s(5), s(6)],
            [s(8), s(9), s(10)],
            [s(12), s(13), s(14)],
        ]
    }
}

/// `a · b` for affine transforms in the fewest operations: three per column.
///
/// # Safety
/// AVX and FMA.
#[inline(always)]
unsafe fn mul([a0, a1, a2, a3]: Cols, b: &Splat) -> Cols {
    // SAFETY: the caller's contract.
    unsafe {
        let col = |c: usize| _mm_fmadd_ps(a2, b[c][2], _mm_fmadd_ps(a1, b[c][1], _mm_mul_ps(a0, b[c][0])));
        let translation = _mm_fmadd_ps(a2, b[3][2], _mm_fmadd_ps(a1, b[3][1], _mm_fmadd_ps(a0, b[3][0], a3)));
        [col(0), col(1), col(2), translation]
    }
}

/// [`mul`] with a shorter path from `a` to the result (a multiply, a fused multiply-add and an
/// add instead of three dependent steps), for a chain of joints where `a` is the parent just
/// computed and the chain waits for each product in turn.
///
/// # Safety
/// AVX and FMA.
#[inline(always)]
unsafe fn mul_chained([a0, a1, a2, a3]: Cols, b: &Splat) -> Cols {
    // SAFETY: the caller's contract.
    unsafe {
        let col = |c: usize| {
            _mm_add_ps(
                _mm_fmadd_ps(a1, b[c][1], _mm_mul_ps(a0, b[c][0])),
                _mm_mul_ps(a2, b[c][2]),
            )
        };
        let translation = _mm_add_ps(
            _mm_fmadd_ps(a1, b[3][1], _mm_mul_ps(a0, b[3][0])),
            _mm_fmadd_ps(a2, b[3][2], a3),
        );
        [col(0), col(1), col(2), translation]
    }
}

/// # Safety
/// AVX.
#[inline(always)]
unsafe fn identity() -> Cols {
    // SAFETY: the caller's contract.
    unsafe {
        [
            _mm_setr_ps(1.0, 0.0, 0.0, 0.0),
            _mm_setr_ps(0.0, 1.0, 0.0, 0.0),
            _mm_setr_ps(0.0, 0.0, 1.0, 0.0),
            _mm_setr_ps(0.0, 0.0, 0.0, 1.0),
        ]
    }
}

/// Locals per block: their rotation-and-scale elements fill 1152 bytes of stack.
const BLOCK: usize = 32;

/// Rotation-and-scale elements of four locals, element (k, c) at index 3c + k, one local per
/// lane.
type Group = [[f32; 4]; 9];

/// The rotation matrix of each local's quaternion (as DirectXMath builds it), columns scaled:
/// the same arithmetic for four locals at once.
///
/// # Safety
/// AVX.
#[inline(always)]
unsafe fn rotation_scale(locals: [&Trs; 4], out: &mut Group) {
    // SAFETY: the caller's contract; `out` is nine writable groups of four floats.
    unsafe {
        let q = |i: usize| -> __m128 { locals[i].rotation.into() };
        // Quaternions to x, y, z, w across the four locals (a 4×4 transpose).
        let (lo01, hi01) = (_mm_unpacklo_ps(q(0), q(1)), _mm_unpackhi_ps(q(0), q(1)));
        let (lo23, hi23) = (_mm_unpacklo_ps(q(2), q(3)), _mm_unpackhi_ps(q(2), q(3)));
        let (x, y) = (_mm_movelh_ps(lo01, lo23), _mm_movehl_ps(lo23, lo01));
        let (z, w) = (_mm_movelh_ps(hi01, hi23), _mm_movehl_ps(hi23, hi01));
        let scale = |s: fn(&Trs) -> f32| _mm_setr_ps(s(locals[0]), s(locals[1]), s(locals[2]), s(locals[3]));
        let (sx, sy, sz) = (scale(|t| t.scale.x), scale(|t| t.scale.y), scale(|t| t.scale.z));
        let (x2, y2, z2) = (_mm_add_ps(x, x), _mm_add_ps(y, y), _mm_add_ps(z, z));
        let (xx, yy, zz) = (_mm_mul_ps(x, x2), _mm_mul_ps(y, y2), _mm_mul_ps(z, z2));
        let (xy, xz, yz) = (_mm_mul_ps(x, y2), _mm_mul_ps(x, z2), _mm_mul_ps(y, z2));
        let (wx, wy, wz) = (_mm_mul_ps(w, x2), _mm_mul_ps(w, y2), _mm_mul_ps(w, z2));
        let one = _mm_set1_ps(1.0);
        let elements = [
            _mm_mul_ps(_mm_sub_ps(_mm_sub_ps(one, yy), zz), sx),
            _mm_mul_ps(_mm_add_ps(xy, wz), sx),
            _mm_mul_ps(_mm_sub_ps(xz, wy), sx),
            _mm_mul_ps(_mm_sub_ps(xy, wz), sy),
            _mm_mul_ps(_mm_sub_ps(_mm_sub_ps(one, xx), zz), sy),
            _mm_mul_ps(_mm_add_ps(yz, wx), sy),
            _mm_mul_ps(_mm_add_ps(xz, wy), sz),
            _mm_mul_ps(_mm_sub_ps(yz, wx), sz),
            _mm_mul_ps(_mm_sub_ps(_mm_sub_ps(one, xx), yy), sz),
        ];
        for (out, element) in out.iter_mut().zip(elements) {
            _mm_storeu_ps(out.as_mut_ptr(), element);
        }
    }
}

/// # Safety
/// AVX2 and FMA must be available. (Every index is bounds-checked; a parent stored after its
/// child gives a wrong world, never a read outside the slices.)
#[target_feature(enable = "avx2,fma")]
pub unsafe fn local_to_world(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    // The previous node's world stays in registers: in a chain it is the next parent, and
    // reading it back from memory would add a store-to-load trip to the critical path.
    // SAFETY: AVX is enabled.
    let mut previous = unsafe { identity() };
    let mut groups = [[[0.0f32; 4]; 9]; BLOCK / 4];
    for (start, (nodes, locals)) in nodes.chunks(BLOCK).zip(locals.chunks(BLOCK)).enumerate() {
        let start = start * BLOCK;
        // Every local's rotation and scale first: independent of one another, unlike the
        // world pass, so the four-lane arithmetic overlaps freely.
        for (group, four) in groups.iter_mut().zip(locals.chunks(4)) {
            // Filled only for a last, partial group: initialising it for every group costs
            // as many stores as the group's elements.
            let padded: [Trs; 4];
            let four = match four {
                [a, b, c, d] => [a, b, c, d],
                _ => {
                    padded = std::array::from_fn(|i| four.get(i).copied().unwrap_or(Trs::IDENTITY));
                    [&padded[0], &padded[1], &padded[2], &padded[3]]
                }
            };
            // SAFETY: AVX is enabled.
            unsafe { rotation_scale(four, group) };
        }
        for (k, (node, local)) in nodes.iter().zip(locals).enumerate() {
            let i = start + k;
            let lane = &groups[k / 4];
            // SAFETY: AVX and FMA are enabled; every index is bounds-checked.
            unsafe {
                let s = |e: usize| _mm_broadcast_ss(&lane[e][k % 4]);
                let t = &local.translation;
                let local = [
                    [s(0), s(1), s(2)],
                    [s(3), s(4), s(5)],
                    [s(6), s(7), s(8)],
                    [_mm_broadcast_ss(&t.x), _mm_broadcast_ss(&t.y), _mm_broadcast_ss(&t.z)],
                ];
                let world = match node.parent {
                    Some(p) if p + 1 == i => mul_chained(previous, &local),
                    Some(p) => mul(load(&worlds[p]), &local),
                    None => mul(identity(), &local),
                };
                store(&mut worlds[i], world);
                previous = world;
            }
        }
    }
}

/// # Safety
/// AVX2 and FMA must be available. (Every index is bounds-checked: the slices' lengths need no
/// promise.)
#[target_feature(enable = "avx2,fma")]
pub unsafe fn build_palette(joints: &[usize], inverse_binds: &[Mat4], worlds: &[Mat4], palette: &mut [Mat4]) {
    // SAFETY: AVX2 and FMA are this function's contract; `load`, `store` and `splat_of` take
    // references, so every matrix they touch exists.
    unsafe {
        for ((out, &joint), inverse_bind) in palette.iter_mut().zip(joints).zip(inverse_binds) {
            store(out, mul(load(&worlds[joint]), &splat_of(inverse_bind)));
        }
    }
}
