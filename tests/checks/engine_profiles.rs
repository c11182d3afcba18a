//! Engine profiles against the research note's fixtures: small rigs that reveal each engine's
//! rules, built here. What each engine draws is written out per fixture as the note states it
//! (the weights each engine uses), and the positions are computed in f64 from those weights and
//! the fixture's known joint turn, independently of the profile code.

use crate::common;
use glam::{DMat4, DQuat, DVec3, Mat4, Quat, Vec3, Vec4};
use rigscope::anim::PoseBuffers;
use rigscope::engine::check::check_engines;
use rigscope::engine::{Engine, EngineRefusal};
use rigscope::rig::{
    Channel, Clip, Influences, Interpolation, Mesh, MeshInstance, MorphTarget, Node, Primitive, Property, Rig, Skin,
    Trs,
};

/// The joint every fixture turns, by 90° about Z, over its one-second clip.
const TURN: f64 = std::f64::consts::FRAC_PI_2;

/// A chain of `joints` joints up +Y one unit apart, joint `turned` turned by [`TURN`] at the end
/// of the clip; one vertex per row of `rows` (8 slots: sets 0 and 1), at (1, v·0.1, 0).
pub(super) fn fixture(joints: usize, turned: usize, rows: &[[(u16, f32); 8]]) -> Rig {
    let nodes: Vec<Node> = (0..joints)
        .map(|j| Node {
            name: format!("j{j}"),
            parent: j.checked_sub(1),
            rest: Trs {
                translation: if j == 0 { Vec3::ZERO } else { Vec3::Y },
                ..Trs::IDENTITY
            },
        })
        .collect();
    let inverse_binds = (0..joints)
        .map(|j| Mat4::from_translation(-Vec3::Y * j as f32))
        .collect();
    let positions: Vec<Vec3> = (0..rows.len()).map(|v| Vec3::new(1.0, v as f32 * 0.1, 0.0)).collect();
    let mut influences = Influences {
        sets: 2,
        joints: Vec::new(),
        weights: Vec::new(),
    };
    for row in rows {
        for set in 0..2 {
            let slots: [(u16, f32); 4] = row[set * 4..set * 4 + 4].try_into().unwrap();
            influences.joints.push(slots.map(|s| s.0));
            influences.weights.push(slots.map(|s| s.1));
        }
    }
    let count = positions.len();
    let primitive = Primitive {
        normals: vec![Vec3::Z; count],
        uvs: Vec::new(),
        uv_sets: Default::default(),
        tangents: Vec::new(),
        influences: Some(influences),
        indices: (0..count as u32)
            .chain(std::iter::repeat_n(0, (3 - count % 3) % 3))
            .collect(),
        material: None,
        colors: Vec::new(),
        positions,
    };
    let turn = Quat::from_rotation_z(TURN as f32);
    let mut rig = Rig {
        name: "fixture".into(),
        skins: vec![Skin {
            name: "skin".into(),
            joints: (0..joints).collect(),
            inverse_binds,
        }],
        meshes: vec![Mesh {
            name: "quad".into(),
            primitives: vec![primitive],
        }],
        instances: vec![MeshInstance {
            node: joints,
            mesh: 0,
            skin: Some(0),
        }],
        clips: vec![Clip {
            name: "turn".into(),
            duration: 1.0,
            channels: vec![Channel {
                node: turned,
                property: Property::Rotation,
                interpolation: Interpolation::Linear,
                times: vec![0.0, 1.0],
                values: vec![Vec4::from(Quat::IDENTITY), Vec4::from(turn)],
            }],
            source: None,
        }],
        nodes,
        ..Rig::default()
    };
    rig.nodes.push(Node {
        name: "mesh".into(),
        parent: None,
        rest: Trs::IDENTITY,
    });
    rig
}

/// Where a vertex at `p` bound to `joint` alone is at the clip's end: joints at or after the
/// turned one turn about its place, the others stay.
pub(super) fn follows(p: DVec3, joint: u16, turned: usize) -> DVec3 {
    if usize::from(joint) < turned {
        return p;
    }
    let pivot = DVec3::Y * turned as f64;
    DQuat::from_rotation_z(TURN) * (p - pivot) + pivot
}

/// What an engine's weights put where, in f64: Σ w·(joint's motion of p), and the vertex at
/// the origin for [`Drawn::Origin`].
#[derive(Debug, Clone)]
enum Drawn {
    Weights(Vec<(u16, f64)>),
    Origin,
    /// The identity: the vertex where the mesh has it.
    Unmoved,
}

fn expected(drawn: &Drawn, p: DVec3, turned: usize) -> DVec3 {
    match drawn {
        Drawn::Weights(w) => w.iter().map(|&(j, w)| follows(p, j, turned) * w).sum(),
        Drawn::Origin => DVec3::ZERO,
        Drawn::Unmoved => p,
    }
}

/// The engine's drawing of vertex `v` of `rig` at the clip's end, through the profile and
/// Rigscope's own pose and skinning.
pub(super) fn drawn_by(engine: Engine, rig: &Rig) -> Vec<Vec3> {
    let drawn = engine.draw(rig).expect("the engine loads the fixture");
    let pose = PoseBuffers::at(&drawn, Some(0), 1.0);
    let primitive = &drawn.meshes[0].primitives[0];
    let mut out = vec![Vec3::ZERO; primitive.vertex_count()];
    rigscope::skin::fast::skin_lbs_positions(
        &pose.palettes[0],
        primitive.influences.as_ref().unwrap(),
        &primitive.positions,
        &mut out,
    );
    out
}

/// Checks every engine's drawing of `rig`'s vertex `v` against `want(engine)`.
fn assert_drawn(label: &str, rig: &Rig, turned: usize, v: usize, want: impl Fn(Engine) -> Drawn) {
    let p = rig.meshes[0].primitives[0].positions[v].as_dvec3();
    for engine in Engine::ALL {
        let got = drawn_by(engine, rig)[v].as_dvec3();
        let drawn = want(engine);
        let reference = expected(&drawn, p, turned);
        let off = (got - reference).length();
        assert!(
            off < 1e-5,
            "{label}, {}: drew {got} where the engine draws {reference} ({drawn:?})",
            engine.name()
        );
    }
}

pub(super) fn row(slots: &[(u16, f32)]) -> [(u16, f32); 8] {
    let mut row = [(0, 0.0); 8];
    row[..slots.len()].copy_from_slice(slots);
    row
}

fn w(pairs: &[(u16, f64)]) -> Drawn {
    Drawn::Weights(pairs.to_vec())
}

/// A weight stored in 8 bits, as Unreal keeps it.
fn byte(units: u32) -> f64 {
    f64::from(units) / 255.0
}

#[test]
fn r1_six_influences_are_cut_to_the_first_set_renormalized_or_not_by_engine() {
    // W0 = [.3,.2,.1,.1] on j0–j3, W1 = [.2,.1] on j4, j5; only j4 turns.
    let rig = fixture(
        6,
        4,
        &[row(&[(0, 0.3), (1, 0.2), (2, 0.1), (3, 0.1), (4, 0.2), (5, 0.1)])],
    );
    let all = w(&[(0, 0.3), (1, 0.2), (2, 0.1), (3, 0.1), (4, 0.2), (5, 0.1)]);
    let first = |scale: f64| w(&[(0, 0.3 * scale), (1, 0.2 * scale), (2, 0.1 * scale), (3, 0.1 * scale)]);
    assert_drawn("R1", &rig, 4, 0, |engine| match engine {
        Engine::SampleRenderer | Engine::BabylonJs | Engine::Godot | Engine::Blender => all.clone(),
        Engine::ThreeJs | Engine::Filament | Engine::UnityEditor => first(1.0 / 0.7),
        Engine::Bevy | Engine::BevyWebGl2 | Engine::Unity4 => first(1.0),
        Engine::Unity2 => w(&[(0, 0.6), (1, 0.4)]),
        Engine::Unity1 => w(&[(0, 1.0)]),
        // .3/.7, .2/.7, .1/.7, .1/.7 → 109.3, 72.9, 36.4, 36.4 units: 109 + 73 + 36 + 36 = 254,
        // the missing unit to the largest.
        Engine::Unreal => w(&[(0, byte(110)), (1, byte(73)), (2, byte(36)), (3, byte(36))]),
    });
}

#[test]
fn r2_r6_a_vertex_without_weight_is_drawn_where_each_engine_puts_it() {
    // Vertex 0: set 0 all zero, set 1 on j3 (a 12-influence rig's tail). Vertex 1: no weight at
    // all, JOINTS_0.x naming j2.
    let rig = fixture(
        4,
        2,
        &[
            row(&[(0, 0.0), (1, 0.0), (2, 0.0), (3, 0.0), (3, 1.0)]),
            row(&[(2, 0.0)]),
        ],
    );
    assert_drawn("R2", &rig, 2, 0, |engine| match engine {
        Engine::SampleRenderer | Engine::BabylonJs | Engine::Godot | Engine::Blender => w(&[(3, 1.0)]),
        // Set 0 alone is empty.
        Engine::ThreeJs => w(&[(0, 1.0)]),
        Engine::Filament | Engine::Unreal => Drawn::Unmoved,
        _ => Drawn::Origin,
    });
    assert_drawn("R6", &rig, 2, 1, |engine| match engine {
        Engine::ThreeJs => w(&[(2, 1.0)]),
        Engine::SampleRenderer | Engine::Filament | Engine::Unreal => Drawn::Unmoved,
        _ => Drawn::Origin,
    });
}

#[test]
fn r3_r4_unity_keeps_the_largest_weights_sorted_at_its_quality_setting() {
    // Unsorted [.1,.2,.3,.4] on j0–j3, j2 turned.
    let rig = fixture(4, 2, &[row(&[(0, 0.1), (1, 0.2), (2, 0.3), (3, 0.4)])]);
    let all = w(&[(0, 0.1), (1, 0.2), (2, 0.3), (3, 0.4)]);
    assert_drawn("R3", &rig, 2, 0, |engine| match engine {
        Engine::Unity2 => w(&[(3, 0.4 / 0.7), (2, 0.3 / 0.7)]),
        Engine::Unity1 => w(&[(3, 1.0)]),
        // 25.5, 51, 76.5, 102 units: 26 + 51 + 77 + 102 = 256, one unit off the largest.
        Engine::Unreal => w(&[(0, byte(26)), (1, byte(51)), (2, byte(77)), (3, byte(101))]),
        _ => all.clone(),
    });
    // Four equal weights: one weight keeps j0, two keep j0 and j1 at one half.
    let rig = fixture(4, 1, &[row(&[(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)])]);
    assert_drawn("R4", &rig, 1, 0, |engine| match engine {
        Engine::Unity1 => w(&[(0, 1.0)]),
        Engine::Unity2 => w(&[(0, 0.5), (1, 0.5)]),
        // 63.75 units each: 64 × 4 = 256, one unit off the first.
        Engine::Unreal => w(&[(0, byte(63)), (1, byte(64)), (2, byte(64)), (3, byte(64))]),
        _ => w(&[(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)]),
    });
}

#[test]
fn r5_weights_summing_to_a_half_are_scaled_up_only_by_the_renormalizing_engines() {
    let rig = fixture(3, 1, &[row(&[(0, 0.25), (1, 0.25)])]);
    let full = w(&[(0, 0.5), (1, 0.5)]);
    let half = w(&[(0, 0.25), (1, 0.25)]);
    assert_drawn("R5", &rig, 1, 0, |engine| match engine {
        // 127.5 units each: 128 + 128 = 256, one unit off the first.
        Engine::Unreal => w(&[(0, byte(127)), (1, byte(128))]),
        Engine::ThreeJs
        | Engine::Godot
        | Engine::UnityEditor
        | Engine::Filament
        | Engine::BabylonJs
        | Engine::Blender
        | Engine::Unity2 => full.clone(),
        Engine::Unity1 => w(&[(0, 1.0)]),
        Engine::SampleRenderer | Engine::Bevy | Engine::BevyWebGl2 | Engine::Unity4 => half.clone(),
    });
}

#[test]
fn r9_a_joint_named_twice_is_summed_except_in_unreal_which_keeps_the_larger() {
    // JOINTS_0 = [3,3,0,0], WEIGHTS_0 = [.3,.2,.5,0]; j3 turned.
    let rig = fixture(4, 3, &[row(&[(3, 0.3), (3, 0.2), (0, 0.5)])]);
    assert_drawn("R9", &rig, 3, 0, |engine| match engine {
        // .3 and .5 renormalized to .375 and .625: 95.6 and 159.4 units → 96 + 159.
        Engine::Unreal => w(&[(3, byte(96)), (0, byte(159))]),
        // Each weight replaces the one before in j3's vertex group: .2 and .5, renormalized.
        Engine::Blender => w(&[(3, 0.2 / 0.7), (0, 0.5 / 0.7)]),
        Engine::Unity2 => w(&[(0, 0.5 / 0.8), (3, 0.3 / 0.8)]),
        Engine::Unity1 => w(&[(0, 1.0)]),
        _ => w(&[(3, 0.5), (0, 0.5)]),
    });
}

#[test]
fn blender_leaves_a_vertex_of_less_than_1e4_weight_where_the_mesh_has_it() {
    // 5e-5 on j1 alone: the armature deforms only above a total of 1e-4; the others scale the
    // turn up (or not) as they do any weight sum.
    let rig = fixture(2, 1, &[row(&[(1, 0.00005)])]);
    let p = rig.meshes[0].primitives[0].positions[0].as_dvec3();
    let got = drawn_by(Engine::Blender, &rig)[0].as_dvec3();
    assert!((got - p).length() < 1e-6, "Blender drew {got}, the mesh has {p}");
    let three = drawn_by(Engine::ThreeJs, &rig)[0].as_dvec3();
    assert!(
        (three - follows(p, 1, 1)).length() < 1e-5,
        "three.js renormalizes: {three}"
    );
}

/// Every engine but Blender: the fixtures' clip turns a joint 90° between two keys, which
/// Blender blends component by component (see engine_shading's
/// `blender_blends_linear_rotation_keys_component_by_component`), so it draws every turning
/// vertex apart mid-clip whatever the rule a test is about.
pub(super) fn slerping_engines() -> Vec<Engine> {
    Engine::ALL.into_iter().filter(|&e| e != Engine::Blender).collect()
}

#[test]
fn r10_a_skin_of_identity_binds_draws_the_same_everywhere() {
    let mut rig = fixture(3, 1, &[row(&[(1, 1.0)])]);
    rig.skins[0].inverse_binds = vec![Mat4::IDENTITY; 3];
    rig.nodes.iter_mut().for_each(|n| n.rest.translation = Vec3::ZERO);
    let checks = check_engines(&rig, &slerping_engines());
    for check in &checks {
        assert_eq!(
            (check.rows_changed, check.worst_distance()),
            (0, 0.0),
            "{}",
            check.engine
        );
    }
}

#[test]
fn r8_three_hundred_joints_are_refused_by_filament_and_read_out_of_range_on_webgl2() {
    let rig = fixture(300, 299, &[row(&[(299, 1.0)]), row(&[(10, 1.0)])]);
    assert!(matches!(
        Engine::Filament.draw(&rig),
        Err(EngineRefusal::TooManyJoints {
            joints: 300,
            limit: 256,
            ..
        })
    ));
    let p = rig.meshes[0].primitives[0].positions[0].as_dvec3();
    let turned = follows(p, 299, 299);
    for engine in Engine::ALL.into_iter().filter(|&e| e != Engine::Filament) {
        let got = drawn_by(engine, &rig)[0].as_dvec3();
        let want = if engine == Engine::BevyWebGl2 {
            DVec3::ZERO
        } else {
            turned
        };
        // f32 positions 300 units from the origin: 1e-5 of the chain's height.
        assert!((got - want).length() < 3e-3, "{}: {got} against {want}", engine.name());
    }
    let checks = check_engines(&rig, &Engine::ALL);
    let by_name = |name: &str| checks.iter().find(|c| c.engine == name).unwrap();
    assert!(by_name("filament").refused.as_deref().unwrap().contains("300 joints"));
    assert!(by_name("bevy").findings[0].contains("loads with a warning"));
    assert!(by_name("unreal").findings[0].contains("split into sections"));
    assert_eq!(by_name("bevy-webgl2").vertices_moved, 1);
    assert!(by_name("three").findings.is_empty() && by_name("three").refused.is_none());
}

/// One morph target per weight in `weights` on the fixture's only mesh, each moving vertex 0
/// by +X, with those default weights.
pub(super) fn give_unit_targets(rig: &mut Rig, weights: Vec<f32>) {
    let target = MorphTarget {
        vertices: vec![0],
        position_offsets: vec![Vec3::X],
        normal_offsets: vec![Vec3::ZERO],
        tangent_offsets: Vec::new(),
    };
    rig.morphs.targets = vec![vec![vec![target; weights.len()]]];
    rig.morphs.default_weights = vec![weights];
    rig.morphs.target_names = vec![Vec::new()];
}

#[test]
fn r15_three_hundred_morph_targets_are_refused_by_bevy_and_cut_by_filament() {
    let mut rig = fixture(2, 1, &[row(&[(1, 1.0)]), row(&[(1, 1.0)]), row(&[(1, 1.0)])]);
    give_unit_targets(&mut rig, vec![0.0; 300]);
    assert!(matches!(
        Engine::Bevy.draw(&rig),
        Err(EngineRefusal::TooManyMorphTargets {
            targets: 300,
            limit: 256,
            ..
        })
    ));
    let checks = check_engines(&rig, &Engine::ALL);
    let by_name = |name: &str| checks.iter().find(|c| c.engine == name).unwrap();
    assert!(by_name("filament").findings[0].contains("300 morph targets, past the cap of 256"));
    assert!(by_name("bevy-webgl2").refused.is_some());
    // One attribute a target: 2048 layers hold them all.
    assert!(by_name("sample-renderer").findings.is_empty());
}

#[test]
fn r7_only_the_sample_renderer_lights_a_transformed_skinned_node_with_its_transform() {
    let mut rig = fixture(2, 1, &[row(&[(1, 1.0)])]);
    let mesh_node = rig.instances[0].node;
    rig.nodes[mesh_node].rest = Trs {
        translation: Vec3::new(2.0, 0.0, 0.0),
        rotation: Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
        ..Trs::IDENTITY
    };
    for check in check_engines(&rig, &slerping_engines()) {
        assert_eq!(
            check.worst_distance(),
            0.0,
            "positions ignore the node: {}",
            check.engine
        );
        assert_eq!(
            check.findings.len(),
            usize::from(check.engine == "sample-renderer"),
            "{}: {:?}",
            check.engine,
            check.findings
        );
    }
}

/// The shared rigs as each engine draws them: the worst distance is what the f64 reference of
/// the rows each engine keeps gives, so `check` measures the drawing, and the rigs whose
/// weights are already four sorted, normalized floats move in no engine but the ones that cut
/// to fewer weights.
#[test]
fn check_on_fox_agrees_with_an_f64_skinning_of_the_rows_each_engine_keeps() {
    let Some(rigs) = common::shared_rigs() else { return };
    let rig = common::load_rig(&rigs, "Fox.glb");
    let checks = check_engines(&rig, &[Engine::Unity1, Engine::ThreeJs]);
    let height = rigscope::engine::check::drawn_height(&rig);
    let (unity1, three) = (&checks[0], &checks[1]);
    assert_eq!(three.worst_distance(), 0.0, "Fox's weights are four normalized floats");
    let worst = unity1.worst.as_ref().expect("one weight moves vertices");
    // The worst vertex again, in f64: its file weights against its largest weight alone.
    let pose = worst_pose(&rig, worst);
    let instance = rig.instances.iter().position(|i| i.skin.is_some()).unwrap();
    let primitive = &rig.meshes[rig.instances[instance].mesh].primitives[worst.primitive];
    let influences = primitive.influences.as_ref().unwrap();
    let p = primitive.positions[worst.vertex].as_dvec3().extend(1.0);
    let palette: Vec<DMat4> = pose.palettes[instance].iter().map(|m| m.as_dmat4()).collect();
    let pairs: Vec<(u16, f32)> = influences.of_vertex(worst.vertex).collect();
    let file: DVec3 = (pairs.iter())
        .map(|&(j, w)| (palette[usize::from(j)] * p).truncate() * f64::from(w))
        .sum();
    let largest = pairs
        .iter()
        .copied()
        .reduce(|a, b| if b.1 > a.1 { b } else { a })
        .unwrap();
    let one = (palette[usize::from(largest.0)] * p).truncate();
    let reference = (file - one).length() / height;
    assert!(
        (worst.distance - reference).abs() < 1e-5,
        "check says {} of the height, f64 says {reference}",
        worst.distance
    );
}

/// The pose a check found its worst vertex at: a clip's moment, or a joint of the rest pose
/// turned by the audit's sweep.
fn worst_pose(rig: &Rig, worst: &rigscope::engine::check::WorstVertex) -> PoseBuffers {
    let mut pose = PoseBuffers::new(rig);
    let mut overrides = vec![rigscope::anim::JointOverride::IDENTITY; rig.nodes.len()];
    if let Some(turn) = &worst.turn {
        overrides[turn.node] = turn.joint_override();
    }
    let inputs = rigscope::anim::PoseInputs {
        overrides: &overrides,
        ..rigscope::anim::PoseInputs::clip_at(worst.clip.as_deref().and_then(|c| rig.find_clip(c)), worst.time)
    };
    rigscope::anim::evaluate_pose(rig, &inputs, &mut pose);
    pose
}

/// The farthest, as a fraction of `height`, that `kept` weights draw the fixture's vertex at
/// `p` from where its `weights` draw it over the audit's sweep: each joint of the chain (its
/// pivot at (0, j, 0), its bone along Y, bound unturned) turned alone ±90° about X, Y and Z;
/// the joints before it stay.
pub(super) fn worst_over_turns(
    p: DVec3,
    joints: usize,
    weights: &[(u16, f64)],
    kept: &[(u16, f64)],
    height: f64,
) -> f64 {
    let mut worst: f64 = 0.0;
    for turned in 0..joints {
        let pivot = DVec3::Y * turned as f64;
        for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
            for degrees in [-90.0f64, 90.0] {
                let turn = DQuat::from_axis_angle(axis, degrees.to_radians());
                let moved = |joint: u16| {
                    if usize::from(joint) < turned {
                        p
                    } else {
                        turn * (p - pivot) + pivot
                    }
                };
                let drawn = |pairs: &[(u16, f64)]| -> DVec3 { pairs.iter().map(|&(j, w)| moved(j) * w).sum() };
                worst = worst.max((drawn(weights) - drawn(kept)).length() / height);
            }
        }
    }
    worst
}

/// A rig without clips still moves: check turns each joint of the rest pose ±90° about its
/// bone and across it, as the audit does, where Unity at 2 weights drops a third influence
/// that the rest pose hides. The worst distance is recomputed in f64 over the same turns.
#[test]
fn check_finds_a_dropped_influence_that_only_a_turned_joint_shows() {
    let weights: [(u16, f32); 3] = [(0, 0.5), (1, 0.3), (2, 0.2)];
    let mut rig = fixture(3, 1, &[row(&weights), row(&weights)]);
    rig.clips.clear();
    let check = &check_engines(&rig, &[Engine::Unity2])[0];
    let worst = check.worst.as_ref().expect("a turned joint moves the vertex");
    assert!(
        worst.clip.is_none() && worst.turn.is_some(),
        "found at a turn: {worst:?}"
    );
    // The vertices stand 0.1 apart vertically at rest: the height. Unity keeps the two largest
    // weights, scaled to sum to one.
    let file = weights.map(|(j, w)| (j, f64::from(w)));
    let kept_sum = file[0].1 + file[1].1;
    let unity = [file[0], file[1]].map(|(j, w)| (j, w / kept_sum));
    let reference = [DVec3::new(1.0, 0.0, 0.0), DVec3::new(1.0, 0.1, 0.0)]
        .map(|p| worst_over_turns(p, 3, &file, &unity, 0.1))
        .into_iter()
        .fold(0.0, f64::max);
    assert!(
        (worst.distance - reference).abs() < 1e-5 * reference,
        "check says {} of the height, f64 says {reference}",
        worst.distance
    );
}

/// View ▸ Engine: the viewer's CPU path skins the engine's influences, the file's drawing comes
/// back with "the file", and an engine that refuses the rig leaves the file's drawing shown.
#[test]
fn the_viewer_draws_the_engine_chosen_and_keeps_the_file_where_an_engine_refuses() {
    let Some(rigs) = common::shared_rigs() else { return };
    let fox = common::load_rig(&rigs, "Fox.glb");
    let mut viewer = rigscope::viewer::Viewer::new(fox.clone(), None);
    viewer.set_skinning(rigscope::skin::SkinningPath::Cpu, rigscope::skin::SkinningMethod::Lbs);
    viewer.select_clip(fox.find_clip("Run"));
    viewer.seek(0.87);
    let instance = fox.instances.iter().position(|i| i.skin.is_some()).unwrap();
    let positions = |viewer: &mut rigscope::viewer::Viewer| {
        let rig = std::sync::Arc::clone(viewer.document().shown_rig().0);
        viewer.skin_on_cpu().positions(&rig, instance, 0).to_vec()
    };
    let file = positions(&mut viewer);
    viewer.set_engine(Some(Engine::Unity1)).unwrap();
    let unity1 = positions(&mut viewer);
    let drawn = Engine::Unity1.draw(&fox).unwrap();
    let pose = PoseBuffers::at(&drawn, fox.find_clip("Run"), 0.87);
    let primitive = &drawn.meshes[fox.instances[instance].mesh].primitives[0];
    let mut want = vec![Vec3::ZERO; primitive.vertex_count()];
    rigscope::skin::fast::skin_lbs_positions(
        &pose.palettes[instance],
        primitive.influences.as_ref().unwrap(),
        &primitive.positions,
        &mut want,
    );
    let off = |a: &[Vec3], b: &[Vec3]| a.iter().zip(b).map(|(a, b)| (*a - *b).length()).fold(0.0f32, f32::max);
    // Two codes that round differently: a few units in the last place of the largest coordinate.
    let largest = want.iter().map(|p| p.abs().max_element()).fold(0.0f32, f32::max);
    assert!(
        off(&unity1, &want) < 4.0 * f32::EPSILON * largest,
        "{}",
        off(&unity1, &want)
    );
    assert!(off(&unity1, &file) > 1.0, "one weight moves Fox's vertices visibly");
    viewer.set_engine(None).unwrap();
    assert_eq!(positions(&mut viewer), file);

    // In the window the drawing is made on a thread: the file's drawing stays until it is done.
    viewer.background_checks = true;
    let file_generation = viewer.document().shown_rig().1;
    viewer.set_engine(Some(Engine::Unity1)).unwrap();
    assert_eq!(
        viewer.document().shown_rig().1,
        file_generation,
        "not swapped in mid-frame"
    );
    let started = std::time::Instant::now();
    while viewer.document().shown_rig().1 == file_generation {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the drawing never came"
        );
        viewer.prepare_frame();
        std::thread::yield_now();
    }
    assert_eq!(positions(&mut viewer), unity1);

    let mut viewer = rigscope::viewer::Viewer::new(fixture(300, 299, &[row(&[(299, 1.0)])]), None);
    assert!(viewer.set_engine(Some(Engine::Filament)).is_err());
    assert_eq!(viewer.view.engine, None);
    viewer.set_engine(Some(Engine::Bevy)).unwrap();
    assert_eq!(viewer.view.engine, Some(Engine::Bevy));
}

/// `rigscope check`'s exit status and JSON: 1 when an engine listed draws past the tolerance,
/// 0 when none does, 2 for a file that cannot be read or an engine that does not exist.
#[test]
fn check_exits_by_the_engines_listed_and_prints_json() {
    let Some(rigs) = common::shared_rigs() else { return };
    let fox = rigs.join("Fox.glb");
    let fox = fox.to_str().unwrap();
    let (status, stdout, _) = common::run_rigscope(&["check", fox, "--engines", "unity-1,three", "--json"]);
    assert_eq!(status, Some(1));
    let document: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let engines = document["engines"].as_array().unwrap();
    assert_eq!(engines.len(), 2);
    assert_eq!(engines[0]["engine"], "unity-1");
    assert_eq!(engines[0]["flagged"], true);
    assert!(engines[0]["worst"]["distance"].as_f64().unwrap() > 0.1);
    assert_eq!(engines[1]["flagged"], false);
    let (status, stdout, _) = common::run_rigscope(&["check", fox, "--engines", "three"]);
    assert_eq!(status, Some(0), "{stdout}");
    assert!(stdout.contains("three.js"), "{stdout}");
    let (status, _, stderr) = common::run_rigscope(&["check", "/nonexistent.glb"]);
    assert_eq!(status, Some(2), "{stderr}");
    let (status, _, stderr) = common::run_rigscope(&["check", fox, "--engines", "ogre"]);
    assert_eq!(status, Some(2));
    assert!(stderr.contains("no engine profile 'ogre'"), "{stderr}");
}

/// `fix --for`: RobotExpressive's hands, whose weights sum to as much as 1.76, drawn apart by the
/// engines that renormalize and those that do not; after the fix every engine listed draws the
/// file within 1e-4 of its height, and the fix says how far its drawing moved.
#[test]
fn fix_for_engines_makes_a_file_every_listed_engine_draws_alike() {
    let Some(real) = common::shared_folder("rigs/real") else {
        return;
    };
    let input = real.join("RobotExpressive.glb");
    let dir = common::temp_dir("fix_for_engines");
    let output = dir.join("robot.fixed.glb");
    let (input, output) = (input.to_str().unwrap(), output.to_str().unwrap());
    let engines = "three,bevy,babylon,unreal";
    let (status, _, _) = common::run_rigscope(&["check", input, "--engines", engines, "--tolerance", "1e-4"]);
    assert_eq!(status, Some(1), "the engines draw the input apart");
    let (status, stdout, stderr) = common::run_rigscope(&["fix", input, "--for", engines, "--out", output]);
    assert_eq!(status, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("the repaired drawing is within"), "{stdout}");
    assert_eq!(stdout.matches("draws the repaired rig within").count(), 4, "{stdout}");
    assert!(
        stdout.contains("multiples of 1/255"),
        "Unreal keeps 8-bit weights: {stdout}"
    );
    let (status, stdout, _) = common::run_rigscope(&["check", output, "--engines", engines, "--tolerance", "1e-4"]);
    assert_eq!(status, Some(0), "{stdout}");
    let (status, _, stderr) = common::run_rigscope(&["fix", input, "--for", "three", "--normalize", "--out", output]);
    assert_eq!(status, Some(2), "--for stands alone: {stderr}");
}
