//! Onion-skin ghosts on the GPU: each ghost slot has palette buffers of its own (GPU path) or
//! skinned vertex buffers of its own (CPU path) and a draw uniform per primitive, and draws the
//! rig's primitives again, blended in its tint, after the opaque draws of the current pose.

use super::*;
use crate::anim::ghosts::ghost_tint;
use crate::render::material::DRAW_GHOST;

/// One ghost: the pose at a moment near the current time, evaluated (and on the CPU path
/// skinned) like the current pose, in buffers kept from frame to frame.
pub struct GhostPose {
    /// Signed distance from the current time, in ghosts (negative: before it).
    pub offset: i32,
    /// The moment shown, in seconds into the clip.
    pub time: f32,
    pub pose: PoseBuffers,
    /// Current when the CPU path draws.
    pub skinned: SkinnedPose,
}

impl GhostPose {
    pub fn new(rig: &Rig) -> GhostPose {
        GhostPose {
            offset: 0,
            time: 0.0,
            pose: PoseBuffers::new(rig),
            skinned: SkinnedPose::new(rig),
        }
    }
}

/// The GPU side of one ghost slot.
pub(super) struct GhostGpu {
    /// Per mesh instance, as [`RigGpu::palettes`].
    palettes: Vec<Option<PaletteBuffers>>,
    /// Per draw of the rig, in the same order.
    draws: Vec<GhostDraw>,
    /// The [`SkinnedPose::generation`] the CPU-path vertex buffers hold.
    cpu_vertices: Option<u64>,
}

struct GhostDraw {
    uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    /// The ghost's morph of the draw's targets and its bind group (a draw with morph targets
    /// only).
    morph: Option<(MorphGpu, wgpu::BindGroup)>,
    /// Made the first time the CPU path draws this slot.
    cpu_skinned: Option<(wgpu::Buffer, wgpu::Buffer)>,
}

impl SceneRenderer {
    /// Makes the ghost slots the frame's options need (kept once made), and on the CPU path
    /// their vertex buffers.
    pub fn ensure_ghosts(
        &self,
        device: &wgpu::Device,
        gpu: &mut RigGpu,
        rig: &Rig,
        view: &ViewOptions,
        path: SkinningPath,
    ) {
        let wanted = if view.ghosts.skeleton {
            0
        } else {
            2 * view.ghosts.per_side() as usize
        };
        while gpu.ghosts.len() < wanted {
            let palettes = self.palette_buffers(device, rig);
            let draws = gpu
                .draws
                .iter()
                .map(|draw| {
                    let uniform = device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("ghost draw"),
                        size: std::mem::size_of::<DrawUniform>() as u64,
                        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    });
                    let bind_group = self.draw_bind_group(device, &uniform, &draw.maps);
                    let morph = draw.morph.morph.as_ref().map(|shared| {
                        let own = shared.sharing(device, &self.morph_pass);
                        let group = crate::render::gpu_data::storage_bind_group(
                            device,
                            &self.morph_layout,
                            "ghost morph targets",
                            &[own.deltas(), &draw.morph.dqs_blend],
                        );
                        (own, group)
                    });
                    GhostDraw {
                        uniform,
                        bind_group,
                        morph,
                        cpu_skinned: None,
                    }
                })
                .collect();
            gpu.ghosts.push(GhostGpu {
                palettes,
                draws,
                cpu_vertices: None,
            });
        }
        if path != SkinningPath::Cpu {
            return;
        }
        for ghost in gpu.ghosts.iter_mut().take(wanted) {
            for (draw, ghost_draw) in gpu.draws.iter().zip(&mut ghost.draws) {
                if !draw.cpu_skinnable || ghost_draw.cpu_skinned.is_some() {
                    continue;
                }
                let primitive = &rig.meshes[rig.instances[draw.instance].mesh].primitives[draw.primitive];
                let buffer = |label, contents: &[Vec3]| {
                    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some(label),
                        contents: bytemuck::cast_slice(contents),
                        usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                    })
                };
                ghost_draw.cpu_skinned = Some((
                    buffer("ghost positions", &primitive.positions),
                    buffer("ghost normals", &primitive.normals),
                ));
                ghost.cpu_vertices = None;
            }
        }
    }

    /// Palette buffers for each mesh instance of `rig` (`None` for unskinned instances).
    pub(super) fn palette_buffers(&self, device: &wgpu::Device, rig: &Rig) -> Vec<Option<PaletteBuffers>> {
        let joints = |skin: usize| rig.skins[skin].joints.len();
        (rig.instances.iter())
            .map(|instance| (instance.skin).map(|skin| PaletteBuffers::new(device, &self.palette_layout, joints(skin))))
            .collect()
    }

    /// The draw bind group of a uniform buffer and a material's textures and surface stream.
    pub(super) fn draw_bind_group(
        &self,
        device: &wgpu::Device,
        uniform: &wgpu::Buffer,
        maps: &DrawMaps,
    ) -> wgpu::BindGroup {
        let texture = |binding, view| wgpu::BindGroupEntry {
            binding,
            resource: wgpu::BindingResource::TextureView(view),
        };
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("draw"),
            layout: &self.draw_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                },
                texture(1, &maps.base_color),
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Sampler(&self.sampler),
                },
                texture(3, &maps.metallic_roughness),
                texture(4, &maps.normal),
                texture(5, &maps.occlusion),
                texture(6, &maps.emissive),
                wgpu::BindGroupEntry {
                    binding: 7,
                    resource: maps.surface.as_entire_binding(),
                },
                texture(8, &maps.specular),
                texture(9, &maps.specular_color),
            ],
        })
    }

    /// Writes the ghosts' palettes (or CPU-skinned vertices) and draw uniforms, after the
    /// current pose's draws are written; hashes what it wrote into `signature`.
    pub(super) fn write_ghosts(
        &self,
        queue: &wgpu::Queue,
        gpu: &mut RigGpu,
        state: &FrameState,
        signature: &mut std::hash::DefaultHasher,
    ) {
        let per_side = state.view.ghosts.per_side();
        gpu.ghosts_shown = if state.view.ghosts.skeleton || self.unskinned {
            0
        } else {
            state.ghosts.len().min(gpu.ghosts.len())
        };
        let gpu_skinning = state.path == SkinningPath::Gpu;
        for (ghost, slot) in state.ghosts.iter().zip(&mut gpu.ghosts).take(gpu.ghosts_shown) {
            signature.write_i32(ghost.offset);
            for (i, buffers) in slot.palettes.iter().enumerate() {
                let Some(buffers) = buffers else { continue };
                let matrices: &[u8] = bytemuck::cast_slice(&ghost.pose.palettes[i]);
                queue.write_buffer(&buffers.matrices, 0, matrices);
                signature.write(matrices);
                if gpu_skinning && state.method.needs_dual_quats() {
                    let dual_quats = bytemuck::cast_slice::<DualQuat, u8>(&ghost.pose.dual_quats[i]);
                    queue.write_buffer(&buffers.dual_quats, 0, dual_quats);
                }
            }
            let upload_vertices = !gpu_skinning && slot.cpu_vertices != Some(ghost.skinned.generation());
            for (draw, ghost_draw) in gpu.draws.iter().zip(&mut slot.draws) {
                let skins_here = gpu_skinning && slot.palettes[draw.instance].is_some();
                let weights = &ghost.pose.morph_weights[draw.instance];
                let morph_here = match &mut ghost_draw.morph {
                    Some((morph, _)) if gpu_skinning || !draw.cpu_skinnable => {
                        signature.write(bytemuck::cast_slice(&weights[..draw.morph.targets.min(weights.len())]));
                        morph.write_weights(queue, weights);
                        morph.shader_stride()
                    }
                    Some((morph, _)) => {
                        morph.clear();
                        0
                    }
                    None => 0,
                };
                let uniform = DrawUniform {
                    model: ghost.pose.instance_world(state.rig, draw.instance),
                    base_color: draw.material.base_color,
                    material: material_uniform(&draw.material),
                    skin: [u32::from(skins_here), NO_JOINT, morph_here, draw.flags | DRAW_GHOST],
                    bind: Vec4::new(draw.bind_scale, 0.0, 0.0, 0.0),
                    ghost: ghost_tint(ghost.offset, per_side),
                    shading: draw.shading_fields(slot.palettes[draw.instance].is_some() && !skins_here),
                };
                queue.write_buffer(&ghost_draw.uniform, 0, bytemuck::bytes_of(&uniform));
                signature.write(bytemuck::bytes_of(&uniform));
                if let (true, Some((positions, normals))) = (upload_vertices, &ghost_draw.cpu_skinned) {
                    let out = &ghost.skinned.meshes[draw.instance][draw.primitive];
                    queue.write_buffer(positions, 0, bytemuck::cast_slice(&out.positions));
                    queue.write_buffer(normals, 0, bytemuck::cast_slice(&out.normals));
                }
            }
            if upload_vertices {
                slot.cpu_vertices = Some(ghost.skinned.generation());
            }
        }
    }

    /// Records the ghosts written by [`SceneRenderer::write_ghosts`] into `pass`: every
    /// primitive of every ghost, blended, farthest ghost first (see [`MeshPass::ghost`]).
    pub(super) fn encode_ghosts(
        &self,
        pass: &mut wgpu::RenderPass,
        gpu: &RigGpu,
        view: &ViewOptions,
        path: SkinningPath,
    ) {
        if gpu.ghosts_shown == 0 {
            return;
        }
        for slot in &gpu.ghosts[..gpu.ghosts_shown] {
            for (draw, ghost_draw) in gpu.draws.iter().zip(&slot.draws) {
                // Built by `prepare_pipelines`.
                let ghost_pass = MeshPass::ghost(draw.pipeline, view.mode);
                let Some(pipeline) = (self.mesh_pipelines).get(ghost_pass, view.mode, gpu.skinning) else {
                    debug_assert!(false, "the ghosts' pipeline was not prepared");
                    continue;
                };
                pass.set_pipeline(pipeline);
                let skinned = ghost_draw.cpu_skinned.as_ref().filter(|_| path == SkinningPath::Cpu);
                let palette = slot.palettes[draw.instance].as_ref();
                let morph = ghost_draw
                    .morph
                    .as_ref()
                    .map_or(&draw.morph.bind_group, |(_, group)| group);
                self.bind_draw(pass, draw, palette, (&ghost_draw.bind_group, morph), skinned);
                pass.set_index_buffer(draw.indices.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(0..draw.index_count, 0, 0..1);
            }
        }
    }
}

impl RigGpu {
    /// The morphs of the draws and of the ghosts shown (those with targets).
    pub(super) fn morphs(&self) -> impl Iterator<Item = &MorphGpu> + Clone {
        let ghosts = self.ghosts[..self.ghosts_shown].iter();
        let ghosts = ghosts.flat_map(|g| g.draws.iter().filter_map(|d| d.morph.as_ref().map(|(m, _)| m)));
        self.draws.iter().filter_map(|d| d.morph.morph.as_ref()).chain(ghosts)
    }

    /// Adds to `passes` those the ghosts written for this frame draw with in `view`.
    pub(super) fn ghost_passes(&self, view: &ViewOptions, passes: &mut PassSet) {
        for draw in self.draws.iter().filter(|_| self.ghosts_shown > 0) {
            passes.insert(MeshPass::ghost(draw.pipeline, view.mode));
        }
    }
}

/// Appends to `out` the ghosts of `state` drawn as skeletons (of `bones`), each in its tint,
/// when the options draw them so.
pub(super) fn ghost_skeleton_lines(state: &FrameState, bones: &[bool], out: &mut Vec<LineVertex>) {
    let options = &state.view.ghosts;
    if !options.skeleton {
        return;
    }
    for ghost in state.ghosts {
        let color = ghost_tint(ghost.offset, options.per_side()).to_array();
        bone_lines(state.rig, bones, &ghost.pose.worlds, color, state.marker_size, out);
    }
}

impl SceneRenderer {
    /// Binds what `draw` reads: `palette` (the empty one for an unskinned draw), the draw bind
    /// group `uniform` and the morph group `morph` (the draw's own or a ghost's) and its vertex streams,
    /// with `skinned` (CPU-skinned positions and normals) in place of the bind-pose ones when
    /// given.
    pub(super) fn bind_draw(
        &self,
        pass: &mut wgpu::RenderPass,
        draw: &GpuDraw,
        palette: Option<&PaletteBuffers>,
        (uniform, morph): (&wgpu::BindGroup, &wgpu::BindGroup),
        skinned: Option<&(wgpu::Buffer, wgpu::Buffer)>,
    ) {
        pass.set_bind_group(1, palette.map_or(&self.empty_palette, |p| &p.bind_group), &[]);
        pass.set_bind_group(2, uniform, &[]);
        pass.set_bind_group(3, morph, &[]);
        let (positions, normals) = skinned.map_or((&draw.positions, &draw.normals), |(p, n)| (p, n));
        pass.set_vertex_buffer(0, positions.slice(..));
        pass.set_vertex_buffer(1, normals.slice(..));
        pass.set_vertex_buffer(2, draw.uvs.slice(..));
        pass.set_vertex_buffer(3, draw.influences.slice(..));
        pass.set_vertex_buffer(4, draw.colors.slice(..));
        pass.set_vertex_buffer(5, draw.positions.slice(..));
        pass.set_vertex_buffer(6, draw.symmetry.slice(..));
        pass.set_vertex_buffer(7, draw.normals.slice(..));
    }
}
