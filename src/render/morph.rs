//! Morph targets on the GPU, visited only where they are in use.
//!
//! Each primitive's targets are uploaded once, sparse (the vertices each moves). Each frame, a
//! compute pre-pass clears a per-vertex delta buffer and adds the targets with a non-zero weight
//! into it, one dispatch per target in target order; the vertex shader then reads one delta per
//! vertex (`morph_vertex` in `skinning.wgsl`) instead of looping over every target, and the
//! draw skips even that when no target is in use. A dense layout with a list of the targets in
//! use would keep the shader's loop short, but stores every target at every vertex: 200 targets
//! of a 100k-vertex face take 640 MB, past the 128 MiB a storage binding may hold.

use crate::rig::MorphTarget;
use bytemuck::{Pod, Zeroable};
use glam::{Vec3, Vec4};
use std::sync::Arc;
use wgpu::util::DeviceExt;

/// Invocations of a pre-pass workgroup (one sparse entry each), in the shader as
/// `MORPH_WORKGROUP`.
pub const MORPH_WORKGROUP: u32 = 64;

const MORPH_WGSL: &str = include_str!("../../shaders/morph.wgsl");

/// The pre-pass shader, with its constants written from the Rust ones.
pub(crate) fn morph_wgsl() -> String {
    format!("const MORPH_WORKGROUP: u32 = {MORPH_WORKGROUP}u;\n{MORPH_WGSL}")
}

/// One dispatch's target: `Target` in `morph.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct TargetParams {
    first: u32,
    count: u32,
    weight: f32,
    stride: u32,
}

/// The pre-pass pipeline.
pub struct MorphPass {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    /// Bytes between two dispatches' [`TargetParams`] (the device's dynamic offset alignment).
    stride: u64,
}

impl MorphPass {
    pub fn new(device: &wgpu::Device) -> Self {
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: binding == 1,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("morph pre-pass"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Storage { read_only: true }),
                entry(1, wgpu::BufferBindingType::Uniform),
                entry(2, wgpu::BufferBindingType::Storage { read_only: false }),
            ],
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("morph.wgsl"),
            source: wgpu::ShaderSource::Wgsl(morph_wgsl().into()),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("morph pre-pass"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("morph pre-pass"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("cs_main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let align = u64::from(device.limits().min_uniform_buffer_offset_alignment);
        let size = std::mem::size_of::<TargetParams>() as u64;
        MorphPass {
            pipeline,
            layout,
            stride: size.div_ceil(align) * align,
        }
    }

    /// Records the deltas of every morph of `morphs` that has a target in use (as written by
    /// [`MorphGpu::write_weights`]): their deltas cleared, then one compute pass of a dispatch
    /// per target in use. `timestamps` go to that pass; false (nothing recorded, timestamps
    /// unused) when no target is in use.
    pub fn encode<'a>(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        morphs: impl Iterator<Item = &'a MorphGpu> + Clone,
        timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> bool {
        let mut any = false;
        for morph in morphs.clone().filter(|m| m.in_use) {
            encoder.clear_buffer(&morph.deltas, 0, None);
            any = true;
        }
        if !any {
            return false;
        }
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("morph pre-pass"),
            timestamp_writes: timestamps,
        });
        pass.set_pipeline(&self.pipeline);
        for morph in morphs.filter(|m| m.in_use) {
            for (k, params) in morph.active.iter().enumerate() {
                pass.set_bind_group(0, &morph.bind_group, &[(k as u64 * self.stride) as u32]);
                pass.dispatch_workgroups(params.count.div_ceil(MORPH_WORKGROUP), 1, 1);
            }
        }
        true
    }
}

/// A primitive's targets on the GPU, sparse, shared by the poses drawn with them.
struct SparseTargets {
    /// Every target's entries in target order, `stride` `vec4`s each (see `morph.wgsl`).
    entries: wgpu::Buffer,
    /// Per target: its first entry and entry count.
    ranges: Vec<(u32, u32)>,
    /// `vec4`s per entry and per vertex delta: 3 where the targets move tangents, else 2.
    stride: u32,
}

/// One pose's morph of one primitive: the shared targets, this pose's delta per vertex and the
/// targets in use that make it.
pub struct MorphGpu {
    targets: Arc<SparseTargets>,
    /// The targets' stride of `vec4`s per vertex: position delta, normal delta, and the
    /// tangent delta where they move tangents.
    deltas: wgpu::Buffer,
    /// The dispatches' [`TargetParams`], one per [`MorphPass`] stride.
    params: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    /// The targets in use with entries to add, in target order.
    active: Vec<TargetParams>,
    /// Whether a weight is non-zero (the vertices are morphed, their normals renormalized).
    in_use: bool,
    /// Room for `active` laid out at the pass's stride (reused every frame).
    staging: Vec<u8>,
    stride: u64,
}

impl MorphGpu {
    /// Bytes of its GPU buffers.
    pub fn buffer_bytes(&self) -> u64 {
        self.deltas.size() + self.params.size()
    }

    /// `targets` of a primitive of `vertices` vertices, uploaded sparse; nothing in use. Their
    /// tangent offsets are uploaded when the primitive `has_tangents` and a target moves them.
    pub fn new(
        device: &wgpu::Device,
        pass: &MorphPass,
        targets: &[MorphTarget],
        vertices: usize,
        has_tangents: bool,
    ) -> Self {
        let stride = if has_tangents && targets.iter().any(MorphTarget::has_tangents) {
            3
        } else {
            2
        };
        let entry_count: usize = targets.iter().map(|t| t.vertices.len()).sum();
        let mut entries = Vec::with_capacity(stride as usize * entry_count);
        let mut ranges = Vec::with_capacity(targets.len());
        for target in targets {
            ranges.push((entries.len() as u32 / stride, target.vertices.len() as u32));
            let moved = target
                .vertices
                .iter()
                .zip(&target.position_offsets)
                .zip(&target.normal_offsets);
            for (k, ((&v, p), n)) in moved.enumerate() {
                entries.push(p.extend(f32::from_bits(v)));
                entries.push(n.extend(0.0));
                if stride == 3 {
                    entries.push(target.tangent_offsets.get(k).copied().unwrap_or(Vec3::ZERO).extend(0.0));
                }
            }
        }
        if entries.is_empty() {
            // A binding cannot be empty; no dispatch reads this entry.
            entries.extend([Vec4::ZERO; 3]);
        }
        let entries = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("morph targets (sparse)"),
            contents: bytemuck::cast_slice(&entries),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let targets = SparseTargets {
            entries,
            ranges,
            stride,
        };
        Self::with(device, pass, Arc::new(targets), vertices)
    }

    /// Another pose's morph of the same targets (a ghost's).
    pub fn sharing(&self, device: &wgpu::Device, pass: &MorphPass) -> Self {
        let vertices = (self.deltas.size() / self.delta_bytes()) as usize;
        Self::with(device, pass, self.targets.clone(), vertices)
    }

    /// Bytes of one vertex's deltas.
    fn delta_bytes(&self) -> u64 {
        u64::from(self.targets.stride) * 16
    }

    fn with(device: &wgpu::Device, pass: &MorphPass, targets: Arc<SparseTargets>, vertices: usize) -> Self {
        let deltas = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("morph deltas"),
            size: vertices.max(1) as u64 * u64::from(targets.stride) * 16,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let count = targets.ranges.len().max(1);
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("morph targets in use"),
            size: count as u64 * pass.stride,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("morph pre-pass"),
            layout: &pass.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: targets.entries.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &params,
                        offset: 0,
                        size: wgpu::BufferSize::new(std::mem::size_of::<TargetParams>() as u64),
                    }),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: deltas.as_entire_binding(),
                },
            ],
        });
        MorphGpu {
            active: Vec::with_capacity(targets.ranges.len()),
            staging: vec![0; count * pass.stride as usize],
            stride: pass.stride,
            targets,
            deltas,
            params,
            bind_group,
            in_use: false,
        }
    }

    /// The delta per vertex, bound at group 3 for the vertex shader.
    pub fn deltas(&self) -> &wgpu::Buffer {
        &self.deltas
    }

    /// Takes the targets with a non-zero weight of `weights` (one per target) as those in use
    /// until the next call, and writes their dispatches; returns whether any is in use (the
    /// vertices are then to be morphed). Allocates nothing.
    pub fn write_weights(&mut self, queue: &wgpu::Queue, weights: &[f32]) -> bool {
        self.active.clear();
        self.in_use = false;
        for (&(first, count), &weight) in self.targets.ranges.iter().zip(weights) {
            if weight == 0.0 {
                continue;
            }
            self.in_use = true;
            if count > 0 {
                self.active.push(TargetParams {
                    first,
                    count,
                    weight,
                    stride: self.targets.stride,
                });
            }
        }
        let stride = self.stride as usize;
        for (params, slot) in self.active.iter().zip(self.staging.chunks_exact_mut(stride)) {
            slot[..std::mem::size_of::<TargetParams>()].copy_from_slice(bytemuck::bytes_of(params));
        }
        if !self.active.is_empty() {
            queue.write_buffer(&self.params, 0, &self.staging[..self.active.len() * stride]);
        }
        self.in_use
    }

    /// Nothing in use until the next [`MorphGpu::write_weights`] (the draw does not morph here).
    pub fn clear(&mut self) {
        self.active.clear();
        self.in_use = false;
    }

    /// Whether the last [`MorphGpu::write_weights`] found a target in use.
    pub fn in_use(&self) -> bool {
        self.in_use
    }

    /// What a draw's shader is told of this morph (`skin.z` in `mesh.wgsl`): the deltas'
    /// `vec4`s per vertex while a target is in use, 0 otherwise.
    pub fn shader_stride(&self) -> u32 {
        if self.in_use { self.targets.stride } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naga::valid::{Capabilities, ValidationFlags, Validator};
    use std::mem::{offset_of, size_of};

    #[test]
    fn the_pre_pass_validates_and_its_target_is_laid_out_as_the_rust_struct() {
        let source = morph_wgsl();
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|e| panic!("morph.wgsl does not parse:\n{}", e.emit_to_string(&source)));
        Validator::new(ValidationFlags::all(), Capabilities::all())
            .validate(&module)
            .unwrap_or_else(|e| panic!("morph.wgsl does not validate: {e:?}"));
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).expect("the types lay out");
        let (handle, ty) = (module.types.iter())
            .find(|(_, t)| t.name.as_deref() == Some("Target"))
            .expect("struct Target");
        let naga::TypeInner::Struct { members, .. } = &ty.inner else {
            panic!("Target is not a struct");
        };
        assert_eq!(layouter[handle].size as usize, size_of::<TargetParams>());
        let offsets: Vec<usize> = members.iter().map(|m| m.offset as usize).collect();
        assert_eq!(
            offsets,
            [
                offset_of!(TargetParams, first),
                offset_of!(TargetParams, count),
                offset_of!(TargetParams, weight),
                offset_of!(TargetParams, stride),
            ]
        );
    }
}
