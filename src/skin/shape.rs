//! The one rule every skinning entry point checks before a kernel reads or writes a slice: the
//! inputs and outputs cover every vertex of `positions`.

use super::fast::Inf;

/// Why a skinning call's slices cannot be skinned together: one of them holds fewer vertices
/// than `positions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("out_positions holds {got} vertices, positions {needed}")]
    ShortOutPositions { needed: usize, got: usize },
    #[error("normals hold {got} vertices, positions {needed}")]
    ShortNormals { needed: usize, got: usize },
    #[error("out_normals holds {got} vertices, positions {needed}")]
    ShortOutNormals { needed: usize, got: usize },
    #[error("influences cover {got} vertices at {sets} sets of four each, positions {needed}")]
    ShortInfluences { needed: usize, got: usize, sets: usize },
}

/// `Ok` when `influences`, the normals and their output (`(normals, out_normals)` lengths, or
/// `None` for positions only) and `out_positions` all cover `vertices` vertices.
pub(crate) fn check_shape(
    vertices: usize,
    influences: Inf<'_>,
    normals: Option<(usize, usize)>,
    out_positions: usize,
) -> Result<(), ShapeError> {
    let needed = vertices;
    if out_positions < needed {
        return Err(ShapeError::ShortOutPositions {
            needed,
            got: out_positions,
        });
    }
    if let Some((normals, out_normals)) = normals {
        if normals < needed {
            return Err(ShapeError::ShortNormals { needed, got: normals });
        }
        if out_normals < needed {
            return Err(ShapeError::ShortOutNormals {
                needed,
                got: out_normals,
            });
        }
    }
    // Saturating: a vertex count so large that its slots overflow cannot be covered.
    let slots = needed.saturating_mul(influences.sets);
    let covered = influences.joints.len().min(influences.weights.len());
    if covered < slots {
        let got = covered / influences.sets.max(1);
        return Err(ShapeError::ShortInfluences {
            needed,
            got,
            sets: influences.sets,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::report_kernels;
    use crate::rig::Influences;
    use crate::skin::dqs::{DualQuat, dual_quat_palette, skin_dqs_reference, skin_dqs_with};
    use crate::skin::fast::tests::{Rng, influences, palette};
    use crate::skin::fast::{Job, skin_lbs_with};
    use crate::skin::skin_lbs_reference;
    use glam::{Mat4, Vec3};

    /// A value no kernel writes: the slots past the vertices keep it when nothing writes out of
    /// bounds.
    const UNTOUCHED: Vec3 = Vec3::splat(-7.5e30);

    struct Data {
        palette: Vec<Mat4>,
        dual_quats: Vec<DualQuat>,
        influences: Influences,
        positions: Vec<Vec3>,
        normals: Vec<Vec3>,
    }

    fn data(vertices: usize, sets: usize, seed: u64) -> Data {
        let mut rng = Rng(seed);
        let palette = palette(&mut rng, 24);
        let mut dual_quats = vec![DualQuat::IDENTITY; palette.len()];
        dual_quat_palette(&palette, &mut dual_quats);
        Data {
            dual_quats,
            palette,
            influences: influences(&mut rng, vertices, sets, 24),
            positions: (0..vertices).map(|_| rng.vec3(2.0)).collect(),
            normals: (0..vertices).map(|_| rng.vec3(1.0).normalize_or(Vec3::Y)).collect(),
        }
    }

    /// Each way a call's slices can fall short, as (out_positions, normals, out_normals,
    /// influence vertices) lengths for `n` vertices, and the refusal it must get (its `sets`
    /// filled in by [`want_for`]).
    fn short_shapes(n: usize) -> Vec<((usize, usize, usize, usize), ShapeError)> {
        vec![
            (
                (n - 1, n, n, n),
                ShapeError::ShortOutPositions { needed: n, got: n - 1 },
            ),
            ((1, n, n, n), ShapeError::ShortOutPositions { needed: n, got: 1 }),
            ((n, n - 3, n, n), ShapeError::ShortNormals { needed: n, got: n - 3 }),
            ((n, n, 0, n), ShapeError::ShortOutNormals { needed: n, got: 0 }),
            (
                (n, n, n, n - 1),
                ShapeError::ShortInfluences {
                    needed: n,
                    got: n - 1,
                    sets: 0,
                },
            ),
        ]
    }

    #[test]
    fn short_slices_are_refused_before_any_kernel_runs() {
        for sets in [1, 2, 3] {
            let n = 37;
            let d = data(n, sets, 11 + sets as u64);
            for ((out_p, normals, out_n, inf_vertices), want) in short_shapes(n) {
                let want = want_for(want, sets);
                let cut = first_vertices(&d.influences, inf_vertices);
                let mut out_positions = vec![UNTOUCHED; out_p];
                let mut out_normals = vec![UNTOUCHED; out_n];
                let job = Job::new(
                    &d.palette,
                    crate::skin::fast::Inf::of(&cut),
                    &d.positions,
                    Some((&d.normals[..normals], &mut out_normals)),
                    &mut out_positions,
                );
                assert_eq!(job.err(), Some(want), "{sets} set(s)");
                // Positions only: the normals' lengths do not matter, the rest still does.
                if !matches!(
                    want,
                    ShapeError::ShortNormals { .. } | ShapeError::ShortOutNormals { .. }
                ) {
                    let job = Job::new(
                        &d.palette,
                        crate::skin::fast::Inf::of(&cut),
                        &d.positions,
                        None,
                        &mut out_positions,
                    );
                    assert_eq!(job.err(), Some(want), "{sets} set(s), positions only");
                }
                assert!(out_positions.iter().chain(&out_normals).all(|&p| p == UNTOUCHED));
            }
        }
    }

    #[test]
    fn the_slice_entry_points_panic_on_short_slices_on_every_kernel_and_write_nothing() {
        let n = 37;
        for sets in [1, 2] {
            let d = data(n, sets, 5 + sets as u64);
            for kernel in report_kernels("LBS and DQS, short slices") {
                for ((out_p, normals, out_n, inf_vertices), want) in short_shapes(n) {
                    let cut = first_vertices(&d.influences, inf_vertices);
                    let mut out_positions = vec![UNTOUCHED; out_p];
                    let mut out_normals = vec![UNTOUCHED; out_n];
                    let lbs = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        skin_lbs_with(
                            kernel,
                            &d.palette,
                            &cut,
                            &d.positions,
                            Some((&d.normals[..normals], &mut out_normals)),
                            &mut out_positions,
                        )
                    }));
                    let message = lbs.expect_err("LBS took short slices");
                    let message = message.downcast_ref::<String>().expect("a formatted panic");
                    assert_eq!(*message, want_for(want, sets).to_string(), "{kernel:?}");
                    let dqs = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        skin_dqs_with(
                            kernel,
                            &d.dual_quats,
                            &cut,
                            &d.positions,
                            &d.normals[..normals],
                            &mut out_positions,
                            &mut out_normals,
                        )
                    }));
                    assert!(dqs.is_err(), "{kernel:?}: DQS took short slices ({want})");
                    assert!(out_positions.iter().chain(&out_normals).all(|&p| p == UNTOUCHED));
                }
            }
        }
    }

    /// The influences of the first `vertices` vertices only.
    fn first_vertices(influences: &Influences, vertices: usize) -> Influences {
        let slots = vertices * influences.sets;
        Influences {
            sets: influences.sets,
            joints: influences.joints[..slots].to_vec(),
            weights: influences.weights[..slots].to_vec(),
        }
    }

    fn want_for(want: ShapeError, sets: usize) -> ShapeError {
        match want {
            ShapeError::ShortInfluences { needed, got, .. } => ShapeError::ShortInfluences { needed, got, sets },
            other => other,
        }
    }

    /// Longer outputs than inputs: every kernel writes exactly the vertices it was given, for
    /// counts that end inside a SIMD block and at its edge, and joints beyond the palette (in the
    /// shared generator) are skipped as the reference skips them.
    #[test]
    fn every_kernel_writes_only_its_vertices_and_matches_the_reference() {
        for sets in [1, 2] {
            for n in [1, 7, 8, 13, 16, 17, 37, 64] {
                let d = data(n, sets, 100 + n as u64);
                let (mut want_p, mut want_n) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                skin_lbs_reference(
                    &d.palette,
                    &d.influences,
                    &d.positions,
                    &d.normals,
                    &mut want_p,
                    &mut want_n,
                );
                let (mut dqs_p, mut dqs_n) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                skin_dqs_reference(
                    &d.dual_quats,
                    &d.influences,
                    &d.positions,
                    &d.normals,
                    &mut dqs_p,
                    &mut dqs_n,
                );
                for kernel in report_kernels("LBS and DQS, outputs longer than inputs") {
                    let (mut out_p, mut out_n) = (vec![UNTOUCHED; n + 33], vec![UNTOUCHED; n + 33]);
                    skin_lbs_with(
                        kernel,
                        &d.palette,
                        &d.influences,
                        &d.positions,
                        Some((&d.normals, &mut out_n)),
                        &mut out_p,
                    );
                    assert_only_vertices_written(&format!("{kernel:?} LBS"), &out_p, &out_n, &want_p, &want_n);
                    let (mut out_p, mut out_n) = (vec![UNTOUCHED; n + 33], vec![UNTOUCHED; n + 33]);
                    skin_dqs_with(
                        kernel,
                        &d.dual_quats,
                        &d.influences,
                        &d.positions,
                        &d.normals,
                        &mut out_p,
                        &mut out_n,
                    );
                    assert_only_vertices_written(&format!("{kernel:?} DQS"), &out_p, &out_n, &dqs_p, &dqs_n);
                }
            }
        }
    }

    /// The first `want_p.len()` outputs match the wanted ones and the slots past them are
    /// untouched.
    fn assert_only_vertices_written(what: &str, out_p: &[Vec3], out_n: &[Vec3], want_p: &[Vec3], want_n: &[Vec3]) {
        let n = want_p.len();
        assert!(
            out_p[n..].iter().chain(&out_n[n..]).all(|&p| p == UNTOUCHED),
            "{what}: wrote past {n} vertices"
        );
        for v in 0..n {
            assert!(out_p[v].abs_diff_eq(want_p[v], 1e-4), "{what} vertex {v}");
            assert!(out_n[v].abs_diff_eq(want_n[v], 1e-4), "{what} normal {v}");
        }
    }
}
