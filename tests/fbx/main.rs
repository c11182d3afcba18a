//! FBX input: hand-written files with answers worked out by hand, the shared FBX rigs against their
//! authoring tools, hostile FBX bytes, and FBX rigs written as glTF.
//!
//! One test binary per folder under `tests/`: each file here is a module of this one.

#[path = "../common/mod.rs"]
mod common;

mod fbx_blended;
mod fbx_clips;
mod fbx_findings;
mod fbx_hand_written;
mod fbx_hostile;
mod fbx_inbetweens;
mod fbx_to_gltf;
mod fbx_truth;
mod fbx_unweighted;
