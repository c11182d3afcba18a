//! What materials and transforms change on screen, on quads whose colors are known: mirrored
//! nodes and mirroring joints (a negative determinant flips the winding), alpha MASK and BLEND,
//! unlit, emission and vertex colors. Rendered offscreen and read back pixel by pixel.

use crate::common::gpu;

use glam::{Mat4, Vec3, Vec4};
use gpu::{linear, srgb8};
use rigscope::rig::{AlphaMode, Influences, Material, Mesh, MeshInstance, Node, Primitive, Rig, Skin, Trs};
use rigscope::screenshot::render_view;
use rigscope::skin::{SkinningMethod, SkinningPath};
use rigscope::viewer::Viewer;

const SPACING: f32 = 1.2;
const QUADS: usize = 6;

/// A single-sided quad of side 1 centred on the origin, facing +Z (counter-clockwise from +Z).
fn quad(colors: Vec<Vec4>, material: usize, influences: Option<Influences>) -> Primitive {
    Primitive {
        colors,
        influences,
        ..gpu::unit_quad(material)
    }
}

/// Quad 5: its bind pose at `x`, where its joint is; the joint's world mirrors it in place.
fn skinned_quad(x: f32, influences: Influences) -> Primitive {
    let mut primitive = quad(vec![], 5, Some(influences));
    for p in &mut primitive.positions {
        p.x += x;
    }
    primitive
}

fn unlit(base_color: Vec4) -> Material {
    Material {
        base_color,
        unlit: true,
        ..Material::default()
    }
}

fn node(name: &str, x: f32, scale: Vec3) -> Node {
    Node {
        name: name.into(),
        parent: None,
        rest: Trs {
            translation: Vec3::new(x, 0.0, 0.0),
            scale,
            ..Trs::IDENTITY
        },
    }
}

/// Quad k at x = (k − 2.5) × SPACING:
/// 0. unlit red;
/// 1. unlit green under a node mirrored in x;
/// 2. unlit blue with alpha 0.3, MASK at 0.5 (discarded);
/// 3. unlit white with alpha 0.5, BLEND (half over the background);
/// 4. unlit white × COLOR_0 (0.2, 0.4, 0) + emission (0, 0, 0.5);
/// 5. unlit yellow, skinned to a joint mirrored in x.
fn scene() -> Rig {
    let x = |k: usize| (k as f32 - 2.5) * SPACING;
    let mirror = Vec3::new(-1.0, 1.0, 1.0);
    let mut nodes: Vec<Node> = (0..5)
        .map(|k| node(&format!("quad {k}"), x(k), if k == 1 { mirror } else { Vec3::ONE }))
        .collect();
    nodes.push(node("skinned quad", 0.0, Vec3::ONE));
    nodes.push(node("mirroring joint", x(5), mirror));
    let influences = Influences {
        sets: 1,
        joints: vec![[0; 4]; 4],
        weights: vec![[1.0, 0.0, 0.0, 0.0]; 4],
    };
    let meshes = vec![
        quad(vec![], 0, None),
        quad(vec![], 1, None),
        quad(vec![], 2, None),
        quad(vec![], 3, None),
        quad(vec![Vec4::new(0.2, 0.4, 0.0, 1.0); 4], 4, None),
        skinned_quad(x(5), influences),
    ]
    .into_iter()
    .enumerate()
    .map(|(k, p)| Mesh {
        name: format!("quad {k}"),
        primitives: vec![p],
    })
    .collect();
    Rig {
        name: "materials".into(),
        nodes,
        skins: vec![Skin {
            name: "skin".into(),
            joints: vec![6],
            inverse_binds: vec![Mat4::from_translation(Vec3::new(-x(5), 0.0, 0.0))],
        }],
        meshes,
        instances: (0..QUADS)
            .map(|k| MeshInstance {
                node: k,
                mesh: k,
                skin: (k == 5).then_some(0),
            })
            .collect(),
        materials: vec![
            unlit(Vec4::new(1.0, 0.0, 0.0, 1.0)),
            unlit(Vec4::new(0.0, 1.0, 0.0, 1.0)),
            Material {
                alpha_mode: AlphaMode::Mask,
                alpha_cutoff: 0.5,
                ..unlit(Vec4::new(0.0, 0.0, 1.0, 0.3))
            },
            Material {
                alpha_mode: AlphaMode::Blend,
                ..unlit(Vec4::new(1.0, 1.0, 1.0, 0.5))
            },
            Material {
                emissive: Vec3::new(0.0, 0.0, 0.5),
                ..unlit(Vec4::ONE)
            },
            unlit(Vec4::new(1.0, 1.0, 0.0, 1.0)),
        ],
        ..Rig::default()
    }
}

#[test]
fn mirrored_masked_blended_unlit_emissive_and_vertex_colored_quads_look_as_their_materials_say() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = Viewer::new(scene(), None);
    gpu::look_along_minus_z(&mut viewer, 9.0);
    let (width, height) = (480, 120);
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        let image = render_view(&gpu, &mut viewer, width, height).unwrap();
        let background = image.get_pixel(0, 0).0;
        let vp = viewer.view.camera.view_projection(width as f32 / height as f32);
        let pixel = |k: usize| {
            let ndc = vp.project_point3(Vec3::new((k as f32 - 2.5) * SPACING, 0.0, 0.0));
            let (x, y) = ((ndc.x * 0.5 + 0.5) * width as f32, (0.5 - ndc.y * 0.5) * height as f32);
            image.get_pixel(x as u32, y as u32).0
        };
        let blend = |c: usize| srgb8(0.5 * linear(background[c]) + 0.5);
        let expected: [[u8; 3]; QUADS] = [
            [255, 0, 0],
            [0, 255, 0],
            [background[0], background[1], background[2]],
            [blend(0), blend(1), blend(2)],
            [srgb8(0.2), srgb8(0.4), srgb8(0.5)],
            [255, 255, 0],
        ];
        for (k, want) in expected.iter().enumerate() {
            let got = pixel(k);
            let off = (0..3).map(|c| got[c].abs_diff(want[c])).max().unwrap();
            assert!(off <= 3, "{path:?} quad {k}: pixel {got:?}, expected {want:?}");
            assert_eq!(got[3], 255, "{path:?} quad {k}: the image stays opaque");
        }
    }
}
