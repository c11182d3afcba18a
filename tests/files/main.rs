//! Reading and writing files: the glTF importer against the files themselves, hostile and broken
//! input, compressed rigs, and what the writers save (weights, clips, materials, posed meshes).
//!
//! One test binary per folder under `tests/`: each file here is a module of this one.

#[path = "../common/mod.rs"]
mod common;

mod bad_gltf;
mod bvh;
mod compressed;
mod export;
mod extensions;
mod fuzz_regressions;
mod hostile;
mod import;
mod journal_mutations;
mod json_mutations;
mod pbr_import;
mod pointer;
mod pointer_properties;
mod save;
mod save_clips;
mod vrm_springs;
mod vrma;
mod write_materials;

/// A file under a folder of `tests/` runs only if its folder's `main.rs` declares it.
#[test]
fn every_test_file_is_declared_by_its_folders_main() {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut checked = 0;
    for folder in std::fs::read_dir(&tests).expect("the tests folder") {
        let folder = folder.expect("an entry of the tests folder").path();
        let Ok(main) = std::fs::read_to_string(folder.join("main.rs")) else {
            continue;
        };
        for file in std::fs::read_dir(&folder).expect("a test folder") {
            let file = file.expect("an entry of a test folder").path();
            let Some(stem) = file.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if file.extension().is_some_and(|e| e == "rs") && stem != "main" {
                checked += 1;
                assert!(
                    main.contains(&format!("\nmod {stem};\n")),
                    "{} is not declared in its folder's main.rs, so its tests never run",
                    file.display()
                );
            }
        }
    }
    assert!(
        checked > 70,
        "only {checked} test files found under {}",
        tests.display()
    );
}
