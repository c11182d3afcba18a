//! World transforms and joint palettes with affine math.
//!
//! Transforms are stored as `Mat4` (the layout the GPU and the rest of the crate read) but are
//! affine: bottom row (0, 0, 0, 1). A product of two affine transforms needs the 3×3 products
//! and a translation, not a full 4×4 product, and the mesh node's inverse is an affine inverse
//! (once per instance, never per joint).
//!
//! With AVX2 and FMA (detected at run time) a product is six fused multiply-adds on 8-wide
//! registers holding two columns each; otherwise glam's `Affine3A` does the same math.

use crate::rig::{Node, Trs};
use glam::{Affine3A, Mat4, Vec4};

/// Whether `m` is affine (bottom row 0, 0, 0, 1).
pub fn is_affine(m: &Mat4) -> bool {
    m.row(3) == Vec4::W
}

#[cfg(target_arch = "x86_64")]
fn has_avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && has_avx2_fma()
}

/// World transform of every node from its local TRS; relies on parents being stored before
/// their children.
pub fn local_to_world(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    let n = nodes.len().min(locals.len()).min(worlds.len());
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: the CPU has AVX-512 F, AVX2 and FMA; all three slices hold at least `n` items.
        unsafe { avx512::local_to_world(&nodes[..n], &locals[..n], &mut worlds[..n]) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA; all three slices hold at least `n` items.
        unsafe { avx2::local_to_world(&nodes[..n], &locals[..n], &mut worlds[..n]) };
        return;
    }
    local_to_world_portable(&nodes[..n], &locals[..n], &mut worlds[..n]);
}

/// [`local_to_world`] without SIMD beyond glam's own.
pub fn local_to_world_portable(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    for i in 0..nodes.len().min(locals.len()).min(worlds.len()) {
        let local = &locals[i];
        let local = Affine3A::from_scale_rotation_translation(local.scale, local.rotation, local.translation);
        let world = match nodes[i].parent {
            Some(p) => Affine3A::from_mat4(worlds[p]) * local,
            None => local,
        };
        worlds[i] = Mat4::from(world);
    }
}

/// `palette[j] = inverse(mesh_world) · worlds[joints[j]] · inverse_binds[j]`: the matrix that
/// takes a bind-pose vertex to its posed place in the space of the node that holds the mesh.
/// Every matrix must be affine (see [`is_affine`]; [`build_palette_mat4`] takes any inverse
/// binds). No allocation.
pub fn build_palette(
    joints: &[usize],
    inverse_binds: &[Mat4],
    worlds: &[Mat4],
    mesh_world: &Mat4,
    palette: &mut [Mat4],
) {
    let to_mesh = (*mesh_world != Mat4::IDENTITY).then(|| Mat4::from(Affine3A::from_mat4(*mesh_world).inverse()));
    let n = joints.len().min(inverse_binds.len()).min(palette.len());
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: the CPU has AVX-512 F, AVX2 and FMA; the slices are cut to `n`; joint
        // indices are checked inside.
        unsafe {
            avx512::build_palette(
                &joints[..n],
                &inverse_binds[..n],
                worlds,
                to_mesh.as_ref(),
                &mut palette[..n],
            )
        };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA; the slices are cut to `n`; joint indices are
        // checked inside.
        unsafe {
            avx2::build_palette(
                &joints[..n],
                &inverse_binds[..n],
                worlds,
                to_mesh.as_ref(),
                &mut palette[..n],
            )
        };
        return;
    }
    build_palette_portable(
        &joints[..n],
        &inverse_binds[..n],
        worlds,
        to_mesh.as_ref(),
        &mut palette[..n],
    );
}

fn build_palette_portable(
    joints: &[usize],
    inverse_binds: &[Mat4],
    worlds: &[Mat4],
    to_mesh: Option<&Mat4>,
    palette: &mut [Mat4],
) {
    let to_mesh = to_mesh.map(|m| Affine3A::from_mat4(*m));
    for ((out, &joint), inverse_bind) in palette.iter_mut().zip(joints).zip(inverse_binds) {
        let world = Affine3A::from_mat4(worlds[joint]);
        let world = to_mesh.map_or(world, |m| m * world);
        *out = Mat4::from(world * Affine3A::from_mat4(*inverse_bind));
    }
}

/// [`build_palette`] for inverse bind matrices that are not affine: the last product in 4×4.
pub fn build_palette_mat4(
    joints: &[usize],
    inverse_binds: &[Mat4],
    worlds: &[Mat4],
    mesh_world: &Mat4,
    palette: &mut [Mat4],
) {
    let to_mesh = Affine3A::from_mat4(*mesh_world).inverse();
    for ((out, &joint), inverse_bind) in palette.iter_mut().zip(joints).zip(inverse_binds) {
        *out = Mat4::from(to_mesh * Affine3A::from_mat4(worlds[joint])) * *inverse_bind;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Mat4, Node, Trs};
    use std::arch::x86_64::*;

    /// An affine transform as two registers: columns (0 | 1) and (2 | 3).
    type Cols = (__m256, __m256);

    #[inline(always)]
    unsafe fn load(m: &Mat4) -> Cols {
        let p = m as *const Mat4 as *const f32;
        unsafe { (_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8))) }
    }

    #[inline(always)]
    unsafe fn store(m: &mut Mat4, (lo, hi): Cols) {
        let p = m as *mut Mat4 as *mut f32;
        unsafe {
            _mm256_storeu_ps(p, lo);
            _mm256_storeu_ps(p.add(8), hi);
        }
    }

    /// Each column of `a` in both halves of a register.
    #[inline(always)]
    unsafe fn splat_cols((lo, hi): Cols) -> [__m256; 4] {
        unsafe {
            [
                _mm256_permute2f128_ps::<0x00>(lo, lo),
                _mm256_permute2f128_ps::<0x11>(lo, lo),
                _mm256_permute2f128_ps::<0x00>(hi, hi),
                _mm256_permute2f128_ps::<0x11>(hi, hi),
            ]
        }
    }

    /// `a · b` for affine transforms, with `a`'s columns already splatted.
    #[inline(always)]
    unsafe fn mul([a0, a1, a2, a3]: [__m256; 4], (lo, hi): Cols) -> Cols {
        // Two short chains added at the end rather than one of three: in a chain of joints the
        // parent (`a`) is on the critical path, and this keeps it one step shorter.
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
    #[inline(always)]
    unsafe fn trs(local: &Trs) -> Cols {
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
            unsafe {
                let local = trs(&locals[i]);
                let world = match nodes[i].parent {
                    Some(p) if p + 1 == i => mul(splat_cols(previous), local),
                    Some(p) => mul(splat_cols(load(&worlds[p])), local),
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
        unsafe {
            match to_mesh {
                None => {
                    for j in 0..palette.len() {
                        let world = splat_cols(load(&worlds[joints[j]]));
                        store(&mut palette[j], mul(world, load(&inverse_binds[j])));
                    }
                }
                Some(to_mesh) => {
                    let to_mesh = splat_cols(load(to_mesh));
                    for j in 0..palette.len() {
                        let world = splat_cols(mul(to_mesh, load(&worlds[joints[j]])));
                        store(&mut palette[j], mul(world, load(&inverse_binds[j])));
                    }
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    //! A whole affine `Mat4` in one 16-lane register (columns in 128-bit lanes).
    use super::{Mat4, Node, Trs};
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
    /// AVX-512 F, AVX2 and FMA must be available; the slices must have equal lengths and
    /// parents must come before their children.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub unsafe fn local_to_world(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
        // The previous node's world stays in a register: in a chain it is the next parent,
        // and reading it back from memory would lengthen the critical path.
        let mut previous = _mm512_setzero_ps();
        let mut i = 0;
        while i < nodes.len() {
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
    }

    /// # Safety
    /// AVX-512 F, AVX2 and FMA must be available; `joints`, `inverse_binds` and `palette` of
    /// equal length.
    #[target_feature(enable = "avx512f,avx2,fma")]
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
                Some(to_mesh) => {
                    let to_mesh = columns_of(to_mesh);
                    for j in 0..palette.len() {
                        let world = columns(mul(to_mesh, load(&worlds[joints[j]])));
                        store(&mut palette[j], mul(world, load(&inverse_binds[j])));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};

    fn node(parent: Option<usize>) -> Node {
        Node {
            name: String::new(),
            parent,
            rest: Trs::IDENTITY,
        }
    }

    #[test]
    fn worlds_and_palettes_match_plain_4x4_products() {
        // A tree, then chains of odd and even lengths (taken two links at a time).
        let tree = (0..9).map(|i| (i > 0).then(|| (i - 1) / 2));
        check_worlds_and_palettes(tree.collect());
        check_worlds_and_palettes((0..9).map(|i| (i > 0).then(|| i - 1)).collect());
        check_worlds_and_palettes(
            [
                None,
                Some(0),
                Some(1),
                Some(0),
                Some(3),
                Some(4),
                Some(5),
                Some(6),
                None,
            ]
            .to_vec(),
        );
    }

    fn check_worlds_and_palettes(parents: Vec<Option<usize>>) {
        let nodes: Vec<Node> = parents.into_iter().map(node).collect();
        let locals: Vec<Trs> = (0..9)
            .map(|i| {
                let f = i as f32;
                Trs {
                    translation: Vec3::new(0.3 * f, -1.0 + f * 0.1, 2.0),
                    rotation: Quat::from_euler(glam::EulerRot::XYZ, 0.4 * f, -0.7 + 0.2 * f, 1.1),
                    scale: Vec3::new(1.0 + 0.1 * f, 0.8, if i == 4 { -1.2 } else { 1.3 }),
                }
            })
            .collect();
        let mut want = vec![Mat4::IDENTITY; 9];
        for i in 0..9 {
            let local = locals[i].to_mat4();
            want[i] = nodes[i].parent.map_or(local, |p| want[p] * local);
        }
        let mut fast = vec![Mat4::ZERO; 9];
        let mut portable = vec![Mat4::ZERO; 9];
        local_to_world(&nodes, &locals, &mut fast);
        local_to_world_portable(&nodes, &locals, &mut portable);
        for i in 0..9 {
            assert!(
                fast[i].abs_diff_eq(want[i], 1e-5),
                "node {i}: {} vs {}",
                fast[i],
                want[i]
            );
            assert!(portable[i].abs_diff_eq(want[i], 1e-5), "node {i}");
        }
        let joints = [8, 3, 5, 0];
        let binds: Vec<Mat4> = joints
            .iter()
            .map(|&j| want[j].inverse() * Mat4::from_rotation_x(0.3))
            .collect();
        for mesh_world in [Mat4::IDENTITY, want[2]] {
            let mut palette = [Mat4::ZERO; 4];
            build_palette(&joints, &binds, &fast, &mesh_world, &mut palette);
            let mut portable = [Mat4::ZERO; 4];
            build_palette_portable(
                &joints,
                &binds,
                &fast,
                (mesh_world != Mat4::IDENTITY).then(|| mesh_world.inverse()).as_ref(),
                &mut portable,
            );
            let mut exact = [Mat4::ZERO; 4];
            build_palette_mat4(&joints, &binds, &fast, &mesh_world, &mut exact);
            for k in 0..4 {
                let w = mesh_world.inverse() * want[joints[k]] * binds[k];
                assert!(palette[k].abs_diff_eq(w, 1e-4), "joint {k}: {} vs {w}", palette[k]);
                assert!(portable[k].abs_diff_eq(w, 1e-4));
                assert!(exact[k].abs_diff_eq(w, 1e-4));
                assert_eq!(palette[k].row(3), Vec4::W);
            }
        }
    }
}
