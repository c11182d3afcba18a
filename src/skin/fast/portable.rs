//! One vertex at a time, any CPU: blends only the matrix columns the result needs.

use super::{Inf, Job};
use glam::{Mat4, Vec3, Vec4};

/// Blended columns 0–3 of one vertex (column `w` components included but unused), or `None`
/// when no weight is left (the vertex keeps its bind pose). Same order and rules as the reference.
#[inline(always)]
pub(super) fn blend(palette: &[Mat4], influences: Inf<'_>, v: usize) -> Option<[Vec4; 4]> {
    let sets = influences.sets;
    let range = v * sets..(v + 1) * sets;
    let mut c = [Vec4::ZERO; 4];
    let mut total = 0.0;
    for (joints, weights) in influences.joints[range.clone()].iter().zip(&influences.weights[range]) {
        for k in 0..4 {
            let w = weights[k];
            if w != 0.0
                && let Some(m) = palette.get(joints[k] as usize)
            {
                c[0] += m.x_axis * w;
                c[1] += m.y_axis * w;
                c[2] += m.z_axis * w;
                c[3] += m.w_axis * w;
                total += w;
            }
        }
    }
    (total != 0.0).then_some(c)
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
