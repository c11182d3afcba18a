//! The windowed path for real: the viewer opens a window (under Xvfb when there is no display),
//! draws frames with egui, and exits cleanly after a set number of frames.

mod common;

use rigscope::render::REQUIRE_ADAPTER_ENV;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FRAMES: u64 = 90;
const TIMEOUT: Duration = Duration::from_secs(180);

fn has_program(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
}

#[test]
fn viewer_draws_frames_in_a_window_and_exits_cleanly() {
    let binary = env!("CARGO_BIN_EXE_rigscope");
    let frames = FRAMES.to_string();
    let mut command = if std::env::var_os("DISPLAY").is_some() {
        let mut c = Command::new(binary);
        c.args(["--exit-after-frames", &frames]);
        c
    } else if has_program("xvfb-run") {
        let mut c = Command::new("xvfb-run");
        c.args([
            "-a",
            "-s",
            "-screen 0 1280x800x24",
            binary,
            "--exit-after-frames",
            &frames,
        ]);
        c
    } else if std::env::var_os(REQUIRE_ADAPTER_ENV).is_some() {
        panic!("no DISPLAY and no xvfb-run (Debian package xvfb), but {REQUIRE_ADAPTER_ENV} is set");
    } else {
        eprintln!("skipped: no DISPLAY and no xvfb-run to provide one");
        return;
    };
    // Settings go to a folder of the test's own, never the user's.
    let config = common::temp_dir("window-config");
    // Wayland would be tried first when its socket exists; this test is about the X11 path.
    command
        .env(rigscope::settings::CONFIG_DIR_ENV, &config)
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = command.spawn().expect("the viewer starts");
    let started = Instant::now();
    let output = common::wait_or_kill(child, TIMEOUT, "the viewer");
    let status = output.status;
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("viewer ran {:.1} s: {}", started.elapsed().as_secs_f32(), stderr.trim());
    assert!(status.success(), "the viewer failed: {stderr}");
    assert!(
        stderr.contains(&format!("drew {FRAMES} frames")),
        "the viewer did not report its frames: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let _ = std::fs::remove_dir_all(&config);
    assert!(
        !stderr.contains("reported an error"),
        "the graphics device reported an error: {stderr}"
    );
}
