//! Rigscope: a viewer for skinned glTF rigs.

pub mod anim;
pub mod app;
pub mod headless;
pub mod render;
pub mod rig;
pub mod skin;
pub mod synthetic;
pub mod ui;
pub mod viewer;
