//! Rigscope: a viewer for skinned glTF and FBX rigs, and the headless commands that check,
//! repair, edit, compare and render them.
//!
//! # A frame's path
//!
//! ```text
//! input        app: winit events and egui; ui panels and keys edit the viewer's state,
//!              viewer::tick(dt) advances the clock and picks up reloaded files
//!   │
//!   ▼
//! viewer       the open documents (a Rig each, immutable once loaded) and playback: the
//!              Player (clip, time, speed) and the AnimationStack (crossfade, layers, root
//!              lock, bends, IK goals, morph weights); any change marks the pose dirty
//!   │
//!   ▼
//! pose         anim::evaluate_pose, once per change: sample the clips → blend crossfade and
//!              layers → lock the root → bends and IK → morph weights → local TRS → world
//!              matrices, parents first → VRM spring bones (the one state a pose carries)
//!   │
//!   ▼
//! palette      anim: palette[j] = world[joint j] · inverseBind[j] per skin, and dual
//!              quaternions when the skinning method needs them (one SIMD kernel, see cpu)
//!   │
//!   ├──────── GPU path (default) ─────────────┬──────── CPU path ───────────────────────┐
//!   ▼                                         │                                         ▼
//! render       palettes written to storage    │   skin::SkinnedPose::skin: LBS, DQS or
//!              buffers; the vertex shader     │   weight blended, SIMD and threads; the
//!              skins (shaders/skinning.wgsl)  │   vertices are uploaded and drawn unskinned
//!   └─────────────────────────────────────────┴─────────────────────────────────────────┘
//!   ▼
//! draw         the one frame step every picture takes (window, render, screenshots,
//!              sequences, bench): clock → advance → prepare → encode → submit → collect,
//!              through render's scene renderer (debug views, skeleton overlay, grid)
//!   │
//!   ▼
//! ui           egui panels around the 3D view, drawn from the viewer's state; the window
//!              (app) presents the frame, the headless commands read it back as a PNG
//! ```
//!
//! Every stage up to the palette is a plain function of plain data (slices in, slices out), so
//! it runs, is tested and is benchmarked without a window or a GPU.
//!
//! # Layers
//!
//! Lowest first. A module uses modules of its own layer and below, never above: the model knows
//! no GPU, the GPU code no viewer, the viewer no window; and no import circles (no module
//! reaches itself through `use crate::` paths).
//!
//! | layer | modules |
//! | --- | --- |
//! | foundations | [`names`], [`cpu`], [`job`], [`reload`] |
//! | model: the file, the pose, skinning | [`rig`], [`anim`], [`skin`], [`synthetic`] |
//! | model: analyses and edits | [`motion`], [`audit`], [`report`], [`repair`], [`retarget`], [`compare`], [`save`], [`engine`], [`journal`] |
//! | GPU | [`render`], [`timings`] |
//! | viewer state | [`viewer`], [`settings`] |
//! | drawing a frame | [`draw`] |
//! | views (UI) | [`ui`] |
//! | commands | [`cli`], [`commands`], [`screenshot`] (and `src/main.rs`, which dispatches to them) |
//! | the window | [`app`], the composition root |
//!
//! `tests/checks/module_graph.rs` reads the source and holds the code to this table and to
//! having no circles. The comparing feature is therefore in three places, each at the layer of
//! what it holds: the model in [`compare`], the comparison the viewer keeps in
//! [`viewer::Comparison`], its drawing in [`draw::compare`] and its window in [`ui::compare`].
//!
//! # Modules
//!
//! - [`names`]: enum ↔ name, one way for every name users type or read.
//! - [`cpu`]: which SIMD kernels this CPU runs (skinning, dual quaternions, palettes).
//! - [`job`]: work on a thread of its own with progress and cancel (loads, checks, the audit).
//! - [`reload`]: watching the open file and the files it uses (hot reload).
//! - [`synthetic`]: generated rigs of any size for benchmarks and `--synthetic`.
//! - [`rig`]: a glTF, FBX or BVH file → the immutable [`rig::Rig`] (import, hierarchy facts, binds).
//! - [`anim`]: clip sampling, playback, layers, IK and the pose → palette pipeline.
//! - [`skin`]: CPU skinning (reference and fast LBS, DQS, weight blended) and picking.
//! - [`motion`]: clip motion over time: bounds, `audit --motion` checks, curves, rest pose.
//! - [`audit`]: the range-of-motion audit and the weight symmetry check.
//! - [`report`]: the rig report: contents and findings (`inspect`).
//! - [`repair`]: weight repairs as pure functions of a rig's weights.
//! - [`retarget`]: clips carried from another file onto this skeleton.
//! - [`compare`]: what changed between two files of one rig (`diff`), and the comparison shown
//!   in the viewer: the other side, its drawing and the Compare window.
//! - [`save`]: writing a glTF back with repaired weights and edited clips; a clip as BVH or as VRM Animation.
//! - [`journal`]: each open document's edits appended to a file as they are made, read back
//!   whole or not at all after a crash (restoring them is `viewer/recovery.rs`).
//! - [`engine`]: engine profiles: a rig as Unity, Unreal, Godot, three.js, Babylon.js, Bevy,
//!   Filament or the Sample Renderer draws it, and how far that is from the file (`check`).
//! - [`timings`]: a frame's cost stage by stage (Timings panel, `bench`).
//! - [`render`]: wgpu: device, pipelines, the scene renderer, offscreen targets, compute skinning.
//! - [`draw`]: drawing the viewer's state: the one frame step every picture takes.
//! - [`viewer`]: the viewer's state without window or GPU: documents, playback, view, edits.
//! - [`settings`]: settings kept between runs (TOML in the config folder).
//! - [`ui`]: the egui panels and the one command table for keys, menus and help.
//! - [`screenshot`]: screenshots and the whole UI rendered offscreen.
//! - [`app`]: the window: winit event loop, surface, renderers and egui; the composition root.
//! - [`cli`]: what the command line names and the arguments commands share.
//! - [`commands`]: the headless subcommands (render, inspect, audit, check, diff, bench, fix,
//!   clips, export, make-demo, completions, man), one module each, and the exit status they
//!   share.
//!
//! Which file inside a module holds what is in `docs/architecture.md`.

pub mod anim;
pub mod app;
pub mod audit;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod cpu;
pub mod draw;
pub mod engine;
pub mod job;
pub mod journal;
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
