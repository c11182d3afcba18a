//! Choosing the LBS kernel by measuring it. Which one is fastest depends on more than the
//! features a CPU reports: on a CPU that runs 256-bit instructions as two 128-bit halves (AMD
//! Zen 1, for one), the AVX2 kernel skins positions alone slower than the portable one, while
//! with normals it still wins. So the first call for each kind of job times every kernel this
//! CPU runs on a small made-up mesh and keeps the fastest; results agree to rounding whichever
//! runs.

use super::{Inf, Job, Kernel};
use glam::{Mat4, Quat, Vec3};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Vertices of the timing mesh: a few blocks of every kernel, small enough to stay in cache
/// and to cost well under a millisecond per kernel.
const VERTICES: usize = 2048;
/// Joints of its palette.
const JOINTS: usize = 64;
/// Timed runs per kernel; the fastest counts (the others saw interruptions).
const RUNS: usize = 5;

/// The fastest LBS kernel here for jobs of `sets` influence sets (1 or 2; more take the
/// portable path), with or without normals: measured on first use, then remembered.
pub fn fastest(sets: usize, normals: bool) -> Kernel {
    static CHOICES: [[OnceLock<Kernel>; 2]; 2] =
        [[OnceLock::new(), OnceLock::new()], [OnceLock::new(), OnceLock::new()]];
    if !matches!(sets, 1 | 2) {
        return Kernel::Portable;
    }
    *CHOICES[sets - 1][usize::from(normals)].get_or_init(|| {
        let kernel = measure(sets, normals);
        log::debug!(
            "LBS kernel for {sets} influence set(s){}: {}",
            if normals { " with normals" } else { "" },
            kernel.label()
        );
        kernel
    })
}

/// Times every available kernel on the made-up mesh; the fastest.
fn measure(sets: usize, normals: bool) -> Kernel {
    let palette: Vec<Mat4> = (0..JOINTS)
        .map(|j| {
            let f = j as f32;
            Mat4::from_scale_rotation_translation(
                Vec3::splat(1.0 + 0.01 * f),
                Quat::from_rotation_y(0.1 * f) * Quat::from_rotation_x(0.05 * f),
                Vec3::new(f * 0.1, -f * 0.05, 0.3),
            )
        })
        .collect();
    let positions: Vec<Vec3> = (0..VERTICES).map(|i| Vec3::new(i as f32 * 0.001, 1.0, -0.5)).collect();
    let input_normals = vec![Vec3::Y; VERTICES];
    // Four falling weights per set, on joints spread over the palette: every vertex blends.
    let joints: Vec<[u16; 4]> = (0..VERTICES * sets)
        .map(|i| std::array::from_fn(|k| ((i * 7 + k * 13) % JOINTS) as u16))
        .collect();
    let weights = vec![
        [
            0.4f32 / sets as f32,
            0.3 / sets as f32,
            0.2 / sets as f32,
            0.1 / sets as f32
        ];
        VERTICES * sets
    ];
    let (mut out_p, mut out_n) = (vec![Vec3::ZERO; VERTICES], vec![Vec3::ZERO; VERTICES]);
    let influences = Inf {
        sets,
        joints: &joints,
        weights: &weights,
    };
    let time = |kernel: Kernel, out_p: &mut [Vec3], out_n: &mut [Vec3]| {
        (0..=RUNS)
            .map(|_| {
                let start = Instant::now();
                let normals = normals.then_some((&input_normals[..], &mut *out_n));
                // The made-up slices all hold VERTICES vertices.
                if let Ok(job) = Job::new(&palette, influences, &positions, normals, out_p) {
                    job.run(kernel);
                }
                start.elapsed()
            })
            .skip(1)
            .min()
            .unwrap_or(Duration::MAX)
    };
    Kernel::ALL
        .into_iter()
        .filter(|k| k.is_available())
        .map(|kernel| (time(kernel, &mut out_p, &mut out_n), kernel))
        .min_by_key(|(elapsed, _)| *elapsed)
        .map_or(Kernel::Portable, |(_, kernel)| kernel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_is_a_kernel_this_cpu_runs_and_it_stays() {
        for sets in [1, 2] {
            for normals in [false, true] {
                let kernel = fastest(sets, normals);
                assert!(kernel.is_available(), "{kernel:?}");
                assert_eq!(fastest(sets, normals), kernel, "measured once");
            }
        }
        assert_eq!(fastest(3, true), Kernel::Portable);
    }
}
