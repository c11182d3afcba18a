//! The windowed path for real: the viewer opens a window (under Xvfb when there is no display),
//! draws frames with egui, and exits cleanly after a set number of frames.

use crate::common;

use crate::common::skinned::{SkinnedMesh, TestJoint, blend};
use crate::common::viewer_command;
use glam::Vec3;
use std::process::Stdio;
use std::time::{Duration, Instant};

const FRAMES: u64 = 90;
const TIMEOUT: Duration = Duration::from_secs(180);

#[test]
fn viewer_draws_frames_in_a_window_and_exits_cleanly() {
    let frames = FRAMES.to_string();
    let Some(mut command) = viewer_command(&["--exit-after-frames", &frames]) else {
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

#[test]
fn a_heavy_rig_in_the_window_gets_its_proxy_and_a_whole_screenshot() {
    // A tube of 4,000 rings of 128 vertices: 512,000 vertices and a million triangles, with a
    // budget of 1 ms a frame so that it is heavy on any machine.
    let mut mesh = SkinnedMesh::new(vec![
        TestJoint::new("root", None, Vec3::ZERO),
        TestJoint::new("tip", Some(0), Vec3::Y),
    ]);
    mesh.add_tube(Vec3::ZERO, Vec3::Y * 2.0, 0.2, 4000, 128, |p| {
        blend(0, 1, (p.y / 2.0).clamp(0.0, 1.0))
    });
    let folder = common::temp_dir("window-heavy");
    let file = folder.join("heavy.glb");
    std::fs::write(&file, mesh.glb()).unwrap();
    let shot = folder.join("heavy.png");
    let (file_arg, shot_arg) = (file.display().to_string(), shot.display().to_string());
    let Some(mut command) = viewer_command(&[&file_arg, "--exit-after-frames", "30", "--screenshot", &shot_arg]) else {
        return;
    };
    command
        .env(rigscope::settings::CONFIG_DIR_ENV, folder.join("config"))
        .env("RUST_LOG", "rigscope=info")
        .env(rigscope::render::detail::FRAME_BUDGET_ENV, "1")
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = common::wait_or_kill(command.spawn().expect("the viewer starts"), TIMEOUT, "the viewer");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the viewer failed: {stderr}");
    // The 30, then one more whole for the screenshot.
    assert!(stderr.contains("drew 31 frames"), "{stderr}");
    // The window measured the whole scene over its budget and built the proxy to orbit with.
    assert!(
        stderr.contains("triangles (of 1023744) for orbiting built"),
        "no proxy was built: {stderr}"
    );
    // The screenshot is taken of the whole scene: the tube is there, in the tube's grey-blue
    // shading rather than the background.
    let image = image::open(&shot).expect("the screenshot is a PNG").to_rgba8();
    let (w, h) = image.dimensions();
    let centre = image.get_pixel(w / 2, h / 2);
    let corner = image.get_pixel(w - 2, 2);
    assert_ne!(centre, corner, "nothing drawn in the middle of the view");
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn the_window_opens_a_generated_rig_and_shows_the_demo_when_its_size_is_impossible() {
    let folder = common::temp_dir("window-synthetic");
    let run = |sizes: &str| {
        let mut command = viewer_command(&["--synthetic", sizes, "--exit-after-frames", "3"])?;
        command
            .env(rigscope::settings::CONFIG_DIR_ENV, folder.join("config"))
            .env("RUST_LOG", "rigscope=info")
            .env_remove("WAYLAND_DISPLAY")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let output = common::wait_or_kill(command.spawn().expect("the viewer starts"), TIMEOUT, "the viewer");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "the viewer failed: {stderr}");
        assert!(stderr.contains("drew 3 frames"), "{stderr}");
        Some(stderr)
    };
    let Some(tube) = run("4096,16") else { return };
    assert!(
        tube.contains("showing synthetic tube, 4096 vertices, 16 joints"),
        "{tube}"
    );
    let Some(impossible) = run("4096,70000") else { return };
    assert!(impossible.contains("showing demo.glb"), "{impossible}");
    assert!(
        impossible.contains("1 ≤ joints ≤ 65535"),
        "the error is shown: {impossible}"
    );
    let _ = std::fs::remove_dir_all(&folder);
}
