//! VRM spring bones against the specification's algorithm written out again here in f64
//! (Verlet tails, stiffness toward the rest direction, gravity, drag, bone length, sphere and
//! capsule colliders, the joint turned to its tail), and on the corpus avatars: chains that
//! hang and settle, tails kept out of colliders.

use crate::common;

use glam::{DMat4, DQuat, DVec3, Vec3};
use rigscope::anim::spring_bones::{SPRING_STEP_SECONDS, SpringSim};
use rigscope::anim::{JointOverride, PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::rig::{Rig, load_slice};
use serde_json::json;

/// Node rest transforms of the synthetic rig: a root, a chain of five (four joints and the
/// last one's tail) bent and offset so that no joint's axis is its parent's, and a collider
/// node under the root.
const CHAIN: [([f64; 3], [f64; 3]); 5] = [
    ([0.0, -0.05, 0.0], [0.0, 0.0, 0.0]),
    ([0.0, -0.1, 0.0], [0.0, 0.0, 20.0]),
    ([0.02, -0.1, 0.01], [10.0, 0.0, 0.0]),
    ([0.0, -0.1, 0.0], [0.0, -15.0, 0.0]),
    ([0.0, -0.08, 0.0], [0.0, 0.0, 0.0]),
];
const ROOT: [f64; 3] = [0.0, 1.0, 0.0];
const COLLIDER_AT: [f64; 3] = [0.09, -0.28, 0.0];
const COLLIDER_RADIUS: f64 = 0.05;
const HIT_RADIUS: f64 = 0.02;
const STIFFNESS: f64 = 1.0;
const GRAVITY: f64 = 0.5;
const DRAG: f64 = 0.3;

fn rotation_of(degrees: [f64; 3]) -> DQuat {
    let r = DVec3::from(degrees) * (std::f64::consts::PI / 180.0);
    DQuat::from_euler(glam::EulerRot::XYZ, r.x, r.y, r.z)
}

fn synthetic_rig() -> Rig {
    let mut nodes = vec![json!({ "name": "root", "translation": ROOT, "children": [1, 6] })];
    for (i, (translation, degrees)) in CHAIN.iter().enumerate() {
        let q = rotation_of(*degrees);
        let mut node = json!({ "name": format!("j{i}"), "translation": translation, "rotation": [q.x, q.y, q.z, q.w] });
        if i + 1 < CHAIN.len() {
            node["children"] = json!([i + 2]);
        }
        nodes.push(node);
    }
    nodes.push(json!({ "name": "collider", "translation": COLLIDER_AT }));
    let joint = json!({
        "hitRadius": HIT_RADIUS, "stiffness": STIFFNESS, "gravityPower": GRAVITY,
        "gravityDir": [0.0, -1.0, 0.0], "dragForce": DRAG
    });
    let mut joints: Vec<_> = (1..5)
        .map(|n| {
            let mut j = joint.clone();
            j["node"] = json!(n);
            j
        })
        .collect();
    joints.push(json!({ "node": 5 }));
    let document = json!({
        "extensionsUsed": ["VRMC_springBone"],
        "extensions": { "VRMC_springBone": {
            "specVersion": "1.0",
            "colliders": [{ "node": 6, "shape": { "sphere": { "offset": [0.0, 0.0, 0.0], "radius": COLLIDER_RADIUS } } }],
            "colliderGroups": [{ "colliders": [0] }],
            "springs": [{ "joints": joints, "colliderGroups": [0] }]
        }},
        "scenes": [{ "nodes": [0] }],
        "nodes": nodes,
    });
    load_slice(&common::gltf_with(document, &[]), None, "chain.gltf").expect("the synthetic chain loads")
}

/// Where the root is moved to at simulated time `t`: a swing in X and a slow drift in Z.
fn root_offset(t: f64) -> DVec3 {
    DVec3::new(0.3 * (std::f64::consts::TAU * t).sin(), 0.0, 0.1 * t)
}

/// The specification's simulation of the synthetic chain, in f64.
struct Reference {
    rest: Vec<(DVec3, DQuat)>,
    rotations: Vec<DQuat>,
    local_tails: Vec<DVec3>,
    current: Vec<DVec3>,
    previous: Vec<DVec3>,
    collisions: usize,
}

impl Reference {
    fn new() -> Reference {
        let rest: Vec<(DVec3, DQuat)> = CHAIN.iter().map(|(t, r)| (DVec3::from(*t), rotation_of(*r))).collect();
        let rotations: Vec<DQuat> = rest.iter().map(|(_, r)| *r).collect();
        let mut reference = Reference {
            rest,
            rotations,
            local_tails: Vec::new(),
            current: Vec::new(),
            previous: Vec::new(),
            collisions: 0,
        };
        // Tails at rest, in each joint's own space.
        let worlds = reference.worlds(DVec3::ZERO);
        reference.local_tails = (0..4)
            .map(|i| {
                worlds[i + 1]
                    .inverse()
                    .transform_point3(worlds[i + 2].w_axis.truncate())
            })
            .collect();
        reference
    }

    /// World matrices of the root (index 0) and the chain's five nodes, the root moved by
    /// `offset`.
    fn worlds(&self, offset: DVec3) -> Vec<DMat4> {
        let mut worlds = vec![DMat4::from_translation(DVec3::from(ROOT) + offset)];
        for (i, (translation, _)) in self.rest.iter().enumerate() {
            let local = DMat4::from_rotation_translation(self.rotations[i], *translation);
            worlds.push(worlds[i] * local);
        }
        worlds
    }

    fn start(&mut self, offset: DVec3) {
        let worlds = self.worlds(offset);
        self.current = (0..4)
            .map(|i| worlds[i + 1].transform_point3(self.local_tails[i]))
            .collect();
        self.previous = self.current.clone();
    }

    fn step(&mut self, offset: DVec3, dt: f64) {
        let collider = DVec3::from(ROOT) + offset + DVec3::from(COLLIDER_AT);
        for i in 0..4 {
            let parent = self.worlds(offset)[i];
            let (translation, rest_rotation) = self.rest[i];
            let frame = parent * DMat4::from_rotation_translation(rest_rotation, translation);
            let head = frame.w_axis.truncate();
            let axis = self.local_tails[i].normalize();
            let length = self.local_tails[i].length();
            let (parent_rotation, _, _) = {
                let (s, r, t) = parent.to_scale_rotation_translation();
                (r, s, t)
            };
            let inertia = (self.current[i] - self.previous[i]) * (1.0 - DRAG);
            let stiffness = parent_rotation * rest_rotation * axis * (STIFFNESS * dt);
            let gravity = DVec3::NEG_Y * (GRAVITY * dt);
            let mut next = self.current[i] + inertia + stiffness + gravity;
            next = head + (next - head).normalize() * length;
            let delta = next - collider;
            let distance = delta.length() - COLLIDER_RADIUS - HIT_RADIUS;
            if distance < 0.0 {
                self.collisions += 1;
                next -= delta.normalize() * distance;
                next = head + (next - head).normalize() * length;
            }
            self.previous[i] = self.current[i];
            self.current[i] = next;
            let to = frame.inverse().transform_point3(next).normalize();
            self.rotations[i] = rest_rotation * DQuat::from_rotation_arc(axis, to);
        }
    }
}

fn distance(a: Vec3, b: DVec3) -> f64 {
    (a.as_dvec3() - b).length()
}

#[test]
fn a_swinging_chain_follows_the_specifications_algorithm_in_f64() {
    let rig = synthetic_rig();
    let mut pose = PoseBuffers::new(&rig);
    assert!(pose.springs.is_some(), "the chain has a simulation");
    let root = rig.nodes.iter().position(|n| n.name == "root").unwrap();
    let chain: Vec<usize> = (0..5)
        .map(|i| rig.nodes.iter().position(|n| n.name == format!("j{i}")).unwrap())
        .collect();
    let mut overrides = vec![JointOverride::IDENTITY; rig.nodes.len()];
    let mut reference = Reference::new();
    let chain_length: f64 = reference.local_tails.iter().map(|t| t.length()).sum();
    let dt = f64::from(SPRING_STEP_SECONDS);
    let mut worst: f64 = 0.0;
    let frames = 150;
    for frame in 0..=frames {
        let t = frame as f64 * dt;
        let offset = root_offset(t);
        overrides[root].translation = offset.as_vec3();
        let inputs = PoseInputs {
            overrides: &overrides,
            springs: Some(if frame == 0 { 0.0 } else { SPRING_STEP_SECONDS }),
            ..PoseInputs::clip_at(None, 0.0)
        };
        evaluate_pose(&rig, &inputs, &mut pose);
        if frame == 0 {
            reference.start(offset);
        } else {
            reference.step(offset, dt);
        }
        let tails: Vec<(usize, Vec3)> = pose.springs.as_ref().unwrap().tails().collect();
        assert_eq!(tails.len(), 4);
        let worlds = reference.worlds(offset);
        for i in 0..4 {
            assert_eq!(tails[i].0, chain[i]);
            worst = worst.max(distance(tails[i].1, reference.current[i]));
        }
        for (i, &node) in chain.iter().enumerate() {
            worst = worst.max(distance(
                pose.worlds[node].w_axis.truncate(),
                worlds[i + 1].w_axis.truncate(),
            ));
        }
    }
    assert!(
        reference.collisions > 10,
        "the swing reaches the collider ({} pushes)",
        reference.collisions
    );
    let rest_tip = Reference::new().worlds(root_offset(frames as f64 * dt))[5]
        .w_axis
        .truncate();
    let tip = reference.worlds(root_offset(frames as f64 * dt))[5].w_axis.truncate();
    assert!(
        (tip - rest_tip).length() > 0.05 * chain_length,
        "the springs moved the chain away from its rest"
    );
    assert!(
        worst < 1e-4 * chain_length,
        "tails and joints differ from the f64 reference by up to {worst} (chain {chain_length} m)"
    );
}

#[test]
fn springs_off_leave_the_pose_as_sampled_and_a_reset_starts_over() {
    let rig = synthetic_rig();
    let mut off = PoseBuffers::new(&rig);
    let mut on = PoseBuffers::new(&rig);
    let mut overrides = vec![JointOverride::IDENTITY; rig.nodes.len()];
    for frame in 0..30 {
        overrides[0].translation = root_offset(frame as f64 / 60.0).as_vec3();
        let inputs = PoseInputs {
            overrides: &overrides,
            ..PoseInputs::clip_at(None, 0.0)
        };
        evaluate_pose(&rig, &inputs, &mut off);
        let with_springs = PoseInputs {
            springs: Some(SPRING_STEP_SECONDS),
            ..inputs
        };
        evaluate_pose(&rig, &with_springs, &mut on);
    }
    let tip = rig.nodes.iter().position(|n| n.name == "j4").unwrap();
    let moved = (off.worlds[tip].w_axis - on.worlds[tip].w_axis).length();
    assert!(moved > 0.01, "springs on moved the tip by only {moved}");
    let springs = on.springs.as_mut().unwrap();
    assert!(springs.is_moving());
    springs.reset();
    let inputs = PoseInputs {
        overrides: &overrides,
        springs: Some(0.0),
        ..PoseInputs::clip_at(None, 0.0)
    };
    evaluate_pose(&rig, &inputs, &mut on);
    evaluate_pose(
        &rig,
        &PoseInputs {
            springs: None,
            ..inputs
        },
        &mut off,
    );
    let after_reset = (off.worlds[tip].w_axis - on.worlds[tip].w_axis).length();
    assert!(
        after_reset < 1e-5,
        "a reset puts the tails back on the pose ({after_reset})"
    );
}

/// `pose` stepped `steps` times at rest with springs on.
fn settle(rig: &Rig, pose: &mut PoseBuffers, steps: usize) {
    for k in 0..=steps {
        let inputs = PoseInputs {
            springs: Some(if k == 0 { 0.0 } else { SPRING_STEP_SECONDS }),
            ..PoseInputs::clip_at(None, 0.0)
        };
        evaluate_pose(rig, &inputs, pose);
    }
}

fn segment_distance(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
    (p - (a + ab * t)).length()
}

#[test]
fn the_capsule_chain_hangs_and_keeps_its_free_tail_out_of_the_capsule() {
    let Some(dir) = common::shared_folder("corpus/motion/vrm") else {
        return;
    };
    let rig = common::load_rig(&dir, "springbone_collider_capsule_x0p02_r0p05.vrm");
    let springs = rig.facts.springs.clone().expect("the file has springs");
    let mut pose = PoseBuffers::new(&rig);
    let rest = PoseBuffers::new(&rig);
    settle(&rig, &mut pose, 600);
    let sim: &SpringSim = pose.springs.as_ref().unwrap();
    assert!(!sim.is_moving(), "ten seconds at rest settle the chain");
    let chain = &springs.chains[0];
    let collider = springs.colliders[0];
    let (offset, tail, radius) = match collider.shape {
        rigscope::rig::ColliderShape::Capsule { offset, tail, radius } => (offset, tail, radius),
        other => panic!("a capsule, got {other:?}"),
    };
    let world = rest.worlds[collider.node].as_dmat4();
    let (a, b) = (
        world.transform_point3(offset.as_dvec3()),
        world.transform_point3(tail.as_dvec3()),
    );
    let reach = f64::from(radius + chain.joints[0].settings.hit_radius);
    let position = |worlds: &[glam::Mat4], node: usize| worlds[node].w_axis.truncate().as_dvec3();
    let mut pushed_out = 0;
    for joint in &chain.joints {
        let rigscope::rig::SpringTail::Node(tail) = joint.tail else {
            panic!("VRM 1.0 tails are nodes")
        };
        let length = (position(&rest.worlds, tail) - position(&rest.worlds, joint.node)).length();
        let head = segment_distance(position(&pose.worlds, joint.node), a, b);
        let at_rest = segment_distance(position(&rest.worlds, tail), a, b);
        let settled = segment_distance(position(&pose.worlds, tail), a, b);
        eprintln!("tail {tail}: head {head:.4}, at rest {at_rest:.4}, settled {settled:.4}, reach {reach:.4}");
        // A tail is pushed as far out as its bone lets it, up to the reach, less what one
        // step's stiffness and gravity pull it back in before the next push.
        let can_reach = reach.min(head + length);
        let s = joint.settings;
        let pull = f64::from((s.stiffness + s.gravity_power) * SPRING_STEP_SECONDS);
        assert!(
            settled > can_reach - pull,
            "tail {tail} settled {settled} from the capsule's axis; it could be {can_reach} away"
        );
        pushed_out += usize::from(at_rest < reach && settled > at_rest + 1e-3);
    }
    assert!(
        pushed_out >= 1,
        "at rest the chain hangs through the capsule, which pushes it out"
    );
    // Bone lengths hold.
    for joint in &chain.joints {
        let rigscope::rig::SpringTail::Node(t) = joint.tail else {
            unreachable!()
        };
        let length = |w: &[glam::Mat4]| (w[t].w_axis - w[joint.node].w_axis).length();
        assert!((length(&pose.worlds) - length(&rest.worlds)).abs() < 1e-5);
    }
}

#[test]
fn the_three_vrm_sphere_sample_stays_outside_its_sphere() {
    let Some(dir) = common::shared_folder("corpus/motion/vrm/three-vrm-springbone") else {
        return;
    };
    let rig = common::load_rig(&dir, "sphere-collider.gltf");
    let springs = rig.facts.springs.clone().unwrap();
    let mut pose = PoseBuffers::new(&rig);
    settle(&rig, &mut pose, 300);
    let collider = springs.colliders[0];
    let rigscope::rig::ColliderShape::Sphere { offset, radius } = collider.shape else {
        panic!("a sphere")
    };
    let center = pose.worlds[collider.node].transform_point3(offset).as_dvec3();
    for joint in &springs.chains[0].joints {
        let rigscope::rig::SpringTail::Node(t) = joint.tail else {
            unreachable!()
        };
        let at = pose.worlds[t].w_axis.truncate().as_dvec3();
        let reach = f64::from(radius + joint.settings.hit_radius);
        assert!(
            (at - center).length() > reach - 1e-3,
            "tail {t} is {} from the sphere's center, inside {reach}",
            (at - center).length()
        );
    }
}

#[test]
fn godettes_hair_swings_under_a_turning_head_without_allocating() {
    let Some(dir) = common::shared_folder("corpus/motion/vrm") else {
        return;
    };
    let rig = common::load_rig(&dir, "Godette_vrm_v4.vrm");
    let head = rig.facts.humanoid.iter().find(|(bone, _)| bone == "head").unwrap().1;
    let mut pose = PoseBuffers::new(&rig);
    let rest = PoseBuffers::new(&rig);
    let mut overrides = vec![JointOverride::IDENTITY; rig.nodes.len()];
    let frames = 120;
    let (_, allocated) = common::counting::watch(|| {
        for frame in 0..frames {
            let angle = 0.6 * (frame as f32 * SPRING_STEP_SECONDS * 3.0).sin();
            overrides[head].rotation = glam::Quat::from_rotation_y(angle);
            let inputs = PoseInputs {
                overrides: &overrides,
                springs: Some(SPRING_STEP_SECONDS),
                ..PoseInputs::clip_at(None, 0.0)
            };
            evaluate_pose(&rig, &inputs, &mut pose);
        }
    });
    assert_eq!(allocated.count, 0, "spring steps allocate nothing");
    let springs = rig.facts.springs.as_ref().unwrap();
    let mut swung: f32 = 0.0;
    for joint in springs.chains.iter().flat_map(|c| &c.joints) {
        // Each hair joint keeps its bone: its tail stays as far from it as at rest.
        if let rigscope::rig::SpringTail::Node(tail) = joint.tail {
            let length = |w: &[glam::Mat4]| (w[tail].w_axis - w[joint.node].w_axis).length();
            assert!((length(&pose.worlds) - length(&rest.worlds)).abs() < 1e-5);
        }
        // How far the joint turned from what the head's turn alone gives it.
        let carried = pose.worlds[head] * rest.worlds[head].inverse() * rest.worlds[joint.node];
        let (_, turned, _) = pose.worlds[joint.node].to_scale_rotation_translation();
        let (_, rigid, _) = carried.to_scale_rotation_translation();
        swung = swung.max(turned.angle_between(rigid).to_degrees());
    }
    assert!(swung > 1.0, "the hair lags the head's turn by {swung}°");
    let start = std::time::Instant::now();
    let sim = pose.springs.as_mut().unwrap();
    for _ in 0..1000 {
        sim.advance(&rig.nodes, SPRING_STEP_SECONDS, &mut pose.locals, &mut pose.worlds);
    }
    eprintln!(
        "Godette: {} chains, {} joints, {} colliders; one 60 Hz step with its world update: {:.1} µs",
        springs.chains.len(),
        springs.joint_count(),
        springs.colliders.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
}
