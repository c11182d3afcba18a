//! A rig's GPU resources, built once when it is loaded: textures, palette buffers, and per
//! primitive its vertex streams, indices, edges, draw uniform and morph buffers.

use super::*;
use crate::render::gpu_data::create_texture_as;
use crate::render::pbr::{MAP_NORMAL, MaterialShading};

/// The material `primitive` of `rig` is drawn with: its own, or the default one.
pub(in crate::render) fn material_of(rig: &Rig, primitive: &crate::rig::Primitive) -> Material {
    primitive
        .material
        .and_then(|m| rig.materials.get(m))
        .cloned()
        .unwrap_or_default()
}

impl SceneRenderer {
    /// Uploads a rig's meshes, materials and palette buffers.
    pub fn upload_rig(&self, device: &wgpu::Device, queue: &wgpu::Queue, rig: &Rig) -> RigGpu {
        let textures = RigTextures::upload(device, queue, rig);
        let mut untangented = 0;
        let palettes = self.palette_buffers(device, rig);
        let mut draws = Vec::new();
        let mut rest = PoseBuffers::new(rig);
        rest.evaluate(rig, None, 0.0);
        for (i, instance) in rig.instances.iter().enumerate() {
            let bind_scale = match instance.skin {
                Some(_) => uniform_scale(&rest.palettes[i]),
                None => 1.0,
            };
            let joints = instance.skin.map_or_else(Vec::new, |s| rig.skins[s].joints.clone());
            for (k, primitive) in rig.meshes[instance.mesh].primitives.iter().enumerate() {
                let has_tangents = primitive.tangents.len() == primitive.vertex_count();
                if material_of(rig, primitive).normal_texture.is_some() && !has_tangents {
                    untangented += 1;
                }
                let placed = PlacedPrimitive {
                    instance: i,
                    primitive: k,
                    joints: &joints,
                    bind_scale,
                };
                draws.push(self.upload_draw(device, rig, &textures, placed));
            }
        }
        if untangented > 0 {
            log::info!(
                "{untangented} primitive(s) with a normal map but no tangents (MikkTSpace found no triangle to \
                 work on) are drawn without their normal map"
            );
        }
        let bones = rig.hierarchy().bones.clone();
        let capacity = bones.iter().filter(|j| **j).count().max(1) * VERTICES_PER_JOINT;
        let blended = Vec::with_capacity(draws.len());
        RigGpu {
            proxy_built: false,
            proxy_job: None,
            cpu_vertices: None,
            ghosts: Vec::new(),
            ghosts_shown: 0,
            skinning: super::SKIN_NONE,
            blended,
            symmetry_written: None,
            draws,
            palettes,
            bones,
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
            surface_scratch: Vec::new(),
            texture_bytes: textures.bytes,
        }
    }
}

/// A rig's textures on the GPU, uploaded only as the materials use them: as sRGB where a
/// material shows one as a color (base color, emission), as stored where it reads one as data.
/// Textures larger than the device allows are left out (drawn white).
struct RigTextures {
    srgb: Vec<Option<wgpu::TextureView>>,
    linear: Vec<Option<wgpu::TextureView>>,
    /// What the uploaded images take on the GPU.
    bytes: u64,
}

impl RigTextures {
    fn upload(device: &wgpu::Device, queue: &wgpu::Queue, rig: &Rig) -> RigTextures {
        let n = rig.textures.len();
        let (mut color, mut data) = (vec![false; n], vec![false; n]);
        let mark = |uses: &mut Vec<bool>, t: Option<usize>| {
            if let Some(slot) = t.and_then(|t| uses.get_mut(t)) {
                *slot = true;
            }
        };
        for m in &rig.materials {
            mark(&mut color, m.base_color_texture);
            mark(&mut color, m.emissive_texture.map(|t| t.texture));
            mark(&mut color, m.specular.color_texture.map(|t| t.texture));
            for t in [
                m.metallic_roughness_texture,
                m.normal_texture,
                m.occlusion_texture,
                m.specular.texture,
            ] {
                mark(&mut data, t.map(|t| t.texture));
            }
        }
        let max_side = device.limits().max_texture_dimension_2d;
        let mut textures = RigTextures {
            srgb: Vec::with_capacity(n),
            linear: Vec::with_capacity(n),
            bytes: 0,
        };
        for ((t, &as_color), &as_data) in rig.textures.iter().zip(&color).zip(&data) {
            let fits = t.width <= max_side && t.height <= max_side;
            let (as_color, as_data) = (as_color && fits, as_data && fits);
            // Read once for both views and dropped right after: a file's pixels are not kept.
            let rgba8 = (as_color || as_data).then(|| t.rgba8());
            let mut upload = |wanted: bool, format| {
                let rgba8 = rgba8.as_deref().filter(|_| wanted)?;
                textures.bytes += t.decoded_bytes();
                Some(create_texture_as(device, queue, t, rgba8, format))
            };
            let srgb = upload(as_color, wgpu::TextureFormat::Rgba8UnormSrgb);
            let linear = upload(as_data, wgpu::TextureFormat::Rgba8Unorm);
            textures.srgb.push(srgb);
            textures.linear.push(linear);
        }
        textures
    }
}

/// Where a primitive is drawn: instance `instance`'s primitive `primitive`, with its skin's joints
/// and the bind pose's uniform scale (see [`GpuDraw::bind_scale`]).
struct PlacedPrimitive<'a> {
    instance: usize,
    primitive: usize,
    joints: &'a [usize],
    bind_scale: f32,
}

/// `shaders/mesh.wgsl`'s `surface` for `primitive`, into `stream`: per vertex its two texture
/// coordinate sets as stored, then `tangents`' entry (the primitive's own, or the CPU path's
/// skinned ones).
pub(super) fn write_surface_stream(primitive: &crate::rig::Primitive, tangents: &[Vec4], stream: &mut Vec<[f32; 4]>) {
    let (set0, set1) = (primitive.uv_set(0), primitive.uv_set(1));
    stream.clear();
    stream.extend((0..primitive.vertex_count()).flat_map(|v| {
        let at = |set: &[glam::Vec2]| set.get(v).copied().unwrap_or_default();
        let (a, b) = (at(set0), at(set1));
        let tangent = tangents.get(v).copied().unwrap_or(Vec4::ZERO);
        [[a.x, a.y, b.x, b.y], tangent.to_array()]
    }));
}

fn surface_stream(primitive: &crate::rig::Primitive, tangents: &[Vec4]) -> Vec<[f32; 4]> {
    let mut stream = Vec::new();
    write_surface_stream(primitive, tangents, &mut stream);
    stream
}

impl SceneRenderer {
    /// One primitive's draw: its material's bindings, its vertex streams and its morph buffers.
    fn upload_draw(
        &self,
        device: &wgpu::Device,
        rig: &Rig,
        textures: &RigTextures,
        placed: PlacedPrimitive,
    ) -> GpuDraw {
        let PlacedPrimitive {
            instance: i,
            primitive: k,
            joints,
            bind_scale,
        } = placed;
        let instance = &rig.instances[i];
        let primitive = &rig.meshes[instance.mesh].primitives[k];
        let buffer = |label, contents: &[u8], usage| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let material = material_of(rig, primitive);
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("draw"),
            size: std::mem::size_of::<DrawUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let has_tangents = primitive.tangents.len() == primitive.vertex_count();
        let shading = MaterialShading::of(&material, has_tangents);
        let maps = self.draw_maps(device, textures, &material, primitive, &shading);
        let bind_group = self.draw_bind_group(device, &uniform, &maps);
        let cpu_skinnable = instance.skin.is_some() && primitive.influences.is_some();
        let cpu_surface = (cpu_skinnable && shading.maps & MAP_NORMAL != 0)
            .then(|| self.cpu_surface(device, &uniform, &maps, primitive));
        let vertex_usage = wgpu::BufferUsages::VERTEX;
        let positions = bytemuck::cast_slice(&primitive.positions);
        let normals = bytemuck::cast_slice(&primitive.normals);
        GpuDraw {
            instance: i,
            primitive: k,
            positions: buffer("positions", positions, vertex_usage),
            normals: buffer("normals", normals, vertex_usage),
            cpu_skinned: None,
            cpu_skinnable,
            cpu_surface,
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
            proxy: None,
            edges: None,
            uniform,
            bind_group,
            maps,
            shading,
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
            joints: joints.to_vec(),
            morph: MorphBuffers::new(
                device,
                &self.morph_layout,
                &self.morph_pass,
                rig.morphs.of(instance.mesh, k),
                (
                    primitive.vertex_count(),
                    primitive.tangents.len() == primitive.vertex_count(),
                ),
            ),
            symmetry: buffer(
                "symmetry",
                bytemuck::cast_slice(&vec![SYMMETRY_UNCHECKED; primitive.vertex_count()]),
                vertex_usage | wgpu::BufferUsages::COPY_DST,
            ),
            bind_scale,
            hidden: false,
        }
    }

    /// A CPU-skinnable normal-mapped draw's own surface stream, which the CPU path writes its
    /// skinned tangents into, and the bind group that reads it with the draw's `maps`.
    fn cpu_surface(
        &self,
        device: &wgpu::Device,
        uniform: &wgpu::Buffer,
        maps: &DrawMaps,
        primitive: &crate::rig::Primitive,
    ) -> (wgpu::Buffer, wgpu::BindGroup) {
        let surface = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("cpu surface stream"),
            contents: bytemuck::cast_slice(&surface_stream(primitive, &primitive.tangents)),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        });
        let maps = DrawMaps {
            surface: surface.clone(),
            ..maps.clone()
        };
        let bind_group = self.draw_bind_group(device, uniform, &maps);
        (surface, bind_group)
    }

    /// The textures and surface stream a draw of `primitive` with `material` binds.
    fn draw_maps(
        &self,
        device: &wgpu::Device,
        textures: &RigTextures,
        material: &Material,
        primitive: &crate::rig::Primitive,
        shading: &MaterialShading,
    ) -> DrawMaps {
        let view = |views: &[Option<wgpu::TextureView>], t: Option<usize>| {
            t.and_then(|t| views.get(t)?.clone())
                .unwrap_or_else(|| self.white.clone())
        };
        let data = |t: Option<crate::rig::TextureRef>| view(&textures.linear, t.map(|t| t.texture));
        let surface = if shading.reads_surface_stream() {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("surface stream"),
                contents: bytemuck::cast_slice(&surface_stream(primitive, &primitive.tangents)),
                usage: wgpu::BufferUsages::STORAGE,
            })
        } else {
            self.empty_surface.clone()
        };
        DrawMaps {
            base_color: view(&textures.srgb, material.base_color_texture),
            metallic_roughness: data(material.metallic_roughness_texture),
            normal: data(material.normal_texture),
            occlusion: data(material.occlusion_texture),
            emissive: view(&textures.srgb, material.emissive_texture.map(|t| t.texture)),
            surface,
            specular: data(material.specular.texture),
            specular_color: view(&textures.srgb, material.specular.color_texture.map(|t| t.texture)),
        }
    }
}

impl RigGpu {
    /// Makes the buffers that only some frames read, the first time a frame does: the
    /// wireframe's edges when `view` shows it, and the CPU path's vertex buffers on that path.
    /// A rig that is never seen in wireframe or on the CPU costs neither the memory nor (for
    /// edges, a sort of every triangle's sides) the time.
    pub fn ensure_buffers(&mut self, device: &wgpu::Device, rig: &Rig, view: &ViewOptions, path: SkinningPath) {
        let mut added_cpu_buffers = false;
        for draw in &mut self.draws {
            let Some(primitive) = rig.meshes[rig.instances[draw.instance].mesh]
                .primitives
                .get(draw.primitive)
            else {
                continue;
            };
            if view.wireframe && draw.edges.is_none() {
                let edges = triangle_edges(&primitive.indices, primitive.vertex_count());
                let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("edges"),
                    contents: bytemuck::cast_slice(&edges),
                    usage: wgpu::BufferUsages::INDEX,
                });
                draw.edges = Some((buffer, edges.len() as u32));
            }
            if path == SkinningPath::Cpu && draw.cpu_skinnable && draw.cpu_skinned.is_none() {
                let buffer = |label, contents: &[glam::Vec3]| {
                    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some(label),
                        contents: bytemuck::cast_slice(contents),
                        usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                    })
                };
                added_cpu_buffers = true;
                draw.cpu_skinned = Some((
                    buffer("cpu positions", &primitive.positions),
                    buffer("cpu normals", &primitive.normals),
                ));
            }
        }
        if added_cpu_buffers {
            self.cpu_vertices = None;
        }
    }

    /// Starts simplifying `rig` (the rig this was uploaded from) into its proxies on a thread of
    /// its own, when it has triangles enough to get one, so that [`RigGpu::build_proxies`]
    /// finds them ready instead of stopping a frame for them.
    pub fn start_proxies(&mut self, rig: &std::sync::Arc<Rig>) {
        if self.proxy_built || self.proxy_job.is_some() || rig.triangle_count() < proxy::PROXY_ABOVE_TRIANGLES {
            return;
        }
        let rig = std::sync::Arc::clone(rig);
        self.proxy_job = Some(crate::job::Job::spawn(move || proxy::Simplified::of(&rig)));
    }

    /// Builds the proxies of `rig` (the rig this was uploaded from), once: a scene that turned
    /// out heavy asks for them (see `render::detail`). Takes those [`RigGpu::start_proxies`]
    /// started (waiting for them if need be), or simplifies here.
    pub fn build_proxies(&mut self, device: &wgpu::Device, rig: &Rig) {
        if std::mem::replace(&mut self.proxy_built, true) {
            return;
        }
        let simplified = match self.proxy_job.take().map(crate::job::Job::wait) {
            Some(Ok(simplified)) => simplified,
            // Not started, or its thread panicked: here, where a panic is seen.
            _ => proxy::Simplified::of(rig),
        };
        let Some(proxies) = simplified.proxies else {
            return;
        };
        for draw in &mut self.draws {
            let instance = &rig.instances[draw.instance];
            let Some(indices) = proxies
                .get(instance.mesh)
                .and_then(|m| m.get(draw.primitive)?.as_deref())
            else {
                continue;
            };
            let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("proxy indices"),
                contents: bytemuck::cast_slice(indices),
                usage: wgpu::BufferUsages::INDEX,
            });
            draw.proxy = Some((buffer, indices.len() as u32));
        }
        let proxy: usize = self
            .draws
            .iter()
            .filter_map(|d| d.proxy.as_ref())
            .map(|(_, n)| *n as usize / 3)
            .sum();
        log::info!(
            "proxy of {proxy} triangles (of {}) for orbiting built in {:.0} ms",
            rig.triangle_count(),
            simplified.took.as_secs_f64() * 1e3
        );
    }
}

/// The uniform scale of a palette: the median over its matrices of |det|^(1/3), so that a joint
/// scaled by hand or a degenerate matrix does not decide it; 1 when none is usable.
fn uniform_scale(palette: &[Mat4]) -> f32 {
    let mut scales: Vec<f32> = palette
        .iter()
        .map(|m| m.determinant().abs().cbrt())
        .filter(|s| s.is_finite() && *s > 0.0)
        .collect();
    if scales.is_empty() {
        return 1.0;
    }
    let middle = scales.len() / 2;
    *scales.select_nth_unstable_by(middle, f32::total_cmp).1
}
