//! The scene kept as images between frames, for heavy rigs (see `render::detail`): the one
//! on screen, and the one the whole scene is drawn into portion by portion. Each frame copies
//! the shown one onto the window before the UI is drawn over it.

pub(crate) const BLIT_WGSL: &str = include_str!("../../shaders/blit.wgsl");

struct Image {
    view: wgpu::TextureView,
    bind_group: wgpu::BindGroup,
}

/// Two images of the 3D view's size and format, and the pass that shows one.
pub struct SceneImages {
    format: wgpu::TextureFormat,
    size: (u32, u32),
    shown: Image,
    finishing: Image,
    pipeline: wgpu::RenderPipeline,
}

impl SceneImages {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat, width: u32, height: u32) -> SceneImages {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("scene image"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable: false },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            }],
        });
        let image = |label| {
            let view = device
                .create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size: wgpu::Extent3d {
                        width: width.max(1),
                        height: height.max(1),
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
                    view_formats: &[],
                })
                .create_view(&wgpu::TextureViewDescriptor::default());
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(label),
                layout: &layout,
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&view),
                }],
            });
            Image { view, bind_group }
        };
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("blit"),
            source: wgpu::ShaderSource::Wgsl(BLIT_WGSL.into()),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("blit"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("blit"),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        SceneImages {
            format,
            size: (width, height),
            shown: image("shown scene"),
            finishing: image("scene being finished"),
            pipeline,
        }
    }

    /// Whether these images fit a view of `format` and `width`×`height`.
    pub fn fits(&self, format: wgpu::TextureFormat, width: u32, height: u32) -> bool {
        self.format == format && self.size == (width, height)
    }

    /// The image on screen (where a proxy is drawn).
    pub fn shown(&self) -> &wgpu::TextureView {
        &self.shown.view
    }

    /// The image the whole scene is being drawn into.
    pub fn finishing(&self) -> &wgpu::TextureView {
        &self.finishing.view
    }

    /// The finished image becomes the one shown.
    pub fn finish(&mut self) {
        std::mem::swap(&mut self.shown, &mut self.finishing);
    }

    /// Copies the shown image onto `output` (a view of the same size and format).
    pub fn show(&self, encoder: &mut wgpu::CommandEncoder, output: &wgpu::TextureView) {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("show the kept scene"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: output,
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
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.shown.bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
}
