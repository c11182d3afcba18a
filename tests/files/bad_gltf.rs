//! Every file under `../shared/bad-gltf/` (invalid files from the Khronos glTF-Validator's test
//! suite, each with the validator's expected report next to it as `<file>.report.json`) must give
//! a clear error naming the problem, or load with an error finding that does: never a panic, a
//! hang or a huge allocation. Checked in-process (library, under `catch_unwind`) and through the
//! `rigscope inspect` and `rigscope render` commands.
//!
//! And every file under `../shared/valid-gltf/` (files the same validator calls valid) must
//! open: a viewer may note what it ignores, but it refuses none of them.
//!
//! When a folder is absent (a fresh clone) its test prints why and passes; when it is present,
//! any misbehaviour fails it.

use crate::common;

use crate::common::shared_folder;
use rigscope::commands::{EXIT_FAILED, EXIT_FLAGGED};
use rigscope::report::{RigReport, Severity};
use rigscope::rig::load_file;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// What one file must produce.
enum Expect {
    /// The load fails with a message containing all of these.
    LoadError(&'static [&'static str]),
    /// The file loads; its report has these findings (code, text in the message), the first an
    /// error.
    Findings(&'static [(&'static str, &'static str)]),
}

/// Expectations per file, by path relative to the folder.
const EXPECTED: &[(&str, Expect)] = &[
    (
        "accessor/unresolved_bufferviews.gltf",
        Expect::LoadError(&[
            "accessors[0].bufferView",
            "index out of range",
            "accessors[0].sparse.values.bufferView",
        ]),
    ),
    (
        "accessor_data/out_of_range_elements_float.gltf",
        Expect::Findings(&[
            (
                "file-data",
                "accessor 0: declared min [0, 0, 0] does not match its data's min [-1, -2, -3]",
            ),
            (
                "file-data",
                "accessor 0: declared max [1, 1, 1] does not match its data's max [2, 3, 4]",
            ),
        ]),
    ),
    (
        "animation/sampler_input_format_invalid.gltf",
        Expect::Findings(&[
            (
                "channel-left-out",
                "key times: accessor 0 is SCALAR of unsigned int; expected SCALAR of float",
            ),
            ("clip-empty", "has no channel that can be played"),
        ]),
    ),
    (
        "animation/unresolved_channel_target.gltf",
        Expect::LoadError(&["animations[0].channels[0].target.node", "index out of range"]),
    ),
    (
        "animation_data/invalid_input_values.gltf",
        Expect::Findings(&[
            ("keys-not-increasing", "key 3 repeats time 1"),
            ("keys-negative-time", "keys before time 0"),
        ]),
    ),
    (
        "buffer/not_found.gltf",
        Expect::LoadError(&["buffer 0", "'not_found.bin'", "missing or unreadable"]),
    ),
    (
        "buffer_view/invalid_length.gltf",
        Expect::Findings(&[
            (
                "file-data",
                "buffer view 0 covers bytes 0..5 of buffer 0, which has only 4 bytes",
            ),
            (
                "file-data",
                "buffer view 1 covers bytes 4..8 of buffer 0, which has only 4 bytes",
            ),
        ]),
    ),
    (
        "glb/chunk_too_big.glb",
        Expect::LoadError(&["GLB header declares a total length of 13 bytes, but the file has 48"]),
    ),
    (
        "glb/invalid_magic.glb",
        Expect::LoadError(&["GLB magic 'glTF'", "JSON object"]),
    ),
    (
        "mesh/unequal_joints.gltf",
        Expect::Findings(&[
            ("weights-all-zero", "3 vertices have all weights zero"),
            ("influences-unpaired", "JOINTS_1 without WEIGHTS_1"),
        ]),
    ),
    (
        "mesh_data/joints_weights_complex.gltf",
        Expect::Findings(&[
            (
                "joint-index-outside-skin",
                "beyond skin 'skin 1' (8 joints; largest index 9)",
            ),
            ("weights-negative", "1 vertices have negative weights"),
            ("joints-duplicate", "1 vertices list the same joint twice"),
            ("primitive-not-drawn", "mode 0"),
        ]),
    ),
    ("node/node_loop.gltf", Expect::LoadError(&["cycle", "nodes 0, 1, 2"])),
    (
        "node/node_skin_without_skinned_mesh.gltf",
        Expect::Findings(&[(
            "skin-without-weights",
            "node 0 has skin 'skin 0', but mesh 'mesh 0' has primitives without JOINTS_0/WEIGHTS_0",
        )]),
    ),
    (
        "skin/no_common_root.gltf",
        Expect::Findings(&[("skin-no-common-root", "2 separate roots: node 0, node 1")]),
    ),
    (
        "skin/unresolved_joint.gltf",
        Expect::LoadError(&["skins[0].joints[0]", "index out of range"]),
    ),
    (
        "skin_data/invalid_ibm.gltf",
        Expect::Findings(&[
            ("inverse-bind-not-affine", "1 inverse bind matrices are not affine"),
            ("inverse-bind-not-invertible", "cannot be inverted"),
        ]),
    ),
];

/// Longest a command may run on one of these small files before it counts as a hang.
const COMMAND_LIMIT: Duration = Duration::from_secs(60);

/// Every `.gltf`/`.glb` under `dir`, recursively, sorted.
fn model_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).expect("the folder is readable") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if matches!(path.extension().and_then(|e| e.to_str()), Some("gltf" | "glb")) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn relative(dir: &Path, file: &Path) -> String {
    file.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/")
}

/// Runs the rigscope binary with a time limit; a command still running then is killed and fails
/// the test as a hang.
fn run(args: &[&std::ffi::OsStr]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_rigscope"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the rigscope binary starts");
    common::wait_or_kill(child, COMMAND_LIMIT, &format!("rigscope {args:?}"))
}

/// The validator's error count for `file`, from `<file>.report.json`.
fn validator_errors(file: &Path) -> Option<u64> {
    let mut report = file.as_os_str().to_owned();
    report.push(".report.json");
    let text = std::fs::read(&report).ok()?;
    let json: Value = serde_json::from_slice(&text).ok()?;
    json["issues"]["numErrors"].as_u64()
}

#[test]
fn every_bad_file_gives_a_clear_error_or_an_error_finding_without_panicking() {
    let Some(dir) = shared_folder("bad-gltf") else { return };
    let files = model_files(&dir);
    assert!(!files.is_empty(), "{} holds no .gltf/.glb files", dir.display());
    let out_dir = common::temp_dir("bad-gltf");
    let mut failures = Vec::new();
    for file in &files {
        let name = relative(&dir, file);
        if let Err(problem) = check_file(file, &name, &out_dir) {
            failures.push(format!("{name}: {problem}"));
        }
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    let unlisted: Vec<&str> = EXPECTED
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !files.iter().any(|f| relative(&dir, f) == *name))
        .collect();
    assert!(
        unlisted.is_empty(),
        "expected files missing from {}: {unlisted:?}",
        dir.display()
    );
    assert!(
        failures.is_empty(),
        "{} of {} files misbehaved:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

fn check_file(file: &Path, name: &str, out_dir: &Path) -> Result<(), String> {
    // In-process: no panic, an error or a report, quickly.
    let started = Instant::now();
    let loaded = std::panic::catch_unwind(|| load_file(file).map(|rig| (RigReport::new(&rig), rig)))
        .map_err(|_| "the library panicked".to_string())?;
    if started.elapsed() > Duration::from_secs(10) {
        return Err(format!("loading took {:?}", started.elapsed()));
    }
    let expected = EXPECTED.iter().find(|(n, _)| *n == name).map(|(_, e)| e);
    match (&loaded, expected) {
        (Err(e), Some(Expect::LoadError(parts))) => {
            for part in *parts {
                if !e.to_string().contains(part) {
                    return Err(format!("load error '{e}' does not mention '{part}'"));
                }
            }
        }
        (Ok((report, _)), Some(Expect::Findings(findings))) => {
            if !report.has_errors() {
                return Err("loads with no error finding".into());
            }
            for (code, text) in *findings {
                if !report
                    .findings
                    .iter()
                    .any(|f| f.code == *code && f.message.contains(text))
                {
                    let all: Vec<String> = report
                        .findings
                        .iter()
                        .map(|f| format!("[{}] {}", f.code, f.message))
                        .collect();
                    return Err(format!("no '{code}' finding mentioning '{text}'; findings: {all:#?}"));
                }
            }
        }
        (Err(e), Some(Expect::Findings(_))) => return Err(format!("expected to load, failed: {e}")),
        (Ok(_), Some(Expect::LoadError(_))) => return Err("expected a load error, but it loaded".into()),
        // A file added to the folder later: it must still fail clearly or have an error finding.
        (Err(e), None) if e.to_string().trim().is_empty() => return Err("empty load error".into()),
        (Ok((report, _)), None) if !report.has_errors() => return Err("loads with no error finding".into()),
        (_, None) => eprintln!("note: {name} has no entry in the expectation table"),
    }
    // Every file here is invalid for the Khronos validator; each must be an error for us too.
    if validator_errors(file) == Some(0) {
        return Err("its report.json has no errors; the folder should hold invalid files only".into());
    }

    // `rigscope inspect`: exit 2 with the message on stderr, or exit 1 with the findings.
    let inspect = run(&["inspect".as_ref(), file.as_os_str()]);
    let stdout = String::from_utf8_lossy(&inspect.stdout);
    let stderr = String::from_utf8_lossy(&inspect.stderr);
    if stderr.contains("panicked") {
        return Err(format!("inspect panicked: {stderr}"));
    }
    let code = inspect.status.code();
    match &loaded {
        Err(e) => {
            if code != Some(EXIT_FAILED as i32) {
                return Err(format!("inspect exited with {code:?} for a file that does not load"));
            }
            if !stderr.contains(&e.to_string()) {
                return Err(format!("inspect's stderr does not carry the load error: {stderr}"));
            }
        }
        Ok((report, _)) => {
            if code != Some(EXIT_FLAGGED as i32) {
                return Err(format!("inspect exited with {code:?} for a file with error findings"));
            }
            for f in report.findings.iter().filter(|f| f.severity == Severity::Error) {
                if !stdout.contains(&f.message) {
                    return Err(format!("inspect's output lacks the finding '{}'", f.message));
                }
            }
        }
    }

    // `rigscope inspect --json`: one JSON document either way.
    let json = run(&["inspect".as_ref(), "--json".as_ref(), file.as_os_str()]);
    let document: Value =
        serde_json::from_slice(&json.stdout).map_err(|e| format!("inspect --json printed no JSON document ({e})"))?;
    if document["loaded"].as_bool() != Some(loaded.is_ok()) {
        return Err(format!("inspect --json says loaded = {}", document["loaded"]));
    }
    if let Ok((report, _)) = &loaded
        && document["summary"]["errors"].as_u64() != Some(report.count(Severity::Error) as u64)
    {
        return Err(format!(
            "inspect --json counts {} errors",
            document["summary"]["errors"]
        ));
    }

    // `rigscope render`: exits non-zero naming the problem for a file that does not load; a file
    // that loads is drawn (or, with no graphics adapter at all, refused for that reason).
    let out = out_dir.join(name.replace('/', "_") + ".png");
    let render = run(&[
        "render".as_ref(),
        file.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--size".as_ref(),
        "64x48".as_ref(),
    ]);
    let stderr = String::from_utf8_lossy(&render.stderr);
    if stderr.contains("panicked") || render.status.code() == Some(101) {
        return Err(format!("render panicked: {stderr}"));
    }
    match &loaded {
        Err(e) => {
            if render.status.success() {
                return Err("render succeeded on a file that does not load".into());
            }
            if !stderr.contains(&e.to_string()) {
                return Err(format!("render's stderr does not carry the load error: {stderr}"));
            }
        }
        Ok(_) => {
            let no_adapter = stderr.contains("no graphics adapter");
            if !render.status.success() && !no_adapter {
                return Err(format!("render failed on a file that loads: {stderr}"));
            }
            if render.status.success() && !out.is_file() {
                return Err("render succeeded but wrote no image".into());
            }
        }
    }
    Ok(())
}

/// Notes the importer must give for a valid file, by file.
const VALID_NOTES: &[(&str, &str)] = &[
    ("mesh/primitive_no_position.gltf", "not drawn: it has no POSITION"),
    (
        "accessor/unknown_type.gltf",
        "accessor 0 cannot be read (its type is not one glTF defines)",
    ),
];

#[test]
fn every_valid_file_opens() {
    let Some(dir) = shared_folder("valid-gltf") else { return };
    let files = model_files(&dir);
    assert!(files.len() >= 8, "{} holds {} files", dir.display(), files.len());
    let mut failures = Vec::new();
    for file in &files {
        let name = relative(&dir, file);
        assert_eq!(
            validator_errors(file),
            Some(0),
            "{name}: the folder should hold valid files only"
        );
        match std::panic::catch_unwind(|| load_file(file)) {
            Err(_) => failures.push(format!("{name}: the library panicked")),
            Ok(Err(e)) => failures.push(format!("{name}: refused: {e}")),
            Ok(Ok(rig)) => {
                if let Some((_, note)) = VALID_NOTES.iter().find(|(n, _)| *n == name)
                    && !rig.facts.notes.iter().any(|n| n.contains(note))
                {
                    failures.push(format!("{name}: no note '{note}' among {:?}", rig.facts.notes));
                }
            }
        }
        let code = run(&["inspect".as_ref(), file.as_os_str()]).status.code();
        if !matches!(code, Some(0 | 1)) {
            failures.push(format!("{name}: inspect exited with {code:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
