//! Image-based light on the GPU: an environment panorama turned into a cube with mips, a
//! specular cube whose levels are the environment seen through GGX lobes of rising roughness, a
//! small irradiance cube (divided by π: what a white Lambertian surface reflects), and the
//! split-sum BRDF table (Karis 2013) that scales and biases F0. All computed by `shaders/ibl.wgsl`
//! once per environment (the table once per renderer); the shaded view samples them per pixel.
//!
//! The f64 functions re-exported here ([`split_sum`], [`cosine_mean`]) are the integrals the GPU
//! estimates, computed another way, which the tests compare it with.

use super::environment::Equirect;
use glam::Vec3;
use wgpu::util::DeviceExt;

mod reference;

pub use reference::{cosine_mean, split_sum};

/// The source cube's size (texels per face side) and its mip count (down to 1×1).
pub const SOURCE_SIZE: u32 = 128;
pub const SOURCE_LEVELS: u32 = 8;
/// The specular cube: level k holds perceptual roughness k / (levels − 1).
pub const SPECULAR_SIZE: u32 = 64;
pub const SPECULAR_LEVELS: u32 = 5;
/// GGX samples per texel of a rough level; each reads the source at the mip of its own solid
/// angle, so that a few dozen give a smooth lobe.
pub const SPECULAR_SAMPLES: u32 = 64;
pub const IRRADIANCE_SIZE: u32 = 16;
pub const IRRADIANCE_SAMPLES: u32 = 512;
/// The BRDF table: n·v across, roughness down, at texel centres.
pub const LUT_SIZE: u32 = 64;
pub const LUT_SAMPLES: u32 = 1024;

/// Filterable, writable from a compute shader without a feature, and enough for radiance.
pub const CUBE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;

/// The perceptual roughness the specular cube's `level` holds.
pub fn level_roughness(level: u32) -> f32 {
    level as f32 / (SPECULAR_LEVELS - 1) as f32
}

const IBL_WGSL: &str = include_str!("../../shaders/ibl.wgsl");

/// The prefiltering shader as the pipelines compile it.
pub(crate) fn ibl_wgsl() -> String {
    IBL_WGSL.to_owned()
}

/// `Params` in `ibl.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    sizes: [u32; 4],
    values: [f32; 4],
}

/// The compute pipelines that prefilter an environment and make the BRDF table.
pub struct IblPipelines {
    module: wgpu::ShaderModule,
    to_cube: wgpu::ComputePipeline,
    downsample: wgpu::ComputePipeline,
    prefilter: wgpu::ComputePipeline,
    irradiance: wgpu::ComputePipeline,
    brdf_lut: wgpu::ComputePipeline,
    /// Trilinear, clamped: how the shaded view and the prefilter read the cubes.
    pub sampler: wgpu::Sampler,
}

/// The prefiltered environment, as cube views.
pub struct IblMaps {
    pub specular: wgpu::TextureView,
    pub irradiance: wgpu::TextureView,
}

/// A sampler that reads cubes and the table trilinearly, clamped at the edges.
pub fn environment_sampler(device: &wgpu::Device) -> wgpu::Sampler {
    device.create_sampler(&wgpu::SamplerDescriptor {
        label: Some("environment"),
        address_mode_u: wgpu::AddressMode::ClampToEdge,
        address_mode_v: wgpu::AddressMode::ClampToEdge,
        address_mode_w: wgpu::AddressMode::ClampToEdge,
        mag_filter: wgpu::FilterMode::Linear,
        min_filter: wgpu::FilterMode::Linear,
        mipmap_filter: wgpu::MipmapFilterMode::Linear,
        ..Default::default()
    })
}

/// A cube texture (six layers) of `size` with `levels` mips, written by the compute shaders and
/// sampled by the others.
fn cube_texture(device: &wgpu::Device, label: &str, size: u32, levels: u32) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width: size,
            height: size,
            depth_or_array_layers: 6,
        },
        mip_level_count: levels,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: CUBE_FORMAT,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::STORAGE_BINDING,
        view_formats: &[],
    })
}

/// `texture` seen as a cube, every level.
pub fn cube_view(texture: &wgpu::Texture) -> wgpu::TextureView {
    texture.create_view(&wgpu::TextureViewDescriptor {
        dimension: Some(wgpu::TextureViewDimension::Cube),
        ..Default::default()
    })
}

/// One level of a cube as the six layers a compute shader writes or loads.
fn level_view(texture: &wgpu::Texture, level: u32) -> wgpu::TextureView {
    texture.create_view(&wgpu::TextureViewDescriptor {
        dimension: Some(wgpu::TextureViewDimension::D2Array),
        base_mip_level: level,
        mip_level_count: Some(1),
        ..Default::default()
    })
}

impl IblPipelines {
    pub fn new(device: &wgpu::Device, cache: Option<&wgpu::PipelineCache>) -> IblPipelines {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("ibl.wgsl"),
            source: wgpu::ShaderSource::Wgsl(ibl_wgsl().into()),
        });
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache,
            })
        };
        // A software driver compiles each for tens of milliseconds on the CPU: side by side.
        use rayon::prelude::*;
        let entries = ["to_cube", "downsample", "prefilter", "irradiance", "brdf_lut"];
        let mut built: Vec<_> = entries.par_iter().map(|entry| pipeline(entry)).collect();
        let [to_cube, downsample, prefilter, irradiance, brdf_lut] = std::array::from_fn(|_| built.remove(0));
        IblPipelines {
            to_cube,
            downsample,
            prefilter,
            irradiance,
            brdf_lut,
            sampler: environment_sampler(device),
            module,
        }
    }

    /// Records one dispatch of `pipeline` over `size`×`size` texels of `layers` layers, with
    /// `params` at binding 0 and `resources` at the bindings given.
    #[allow(clippy::too_many_arguments)]
    fn dispatch(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        pipeline: &wgpu::ComputePipeline,
        params: Params,
        resources: &[(u32, wgpu::BindingResource)],
        size: u32,
        layers: u32,
    ) {
        let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("ibl params"),
            contents: bytemuck::bytes_of(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: uniform.as_entire_binding(),
        }];
        entries.extend(resources.iter().map(|(binding, resource)| wgpu::BindGroupEntry {
            binding: *binding,
            resource: resource.clone(),
        }));
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("ibl"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("ibl"),
            timestamp_writes: None,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(size.div_ceil(8), size.div_ceil(8), layers);
    }

    /// Computes the split-sum table: a `LUT_SIZE`² texture whose red is A and green B.
    pub fn brdf_lut(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> wgpu::Texture {
        let table = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("brdf table"),
            size: wgpu::Extent3d {
                width: LUT_SIZE,
                height: LUT_SIZE,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: CUBE_FORMAT,
            usage: wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::STORAGE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let view = table.create_view(&Default::default());
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("brdf table"),
        });
        let params = Params {
            sizes: [LUT_SIZE, LUT_SAMPLES, 0, 0],
            values: [0.0; 4],
        };
        let resources = [(6, wgpu::BindingResource::TextureView(&view))];
        self.dispatch(device, &mut encoder, &self.brdf_lut, params, &resources, LUT_SIZE, 1);
        queue.submit([encoder.finish()]);
        table
    }

    /// Prefilters `map`: uploads it, turns it into the source cube with its mips, and fills the
    /// specular and irradiance cubes from that; all recorded in one submission.
    pub fn prefilter(&self, device: &wgpu::Device, queue: &wgpu::Queue, map: &Equirect) -> IblMaps {
        let equirect = device.create_texture_with_data(
            queue,
            &wgpu::TextureDescriptor {
                label: Some("environment panorama"),
                size: wgpu::Extent3d {
                    width: map.width,
                    height: map.height,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rgba32Float,
                usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                view_formats: &[],
            },
            wgpu::util::TextureDataOrder::LayerMajor,
            bytemuck::cast_slice(&map.texels),
        );
        let equirect_view = equirect.create_view(&Default::default());
        let source = cube_texture(device, "environment cube", SOURCE_SIZE, SOURCE_LEVELS);
        let specular = cube_texture(device, "specular cube", SPECULAR_SIZE, SPECULAR_LEVELS);
        let irradiance = cube_texture(device, "irradiance cube", IRRADIANCE_SIZE, 1);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("prefilter"),
        });
        // A face's texel spans a quarter of the panorama's width over SOURCE_SIZE: averaged
        // over a grid of about one point per panorama texel.
        let grid = (map.width / 4).div_ceil(SOURCE_SIZE).clamp(1, 8);
        let base = level_view(&source, 0);
        self.dispatch(
            device,
            &mut encoder,
            &self.to_cube,
            Params {
                sizes: [SOURCE_SIZE, grid, 0, 0],
                values: [0.0; 4],
            },
            &[
                (1, wgpu::BindingResource::TextureView(&equirect_view)),
                (2, wgpu::BindingResource::TextureView(&base)),
            ],
            SOURCE_SIZE,
            6,
        );
        for level in 1..SOURCE_LEVELS {
            let (finer, coarser) = (level_view(&source, level - 1), level_view(&source, level));
            let size = SOURCE_SIZE >> level;
            self.dispatch(
                device,
                &mut encoder,
                &self.downsample,
                Params {
                    sizes: [size, 0, 0, 0],
                    values: [0.0; 4],
                },
                &[
                    (3, wgpu::BindingResource::TextureView(&finer)),
                    (2, wgpu::BindingResource::TextureView(&coarser)),
                ],
                size,
                6,
            );
        }
        let source_cube = cube_view(&source);
        let read = [
            (4, wgpu::BindingResource::TextureView(&source_cube)),
            (5, wgpu::BindingResource::Sampler(&self.sampler)),
        ];
        for level in 0..SPECULAR_LEVELS {
            let out = level_view(&specular, level);
            let size = SPECULAR_SIZE >> level;
            let mut resources = read.to_vec();
            resources.push((2, wgpu::BindingResource::TextureView(&out)));
            self.dispatch(
                device,
                &mut encoder,
                &self.prefilter,
                Params {
                    sizes: [size, SPECULAR_SAMPLES, SOURCE_SIZE, SOURCE_LEVELS],
                    values: [level_roughness(level), 0.0, 0.0, 0.0],
                },
                &resources,
                size,
                6,
            );
        }
        let out = level_view(&irradiance, 0);
        let mut resources = read.to_vec();
        resources.push((2, wgpu::BindingResource::TextureView(&out)));
        self.dispatch(
            device,
            &mut encoder,
            &self.irradiance,
            Params {
                sizes: [IRRADIANCE_SIZE, IRRADIANCE_SAMPLES, SOURCE_SIZE, SOURCE_LEVELS],
                values: [0.0; 4],
            },
            &resources,
            IRRADIANCE_SIZE,
            6,
        );
        queue.submit([encoder.finish()]);
        IblMaps {
            specular: cube_view(&specular),
            irradiance: cube_view(&irradiance),
        }
    }

    /// Reads `cube` through the sampler at each (direction, level of detail): what the shaded
    /// view would read there. For checks; builds its pipeline on each call.
    pub fn sample_cube(
        &self,
        gpu: &super::Gpu,
        cube: &wgpu::TextureView,
        lookups: &[(Vec3, f32)],
    ) -> Result<Vec<Vec3>, super::GpuError> {
        let device = &gpu.device;
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("cube probe"),
            layout: None,
            module: &self.module,
            entry_point: Some("probe"),
            compilation_options: Default::default(),
            cache: None,
        });
        let at: Vec<[f32; 4]> = lookups.iter().map(|(d, lod)| d.extend(*lod).to_array()).collect();
        let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("cube probe lookups"),
            contents: bytemuck::cast_slice(&at),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let size = std::mem::size_of_val(&at[..]) as u64;
        let output = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("cube probe found"),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("cube probe readback"),
            size,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("cube probe"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 4,
                    resource: wgpu::BindingResource::TextureView(cube),
                },
                wgpu::BindGroupEntry {
                    binding: 5,
                    resource: wgpu::BindingResource::Sampler(&self.sampler),
                },
                wgpu::BindGroupEntry {
                    binding: 7,
                    resource: input.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 8,
                    resource: output.as_entire_binding(),
                },
            ],
        });
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("cube probe"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups((lookups.len() as u32).div_ceil(64), 1, 1);
        }
        encoder.copy_buffer_to_buffer(&output, 0, &readback, 0, size);
        gpu.queue.submit([encoder.finish()]);
        let bytes = super::offscreen::read_buffer(gpu, &readback)?;
        let found: &[[f32; 4]] = bytemuck::cast_slice(&bytes);
        Ok(found.iter().map(|c| Vec3::new(c[0], c[1], c[2])).collect())
    }
}

/// The image-based light a renderer binds: the BRDF table (made the first time an environment
/// is), the prefiltered cubes of the environment last computed and its id, or black stand-ins
/// until one is (views that do not shade with it never make one).
pub struct IblState {
    pipelines: Option<IblPipelines>,
    table: Option<wgpu::TextureView>,
    maps: IblMaps,
    stand_in_table: wgpu::TextureView,
    computed: Option<u64>,
    pub sampler: wgpu::Sampler,
}

impl IblState {
    pub fn new(device: &wgpu::Device) -> IblState {
        let black_cube = cube_view(&cube_texture(device, "no environment", 1, 1));
        let stand_in_table = device
            .create_texture(&wgpu::TextureDescriptor {
                label: Some("no brdf table"),
                size: wgpu::Extent3d {
                    width: 1,
                    height: 1,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: CUBE_FORMAT,
                usage: wgpu::TextureUsages::TEXTURE_BINDING,
                view_formats: &[],
            })
            .create_view(&Default::default());
        IblState {
            pipelines: None,
            table: None,
            maps: IblMaps {
                specular: black_cube.clone(),
                irradiance: black_cube,
            },
            stand_in_table,
            computed: None,
            sampler: environment_sampler(device),
        }
    }

    /// The id of the environment the cubes hold (`None`: the stand-ins).
    pub fn computed(&self) -> Option<u64> {
        self.computed
    }

    /// Prefilters `environment` unless it is the one computed last. Returns whether the views
    /// changed (the frame's bind group must be made again).
    pub fn ensure(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        cache: Option<&wgpu::PipelineCache>,
        environment: &super::environment::Environment,
    ) -> bool {
        if self.computed == Some(environment.id()) {
            return false;
        }
        let start = std::time::Instant::now();
        let pipelines = self.pipelines.get_or_insert_with(|| IblPipelines::new(device, cache));
        if self.table.is_none() {
            self.table = Some(pipelines.brdf_lut(device, queue).create_view(&Default::default()));
        }
        self.maps = pipelines.prefilter(device, queue, &environment.map());
        self.computed = Some(environment.id());
        log::debug!(
            "environment '{}' prefiltered in {:.1} ms (recorded)",
            environment.name(),
            start.elapsed().as_secs_f64() * 1e3
        );
        true
    }

    /// The specular cube, irradiance cube and BRDF table to bind.
    pub fn views(&self) -> [&wgpu::TextureView; 3] {
        [
            &self.maps.specular,
            &self.maps.irradiance,
            self.table.as_ref().unwrap_or(&self.stand_in_table),
        ]
    }
}

/// The split-sum table read back: per texel (row by row, roughness down), (A, B).
pub fn read_brdf_lut(gpu: &super::Gpu, table: &wgpu::Texture) -> Result<Vec<[f32; 2]>, super::GpuError> {
    let row = (LUT_SIZE * 8).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let readback = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("brdf table readback"),
        size: u64::from(row * LUT_SIZE),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = (gpu.device).create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    encoder.copy_texture_to_buffer(
        table.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row),
                rows_per_image: Some(LUT_SIZE),
            },
        },
        wgpu::Extent3d {
            width: LUT_SIZE,
            height: LUT_SIZE,
            depth_or_array_layers: 1,
        },
    );
    gpu.queue.submit([encoder.finish()]);
    let bytes = super::offscreen::read_buffer(gpu, &readback)?;
    let mut out = Vec::with_capacity((LUT_SIZE * LUT_SIZE) as usize);
    for j in 0..LUT_SIZE as usize {
        let line = &bytes[j * row as usize..][..LUT_SIZE as usize * 8];
        for texel in line.chunks_exact(8) {
            let half = |k: usize| half::f16::from_le_bytes([texel[2 * k], texel[2 * k + 1]]).to_f32();
            out.push([half(0), half(1)]);
        }
    }
    Ok(out)
}
