//! The skinning debugger on synthetic rigs whose answers are known: joints bent by hand,
//! dual quaternions against linear blend on a twist, and the colors of every debug view.

use crate::common::gpu;

use glam::{DMat4, DQuat, Mat4, Quat, Vec2, Vec3, Vec4};
use gpu::srgb8;
use rigscope::anim::JointOverride;
use rigscope::draw::ViewRenderer;
use rigscope::render::scene::LIGHT_DIRECTION;
use rigscope::render::views::{
    FLIPPED_COLOR, SYMMETRY_UNCHECKED, SYMMETRY_UNMATCHED, ZERO_WEIGHT_COLOR, deformation_color, heat, influence_color,
    joint_color, symmetry_color, weight_error_color,
};
use rigscope::render::{DeformationMeasure, Offscreen, ViewMode};
use rigscope::rig::{
    Channel, Clip, Influences, Interpolation, Material, Mesh, MeshInstance, Node, Primitive, Property, Rig, Skin, Trs,
};
use rigscope::skin::{SkinnedPose, SkinningMethod, SkinningPath};
use rigscope::viewer::Viewer;
use strum::VariantArray;

fn node(name: &str, parent: Option<usize>, translation: Vec3) -> Node {
    Node {
        name: name.into(),
        parent,
        rest: Trs {
            translation,
            ..Trs::IDENTITY
        },
    }
}

/// A rig with a mesh node, a root joint at the origin and a child joint at `tip`, skinning
/// `primitive`.
pub(super) fn two_joint_rig(tip: Vec3, primitive: Primitive, clips: Vec<Clip>) -> Rig {
    Rig {
        name: "synthetic".into(),
        nodes: vec![
            node("mesh", None, Vec3::ZERO),
            node("root", None, Vec3::ZERO),
            node("tip", Some(1), tip),
        ],
        skins: vec![Skin {
            name: "skin".into(),
            joints: vec![1, 2],
            inverse_binds: vec![Mat4::IDENTITY, Mat4::from_translation(-tip)],
        }],
        meshes: vec![Mesh {
            name: "mesh".into(),
            primitives: vec![primitive],
        }],
        instances: vec![MeshInstance {
            node: 0,
            mesh: 0,
            skin: Some(0),
        }],
        materials: vec![Material {
            double_sided: true,
            ..Material::default()
        }],
        clips,
        ..Rig::default()
    }
}

pub(super) fn primitive(positions: Vec<Vec3>, weights: Vec<[f32; 4]>, indices: Vec<u32>) -> Primitive {
    let n = positions.len();
    Primitive {
        normals: vec![Vec3::Z; n],
        uvs: vec![Vec2::ZERO; n],
        uv_sets: Default::default(),
        tangents: Vec::new(),
        influences: Some(Influences {
            sets: 1,
            joints: vec![[0, 1, 0, 0]; n],
            weights,
        }),
        indices,
        material: Some(0),
        colors: Vec::new(),
        positions,
    }
}

#[test]
fn bending_a_joint_moves_its_vertices_as_the_matrices_predict_and_leaves_others() {
    let tip = Vec3::new(0.0, 1.0, 0.0);
    let clip_angle = 45f64.to_radians();
    // A one-key clip turning the tip joint about X, so the bend lands on an animated pose.
    let clip = Clip {
        name: "turn".into(),
        duration: 0.0,
        channels: vec![Channel {
            node: 2,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: vec![0.0],
            values: vec![Vec4::from(Quat::from_rotation_x(clip_angle as f32))],
        }],
        source: None,
    };
    let on_tip = Vec3::new(0.5, 1.5, 0.2);
    let on_root = Vec3::new(0.5, 0.2, 0.0);
    let rig = two_joint_rig(
        tip,
        primitive(
            vec![on_tip, on_root],
            vec![[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]],
            vec![],
        ),
        vec![clip],
    );
    let mut viewer = Viewer::new(rig, None);
    viewer.select_clip(Some(0));
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    let bend = Vec3::new(0.0, 0.0, 30.0);
    viewer.set_override(2, JointOverride::from_euler_degrees(bend));

    // f64: tip world = T(tip) · Rx(clip) · Rz(bend); vertex = world · inverseBind · p.
    let world = DMat4::from_translation(tip.as_dvec3())
        * DMat4::from_quat(DQuat::from_rotation_x(clip_angle))
        * DMat4::from_quat(DQuat::from_rotation_z(30f64.to_radians()));
    let expected = (world * DMat4::from_translation(-tip.as_dvec3())).transform_point3(on_tip.as_dvec3());
    let out = &viewer.skin_on_cpu().meshes[0][0];
    assert!(
        (out.positions[0].as_dvec3() - expected).length() < 1e-5,
        "{} vs {expected}",
        out.positions[0]
    );
    assert_eq!(
        out.positions[1], on_root,
        "a vertex with no weight on the bent joint stays put"
    );

    // The bend survives scrubbing, clip changes and a switch to the GPU path's data.
    viewer.seek(0.0);
    viewer.select_clip(None);
    viewer.select_clip(Some(0));
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    assert!((viewer.skin_on_cpu().meshes[0][0].positions[0].as_dvec3() - expected).length() < 1e-5);
    viewer.reset_overrides();
    let unbent = (DMat4::from_translation(tip.as_dvec3())
        * DMat4::from_quat(DQuat::from_rotation_x(clip_angle))
        * DMat4::from_translation(-tip.as_dvec3()))
    .transform_point3(on_tip.as_dvec3());
    assert!((viewer.skin_on_cpu().meshes[0][0].positions[0].as_dvec3() - unbent).length() < 1e-5);
}

/// A cylinder of radius 0.5 along Y from 0 to 2, weights blending from the root joint to the
/// tip joint (at y = 1) between y = 0.5 and y = 1.5.
fn cylinder() -> Primitive {
    let (sides, rings) = (24, 21);
    let mut positions = Vec::new();
    let mut weights = Vec::new();
    for ring in 0..rings {
        let y = 2.0 * ring as f32 / (rings - 1) as f32;
        let t = (y - 0.5).clamp(0.0, 1.0);
        let w = t * t * (3.0 - 2.0 * t);
        for side in 0..sides {
            let a = std::f32::consts::TAU * side as f32 / sides as f32;
            positions.push(Vec3::new(0.5 * a.cos(), y, 0.5 * a.sin()));
            weights.push([1.0 - w, w, 0.0, 0.0]);
        }
    }
    primitive(positions, weights, vec![])
}

fn mid_radius_ratio(positions: &[Vec3]) -> f32 {
    let ring: Vec<&Vec3> = positions.iter().filter(|p| (p.y - 1.0).abs() < 1e-4).collect();
    assert_eq!(ring.len(), 24);
    ring.iter().map(|p| Vec2::new(p.x, p.z).length()).sum::<f32>() / ring.len() as f32 / 0.5
}

#[test]
fn dual_quaternions_keep_the_volume_that_linear_blending_loses_on_a_twist() {
    let mut viewer = Viewer::new(two_joint_rig(Vec3::Y, cylinder(), vec![]), None);
    viewer.set_override(2, JointOverride::from_euler_degrees(Vec3::new(0.0, 180.0, 0.0)));
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    let lbs = mid_radius_ratio(&viewer.skin_on_cpu().meshes[0][0].positions);
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Dqs);
    let dqs = mid_radius_ratio(&viewer.skin_on_cpu().meshes[0][0].positions);
    println!("mid-section radius ratio after a 180° twist: LBS {lbs:.4}, DQS {dqs:.4}");
    assert!(lbs < 0.1, "LBS should collapse the mid-section, radius ratio {lbs}");
    assert!(
        (dqs - 1.0).abs() < 0.02,
        "DQS should keep the radius within 2%, ratio {dqs}"
    );
}

/// Three separate quads facing +Z: weighted fully to the root joint, half and half, and fully
/// to the tip joint.
fn three_quads() -> Primitive {
    quads_in_a_row([[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
}

/// Three separate quads facing +Z side by side along X, quad `k`'s four vertices weighted
/// `weights[k]` (root joint first, then the tip).
pub(super) fn quads_in_a_row(quad_weights: [[f32; 4]; 3]) -> Primitive {
    let mut positions = Vec::new();
    let mut weights = Vec::new();
    let mut indices = Vec::new();
    for (k, w) in quad_weights.into_iter().enumerate() {
        let x = -1.5 + k as f32 * 1.05;
        let base = positions.len() as u32;
        positions.extend([
            Vec3::new(x, -0.5, 0.0),
            Vec3::new(x + 0.95, -0.5, 0.0),
            Vec3::new(x + 0.95, 0.5, 0.0),
            Vec3::new(x, 0.5, 0.0),
        ]);
        weights.extend([w; 4]);
        indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    primitive(positions, weights, indices)
}

#[test]
fn every_view_colors_known_weights_as_its_legend_says_on_both_paths() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let rig = two_joint_rig(Vec3::ZERO, three_quads(), vec![]);
    let mut viewer = Viewer::new(rig, None);
    gpu::look_along_minus_z(&mut viewer, 6.0);
    viewer.view.selected_joint = Some(1);
    let target = Offscreen::new(&gpu, 300, 120).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    let shade = facing_shade;
    let mix = |a: [f32; 3], b: [f32; 3]| std::array::from_fn(|i| 0.5 * a[i] + 0.5 * b[i]);
    let expectations: [(ViewMode, [[f32; 3]; 3]); 5] = [
        (
            ViewMode::Weights,
            [shade(heat(1.0)), shade(heat(0.5)), shade(ZERO_WEIGHT_COLOR)],
        ),
        (
            ViewMode::Joints,
            [
                shade(joint_color(0)),
                shade(mix(joint_color(0), joint_color(1))),
                shade(joint_color(1)),
            ],
        ),
        (
            ViewMode::Influences,
            [
                shade(influence_color(1)),
                shade(influence_color(2)),
                shade(influence_color(1)),
            ],
        ),
        (ViewMode::WeightError, [shade(weight_error_color(0.0)); 3]),
        (ViewMode::Normals, [[0.5, 0.5, 1.0]; 3]),
    ];
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        for (mode, colors) in &expectations {
            viewer.view.options.mode = *mode;
            let image = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
            let vp = viewer.view.camera.view_projection(target.aspect());
            for (k, expected) in colors.iter().enumerate() {
                let centre = Vec3::new(-1.5 + k as f32 * 1.05 + 0.475, 0.0, 0.0);
                let what = format!("{path:?} {mode:?} quad {k}");
                assert_pixel_at(&image, vp.project_point3(centre), *expected, &what);
            }
        }
    }
}

/// Asserts that the pixel at `ndc` (normalized device coordinates) has the linear color
/// `expected`, within 3 levels of 255 in sRGB.
pub(super) fn assert_pixel_at(image: &image::RgbaImage, ndc: Vec3, expected: [f32; 3], what: &str) {
    let (x, y) = (
        ((ndc.x * 0.5 + 0.5) * image.width() as f32) as u32,
        ((0.5 - ndc.y * 0.5) * image.height() as f32) as u32,
    );
    let pixel = image.get_pixel(x, y).0;
    let want = expected.map(srgb8);
    let off = (0..3).map(|c| pixel[c].abs_diff(want[c])).max().unwrap();
    assert!(off <= 3, "{what}: pixel {pixel:?}, expected {want:?}");
}

/// The shading debug colors get on a quad facing the camera: 0.8 + 0.2·diffuse.
pub(super) fn facing_shade(c: [f32; 3]) -> [f32; 3] {
    let diffuse = Vec3::Z.dot(-LIGHT_DIRECTION.normalize()).max(0.0);
    c.map(|v| v * (0.8 + 0.2 * diffuse))
}

/// [`three_quads`] on a two-joint rig whose tip joint, at `tip`, scales by `keys` (time, scale)
/// in its one clip, playing, in the deformation view, seen along −Z.
fn tip_scaled_quads(tip: Vec3, interpolation: Interpolation, keys: &[(f32, Vec3)]) -> Viewer {
    let clip = Clip {
        name: "scale".into(),
        duration: 1.0,
        channels: vec![Channel {
            node: 2,
            property: Property::Scale,
            interpolation,
            times: keys.iter().map(|(t, _)| *t).collect(),
            values: keys.iter().map(|(_, s)| s.extend(0.0)).collect(),
        }],
        source: None,
    };
    let mut viewer = Viewer::new(two_joint_rig(tip, three_quads(), vec![clip]), None);
    gpu::look_along_minus_z(&mut viewer, 6.0);
    viewer.view.options.mode = ViewMode::Deformation;
    viewer.select_clip(Some(0));
    viewer
}

#[test]
fn the_deformation_view_colors_each_quad_by_its_area_ratio_and_stretch_on_both_paths() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    // The tip joint sits right of the quads and scales by (0.5, 1.25, 1) at t = 0 and by
    // (1, 2, 1) at t = 1. The quad weighted fully to it takes that scale; the half-and-half quad
    // the mean of it and the identity: diag(0.75, 1.125) and diag(1, 1.5).
    let tip = Vec3::new(1.2, 0.0, 0.0);
    let mut viewer = tip_scaled_quads(
        tip,
        Interpolation::Linear,
        &[(0.0, Vec3::new(0.5, 1.25, 1.0)), (1.0, Vec3::new(1.0, 2.0, 1.0))],
    );
    let target = Offscreen::new(&gpu, 300, 160).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    // Per quad (root, half, tip): posed x of its centre, area ratio, and the principal stretch
    // farther from 1 (the smaller one when their product is under 1).
    let scaled_x = |x: f32, sx: f32, weight: f32| x + weight * (sx - 1.0) * (x - tip.x);
    let centres = [-1.025f32, 0.025, 1.075];
    let cases = [
        (0.0, 0.5, [(1.0, 1.0), (0.75 * 1.125, 0.75), (0.5 * 1.25, 0.5)]),
        (1.0, 1.0, [(1.0, 1.0), (1.5, 1.5), (2.0, 2.0)]),
    ];
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        for (time, sx, ratios) in cases {
            viewer.seek(time);
            for &measure in DeformationMeasure::VARIANTS {
                viewer.view.options.deformation = measure;
                let image = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
                let vp = viewer.view.camera.view_projection(target.aspect());
                for (k, (area, stretch)) in ratios.into_iter().enumerate() {
                    let ratio = if measure == DeformationMeasure::Area {
                        area
                    } else {
                        stretch
                    };
                    let centre = Vec3::new(scaled_x(centres[k], sx, k as f32 * 0.5), 0.0, 0.0);
                    let what = format!("{path:?} t={time} {measure:?} quad {k} (ratio {ratio})");
                    assert_pixel_at(
                        &image,
                        vp.project_point3(centre),
                        facing_shade(deformation_color(ratio)),
                        &what,
                    );
                }
            }
        }
    }
}

/// Joints: a root on the mirror plane x = 0, LeftArm at x = -1, RightArm at x = +1. Quads
/// (left to right, centred at x = -2, -1, 0 and 1): one with no mirror image, LeftArm's, the
/// root's across the plane, and RightArm's mirror of LeftArm's with 0.2 of its weight moved to
/// LeftArm.
fn mirrored_quads_rig() -> Rig {
    let quad = |x: f32| [[x, -0.45], [x + 0.9, -0.45], [x + 0.9, 0.45], [x, 0.45]].map(|[x, y]| Vec3::new(x, y, 0.0));
    let (lone, left, middle, right) = (quad(-2.45), quad(-1.45), quad(-0.45), quad(0.55));
    let weights = [
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 0.2, 0.8, 0.0],
    ];
    let positions: Vec<Vec3> = [lone, left, middle, right].concat();
    let indices = (0..4u32).flat_map(|q| [0, 1, 2, 0, 2, 3].map(|i| q * 4 + i)).collect();
    let mut primitive = primitive(positions, weights.iter().flat_map(|w| [*w; 4]).collect(), indices);
    primitive.influences.as_mut().unwrap().joints = vec![[0, 1, 2, 0]; 16];
    let mut rig = two_joint_rig(Vec3::ZERO, primitive, vec![]);
    rig.nodes = vec![
        node("mesh", None, Vec3::ZERO),
        node("root", None, Vec3::ZERO),
        node("LeftArm", Some(1), Vec3::new(-1.0, 0.0, 0.0)),
        node("RightArm", Some(1), Vec3::new(1.0, 0.0, 0.0)),
    ];
    rig.skins[0].joints = vec![1, 2, 3];
    rig.skins[0].inverse_binds = vec![
        Mat4::IDENTITY,
        Mat4::from_translation(Vec3::X),
        Mat4::from_translation(-Vec3::X),
    ];
    rig
}

#[test]
fn the_deformation_view_marks_triangles_turned_inside_out() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    // The tip joint mirrors what it carries across x = 1.2 (scale -1 in x): the quad weighted
    // fully to it keeps its area but turns inside out; the root's quad stays as bound.
    let mut viewer = tip_scaled_quads(
        Vec3::new(1.2, 0.0, 0.0),
        Interpolation::Step,
        &[(0.0, Vec3::new(-1.0, 1.0, 1.0))],
    );
    let target = Offscreen::new(&gpu, 300, 160).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    let root_quad = Vec3::new(-1.025, 0.0, 0.0);
    // The tip quad's centre, x = 1.075, mirrored across x = 1.2.
    let tip_quad = Vec3::new(1.325, 0.0, 0.0);
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        for &measure in DeformationMeasure::VARIANTS {
            viewer.view.options.deformation = measure;
            let image = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
            let vp = viewer.view.camera.view_projection(target.aspect());
            let what = format!("{path:?} {measure:?}");
            assert_pixel_at(
                &image,
                vp.project_point3(root_quad),
                facing_shade(deformation_color(1.0)),
                &format!("{what}: the root's quad"),
            );
            // Drawn although it faces away, in the flipped color (shaded on either side).
            let ndc = vp.project_point3(tip_quad);
            let (x, y) = (
                ((ndc.x * 0.5 + 0.5) * image.width() as f32) as u32,
                ((0.5 - ndc.y * 0.5) * image.height() as f32) as u32,
            );
            let [r, g, b, _] = image.get_pixel(x, y).0;
            let darkest = srgb8(0.8 * FLIPPED_COLOR[0]);
            assert!(
                g <= 3 && r.abs_diff(b) <= 3 && r >= darkest,
                "{what}: the mirrored quad is {:?}, not magenta",
                [r, g, b]
            );
        }
    }
}

#[test]
fn the_symmetry_view_colors_mirror_differences_and_vertices_without_a_mirror() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = Viewer::new(mirrored_quads_rig(), None);
    gpu::look_along_minus_z(&mut viewer, 6.0);
    viewer.view.options.mode = ViewMode::Symmetry;
    let target = Offscreen::new(&gpu, 300, 120).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    // 0.2 of the weight on the other joint: half of |0.8 − 1| + |0.2 − 0|.
    let expected = [
        symmetry_color(SYMMETRY_UNMATCHED),
        symmetry_color(0.2),
        symmetry_color(0.0),
        symmetry_color(0.2),
    ];
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        let image = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
        let vp = viewer.view.camera.view_projection(target.aspect());
        for (k, color) in expected.into_iter().enumerate() {
            let centre = Vec3::new(-2.0 + k as f32, 0.0, 0.0);
            assert_pixel_at(
                &image,
                vp.project_point3(centre),
                facing_shade(color),
                &format!("{path:?} quad {k}"),
            );
        }
    }
    let summary = viewer.symmetry_summary().expect("the view ran the check");
    assert!(
        summary.starts_with("1 joint pairs; 8 of 16 vertices differ"),
        "{summary}"
    );
    assert!(summary.ends_with("4 have no mirror vertex."), "{summary}");
}

/// [`mirrored_quads_rig`] where quad 0 (fully on LeftArm, skin joint 1) gives 0.7 to the root
/// (skin joint 0) and quad 3 moves away, leaving its vertices without a match.
fn reweighted_quads_rig() -> Rig {
    let mut rig = mirrored_quads_rig();
    rig.meshes[0].primitives[0].influences.as_mut().unwrap().weights[..4].fill([0.7, 0.3, 0.0, 0.0]);
    for p in &mut rig.meshes[0].primitives[0].positions[12..16] {
        p.y += 5.0;
    }
    rig
}

#[test]
fn the_weight_difference_view_colors_each_vertex_by_its_difference_from_the_other_file() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = Viewer::new(mirrored_quads_rig(), None);
    gpu::look_along_minus_z(&mut viewer, 6.0);
    let other = reweighted_quads_rig();
    viewer.compare_with(other, None, rigscope::viewer::CompareLayout::Side);
    viewer.view.options.mode = ViewMode::WeightDifference;
    let target = Offscreen::new(&gpu, 300, 120).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        // The active side alone: its view, not the side-by-side image.
        let image = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
        let diff = viewer
            .comparison()
            .and_then(|c| c.diff())
            .expect("the view compared the files");
        let values = diff.weights.per_vertex.of(0, 0).expect("values of the one primitive");
        // By hand: ½(|0 − 0.7| + |1 − 0.3|) on quad 0, nothing changed on quads 1 and 2. Of
        // quad 3 the vertices at x = 1.45 have no match; those at x = 0.55 are within the match
        // tolerance of the other file's quad 2 at x = 0.45 (all root, against LeftArm 0.2 and
        // RightArm 0.8): ½(1 + 0.2 + 0.8).
        let by_hand = [
            [0.7; 4],
            [0.0; 4],
            [0.0; 4],
            [1.0, SYMMETRY_UNMATCHED, SYMMETRY_UNMATCHED, 1.0],
        ];
        for (v, (&value, expected)) in values.iter().zip(by_hand.as_flattened()).enumerate() {
            assert!(
                (value - expected).abs() < 1e-6,
                "vertex {v}: {value} instead of {expected}"
            );
        }
        assert_eq!(diff.weights.max_difference, 1.0);
        let vp = viewer.view.camera.view_projection(target.aspect());
        // Quad 3 near its unmatched edge, where the interpolated value is below the marker's
        // half-way point.
        let points = [
            (-2.0, values[0]),
            (-1.0, values[4]),
            (0.0, values[8]),
            (1.35, values[13]),
        ];
        for (k, (x, value)) in points.into_iter().enumerate() {
            assert_pixel_at(
                &image,
                vp.project_point3(Vec3::new(x, 0.0, 0.0)),
                facing_shade(symmetry_color(value)),
                &format!("{path:?} quad {k}"),
            );
        }
    }
}

#[test]
fn the_other_side_of_a_comparison_is_colored_by_its_difference_from_the_active_file() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let active = mirrored_quads_rig();
    let other = reweighted_quads_rig();
    // Compare's numbers with the files the other way round.
    let reverse = rigscope::compare::compare(&other, &active, &rigscope::compare::Thresholds::default());
    let mut viewer = Viewer::new(active, None);
    gpu::look_along_minus_z(&mut viewer, 6.0);
    viewer.compare_with(other, None, rigscope::viewer::CompareLayout::Side);
    viewer.view.options.mode = ViewMode::WeightDifference;
    let target = Offscreen::new(&gpu, 300, 120).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    viewer.prepare_frame();
    let side = viewer.comparison().unwrap().other();
    assert_eq!(side.view().options.mode, ViewMode::WeightDifference);
    let state = viewer.other_frame_state(1.0).unwrap();
    let (_, values) = state.symmetry.expect("the other side's values");
    assert_eq!(*values, reverse.weights.per_vertex);
    let values = values.of(0, 0).unwrap().to_vec();
    // By hand: the other file's quad 0 against the active file's (all LeftArm): 0.7; quads 1
    // and 2 unchanged; quad 3, moved away, matches nothing.
    let by_hand = [[0.7; 4], [0.0; 4], [0.0; 4], [SYMMETRY_UNMATCHED; 4]];
    for (v, (&value, expected)) in values.iter().zip(by_hand.as_flattened()).enumerate() {
        assert!(
            (value - expected).abs() < 1e-6,
            "vertex {v}: {value} instead of {expected}"
        );
    }
    let other = viewer.other_frame_state(target.aspect()).unwrap();
    let image = renderer.render_frame_state(&gpu, &target, &other).unwrap();
    let vp = other.camera.view_projection(target.aspect());
    for (k, value) in [values[0], values[4], values[8]].into_iter().enumerate() {
        let centre = Vec3::new(-2.0 + k as f32, 0.0, 0.0);
        assert_pixel_at(
            &image,
            vp.project_point3(centre),
            facing_shade(symmetry_color(value)),
            &format!("quad {k}"),
        );
    }
}

#[test]
fn in_the_window_the_symmetry_check_runs_beside_the_frames() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = Viewer::new(mirrored_quads_rig(), None);
    viewer.background_checks = true;
    gpu::look_along_minus_z(&mut viewer, 6.0);
    viewer.view.options.mode = ViewMode::Symmetry;
    let target = Offscreen::new(&gpu, 300, 120).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    let vp = viewer.view.camera.view_projection(target.aspect());
    let left_arm = vp.project_point3(Vec3::new(-1.0, 0.0, 0.0));
    // The frame that starts the check shows the vertices unchecked.
    let image = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
    assert_pixel_at(
        &image,
        left_arm,
        facing_shade(symmetry_color(SYMMETRY_UNCHECKED)),
        "while the check runs",
    );
    assert!(viewer.symmetry_summary().is_none());
    assert!(
        viewer.is_animating() || !viewer.checking_symmetry(),
        "frames keep coming while the check runs"
    );
    viewer.wait_for_symmetry();
    assert!(!viewer.checking_symmetry());
    // The next frame takes the result.
    let image = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
    assert_pixel_at(&image, left_arm, facing_shade(symmetry_color(0.2)), "once it is done");
    let summary = viewer.symmetry_summary().expect("the check finished");
    assert!(
        summary.starts_with("1 joint pairs; 8 of 16 vertices differ"),
        "{summary}"
    );
    // A rig opened while a check runs gets its own.
    viewer.set_rig(mirrored_quads_rig(), None);
    viewer.ensure_symmetry();
    assert!(
        viewer.symmetry_summary().is_none(),
        "the last rig's result is not this one's"
    );
}

#[test]
fn skinned_pose_cpu_paths_match_for_an_identity_palette() {
    let rig = two_joint_rig(Vec3::Y, cylinder(), vec![]);
    let mut pose = rigscope::anim::PoseBuffers::new(&rig);
    let inputs = rigscope::anim::PoseInputs {
        dual_quaternions: true,
        ..rigscope::anim::PoseInputs::clip_at(None, 0.0)
    };
    rigscope::anim::evaluate_pose(&rig, &inputs, &mut pose);
    let mut skinned = SkinnedPose::new(&rig);
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs] {
        skinned.skin(&rig, &pose, method);
        for (out, input) in skinned.meshes[0][0]
            .positions
            .iter()
            .zip(&rig.meshes[0].primitives[0].positions)
        {
            assert!((*out - *input).length() < 1e-5, "{method:?}: bind pose moved a vertex");
        }
    }
}

#[test]
fn an_alt_drag_bends_the_selected_joint_half_a_degree_per_point() {
    let mut viewer = Viewer::new(two_joint_rig(Vec3::Y, cylinder(), vec![]), None);
    viewer.view.selected_joint = Some(2);
    let turn = |x_degrees: f64, y_degrees: f64| {
        DQuat::from_rotation_x(x_degrees.to_radians()) * DQuat::from_rotation_y(y_degrees.to_radians())
    };
    let same = |got: Quat, expected: DQuat| {
        let got = got.as_dquat();
        (got - expected).length().min((got + expected).length()) < 1e-6
    };
    viewer.bend_selected_by_drag(40.0, -20.0);
    let bend = viewer.animation().overrides[2].rotation;
    assert!(same(bend, turn(-10.0, 20.0)), "up 20 points, right 40: {bend}");
    assert!(
        viewer.animation().overrides[1].is_identity(),
        "only the selected joint bends"
    );
    // The next drag turns on from where the first left the joint, in its own frame.
    viewer.bend_selected_by_drag(340.0, 0.0);
    let bend = viewer.animation().overrides[2].rotation;
    assert!(same(bend, turn(-10.0, 190.0)), "{bend}");
    let read_out = rigscope::anim::gizmo::euler_degrees_near(bend, Vec3::new(-10.0, 20.0, 0.0));
    assert!(
        (read_out - Vec3::new(-10.0, -170.0, 0.0)).length() < 1e-3,
        "its read-out wraps into ±180°: {read_out}"
    );
}

#[test]
fn a_mesh_without_a_skin_counts_as_weighted_whole_to_its_node_in_the_weight_sum_view() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut rig = two_joint_rig(Vec3::ZERO, three_quads(), vec![]);
    rig.instances[0].skin = None;
    rig.meshes[0].primitives[0].influences = None;
    let mut viewer = Viewer::new(rig, None);
    gpu::look_along_minus_z(&mut viewer, 6.0);
    viewer.view.options.mode = ViewMode::WeightError;
    let target = Offscreen::new(&gpu, 300, 120).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        let image = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
        let vp = viewer.view.camera.view_projection(target.aspect());
        for k in 0..3 {
            let centre = Vec3::new(-1.5 + k as f32 * 1.05 + 0.475, 0.0, 0.0);
            let what = format!("{path:?} rigid quad {k}");
            assert_pixel_at(
                &image,
                vp.project_point3(centre),
                facing_shade(weight_error_color(0.0)),
                &what,
            );
        }
    }
}
