//! Structure-aware: a rig's JSON, edited by the same mutations as `tests/files/json_mutations.rs` (one
//! to three values changed, removed or retyped), with the fuzzer's bytes choosing what to edit.
//! The seeds (`seed_corpus.py`) are the shared rigs, compressed ones included, so the edits
//! land on real accessors, buffer views and extension objects.
//!
//! Input layout: 16 bytes of choices, then the `load_glb` layout (two little-endian bytes giving
//! the JSON length, the JSON, then the BIN chunk).
#![no_main]

#[path = "../../tests/common/json_mutation.rs"]
mod json_mutation;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((choices, rest)) = data.split_first_chunk::<16>() else {
        return;
    };
    let Some((len, rest)) = rest.split_first_chunk::<2>() else {
        return;
    };
    let split = (u16::from_le_bytes(*len) as usize).min(rest.len());
    let (json, bin) = rest.split_at(split);
    let Ok(mut document) = serde_json::from_slice::<serde_json::Value>(json) else {
        return;
    };
    let mut next = 0usize;
    let mut choose = |n: usize| {
        let byte = choices[next % choices.len()] as usize;
        next += 1;
        byte.wrapping_mul(next * 31 + 7) % n.max(1)
    };
    json_mutation::mutate(&mut document, &mut choose);
    let json = serde_json::to_vec(&document).unwrap_or_default();
    let glb = rigscope::rig::glb_container(&json, (!bin.is_empty()).then_some(bin));
    match rigscope::rig::load_slice(&glb, None, "fuzz.glb") {
        Ok(rig) => {
            let _ = rigscope::report::RigReport::new(&rig);
        }
        // The importer turns its own panics into this error; for the fuzzer they are crashes.
        Err(e) if e.0.contains("bug in Rigscope") => panic!("{e}"),
        Err(_) => {}
    }
});
