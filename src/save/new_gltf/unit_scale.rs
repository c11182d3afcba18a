//! Rest scale taken out of the node tree above and within skins, where importers disagree.
//!
//! Blender's importer builds bones, which have no rest scale: a joint (or a node between joints)
//! scaled uniformly at rest is drawn off by the scale there (XSI's man: face joints and the
//! upper jaw at 0.1, 16 % of the height at the lips). Without changing what the file draws, a
//! node's uniform rest scale `s` can move into the inverse bind matrices below it instead: the
//! node's scale (rest and keys) is divided by `s`, every translation below it (rest and keys) is
//! multiplied by `s`, and every joint in its subtree gets `S(s)·IBM`. Each such world transform
//! becomes `world·S(1/s)`, since a uniform scale commutes with rotations and `S(1/s)·T(s·t) =
//! T(t)·S(1/s)`, and the skinning matrices `world·IBM` stay as they were.
//!
//! A node is left as it is where that would move something the inverse bind matrices do not
//! carry: a mesh drawn without a skin in its subtree, or a non-uniform rest scale (whose product
//! with a rotation is no scale).

use crate::rig::{Property, Rig};
use glam::{Mat4, Vec3};

/// How close to uniform, and to 1, a scale must be to count as such (relative).
const SCALE_TOLERANCE: f32 = 1e-6;

/// The uniform factor of `scale`, when it is uniform, finite, positive and not 1.
fn uniform_factor(scale: Vec3) -> Option<f32> {
    let s = scale.x;
    let uniform = (scale - Vec3::splat(s)).abs().max_element() <= SCALE_TOLERANCE * s.abs();
    (uniform && s.is_finite() && s > 0.0 && (s - 1.0).abs() > SCALE_TOLERANCE).then_some(s)
}

/// `rig` with every uniform rest scale of a node that is a joint or above one moved into the
/// inverse bind matrices, as the module says, and a note naming those nodes; `None` when no node
/// has such a scale.
pub(super) fn rest_scale_into_binds(rig: &Rig) -> Option<(Rig, String)> {
    let count = rig.nodes.len();
    let mut is_joint = vec![false; count];
    for &joint in rig.skins.iter().flat_map(|s| &s.joints) {
        if let Some(slot) = is_joint.get_mut(joint) {
            *slot = true;
        }
    }
    let mut rigid_mesh = vec![false; count];
    for instance in rig.instances.iter().filter(|i| i.skin.is_none()) {
        if let Some(slot) = rigid_mesh.get_mut(instance.node) {
            *slot = true;
        }
    }
    // Parents come first in the rig, so one pass backwards gathers each subtree's facts.
    let (mut holds_joint, mut holds_rigid_mesh) = (is_joint.clone(), rigid_mesh);
    for node in (0..count).rev() {
        if let Some(parent) = rig.nodes[node].parent.filter(|&p| p < node) {
            holds_joint[parent] |= holds_joint[node];
            holds_rigid_mesh[parent] |= holds_rigid_mesh[node];
        }
    }
    // A node's own rest scale is not changed by moving an ancestor's: the candidates are known
    // before any move.
    let scaled: Vec<(usize, f32)> = (0..count)
        .filter(|&node| holds_joint[node] && !holds_rigid_mesh[node] && scale_holds_still(rig, node))
        .filter_map(|node| Some((node, uniform_factor(rig.nodes[node].rest.scale)?)))
        .collect();
    if scaled.is_empty() {
        return None;
    }
    let mut rig = rig.clone();
    let mut changed = Vec::new();
    for (node, s) in scaled {
        let inside = subtree_of(&rig, node);
        rig.nodes[node].rest.scale = Vec3::ONE;
        for below in (node + 1..count).filter(|&n| inside[n]) {
            rig.nodes[below].rest.translation *= s;
        }
        for channel in rig.clips.iter_mut().flat_map(|c| &mut c.channels) {
            let factor = match channel.property {
                Property::Scale if channel.node == node => 1.0 / s,
                Property::Translation if channel.node != node && inside.get(channel.node) == Some(&true) => s,
                _ => continue,
            };
            for value in &mut channel.values {
                *value = (value.truncate() * factor).extend(value.w);
            }
        }
        let shrink = Mat4::from_scale(Vec3::splat(s));
        for skin in &mut rig.skins {
            for (joint, bind) in skin.joints.iter().zip(&mut skin.inverse_binds) {
                if inside.get(*joint) == Some(&true) {
                    *bind = shrink * *bind;
                }
            }
        }
        changed.push(format!("'{}' ({s})", rig.nodes[node].name));
    }
    let note = format!(
        "the rest scale of {} is written into the inverse bind matrices below it, as bones carry none \
         (Blender's importer drops it); the drawing is the same",
        changed.join(", ")
    );
    Some((rig, note))
}

/// Whether every key of every clip's scale channel of `node` is its rest scale. Blender draws a
/// scale that changes over the clip otherwise again (Maya's slime: moving it made Blender's
/// drawing 3.8e-2 of the height off, from 1.2e-2), so only a still one is moved.
fn scale_holds_still(rig: &Rig, node: usize) -> bool {
    let rest = rig.nodes[node].rest.scale;
    let still = |channel: &crate::rig::Channel| {
        let keys = channel.values.iter().enumerate();
        keys.filter(|(k, _)| channel.interpolation != crate::rig::Interpolation::CubicSpline || k % 3 == 1)
            .all(|(_, v)| (v.truncate() - rest).abs().max_element() <= SCALE_TOLERANCE * rest.abs().max_element())
    };
    (rig.clips.iter().flat_map(|c| &c.channels))
        .filter(|c| c.node == node && c.property == Property::Scale)
        .all(still)
}

/// Per rig node, whether it is `node` or below it (parents come first in the rig).
fn subtree_of(rig: &Rig, node: usize) -> Vec<bool> {
    let mut inside = vec![false; rig.nodes.len()];
    inside[node] = true;
    for below in node + 1..rig.nodes.len() {
        inside[below] = rig.nodes[below].parent.is_some_and(|p| inside[p]);
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::PoseBuffers;
    use crate::rig::{Channel, Clip, Interpolation, MeshInstance, Node, Skin, Trs};
    use glam::{Quat, Vec4};

    /// A root scaled 2 above joint `a` (scaled 0.5, turned) and its child `b` (scaled 3, a
    /// leaf), a skin over both with binds that are not the rest's inverse, and a clip moving `b`
    /// and keying the root's scale where it rests.
    fn scaled_rig() -> Rig {
        let node = |name: &str, parent, translation: Vec3, rotation: Quat, scale: f32| Node {
            name: name.into(),
            parent,
            rest: Trs {
                translation,
                rotation,
                scale: Vec3::splat(scale),
            },
        };
        let turn = Quat::from_rotation_z(0.7);
        let mut rig = Rig {
            nodes: vec![
                node("root", None, Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY, 2.0),
                node("a", Some(0), Vec3::new(0.5, 0.0, 0.0), turn, 0.5),
                node("b", Some(1), Vec3::new(0.0, 1.5, 0.2), Quat::from_rotation_x(0.3), 3.0),
            ],
            skins: vec![Skin {
                name: "skin".into(),
                joints: vec![1, 2],
                inverse_binds: vec![
                    Mat4::from_translation(Vec3::new(0.1, -2.0, 0.0)),
                    Mat4::from_rotation_y(0.4) * Mat4::from_translation(Vec3::new(0.0, -3.0, 0.1)),
                ],
            }],
            ..Rig::default()
        };
        rig.clips.push(Clip {
            name: "move".into(),
            duration: 1.0,
            channels: vec![
                Channel {
                    node: 2,
                    property: Property::Translation,
                    interpolation: Interpolation::Linear,
                    times: vec![0.0, 1.0],
                    values: vec![Vec4::new(0.0, 1.5, 0.2, 0.0), Vec4::new(1.0, 0.5, -0.4, 0.0)],
                },
                Channel {
                    node: 0,
                    property: Property::Scale,
                    interpolation: Interpolation::Linear,
                    times: vec![0.0, 1.0],
                    values: vec![Vec4::new(2.0, 2.0, 2.0, 0.0); 2],
                },
            ],
            source: None,
        });
        rig
    }

    fn palettes(rig: &Rig, time: f32) -> Vec<Mat4> {
        let pose = PoseBuffers::at(rig, Some(0), time);
        (rig.skins[0].joints.iter())
            .zip(&rig.skins[0].inverse_binds)
            .map(|(&joint, bind)| pose.worlds[joint] * *bind)
            .collect()
    }

    #[test]
    fn uniform_rest_scales_move_into_the_binds_and_the_skinning_matrices_stay() {
        let rig = scaled_rig();
        let (moved, note) = rest_scale_into_binds(&rig).expect("three nodes are scaled");
        assert!(
            note.contains("'root' (2)") && note.contains("'a' (0.5)") && note.contains("'b' (3)"),
            "{note}"
        );
        assert!(moved.nodes.iter().all(|n| n.rest.scale == Vec3::ONE));
        for time in [0.0, 0.3, 1.0] {
            for (want, got) in palettes(&rig, time).iter().zip(palettes(&moved, time)) {
                assert!(want.abs_diff_eq(got, 1e-5), "at {time}: {want} against {got}");
            }
        }
        assert!(rest_scale_into_binds(&moved).is_none(), "nothing is left to move");
    }

    #[test]
    fn a_scale_that_changes_over_a_clip_stays_where_it_is() {
        let mut rig = scaled_rig();
        rig.clips[0].channels[1].values[1] = Vec4::new(1.0, 3.0, 2.0, 0.0);
        let (moved, note) = rest_scale_into_binds(&rig).expect("a and b are scaled");
        assert!(!note.contains("'root'") && note.contains("'a' (0.5)"), "{note}");
        assert_eq!(moved.nodes[0].rest.scale, Vec3::splat(2.0));
        for time in [0.0, 0.3, 1.0] {
            for (want, got) in palettes(&rig, time).iter().zip(palettes(&moved, time)) {
                assert!(want.abs_diff_eq(got, 1e-5), "at {time}: {want} against {got}");
            }
        }
    }

    #[test]
    fn a_non_uniform_scale_or_a_rigid_mesh_below_keeps_its_node_as_it_is() {
        let mut rig = scaled_rig();
        rig.nodes[1].rest.scale = Vec3::new(0.5, 0.6, 0.5);
        rig.instances.push(MeshInstance {
            node: 2,
            mesh: 0,
            skin: None,
        });
        assert!(rest_scale_into_binds(&rig).is_none());
    }
}
