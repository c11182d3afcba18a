//! Carrying clips between skeletons and posing by hand: retargeting, joint maps, foot locking, IK
//! layers, look-at and mirrored poses.
//!
//! One test binary per folder under `tests/`: each file here is a module of this one.

#[path = "../common/mod.rs"]
mod common;

mod expressions;
mod foot_lock;
mod ik_layer;
mod joint_map;
mod look_at;
mod mirror_pose;
mod retarget;
