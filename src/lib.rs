//! Rigscope: a viewer for skinned glTF rigs.

pub mod anim;
pub mod app;
pub mod audit;
pub mod commands;
pub mod compare;
pub mod cpu;
pub mod frame;
pub mod headless;
pub mod job;
pub mod names;
pub mod reload;
pub mod render;
pub mod report;
pub mod rig;
pub mod screenshot;
pub mod settings;
pub mod skin;
pub mod synthetic;
pub mod timings;
pub mod ui;
pub mod viewer;
