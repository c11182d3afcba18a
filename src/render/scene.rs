//! The 3D view: pipelines built once, a rig's buffers built on load, palettes (or CPU-skinned
//! vertices) written per frame.

use crate::anim::Attachment;
use crate::anim::{Bounds, PoseBuffers};
use crate::audit::VertexSymmetry;
use crate::render::camera::OrbitCamera;
use crate::render::detail::ScenePortion;
use crate::render::gpu_data::{GpuInfluences, MorphBuffers, PaletteBuffers, SKIN_NONE, triangle_edges};
use crate::render::material::{
    DRAW_RIGID, MeshPipeline, Winding, draw_flags, material_uniform, mesh_pipeline, winding,
};
use crate::render::morph::MorphGpu;
use crate::render::pipelines::{MeshPass, MeshPipelines, PassSet};
use crate::render::skeleton::{
    BIND_COLOR, LineVertex, VERTICES_PER_JOINT, bone_lines, grid_lines, overlay_lines, skeleton_lines,
};
use crate::render::targets::{PixelRect, RenderTargets};
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

mod ghosts;
mod proxy;
mod uniforms;
mod upload;
pub(in crate::render) use upload::material_of;

pub use ghosts::GhostPose;
use uniforms::NO_JOINT;
pub(crate) use uniforms::{DrawUniform, FrameUniform};

pub use proxy::{PROXY_ABOVE_TRIANGLES, PROXY_TRIANGLES};

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
}

impl RigGpu {
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

/// Most overlay line vertices drawn (attachments, marked vertices and trail); more are left out.
const OVERLAY_CAPACITY: usize = 16384;

/// The per-frame steps of [`SceneRenderer::write_frame`] that need only the rig's buffers.
impl RigGpu {
    /// Writes the per-vertex values of the symmetry or weight-difference view once they are
    /// computed and not yet on the GPU.
    fn write_symmetry(&mut self, queue: &wgpu::Queue, state: &FrameState) {
        let mode = state.view.mode;
        if let (ViewMode::Symmetry | ViewMode::WeightDifference, Some((key, symmetry))) = (mode, state.symmetry)
            && self.symmetry_written != Some((mode, key))
        {
            for draw in &self.draws {
                let mesh = state.rig.instances[draw.instance].mesh;
                if let Some(values) = symmetry.of(mesh, draw.primitive) {
                    queue.write_buffer(&draw.symmetry, 0, bytemuck::cast_slice(values));
                }
            }
            self.symmetry_written = Some((mode, key));
        }
    }

    /// Blended draws cover what is behind them: orders them farthest first, by their node's
    /// position.
    fn sort_blended(&mut self, state: &FrameState) {
        let eye = state.camera.eye();
        let worlds = &state.pose.worlds;
        let draws = &self.draws;
        let distance = |d: &usize| {
            let node = state.rig.instances[draws[*d].instance].node;
            worlds[node].w_axis.truncate().distance_squared(eye)
        };
        self.blended
            .sort_unstable_by(|a, b| distance(b).total_cmp(&distance(a)));
    }

    /// Writes the skeleton overlay's lines, when it is shown.
    fn write_skeleton(&mut self, queue: &wgpu::Queue, state: &FrameState, signature: &mut std::hash::DefaultHasher) {
        let view = state.view;
        if view.skeleton.show {
            skeleton_lines(
                state.rig,
                &self.bones,
                &state.pose.worlds,
                state.selected,
                state.joint_errors,
                &view.skeleton,
                state.marker_size,
                &mut self.skeleton_vertices,
            );
            queue.write_buffer(&self.skeleton, 0, bytemuck::cast_slice(&self.skeleton_vertices));
            signature.write(bytemuck::cast_slice(&self.skeleton_vertices));
        }
    }

    /// Writes the lines drawn on top: attachments, the root trail, marked vertices, the
    /// ghosts' skeletons and the bind pose's skeleton, up to [`OVERLAY_CAPACITY`] vertices.
    fn write_overlay(&mut self, queue: &wgpu::Queue, state: &FrameState, signature: &mut std::hash::DefaultHasher) {
        self.overlay_vertices.clear();
        overlay_lines(
            state.attachments,
            &state.pose.worlds,
            state.trail,
            state.marks,
            state.marker_size,
            &mut self.overlay_vertices,
        );
        ghosts::ghost_skeleton_lines(state, &self.bones, &mut self.overlay_vertices);
        if let Some(worlds) = state.bind_skeleton {
            let marker = state.marker_size * 2.0;
            bone_lines(
                state.rig,
                &self.bones,
                worlds,
                BIND_COLOR,
                marker,
                &mut self.overlay_vertices,
            );
        }
        self.overlay_vertices.truncate(OVERLAY_CAPACITY);
        if !self.overlay_vertices.is_empty() {
            queue.write_buffer(&self.overlay, 0, bytemuck::cast_slice(&self.overlay_vertices));
        }
        signature.write(bytemuck::cast_slice(&self.overlay_vertices));
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
}

/// What a draw's bind group holds besides its uniform: the material's textures (white where it
/// has none; the colour ones viewed as sRGB, the data ones as linear) and its surface stream
/// (`shaders/mesh.wgsl`'s `surface`; a shared placeholder where the material reads none).
#[derive(Clone)]
pub(super) struct DrawMaps {
    pub(super) base_color: wgpu::TextureView,
    pub(super) metallic_roughness: wgpu::TextureView,
    pub(super) normal: wgpu::TextureView,
    pub(super) occlusion: wgpu::TextureView,
    pub(super) emissive: wgpu::TextureView,
    pub(super) surface: wgpu::Buffer,
}

impl GpuDraw {
    /// The draw uniform's shading fields for this frame. A normal map is left out where the
    /// vertices arrive skinned from the CPU without their tangents (`tangents_left_behind`: a
    /// ghost's), which would turn the map against the surface.
    fn shading_fields(&self, tangents_left_behind: bool) -> (Vec4, [u32; 4], [Vec4; 8]) {
        let mut maps = self.shading.maps;
        if tangents_left_behind {
            maps &= !(crate::render::pbr::MAP_NORMAL
                | crate::render::pbr::MAP_NORMAL << crate::render::pbr::MAP_SET1_SHIFT);
        }
        (self.shading.pbr, [maps, 0, 0, 0], self.shading.uv_rows)
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

    /// Writes this frame's camera, palettes (or CPU-skinned vertices), draw settings and
    /// skeleton overlay.
    ///
    /// Each step hashes what changes pixels into the returned signature, in the same order
    /// every frame: two frames with the same signature draw the same pixels.
    pub fn write_frame(&self, queue: &wgpu::Queue, gpu: &mut RigGpu, state: &FrameState) -> FrameUpload {
        let mut upload = FrameUpload::default();
        let mut signature = std::hash::DefaultHasher::new();
        self.write_frame_uniform(queue, state, &mut signature);
        self.sign_settings(gpu, state, &mut signature);
        let skinned_draw = gpu.draws.iter().any(|draw| gpu.palettes[draw.instance].is_some());
        gpu.skinning = self.skinning_code(state.path, state.method, skinned_draw);
        self.write_palettes(queue, gpu, state, &mut signature, &mut upload);
        self.write_draws(queue, gpu, state, &mut signature, &mut upload);
        gpu.write_symmetry(queue, state);
        gpu.sort_blended(state);
        gpu.write_skeleton(queue, state, &mut signature);
        gpu.write_overlay(queue, state, &mut signature);
        self.write_ghosts(queue, gpu, state, &mut signature);
        // Blended draws in their drawing order.
        for &d in &gpu.blended {
            signature.write_usize(d);
        }
        upload.signature = signature.finish();
        upload
    }

    /// Writes the camera and light uniform of the frame.
    fn write_frame_uniform(&self, queue: &wgpu::Queue, state: &FrameState, signature: &mut std::hash::DefaultHasher) {
        let frame = FrameUniform {
            view_proj: state.camera.view_projection(state.aspect),
            camera_position: state.camera.eye().extend(1.0),
            light_direction: LIGHT_DIRECTION.normalize().extend(0.0),
            view: [
                state.view.shader_flags(),
                state.view.tone.curve.shader_code(),
                state.view.light.shader_code(),
                0,
            ],
            tone: Vec4::new(state.view.tone.scale(), 0.0, 0.0, 0.0),
        };
        queue.write_buffer(&self.frame_buffer, 0, bytemuck::bytes_of(&frame));
        signature.write(bytemuck::bytes_of(&frame));
    }

    /// Hashes what changes pixels without being written this frame: the passes drawn, the
    /// skinning choice, the symmetry values already on the GPU and the morph weights (the
    /// CPU-skinned vertices follow from the palettes and them).
    fn sign_settings(&self, gpu: &RigGpu, state: &FrameState, signature: &mut std::hash::DefaultHasher) {
        let view = state.view;
        let skeleton = &view.skeleton;
        signature.write(&[
            view.mode.shader_code() as u8,
            u8::from(view.grid),
            u8::from(view.wireframe),
            u8::from(skeleton.show),
            u8::from(skeleton.depth_test),
            state.path as u8,
            state.method as u8,
            u8::from(gpu.symmetry_written.is_some_and(|(mode, _)| mode == view.mode)),
            u8::from(self.unskinned),
        ]);
        signature.write_u64(state.skinned.blend().id());
        signature.write_u64(gpu.symmetry_written.map_or(0, |(_, key)| key.wrapping_add(1)));
        signature.write_u64(self.ibl.computed().unwrap_or(u64::MAX));
        for weights in &state.pose.morph_weights {
            signature.write(bytemuck::cast_slice(weights));
        }
    }

    /// Writes the joint palettes of the skinned instances (and their dual quaternions where
    /// the GPU blends them), timing it.
    fn write_palettes(
        &self,
        queue: &wgpu::Queue,
        gpu: &RigGpu,
        state: &FrameState,
        signature: &mut std::hash::DefaultHasher,
        upload: &mut FrameUpload,
    ) {
        let gpu_skinning = state.path == SkinningPath::Gpu;
        let start = std::time::Instant::now();
        for (i, buffers) in gpu.palettes.iter().enumerate() {
            let Some(buffers) = buffers.as_ref().filter(|_| !self.unskinned) else {
                continue;
            };
            let matrices: &[u8] = bytemuck::cast_slice(&state.pose.palettes[i]);
            queue.write_buffer(&buffers.matrices, 0, matrices);
            signature.write(matrices);
            upload.palette_bytes += matrices.len() as u64;
            if gpu_skinning && state.method.needs_dual_quats() {
                let dual_quats: &[u8] = bytemuck::cast_slice::<DualQuat, u8>(&state.pose.dual_quats[i]);
                queue.write_buffer(&buffers.dual_quats, 0, dual_quats);
                upload.palette_bytes += dual_quats.len() as u64;
            }
        }
        upload.palette = start.elapsed();
    }

    /// Writes each draw's uniform (its pipeline chosen for the node's winding), blend mask and
    /// morph weights, and on the CPU path its skinned vertices when they changed; collects the
    /// blended draws.
    fn write_draws(
        &self,
        queue: &wgpu::Queue,
        gpu: &mut RigGpu,
        state: &FrameState,
        signature: &mut std::hash::DefaultHasher,
        upload: &mut FrameUpload,
    ) {
        let gpu_skinning = state.path == SkinningPath::Gpu;
        let skins_on_gpu = self.skins_on_gpu(state.path);
        let skins_here = |instance: usize| skins_on_gpu && gpu.palettes[instance].is_some();
        let mut vertex_time = std::time::Duration::ZERO;
        let upload_vertices = !gpu_skinning && gpu.cpu_vertices != Some(state.skinned.generation());
        gpu.blended.clear();
        for (d, draw) in gpu.draws.iter_mut().enumerate() {
            let skinned = gpu.palettes[draw.instance].is_some();
            // On the CPU path skinned vertices arrive morphed; everything else is morphed here,
            // when a target is in use.
            let weights = &state.pose.morph_weights[draw.instance];
            let morph_here = (draw.morph).write_weights(queue, weights, gpu_skinning || !draw.cpu_skinnable);
            let selected = state
                .selected
                .and_then(|node| draw.joints.iter().position(|&j| j == node))
                .map_or(NO_JOINT, |j| j as u32);
            let model = state.pose.instance_world(state.rig, draw.instance);
            let palette = (skinned && !self.unskinned).then(|| state.pose.palettes[draw.instance].as_slice());
            let turned = winding(&model, palette);
            draw.pipeline = mesh_pipeline(&draw.material, turned);
            draw.flags = draw_flags(&draw.material, turned) | if skinned { 0 } else { DRAW_RIGID };
            if draw.pipeline == MeshPipeline::Blended {
                gpu.blended.push(d);
            }
            let cpu_skinned = skinned && !self.unskinned && !skins_here(draw.instance);
            let (pbr, maps, uv_rows) = draw.shading_fields(cpu_skinned && draw.cpu_surface.is_none());
            let uniform = DrawUniform {
                model,
                base_color: draw.material.base_color,
                material: material_uniform(&draw.material),
                skin: [u32::from(skins_here(draw.instance)), selected, morph_here, draw.flags],
                bind: Vec4::new(draw.bind_scale, 0.0, 0.0, 0.0),
                ghost: Vec4::ZERO,
                pbr,
                maps,
                uv_rows,
            };
            queue.write_buffer(&draw.uniform, 0, bytemuck::bytes_of(&uniform));
            signature.write(bytemuck::bytes_of(&uniform));
            if skinned {
                let blend = state.skinned.blend();
                draw.morph
                    .write_dqs_blend(queue, blend.of(draw.instance, draw.primitive), blend.id());
            }
            if let (true, Some((positions, normals))) = (upload_vertices, &draw.cpu_skinned) {
                let start = std::time::Instant::now();
                let out = &state.skinned.meshes[draw.instance][draw.primitive];
                queue.write_buffer(positions, 0, bytemuck::cast_slice(&out.positions));
                queue.write_buffer(normals, 0, bytemuck::cast_slice(&out.normals));
                if let Some((surface, _)) = &draw.cpu_surface {
                    let instance = &state.rig.instances[draw.instance];
                    let primitive = &state.rig.meshes[instance.mesh].primitives[draw.primitive];
                    upload::write_surface_stream(primitive, &out.tangents, &mut gpu.surface_scratch);
                    queue.write_buffer(surface, 0, bytemuck::cast_slice(&gpu.surface_scratch));
                }
                vertex_time += start.elapsed();
                upload.vertex_bytes +=
                    (std::mem::size_of_val(&out.positions[..]) + std::mem::size_of_val(&out.normals[..])) as u64;
            }
        }
        upload.vertices = (!gpu_skinning).then_some(vertex_time);
        if upload_vertices {
            gpu.cpu_vertices = Some(state.skinned.generation());
        }
    }

    /// Records `portion` of the 3D view into `output` (a single-sample view of the targets'
    /// format), drawn inside `viewport` (x, y, width, height in pixels) or over the whole
    /// target. A portion that does not end the image leaves its samples and depth in `targets`
    /// for the next one.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        targets: &RenderTargets,
        output: &wgpu::TextureView,
        gpu: Option<&RigGpu>,
        view: &ViewOptions,
        path: SkinningPath,
        viewport: Option<PixelRect>,
        portion: &ScenePortion,
        timestamps: Option<wgpu::RenderPassTimestampWrites>,
    ) {
        let background = if view.transparent {
            wgpu::Color::TRANSPARENT
        } else {
            BACKGROUND
        };
        // The morph pre-pass's time counts as the scene pass's: it starts the pair of timestamps.
        let morphing = gpu.is_some_and(|gpu| gpu.morphs().any(MorphGpu::in_use));
        let (morph_timestamps, timestamps) = match timestamps {
            Some(t) if morphing => (
                Some(wgpu::ComputePassTimestampWrites {
                    query_set: t.query_set,
                    beginning_of_pass_write_index: t.beginning_of_pass_write_index,
                    end_of_pass_write_index: None,
                }),
                Some(wgpu::RenderPassTimestampWrites {
                    beginning_of_pass_write_index: None,
                    ..t
                }),
            ),
            t => (None, t),
        };
        if let Some(gpu) = gpu.filter(|_| morphing) {
            self.morph_pass.encode(encoder, gpu.morphs(), morph_timestamps);
        }
        let mut pass = begin_scene_pass(encoder, targets, output, portion, background, timestamps);
        if let Some(rect) = viewport.and_then(|r| r.clamped(targets.width, targets.height)) {
            pass.set_viewport(
                rect.x as f32,
                rect.y as f32,
                rect.width as f32,
                rect.height as f32,
                0.0,
                1.0,
            );
            pass.set_scissor_rect(rect.x, rect.y, rect.width, rect.height);
        }
        pass.set_bind_group(0, &self.frame_bind_group, &[]);
        if let Some(gpu) = gpu {
            self.encode_meshes(&mut pass, gpu, view, path, portion);
        }
        if portion.overlays {
            self.encode_overlays(&mut pass, gpu, view, path);
        }
    }

    /// Records the mesh draws of `portion`: opaque and masked draws, then blended ones over
    /// them, farthest first; the wireframe pass draws every edge (not over a proxy).
    fn encode_meshes(
        &self,
        pass: &mut wgpu::RenderPass,
        gpu: &RigGpu,
        view: &ViewOptions,
        path: SkinningPath,
        portion: &ScenePortion,
    ) {
        let opaque = gpu.draws.iter().filter(|d| d.pipeline != MeshPipeline::Blended);
        let blended = gpu.blended.iter().map(|&d| &gpu.draws[d]);
        let shaded = opaque.chain(blended).map(|draw| (draw, false));
        let wireframe = view.wireframe && !portion.proxy;
        let edges = gpu
            .draws
            .iter()
            .filter(|draw| wireframe && draw.edges.is_some())
            .map(|draw| (draw, true));
        // Where this draw's primitives start in the scene's drawing order.
        let mut first_primitive = 0u64;
        for (draw, wire) in shaded.chain(edges) {
            let (indices, count, per_primitive) = match (wire, &draw.edges, &draw.proxy) {
                (true, Some((edges, count)), _) => (edges, *count, 2),
                (false, _, Some((proxy, count))) if portion.proxy => (proxy, *count, 3),
                _ => (&draw.indices, draw.index_count, 3),
            };
            let primitives = u64::from(count / per_primitive);
            let start = first_primitive;
            first_primitive += primitives;
            let from = portion.primitives.start.clamp(start, start + primitives) - start;
            let to = portion.primitives.end.clamp(start, start + primitives) - start;
            if from >= to {
                continue;
            }
            let mesh_pass = if wire {
                MeshPass::Wireframe
            } else {
                MeshPass::shaded(draw.pipeline, view.mode)
            };
            // Built by `prepare_pipelines`; a draw whose pipeline was not asked for is skipped.
            let Some(pipeline) = self.mesh_pipelines.get(mesh_pass, view.mode, gpu.skinning) else {
                debug_assert!(false, "{mesh_pass:?} was not prepared");
                continue;
            };
            pass.set_pipeline(pipeline);
            let skinned = draw.cpu_skinned.as_ref().filter(|_| path == SkinningPath::Cpu);
            // CPU-skinned vertices come with their skinned tangents where the draw has a normal map.
            let uniform = match (&draw.cpu_surface, skinned) {
                (Some((_, cpu_bind_group)), Some(_)) => cpu_bind_group,
                _ => &draw.bind_group,
            };
            self.bind_draw(
                pass,
                draw,
                gpu.palettes[draw.instance].as_ref(),
                (uniform, &draw.morph.bind_group),
                skinned,
            );
            pass.set_index_buffer(indices.slice(..), wgpu::IndexFormat::Uint32);
            let per_primitive = u64::from(per_primitive);
            pass.draw_indexed((from * per_primitive) as u32..(to * per_primitive) as u32, 0, 0..1);
        }
    }

    /// Records what is drawn over the whole current pose once per image: ghosts, the grid,
    /// the overlay lines and the skeleton.
    fn encode_overlays(
        &self,
        pass: &mut wgpu::RenderPass,
        gpu: Option<&RigGpu>,
        view: &ViewOptions,
        path: SkinningPath,
    ) {
        // Over the whole current pose, once per image (ghosts have no proxy to refine).
        if let Some(gpu) = gpu {
            self.encode_ghosts(pass, gpu, view, path);
        }
        if let (true, Some((buffer, count))) = (view.grid, &self.grid) {
            pass.set_pipeline(&self.lines);
            pass.set_vertex_buffer(0, buffer.slice(..));
            pass.draw(0..*count, 0..1);
        }
        if let Some(gpu) = gpu.filter(|g| !g.overlay_vertices.is_empty()) {
            // On top: markers usually sit inside the mesh (a socket in a hand).
            pass.set_pipeline(&self.lines_on_top);
            pass.set_vertex_buffer(0, gpu.overlay.slice(..));
            pass.draw(0..gpu.overlay_vertices.len() as u32, 0..1);
        }
        if let (true, Some(gpu)) = (view.skeleton.show, gpu)
            && !gpu.skeleton_vertices.is_empty()
        {
            pass.set_pipeline(if view.skeleton.depth_test {
                &self.lines
            } else {
                &self.lines_on_top
            });
            pass.set_vertex_buffer(0, gpu.skeleton.slice(..));
            pass.draw(0..gpu.skeleton_vertices.len() as u32, 0..1);
        }
    }
}

/// Begins the scene's render pass for `portion`: the first portion clears, and the samples and
/// depth are kept for the next until the last, which resolves the samples of a multisampled
/// target into `output`.
fn begin_scene_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    targets: &RenderTargets,
    output: &wgpu::TextureView,
    portion: &ScenePortion,
    background: wgpu::Color,
    timestamps: Option<wgpu::RenderPassTimestampWrites>,
) -> wgpu::RenderPass<'e> {
    fn load<V>(first: bool, clear: V) -> wgpu::LoadOp<V> {
        if first {
            wgpu::LoadOp::Clear(clear)
        } else {
            wgpu::LoadOp::Load
        }
    }
    // The samples of a multisampled target are resolved into the output at the end of
    // the image; until then they, and the depth, are kept.
    let keep = |kept: bool| {
        if kept {
            wgpu::StoreOp::Store
        } else {
            wgpu::StoreOp::Discard
        }
    };
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("scene"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: targets.color.as_ref().unwrap_or(output),
            depth_slice: None,
            resolve_target: targets.color.as_ref().filter(|_| portion.last).map(|_| output),
            ops: wgpu::Operations {
                load: load(portion.first, background),
                store: keep(targets.color.is_none() || !portion.last),
            },
        })],
        depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
            view: &targets.depth,
            depth_ops: Some(wgpu::Operations {
                load: load(portion.first, 1.0),
                store: keep(!portion.last),
            }),
            stencil_ops: None,
        }),
        timestamp_writes: timestamps,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}
