//! The shaded view's metallic-roughness shading on the GPU against the f64 reference of the
//! glTF specification's BRDF (`render::pbr`) under the directional light, pixel by pixel on flat quads whose every pixel's
//! surface point, normal and view direction are known; emissive textures with their own
//! coordinate set and transform.

use crate::common::gpu;

use glam::{DVec3, Quat, Vec2, Vec3, Vec4};
use gpu::srgb8;
use rigscope::render::environment::Lighting;
use rigscope::render::pbr::{self, Surface, ToneOptions, Tonemap};
use rigscope::render::scene::LIGHT_DIRECTION;
use rigscope::rig::{
    Material, Mesh, MeshInstance, Node, Primitive, Rig, Specular, Texture, TextureRef, Trs, UvTransform,
};
use rigscope::screenshot::render_view;
use rigscope::viewer::Viewer;

const SPACING: f32 = 1.3;

/// A single-sided unit quad centred on the origin facing +Z.
fn quad(material: usize) -> Primitive {
    gpu::unit_quad(material)
}

/// One quad per material, in a row along x, each turned by its rotation.
fn scene(materials: Vec<Material>, turns: &[Quat], primitives: Vec<Primitive>) -> Rig {
    let n = materials.len();
    let x = |k: usize| (k as f32 - (n as f32 - 1.0) / 2.0) * SPACING;
    Rig {
        name: "pbr".into(),
        nodes: (0..n)
            .map(|k| Node {
                name: format!("quad {k}"),
                parent: None,
                rest: Trs {
                    translation: Vec3::new(x(k), 0.0, 0.0),
                    rotation: turns[k],
                    ..Trs::IDENTITY
                },
            })
            .collect(),
        meshes: primitives
            .into_iter()
            .enumerate()
            .map(|(k, p)| Mesh {
                name: format!("quad {k}"),
                primitives: vec![p],
            })
            .collect(),
        instances: (0..n)
            .map(|k| MeshInstance {
                node: k,
                mesh: k,
                skin: None,
            })
            .collect(),
        materials,
        ..Rig::default()
    }
}

fn lit(base: Vec3, metallic: f32, roughness: f32) -> Material {
    Material {
        base_color: base.extend(1.0),
        metallic,
        roughness,
        ..Material::default()
    }
}

/// Renders `rig` looking along −Z from 6 units with `tone`, lit by the directional light (the
/// reference's); the image and the view-projection.
fn render(gpu: &rigscope::render::Gpu, rig: Rig, tone: ToneOptions, size: (u32, u32)) -> (image::RgbaImage, Viewer) {
    let mut viewer = Viewer::new(rig, None);
    gpu::look_along_minus_z(&mut viewer, 6.0);
    viewer.view.options.tone = tone;
    viewer.view.options.light = Lighting::Directional;
    let image = render_view(gpu, &mut viewer, size.0, size.1).unwrap();
    (image, viewer)
}

/// Where the ray through the centre of pixel (`px`, `py`) meets the plane through `point` with
/// normal `normal`.
fn surface_point(viewer: &Viewer, size: (u32, u32), (px, py): (u32, u32), point: Vec3, normal: Vec3) -> DVec3 {
    let aspect = size.0 as f32 / size.1 as f32;
    let x = (px as f32 + 0.5) / size.0 as f32 * 2.0 - 1.0;
    let y = 1.0 - (py as f32 + 0.5) / size.1 as f32 * 2.0;
    let (origin, direction) = viewer.view.camera.ray(x, y, aspect);
    let (origin, direction, point, normal) = (
        origin.as_dvec3(),
        direction.as_dvec3(),
        point.as_dvec3(),
        normal.as_dvec3(),
    );
    let t = (point - origin).dot(normal) / direction.dot(normal);
    origin + direction * t
}

/// The pixel (`px`, `py`) of `image` should show `surface` (on the plane of a quad centred at
/// `center` with `normal`), lit and tone-mapped as the reference says; its largest channel
/// difference in 8-bit sRGB levels.
fn pixel_error(
    image: &image::RgbaImage,
    viewer: &Viewer,
    (px, py): (u32, u32),
    (center, normal): (Vec3, Vec3),
    surface: &Surface,
    tone: ToneOptions,
) -> u8 {
    let size = (image.width(), image.height());
    let p = surface_point(viewer, size, (px, py), center, normal);
    let eye = viewer.view.camera.eye().as_dvec3();
    let v = (eye - p).normalize();
    let l = -LIGHT_DIRECTION.as_dvec3().normalize();
    let n = normal.as_dvec3();
    let shown = pbr::tone_map(tone, pbr::radiance(surface, n, v, l));
    let got = image.get_pixel(px, py).0;
    (0..3).map(|c| got[c].abs_diff(srgb8(shown[c] as f32))).max().unwrap()
}

/// The pixels of quad `k` (centred at `center`, turned by `turn`) on an 8×8 grid over its
/// middle, away from its edges.
fn quad_pixels(viewer: &Viewer, size: (u32, u32), center: Vec3, turn: Quat) -> Vec<(u32, u32)> {
    let vp = viewer.view.camera.view_projection(size.0 as f32 / size.1 as f32);
    let mut pixels = Vec::new();
    for i in 0..8 {
        for j in 0..8 {
            let local = Vec3::new(i as f32 / 7.0 - 0.5, j as f32 / 7.0 - 0.5, 0.0) * 0.7;
            let ndc = vp.project_point3(center + turn * local);
            let x = ((ndc.x * 0.5 + 0.5) * size.0 as f32) as u32;
            let y = ((0.5 - ndc.y * 0.5) * size.1 as f32) as u32;
            pixels.push((x, y));
        }
    }
    pixels
}

/// The tolerance in 8-bit sRGB levels: the reference is exact and rounded once; the GPU
/// computes in f32 (about 1e-6 relative, far below a level's 1/255) and encodes to sRGB with its
/// own rounding, so a pixel may land on the neighbouring level and no further (lavapipe: 1, on
/// about 30% of the pixels). A wrong term (α, a metal taken for a dielectric) moves many pixels
/// by more (see `a_wrong_brdf_would_be_caught`).
const LEVELS: u8 = 1;

fn materials_and_turns() -> (Vec<Material>, Vec<Quat>) {
    let materials = vec![
        lit(Vec3::new(0.8, 0.3, 0.2), 0.0, 0.5),
        lit(Vec3::new(1.0, 0.78, 0.34), 1.0, 0.3),
        lit(Vec3::new(0.6, 0.6, 0.65), 0.5, 0.8),
        lit(Vec3::new(0.9, 0.9, 0.9), 0.0, 0.2),
        lit(Vec3::new(0.2, 0.5, 0.9), 0.0, 1.0),
    ];
    // Turned towards the light (which comes from +x, +y, +z) by different amounts, so that the
    // quads see it at different angles and two catch its highlight.
    let turns = vec![
        Quat::from_rotation_x(-0.6),
        Quat::from_rotation_x(-0.45) * Quat::from_rotation_y(0.2),
        Quat::IDENTITY,
        Quat::from_rotation_x(-0.35) * Quat::from_rotation_y(0.15),
        Quat::from_rotation_y(-0.7),
    ];
    (materials, turns)
}

/// Renders the five quads and returns, per quad, the pixel errors against `reference`.
fn errors_against(
    gpu: &rigscope::render::Gpu,
    tone: ToneOptions,
    reference: impl Fn(&Material) -> Material,
) -> Vec<u8> {
    let (materials, turns) = materials_and_turns();
    let size = (600, 160);
    let primitives = (0..materials.len()).map(quad).collect();
    let (image, viewer) = render(gpu, scene(materials.clone(), &turns, primitives), tone, size);
    let mut errors = Vec::new();
    for (k, (material, turn)) in materials.iter().zip(&turns).enumerate() {
        let center = Vec3::new((k as f32 - 2.0) * SPACING, 0.0, 0.0);
        let normal = *turn * Vec3::Z;
        let m = reference(material);
        let surface = Surface {
            base: m.base_color.truncate().as_dvec3(),
            metallic: f64::from(m.metallic),
            roughness: f64::from(m.roughness),
            occlusion: 1.0,
            emissive: DVec3::ZERO,
            dielectric: pbr::DielectricLayer::of(&m.specular, DVec3::ONE, 1.0),
        };
        for pixel in quad_pixels(&viewer, size, center, *turn) {
            errors.push(pixel_error(&image, &viewer, pixel, (center, normal), &surface, tone));
        }
    }
    errors
}

#[test]
fn the_gpu_shades_quads_as_the_specification_brdf_says() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    // Linear output a stop down, so that no highlight clips and every term shows.
    for tone in [
        ToneOptions {
            curve: Tonemap::None,
            exposure: -1.0,
        },
        ToneOptions::default(),
    ] {
        let errors = errors_against(&gpu, tone, Material::clone);
        let worst = *errors.iter().max().unwrap();
        let off = errors.iter().filter(|&&e| e > 0).count();
        println!(
            "{tone:?}: {} pixels, {off} off by a level or more, largest {worst} levels",
            errors.len()
        );
        assert!(
            worst <= LEVELS,
            "{tone:?}: a pixel is {worst} sRGB levels from the reference"
        );
    }
}

#[test]
fn a_wrong_brdf_would_be_caught() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let tone = ToneOptions {
        curve: Tonemap::None,
        exposure: -1.0,
    };
    // The reference with the roughness a little off (α off by about 20%), or a metal taken for
    // a dielectric, disagrees with the GPU by much more than the tolerance.
    for (what, wrong) in [
        (
            "roughness × 1.1",
            (|m: &Material| Material {
                roughness: m.roughness * 1.1,
                ..m.clone()
            }) as fn(&Material) -> Material,
        ),
        ("metallic 0", |m: &Material| Material {
            metallic: 0.0,
            ..m.clone()
        }),
    ] {
        let errors = errors_against(&gpu, tone, wrong);
        let beyond = errors.iter().filter(|&&e| e > LEVELS).count();
        println!("{what}: {beyond} of {} pixels beyond {LEVELS} levels", errors.len());
        assert!(beyond > 10, "{what}: only {beyond} pixels beyond the tolerance");
    }
}

/// A 2×2 sRGB texture, texels in reading order.
fn texture(texels: [[u8; 4]; 4]) -> Texture {
    Texture::from_rgba8("2x2", 2, 2, texels.concat())
}

fn luminance(p: &image::Rgba<u8>) -> f32 {
    let c = p.0.map(gpu::linear);
    0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
}

#[test]
fn an_emissive_texture_darkens_a_white_emissive_factor_and_reads_its_own_set_and_transform() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    // DamagedHelmet's kind of material: emissive factor (1, 1, 1) with an emissive texture that
    // is dark almost everywhere. Quad 0 reads the texture on set 0 as is (its texels dark
    // greys); quad 1 reads set 1, constant (0.25, 0.25) — texel 0 — moved by (0.5, 0) onto
    // texel 1, dark green: read through set 0 or without the offset it would show otherwise.
    let dark = [24, 24, 24, 255];
    let green = [10, 60, 10, 255];
    let emissive = |set: u32, offset: Vec2| Material {
        base_color: Vec4::new(0.2, 0.2, 0.2, 1.0),
        metallic: 0.0,
        roughness: 0.6,
        emissive: Vec3::ONE,
        emissive_texture: Some(TextureRef {
            texture: 0,
            uv: UvTransform {
                set,
                offset,
                ..UvTransform::default()
            },
        }),
        ..Material::default()
    };
    let quad0 = quad(0);
    let mut quad1 = quad(1);
    quad1.uv_sets[1] = vec![Vec2::splat(0.25); 4];
    let mut rig = scene(
        vec![emissive(0, Vec2::ZERO), emissive(1, Vec2::new(0.5, 0.0))],
        &[Quat::IDENTITY; 2],
        vec![quad0, quad1],
    );
    rig.textures = vec![texture([dark, green, dark, dark])];
    let size = (320, 160);
    let tone = ToneOptions::default();
    let (image, viewer) = render(&gpu, rig, tone, size);
    let mut means = Vec::new();
    for k in 0..2 {
        let center = Vec3::new((k as f32 - 0.5) * SPACING, 0.0, 0.0);
        let pixels = quad_pixels(&viewer, size, center, Quat::IDENTITY);
        let mean = pixels
            .iter()
            .map(|&(x, y)| luminance(image.get_pixel(x, y)))
            .sum::<f32>()
            / pixels.len() as f32;
        means.push(mean);
        if k == 1 {
            let texel = DVec3::new(gpu::linear(10).into(), gpu::linear(60).into(), gpu::linear(10).into());
            let surface = Surface {
                base: DVec3::splat(0.2),
                metallic: 0.0,
                roughness: 0.6,
                occlusion: 1.0,
                emissive: texel,
                dielectric: pbr::DielectricLayer::PLAIN,
            };
            for pixel in pixels {
                let error = pixel_error(&image, &viewer, pixel, (center, Vec3::Z), &surface, tone);
                assert!(
                    error <= LEVELS,
                    "quad 1 at {pixel:?}: {error} levels from green emission"
                );
            }
        }
    }
    println!("mean luminance of the emissive quads: {means:?}");
    // With the texture ignored, emission (1, 1, 1) alone saturates every pixel to white
    // (luminance 1). A base colour of 0.2 lit by the light and the ambient, plus texels of at
    // most 0.04 linear, stays under 0.25 (measured about 0.1).
    for (k, mean) in means.iter().enumerate() {
        assert!(*mean < 0.25, "quad {k}: mean luminance {mean}, a white silhouette");
    }
}

/// A normal-mapped quad (tangent +X, a constant tilted normal in its map) turned by `turn` twice:
/// quad 0 as a node, quad 1 skinned whole to a joint that turns it about its centre. Both must
/// shade as the reference shades the map's normal in the turned tangent frame, on the GPU path
/// with each skinning method.
#[test]
fn a_normal_map_on_a_skinned_quad_turns_with_its_joint() {
    use rigscope::rig::{Influences, Skin};
    use rigscope::skin::{SkinningMethod, SkinningPath};
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let turn = Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-0.4) * Quat::from_rotation_z(0.5);
    let texel = [200u8, 150, 220, 255];
    let material = Material {
        normal_texture: Some(TextureRef {
            texture: 0,
            uv: UvTransform::default(),
        }),
        normal_scale: 0.8,
        ..lit(Vec3::new(0.7, 0.7, 0.7), 0.0, 0.35)
    };
    let with_tangents = |mut p: Primitive| {
        p.tangents = vec![Vec4::new(1.0, 0.0, 0.0, 1.0); 4];
        p
    };
    let rigid = with_tangents(quad(0));
    let mut skinned = with_tangents(quad(1));
    let x1 = 0.5 * SPACING;
    for p in &mut skinned.positions {
        p.x += x1;
    }
    skinned.influences = Some(Influences {
        sets: 1,
        joints: vec![[0; 4]; 4],
        weights: vec![[1.0, 0.0, 0.0, 0.0]; 4],
    });
    let mut rig = scene(
        vec![material.clone(), material.clone()],
        &[turn, Quat::IDENTITY],
        vec![rigid, skinned],
    );
    // Quad 1's node stays at x1 unturned (the mesh node's transform is ignored for a skinned
    // mesh); the joint at x1 turns it.
    rig.nodes.push(Node {
        name: "joint".into(),
        parent: None,
        rest: Trs {
            translation: Vec3::new(x1, 0.0, 0.0),
            rotation: turn,
            ..Trs::IDENTITY
        },
    });
    rig.skins = vec![Skin {
        name: "skin".into(),
        joints: vec![2],
        inverse_binds: vec![glam::Mat4::from_translation(Vec3::new(-x1, 0.0, 0.0))],
    }];
    rig.instances[1].skin = Some(0);
    rig.textures = vec![texture([texel; 4])];
    let size = (400, 200);
    let tone = ToneOptions {
        curve: Tonemap::None,
        exposure: -1.0,
    };
    // The map's normal in the turned tangent frame: T = turn·X, N = turn·Z, B = N × T.
    let m = DVec3::new(
        (2.0 * f64::from(texel[0]) / 255.0 - 1.0) * 0.8,
        (2.0 * f64::from(texel[1]) / 255.0 - 1.0) * 0.8,
        2.0 * f64::from(texel[2]) / 255.0 - 1.0,
    );
    let (t, n) = ((turn * Vec3::X).as_dvec3(), (turn * Vec3::Z).as_dvec3());
    let frame = |t: DVec3| (t * m.x + n.cross(t) * m.y + n * m.z).normalize();
    let mapped = frame(t);
    // What a renderer would show that left the map out, or kept the tangent unturned (the
    // bind pose's +X, made perpendicular to the turned normal): both far from the reference.
    let unturned = DVec3::X - n * n.x;
    let wrong = [
        ("no normal map", n),
        ("tangent not skinned", frame(unturned.normalize())),
    ];
    let surface = Surface {
        base: DVec3::splat(0.7),
        metallic: 0.0,
        roughness: 0.35,
        occlusion: 1.0,
        emissive: DVec3::ZERO,
        dielectric: pbr::DielectricLayer::PLAIN,
    };
    let methods = [SkinningMethod::Lbs, SkinningMethod::Dqs, SkinningMethod::Blended];
    for (path, method) in [SkinningPath::Gpu, SkinningPath::Cpu]
        .into_iter()
        .flat_map(|path| methods.map(|method| (path, method)))
    {
        let mut viewer = Viewer::new(rig.clone(), None);
        gpu::look_along_minus_z(&mut viewer, 6.0);
        viewer.view.options.tone = tone;
        viewer.view.options.light = Lighting::Directional;
        viewer.set_skinning(path, method);
        let image = render_view(&gpu, &mut viewer, size.0, size.1).unwrap();
        for k in 0..2 {
            let center = Vec3::new((k as f32 - 0.5) * SPACING, 0.0, 0.0);
            let mut worst = 0;
            let mut caught = [0; 2];
            for pixel in quad_pixels(&viewer, size, center, turn) {
                let plane = (center, turn * Vec3::Z);
                let error = pixel_error_with_normal(&image, &viewer, pixel, plane, mapped, &surface, tone);
                worst = worst.max(error);
                for (count, (_, normal)) in caught.iter_mut().zip(wrong) {
                    let error = pixel_error_with_normal(&image, &viewer, pixel, plane, normal, &surface, tone);
                    *count += usize::from(error > 4 * LEVELS);
                }
            }
            println!("{path:?} {method:?} quad {k}: pixels far off the wrong references: {caught:?}");
            for (count, (what, _)) in caught.iter().zip(wrong) {
                assert!(
                    *count > 32,
                    "{path:?} {method:?} quad {k}: '{what}' is within reach of the image ({count} pixels off)"
                );
            }
            println!("{path:?} {method:?} quad {k}: largest error {worst} levels");
            assert!(
                worst <= LEVELS,
                "{path:?} {method:?} quad {k}: {worst} levels from the normal-mapped reference"
            );
        }
    }
}

/// [`pixel_error`] with the shading normal `shading` in place of the plane's normal.
fn pixel_error_with_normal(
    image: &image::RgbaImage,
    viewer: &Viewer,
    (px, py): (u32, u32),
    (center, normal): (Vec3, Vec3),
    shading: DVec3,
    surface: &Surface,
    tone: ToneOptions,
) -> u8 {
    let size = (image.width(), image.height());
    let p = surface_point(viewer, size, (px, py), center, normal);
    let v = (viewer.view.camera.eye().as_dvec3() - p).normalize();
    let l = -LIGHT_DIRECTION.as_dvec3().normalize();
    let shown = pbr::tone_map(tone, pbr::radiance(surface, shading, v, l));
    let got = image.get_pixel(px, py).0;
    (0..3).map(|c| got[c].abs_diff(srgb8(shown[c] as f32))).max().unwrap()
}

#[test]
fn the_normals_view_shows_the_tangent_frame_a_normal_map_reads() {
    use rigscope::render::{SurfaceAxis, ViewMode, views::NO_VALUE_COLOR};
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let turn = Quat::from_rotation_y(0.5) * Quat::from_rotation_x(-0.3) * Quat::from_rotation_z(0.9);
    let mapped = Material {
        normal_texture: Some(TextureRef {
            texture: 0,
            uv: UvTransform::default(),
        }),
        ..lit(Vec3::splat(0.7), 0.0, 0.5)
    };
    let with_tangent = |w: f32| {
        let mut p = quad(0);
        p.tangents = vec![Vec4::new(1.0, 0.0, 0.0, w); 4];
        p
    };
    let mut plain = quad(1);
    plain.tangents = vec![Vec4::new(1.0, 0.0, 0.0, 1.0); 4];
    let mut rig = scene(
        vec![mapped, lit(Vec3::splat(0.7), 0.0, 0.5), Material::default()],
        &[turn; 3],
        vec![with_tangent(1.0), plain, with_tangent(-1.0)],
    );
    rig.meshes[2].primitives[0].material = Some(0);
    rig.textures = vec![texture([[128, 128, 255, 255]; 4])];
    let size = (480, 200);
    // Quad 0: T = turn·X and B = N × T = turn·Y; quad 2 the same tangent with the bitangent's
    // sign negative; quad 1 reads no normal map, so it has no frame to show.
    let (t, b) = (turn * Vec3::X, turn * Vec3::Y);
    let no_value = Vec3::from(NO_VALUE_COLOR) * 2.0 - 1.0;
    for (axis, expected) in [
        (SurfaceAxis::Normal, [turn * Vec3::Z; 3]),
        (SurfaceAxis::Tangent, [t, no_value, t]),
        (SurfaceAxis::Bitangent, [b, no_value, -b]),
    ] {
        let mut viewer = Viewer::new(rig.clone(), None);
        gpu::look_along_minus_z(&mut viewer, 6.0);
        viewer.view.options.mode = ViewMode::Normals;
        viewer.view.options.surface_axis = axis;
        let image = render_view(&gpu, &mut viewer, size.0, size.1).unwrap();
        for (k, axis_value) in expected.iter().enumerate() {
            let center = Vec3::new((k as f32 - 1.0) * SPACING, 0.0, 0.0);
            let want = (*axis_value * 0.5 + Vec3::splat(0.5)).to_array().map(srgb8);
            let pixels = quad_pixels(&viewer, size, center, turn);
            let worst = (pixels.iter())
                .map(|&(x, y)| {
                    let got = image.get_pixel(x, y).0;
                    (0..3).map(|c| got[c].abs_diff(want[c])).max().unwrap()
                })
                .max()
                .unwrap();
            assert!(worst <= 2, "{axis:?} quad {k}: {worst} levels from {want:?}");
        }
    }
}

/// KHR_materials_specular and KHR_materials_ior: quads whose dielectric layer is switched off,
/// tinted, given another index, and read from a texture (colour in RGB, sRGB; strength in alpha)
/// shade as the f64 reference of the extension's Fresnel says, and not as the plain dielectric.
#[test]
fn specular_strength_colour_and_index_shade_as_khr_materials_specular_says() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let texel = [200, 120, 60, 128];
    let with = |base: Vec3, roughness: f32, specular: Specular| Material {
        specular,
        ..lit(base, 0.0, roughness)
    };
    let whole = TextureRef {
        texture: 0,
        uv: UvTransform::default(),
    };
    let materials = vec![
        with(
            Vec3::new(0.8, 0.3, 0.2),
            0.3,
            Specular {
                factor: 0.0,
                ..Specular::default()
            },
        ),
        with(
            Vec3::new(0.2, 0.5, 0.9),
            0.25,
            Specular {
                color: Vec3::new(1.0, 0.3, 0.3),
                ior: 1.45,
                ..Specular::default()
            },
        ),
        with(
            Vec3::new(0.6, 0.6, 0.65),
            0.4,
            Specular {
                color: Vec3::new(0.5, 1.0, 1.0),
                ior: 2.5,
                ..Specular::default()
            },
        ),
        with(
            Vec3::new(0.9, 0.9, 0.9),
            0.2,
            Specular {
                factor: 0.9,
                texture: Some(whole),
                color: Vec3::new(1.0, 1.0, 0.8),
                color_texture: Some(whole),
                ior: 1.6,
            },
        ),
    ];
    let turns = materials_and_turns().1[..materials.len()].to_vec();
    let primitives = (0..materials.len()).map(quad).collect();
    let mut rig = scene(materials.clone(), &turns, primitives);
    rig.textures = vec![texture([texel; 4])];
    let size = (600, 160);
    let tone = ToneOptions {
        curve: Tonemap::None,
        exposure: -1.0,
    };
    let (image, viewer) = render(&gpu, rig, tone, size);
    let texture_color = DVec3::new(
        gpu::linear(texel[0]).into(),
        gpu::linear(texel[1]).into(),
        gpu::linear(texel[2]).into(),
    );
    let texture_strength = f64::from(texel[3]) / 255.0;
    let n = materials.len() as f32;
    let (mut worst, mut plain_beyond) = (0, 0);
    for (k, (m, turn)) in materials.iter().zip(&turns).enumerate() {
        let center = Vec3::new((k as f32 - (n - 1.0) / 2.0) * SPACING, 0.0, 0.0);
        let (color, strength) = match m.specular.texture {
            Some(_) => (texture_color, texture_strength),
            None => (DVec3::ONE, 1.0),
        };
        let surface = |dielectric| Surface {
            base: m.base_color.truncate().as_dvec3(),
            metallic: 0.0,
            roughness: f64::from(m.roughness),
            occlusion: 1.0,
            emissive: DVec3::ZERO,
            dielectric,
        };
        let layer = pbr::DielectricLayer::of(&m.specular, color, strength);
        for pixel in quad_pixels(&viewer, size, center, *turn) {
            let at = (center, *turn * Vec3::Z);
            let error = pixel_error(&image, &viewer, pixel, at, &surface(layer), tone);
            worst = worst.max(error);
            plain_beyond += usize::from(
                pixel_error(&image, &viewer, pixel, at, &surface(pbr::DielectricLayer::PLAIN), tone) > LEVELS,
            );
        }
    }
    println!("worst {worst} levels; the plain dielectric is off on {plain_beyond} pixels");
    assert!(worst <= LEVELS, "a pixel is {worst} sRGB levels from the reference");
    assert!(
        plain_beyond > 64,
        "only {plain_beyond} pixels tell the layer from the plain one"
    );
}
