//! The application as a person uses it: panels and windows driven through egui, the window under
//! Xvfb, one window per desktop, packaging, and the soak.
//!
//! One test binary per folder under `tests/`: each file here is a module of this one.

#[path = "../common/mod.rs"]
mod common;

mod audit_ui;
mod clip_edits_ui;
mod compare_sides;
mod compare_view;
mod curves_ui;
mod edit_history;
mod expressions_ui;
mod monkey;
mod packaging;
mod path_prompt;
mod pose_tools_ui;
mod recovery;
mod repair_ui;
mod report_ui;
mod single_instance;
mod soak;
mod timings_ui;
mod ui;
mod viewer;
mod viewer_repair;
mod window;
mod workflow;
