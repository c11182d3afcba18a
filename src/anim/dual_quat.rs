//! A joint's palette matrix as a uniform scale and a unit dual quaternion: the form dual
//! quaternion skinning blends, built with the palette by the pose pipeline.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Quat, Vec4};

/// A joint's transform for dual quaternion skinning: a uniform scale, then a rigid transform as
/// a unit dual quaternion (`real` is the rotation, `dual` is ½·(translation, 0)·real). Laid out
/// as the shaders read it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct DualQuat {
    pub real: Vec4,
    pub dual: Vec4,
    /// x: the uniform scale applied before the rigid transform, blended linearly by weight
    /// (dual quaternions cannot carry it); yzw: padding.
    pub scale: Vec4,
}

impl DualQuat {
    pub const IDENTITY: DualQuat = DualQuat {
        real: Vec4::W,
        dual: Vec4::ZERO,
        scale: Vec4::X,
    };

    /// The rotation, translation and uniform scale (the cube root of the determinant's size) of
    /// `m`; non-uniform scale and shear are dropped, which is why rigs whose palettes hold them
    /// are flagged for dual quaternion skinning.
    pub fn from_mat4(m: &Mat4) -> DualQuat {
        let (_, rotation, translation) = m.to_scale_rotation_translation();
        let r = rotation.normalize();
        let t = Quat::from_xyzw(translation.x, translation.y, translation.z, 0.0);
        let scale = m.determinant().abs().cbrt();
        DualQuat {
            real: Vec4::from(r),
            dual: Vec4::from(t * r) * 0.5,
            scale: Vec4::new(if scale.is_finite() { scale } else { 1.0 }, 0.0, 0.0, 0.0),
        }
    }
}

/// Largest deviation from a rigid transform with a uniform scale among `palette` (0 for
/// rotations, translations and uniform scales, which dual quaternion skinning carries): how far
/// each matrix's 3×3 part, divided by its uniform scale, is from orthonormal.
pub fn max_non_rigidity(palette: &[Mat4]) -> f32 {
    palette
        .iter()
        .map(|m| {
            let scale = m.determinant().abs().cbrt();
            let scale = if scale > 0.0 && scale.is_finite() { scale } else { 1.0 };
            let (c0, c1, c2) = (
                m.x_axis.truncate() / scale,
                m.y_axis.truncate() / scale,
                m.z_axis.truncate() / scale,
            );
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

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn non_rigidity_measures_non_uniform_scale_and_shear_but_not_uniform_scale() {
        let rigid = [Mat4::from_rotation_z(1.0), Mat4::from_translation(Vec3::ONE)];
        assert!(max_non_rigidity(&rigid) < 1e-6);
        assert!(max_non_rigidity(&[Mat4::from_scale(Vec3::splat(100.0)) * rigid[0]]) < 1e-5);
        // (1, 1.5, 1) over its uniform part 1.5^(1/3): the y axis is 1.5^(2/3) = 1.3104 long.
        let scaled = max_non_rigidity(&[Mat4::from_scale(Vec3::new(1.0, 1.5, 1.0))]);
        assert!((scaled - (1.5f32.powf(2.0 / 3.0) - 1.0)).abs() < 1e-5, "{scaled}");
    }
}
