//! The 3D view's pipelines and shared resources, built once per output color format.

use super::gpu_data::{GpuInfluences, PaletteBuffers, create_texture, storage_pair_layout};
use super::scene::*;
use crate::render::skeleton::LineVertex;
use crate::rig::Texture;

impl SceneRenderer {
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, format: wgpu::TextureFormat) -> Self {
        let uniform_entry = |binding, visibility| wgpu::BindGroupLayoutEntry {
            binding,
            visibility,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let frame_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("frame"),
            entries: &[uniform_entry(0, wgpu::ShaderStages::VERTEX_FRAGMENT)],
        });
        let palette_layout = storage_pair_layout(device, "palette", wgpu::ShaderStages::VERTEX);
        let morph_layout = storage_pair_layout(device, "morph targets", wgpu::ShaderStages::VERTEX);
        let draw_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("draw"),
            entries: &[
                uniform_entry(0, wgpu::ShaderStages::VERTEX_FRAGMENT),
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let frame_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("frame"),
            size: std::mem::size_of::<FrameUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let frame_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("frame"),
            layout: &frame_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: frame_buffer.as_entire_binding(),
            }],
        });

        let mesh_module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("mesh.wgsl"),
            source: wgpu::ShaderSource::Wgsl(format!("{SKINNING_WGSL}\n{MESH_WGSL}").into()),
        });
        let mesh_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("mesh"),
            bind_group_layouts: &[
                Some(&frame_layout),
                Some(&palette_layout),
                Some(&draw_layout),
                Some(&morph_layout),
            ],
            immediate_size: 0,
        });
        let position_attributes = wgpu::vertex_attr_array![0 => Float32x3];
        let normal_attributes = wgpu::vertex_attr_array![1 => Float32x3];
        let uv_attributes = wgpu::vertex_attr_array![2 => Float32x2];
        let color_attributes = wgpu::vertex_attr_array![7 => Float32x4];
        let influence_attributes =
            wgpu::vertex_attr_array![3 => Uint32x4, 5 => Uint32x4, 4 => Float32x4, 6 => Float32x4];
        let layout = |stride: usize, attributes| {
            Some(wgpu::VertexBufferLayout {
                array_stride: stride as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes,
            })
        };
        let mesh_buffers = [
            layout(12, &position_attributes[..]),
            layout(12, &normal_attributes[..]),
            layout(8, &uv_attributes[..]),
            layout(std::mem::size_of::<GpuInfluences>(), &influence_attributes[..]),
            layout(16, &color_attributes[..]),
        ];
        let depth_state = |write, compare| wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(write),
            depth_compare: Some(compare),
            stencil: wgpu::StencilState::default(),
            bias: wgpu::DepthBiasState::default(),
        };
        let multisample = wgpu::MultisampleState {
            count: SAMPLES,
            mask: !0,
            alpha_to_coverage_enabled: false,
        };
        let target = |blend| {
            [Some(wgpu::ColorTargetState {
                format,
                blend,
                write_mask: wgpu::ColorWrites::ALL,
            })]
        };
        let opaque = target(None);
        let blended = target(Some(wgpu::BlendState::ALPHA_BLENDING));
        // Alpha-blended materials keep the target opaque (screenshots have no holes).
        let covering = target(Some(wgpu::BlendState {
            color: wgpu::BlendState::ALPHA_BLENDING.color,
            alpha: wgpu::BlendComponent::OVER,
        }));
        let mesh_pipeline =
            |label, topology, (front_face, cull_mode), (vertex_entry, fragment_entry), targets: &[_], write| {
                device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                    label: Some(label),
                    layout: Some(&mesh_layout),
                    vertex: wgpu::VertexState {
                        module: &mesh_module,
                        entry_point: Some(vertex_entry),
                        compilation_options: Default::default(),
                        buffers: &mesh_buffers,
                    },
                    primitive: wgpu::PrimitiveState {
                        topology,
                        front_face,
                        cull_mode,
                        ..Default::default()
                    },
                    depth_stencil: Some(depth_state(write, wgpu::CompareFunction::LessEqual)),
                    multisample,
                    fragment: Some(wgpu::FragmentState {
                        module: &mesh_module,
                        entry_point: Some(fragment_entry),
                        compilation_options: Default::default(),
                        targets,
                    }),
                    multiview_mask: None,
                    cache: None,
                })
            };
        let triangles = wgpu::PrimitiveTopology::TriangleList;
        let (ccw, cw, back) = (wgpu::FrontFace::Ccw, wgpu::FrontFace::Cw, Some(wgpu::Face::Back));
        let shaded = ("vs_main", "fs_main");
        let mesh_culled = mesh_pipeline("mesh (culled)", triangles, (ccw, back), shaded, &opaque, true);
        let mesh_culled_mirrored =
            mesh_pipeline("mesh (culled, mirrored)", triangles, (cw, back), shaded, &opaque, true);
        let mesh_double_sided = mesh_pipeline("mesh (double-sided)", triangles, (ccw, None), shaded, &opaque, true);
        let mesh_blended = mesh_pipeline(
            "mesh (blended)",
            triangles,
            (ccw, None),
            ("vs_main", "fs_blend"),
            &covering,
            false,
        );
        let wireframe = mesh_pipeline(
            "wireframe",
            wgpu::PrimitiveTopology::LineList,
            (ccw, None),
            ("vs_wire", "fs_wire"),
            &opaque,
            true,
        );

        let lines_module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("lines.wgsl"),
            source: wgpu::ShaderSource::Wgsl(LINES_WGSL.into()),
        });
        let lines_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("lines"),
            bind_group_layouts: &[Some(&frame_layout)],
            immediate_size: 0,
        });
        let line_attributes = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x4];
        let line_buffers = [layout(std::mem::size_of::<LineVertex>(), &line_attributes[..])];
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
                cache: None,
            })
        };
        let lines = line_pipeline("lines", wgpu::CompareFunction::LessEqual);
        let lines_on_top = line_pipeline("lines on top", wgpu::CompareFunction::Always);

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
        SceneRenderer {
            frame_buffer,
            frame_bind_group,
            palette_layout,
            morph_layout,
            draw_layout,
            mesh_culled,
            mesh_culled_mirrored,
            mesh_double_sided,
            mesh_blended,
            wireframe,
            lines,
            lines_on_top,
            sampler,
            white,
            empty_palette,
            grid: None,
            unskinned: false,
        }
    }
}
