//! The 3D view: pipelines built once, a rig's buffers built on load (`upload`), palettes (or
//! CPU-skinned vertices) written per frame (`frame`), and the scene pass recorded from them
//! (`encode`).

use crate::anim::Attachment;
use crate::anim::{Bounds, PoseBuffers};
use crate::audit::VertexSymmetry;
use crate::render::camera::OrbitCamera;
use crate::render::gpu_data::{GpuInfluences, MorphBuffers, PaletteBuffers, SKIN_NONE, triangle_edges};
use crate::render::material::{MeshPipeline, Winding, draw_flags, material_uniform, mesh_pipeline};
use crate::render::morph::MorphGpu;
use crate::render::pipelines::{MeshPass, MeshPipelines, PassSet};
use crate::render::skeleton::{LineVertex, VERTICES_PER_JOINT, bone_lines, grid_lines};
use crate::render::views::{SYMMETRY_UNCHECKED, ViewMode, ViewOptions};
use crate::rig::{Material, Rig};
use crate::skin::{DualQuat, SkinnedPose, SkinningMethod, SkinningPath};
use glam::{Mat4, Vec3, Vec4};
use std::hash::Hasher;
use wgpu::util::DeviceExt;

pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Samples per pixel of offscreen pictures (renders, screenshots, tests): they are looked at
/// closely, and are drawn once.
pub const OFFSCREEN_SAMPLES: u32 = 4;
/// Clear color of the 3D view (linear).
pub const BACKGROUND: wgpu::Color = wgpu::Color {
    r: 0.018,
    g: 0.021,
    b: 0.028,
    a: 1.0,
};
/// Light travelling down and away from a camera in the default position.
pub const LIGHT_DIRECTION: Vec3 = Vec3::new(-0.4, -1.0, -0.55);

/// WGSL sources; the skinning functions ([`skinning_wgsl`]) are prepended to every shader
/// that skins.
pub(crate) const MESH_WGSL: &str = include_str!("../../shaders/mesh.wgsl");
pub(crate) const LINES_WGSL: &str = include_str!("../../shaders/lines.wgsl");

mod encode;
mod frame;
mod ghosts;
mod proxy;
mod uniforms;
mod upload;
pub(in crate::render) use upload::material_of;

pub use ghosts::GhostPose;
use uniforms::NO_JOINT;
pub(crate) use uniforms::{DrawUniform, FrameUniform, ShadingUniform};

pub use proxy::{PROXY_ABOVE_TRIANGLES, PROXY_TRIANGLES};

/// Most overlay line vertices drawn (attachments, marked vertices and trail); more are left out.
const OVERLAY_CAPACITY: usize = 16384;

/// What one frame of the 3D view shows.
pub struct FrameState<'a> {
    pub rig: &'a std::sync::Arc<Rig>,
    /// Changes whenever `rig` does: the renderer uploads the rig again when it changes.
    pub generation: u64,
    /// The rig's rest bounds, which place the grid.
    pub rest_bounds: Bounds,
    pub pose: &'a PoseBuffers,
    /// CPU-skinned vertices (read on the CPU path) and dual quaternion palettes (read for DQS).
    pub skinned: &'a SkinnedPose,
    pub camera: &'a OrbitCamera,
    pub aspect: f32,
    pub view: &'a ViewOptions,
    pub path: SkinningPath,
    pub method: SkinningMethod,
    /// The selected node, whose weights the weights view shows and the skeleton highlights.
    pub selected: Option<usize>,
    /// Size of the joint markers of the skeleton overlay, in world units.
    pub marker_size: f32,
    /// Markers following joints, and the root motion trail, drawn as lines.
    pub attachments: &'a [Attachment],
    pub trail: &'a crate::anim::RootTrail,
    /// Vertices to point out (those a finding names, the one inspected), in world space.
    pub marks: &'a [Vec3],
    /// The per-vertex values of the symmetry or weight-difference view, once computed (read
    /// only in those views), with a number that changes when they are computed against
    /// something else (the other file's generation; 0 for the symmetry view).
    pub symmetry: Option<(u64, &'a VertexSymmetry)>,
    /// The engine distance view's per-vertex values (read only in that view), with the number
    /// of their measurement: each measurement is uploaded once.
    pub engine_distances: Option<(u64, &'a crate::engine::distance::VertexDistances)>,
    /// Per node, its world position error against the file compared with, relative to the
    /// rig's size (while comparing; colors the skeleton overlay).
    pub joint_errors: Option<&'a [f32]>,
    /// Onion-skin ghosts, farthest first (none when the onion skin is off).
    pub ghosts: &'a [GhostPose],
    /// Every node's world matrix in the bind pose, when the bind-pose skeleton is drawn.
    pub bind_skeleton: Option<&'a [Mat4]>,
}

/// A rig's GPU resources.
pub struct RigGpu {
    draws: Vec<GpuDraw>,
    /// Per mesh instance (`None` for unskinned instances).
    palettes: Vec<Option<PaletteBuffers>>,
    bones: Vec<bool>,
    skeleton: wgpu::Buffer,
    skeleton_vertices: Vec<LineVertex>,
    /// Attachment markers and the root motion trail.
    overlay: wgpu::Buffer,
    overlay_vertices: Vec<LineVertex>,
    /// This frame's blended draws, farthest first.
    blended: Vec<usize>,
    /// The view and the values' number (see [`FrameState::symmetry`]) whose per-vertex values
    /// are in the draws' `symmetry` buffers.
    symmetry_written: Option<(ViewMode, u64)>,
    /// [`RigGpu::build_proxies`] ran.
    proxy_built: bool,
    /// The proxies being simplified on a thread since the rig was uploaded, and how long that
    /// took (see [`RigGpu::start_proxies`]).
    proxy_job: Option<crate::job::Job<proxy::Simplified>>,
    /// The [`SkinnedPose::generation`] the draws' CPU-path vertex buffers hold (`None` once
    /// buffers were added): a frame that did not skin again uploads nothing.
    cpu_vertices: Option<u64>,
    /// Onion-skin ghost slots, made as the options first need them.
    ghosts: Vec<ghosts::GhostGpu>,
    /// Ghost slots this frame draws skinned.
    ghosts_shown: usize,
    /// The skinning method code (`SKIN_*`) of this frame's draws that skin on the GPU,
    /// `SKIN_NONE` when none does: the mesh pipelines are built for it.
    skinning: u32,
    /// A CPU-path surface stream as it is written (kept between frames: no allocation per frame).
    surface_scratch: Vec<[f32; 4]>,
    /// What the rig's images take on the GPU.
    texture_bytes: u64,
}

/// What a rig takes on the GPU: its buffers (vertex streams, indices, palettes, morph targets,
/// overlays) and its textures, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuMemory {
    pub buffers: u64,
    pub textures: u64,
}

impl RigGpu {
    /// What the rig takes on the GPU now.
    pub fn gpu_memory(&self) -> GpuMemory {
        let palettes: u64 = (self.palettes.iter().flatten())
            .map(|p| p.matrices.size() + p.dual_quats.size())
            .sum();
        let draws: u64 = self.draws.iter().map(GpuDraw::buffer_bytes).sum();
        GpuMemory {
            buffers: palettes + draws + self.skeleton.size() + self.overlay.size(),
            textures: self.texture_bytes,
        }
    }

    /// Whether some primitive has a proxy (the rig is heavy; see `render::detail`).
    pub fn has_proxy(&self) -> bool {
        self.draws.iter().any(|d| d.proxy.is_some())
    }

    /// Mesh primitives of the whole scene in drawing order: triangles, then wireframe lines.
    pub fn primitive_count(&self, view: &ViewOptions) -> u64 {
        let triangles: u64 = self.draws.iter().map(|d| u64::from(d.index_count / 3)).sum();
        let lines: u64 = self
            .draws
            .iter()
            .filter_map(|d| d.edges.as_ref())
            .map(|(_, n)| u64::from(n / 2))
            .sum();
        triangles + if view.wireframe { lines } else { 0 }
    }
}

struct GpuDraw {
    instance: usize,
    primitive: usize,
    positions: wgpu::Buffer,
    normals: wgpu::Buffer,
    /// Written every frame on the CPU path (skinned instances only).
    /// Made the first time the CPU path draws (see [`RigGpu::ensure_buffers`]).
    cpu_skinned: Option<(wgpu::Buffer, wgpu::Buffer)>,
    /// Skinned by the CPU path (a skinned instance's primitive with influences).
    cpu_skinnable: bool,
    /// For a CPU-skinnable draw with a normal map: the surface stream with the CPU path's skinned
    /// tangents in place of the bind pose's (written with the vertices), and the bind group that
    /// reads it, used in place of `bind_group` on that path.
    cpu_surface: Option<(wgpu::Buffer, wgpu::BindGroup)>,
    uvs: wgpu::Buffer,
    influences: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    /// A much shorter index list over the same vertices, drawn while a heavy scene moves.
    proxy: Option<(wgpu::Buffer, u32)>,
    /// Each edge once, as lines, and their index count: made the first time the wireframe is
    /// shown.
    edges: Option<(wgpu::Buffer, u32)>,
    uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    /// The textures and surface stream the bind group holds (ghosts' bind groups hold them too).
    maps: DrawMaps,
    /// The material's shading parameters as the uniform carries them.
    shading: crate::render::pbr::MaterialShading,
    /// `COLOR_0`, or white.
    colors: wgpu::Buffer,
    material: Material,
    /// This frame's pipeline and shader flags, which the draw's transforms decide.
    pipeline: MeshPipeline,
    flags: u32,
    /// Node index of each joint of the instance's skin, to find the selected joint's slot.
    joints: Vec<usize>,
    morph: MorphBuffers,
    /// The symmetry view's value per vertex.
    symmetry: wgpu::Buffer,
    /// The uniform scale of the instance's palette in the rest pose (1 unskinned): a skin whose
    /// inverse bind matrices leave out a scale of the skeleton's (centimetres drawn in metres)
    /// is not stretched by it, so the deformation view divides it out.
    bind_scale: f32,
    /// Its node is hidden this frame (an animated `KHR_node_visibility`): it is not drawn.
    hidden: bool,
}

/// What a draw's bind group holds besides its uniform: the material's textures (white where it
/// has none; the colour ones viewed as sRGB, the data ones as linear) and its surface stream
/// (`shaders/mesh.wgsl`'s `surface`; a shared placeholder where the material reads none).
impl GpuDraw {
    fn buffer_bytes(&self) -> u64 {
        let pair = |p: &Option<(wgpu::Buffer, wgpu::Buffer)>| p.as_ref().map_or(0, |(a, b)| a.size() + b.size());
        let counted = |b: &Option<(wgpu::Buffer, u32)>| b.as_ref().map_or(0, |(b, _)| b.size());
        let fixed = [
            &self.positions,
            &self.normals,
            &self.uvs,
            &self.influences,
            &self.indices,
            &self.uniform,
            &self.colors,
            &self.symmetry,
            &self.morph.dqs_blend,
        ];
        fixed.iter().map(|b| b.size()).sum::<u64>()
            + pair(&self.cpu_skinned)
            + self.cpu_surface.as_ref().map_or(0, |(b, _)| b.size())
            + counted(&self.proxy)
            + counted(&self.edges)
            + self.morph.morph.as_ref().map_or(0, MorphGpu::buffer_bytes)
    }
}

#[derive(Clone)]
pub(super) struct DrawMaps {
    pub(super) base_color: wgpu::TextureView,
    pub(super) metallic_roughness: wgpu::TextureView,
    pub(super) normal: wgpu::TextureView,
    pub(super) occlusion: wgpu::TextureView,
    pub(super) emissive: wgpu::TextureView,
    pub(super) surface: wgpu::Buffer,
    pub(super) specular: wgpu::TextureView,
    pub(super) specular_color: wgpu::TextureView,
}

impl GpuDraw {
    /// The draw uniform's shading fields for this frame. A normal map is left out where the
    /// vertices arrive skinned from the CPU without their tangents (`tangents_left_behind`: a
    /// ghost's), which would turn the map against the surface.
    fn shading_fields(&self, tangents_left_behind: bool) -> ShadingUniform {
        let mut maps = self.shading.maps;
        if tangents_left_behind {
            maps &= !(crate::render::pbr::MAP_NORMAL
                | crate::render::pbr::MAP_NORMAL << crate::render::pbr::MAP_SET1_SHIFT);
        }
        ShadingUniform {
            pbr: self.shading.pbr,
            maps: [maps, 0, 0, 0],
            specular: self.shading.specular,
            uv_rows: self.shading.uv_rows,
        }
    }
}

/// Pipelines and shared resources of the 3D view, for one output color format.
pub struct SceneRenderer {
    pub(super) frame_buffer: wgpu::Buffer,
    pub(super) frame_layout: wgpu::BindGroupLayout,
    pub(super) frame_bind_group: wgpu::BindGroup,
    /// The prefiltered environment the frame's bind group holds.
    pub(super) ibl: crate::render::ibl::IblState,
    pub(super) palette_layout: wgpu::BindGroupLayout,
    pub(super) morph_layout: wgpu::BindGroupLayout,
    /// Sums the morph targets in use before the meshes are drawn.
    pub(super) morph_pass: crate::render::morph::MorphPass,
    pub(super) draw_layout: wgpu::BindGroupLayout,
    pub(super) mesh_pipelines: MeshPipelines,
    pub(super) lines: wgpu::RenderPipeline,
    pub(super) lines_on_top: wgpu::RenderPipeline,
    pub(super) sampler: wgpu::Sampler,
    pub(super) white: wgpu::TextureView,
    /// The surface stream bound for draws whose material reads none.
    pub(super) empty_surface: wgpu::Buffer,
    /// Bound for unskinned instances, whose shaders never read it.
    pub(super) empty_palette: wgpu::BindGroup,
    pub(super) grid: Option<(wgpu::Buffer, u32)>,
    /// Draw every mesh unskinned from its bind-pose vertices and upload no palette: the static
    /// baseline `rigscope bench` compares the skinning paths against (a renderer made for it:
    /// [`crate::draw::ViewRenderer::static_baseline`]). Off in the viewer.
    pub(crate) unskinned: bool,
}

/// What [`SceneRenderer::write_frame`] uploaded and how long its stages took on the CPU.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameUpload {
    /// Writing the joint palettes (matrices, and dual quaternions for DQS on the GPU path).
    pub palette: std::time::Duration,
    pub palette_bytes: u64,
    /// Writing CPU-skinned positions and normals (`None` on the GPU path).
    pub vertices: Option<std::time::Duration>,
    pub vertex_bytes: u64,
    /// A hash of everything written and of the options the pass reads: two frames with the
    /// same signature (and the same rig, targets and viewport) draw the same pixels.
    pub signature: u64,
}

impl SceneRenderer {
    /// Rebuilds the ground grid and axes to suit a rig of the given bounds.
    pub fn set_grid(&mut self, device: &wgpu::Device, bounds: &Bounds) {
        let vertices = grid_lines(bounds);
        let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("grid"),
            contents: bytemuck::cast_slice(&vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        self.grid = Some((buffer, vertices.len() as u32));
    }

    /// Prefilters `environment` for the shaded view unless it is the one computed last (the
    /// BRDF table too, the first time).
    pub fn ensure_environment(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        cache: Option<&wgpu::PipelineCache>,
        environment: &crate::render::environment::Environment,
    ) {
        if self.ibl.ensure(device, queue, cache, environment) {
            self.frame_bind_group =
                crate::render::pipelines::frame_bind_group(device, &self.frame_layout, &self.frame_buffer, &self.ibl);
        }
    }

    /// The id of the environment the shaded view is lit by (`None` before one is computed).
    pub fn environment(&self) -> Option<u64> {
        self.ibl.computed()
    }

    /// Builds the mesh pipelines that drawing `gpu` with `view` needs and that are not built
    /// yet. Returns how many it built.
    pub fn prepare_pipelines(
        &self,
        device: &wgpu::Device,
        cache: Option<&wgpu::PipelineCache>,
        gpu: &RigGpu,
        view: &ViewOptions,
    ) -> usize {
        let mut passes = PassSet::default();
        for draw in &gpu.draws {
            passes.insert(MeshPass::shaded(draw.pipeline, view.mode));
        }
        if view.wireframe && !gpu.draws.is_empty() {
            passes.insert(MeshPass::Wireframe);
        }
        gpu.ghost_passes(view, &mut passes);
        self.mesh_pipelines
            .ensure(device, cache, passes, view.mode, gpu.skinning)
    }
}
