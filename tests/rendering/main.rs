//! The GPU paths against the CPU and f64 references: skinning (LBS, DQS, blended), morph targets,
//! tangents, shading and image-based light, the debug views, and rendered pictures.
//!
//! One test binary per folder under `tests/`: each file here is a module of this one.

#[path = "../common/mod.rs"]
mod common;

mod animated_properties;
mod bench_cli;
mod blended_skinning;
mod debugger;
mod detail;
mod dual_quaternions;
mod engine_distance;
mod frame_step;
mod gpu_skinning;
mod ibl;
mod materials;
mod morph;
mod morph_sparse;
mod morph_tangents;
mod pbr_shading;
mod render;
mod render_look;
mod spring_render;
mod tangents;
mod texture_memory;
