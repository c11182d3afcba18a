//! Soak test, not part of the fast test run: plays a clip headless for several minutes, switching
//! between GPU skinning (palette in a storage buffer) and CPU skinning (vertices skinned on the
//! CPU and uploaded) and between linear blend and dual quaternion skinning, reloading the rig
//! now and then, and checks that resident memory stops growing after a warm-up.
//!
//! ```sh
//! cargo test --release --test app soak:: -- --ignored --nocapture
//! RIGSCOPE_SOAK_SECONDS=60 RIGSCOPE_SOAK_VERBOSE=1 cargo test --release --test app soak:: -- --ignored --nocapture
//! ```
//!
//! The adapter is the one `rigscope render` would use (`WGPU_BACKEND` picks another). On Mesa
//! 22.3's lavapipe, the Vulkan path's resident memory grows with every scene frame; see the
//! notes in docs/testing.md.

use crate::common;
use crate::common::gpu;

use rigscope::draw::ViewRenderer;
use rigscope::render::Offscreen;
use rigscope::skin::{SkinningMethod, SkinningPath};
use rigscope::viewer::Viewer;
use std::time::{Duration, Instant};

/// How long the clip plays unless `RIGSCOPE_SOAK_SECONDS` says otherwise.
const DEFAULT_SECONDS: u64 = 240;
/// Memory may move this much above its level at the end of the warm-up.
const GROWTH_BOUND: u64 = 32 << 20;
/// Frames between switching skinning path, and between reloading the rig.
const SWITCH_EVERY: u64 = 45;
const RELOAD_EVERY: u64 = 900;

/// Resident set size of this process, from `/proc/self/statm` (second field, in pages).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm is readable");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|f| f.parse().ok())
        .expect("statm has a resident field");
    pages * 4096
}

fn load_rig() -> (rigscope::rig::Rig, String) {
    match common::shared_rigs() {
        Some(dir) => (common::load_rig(&dir, "Fox.glb"), "Fox.glb".into()),
        None => (common::load_demo(), "demo.glb".into()),
    }
}

#[test]
#[ignore = "runs for minutes; cargo test --release --test app soak:: -- --ignored"]
fn playing_for_minutes_with_cpu_and_gpu_skinning_does_not_grow_memory() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let seconds = std::env::var("RIGSCOPE_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SECONDS);
    let total = Duration::from_secs(seconds);
    let verbose = std::env::var_os("RIGSCOPE_SOAK_VERBOSE").is_some();
    eprintln!("soak: {} for {seconds} s", gpu.describe());
    let warm_up = total / 5;

    let (rig, name) = load_rig();
    assert!(!rig.clips.is_empty(), "{name} has clips to play");
    let mut viewer = Viewer::new(rig, None);
    viewer.set_looping(true);
    let target = Offscreen::new(&gpu, 256, 192).expect("an offscreen target");
    let mut renderer = ViewRenderer::offscreen(&gpu);

    let started = Instant::now();
    let mut frames = 0u64;
    let mut baseline: Option<u64> = None;
    let mut peak = 0u64;
    let mut samples = Vec::new();
    let mut last_sample = Instant::now();
    let mut foreground_checked = 0;
    while started.elapsed() < total {
        if frames.is_multiple_of(SWITCH_EVERY) {
            let step = frames / SWITCH_EVERY;
            let path = if step.is_multiple_of(2) {
                SkinningPath::Gpu
            } else {
                SkinningPath::Cpu
            };
            let method = if step % 4 < 2 {
                SkinningMethod::Lbs
            } else {
                SkinningMethod::Dqs
            };
            viewer.set_skinning(path, method);
        }
        if frames > 0 && frames.is_multiple_of(RELOAD_EVERY) {
            // Opening the file again: the old rig and its GPU buffers are dropped.
            let (rig, _) = load_rig();
            viewer.set_rig(rig, None);
        }
        viewer.tick(1.0 / 30.0);
        let image = renderer
            .render_image(&gpu, &target, &mut viewer, None, None)
            .expect("a frame renders");
        if frames.is_multiple_of(300) {
            // The rig is really drawn on both paths, not an empty frame.
            let background = *image.get_pixel(0, 0);
            let drawn = image.pixels().filter(|p| *p != &background).count();
            assert!(
                drawn > 500,
                "frame {frames} ({:?}) shows {drawn} rig pixels",
                viewer.skinning_path()
            );
            foreground_checked += 1;
        }
        frames += 1;

        if last_sample.elapsed() >= Duration::from_secs(1) {
            last_sample = Instant::now();
            let rss = resident_bytes();
            let elapsed = started.elapsed();
            if verbose {
                eprintln!("{:5.1} s  frame {frames:6}  {} MiB", elapsed.as_secs_f64(), rss >> 20);
            }
            // Warm-up: a fifth of the time, and at least two reloads, so that every path, method
            // and pipeline has been used and the allocators have settled.
            if elapsed >= warm_up && frames >= 2 * RELOAD_EVERY {
                let base = *baseline.get_or_insert(rss);
                peak = peak.max(rss);
                samples.push((elapsed.as_secs_f64(), rss));
                assert!(
                    rss <= base + GROWTH_BOUND,
                    "resident memory grew from {} MiB to {} MiB after {:.0} s ({frames} frames)",
                    base >> 20,
                    rss >> 20,
                    elapsed.as_secs_f64()
                );
            }
        }
    }
    let base = baseline.expect("the soak ran past its warm-up");
    let last = samples.last().map_or(base, |s| s.1);
    // Least-squares slope of resident memory over the measured part, in bytes per minute.
    let n = samples.len() as f64;
    let (mean_t, mean_m) = (
        samples.iter().map(|s| s.0).sum::<f64>() / n,
        samples.iter().map(|s| s.1 as f64).sum::<f64>() / n,
    );
    let covariance: f64 = samples.iter().map(|s| (s.0 - mean_t) * (s.1 as f64 - mean_m)).sum();
    let variance: f64 = samples.iter().map(|s| (s.0 - mean_t).powi(2)).sum();
    let per_minute = if variance > 0.0 {
        covariance / variance * 60.0
    } else {
        0.0
    };
    eprintln!(
        "soak: {name}, {frames} frames in {:.0} s ({:.0} fps); resident after warm-up {} MiB, peak {} MiB, last {} MiB, trend {:+.2} MiB/min",
        started.elapsed().as_secs_f64(),
        frames as f64 / started.elapsed().as_secs_f64(),
        base >> 20,
        peak >> 20,
        last >> 20,
        per_minute / (1 << 20) as f64
    );
    assert!(foreground_checked >= 2);
    assert!(
        per_minute < (GROWTH_BOUND as f64) / (seconds as f64 / 60.0),
        "resident memory trends upward by {:.2} MiB per minute",
        per_minute / (1 << 20) as f64
    );
}
