//! The 3D view: pipelines built once, a rig's buffers built on load, palettes written per frame.

use crate::anim::{Bounds, PoseEvaluator};
use crate::render::camera::OrbitCamera;
use crate::rig::{Influences, Primitive, Rig, Texture};
use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3, Vec4};
use wgpu::util::DeviceExt;

pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// MSAA sample count of the 3D view.
pub const SAMPLES: u32 = 4;
/// Clear color of the 3D view (linear).
pub const BACKGROUND: wgpu::Color = wgpu::Color {
    r: 0.018,
    g: 0.021,
    b: 0.028,
    a: 1.0,
};
/// Light travelling down and away from a camera in the default position.
const LIGHT_DIRECTION: Vec3 = Vec3::new(-0.4, -1.0, -0.55);

/// WGSL sources; the skinning function is prepended to every shader that skins.
pub const SKINNING_WGSL: &str = include_str!("../../shaders/skinning.wgsl");
const MESH_WGSL: &str = include_str!("../../shaders/mesh.wgsl");
const LINES_WGSL: &str = include_str!("../../shaders/lines.wgsl");

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct FrameUniform {
    view_proj: Mat4,
    camera_position: Vec4,
    light_direction: Vec4,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct DrawUniform {
    model: Mat4,
    base_color: Vec4,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct MeshVertex {
    position: [f32; 3],
    normal: [f32; 3],
    uv: [f32; 2],
}

/// Up to eight joint influences of one vertex, as the shaders read them (vertex attributes and
/// the compute pass's storage buffer share this layout).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Debug, PartialEq)]
pub struct GpuInfluences {
    pub joints0: [u32; 4],
    pub joints1: [u32; 4],
    pub weights0: [f32; 4],
    pub weights1: [f32; 4],
}

impl GpuInfluences {
    /// Per-vertex influences of a primitive; all-zero weights (identity) when it has none.
    pub fn of_primitive(primitive: &Primitive) -> Vec<GpuInfluences> {
        let n = primitive.vertex_count();
        match &primitive.influences {
            None => vec![GpuInfluences::zeroed(); n],
            Some(influences) => (0..n).map(|v| Self::of_vertex(influences, v)).collect(),
        }
    }

    fn of_vertex(influences: &Influences, v: usize) -> GpuInfluences {
        let base = v * influences.sets;
        let set = |k: usize| {
            if k < influences.sets {
                (influences.joints[base + k].map(u32::from), influences.weights[base + k])
            } else {
                ([0; 4], [0.0; 4])
            }
        };
        let ((joints0, weights0), (joints1, weights1)) = (set(0), set(1));
        GpuInfluences {
            joints0,
            joints1,
            weights0,
            weights1,
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct LineVertex {
    position: [f32; 3],
    color: [f32; 4],
}

/// A rig's GPU resources.
pub struct RigGpu {
    draws: Vec<GpuDraw>,
    /// Palette buffer and bind group per mesh instance (`None` for unskinned instances).
    palettes: Vec<Option<(wgpu::Buffer, wgpu::BindGroup)>>,
}

struct GpuDraw {
    instance: usize,
    vertices: wgpu::Buffer,
    influences: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    base_color: Vec4,
    double_sided: bool,
}

/// Color and depth attachments of one size.
pub struct RenderTargets {
    pub width: u32,
    pub height: u32,
    color: wgpu::TextureView,
    depth: wgpu::TextureView,
}

impl RenderTargets {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat, width: u32, height: u32) -> Self {
        let make = |format, label| {
            device
                .create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size: wgpu::Extent3d {
                        width: width.max(1),
                        height: height.max(1),
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: SAMPLES,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                    view_formats: &[],
                })
                .create_view(&wgpu::TextureViewDescriptor::default())
        };
        RenderTargets {
            width,
            height,
            color: make(format, "msaa color"),
            depth: make(DEPTH_FORMAT, "depth"),
        }
    }

    pub fn aspect(&self) -> f32 {
        self.width as f32 / self.height.max(1) as f32
    }
}

/// A rectangle of a render target, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelRect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl PixelRect {
    /// The part inside a `width`×`height` target, or `None` when nothing is left.
    pub fn clamped(self, width: u32, height: u32) -> Option<PixelRect> {
        let x = self.x.min(width);
        let y = self.y.min(height);
        let w = self.width.min(width - x);
        let h = self.height.min(height - y);
        (w > 0 && h > 0).then_some(PixelRect {
            x,
            y,
            width: w,
            height: h,
        })
    }
}

/// Options of the 3D view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewOptions {
    pub grid: bool,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions { grid: true }
    }
}

/// Pipelines and shared resources of the 3D view, for one output color format.
pub struct SceneRenderer {
    frame_buffer: wgpu::Buffer,
    frame_bind_group: wgpu::BindGroup,
    palette_layout: wgpu::BindGroupLayout,
    draw_layout: wgpu::BindGroupLayout,
    mesh_culled: wgpu::RenderPipeline,
    mesh_double_sided: wgpu::RenderPipeline,
    lines: wgpu::RenderPipeline,
    sampler: wgpu::Sampler,
    white: wgpu::TextureView,
    identity_palette: wgpu::BindGroup,
    grid: Option<(wgpu::Buffer, u32)>,
}

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
        let palette_layout = palette_bind_group_layout(device, wgpu::ShaderStages::VERTEX);
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
            bind_group_layouts: &[Some(&frame_layout), Some(&palette_layout), Some(&draw_layout)],
            immediate_size: 0,
        });
        let mesh_attributes = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Float32x2];
        let influence_attributes =
            wgpu::vertex_attr_array![3 => Uint32x4, 5 => Uint32x4, 4 => Float32x4, 6 => Float32x4];
        let mesh_buffers = [
            Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<MeshVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &mesh_attributes,
            }),
            Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<GpuInfluences>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &influence_attributes,
            }),
        ];
        let depth_state = |write| wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(write),
            depth_compare: Some(wgpu::CompareFunction::LessEqual),
            stencil: wgpu::StencilState::default(),
            bias: wgpu::DepthBiasState::default(),
        };
        let multisample = wgpu::MultisampleState {
            count: SAMPLES,
            mask: !0,
            alpha_to_coverage_enabled: false,
        };
        let mesh_pipeline = |cull_mode, label| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&mesh_layout),
                vertex: wgpu::VertexState {
                    module: &mesh_module,
                    entry_point: Some("vs_main"),
                    compilation_options: Default::default(),
                    buffers: &mesh_buffers,
                },
                primitive: wgpu::PrimitiveState {
                    topology: wgpu::PrimitiveTopology::TriangleList,
                    front_face: wgpu::FrontFace::Ccw,
                    cull_mode,
                    ..Default::default()
                },
                depth_stencil: Some(depth_state(true)),
                multisample,
                fragment: Some(wgpu::FragmentState {
                    module: &mesh_module,
                    entry_point: Some("fs_main"),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format,
                        blend: None,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let mesh_culled = mesh_pipeline(Some(wgpu::Face::Back), "mesh (culled)");
        let mesh_double_sided = mesh_pipeline(None, "mesh (double-sided)");

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
        let lines = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("lines"),
            layout: Some(&lines_layout),
            vertex: wgpu::VertexState {
                module: &lines_module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<LineVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &line_attributes,
                })],
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::LineList,
                ..Default::default()
            },
            depth_stencil: Some(depth_state(false)),
            multisample,
            fragment: Some(wgpu::FragmentState {
                module: &lines_module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format,
                    blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });

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
        let identity = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("identity palette"),
            contents: bytemuck::bytes_of(&Mat4::IDENTITY),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let identity_palette = palette_bind_group(device, &palette_layout, &identity);
        SceneRenderer {
            frame_buffer,
            frame_bind_group,
            palette_layout,
            draw_layout,
            mesh_culled,
            mesh_double_sided,
            lines,
            sampler,
            white,
            identity_palette,
            grid: None,
        }
    }

    /// Uploads a rig's meshes, materials and palette buffers.
    pub fn upload_rig(&self, device: &wgpu::Device, queue: &wgpu::Queue, rig: &Rig) -> RigGpu {
        let max_side = device.limits().max_texture_dimension_2d;
        let textures: Vec<Option<wgpu::TextureView>> = rig
            .textures
            .iter()
            .map(|t| (t.width <= max_side && t.height <= max_side).then(|| create_texture(device, queue, t)))
            .collect();
        let palettes = rig
            .instances
            .iter()
            .map(|instance| {
                instance.skin.map(|skin| {
                    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("palette"),
                        size: (rig.skins[skin].joints.len() * std::mem::size_of::<Mat4>()) as u64,
                        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    });
                    let bind_group = palette_bind_group(device, &self.palette_layout, &buffer);
                    (buffer, bind_group)
                })
            })
            .collect();
        let mut draws = Vec::new();
        for (i, instance) in rig.instances.iter().enumerate() {
            for primitive in &rig.meshes[instance.mesh].primitives {
                let material = primitive
                    .material
                    .and_then(|m| rig.materials.get(m))
                    .cloned()
                    .unwrap_or_default();
                let vertices: Vec<MeshVertex> = (0..primitive.vertex_count())
                    .map(|v| MeshVertex {
                        position: primitive.positions[v].to_array(),
                        normal: primitive.normals[v].to_array(),
                        uv: primitive.uvs[v].to_array(),
                    })
                    .collect();
                let buffer = |label, contents: &[u8], usage| {
                    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some(label),
                        contents,
                        usage,
                    })
                };
                let uniform = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("draw"),
                    size: std::mem::size_of::<DrawUniform>() as u64,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let texture = material
                    .base_color_texture
                    .and_then(|t| textures.get(t).and_then(Option::as_ref))
                    .unwrap_or(&self.white);
                let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("draw"),
                    layout: &self.draw_layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: uniform.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: wgpu::BindingResource::TextureView(texture),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: wgpu::BindingResource::Sampler(&self.sampler),
                        },
                    ],
                });
                draws.push(GpuDraw {
                    instance: i,
                    vertices: buffer("vertices", bytemuck::cast_slice(&vertices), wgpu::BufferUsages::VERTEX),
                    influences: buffer(
                        "influences",
                        bytemuck::cast_slice(&GpuInfluences::of_primitive(primitive)),
                        wgpu::BufferUsages::VERTEX,
                    ),
                    indices: buffer(
                        "indices",
                        bytemuck::cast_slice(&primitive.indices),
                        wgpu::BufferUsages::INDEX,
                    ),
                    index_count: primitive.indices.len() as u32,
                    uniform,
                    bind_group,
                    base_color: material.base_color,
                    double_sided: material.double_sided,
                });
            }
        }
        RigGpu { draws, palettes }
    }

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

    /// Writes this frame's camera, palettes and model matrices.
    pub fn write_frame(
        &self,
        queue: &wgpu::Queue,
        rig: &Rig,
        gpu: &RigGpu,
        pose: &PoseEvaluator,
        camera: &OrbitCamera,
        aspect: f32,
    ) {
        let frame = FrameUniform {
            view_proj: camera.view_projection(aspect),
            camera_position: camera.eye().extend(1.0),
            light_direction: LIGHT_DIRECTION.normalize().extend(0.0),
        };
        queue.write_buffer(&self.frame_buffer, 0, bytemuck::bytes_of(&frame));
        for (palette, buffer) in pose.palettes.iter().zip(&gpu.palettes) {
            if let Some((buffer, _)) = buffer {
                queue.write_buffer(buffer, 0, bytemuck::cast_slice(palette));
            }
        }
        for draw in &gpu.draws {
            let uniform = DrawUniform {
                model: pose.instance_world(rig, draw.instance),
                base_color: draw.base_color,
            };
            queue.write_buffer(&draw.uniform, 0, bytemuck::bytes_of(&uniform));
        }
    }

    /// Records the 3D view into `output` (a single-sample view of the targets' format), drawn
    /// inside `viewport` (x, y, width, height in pixels) or over the whole target.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        targets: &RenderTargets,
        output: &wgpu::TextureView,
        gpu: Option<&RigGpu>,
        options: &ViewOptions,
        viewport: Option<PixelRect>,
    ) {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("scene"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &targets.color,
                depth_slice: None,
                resolve_target: Some(output),
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(BACKGROUND),
                    store: wgpu::StoreOp::Discard,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &targets.depth,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
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
            for draw in &gpu.draws {
                pass.set_pipeline(if draw.double_sided {
                    &self.mesh_double_sided
                } else {
                    &self.mesh_culled
                });
                let palette = gpu.palettes[draw.instance]
                    .as_ref()
                    .map_or(&self.identity_palette, |(_, bg)| bg);
                pass.set_bind_group(1, palette, &[]);
                pass.set_bind_group(2, &draw.bind_group, &[]);
                pass.set_vertex_buffer(0, draw.vertices.slice(..));
                pass.set_vertex_buffer(1, draw.influences.slice(..));
                pass.set_index_buffer(draw.indices.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(0..draw.index_count, 0, 0..1);
            }
        }
        if let (true, Some((buffer, count))) = (options.grid, &self.grid) {
            pass.set_pipeline(&self.lines);
            pass.set_vertex_buffer(0, buffer.slice(..));
            pass.draw(0..*count, 0..1);
        }
    }
}

/// Layout of the palette binding (group 1, binding 0) declared in `skinning.wgsl`.
pub fn palette_bind_group_layout(device: &wgpu::Device, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("palette"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    })
}

pub fn palette_bind_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    buffer: &wgpu::Buffer,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("palette"),
        layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: buffer.as_entire_binding(),
        }],
    })
}

fn create_texture(device: &wgpu::Device, queue: &wgpu::Queue, texture: &Texture) -> wgpu::TextureView {
    let descriptor = wgpu::TextureDescriptor {
        label: Some(&texture.name),
        size: wgpu::Extent3d {
            width: texture.width,
            height: texture.height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    };
    device
        .create_texture_with_data(
            queue,
            &descriptor,
            wgpu::util::TextureDataOrder::LayerMajor,
            &texture.rgba8,
        )
        .create_view(&wgpu::TextureViewDescriptor::default())
}

/// Grid lines on the ground plane (y = 0) with a spacing that suits the rig's size, and the
/// three world axes (X red, Y green, Z blue) from the origin.
fn grid_lines(bounds: &Bounds) -> Vec<LineVertex> {
    let size = if bounds.is_empty() {
        2.0
    } else {
        bounds.size().max(1e-3)
    };
    let step = 10f32.powf((size / 4.0).log10().floor());
    let half_lines = 10;
    let extent = step * half_lines as f32;
    let centre = if bounds.is_empty() {
        Vec3::ZERO
    } else {
        (bounds.center() / step).round() * step
    };
    let minor = [0.5, 0.5, 0.55, 0.35];
    let mut lines = Vec::new();
    let mut line = |a: Vec3, b: Vec3, color: [f32; 4]| {
        lines.push(LineVertex {
            position: a.to_array(),
            color,
        });
        lines.push(LineVertex {
            position: b.to_array(),
            color,
        });
    };
    for k in -half_lines..=half_lines {
        let offset = k as f32 * step;
        let (x, z) = (centre.x + offset, centre.z + offset);
        line(
            Vec3::new(x, 0.0, centre.z - extent),
            Vec3::new(x, 0.0, centre.z + extent),
            minor,
        );
        line(
            Vec3::new(centre.x - extent, 0.0, z),
            Vec3::new(centre.x + extent, 0.0, z),
            minor,
        );
    }
    let axis = step * 2.0;
    line(Vec3::ZERO, Vec3::X * axis, [0.95, 0.25, 0.2, 1.0]);
    line(Vec3::ZERO, Vec3::Y * axis, [0.3, 0.9, 0.3, 1.0]);
    line(Vec3::ZERO, Vec3::Z * axis, [0.25, 0.45, 1.0, 1.0]);
    lines
}
