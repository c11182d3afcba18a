//! Fast linear blend skinning: the same results as [`skin_lbs_reference`](super::skin_lbs_reference)
//! up to rounding, at a fraction of its cost.
//!
//! Slices in, slices out; no allocation, no locks, no state. Three kernels, chosen at run time
//! with `is_x86_feature_detected!` ([`Kernel::detect`]):
//!
//! - **AVX-512** ([`avx512`], x86-64): blocks of sixteen vertices. A whole 4×4 palette matrix fits
//!   one 16-lane register, so blending costs one fused multiply-add per influence; the sixteen
//!   blended matrices are transposed into structure-of-arrays form (one register per element,
//!   sixteen vertices per register) and the rest is the AVX2 kernel's math at twice the width.
//! - **AVX2 + FMA** ([`avx2`], x86-64): blocks of eight. Each vertex's palette matrices are
//!   blended as two 8-wide registers (columns 0–1 and 2–3), then transposed likewise; positions,
//!   the cofactor normal matrix, its determinant's sign and the normalization are computed eight
//!   vertices at a time.
//!
//!   In both, validity (weights > 0, joints inside the palette) is checked once per block; a
//!   block that fails it blends each vertex with the reference's checks (zero weights and joints
//!   outside the palette skipped, identity when nothing is left).
//! - **Portable** ([`portable`]): one vertex at a time; used on other CPUs, for the last
//!   `len % block` vertices, and for the rare normals whose length is zero, subnormal or not
//!   finite.
//!
//! [`skin_lbs`] and [`skin_lbs_positions`] run the one of these that [`calibrate::fastest`]
//! measured fastest on this CPU for the kind of job.
//!
//! [`skin_lbs_parallel`] splits large meshes over threads, each running the same kernel on a
//! run of whole blocks.

use crate::rig::Influences;
use glam::{Mat4, Vec3};

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod block;
pub mod calibrate;
#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes;
pub mod portable;
#[cfg(test)]
pub(crate) mod tests;

/// Which implementation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// One vertex at a time, any CPU.
    Portable,
    /// Eight vertices at a time with AVX2 and FMA (x86-64 only).
    Avx2Fma,
    /// Sixteen vertices at a time with AVX-512 F and BW (x86-64 only).
    Avx512,
}

impl Kernel {
    /// Every kernel, slowest first.
    pub const ALL: [Kernel; 3] = [Kernel::Portable, Kernel::Avx2Fma, Kernel::Avx512];

    /// The fastest kernel this CPU can run.
    pub fn detect() -> Kernel {
        Kernel::ALL
            .into_iter()
            .rev()
            .find(|k| k.is_available())
            .unwrap_or(Kernel::Portable)
    }

    pub fn is_available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                Kernel::Portable => true,
                Kernel::Avx2Fma => has!("avx2") && has!("fma"),
                Kernel::Avx512 => has!("avx512f") && has!("avx512bw") && has!("avx2") && has!("fma"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Kernel::Portable
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Avx2Fma => "AVX2+FMA",
            Kernel::Avx512 => "AVX-512",
        }
    }
}

/// A borrowed run of vertices' influences, `sets` groups of four per vertex (a view of
/// [`Influences`] that can be split between threads without copying).
#[derive(Debug, Clone, Copy)]
pub struct Inf<'a> {
    pub sets: usize,
    pub joints: &'a [[u16; 4]],
    pub weights: &'a [[f32; 4]],
}

impl<'a> Inf<'a> {
    pub fn of(influences: &'a Influences) -> Inf<'a> {
        Inf {
            sets: influences.sets,
            joints: &influences.joints,
            weights: &influences.weights,
        }
    }
}

/// One call's slices, checked once to cover `positions.len()` vertices; `normals` and
/// `out_normals` are empty for positions only.
pub struct Job<'a> {
    pub palette: &'a [Mat4],
    pub influences: Inf<'a>,
    pub positions: &'a [Vec3],
    pub normals: &'a [Vec3],
    pub out_positions: &'a mut [Vec3],
    pub out_normals: &'a mut [Vec3],
}

impl<'a> Job<'a> {
    /// Checks the lengths and cuts every slice to `positions.len()` vertices.
    ///
    /// # Panics
    /// When the output slices, `normals` or `influences` are shorter than `positions`.
    pub fn new(
        palette: &'a [Mat4],
        influences: Inf<'a>,
        positions: &'a [Vec3],
        normals: Option<(&'a [Vec3], &'a mut [Vec3])>,
        out_positions: &'a mut [Vec3],
    ) -> Job<'a> {
        let n = positions.len();
        assert!(out_positions.len() >= n, "out_positions is shorter than positions");
        let per_vertex = n * influences.sets;
        assert!(
            influences.joints.len() >= per_vertex && influences.weights.len() >= per_vertex,
            "influences do not cover every vertex"
        );
        let (normals, out_normals) = match normals {
            Some((input, output)) => {
                assert!(
                    input.len() >= n && output.len() >= n,
                    "normals are shorter than positions"
                );
                (&input[..n], &mut output[..n])
            }
            None => (&[][..], &mut [][..]),
        };
        Job {
            palette,
            influences: Inf {
                sets: influences.sets,
                joints: &influences.joints[..per_vertex],
                weights: &influences.weights[..per_vertex],
            },
            positions,
            normals,
            out_positions: &mut out_positions[..n],
            out_normals,
        }
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
        let half = |joints, weights, positions, normals, out_positions, out_normals| Job {
            palette: self.palette,
            influences: Inf { sets, joints, weights },
            positions,
            normals,
            out_positions,
            out_normals,
        };
        (half(j0, w0, p0, n0, op0, on0), half(j1, w1, p1, n1, op1, on1))
    }

    /// Skins every vertex with `kernel` (the portable one when `kernel` is not available here).
    pub fn run(mut self, kernel: Kernel) {
        #[cfg(target_arch = "x86_64")]
        if matches!(self.influences.sets, 1 | 2) && kernel.is_available() {
            match kernel {
                // SAFETY: the CPU has what the kernel needs (checked just above); `Job::new`
                // checked that every slice covers the vertices.
                Kernel::Avx512 => return unsafe { avx512::skin(self) },
                // SAFETY: as above.
                Kernel::Avx2Fma => return unsafe { avx2::skin(self) },
                Kernel::Portable => {}
            }
        }
        let _ = kernel;
        let n = self.len();
        portable::range(&mut self, 0..n);
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
        calibrate::fastest(influences.sets, true),
        palette,
        influences,
        positions,
        Some((normals, out_normals)),
        out_positions,
    );
}

/// [`skin_lbs`] for positions only.
pub fn skin_lbs_positions(palette: &[Mat4], influences: &Influences, positions: &[Vec3], out_positions: &mut [Vec3]) {
    skin_lbs_with(
        calibrate::fastest(influences.sets, false),
        palette,
        influences,
        positions,
        None,
        out_positions,
    );
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
    Job::new(palette, Inf::of(influences), positions, normals, out_positions).run(kernel);
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

/// Below this many vertices per thread, starting a thread costs more than it saves: two threads
/// lose at 32k vertices (0.88× one thread's speed) and win from 64k (1.2×, 1.7× at 256k) on a
/// 2-vCPU machine (`cargo bench --bench skinning`, summary's threads table).
pub const MIN_VERTICES_PER_THREAD: usize = 32_768;

/// How many threads [`skin_lbs_parallel`] uses for `vertices` vertices when asked for
/// `threads`: that many, or with 0 as many as the machine runs at once but none that would get
/// fewer than [`MIN_VERTICES_PER_THREAD`] vertices.
pub fn threads_for(vertices: usize, threads: usize) -> usize {
    if threads > 0 {
        return threads;
    }
    // Asked once: the answer reads the scheduler's affinity and cgroup limits, which costs
    // more than skinning a small mesh.
    static MACHINE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let machine = *MACHINE.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    machine.min(vertices / MIN_VERTICES_PER_THREAD).max(1)
}

/// [`skin_lbs_with`] split over threads (see [`threads_for`]; 0 picks the count), each skinning
/// a run of whole blocks; the calling thread takes the last run itself. Starting threads
/// allocates; the single-threaded functions do not.
pub fn skin_lbs_parallel(
    kernel: Kernel,
    threads: usize,
    palette: &[Mat4],
    influences: &Influences,
    positions: &[Vec3],
    normals: Option<(&[Vec3], &mut [Vec3])>,
    out_positions: &mut [Vec3],
) {
    let job = Job::new(palette, Inf::of(influences), positions, normals, out_positions);
    let threads = threads_for(job.len(), threads);
    if threads <= 1 {
        return job.run(kernel);
    }
    // Whole blocks of the widest kernel per run: only the last run has a tail.
    let chunk = job.len().div_ceil(threads).div_ceil(16) * 16;
    std::thread::scope(|scope| {
        let mut rest = job;
        while rest.len() > chunk {
            let (run, tail) = rest.split_at(chunk);
            scope.spawn(move || run.run(kernel));
            rest = tail;
        }
        rest.run(kernel);
    });
}
