//! GPU skinning in a compute pass, read back for comparison with the CPU.
//!
//! Uses the same `skinning.wgsl` function as the mesh pipeline, so agreement here is agreement
//! of what is drawn.

use crate::anim::PoseBuffers;
use crate::render::context::{Gpu, GpuError};
use crate::render::gpu_data::skin_code;
use crate::render::gpu_data::skinning_wgsl;
use crate::render::gpu_data::{GpuInfluences, MorphBuffers, skinning_layouts, storage_bind_group};
use crate::render::morph::MorphPass;
use crate::render::offscreen::read_buffer;
use crate::rig::{MorphTarget, Primitive, Rig};
use crate::skin::{DualQuat, SkinnedPose, SkinningMethod};
use glam::{Mat4, Vec3, Vec4};
use wgpu::util::DeviceExt;

/// Vertices deviating more than this fraction of the rig size count as disagreeing.
pub const COMPARE_THRESHOLD: f32 = 1e-4;

/// CPU skinning against GPU skinning (the compute pass with the shader's skinning function) on
/// one pose.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub method: SkinningMethod,
    pub vertices: usize,
    /// Largest and mean distance (max norm) between CPU and GPU positions, in model units.
    pub max: f32,
    pub mean: f32,
    /// Diagonal of the rest-pose bounds, for relative figures.
    pub rig_size: f32,
    /// Largest difference between the CPU's and the GPU's skinned tangents (max norm, relative
    /// to the tangent's length); `None` when no skinned primitive has tangents.
    pub tangent_max: Option<f32>,
    /// Vertices deviating more than `COMPARE_THRESHOLD` of the rig size.
    pub over_threshold: usize,
    /// The [`MAX_LISTED_DEVIATIONS`] vertices over the threshold that deviate most, most first.
    pub deviating: Vec<DeviatingVertex>,
}

/// Most vertices over the threshold a [`Comparison`] lists.
pub const MAX_LISTED_DEVIATIONS: usize = 1000;

/// A vertex whose CPU and GPU positions differ by more than the threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviatingVertex {
    pub instance: usize,
    /// Index into the mesh's primitives.
    pub primitive: usize,
    pub vertex: usize,
    /// Distance (max norm) between the CPU and GPU positions, in model units.
    pub deviation: f32,
}

pub(crate) const COMPUTE_WGSL: &str = include_str!("../../shaders/skin_compute.wgsl");
const WORKGROUP: u32 = 64;

pub struct ComputeSkinner {
    pipeline: wgpu::ComputePipeline,
    io_layout: wgpu::BindGroupLayout,
    palette_layout: wgpu::BindGroupLayout,
    morph_layout: wgpu::BindGroupLayout,
    morph_pass: MorphPass,
}

impl ComputeSkinner {
    pub fn new(gpu: &Gpu) -> Self {
        let device = &gpu.device;
        let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let io_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("skin io"),
            entries: &[
                storage(0, true),
                storage(1, true),
                storage(2, true),
                storage(3, false),
                storage(4, false),
                storage(6, true),
                storage(7, false),
                wgpu::BindGroupLayoutEntry {
                    binding: 5,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
            ],
        });
        let (palette_layout, morph_layout) = skinning_layouts(device, wgpu::ShaderStages::COMPUTE);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("skin_compute.wgsl"),
            source: wgpu::ShaderSource::Wgsl(format!("{}\n{COMPUTE_WGSL}", skinning_wgsl()).into()),
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("skin compute"),
            bind_group_layouts: &[Some(&io_layout), Some(&palette_layout), None, Some(&morph_layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("skin compute"),
            layout: Some(&layout),
            module: &module,
            entry_point: Some("cs_main"),
            compilation_options: Default::default(),
            cache: None,
        });
        ComputeSkinner {
            pipeline,
            io_layout,
            palette_layout,
            morph_layout,
            morph_pass: MorphPass::new(device),
        }
    }

    /// Skins `primitive` on the GPU with `palette` (linear blend) or `dual_quats` (dual
    /// quaternion), whichever `method` names; returns positions and normals.
    pub fn skin(
        &self,
        gpu: &Gpu,
        primitive: &Primitive,
        palette: &[Mat4],
        dual_quats: &[DualQuat],
        method: SkinningMethod,
    ) -> Result<(Vec<Vec3>, Vec<Vec3>), GpuError> {
        self.skin_morphed(gpu, primitive, palette, dual_quats, method, &[], &[])
    }

    /// As [`ComputeSkinner::skin`], with `targets` morphed by `weights` before skinning.
    #[allow(clippy::too_many_arguments)]
    pub fn skin_morphed(
        &self,
        gpu: &Gpu,
        primitive: &Primitive,
        palette: &[Mat4],
        dual_quats: &[DualQuat],
        method: SkinningMethod,
        targets: &[MorphTarget],
        weights: &[f32],
    ) -> Result<(Vec<Vec3>, Vec<Vec3>), GpuError> {
        let no_blend = &[];
        self.skin_blended(
            gpu,
            primitive,
            (palette, dual_quats),
            method,
            (targets, weights),
            no_blend,
        )
    }

    /// As [`ComputeSkinner::skin_morphed`] (`palettes`: matrices and dual quaternions; `morph`:
    /// targets and their weights), with `dqs_blend` (per vertex, missing ones 0) read by
    /// [`SkinningMethod::Blended`].
    pub fn skin_blended(
        &self,
        gpu: &Gpu,
        primitive: &Primitive,
        palettes: (&[Mat4], &[DualQuat]),
        method: SkinningMethod,
        morph: (&[MorphTarget], &[f32]),
        dqs_blend: &[f32],
    ) -> Result<(Vec<Vec3>, Vec<Vec3>), GpuError> {
        let skinned = self.skin_with_tangents(gpu, primitive, palettes, method, morph, dqs_blend)?;
        Ok((skinned.positions, skinned.normals))
    }

    /// As [`ComputeSkinner::skin_blended`], with the primitive's tangents moved as the vertex
    /// shader moves them (empty for a primitive without tangents).
    pub fn skin_with_tangents(
        &self,
        gpu: &Gpu,
        primitive: &Primitive,
        (palette, dual_quats): (&[Mat4], &[DualQuat]),
        method: SkinningMethod,
        (targets, weights): (&[MorphTarget], &[f32]),
        dqs_blend: &[f32],
    ) -> Result<GpuSkinned, GpuError> {
        let device = &gpu.device;
        let n = primitive.vertex_count();
        if n == 0 {
            return Ok(GpuSkinned::default());
        }
        let input = |label, contents: &[u8], usage| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let has_tangents = primitive.tangents.len() == n;
        let SkinInputs {
            positions,
            normals,
            tangents,
            influences,
            matrix_buffer,
            dual_quat_buffer,
        } = SkinInputs::upload(device, primitive, palette, dual_quats);
        let mut morph = MorphBuffers::new(device, &self.morph_layout, &self.morph_pass, targets, (n, has_tangents));
        morph.write_dqs_blend(&gpu.queue, dqs_blend, u64::MAX);
        let morphing = morph.write_weights(&gpu.queue, weights, true);
        let params = input(
            "params",
            bytemuck::cast_slice(&[skin_code(method), morphing, 0, 0]),
            wgpu::BufferUsages::UNIFORM,
        );
        let size = (n * 16) as u64;
        let output = |label| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let (out_positions, out_normals) = (output("skinned positions"), output("skinned normals"));
        let out_tangents = output("skinned tangents");
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("skinned readback"),
            size: size * 3,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let io = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("skin io"),
            layout: &self.io_layout,
            entries: &[
                &positions,
                &normals,
                &influences,
                &out_positions,
                &out_normals,
                &params,
                &tangents,
                &out_tangents,
            ]
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect::<Vec<_>>(),
        });
        let palette_group = storage_bind_group(
            device,
            &self.palette_layout,
            "palette",
            &[&matrix_buffer, &dual_quat_buffer],
        );
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("skin compute"),
        });
        self.morph_pass.encode(&mut encoder, morph.morph.iter(), None);
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("skin"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &io, &[]);
            pass.set_bind_group(1, &palette_group, &[]);
            pass.set_bind_group(3, &morph.bind_group, &[]);
            pass.dispatch_workgroups((n as u32).div_ceil(WORKGROUP), 1, 1);
        }
        encoder.copy_buffer_to_buffer(&out_positions, 0, &readback, 0, size);
        encoder.copy_buffer_to_buffer(&out_normals, 0, &readback, size, size);
        encoder.copy_buffer_to_buffer(&out_tangents, 0, &readback, 2 * size, size);
        gpu.queue.submit([encoder.finish()]);
        let bytes = read_buffer(gpu, &readback)?;
        let values: &[[f32; 4]] = bytemuck::cast_slice(&bytes);
        let xyz = |v: &[f32; 4]| Vec3::new(v[0], v[1], v[2]);
        Ok(GpuSkinned {
            positions: values[..n].iter().map(xyz).collect(),
            normals: values[n..2 * n].iter().map(xyz).collect(),
            tangents: if has_tangents {
                values[2 * n..].iter().map(|&v| Vec4::from(v)).collect()
            } else {
                Vec::new()
            },
        })
    }
}

/// The compute pass's inputs in storage buffers: the primitive's vertices (vec3 data as vec4:
/// array<vec3> would have a 16-byte stride), its tangents (zero where it has none), influences
/// and the palettes.
struct SkinInputs {
    positions: wgpu::Buffer,
    normals: wgpu::Buffer,
    tangents: wgpu::Buffer,
    influences: wgpu::Buffer,
    matrix_buffer: wgpu::Buffer,
    dual_quat_buffer: wgpu::Buffer,
}

impl SkinInputs {
    fn upload(device: &wgpu::Device, primitive: &Primitive, palette: &[Mat4], dual_quats: &[DualQuat]) -> SkinInputs {
        let input = |label, contents: &[u8]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let as_vec4 = |v: &[Vec3], w: f32| v.iter().map(|p| p.extend(w)).collect::<Vec<_>>();
        let n = primitive.vertex_count();
        let tangents: Vec<Vec4> = if primitive.tangents.len() == n {
            primitive.tangents.clone()
        } else {
            vec![Vec4::ZERO; n]
        };
        // An empty palette cannot be bound; one identity entry is never read (every joint index
        // is then out of range).
        let matrices: &[Mat4] = if palette.is_empty() { &[Mat4::IDENTITY] } else { palette };
        let dual_quats: &[DualQuat] = if dual_quats.is_empty() {
            &[DualQuat::IDENTITY]
        } else {
            dual_quats
        };
        SkinInputs {
            positions: input("positions", bytemuck::cast_slice(&as_vec4(&primitive.positions, 1.0))),
            normals: input("normals", bytemuck::cast_slice(&as_vec4(&primitive.normals, 0.0))),
            tangents: input("tangents", bytemuck::cast_slice(&tangents)),
            influences: input(
                "influences",
                bytemuck::cast_slice(&GpuInfluences::of_primitive(primitive)),
            ),
            matrix_buffer: input("palette", bytemuck::cast_slice(matrices)),
            dual_quat_buffer: input("palette (dual quaternions)", bytemuck::cast_slice(dual_quats)),
        }
    }
}

/// A primitive skinned in the compute pass, read back.
#[derive(Debug, Clone, Default)]
pub struct GpuSkinned {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    /// Moved as the vertex shader moves them (w: the bitangent's sign); empty without tangents.
    pub tangents: Vec<Vec4>,
}

impl ComputeSkinner {
    /// Skins every skinned primitive of `rig` in `pose` in the compute pass and compares the
    /// positions with `skinned` (the CPU's result for `method`): the shader's own skinning
    /// function against the CPU kernels.
    pub fn compare(
        &self,
        gpu: &Gpu,
        rig: &Rig,
        pose: &PoseBuffers,
        skinned: &SkinnedPose,
        method: SkinningMethod,
        rig_size: f32,
    ) -> Result<Comparison, GpuError> {
        let (mut max, mut sum, mut vertices, mut over_threshold) = (0.0f32, 0.0f64, 0usize, 0usize);
        let mut tangent_max: Option<f32> = None;
        let mut deviating = Vec::new();
        for (i, instance) in rig.instances.iter().enumerate().filter(|(_, i)| i.skin.is_some()) {
            for (k, primitive) in rig.meshes[instance.mesh].primitives.iter().enumerate() {
                let (targets, weights) = (rig.morphs.of(instance.mesh, k), &pose.morph_weights[i]);
                let on_gpu = self.skin_with_tangents(
                    gpu,
                    primitive,
                    (&pose.palettes[i], &pose.dual_quats[i]),
                    method,
                    (targets, weights),
                    skinned.blend().of(i, k),
                )?;
                let on_cpu = &skinned.meshes[i][k];
                for (g, c) in on_gpu.tangents.iter().zip(&on_cpu.tangents) {
                    let d = (*g - *c).truncate().abs().max_element() / c.truncate().length().max(f32::MIN_POSITIVE);
                    tangent_max = Some(tangent_max.unwrap_or(0.0).max(d));
                }
                for (v, (g, c)) in on_gpu.positions.iter().zip(&on_cpu.positions).enumerate() {
                    let d = (*g - *c).abs().max_element();
                    max = max.max(d);
                    sum += f64::from(d);
                    vertices += 1;
                    if d > COMPARE_THRESHOLD * rig_size {
                        over_threshold += 1;
                        deviating.push(DeviatingVertex {
                            instance: i,
                            primitive: k,
                            vertex: v,
                            deviation: d,
                        });
                    }
                }
            }
        }
        Ok(Comparison {
            method,
            vertices,
            max,
            mean: if vertices == 0 {
                0.0
            } else {
                (sum / vertices as f64) as f32
            },
            rig_size,
            tangent_max,
            over_threshold,
            deviating: {
                deviating.sort_by(|a, b| b.deviation.total_cmp(&a.deviation));
                deviating.truncate(MAX_LISTED_DEVIATIONS);
                deviating
            },
        })
    }
}
