//! A rig's data in GPU form: per-vertex influences, joint palettes, morph targets, textures,
//! wireframe edges; and the storage-buffer layouts the skinning shaders read them with.

use crate::rig::{Influences, MorphTarget, Primitive, Texture};
use crate::skin::DualQuat;
use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec4};
use wgpu::util::DeviceExt;

/// Up to eight joint influences of one vertex, as the shaders read them (vertex attributes and
/// the compute pass's storage buffer share this layout).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Debug, PartialEq)]
pub struct GpuInfluences {
    pub joints0: [u32; 4],
    pub joints1: [u32; 4],
    pub weights0: [f32; 4],
    pub weights1: [f32; 4],
}

impl GpuInfluences {
    /// Per-vertex influences of a primitive; all-zero weights when it has none.
    pub fn of_primitive(primitive: &Primitive) -> Vec<GpuInfluences> {
        let n = primitive.vertex_count();
        match &primitive.influences {
            None => vec![GpuInfluences::zeroed(); n],
            Some(influences) => (0..n).map(|v| Self::of_vertex(influences, v)).collect(),
        }
    }

    fn of_vertex(influences: &Influences, v: usize) -> GpuInfluences {
        let base = v * influences.sets;
        let set = |k: usize| {
            if k < influences.sets {
                (influences.joints[base + k].map(u32::from), influences.weights[base + k])
            } else {
                ([0; 4], [0.0; 4])
            }
        };
        let ((joints0, weights0), (joints1, weights1)) = (set(0), set(1));
        GpuInfluences {
            joints0,
            joints1,
            weights0,
            weights1,
        }
    }
}

pub(crate) struct PaletteBuffers {
    pub(crate) matrices: wgpu::Buffer,
    pub(crate) dual_quats: wgpu::Buffer,
    pub(crate) bind_group: wgpu::BindGroup,
}

impl PaletteBuffers {
    pub(crate) fn new(device: &wgpu::Device, layout: &wgpu::BindGroupLayout, joints: usize) -> PaletteBuffers {
        let storage = |label, size: usize| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (joints.max(1) * size) as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let matrices = storage("palette", std::mem::size_of::<Mat4>());
        let dual_quats = storage("palette (dual quaternions)", std::mem::size_of::<DualQuat>());
        let bind_group = storage_pair_bind_group(device, layout, "palette", &matrices, &dual_quats);
        PaletteBuffers {
            matrices,
            dual_quats,
            bind_group,
        }
    }
}

/// A bind group layout of two read-only storage buffers at bindings 0 and 1: the palette
/// (group 1) and the morph targets (group 3) declared in `skinning.wgsl`.
pub fn storage_pair_layout(
    device: &wgpu::Device,
    label: &str,
    visibility: wgpu::ShaderStages,
) -> wgpu::BindGroupLayout {
    let entry = |binding| wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &[entry(0), entry(1)],
    })
}

pub fn storage_pair_bind_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    label: &str,
    first: &wgpu::Buffer,
    second: &wgpu::Buffer,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: first.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: second.as_entire_binding(),
            },
        ],
    })
}

/// A primitive's morph targets on the GPU (group 3): offsets in the shaders' layout and a
/// weight per target, written each frame.
pub struct MorphBuffers {
    pub weights: wgpu::Buffer,
    pub bind_group: wgpu::BindGroup,
    pub targets: usize,
}

impl MorphBuffers {
    /// Buffers for `targets` of a primitive of `vertices` vertices; with no targets, one zero
    /// target the shaders read as "nothing to morph".
    pub fn new(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        targets: &[MorphTarget],
        vertices: usize,
    ) -> Self {
        let offsets: Vec<Vec4> = if targets.is_empty() {
            vec![Vec4::ZERO; 2]
        } else {
            targets
                .iter()
                .flat_map(|t| (0..vertices).flat_map(move |v| [t.positions[v].extend(0.0), t.normals[v].extend(0.0)]))
                .collect()
        };
        let offsets = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("morph offsets"),
            contents: bytemuck::cast_slice(&offsets),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let weights = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("morph weights"),
            contents: bytemuck::cast_slice(&vec![0f32; targets.len().max(1)]),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        });
        let bind_group = storage_pair_bind_group(device, layout, "morph targets", &offsets, &weights);
        MorphBuffers {
            weights,
            bind_group,
            targets: targets.len(),
        }
    }
}

pub(crate) fn create_texture(device: &wgpu::Device, queue: &wgpu::Queue, texture: &Texture) -> wgpu::TextureView {
    let descriptor = wgpu::TextureDescriptor {
        label: Some(&texture.name),
        size: wgpu::Extent3d {
            width: texture.width,
            height: texture.height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    };
    device
        .create_texture_with_data(
            queue,
            &descriptor,
            wgpu::util::TextureDataOrder::LayerMajor,
            &texture.rgba8,
        )
        .create_view(&wgpu::TextureViewDescriptor::default())
}

/// Each edge of a triangle list once, as a line list (for the wireframe overlay).
pub(crate) fn triangle_edges(indices: &[u32]) -> Vec<u32> {
    let mut edges: Vec<(u32, u32)> = indices
        .chunks_exact(3)
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a.min(b), a.max(b)))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges.into_iter().flat_map(|(a, b)| [a, b]).collect()
}
