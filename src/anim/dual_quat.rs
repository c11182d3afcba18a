//! A joint's palette matrix as a scale along the mesh's axes and a unit dual quaternion: the
//! form dual quaternion skinning blends, built with the palette by the pose pipeline.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Quat, Vec4};

/// A joint's transform for dual quaternion skinning: a scale along the mesh's own axes, then a
/// rigid transform as a unit dual quaternion (`real` is the rotation, `dual` is ½·(translation, 0)·real). Laid out
/// as the shaders read it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct DualQuat {
    pub real: Vec4,
    pub dual: Vec4,
    /// xyz: the scale along the mesh's x, y and z axes applied before the rigid transform, the
    /// S of the matrix's T·R·S decomposition (as ufbx takes a cluster's transform for Maya's
    /// dual quaternion skinning), blended linearly by weight (dual quaternions cannot carry it);
    /// w: padding.
    pub scale: Vec4,
}

impl DualQuat {
    pub const IDENTITY: DualQuat = DualQuat {
        real: Vec4::W,
        dual: Vec4::ZERO,
        scale: Vec4::new(1.0, 1.0, 1.0, 0.0),
    };

    /// The translation, rotation and scale of `m` as `T·R·S` (the scale negative along x for a
    /// mirroring matrix); shear, and scale along other axes than the mesh's, are dropped, which
    /// is why rigs whose palettes hold them are flagged for dual quaternion skinning.
    pub fn from_mat4(m: &Mat4) -> DualQuat {
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        let r = rotation.normalize();
        let t = Quat::from_xyzw(translation.x, translation.y, translation.z, 0.0);
        DualQuat {
            real: Vec4::from(r),
            dual: Vec4::from(t * r) * 0.5,
            scale: if scale.is_finite() {
                scale.extend(0.0)
            } else {
                DualQuat::IDENTITY.scale
            },
        }
    }
}

/// Largest deviation among `palette` from what dual quaternion skinning carries, a rigid
/// transform after a scale along the mesh's axes (0 for rotations, translations and such
/// scales): the largest cosine between two of a matrix's 3×3 columns (1 for a column of length
/// 0 or not finite).
pub fn max_non_rigidity(palette: &[Mat4]) -> f32 {
    palette
        .iter()
        .map(|m| {
            let columns = [m.x_axis, m.y_axis, m.z_axis].map(|c| c.truncate().try_normalize());
            let [Some(c0), Some(c1), Some(c2)] = columns else {
                return 1.0;
            };
            [c0.dot(c1), c1.dot(c2), c2.dot(c0)]
                .iter()
                .fold(0.0f32, |a, x| a.max(x.abs()))
        })
        .fold(0.0, f32::max)
}

pub fn dual_quat_palette(palette: &[Mat4], out: &mut [DualQuat]) {
    for (dq, m) in out.iter_mut().zip(palette) {
        *dq = DualQuat::from_mat4(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn non_rigidity_measures_shear_but_not_scale_along_the_mesh_axes() {
        let rigid = [Mat4::from_rotation_z(1.0), Mat4::from_translation(Vec3::ONE)];
        assert!(max_non_rigidity(&rigid) < 1e-6);
        assert!(max_non_rigidity(&[Mat4::from_scale(Vec3::splat(100.0)) * rigid[0]]) < 1e-5);
        let along_axes = rigid[0] * Mat4::from_scale(Vec3::new(1.0, 1.5, 0.5));
        assert!(max_non_rigidity(&[along_axes]) < 1e-6);
        // x + 0.5 y as the second column: cosine 0.5 / √1.25 with the first.
        let sheared = Mat4::from_cols(Vec4::X, Vec4::new(0.5, 1.0, 0.0, 0.0), Vec4::Z, Vec4::W);
        let expected = 0.5 / 1.25f32.sqrt();
        assert!((max_non_rigidity(&[sheared]) - expected).abs() < 1e-6);
        // Scale along axes the mesh does not have: a scaled matrix turned afterwards shears.
        let off_axes = Mat4::from_scale(Vec3::new(1.0, 2.0, 1.0)) * rigid[0];
        assert!(max_non_rigidity(&[off_axes]) > 0.1);
        assert_eq!(max_non_rigidity(&[Mat4::from_scale(Vec3::new(0.0, 1.0, 1.0))]), 1.0);
    }

    #[test]
    fn a_scale_along_the_mesh_axes_is_kept_per_axis() {
        let m = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0))
            * Mat4::from_rotation_y(0.7)
            * Mat4::from_scale(Vec3::new(11.6, 6.5, 8.1));
        let dq = DualQuat::from_mat4(&m);
        assert!(
            (dq.scale.truncate() - Vec3::new(11.6, 6.5, 8.1)).length() < 1e-4,
            "{}",
            dq.scale
        );
        assert_eq!(DualQuat::IDENTITY.scale, Vec4::new(1.0, 1.0, 1.0, 0.0));
    }
}
