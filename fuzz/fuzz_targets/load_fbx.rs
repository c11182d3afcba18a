//! Arbitrary bytes read as FBX (binary or ASCII, told by their content, else by the `.fbx`
//! name), through the same entry as glTF. Seeds: the shared FBX rigs (fuzz/seed_corpus.py).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(rig) = rigscope::rig::load_slice(data, None, "fuzz.fbx") {
        let _ = rigscope::report::RigReport::new(&rig);
    }
});
