//! Dual quaternion skinning on the CPU (the reference for the GPU's `skin_dqs`).

use crate::rig::Influences;
use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Quat, Vec3, Vec4};

/// A rigid transform as a unit dual quaternion: `real` is the rotation, `dual` is
/// ½·(translation, 0)·real. Laid out as the shaders read it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct DualQuat {
    pub real: Vec4,
    pub dual: Vec4,
}

impl DualQuat {
    pub const IDENTITY: DualQuat = DualQuat {
        real: Vec4::W,
        dual: Vec4::ZERO,
    };

    /// The rotation and translation of `m`; any scale or shear in `m` is dropped, which is why
    /// rigs whose palettes hold scale are flagged for dual quaternion skinning.
    pub fn from_mat4(m: &Mat4) -> DualQuat {
        let (_, rotation, translation) = m.to_scale_rotation_translation();
        let r = rotation.normalize();
        let t = Quat::from_xyzw(translation.x, translation.y, translation.z, 0.0);
        DualQuat {
            real: Vec4::from(r),
            dual: Vec4::from(t * r) * 0.5,
        }
    }
}

/// Largest deviation from a rigid transform among `palette` (0 for rotations and translations
/// only): how far each matrix's 3×3 part is from orthonormal with determinant +1.
pub fn max_non_rigidity(palette: &[Mat4]) -> f32 {
    palette
        .iter()
        .map(|m| {
            let (c0, c1, c2) = (m.x_axis.truncate(), m.y_axis.truncate(), m.z_axis.truncate());
            let lengths = [c0.length() - 1.0, c1.length() - 1.0, c2.length() - 1.0];
            let angles = [c0.dot(c1), c1.dot(c2), c2.dot(c0)];
            lengths.iter().chain(&angles).fold(0.0f32, |a, x| a.max(x.abs()))
        })
        .fold(0.0, f32::max)
}

pub fn dual_quat_palette(palette: &[Mat4], out: &mut [DualQuat]) {
    for (dq, m) in out.iter_mut().zip(palette) {
        *dq = DualQuat::from_mat4(m);
    }
}

fn rotate(q: Vec4, v: Vec3) -> Vec3 {
    let axis = q.truncate();
    v + 2.0 * axis.cross(axis.cross(v) + q.w * v)
}

/// Dual quaternion skinning of every vertex, with the antipodality fix: each joint's quaternion
/// is flipped into the hemisphere of the vertex's first influencing joint before blending.
pub fn skin_dqs(
    palette: &[DualQuat],
    influences: &Influences,
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    for v in 0..positions.len() {
        let mut real = Vec4::ZERO;
        let mut dual = Vec4::ZERO;
        let mut pivot = None;
        for (joint, weight) in influences.of_vertex(v) {
            let Some(dq) = palette.get(joint as usize).filter(|_| weight != 0.0) else {
                continue;
            };
            let pivot = *pivot.get_or_insert(dq.real);
            let w = if dq.real.dot(pivot) < 0.0 { -weight } else { weight };
            real += dq.real * w;
            dual += dq.dual * w;
        }
        let len = real.length();
        if pivot.is_none() || len == 0.0 {
            out_positions[v] = positions[v];
            out_normals[v] = normals[v].normalize_or_zero();
            continue;
        }
        let (real, dual) = (real / len, dual / len);
        let translation =
            2.0 * (real.w * dual.truncate() - dual.w * real.truncate() + real.truncate().cross(dual.truncate()));
        out_positions[v] = rotate(real, positions[v]) + translation;
        out_normals[v] = rotate(real, normals[v]).normalize_or_zero();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_rigid_joint_moves_vertices_like_its_matrix() {
        let m = Mat4::from_rotation_translation(
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
            Vec3::new(1.0, -2.0, 0.5),
        );
        let palette = [DualQuat::from_mat4(&m)];
        let influences = Influences {
            sets: 1,
            joints: vec![[0; 4]],
            weights: vec![[1.0, 0.0, 0.0, 0.0]],
        };
        let p = [Vec3::new(0.3, 0.7, -1.2)];
        let n = [Vec3::new(0.0, 0.6, 0.8)];
        let (mut op, mut on) = ([Vec3::ZERO], [Vec3::ZERO]);
        skin_dqs(&palette, &influences, &p, &n, &mut op, &mut on);
        assert!((op[0] - m.transform_point3(p[0])).length() < 1e-5);
        assert!((on[0] - m.transform_vector3(n[0])).length() < 1e-5);
    }

    #[test]
    fn antipodal_quaternions_blend_as_the_same_rotation() {
        let m = Mat4::from_rotation_y(0.4);
        let mut flipped = DualQuat::from_mat4(&m);
        flipped.real = -flipped.real;
        flipped.dual = -flipped.dual;
        let palette = [DualQuat::from_mat4(&m), flipped];
        let influences = Influences {
            sets: 1,
            joints: vec![[0, 1, 0, 0]],
            weights: vec![[0.5, 0.5, 0.0, 0.0]],
        };
        let p = [Vec3::new(1.0, 0.0, 0.0)];
        let (mut op, mut on) = ([Vec3::ZERO], [Vec3::ZERO]);
        skin_dqs(&palette, &influences, &p, &[Vec3::X], &mut op, &mut on);
        assert!((op[0] - m.transform_point3(p[0])).length() < 1e-5, "{}", op[0]);
    }

    #[test]
    fn non_rigidity_measures_scale_and_shear() {
        assert!(max_non_rigidity(&[Mat4::from_rotation_z(1.0), Mat4::from_translation(Vec3::ONE)]) < 1e-6);
        let scaled = max_non_rigidity(&[Mat4::from_scale(Vec3::new(1.0, 1.5, 1.0))]);
        assert!((scaled - 0.5).abs() < 1e-6);
    }
}
