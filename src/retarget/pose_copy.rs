//! Copy and paste of a pose between documents (or within one): each joint's local transform, matched
//! to the joints of the document pasted into by name (exactly, else by the normalized name that the
//! retargeting and the comparison use: `mixamorig:LeftArm` is `Armature|LeftArm`).

use super::normalized_name;
use crate::rig::{Rig, Trs};
use std::collections::HashMap;

/// A copied pose: the joints' names with their local transforms and rest transforms.
#[derive(Debug, Clone, PartialEq)]
pub struct PoseClipboard {
    /// The file the pose was copied from, as the toasts and the undo list name it.
    pub source: String,
    joints: Vec<CopiedJoint>,
}

#[derive(Debug, Clone, PartialEq)]
struct CopiedJoint {
    name: String,
    local: Trs,
    rest: Trs,
}

impl PoseClipboard {
    /// The pose `locals` of `rig`'s bones (the joints the skeleton overlay draws).
    pub fn copy(rig: &Rig, locals: &[Trs], source: String) -> PoseClipboard {
        let bones = &rig.hierarchy().bones;
        let joints = (rig.nodes.iter().zip(locals).enumerate())
            .filter(|(node, _)| bones.get(*node).copied().unwrap_or(false))
            .map(|(_, (node, local))| CopiedJoint {
                name: node.name.clone(),
                local: *local,
                rest: node.rest,
            })
            .collect();
        PoseClipboard { source, joints }
    }

    /// How many joints were copied.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// The local transform each node of `rig` takes from the copy (`None`: no copied joint of its
    /// name). Rotations are copied as they are; translation and scale as their change from the copied
    /// joint's rest, put on the node's own rest, so that a rig of other proportions keeps its bone
    /// lengths (and the same rig gets the copy back).
    pub fn wanted_locals(&self, rig: &Rig) -> Vec<Option<Trs>> {
        let exact: HashMap<&str, &CopiedJoint> = self.joints.iter().map(|j| (j.name.as_str(), j)).collect();
        let normalized: HashMap<String, &CopiedJoint> =
            self.joints.iter().map(|j| (normalized_name(&j.name), j)).collect();
        (rig.nodes.iter())
            .map(|node| {
                let copied = (exact.get(node.name.as_str()))
                    .or_else(|| normalized.get(&normalized_name(&node.name)))
                    .copied()?;
                let ratio = |posed: f32, rest: f32| if rest != 0.0 { posed / rest } else { 1.0 };
                let scale = glam::Vec3::new(
                    ratio(copied.local.scale.x, copied.rest.scale.x),
                    ratio(copied.local.scale.y, copied.rest.scale.y),
                    ratio(copied.local.scale.z, copied.rest.scale.z),
                );
                Some(Trs {
                    translation: node.rest.translation + (copied.local.translation - copied.rest.translation),
                    rotation: copied.local.rotation,
                    scale: node.rest.scale * scale,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::Node;
    use glam::{Quat, Vec3};

    fn rig(names: &[&str], rest_y: f32) -> Rig {
        let nodes = (names.iter().enumerate())
            .map(|(i, name)| Node {
                name: (*name).into(),
                parent: i.checked_sub(1),
                rest: Trs {
                    translation: Vec3::new(0.0, rest_y, 0.0),
                    ..Trs::IDENTITY
                },
            })
            .collect();
        Rig {
            nodes,
            ..Rig::default()
        }
    }

    #[test]
    fn joints_match_by_name_then_normalized_name_and_keep_their_own_rest_lengths() {
        let source = rig(&["mixamorig:Hips", "mixamorig:Spine", "mixamorig:Head"], 1.0);
        let posed = [
            Trs {
                translation: Vec3::new(0.5, 1.0, 0.0),
                rotation: Quat::from_rotation_y(0.3),
                scale: Vec3::ONE,
            },
            Trs {
                translation: Vec3::new(0.0, 1.0, 0.0),
                rotation: Quat::from_rotation_x(0.6),
                scale: Vec3::splat(2.0),
            },
            Trs::IDENTITY,
        ];
        let copied = PoseClipboard::copy(&source, &posed, "source.glb".into());
        // The copy has no skins: its bones are the nodes with a parent or children.
        assert_eq!(copied.len(), 3);
        // Other names for the same joints, bones twice as long, and one joint the copy lacks.
        let target = rig(&["Armature|Hips", "spine", "Tail"], 2.0);
        let wanted = copied.wanted_locals(&target);
        let hips = wanted[0].unwrap();
        // Moved 0.5 along X from its rest: the same move from the target's rest.
        assert_eq!(hips.translation, Vec3::new(0.5, 2.0, 0.0));
        assert_eq!(hips.rotation, Quat::from_rotation_y(0.3));
        let spine = wanted[1].unwrap();
        assert_eq!(spine.translation, Vec3::new(0.0, 2.0, 0.0), "its own bone length");
        assert_eq!(
            (spine.rotation, spine.scale),
            (Quat::from_rotation_x(0.6), Vec3::splat(2.0))
        );
        assert_eq!(wanted[2], None);
        assert_eq!(wanted.iter().flatten().count(), 2);
    }
}
