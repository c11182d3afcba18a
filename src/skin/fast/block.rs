//! The block loop both SIMD kernels run: blend a block's matrices (the kernel's part), then
//! [`lbs_block`] for its positions and normals, the portable path for the odd normals and the
//! tail.

use super::lanes::{Lanes, V3, lbs_block};
use super::{Inf, Job, portable};
use glam::Mat4;

/// What a SIMD kernel supplies: its register type, how it holds one blended matrix (`M`), and
/// how it turns a block's matrices into one register per element.
///
/// # Safety
/// Implementations may assume the CPU has `V`'s features whenever a method is called.
pub unsafe trait Blend {
    type V: Lanes;
    /// Blend and transform with the portable path's operations in its order (a multiply, then
    /// an add; no fused multiply-add), so that positions have its bits on every CPU.
    const EXACT: bool = false;
    /// One vertex's blended 4×4 matrix.
    type M: Copy;
    /// # Safety
    /// The CPU has `V`'s features.
    unsafe fn zero() -> Self::M;
    /// # Safety
    /// The CPU has `V`'s features.
    unsafe fn identity() -> Self::M;
    /// `acc + w · m` for the 16 floats of a column-major matrix at `m`.
    ///
    /// # Safety
    /// The CPU has `V`'s features; `m` points at 16 readable floats.
    unsafe fn add_weighted(acc: Self::M, w: f32, m: *const f32) -> Self::M;
    /// `w · m`, a blend's first influence. Kernels that fuse the multiply and the add start
    /// from [`Blend::zero`] at no cost; exact ones multiply only, as the one-vertex path starts
    /// its sums from the first product (adds of zero would be an eighth of their blend).
    ///
    /// # Safety
    /// As [`Blend::add_weighted`].
    #[inline(always)]
    unsafe fn weighted(w: f32, m: *const f32) -> Self::M {
        // SAFETY: this function's contract.
        unsafe { Self::add_weighted(Self::zero(), w, m) }
    }
    /// One influence set's four weights, read with one load: the kernels are bound by loads,
    /// and spreading each weight from a register costs a shuffle where a broadcast load per
    /// weight costs a load.
    type Weights: Copy;
    /// # Safety
    /// The CPU has `V`'s features.
    unsafe fn weights(w: &[f32; 4]) -> Self::Weights;
    /// `acc + w[slot] · m`, as [`Blend::add_weighted`]; `slot < 4`.
    ///
    /// # Safety
    /// As [`Blend::add_weighted`].
    unsafe fn add_weighted_slot(acc: Self::M, w: Self::Weights, slot: usize, m: *const f32) -> Self::M;
    /// `w[slot] · m`, as [`Blend::weighted`].
    ///
    /// # Safety
    /// As [`Blend::add_weighted`].
    #[inline(always)]
    unsafe fn weighted_slot(w: Self::Weights, slot: usize, m: *const f32) -> Self::M {
        // SAFETY: this function's contract.
        unsafe { Self::add_weighted_slot(Self::zero(), w, slot, m) }
    }
    /// Columns 0–3 (x, y, z) of `mats` (`LANES` of them), one register per element with
    /// vertex `i` in lane `i`.
    ///
    /// # Safety
    /// The CPU has `V`'s features.
    unsafe fn transpose(mats: &[Self::M; 16]) -> [V3<Self::V>; 4];
    /// Whether [`Blend::transform_point`] is implemented: positions without normals are then
    /// transformed one vertex at a time as each matrix is blended, with no transpose.
    const POINTWISE: bool = false;
    /// Writes `m · (p, 1)` for vertex `lane` of a block whose `LANES` packed positions start
    /// at `pin` (outputs at `pout`), touching no float outside the block's; with the portable
    /// path's operations in its order when [`Blend::EXACT`].
    ///
    /// # Safety
    /// The CPU has `V`'s features; `lane < LANES`; `pin` and `pout` cover `3 × LANES` floats.
    unsafe fn transform_point(m: Self::M, pin: *const f32, pout: *mut f32, lane: usize) {
        let _ = (m, pin, pout, lane);
        unreachable!("transform_point of a kernel without POINTWISE");
    }
}

/// Where a block's blended matrices go, one vertex (lane) at a time.
trait Sink<B: Blend> {
    /// # Safety
    /// The CPU has `B::V`'s features; `lane < LANES`.
    unsafe fn put(&mut self, lane: usize, m: B::M);
}

/// Kept for the transpose.
struct Mats<'m, B: Blend>(&'m mut [B::M; 16]);

impl<B: Blend> Sink<B> for Mats<'_, B> {
    #[inline(always)]
    unsafe fn put(&mut self, lane: usize, m: B::M) {
        self.0[lane] = m;
    }
}

/// Applied at once to the vertex's position ([`Blend::transform_point`]).
struct Points {
    pin: *const f32,
    pout: *mut f32,
}

impl<B: Blend> Sink<B> for Points {
    #[inline(always)]
    unsafe fn put(&mut self, lane: usize, m: B::M) {
        // SAFETY: the caller's contract, and `run` points `pin` and `pout` at a whole block.
        unsafe { B::transform_point(m, self.pin, self.pout, lane) }
    }
}

/// The blended matrices of the `LANES` vertices from `base`, each from its first `SLOTS`
/// influence slots without checks (see [`block_slots`]).
///
/// # Safety
/// The CPU has `B::V`'s features; `block_slots` gave at least `SLOTS` for this block.
#[inline(always)]
unsafe fn blend_slots<B: Blend, const SETS: usize, const SLOTS: usize>(
    job: &Job<'_>,
    palette: &[Mat4],
    base: usize,
    out: &mut impl Sink<B>,
) {
    let pal = palette.as_ptr() as *const f32;
    // The block's influences sliced once, so that the loop below has no bounds checks.
    let block = base * SETS..(base + B::V::LANES) * SETS;
    let joints = job.influences.joints[block.clone()].chunks_exact(SETS);
    let weights = job.influences.weights[block].chunks_exact(SETS);
    for (i, (joints, weights)) in joints.zip(weights).enumerate() {
        // SAFETY: the caller's contract; `block_slots` checked every joint of the block.
        unsafe {
            let first = B::weights(&weights[0]);
            let second = if SLOTS > 4 { B::weights(&weights[1]) } else { first };
            // Fused kernels start from zero: their first multiply-add costs what a multiply
            // does, and a loop from the first slot measured 11% faster with AVX-512 than one
            // from the second.
            let (mut acc, from) = if B::EXACT {
                (B::weighted_slot(first, 0, pal.add(joint_offset(joints, 0))), 1)
            } else {
                (B::zero(), 0)
            };
            for k in from..SLOTS {
                let set = if k < 4 { first } else { second };
                acc = B::add_weighted_slot(acc, set, k % 4, pal.add(joint_offset(joints, k)));
            }
            out.put(i, acc);
        }
    }
}

/// The blended matrices of the `LANES` vertices from `base` with the reference's rules: zero
/// weights and joints outside the palette skipped, identity when the weights left sum to zero.
///
/// # Safety
/// The CPU has `B::V`'s features.
#[inline(always)]
unsafe fn blend_checked<B: Blend, const SETS: usize>(
    job: &Job<'_>,
    palette: &[Mat4],
    base: usize,
    out: &mut impl Sink<B>,
) {
    let pal = palette.as_ptr() as *const f32;
    for i in 0..B::V::LANES {
        let v = base + i;
        let joints = job.influences.joints[v * SETS..(v + 1) * SETS].as_flattened();
        let weights = job.influences.weights[v * SETS..(v + 1) * SETS].as_flattened();
        // SAFETY: the caller's contract; each joint is checked before its matrix is read.
        unsafe {
            let mut acc = None;
            let mut total = 0.0f32;
            for (&joint, &w) in joints.iter().zip(weights) {
                let joint = usize::from(joint);
                if w != 0.0 && joint < palette.len() {
                    let m = pal.add(joint * 16);
                    acc = Some(match acc {
                        None => B::weighted(w, m),
                        Some(acc) => B::add_weighted(acc, w, m),
                    });
                    total += w;
                }
            }
            out.put(i, acc.filter(|_| total != 0.0).unwrap_or_else(|| B::identity()));
        }
    }
}

/// The blended matrices of the block at `base` into `out`: from the first `slots` influence
/// slots without checks, or with the reference's checks when `slots` is `None`.
///
/// # Safety
/// The CPU has `B::V`'s features; `slots` comes from `block_slots` for this block.
#[inline(always)]
unsafe fn blend_block<B: Blend, const SETS: usize>(
    job: &Job<'_>,
    palette: &[Mat4],
    base: usize,
    slots: Option<usize>,
    out: &mut impl Sink<B>,
) {
    // SAFETY: this function's contract.
    unsafe {
        // One copy of the loop per slot count, so that each has a fixed number of
        // multiply-adds.
        match slots {
            Some(1) => blend_slots::<B, SETS, 1>(job, palette, base, out),
            Some(2) => blend_slots::<B, SETS, 2>(job, palette, base, out),
            Some(3) => blend_slots::<B, SETS, 3>(job, palette, base, out),
            Some(4) => blend_slots::<B, SETS, 4>(job, palette, base, out),
            Some(5) => blend_slots::<B, SETS, 5>(job, palette, base, out),
            Some(6) => blend_slots::<B, SETS, 6>(job, palette, base, out),
            Some(7) => blend_slots::<B, SETS, 7>(job, palette, base, out),
            Some(_) => blend_slots::<B, SETS, 8>(job, palette, base, out),
            None => blend_checked::<B, SETS>(job, palette, base, out),
        }
    }
}

/// Skins every vertex of `job`.
///
/// # Safety
/// The CPU has `B::V`'s features; `job` holds `SETS` influence sets per vertex and has normals
/// exactly when `NORMALS`.
#[inline(always)]
pub unsafe fn run<B: Blend, const SETS: usize, const NORMALS: bool>(job: Job<'_>) {
    let palette = job.palette;
    // SAFETY: this function's contract; the blend reads the job's own palette.
    unsafe { run_blending::<B, SETS, NORMALS>(job, palette) }
}

/// [`run`] with `B` blending the matrices of `blend_palette` (the job's palette in the layout
/// `B` reads, of the same length and values) where the job's palette is read as it is (the
/// tail and the fix-ups, on the one-vertex path).
///
/// # Safety
/// As [`run`].
#[inline(always)]
pub unsafe fn run_blending<B: Blend, const SETS: usize, const NORMALS: bool>(mut job: Job<'_>, blend_palette: &[Mat4]) {
    assert_eq!(blend_palette.len(), job.palette.len());
    let lanes = B::V::LANES;
    let n = job.len();
    let blocks = n / lanes;
    // A zero weight adds exactly nothing only to finite matrices.
    let finite = job.palette.iter().all(|m| m.is_finite());
    // Positions alone are transformed as each matrix is blended, one vertex at a time: no
    // whole lines to stream.
    let pointwise = B::POINTWISE && !NORMALS;
    let streamed = if job.stream && B::V::STREAMS && !pointwise && blocks > 0 {
        stream_plan(&job, lanes)
    } else {
        None
    };
    // SAFETY: every base (of the three calls) is at most `(blocks - 1) * lanes`, so each block
    // lies inside the job; the rest is this function's contract.
    unsafe {
        match streamed {
            None => run_blocks::<B, SETS, NORMALS>(
                &mut job,
                blend_palette,
                finite,
                (0..blocks).map(|b| b * lanes),
                Stores::CACHED,
            ),
            Some((skip, stores)) => {
                // The first `skip` vertices, whose outputs start before the first aligned line,
                // and the last partial run before the tail are whole blocks with cached stores,
                // overlapping the streamed ones: every vertex the portable path would not take
                // comes from this kernel, with the bits it has without streaming.
                let whole = (blocks * lanes - skip) / lanes;
                if skip > 0 {
                    run_blocks::<B, SETS, NORMALS>(&mut job, blend_palette, finite, std::iter::once(0), Stores::CACHED);
                }
                run_blocks::<B, SETS, NORMALS>(
                    &mut job,
                    blend_palette,
                    finite,
                    (0..whole).map(|b| skip + b * lanes),
                    stores,
                );
                if skip + whole * lanes < blocks * lanes {
                    let last = (blocks - 1) * lanes;
                    run_blocks::<B, SETS, NORMALS>(
                        &mut job,
                        blend_palette,
                        finite,
                        std::iter::once(last),
                        Stores::CACHED,
                    );
                }
            }
        }
    }
    portable::range(&mut job, blocks * lanes..n);
}

/// Which outputs a block writes with streaming (non-temporal) stores.
#[derive(Clone, Copy)]
pub(crate) struct Stores {
    pub positions: bool,
    pub normals: bool,
}

impl Stores {
    pub const CACHED: Stores = Stores {
        positions: false,
        normals: false,
    };
}

/// The vertices to skip so that the output positions of the blocks after them start on a
/// register-wide boundary (`4 × lanes` bytes, which streaming stores need), and which outputs
/// stream from there: positions always, normals when their outputs share that alignment.
fn stream_plan(job: &Job<'_>, lanes: usize) -> Option<(usize, Stores)> {
    let align = 4 * lanes;
    let phase = |p: *const glam::Vec3| p as usize % align;
    let positions = phase(job.out_positions.as_ptr());
    // A `Vec3` is 12 bytes aligned on 4: some vertex among the first `lanes` starts a boundary.
    let skip = (0..lanes).find(|k| (positions + 12 * k) % align == 0)?;
    let normals = !job.out_normals.is_empty() && phase(job.out_normals.as_ptr()) == positions;
    Some((
        skip,
        Stores {
            positions: true,
            normals,
        },
    ))
}

/// The blocks of `LANES` vertices starting at `bases`, each block finished only after the next
/// one is blended.
///
/// # Safety
/// As [`run`]; every base plus `LANES` is at most `job.len()`.
#[inline(always)]
unsafe fn run_blocks<B: Blend, const SETS: usize, const NORMALS: bool>(
    job: &mut Job<'_>,
    blend_palette: &[Mat4],
    finite: bool,
    bases: impl Iterator<Item = usize>,
    stores: Stores,
) {
    let lanes = B::V::LANES;
    let pointwise = B::POINTWISE && !NORMALS;
    // Two blocks' matrices (see below). Each block overwrites its `LANES` matrices: filled once
    // here rather than per block (a kilobyte written per block, a tenth of the AVX2 kernel's
    // time).
    // SAFETY: the features are the caller's contract.
    let mut mats = unsafe { [[B::zero(); 16]; 2] };
    let mut previous = None;
    for (block, base) in bases.enumerate() {
        let range = base * SETS..(base + lanes) * SETS;
        // SAFETY: the features are the caller's contract.
        let slots = unsafe { B::V::block_slots::<SETS>(job.influences, range, job.palette.len()) }.filter(|_| finite);
        if pointwise {
            // SAFETY: `base + lanes <= n` and `Job::new` cut both slices to `n` vertices, so
            // the pointers cover the block's `lanes` vectors; `slots` comes from `block_slots`
            // for this block; the features are the caller's contract.
            unsafe {
                let mut points = Points {
                    pin: job.positions.as_ptr().add(base).cast(),
                    pout: job.out_positions.as_mut_ptr().add(base).cast(),
                };
                blend_block::<B, SETS>(job, blend_palette, base, slots, &mut points);
            }
            continue;
        }
        // SAFETY: `slots` comes from `block_slots` for this block; the features are the
        // caller's contract.
        unsafe { blend_block::<B, SETS>(job, blend_palette, base, slots, &mut Mats(&mut mats[block % 2])) };
        // The previous block is finished only now, with this one's blend beside it in the
        // instruction stream: its transpose and normals are one long chain of dependent steps,
        // which the core overlaps with the independent loads and multiply-adds of the blend
        // (AVX2 7% faster, AVX-512 12%, on Zen 5).
        if let Some((previous, _)) = previous {
            // SAFETY: the features are the caller's contract; the previous block is whole.
            unsafe { finish::<B, NORMALS>(job, previous, &mats[(block + 1) % 2], stores) };
        }
        previous = Some((base, block));
    }
    if let Some((base, block)) = previous {
        // SAFETY: as in the loop, for the last block.
        unsafe { finish::<B, NORMALS>(job, base, &mats[block % 2], stores) };
    }
}

/// Positions (and normals when `NORMALS`) of the block of `LANES` vertices from `base`, from
/// its blended matrices, with the odd normals redone on the portable path.
///
/// # Safety
/// The CPU has `B::V`'s features; `base + LANES <= job.len()`.
#[inline(always)]
unsafe fn finish<B: Blend, const NORMALS: bool>(job: &mut Job<'_>, base: usize, mats: &[B::M; 16], stores: Stores) {
    // SAFETY: `Job::new` cut every slice to `job.len()` vertices, so each pointer covers the
    // block's `LANES` vectors (this function's contract); the features are the caller's
    // contract. The pointers are taken afresh each block, after the portable fix-ups below
    // borrowed the slices.
    let odd = unsafe {
        let cols = B::transpose(mats);
        let (nin, nout) = if NORMALS {
            (job.normals.as_ptr().add(base), job.out_normals.as_mut_ptr().add(base))
        } else {
            (std::ptr::null(), std::ptr::null_mut())
        };
        lbs_block::<B::V, NORMALS>(
            B::EXACT,
            stores,
            cols,
            job.positions.as_ptr().add(base).cast(),
            job.out_positions.as_mut_ptr().add(base).cast(),
            nin.cast(),
            nout.cast(),
        )
    };
    if odd != 0 {
        fix_lanes(job, base, odd);
    }
}

/// Redoes on the portable path the vertices of the block at `base` whose bit is set in `lanes`.
#[cold]
#[inline(never)]
fn fix_lanes(job: &mut Job<'_>, base: usize, lanes: u32) {
    for lane in 0..32 {
        if lanes & (1 << lane) != 0 {
            portable::range(job, base + lane..base + lane + 1);
        }
    }
}

/// How many influence slots (from the first) a block's vertices use, when blending just those
/// without checks gives the reference's result: every weight ≥ 0 with each vertex's first > 0
/// (so no vertex falls back to its bind pose), every joint inside the palette, and zero weights
/// only after the returned count or where they add exactly nothing (finite palettes, checked by
/// the caller). `None` when some vertex needs the reference's checks. Meshes whose weights are
/// sorted, as exporters write them, blend only the slots they use.
///
/// Works on the weights' bits (a float ≥ 0 and not NaN is at most `0x7F80_0000`, and a zero
/// has no other bit than the sign) sixteen lanes at a time with no early exit, so that it stays
/// a few vector operations per block (16 is a multiple of a vertex's slot count, so a lane
/// always holds the same slot). Variants that masked the minimum to the first slots, or read
/// those from memory, measured slower.
#[inline(always)]
pub(crate) fn block_slots<const SETS: usize>(
    influences: Inf<'_>,
    range: std::ops::Range<usize>,
    palette: usize,
) -> Option<usize> {
    let per = SETS * 4;
    let weights = influences.weights[range.clone()].as_flattened();
    let (mut any, mut highest, mut lowest) = ([0u32; 16], [0u32; 16], [u32::MAX; 16]);
    // One run of sixteen per step for one influence set, two for two: each measured fastest
    // (with one run for two sets the compiler vectorized across steps, with gathers).
    if SETS == 1 {
        for chunk in weights.chunks_exact(16) {
            for lane in 0..16 {
                let bits = chunk[lane].to_bits();
                any[lane] |= bits;
                highest[lane] = highest[lane].max(bits);
                lowest[lane] = lowest[lane].min(bits);
            }
        }
    } else {
        for chunk in weights.chunks_exact(32) {
            for lane in 0..16 {
                let (a, b) = (chunk[lane].to_bits(), chunk[lane + 16].to_bits());
                any[lane] |= a | b;
                highest[lane] = highest[lane].max(a.max(b));
                lowest[lane] = lowest[lane].min(a.min(b));
            }
        }
    }
    let joint = influences.joints[range]
        .as_flattened()
        .iter()
        .fold(0, |max, &j| max.max(j));
    slots_of_lanes(&any, &highest, &lowest, joint, per, palette)
}

/// The answer of [`block_slots`] from its lane-wise scan of a block's weight bits (OR, maximum
/// and minimum per lane, a vertex's slots `per` lanes apart) and its largest joint.
#[inline(always)]
pub(crate) fn slots_of_lanes(
    any: &[u32],
    highest: &[u32],
    lowest: &[u32],
    joint: u16,
    per: usize,
    palette: usize,
) -> Option<usize> {
    let mut used = [0u32; 8];
    for (lane, bits) in any.iter().enumerate() {
        used[lane % per] |= bits;
    }
    let slots = used[..per].iter().rposition(|&u| u != 0).map_or(1, |k| k + 1);
    let highest = highest.iter().fold(0, |a, &b| a.max(b));
    let first = lowest.iter().step_by(per).fold(u32::MAX, |a, &b| a.min(b));
    let valid = highest <= 0x7F80_0000 && first != 0 && usize::from(joint) < palette;
    valid.then_some(slots)
}

/// How many slots from the first a block blends, from the bits of the slots some vertex of it
/// uses (bit `k`: slot `k`): through the highest used, and at least one.
#[inline(always)]
pub(crate) fn slots_through(used: u32) -> usize {
    if used == 0 {
        1
    } else {
        32 - used.leading_zeros() as usize
    }
}

/// Palette offset (in floats, 16 per matrix) of slot `k`'s joint among a vertex's `joints`.
/// Shifts out of one 64-bit read per set, so that the compiler keeps the indices in general
/// registers rather than extracting them from a vector one by one.
#[inline(always)]
pub(crate) fn joint_offset(joints: &[[u16; 4]], k: usize) -> usize {
    let set = joints[k / 4];
    let bits = u64::from(set[0]) | u64::from(set[1]) << 16 | u64::from(set[2]) << 32 | u64::from(set[3]) << 48;
    ((bits >> (16 * (k % 4))) & 0xFFFF) as usize * 16
}
