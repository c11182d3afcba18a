//! Clips carried from one skeleton onto another: bone directions against the source's in an
//! independent f64 evaluation (whatever the two rest poses), rigs whose rest pose alone was
//! changed playing a clip exactly as the original, identical skeletons copying locals exactly,
//! and the Mixamo rigs of the shared corpus onto Ready Player Me and ybot.

use crate::common;

use crate::common::rigscope;
use glam::{DMat3, DMat4, DQuat, DVec3, EulerRot, Quat, Vec3, Vec4};
use rigscope::anim::PoseBuffers;
use rigscope::retarget::{JointMap, RetargetOptions, retarget_clips, retarget_pose, with_clips_from};
use rigscope::rig::{Channel, Clip, Interpolation, Node, Property, Rig, Skin, Trs};
use rigscope::synthetic::{Shape, skeleton, trs_clip};

/// The figure: name, parent name, rest translation in metres (T-pose, Y up, facing +Z).
const FIGURE: &[(&str, Option<&str>, [f32; 3])] = &[
    ("Hips", None, [0.0, 1.0, 0.0]),
    ("Spine", Some("Hips"), [0.0, 0.2, 0.0]),
    ("Chest", Some("Spine"), [0.0, 0.2, 0.0]),
    ("Neck", Some("Chest"), [0.0, 0.2, 0.0]),
    ("Head", Some("Neck"), [0.0, 0.1, 0.0]),
    ("LeftArm", Some("Chest"), [0.2, 0.1, 0.0]),
    ("LeftForeArm", Some("LeftArm"), [0.3, 0.0, 0.0]),
    ("LeftHand", Some("LeftForeArm"), [0.25, 0.0, 0.0]),
    ("RightArm", Some("Chest"), [-0.2, 0.1, 0.0]),
    ("RightForeArm", Some("RightArm"), [-0.3, 0.0, 0.0]),
    ("RightHand", Some("RightForeArm"), [-0.25, 0.0, 0.0]),
    ("LeftUpLeg", Some("Hips"), [0.1, -0.05, 0.0]),
    ("LeftLeg", Some("LeftUpLeg"), [0.0, -0.45, 0.0]),
    ("LeftFoot", Some("LeftLeg"), [0.0, -0.45, 0.0]),
    ("LeftToeBase", Some("LeftFoot"), [0.0, -0.05, 0.12]),
    ("RightUpLeg", Some("Hips"), [-0.1, -0.05, 0.0]),
    ("RightLeg", Some("RightUpLeg"), [0.0, -0.45, 0.0]),
    ("RightFoot", Some("RightLeg"), [0.0, -0.45, 0.0]),
    ("RightToeBase", Some("RightFoot"), [0.0, -0.05, 0.12]),
];

/// A rig of `joints` (name, parent index, rest), all in one skin, the nodes in the given order.
fn rig_of(name: &str, joints: Vec<(String, Option<usize>, Trs)>, skinned_from: usize) -> Rig {
    let nodes: Vec<Node> = joints
        .into_iter()
        .map(|(name, parent, rest)| Node { name, parent, rest })
        .collect();
    let count = nodes.len();
    Rig {
        name: name.into(),
        skins: vec![Skin {
            name: "skin".into(),
            joints: (skinned_from..count).collect(),
            inverse_binds: vec![glam::Mat4::IDENTITY; count - skinned_from],
        }],
        nodes,
        ..Rig::default()
    }
}

/// The source: an `Armature` node scaling centimetres to metres above the figure, plus a `Jaw`
/// the target lacks.
fn source_rig() -> Rig {
    let mut joints = vec![(
        "Armature".to_owned(),
        None,
        Trs {
            scale: Vec3::splat(0.01),
            ..Trs::IDENTITY
        },
    )];
    let index = |joints: &[(String, Option<usize>, Trs)], name: &str| joints.iter().position(|j| j.0 == name);
    for &(name, parent, t) in FIGURE {
        let parent = parent.map_or(Some(0), |p| index(&joints, p));
        let rest = Trs {
            translation: Vec3::from(t) * 100.0,
            ..Trs::IDENTITY
        };
        joints.push((name.to_owned(), parent, rest));
    }
    let head = index(&joints, "Head");
    joints.push((
        "Jaw".into(),
        head,
        Trs {
            translation: Vec3::new(0.0, 0.0, 8.0),
            ..Trs::IDENTITY
        },
    ));
    rig_of("source", joints, 1)
}

/// Joints whose rest frame the target turns (children compensated: same rest positions).
const ROLLED: &[&str] = &["Hips", "Spine", "LeftForeArm", "RightUpLeg", "RightLeg", "Neck"];

/// The target: under a `Character` node turned `facing` degrees about the vertical, the figure
/// 1.3 times bigger, joints renamed `mixamorig:…`, several joints with other rest frames (rolled,
/// positions kept), the left arm lowered 40° into an A-pose, and a `Ponytail` the source lacks.
fn target_rig(facing: f32) -> Rig {
    let mut joints: Vec<(String, Option<usize>, Trs)> = vec![(
        "Character".into(),
        None,
        Trs {
            rotation: Quat::from_rotation_y(facing.to_radians()),
            ..Trs::IDENTITY
        },
    )];
    for &(name, parent, t) in FIGURE {
        let parent = parent.map_or(Some(0), |p| joints.iter().position(|j| j.0 == format!("mixamorig:{p}")));
        let rest = Trs {
            translation: Vec3::from(t) * 1.3,
            ..Trs::IDENTITY
        };
        joints.push((format!("mixamorig:{name}"), parent, rest));
    }
    for (k, name) in ROLLED.iter().enumerate() {
        let roll = Quat::from_euler(EulerRot::XYZ, 0.3 + 0.2 * k as f32, -0.5 + 0.1 * k as f32, 0.7);
        let j = joints.iter().position(|j| j.0 == format!("mixamorig:{name}")).unwrap();
        joints[j].2.rotation *= roll;
        for child in joints.iter_mut().filter(|c| c.1 == Some(j)) {
            child.2.translation = roll.inverse() * child.2.translation;
            child.2.rotation = roll.inverse() * child.2.rotation;
        }
    }
    let arm = joints.iter().position(|j| j.0 == "mixamorig:LeftArm").unwrap();
    joints[arm].2.rotation *= Quat::from_rotation_z(-40f32.to_radians());
    let head = joints.iter().position(|j| j.0 == "mixamorig:Head");
    joints.push((
        "mixamorig:Ponytail".into(),
        head,
        Trs {
            translation: Vec3::new(0.0, 0.05, -0.1),
            ..Trs::IDENTITY
        },
    ));
    rig_of("target", joints, 1)
}

const KEY_TIMES: [f32; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// A clip turning every joint of the source (smoothly, differently per joint) and moving the
/// hips forward 60 cm with a bob.
fn source_clip(rig: &Rig) -> Clip {
    let mut channels = Vec::new();
    for (n, node) in rig.nodes.iter().enumerate().skip(1) {
        let values = KEY_TIMES
            .iter()
            .map(|&t| {
                let phase = n as f32 * 0.7 + t * 5.0;
                let turn = Quat::from_euler(
                    EulerRot::XYZ,
                    0.5 * phase.sin(),
                    0.4 * phase.cos(),
                    0.3 * (2.0 * phase).sin(),
                );
                Vec4::from(node.rest.rotation * turn)
            })
            .collect();
        channels.push(Channel {
            node: n,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: KEY_TIMES.to_vec(),
            values,
        });
    }
    let hips = rig.find_node("Hips").unwrap();
    channels.push(Channel {
        node: hips,
        property: Property::Translation,
        interpolation: Interpolation::Linear,
        times: KEY_TIMES.to_vec(),
        values: KEY_TIMES
            .iter()
            .map(|&t| {
                (rig.nodes[hips].rest.translation + Vec3::new(10.0 * t, 5.0 * (8.0 * t).sin(), 60.0 * t)).extend(0.0)
            })
            .collect(),
    });
    Clip {
        name: "Walk".into(),
        duration: 1.0,
        channels,
        source: None,
    }
}

/// A linear channel's value at `time`, in f64: lerp, or slerp along the shorter arc.
fn sample_f64(channel: &Channel, time: f64) -> [f64; 4] {
    assert_eq!(channel.interpolation, Interpolation::Linear);
    let times: Vec<f64> = channel.times.iter().map(|&t| f64::from(t)).collect();
    let values: Vec<glam::DVec4> = channel.values.iter().map(|v| v.as_dvec4()).collect();
    let last = times.len() - 1;
    if time <= times[0] {
        return values[0].to_array();
    }
    if time >= times[last] {
        return values[last].to_array();
    }
    let k = times.iter().rposition(|&t| t <= time).unwrap();
    let s = (time - times[k]) / (times[k + 1] - times[k]);
    if channel.property == Property::Rotation {
        let a = DQuat::from_vec4(values[k]).normalize();
        let mut b = DQuat::from_vec4(values[k + 1]).normalize();
        if a.dot(b) < 0.0 {
            b = -b;
        }
        let theta = a.dot(b).clamp(-1.0, 1.0).acos();
        if theta < 1e-12 {
            return a.to_array();
        }
        let q =
            (glam::DVec4::from(a) * ((1.0 - s) * theta).sin() + glam::DVec4::from(b) * (s * theta).sin()) / theta.sin();
        return q.to_array();
    }
    (values[k] + (values[k + 1] - values[k]) * s).to_array()
}

/// World matrices, in f64, of `rig` posed by `clip` at `time` (the rest pose where no channel).
fn worlds_f64(rig: &Rig, clip: Option<&Clip>, time: f64) -> Vec<DMat4> {
    let mut locals: Vec<(DVec3, DQuat, DVec3)> = rig
        .nodes
        .iter()
        .map(|n| {
            (
                n.rest.translation.as_dvec3(),
                n.rest.rotation.as_dquat(),
                n.rest.scale.as_dvec3(),
            )
        })
        .collect();
    for channel in clip.map_or(&[][..], |c| &c.channels) {
        let v = sample_f64(channel, time);
        let local = &mut locals[channel.node];
        match channel.property {
            Property::Translation => local.0 = DVec3::new(v[0], v[1], v[2]),
            Property::Rotation => local.1 = DQuat::from_array(v).normalize(),
            Property::Scale => local.2 = DVec3::new(v[0], v[1], v[2]),
        }
    }
    let mut worlds: Vec<DMat4> = Vec::with_capacity(rig.nodes.len());
    for (node, (t, r, s)) in rig.nodes.iter().zip(locals) {
        let local = DMat4::from_scale_rotation_translation(s, r, t);
        worlds.push(node.parent.map_or(local, |p| worlds[p] * local));
    }
    worlds
}

/// The rotation of a world matrix without shear (its columns normalized; the quaternion too, as
/// columns a parent's uneven scale left slightly skewed give one a little shorter than 1).
fn rotation_of(world: &DMat4) -> DQuat {
    let m = DMat3::from_mat4(*world);
    DQuat::from_mat3(&DMat3::from_cols(
        m.x_axis.normalize(),
        m.y_axis.normalize(),
        m.z_axis.normalize(),
    ))
    .normalize()
}

/// The angle of the turn from `a` to `b`, from its sine and cosine (accurate near zero, where
/// the arc cosine of a dot product is not).
fn angle_between(a: DQuat, b: DQuat) -> f64 {
    let turn = a.inverse() * b;
    2.0 * turn.xyz().length().atan2(turn.w.abs())
}

fn position(world: &DMat4) -> DVec3 {
    world.w_axis.truncate()
}

/// Unit vector from `parent`'s world position to `child`'s.
fn bone(worlds: &[DMat4], parent: usize, child: usize) -> DVec3 {
    (position(&worlds[child]) - position(&worlds[parent])).normalize()
}

/// Times checked: keys and between keys.
const CHECK_TIMES: [f64; 7] = [0.0, 0.1, 0.25, 0.4, 0.6, 0.9, 1.0];

#[test]
fn carried_clip_reproduces_world_joint_directions_across_rest_poses() {
    carries_joint_directions(0.0);
}

#[test]
fn a_character_facing_the_other_way_moves_the_same_way_for_itself() {
    carries_joint_directions(180.0);
    carries_joint_directions(-70.0);
}

/// Carries the source clip onto [`target_rig`] turned `facing` degrees and checks bone
/// directions and the hips' travel against f64 world matrices: every target bone points where
/// the source's bone points, turned as the target faces, though the target's rest differs (its
/// left arm in an A-pose, rolled joints).
fn carries_joint_directions(facing: f64) {
    let mut source = source_rig();
    source.clips.push(source_clip(&source));
    let target = target_rig(facing as f32);
    let face = DQuat::from_rotation_y(facing.to_radians());
    let (clips, report) = retarget_clips(&source, &target, &JointMap::default(), &RetargetOptions::default());
    assert_eq!(report.joints.unmatched_source, ["Jaw"]);
    assert_eq!(report.joints.unmatched_target, ["mixamorig:Ponytail"]);
    let clip_report = &report.clips[0];
    assert_eq!(clip_report.dropped_channels, ["Jaw rotation"]);
    assert_eq!(clip_report.matched_channels, source.clips[0].channels.len() - 1);
    assert_eq!(clip_report.root.as_deref(), Some("mixamorig:Hips"));
    // Hip heights over the toes: 1.0 m (100 cm under the 0.01 armature) and 1.3 m.
    assert!(
        (f64::from(clip_report.root_scale) - 1.3).abs() < 1e-5,
        "{}",
        clip_report.root_scale
    );

    let source_of = |t: &str| source.find_node(t.strip_prefix("mixamorig:").unwrap()).unwrap();
    let source_rest = worlds_f64(&source, None, 0.0);
    let target_rest = worlds_f64(&target, None, 0.0);
    let mut worst = (0.0f64, String::new());
    let mut bones = 0;
    for &time in &CHECK_TIMES {
        let source_pose = worlds_f64(&source, Some(&source.clips[0]), time);
        let target_pose = worlds_f64(&target, Some(&clips[0]), time);
        for (child, node) in target.nodes.iter().enumerate() {
            let Some(parent) = node.parent.filter(|&p| p > 0) else {
                continue;
            };
            if node.name.ends_with("Ponytail") {
                continue;
            }
            let (source_parent, source_child) = (source_of(&target.nodes[parent].name), source_of(&node.name));
            let got = bone(&target_pose, parent, child);
            let want = face * bone(&source_pose, source_parent, source_child);
            let angle = got.angle_between(want);
            bones += 1;
            if angle > worst.0 {
                worst = (angle, format!("{} at {time}", node.name));
            }
        }
        // The hips travel 1.3 times as far as the source's, from the target's rest place.
        let (hips, source_hips) = (
            target.find_node("mixamorig:Hips").unwrap(),
            source.find_node("Hips").unwrap(),
        );
        let travel = position(&source_pose[source_hips]) - position(&source_rest[source_hips]);
        let want = position(&target_rest[hips]) + face * travel * 1.3;
        let error = (position(&target_pose[hips]) - want).length();
        assert!(error < 1e-4, "facing {facing}°: hips {error} m off at {time}");
    }
    assert_eq!(bones, CHECK_TIMES.len() * (FIGURE.len() - 1));
    assert!(
        worst.0 < 2e-4,
        "facing {facing}°: largest direction error {} rad ({})",
        worst.0,
        worst.1
    );
    // The report measures the same thing: every bone within the same bound.
    let reported = clip_report.worst_limb().expect("bones are reported");
    assert!(reported.degrees < 0.02, "{reported:?}");
    assert!(clip_report.limbs.len() >= 12, "{}", clip_report.limbs.len());
}

/// Bones of `rig` turned at rest about the world axis across them and the vertical, by
/// `degrees` (down for a positive angle; a vertical bone, a leg, turns sideways about the
/// forward axis), with the rest of the rig left as it was: the inverse binds stay, so the mesh
/// is bound as before and only the rest pose differs.
fn with_rest_bones_lowered(mut rig: Rig, bones: &[(&str, &str)], degrees: f32) -> Rig {
    let rest = worlds_f64(&rig, None, 0.0);
    for &(joint, child) in bones {
        let (j, c) = (rig.find_node(joint).unwrap(), rig.find_node(child).unwrap());
        let along = bone(&rest, j, c);
        // Across a vertical bone and the vertical there is no axis: its cross product is zero,
        // and normalizing it would give the bone a NaN rest rotation.
        let axis = along
            .cross(DVec3::NEG_Y)
            .try_normalize()
            .unwrap_or_else(|| along.cross(DVec3::X).normalize());
        let turn = DQuat::from_axis_angle(axis, f64::from(degrees).to_radians());
        let parent = rig.nodes[j].parent.map_or(DQuat::IDENTITY, |p| rotation_of(&rest[p]));
        let local = (parent.inverse() * turn * parent).as_quat();
        rig.nodes[j].rest.rotation = (local * rig.nodes[j].rest.rotation).normalize();
        assert!(rig.nodes[j].rest.rotation.is_finite(), "{joint}: {axis}");
    }
    rig
}

/// Whether `changed`, playing the clips of `original` carried onto it, poses every skin joint
/// as `original` poses it playing them itself (f64 evaluation of the baked clips): positions
/// within `1e-5` of the rig's size, rotations within 0.01°.
fn plays_as_the_original(original: &Rig, changed: &Rig, label: &str) {
    let (clips, report) = retarget_clips(original, changed, &JointMap::default(), &RetargetOptions::default());
    let rest = worlds_f64(original, None, 0.0);
    let joints: Vec<usize> = original.skins.iter().flat_map(|s| s.joints.iter().copied()).collect();
    let size = joints
        .iter()
        .map(|&j| position(&rest[j]).y)
        .fold(f64::NEG_INFINITY, f64::max)
        - joints
            .iter()
            .map(|&j| position(&rest[j]).y)
            .fold(f64::INFINITY, f64::min);
    let (mut far, mut turned) = (0.0f64, (0.0f64, String::new()));
    for (clip, carried) in original.clips.iter().zip(&clips) {
        if clip.channels.iter().any(|c| c.interpolation != Interpolation::Linear) {
            continue;
        }
        for k in 0..=12 {
            let time = f64::from(clip.duration) * f64::from(k) / 12.0;
            let want = worlds_f64(original, Some(clip), time);
            let got = worlds_f64(changed, Some(carried), time);
            for &j in &joints {
                // A NaN would pass every `<` below unseen.
                assert!(
                    got[j].is_finite(),
                    "{label}: {} is not finite in {} at {time}",
                    original.nodes[j].name,
                    clip.name
                );
                far = far.max((position(&got[j]) - position(&want[j])).length() / size);
                let angle = angle_between(rotation_of(&got[j]), rotation_of(&want[j])).to_degrees();
                if angle > turned.0 {
                    turned = (
                        angle,
                        format!("{} in {} at {time:.2} s", original.nodes[j].name, clip.name),
                    );
                }
            }
        }
        let worst = report.clips.iter().find(|c| c.name == clip.name).unwrap().worst_limb();
        assert!(
            worst.is_none_or(|w| w.degrees < 0.01),
            "{label} {}: {worst:?}",
            clip.name
        );
    }
    eprintln!(
        "{label}: joints {far:.2e} of the rig's size and {:.2e}° off the original",
        turned.0
    );
    assert!(far < 1e-5, "{label}: joints {far} of the rig's size off the original");
    assert!(
        turned.0 < 0.01,
        "{label}: joints turned {}° off the original ({})",
        turned.0,
        turned.1
    );
}

/// The source figure with its clip, and two rigs of it whose rest pose alone changed: the arms
/// lowered 60° into an A-pose, and that with the left elbow and both legs turned 15° more.
fn rest_changed_rigs() -> (Rig, Rig, Rig) {
    let mut original = source_rig();
    original.clips.push(source_clip(&original));
    let a_posed = with_rest_bones_lowered(
        original.clone(),
        &[("LeftArm", "LeftForeArm"), ("RightArm", "RightForeArm")],
        60.0,
    );
    let spread = with_rest_bones_lowered(
        a_posed.clone(),
        &[
            ("LeftForeArm", "LeftHand"),
            ("LeftUpLeg", "LeftLeg"),
            ("RightUpLeg", "RightLeg"),
        ],
        -15.0,
    );
    (original, a_posed, spread)
}

#[test]
fn a_rig_whose_rest_pose_alone_changed_plays_a_clip_as_the_original() {
    let (original, a_posed, spread) = rest_changed_rigs();
    plays_as_the_original(&original, &a_posed, "arms lowered 60°");
    // Its retarget pose is the original's rest: the arms raised back where they were.
    let pose = retarget_pose(&original, &a_posed, &JointMap::default());
    for (node, local) in original.nodes.iter().zip(&pose) {
        let angle = angle_between(node.rest.rotation.as_dquat(), local.rotation.as_dquat());
        assert!(angle < 1e-5, "{}: {angle} rad from the original's rest", node.name);
        assert_eq!(local.translation, node.rest.translation);
    }
    plays_as_the_original(&original, &spread, "arms lowered, elbow and legs turned");
}

/// `rig` with every node's rest rotation turned by `radians` about an axis of its own (a fixed
/// sequence of directions), translations and inverse binds left as they were.
fn with_rest_perturbed(mut rig: Rig, radians: f64) -> Rig {
    for (k, node) in rig.nodes.iter_mut().enumerate() {
        let k = k as f64;
        let axis = DVec3::new((k * 1.7).sin(), (k * 2.3 + 1.0).cos(), (k * 0.9 + 0.5).sin()).normalize();
        let turn = DQuat::from_axis_angle(axis, radians);
        node.rest.rotation = (turn * node.rest.rotation.as_dquat()).normalize().as_quat();
    }
    rig
}

/// The carried clip does not stand on a knife's edge: turning every rest rotation of the
/// target by 1e-6 rad (a few ulps of an f32 quaternion) moves the carried poses by about as
/// much, and the perturbed rig still plays the clip as the original.
#[test]
fn a_rest_pose_changed_by_a_millionth_of_a_radian_carries_the_same_clip() {
    let (original, a_posed, spread) = rest_changed_rigs();
    for (label, rig) in [
        ("arms lowered", a_posed),
        ("arms lowered, elbow and legs turned", spread),
    ] {
        let perturbed = with_rest_perturbed(rig.clone(), 1e-6);
        let carried =
            |target: &Rig| retarget_clips(&original, target, &JointMap::default(), &RetargetOptions::default()).0;
        let (exact, nudged) = (carried(&rig), carried(&perturbed));
        let size = 1.7;
        let (mut far, mut turned) = (0.0f64, 0.0f64);
        for k in 0..=12 {
            let time = f64::from(original.clips[0].duration) * f64::from(k) / 12.0;
            let a = worlds_f64(&rig, Some(&exact[0]), time);
            let b = worlds_f64(&perturbed, Some(&nudged[0]), time);
            for (a, b) in a.iter().zip(&b) {
                assert!(b.is_finite(), "{label}: not finite at {time}");
                far = far.max((position(a) - position(b)).length() / size);
                turned = turned.max(angle_between(rotation_of(a), rotation_of(b)));
            }
        }
        eprintln!("{label}: perturbed by 1e-6 rad, joints move {far:.2e} of the size, turn {turned:.2e} rad");
        assert!(far < 1e-5, "{label}: joints {far} of the rig's size apart");
        assert!(turned < 1e-4, "{label}: joints turned {turned} rad apart");
        plays_as_the_original(&original, &perturbed, &format!("{label}, perturbed"));
    }
}

#[test]
fn xbot_with_its_arms_lowered_at_rest_plays_its_own_clips_as_before() {
    let Some(real) = common::shared_rigs().map(|r| r.join("real")) else {
        return;
    };
    let xbot = common::load_rig(&real, "Xbot.glb");
    assert!(xbot.clips.len() >= 4, "{} clips", xbot.clips.len());
    let find = |name: &str| xbot.nodes.iter().find(|n| n.name.ends_with(name)).unwrap().name.clone();
    let bones: Vec<(String, String)> = [("LeftArm", "LeftForeArm"), ("RightArm", "RightForeArm")]
        .iter()
        .map(|(j, c)| (find(j), find(c)))
        .collect();
    let bones: Vec<(&str, &str)> = bones.iter().map(|(j, c)| (j.as_str(), c.as_str())).collect();
    let a_posed = with_rest_bones_lowered(xbot.clone(), &bones, 60.0);
    // The change is the T-pose to A-pose one: the upper arms' rest directions 60° apart.
    let (before, after) = (worlds_f64(&xbot, None, 0.0), worlds_f64(&a_posed, None, 0.0));
    let (j, c) = (xbot.find_node(bones[0].0).unwrap(), xbot.find_node(bones[0].1).unwrap());
    let apart = bone(&before, j, c).angle_between(bone(&after, j, c)).to_degrees();
    assert!((apart - 60.0).abs() < 1e-3, "{apart}°");
    plays_as_the_original(&xbot, &a_posed, "Xbot, arms lowered 60°");
}

#[test]
fn in_place_keeps_the_root_over_its_rest_place() {
    let mut source = source_rig();
    source.clips.push(source_clip(&source));
    let target = target_rig(0.0);
    let options = RetargetOptions {
        in_place: true,
        ..RetargetOptions::default()
    };
    let (clips, _) = retarget_clips(&source, &target, &JointMap::default(), &options);
    let (hips, source_hips) = (
        target.find_node("mixamorig:Hips").unwrap(),
        source.find_node("Hips").unwrap(),
    );
    let (source_rest, target_rest) = (worlds_f64(&source, None, 0.0), worlds_f64(&target, None, 0.0));
    for &time in &CHECK_TIMES {
        let source_pose = worlds_f64(&source, Some(&source.clips[0]), time);
        let got = position(&worlds_f64(&target, Some(&clips[0]), time)[hips]);
        let rest = position(&target_rest[hips]);
        let rise = position(&source_pose[source_hips]).y - position(&source_rest[source_hips]).y;
        let want = DVec3::new(rest.x, rest.y + 1.3 * rise, rest.z);
        assert!((got - want).length() < 1e-4, "at {time}: {got} against {want}");
    }
}

#[test]
fn identical_skeletons_copy_locals_exactly() {
    let mut rig = skeleton(24, Shape::Bushy);
    rig.clips.push(trs_clip(&rig, 6, 1.0, Interpolation::Linear));
    let (clips, report) = retarget_clips(&rig, &rig.clone(), &JointMap::default(), &RetargetOptions::default());
    assert!(report.joints.unmatched_source.is_empty() && report.joints.unmatched_target.is_empty());
    assert_eq!(report.clips[0].root_scale, 1.0);
    let source = &rig.clips[0];
    assert_eq!(clips[0].channels.len(), source.channels.len());
    for channel in &clips[0].channels {
        let original = source
            .channels
            .iter()
            .find(|c| c.node == channel.node && c.property == channel.property)
            .expect("a channel the source has");
        assert_eq!(channel.times, original.times);
        assert_eq!(
            channel.values, original.values,
            "node {} {:?}",
            channel.node, channel.property
        );
    }
}

#[test]
fn added_clips_are_marked_renamed_on_collision_and_posable() {
    let mut source = source_rig();
    source.clips.push(source_clip(&source));
    let mut target = target_rig(0.0);
    target.clips.push(Clip {
        name: "Walk".into(),
        duration: 1.0,
        channels: Vec::new(),
        source: None,
    });
    let origin = std::path::Path::new("clips/walk.glb");
    let (rig, report) = with_clips_from(
        target,
        &source,
        origin,
        &JointMap::default(),
        &RetargetOptions::default(),
    );
    assert_eq!(rig.clips.len(), 2);
    assert_eq!(rig.clips[1].name, "Walk (walk.glb)");
    assert_eq!(report.clips[0].name, "Walk (walk.glb)");
    assert_eq!(rig.clips[1].source.as_deref(), Some(origin));
    assert_eq!(rig.find_clip("Walk (walk.glb)"), Some(1));
    let mut pose = PoseBuffers::new(&rig);
    pose.evaluate(&rig, Some(1), 0.6);
    assert!(pose.worlds.iter().all(|w| w.is_finite()));
}

#[test]
fn a_hand_made_pair_overrides_names_and_can_leave_a_joint_out() {
    let mut source = source_rig();
    source.clips.push(source_clip(&source));
    let target = target_rig(0.0);
    let mut map = JointMap::default();
    map.by_hand.insert("Jaw".into(), "mixamorig:Ponytail".into());
    map.by_hand.insert("LeftHand".into(), String::new());
    map.by_hand.insert("Tail".into(), "mixamorig:Tail".into());
    let (_, report) = retarget_clips(&source, &target, &map, &RetargetOptions::default());
    assert_eq!(report.joints.unmatched_source, ["LeftHand"]);
    assert_eq!(report.joints.unmatched_target, ["mixamorig:LeftHand"]);
    assert_eq!(
        report.joints.stale_by_hand,
        [("Tail".to_owned(), "mixamorig:Tail".to_owned())]
    );
    assert_eq!(report.clips[0].dropped_channels, ["LeftHand rotation"]);
    // The map survives the settings file.
    let text = toml::to_string(&map).unwrap();
    assert_eq!(toml::from_str::<JointMap>(&text).unwrap(), map);
}

/// Skin joint names of `rig` without the `mixamorig:` prefix, in skin order.
fn bare_joint_names(rig: &Rig) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for &j in rig.skins.iter().flat_map(|s| &s.joints) {
        let name = rig.nodes[j].name.as_str();
        let name = name.strip_prefix("mixamorig:").unwrap_or(name).to_owned();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The turn about the vertical from the source character's facing to the target's: the
/// horizontal directions from every `Right…` node to its `Left…` counterpart, summed (nodes
/// named alike in both rigs once `mixamorig:` is dropped), as headings from +Z towards +X.
fn facing_f64(source: &Rig, source_rest: &[DMat4], target: &Rig, target_rest: &[DMat4]) -> DQuat {
    let find = |rig: &Rig, bare: &str| rig.find_node(bare).or(rig.find_node(&format!("mixamorig:{bare}")));
    let (mut source_side, mut target_side) = (DVec3::ZERO, DVec3::ZERO);
    for name in bare_node_names(target) {
        let Some(rest) = name.strip_prefix("Left") else {
            continue;
        };
        let right = format!("Right{rest}");
        let (Some(tl), Some(tr), Some(sl), Some(sr)) = (
            find(target, &name),
            find(target, &right),
            find(source, &name),
            find(source, &right),
        ) else {
            continue;
        };
        source_side += position(&source_rest[sl]) - position(&source_rest[sr]);
        target_side += position(&target_rest[tl]) - position(&target_rest[tr]);
    }
    let heading = |side: DVec3| side.x.atan2(side.z);
    DQuat::from_rotation_y(heading(target_side) - heading(source_side))
}

/// Every node name of `rig` without the `mixamorig:` prefix.
fn bare_node_names(rig: &Rig) -> Vec<String> {
    rig.nodes
        .iter()
        .map(|n| n.name.strip_prefix("mixamorig:").unwrap_or(&n.name).to_owned())
        .collect()
}

/// The joints every humanoid rig of the corpus has: spine, head and limbs down to hands and toes.
const LIMBS: &[&str] = &[
    "Hips",
    "Spine",
    "Spine1",
    "Spine2",
    "Neck",
    "Head",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "LeftToeBase",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "RightToeBase",
];

#[test]
fn mixamo_clips_carry_onto_ready_player_me_and_ybot() {
    let (Some(real), Some(corpus)) = (
        common::shared_rigs().map(|r| r.join("real")),
        common::shared_folder("corpus"),
    ) else {
        return;
    };
    let corpus = corpus.join("rigs");
    let sources = [
        common::load_rig(&real, "Xbot.glb"),
        common::load_rig(&corpus, "Soldier.glb"),
        common::load_rig(&corpus, "Michelle.glb"),
    ];
    let targets = [
        common::load_rig(&corpus, "readyplayer.me.glb"),
        common::load_rig(&corpus, "ybot.glb"),
    ];
    for source in &sources {
        assert!(!source.clips.is_empty(), "{} has clips", source.name);
        let source_names = bare_joint_names(source);
        for target in &targets {
            let label = format!("{} onto {}", source.name, target.name);
            let target_names = bare_joint_names(target);
            let (rig, report) = with_clips_from(
                target.clone(),
                source,
                std::path::Path::new("clips.glb"),
                &JointMap::default(),
                &RetargetOptions::default(),
            );
            // Joints are matched to any node of the other rig (Soldier's skins leave out joints
            // its skeleton has, such as the finger tips).
            let (source_nodes, target_nodes) = (bare_node_names(source), bare_node_names(target));
            let want_target: Vec<&String> = target_names.iter().filter(|n| !source_nodes.contains(n)).collect();
            let want_source: Vec<&String> = source_names.iter().filter(|n| !target_nodes.contains(n)).collect();
            let bare = |names: &[String]| -> Vec<String> {
                names
                    .iter()
                    .map(|n| n.strip_prefix("mixamorig:").unwrap_or(n).to_owned())
                    .collect()
            };
            let (got_target, got_source) = (
                bare(&report.joints.unmatched_target),
                bare(&report.joints.unmatched_source),
            );
            assert_eq!(got_target.iter().collect::<Vec<_>>(), want_target, "{label}: target");
            assert_eq!(got_source.iter().collect::<Vec<_>>(), want_source, "{label}: source");
            for limb in LIMBS {
                assert!(!got_target.iter().any(|n| n == limb), "{label}: {limb} unmatched");
            }
            // Every dropped channel belongs to a joint reported unmatched.
            for clip in &report.clips {
                for dropped in &clip.dropped_channels {
                    let node = dropped.rsplit_once(' ').unwrap().0;
                    assert!(
                        report.joints.unmatched_source.iter().any(|n| n == node),
                        "{label}: {dropped}"
                    );
                }
                assert!(clip.matched_channels > 0, "{label}: {}", clip.name);
                assert_eq!(clip.root.as_deref().map(|r| r.ends_with("Hips")), Some(true), "{label}");
            }
            let first = target.clips.len();
            let mut pose = PoseBuffers::new(&rig);
            for clip in first..rig.clips.len() {
                let duration = rig.clips[clip].duration;
                for k in 0..=8 {
                    pose.evaluate(&rig, Some(clip), duration * k as f32 / 8.0);
                    assert!(
                        pose.worlds.iter().all(|w| w.is_finite()),
                        "{label}: {} at {k}/8",
                        rig.clips[clip].name
                    );
                }
            }
            // Each limb bone of the target points where the source's bone points, turned as the
            // target faces, whatever the two rest poses (f64 evaluation of the baked clip).
            // Every clip, Xbot's poses that move its knees and shoulders off their rest offsets
            // included.
            let (source_rest, target_rest) = (worlds_f64(source, None, 0.0), worlds_f64(&rig, None, 0.0));
            let find = |rig: &Rig, name: &str| rig.find_node(name).or(rig.find_node(&format!("mixamorig:{name}")));
            let face = facing_f64(source, &source_rest, &rig, &target_rest);
            let linear = |clip: &Clip| clip.channels.iter().all(|c| c.interpolation == Interpolation::Linear);
            for (k, source_clip) in source.clips.iter().enumerate().filter(|(_, c)| linear(c)) {
                let added = &rig.clips[first + k];
                let mut worst = (0.0f64, "");
                let duration = f64::from(source_clip.duration);
                for time in [0.0, 0.3 * duration, 0.77 * duration, duration] {
                    let source_pose = worlds_f64(source, Some(source_clip), time);
                    let target_pose = worlds_f64(&rig, Some(added), time);
                    for pair in LIMBS.windows(2) {
                        let (Some(p), Some(c)) = (find(&rig, pair[0]), find(&rig, pair[1])) else {
                            continue;
                        };
                        if rig.nodes[c].parent != Some(p) {
                            continue;
                        }
                        let (sp, sc) = (find(source, pair[0]).unwrap(), find(source, pair[1]).unwrap());
                        let want = face * bone(&source_pose, sp, sc);
                        let angle = bone(&target_pose, p, c).angle_between(want);
                        if angle > worst.0 {
                            worst = (angle, pair[0]);
                        }
                    }
                }
                assert!(
                    worst.0 < 1e-3,
                    "{label} {}: limb directions off by {} rad at {}",
                    source_clip.name,
                    worst.0,
                    worst.1
                );
            }
        }
    }
}

#[test]
fn a_clips_file_that_does_not_load_fails_the_audit_with_status_2() {
    let missing = common::temp_dir("retarget-cli").join("missing.glb");
    let output = rigscope(["audit", "demo", "--clips", missing.to_str().unwrap(), "--json"]);
    assert_eq!(output.status.code(), Some(2));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["loaded"], false);
    let error = document["error"].as_str().unwrap();
    assert!(
        error.starts_with("cannot load clips from") && error.contains("missing.glb"),
        "{error}"
    );
}

#[test]
fn a_clips_file_that_does_not_load_fails_render_and_bench_with_status_2() {
    let folder = common::temp_dir("retarget-cli-render");
    let missing = folder.join("missing.glb");
    let out = folder.join("frame.png");
    let (missing, out_arg) = (missing.to_str().unwrap(), out.to_str().unwrap());
    for args in [
        vec!["render", "demo", "--clips", missing, "--out", out_arg],
        vec!["render", "demo", "--clips", missing, "--ui", "--out", out_arg],
        vec!["bench", "demo", "--clips", missing, "--frames", "1"],
    ] {
        let output = rigscope(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot load clips from") && stderr.contains("missing.glb"),
            "{stderr}"
        );
    }
    assert!(!out.exists(), "no picture is written");
    // A clip name the rig lacks is a bad argument: status 2 as well, as for every command.
    let output = rigscope(["render", "demo", "--clip", "NoSuchClip", "--out", out_arg]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn audit_reports_the_clips_it_adds() {
    let Some(corpus) = common::shared_folder("corpus") else {
        return;
    };
    let (target, clips) = (corpus.join("rigs/readyplayer.me.glb"), corpus.join("rigs/Soldier.glb"));
    let output = rigscope([
        "audit",
        target.to_str().unwrap(),
        "--clips",
        clips.to_str().unwrap(),
        "--joint",
        "LeftArm",
        "--steps",
        "1",
    ]);
    assert_ne!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    for clip in ["Idle", "Run", "TPose", "Walk"] {
        assert!(
            stderr.contains(&format!("clip '{clip}': 156 channels matched, 0 dropped")),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains("target joints unmatched: LeftEye, RightEye"),
        "{stderr}"
    );
}

/// `rig` with a mesh node (no skin) whose morph targets are `names`, resting at `defaults`.
fn with_face(mut rig: Rig, names: &[&str], defaults: Vec<f32>) -> (Rig, usize) {
    let node = rig.nodes.len();
    rig.nodes.push(Node {
        name: "Face".into(),
        parent: Some(0),
        rest: Trs::IDENTITY,
    });
    rig.instances.push(rigscope::rig::MeshInstance {
        node,
        mesh: 0,
        skin: None,
    });
    rig.morphs.target_names = vec![names.iter().map(|n| (*n).to_owned()).collect()];
    rig.morphs.default_weights = vec![defaults];
    (rig, node)
}

#[test]
fn morph_weights_follow_target_names() {
    let (mut source, source_face) = with_face(source_rig(), &["mouthOpen", "mouthSmile"], vec![0.0, 0.0]);
    source.clips.push(source_clip(&source));
    source.morphs.channels.push(rigscope::rig::MorphChannel {
        clip: 0,
        node: source_face,
        interpolation: Interpolation::Linear,
        times: vec![0.0, 1.0],
        values: vec![0.2, 0.4, 0.8, 0.6],
        targets: 2,
    });
    let (target, target_face) = with_face(
        target_rig(0.0),
        &["blink", "mouthSmile", "mouthOpen"],
        vec![0.3, 0.0, 0.0],
    );
    let (rig, report) = with_clips_from(
        target,
        &source,
        std::path::Path::new("face.glb"),
        &JointMap::default(),
        &RetargetOptions::default(),
    );
    assert_eq!(
        (
            report.clips[0].matched_morph_channels,
            report.clips[0].dropped_morph_channels
        ),
        (1, 0)
    );
    let channel = &rig.morphs.channels[0];
    assert_eq!((channel.clip, channel.node, channel.targets), (0, target_face, 3));
    // Per key: blink holds its default, mouthSmile and mouthOpen take the source's weights.
    assert_eq!(channel.values, [0.3, 0.4, 0.2, 0.3, 0.6, 0.8]);
    let mut pose = PoseBuffers::new(&rig);
    pose.evaluate(&rig, Some(0), 0.5);
    let weights = &pose.morph_weights[0];
    for (got, want) in weights.iter().zip([0.3, 0.5, 0.5]) {
        assert!((got - want).abs() < 1e-6, "{weights:?}");
    }
}

#[test]
fn morph_target_names_are_read_from_mesh_extras() {
    let Some(corpus) = common::shared_folder("corpus") else {
        return;
    };
    let path = corpus.join("rigs/readyplayer.me.glb");
    let rig = common::load_rig(&corpus.join("rigs"), "readyplayer.me.glb");
    let doc = common::Doc::open(&path);
    let meshes = doc.array("meshes");
    assert_eq!(rig.morphs.target_names.len(), meshes.len());
    let mut named = 0;
    for (mesh, names) in meshes.iter().zip(&rig.morphs.target_names) {
        let want: Vec<String> = mesh["extras"]["targetNames"]
            .as_array()
            .map(|a| a.iter().map(|n| n.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        named += usize::from(!want.is_empty());
        assert_eq!(names, &want);
    }
    // Five meshes have mouthOpen and mouthSmile.
    assert_eq!(named, 5);
}

/// The angle (degrees) of `turn`'s twist about `bone`: what is left of the turn once the part
/// that swings `bone` elsewhere is taken out.
fn twist_degrees(turn: DQuat, bone: DVec3) -> f64 {
    let bone = bone.normalize();
    let along = DVec3::new(turn.x, turn.y, turn.z).dot(bone) * bone;
    let twist = DQuat::from_xyzw(along.x, along.y, along.z, turn.w).normalize();
    2.0 * twist.w.abs().min(1.0).acos().to_degrees()
}

/// A joint's rest rotation and the direction of its bone (its child's rest translation), read
/// from the file.
fn rest_and_bone(doc: &common::Doc, joint: &str, child: &str) -> (DQuat, DVec3) {
    let nodes = doc.array("nodes");
    let trs = |name: &str| {
        let i = (0..nodes.len())
            .find(|&i| common::json_node_name(&doc.json, i) == name)
            .unwrap();
        common::json_rest_trs(&nodes[i])
    };
    let [x, y, z, w] = trs(joint).1;
    (DQuat::from_xyzw(x, y, z, w), DVec3::from_array(trs(child).0))
}

/// The first key of `joint`'s rotation in the file's clip `clip`.
fn first_rotation_key(doc: &common::Doc, clip: &str, joint: &str) -> DQuat {
    let node = (0..doc.array("nodes").len())
        .find(|&i| common::json_node_name(&doc.json, i) == joint)
        .unwrap();
    let animation = (doc.array("animations").iter())
        .find(|a| a["name"].as_str() == Some(clip))
        .unwrap();
    let channel = (common::array(animation, "channels").iter())
        .find(|c| c["target"]["node"].as_u64() == Some(node as u64) && c["target"]["path"] == "rotation")
        .unwrap();
    let sampler = &common::array(animation, "samplers")[common::index(&channel["sampler"], "sampler")];
    let key = &doc.read_floats(common::index(&sampler["output"], "output"))[0];
    DQuat::from_xyzw(key[0], key[1], key[2], key[3]).normalize()
}

/// Michelle's SambaDance carried onto readyplayer.me: Michelle's clavicle slopes down to a level
/// arm (T-pose), the avatar's is level over a hanging arm (A-pose). The shoulders' bend planes
/// face opposite ways for that alone; taken for the shoulders' roll, they turned each shoulder
/// half a turn about its own bone (174° on the right where Michelle's turns 3°).
#[test]
fn a_shoulder_keeps_the_roll_of_the_source_s_shoulder_between_a_t_pose_and_an_a_pose() {
    let Some(corpus) = common::shared_folder("corpus/rigs") else {
        return;
    };
    let avatar_path = corpus.join("readyplayer.me.glb");
    let clips = rigscope::retarget::ClipFiles {
        files: vec![corpus.join("Michelle.glb")],
        ..Default::default()
    };
    let (rig, _) = clips.add_to(rigscope::rig::load_file(&avatar_path).unwrap()).unwrap();
    let samba = rig.find_clip("SambaDance").unwrap();
    let mut carried = vec![Trs::IDENTITY; rig.nodes.len()];
    let mut hints = vec![0; rig.clips[samba].channels.len()];
    rigscope::anim::sample_clip(&rig.nodes, Some(&rig.clips[samba]), 0.0, &mut hints, &mut carried);
    let (michelle, avatar) = (
        common::Doc::open(&corpus.join("Michelle.glb")),
        common::Doc::open(&avatar_path),
    );
    for side in ["Left", "Right"] {
        let (shoulder, arm) = (format!("mixamorig:{side}Shoulder"), format!("mixamorig:{side}Arm"));
        let (rest, bone) = rest_and_bone(&michelle, &shoulder, &arm);
        let key = first_rotation_key(&michelle, "SambaDance", &shoulder);
        let source = twist_degrees(rest.conjugate() * key, bone);

        let (shoulder, arm) = (format!("{side}Shoulder"), format!("{side}Arm"));
        let (rest, bone) = rest_and_bone(&avatar, &shoulder, &arm);
        let key = carried[rig.find_node(&shoulder).unwrap()].rotation.as_dquat();
        let target = twist_degrees(rest.conjugate() * key, bone);
        assert!(
            source < 10.0,
            "{side}: Michelle's shoulder turns {source:.1}° about its bone"
        );
        assert!(
            (target - source).abs() < 10.0,
            "{side}: the carried shoulder turns {target:.1}° about its bone, Michelle's {source:.1}°"
        );
    }
}
