//! Rigscope: a viewer for skinned glTF rigs.

pub mod anim;
pub mod app;
pub mod audit;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod cpu;
pub mod draw;
pub mod job;
pub mod motion;
pub mod names;
pub mod reload;
pub mod render;
pub mod repair;
pub mod report;
pub mod retarget;
pub mod rig;
pub mod save;
pub mod screenshot;
pub mod settings;
pub mod skin;
pub mod synthetic;
pub mod timings;
pub mod ui;
pub mod viewer;
