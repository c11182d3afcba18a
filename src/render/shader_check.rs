//! Every WGSL module as the pipelines compose it, parsed and validated with naga on the CPU, and
//! the Rust structs that fill its buffers checked against the WGSL layouts, so that a shader
//! change that breaks either fails here rather than on a GPU.

use super::compute::COMPUTE_WGSL;
use super::gpu_data::GpuInfluences;
use super::scene::{DrawUniform, FrameUniform, LINES_WGSL, MESH_WGSL, SKINNING_WGSL};
use crate::skin::DualQuat;
use naga::valid::{Capabilities, ValidationFlags, Validator};

/// Parses and validates `source`, failing with naga's message.
fn module(name: &str, source: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{name} does not parse:\n{}", e.emit_to_string(source)));
    Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name} does not validate: {e:?}"));
    module
}

/// The size and member offsets of WGSL struct `name` in `module`.
fn layout(module: &naga::Module, name: &str) -> (u32, Vec<u32>) {
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).expect("the types lay out");
    let (handle, ty) = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no struct {name}"));
    let naga::TypeInner::Struct { members, .. } = &ty.inner else {
        panic!("{name} is not a struct");
    };
    (layouter[handle].size, members.iter().map(|m| m.offset).collect())
}

#[test]
fn every_shader_module_parses_and_validates() {
    module("blit.wgsl", super::scene_images::BLIT_WGSL);
    module("skinning.wgsl + mesh.wgsl", &format!("{SKINNING_WGSL}\n{MESH_WGSL}"));
    module(
        "skinning.wgsl + skin_compute.wgsl",
        &format!("{SKINNING_WGSL}\n{COMPUTE_WGSL}"),
    );
    module("lines.wgsl", LINES_WGSL);
}

#[test]
fn rust_uniform_and_storage_structs_match_their_wgsl_layouts() {
    let mesh = module("mesh", &format!("{SKINNING_WGSL}\n{MESH_WGSL}"));
    let compute = module("compute", &format!("{SKINNING_WGSL}\n{COMPUTE_WGSL}"));
    let size = |m, name| layout(m, name).0 as usize;
    assert_eq!(size(&mesh, "Frame"), std::mem::size_of::<FrameUniform>());
    assert_eq!(size(&mesh, "Draw"), std::mem::size_of::<DrawUniform>());
    // model, base_color, material, skin, bind: laid out as the Rust fields are.
    assert_eq!(layout(&mesh, "Draw").1, [0, 64, 80, 96, 112]);
    assert_eq!(size(&mesh, "DualQuat"), std::mem::size_of::<DualQuat>());
    assert_eq!(size(&compute, "SkinInfluences"), std::mem::size_of::<GpuInfluences>());
    assert_eq!(layout(&compute, "SkinInfluences").1, [0, 16, 32, 48]);
}

/// The literal WGSL `const name` in `module` is initialized with.
fn literal(module: &naga::Module, name: &str) -> naga::Literal {
    let (_, c) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no constant {name}"));
    match module.global_expressions[c.init] {
        naga::Expression::Literal(value) => value,
        ref other => panic!("{name} is {other:?}, not a literal"),
    }
}

/// The value of WGSL `const name: u32` in `module`.
fn constant(module: &naga::Module, name: &str) -> u32 {
    match literal(module, name) {
        naga::Literal::U32(value) => value,
        other => panic!("{name} is {other:?}, not a u32"),
    }
}

#[test]
fn wgsl_constants_equal_the_rust_ones() {
    use super::material::{DRAW_ALPHA_MASK, DRAW_MIRRORED, DRAW_UNLIT};
    use super::scene::{SKIN_DQS, SKIN_LBS, SKIN_NONE};
    use super::views::{DeformationMeasure, ViewMode, ViewOptions};
    let mesh = module("mesh", &format!("{SKINNING_WGSL}\n{MESH_WGSL}"));
    let pairs = [
        ("SKIN_NONE", SKIN_NONE),
        ("SKIN_LBS", SKIN_LBS),
        ("SKIN_DQS", SKIN_DQS),
        ("DRAW_ALPHA_MASK", DRAW_ALPHA_MASK),
        ("DRAW_UNLIT", DRAW_UNLIT),
        ("DRAW_MIRRORED", DRAW_MIRRORED),
        ("VIEW_SHADED", ViewMode::Shaded.shader_code()),
        ("VIEW_WEIGHTS", ViewMode::Weights.shader_code()),
        ("VIEW_JOINTS", ViewMode::Joints.shader_code()),
        ("VIEW_INFLUENCES", ViewMode::Influences.shader_code()),
        ("VIEW_WEIGHT_ERROR", ViewMode::WeightError.shader_code()),
        ("VIEW_NORMALS", ViewMode::Normals.shader_code()),
        ("VIEW_DEFORMATION", ViewMode::Deformation.shader_code()),
        ("VIEW_SYMMETRY", ViewMode::Symmetry.shader_code()),
        (
            "FLAG_STRETCH",
            ViewOptions {
                deformation: DeformationMeasure::Stretch,
                zero_distinct: false,
                ..ViewOptions::default()
            }
            .shader_flags(),
        ),
    ];
    for (name, rust) in pairs {
        assert_eq!(constant(&mesh, name), rust, "{name}");
    }
}

#[test]
fn wgsl_float_constants_equal_the_rust_ones() {
    use super::views::{DEFORMATION_RANGE, SYMMETRY_FULL_SCALE, SYMMETRY_UNCHECKED, SYMMETRY_UNMATCHED};
    let mesh = module("mesh", &format!("{SKINNING_WGSL}\n{MESH_WGSL}"));
    let pairs = [
        ("DEFORMATION_RANGE", DEFORMATION_RANGE),
        ("SYMMETRY_FULL_SCALE", SYMMETRY_FULL_SCALE),
        ("SYMMETRY_UNMATCHED", SYMMETRY_UNMATCHED),
        ("SYMMETRY_UNCHECKED", SYMMETRY_UNCHECKED),
    ];
    for (name, rust) in pairs {
        assert_eq!(literal(&mesh, name), naga::Literal::F32(rust), "{name}");
    }
}
