//! A file opened while a window is open goes to that window: the second start hands it over
//! and exits, and the first window loads it (Unix only).
#![cfg(unix)]

use crate::common;

use crate::common::viewer_command;
use rigscope::rig::demo::demo_glb;
use rigscope::settings::CONFIG_DIR_ENV;
use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn a_second_start_opens_its_file_in_the_window_already_open() {
    let dir = common::temp_dir("single-instance");
    let runtime = dir.join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    let file = dir.join("second.glb");
    std::fs::write(&file, demo_glb(4)).unwrap();
    let Some(mut command) = viewer_command(&[]) else {
        return;
    };
    // Its own process group, so that the window and the X server under it end together.
    let mut window = command
        .env(CONFIG_DIR_ENV, &dir)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("RUST_LOG", "rigscope=info")
        .env_remove("WAYLAND_DISPLAY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let stderr = window.stderr.take().unwrap();
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut log = String::new();
    let mut wait_for = |needle: &str| {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(120) {
            match received.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    let found = line.contains(needle);
                    log.push_str(&line);
                    log.push('\n');
                    if found {
                        return (true, log.clone());
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        (false, log.clone())
    };
    let (opened, text) = wait_for("window open");
    let second = opened.then(|| {
        // Started from the file's folder with a relative name, as a file manager may.
        std::process::Command::new(env!("CARGO_BIN_EXE_rigscope"))
            .arg("second.glb")
            .current_dir(&dir)
            .env(CONFIG_DIR_ENV, &dir)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("RUST_LOG", "rigscope=info")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .unwrap()
    });
    let (loaded, text) = match &second {
        Some(_) => wait_for(&format!("opened {}", file.display())),
        None => (false, text),
    };
    let _ = std::process::Command::new("kill")
        .args(["-TERM", "--", &format!("-{}", window.id())])
        .status();
    let _ = window.wait();
    assert!(opened, "the window did not open:\n{text}");
    let second = second.unwrap();
    let second_log = String::from_utf8_lossy(&second.stderr);
    // With no display it could only have succeeded by handing the file over.
    assert!(second.status.success(), "the second start failed:\n{second_log}");
    assert!(
        second_log.contains("opened in the Rigscope window already open"),
        "{second_log}"
    );
    assert!(loaded, "the window did not load the file handed over:\n{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
