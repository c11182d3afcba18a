//! The rig checks: the report, the range-of-motion audit and weight symmetry, weight repairs,
//! comparing two files, the exit status every subcommand shares, and the source's own module
//! layers.
//!
//! One test binary per folder under `tests/`: each file here is a module of this one.

#[path = "../common/mod.rs"]
mod common;

mod audit;
mod diff;
mod diff_poses;
mod engine_profiles;
mod engine_shading;
mod engine_window;
mod exit_status;
mod module_graph;
mod repair;
mod report;
