//! Arbitrary bytes read as BVH motion capture (told by their `HIERARCHY` start, else by the
//! `.bvh` name), through the same entry as glTF and FBX, and the rig report made of what loads.
//! Seeds: the shared BVH files (fuzz/seed_corpus.py).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(rig) = rigscope::rig::load_slice(data, None, "fuzz.bvh") {
        let _ = rigscope::report::RigReport::new(&rig);
    }
});
