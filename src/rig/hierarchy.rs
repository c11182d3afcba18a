//! Facts about a rig's node tree that many parts ask for: children, depth, which nodes are
//! joints and where each joint sits in its skin. Computed once per rig (see [`Rig::hierarchy`]).

use crate::rig::Rig;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hierarchy {
    /// Per node, its children in file order.
    pub children: Vec<Vec<usize>>,
    /// Nodes without a parent, in file order.
    pub roots: Vec<usize>,
    /// Per node, its number of ancestors (0 for roots).
    pub depth: Vec<u32>,
    /// Per node, whether some skin lists it as a joint.
    pub is_joint: Vec<bool>,
    /// Per node, whether the skeleton overlay draws it: the skins' joints or, in a file without
    /// skins (a mocap clip, a skeleton exported alone), every node with a parent, children or a
    /// channel: all but lone nodes that nothing moves.
    pub bones: Vec<bool>,
    /// Per node, its index in the first skin that lists it.
    joint_slot: Vec<Option<usize>>,
}

impl Hierarchy {
    /// The facts of `rig`'s nodes. Parents come before their children (the importer orders
    /// them so), which lets one pass compute depths; a parent that does not is ignored.
    pub fn of(rig: &Rig) -> Hierarchy {
        let n = rig.nodes.len();
        let mut hierarchy = Hierarchy {
            children: vec![Vec::new(); n],
            roots: Vec::new(),
            depth: vec![0; n],
            is_joint: vec![false; n],
            bones: Vec::new(),
            joint_slot: vec![None; n],
        };
        for (node, data) in rig.nodes.iter().enumerate() {
            match data.parent.filter(|&p| p < node) {
                Some(parent) => {
                    hierarchy.children[parent].push(node);
                    hierarchy.depth[node] = hierarchy.depth[parent] + 1;
                }
                None => hierarchy.roots.push(node),
            }
        }
        for skin in &rig.skins {
            for (slot, &joint) in skin.joints.iter().enumerate() {
                if joint < n {
                    hierarchy.is_joint[joint] = true;
                    hierarchy.joint_slot[joint].get_or_insert(slot);
                }
            }
        }
        hierarchy.bones = if hierarchy.has_joints() {
            hierarchy.is_joint.clone()
        } else {
            let mut bones: Vec<bool> = (hierarchy.children.iter().zip(&rig.nodes))
                .map(|(children, node)| !children.is_empty() || node.parent.is_some())
                .collect();
            for channel in rig.clips.iter().flat_map(|c| &c.channels) {
                if let Some(bone) = bones.get_mut(channel.node) {
                    *bone = true;
                }
            }
            bones
        };
        hierarchy
    }

    /// `node`'s index in the first skin that lists it as a joint.
    pub fn joint_slot(&self, node: usize) -> Option<usize> {
        self.joint_slot.get(node).copied().flatten()
    }

    /// Whether any skin has a joint.
    pub fn has_joints(&self) -> bool {
        self.is_joint.iter().any(|&j| j)
    }
}

/// Where a [`Rig`] keeps its [`Hierarchy`] once computed.
#[derive(Debug, Clone, Default)]
pub struct HierarchyCache(pub(super) std::sync::OnceLock<Hierarchy>);
