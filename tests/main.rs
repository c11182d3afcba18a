//! The integration tests, built as one test binary: each file under `tests/` is a module here.
//! One binary links the project and its dependencies once instead of once per file, which keeps
//! a test build's disk use and link time in check. Run one file's tests with a filter on its
//! module name, for example `cargo test --release --test integration palette_bits::`.

// One counting allocator for the whole binary: it counts only on threads that ask
// (`common::counting::watch`), so the tests that do not ask run as with the system allocator.
#[global_allocator]
static ALLOCATOR: common::counting::Counting = common::counting::Counting;

mod common;

mod allocations;
mod audit;
mod audit_ui;
mod bad_gltf;
mod bench_cli;
mod blended_skinning;
mod clip_edit;
mod clip_edits_ui;
mod clips_cli;
mod compare_sides;
mod compare_view;
mod compressed;
mod curves_cli;
mod curves_ui;
mod debugger;
mod detail;
mod diff;
mod diff_poses;
mod dual_quaternions;
mod edit_history;
mod exit_status;
mod export;
mod extensions;
mod fbx_blended;
mod fbx_clips;
mod fbx_findings;
mod fbx_hand_written;
mod fbx_hostile;
mod fbx_inbetweens;
mod fbx_to_gltf;
mod fbx_truth;
mod fbx_unweighted;
mod foot_lock;
mod frame_step;
mod fuzz_regressions;
mod ghosts;
mod gpu_skinning;
mod hostile;
mod ibl;
mod ik_layer;
mod import;
mod joint_map;
mod json_mutations;
mod layers;
mod look_at;
mod materials;
mod mirror_pose;
mod morph;
mod morph_sparse;
mod morph_tangents;
mod motion;
mod packaging;
mod palette;
mod palette_bits;
mod path_prompt;
mod pbr_import;
mod pbr_shading;
mod pose_tools_ui;
mod render;
mod render_look;
mod repair;
mod repair_ui;
mod report;
mod report_ui;
mod rest_pose;
mod retarget;
mod sampling;
mod save;
mod save_clips;
mod single_instance;
mod soak;
mod tangents;
mod timings_ui;
mod ui;
mod viewer;
mod viewer_repair;
mod window;
mod workflow;
mod write_materials;

/// `autotests = false` in Cargo.toml: a file under `tests/` runs only if it is declared above.
#[test]
fn every_file_under_tests_is_a_module_of_this_binary() {
    let declared = include_str!("main.rs");
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = 0;
    for entry in std::fs::read_dir(&folder).expect("the tests folder") {
        let path = entry.expect("an entry of the tests folder").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs") && stem != "main" {
            files += 1;
            assert!(
                declared.contains(&format!("\nmod {stem};\n")),
                "tests/{stem}.rs is not declared in tests/main.rs, so its tests never run"
            );
        }
    }
    assert!(files > 70, "only {files} test files found in {}", folder.display());
}
