//! The 3D view: pipelines built once, a rig's buffers built on load, palettes (or CPU-skinned
//! vertices) written per frame.

use crate::anim::Attachment;
use crate::anim::{Bounds, PoseEvaluator};
use crate::render::camera::OrbitCamera;
use crate::render::material::{MeshPipeline, Winding, draw_flags, material_uniform, mesh_pipeline, winding};
use crate::render::skeleton::{LineVertex, VERTICES_PER_JOINT, joint_flags, overlay_lines, skeleton_lines};
use crate::render::views::ViewOptions;
use crate::rig::{Influences, Material, MorphTarget, Primitive, Rig, Texture};
use crate::skin::{DualQuat, SkinnedPose, SkinningMethod, SkinningPath};
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
pub const LIGHT_DIRECTION: Vec3 = Vec3::new(-0.4, -1.0, -0.55);

/// WGSL sources; the skinning functions are prepended to every shader that skins.
pub const SKINNING_WGSL: &str = include_str!("../../shaders/skinning.wgsl");
pub(crate) const MESH_WGSL: &str = include_str!("../../shaders/mesh.wgsl");
pub(crate) const LINES_WGSL: &str = include_str!("../../shaders/lines.wgsl");

/// Skinning method codes shared with `skinning.wgsl`.
pub const SKIN_NONE: u32 = 0;
pub const SKIN_LBS: u32 = 1;
pub const SKIN_DQS: u32 = 2;

/// "No joint selected" in the draw uniform.
const NO_JOINT: u32 = u32::MAX;

pub fn skin_code(method: SkinningMethod) -> u32 {
    match method {
        SkinningMethod::Lbs => SKIN_LBS,
        SkinningMethod::Dqs => SKIN_DQS,
    }
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct FrameUniform {
    view_proj: Mat4,
    camera_position: Vec4,
    light_direction: Vec4,
    view: [u32; 4],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct DrawUniform {
    model: Mat4,
    base_color: Vec4,
    material: Vec4,
    skin: [u32; 4],
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
    /// Per-vertex influences of a primitive; all-zero weights when it has none.
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

/// What one frame of the 3D view shows.
pub struct FrameState<'a> {
    pub rig: &'a Rig,
    pub pose: &'a PoseEvaluator,
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
    pub trail: &'a [Vec3],
}

struct PaletteBuffers {
    matrices: wgpu::Buffer,
    dual_quats: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
}

/// A rig's GPU resources.
pub struct RigGpu {
    draws: Vec<GpuDraw>,
    /// Per mesh instance (`None` for unskinned instances).
    palettes: Vec<Option<PaletteBuffers>>,
    is_joint: Vec<bool>,
    skeleton: wgpu::Buffer,
    skeleton_vertices: Vec<LineVertex>,
    /// Attachment markers and the root motion trail.
    overlay: wgpu::Buffer,
    overlay_vertices: Vec<LineVertex>,
    /// This frame's blended draws, farthest first.
    blended: Vec<usize>,
}

/// Most overlay line vertices drawn (attachments and trail); more are left out.
const OVERLAY_CAPACITY: usize = 4096;

struct GpuDraw {
    instance: usize,
    primitive: usize,
    positions: wgpu::Buffer,
    normals: wgpu::Buffer,
    /// Written every frame on the CPU path (skinned instances only).
    cpu_skinned: Option<(wgpu::Buffer, wgpu::Buffer)>,
    uvs: wgpu::Buffer,
    influences: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    edges: wgpu::Buffer,
    edge_count: u32,
    uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    /// `COLOR_0`, or white.
    colors: wgpu::Buffer,
    material: Material,
    /// This frame's pipeline and shader flags, which the draw's transforms decide.
    pipeline: MeshPipeline,
    flags: u32,
    /// Node index of each joint of the instance's skin, to find the selected joint's slot.
    joints: Vec<usize>,
    morph: MorphBuffers,
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

/// Pipelines and shared resources of the 3D view, for one output color format.
pub struct SceneRenderer {
    frame_buffer: wgpu::Buffer,
    frame_bind_group: wgpu::BindGroup,
    palette_layout: wgpu::BindGroupLayout,
    morph_layout: wgpu::BindGroupLayout,
    draw_layout: wgpu::BindGroupLayout,
    mesh_culled: wgpu::RenderPipeline,
    mesh_culled_mirrored: wgpu::RenderPipeline,
    mesh_double_sided: wgpu::RenderPipeline,
    mesh_blended: wgpu::RenderPipeline,
    wireframe: wgpu::RenderPipeline,
    lines: wgpu::RenderPipeline,
    lines_on_top: wgpu::RenderPipeline,
    sampler: wgpu::Sampler,
    white: wgpu::TextureView,
    /// Bound for unskinned instances, whose shaders never read it.
    empty_palette: wgpu::BindGroup,
    grid: Option<(wgpu::Buffer, u32)>,
    /// Draw every mesh unskinned from its bind-pose vertices and upload no palette: the static
    /// baseline `rigscope bench` compares the skinning paths against. Off in the viewer.
    pub unskinned: bool,
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
                instance
                    .skin
                    .map(|skin| PaletteBuffers::new(device, &self.palette_layout, rig.skins[skin].joints.len()))
            })
            .collect();
        let buffer = |label, contents: &[u8], usage| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let mut draws = Vec::new();
        for (i, instance) in rig.instances.iter().enumerate() {
            let joints = instance.skin.map_or_else(Vec::new, |s| rig.skins[s].joints.clone());
            for (k, primitive) in rig.meshes[instance.mesh].primitives.iter().enumerate() {
                let material = primitive
                    .material
                    .and_then(|m| rig.materials.get(m))
                    .cloned()
                    .unwrap_or_default();
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
                let vertex_usage = wgpu::BufferUsages::VERTEX;
                let positions = bytemuck::cast_slice(&primitive.positions);
                let normals = bytemuck::cast_slice(&primitive.normals);
                let cpu_skinned = (instance.skin.is_some() && primitive.influences.is_some()).then(|| {
                    let dynamic = vertex_usage | wgpu::BufferUsages::COPY_DST;
                    (
                        buffer("cpu positions", positions, dynamic),
                        buffer("cpu normals", normals, dynamic),
                    )
                });
                let edges = triangle_edges(&primitive.indices);
                draws.push(GpuDraw {
                    instance: i,
                    primitive: k,
                    positions: buffer("positions", positions, vertex_usage),
                    normals: buffer("normals", normals, vertex_usage),
                    cpu_skinned,
                    uvs: buffer("uvs", bytemuck::cast_slice(&primitive.uvs), vertex_usage),
                    influences: buffer(
                        "influences",
                        bytemuck::cast_slice(&GpuInfluences::of_primitive(primitive)),
                        vertex_usage,
                    ),
                    indices: buffer(
                        "indices",
                        bytemuck::cast_slice(&primitive.indices),
                        wgpu::BufferUsages::INDEX,
                    ),
                    index_count: primitive.indices.len() as u32,
                    edges: buffer("edges", bytemuck::cast_slice(&edges), wgpu::BufferUsages::INDEX),
                    edge_count: edges.len() as u32,
                    uniform,
                    bind_group,
                    colors: if primitive.colors.is_empty() {
                        buffer(
                            "colors",
                            bytemuck::cast_slice(&vec![Vec4::ONE; primitive.vertex_count()]),
                            vertex_usage,
                        )
                    } else {
                        buffer("colors", bytemuck::cast_slice(&primitive.colors), vertex_usage)
                    },
                    pipeline: mesh_pipeline(&material, Winding::Kept),
                    flags: draw_flags(&material, Winding::Kept),
                    material,
                    joints: joints.clone(),
                    morph: MorphBuffers::new(
                        device,
                        &self.morph_layout,
                        rig.morphs.of(instance.mesh, k),
                        primitive.vertex_count(),
                    ),
                });
            }
        }
        let is_joint = joint_flags(rig);
        let capacity = is_joint.iter().filter(|j| **j).count().max(1) * VERTICES_PER_JOINT;
        let blended = Vec::with_capacity(draws.len());
        RigGpu {
            blended,
            draws,
            palettes,
            is_joint,
            skeleton: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("skeleton"),
                size: (capacity * std::mem::size_of::<LineVertex>()) as u64,
                usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            skeleton_vertices: Vec::with_capacity(capacity),
            overlay: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("overlay"),
                size: (OVERLAY_CAPACITY * std::mem::size_of::<LineVertex>()) as u64,
                usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            overlay_vertices: Vec::with_capacity(OVERLAY_CAPACITY),
        }
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

    /// Writes this frame's camera, palettes (or CPU-skinned vertices), draw settings and
    /// skeleton overlay.
    pub fn write_frame(&self, queue: &wgpu::Queue, gpu: &mut RigGpu, state: &FrameState) -> FrameUpload {
        let mut upload = FrameUpload::default();
        let view = state.view;
        let frame = FrameUniform {
            view_proj: state.camera.view_projection(state.aspect),
            camera_position: state.camera.eye().extend(1.0),
            light_direction: LIGHT_DIRECTION.normalize().extend(0.0),
            view: [view.mode.shader_code(), view.shader_flags(), 0, 0],
        };
        queue.write_buffer(&self.frame_buffer, 0, bytemuck::bytes_of(&frame));
        let gpu_skinning = state.path == SkinningPath::Gpu;
        let start = std::time::Instant::now();
        for (i, buffers) in gpu.palettes.iter().enumerate() {
            let Some(buffers) = buffers.as_ref().filter(|_| !self.unskinned) else {
                continue;
            };
            let matrices: &[u8] = bytemuck::cast_slice(&state.pose.palettes[i]);
            queue.write_buffer(&buffers.matrices, 0, matrices);
            upload.palette_bytes += matrices.len() as u64;
            if gpu_skinning && state.method == SkinningMethod::Dqs {
                let dual_quats: &[u8] = bytemuck::cast_slice::<DualQuat, u8>(&state.skinned.dual_quats[i]);
                queue.write_buffer(&buffers.dual_quats, 0, dual_quats);
                upload.palette_bytes += dual_quats.len() as u64;
            }
        }
        upload.palette = start.elapsed();
        let mut vertex_time = std::time::Duration::ZERO;
        let eye = state.camera.eye();
        gpu.blended.clear();
        for (d, draw) in gpu.draws.iter_mut().enumerate() {
            let skinned = gpu.palettes[draw.instance].is_some();
            let method = if skinned && gpu_skinning && !self.unskinned {
                skin_code(state.method)
            } else {
                SKIN_NONE
            };
            // On the CPU path skinned vertices arrive morphed; everything else is morphed here.
            let morph_here = draw.morph.targets > 0 && (gpu_skinning || draw.cpu_skinned.is_none());
            let selected = state
                .selected
                .and_then(|node| draw.joints.iter().position(|&j| j == node))
                .map_or(NO_JOINT, |j| j as u32);
            let model = state.pose.instance_world(state.rig, draw.instance);
            let palette = (skinned && !self.unskinned).then(|| state.pose.palettes[draw.instance].as_slice());
            let turned = winding(&model, palette);
            draw.pipeline = mesh_pipeline(&draw.material, turned);
            draw.flags = draw_flags(&draw.material, turned);
            if draw.pipeline == MeshPipeline::Blended {
                gpu.blended.push(d);
            }
            let uniform = DrawUniform {
                model,
                base_color: draw.material.base_color,
                material: material_uniform(&draw.material),
                skin: [method, selected, u32::from(morph_here), draw.flags],
            };
            queue.write_buffer(&draw.uniform, 0, bytemuck::bytes_of(&uniform));
            if morph_here {
                let weights = &state.pose.morph_weights[draw.instance];
                queue.write_buffer(
                    &draw.morph.weights,
                    0,
                    bytemuck::cast_slice(&weights[..draw.morph.targets.min(weights.len())]),
                );
            }
            if let (false, Some((positions, normals))) = (gpu_skinning, &draw.cpu_skinned) {
                let start = std::time::Instant::now();
                let out = &state.skinned.meshes[draw.instance][draw.primitive];
                queue.write_buffer(positions, 0, bytemuck::cast_slice(&out.positions));
                queue.write_buffer(normals, 0, bytemuck::cast_slice(&out.normals));
                vertex_time += start.elapsed();
                upload.vertex_bytes +=
                    (std::mem::size_of_val(&out.positions[..]) + std::mem::size_of_val(&out.normals[..])) as u64;
            }
        }
        upload.vertices = (!gpu_skinning).then_some(vertex_time);
        // Blended draws cover what is behind them: farthest first, by their node's position.
        let worlds = &state.pose.worlds;
        let distance = |d: &usize| {
            let node = state.rig.instances[gpu.draws[*d].instance].node;
            worlds[node].w_axis.truncate().distance_squared(eye)
        };
        gpu.blended.sort_unstable_by(|a, b| distance(b).total_cmp(&distance(a)));
        if view.skeleton.show {
            skeleton_lines(
                state.rig,
                &gpu.is_joint,
                &state.pose.worlds,
                state.selected,
                &view.skeleton,
                state.marker_size,
                &mut gpu.skeleton_vertices,
            );
            queue.write_buffer(&gpu.skeleton, 0, bytemuck::cast_slice(&gpu.skeleton_vertices));
        }
        gpu.overlay_vertices.clear();
        overlay_lines(
            state.attachments,
            &state.pose.worlds,
            state.trail,
            &mut gpu.overlay_vertices,
        );
        gpu.overlay_vertices.truncate(OVERLAY_CAPACITY);
        if !gpu.overlay_vertices.is_empty() {
            queue.write_buffer(&gpu.overlay, 0, bytemuck::cast_slice(&gpu.overlay_vertices));
        }
        upload
    }

    /// Records the 3D view into `output` (a single-sample view of the targets' format), drawn
    /// inside `viewport` (x, y, width, height in pixels) or over the whole target.
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
        timestamps: Option<wgpu::RenderPassTimestampWrites>,
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
            timestamp_writes: timestamps,
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
            // Opaque and masked draws, then blended ones over them, farthest first; the wireframe
            // pass draws every edge.
            let opaque = gpu.draws.iter().filter(|d| d.pipeline != MeshPipeline::Blended);
            let blended = gpu.blended.iter().map(|&d| &gpu.draws[d]);
            let shaded = opaque.chain(blended).map(|draw| (draw, false));
            let edges = gpu.draws.iter().filter(|_| view.wireframe).map(|draw| (draw, true));
            for (draw, wire) in shaded.chain(edges) {
                let pipeline = match (wire, draw.pipeline) {
                    (true, _) => &self.wireframe,
                    (false, MeshPipeline::Culled) => &self.mesh_culled,
                    (false, MeshPipeline::CulledMirrored) => &self.mesh_culled_mirrored,
                    (false, MeshPipeline::DoubleSided) => &self.mesh_double_sided,
                    (false, MeshPipeline::Blended) => &self.mesh_blended,
                };
                pass.set_pipeline(pipeline);
                let palette = gpu.palettes[draw.instance]
                    .as_ref()
                    .map_or(&self.empty_palette, |p| &p.bind_group);
                pass.set_bind_group(1, palette, &[]);
                pass.set_bind_group(2, &draw.bind_group, &[]);
                pass.set_bind_group(3, &draw.morph.bind_group, &[]);
                match (&draw.cpu_skinned, path) {
                    (Some((positions, normals)), SkinningPath::Cpu) => {
                        pass.set_vertex_buffer(0, positions.slice(..));
                        pass.set_vertex_buffer(1, normals.slice(..));
                    }
                    _ => {
                        pass.set_vertex_buffer(0, draw.positions.slice(..));
                        pass.set_vertex_buffer(1, draw.normals.slice(..));
                    }
                }
                pass.set_vertex_buffer(2, draw.uvs.slice(..));
                pass.set_vertex_buffer(3, draw.influences.slice(..));
                pass.set_vertex_buffer(4, draw.colors.slice(..));
                if !wire {
                    pass.set_index_buffer(draw.indices.slice(..), wgpu::IndexFormat::Uint32);
                    pass.draw_indexed(0..draw.index_count, 0, 0..1);
                } else if draw.edge_count > 0 {
                    pass.set_index_buffer(draw.edges.slice(..), wgpu::IndexFormat::Uint32);
                    pass.draw_indexed(0..draw.edge_count, 0, 0..1);
                }
            }
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

impl PaletteBuffers {
    fn new(device: &wgpu::Device, layout: &wgpu::BindGroupLayout, joints: usize) -> PaletteBuffers {
        let storage = |label, size: usize| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (joints.max(1) * size) as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let matrices = storage("palette", std::mem::size_of::<Mat4>());
        let dual_quats = storage("palette (dual quaternions)", std::mem::size_of::<DualQuat>());
        let bind_group = storage_pair_bind_group(device, layout, "palette", &matrices, &dual_quats);
        PaletteBuffers {
            matrices,
            dual_quats,
            bind_group,
        }
    }
}

/// A bind group layout of two read-only storage buffers at bindings 0 and 1: the palette
/// (group 1) and the morph targets (group 3) declared in `skinning.wgsl`.
pub fn storage_pair_layout(
    device: &wgpu::Device,
    label: &str,
    visibility: wgpu::ShaderStages,
) -> wgpu::BindGroupLayout {
    let entry = |binding| wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &[entry(0), entry(1)],
    })
}

pub fn storage_pair_bind_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    label: &str,
    first: &wgpu::Buffer,
    second: &wgpu::Buffer,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: first.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: second.as_entire_binding(),
            },
        ],
    })
}

/// A primitive's morph targets on the GPU (group 3): offsets in the shaders' layout and a
/// weight per target, written each frame.
pub struct MorphBuffers {
    pub weights: wgpu::Buffer,
    pub bind_group: wgpu::BindGroup,
    pub targets: usize,
}

impl MorphBuffers {
    /// Buffers for `targets` of a primitive of `vertices` vertices; with no targets, one zero
    /// target the shaders read as "nothing to morph".
    pub fn new(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        targets: &[MorphTarget],
        vertices: usize,
    ) -> Self {
        let offsets: Vec<Vec4> = if targets.is_empty() {
            vec![Vec4::ZERO; 2]
        } else {
            targets
                .iter()
                .flat_map(|t| (0..vertices).flat_map(move |v| [t.positions[v].extend(0.0), t.normals[v].extend(0.0)]))
                .collect()
        };
        let offsets = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("morph offsets"),
            contents: bytemuck::cast_slice(&offsets),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let weights = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("morph weights"),
            contents: bytemuck::cast_slice(&vec![0f32; targets.len().max(1)]),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        });
        let bind_group = storage_pair_bind_group(device, layout, "morph targets", &offsets, &weights);
        MorphBuffers {
            weights,
            bind_group,
            targets: targets.len(),
        }
    }
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

/// Each edge of a triangle list once, as a line list (for the wireframe overlay).
fn triangle_edges(indices: &[u32]) -> Vec<u32> {
    let mut edges: Vec<(u32, u32)> = indices
        .chunks_exact(3)
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a.min(b), a.max(b)))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges.into_iter().flat_map(|(a, b)| [a, b]).collect()
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
