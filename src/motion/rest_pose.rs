//! The rest pose against the bind pose, for `audit --motion`: whether the rig stands in a T-pose
//! or an A-pose (its upper arms' angle to the horizontal, arms found by name), and how far each
//! joint's rest place (the nodes' TRS) is from its bind place (where its inverse bind matrix
//! puts it). A rig animated from a rest pose other than the one it was skinned in shows the
//! difference as a constant offset in every clip.

use crate::retarget::{name_without_suffix, normalized_name};
use crate::rig::Rig;
use glam::{Mat4, Vec3};
use serde::Serialize;

/// Upper arms within this many degrees of the horizontal stand in a T-pose.
pub const T_POSE_MAX_DEG: f32 = 15.0;
/// Upper arms lowered by more than [`T_POSE_MAX_DEG`] and at most this many degrees stand in an
/// A-pose.
pub const A_POSE_MAX_DEG: f32 = 60.0;

/// How the upper arms stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArmPose {
    TPose,
    APose,
    /// Raised, lowered beyond an A-pose, or the arms disagree.
    Neither,
}

impl ArmPose {
    /// The pose of upper arms lowered by `degrees` each (negative: raised).
    pub fn of(degrees: &[f32]) -> Option<ArmPose> {
        if degrees.is_empty() {
            None
        } else if degrees.iter().all(|d| d.abs() <= T_POSE_MAX_DEG) {
            Some(ArmPose::TPose)
        } else if degrees.iter().all(|d| *d > T_POSE_MAX_DEG && *d <= A_POSE_MAX_DEG) {
            Some(ArmPose::APose)
        } else {
            Some(ArmPose::Neither)
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            ArmPose::TPose => "T-pose",
            ArmPose::APose => "A-pose",
            ArmPose::Neither => "neither T- nor A-pose",
        }
    }
}

/// One upper arm's angle below the horizontal (negative above it), from its joint to the
/// elbow (the first joint below it some way along the arm).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArmAngle {
    pub joint: String,
    pub elbow: String,
    /// In the rest pose.
    pub rest_deg: f32,
    /// In the bind pose (both joints in a skin; `None` otherwise).
    pub bind_deg: Option<f32>,
}

/// How far one skin joint's rest place is from its bind place.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointBindOffset {
    pub joint: String,
    /// Distance, as a fraction of the rig's height.
    pub position: f32,
    /// Angle of the rotation between the two, in degrees.
    pub rotation_deg: f32,
}

/// The rest and bind pose checks of a rig.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RestPoseReport {
    pub arms: Vec<ArmAngle>,
    /// From the arms' rest angles (`None` without arms found by name).
    pub arm_pose: Option<ArmPose>,
    /// The largest [`JointBindOffset::position`] and its joint (`None` without skins).
    pub bind_position_error: Option<f32>,
    pub bind_position_worst_joint: Option<String>,
    /// The largest [`JointBindOffset::rotation_deg`] and its joint.
    pub bind_rotation_error_deg: Option<f32>,
    pub bind_rotation_worst_joint: Option<String>,
    /// Every skin joint once (from the first skin that lists it), in node order.
    pub joints: Vec<JointBindOffset>,
}

impl RestPoseReport {
    /// The checks in two lines, for the text report and the Motion tab.
    pub fn summary(&self) -> [String; 2] {
        let arms: Vec<String> = self
            .arms
            .iter()
            .map(|a| match a.bind_deg {
                Some(bind) => format!("{} {:.1}° (bind {bind:.1}°)", a.joint, a.rest_deg),
                None => format!("{} {:.1}°", a.joint, a.rest_deg),
            })
            .collect();
        let pose = match self.arm_pose {
            Some(pose) => format!(
                "rest pose: {}, upper arms below the horizontal: {}",
                pose.label(),
                arms.join(", ")
            ),
            None => "rest pose: no upper arms found by name".to_owned(),
        };
        let bind = match (self.bind_position_error, self.bind_rotation_error_deg) {
            (Some(position), Some(rotation)) => format!(
                "rest vs bind pose: joints move up to {position:.4} of the height ({}) and turn up to {rotation:.2}° ({})",
                self.bind_position_worst_joint.as_deref().unwrap_or("-"),
                self.bind_rotation_worst_joint.as_deref().unwrap_or("-")
            ),
            _ => "rest vs bind pose: no skin, so no bind pose".to_owned(),
        };
        [pose, bind]
    }
}

/// The upper arms by name among the skeleton's bones: those with `upperarm` in their name
/// (`UpperArm.L`, `b_LeftUpperArm_06`), else those called left or right arm (Mixamo's and Ready
/// Player Me's `LeftArm`, `arm_r`), whose next joint is the forearm.
pub fn upper_arms_by_name(rig: &Rig) -> Vec<usize> {
    let bones = &rig.hierarchy().bones;
    let keys: Vec<String> = rig
        .nodes
        .iter()
        .map(|n| name_without_suffix(&n.name).unwrap_or_else(|| normalized_name(&n.name)))
        .collect();
    let bone_named = |test: &dyn Fn(&str) -> bool| -> Vec<usize> {
        (0..rig.nodes.len()).filter(|&n| bones[n] && test(&keys[n])).collect()
    };
    let upper = bone_named(&|key| key.contains("upperarm"));
    if !upper.is_empty() {
        return upper;
    }
    bone_named(&|key| ["leftarm", "rightarm", "larm", "rarm", "arml", "armr"].contains(&key))
}

/// Degrees by which the direction from `from` to `to` points below the horizontal (Y up).
fn below_horizontal_deg(from: Vec3, to: Vec3) -> f32 {
    let d = to - from;
    (-d.y).atan2(Vec3::new(d.x, 0.0, d.z).length()).to_degrees()
}

/// The elbow of upper arm `arm`: down its first bone children, the first joint at least 1 % of
/// the rig's height from it (twist and helper joints can sit on the shoulder).
fn elbow_of(rig: &Rig, arm: usize, worlds: &[Mat4], height: f32) -> Option<usize> {
    let bones = &rig.hierarchy().bones;
    let children = &rig.hierarchy().children;
    let start = worlds[arm].w_axis.truncate();
    let mut node = arm;
    for _ in 0..4 {
        node = *children[node].iter().find(|&&c| bones[c])?;
        if worlds[node].w_axis.truncate().distance(start) >= 0.01 * height {
            return Some(node);
        }
    }
    None
}

/// A skin joint's bind pose: its inverse bind matrix, where the skin places the bound mesh
/// (see [`check_rest_pose`]) and the joint's world matrix in the bind pose.
#[derive(Clone, Copy)]
struct Bind {
    inverse_bind: Mat4,
    placement: Mat4,
    world: Mat4,
}

/// Each skin joint's bind pose (from the first skin listing it), per node.
fn bind_poses(rig: &Rig, rest_worlds: &[Mat4]) -> Vec<Option<Bind>> {
    let mut out: Vec<Option<Bind>> = vec![None; rig.nodes.len()];
    for (s, skin) in rig.skins.iter().enumerate() {
        let mesh_node = rig.instances.iter().find(|i| i.skin == Some(s)).map(|i| i.node);
        let placement = crate::rig::bind::bind_placement(skin, rest_worlds, mesh_node);
        for (&joint, inverse_bind) in skin.joints.iter().zip(&skin.inverse_binds) {
            if let Some(slot) = out.get_mut(joint).filter(|s| s.is_none()) {
                *slot = Some(Bind {
                    inverse_bind: *inverse_bind,
                    placement,
                    world: placement * inverse_bind.inverse(),
                });
            }
        }
    }
    out
}

/// Every node's world matrix in the bind pose (see [`check_rest_pose`] for where it is placed):
/// skin joints where their inverse bind matrices put them, other nodes at rest. `None` for a rig
/// without skins, which has no bind pose.
pub fn bind_pose_worlds(rig: &Rig) -> Option<Vec<Mat4>> {
    if rig.skins.is_empty() {
        return None;
    }
    let rest = super::ClipSampler::new(rig).worlds_at(None, 0.0).to_vec();
    let binds = bind_poses(rig, &rest);
    Some(
        rest.iter()
            .zip(binds)
            .map(|(rest, bind)| bind.map_or(*rest, |b| b.world))
            .collect(),
    )
}

/// The rest and bind pose checks of `rig` whose height is `height` (see
/// [`super::checks::rig_height`]), from its rest `worlds`.
///
/// glTF draws a skinned mesh with `joint world · inverseBind` alone, and most exporters write
/// inverse bind matrices in world space; but some bind the mesh where its node stands: a mesh
/// under an armature scaled by 0.01 (or turned Z-up) has inverse bind matrices in the mesh's
/// own units, and in its rest pose every joint's `world · inverseBind` is the mesh node's world
/// matrix. So a skin's bind pose is placed by the identity or by the world matrix of the first
/// node that draws it, whichever puts its joints nearer their rest places; a rest pose that is
/// the bind pose then differs by nothing either way.
pub fn check_rest_pose(rig: &Rig, rest_worlds: &[Mat4], height: f32) -> RestPoseReport {
    let binds = bind_poses(rig, rest_worlds);
    let position = |m: &Mat4| m.w_axis.truncate();
    let arms: Vec<ArmAngle> = upper_arms_by_name(rig)
        .into_iter()
        .filter_map(|arm| {
            let elbow = elbow_of(rig, arm, rest_worlds, height)?;
            let rest_deg = below_horizontal_deg(position(&rest_worlds[arm]), position(&rest_worlds[elbow]));
            let bind_deg = match (binds[arm], binds[elbow]) {
                (Some(a), Some(b)) => Some(below_horizontal_deg(position(&a.world), position(&b.world))),
                _ => None,
            };
            Some(ArmAngle {
                joint: rig.nodes[arm].name.clone(),
                elbow: rig.nodes[elbow].name.clone(),
                rest_deg,
                bind_deg,
            })
        })
        .collect();
    let joints: Vec<JointBindOffset> = binds
        .iter()
        .enumerate()
        .filter_map(|(node, bind)| {
            let bind = (*bind)?;
            let (distance, degrees) =
                crate::rig::bind::bind_offset(&rest_worlds[node], &bind.inverse_bind, &bind.placement);
            Some(JointBindOffset {
                joint: rig.nodes[node].name.clone(),
                position: distance / height,
                rotation_deg: degrees,
            })
        })
        .collect();
    let worst = |key: fn(&JointBindOffset) -> f32| joints.iter().max_by(|a, b| key(a).total_cmp(&key(b)));
    let (by_position, by_rotation) = (worst(|j| j.position), worst(|j| j.rotation_deg));
    RestPoseReport {
        arm_pose: ArmPose::of(&arms.iter().map(|a| a.rest_deg).collect::<Vec<_>>()),
        arms,
        bind_position_error: by_position.map(|j| j.position),
        bind_position_worst_joint: by_position.map(|j| j.joint.clone()),
        bind_rotation_error_deg: by_rotation.map(|j| j.rotation_deg),
        bind_rotation_worst_joint: by_rotation.map(|j| j.joint.clone()),
        joints,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::motion::tests::node;
    use crate::rig::{Skin, Trs};
    use glam::Quat;

    /// Hips 1 above the ground, a spine, and on each side a shoulder, an upper arm (Mixamo's
    /// names) 0.3 long and a forearm, the upper arms' rest rotations `left` and `right` about Z.
    fn arms_rig(names: [&str; 2], left: Quat, right: Quat) -> Rig {
        let mut nodes = vec![
            node("Hips", None, Vec3::Y),
            node("Spine", Some(0), Vec3::new(0.0, 0.5, 0.0)),
            node("LeftShoulder", Some(1), Vec3::new(0.1, 0.0, 0.0)),
            node(names[0], Some(2), Vec3::new(0.1, 0.0, 0.0)),
            node("LeftForeArm", Some(3), Vec3::new(0.3, 0.0, 0.0)),
            node("RightShoulder", Some(1), Vec3::new(-0.1, 0.0, 0.0)),
            node(names[1], Some(5), Vec3::new(-0.1, 0.0, 0.0)),
            node("RightForeArm", Some(6), Vec3::new(-0.3, 0.0, 0.0)),
        ];
        nodes[3].rest.rotation = left;
        nodes[6].rest.rotation = right;
        Rig {
            nodes,
            ..Rig::default()
        }
    }

    fn report(rig: &Rig) -> RestPoseReport {
        let mut sampler = super::super::ClipSampler::new(rig);
        let worlds = sampler.worlds_at(None, 0.0).to_vec();
        check_rest_pose(rig, &worlds, super::super::checks::rig_height(rig))
    }

    #[test]
    fn arms_level_are_a_t_pose_and_lowered_by_45_degrees_an_a_pose() {
        let level = report(&arms_rig(["LeftArm", "RightArm"], Quat::IDENTITY, Quat::IDENTITY));
        assert_eq!(level.arm_pose, Some(ArmPose::TPose));
        let names: Vec<&str> = level.arms.iter().map(|a| a.joint.as_str()).collect();
        assert_eq!(names, ["LeftArm", "RightArm"]);
        assert_eq!(level.arms[0].elbow, "LeftForeArm");
        for arm in &level.arms {
            assert!(arm.rest_deg.abs() < 1e-4, "{arm:?}");
        }
        // The left arm turned -45° about Z points its +X down; the right arm +45° points its −X
        // down: both lowered by 45°, by hand.
        let lowered = Quat::from_rotation_z(-45f32.to_radians());
        let a_pose = arms_rig(["UpperArm.L", "UpperArm.R"], lowered, lowered.inverse());
        let a_pose = report(&a_pose);
        assert_eq!(a_pose.arm_pose, Some(ArmPose::APose));
        for arm in &a_pose.arms {
            assert!((arm.rest_deg - 45.0).abs() < 1e-3, "{arm:?}");
            assert_eq!(arm.bind_deg, None, "no skin, no bind pose");
        }
        // One arm raised 30°: neither.
        let raised = Quat::from_rotation_z(30f32.to_radians());
        let mixed = report(&arms_rig(["LeftArm", "RightArm"], raised, Quat::IDENTITY));
        assert!((mixed.arms[0].rest_deg + 30.0).abs() < 1e-3, "{:?}", mixed.arms[0]);
        assert_eq!(mixed.arm_pose, Some(ArmPose::Neither));
        // No arms by name: no pose.
        let armless = report(&arms_rig(["LeftWing", "RightWing"], Quat::IDENTITY, Quat::IDENTITY));
        assert!(armless.arms.is_empty());
        assert_eq!(armless.arm_pose, None);
        assert_eq!(armless.bind_position_error, None);
    }

    #[test]
    fn a_rest_pose_moved_from_the_bind_pose_is_measured_per_joint_with_the_worst_named() {
        let mut rig = arms_rig(["LeftArm", "RightArm"], Quat::IDENTITY, Quat::IDENTITY);
        // Bound where the nodes rest, then the left upper arm's rest turned 30° down about Z
        // and the spine's rest moved 0.06 sideways (the arms and forearms below it with it).
        let rest = {
            let mut sampler = super::super::ClipSampler::new(&rig);
            sampler.worlds_at(None, 0.0).to_vec()
        };
        let joints: Vec<usize> = (0..rig.nodes.len()).collect();
        let inverse_binds = joints.iter().map(|&j| rest[j].inverse()).collect();
        rig.skins = vec![Skin {
            name: "body".into(),
            joints,
            inverse_binds,
        }];
        let height = super::super::checks::rig_height(&rig);
        let unchanged = report(&rig);
        assert!(unchanged.bind_position_error.unwrap() < 1e-6);
        assert!(unchanged.bind_rotation_error_deg.unwrap() < 0.05);
        rig.nodes[3].rest.rotation = Quat::from_rotation_z(-30f32.to_radians());
        rig.nodes[1].rest = Trs {
            translation: Vec3::new(0.06, 0.5, 0.0),
            ..rig.nodes[1].rest
        };
        let moved = report(&rig);
        let row = |name: &str| moved.joints.iter().find(|j| j.joint == name).unwrap();
        // The hips stay; the spine and all above it move 0.06 (relative to the rig's height).
        assert!(row("Hips").position < 1e-6);
        for name in ["Spine", "LeftArm", "RightForeArm"] {
            assert!((row(name).position - 0.06 / height).abs() < 1e-5, "{:?}", row(name));
        }
        // The left forearm also swings down: its elbow is 0.3 from the turned shoulder, moved
        // by 2 · 0.3 · sin 15° along the arc, plus the spine's 0.06 (worked out in f64).
        let shoulder = glam::DVec3::new(0.2, 0.0, 0.0);
        let turn = glam::DQuat::from_rotation_z(-30f64.to_radians());
        let swung = shoulder + turn * glam::DVec3::new(0.3, 0.0, 0.0) + glam::DVec3::new(0.06, 0.0, 0.0);
        let expected = (swung - glam::DVec3::new(0.5, 0.0, 0.0)).length() / f64::from(height);
        assert!((f64::from(row("LeftForeArm").position) - expected).abs() < 1e-5);
        assert_eq!(moved.bind_position_worst_joint.as_deref(), Some("LeftForeArm"));
        // Turned 30°: the upper arm and the forearm below it.
        assert!(
            (row("LeftArm").rotation_deg - 30.0).abs() < 0.05,
            "{:?}",
            row("LeftArm")
        );
        assert!(row("RightArm").rotation_deg < 0.05);
        assert!((moved.bind_rotation_error_deg.unwrap() - 30.0).abs() < 0.05);
        assert!(
            matches!(
                moved.bind_rotation_worst_joint.as_deref(),
                Some("LeftArm" | "LeftForeArm")
            ),
            "{moved:?}"
        );
        // The bind pose keeps its level arms while the rest pose lowers one by 30°.
        let left = &moved.arms[0];
        assert!((left.rest_deg - 30.0).abs() < 1e-3, "{left:?}");
        assert!(left.bind_deg.unwrap().abs() < 1e-3, "{left:?}");
        assert_eq!(moved.arm_pose, Some(ArmPose::Neither));
    }

    #[test]
    fn a_mesh_bound_in_the_units_of_an_armature_scaled_by_a_hundredth_is_in_its_bind_pose() {
        // Centimetres under a 0.01 armature: the joints rest at a hundredth of the places their
        // inverse bind matrices undo, and the mesh node under the armature places the mesh.
        let mut rig = arms_rig(["LeftArm", "RightArm"], Quat::IDENTITY, Quat::IDENTITY);
        for node in &mut rig.nodes {
            node.parent = Some(node.parent.map_or(0, |p| p + 1));
        }
        rig.nodes.insert(0, node("Armature", None, Vec3::ZERO));
        rig.nodes[0].rest.scale = Vec3::splat(0.01);
        rig.nodes[1].rest.translation = Vec3::new(0.0, 100.0, 0.0);
        for joint in &mut rig.nodes[2..] {
            joint.rest.translation *= 100.0;
        }
        rig.nodes.push(node("Body", Some(0), Vec3::ZERO));
        let rest = super::super::ClipSampler::new(&rig).worlds_at(None, 0.0).to_vec();
        let joints: Vec<usize> = (1..9).collect();
        let centimetres = Mat4::from_scale(Vec3::splat(100.0));
        let inverse_binds = joints.iter().map(|&j| (centimetres * rest[j]).inverse()).collect();
        rig.skins = vec![Skin {
            name: "body".into(),
            joints,
            inverse_binds,
        }];
        rig.instances = vec![crate::rig::MeshInstance {
            node: 9,
            mesh: 0,
            skin: Some(0),
        }];
        let placed = report(&rig);
        assert!(placed.bind_position_error.unwrap() < 1e-5, "{placed:?}");
        assert!(placed.bind_rotation_error_deg.unwrap() < 0.05, "{placed:?}");
        assert!(
            placed.arms.iter().all(|a| a.bind_deg.unwrap().abs() < 1e-3),
            "{placed:?}"
        );
        // Without the mesh node the same matrices put the bind pose a hundred times too far.
        rig.instances.clear();
        let unplaced = report(&rig);
        assert!(unplaced.bind_position_error.unwrap() > 10.0, "{unplaced:?}");
    }
}
