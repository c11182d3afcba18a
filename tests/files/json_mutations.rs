//! Structure-aware robustness: the JSON of real rigs, edited one to three values at a time as an
//! attacker would (a count, an index, an offset, a key removed, a value of another type), must
//! load or fail with an error, never panic, and never take long. A fixed random sequence, so a
//! failure is reproducible; the `load_json` fuzz target explores the same space without end.

#[path = "../common/json_mutation.rs"]
pub(crate) mod json_mutation;

use crate::common::{shared_rigs, split_glb};
use rigscope::report::RigReport;
use rigscope::rig::{RigError, glb_container, load_slice};
use std::time::{Duration, Instant};

/// Small rigs (so that many mutations run quickly) covering plain, meshopt and Draco data.
const FILES: &[&str] = &[
    "Fox.glb",
    "compressed/Fox.meshopt.glb",
    "compressed/Fox.draco.glb",
    "compressed/Fox.gltfpack-cc.glb",
    "compressed/Fox.webp.glb",
];
const MUTATIONS_PER_FILE: usize = 600;

#[test]
fn edited_json_of_real_rigs_loads_or_fails_cleanly() {
    let Some(dir) = shared_rigs() else { return };
    // xorshift64*: a fixed sequence, independent of any crate's random generator.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut choose = move |n: usize| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    };
    let mut failures = Vec::new();
    let mut loaded = 0;
    for file in FILES {
        let bytes = std::fs::read(dir.join(file)).expect("the shared rig is readable");
        let (json, bin) = split_glb(&bytes);
        let document: serde_json::Value = serde_json::from_slice(json).expect("the rig's JSON parses");
        for k in 0..MUTATIONS_PER_FILE {
            let mut mutated = document.clone();
            let edits = json_mutation::mutate(&mut mutated, &mut choose);
            let glb = glb_container(&serde_json::to_vec(&mutated).unwrap(), bin);
            let started = Instant::now();
            let result = std::panic::catch_unwind(|| {
                load_slice(&glb, None, "mutated.glb").map(|rig| RigReport::new(&rig).findings.len())
            });
            match result {
                Err(_) => failures.push(format!("{file} #{k}: panicked after {edits:?}")),
                Ok(Err(e @ RigError::Panic(_))) => {
                    failures.push(format!("{file} #{k}: the importer panicked after {edits:?}: {e}"))
                }
                Ok(Err(e)) if e.to_string().trim().is_empty() => {
                    failures.push(format!("{file} #{k}: empty error after {edits:?}"))
                }
                Ok(Ok(_)) => loaded += 1,
                Ok(Err(_)) => {}
            }
            if started.elapsed() > Duration::from_secs(2) {
                failures.push(format!("{file} #{k}: took {:?} after {edits:?}", started.elapsed()));
            }
        }
    }
    println!(
        "{} mutated files: {loaded} loaded, {} refused with an error, {} misbehaved",
        FILES.len() * MUTATIONS_PER_FILE,
        FILES.len() * MUTATIONS_PER_FILE - loaded - failures.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of them misbehaved:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
