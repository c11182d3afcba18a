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
