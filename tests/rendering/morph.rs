//! Morph targets: weights sampled from `weights` channels, applied before skinning on the CPU
//! path and in the shaders' shared function (compute pass), and drawn.

use crate::common::gpu;

use glam::{Mat4, Vec2, Vec3};
use rigscope::anim::{JointOverride, PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::draw::ViewRenderer;
use rigscope::render::compute::ComputeSkinner;
use rigscope::rig::{
    Influences, Interpolation, Material, Mesh, MeshInstance, MorphChannel, MorphTarget, Morphs, Node, Primitive, Rig,
    Skin, Trs,
};
use rigscope::skin::{SkinnedPose, SkinningMethod};

/// A two-joint strip (joint "tip" at y = 1) of 2×3 vertices, the upper row weighted to the tip,
/// with two morph targets: one lifts the upper row by +Y, one pushes every vertex along +Z.
/// Clip 0 animates the weights linearly from (0, 0) at t = 0 to (1, 0.5) at t = 1.
fn morph_rig() -> Rig {
    let positions: Vec<Vec3> = (0..3)
        .flat_map(|row| (0..2).map(move |col| Vec3::new(col as f32, row as f32, 0.0)))
        .collect();
    let n = positions.len();
    let weights: Vec<[f32; 4]> = positions
        .iter()
        .map(|p| {
            if p.y >= 1.5 {
                [0.0, 1.0, 0.0, 0.0]
            } else {
                [1.0, 0.0, 0.0, 0.0]
            }
        })
        .collect();
    let lift: Vec<Vec3> = positions
        .iter()
        .map(|p| if p.y >= 1.5 { Vec3::Y } else { Vec3::ZERO })
        .collect();
    let lift = MorphTarget::sparse(&lift, &[], &positions, &vec![Vec3::Z; n]);
    let push = MorphTarget::sparse(&vec![Vec3::new(0.0, 0.0, 0.5); n], &[], &positions, &vec![Vec3::Z; n]);
    let primitive = Primitive {
        normals: vec![Vec3::Z; n],
        uvs: vec![Vec2::ZERO; n],
        uv_sets: Default::default(),
        tangents: Vec::new(),
        influences: Some(Influences {
            sets: 1,
            joints: vec![[0, 1, 0, 0]; n],
            weights,
        }),
        indices: vec![0, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4],
        material: Some(0),
        colors: Vec::new(),
        positions,
    };
    Rig {
        name: "morph".into(),
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
                name: "tip".into(),
                parent: Some(1),
                rest: Trs {
                    translation: Vec3::Y,
                    ..Trs::IDENTITY
                },
            },
        ],
        skins: vec![Skin {
            name: "skin".into(),
            joints: vec![1, 2],
            inverse_binds: vec![Mat4::IDENTITY, Mat4::from_translation(-Vec3::Y)],
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
        materials: vec![Material {
            double_sided: true,
            ..Material::default()
        }],
        clips: vec![rigscope::rig::Clip {
            name: "breathe".into(),
            duration: 1.0,
            channels: vec![],
            source: None,
        }],
        morphs: Morphs {
            targets: vec![vec![vec![lift, push]]],
            default_weights: vec![vec![0.0, 0.0]],
            channels: vec![MorphChannel {
                clip: 0,
                node: 0,
                interpolation: Interpolation::Linear,
                times: vec![0.0, 1.0],
                values: vec![0.0, 0.0, 1.0, 0.5],
                targets: 2,
            }],
            ..Morphs::default()
        },
        ..Rig::default()
    }
}

#[test]
fn weights_channels_are_sampled_and_hand_set_weights_win() {
    let rig = morph_rig();
    let mut pose = PoseBuffers::new(&rig);
    pose.evaluate(&rig, Some(0), 0.25);
    assert_eq!(pose.morph_weights[0], vec![0.25, 0.125]);
    pose.evaluate(&rig, Some(0), 5.0);
    assert_eq!(pose.morph_weights[0], vec![1.0, 0.5], "clamped after the last key");
    let morph_overrides = [vec![None, Some(0.9)]];
    let by_hand = |clip, time| PoseInputs {
        morph_overrides: &morph_overrides,
        ..PoseInputs::clip_at(clip, time)
    };
    evaluate_pose(&rig, &by_hand(Some(0), 0.25), &mut pose);
    assert_eq!(pose.morph_weights[0], vec![0.25, 0.9]);
    evaluate_pose(&rig, &by_hand(None, 0.0), &mut pose);
    assert_eq!(
        pose.morph_weights[0],
        vec![0.0, 0.9],
        "without a clip: defaults, then the hand-set weight"
    );
}

#[test]
fn morphs_apply_before_skinning_on_the_cpu() {
    let rig = morph_rig();
    let mut pose = PoseBuffers::new(&rig);
    // Turn the tip joint 90° about Z: a bind-space +Y offset then points along −X.
    let mut overrides = vec![JointOverride::IDENTITY; rig.nodes.len()];
    overrides[2] = JointOverride::from_euler_degrees(Vec3::new(0.0, 0.0, 90.0));
    let inputs = PoseInputs {
        overrides: &overrides,
        ..PoseInputs::clip_at(Some(0), 1.0)
    };
    evaluate_pose(&rig, &inputs, &mut pose);
    let mut skinned = SkinnedPose::new(&rig);
    skinned.skin(&rig, &pose, SkinningMethod::Lbs);
    let top = 5; // (1, 2, 0), weighted to the tip
    let p = rig.meshes[0].primitives[0].positions[top];
    let palette = pose.palettes[0][1];
    let offset = Vec3::Y * 1.0 + Vec3::new(0.0, 0.0, 0.5) * 0.5;
    let morph_then_skin = palette.transform_point3(p + offset);
    let skin_then_morph = palette.transform_point3(p) + offset;
    let got = skinned.meshes[0][0].positions[top];
    assert!((got - morph_then_skin).length() < 1e-5, "{got} vs {morph_then_skin}");
    assert!(
        (got - skin_then_morph).length() > 0.5,
        "the order of morph and skin must matter here"
    );
}

#[test]
fn the_shader_morph_matches_the_cpu_for_lbs_and_dqs() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let rig = morph_rig();
    let mut pose = PoseBuffers::new(&rig);
    let mut overrides = vec![JointOverride::IDENTITY; rig.nodes.len()];
    overrides[2] = JointOverride::from_euler_degrees(Vec3::new(20.0, 0.0, 60.0));
    let inputs = PoseInputs {
        overrides: &overrides,
        dual_quaternions: true,
        ..PoseInputs::clip_at(Some(0), 0.7)
    };
    evaluate_pose(&rig, &inputs, &mut pose);
    let mut skinned = SkinnedPose::new(&rig);
    let skinner = ComputeSkinner::new(&gpu);
    let targets = rig.morphs.of(0, 0);
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs] {
        skinned.skin(&rig, &pose, method);
        let (positions, normals) = skinner
            .skin_morphed(
                &gpu,
                &rig.meshes[0].primitives[0],
                &pose.palettes[0],
                &pose.dual_quats[0],
                method,
                targets,
                &pose.morph_weights[0],
            )
            .unwrap();
        let cpu = &skinned.meshes[0][0];
        for v in 0..positions.len() {
            assert!(
                (positions[v] - cpu.positions[v]).length() < 1e-5,
                "{method:?} vertex {v}: {} vs {}",
                positions[v],
                cpu.positions[v]
            );
            assert!(
                (normals[v] - cpu.normals[v]).length() < 1e-5,
                "{method:?} vertex {v} normal"
            );
        }
        // And the morph really moved something compared with no morph at all.
        let (unmorphed, _) = skinner
            .skin(
                &gpu,
                &rig.meshes[0].primitives[0],
                &pose.palettes[0],
                &pose.dual_quats[0],
                method,
            )
            .unwrap();
        assert!((unmorphed[5] - positions[5]).length() > 0.5);
    }
}

#[test]
fn drawing_applies_the_morph_on_both_paths() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = rigscope::viewer::Viewer::new(morph_rig(), None);
    viewer.view.options.grid = false;
    viewer.view.options.skeleton.show = false;
    viewer.set_playing(false);
    viewer.view.camera.yaw = 0.0;
    viewer.view.camera.pitch = 0.0;
    let target = rigscope::render::Offscreen::new(&gpu, 160, 160).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    let mut draw =
        |viewer: &mut rigscope::viewer::Viewer| renderer.render_image(&gpu, &target, viewer, None, None).unwrap();
    let count = |image: &image::RgbaImage| {
        let background = *image.get_pixel(0, 0);
        image.pixels().filter(|p| **p != background).count()
    };
    viewer.seek(0.0);
    let flat = count(&draw(&mut viewer));
    for path in [rigscope::skin::SkinningPath::Gpu, rigscope::skin::SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        viewer.seek(1.0);
        let lifted = count(&draw(&mut viewer));
        println!("{path:?}: {flat} pixels unmorphed, {lifted} with the upper row lifted by 1");
        assert!(
            lifted as f32 > flat as f32 * 1.2,
            "{path:?}: the lifted strip should cover more pixels"
        );
    }
}

#[test]
fn a_ghost_takes_the_morph_weights_of_its_own_moment_on_both_paths() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = rigscope::viewer::Viewer::new(morph_rig(), None);
    viewer.view.options.grid = false;
    viewer.view.options.skeleton.show = false;
    viewer.view.camera.yaw = 0.0;
    viewer.view.camera.pitch = 0.0;
    viewer.set_playing(false);
    viewer.set_looping(false);
    // One ghost 9 frames (0.3 s) after 0.3 s: the strip lifted by 0.6 against 0.3 now.
    viewer.view.options.ghosts = rigscope::anim::GhostOptions {
        show: true,
        count: 1,
        every: 9,
        skeleton: false,
    };
    viewer.seek(0.3);
    let draw = |viewer: &mut rigscope::viewer::Viewer, path, ghosts: bool| {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        viewer.view.options.ghosts.show = ghosts;
        viewer.mark_dirty();
        rigscope::screenshot::render_view(&gpu, viewer, 160, 160).unwrap()
    };
    use rigscope::skin::SkinningPath::{Cpu, Gpu};
    let differing = |a: &image::RgbaImage, b: &image::RgbaImage| {
        a.pixels()
            .zip(b.pixels())
            .filter(|(p, q)| p.0.iter().zip(q.0).any(|(x, y)| x.abs_diff(y) > 6))
            .count()
    };
    let plain = draw(&mut viewer, Gpu, false);
    let on_gpu = draw(&mut viewer, Gpu, true);
    let on_cpu = draw(&mut viewer, Cpu, true);
    let ghost_pixels = differing(&on_gpu, &plain);
    assert!(ghost_pixels > 200, "the ghost covers {ghost_pixels} pixels");
    let apart = differing(&on_gpu, &on_cpu);
    assert!(
        apart * 100 <= ghost_pixels,
        "{apart} of {ghost_pixels} ghost pixels differ between the paths"
    );
}

/// A glTF built here: one triangle with one morph target (default weight 0.25) and a `weights`
/// channel from 0 to 1 over a second.
#[test]
fn morph_targets_and_weight_channels_import_from_gltf() {
    use base64::Engine;
    let floats: Vec<f32> = [
        0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, // positions
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, // target 0 offsets: lift the top vertex
        0.0, 1.0, // key times
        0.0, 1.0, // key weights
    ]
    .to_vec();
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    );
    let json = serde_json::json!({
        "asset": {"version": "2.0"},
        "buffers": [{"byteLength": bytes.len(), "uri": uri}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 36},
            {"buffer": 0, "byteOffset": 72, "byteLength": 8},
            {"buffer": 0, "byteOffset": 80, "byteLength": 8}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0]},
            {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0.0, 0.0, 0.0], "max": [0.0, 2.0, 0.0]},
            {"bufferView": 2, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0]},
            {"bufferView": 3, "componentType": 5126, "count": 2, "type": "SCALAR"}
        ],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "targets": [{"POSITION": 1}]}], "weights": [0.25]}],
        "nodes": [{"mesh": 0, "name": "blob"}],
        "scenes": [{"nodes": [0]}],
        "animations": [{"name": "grow", "samplers": [{"input": 2, "output": 3}], "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}]}]
    });
    let rig = rigscope::rig::load_slice(json.to_string().as_bytes(), None, "morph.gltf").unwrap();
    let targets = rig.morphs.of(0, 0);
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0].dense(3).0[2], Vec3::new(0.0, 2.0, 0.0));
    assert_eq!(rig.morphs.default_weights[0], vec![0.25]);
    let mut pose = PoseBuffers::new(&rig);
    pose.evaluate(&rig, None, 0.0);
    assert_eq!(pose.morph_weights[0], vec![0.25], "the mesh default without a clip");
    let grow = rig.find_clip("grow").unwrap();
    pose.evaluate(&rig, Some(grow), 0.5);
    assert_eq!(pose.morph_weights[0], vec![0.5], "the channel at half time");
}

#[test]
fn a_crossfade_blends_morph_weights_and_ends_without_a_jump() {
    // Clip 0 ("breathe") ramps target 0 from 0 to 1 over a second; clip 1 ("hold") keeps it at
    // 0.2. Fading from clip 0 at 0.5 s (weight 0.5) into clip 1 over 0.4 s: after 0.2 s of
    // playback the outgoing clip is at 0.7 s (0.7) and the fade at half, so 0.45; when the fade
    // ends the weight is clip 1's own, 0.2, with nothing left of clip 0.
    let mut rig = morph_rig();
    rig.clips.push(rigscope::rig::Clip {
        name: "hold".into(),
        duration: 1.0,
        channels: vec![],
        source: None,
    });
    rig.morphs.channels.push(MorphChannel {
        clip: 1,
        node: 0,
        interpolation: Interpolation::Step,
        times: vec![0.0],
        values: vec![0.2, 0.0],
        targets: 2,
    });
    let mut viewer = rigscope::viewer::Viewer::new(rig, None);
    viewer.select_clip(Some(0));
    viewer.seek(0.5);
    viewer.edit_pose_parts(|parts| parts.crossfade_seconds = 0.4);
    viewer.select_clip(Some(1));
    viewer.set_playing(true);
    viewer.tick(0.2);
    let during = viewer.pose().morph_weights[0][0];
    assert!((during - 0.45).abs() < 1e-5, "halfway through the fade: {during}");
    viewer.tick(0.3);
    assert!(viewer.animation().fade.is_none(), "the fade ends after its duration");
    assert!((viewer.pose().morph_weights[0][0] - 0.2).abs() < 1e-6);
}

#[test]
fn picking_hits_the_morphed_surface_that_is_drawn() {
    // At t = 1 the lift target (weight 1) raises the top row from y = 2 to y = 3 and the push
    // target (offset 0.5, weight 0.5) moves the strip to z = 0.25. A ray down −Z from z = 10 at
    // y = 2.6 passes above the bind pose but hits the morphed strip 9.75 away, nearest the top
    // row.
    let mut viewer = rigscope::viewer::Viewer::new(morph_rig(), None);
    viewer.select_clip(Some(0));
    viewer.set_playing(false);
    viewer.seek(1.0);
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs] {
        viewer.set_skinning(rigscope::skin::SkinningPath::Gpu, method);
        let hit = viewer
            .pick_vertex(Vec3::new(0.5, 2.6, 10.0), Vec3::NEG_Z)
            .unwrap_or_else(|| panic!("{method:?}: the ray misses the morphed strip"));
        assert!((hit.distance - 9.75).abs() < 1e-4, "{method:?}: {hit:?}");
        assert!(hit.vertex >= 4, "{method:?}: nearest the top row, not {hit:?}");
    }
}
