//! Arbitrary bytes straight into the importer: glTF JSON, or a GLB when they start with `glTF`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(rig) = rigscope::rig::load_slice(data, None, "fuzz.gltf") {
        // A rig that loads must also survive the report.
        let _ = rigscope::report::RigReport::new(&rig);
    }
});
