//! The 3D view's pipelines and shared resources, built once per output color format.

use super::gpu_data::{PaletteBuffers, SKIN_NONE, create_texture, skin_code, skinning_layouts};
use super::scene::*;
use crate::render::material::{Winding, mesh_pipeline};
use crate::render::skeleton::LineVertex;
use crate::render::views::ViewOptions;
use crate::rig::{Rig, Texture};
use crate::skin::{SkinningMethod, SkinningPath};

mod mesh;

#[cfg(test)]
pub(crate) use mesh::mesh_wgsl;
pub(super) use mesh::{MeshPass, MeshPipelines, PassSet};

impl SceneRenderer {
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        format: wgpu::TextureFormat,
        samples: u32,
        gpu_cache: Option<&wgpu::PipelineCache>,
    ) -> Self {
        let frame_layout = frame_layout(device);
        let (palette_layout, morph_layout) = skinning_layouts(device, wgpu::ShaderStages::VERTEX);
        let draw_layout = draw_layout(device);
        let ibl = crate::render::ibl::IblState::new(device);
        let frame_buffer = frame_buffer(device);
        let frame_bind_group = frame_bind_group(device, &frame_layout, &frame_buffer, &ibl);
        let mesh_pipelines = MeshPipelines::new(
            device,
            [&frame_layout, &palette_layout, &draw_layout, &morph_layout],
            format,
            samples,
        );
        let [lines, lines_on_top] = line_pipelines(device, &frame_layout, format, samples, gpu_cache);
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("base color"),
            address_mode_u: wgpu::AddressMode::Repeat,
            address_mode_v: wgpu::AddressMode::Repeat,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        let white = create_texture(device, queue, &Texture::from_rgba8("white", 1, 1, vec![255; 4]));
        let empty_palette = PaletteBuffers::new(device, &palette_layout, 1).bind_group;
        let empty_surface = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("no surface stream"),
            size: 2 * std::mem::size_of::<[f32; 4]>() as u64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        SceneRenderer {
            frame_buffer,
            frame_layout,
            frame_bind_group,
            ibl,
            palette_layout,
            morph_layout,
            morph_pass: crate::render::morph::MorphPass::new(device),
            draw_layout,
            mesh_pipelines,
            lines,
            lines_on_top,
            sampler,
            white,
            empty_surface,
            empty_palette,
            grid: None,
            unskinned: false,
        }
    }
}

/// A uniform buffer binding at `binding`, seen by the `visibility` stages.
fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// The layout of a draw's bind group: its uniform, base color texture and sampler, the
/// metallic-roughness, normal, occlusion and emissive textures, the surface stream, and the
/// specular strength and colour textures.
fn draw_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    let texture = |binding| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: true },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        count: None,
    };
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("draw"),
        entries: &[
            uniform_entry(0, wgpu::ShaderStages::VERTEX_FRAGMENT),
            texture(1),
            wgpu::BindGroupLayoutEntry {
                binding: 2,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                count: None,
            },
            texture(3),
            texture(4),
            texture(5),
            texture(6),
            wgpu::BindGroupLayoutEntry {
                binding: 7,
                visibility: wgpu::ShaderStages::VERTEX,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: true },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            },
            texture(8),
            texture(9),
        ],
    })
}

/// The layout of the frame's bind group: its uniform, and the prefiltered environment (specular
/// and irradiance cubes, the BRDF table, their sampler) that the shaded view reads.
fn frame_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    let texture = |binding, view_dimension| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: true },
            view_dimension,
            multisampled: false,
        },
        count: None,
    };
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("frame"),
        entries: &[
            uniform_entry(0, wgpu::ShaderStages::VERTEX_FRAGMENT),
            texture(1, wgpu::TextureViewDimension::Cube),
            texture(2, wgpu::TextureViewDimension::Cube),
            texture(3, wgpu::TextureViewDimension::D2),
            wgpu::BindGroupLayoutEntry {
                binding: 4,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                count: None,
            },
        ],
    })
}

/// The frame's uniform buffer (camera, light, tone).
fn frame_buffer(device: &wgpu::Device) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("frame"),
        size: std::mem::size_of::<FrameUniform>() as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// The frame's bind group: its uniform and `ibl`'s views.
pub(super) fn frame_bind_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    buffer: &wgpu::Buffer,
    ibl: &crate::render::ibl::IblState,
) -> wgpu::BindGroup {
    let [specular, irradiance, table] = ibl.views();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("frame"),
        layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: buffer.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(specular),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::TextureView(irradiance),
            },
            wgpu::BindGroupEntry {
                binding: 3,
                resource: wgpu::BindingResource::TextureView(table),
            },
            wgpu::BindGroupEntry {
                binding: 4,
                resource: wgpu::BindingResource::Sampler(&ibl.sampler),
            },
        ],
    })
}

/// The pipelines of the line overlays (grid, skeleton, markers): blended over the scene, the
/// first hidden behind nearer surfaces, the second drawn on top of everything.
fn line_pipelines(
    device: &wgpu::Device,
    frame_layout: &wgpu::BindGroupLayout,
    format: wgpu::TextureFormat,
    samples: u32,
    gpu_cache: Option<&wgpu::PipelineCache>,
) -> [wgpu::RenderPipeline; 2] {
    let multisample = multisample_state(samples);
    let blended = color_target(format, Some(wgpu::BlendState::ALPHA_BLENDING));
    let lines_module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("lines.wgsl"),
        source: wgpu::ShaderSource::Wgsl(LINES_WGSL.into()),
    });
    let lines_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("lines"),
        bind_group_layouts: &[Some(frame_layout)],
        immediate_size: 0,
    });
    let line_attributes = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x4];
    let line_buffers = [Some(wgpu::VertexBufferLayout {
        array_stride: std::mem::size_of::<LineVertex>() as u64,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &line_attributes[..],
    })];
    let line_pipeline = |label, compare| {
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(label),
            layout: Some(&lines_layout),
            vertex: wgpu::VertexState {
                module: &lines_module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &line_buffers,
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::LineList,
                ..Default::default()
            },
            depth_stencil: Some(depth_state(false, compare)),
            multisample,
            fragment: Some(wgpu::FragmentState {
                module: &lines_module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &blended,
            }),
            multiview_mask: None,
            cache: gpu_cache,
        })
    };
    [
        line_pipeline("lines", wgpu::CompareFunction::LessEqual),
        line_pipeline("lines on top", wgpu::CompareFunction::Always),
    ]
}

/// Which mesh pipelines a frame needs, and building them.
impl SceneRenderer {
    /// How many mesh pipelines are built so far (one per pass and view mode).
    pub fn built_mesh_pipelines(&self) -> usize {
        self.mesh_pipelines.built()
    }

    /// Builds, while `rig` uploads, the mesh pipelines its first frame most likely needs: each
    /// material's shaded pass as it winds in the bind pose, in `view`'s mode, with the skinning
    /// `path` and `method`. A software driver compiles a mesh pipeline for about as long as the
    /// upload takes. [`SceneRenderer::prepare_pipelines`] builds what the posed frame needs
    /// beyond these (a mirrored pose, the wireframe, ghosts). Returns how many it built.
    pub fn prebuild_pipelines(
        &self,
        device: &wgpu::Device,
        cache: Option<&wgpu::PipelineCache>,
        rig: &Rig,
        view: &ViewOptions,
        (path, method): (SkinningPath, SkinningMethod),
    ) -> usize {
        let mut passes = PassSet::default();
        let mut skinned = false;
        for instance in &rig.instances {
            for primitive in &rig.meshes[instance.mesh].primitives {
                skinned |= instance.skin.is_some();
                passes.insert(MeshPass::shaded(
                    mesh_pipeline(&material_of(rig, primitive), Winding::Kept),
                    view.mode,
                ));
            }
        }
        let skinning = self.skinning_code(path, method, skinned);
        self.mesh_pipelines.ensure(device, cache, passes, view.mode, skinning)
    }

    /// Whether the vertex shader skins the draws of skinned instances on `path`: not on the CPU
    /// path, nor when every mesh is drawn from its bind pose ([`SceneRenderer::unskinned`]).
    pub(super) fn skins_on_gpu(&self, path: SkinningPath) -> bool {
        path == SkinningPath::Gpu && !self.unskinned
    }

    /// The skinning method code of a frame's pipelines: `method`'s when the vertex shader skins
    /// some draw (`skinned_draw`: a draw of a skinned instance), none otherwise.
    pub(super) fn skinning_code(&self, path: SkinningPath, method: SkinningMethod, skinned_draw: bool) -> u32 {
        if self.skins_on_gpu(path) && skinned_draw {
            skin_code(method)
        } else {
            SKIN_NONE
        }
    }
}

fn depth_state(write: bool, compare: wgpu::CompareFunction) -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format: DEPTH_FORMAT,
        depth_write_enabled: Some(write),
        depth_compare: Some(compare),
        stencil: wgpu::StencilState::default(),
        bias: wgpu::DepthBiasState::default(),
    }
}

fn multisample_state(samples: u32) -> wgpu::MultisampleState {
    wgpu::MultisampleState {
        count: samples,
        mask: !0,
        alpha_to_coverage_enabled: false,
    }
}

fn color_target(format: wgpu::TextureFormat, blend: Option<wgpu::BlendState>) -> [Option<wgpu::ColorTargetState>; 1] {
    [Some(wgpu::ColorTargetState {
        format,
        blend,
        write_mask: wgpu::ColorWrites::ALL,
    })]
}
