//! Weight blended skinning (per vertex, from linear blend to dual quaternion skinning) and the
//! DQS mask by joint: positions worked out by hand in f64, the mask's blend by hand, and the
//! GPU's shared skinning function against the CPU path.

use crate::common;
use crate::common::gpu;

use glam::{Mat4, Quat, Vec2, Vec3};
use rigscope::anim::{JointOverride, PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::render::compute::ComputeSkinner;
use rigscope::rig::{Influences, Material, Mesh, MeshInstance, Node, Primitive, Rig, Skin, Trs};
use rigscope::skin::{DqsBlend, SkinnedPose, SkinningMethod};
use std::sync::Arc;

/// Where joint "twist" sits at rest: turned 90° about X (along its bone) and lifted 0.5 in Y.
const TWIST_DEGREES: f64 = 90.0;
const LIFT: f64 = 0.5;

/// Vertices and their weights on (root, twist).
const VERTICES: [([f32; 3], [f32; 2]); 4] = [
    ([1.0, 0.0, 1.0], [0.5, 0.5]),
    ([2.0, 1.0, 0.0], [0.0, 1.0]),
    ([0.0, 0.0, 1.0], [1.0, 0.0]),
    ([1.5, -0.5, 0.7], [0.25, 0.75]),
];

/// Two joints along X: "root" at the origin and "twist" at x = 1 (bind pose), whose rest pose
/// turns it about its bone and lifts it; four vertices weighted between them.
fn twist_rig() -> Rig {
    let n = VERTICES.len();
    let primitive = Primitive {
        positions: VERTICES.iter().map(|(p, _)| Vec3::from(*p)).collect(),
        normals: vec![Vec3::new(0.0, 0.6, 0.8); n],
        uvs: vec![Vec2::ZERO; n],
        uv_sets: Default::default(),
        tangents: Vec::new(),
        influences: Some(Influences {
            sets: 1,
            joints: vec![[0, 1, 0, 0]; n],
            weights: VERTICES.iter().map(|(_, [a, b])| [*a, *b, 0.0, 0.0]).collect(),
        }),
        indices: vec![0, 1, 2, 0, 2, 3],
        material: Some(0),
        colors: Vec::new(),
    };
    Rig {
        name: "twist".into(),
        nodes: vec![
            Node {
                name: "mesh".into(),
                parent: None,
                rest: Trs::IDENTITY,
            },
            Node {
                name: "root".into(),
                parent: None,
                rest: Trs::IDENTITY,
            },
            Node {
                name: "twist".into(),
                parent: Some(1),
                rest: Trs {
                    translation: Vec3::new(1.0, LIFT as f32, 0.0),
                    rotation: Quat::from_rotation_x((TWIST_DEGREES as f32).to_radians()),
                    ..Trs::IDENTITY
                },
            },
            Node {
                name: "tip".into(),
                parent: Some(2),
                rest: Trs::IDENTITY,
            },
        ],
        skins: vec![Skin {
            name: "skin".into(),
            joints: vec![1, 2],
            inverse_binds: vec![Mat4::IDENTITY, Mat4::from_translation(-Vec3::X)],
        }],
        meshes: vec![Mesh {
            name: "strip".into(),
            primitives: vec![primitive],
        }],
        instances: vec![MeshInstance {
            node: 0,
            mesh: 0,
            skin: Some(0),
        }],
        materials: vec![Material::default()],
        ..Rig::default()
    }
}

type V = [f64; 3];
type Q = [f64; 4]; // x, y, z, w

fn add(a: V, b: V) -> V {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn scale(a: V, s: f64) -> V {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn cross(a: V, b: V) -> V {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
fn dot(a: V, b: V) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn normalize(a: V) -> V {
    scale(a, 1.0 / dot(a, a).sqrt())
}
fn lerp(a: V, b: V, t: f64) -> V {
    add(scale(a, 1.0 - t), scale(b, t))
}
fn quat_mul(a: Q, b: Q) -> Q {
    [
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    ]
}
fn conjugate(q: Q) -> Q {
    [-q[0], -q[1], -q[2], q[3]]
}
/// `v` turned by the unit quaternion `q` (q v q*).
fn rotate(q: Q, v: V) -> V {
    let r = quat_mul(quat_mul(q, [v[0], v[1], v[2], 0.0]), conjugate(q));
    [r[0], r[1], r[2]]
}

/// The joints' rigid transforms in the pose, as (rotation, translation): the root's identity;
/// the twist's palette T(lift) · R · T(x) · T(−x) = T(0, lift, 0) · R, R being about X, which
/// keeps x = 1 where it was.
fn joints() -> [(Q, V); 2] {
    let half = TWIST_DEGREES.to_radians() / 2.0;
    [
        ([0.0, 0.0, 0.0, 1.0], [0.0; 3]),
        ([half.sin(), 0.0, 0.0, half.cos()], [0.0, LIFT, 0.0]),
    ]
}

/// Linear blend skinning of `p` (and its normal, by the cofactor of the blended 3×3).
fn lbs(p: V, n: V, w: [f64; 2]) -> (V, V) {
    let js = joints();
    let column = |axis: V| (js.iter().zip(w)).fold([0.0; 3], |sum, ((q, _), w)| add(sum, scale(rotate(*q, axis), w)));
    let (c0, c1, c2) = (
        column([1.0, 0.0, 0.0]),
        column([0.0, 1.0, 0.0]),
        column([0.0, 0.0, 1.0]),
    );
    let translation = (js.iter().zip(w)).fold([0.0; 3], |sum, ((_, t), w)| add(sum, scale(*t, w)));
    let position = add(add(add(scale(c0, p[0]), scale(c1, p[1])), scale(c2, p[2])), translation);
    let (k0, k1, k2) = (cross(c1, c2), cross(c2, c0), cross(c0, c1));
    let normal = add(add(scale(k0, n[0]), scale(k1, n[1])), scale(k2, n[2]));
    (position, normalize(normal))
}

/// Dual quaternion skinning of `p`: the joints' dual quaternions (real q, dual ½ t q) summed by
/// weight, divided by the real part's length; translation 2 · dual · conj(real).
fn dqs(p: V, n: V, w: [f64; 2]) -> (V, V) {
    let (mut real, mut dual) = ([0.0; 4], [0.0; 4]);
    for ((q, t), w) in joints().into_iter().zip(w) {
        let d = quat_mul([t[0] * 0.5, t[1] * 0.5, t[2] * 0.5, 0.0], q);
        for i in 0..4 {
            real[i] += q[i] * w;
            dual[i] += d[i] * w;
        }
    }
    let length = real.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (real, dual) = (real.map(|x| x / length), dual.map(|x| x / length));
    let t = quat_mul(dual, conjugate(real));
    (
        add(rotate(real, p), [2.0 * t[0], 2.0 * t[1], 2.0 * t[2]]),
        normalize(rotate(real, n)),
    )
}

/// The rest pose (the twist) evaluated with dual quaternions, and `rig` skinned on the CPU
/// with the blended method and `blend`.
fn skin_blended(rig: &Rig, blend: DqsBlend) -> (PoseBuffers, SkinnedPose) {
    let mut pose = PoseBuffers::new(rig);
    let inputs = PoseInputs {
        dual_quaternions: true,
        ..PoseInputs::clip_at(None, 0.0)
    };
    evaluate_pose(rig, &inputs, &mut pose);
    let mut skinned = SkinnedPose::new(rig);
    skinned.set_blend(Arc::new(blend));
    skinned.skin(rig, &pose, SkinningMethod::Blended);
    (pose, skinned)
}

fn rig_with_file_blend(blend: Vec<f32>) -> Rig {
    let mut rig = twist_rig();
    rig.skinning.dqs_blend = vec![vec![blend]];
    rig
}

#[test]
fn blended_positions_are_the_lerp_of_lbs_and_dqs_worked_out_by_hand() {
    let normal = [0.0, 0.6, 0.8];
    for b in [0.0, 0.5, 1.0, 0.3] {
        let rig = rig_with_file_blend(vec![b as f32; VERTICES.len()]);
        let (_, skinned) = skin_blended(&rig, DqsBlend::of_file(&rig));
        for (v, (p, w)) in VERTICES.iter().enumerate() {
            let (p, w) = (p.map(f64::from), w.map(f64::from));
            let ((lbs_p, lbs_n), (dqs_p, dqs_n)) = (lbs(p, normal, w), dqs(p, normal, w));
            let expected = lerp(lbs_p, dqs_p, b);
            let expected_normal = normalize(lerp(lbs_n, dqs_n, b));
            let got = skinned.meshes[0][0].positions[v];
            let got_normal = skinned.meshes[0][0].normals[v];
            for axis in 0..3 {
                assert!(
                    (f64::from(got[axis]) - expected[axis]).abs() < 1e-5,
                    "b {b}, vertex {v}: {got} against {expected:?}"
                );
                assert!(
                    (f64::from(got_normal[axis]) - expected_normal[axis]).abs() < 1e-5,
                    "b {b}, vertex {v}: normal {got_normal} against {expected_normal:?}"
                );
            }
        }
    }
    // The methods differ where the joints twist apart, so each b above is told apart.
    let (p, w) = ([1.0, 0.0, 1.0], [0.5, 0.5]);
    let (l, d) = (lbs(p, normal, w).0, dqs(p, normal, w).0);
    let gap = add(l, scale(d, -1.0));
    assert!(
        dot(gap, gap).sqrt() > 0.1,
        "LBS {l:?} and DQS {d:?} are too close to tell apart"
    );
}

#[test]
fn each_vertex_takes_its_own_blend_and_missing_ones_are_linear() {
    // Vertex 0 fully DQS, vertex 1 halfway, vertices 2 and 3 left out of a short list (0).
    let rig = rig_with_file_blend(vec![1.0, 0.5]);
    let (_, skinned) = skin_blended(&rig, DqsBlend::of_file(&rig));
    let normal = [0.0, 0.6, 0.8];
    for (v, b) in [1.0, 0.5, 0.0, 0.0].into_iter().enumerate() {
        let (p, w) = (VERTICES[v].0.map(f64::from), VERTICES[v].1.map(f64::from));
        let expected = lerp(lbs(p, normal, w).0, dqs(p, normal, w).0, b);
        let got = skinned.meshes[0][0].positions[v].as_dvec3();
        assert!((got - glam::DVec3::from(expected)).length() < 1e-5, "vertex {v}: {got}");
    }
}

#[test]
fn a_mask_blends_each_vertex_by_its_weight_on_the_masked_joints_and_their_descendants() {
    let mut rig = twist_rig();
    // A third joint, "tip" (node 3, a child of "twist"), takes part of vertex 3's weight.
    rig.skins[0].joints.push(3);
    rig.skins[0].inverse_binds.push(Mat4::from_translation(-Vec3::X));
    let influences = rig.meshes[0].primitives[0].influences.as_mut().unwrap();
    influences.joints[3] = [0, 1, 2, 0];
    influences.weights[3] = [0.2, 0.2, 0.4, 0.0];
    // Masking "twist" covers "tip" too: shares by hand, over each vertex's total weight.
    let masked = rig.subtrees(&[2]);
    assert_eq!(masked, vec![false, false, true, true]);
    let blend = DqsBlend::of_mask(&rig, &masked);
    let expected = [0.5, 1.0, 0.0, (0.2 + 0.4) / 0.8];
    for (v, e) in expected.iter().enumerate() {
        assert!(
            (blend.of(0, 0)[v] - e).abs() < 1e-6,
            "vertex {v}: {}",
            blend.of(0, 0)[v]
        );
    }
    // Masking only "tip": vertex 3's share on it.
    let tip = DqsBlend::of_mask(&rig, &rig.subtrees(&[3]));
    assert_eq!(&tip.of(0, 0)[..3], &[0.0, 0.0, 0.0]);
    assert!((tip.of(0, 0)[3] - 0.5).abs() < 1e-6);
    // Masking the root covers everything: every weighted vertex skins fully with DQS.
    let all = DqsBlend::of_mask(&rig, &rig.subtrees(&[1]));
    assert_eq!(all.of(0, 0), &[1.0; 4]);
    assert_ne!(all.id(), tip.id(), "each blend is told apart from the others");
}

#[test]
fn the_gpu_blends_like_the_cpu_on_the_hand_made_rig() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let skinner = ComputeSkinner::new(&gpu);
    let rig = rig_with_file_blend(vec![1.0, 0.5, 0.25]);
    let (pose, skinned) = skin_blended(&rig, DqsBlend::of_file(&rig));
    let comparison = skinner
        .compare(&gpu, &rig, &pose, &skinned, SkinningMethod::Blended, 1.0)
        .unwrap();
    assert_eq!(comparison.vertices, VERTICES.len());
    assert!(comparison.max < 1e-5, "CPU and GPU differ by {}", comparison.max);
    // And the GPU's own result against the hand values, normals included.
    let (positions, normals) = skinner
        .skin_blended(
            &gpu,
            &rig.meshes[0].primitives[0],
            (&pose.palettes[0], &pose.dual_quats[0]),
            SkinningMethod::Blended,
            (&[], &[]),
            skinned.blend().of(0, 0),
        )
        .unwrap();
    let normal = [0.0, 0.6, 0.8];
    for (v, b) in [1.0, 0.5, 0.25, 0.0].into_iter().enumerate() {
        let (p, w) = (VERTICES[v].0.map(f64::from), VERTICES[v].1.map(f64::from));
        let ((lp, ln), (dp, dn)) = (lbs(p, normal, w), dqs(p, normal, w));
        let (ep, en) = (lerp(lp, dp, b), normalize(lerp(ln, dn, b)));
        assert!(
            (positions[v].as_dvec3() - glam::DVec3::from(ep)).length() < 1e-5,
            "vertex {v}"
        );
        assert!(
            (normals[v].as_dvec3() - glam::DVec3::from(en)).length() < 1e-5,
            "vertex {v} normal"
        );
    }
}

#[test]
fn the_gpu_blends_like_the_cpu_on_shared_rigs_with_a_mask() {
    let Some(dir) = common::shared_rigs() else { return };
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let skinner = ComputeSkinner::new(&gpu);
    for (file, joint) in [("real/Xbot.glb", "mixamorig:LeftArm"), ("Fox.glb", "b_Neck_04")] {
        let rig = common::load_rig(&dir, file);
        let node = rig.find_node(joint).unwrap_or_else(|| panic!("{file} has no {joint}"));
        let blend = DqsBlend::of_mask(&rig, &rig.subtrees(&[node]));
        let (some, all) = (blend.any(), blend.of(0, 0).iter().all(|&b| b == 1.0));
        assert!(some && !all, "{file}: masking {joint} blends some vertices, not all");
        let mut overrides = vec![JointOverride::IDENTITY; rig.nodes.len()];
        for (k, o) in overrides.iter_mut().enumerate() {
            o.rotation = rigscope::anim::euler_degrees_to_rotation(Vec3::new(7.0 * (k % 5) as f32, 30.0, -25.0));
        }
        let mut pose = PoseBuffers::new(&rig);
        let inputs = PoseInputs {
            overrides: &overrides,
            dual_quaternions: true,
            ..PoseInputs::clip_at(Some(0), 0.5)
        };
        evaluate_pose(&rig, &inputs, &mut pose);
        let mut skinned = SkinnedPose::new(&rig);
        skinned.set_blend(Arc::new(blend));
        skinned.skin(&rig, &pose, SkinningMethod::Blended);
        let size = rigscope::skin::posed_bounds(&rig, &pose, &skinned).size();
        let comparison = skinner
            .compare(&gpu, &rig, &pose, &skinned, SkinningMethod::Blended, size)
            .unwrap();
        println!(
            "{file}: {} vertices, max CPU/GPU deviation {:.3e} of the rig size",
            comparison.vertices,
            comparison.max / size
        );
        assert!(comparison.vertices > 0);
        assert!(comparison.max / size <= 1e-4, "{file}: {:.3e}", comparison.max / size);
    }
}

/// Pixels of `image` whose color is `ramp_end` (a heat ramp end, linear RGB) under some shading:
/// the channels the end has at 0 stay dark and the others lit.
fn pixels_colored(image: &image::RgbaImage, ramp_end: [f32; 3]) -> usize {
    image
        .pixels()
        .filter(|p| (0..3).all(|c| if ramp_end[c] == 0.0 { p[c] < 8 } else { p[c] > 60 }))
        .count()
}

#[test]
fn the_blend_view_colors_vertices_by_their_blend_on_both_paths() {
    use rigscope::render::ViewMode;
    use rigscope::render::views::heat;
    use rigscope::skin::SkinningPath;
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = rigscope::viewer::Viewer::new(common::load_demo(), None);
    viewer.view.options.mode = ViewMode::DqsBlend;
    viewer.view.options.grid = false;
    viewer.view.options.skeleton.show = false;
    let (linear, dual) = (heat(0.0), heat(1.0));
    let root = viewer.rig().skins[0].joints[0];
    let middle = viewer.rig().skins[0].joints[viewer.rig().skins[0].joints.len() / 2];
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Blended);
        viewer.set_dqs_mask(Vec::new());
        let none = rigscope::screenshot::render_view(&gpu, &mut viewer, 160, 120).unwrap();
        viewer.set_dqs_mask(vec![root]);
        let all = rigscope::screenshot::render_view(&gpu, &mut viewer, 160, 120).unwrap();
        viewer.set_dqs_mask(vec![middle]);
        let part = rigscope::screenshot::render_view(&gpu, &mut viewer, 160, 120).unwrap();
        let counts = |image| (pixels_colored(image, linear), pixels_colored(image, dual));
        let ((none_lbs, none_dqs), (all_lbs, all_dqs), (part_lbs, part_dqs)) =
            (counts(&none), counts(&all), counts(&part));
        println!("{path:?}: none {none_lbs}/{none_dqs}, all {all_lbs}/{all_dqs}, part {part_lbs}/{part_dqs}");
        assert!(
            none_lbs > 200 && none_dqs == 0,
            "{path:?}: without a mask every vertex is linear"
        );
        assert!(
            all_dqs > 200 && all_lbs == 0,
            "{path:?}: masking the root blends every vertex fully"
        );
        assert!(
            part_lbs > 20 && part_dqs > 20,
            "{path:?}: a joint halfway shows both ends"
        );
    }
}

#[test]
fn the_dqs_mask_is_kept_per_skeleton_through_the_settings_file() {
    use rigscope::settings::Settings;
    use rigscope::ui::UiState;
    let dir = common::temp_dir("dqs-mask");
    let mut viewer = rigscope::viewer::Viewer::new(common::load_demo(), None);
    let joints = viewer.rig().skins[0].joints.clone();
    let masked = vec![joints[1], joints[joints.len() - 1]];
    viewer.set_dqs_mask(masked.clone());
    let names: Vec<String> = masked.iter().map(|&j| viewer.rig().nodes[j].name.clone()).collect();
    let file = dir.join("settings.toml");
    rigscope::app::capture_settings(&viewer, &UiState::default(), (800.0, 600.0))
        .save_to(&file)
        .unwrap();
    let settings = Settings::load_from(&file);
    assert_eq!(settings.dqs_masks.values().collect::<Vec<_>>(), [&names]);
    // A viewer started afresh on the same rig gets the mask, and the blend it makes, back.
    let mut next = rigscope::viewer::Viewer::new(common::load_demo(), None);
    assert!(next.dqs_mask().is_empty());
    rigscope::app::apply_settings(&settings, &mut next, &mut UiState::default());
    let mut sorted = masked.clone();
    sorted.sort_unstable();
    assert_eq!(next.dqs_mask(), sorted);
    assert_eq!(next.dqs_blend().of(0, 0), viewer.dqs_blend().of(0, 0));
    // Another skeleton has no mask; coming back to the first brings it back.
    next.set_rig(twist_rig(), None);
    assert!(next.dqs_mask().is_empty());
    next.set_rig(common::load_demo(), None);
    assert_eq!(next.dqs_mask(), sorted);
    // Cleared: the settings forget it.
    next.set_dqs_mask(Vec::new());
    assert!(next.dqs_masks().is_empty());
}

#[test]
fn the_skinning_panel_builds_and_clears_the_mask_from_the_selected_joint() {
    use egui_kittest::kittest::Queryable;
    use rigscope::render::ViewMode;
    let mut harness = common::main_window(rigscope::viewer::Viewer::new(common::load_demo(), None), 1400.0, 1000.0);
    harness.run();
    harness.get_by_label("joint3").click();
    harness.run();
    harness.get_by_label("Blended").click();
    harness.run();
    assert_eq!(harness.state().0.skinning_method(), SkinningMethod::Blended);
    harness.get_by_label("No mask: every vertex is linear.");
    harness.get_by_label("Add selected joint").click();
    harness.run();
    let joint3 = harness.state().0.rig().find_node("joint3").unwrap();
    assert_eq!(harness.state().0.dqs_mask(), [joint3]);
    assert!(harness.state().0.dqs_blend().any());
    harness.key_press(egui::Key::Num0);
    harness.run();
    assert_eq!(harness.state().0.view.options.mode, ViewMode::DqsBlend);
    harness.get_by_label("joint3 ×").click();
    harness.run();
    assert!(harness.state().0.dqs_mask().is_empty());
    harness.get_by_label("joint2").click();
    harness.run();
    harness.get_by_label("Add selected joint").click();
    harness.run();
    assert!(!harness.state().0.dqs_mask().is_empty());
    harness.get_by_label("Clear").click();
    harness.run();
    assert!(harness.state().0.dqs_mask().is_empty());
    assert!(!harness.state().0.dqs_blend().any());
}

#[test]
fn render_masks_joints_by_name_implies_blended_and_refuses_unknown_names() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let dir = common::temp_dir("render-dqs-joint");
    let out = dir.join("blend.png");
    let render = |args: &[&str]| {
        common::rigscope_with(
            common::rigscope_command()
                .args([
                    "render",
                    "demo",
                    "--clip",
                    "Twist",
                    "--time",
                    "0.5",
                    "--size",
                    "160x120",
                    "--no-grid",
                ])
                .args(args)
                .arg("--out")
                .arg(&out),
        )
    };
    // The blend view with a mask on joint3: both ends of the ramp, as in the viewer.
    let shown = render(&["--view", "dqs-blend", "--dqs-joint", "joint3"]);
    assert!(shown.status.success(), "{}", String::from_utf8_lossy(&shown.stderr));
    let image = image::open(&out).unwrap().to_rgba8();
    use rigscope::render::views::heat;
    assert!(pixels_colored(&image, heat(0.0)) > 20 && pixels_colored(&image, heat(1.0)) > 20);
    // A mask without --method skins blended: the picture differs from plain LBS and from DQS.
    let shaded = |args: &[&str]| {
        let output = render(args);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        image::open(&out).unwrap().to_rgba8()
    };
    let masked = shaded(&["--dqs-joint", "joint3"]);
    assert_eq!(masked, shaded(&["--method", "blended", "--dqs-joint", "joint3"]));
    assert_ne!(masked, shaded(&["--method", "lbs"]));
    assert_ne!(masked, shaded(&["--method", "dqs"]));
    let unknown = render(&["--dqs-joint", "no-such-joint"]);
    assert!(!unknown.status.success());
    let message = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        message.contains("no-such-joint") && message.contains("joint3"),
        "{message}"
    );
}
