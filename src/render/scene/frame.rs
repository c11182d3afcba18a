//! Writing one frame: the camera, palettes (or CPU-skinned vertices), each draw's settings and
//! morph weights, and the overlays, with the signature of what changes pixels.

use super::{
    DrawUniform, FrameState, FrameUniform, FrameUpload, LIGHT_DIRECTION, NO_JOINT, OVERLAY_CAPACITY, RigGpu,
    SceneRenderer, upload,
};
use crate::render::material::{
    DRAW_RIGID, MeshPipeline, animated_material, draw_flags, material_uniform, mesh_pipeline, winding,
};
use crate::render::skeleton::{BIND_COLOR, bone_lines, overlay_lines, skeleton_lines, spring_lines};
use crate::render::views::ViewMode;
use crate::skin::{DualQuat, SkinningPath};
use glam::Vec4;
use std::hash::Hasher;

/// The per-frame steps of [`SceneRenderer::write_frame`] that need only the rig's buffers.
impl RigGpu {
    /// Writes the per-vertex values of the symmetry, weight-difference or engine distance view
    /// once they are computed and not yet on the GPU.
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
        if let (ViewMode::EngineDistance, Some((key, distances))) = (mode, state.engine_distances)
            && self.symmetry_written != Some((mode, key))
        {
            for draw in &self.draws {
                if let Some(values) = distances.of(draw.instance, draw.primitive) {
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
    /// ghosts' skeletons, the spring bones and their colliders (with the skeleton) and the bind
    /// pose's skeleton, up to [`OVERLAY_CAPACITY`] vertices.
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
        super::ghosts::ghost_skeleton_lines(state, &self.bones, &mut self.overlay_vertices);
        if state.view.skeleton.show
            && let Some(springs) = &state.pose.springs
        {
            spring_lines(springs, &state.pose.worlds, &mut self.overlay_vertices);
        }
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

impl SceneRenderer {
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
            let shading = draw.shading_fields(cpu_skinned && draw.cpu_surface.is_none());
            let instance = &state.rig.instances[draw.instance];
            let properties = &state.pose.properties;
            draw.hidden = properties.is_hidden(instance.node);
            signature.write_u8(u8::from(draw.hidden));
            let material_index = state.rig.meshes[instance.mesh].primitives[draw.primitive].material;
            let (base_color, material, shading) = match material_index.and_then(|m| properties.material(m)) {
                Some(overrides) => animated_material(&draw.material, overrides, shading),
                None => (draw.material.base_color, material_uniform(&draw.material), shading),
            };
            let uniform = DrawUniform {
                model,
                base_color,
                material,
                skin: [u32::from(skins_here(draw.instance)), selected, morph_here, draw.flags],
                bind: Vec4::new(draw.bind_scale, 0.0, 0.0, 0.0),
                ghost: Vec4::ZERO,
                shading,
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
}
