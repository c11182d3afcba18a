//! The world pass for skeletons made of chains, 32 locals at a time.
//!
//! [`per_joint`](super::per_joint) turns each local into a matrix in its 16 lanes (seven
//! shuffles, four multiplies) and multiplies it in with more shuffles: most of the pass is
//! data movement, not arithmetic. Here the locals of a block become matrices sixteen at a time,
//! one local per lane (structure of arrays: the same multiplies and adds, no shuffles), and so
//! do the products of each even local with the odd one after it (the second matrix of a pair of
//! chain links, see `per_joint`). Their rows 0–2 go to a buffer, four floats a row, from which
//! the world pass broadcasts them; the world pass keeps the parent's world row-major, so that
//! its elements come out of in-lane shuffles (one cycle, off the slow cross-lane unit) and only
//! the two stores of a pair need a cross-lane transpose.
//!
//! Every element is computed with the operations of `per_joint`, in its order and with its
//! operands in the same places: the worlds are the same bits (tested on random and real rigs).

use super::{Node, Trs, columns, mul, per_joint, store, trs};
use glam::Mat4;
use std::arch::x86_64::*;
use std::mem::{MaybeUninit, offset_of};

/// Locals converted together: sixteen at even offsets from the block's first node, sixteen at
/// odd ones.
const BLOCK: usize = 32;

/// Whether a `Trs` holds its scale right after its translation, so that the four floats at the
/// translation, and the four that end with the scale, are all fields (no padding). Where not,
/// [`super::local_to_world`] takes `per_joint` throughout.
pub(super) const PACKED: bool = offset_of!(Trs, scale) == offset_of!(Trs, translation) + 12;

/// Rows 0–2 of sixteen affine transforms, four floats a row (the columns' elements k, the
/// translation's last): row k of the transform in lane `4g + m` at `[k][m][g]`.
#[repr(C, align(64))]
struct Rows([[[[f32; 4]; 4]; 4]; 3]);

/// Row `k` of `rows`' transform `lane` (`[k][lane % 4][lane / 4]`): within the `Rows` for
/// k < 3 and lane < 16.
#[inline(always)]
fn row(rows: *const Rows, k: usize, lane: usize) -> *const f32 {
    rows.cast::<f32>().wrapping_add(((4 * k + lane % 4) * 4 + lane / 4) * 4)
}

/// Where a block's rows go: the locals at even offsets, the products of each with the next,
/// the locals at odd offsets.
#[derive(Clone, Copy)]
struct Block {
    even: *mut Rows,
    pairs: *mut Rows,
    odd: *mut Rows,
}

/// In each 128-bit lane, the 4×4 transpose of the lane's four floats in `a, b, c, d`.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn transpose4(a: __m512, b: __m512, c: __m512, d: __m512) -> [__m512; 4] {
    // SAFETY: the caller's contract.
    unsafe {
        let (t0, t1) = (_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
        let (t2, t3) = (_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
        [
            _mm512_shuffle_ps::<0x44>(t0, t2),
            _mm512_shuffle_ps::<0xEE>(t0, t2),
            _mm512_shuffle_ps::<0x44>(t1, t3),
            _mm512_shuffle_ps::<0xEE>(t1, t3),
        ]
    }
}

/// Four floats at `offset` bytes into `locals[first + 8g]`, in 128-bit lane g.
///
/// # Safety
/// AVX-512 F; `first + 24 < BLOCK`; the 16 bytes at `offset` into a `Trs` are fields.
#[inline(always)]
unsafe fn four(locals: &[Trs; BLOCK], first: usize, offset: usize) -> __m512 {
    let at = |g: usize| {
        (&raw const locals[first + 8 * g])
            .cast::<u8>()
            .wrapping_add(offset)
            .cast::<f32>()
    };
    // SAFETY: the caller's contract; every pointer is into a `Trs` of `locals`, 16 readable
    // bytes of fields.
    unsafe {
        let v = _mm512_castps128_ps512(_mm_loadu_ps(at(0)));
        let v = _mm512_insertf32x4::<1>(v, _mm_loadu_ps(at(1)));
        let v = _mm512_insertf32x4::<2>(v, _mm_loadu_ps(at(2)));
        _mm512_insertf32x4::<3>(v, _mm_loadu_ps(at(3)))
    }
}

/// Columns 0–3, rows 0–2 (`[c][r]`) of the locals `locals[parity], locals[parity + 2], …`,
/// one local per lane (lane l holds `locals[2l + parity]`), each element computed as
/// `super::trs` computes it: `(q[P]·f[R] + (q[S]·f[U] + base)) · scale` with the lane
/// indices of `super::ROTATION`, q = (x, y, z, w) and f = (2q, −2q, x·0).
///
/// # Safety
/// AVX-512 F and FMA; [`PACKED`].
#[inline(always)]
unsafe fn elements(locals: &[Trs; BLOCK], parity: usize) -> [[__m512; 3]; 4] {
    // SAFETY: the caller's contract; with `PACKED` the four floats at the translation are
    // it and scale.x, the four ending with scale.z are translation.z and the scale, and the
    // rotation is four floats.
    unsafe {
        let (rotation, translation, scale) = (
            offset_of!(Trs, rotation),
            offset_of!(Trs, translation),
            offset_of!(Trs, scale) - 4,
        );
        // Each a 4×4 block of lanes: lane 4g + m of [`four`] at `2m + parity` holds local
        // `2(4g + m) + parity`'s floats.
        let q = transpose4(
            four(locals, parity, rotation),
            four(locals, 2 + parity, rotation),
            four(locals, 4 + parity, rotation),
            four(locals, 6 + parity, rotation),
        );
        let [tx, ty, tz, _] = transpose4(
            four(locals, parity, translation),
            four(locals, 2 + parity, translation),
            four(locals, 4 + parity, translation),
            four(locals, 6 + parity, translation),
        );
        let [_, sx, sy, sz] = transpose4(
            four(locals, parity, scale),
            four(locals, 2 + parity, scale),
            four(locals, 4 + parity, scale),
            four(locals, 6 + parity, scale),
        );
        let (t, s) = ([tx, ty, tz], [sx, sy, sz]);
        let (zero, one) = (_mm512_setzero_ps(), _mm512_set1_ps(1.0));
        // The factors `super::trs` multiplies out, with adds where they give the same bits, to
        // spare the multiplier (one 512-bit product a cycle on some cores) for the elements:
        // q + q is q·2 exactly (overflow, zeros, infinities and NaNs alike), and −0 − 2q is
        // q·(−2) (the sign of zero kept; a NaN passes through as the product passes it).
        let twice = [
            _mm512_add_ps(q[0], q[0]),
            _mm512_add_ps(q[1], q[1]),
            _mm512_add_ps(q[2], q[2]),
            _mm512_add_ps(q[3], q[3]),
        ];
        let minus_zero = _mm512_set1_ps(-0.0);
        let f = [
            twice[0],
            twice[1],
            twice[2],
            twice[3],
            _mm512_sub_ps(minus_zero, twice[0]),
            _mm512_sub_ps(minus_zero, twice[1]),
            _mm512_sub_ps(minus_zero, twice[2]),
            _mm512_sub_ps(minus_zero, twice[3]),
            _mm512_mul_ps(q[0], zero),
        ];
        let (p, r, s_, u) = super::ROTATION;
        let mut l = [[zero; 3]; 4];
        for (c, column) in l.iter_mut().enumerate() {
            for (k, element) in column.iter_mut().enumerate() {
                let e = 4 * c + k;
                let base = match c {
                    3 => t[k],
                    c if c == k => one,
                    _ => zero,
                };
                let inner = _mm512_fmadd_ps(q[s_[e] as usize], f[u[e] as usize], base);
                let unscaled = _mm512_fmadd_ps(q[p[e] as usize], f[r[e] as usize], inner);
                // The translation's scale is 1, and x·1 is x for every x a fused multiply-add
                // returns (never a signalling NaN).
                *element = if c == 3 {
                    unscaled
                } else {
                    _mm512_mul_ps(unscaled, s[c])
                };
            }
        }
        l
    }
}

/// Stores rows 0–2 of sixteen transforms given element by element (`[c][r]`).
///
/// # Safety
/// AVX-512 F; `rows` writable.
#[inline(always)]
unsafe fn store_rows(e: &[[__m512; 3]; 4], rows: *mut Rows) {
    // SAFETY: the caller's contract; each `[k][m]` of `rows` is 16 floats.
    unsafe {
        let [c0, c1, c2, c3] = e;
        for (k, (((&e0, &e1), &e2), &e3)) in c0.iter().zip(c1).zip(c2).zip(c3).enumerate() {
            let o = transpose4(e0, e1, e2, e3);
            for (m, o) in o.into_iter().enumerate() {
                _mm512_storeu_ps(rows.cast::<f32>().wrapping_add((4 * k + m) * 16), o);
            }
        }
    }
}

/// Converts a block of locals into `block`'s rows; the odd locals' rows only when `odd` (a
/// block that [`is_chain`] never reads them).
///
/// # Safety
/// AVX-512 F and FMA; [`PACKED`]; `block`'s rows writable.
#[inline(always)]
unsafe fn convert(locals: &[Trs; BLOCK], block: Block, odd: bool) {
    // SAFETY: the caller's contract.
    unsafe {
        let a = elements(locals, 0);
        let b = elements(locals, 1);
        store_rows(&a, block.even);
        if odd {
            store_rows(&b, block.odd);
        }
        // Rows 0–2 of a · b as `super::mul` computes them: column c, row r is
        // (a[1][r]·b[c][1] + a[0][r]·b[c][0]) + (a[3][r]·T[c] + a[2][r]·b[c][2]), T = (0, 0, 0, 1).
        let (zero, one) = (_mm512_setzero_ps(), _mm512_set1_ps(1.0));
        let mut p = [[zero; 3]; 4];
        for (c, column) in p.iter_mut().enumerate() {
            let translation = if c == 3 { one } else { zero };
            for (r, element) in column.iter_mut().enumerate() {
                let near = _mm512_fmadd_ps(a[1][r], b[c][1], _mm512_mul_ps(a[0][r], b[c][0]));
                let far = _mm512_fmadd_ps(a[3][r], translation, _mm512_mul_ps(a[2][r], b[c][2]));
                *element = _mm512_add_ps(near, far);
            }
        }
        store_rows(&p, block.pairs);
    }
}

/// Column-major ↔ row-major within one register (the same permutation both ways).
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn transpose(m: __m512) -> __m512 {
    // SAFETY: the caller's contract.
    unsafe {
        _mm512_permutexvar_ps(
            _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15),
            m,
        )
    }
}

/// Element k of each row of a row-major register, in all four of the row's lanes.
///
/// # Safety
/// AVX-512 F.
#[inline(always)]
unsafe fn splats(a: __m512) -> [__m512; 4] {
    // SAFETY: the caller's contract.
    unsafe {
        [
            _mm512_permute_ps::<0x00>(a),
            _mm512_permute_ps::<0x55>(a),
            _mm512_permute_ps::<0xAA>(a),
            _mm512_permute_ps::<0xFF>(a),
        ]
    }
}

/// Rows 0–2 of `rows`' transform `lane`, each in all four 128-bit lanes.
///
/// # Safety
/// AVX-512 F; the rows written; `lane < 16`.
#[inline(always)]
unsafe fn rows_of(rows: *const Rows, lane: usize) -> [__m512; 3] {
    // SAFETY: the caller's contract; a row is four floats.
    unsafe {
        [
            _mm512_broadcast_f32x4(_mm_loadu_ps(row(rows, 0, lane))),
            _mm512_broadcast_f32x4(_mm_loadu_ps(row(rows, 1, lane))),
            _mm512_broadcast_f32x4(_mm_loadu_ps(row(rows, 2, lane))),
        ]
    }
}

/// `a · b` in row-major registers: `a` as the [`splats`] of its row-major register, `b` as
/// [`rows_of`] it; per element the operations of `super::mul`, operands in its places.
///
/// # Safety
/// AVX-512 F and FMA.
#[inline(always)]
unsafe fn mul_rows([a0, a1, a2, a3]: [__m512; 4], [b0, b1, b2]: [__m512; 3]) -> __m512 {
    // SAFETY: the caller's contract.
    unsafe {
        let translation = _mm512_setr_ps(
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0,
        );
        let near = _mm512_fmadd_ps(a1, b1, _mm512_mul_ps(a0, b0));
        let far = _mm512_fmadd_ps(a3, translation, _mm512_mul_ps(a2, b2));
        _mm512_add_ps(near, far)
    }
}

/// `a · b` column-major as `super::mul` computes it, `a` in memory, `b` as its rows 0–2.
///
/// # Safety
/// AVX-512 F and FMA; the rows written; `lane < 16`.
#[inline(always)]
unsafe fn mul_columns(a: &Mat4, b: *const Rows, lane: usize) -> __m512 {
    let p = a as *const Mat4 as *const f32;
    // SAFETY: the caller's contract; a `Mat4` is 16 readable floats, a row four written ones.
    unsafe {
        // Row k's element c in all four lanes of 128-bit lane c.
        let spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
        let b0 = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(_mm_loadu_ps(row(b, 0, lane))));
        let b1 = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(_mm_loadu_ps(row(b, 1, lane))));
        let b2 = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(_mm_loadu_ps(row(b, 2, lane))));
        let a0 = _mm512_broadcast_f32x4(_mm_loadu_ps(p));
        let a1 = _mm512_broadcast_f32x4(_mm_loadu_ps(p.add(4)));
        let a2 = _mm512_broadcast_f32x4(_mm_loadu_ps(p.add(8)));
        let a3 = _mm512_broadcast_f32x4(_mm_loadu_ps(p.add(12)));
        let translation = _mm512_setr_ps(
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0,
        );
        let near = _mm512_fmadd_ps(a1, b1, _mm512_mul_ps(a0, b0));
        let far = _mm512_fmadd_ps(a3, translation, _mm512_mul_ps(a2, b2));
        _mm512_add_ps(near, far)
    }
}

/// Whether each node of `nodes[range]` is the child of the node before it: then every pair
/// of chain links in the block starts at an even offset, and [`chain_products`] takes them.
fn is_chain(nodes: &[Node], range: std::ops::Range<usize>) -> bool {
    let start = range.start;
    nodes.get(range).is_some_and(|block| {
        block
            .iter()
            .zip(start..)
            .all(|(node, i)| i > 0 && node.parent == Some(i - 1))
    })
}

/// [`products`] for a block that [`is_chain`]: sixteen pairs of links with nothing to decide
/// per node, each pair its two products, then the stores of the pair before. Returns the last
/// world, row-major.
///
/// # Safety
/// AVX-512 F and FMA; `block`'s even and pairs' rows written by [`convert`] for the block's
/// locals.
#[inline(always)]
unsafe fn chain_products(worlds: &mut [Mat4; BLOCK], block: Block, previous: __m512) -> __m512 {
    // SAFETY: the caller's contract; every `lane` below is under 16.
    unsafe {
        let parent = splats(previous);
        let mut first = mul_rows(parent, rows_of(block.even, 0));
        let mut previous = mul_rows(parent, rows_of(block.pairs, 0));
        for lane in 1..BLOCK / 2 {
            let parent = splats(previous);
            let next_first = mul_rows(parent, rows_of(block.even, lane));
            let next = mul_rows(parent, rows_of(block.pairs, lane));
            // The pair before's transposes and stores come after this pair's products: the
            // shuffle unit takes the older of two ready shuffles first, and the splats above
            // are what the chain waits for.
            store(&mut worlds[2 * lane - 2], transpose(first));
            store(&mut worlds[2 * lane - 1], transpose(previous));
            (first, previous) = (next_first, next);
        }
        store(&mut worlds[BLOCK - 2], transpose(first));
        store(&mut worlds[BLOCK - 1], transpose(previous));
        previous
    }
}

/// The worlds of the nodes of `block` (the converted block of nodes `start..end`), each from
/// the node before's world (`previous`, row-major when the flag says so) or its parent's: a
/// pair of chain links by the pair's converted product, another chained node by its converted
/// local. Returns where it stopped (early, before a pair whose second local is in the next
/// block), the last world and whether it is row-major, and how many pairs started at even
/// offsets.
///
/// # Safety
/// AVX-512 F and FMA; `block`'s rows written by [`convert`] for the locals `start..end`.
#[inline(always)]
unsafe fn products(
    nodes: &[Node],
    locals: &[Trs],
    worlds: &mut [Mat4],
    std::ops::Range { start, end }: std::ops::Range<usize>,
    block: Block,
    (mut previous, mut previous_rows): (__m512, bool),
) -> (usize, __m512, bool, usize) {
    let mut aligned = 0;
    let mut i = start;
    while i < end {
        let (offset, lane) = (i - start, (i - start) / 2);
        let rows = if offset % 2 == 0 { block.even } else { block.odd };
        // SAFETY: the caller's contract; every index is bounds-checked; `lane < 16`.
        unsafe {
            let chained = nodes[i].parent.is_some_and(|p| p + 1 == i);
            if chained && nodes.get(i + 1).is_some_and(|n| n.parent == Some(i)) {
                if i + 1 == end {
                    // The pair's second local is in the next block.
                    break;
                }
                let pair = if offset % 2 == 0 {
                    aligned += 1;
                    rows_of(block.pairs, lane)
                } else {
                    // An odd local and the even one after it: their product as `per_joint`
                    // computes it, its rows spread from the register.
                    let pair = transpose(mul(columns(trs(&locals[i])), trs(&locals[i + 1])));
                    [
                        _mm512_shuffle_f32x4::<0x00>(pair, pair),
                        _mm512_shuffle_f32x4::<0x55>(pair, pair),
                        _mm512_shuffle_f32x4::<0xAA>(pair, pair),
                    ]
                };
                if !previous_rows {
                    previous = transpose(previous);
                }
                let parent = splats(previous);
                store(&mut worlds[i], transpose(mul_rows(parent, rows_of(rows, lane))));
                previous = mul_rows(parent, pair);
                store(&mut worlds[i + 1], transpose(previous));
                previous_rows = true;
                i += 2;
                continue;
            }
            match nodes[i].parent {
                Some(_) if chained => {
                    if !previous_rows {
                        previous = transpose(previous);
                    }
                    previous = mul_rows(splats(previous), rows_of(rows, lane));
                    store(&mut worlds[i], transpose(previous));
                    previous_rows = true;
                }
                Some(p) => {
                    previous = mul_columns(&worlds[p], rows, lane);
                    store(&mut worlds[i], previous);
                    previous_rows = false;
                }
                None => {
                    previous = trs(&locals[i]);
                    store(&mut worlds[i], previous);
                    previous_rows = false;
                }
            }
            i += 1;
        }
    }
    (i, previous, previous_rows, aligned)
}

/// The world pass: blocks of 32 nodes converted ahead while they hold pairs of chain links at
/// even offsets (at least one in eight), [`per_joint`] for the other blocks, a first node
/// that would put the pairs at odd offsets, and the last nodes. Same contract and same bits
/// as `per_joint`.
///
/// # Safety
/// AVX-512 F and BW, AVX2 and FMA must be available, and [`PACKED`] must hold. (Every index is
/// bounds-checked.)
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
pub(super) unsafe fn local_to_world(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    let n = nodes.len().min(locals.len()).min(worlds.len());
    let (nodes, locals, worlds) = (&nodes[..n], &locals[..n], &mut worlds[..n]);
    // Room for a block's rows anywhere in a 4 KiB window. A load from an address a multiple of
    // 4 KiB away from an earlier store still in flight waits for that store on x86 cores, so
    // each block's rows go 2 KiB (mod 4 KiB) away from the worlds the block writes: the world
    // pass's loads from the rows would otherwise follow its stores of worlds at such distances
    // wherever the caller's buffer happens to lie (up to 15 % of the pass on a Zen 5).
    #[repr(C, align(64))]
    struct Scratch(MaybeUninit<[u8; 4096 + 3 * size_of::<Rows>()]>);
    let mut scratch = Scratch(MaybeUninit::uninit());
    let base = scratch.0.as_mut_ptr().cast::<u8>();
    // The previous node's world: row-major when `previous_rows`, else column-major (turned
    // only when a chain continues from it).
    let mut previous = _mm512_setzero_ps();
    let mut previous_rows = false;
    // Whether the last block held enough pairs of chain links for the conversion to pay.
    let mut chains = true;
    let mut start = 0;
    while let Some(these) = locals[start..].first_chunk::<BLOCK>() {
        let end = start + BLOCK;
        if previous_rows && !chains {
            // SAFETY: the features are enabled.
            previous = unsafe { transpose(previous) };
            previous_rows = false;
        }
        if !chains {
            let pairs;
            // SAFETY: the features are enabled.
            (start, previous, pairs) = unsafe { per_joint(nodes, locals, worlds, start, end, previous) };
            chains = pairs >= BLOCK / 8;
            continue;
        }
        // The products serve pairs at even offsets: a first node that does not start a pair,
        // before one that does (a root, then a chain), goes alone.
        let pair_at = |i: usize| {
            nodes[i].parent.is_some_and(|p| p + 1 == i) && nodes.get(i + 1).is_some_and(|n| n.parent == Some(i))
        };
        if !pair_at(start) && pair_at(start + 1) {
            if previous_rows {
                // SAFETY: the features are enabled.
                previous = unsafe { transpose(previous) };
                previous_rows = false;
            }
            // SAFETY: the features are enabled.
            (start, previous, _) = unsafe { per_joint(nodes, locals, worlds, start, start + 1, previous) };
            continue;
        }
        let at = (worlds.as_ptr().wrapping_add(start) as usize + 2048).wrapping_sub(base as usize) % 4096 / 64 * 64;
        let even = base.wrapping_add(at).cast::<Rows>();
        let block = Block {
            even,
            pairs: even.wrapping_add(1),
            odd: even.wrapping_add(2),
        };
        let chain = is_chain(nodes, start..end);
        // SAFETY: the features are enabled and `PACKED` is this function's contract; the three
        // `Rows` lie within `scratch` (`at < 4096`), aligned as `Rows` (`base` and `at` are
        // multiples of 64), and `convert` writes all that the products read before they do.
        unsafe { convert(these, block, !chain) };
        if chain {
            // `is_chain` found nodes `start..end`, and there are as many worlds as nodes.
            let block_worlds: &mut [Mat4; BLOCK] = (&mut worlds[start..end]).try_into().expect("a block of worlds");
            if !previous_rows {
                // SAFETY: the features are enabled.
                previous = unsafe { transpose(previous) };
            }
            // SAFETY: the features are enabled; `convert` wrote the block's rows above.
            previous = unsafe { chain_products(block_worlds, block, previous) };
            (start, previous_rows) = (end, true);
            continue;
        }
        let aligned;
        // SAFETY: the features are enabled; `convert` wrote the block's rows above.
        (start, previous, previous_rows, aligned) =
            unsafe { products(nodes, locals, worlds, start..end, block, (previous, previous_rows)) };
        chains = aligned >= BLOCK / 8;
    }
    if previous_rows {
        // SAFETY: the features are enabled.
        previous = unsafe { transpose(previous) };
    }
    // SAFETY: the features are enabled.
    unsafe { per_joint(nodes, locals, worlds, start, n, previous) };
}
