//! Drawing tessellated egui output over a color target (the window's frame or an offscreen
//! texture): the one place that records egui's render pass.

/// Uploads egui's buffers and records a pass that draws `paint_jobs` over `view` (kept, not
/// cleared). Returns the command buffers egui's callbacks want submitted before `encoder`'s.
pub fn encode_egui(
    renderer: &mut egui_wgpu::Renderer,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    encoder: &mut wgpu::CommandEncoder,
    view: &wgpu::TextureView,
    paint_jobs: &[egui::ClippedPrimitive],
    screen: &egui_wgpu::ScreenDescriptor,
) -> Vec<wgpu::CommandBuffer> {
    let commands = renderer.update_buffers(device, queue, encoder, paint_jobs, screen);
    let mut pass = encoder
        .begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("egui"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Load,
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        })
        .forget_lifetime();
    renderer.render(&mut pass, paint_jobs, screen);
    commands
}
