use super::super::{dual_quat_palette, skin_dqs_reference, skin_dqs_with, skin_job};
use crate::skin::fast::tests::{Rng, influences, palette};
use glam::{Mat4, Vec3};

/// Every SIMD kernel against the reference, with joints whose quaternions
/// lie in opposite hemispheres, non-rigid matrices, zero and negative weights, joints
/// outside the palette and vertices with nothing left (see the influence generator).
fn check(sets: usize, vertices: usize, joints: usize, seed: u64) {
    let mut rng = Rng(seed);
    let matrices: Vec<Mat4> = palette(&mut rng, joints);
    let mut dual_quats = vec![super::DualQuat::IDENTITY; joints];
    dual_quat_palette(&matrices, &mut dual_quats);
    for dq in dual_quats.iter_mut().skip(1).step_by(3) {
        dq.real = -dq.real;
        dq.dual = -dq.dual;
    }
    let influences = influences(&mut rng, vertices, sets, joints);
    let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
    let mut normals: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(1.0)).collect();
    normals[vertices / 2] = Vec3::ZERO;
    let (mut want_p, mut want_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
    skin_dqs_reference(&dual_quats, &influences, &positions, &normals, &mut want_p, &mut want_n);
    for kernel in crate::cpu::report_kernels("DQS") {
        let (mut got_p, mut got_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
        skin_dqs_with(
            kernel,
            &dual_quats,
            &influences,
            &positions,
            &normals,
            &mut got_p,
            &mut got_n,
        );
        for v in 0..vertices {
            for (what, got, want) in [("position", got_p[v], want_p[v]), ("normal", got_n[v], want_n[v])] {
                let tolerance = 1e-5 * want.length().max(1.0);
                assert!(
                    (got - want).length() <= tolerance,
                    "{kernel:?}, {sets} set(s), {vertices} vertices: vertex {v}: {what} {got} vs the reference's {want}"
                );
            }
        }
        assert_eq!(got_n[vertices / 2], Vec3::ZERO, "a zero normal stays zero");
        // Positions only: the same positions, with no normal to send a vertex elsewhere.
        let mut only_p = vec![Vec3::NAN; vertices];
        skin_job(
            kernel,
            &dual_quats,
            crate::rig::Inf::of(&influences),
            &positions,
            None,
            &mut only_p,
        );
        for v in 0..vertices {
            let tolerance = 1e-5 * want_p[v].length().max(1.0);
            assert!(
                (only_p[v] - want_p[v]).length() <= tolerance,
                "{kernel:?}, {sets} set(s), positions only: vertex {v}: {} vs the reference's {}",
                only_p[v],
                want_p[v]
            );
        }
    }
}

#[test]
fn the_simd_kernels_match_the_reference() {
    for sets in [1, 2, 3] {
        check(sets, 1029, 64, 0xD1B5_4A32_D192_ED03 + sets as u64);
        check(sets, 203, 7, 4242 + sets as u64);
        for vertices in [1, 2, 7, 15, 17, 31] {
            check(sets, vertices, 64, 7 + vertices as u64);
        }
    }
}

#[test]
fn the_exact_kernel_has_the_references_bits() {
    // The same hostile data as `check`: antipodal joints, non-rigid matrices, zero and
    // negative weights, joints outside the palette, vertices with nothing left.
    for sets in [1, 2, 3] {
        for (vertices, joints, seed) in [(1029, 64, 3), (203, 7, 5), (31, 64, 9), (5, 3, 1)] {
            let mut rng = Rng(seed + sets as u64);
            let mut dual_quats = vec![super::DualQuat::IDENTITY; joints];
            dual_quat_palette(&palette(&mut rng, joints), &mut dual_quats);
            for dq in dual_quats.iter_mut().skip(1).step_by(3) {
                dq.real = -dq.real;
                dq.dual = -dq.dual;
            }
            let influences = influences(&mut rng, vertices, sets, joints);
            let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
            let normals = vec![Vec3::Z; vertices];
            let (mut want, mut unused) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
            skin_dqs_reference(&dual_quats, &influences, &positions, &normals, &mut want, &mut unused);
            let mut got = vec![Vec3::NAN; vertices];
            super::super::skin_dqs_positions_exact(&dual_quats, &influences, &positions, &mut got);
            for v in 0..vertices {
                assert_eq!(
                    got[v].to_array().map(f32::to_bits),
                    want[v].to_array().map(f32::to_bits),
                    "{sets} set(s), {vertices} vertices: vertex {v}: {} vs the reference's {}",
                    got[v],
                    want[v]
                );
            }
        }
    }
}

#[test]
fn unused_slots_match_the_reference() {
    // Sorted weights that leave the last slots empty, on antipodal and scaled joints.
    let mut rng = Rng(11);
    let matrices = palette(&mut rng, 12);
    let mut dual_quats = vec![super::DualQuat::IDENTITY; 12];
    dual_quat_palette(&matrices, &mut dual_quats);
    for dq in dual_quats.iter_mut().step_by(2) {
        dq.real = -dq.real;
        dq.dual = -dq.dual;
    }
    for (sets, used) in [(1, 1), (1, 3), (2, 2), (2, 6)] {
        let vertices = 53;
        let mut influences = crate::rig::Influences {
            sets,
            joints: Vec::new(),
            weights: Vec::new(),
        };
        for _ in 0..vertices * sets {
            influences.joints.push([0; 4].map(|_| rng.below(12) as u16));
            influences.weights.push([0.0; 4]);
        }
        for v in 0..vertices {
            for k in 0..used {
                influences.weights[v * sets + k / 4][k % 4] = rng.range(0.1, 1.0);
            }
        }
        let p: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
        let n: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(1.0)).collect();
        let (mut want_p, mut want_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
        skin_dqs_reference(&dual_quats, &influences, &p, &n, &mut want_p, &mut want_n);
        for kernel in crate::cpu::report_kernels("DQS") {
            let (mut op, mut on) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
            skin_dqs_with(kernel, &dual_quats, &influences, &p, &n, &mut op, &mut on);
            for v in 0..vertices {
                let close = |a: Vec3, b: Vec3| (a - b).length() <= 1e-5 * b.length().max(1.0);
                assert!(
                    close(op[v], want_p[v]),
                    "{kernel:?} {sets}/{used} {v}: {} {}",
                    op[v],
                    want_p[v]
                );
                assert!(
                    close(on[v], want_n[v]),
                    "{kernel:?} {sets}/{used} {v}: {} {}",
                    on[v],
                    want_n[v]
                );
            }
        }
    }
}

#[test]
fn blocks_of_antipodal_joints_blend_as_one_rotation() {
    // Every vertex of two whole blocks on a joint and its antipode, half and half.
    let m = Mat4::from_rotation_translation(glam::Quat::from_rotation_y(0.4), Vec3::new(1.0, 0.0, -2.0));
    let mut dual_quats = [super::DualQuat::from_mat4(&m); 2];
    dual_quats[1].real = -dual_quats[1].real;
    dual_quats[1].dual = -dual_quats[1].dual;
    let influences = crate::rig::Influences {
        sets: 1,
        joints: vec![[0, 1, 1, 0]; 32],
        weights: vec![[0.25, 0.25, 0.25, 0.25]; 32],
    };
    let p: Vec<Vec3> = (0..32).map(|i| Vec3::new(i as f32 * 0.1, 1.0, -0.5)).collect();
    let n = vec![Vec3::Z; 32];
    for kernel in crate::cpu::report_kernels("DQS") {
        let (mut op, mut on) = (vec![Vec3::ZERO; 32], vec![Vec3::ZERO; 32]);
        skin_dqs_with(kernel, &dual_quats, &influences, &p, &n, &mut op, &mut on);
        for v in 0..32 {
            assert!(
                (op[v] - m.transform_point3(p[v])).length() < 1e-5,
                "{kernel:?} {v}: {}",
                op[v]
            );
            assert!(
                (on[v] - m.transform_vector3(n[v])).length() < 1e-5,
                "{kernel:?} {v}: {}",
                on[v]
            );
        }
    }
}
