//! Weight blended skinning: per vertex, a blend `b` in [0, 1] from linear blend skinning (0) to
//! dual quaternion skinning (1), the hybrid Maya's skin cluster calls *weight blended* and
//! ufbx `UFBX_SKINNING_METHOD_BLENDED_DQ_LINEAR`. Like ufbx's `ufbx_get_skin_vertex_matrix`, a
//! vertex's transform is `(1 − b)·LBS + b·DQS` (the two methods' transforms as matrices), so its
//! position is the lerp of the LBS and DQS positions by `b`. Normals are the normalized lerp of
//! the two methods' normals (Maya recomputes normals from the deformed surface, so the file has
//! nothing to match; this keeps each method's own normal at `b` = 0 and 1).
//!
//! Where `b` comes from: the file (an FBX skin deformer's blend weights, [`FileSkinning`]) or a
//! DQS mask by joint, where `b` is a vertex's share of weight on the masked joints.

use crate::rig::{FileSkinning, Inf, Influences, Rig};
use crate::skin::{DualQuat, SkinnedPrimitive, dqs, fast};
use glam::{Mat4, Vec3};
use std::sync::atomic::{AtomicU64, Ordering};

/// Per mesh instance, per primitive: each vertex's blend toward dual quaternion skinning.
#[derive(Debug, Clone, PartialEq)]
pub struct DqsBlend {
    /// Per mesh instance, per primitive: `b` per vertex (empty, or shorter than the primitive:
    /// 0 for the vertices left out).
    per_primitive: Vec<Vec<Vec<f32>>>,
    /// Different for every blend made, so that a copy (on the GPU) can tell whether it is current.
    id: u64,
}

static BLENDS_MADE: AtomicU64 = AtomicU64::new(0);

/// DQS masks kept between runs: per skeleton (its [`crate::retarget::SkeletonSignature`]), the
/// masked joints' names.
pub type DqsMasks = std::collections::BTreeMap<String, Vec<String>>;

impl DqsBlend {
    fn new(per_primitive: Vec<Vec<Vec<f32>>>) -> DqsBlend {
        DqsBlend {
            per_primitive,
            id: BLENDS_MADE.fetch_add(1, Ordering::Relaxed) + 1,
        }
    }

    /// The blend the file gives (see [`FileSkinning::dqs_blend`]), per instance of its meshes.
    pub fn of_file(rig: &Rig) -> DqsBlend {
        let FileSkinning { dqs_blend, .. } = &rig.skinning;
        DqsBlend::new(
            rig.instances
                .iter()
                .map(|instance| dqs_blend.get(instance.mesh).cloned().unwrap_or_default())
                .collect(),
        )
    }

    /// The blend of a DQS mask: `b` of a vertex is the share of its weight (over the joints in
    /// its skin's palette) on the joints `masked` marks, by node (the mask's joints and their descendants,
    /// [`Rig::subtrees`]); 0 for a vertex without weight.
    pub fn of_mask(rig: &Rig, masked: &[bool]) -> DqsBlend {
        DqsBlend::new(
            rig.instances
                .iter()
                .map(|instance| {
                    let Some(skin) = instance.skin.and_then(|s| rig.skins.get(s)) else {
                        return Vec::new();
                    };
                    let masked_joints: Vec<bool> = skin
                        .joints
                        .iter()
                        .map(|&node| masked.get(node).copied().unwrap_or(false))
                        .collect();
                    rig.meshes[instance.mesh]
                        .primitives
                        .iter()
                        .map(|primitive| match &primitive.influences {
                            Some(influences) => mask_share(influences, &masked_joints, primitive.vertex_count()),
                            None => Vec::new(),
                        })
                        .collect()
                })
                .collect(),
        )
    }

    /// `b` per vertex of primitive `k` of mesh instance `i` (empty: 0 for every vertex).
    pub fn of(&self, i: usize, k: usize) -> &[f32] {
        self.per_primitive
            .get(i)
            .and_then(|p| p.get(k))
            .map_or(&[], Vec::as_slice)
    }

    /// Whether some vertex has a blend above 0.
    pub fn any(&self) -> bool {
        self.per_primitive.iter().flatten().flatten().any(|&b| b > 0.0)
    }

    pub fn id(&self) -> u64 {
        self.id
    }
}

/// Per vertex, the share of its weight on the joints `masked_joints` marks (by palette slot).
pub(crate) fn mask_share(influences: &Influences, masked_joints: &[bool], vertices: usize) -> Vec<f32> {
    (0..vertices)
        .map(|v| {
            let (mut on_mask, mut total) = (0.0f32, 0.0f32);
            for (joint, weight) in influences.of_vertex(v) {
                let Some(&masked) = masked_joints.get(joint as usize).filter(|_| weight != 0.0) else {
                    continue;
                };
                total += weight;
                if masked {
                    on_mask += weight;
                }
            }
            if total > 0.0 {
                (on_mask / total).clamp(0.0, 1.0)
            } else {
                0.0
            }
        })
        .collect()
}

/// Weight blended skinning of every vertex: linear blend skinning (the fast kernels) into the
/// outputs, then, over the runs of vertices that hold a blend above 0 (`blended_runs`), dual
/// quaternion skinning into `scratch` (grown to the primitive's size on first use, then
/// reused), mixed in by `blend`.
///
/// # Panics
/// When the output slices, `normals` or `influences` are shorter than `positions`.
#[allow(clippy::too_many_arguments)]
pub fn skin_blended(
    palette: &[Mat4],
    dual_quats: &[DualQuat],
    influences: &Influences,
    blend: &[f32],
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
    scratch: &mut SkinnedPrimitive,
) {
    fast::skin_lbs_parallel(
        fast::Kernel::detect(),
        0,
        palette,
        influences,
        positions,
        Some((normals, &mut *out_normals)),
        out_positions,
    );
    let n = positions.len();
    let blend = &blend[..blend.len().min(n)];
    let inf = Inf::of(influences);
    // Dual quaternions only where some vertex blends toward them: a mask or a file that blends
    // a limb leaves most of the mesh at 0.
    for run in blended_runs(blend) {
        if scratch.positions.len() < n {
            scratch.positions.resize(n, Vec3::ZERO);
            scratch.normals.resize(n, Vec3::ZERO);
        }
        let (dqs_positions, dqs_normals) = (&mut scratch.positions[run.clone()], &mut scratch.normals[run.clone()]);
        dqs::skin_job(
            fast::Kernel::detect(),
            dual_quats,
            inf.vertices(run.clone()),
            &positions[run.clone()],
            Some((&normals[run.clone()], &mut *dqs_normals)),
            dqs_positions,
        );
        mix_toward(
            &blend[run.clone()],
            dqs_positions,
            dqs_normals,
            &mut out_positions[run.clone()],
            &mut out_normals[run],
        );
    }
}

/// Vertices per chunk of the blend that `blended_runs` tests at once.
const RUN_CHUNK: usize = 32;

/// Runs of whole chunks of [`RUN_CHUNK`] vertices (the last one cut to the blend's end) that
/// hold every vertex with a blend above 0: each chunk tested in one pass without an early exit,
/// which the compiler vectorizes, where a search vertex by vertex cost a third of the blended
/// path. A run's vertices at 0 are skinned but not mixed in.
fn blended_runs(blend: &[f32]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let chunks = blend.len().div_ceil(RUN_CHUNK);
    let blended = move |c: usize| {
        let chunk = &blend[c * RUN_CHUNK..((c + 1) * RUN_CHUNK).min(blend.len())];
        chunk.iter().fold(false, |any, &b| any | (b > 0.0))
    };
    let mut next = 0;
    std::iter::from_fn(move || {
        let start = (next..chunks).find(|&c| blended(c))?;
        let end = (start + 1..chunks).find(|&c| !blended(c)).unwrap_or(chunks);
        next = end;
        Some(start * RUN_CHUNK..(end * RUN_CHUNK).min(blend.len()))
    })
}

/// Moves each vertex of `out_*` toward the dual quaternion result by its blend: positions
/// linearly, normals by normalized lerp. Vertices whose blend is not above 0 (or NaN) are left
/// as they are. With AVX2 or AVX-512, blocks of eight or sixteen vertices that all blend are
/// mixed at once (normals to about 2e-7 of unit length); the rest one at a time.
pub fn mix_toward(
    blend: &[f32],
    dqs_positions: &[Vec3],
    dqs_normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    let n = blend
        .len()
        .min(dqs_positions.len())
        .min(dqs_normals.len())
        .min(out_positions.len())
        .min(out_normals.len());
    let (blend, dqs_positions, dqs_normals) = (&blend[..n], &dqs_positions[..n], &dqs_normals[..n]);
    let (out_positions, out_normals) = (&mut out_positions[..n], &mut out_normals[..n]);
    #[cfg(target_arch = "x86_64")]
    let done = simd::mix(
        fast::Kernel::detect(),
        blend,
        dqs_positions,
        dqs_normals,
        out_positions,
        out_normals,
    );
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    for v in done..n {
        mix_vertex(
            blend[v],
            dqs_positions[v],
            dqs_normals[v],
            &mut out_positions[v],
            &mut out_normals[v],
        );
    }
}

/// One vertex of [`mix_toward`].
#[inline]
fn mix_vertex(b: f32, p: Vec3, n: Vec3, out_p: &mut Vec3, out_n: &mut Vec3) {
    if b > 0.0 {
        *out_p = mix_position(b, *out_p, p);
        *out_n = out_n.lerp(n, b).normalize_or_zero();
    }
}

/// A vertex's weight blended position from its LBS and DQS positions: their lerp by `b` (`b` in
/// (0, 1]; the caller keeps the LBS position where `b` is not above 0).
#[inline]
pub fn mix_position(b: f32, lbs: Vec3, dqs: Vec3) -> Vec3 {
    lbs.lerp(dqs, b)
}

/// [`mix_toward`] a register of vertices at a time.
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::mix_vertex;
    use crate::skin::fast::Kernel;
    use crate::skin::fast::lanes::{Lanes, normalize};
    use glam::Vec3;
    use std::arch::x86_64::{__m256, __m512};

    /// Mixes the whole blocks of the widest registers `kernel` has; returns how many vertices
    /// (from the first) it mixed. Every slice holds `blend.len()` vertices.
    pub(super) fn mix(
        kernel: Kernel,
        blend: &[f32],
        dqs_positions: &[Vec3],
        dqs_normals: &[Vec3],
        out_positions: &mut [Vec3],
        out_normals: &mut [Vec3],
    ) -> usize {
        let n = blend.len();
        assert!(dqs_positions.len() == n && dqs_normals.len() == n);
        assert!(out_positions.len() == n && out_normals.len() == n);
        let slices = (blend, dqs_positions, dqs_normals, out_positions, out_normals);
        match kernel {
            // SAFETY: the CPU has AVX-512 F and BW, AVX2 and FMA (`is_available`); the slices
            // hold `n` vertices each (asserted above).
            Kernel::Avx512 if kernel.is_available() => unsafe { mix_avx512(slices) },
            // SAFETY: the CPU has AVX2 and FMA (`is_available`); the slices as above.
            Kernel::Avx2Fma if kernel.is_available() => unsafe { mix_avx2(slices) },
            _ => 0,
        }
    }

    type Slices<'a> = (&'a [f32], &'a [Vec3], &'a [Vec3], &'a mut [Vec3], &'a mut [Vec3]);

    /// # Safety
    /// AVX-512 F and BW, AVX2 and FMA; every slice holds `blend.len()` vertices.
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
    unsafe fn mix_avx512(slices: Slices<'_>) -> usize {
        // SAFETY: this function's contract.
        unsafe { mix_blocks::<__m512>(slices) }
    }

    /// # Safety
    /// AVX2 and FMA; every slice holds `blend.len()` vertices.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn mix_avx2(slices: Slices<'_>) -> usize {
        // SAFETY: this function's contract.
        unsafe { mix_blocks::<__m256>(slices) }
    }

    /// # Safety
    /// The CPU has `V`'s features; every slice holds `blend.len()` vertices.
    #[inline(always)]
    unsafe fn mix_blocks<V: Lanes>((blend, dqs_p, dqs_n, out_p, out_n): Slices<'_>) -> usize {
        let lanes = V::LANES;
        let blocks = blend.len() / lanes;
        for block in 0..blocks {
            let r = block * lanes..(block + 1) * lanes;
            // SAFETY: `r` ends at most at `blend.len()`, which every slice holds, so each pointer
            // covers the block's `lanes` floats or vectors; the features are this function's
            // contract.
            let mixed = unsafe {
                mix_block::<V>(
                    blend[r.clone()].as_ptr(),
                    (dqs_p[r.clone()].as_ptr().cast(), dqs_n[r.clone()].as_ptr().cast()),
                    (
                        out_p[r.clone()].as_mut_ptr().cast(),
                        out_n[r.clone()].as_mut_ptr().cast(),
                    ),
                )
            };
            if !mixed {
                for v in r {
                    mix_vertex(blend[v], dqs_p[v], dqs_n[v], &mut out_p[v], &mut out_n[v]);
                }
            }
        }
        blocks * lanes
    }

    /// Mixes `LANES` vertices when every one of them blends (a blend above 0) and every mixed
    /// normal can be normalized in lanes; otherwise writes nothing and returns false.
    ///
    /// # Safety
    /// The CPU has `V`'s features; `blend` covers `LANES` floats, the other pointers `LANES`
    /// vectors.
    #[inline(always)]
    unsafe fn mix_block<V: Lanes>(
        blend: *const f32,
        (dqs_p, dqs_n): (*const f32, *const f32),
        (out_p, out_n): (*mut f32, *mut f32),
    ) -> bool {
        // SAFETY: this function's contract.
        unsafe {
            let b = V::load(blend);
            if b.outside(f32::from_bits(1), f32::INFINITY) != 0 {
                return false;
            }
            let keep = V::splat(1.0).sub(b);
            let (p, o) = (V::load3(dqs_p), V::load3(out_p));
            let position = [
                p[0].mul_add(b, o[0].mul(keep)),
                p[1].mul_add(b, o[1].mul(keep)),
                p[2].mul_add(b, o[2].mul(keep)),
            ];
            let (n, o) = (V::load3(dqs_n), V::load3(out_n));
            let (normal, odd) = normalize([
                n[0].mul_add(b, o[0].mul(keep)),
                n[1].mul_add(b, o[1].mul(keep)),
                n[2].mul_add(b, o[2].mul(keep)),
            ]);
            if odd != 0 {
                return false;
            }
            V::store3(out_p, position);
            V::store3(out_n, normal);
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skin::fast::tests::{Rng, influences, palette};
    use crate::skin::skin_dqs;

    /// Every kernel's mix agrees with the vertex-by-vertex one: blocks that all blend, blocks
    /// with vertices at 0, below 0 or NaN (left as they were), a blend past 1, normals that mix
    /// to zero or to a huge length, and a tail shorter than a block.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_kernel_mixes_as_the_vertex_by_vertex_mix() {
        let mut rng = Rng(0x5EED_B1E9);
        let n = 16 * 9 + 5;
        let mut blend: Vec<f32> = (0..n).map(|_| rng.range(0.05, 1.0)).collect();
        for (v, b) in [(17, 0.0), (18, -0.25), (40, f32::NAN), (64, 1.5), (100, -0.0)] {
            blend[v] = b;
        }
        let dqs_p: Vec<Vec3> = (0..n).map(|_| rng.vec3(3.0)).collect();
        let mut dqs_n: Vec<Vec3> = (0..n).map(|_| rng.vec3(1.0).normalize()).collect();
        let lbs_p: Vec<Vec3> = (0..n).map(|_| rng.vec3(3.0)).collect();
        let mut lbs_n: Vec<Vec3> = (0..n).map(|_| rng.vec3(1.0).normalize()).collect();
        // Opposite normals halfway: they mix to zero, which normalizes to zero.
        (lbs_n[90], dqs_n[90], blend[90]) = (Vec3::X, -Vec3::X, 0.5);
        (lbs_n[120], dqs_n[120], blend[120]) = (Vec3::splat(1e30), Vec3::splat(1e30), 0.5);
        let (mut want_p, mut want_n) = (lbs_p.clone(), lbs_n.clone());
        for v in 0..n {
            mix_vertex(blend[v], dqs_p[v], dqs_n[v], &mut want_p[v], &mut want_n[v]);
        }
        for kernel in fast::Kernel::ALL.into_iter().filter(|k| k.is_available()) {
            let (mut got_p, mut got_n) = (lbs_p.clone(), lbs_n.clone());
            let done = simd::mix(kernel, &blend, &dqs_p, &dqs_n, &mut got_p, &mut got_n);
            for v in done..n {
                mix_vertex(blend[v], dqs_p[v], dqs_n[v], &mut got_p[v], &mut got_n[v]);
            }
            for v in 0..n {
                let (p, q) = (got_p[v], want_p[v]);
                assert!(
                    (p - q).length() <= 1e-6 * q.length().max(1.0),
                    "{kernel:?} vertex {v}: {p} vs {q}"
                );
                let (m, k) = (got_n[v], want_n[v]);
                assert!((m - k).length() <= 1e-6, "{kernel:?} normal {v}: {m} vs {k}");
                let blends = blend[v] > 0.0;
                if !blends {
                    assert_eq!((p, m), (lbs_p[v], lbs_n[v]), "{kernel:?} vertex {v} is left as it was");
                }
            }
            assert_eq!(got_n[90], Vec3::ZERO, "{kernel:?}");
        }
    }

    #[test]
    fn runs_hold_every_chunk_with_a_blended_vertex() {
        let mut blend = vec![0.0f32; 300];
        for v in [3, 4, 20, 100, 140, 141, 299] {
            blend[v] = 0.5;
        }
        blend[200] = f32::NAN;
        let runs: Vec<_> = blended_runs(&blend).collect();
        // Chunks of 32: 0 (3, 4, 20), 3 and 4 (100; 140, 141) joined, 9 (299) cut at the end;
        // a NaN blends nothing.
        assert_eq!(runs, [0..32, 96..160, 288..300]);
        assert_eq!(blended_runs(&[0.0; 50]).count(), 0);
        assert_eq!(blended_runs(&[]).count(), 0);
        let whole: Vec<_> = blended_runs(&[1.0; 5]).collect();
        assert_eq!(whole.len(), 1);
        assert_eq!(whole[0], 0..5);
    }

    /// Skinning only the runs gives what dual quaternions over the whole primitive, mixed by
    /// the same blend, give.
    #[test]
    fn blending_by_runs_matches_dual_quaternions_over_every_vertex() {
        let mut rng = Rng(0xB1E9D);
        let n = 1000;
        let matrices = palette(&mut rng, 24);
        let mut dual_quats = vec![DualQuat::IDENTITY; matrices.len()];
        crate::anim::dual_quat::dual_quat_palette(&matrices, &mut dual_quats);
        let influences = influences(&mut rng, n, 1, 24);
        let positions: Vec<Vec3> = (0..n).map(|_| rng.vec3(2.0)).collect();
        let normals: Vec<Vec3> = (0..n).map(|_| rng.vec3(1.0).normalize()).collect();
        // Blocks blended and not, a few lone blended vertices, and a blend shorter than the mesh.
        let blend: Vec<f32> = (0..n - 7)
            .map(|v| match v {
                100..300 | 620..700 => 0.25 + (v % 4) as f32 * 0.25,
                v if v % 97 == 0 => 1.0,
                _ => 0.0,
            })
            .collect();
        let (mut got_p, mut got_n) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        let mut scratch = SkinnedPrimitive::default();
        skin_blended(
            &matrices,
            &dual_quats,
            &influences,
            &blend,
            &positions,
            &normals,
            &mut got_p,
            &mut got_n,
            &mut scratch,
        );
        let (mut want_p, mut want_n) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        fast::skin_lbs(&matrices, &influences, &positions, &normals, &mut want_p, &mut want_n);
        let (mut dqs_p, mut dqs_n) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        skin_dqs(&dual_quats, &influences, &positions, &normals, &mut dqs_p, &mut dqs_n);
        mix_toward(&blend, &dqs_p, &dqs_n, &mut want_p, &mut want_n);
        for v in 0..n {
            assert!(
                got_p[v].distance(want_p[v]) < 1e-5,
                "vertex {v}: {} vs {}",
                got_p[v],
                want_p[v]
            );
            assert!(
                got_n[v].distance(want_n[v]) < 1e-5,
                "normal {v}: {} vs {}",
                got_n[v],
                want_n[v]
            );
        }
        // A vertex at 0 keeps the LBS result.
        assert_eq!(got_p[50], want_p[50]);
    }
}
