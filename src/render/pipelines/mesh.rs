//! The mesh pipelines: one per pass, view mode and skinning method, built the first time a frame
//! needs one, and the shader and vertex layout they share.

use super::{color_target, depth_state, multisample_state};
use crate::render::gpu_data::{GpuInfluences, SKIN_BLENDED, skinning_wgsl, wgsl_u32_constants};
use crate::render::material::MeshPipeline;
use crate::render::scene::*;
use crate::render::views::{RAMPS_WGSL, ViewMode, wgsl_prelude};
use rayon::prelude::*;
use strum::VariantArray;

/// Which mesh pipeline: one per [`MeshPipeline`], and the wireframe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::render) enum MeshPass {
    Shaded(MeshPipeline),
    Wireframe,
    /// An onion-skin ghost of a culled draw: blended like [`MeshPipeline::Blended`], back faces
    /// culled so that a ghost shows one layer of its surface, as the draw does.
    Ghost,
}

/// A set of mesh passes, one bit each: what a frame draws, gathered every frame without
/// allocating.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::render) struct PassSet(u8);

impl PassSet {
    pub(in crate::render) fn insert(&mut self, pass: MeshPass) {
        self.0 |= 1 << pass.slot();
    }

    pub(in crate::render) fn iter(self) -> impl Iterator<Item = MeshPass> {
        MeshPass::ALL
            .into_iter()
            .filter(move |pass| self.0 & 1 << pass.slot() != 0)
    }
}

impl MeshPass {
    pub(in crate::render) const COUNT: usize = Self::ALL.len();

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
    pub(in crate::render) fn shaded(pipeline: MeshPipeline, mode: ViewMode) -> MeshPass {
        match (mode, pipeline) {
            (ViewMode::Deformation, MeshPipeline::Culled | MeshPipeline::CulledMirrored) => {
                MeshPass::Shaded(MeshPipeline::DoubleSided)
            }
            _ => MeshPass::Shaded(pipeline),
        }
    }

    /// The pass that draws the onion-skin ghosts of a draw of `pipeline` in view `mode`: culled
    /// as the draw is where it is culled the plain way, otherwise blended without culling.
    pub(in crate::render) fn ghost(pipeline: MeshPipeline, mode: ViewMode) -> MeshPass {
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
pub(in crate::render) struct MeshPipelines {
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    format: wgpu::TextureFormat,
    samples: u32,
    built: [std::sync::OnceLock<wgpu::RenderPipeline>; PIPELINE_SLOTS],
}

impl MeshPipelines {
    /// The mesh shader and its pipeline layout (frame, palette, draw and morph bind groups),
    /// with no pipeline built yet: each is built the first time a frame needs it.
    pub(super) fn new(
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

    /// How many of the mesh pipelines are built.
    pub(in crate::render) fn built(&self) -> usize {
        self.built.iter().filter(|p| p.get().is_some()).count()
    }

    /// The pipeline of `pass` in view `mode` for draws skinned with method code `skinning`
    /// (`SKIN_*`), once built.
    pub(in crate::render) fn get(
        &self,
        pass: MeshPass,
        mode: ViewMode,
        skinning: u32,
    ) -> Option<&wgpu::RenderPipeline> {
        self.built[pipeline_slot(pass, mode, skinning)].get()
    }

    /// Builds those of `passes` in view `mode` with method code `skinning` not built yet, side
    /// by side on threads (the driver compiles each on the CPU). Returns how many were built.
    pub(in crate::render) fn ensure(
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
