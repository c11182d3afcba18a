//! The research note's fixtures R11–R20: engines that pose nodes or store morph targets their
//! own way (drawn, and measured by `check`), and what they change in lighting, winding and the
//! skeleton's make-up (reported as findings). Expected values are worked out by hand in each
//! test, independently of the profile code.

use super::engine_profiles::{drawn_by, fixture, give_unit_targets, row, slerping_engines};
use glam::{DVec3, Mat4, Quat, Vec3};
use rigscope::engine::check::{EngineCheck, check_engines, drawn_height};
use rigscope::engine::{Engine, EngineRefusal};
use rigscope::rig::{Material, MeshInstance, MorphTarget, Rig, Trs};

fn check_of(checks: &[EngineCheck], engine: Engine) -> &EngineCheck {
    checks
        .iter()
        .find(|c| c.engine == engine.name())
        .expect("every engine is checked")
}

/// Asserts which engines report a finding that contains `needle`.
fn assert_found_by(rig: &Rig, needle: &str, by: &[Engine]) {
    let checks = check_engines(rig, &Engine::ALL);
    for engine in Engine::ALL {
        let found = check_of(&checks, engine).findings.iter().any(|f| f.contains(needle));
        assert_eq!(
            found,
            by.contains(&engine),
            "{}: '{needle}' in {:?}",
            engine.name(),
            check_of(&checks, engine).findings
        );
    }
}

fn assert_close(label: &str, got: Vec3, want: DVec3) {
    assert!(
        (got.as_dvec3() - want).length() < 1e-5,
        "{label}: drew {got}, expected {want}"
    );
}

#[test]
fn r14_a_mirror_given_as_a_matrix_is_lost_by_the_sample_renderer_only() {
    // j1 given as the matrix T(0,1,0)·diag(-1,1,1); j0 turns 90° about Z over the clip.
    let mut rig = fixture(2, 0, &[row(&[(1, 1.0)])]);
    let matrix = Mat4::from_translation(Vec3::Y) * Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    rig.nodes[1].rest = Trs {
        translation: Vec3::Y,
        rotation: Quat::IDENTITY,
        scale: Vec3::new(-1.0, 1.0, 1.0),
    };
    rig.facts.node_matrices = rig.nodes.iter().map(|n| n.rest.to_mat4()).collect();
    rig.facts.node_matrices[1] = matrix;
    rig.facts.node_given_as_matrix = vec![false, true, false];
    // The vertex (1,0,0), bound by T(0,-1,0): (1,-1,0) in j1's space. The file mirrors it to
    // (-1,-1,0), moves it to (-1,0,0) and turns it to (0,-1,0). The Sample Renderer reads the
    // mirror matrix as the identity rotation at scale (1,1,1): (1,0,0), turned to (0,1,0).
    for engine in Engine::ALL {
        let want = if engine == Engine::SampleRenderer {
            DVec3::new(0.0, 1.0, 0.0)
        } else {
            DVec3::new(0.0, -1.0, 0.0)
        };
        assert_close(engine.name(), drawn_by(engine, &rig)[0], want);
    }
    let checks = check_engines(&rig, &Engine::ALL);
    let height = drawn_height(&rig);
    let sample = check_of(&checks, Engine::SampleRenderer);
    assert!((sample.worst_distance() - 2.0 / height).abs() < 1e-5, "{sample:?}");
    assert_eq!(sample.vertices_moved, 1);
    assert_eq!(check_of(&checks, Engine::ThreeJs).worst_distance(), 0.0);
}

#[test]
fn r14_the_sample_renderers_decomposition_keeps_a_proper_matrix() {
    // Scale (2,3,4) after a turn of 130° about an oblique axis: no mirror, nothing lost.
    let rotation = Quat::from_axis_angle(Vec3::new(1.0, 2.0, -0.5).normalize(), 130f32.to_radians());
    let matrix = Mat4::from_scale_rotation_translation(Vec3::new(2.0, 3.0, 4.0), rotation, Vec3::new(1.0, -2.0, 0.5));
    let trs = rigscope::engine::rules::sample_renderer_matrix_trs(matrix);
    assert!(trs.to_mat4().abs_diff_eq(matrix, 1e-5), "{trs:?}");
}

#[test]
fn r13_filament_turns_a_mirrored_joint_that_a_clip_rotates_and_three_culls_it() {
    // j1 scaled (-1,1,1), turned 90° about Z by the clip.
    let mut rig = fixture(2, 1, &[row(&[(1, 1.0)])]);
    rig.nodes[1].rest.scale = Vec3::new(-1.0, 1.0, 1.0);
    rig.materials = vec![Material::default()];
    rig.meshes[0].primitives[0].material = Some(0);
    assert!(!rig.materials[0].double_sided);
    // (1,-1,0) in j1's space. The file: mirrored (-1,-1,0), turned (1,-1,0), moved (1,0,0).
    // Filament keeps the scale as (-1,-1,-1) under the clip's rotation: (-1,1,0), turned
    // (-1,-1,0), moved (-1,0,0).
    for engine in Engine::ALL {
        let want = if engine == Engine::Filament {
            DVec3::new(-1.0, 0.0, 0.0)
        } else {
            DVec3::new(1.0, 0.0, 0.0)
        };
        assert_close(engine.name(), drawn_by(engine, &rig)[0], want);
    }
    let checks = check_engines(&rig, &Engine::ALL);
    assert!(check_of(&checks, Engine::Filament).worst_distance() > 1.0);
    assert_eq!(check_of(&checks, Engine::Godot).worst_distance(), 0.0);
    assert_found_by(
        &rig,
        "mirrored by their joints",
        &[
            Engine::ThreeJs,
            Engine::Bevy,
            Engine::BevyWebGl2,
            Engine::SampleRenderer,
        ],
    );
    // Double-sided, nothing shows its inside.
    rig.materials[0].double_sided = true;
    assert_found_by(&rig, "mirrored by their joints", &[]);
}

#[test]
fn r12_three_lights_a_joint_scaled_along_one_axis_with_skewed_normals() {
    // j1 turned 45° about Z and scaled (2,1,1) at rest; the normal (1,1,0)/√2. In j1's frame
    // the skin matrix takes the normal to (2,1,0) (three.js), its inverse transpose to
    // (1/2,1,0): 90° − 2·atan(1/2) apart, whatever the turn puts on both.
    let mut rig = fixture(2, 0, &[row(&[(1, 1.0)])]);
    rig.nodes[1].rest.rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
    rig.nodes[1].rest.scale = Vec3::new(2.0, 1.0, 1.0);
    rig.meshes[0].primitives[0].normals[0] = Vec3::new(1.0, 1.0, 0.0).normalize();
    let want = 90.0 - 2.0 * 0.5f64.atan().to_degrees();
    let checks = check_engines(&rig, &Engine::ALL);
    let three = check_of(&checks, Engine::ThreeJs);
    let line = three
        .findings
        .iter()
        .find(|f| f.contains("normals up to"))
        .expect("three skews");
    assert!(
        line.contains(&format!("up to {want:.1}°")),
        "{line}, expected {want:.3}°"
    );
    assert_found_by(&rig, "normals up to", &[Engine::ThreeJs]);
    let angle = rigscope::engine::findings::skew_degrees(
        &(Mat4::from_rotation_z(std::f32::consts::FRAC_PI_4) * Mat4::from_scale(Vec3::new(2.0, 1.0, 1.0))),
        Vec3::new(1.0, 1.0, 0.0).normalize(),
    );
    assert!((f64::from(angle) - want).abs() < 1e-3, "{angle}° against {want}°");
    // The fixture's chain turns rigidly: positions are where the file has them everywhere.
    let slerping = check_engines(&rig, &slerping_engines());
    assert!(slerping.iter().all(|c| c.worst_distance() == 0.0));
}

#[test]
fn r17_the_sample_renderer_stores_morph_offsets_in_half_floats() {
    // A 5001-unit offset at weight 1: f16 steps by 4 above 4096, so 5000 is stored.
    let mut rig = fixture(2, 1, &[row(&[(0, 1.0)]), row(&[(0, 1.0)]), row(&[(0, 1.0)])]);
    rig.morphs.targets = vec![vec![vec![MorphTarget {
        vertices: vec![0],
        position_offsets: vec![Vec3::new(5001.0, 0.0, 0.0)],
        normal_offsets: vec![Vec3::ZERO],
        tangent_offsets: Vec::new(),
    }]]];
    rig.morphs.default_weights = vec![vec![1.0]];
    rig.morphs.target_names = vec![Vec::new()];
    let checks = check_engines(&rig, &Engine::ALL);
    let height = drawn_height(&rig);
    for engine in Engine::ALL {
        let want = if engine == Engine::SampleRenderer {
            1.0 / height
        } else {
            0.0
        };
        let got = check_of(&checks, engine).worst_distance();
        assert!(
            (got - want).abs() < 1e-6 * want.max(1.0),
            "{}: {got} against {want}",
            engine.name()
        );
    }
}

#[test]
fn r15_filament_draws_no_target_past_its_cap_and_the_sample_renderer_past_its_layers() {
    // 300 targets; only the last has a weight. One attribute a target leaves the Sample
    // Renderer 2048 layers: all 300 kept.
    let mut rig = fixture(2, 1, &[row(&[(0, 1.0)]), row(&[(0, 1.0)]), row(&[(0, 1.0)])]);
    give_unit_targets(&mut rig, [vec![0.0; 299], vec![1.0]].concat());
    let checks = check_engines(&rig, &Engine::ALL);
    let height = drawn_height(&rig);
    for engine in Engine::ALL {
        let check = check_of(&checks, engine);
        match engine {
            Engine::Bevy | Engine::BevyWebGl2 => assert!(check.refused.is_some()),
            // The unit offset of target 299 is not drawn.
            Engine::Filament => assert!((check.worst_distance() - 1.0 / height).abs() < 1e-6, "{check:?}"),
            _ => assert_eq!(check.worst_distance(), 0.0, "{}", engine.name()),
        }
    }
    assert!(matches!(
        Engine::Bevy.draw(&rig),
        Err(EngineRefusal::TooManyMorphTargets { .. })
    ));
}

#[test]
fn r11_a_skeleton_that_is_not_above_every_joint_is_replaced_by_babylon_and_roots_unity_bounds() {
    let mut rig = fixture(2, 1, &[row(&[(1, 1.0)])]);
    rig.facts.skin_skeletons = vec![Some(1)];
    assert_found_by(
        &rig,
        "is not above every joint",
        &[
            Engine::UnityEditor,
            Engine::Unity4,
            Engine::Unity2,
            Engine::Unity1,
            Engine::BabylonJs,
        ],
    );
    rig.facts.skin_skeletons = vec![Some(0)];
    assert_found_by(&rig, "is not above every joint", &[]);
}

#[test]
fn r18_three_leaves_tangents_unmorphed() {
    let mut rig = fixture(2, 1, &[row(&[(0, 1.0)])]);
    rig.morphs.targets = vec![vec![vec![MorphTarget {
        vertices: vec![0],
        position_offsets: vec![Vec3::ZERO],
        normal_offsets: vec![Vec3::ZERO],
        tangent_offsets: vec![Vec3::X],
    }]]];
    rig.morphs.default_weights = vec![vec![0.5]];
    rig.morphs.target_names = vec![Vec::new()];
    assert_found_by(&rig, "tangents, which are not morphed", &[Engine::ThreeJs]);
}

#[test]
fn r19_bevy_drops_joints_on_a_mesh_drawn_by_a_node_without_skin() {
    let mut rig = fixture(2, 1, &[row(&[(1, 1.0)])]);
    rig.instances.push(MeshInstance {
        node: 0,
        mesh: 0,
        skin: None,
    });
    assert_found_by(&rig, "attributes are dropped", &[Engine::Bevy, Engine::BevyWebGl2]);
}

#[test]
fn r20_godot_and_babylon_make_bones_of_a_node_between_joints() {
    // Three chained nodes; the middle one is left out of the skin.
    let mut rig = fixture(3, 2, &[row(&[(1, 1.0)])]);
    let skin = &mut rig.skins[0];
    skin.joints = vec![0, 2];
    skin.inverse_binds = vec![skin.inverse_binds[0], skin.inverse_binds[2]];
    assert_found_by(&rig, "(first 'j1') become bones", &[Engine::Godot, Engine::BabylonJs]);
    // The drawing is the same everywhere.
    let checks = check_engines(&rig, &slerping_engines());
    assert!(checks.iter().all(|c| c.worst_distance() == 0.0));
}

#[test]
fn blender_blends_linear_rotation_keys_component_by_component() {
    // j1 turns 0 → 90° about Z over the second. A quarter in, the normalized straight blend of
    // the quaternions has turned 2·atan2(¼·sin 45°, ¾ + ¼·cos 45°), not 22.5°.
    let rig = fixture(2, 1, &[row(&[(1, 1.0)])]);
    let half = std::f64::consts::FRAC_PI_4;
    let want = 2.0 * (0.25 * half.sin()).atan2(0.75 + 0.25 * half.cos());
    for (engine, want) in [(Engine::Blender, want), (Engine::Godot, std::f64::consts::FRAC_PI_8)] {
        let drawn = engine.draw(&rig).unwrap();
        let pose = rigscope::anim::PoseBuffers::at(&drawn, Some(0), 0.25);
        let x_axis = pose.worlds[1].x_axis.truncate().as_dvec3();
        let turned = x_axis.y.atan2(x_axis.x);
        // The keys the rule writes follow the blend within 1e-5 rad; slerp parts by 1.6e-2.
        assert!(
            (turned - want).abs() < 1e-5,
            "{}: turned {}°, expected {}°",
            engine.name(),
            turned.to_degrees(),
            want.to_degrees()
        );
    }
    // `check` measures the clip as Blender plays it.
    let blender = &check_engines(&rig, &[Engine::Blender])[0];
    assert_eq!(blender.vertices_moved, 1, "{blender:?}");
    assert!(blender.worst_distance() > 1e-3, "{blender:?}");
}
