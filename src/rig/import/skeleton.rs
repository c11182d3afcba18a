//! The node tree (parents first) and the skins over it.

use super::accessor::{self, Budget, Buffers, FLOAT};
use crate::rig::{Node, RigError, Skin, Trs};
use glam::{Mat4, Quat, Vec3, Vec4};

/// The file's nodes sorted parents-first.
pub struct Hierarchy {
    pub nodes: Vec<Node>,
    /// `slot[i]`: where glTF node i lives in `nodes`.
    pub slot: Vec<usize>,
    /// The glTF index of each node of `nodes`.
    pub order: Vec<usize>,
    /// Each node's local matrix as the file gives it.
    pub node_matrices: Vec<Mat4>,
    pub given_as_matrix: Vec<bool>,
}

/// The node tree, sorted parents-first, with rest transforms.
pub fn read_nodes(document: &gltf::Document) -> Result<Hierarchy, RigError> {
    let (order, parents) = sort_nodes(document)?;
    let mut slot = vec![0usize; order.len()];
    for (new, &old) in order.iter().enumerate() {
        slot[old] = new;
    }
    let gltf_nodes: Vec<gltf::Node> = document.nodes().collect();
    let mut node_matrices = Vec::with_capacity(order.len());
    let mut given_as_matrix = Vec::with_capacity(order.len());
    let mut nodes = Vec::with_capacity(order.len());
    for &old in &order {
        let node = &gltf_nodes[old];
        let name = node.name().map(str::to_owned).unwrap_or_else(|| format!("node {old}"));
        let matrix = Mat4::from_cols_array_2d(&node.transform().matrix());
        if !matrix.is_finite() {
            return Err(RigError::Data(format!(
                "node {old} ('{name}') has a transform that is not finite"
            )));
        }
        node_matrices.push(matrix);
        given_as_matrix.push(matches!(node.transform(), gltf::scene::Transform::Matrix { .. }));
        let (t, r, s) = node.transform().decomposed();
        // A matrix with a zero scale axis has no rotation to recover; identity keeps it collapsed.
        let rotation = Vec4::from(r).normalize_or(Vec4::W);
        nodes.push(Node {
            name,
            parent: parents[old].map(|p| slot[p]),
            rest: Trs {
                translation: Vec3::from(t),
                rotation: Quat::from_vec4(rotation),
                scale: Vec3::from(s),
            },
        });
    }
    Ok(Hierarchy {
        nodes,
        slot,
        order,
        node_matrices,
        given_as_matrix,
    })
}

/// Orders nodes parents-first. Returns the order (glTF indices) and each glTF node's parent.
fn sort_nodes(document: &gltf::Document) -> Result<(Vec<usize>, Vec<Option<usize>>), RigError> {
    let count = document.nodes().len();
    let mut parents: Vec<Option<usize>> = vec![None; count];
    for node in document.nodes() {
        for child in node.children() {
            if child.index() == node.index() {
                return Err(RigError::Data(format!(
                    "node {} lists itself as its child",
                    node.index()
                )));
            }
            if let Some(other) = parents[child.index()] {
                return Err(RigError::Data(if other == node.index() {
                    format!("node {other} lists node {} twice among its children", child.index())
                } else {
                    format!(
                        "node {} has two parents (nodes {other} and {}); glTF nodes form a tree",
                        child.index(),
                        node.index()
                    )
                }));
            }
            parents[child.index()] = Some(node.index());
        }
    }
    let order = parents_first_in_file_order(&parents)?;
    Ok((order, parents))
}

/// The glTF nodes in file order, except that a node listed before its parent has that parent
/// (and any of its ancestors not yet placed) placed just before it. A file listing parents first (most do) keeps its indices, so node `i` here is node `i` in
/// the file and in other tools, and a node a writer appends does not move the ones before it.
fn parents_first_in_file_order(parents: &[Option<usize>]) -> Result<Vec<usize>, RigError> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Waiting,
        OnPath,
        Placed,
    }
    let count = parents.len();
    let mut state = vec![State::Waiting; count];
    let mut order = Vec::with_capacity(count);
    let mut path = Vec::new();
    for start in 0..count {
        let mut node = start;
        // Up to the root or the first ancestor already placed, then place the path top-down.
        loop {
            match state[node] {
                State::Placed => break,
                State::OnPath => return Err(cycle_error(parents)),
                State::Waiting => {
                    state[node] = State::OnPath;
                    path.push(node);
                    match parents[node] {
                        Some(parent) => node = parent,
                        None => break,
                    }
                }
            }
        }
        for &placed in path.iter().rev() {
            state[placed] = State::Placed;
            order.push(placed);
        }
        path.clear();
    }
    Ok(order)
}

/// The error for a hierarchy with a cycle, naming the nodes no root reaches.
fn cycle_error(parents: &[Option<usize>]) -> RigError {
    let count = parents.len();
    let mut children = vec![Vec::new(); count];
    for (child, parent) in parents.iter().enumerate() {
        if let Some(parent) = *parent {
            children[parent].push(child);
        }
    }
    let mut reached: Vec<usize> = (0..count).filter(|&i| parents[i].is_none()).collect();
    let mut next = 0;
    while next < reached.len() {
        reached.extend_from_slice(&children[reached[next]]);
        next += 1;
    }
    let mut placed = vec![false; count];
    for &i in &reached {
        placed[i] = true;
    }
    let stranded: Vec<usize> = (0..count).filter(|&i| !placed[i]).collect();
    let mut listed: Vec<String> = stranded.iter().take(8).map(|i| i.to_string()).collect();
    if stranded.len() > listed.len() {
        listed.push(format!("and {} more", stranded.len() - listed.len()));
    }
    RigError::Data(format!(
        "the node hierarchy has a cycle: nodes {} are in it or below it, with no root above them",
        listed.join(", ")
    ))
}

pub fn read_skin(skin: &gltf::Skin, slot: &[usize], buffers: &Buffers, budget: &mut Budget) -> Result<Skin, RigError> {
    let joints: Vec<usize> = skin.joints().map(|j| slot[j.index()]).collect();
    if joints.is_empty() {
        return Err(RigError::Data(format!("skin {} has no joints", skin.index())));
    }
    let inverse_binds = match skin.inverse_bind_matrices() {
        None => vec![Mat4::IDENTITY; joints.len()],
        Some(accessor) => {
            let read: Vec<Mat4> = accessor::read_f32::<16>(&accessor, FLOAT, buffers, budget)
                .map_err(|e| RigError::from(e.context(&format!("skin {} inverse bind matrices", skin.index()))))?
                .iter()
                .map(Mat4::from_cols_array)
                .collect();
            if read.len() != joints.len() {
                return Err(RigError::Data(format!(
                    "skin {} has {} joints but {} inverse bind matrices",
                    skin.index(),
                    joints.len(),
                    read.len()
                )));
            }
            if let Some(j) = read.iter().position(|m| !m.is_finite()) {
                return Err(RigError::Data(format!(
                    "skin {}: inverse bind matrix {j} is not finite",
                    skin.index()
                )));
            }
            read
        }
    };
    Ok(Skin {
        name: skin
            .name()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("skin {}", skin.index())),
        joints,
        inverse_binds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_keep_the_file_order_unless_a_parent_comes_after_its_child() {
        // 0 ─ 1 ─ 2, 3 alone: already parents first, so nothing moves.
        let listed_parents_first = [None, Some(0), Some(1), None];
        assert_eq!(
            parents_first_in_file_order(&listed_parents_first).unwrap(),
            [0, 1, 2, 3]
        );
        // Node 0 is the child of 2, which is the child of 3; 1 is a root.
        let child_first = [Some(2), None, Some(3), None];
        assert_eq!(parents_first_in_file_order(&child_first).unwrap(), [3, 2, 0, 1]);
        // A node appended as a new root leaves every other index where it was.
        let appended = [None, Some(0), Some(1), None, None];
        assert_eq!(parents_first_in_file_order(&appended).unwrap(), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_cycle_is_refused_and_names_the_nodes_no_root_reaches() {
        // 4 is a root; 0 → 1 → 2 → 0 is a loop and 3 hangs below it.
        let parents = [Some(2), Some(0), Some(1), Some(1), None];
        let Err(RigError::Data(message)) = parents_first_in_file_order(&parents) else {
            panic!("a cycle must be refused");
        };
        assert!(
            message.contains("cycle") && message.contains("nodes 0, 1, 2, 3"),
            "{message}"
        );
    }
}
