//! The block loop both SIMD kernels run: blend a block's matrices (the kernel's part), then
//! [`lbs_block`] for its positions and normals, the portable path for the odd normals and the
//! tail.

use super::lanes::{Lanes, V3, lbs_block};
use super::{Inf, Job, portable};

/// What a SIMD kernel supplies: its register type and how it blends one block.
///
/// # Safety
/// Implementations may assume the CPU has `V`'s features and that `job` was checked by
/// [`Job::new`] and holds `SETS` influence sets per vertex.
pub unsafe trait Blend {
    type V: Lanes;
    /// Columns 0–3 (x, y, z) of the blended matrices of vertices `base .. base + LANES`, with
    /// the reference's rules (zero weights and joints outside the palette skipped, identity
    /// when no weight is left).
    ///
    /// `simple`: every influence of the block has a weight > 0 and a joint inside the palette,
    /// so that no check per influence is needed.
    ///
    /// # Safety
    /// The CPU has `V`'s features; `base + LANES <= job.len()`; `simple` as above.
    unsafe fn blend<const SETS: usize>(job: &Job<'_>, base: usize, simple: bool) -> [V3<Self::V>; 4];
}

/// Skins every vertex of `job`.
///
/// # Safety
/// The CPU has `B::V`'s features; `job` holds `SETS` influence sets per vertex and has normals
/// exactly when `NORMALS`.
#[inline(always)]
pub unsafe fn run<B: Blend, const SETS: usize, const NORMALS: bool>(mut job: Job<'_>) {
    let lanes = B::V::LANES;
    let n = job.len();
    let blocks = n / lanes;
    for block in 0..blocks {
        let base = block * lanes;
        // SAFETY: `base + lanes <= n` and `Job::new` cut every slice to `n` vertices, so each
        // pointer covers the block's `lanes` vectors; the features are the caller's contract.
        // The pointers are taken afresh each block, after the portable fix-ups below borrowed
        // the slices.
        let simple = block_is_simple(job.influences, base * SETS..(base + lanes) * SETS, job.palette.len());
        let odd = unsafe {
            let cols = B::blend::<SETS>(&job, base, simple);
            let (nin, nout) = if NORMALS {
                (job.normals.as_ptr().add(base), job.out_normals.as_mut_ptr().add(base))
            } else {
                (std::ptr::null(), std::ptr::null_mut())
            };
            lbs_block::<B::V, NORMALS>(
                cols,
                job.positions.as_ptr().add(base).cast(),
                job.out_positions.as_mut_ptr().add(base).cast(),
                nin.cast(),
                nout.cast(),
            )
        };
        if odd != 0 {
            fix_lanes(&mut job, base, odd);
        }
    }
    portable::range(&mut job, blocks * lanes..n);
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

/// Whether every influence in `range` has a weight > 0 and a joint below `palette`. Written
/// without early exits so that it compiles to a few vector compares inside the kernels.
#[inline(always)]
pub(crate) fn block_is_simple(influences: Inf<'_>, range: std::ops::Range<usize>, palette: usize) -> bool {
    let positive = influences.weights[range.clone()]
        .as_flattened()
        .iter()
        .fold(true, |all, &w| all & (w > 0.0));
    let highest = influences.joints[range]
        .as_flattened()
        .iter()
        .fold(0, |max, &j| max.max(j));
    positive && usize::from(highest) < palette
}
