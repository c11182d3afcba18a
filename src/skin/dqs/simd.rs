//! Dual quaternion skinning eight (AVX2) or sixteen (AVX-512) vertices at a time, in
//! structure-of-arrays form: per influence, the joints' quaternions are read as rows of four
//! floats and transposed into one register per element, then the antipodality test, the blend,
//! the normalization and both rotations run across the lanes. A block whose weights are not
//! sorted heaviest first, or that names a joint outside the palette, is blended from a copy
//! with the influences the reference skips taken out. Vertices whose blended rotation is zero,
//! whose weights cancel, and normals whose length is not normal go through the reference's
//! per-vertex code; so does everything when the palette is not finite.

use super::{DualQuat, dqs_vertex};
use crate::skin::fast::lanes::{Lanes, V3, cross, normalize};
use crate::skin::fast::{Inf, Kernel};
use crate::skin::{ShapeError, check_shape};
use glam::Vec3;
use std::arch::x86_64::{__m256, __m512};

/// Skins every vertex with `kernel`, or hands `job` back untouched when the kernel does not
/// apply (not available here, the portable one, or neither 1 nor 2 influence sets).
pub(super) fn skin<'a, 'b>(kernel: Kernel, job: Job<'a, 'b>) -> Result<(), Job<'a, 'b>> {
    if !matches!(job.influences.sets, 1 | 2) || !kernel.is_available() {
        return Err(job);
    }
    match kernel {
        // SAFETY: the CPU has AVX-512 F and BW, AVX2 and FMA (`is_available`); 1 or 2 sets
        // (matched above); `Job::new` checked that every slice covers the vertices.
        Kernel::Avx512 => unsafe { skin_avx512(job) },
        // SAFETY: the CPU has AVX2 and FMA (`is_available`); the sets and slices as above.
        Kernel::Avx2Fma => unsafe { skin_avx2(job) },
        Kernel::Portable => return Err(job),
    }
    Ok(())
}

/// One call's slices, every one covering `positions.len()` vertices (`normals` and
/// `out_normals` empty for positions only): private, so that only [`Job::new`]'s check makes
/// one, since the kernels read and write through raw pointers.
pub(super) struct Job<'a, 'b> {
    palette: &'a [DualQuat],
    influences: Inf<'a>,
    positions: &'a [Vec3],
    normals: &'a [Vec3],
    out_positions: &'b mut [Vec3],
    out_normals: &'b mut [Vec3],
}

impl<'a, 'b> Job<'a, 'b> {
    /// The slices cut to `positions.len()` vertices, or why they cannot be.
    pub(super) fn new(
        palette: &'a [DualQuat],
        influences: Inf<'a>,
        positions: &'a [Vec3],
        normals: Option<(&'a [Vec3], &'b mut [Vec3])>,
        out_positions: &'b mut [Vec3],
    ) -> Result<Job<'a, 'b>, ShapeError> {
        let n = positions.len();
        let normal_lengths = normals.as_ref().map(|(input, output)| (input.len(), output.len()));
        check_shape(n, influences, normal_lengths, out_positions.len())?;
        let (normals, out_normals) = match normals {
            Some((input, output)) => (&input[..n], &mut output[..n]),
            None => (&[][..], &mut [][..]),
        };
        Ok(Job {
            palette,
            influences: influences.vertices(0..n),
            positions,
            normals,
            out_positions: &mut out_positions[..n],
            out_normals,
        })
    }

    fn with_normals(&self) -> bool {
        !self.normals.is_empty()
    }

    /// Vertices `range` with the reference's code (every vertex, for a job no kernel took).
    pub(super) fn reference(&mut self, range: std::ops::Range<usize>) {
        let with_normals = self.with_normals();
        for v in range {
            let normal = if with_normals { self.normals[v] } else { Vec3::ZERO };
            let (position, normal) = dqs_vertex(self.palette, self.influences, v, self.positions[v], normal);
            self.out_positions[v] = position;
            if with_normals {
                self.out_normals[v] = normal;
            }
        }
    }

    /// The vertices of the block at `base` whose bit is set in `lanes`, with the reference's code.
    #[cold]
    #[inline(never)]
    fn fix_lanes(&mut self, base: usize, lanes: u32) {
        for lane in 0..32 {
            if lanes & (1 << lane) != 0 {
                self.reference(base + lane..base + lane + 1);
            }
        }
    }
}

/// The most lanes a kernel has (AVX-512).
const MAX_LANES: usize = 16;

fn all_finite(palette: &[DualQuat]) -> bool {
    palette
        .iter()
        .all(|dq| dq.real.is_finite() && dq.dual.is_finite() && dq.scale.is_finite())
}

/// Room for a block's influences with the reference's skipped ones taken out (see `compact`).
struct Compacted {
    joints: [u16; MAX_LANES * 8],
    weights: [f32; MAX_LANES * 8],
}

impl Default for Compacted {
    fn default() -> Self {
        Compacted {
            joints: [0; MAX_LANES * 8],
            weights: [0.0; MAX_LANES * 8],
        }
    }
}

impl Compacted {
    /// The joints and weights the block of `V::LANES` vertices at `base` blends (`SETS · 4`
    /// slots a vertex, joints inside the palette) and how many slots it uses: the job's own
    /// when every weight is ≥ 0 with each vertex's first > 0 (the first influence is then the
    /// reference's pivot and zero weights add nothing), else a compacted copy held here.
    ///
    /// # Safety
    /// `V`'s features; `base + V::LANES` is at most the job's vertex count; `SETS` influence
    /// sets per vertex.
    #[inline(always)]
    unsafe fn block<V: Lanes, const SETS: usize>(
        &mut self,
        job: &Job<'_, '_>,
        base: usize,
    ) -> (*const u16, *const f32, usize) {
        let range = base * SETS..(base + V::LANES) * SETS;
        // SAFETY: `V`'s features are this function's contract.
        match unsafe { V::block_slots::<SETS>(job.influences, range, job.palette.len()) } {
            // SAFETY: `base + LANES` is inside the vertices and the influences cover them.
            Some(slots) => unsafe {
                (
                    job.influences.joints.as_ptr().add(base * SETS) as *const u16,
                    job.influences.weights.as_ptr().add(base * SETS) as *const f32,
                    slots,
                )
            },
            None => {
                let slots = compact::<SETS>(job, base..base + V::LANES, &mut self.joints, &mut self.weights);
                (self.joints.as_ptr(), self.weights.as_ptr(), slots)
            }
        }
    }
}

/// The influences of the vertices `range` as the reference uses them, `per` slots a vertex
/// into `joints` and `weights`: zero weights and joints outside the palette left out, the rest
/// moved to the front in their order, then zeros on joint 0. The first slot is then the
/// reference's pivot, and the blend adds the same terms in the same order. A vertex with no
/// influence left blends to zero and goes to the reference. Returns the most slots a vertex
/// uses (at least 1): the blend stops there.
fn compact<const SETS: usize>(
    job: &Job<'_, '_>,
    range: std::ops::Range<usize>,
    joints: &mut [u16],
    weights: &mut [f32],
) -> usize {
    let per = SETS * 4;
    let palette = job.palette.len();
    let mut most = 1;
    for (lane, v) in range.enumerate() {
        let (joints, weights) = (&mut joints[lane * per..][..per], &mut weights[lane * per..][..per]);
        let joints_in = job.influences.joints[v * SETS..(v + 1) * SETS].as_flattened();
        let weights_in = job.influences.weights[v * SETS..(v + 1) * SETS].as_flattened();
        // Each influence is written at the next free slot, which moves on only when it is
        // kept; the slots after the kept ones are then zeroed. No branch on the data, and no
        // call to `memset` for a few bytes.
        let mut kept = 0;
        for (&joint, &weight) in joints_in.iter().zip(weights_in) {
            let at = kept.min(per - 1);
            joints[at] = joint;
            weights[at] = weight;
            kept += usize::from(weight != 0.0 && usize::from(joint) < palette);
        }
        for slot in 0..per {
            let live = slot < kept;
            joints[slot] *= u16::from(live);
            weights[slot] = if live { weights[slot] } else { 0.0 };
        }
        most = most.max(kept);
    }
    most
}

/// # Safety
/// AVX2 and FMA; every slice of `job` covers its vertices; 1 or 2 influence sets.
#[target_feature(enable = "avx2,fma")]
unsafe fn skin_avx2(job: Job<'_, '_>) {
    // SAFETY: this function's contract.
    unsafe {
        match job.influences.sets {
            1 => run::<__m256, 1>(job),
            _ => run::<__m256, 2>(job),
        }
    }
}

/// # Safety
/// AVX-512 F and BW, AVX2 and FMA; every slice of `job` covers its vertices; 1 or 2 sets.
#[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
unsafe fn skin_avx512(job: Job<'_, '_>) {
    // SAFETY: this function's contract.
    unsafe {
        match job.influences.sets {
            1 => run::<__m512, 1>(job),
            _ => run::<__m512, 2>(job),
        }
    }
}

/// `q`'s rotation applied to `v`: `v + 2·a × (a × v + w·v)` with `a = q.xyz`, as the reference.
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
unsafe fn rotate<V: Lanes>([x, y, z, w]: [V; 4], v: V3<V>) -> V3<V> {
    // SAFETY: this function's contract.
    unsafe {
        let a = [x, y, z];
        let inner = cross(a, v);
        let inner = [
            w.mul_add(v[0], inner[0]),
            w.mul_add(v[1], inner[1]),
            w.mul_add(v[2], inner[2]),
        ];
        let outer = cross(a, inner);
        let two = V::splat(2.0);
        [
            outer[0].mul_add(two, v[0]),
            outer[1].mul_add(two, v[1]),
            outer[2].mul_add(two, v[2]),
        ]
    }
}

/// The weighted sums of a block's dual quaternions (each turned to the first one's
/// hemisphere), of their scales, and of the weights, from the first `slots` of the `per` slots
/// of each lane at `joints` and `weights`. `EXACT` adds each product unfused in the reference's
/// order (glam's `Vec4::dot` for the hemisphere test), so positions keep the reference's bits;
/// otherwise products are fused.
///
/// # Safety
/// `V`'s features; `joints` and `weights` hold `per` slots for each of `V::LANES` lanes, with
/// joints inside the palette at `pal` (12 floats each: real, dual, scale).
#[inline(always)]
unsafe fn accumulate<V: Lanes, const EXACT: bool>(
    pal: *const f32,
    joints: *const u16,
    weights: *const f32,
    per: usize,
    slots: usize,
) -> ([V; 4], [V; 4], [V; 3], V) {
    // SAFETY: this function's contract.
    unsafe {
        // Floats of joint `k` of lane `i`'s dual quaternion, from `offset` (0 real, 4 dual,
        // 8 scale).
        let row =
            |k: usize, offset: usize| move |i: usize| pal.add(usize::from(*joints.add(i * per + k)) * 12 + offset);
        // Accumulators start at +0 and so never become -0: the zero-weight slots a block adds
        // beyond a vertex's own influences leave every sum's bits as they were.
        let mut real = [V::splat(0.0); 4];
        let mut dual = real;
        let mut pivot = real;
        let (mut scale, mut total) = ([V::splat(0.0); 3], V::splat(0.0));
        for set in 0..slots.div_ceil(4) {
            let w = V::gather4(|i| weights.add(i * per + set * 4));
            for (slot, &weight) in w.iter().enumerate().take(slots - set * 4) {
                let k = set * 4 + slot;
                let r = V::gather4(row(k, 0));
                let d = V::gather4(row(k, 4));
                let s = V::gather4(row(k, 8));
                if k == 0 {
                    pivot = r;
                }
                let dot = if EXACT {
                    dot4_exact(r, pivot)
                } else {
                    r[0].mul_add(
                        pivot[0],
                        r[1].mul_add(pivot[1], r[2].mul_add(pivot[2], r[3].mul(pivot[3]))),
                    )
                };
                let signed = weight.xor(dot.sign_where_negative());
                for e in 0..4 {
                    if EXACT {
                        real[e] = real[e].add(r[e].mul(signed));
                        dual[e] = dual[e].add(d[e].mul(signed));
                    } else {
                        real[e] = r[e].mul_add(signed, real[e]);
                        dual[e] = d[e].mul_add(signed, dual[e]);
                    }
                }
                for e in 0..3 {
                    scale[e] = if EXACT {
                        scale[e].add(s[e].mul(weight))
                    } else {
                        s[e].mul_add(weight, scale[e])
                    };
                }
                total = total.add(weight);
            }
        }
        (real, dual, scale, total)
    }
}

/// # Safety
/// `V`'s features; every slice of `job` covers its vertices; `SETS` influence sets per vertex.
#[inline(always)]
unsafe fn run<V: Lanes, const SETS: usize>(mut job: Job<'_, '_>) {
    let lanes = V::LANES;
    let per = SETS * 4;
    let n = job.positions.len();
    let blocks = n / lanes;
    // A zero weight adds exactly nothing only to finite dual quaternions; an empty palette
    // leaves every vertex in its bind pose, which the reference does.
    let finite = !job.palette.is_empty() && all_finite(job.palette);
    let mut compacted = Compacted::default();
    for block in 0..blocks {
        let base = block * lanes;
        if !finite {
            job.reference(base..base + lanes);
            continue;
        }
        // SAFETY: `base + lanes <= n`; `V`'s features are this function's contract.
        let (joints, weights, slots) = unsafe { compacted.block::<V, SETS>(&job, base) };
        // SAFETY: `base + lanes <= n` and every slice covers `n` vertices, so every pointer
        // below reads or writes inside its slice; `joints` and `weights` hold `per` slots for
        // each of the block's vertices, with joints inside the palette (`block_slots`, or
        // `compact`); the features are this function's contract. The output pointers are taken
        // afresh each block, after the fix-ups borrowed the slices.
        let odd = unsafe {
            let pal = job.palette.as_ptr() as *const f32;
            let (mut real, mut dual, scale, total) = accumulate::<V, false>(pal, joints, weights, per, slots);
            let len = real[0]
                .mul_add(
                    real[0],
                    real[1].mul_add(real[1], real[2].mul_add(real[2], real[3].mul(real[3]))),
                )
                .sqrt();
            let zero = len.is_zero();
            // One division, eight multiplies: a division costs several multiplies' time, and
            // the extra rounding stays near 1e-7 relative.
            let inverse = V::splat(1.0).div(len);
            for e in 0..4 {
                real[e] = real[e].mul(inverse);
                dual[e] = dual[e].mul(inverse);
            }
            let (r, rw, d, dw) = (
                [real[0], real[1], real[2]],
                real[3],
                [dual[0], dual[1], dual[2]],
                dual[3],
            );
            let rd = cross(r, d);
            let two = V::splat(2.0);
            let mut translation = rd;
            for e in 0..3 {
                translation[e] = rw.mul_sub(d[e], dw.mul(r[e])).add(rd[e]).mul(two);
            }
            // Weights that cancel (negative ones) leave the scale to the reference.
            let cancelled = total.is_zero();
            let scale = scale.map(|s| s.div(total));
            let p = V::load3(job.positions.as_ptr().add(base) as *const f32);
            let moved = rotate(real, [p[0].mul(scale[0]), p[1].mul(scale[1]), p[2].mul(scale[2])]);
            let moved = [
                moved[0].add(translation[0]),
                moved[1].add(translation[1]),
                moved[2].add(translation[2]),
            ];
            V::store3(job.out_positions.as_mut_ptr().add(base) as *mut f32, moved);
            if job.with_normals() {
                // Through R·S⁻¹, the inverse transpose of R·S.
                let n = V::load3(job.normals.as_ptr().add(base) as *const f32);
                let n = [n[0].div(scale[0]), n[1].div(scale[1]), n[2].div(scale[2])];
                let (unit, odd) = normalize(rotate(real, n));
                V::store3(job.out_normals.as_mut_ptr().add(base) as *mut f32, unit);
                odd | zero | cancelled
            } else {
                zero | cancelled
            }
        };
        if odd != 0 {
            job.fix_lanes(base, odd);
        }
    }
    job.reference(blocks * lanes..n);
}

mod exact;
use exact::dot4_exact;
pub(super) use exact::skin_exact;

#[cfg(test)]
mod tests;
