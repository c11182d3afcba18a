//! Every WGSL module as the pipelines compose it, parsed and validated with naga on the CPU, and
//! the Rust structs that fill its buffers checked against the WGSL layouts, so that a shader
//! change that breaks either fails here rather than on a GPU.

use super::compute::COMPUTE_WGSL;
use super::gpu_data::GpuInfluences;
use super::gpu_data::skinning_wgsl;
use super::pipelines::mesh_wgsl;
use super::scene::{DrawUniform, FrameUniform, LINES_WGSL};
use super::views::{self, RAMPS_WGSL, ViewMode, wgsl_prelude};
use crate::skin::DualQuat;
use naga::valid::{Capabilities, ValidationFlags, Validator};
use std::mem::{offset_of, size_of};
use strum::VariantArray;

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
    module("prelude + skinning.wgsl + ramps.wgsl + mesh.wgsl", &mesh_wgsl());
    module(
        "skinning codes + skinning.wgsl + skin_compute.wgsl",
        &format!("{}\n{COMPUTE_WGSL}", skinning_wgsl()),
    );
    module("lines.wgsl", LINES_WGSL);
    module("ibl.wgsl", &super::ibl::ibl_wgsl());
}

#[test]
fn rust_uniform_and_storage_structs_match_their_wgsl_layouts() {
    let mesh = module("mesh", &mesh_wgsl());
    let compute = module("compute", &format!("{}\n{COMPUTE_WGSL}", skinning_wgsl()));
    let size = |m, name| layout(m, name).0 as usize;
    let offsets = |m, name| layout(m, name).1.into_iter().map(|o| o as usize).collect::<Vec<_>>();
    assert_eq!(size(&mesh, "Frame"), size_of::<FrameUniform>());
    assert_eq!(
        offsets(&mesh, "Frame"),
        [
            offset_of!(FrameUniform, view_proj),
            offset_of!(FrameUniform, camera_position),
            offset_of!(FrameUniform, light_direction),
            offset_of!(FrameUniform, view),
            offset_of!(FrameUniform, tone),
        ]
    );
    assert_eq!(size(&mesh, "Draw"), size_of::<DrawUniform>());
    assert_eq!(
        offsets(&mesh, "Draw"),
        [
            offset_of!(DrawUniform, model),
            offset_of!(DrawUniform, base_color),
            offset_of!(DrawUniform, material),
            offset_of!(DrawUniform, skin),
            offset_of!(DrawUniform, bind),
            offset_of!(DrawUniform, ghost),
            offset_of!(DrawUniform, shading.pbr),
            offset_of!(DrawUniform, shading.maps),
            offset_of!(DrawUniform, shading.specular),
            offset_of!(DrawUniform, shading.uv_rows),
        ]
    );
    assert_eq!(size(&mesh, "DualQuat"), size_of::<DualQuat>());
    assert_eq!(size(&compute, "SkinInfluences"), size_of::<GpuInfluences>());
    assert_eq!(
        offsets(&compute, "SkinInfluences"),
        [
            offset_of!(GpuInfluences, joints0),
            offset_of!(GpuInfluences, joints1),
            offset_of!(GpuInfluences, weights0),
            offset_of!(GpuInfluences, weights1),
        ]
    );
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
fn the_composed_mesh_shader_declares_the_rust_skinning_codes_and_draw_flags() {
    use super::gpu_data::{SKIN_BLENDED, SKIN_DQS, SKIN_LBS, SKIN_NONE};
    use super::material::{DRAW_ALPHA_MASK, DRAW_GHOST, DRAW_MIRRORED, DRAW_RIGID, DRAW_UNLIT};
    let mesh = module("mesh", &mesh_wgsl());
    let pairs = [
        ("SKIN_NONE", SKIN_NONE),
        ("SKIN_LBS", SKIN_LBS),
        ("SKIN_DQS", SKIN_DQS),
        ("SKIN_BLENDED", SKIN_BLENDED),
        ("DRAW_ALPHA_MASK", DRAW_ALPHA_MASK),
        ("DRAW_UNLIT", DRAW_UNLIT),
        ("DRAW_MIRRORED", DRAW_MIRRORED),
        ("DRAW_RIGID", DRAW_RIGID),
        ("DRAW_GHOST", DRAW_GHOST),
    ];
    for (name, rust) in pairs {
        assert_eq!(constant(&mesh, name), rust, "{name}");
    }
    assert_eq!(floats(&mesh, "GHOST_TINT_SHARE"), [super::material::GHOST_TINT_SHARE]);
    use super::pbr::{self, Tonemap};
    let codes = [
        ("MAP_METALLIC_ROUGHNESS", pbr::MAP_METALLIC_ROUGHNESS),
        ("MAP_NORMAL", pbr::MAP_NORMAL),
        ("MAP_OCCLUSION", pbr::MAP_OCCLUSION),
        ("MAP_EMISSIVE", pbr::MAP_EMISSIVE),
        ("MAP_SPECULAR", pbr::MAP_SPECULAR),
        ("MAP_SPECULAR_COLOR", pbr::MAP_SPECULAR_COLOR),
        ("MAP_SET1_SHIFT", pbr::MAP_SET1_SHIFT),
        ("MAP_UV_ROWS", 2 * pbr::MAP_SLOTS as u32),
        ("TONEMAP_NEUTRAL", Tonemap::Neutral.shader_code()),
        ("TONEMAP_ACES", Tonemap::Aces.shader_code()),
        ("TONEMAP_NONE", Tonemap::None.shader_code()),
    ];
    for (name, rust) in codes {
        assert_eq!(constant(&mesh, name), rust, "{name}");
    }
    let scalars = [
        ("LIGHT_IRRADIANCE", pbr::LIGHT_IRRADIANCE),
        ("SKY_AMBIENT", pbr::SKY_AMBIENT),
        ("GROUND_AMBIENT", pbr::GROUND_AMBIENT),
        ("DIELECTRIC_F0", pbr::DIELECTRIC_F0),
        ("MIN_ROUGHNESS", pbr::MIN_ROUGHNESS),
        ("NEUTRAL_START_COMPRESSION", pbr::NEUTRAL_START_COMPRESSION),
        ("NEUTRAL_DESATURATION", pbr::NEUTRAL_DESATURATION),
    ];
    for (name, rust) in scalars {
        assert_eq!(floats(&mesh, name), [rust], "{name}");
    }
    assert_eq!(floats(&mesh, "ACES_FIT"), pbr::ACES_FIT);
}

/// The f32 components of the WGSL `const name` in `module` (a scalar, vector or array of them).
fn floats(module: &naga::Module, name: &str) -> Vec<f32> {
    fn flatten(module: &naga::Module, expression: naga::Handle<naga::Expression>, out: &mut Vec<f32>) {
        match &module.global_expressions[expression] {
            naga::Expression::Literal(naga::Literal::F32(v)) => out.push(*v),
            naga::Expression::Compose { components, .. } => {
                for &c in components {
                    flatten(module, c, out);
                }
            }
            naga::Expression::Splat { size, value } => {
                for _ in 0..*size as usize {
                    flatten(module, *value, out);
                }
            }
            other => panic!("{other:?} is not made of f32 literals"),
        }
    }
    let (_, c) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no constant {name}"));
    let mut out = Vec::new();
    flatten(module, c.init, &mut out);
    out
}

#[test]
fn the_prelude_declares_the_rust_values_exactly() {
    let prelude = module("prelude", &wgsl_prelude());
    for &mode in ViewMode::VARIANTS {
        assert_eq!(constant(&prelude, &mode.wgsl_constant()), mode.shader_code(), "{mode}");
    }
    // The names the mesh shader reads.
    assert_eq!(ViewMode::WeightError.wgsl_constant(), "VIEW_WEIGHT_ERROR");
    assert_eq!(ViewMode::Shaded.wgsl_constant(), "VIEW_SHADED");
    let flags = |options: views::ViewOptions| options.shader_flags();
    let none = views::ViewOptions {
        zero_distinct: false,
        ..views::ViewOptions::default()
    };
    assert_eq!(flags(none), 0);
    let stretch = views::ViewOptions {
        deformation: views::DeformationMeasure::Stretch,
        ..none
    };
    let dominant = views::ViewOptions {
        dominant_joint: true,
        ..none
    };
    assert_eq!(constant(&prelude, "FLAG_STRETCH"), flags(stretch));
    assert_eq!(constant(&prelude, "FLAG_DOMINANT_JOINT"), flags(dominant));
    assert_eq!(
        constant(&prelude, "FLAG_ZERO_DISTINCT"),
        flags(views::ViewOptions::default())
    );
    let scalars = [
        ("DEFORMATION_RANGE", views::DEFORMATION_RANGE),
        ("SYMMETRY_FULL_SCALE", views::SYMMETRY_FULL_SCALE),
        ("SYMMETRY_UNMATCHED", views::SYMMETRY_UNMATCHED),
        ("SYMMETRY_UNCHECKED", views::SYMMETRY_UNCHECKED),
        ("WEIGHT_ERROR_FULL_SCALE", views::WEIGHT_ERROR_FULL_SCALE),
        ("WEIGHT_ERROR_TOLERANCE", views::WEIGHT_ERROR_TOLERANCE),
    ];
    for (name, rust) in scalars {
        assert_eq!(floats(&prelude, name), [rust], "{name}");
    }
    let colors = [
        ("FLIPPED_COLOR", views::FLIPPED_COLOR),
        ("ZERO_WEIGHT_COLOR", views::ZERO_WEIGHT_COLOR),
        ("NO_VALUE_COLOR", views::NO_VALUE_COLOR),
        ("SYMMETRY_UNMATCHED_COLOR", views::SYMMETRY_UNMATCHED_COLOR),
    ];
    for (name, rust) in colors {
        assert_eq!(floats(&prelude, name), rust, "{name}");
    }
    assert_eq!(floats(&prelude, "HEAT_STOPS"), views::HEAT_STOPS.concat());
    assert_eq!(
        floats(&prelude, "WEIGHT_ERROR_STOPS"),
        views::WEIGHT_ERROR_STOPS.concat()
    );
    assert_eq!(floats(&prelude, "INFLUENCE_COLORS"), views::INFLUENCE_COLORS.concat());
}

/// A compute entry point that evaluates every ramp of `ramps.wgsl` at each input: seven colors
/// per input (heat, deformation of a log2 ratio, symmetry, influence count, joint, weight-sum
/// error of a tenth of the input, engine distance of a hundredth of it).
const RAMP_PROBE_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> inputs: array<f32>;
@group(0) @binding(1) var<storage, read_write> colors: array<vec4<f32>>;

@compute @workgroup_size(64)
fn probe(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&inputs)) {
        return;
    }
    let x = inputs[i];
    colors[7u * i] = vec4<f32>(heat(x), 0.0);
    colors[7u * i + 1u] = vec4<f32>(deformation_color(x), 0.0);
    colors[7u * i + 2u] = vec4<f32>(symmetry_color(x), 0.0);
    colors[7u * i + 3u] = vec4<f32>(count_color(x), 0.0);
    colors[7u * i + 4u] = vec4<f32>(joint_color(u32(max(x, 0.0))), 0.0);
    colors[7u * i + 5u] = vec4<f32>(weight_error_color(0.1 * x), 0.0);
    colors[7u * i + 6u] = vec4<f32>(engine_distance_color(0.01 * x), 0.0);
}
"#;

/// A compute entry point that tone-maps each input color (xyz, exposure factor in w) by every
/// curve: three colors per input (neutral, ACES, none).
const TONE_PROBE_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> inputs: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> colors: array<vec4<f32>>;

@compute @workgroup_size(64)
fn probe(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&inputs)) {
        return;
    }
    let c = inputs[i];
    colors[3u * i] = vec4<f32>(tone_map(c.xyz, c.w, TONEMAP_NEUTRAL), 0.0);
    colors[3u * i + 1u] = vec4<f32>(tone_map(c.xyz, c.w, TONEMAP_ACES), 0.0);
    colors[3u * i + 2u] = vec4<f32>(tone_map(c.xyz, c.w, TONEMAP_NONE), 0.0);
}
"#;

/// Runs `source`'s compute entry `probe` over `inputs` (one invocation each), which writes
/// `outputs_per_input` vec4 per input; returns them.
fn run_probe(gpu: &super::Gpu, source: &str, inputs: &[u8], count: usize, outputs_per_input: usize) -> Vec<[f32; 4]> {
    use wgpu::util::DeviceExt;
    let device = &gpu.device;
    let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("probe"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("probe"),
        layout: None,
        module: &shader,
        entry_point: Some("probe"),
        compilation_options: Default::default(),
        cache: None,
    });
    let input_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("probe inputs"),
        contents: inputs,
        usage: wgpu::BufferUsages::STORAGE,
    });
    let size = (count * outputs_per_input * size_of::<[f32; 4]>()) as u64;
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("probe outputs"),
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("probe readback"),
        size,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("probe"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input_buffer.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: output.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("probe"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups((count as u32).div_ceil(64), 1, 1);
    }
    encoder.copy_buffer_to_buffer(&output, 0, &readback, 0, size);
    gpu.queue.submit([encoder.finish()]);
    let bytes = super::offscreen::read_buffer(gpu, &readback).expect("the probe's outputs read back");
    bytemuck::cast_slice(&bytes).to_vec()
}

/// The tone curves as the GPU computes them from `pbr.wgsl` against the Rust ones, over greys
/// and colors from black to far past white, at three exposures.
#[test]
fn the_gpu_tone_curves_equal_the_rust_ones() {
    use super::pbr::{PBR_WGSL, ToneOptions, Tonemap, tone_map, wgsl_constants};
    use glam::{DVec3, Vec4};
    let source = format!("{}\n{PBR_WGSL}\n{TONE_PROBE_WGSL}", wgsl_constants());
    module("pbr constants + pbr.wgsl + probe", &source);
    let Some(gpu) = gpu_or_skip() else { return };
    let mut inputs = Vec::new();
    for exposure in [-1.0f32, 0.0, 2.0] {
        for k in 0..=64 {
            let x = (k as f32 / 16.0).powi(2);
            inputs.push(Vec4::new(x, x, x, exposure));
            inputs.push(Vec4::new(x, 0.5 * x, 0.02 + 0.1 * x, exposure));
            inputs.push(Vec4::new(0.03, x, 1.5 * x, exposure));
        }
    }
    let gpu_inputs: Vec<Vec4> = inputs.iter().map(|c| c.truncate().extend(c.w.exp2())).collect();
    let colors = run_probe(&gpu, &source, bytemuck::cast_slice(&gpu_inputs), inputs.len(), 3);
    let mut worst = 0.0f64;
    for (i, c) in inputs.iter().enumerate() {
        for (k, curve) in [Tonemap::Neutral, Tonemap::Aces, Tonemap::None].into_iter().enumerate() {
            let options = ToneOptions { curve, exposure: c.w };
            let rust = tone_map(options, c.truncate().as_dvec3());
            let got = DVec3::new(
                f64::from(colors[3 * i + k][0]),
                f64::from(colors[3 * i + k][1]),
                f64::from(colors[3 * i + k][2]),
            );
            let off = (got - rust).abs().max_element();
            worst = worst.max(off);
            // f32 arithmetic on values at most 1 after the curve: a few units in the last place.
            assert!(off < 2e-6, "{curve} of {c}: GPU {got}, Rust {rust}");
        }
    }
    println!("tone curves: largest GPU − Rust difference {worst:.2e}");
}

/// The GPU, or `None` with the reason printed where there is none and
/// `RIGSCOPE_REQUIRE_ADAPTER` is not set.
fn gpu_or_skip() -> Option<super::Gpu> {
    match super::Gpu::headless() {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var_os(super::REQUIRE_ADAPTER_ENV).is_some() => {
            panic!("{} is set but no adapter is usable: {e}", super::REQUIRE_ADAPTER_ENV)
        }
        Err(e) => {
            eprintln!("skipped: no graphics adapter on this machine ({e})");
            None
        }
    }
}

/// Every ramp as the GPU computes it from the generated prelude, against the Rust functions, at
/// the ends, the stops, between them and beyond: the two cannot drift apart.
#[test]
fn the_gpu_ramps_equal_the_rust_ramps() {
    let source = format!("{}\n{RAMPS_WGSL}\n{RAMP_PROBE_WGSL}", wgsl_prelude());
    module("prelude + ramps.wgsl + probe", &source);
    let Some(gpu) = gpu_or_skip() else { return };
    // -3..3 in steps of 1/64 (heat, deformation, symmetry and weight-error inputs, the markers
    // -2 and -1 and the midpoints between them among them), then whole numbers for counts and
    // joints.
    let mut inputs: Vec<f32> = (-192..=192).map(|k| k as f32 / 64.0).collect();
    inputs.extend((0..300).map(|k| k as f32));
    let colors = run_probe(&gpu, &source, bytemuck::cast_slice(&inputs), inputs.len(), 7);
    for (i, &x) in inputs.iter().enumerate() {
        let whole = x.max(0.0) as u32;
        let expected = [
            ("heat", views::heat(x)),
            ("deformation", views::deformation_color(x.exp2())),
            ("symmetry", views::symmetry_color(x)),
            // WGSL's `round` takes a tie to the even neighbour.
            (
                "influence count",
                views::influence_color(x.round_ties_even().max(0.0) as u32),
            ),
            ("joint", views::joint_color(whole)),
            ("weight-sum error", views::weight_error_color(0.1 * x)),
            ("engine distance", views::engine_distance_color(0.01 * x)),
        ];
        for (k, (ramp, rust)) in expected.into_iter().enumerate() {
            let gpu = &colors[7 * i + k][..3];
            let close = gpu.iter().zip(rust).all(|(g, r)| (g - r).abs() < 1e-5);
            assert!(close, "{ramp} at {x}: GPU {gpu:?}, Rust {rust:?}");
        }
    }
}
