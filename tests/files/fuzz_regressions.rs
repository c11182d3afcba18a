//! Inputs that once crashed, hung or exhausted memory in the importer under `cargo fuzz`, kept as
//! regression tests: each must now load, or fail with a message, quickly and without a panic.
//!
//! `tests/fuzz_regressions/load_gltf/*` are fed to the importer as they are (the `load_gltf`
//! fuzz target); `tests/fuzz_regressions/load_glb/*` are first wrapped in a GLB container the way
//! the `load_glb` target does it: two little-endian bytes giving the JSON length, the JSON, then
//! the binary chunk.

use rigscope::report::RigReport;
use rigscope::rig::{glb_container, load_slice};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_regressions")
        .join(target);
    if !dir.exists() {
        return Vec::new();
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{} is readable: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// The GLB the `load_glb` fuzz target builds from its input.
fn as_glb(data: &[u8]) -> Option<Vec<u8>> {
    let (len, rest) = data.split_first_chunk::<2>()?;
    let split = (u16::from_le_bytes(*len) as usize).min(rest.len());
    let (json, bin) = rest.split_at(split);
    Some(glb_container(json, (!bin.is_empty()).then_some(bin)))
}

/// Loads `bytes` (and reports on the rig when it loads) without panicking, in bounded time.
fn survives(name: &str, bytes: &[u8]) -> Result<(), String> {
    let started = Instant::now();
    let outcome = std::panic::catch_unwind(|| match load_slice(bytes, None, name) {
        Ok(rig) => {
            RigReport::new(&rig);
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    })
    .map_err(|_| format!("{name}: panicked"))?;
    if started.elapsed() > Duration::from_secs(10) {
        return Err(format!("{name}: took {:?}", started.elapsed()));
    }
    if let Err(message) = outcome
        && message.trim().is_empty()
    {
        return Err(format!("{name}: failed with an empty message"));
    }
    Ok(())
}

#[test]
fn fuzz_found_inputs_no_longer_crash_the_importer() {
    let mut failures = Vec::new();
    let mut count = 0;
    for path in inputs("load_gltf") {
        count += 1;
        let bytes = std::fs::read(&path).unwrap();
        if let Err(e) = survives(&path.display().to_string(), &bytes) {
            failures.push(e);
        }
    }
    for path in inputs("load_glb") {
        count += 1;
        let bytes = std::fs::read(&path).unwrap();
        let Some(glb) = as_glb(&bytes) else { continue };
        if let Err(e) = survives(&path.display().to_string(), &glb) {
            failures.push(e);
        }
    }
    assert!(count > 0, "no regression inputs found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
