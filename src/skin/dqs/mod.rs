//! Dual quaternion skinning on the CPU (the reference for the GPU's `skin_dqs`).

#[cfg(target_arch = "x86_64")]
pub mod simd;

use crate::rig::Influences;
use crate::skin::fast::Kernel;
use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Quat, Vec3, Vec4};

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

fn rotate(q: Vec4, v: Vec3) -> Vec3 {
    let axis = q.truncate();
    v + 2.0 * axis.cross(axis.cross(v) + q.w * v)
}

/// Dual quaternion skinning of every vertex, with the antipodality fix: each joint's quaternion
/// is flipped into the hemisphere of the vertex's first influencing joint before blending. The
/// joints' uniform scales are blended linearly and applied before the rigid transform. Zero
/// weights and joints outside the palette are skipped; a vertex with nothing left (or whose
/// blended rotation is zero) keeps its bind pose.
///
/// Runs the fastest SIMD kernel this CPU has ([`simd`]); the same results as
/// [`skin_dqs_reference`] up to rounding.
///
/// # Panics
/// When the output slices, `normals` or `influences` are shorter than `positions`.
pub fn skin_dqs(
    palette: &[DualQuat],
    influences: &Influences,
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    skin_dqs_with(
        Kernel::detect(),
        palette,
        influences,
        positions,
        normals,
        out_positions,
        out_normals,
    );
}

/// [`skin_dqs`] with a chosen kernel (the reference's code when `kernel` is not available here
/// or is the portable one).
pub fn skin_dqs_with(
    kernel: Kernel,
    palette: &[DualQuat],
    influences: &Influences,
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    let n = positions.len();
    assert!(
        normals.len() >= n && out_positions.len() >= n && out_normals.len() >= n,
        "normals or outputs are shorter than positions"
    );
    let per_vertex = n * influences.sets;
    assert!(
        influences.joints.len() >= per_vertex && influences.weights.len() >= per_vertex,
        "influences do not cover every vertex"
    );
    #[cfg(target_arch = "x86_64")]
    let (out_positions, out_normals) = {
        let job = simd::Job {
            palette,
            influences,
            positions,
            normals,
            out_positions,
            out_normals,
        };
        match simd::skin(kernel, job) {
            Ok(()) => return,
            Err(job) => (job.out_positions, job.out_normals),
        }
    };
    skin_dqs_reference(palette, influences, positions, normals, out_positions, out_normals);
}

/// [`skin_dqs`] one vertex at a time, written for clarity: the reference the SIMD kernels are
/// checked against.
pub fn skin_dqs_reference(
    palette: &[DualQuat],
    influences: &Influences,
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    for v in 0..positions.len() {
        (out_positions[v], out_normals[v]) = dqs_vertex(palette, influences, v, positions[v], normals[v]);
    }
}

/// Vertex `v` skinned as [`skin_dqs_reference`] does.
fn dqs_vertex(palette: &[DualQuat], influences: &Influences, v: usize, position: Vec3, normal: Vec3) -> (Vec3, Vec3) {
    let mut real = Vec4::ZERO;
    let mut dual = Vec4::ZERO;
    let mut scale = 0.0;
    let mut total = 0.0;
    let mut pivot = None;
    for (joint, weight) in influences.of_vertex(v) {
        let Some(dq) = palette.get(joint as usize).filter(|_| weight != 0.0) else {
            continue;
        };
        let pivot = *pivot.get_or_insert(dq.real);
        let w = if dq.real.dot(pivot) < 0.0 { -weight } else { weight };
        real += dq.real * w;
        dual += dq.dual * w;
        scale += dq.scale.x * weight;
        total += weight;
    }
    let len = real.length();
    if pivot.is_none() || len == 0.0 {
        return (position, normal.normalize_or_zero());
    }
    let (real, dual) = (real / len, dual / len);
    let translation =
        2.0 * (real.w * dual.truncate() - dual.w * real.truncate() + real.truncate().cross(dual.truncate()));
    let scale = if total != 0.0 { scale / total } else { 1.0 };
    (
        rotate(real, position * scale) + translation,
        rotate(real, normal).normalize_or_zero(),
    )
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
    fn non_rigidity_measures_non_uniform_scale_and_shear_but_not_uniform_scale() {
        let rigid = [Mat4::from_rotation_z(1.0), Mat4::from_translation(Vec3::ONE)];
        assert!(max_non_rigidity(&rigid) < 1e-6);
        assert!(max_non_rigidity(&[Mat4::from_scale(Vec3::splat(100.0)) * rigid[0]]) < 1e-5);
        // (1, 1.5, 1) over its uniform part 1.5^(1/3): the y axis is 1.5^(2/3) = 1.3104 long.
        let scaled = max_non_rigidity(&[Mat4::from_scale(Vec3::new(1.0, 1.5, 1.0))]);
        assert!((scaled - (1.5f32.powf(2.0 / 3.0) - 1.0)).abs() < 1e-5, "{scaled}");
    }

    #[test]
    fn uniform_joint_scales_blend_before_the_rigid_transform() {
        // Two joints with the same rotation and translation, scaled 1 and 3: half and half is
        // scale 2, exactly what linear blending gives; one joint alone is its own matrix.
        let rigid = Mat4::from_rotation_translation(Quat::from_rotation_y(0.7), Vec3::new(1.0, 2.0, 3.0));
        let palette = [rigid, rigid * Mat4::from_scale(Vec3::splat(3.0))];
        let dual_quats = palette.map(|m| DualQuat::from_mat4(&m));
        let influences = Influences {
            sets: 1,
            joints: vec![[0, 1, 0, 0], [1, 0, 0, 0]],
            weights: vec![[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]],
        };
        let p = [Vec3::new(0.2, -0.4, 0.9); 2];
        let (mut op, mut on) = ([Vec3::ZERO; 2], [Vec3::ZERO; 2]);
        skin_dqs(&dual_quats, &influences, &p, &[Vec3::Y; 2], &mut op, &mut on);
        let half = rigid * Mat4::from_scale(Vec3::splat(2.0));
        assert!((op[0] - half.transform_point3(p[0])).length() < 1e-5, "{}", op[0]);
        assert!((op[1] - palette[1].transform_point3(p[1])).length() < 1e-5, "{}", op[1]);
    }
}
