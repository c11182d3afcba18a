//! World transforms and joint palettes with affine math.
//!
//! Transforms are stored as `Mat4` (the layout the GPU and the rest of the crate read) but are
//! affine: bottom row (0, 0, 0, 1). A product of two affine transforms needs the 3×3 products
//! and a translation, not a full 4×4 product, and the mesh node's inverse is an affine inverse
//! (once per instance, never per joint).
//!
//! With AVX-512 or AVX2 and FMA (detected at run time) the products run in SIMD kernels (see
//! `avx512` and `avx2`); otherwise glam's `Affine3A` does the same math.

use crate::cpu::Kernel;
use crate::rig::{Node, Trs};
use glam::{Affine3A, Mat4, Vec4};

/// Whether `m` is affine (bottom row 0, 0, 0, 1).
pub fn is_affine(m: &Mat4) -> bool {
    m.row(3) == Vec4::W
}

/// World transform of every node from its local TRS, with the fastest kernel this CPU runs;
/// relies on parents being stored before their children.
pub fn local_to_world(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    local_to_world_with(Kernel::detect(), nodes, locals, worlds);
}

/// [`local_to_world`] with a chosen kernel (the portable code when `kernel` is not available on
/// this CPU).
pub fn local_to_world_with(kernel: Kernel, nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    let n = nodes.len().min(locals.len()).min(worlds.len());
    let (nodes, locals, worlds) = (&nodes[..n], &locals[..n], &mut worlds[..n]);
    #[cfg(target_arch = "x86_64")]
    if kernel.is_available() {
        match kernel {
            // SAFETY: the CPU has AVX-512 F and BW, AVX2 and FMA (`is_available` above).
            Kernel::Avx512 => return unsafe { avx512::local_to_world(nodes, locals, worlds) },
            // SAFETY: the CPU has AVX2 and FMA (`is_available` above).
            Kernel::Avx2Fma => return unsafe { avx2::local_to_world(nodes, locals, worlds) },
            Kernel::Portable => {}
        }
    }
    // Other targets have the portable code alone.
    let _ = kernel;
    for i in 0..n {
        let local = &locals[i];
        let local = Affine3A::from_scale_rotation_translation(local.scale, local.rotation, local.translation);
        let world = match nodes[i].parent {
            Some(p) => Affine3A::from_mat4(worlds[p]) * local,
            None => local,
        };
        worlds[i] = Mat4::from(world);
    }
}

/// [`local_to_world`] as it ran before the AVX-512 kernel converted locals 32 at a time: on
/// CPUs with AVX-512 its one-local-at-a-time pass, elsewhere `local_to_world` itself. The same
/// bits as `local_to_world` (tested); kept so that benchmarks measure both in one run.
#[doc(hidden)]
pub fn local_to_world_per_joint(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    #[cfg(target_arch = "x86_64")]
    if Kernel::Avx512.is_available() {
        let n = nodes.len().min(locals.len()).min(worlds.len());
        // SAFETY: the CPU has AVX-512 F and BW, AVX2 and FMA (`is_available` above).
        return unsafe { avx512::local_to_world_per_joint(&nodes[..n], &locals[..n], &mut worlds[..n]) };
    }
    local_to_world(nodes, locals, worlds);
}

/// `palette[j] = worlds[joints[j]] · inverse_binds[j]`: the matrix that takes a bind-pose vertex
/// to its posed place in world space (glTF ignores the transform of the node that holds a
/// skinned mesh), with the fastest kernel this CPU runs. Every matrix must be affine (see
/// [`is_affine`]; [`build_palette_mat4`] takes any inverse binds). No allocation.
pub fn build_palette(joints: &[usize], inverse_binds: &[Mat4], worlds: &[Mat4], palette: &mut [Mat4]) {
    build_palette_with(Kernel::detect(), joints, inverse_binds, worlds, palette);
}

/// [`build_palette`] with a chosen kernel (the portable code when `kernel` is not available on
/// this CPU).
pub fn build_palette_with(
    kernel: Kernel,
    joints: &[usize],
    inverse_binds: &[Mat4],
    worlds: &[Mat4],
    palette: &mut [Mat4],
) {
    #[cfg(target_arch = "x86_64")]
    if kernel.is_available() {
        match kernel {
            // SAFETY: the CPU has AVX-512 F and BW, AVX2 and FMA (`is_available` above).
            Kernel::Avx512 => return unsafe { avx512::build_palette(joints, inverse_binds, worlds, palette) },
            // SAFETY: the CPU has AVX2 and FMA (`is_available` above).
            Kernel::Avx2Fma => return unsafe { avx2::build_palette(joints, inverse_binds, worlds, palette) },
            Kernel::Portable => {}
        }
    }
    // Other targets have the portable code alone.
    let _ = kernel;
    for ((out, &joint), inverse_bind) in palette.iter_mut().zip(joints).zip(inverse_binds) {
        *out = Mat4::from(Affine3A::from_mat4(worlds[joint]) * Affine3A::from_mat4(*inverse_bind));
    }
}

/// [`build_palette`] for inverse bind matrices that are not affine: the last product in 4×4.
pub fn build_palette_mat4(joints: &[usize], inverse_binds: &[Mat4], worlds: &[Mat4], palette: &mut [Mat4]) {
    for ((out, &joint), inverse_bind) in palette.iter_mut().zip(joints).zip(inverse_binds) {
        *out = Mat4::from(Affine3A::from_mat4(worlds[joint])) * *inverse_bind;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(target_arch = "x86_64")]
mod avx512;

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};

    fn node(parent: Option<usize>) -> Node {
        Node {
            name: String::new(),
            parent,
            rest: Trs::IDENTITY,
        }
    }

    #[test]
    fn worlds_and_palettes_match_plain_4x4_products() {
        // A tree, then chains of odd and even lengths (taken two links at a time).
        let tree = (0..9).map(|i| (i > 0).then(|| (i - 1) / 2));
        check_worlds_and_palettes(tree.collect());
        check_worlds_and_palettes((0..9).map(|i| (i > 0).then(|| i - 1)).collect());
        check_worlds_and_palettes(
            [
                None,
                Some(0),
                Some(1),
                Some(0),
                Some(3),
                Some(4),
                Some(5),
                Some(6),
                None,
            ]
            .to_vec(),
        );
    }

    #[test]
    fn long_mixed_skeletons_match_f64_products() {
        // Longer than the SIMD kernels' blocks of locals, with a length that leaves a partial
        // group of four; chains, branches to parents in earlier blocks and a second root.
        let parents: Vec<Option<usize>> = (0..75usize)
            .map(|i| match i {
                0 | 40 => None,
                i if i % 5 == 0 => Some(i / 3),
                i => Some(i - 1),
            })
            .collect();
        let nodes: Vec<Node> = parents.iter().copied().map(node).collect();
        let locals: Vec<Trs> = (0..nodes.len())
            .map(|i| {
                let f = i as f32;
                Trs {
                    translation: Vec3::new(0.05 * (f * 0.7).sin(), 0.1, -0.03 * (f * 1.3).cos()),
                    rotation: Quat::from_euler(glam::EulerRot::ZXY, 0.3 * (f * 0.9).sin(), 0.2, -0.1 * f.cos())
                        .normalize(),
                    scale: Vec3::new(1.0 + 0.03 * (f * 0.4).sin(), 0.98, if i == 33 { -1.01 } else { 1.02 }),
                }
            })
            .collect();
        let mut want = vec![glam::DMat4::IDENTITY; nodes.len()];
        for i in 0..nodes.len() {
            let l = &locals[i];
            let local = glam::DMat4::from_scale_rotation_translation(
                l.scale.as_dvec3(),
                l.rotation.as_dquat(),
                l.translation.as_dvec3(),
            );
            want[i] = parents[i].map_or(local, |p| want[p] * local);
        }
        for kernel in kernels_here() {
            let mut worlds = vec![Mat4::ZERO; nodes.len()];
            local_to_world_with(kernel, &nodes, &locals, &mut worlds);
            for i in 0..nodes.len() {
                assert!(
                    worlds[i].as_dmat4().abs_diff_eq(want[i], 1e-5),
                    "{kernel:?}, node {i}: {} vs {}",
                    worlds[i],
                    want[i]
                );
            }
            let joints: Vec<usize> = (0..nodes.len()).rev().step_by(2).collect();
            let binds: Vec<Mat4> = joints
                .iter()
                .map(|&j| (want[j] * glam::DMat4::from_rotation_y(0.2)).inverse().as_mat4())
                .collect();
            let mut palette = vec![Mat4::ZERO; joints.len()];
            build_palette_with(kernel, &joints, &binds, &worlds, &mut palette);
            for (k, &j) in joints.iter().enumerate() {
                let w = want[j] * binds[k].as_dmat4();
                assert!(
                    palette[k].as_dmat4().abs_diff_eq(w, 1e-5),
                    "{kernel:?}, joint {k}: {} vs {w}",
                    palette[k]
                );
                assert_eq!(palette[k].row(3), Vec4::W);
            }
        }
    }

    fn check_worlds_and_palettes(parents: Vec<Option<usize>>) {
        let nodes: Vec<Node> = parents.into_iter().map(node).collect();
        let locals: Vec<Trs> = (0..9)
            .map(|i| {
                let f = i as f32;
                Trs {
                    translation: Vec3::new(0.3 * f, -1.0 + f * 0.1, 2.0),
                    rotation: Quat::from_euler(glam::EulerRot::XYZ, 0.4 * f, -0.7 + 0.2 * f, 1.1),
                    scale: Vec3::new(1.0 + 0.1 * f, 0.8, if i == 4 { -1.2 } else { 1.3 }),
                }
            })
            .collect();
        let mut want = vec![Mat4::IDENTITY; 9];
        for i in 0..9 {
            let local = locals[i].to_mat4();
            want[i] = nodes[i].parent.map_or(local, |p| want[p] * local);
        }
        for kernel in kernels_here() {
            let mut worlds = vec![Mat4::ZERO; 9];
            local_to_world_with(kernel, &nodes, &locals, &mut worlds);
            for i in 0..9 {
                assert!(
                    worlds[i].abs_diff_eq(want[i], 1e-5),
                    "{kernel:?}, node {i}: {} vs {}",
                    worlds[i],
                    want[i]
                );
            }
            let joints = [8, 3, 5, 0];
            let binds: Vec<Mat4> = joints
                .iter()
                .map(|&j| want[j].inverse() * Mat4::from_rotation_x(0.3))
                .collect();
            let mut palette = [Mat4::ZERO; 4];
            build_palette_with(kernel, &joints, &binds, &worlds, &mut palette);
            let mut exact = [Mat4::ZERO; 4];
            build_palette_mat4(&joints, &binds, &worlds, &mut exact);
            for k in 0..4 {
                let w = want[joints[k]] * binds[k];
                assert!(
                    palette[k].abs_diff_eq(w, 1e-4),
                    "{kernel:?}, joint {k}: {} vs {w}",
                    palette[k]
                );
                assert!(exact[k].abs_diff_eq(w, 1e-4));
                assert_eq!(palette[k].row(3), Vec4::W);
            }
        }
    }

    /// The kernels this CPU runs, printed, with the ones it lacks reported rather than skipped
    /// silently.
    fn kernels_here() -> Vec<Kernel> {
        crate::cpu::report_kernels("palette")
    }
}
