//! Fast linear blend skinning: the same results as [`skin_lbs_reference`](super::skin_lbs_reference)
//! up to rounding, at a fraction of its cost.
//!
//! Slices in, slices out; no allocation, no locks, no state. Three kernels, chosen at run time
//! with `is_x86_feature_detected!` ([`Kernel::detect`]):
//!
//! - **AVX-512** ([`avx512`], x86-64): blocks of sixteen vertices. A whole 4×4 palette matrix fits
//!   one 16-lane register, so blending costs one fused multiply-add per influence; the sixteen
//!   blended matrices are transposed into structure-of-arrays form (one register per element,
//!   sixteen vertices per register) and the rest is the AVX2 kernel's math at twice the width;
//!   positions without normals are transformed as the AVX2 kernel does, from the matrix's
//!   two 256-bit halves.
//! - **AVX2 + FMA** ([`avx2`], x86-64): blocks of eight. Each vertex's palette matrices are
//!   blended as two 8-wide registers (columns 0–1 and 2–3), then transposed likewise; positions,
//!   the cofactor normal matrix, its determinant's sign and the normalization are computed eight
//!   vertices at a time. Positions without normals skip the transpose: each vertex's point is
//!   transformed as soon as its matrix is blended, the two column pairs multiplied by
//!   `(x | y)` and `(z | 1)` and the halves added.
//!
//!   In both, a vertex's four weights are one load, each spread over the lanes by an in-lane
//!   shuffle (the blend is bound by loads, not by shuffles), and a block is finished (transpose
//!   and the rest) only after the next one is blended, so that the finish's chain of dependent
//!   steps overlaps the next blend's independent work.
//!
//!   In both, validity (weights > 0, joints inside the palette) is checked once per block; a
//!   block that fails it blends each vertex with the reference's checks (zero weights and joints
//!   outside the palette skipped, identity when nothing is left).
//! - **Portable** ([`portable`], any CPU): blocks of four in glam's `Vec4` (SSE2 on x86-64,
//!   NEON on AArch64) through the same block loop and lane math, the blend and the position
//!   transform with the one-vertex path's operations in its order, so that positions have its
//!   bits; and that one-vertex path, for the last `len % block` vertices of every kernel, more
//!   than two influence sets, and the rare normals whose length is zero, subnormal or not
//!   finite.
//!
//! [`skin_lbs`] and [`skin_lbs_positions`] run the widest of these the CPU has
//! ([`Kernel::detect`]), as the dual quaternion and palette kernels do: chosen by the features,
//! not by timing, because a timed choice between kernels a few percent apart depends on what
//! else the machine is doing and can differ from one start to the next.
//!
//! [`skin_lbs_parallel`] splits large meshes over threads, each running the same kernel on a
//! run of whole blocks.

use super::{ShapeError, check_shape};
pub use crate::rig::Inf;
use crate::rig::Influences;
use glam::{Mat4, Vec3};

/// `$v` unchanged, but out of the optimizer's sight: a shuffle of a loaded register would
/// otherwise be folded back into one broadcast load per lane, the kernels' scarcest resource.
/// `$class` is the register class (`ymm_reg`, `zmm_reg`), which the calling function's target
/// features must provide. Expands to an `unsafe` operation: the empty instruction sequence it
/// runs claims to rewrite one register and reads or writes no memory, flags or stack, so it is
/// sound wherever the register class is available.
#[cfg(target_arch = "x86_64")]
macro_rules! opaque {
    ($v:expr, $class:ident) => {{
        let mut v = $v;
        std::arch::asm!("/* {0} */", inout($class) v, options(pure, nomem, nostack, preserves_flags));
        v
    }};
}

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512;
pub(crate) mod block;
pub(crate) mod lanes;
pub mod portable;
#[cfg(test)]
pub(crate) mod tests;

pub use crate::cpu::Kernel;

/// One call's slices, checked by [`Job::new`] to cover `positions.len()` vertices and cut to
/// exactly that many; `normals` and `out_normals` are empty for positions only. The fields are
/// private so that no job reaches a kernel without that check: the SIMD kernels read and write
/// whole blocks through raw pointers on its strength. A job cannot be built around the check:
///
/// ```compile_fail
/// use rigscope::skin::fast::{Inf, Job};
/// let (positions, mut out) = ([glam::Vec3::ZERO; 16], [glam::Vec3::ZERO; 1]);
/// let influences = Inf { sets: 1, joints: &[[0; 4]; 16], weights: &[[1.0, 0.0, 0.0, 0.0]; 16] };
/// let job = Job { palette: &[], influences, positions: &positions, normals: &[], out_positions: &mut out, out_normals: &mut [] };
/// ```
pub struct Job<'a> {
    palette: &'a [Mat4],
    influences: Inf<'a>,
    positions: &'a [Vec3],
    normals: &'a [Vec3],
    out_positions: &'a mut [Vec3],
    out_normals: &'a mut [Vec3],
    /// Whether the whole call's outputs are large enough to stream ([`STREAM_MIN_BYTES`]),
    /// kept by the runs [`Job::split_at`] cuts.
    stream: bool,
}

/// Outputs of at least this many bytes are written with streaming stores by the kernels that
/// have them (AVX-512): larger than this machine class's share of the last-level cache, they
/// would not be read from it again, and streaming saves reading each line before writing it
/// (a third of the traffic of skinning with normals from f32 influences). Smaller outputs
/// stay cached for whoever reads them next.
pub const STREAM_MIN_BYTES: usize = 8 << 20;

/// Whether a call that writes `vertices` positions (and as many normals when `normals`)
/// streams them.
fn streams(vertices: usize, normals: bool) -> bool {
    let outputs = if normals { 2 } else { 1 };
    vertices.saturating_mul(outputs * std::mem::size_of::<Vec3>()) >= STREAM_MIN_BYTES
}

impl<'a> Job<'a> {
    /// Checks that every slice covers `positions.len()` vertices and cuts each to that many.
    /// Joints outside the palette are not an error: the kernels skip them, as the reference does.
    pub fn new(
        palette: &'a [Mat4],
        influences: Inf<'a>,
        positions: &'a [Vec3],
        normals: Option<(&'a [Vec3], &'a mut [Vec3])>,
        out_positions: &'a mut [Vec3],
    ) -> Result<Job<'a>, ShapeError> {
        let n = positions.len();
        let normal_lengths = normals.as_ref().map(|(input, output)| (input.len(), output.len()));
        check_shape(n, influences, normal_lengths, out_positions.len())?;
        let per_vertex = n * influences.sets;
        let (normals, out_normals) = match normals {
            Some((input, output)) => (&input[..n], &mut output[..n]),
            None => (&[][..], &mut [][..]),
        };
        let stream = streams(n, !normals.is_empty());
        Ok(Job {
            palette,
            stream,
            influences: Inf {
                sets: influences.sets,
                joints: &influences.joints[..per_vertex],
                weights: &influences.weights[..per_vertex],
            },
            positions,
            normals,
            out_positions: &mut out_positions[..n],
            out_normals,
        })
    }

    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    pub fn with_normals(&self) -> bool {
        !self.normals.is_empty()
    }

    /// The first `mid` vertices and the rest, as two jobs.
    pub fn split_at(self, mid: usize) -> (Job<'a>, Job<'a>) {
        let sets = self.influences.sets;
        let (j0, j1) = self.influences.joints.split_at(mid * sets);
        let (w0, w1) = self.influences.weights.split_at(mid * sets);
        let (p0, p1) = self.positions.split_at(mid);
        let (op0, op1) = self.out_positions.split_at_mut(mid);
        let normals = mid.min(self.normals.len());
        let (n0, n1) = self.normals.split_at(normals);
        let (on0, on1) = self.out_normals.split_at_mut(normals);
        let stream = self.stream;
        let half = |joints, weights, positions, normals, out_positions, out_normals| Job {
            palette: self.palette,
            stream,
            influences: Inf { sets, joints, weights },
            positions,
            normals,
            out_positions,
            out_normals,
        };
        (half(j0, w0, p0, n0, op0, on0), half(j1, w1, p1, n1, op1, on1))
    }

    /// Skins every vertex with `kernel` (the portable one when `kernel` is not available here).
    pub fn run(self, kernel: Kernel) {
        #[cfg(target_arch = "x86_64")]
        if matches!(self.influences.sets, 1 | 2) && kernel.is_available() {
            match kernel {
                // SAFETY: the CPU has AVX-512 F and BW, AVX2 and FMA (`is_available` just
                // above); the job holds 1 or 2 sets (matched above); a `Job` exists only as
                // `Job::new` or `split_at` made it, every slice cut to its vertices.
                Kernel::Avx512 => return unsafe { avx512::skin(self) },
                // SAFETY: AVX2 and FMA are available (`is_available` above); the sets and the
                // slices as for AVX-512.
                Kernel::Avx2Fma => return unsafe { avx2::skin(self) },
                Kernel::Portable => {}
            }
        }
        let _ = kernel;
        portable::skin(self);
    }
}

/// Skins positions and normals with linear blend skinning (see the reference for the rules:
/// joints outside the palette and zero weights are ignored, a vertex with no weight left keeps
/// its bind pose; normals use the sign-corrected cofactor of the blended 3×3 and are normalized).
///
/// # Panics
/// When the output slices, `normals` or `influences` are shorter than `positions`.
pub fn skin_lbs(
    palette: &[Mat4],
    influences: &Influences,
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    skin_lbs_with(
        Kernel::detect(),
        palette,
        influences,
        positions,
        Some((normals, out_normals)),
        out_positions,
    );
}

/// [`skin_lbs`] for positions only.
pub fn skin_lbs_positions(palette: &[Mat4], influences: &Influences, positions: &[Vec3], out_positions: &mut [Vec3]) {
    skin_lbs_with(Kernel::detect(), palette, influences, positions, None, out_positions);
}

/// [`skin_lbs_positions`] with the portable path's arithmetic in its order (a multiply, then an
/// add; no fused multiply-add), so that the positions have the same bits on every CPU: for
/// results that must not depend on the machine (the range-of-motion audit). Eight vertices at
/// a time where AVX2 is available.
///
/// # Panics
/// When `out_positions` or `influences` are shorter than `positions`.
pub fn skin_lbs_positions_exact(
    palette: &[Mat4],
    influences: &Influences,
    positions: &[Vec3],
    out_positions: &mut [Vec3],
) {
    let job = checked_job(palette, influences, positions, None, out_positions);
    #[cfg(target_arch = "x86_64")]
    if matches!(job.influences.sets, 1 | 2) && Kernel::Avx2Fma.is_available() {
        // SAFETY: AVX2 and FMA are available (checked just above), the job holds 1 or 2 sets
        // and no normals, and `checked_job` cut every slice to its vertices.
        return unsafe { avx2::skin_exact(job) };
    }
    portable::skin(job);
}

/// [`skin_lbs`] with a chosen kernel (falls back to the portable one when `kernel` is not
/// available on this CPU). `normals` is `(input, output)`, or `None` for positions only.
pub fn skin_lbs_with(
    kernel: Kernel,
    palette: &[Mat4],
    influences: &Influences,
    positions: &[Vec3],
    normals: Option<(&[Vec3], &mut [Vec3])>,
    out_positions: &mut [Vec3],
) {
    checked_job(palette, influences, positions, normals, out_positions).run(kernel);
}

/// The job of one of the slice-taking entry points, whose documented contract is to panic on
/// slices that do not cover every vertex.
fn checked_job<'a>(
    palette: &'a [Mat4],
    influences: &'a Influences,
    positions: &'a [Vec3],
    normals: Option<(&'a [Vec3], &'a mut [Vec3])>,
    out_positions: &'a mut [Vec3],
) -> Job<'a> {
    Job::new(palette, Inf::of(influences), positions, normals, out_positions).unwrap_or_else(|e| panic!("{e}"))
}

/// Every vertex transformed by one matrix (normals by its sign-corrected cofactor, normalized;
/// `normals` empty for positions only): the same memory traffic as skinning without any
/// blending, the floor the kernels are measured against (`cargo bench --bench skinning`,
/// `rigscope bench`).
pub fn static_transform(m: &Mat4, positions: &[Vec3], normals: &[Vec3], out_p: &mut [Vec3], out_n: &mut [Vec3]) {
    for (o, p) in out_p.iter_mut().zip(positions) {
        *o = m.transform_point3(*p);
    }
    if !normals.is_empty() {
        let nm = super::normal_matrix(m);
        for (o, n) in out_n.iter_mut().zip(normals) {
            *o = (nm * *n).normalize_or_zero();
        }
    }
}

/// Below this many vertices per thread, handing a run to another thread costs more than it
/// saves (measured by the threads table of `cargo bench --bench skinning`).
pub const MIN_VERTICES_PER_THREAD: usize = 32_768;

/// How many runs [`skin_lbs_parallel`] splits `vertices` vertices into when asked for
/// `threads`: that many, or with 0 as many as rayon's pool has threads but none that would get
/// fewer than [`MIN_VERTICES_PER_THREAD`] vertices.
pub fn threads_for(vertices: usize, threads: usize) -> usize {
    if threads > 0 {
        return threads;
    }
    rayon::current_num_threads()
        .min(vertices / MIN_VERTICES_PER_THREAD)
        .max(1)
}

/// [`skin_lbs_with`] split into runs of whole blocks (see [`threads_for`]; 0 picks the count)
/// on rayon's pool, whose threads are started once per process; the calling thread takes the
/// last run itself.
pub fn skin_lbs_parallel(
    kernel: Kernel,
    threads: usize,
    palette: &[Mat4],
    influences: &Influences,
    positions: &[Vec3],
    normals: Option<(&[Vec3], &mut [Vec3])>,
    out_positions: &mut [Vec3],
) {
    let job = checked_job(palette, influences, positions, normals, out_positions);
    let threads = threads_for(job.len(), threads);
    if threads <= 1 {
        return job.run(kernel);
    }
    // Whole blocks of the widest kernel per run: only the last run has a tail.
    let chunk = job.len().div_ceil(threads).div_ceil(16) * 16;
    rayon::scope(|scope| {
        let mut rest = job;
        while rest.len() > chunk {
            let (run, tail) = rest.split_at(chunk);
            scope.spawn(move |_| run.run(kernel));
            rest = tail;
        }
        rest.run(kernel);
    });
}
