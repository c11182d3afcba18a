//! The 3D view's pipelines and shared resources, built once per output color format.

use super::gpu_data::{
    GpuInfluences, PaletteBuffers, SKIN_BLENDED, SKIN_NONE, create_texture, skin_code, skinning_layouts, skinning_wgsl,
    wgsl_u32_constants,
};
use super::scene::*;
use crate::render::material::{MeshPipeline, Winding, mesh_pipeline};
use crate::render::skeleton::LineVertex;
use crate::render::views::{RAMPS_WGSL, ViewMode, ViewOptions, wgsl_prelude};
use crate::rig::{Rig, Texture};
use crate::skin::{SkinningMethod, SkinningPath};
use rayon::prelude::*;
use strum::VariantArray;

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
        let white = create_texture(
            device,
            queue,
            &Texture {
                name: "white".into(),
                width: 1,
                height: 1,
                rgba8: vec![255; 4],
            },
        );
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
/// metallic-roughness, normal, occlusion and emissive textures, and the surface stream.
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

impl MeshPipelines {
    /// The mesh shader and its pipeline layout (frame, palette, draw and morph bind groups),
    /// with no pipeline built yet: each is built the first time a frame needs it.
    fn new(
        device: &wgpu::Device,
        [frame, palette, draw, morph]: [&wgpu::BindGroupLayout; 4],
        format: wgpu::TextureFormat,
        samples: u32,
    ) -> MeshPipelines {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("mesh.wgsl"),
            source: wgpu::ShaderSource::Wgsl(mesh_wgsl().into()),
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("mesh"),
            bind_group_layouts: &[Some(frame), Some(palette), Some(draw), Some(morph)],
            immediate_size: 0,
        });
        MeshPipelines {
            module,
            layout,
            format,
            samples,
            built: std::array::from_fn(|_| std::sync::OnceLock::new()),
        }
    }
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

/// Which mesh pipeline: one per [`MeshPipeline`], and the wireframe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MeshPass {
    Shaded(MeshPipeline),
    Wireframe,
    /// An onion-skin ghost of a culled draw: blended like [`MeshPipeline::Blended`], back faces
    /// culled so that a ghost shows one layer of its surface, as the draw does.
    Ghost,
}

/// A set of mesh passes, one bit each: what a frame draws, gathered every frame without
/// allocating.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct PassSet(u8);

impl PassSet {
    pub(super) fn insert(&mut self, pass: MeshPass) {
        self.0 |= 1 << pass.slot();
    }

    pub(super) fn iter(self) -> impl Iterator<Item = MeshPass> {
        MeshPass::ALL
            .into_iter()
            .filter(move |pass| self.0 & 1 << pass.slot() != 0)
    }
}

impl MeshPass {
    pub(super) const COUNT: usize = Self::ALL.len();

    const ALL: [MeshPass; 6] = [
        MeshPass::Shaded(MeshPipeline::Culled),
        MeshPass::Shaded(MeshPipeline::CulledMirrored),
        MeshPass::Shaded(MeshPipeline::DoubleSided),
        MeshPass::Shaded(MeshPipeline::Blended),
        MeshPass::Wireframe,
        MeshPass::Ghost,
    ];

    fn slot(self) -> usize {
        Self::ALL.iter().position(|&p| p == self).unwrap_or(0)
    }

    /// The pass that draws a mesh of `pipeline` in view `mode`. The deformation view draws
    /// back faces too: a triangle turned inside out faces away, and culled it could not be
    /// marked.
    pub(super) fn shaded(pipeline: MeshPipeline, mode: ViewMode) -> MeshPass {
        match (mode, pipeline) {
            (ViewMode::Deformation, MeshPipeline::Culled | MeshPipeline::CulledMirrored) => {
                MeshPass::Shaded(MeshPipeline::DoubleSided)
            }
            _ => MeshPass::Shaded(pipeline),
        }
    }

    /// The pass that draws the onion-skin ghosts of a draw of `pipeline` in view `mode`: culled
    /// as the draw is where it is culled the plain way, otherwise blended without culling.
    pub(super) fn ghost(pipeline: MeshPipeline, mode: ViewMode) -> MeshPass {
        match MeshPass::shaded(pipeline, mode) {
            MeshPass::Shaded(MeshPipeline::Culled) => MeshPass::Ghost,
            _ => MeshPass::Shaded(MeshPipeline::Blended),
        }
    }

    /// The view mode this pass's pipeline is built for: the wireframe's color is the same in
    /// every mode, so one wireframe pipeline serves them all.
    fn mode_for(self, mode: ViewMode) -> ViewMode {
        match self {
            MeshPass::Shaded(_) | MeshPass::Ghost => mode,
            MeshPass::Wireframe => ViewMode::Shaded,
        }
    }
}

/// The mesh shader as the pipelines compile it: the constants written from the Rust ones (the
/// views' prelude, the draw flags), the skinning functions, the ramps and the mesh shader
/// itself.
pub(crate) fn mesh_wgsl() -> String {
    use crate::render::material::{
        DRAW_ALPHA_MASK, DRAW_GHOST, DRAW_MIRRORED, DRAW_RIGID, DRAW_UNLIT, GHOST_TINT_SHARE,
    };
    let draw_flags = wgsl_u32_constants(&[
        ("DRAW_ALPHA_MASK", DRAW_ALPHA_MASK),
        ("DRAW_UNLIT", DRAW_UNLIT),
        ("DRAW_MIRRORED", DRAW_MIRRORED),
        ("DRAW_RIGID", DRAW_RIGID),
        ("DRAW_GHOST", DRAW_GHOST),
    ]);
    format!(
        "{}{draw_flags}const GHOST_TINT_SHARE: f32 = {GHOST_TINT_SHARE:?};\n{}{}\n{RAMPS_WGSL}\n{}\n{MESH_WGSL}",
        wgsl_prelude(),
        crate::render::pbr::wgsl_constants(),
        skinning_wgsl(),
        crate::render::pbr::PBR_WGSL,
    )
}

/// Skinning method codes a pipeline is built for: `SKIN_NONE` to `SKIN_BLENDED`.
const SKINNING_CODES: usize = SKIN_BLENDED as usize + 1;

/// Pipelines per pass, view mode and skinning method.
const PIPELINE_SLOTS: usize = MeshPass::COUNT * ViewMode::VARIANTS.len() * SKINNING_CODES;

/// The slot of `pass` in view `mode` skinning with method code `skinning`: view modes' shader
/// codes run from 0 to their count (`render::views` tests that).
fn pipeline_slot(pass: MeshPass, mode: ViewMode, skinning: u32) -> usize {
    let mode = pass.slot() * ViewMode::VARIANTS.len() + pass.mode_for(mode).shader_code() as usize;
    debug_assert!((skinning as usize) < SKINNING_CODES, "skinning code {skinning}");
    mode * SKINNING_CODES + (skinning as usize).min(SKINNING_CODES - 1)
}

/// The mesh pipelines, one per pass, view mode and skinning method, each built the first time a
/// frame needs it: a software driver spends tens of milliseconds compiling one, and most rigs
/// need one or two passes in one or two view modes with one method.
pub(super) struct MeshPipelines {
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    format: wgpu::TextureFormat,
    samples: u32,
    built: [std::sync::OnceLock<wgpu::RenderPipeline>; PIPELINE_SLOTS],
}

impl MeshPipelines {
    /// How many of the mesh pipelines are built.
    pub(super) fn built(&self) -> usize {
        self.built.iter().filter(|p| p.get().is_some()).count()
    }

    /// The pipeline of `pass` in view `mode` for draws skinned with method code `skinning`
    /// (`SKIN_*`), once built.
    pub(super) fn get(&self, pass: MeshPass, mode: ViewMode, skinning: u32) -> Option<&wgpu::RenderPipeline> {
        self.built[pipeline_slot(pass, mode, skinning)].get()
    }

    /// Builds those of `passes` in view `mode` with method code `skinning` not built yet, side
    /// by side on threads (the driver compiles each on the CPU). Returns how many were built.
    pub(super) fn ensure(
        &self,
        device: &wgpu::Device,
        cache: Option<&wgpu::PipelineCache>,
        passes: PassSet,
        mode: ViewMode,
        skinning: u32,
    ) -> usize {
        let mut missing = PassSet::default();
        for pass in passes.iter().filter(|&p| self.get(p, mode, skinning).is_none()) {
            missing.insert(pass);
        }
        let build = |pass: MeshPass| {
            self.built[pipeline_slot(pass, mode, skinning)]
                .get_or_init(|| self.build(device, cache, pass, pass.mode_for(mode), skinning));
        };
        match missing.iter().count() {
            0 => {}
            1 => missing.iter().for_each(build),
            _ => missing.iter().par_bridge().for_each(build),
        }
        missing.iter().count()
    }

    fn build(
        &self,
        device: &wgpu::Device,
        cache: Option<&wgpu::PipelineCache>,
        pass: MeshPass,
        mode: ViewMode,
        skinning: u32,
    ) -> wgpu::RenderPipeline {
        let constants = [
            ("view_mode", f64::from(mode.shader_code())),
            ("skinning", f64::from(skinning)),
        ];
        let compilation_options = wgpu::PipelineCompilationOptions {
            constants: &constants,
            ..Default::default()
        };
        let PassState {
            label,
            topology,
            front_face,
            cull_mode,
            entry_points: (vertex_entry, fragment_entry),
            blended,
        } = PassState::of(pass);
        let targets = if blended {
            // Alpha-blended materials keep the target opaque (screenshots have no holes).
            color_target(
                self.format,
                Some(wgpu::BlendState {
                    color: wgpu::BlendState::ALPHA_BLENDING.color,
                    alpha: wgpu::BlendComponent::OVER,
                }),
            )
        } else {
            color_target(self.format, None)
        };
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(label),
            layout: Some(&self.layout),
            vertex: wgpu::VertexState {
                module: &self.module,
                entry_point: Some(vertex_entry),
                compilation_options: compilation_options.clone(),
                buffers: &mesh_vertex_buffers().map(Some),
            },
            primitive: wgpu::PrimitiveState {
                topology,
                front_face,
                cull_mode,
                ..Default::default()
            },
            depth_stencil: Some(depth_state(!blended, wgpu::CompareFunction::LessEqual)),
            multisample: multisample_state(self.samples),
            fragment: Some(wgpu::FragmentState {
                module: &self.module,
                entry_point: Some(fragment_entry),
                compilation_options,
                targets: &targets,
            }),
            multiview_mask: None,
            cache,
        })
    }
}

/// How a mesh pass draws: its triangles or lines, which faces it culls, its shader entry points
/// and whether it blends over what is drawn (then it writes no depth).
struct PassState {
    label: &'static str,
    topology: wgpu::PrimitiveTopology,
    front_face: wgpu::FrontFace,
    cull_mode: Option<wgpu::Face>,
    entry_points: (&'static str, &'static str),
    blended: bool,
}

impl PassState {
    fn of(pass: MeshPass) -> PassState {
        let (ccw, cw, back) = (wgpu::FrontFace::Ccw, wgpu::FrontFace::Cw, Some(wgpu::Face::Back));
        let triangles = |label, front_face, cull_mode, fragment, blended| PassState {
            label,
            topology: wgpu::PrimitiveTopology::TriangleList,
            front_face,
            cull_mode,
            entry_points: ("vs_main", fragment),
            blended,
        };
        match pass {
            MeshPass::Shaded(MeshPipeline::Culled) => triangles("mesh (culled)", ccw, back, "fs_main", false),
            MeshPass::Shaded(MeshPipeline::CulledMirrored) => {
                triangles("mesh (culled, mirrored)", cw, back, "fs_main", false)
            }
            MeshPass::Shaded(MeshPipeline::DoubleSided) => {
                triangles("mesh (double-sided)", ccw, None, "fs_main", false)
            }
            MeshPass::Shaded(MeshPipeline::Blended) => triangles("mesh (blended)", ccw, None, "fs_blend", true),
            MeshPass::Ghost => triangles("mesh (ghost)", ccw, back, "fs_blend", true),
            MeshPass::Wireframe => PassState {
                label: "wireframe",
                topology: wgpu::PrimitiveTopology::LineList,
                front_face: ccw,
                cull_mode: None,
                entry_points: ("vs_wire", "fs_wire"),
                blended: false,
            },
        }
    }
}

const POSITION_ATTRIBUTES: [wgpu::VertexAttribute; 1] = wgpu::vertex_attr_array![0 => Float32x3];
const NORMAL_ATTRIBUTES: [wgpu::VertexAttribute; 1] = wgpu::vertex_attr_array![1 => Float32x3];
const UV_ATTRIBUTES: [wgpu::VertexAttribute; 1] = wgpu::vertex_attr_array![2 => Float32x2];
const INFLUENCE_ATTRIBUTES: [wgpu::VertexAttribute; 4] =
    wgpu::vertex_attr_array![3 => Uint32x4, 5 => Uint32x4, 4 => Float32x4, 6 => Float32x4];
const COLOR_ATTRIBUTES: [wgpu::VertexAttribute; 1] = wgpu::vertex_attr_array![7 => Float32x4];
const REST_ATTRIBUTES: [wgpu::VertexAttribute; 1] = wgpu::vertex_attr_array![8 => Float32x3];
const SYMMETRY_ATTRIBUTES: [wgpu::VertexAttribute; 1] = wgpu::vertex_attr_array![9 => Float32];
const REST_NORMAL_ATTRIBUTES: [wgpu::VertexAttribute; 1] = wgpu::vertex_attr_array![10 => Float32x3];

/// The vertex buffers every mesh pipeline reads, in the order the draws bind them, at the
/// shader locations `mesh.wgsl` declares.
fn mesh_vertex_buffers() -> [wgpu::VertexBufferLayout<'static>; 8] {
    let layout = |stride: usize, attributes: &'static [wgpu::VertexAttribute]| wgpu::VertexBufferLayout {
        array_stride: stride as u64,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes,
    };
    [
        layout(12, &POSITION_ATTRIBUTES),
        layout(12, &NORMAL_ATTRIBUTES),
        layout(8, &UV_ATTRIBUTES),
        layout(std::mem::size_of::<GpuInfluences>(), &INFLUENCE_ATTRIBUTES),
        layout(16, &COLOR_ATTRIBUTES),
        layout(12, &REST_ATTRIBUTES),
        layout(4, &SYMMETRY_ATTRIBUTES),
        layout(12, &REST_NORMAL_ATTRIBUTES),
    ]
}
