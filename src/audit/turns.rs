//! The audit's sweep at its largest angles, as poses other checks can draw: each weighted
//! joint of the rest pose turned alone, either way, about its bone and the two axes across it.

use super::motion::{Axis, bend_axes, bone, skin_facts};
use super::{AuditOptions, bind_spaces};
use crate::anim::JointOverride;
use crate::rig::Rig;
use glam::Quat;

/// One joint of the rest pose turned alone: a pose of the audit's sweep.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JointTurn {
    pub node: usize,
    /// The node's name.
    pub joint: String,
    pub axis: Axis,
    /// Degrees, signed.
    pub degrees: f32,
    /// The turn as the node's own: applied after its local rotation.
    #[serde(skip)]
    pub turn: Quat,
}

impl JointTurn {
    /// The turn as the bend it is on the node, for [`crate::anim::PoseInputs::overrides`].
    pub fn joint_override(&self) -> JointOverride {
        JointOverride {
            rotation: self.turn,
            ..JointOverride::IDENTITY
        }
    }

    /// "LeftArm twisted −90°", "LeftArm bent +90° about its first axis across the bone".
    pub fn describe(&self) -> String {
        let (name, degrees) = (&self.joint, self.degrees);
        match self.axis {
            Axis::Twist => format!("{name} twisted {degrees:+}°"),
            Axis::BendA => format!("{name} bent {degrees:+}° about its first axis across the bone"),
            Axis::BendB => format!("{name} bent {degrees:+}° about its second axis across the bone"),
        }
    }
}

/// Every weighted joint of every skin (or those named in `options.joints`) turned
/// `options.twist_degrees` either way about its bone and `options.bend_degrees` either way
/// about each axis across it: the axes the audit sweeps, in the joint's bind frame. A joint of
/// two skins is turned once; joints whose bind matrix cannot be inverted are left out.
pub fn extreme_turns(rig: &Rig, options: &AuditOptions) -> Vec<JointTurn> {
    let mut turns = Vec::new();
    let mut done = vec![false; rig.nodes.len()];
    for space in bind_spaces(rig, &mut Vec::new()) {
        let facts = skin_facts(rig, &space);
        let skin = &rig.skins[space.skin];
        for (k, &node) in skin.joints.iter().enumerate() {
            let named =
                options.joints.is_empty() || (rig.nodes.get(node)).is_some_and(|n| options.joints.contains(&n.name));
            let Some(world) = space.world(k) else { continue };
            if facts.weight[k] <= 0.0 || !named || done.get(node).is_none_or(|&d| d) {
                continue;
            }
            done[node] = true;
            let (along, _, _) = bone(rig, &space, &facts, k);
            let (across_a, across_b) = bend_axes(&world, along);
            let (_, bind_rotation, _) = world.to_scale_rotation_translation();
            for (axis, direction, limit) in [
                (Axis::Twist, along, options.twist_degrees),
                (Axis::BendA, across_a, options.bend_degrees),
                (Axis::BendB, across_b, options.bend_degrees),
            ] {
                // The world axis in the joint's own frame: a turn about it after the local
                // rotation turns the joint about the world axis at its bind pose.
                let Some(own) = (bind_rotation.inverse() * direction).try_normalize() else {
                    continue;
                };
                for degrees in [-limit, limit] {
                    turns.push(JointTurn {
                        node,
                        joint: rig.nodes[node].name.clone(),
                        axis,
                        degrees,
                        turn: Quat::from_axis_angle(own, degrees.to_radians()),
                    });
                }
            }
        }
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{PoseBuffers, PoseInputs, evaluate_pose};

    /// A tube's chain stood at an angle (its first joint turned 0.7 rad about Z, bound there):
    /// the first joint's twists leave the next joint where it is, and its bends swing the
    /// next joint 90° about the first joint's pivot, its distance kept.
    #[test]
    fn turns_twist_about_the_bone_and_bend_across_it_in_the_bind_pose() {
        let mut rig = crate::synthetic::skinned_tube(256, 3);
        let first = rig.skins[0].joints[0];
        let next = rig.skins[0].joints[1];
        rig.nodes[first].rest.rotation = Quat::from_rotation_z(0.7);
        let rest = PoseBuffers::new(&rig);
        rig.skins[0].inverse_binds = (rig.skins[0].joints.iter())
            .map(|&n| rest.worlds[n].inverse())
            .collect();
        let rest = PoseBuffers::new(&rig);
        let at = |pose: &PoseBuffers, node: usize| pose.worlds[node].w_axis.truncate();
        let (pivot, before) = (at(&rest, first), at(&rest, next));
        let turns: Vec<JointTurn> = extreme_turns(&rig, &AuditOptions::default())
            .into_iter()
            .filter(|t| t.node == first)
            .collect();
        assert_eq!(turns.len(), 6, "two signs of three axes: {turns:?}");
        let mut overrides = vec![JointOverride::IDENTITY; rig.nodes.len()];
        let mut pose = PoseBuffers::new(&rig);
        for turn in &turns {
            overrides[first] = turn.joint_override();
            let inputs = PoseInputs {
                overrides: &overrides,
                ..PoseInputs::clip_at(None, 0.0)
            };
            evaluate_pose(&rig, &inputs, &mut pose);
            let after = at(&pose, next);
            let (from, to) = (
                f64::from((before - pivot).length()),
                f64::from((after - pivot).length()),
            );
            assert!((from - to).abs() < 1e-6, "{turn:?}: the bone keeps its length");
            let swung = f64::from((before - pivot).angle_between(after - pivot).to_degrees());
            let expected = if turn.axis == Axis::Twist { 0.0 } else { 90.0 };
            assert!(
                (swung - expected).abs() < 1e-3,
                "{turn:?}: the next joint swings {swung}°"
            );
        }
    }
}
