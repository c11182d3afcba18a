//! World transforms and joint palettes with affine math.
//!
//! Transforms are stored as `Mat4` (the layout the GPU and the rest of the crate read) but are
//! affine: bottom row (0, 0, 0, 1). A product of two affine transforms needs the 3×3 products
//! and a translation, not a full 4×4 product, and the mesh node's inverse is an affine inverse
//! (once per instance, never per joint).
//!
//! With AVX-512 or AVX2 and FMA (detected at run time) the products run in SIMD kernels (see
//! `avx512` and `avx2`); otherwise glam's `Affine3A` does the same math.

use crate::rig::{Node, Trs};
use glam::{Affine3A, Mat4, Vec4};

/// Whether `m` is affine (bottom row 0, 0, 0, 1).
pub fn is_affine(m: &Mat4) -> bool {
    m.row(3) == Vec4::W
}

#[cfg(target_arch = "x86_64")]
fn has_avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && has_avx2_fma()
}

/// World transform of every node from its local TRS; relies on parents being stored before
/// their children.
pub fn local_to_world(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    let n = nodes.len().min(locals.len()).min(worlds.len());
    let (nodes, locals, worlds) = (&nodes[..n], &locals[..n], &mut worlds[..n]);
    #[cfg(target_arch = "x86_64")]
    if let Some(kernel) =
        simd_kernel::<unsafe fn(&[Node], &[Trs], &mut [Mat4])>(avx512::local_to_world, avx2::local_to_world)
    {
        // SAFETY: the CPU has the kernel's features (`simd_kernel`); the three slices have
        // equal lengths.
        unsafe { kernel(nodes, locals, worlds) };
        return;
    }
    local_to_world_portable(nodes, locals, worlds);
}

/// `avx512` when this CPU runs it, else `avx2` when it runs that, else `None`.
#[cfg(target_arch = "x86_64")]
fn simd_kernel<F>(avx512: F, avx2: F) -> Option<F> {
    if has_avx512() {
        Some(avx512)
    } else if has_avx2_fma() {
        Some(avx2)
    } else {
        None
    }
}

/// [`local_to_world`] without SIMD beyond glam's own.
pub fn local_to_world_portable(nodes: &[Node], locals: &[Trs], worlds: &mut [Mat4]) {
    for i in 0..nodes.len().min(locals.len()).min(worlds.len()) {
        let local = &locals[i];
        let local = Affine3A::from_scale_rotation_translation(local.scale, local.rotation, local.translation);
        let world = match nodes[i].parent {
            Some(p) => Affine3A::from_mat4(worlds[p]) * local,
            None => local,
        };
        worlds[i] = Mat4::from(world);
    }
}

/// `palette[j] = inverse(mesh_world) · worlds[joints[j]] · inverse_binds[j]`: the matrix that
/// takes a bind-pose vertex to its posed place in the space of the node that holds the mesh.
/// Every matrix must be affine (see [`is_affine`]; [`build_palette_mat4`] takes any inverse
/// binds). No allocation.
pub fn build_palette(
    joints: &[usize],
    inverse_binds: &[Mat4],
    worlds: &[Mat4],
    mesh_world: &Mat4,
    palette: &mut [Mat4],
) {
    let to_mesh = (*mesh_world != Mat4::IDENTITY).then(|| Mat4::from(Affine3A::from_mat4(*mesh_world).inverse()));
    let n = joints.len().min(inverse_binds.len()).min(palette.len());
    let (joints, inverse_binds, palette) = (&joints[..n], &inverse_binds[..n], &mut palette[..n]);
    #[cfg(target_arch = "x86_64")]
    if let Some(kernel) = simd_kernel::<unsafe fn(&[usize], &[Mat4], &[Mat4], Option<&Mat4>, &mut [Mat4])>(
        avx512::build_palette,
        avx2::build_palette,
    ) {
        // SAFETY: the CPU has the kernel's features (`simd_kernel`); the slices are cut to `n`;
        // joint indices are checked inside.
        unsafe { kernel(joints, inverse_binds, worlds, to_mesh.as_ref(), palette) };
        return;
    }
    build_palette_portable(joints, inverse_binds, worlds, to_mesh.as_ref(), palette);
}

fn build_palette_portable(
    joints: &[usize],
    inverse_binds: &[Mat4],
    worlds: &[Mat4],
    to_mesh: Option<&Mat4>,
    palette: &mut [Mat4],
) {
    let to_mesh = to_mesh.map(|m| Affine3A::from_mat4(*m));
    for ((out, &joint), inverse_bind) in palette.iter_mut().zip(joints).zip(inverse_binds) {
        let world = Affine3A::from_mat4(worlds[joint]);
        let world = to_mesh.map_or(world, |m| m * world);
        *out = Mat4::from(world * Affine3A::from_mat4(*inverse_bind));
    }
}

/// [`build_palette`] for inverse bind matrices that are not affine: the last product in 4×4.
pub fn build_palette_mat4(
    joints: &[usize],
    inverse_binds: &[Mat4],
    worlds: &[Mat4],
    mesh_world: &Mat4,
    palette: &mut [Mat4],
) {
    let to_mesh = Affine3A::from_mat4(*mesh_world).inverse();
    for ((out, &joint), inverse_bind) in palette.iter_mut().zip(joints).zip(inverse_binds) {
        *out = Mat4::from(to_mesh * Affine3A::from_mat4(worlds[joint])) * *inverse_bind;
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
        let mut worlds = vec![Mat4::ZERO; nodes.len()];
        local_to_world(&nodes, &locals, &mut worlds);
        for i in 0..nodes.len() {
            assert!(
                worlds[i].as_dmat4().abs_diff_eq(want[i], 1e-5),
                "node {i}: {} vs {}",
                worlds[i],
                want[i]
            );
        }
        let joints: Vec<usize> = (0..nodes.len()).rev().step_by(2).collect();
        let binds: Vec<Mat4> = joints
            .iter()
            .map(|&j| (want[j] * glam::DMat4::from_rotation_y(0.2)).inverse().as_mat4())
            .collect();
        for mesh in [glam::DMat4::IDENTITY, want[17]] {
            let mut palette = vec![Mat4::ZERO; joints.len()];
            build_palette(&joints, &binds, &worlds, &mesh.as_mat4(), &mut palette);
            for (k, &j) in joints.iter().enumerate() {
                let w = mesh.inverse() * want[j] * binds[k].as_dmat4();
                assert!(
                    palette[k].as_dmat4().abs_diff_eq(w, 1e-5),
                    "joint {k}: {} vs {w}",
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
        let mut fast = vec![Mat4::ZERO; 9];
        let mut portable = vec![Mat4::ZERO; 9];
        local_to_world(&nodes, &locals, &mut fast);
        local_to_world_portable(&nodes, &locals, &mut portable);
        for i in 0..9 {
            assert!(
                fast[i].abs_diff_eq(want[i], 1e-5),
                "node {i}: {} vs {}",
                fast[i],
                want[i]
            );
            assert!(portable[i].abs_diff_eq(want[i], 1e-5), "node {i}");
        }
        let joints = [8, 3, 5, 0];
        let binds: Vec<Mat4> = joints
            .iter()
            .map(|&j| want[j].inverse() * Mat4::from_rotation_x(0.3))
            .collect();
        for mesh_world in [Mat4::IDENTITY, want[2]] {
            let mut palette = [Mat4::ZERO; 4];
            build_palette(&joints, &binds, &fast, &mesh_world, &mut palette);
            let mut portable = [Mat4::ZERO; 4];
            build_palette_portable(
                &joints,
                &binds,
                &fast,
                (mesh_world != Mat4::IDENTITY).then(|| mesh_world.inverse()).as_ref(),
                &mut portable,
            );
            let mut exact = [Mat4::ZERO; 4];
            build_palette_mat4(&joints, &binds, &fast, &mesh_world, &mut exact);
            for k in 0..4 {
                let w = mesh_world.inverse() * want[joints[k]] * binds[k];
                assert!(palette[k].abs_diff_eq(w, 1e-4), "joint {k}: {} vs {w}", palette[k]);
                assert!(portable[k].abs_diff_eq(w, 1e-4));
                assert!(exact[k].abs_diff_eq(w, 1e-4));
                assert_eq!(palette[k].row(3), Vec4::W);
            }
        }
    }
}
