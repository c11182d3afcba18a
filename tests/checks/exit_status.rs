//! Every subcommand's exit status is the same rule: 0 ran with nothing to flag, 1 ran and flags
//! something, 2 could not run (a file that does not load, a bad argument); and every command
//! with `--json` prints one error document shape when it fails.

use crate::common::{run_rigscope, temp_dir};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A file that does not exist, in a fresh folder.
fn missing(name: &str) -> String {
    temp_dir(name).join("missing.glb").display().to_string()
}

/// The demo rig written as a file (for the commands that take no `demo`).
fn demo_file(name: &str) -> PathBuf {
    let path = temp_dir(name).join("demo.glb");
    let (code, _, stderr) = run_rigscope(&["make-demo", path.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    path
}

/// Runs `args`, expecting status 2 with a message on standard error; returns standard output.
fn fails(args: &[&str]) -> String {
    let (code, stdout, stderr) = run_rigscope(args);
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains("rigscope: ") || stderr.contains("error:"),
        "{args:?}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    stdout
}

/// Runs `args` (which include `--json`), expecting status 2 and one error document on standard
/// output: `file`, `loaded` and `error`, nothing else.
fn fails_with_json(args: &[&str], file: &str, loaded: bool) -> String {
    let stdout = fails(args);
    let document: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: no JSON document ({e}): {stdout}"));
    let mut keys: Vec<&str> = document
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["error", "file", "loaded"], "{args:?}: {document}");
    assert_eq!(document["file"], file, "{args:?}");
    assert_eq!(document["loaded"], loaded, "{args:?}");
    document["error"].as_str().expect("a message").to_owned()
}

#[test]
fn a_missing_file_exits_with_2_from_every_command() {
    let gone = missing("exit-missing");
    let out = temp_dir("exit-missing-out");
    let png = out.join("frame.png").display().to_string();
    let obj = out.join("pose.obj").display().to_string();
    let glb = out.join("out.glb").display().to_string();
    for args in [
        vec!["render", &gone, "--out", &png],
        vec!["render", &gone, "--out", &png, "--ui"],
        vec!["inspect", &gone],
        vec!["inspect", &gone, "--curves", "--joint", "joint1"],
        vec!["audit", &gone],
        vec!["audit", &gone, "--motion"],
        vec!["fix", &gone, "--normalize", "--out", &glb],
        vec!["clips", &gone, "--out", &glb],
        vec!["diff", &gone, "demo"],
        vec!["diff", "demo", &gone],
        vec!["export", &gone, "--out", &obj],
        vec!["bench", &gone, "--frames", "1"],
    ] {
        fails(&args);
    }
    let nowhere = Path::new(&gone).with_file_name("no-folder").join("demo.glb");
    fails(&["make-demo", nowhere.to_str().unwrap()]);
    for written in [&png, &obj, &glb] {
        assert!(!Path::new(written).exists(), "{written} was written");
    }
}

#[test]
fn a_missing_file_prints_the_same_json_error_from_every_json_command() {
    let gone = missing("exit-missing-json");
    for args in [
        vec!["inspect", &gone, "--json"],
        vec!["inspect", &gone, "--json", "--curves", "--joint", "joint1"],
        vec!["audit", &gone, "--json"],
        vec!["audit", &gone, "--json", "--motion"],
        vec!["clips", &gone, "--dry-run", "--json"],
        vec!["diff", "demo", &gone, "--json"],
        vec!["bench", &gone, "--frames", "1", "--json"],
    ] {
        let error = fails_with_json(&args, &gone, false);
        assert!(error.starts_with(&format!("cannot load {gone}")), "{args:?}: {error}");
    }
}

#[test]
fn a_bad_argument_exits_with_2_from_every_command() {
    let demo = demo_file("exit-bad-argument");
    let demo = demo.to_str().unwrap();
    let out = temp_dir("exit-bad-argument-out");
    let png = out.join("frame.png").display().to_string();
    let glb = out.join("out.glb").display().to_string();
    for args in [
        // Refused by the command once the file is loaded.
        vec!["render", "demo", "--out", &png, "--clip", "NoSuchClip"],
        vec!["render", "demo", "--out", &png, "--bend", "no such joint=0,0,45"],
        vec!["inspect", "demo", "--keys-jump-deg", "0"],
        vec!["inspect", "demo", "--vertex", "9:0:0"],
        vec!["inspect", "demo", "--curves", "--joint", "no such joint"],
        vec!["audit", "demo", "--joint", "no such joint"],
        vec!["audit", "demo", "--motion", "--fps", "0"],
        vec!["fix", demo, "--out", &glb],
        vec!["clips", demo, "--drop", "NoSuchClip", "--out", &glb],
        vec!["diff", "demo", "demo", "--at", "NaN"],
        vec!["export", "demo", "--out", "pose.txt"],
        vec!["bench", "demo", "--frames", "1", "--dqs-joint", "no such joint"],
        // Refused by the command line itself.
        vec!["render", "demo", "--out", &png, "--size", "0x0"],
        vec!["inspect", "demo", "--vertex", "0:0"],
        vec!["audit", "demo", "--steps", "0"],
        vec!["fix", demo, "--dry-run", "--limit", "9"],
        vec!["clips", demo, "--trim", "Wave", "--dry-run"],
        vec!["diff", "demo"],
        vec!["export", "demo"],
        vec!["make-demo", "demo.glb", "--joints", "many"],
        vec!["bench", "--synthetic", "100000"],
        vec!["no-such-command"],
    ] {
        fails(&args);
    }
    assert!(!Path::new(&png).exists() && !Path::new(&glb).exists());
}

#[test]
fn a_bad_argument_prints_the_same_json_error_with_the_file_loaded() {
    let demo = demo_file("exit-bad-argument-json");
    let demo = demo.to_str().unwrap();
    for (args, file) in [
        (vec!["inspect", "demo", "--json", "--vertex", "9:0:0"], "demo"),
        (vec!["inspect", "demo", "--json", "--keys-jump-deg", "0"], "demo"),
        (
            vec!["inspect", "demo", "--json", "--curves", "--joint", "no such joint"],
            "demo",
        ),
        (vec!["audit", "demo", "--json", "--joint", "no such joint"], "demo"),
        (vec!["audit", "demo", "--json", "--motion", "--fps", "0"], "demo"),
        (vec!["clips", demo, "--json", "--drop", "NoSuchClip", "--dry-run"], demo),
        (vec!["diff", "demo", "demo", "--json", "--at", "NaN"], "demo"),
        (
            vec![
                "bench",
                "demo",
                "--json",
                "--frames",
                "1",
                "--dqs-joint",
                "no such joint",
            ],
            "demo",
        ),
    ] {
        let error = fails_with_json(&args, file, true);
        assert!(!error.is_empty(), "{args:?}");
    }
}

#[test]
fn the_window_s_clip_flags_need_clip_files_before_it_opens() {
    for extra in [
        &["--map-joint", "A=B"][..],
        &["--in-place"],
        &["--clips", "a.glb", "--map-joint", "A"],
    ] {
        let args: Vec<&str> = ["demo"].into_iter().chain(extra.iter().copied()).collect();
        let (code, _, stderr) = run_rigscope(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("--clips") || stderr.contains("SOURCE=TARGET"),
            "{args:?}: {stderr}"
        );
    }
}
