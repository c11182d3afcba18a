//! Clips and poses: keyframe sampling, joint palettes, layers, onion skin, clip edits and their
//! command, curves, clip motion checks, and no allocation per frame.
//!
//! One test binary per folder under `tests/`: each file here is a module of this one.

#[path = "../common/mod.rs"]
mod common;

mod allocations;
mod clip_edit;
mod clips_cli;
mod curves_cli;
mod ghosts;
mod layers;
mod motion;
mod node_constraints;
mod palette;
mod palette_bits;
mod rest_pose;
mod sampling;
mod spring_bones;
