//! CPU skinning.

use crate::rig::Influences;
use glam::{Mat3, Mat4, Vec3};

/// Weighted sum of the palette matrices that influence vertex `v`. Joints outside the palette are
/// ignored; a vertex without any weight keeps its bind position (identity).
pub fn blend_matrix(palette: &[Mat4], influences: &Influences, v: usize) -> Mat4 {
    let mut sum = Mat4::ZERO;
    let mut total = 0.0;
    for (joint, weight) in influences.of_vertex(v) {
        if weight != 0.0
            && let Some(m) = palette.get(joint as usize)
        {
            sum += *m * weight;
            total += weight;
        }
    }
    if total == 0.0 { Mat4::IDENTITY } else { sum }
}

/// The matrix that transforms normals for a vertex transformed by `m`: the inverse transpose
/// of its 3×3 part, computed as the cofactor matrix (the inverse transpose times the
/// determinant) with the determinant's sign kept, so it works for any invertible matrix without
/// a division. The result still needs normalizing.
pub fn normal_matrix(m: &Mat4) -> Mat3 {
    let (c0, c1, c2) = (m.x_axis.truncate(), m.y_axis.truncate(), m.z_axis.truncate());
    let cofactor = Mat3::from_cols(c1.cross(c2), c2.cross(c0), c0.cross(c1));
    if c0.dot(c1.cross(c2)) < 0.0 {
        -cofactor
    } else {
        cofactor
    }
}

/// Linear blend skinning, written for clarity: the reference that faster paths and the GPU are
/// checked against. Writes one position and one normal per input vertex.
pub fn skin_lbs_reference(
    palette: &[Mat4],
    influences: &Influences,
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    for v in 0..positions.len() {
        let m = blend_matrix(palette, influences, v);
        out_positions[v] = m.transform_point3(positions[v]);
        out_normals[v] = (normal_matrix(&m) * normals[v]).normalize_or_zero();
    }
}

/// Bounds of every mesh instance of `rig` in the pose `pose`, in world space.
pub fn posed_bounds(rig: &crate::rig::Rig, pose: &crate::anim::PoseEvaluator) -> crate::anim::Bounds {
    let mut bounds = crate::anim::Bounds::EMPTY;
    for (i, instance) in rig.instances.iter().enumerate() {
        let world = pose.instance_world(rig, i);
        for primitive in &rig.meshes[instance.mesh].primitives {
            match (&primitive.influences, instance.skin) {
                (Some(influences), Some(_)) => {
                    let palette = &pose.palettes[i];
                    for v in 0..primitive.vertex_count() {
                        let m = blend_matrix(palette, influences, v);
                        bounds.include(world.transform_point3(m.transform_point3(primitive.positions[v])));
                    }
                }
                _ => primitive
                    .positions
                    .iter()
                    .for_each(|&p| bounds.include(world.transform_point3(p))),
            }
        }
    }
    bounds
}
