//! Dual quaternion skinning on the CPU (the reference for the GPU's `skin_dqs`).

#[cfg(target_arch = "x86_64")]
pub mod simd;

pub use crate::anim::dual_quat::{DualQuat, dual_quat_palette, max_non_rigidity};
use crate::rig::{Inf, Influences};
#[cfg(not(target_arch = "x86_64"))]
use crate::skin::check_shape;
use crate::skin::fast::Kernel;
use glam::{Vec3, Vec4};

fn rotate(q: Vec4, v: Vec3) -> Vec3 {
    let axis = q.truncate();
    v + 2.0 * axis.cross(axis.cross(v) + q.w * v)
}

/// Dual quaternion skinning of every vertex, with the antipodality fix: each joint's quaternion
/// is flipped into the hemisphere of the vertex's first influencing joint before blending. The
/// joints' scales along the mesh's axes are blended linearly and applied before the rigid
/// transform (normals divided by them), as ufbx does for Maya's dual quaternion skinning. Zero
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
    skin_job(
        kernel,
        palette,
        Inf::of(influences),
        positions,
        Some((normals, out_normals)),
        out_positions,
    );
}

/// [`skin_dqs`] for positions only: no normal is rotated, and none sends a vertex to the
/// reference's per-vertex code.
///
/// # Panics
/// When `out_positions` or `influences` are shorter than `positions`.
pub fn skin_dqs_positions(
    palette: &[DualQuat],
    influences: &Influences,
    positions: &[Vec3],
    out_positions: &mut [Vec3],
) {
    skin_dqs_positions_with(Kernel::detect(), palette, influences, positions, out_positions);
}

/// [`skin_dqs_positions`] with every position bit for bit the reference's on every CPU: the
/// reference's operations in its order, eight vertices at a time where the CPU has AVX2 (no
/// fused multiply-add), its own code elsewhere. For results that must not depend on the
/// machine (the range-of-motion audit), at a few times the reference's speed.
///
/// # Panics
/// When `out_positions` or `influences` are shorter than `positions`.
pub fn skin_dqs_positions_exact(
    palette: &[DualQuat],
    influences: &Influences,
    positions: &[Vec3],
    out_positions: &mut [Vec3],
) {
    #[cfg(target_arch = "x86_64")]
    {
        let job = simd::Job::new(palette, Inf::of(influences), positions, None, out_positions)
            .unwrap_or_else(|e| panic!("{e}"));
        if let Err(mut job) = simd::skin_exact(job) {
            job.reference(0..positions.len());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    skin_dqs_positions_with(Kernel::Portable, palette, influences, positions, out_positions);
}

/// [`skin_dqs_positions`] with a chosen kernel (the portable one is the reference's code).
pub fn skin_dqs_positions_with(
    kernel: Kernel,
    palette: &[DualQuat],
    influences: &Influences,
    positions: &[Vec3],
    out_positions: &mut [Vec3],
) {
    skin_job(kernel, palette, Inf::of(influences), positions, None, out_positions);
}

/// [`skin_dqs_with`] on a view of the influences (which may be cut to some vertices), with
/// `normals` as `(input, output)` or `None` for positions only.
///
/// # Panics
/// When the output slices, `normals` or `influences` are shorter than `positions`.
pub(crate) fn skin_job(
    kernel: Kernel,
    palette: &[DualQuat],
    influences: Inf<'_>,
    positions: &[Vec3],
    normals: Option<(&[Vec3], &mut [Vec3])>,
    out_positions: &mut [Vec3],
) {
    #[cfg(target_arch = "x86_64")]
    {
        let job =
            simd::Job::new(palette, influences, positions, normals, out_positions).unwrap_or_else(|e| panic!("{e}"));
        if let Err(mut job) = simd::skin(kernel, job) {
            job.reference(0..positions.len());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = kernel;
        let normal_lengths = normals.as_ref().map(|(input, output)| (input.len(), output.len()));
        check_shape(positions.len(), influences, normal_lengths, out_positions.len()).unwrap_or_else(|e| panic!("{e}"));
        match normals {
            Some((normals, out_normals)) => {
                for v in 0..positions.len() {
                    (out_positions[v], out_normals[v]) = dqs_vertex(palette, influences, v, positions[v], normals[v]);
                }
            }
            None => {
                for (v, (out, &position)) in out_positions.iter_mut().zip(positions).enumerate() {
                    *out = dqs_vertex(palette, influences, v, position, Vec3::ZERO).0;
                }
            }
        }
    }
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
        (out_positions[v], out_normals[v]) = dqs_vertex(palette, Inf::of(influences), v, positions[v], normals[v]);
    }
}

/// Vertex `v` skinned as [`skin_dqs_reference`] does.
fn dqs_vertex(palette: &[DualQuat], influences: Inf<'_>, v: usize, position: Vec3, normal: Vec3) -> (Vec3, Vec3) {
    let mut real = Vec4::ZERO;
    let mut dual = Vec4::ZERO;
    let mut scale = Vec3::ZERO;
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
        scale += dq.scale.truncate() * weight;
        total += weight;
    }
    let len = real.length();
    if pivot.is_none() || len == 0.0 {
        return (position, normal.normalize_or_zero());
    }
    let (real, dual) = (real / len, dual / len);
    let translation =
        2.0 * (real.w * dual.truncate() - dual.w * real.truncate() + real.truncate().cross(dual.truncate()));
    let scale = if total != 0.0 { scale / total } else { Vec3::ONE };
    // A normal goes through the inverse transpose of R·S: R·S⁻¹.
    (
        rotate(real, position * scale) + translation,
        rotate(real, normal / scale).normalize_or_zero(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Mat4, Quat};

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
    fn a_scale_along_the_mesh_axes_moves_vertices_and_normals_like_the_matrix() {
        // A mesh node scaled (11.6, 6.5, 8.1), as ufbx's maya_dq_weights has: T·R·S exactly.
        let m = Mat4::from_translation(Vec3::new(0.5, -1.0, 2.0))
            * Mat4::from_quat(Quat::from_euler(glam::EulerRot::XYZ, 0.4, -0.2, 1.1))
            * Mat4::from_scale(Vec3::new(11.6, 6.5, 8.1));
        let palette = [DualQuat::from_mat4(&m)];
        let influences = Influences {
            sets: 1,
            joints: vec![[0; 4]],
            weights: vec![[1.0, 0.0, 0.0, 0.0]],
        };
        let (p, n) = ([Vec3::new(0.3, 0.7, -1.2)], [Vec3::new(0.0, 0.6, 0.8)]);
        let (mut op, mut on) = ([Vec3::ZERO], [Vec3::ZERO]);
        skin_dqs(&palette, &influences, &p, &n, &mut op, &mut on);
        assert!((op[0] - m.transform_point3(p[0])).length() < 1e-4, "{}", op[0]);
        let normal = (crate::skin::normal_matrix(&m) * n[0]).normalize();
        assert!((on[0] - normal).length() < 1e-5, "{} against {normal}", on[0]);
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
