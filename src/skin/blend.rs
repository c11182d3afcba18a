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

use crate::rig::{FileSkinning, Influences, Rig};
use crate::skin::fast;
use crate::skin::{DualQuat, SkinnedPrimitive, skin_dqs};
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
fn mask_share(influences: &Influences, masked_joints: &[bool], vertices: usize) -> Vec<f32> {
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
/// outputs, and, when some vertex has a blend above 0, dual quaternion skinning into `scratch`
/// (grown to the primitive's size on first use, then reused), mixed in by `blend`.
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
    if !blend.iter().take(n).any(|&b| b > 0.0) {
        return;
    }
    if scratch.positions.len() < n {
        scratch.positions.resize(n, Vec3::ZERO);
        scratch.normals.resize(n, Vec3::ZERO);
    }
    let (dqs_positions, dqs_normals) = (&mut scratch.positions[..n], &mut scratch.normals[..n]);
    skin_dqs(dual_quats, influences, positions, normals, dqs_positions, dqs_normals);
    mix_toward(blend, dqs_positions, dqs_normals, out_positions, out_normals);
}

/// Moves each vertex of `out_*` toward the dual quaternion result by its blend: positions
/// linearly, normals by normalized lerp.
pub fn mix_toward(
    blend: &[f32],
    dqs_positions: &[Vec3],
    dqs_normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    let vertices = blend.iter().zip(dqs_positions.iter().zip(dqs_normals));
    for ((&b, (&p, &n)), (out_p, out_n)) in vertices.zip(out_positions.iter_mut().zip(out_normals.iter_mut())) {
        if b > 0.0 {
            *out_p = out_p.lerp(p, b);
            *out_n = out_n.lerp(n, b).normalize_or_zero();
        }
    }
}
