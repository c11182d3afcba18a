//! Arbitrary JSON and binary chunks wrapped in a well-formed GLB container, so that the fuzzer
//! spends its time on accessors, buffer views and binary data rather than on the GLB header.
//!
//! Input layout: two little-endian bytes giving the JSON length, the JSON, then the BIN chunk.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((len, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let split = (u16::from_le_bytes(*len) as usize).min(rest.len());
    let (json, bin) = rest.split_at(split);
    let glb = rigscope::rig::glb_container(json, (!bin.is_empty()).then_some(bin));
    if let Ok(rig) = rigscope::rig::load_slice(&glb, None, "fuzz.glb") {
        let _ = rigscope::report::RigReport::new(&rig);
    }
});
