//! A rig's data in GPU form: per-vertex influences, joint palettes, morph targets, textures,
//! wireframe edges; and the storage-buffer layouts the skinning shaders read them with.

use crate::render::morph::{MorphGpu, MorphPass};
use crate::rig::{Influences, MorphTarget, Primitive, Texture};
use crate::skin::{DualQuat, SkinningMethod};
use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec4};
use wgpu::util::DeviceExt;

/// WGSL declarations of `u32` constants, one a line: how the Rust values the shaders read
/// (skinning methods, draw and view flags, view modes) reach them.
pub(crate) fn wgsl_u32_constants(constants: &[(&str, u32)]) -> String {
    constants
        .iter()
        .map(|(name, value)| format!("const {name}: u32 = {value}u;\n"))
        .collect()
}

const SKINNING_WGSL: &str = include_str!("../../shaders/skinning.wgsl");

/// Skinning method codes shared with `skinning.wgsl`.
pub const SKIN_NONE: u32 = 0;
pub const SKIN_LBS: u32 = 1;
pub const SKIN_DQS: u32 = 2;
pub const SKIN_BLENDED: u32 = 3;

pub fn skin_code(method: SkinningMethod) -> u32 {
    match method {
        SkinningMethod::Lbs => SKIN_LBS,
        SkinningMethod::Dqs => SKIN_DQS,
        SkinningMethod::Blended => SKIN_BLENDED,
    }
}

/// `skinning.wgsl` as every pipeline that skins composes it: after the skinning method codes
/// (`SKIN_*`) it reads.
pub(crate) fn skinning_wgsl() -> String {
    let codes = [
        ("SKIN_NONE", SKIN_NONE),
        ("SKIN_LBS", SKIN_LBS),
        ("SKIN_DQS", SKIN_DQS),
        ("SKIN_BLENDED", SKIN_BLENDED),
    ];
    format!("{}{SKINNING_WGSL}", wgsl_u32_constants(&codes))
}

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
        let bind_group = storage_bind_group(device, layout, "palette", &[&matrices, &dual_quats]);
        PaletteBuffers {
            matrices,
            dual_quats,
            bind_group,
        }
    }
}

/// A bind group layout of `count` read-only storage buffers at bindings 0, 1, …: the palette
/// (group 1: matrices, dual quaternions) and the per-vertex data (group 3: morph deltas, blend
/// toward dual quaternions) declared in `skinning.wgsl`.
fn storage_layout(
    device: &wgpu::Device,
    label: &str,
    visibility: wgpu::ShaderStages,
    count: u32,
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
        entries: &(0..count).map(entry).collect::<Vec<_>>(),
    })
}

/// The bind group of a `storage_layout`: `buffers` at bindings 0, 1, … in order.
pub fn storage_bind_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    label: &str,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &buffers
            .iter()
            .enumerate()
            .map(|(binding, buffer)| wgpu::BindGroupEntry {
                binding: binding as u32,
                resource: buffer.as_entire_binding(),
            })
            .collect::<Vec<_>>(),
    })
}

/// The layouts of the groups `skinning.wgsl` declares, for a pipeline whose `visibility` stages
/// skin: the palette (group 1: matrices, dual quaternions) and the per-vertex data (group 3:
/// morph deltas, blend toward dual quaternions).
pub fn skinning_layouts(
    device: &wgpu::Device,
    visibility: wgpu::ShaderStages,
) -> (wgpu::BindGroupLayout, wgpu::BindGroupLayout) {
    (
        storage_layout(device, "palette", visibility, 2),
        storage_layout(device, "morph targets", visibility, 2),
    )
}

/// A primitive's per-vertex data on the GPU (group 3): its morph targets with the delta per
/// vertex of those in use (made each frame by the [`MorphPass`]), and each vertex's blend toward
/// dual quaternion skinning (written when the blend changes).
pub struct MorphBuffers {
    /// The targets and this pose's deltas; `None` without targets.
    pub morph: Option<MorphGpu>,
    /// One `f32` per vertex (at least one), 0 until written.
    pub dqs_blend: wgpu::Buffer,
    /// The [`crate::skin::DqsBlend::id`] last written to `dqs_blend` (0: none).
    pub dqs_blend_id: u64,
    /// Vertices of the primitive (the length of `dqs_blend`, at least 1).
    vertices: usize,
    pub bind_group: wgpu::BindGroup,
    pub targets: usize,
}

impl MorphBuffers {
    /// Buffers for `targets` of a primitive of `vertices` vertices (with tangents the targets
    /// may move when it `has_tangents`), nothing in use; without targets, one zero delta that
    /// is never read. The blend starts at 0 everywhere.
    pub fn new(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        pass: &MorphPass,
        targets: &[MorphTarget],
        (vertices, has_tangents): (usize, bool),
    ) -> Self {
        let morph = (!targets.is_empty()).then(|| MorphGpu::new(device, pass, targets, vertices, has_tangents));
        let no_deltas = || {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("morph deltas (none)"),
                contents: bytemuck::cast_slice(&[Vec4::ZERO; 3]),
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let none;
        let deltas = match &morph {
            Some(morph) => morph.deltas(),
            None => {
                none = no_deltas();
                &none
            }
        };
        let dqs_blend = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("blend toward dual quaternions"),
            contents: bytemuck::cast_slice(&vec![0f32; vertices.max(1)]),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        });
        let bind_group = storage_bind_group(device, layout, "morph targets", &[deltas, &dqs_blend]);
        MorphBuffers {
            morph,
            dqs_blend,
            dqs_blend_id: 0,
            vertices: vertices.max(1),
            bind_group,
            targets: targets.len(),
        }
    }

    /// Takes the targets with a non-zero weight of `weights` as those in use for this frame
    /// when `here` (the draw morphs in its shader), none otherwise; returns what the shader is
    /// told ([`MorphGpu::shader_stride`]: 0 when none is in use).
    pub fn write_weights(&mut self, queue: &wgpu::Queue, weights: &[f32], here: bool) -> u32 {
        match &mut self.morph {
            Some(morph) if here => {
                morph.write_weights(queue, weights);
                morph.shader_stride()
            }
            Some(morph) => {
                morph.clear();
                0
            }
            None => 0,
        }
    }

    /// Writes `blend` (b per vertex; missing vertices 0) unless it is the one last written.
    pub fn write_dqs_blend(&mut self, queue: &wgpu::Queue, blend: &[f32], id: u64) {
        if self.dqs_blend_id == id {
            return;
        }
        self.dqs_blend_id = id;
        let mut values = vec![0f32; self.vertices];
        for (value, &b) in values.iter_mut().zip(blend) {
            *value = b;
        }
        queue.write_buffer(&self.dqs_blend, 0, bytemuck::cast_slice(&values));
    }
}

/// `texture` uploaded as sRGB (a color: base color, emission).
pub(crate) fn create_texture(device: &wgpu::Device, queue: &wgpu::Queue, texture: &Texture) -> wgpu::TextureView {
    create_texture_as(
        device,
        queue,
        texture,
        &texture.rgba8(),
        wgpu::TextureFormat::Rgba8UnormSrgb,
    )
}

/// The most bytes of pixels handed to the queue before the copies are waited for: the queue
/// stages each write in a buffer of its own until the copy has run, and on a CPU adapter those
/// buffers are process memory, so a 4096² image written at once cost 64 MiB more at the peak.
const UPLOAD_BAND_BYTES: usize = 8 << 20;

/// `texture`'s `rgba8` pixels uploaded in `format`: `Rgba8Unorm` for data sampled as stored
/// (metallic-roughness, normals, occlusion), which an sRGB view would decode as if it were a
/// color.
pub(crate) fn create_texture_as(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    texture: &Texture,
    rgba8: &[u8],
    format: wgpu::TextureFormat,
) -> wgpu::TextureView {
    let (width, height) = (texture.width, texture.height);
    let gpu_texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some(&texture.name),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let row_bytes = width as usize * 4;
    let band_rows = (UPLOAD_BAND_BYTES / row_bytes.max(1)).max(1);
    let bands = rgba8.chunks(band_rows * row_bytes).take(height as usize);
    let band_count = (height as usize).div_ceil(band_rows);
    for (band, pixels) in bands.enumerate() {
        let y = (band * band_rows) as u32;
        let rows = (pixels.len() / row_bytes.max(1)) as u32;
        queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &gpu_texture,
                mip_level: 0,
                origin: wgpu::Origin3d { x: 0, y, z: 0 },
                aspect: wgpu::TextureAspect::All,
            },
            pixels,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row_bytes as u32),
                rows_per_image: Some(rows),
            },
            wgpu::Extent3d {
                width,
                height: rows,
                depth_or_array_layers: 1,
            },
        );
        if band_count > 1 {
            queue.submit([]);
            // A lost device fails the draws that follow, where it is reported.
            let _ = device.poll(wgpu::PollType::wait_indefinitely());
        }
    }
    gpu_texture.create_view(&wgpu::TextureViewDescriptor::default())
}

/// Each edge of a triangle list over `vertex_count` vertices once, as a line list (for the
/// wireframe overlay), ordered by lower then higher vertex. Sides naming a vertex past
/// `vertex_count` are left out.
///
/// Sides are bucketed by their lower vertex (a counting sort) and each short bucket sorted on
/// its own: linear in the triangles, where sorting all sides at once took half a second for two
/// million triangles.
pub(crate) fn triangle_edges(indices: &[u32], vertex_count: usize) -> Vec<u32> {
    let sides = || {
        indices
            .chunks_exact(3)
            .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
            .filter(|&(a, b)| (a as usize) < vertex_count && (b as usize) < vertex_count)
            .map(|(a, b)| (a.min(b), a.max(b)))
    };
    // bucket_start[v]..bucket_start[v + 1]: where the higher vertices of v's sides go.
    let mut bucket_start = vec![0u32; vertex_count + 1];
    for (low, _) in sides() {
        bucket_start[low as usize + 1] += 1;
    }
    for v in 0..vertex_count {
        bucket_start[v + 1] += bucket_start[v];
    }
    let mut higher = vec![0u32; bucket_start[vertex_count] as usize];
    let mut next = bucket_start.clone();
    for (low, high) in sides() {
        higher[next[low as usize] as usize] = high;
        next[low as usize] += 1;
    }
    drop(next);
    let mut edges = Vec::with_capacity(higher.len());
    for (low, bounds) in bucket_start.windows(2).enumerate() {
        let bucket = &mut higher[bounds[0] as usize..bounds[1] as usize];
        bucket.sort_unstable();
        let mut last = None;
        for &high in bucket.iter() {
            if last != Some(high) {
                edges.extend([low as u32, high]);
                last = Some(high);
            }
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::triangle_edges;

    /// Every side of every triangle, lower vertex first, sorted and deduplicated all at once.
    fn sorted_sides(indices: &[u32], vertex_count: usize) -> Vec<u32> {
        let mut sides: Vec<(u32, u32)> = indices
            .chunks_exact(3)
            .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
            .filter(|&(a, b)| (a as usize) < vertex_count && (b as usize) < vertex_count)
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        sides.sort_unstable();
        sides.dedup();
        sides.into_iter().flat_map(|(a, b)| [a, b]).collect()
    }

    #[test]
    fn a_quad_has_five_edges() {
        // Two triangles sharing the diagonal 0–2, wound opposite ways round it.
        assert_eq!(triangle_edges(&[0, 1, 2, 2, 3, 0], 4), [0, 1, 0, 2, 0, 3, 1, 2, 2, 3]);
    }

    #[test]
    fn edges_equal_sorting_every_side_on_random_meshes() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut random = |below: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % u64::from(below)) as u32
        };
        for (vertices, triangles) in [(1, 4), (3, 1), (50, 400), (1000, 300), (5000, 20_000)] {
            // Indices a little past the vertices too, which a corrupt list could hold.
            let indices: Vec<u32> = (0..triangles * 3).map(|_| random(vertices + 2)).collect();
            let count = vertices as usize;
            assert_eq!(
                triangle_edges(&indices, count),
                sorted_sides(&indices, count),
                "{vertices} vertices, {triangles} triangles"
            );
        }
        assert!(triangle_edges(&[], 0).is_empty());
        assert!(triangle_edges(&[0, 1], 5).is_empty(), "no whole triangle");
    }
}
