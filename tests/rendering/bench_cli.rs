//! `rigscope bench`: the headless frame loop runs on every path and its last line of output is
//! one JSON object with the per-stage medians and the ratios to the static path.

use crate::common;
use crate::common::gpu;

#[test]
fn bench_prints_medians_for_every_path_and_json_last() {
    // The same adapter check the other GPU tests make (skips with a reason when there is none).
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let output = common::rigscope(["bench", "--synthetic", "3000,12", "--frames", "4", "--size", "96x64"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("GPU path / static"), "{stdout}");
    let last = stdout.lines().last().expect("some output");
    let json: serde_json::Value = serde_json::from_str(last).expect("the last line is JSON");
    assert_eq!(json["joints"], 12);
    assert_eq!(json["influences"], 4);
    assert_eq!(json["skinned_vertices"], 3008, "rings of 64 vertices");
    assert_eq!(json["palette_bytes_per_frame"], 12 * 64);
    let medians = &json["medians"];
    for path in ["gpu", "cpu", "static"] {
        let frame = medians[path]["frame_us"].as_f64().expect("a frame time");
        assert!(frame > 0.0, "{path}: {frame}");
        let encoding = medians[path]["encoding_us"].as_f64().expect("an encoding time");
        assert!(encoding > 0.0 && encoding <= frame, "{path}");
    }
    // Only the CPU path skins on the CPU; the static path evaluates no pose.
    assert!(medians["cpu"]["cpu_skinning_us"].as_f64().is_some_and(|t| t > 0.0));
    assert!(medians["gpu"]["cpu_skinning_us"].is_null());
    assert!(medians["static"]["palette_build_us"].is_null());
    assert!(medians["gpu"]["palette_build_us"].as_f64().is_some_and(|t| t > 0.0));
    let ratio = json["ratios"]["gpu_over_static_frame"].as_f64().expect("a ratio");
    let want = medians["gpu"]["frame_us"].as_f64().unwrap() / medians["static"]["frame_us"].as_f64().unwrap();
    // Both come from the same medians; the JSON rounds times to 0.1 µs and ratios to 0.001.
    assert!((ratio - want).abs() < 0.01 * want + 1e-3, "{ratio} vs {want}");
    if json["gpu_timestamps"] == true {
        assert!(medians["gpu"]["gpu_pass_us"].as_f64().is_some_and(|t| t > 0.0));
    } else {
        assert!(medians["gpu"]["gpu_pass_us"].is_null());
    }
}

#[test]
fn bench_skins_with_the_method_asked_for() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let method = |extra: &[&str]| {
        let args = [&["--synthetic", "3000,12", "--frames", "2", "--size", "64x48"], extra].concat();
        bench_json(&args)["method"].as_str().expect("a method").to_owned()
    };
    assert_eq!(method(&[]), "lbs");
    assert_eq!(method(&["--method", "dqs"]), "dqs");
    assert_eq!(method(&["--dqs-joint", "joint3"]), "blended");
    assert_eq!(method(&["--dqs-joint", "joint3", "--method", "lbs"]), "lbs");
    let unknown = common::rigscope([
        "bench",
        "--synthetic",
        "3000,12",
        "--frames",
        "2",
        "--dqs-joint",
        "no_such_joint",
    ]);
    assert!(!unknown.status.success());
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(stderr.contains("no node named 'no_such_joint'"), "{stderr}");
}

#[test]
fn bench_refuses_a_malformed_synthetic_size() {
    let output = common::rigscope(["bench", "--synthetic", "100000"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("VERTICES,JOINTS"));
}

/// `rigscope bench ARGS --json`'s JSON line.
fn bench_json(args: &[&str]) -> serde_json::Value {
    // A 10 ms budget for --orbit: two million triangles are heavy on any machine lavapipe runs on.
    let output = common::rigscope_with(
        common::rigscope_command()
            .env(rigscope::render::detail::FRAME_BUDGET_ENV, "10")
            .args(["bench", "--json"])
            .args(args),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().expect("some output")).expect("the last line is JSON")
}

/// `rigscope bench --orbit ARGS --json`'s JSON line.
fn orbit_json(args: &[&str]) -> serde_json::Value {
    bench_json(&[&["--orbit"], args].concat())
}

#[test]
fn bench_orbit_shows_a_heavy_rigs_proxy_while_orbiting_then_finishes_and_keeps_the_whole_scene() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let json = orbit_json(&["--synthetic", "1000000,64", "--frames", "4", "--size", "320x240"]);
    assert_eq!(json["triangles"], 1_999_872);
    let frames = &json["frames"];
    let ms = &json["median_ms"];
    let whole = ms["whole"].as_f64().expect("whole frames first");
    assert_eq!(frames["whole"], 3, "{json}");
    assert_eq!(json["has_proxy"], true, "{json}");
    assert_eq!(frames["proxy"], 4, "every orbiting frame draws the proxy: {json}");
    assert_eq!(frames["kept"], 10, "{json}");
    let portions = frames["portions"].as_u64().expect("portions");
    assert!(portions >= 2, "{json}");
    let finished = json["finished_after_ms"].as_f64().expect("finished");
    let portion = ms["portion"].as_f64().unwrap();
    assert!(finished >= portion * (portions as f64 - 1.0) * 0.5, "{json}");
    let proxy = ms["proxy"].as_f64().unwrap();
    let kept = ms["kept"].as_f64().unwrap();
    assert!(proxy < whole && kept < whole, "{json}");
    // A light rig has no proxy: every frame is whole, and the bench stops when it holds still.
    let light = orbit_json(&["--synthetic", "3000,12", "--frames", "4", "--size", "96x64"]);
    assert_eq!(light["has_proxy"], false, "{light}");
    assert_eq!(light["frames"]["whole"], 3 + 4 + 1, "{light}");
    assert_eq!(light["frames"]["proxy"], 0, "{light}");
    assert!(light["finished_after_ms"].is_null(), "{light}");
}
