//! Any CPU: four vertices at a time in glam's `Vec4` lanes (`skin`), and one at a time
//! (`range`) for the rest and for what the block kernels hand back.

use super::block::{Blend, run, run_blending};
use super::lanes::V3;
use super::{Inf, Job};
use glam::{Mat4, Vec3, Vec4};

/// Blended columns 0–3 of one vertex (column `w` components included but unused), or `None`
/// when no weight is left (the vertex keeps its bind pose). Same order and rules as the
/// reference, each sum starting from its first product: the order every exact kernel follows.
#[inline(always)]
pub(super) fn blend(palette: &[Mat4], influences: Inf<'_>, v: usize) -> Option<[Vec4; 4]> {
    let sets = influences.sets;
    let range = v * sets..(v + 1) * sets;
    let mut c: Option<[Vec4; 4]> = None;
    let mut total = 0.0;
    for (joints, weights) in influences.joints[range.clone()].iter().zip(&influences.weights[range]) {
        for k in 0..4 {
            let w = weights[k];
            if w != 0.0
                && let Some(m) = palette.get(joints[k] as usize)
            {
                let product = [m.x_axis * w, m.y_axis * w, m.z_axis * w, m.w_axis * w];
                c = Some(match c {
                    None => product,
                    Some(c) => [
                        c[0] + product[0],
                        c[1] + product[1],
                        c[2] + product[2],
                        c[3] + product[3],
                    ],
                });
                total += w;
            }
        }
    }
    c.filter(|_| total != 0.0)
}

/// One vertex on the portable path.
#[inline(always)]
fn vertex(palette: &[Mat4], influences: Inf<'_>, v: usize, position: Vec3, normal: Option<Vec3>) -> (Vec3, Vec3) {
    match blend(palette, influences, v) {
        None => (position, normal.map_or(Vec3::ZERO, Vec3::normalize_or_zero)),
        Some([c0, c1, c2, c3]) => {
            let p = (c0 * position.x + c1 * position.y + c2 * position.z + c3).truncate();
            let n = normal.map_or(Vec3::ZERO, |n| {
                let (c0, c1, c2) = (c0.truncate(), c1.truncate(), c2.truncate());
                let (k0, k1, k2) = (c1.cross(c2), c2.cross(c0), c0.cross(c1));
                let skinned = k0 * n.x + k1 * n.y + k2 * n.z;
                let signed = if c0.dot(k0) < 0.0 { -skinned } else { skinned };
                signed.normalize_or_zero()
            });
            (p, n)
        }
    }
}

/// Portable skinning of the vertices in `range` of `job`.
pub(super) fn range(job: &mut Job<'_>, range: std::ops::Range<usize>) {
    let with_normals = !job.normals.is_empty();
    for v in range {
        let normal = with_normals.then(|| job.normals[v]);
        let (p, n) = vertex(job.palette, job.influences, v, job.positions[v], normal);
        job.out_positions[v] = p;
        if with_normals {
            job.out_normals[v] = n;
        }
    }
}

/// Skins every vertex of `job` with one or two influence sets four at a time in glam's `Vec4`
/// lanes (SSE2 on x86-64, NEON on AArch64), else one vertex at a time. Positions have the
/// per-vertex path's bits either way: the same multiplies and adds in the same order. Palettes
/// of up to [`ROWS_PALETTE`] joints are blended as rows ([`PortableRows`]); bigger ones as
/// columns ([`Portable`]), whose positions without normals are transformed as soon as each
/// matrix is blended.
pub(super) fn skin(mut job: Job<'_>) {
    let sets = job.influences.sets;
    if matches!(sets, 1 | 2) && job.palette.len() <= ROWS_PALETTE {
        let mut rows = [std::mem::MaybeUninit::<Mat4>::uninit(); ROWS_PALETTE];
        for (row, m) in rows.iter_mut().zip(job.palette) {
            row.write(m.transpose());
        }
        // SAFETY: the loop above wrote the first `job.palette.len()` matrices.
        let rows = unsafe { std::slice::from_raw_parts(rows.as_ptr().cast::<Mat4>(), job.palette.len()) };
        // SAFETY: `PortableRows` needs no target feature; `SETS` and `NORMALS` match the job;
        // `rows` is the job's palette transposed, which `PortableRows` reads.
        return unsafe {
            match (sets, job.with_normals()) {
                (1, true) => run_blending::<PortableRows, 1, true>(job, rows),
                (1, false) => run_blending::<PortableRows, 1, false>(job, rows),
                (_, true) => run_blending::<PortableRows, 2, true>(job, rows),
                (_, false) => run_blending::<PortableRows, 2, false>(job, rows),
            }
        };
    }
    // SAFETY: `Portable` needs no target feature; `run`'s `SETS` and `NORMALS` match the job.
    unsafe {
        match (sets, job.with_normals()) {
            (1, true) => run::<Portable, 1, true>(job),
            (1, false) => run::<Portable, 1, false>(job),
            (2, true) => run::<Portable, 2, true>(job),
            (2, false) => run::<Portable, 2, false>(job),
            _ => {
                let n = job.len();
                range(&mut job, 0..n);
            }
        }
    }
}

/// The portable block kernel's blend: columns as `Vec4`s, a multiply then an add per
/// influence, as [`blend`] does.
pub(super) struct Portable;

// SAFETY: no method needs a target feature; `add_weighted` reads the 16 floats its caller
// vouches for.
unsafe impl Blend for Portable {
    type V = Vec4;
    const EXACT: bool = true;
    type M = [Vec4; 4];

    #[inline(always)]
    unsafe fn zero() -> [Vec4; 4] {
        [Vec4::ZERO; 4]
    }

    #[inline(always)]
    unsafe fn identity() -> [Vec4; 4] {
        Mat4::IDENTITY.to_cols_array_2d().map(Vec4::from_array)
    }

    #[inline(always)]
    unsafe fn add_weighted(acc: [Vec4; 4], w: f32, m: *const f32) -> [Vec4; 4] {
        // SAFETY: the trait's contract.
        let product = unsafe { Self::weighted(w, m) };
        [0, 1, 2, 3].map(|c| acc[c] + product[c])
    }

    #[inline(always)]
    unsafe fn weighted(w: f32, m: *const f32) -> [Vec4; 4] {
        // SAFETY: `m` covers 16 floats (the trait's contract).
        let m = Mat4::from_cols_array(&unsafe { m.cast::<[f32; 16]>().read_unaligned() });
        [m.x_axis * w, m.y_axis * w, m.z_axis * w, m.w_axis * w]
    }

    type Weights = [f32; 4];

    #[inline(always)]
    unsafe fn weights(w: &[f32; 4]) -> [f32; 4] {
        *w
    }

    #[inline(always)]
    unsafe fn add_weighted_slot(acc: [Vec4; 4], w: [f32; 4], slot: usize, m: *const f32) -> [Vec4; 4] {
        // SAFETY: the trait's contract.
        unsafe { Self::add_weighted(acc, w[slot], m) }
    }

    #[inline(always)]
    unsafe fn weighted_slot(w: [f32; 4], slot: usize, m: *const f32) -> [Vec4; 4] {
        // SAFETY: the trait's contract.
        unsafe { Self::weighted(w[slot], m) }
    }

    const POINTWISE: bool = true;

    /// As [`vertex`] computes it: the same bits.
    #[inline(always)]
    unsafe fn transform_point([c0, c1, c2, c3]: [Vec4; 4], pin: *const f32, pout: *mut f32, lane: usize) {
        // SAFETY: floats 3·lane … 3·lane + 2 are the vertex's own (the trait's contract).
        unsafe {
            let p = Vec3::from_array(pin.add(3 * lane).cast::<[f32; 3]>().read_unaligned());
            let position = (c0 * p.x + c1 * p.y + c2 * p.z + c3).truncate();
            pout.add(3 * lane)
                .cast::<[f32; 3]>()
                .write_unaligned(position.to_array());
        }
    }

    #[inline(always)]
    unsafe fn transpose(mats: &[[Vec4; 4]; 16]) -> [V3<Vec4>; 4] {
        let column = |c: usize| {
            let t = Mat4::from_cols(mats[0][c], mats[1][c], mats[2][c], mats[3][c]).transpose();
            [t.x_axis, t.y_axis, t.z_axis]
        };
        [column(0), column(1), column(2), column(3)]
    }
}

/// Palettes up to this many joints are blended as rows ([`PortableRows`]): a transposed copy
/// on the stack (16 KiB).
pub(super) const ROWS_PALETTE: usize = 256;

/// The portable block kernel's blend, from a transposed palette: rows 0–2 of
/// each matrix, three `Vec4`s where [`Portable`] blends four columns (whose fourth lanes the
/// finish never reads), and three transposes into lanes instead of four. Every element is the
/// same multiply and add in the same order, so positions keep the one-vertex path's bits.
pub(super) struct PortableRows;

// SAFETY: no method needs a target feature; `add_weighted` reads 12 of the 16 floats its
// caller vouches for.
unsafe impl Blend for PortableRows {
    type V = Vec4;
    const EXACT: bool = true;
    type M = [Vec4; 3];

    #[inline(always)]
    unsafe fn zero() -> [Vec4; 3] {
        [Vec4::ZERO; 3]
    }

    #[inline(always)]
    unsafe fn identity() -> [Vec4; 3] {
        [Vec4::X, Vec4::Y, Vec4::Z]
    }

    #[inline(always)]
    unsafe fn add_weighted(acc: [Vec4; 3], w: f32, m: *const f32) -> [Vec4; 3] {
        // SAFETY: the trait's contract.
        let product = unsafe { Self::weighted(w, m) };
        [0, 1, 2].map(|r| acc[r] + product[r])
    }

    /// `m` is a transposed matrix: its first twelve floats are rows 0–2.
    #[inline(always)]
    unsafe fn weighted(w: f32, m: *const f32) -> [Vec4; 3] {
        // SAFETY: `m` covers 16 floats (the trait's contract).
        let rows = unsafe { m.cast::<[[f32; 4]; 3]>().read_unaligned() };
        rows.map(|row| Vec4::from_array(row) * w)
    }

    type Weights = [f32; 4];

    #[inline(always)]
    unsafe fn weights(w: &[f32; 4]) -> [f32; 4] {
        *w
    }

    #[inline(always)]
    unsafe fn add_weighted_slot(acc: [Vec4; 3], w: [f32; 4], slot: usize, m: *const f32) -> [Vec4; 3] {
        // SAFETY: the trait's contract.
        unsafe { Self::add_weighted(acc, w[slot], m) }
    }

    #[inline(always)]
    unsafe fn weighted_slot(w: [f32; 4], slot: usize, m: *const f32) -> [Vec4; 3] {
        // SAFETY: the trait's contract.
        unsafe { Self::weighted(w[slot], m) }
    }

    #[inline(always)]
    unsafe fn transpose(mats: &[[Vec4; 3]; 16]) -> [V3<Vec4>; 4] {
        // Row `r` of the four vertices, turned: element (r, c) of each vertex in lane order.
        let row = |r: usize| Mat4::from_cols(mats[0][r], mats[1][r], mats[2][r], mats[3][r]).transpose();
        let (r0, r1, r2) = (row(0), row(1), row(2));
        let column = |c: usize| [r0.col(c), r1.col(c), r2.col(c)];
        [column(0), column(1), column(2), column(3)]
    }
}

/// The same answer as [`super::block::block_slots`] for a block of four vertices, from `Vec4`
/// comparisons: the generic scan, made for sixteen lanes, took a fifth of the portable kernel's
/// time at four.
#[inline(always)]
pub(crate) fn block_slots<const SETS: usize>(
    influences: Inf<'_>,
    range: std::ops::Range<usize>,
    palette: usize,
) -> Option<usize> {
    let weights = &influences.weights[range.clone()];
    assert_eq!(weights.len(), 4 * SETS);
    let (mut valid, mut first_positive, mut used) = (true, true, 0u32);
    for (i, w) in weights.iter().enumerate() {
        let w = Vec4::from_array(*w);
        // At least zero and not NaN, and no negative zero (the generic scan's bit test).
        valid &= w.cmpge(Vec4::ZERO).all() & (w.is_negative_bitmask() == 0);
        used |= w.cmpne(Vec4::ZERO).bitmask() << (4 * (i % SETS));
        if i % SETS == 0 {
            first_positive &= w.x > 0.0;
        }
    }
    let joint = influences.joints[range]
        .as_flattened()
        .iter()
        .fold(0, |max, &j| max.max(j));
    let slots = super::block::slots_through(used);
    (valid && first_positive && usize::from(joint) < palette).then_some(slots)
}
