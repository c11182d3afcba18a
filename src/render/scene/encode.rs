//! Recording the 3D view: the scene pass in portions, the meshes in their pipelines' order and
//! the overlays over them.

use super::{BACKGROUND, RigGpu, SceneRenderer};
use crate::render::detail::ScenePortion;
use crate::render::material::MeshPipeline;
use crate::render::morph::MorphGpu;
use crate::render::pipelines::MeshPass;
use crate::render::targets::{PixelRect, RenderTargets};
use crate::render::views::ViewOptions;
use crate::skin::SkinningPath;

impl SceneRenderer {
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
            if from >= to || draw.hidden {
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
