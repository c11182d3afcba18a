//! The audit's dual quaternion kernel: the reference's arithmetic bit for bit, eight lanes at a
//! time.

use super::*;

/// Positions only, with the reference's own arithmetic across eight lanes: every operation of
/// [`dqs_vertex`] in its order (glam's `Vec4::dot` sums `(x + z) + (y + w)`), no fused
/// multiply-add and a true division, so each position has the reference's bits on every CPU
/// and results do not depend on which machine computed them. Hands `job` back when AVX2 is
/// missing, the sets are neither 1 nor 2, or normals are asked for.
pub(in crate::skin::dqs) fn skin_exact<'a, 'b>(job: Job<'a, 'b>) -> Result<(), Job<'a, 'b>> {
    if !matches!(job.influences.sets, 1 | 2) || job.with_normals() || !Kernel::Avx2Fma.is_available() {
        return Err(job);
    }
    // SAFETY: the CPU has AVX2 and FMA (`is_available`); 1 or 2 sets (matched above);
    // `Job::new` checked that every slice covers the vertices.
    unsafe { exact_avx2(job) };
    Ok(())
}

/// # Safety
/// AVX2 and FMA; every slice of `job` covers its vertices; 1 or 2 influence sets.
#[target_feature(enable = "avx2,fma")]
unsafe fn exact_avx2(job: Job<'_, '_>) {
    // SAFETY: this function's contract.
    unsafe {
        match job.influences.sets {
            1 => run_exact::<__m256, 1>(job),
            _ => run_exact::<__m256, 2>(job),
        }
    }
}

/// glam's `Vec4::dot` order: `(a.x·b.x + a.z·b.z) + (a.y·b.y + a.w·b.w)`.
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
pub(super) unsafe fn dot4_exact<V: Lanes>(a: [V; 4], b: [V; 4]) -> V {
    // SAFETY: this function's contract.
    unsafe {
        let xz = a[0].mul(b[0]).add(a[2].mul(b[2]));
        let yw = a[1].mul(b[1]).add(a[3].mul(b[3]));
        xz.add(yw)
    }
}

/// glam's `Vec3::cross`, unfused.
///
/// # Safety
/// See [`Lanes`].
#[inline(always)]
unsafe fn cross_exact<V: Lanes>(a: V3<V>, b: V3<V>) -> V3<V> {
    // SAFETY: this function's contract.
    unsafe {
        [
            a[1].mul(b[2]).sub(b[1].mul(a[2])),
            a[2].mul(b[0]).sub(b[2].mul(a[0])),
            a[0].mul(b[1]).sub(b[0].mul(a[1])),
        ]
    }
}

/// # Safety
/// `V`'s features; every slice of `job` covers its vertices; `SETS` influence sets per vertex;
/// no normals.
#[inline(always)]
unsafe fn run_exact<V: Lanes, const SETS: usize>(mut job: Job<'_, '_>) {
    let lanes = V::LANES;
    let per = SETS * 4;
    let n = job.positions.len();
    let blocks = n / lanes;
    // Zero weights the blocks add (see `run`) change nothing only with finite quaternions.
    if job.palette.is_empty() || !all_finite(job.palette) {
        job.reference(0..n);
        return;
    }
    let mut compacted = Compacted::default();
    for block in 0..blocks {
        let base = block * lanes;
        // SAFETY: `base + lanes <= n`; `V`'s features are this function's contract.
        let (joints, weights, slots) = unsafe { compacted.block::<V, SETS>(&job, base) };
        // SAFETY: as in `run`: every pointer reads or writes inside its slice, the joints are
        // inside the palette, and the features are this function's contract.
        let odd = unsafe {
            let pal = job.palette.as_ptr() as *const f32;
            let (mut real, mut dual, scale, total) = accumulate::<V, true>(pal, joints, weights, per, slots);
            let len = dot4_exact(real, real).sqrt();
            for e in 0..4 {
                real[e] = real[e].div(len);
                dual[e] = dual[e].div(len);
            }
            let (r, rw, d, dw) = (
                [real[0], real[1], real[2]],
                real[3],
                [dual[0], dual[1], dual[2]],
                dual[3],
            );
            let rd = cross_exact(r, d);
            let two = V::splat(2.0);
            let scale = scale.map(|s| s.div(total));
            let p = V::load3(job.positions.as_ptr().add(base) as *const f32);
            let v = [p[0].mul(scale[0]), p[1].mul(scale[1]), p[2].mul(scale[2])];
            // `v + 2·a × (a × v + w·v)`, then the translation `2·(w·d − dw·a + a × d)`.
            // Loops, not closures: a closure would not share this function's target features.
            let mut inner = cross_exact(r, v);
            for e in 0..3 {
                inner[e] = inner[e].add(rw.mul(v[e]));
            }
            let outer = cross_exact(r, inner);
            let mut moved = v;
            for e in 0..3 {
                let translation = rw.mul(d[e]).sub(dw.mul(r[e])).add(rd[e]).mul(two);
                moved[e] = v[e].add(outer[e].mul(two)).add(translation);
            }
            V::store3(job.out_positions.as_mut_ptr().add(base) as *mut f32, moved);
            // The reference keeps the bind pose where the rotation blends to zero, and the
            // scale 1 where the weights cancel.
            len.is_zero() | total.is_zero()
        };
        if odd != 0 {
            job.fix_lanes(base, odd);
        }
    }
    job.reference(blocks * lanes..n);
}
