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
    let children: Vec<Vec<usize>> = document
        .nodes()
        .map(|n| n.children().map(|c| c.index()).collect())
        .collect();
    let mut order: Vec<usize> = (0..count).filter(|&i| parents[i].is_none()).collect();
    let mut next = 0;
    while next < order.len() {
        let node = order[next];
        order.extend(&children[node]);
        next += 1;
    }
    if order.len() != count {
        let mut placed = vec![false; count];
        for &i in &order {
            placed[i] = true;
        }
        let stranded: Vec<usize> = (0..count).filter(|&i| !placed[i]).collect();
        let mut listed: Vec<String> = stranded.iter().take(8).map(|i| i.to_string()).collect();
        if stranded.len() > listed.len() {
            listed.push(format!("and {} more", stranded.len() - listed.len()));
        }
        return Err(RigError::Data(format!(
            "the node hierarchy has a cycle: nodes {} are in it or below it, with no root above them",
            listed.join(", ")
        )));
    }
    Ok((order, parents))
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
