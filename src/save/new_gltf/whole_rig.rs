//! [`write_rig`]: the whole rig as a new glTF file, in the order the importer reads it back.

use super::super::animations::encode_clip;
use super::super::{OutputFormat, SaveError, Saved, same_file};
use super::{Chunk, Materials, gltf_files, rig_data, set_list, write_files};
use crate::rig::{Rig, Trs};
use glam::{Quat, Vec3};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Where each rig node goes in the file: in rig order, which lists parents first, so the importer
/// keeps it and the file's node `i` is node `i` of the rig read back from it.
///
/// glTF asks a skin's joints for a common root. An FBX scene's root is one, but the importer
/// leaves it out when it is the identity, so a skin whose joints are in two of the rig's trees
/// (Blender's barbarian: the armature, and the hair mesh that is its own joint) gets that root
/// back: an identity node, file node 0, above all the rig's roots.
struct FileOrder {
    /// The file index of each rig node.
    file_of: Vec<usize>,
    /// The rig node of each file index after the added root.
    rig_of: Vec<usize>,
    /// Per rig node, its children in rig order.
    children: Vec<Vec<usize>>,
    /// The name of the node added above the roots, when one is.
    added_root: Option<String>,
}

impl FileOrder {
    fn of(rig: &Rig) -> Result<FileOrder, SaveError> {
        let count = rig.nodes.len();
        let mut children = vec![Vec::new(); count];
        // The root of each node's tree, found in one pass since parents come first.
        let mut top = Vec::with_capacity(count);
        for (node, n) in rig.nodes.iter().enumerate() {
            match n.parent {
                // The rig keeps parents before children; anything else would be a cycle.
                Some(parent) if parent >= node => {
                    return Err(rig_data(
                        format!("node {node} ('{}')", n.name),
                        "its parent comes after it",
                    ));
                }
                Some(parent) => {
                    children[parent].push(node);
                    top.push(top[parent]);
                }
                None => top.push(node),
            }
        }
        let split_skin = rig.skins.iter().any(|skin| {
            let mut tops = skin.joints.iter().filter_map(|&j| top.get(j));
            tops.next().is_some_and(|first| tops.any(|t| t != first))
        });
        let added_root = split_skin.then(|| {
            (1..)
                .map(|n| {
                    if n == 1 {
                        "RootNode".to_owned()
                    } else {
                        format!("RootNode_{n}")
                    }
                })
                .find(|name| rig.find_node(name).is_none())
                .expect("some name is free")
        });
        let offset = usize::from(added_root.is_some());
        let rig_of: Vec<usize> = (0..count).collect();
        let file_of = rig_of.iter().map(|node| node + offset).collect();
        Ok(FileOrder {
            file_of,
            rig_of,
            children,
            added_root,
        })
    }

    /// The rig node at file index `file` (`None` for the added root).
    fn rig_node(&self, file: usize) -> Option<usize> {
        let offset = usize::from(self.added_root.is_some());
        file.checked_sub(offset).and_then(|f| self.rig_of.get(f)).copied()
    }

    /// The file indices of the rig's roots.
    fn rig_roots(&self, rig: &Rig) -> Vec<usize> {
        (self.rig_of.iter())
            .filter(|&&node| rig.nodes[node].parent.is_none())
            .map(|&node| self.file_of[node])
            .collect()
    }
}

/// Writes `rig` as a new glTF file at `out` (`.glb`, or `.gltf` with a `.bin` beside it), with
/// every clip of `rig.clips` as an animation. `inputs` are the files the rig was read from,
/// never written over. Nothing is left at `out` when an error is returned.
pub fn write_rig(rig: &Rig, out: &Path, inputs: &[PathBuf], generator: &str) -> Result<Saved, SaveError> {
    let format = OutputFormat::of(out)?;
    let mut notes = Vec::new();
    let unscaled = super::unit_scale::rest_scale_into_binds(rig);
    let rig = match &unscaled {
        Some((unscaled, note)) => {
            notes.push(note.clone());
            unscaled
        }
        None => rig,
    };
    let order = FileOrder::of(rig)?;
    let mut chunk = Chunk::default();
    let mesh_of_node = meshes_of_nodes(rig)?;
    let materials = Materials::of(rig, &mut chunk);
    let (meshes, written_mesh) = meshes_json(rig, &mesh_of_node, &materials, &mut chunk, &mut notes)?;
    let skins = skins_json(rig, &order, &mut chunk)?;
    let mut nodes = nodes_json(rig, &order, &mesh_of_node, &written_mesh)?;
    let animations = animations_json(rig, &order, &mesh_of_node, &written_mesh, &mut chunk, &mut notes)?;
    if let Some(method) = rig.skinning.method.filter(|m| *m != crate::skin::SkinningMethod::Lbs) {
        notes.push(format!(
            "the file asks for {} skinning, which glTF cannot say: the meshes are written for linear blend skinning",
            crate::names::Named::name(method)
        ));
    }

    let roots = match &order.added_root {
        Some(name) => {
            notes.push(format!(
                "a skin's joints are in more than one tree: node '{name}' is added above the roots, as the FBX scene's root"
            ));
            nodes.insert(0, json!({ "name": name, "children": order.rig_roots(rig) }));
            vec![0]
        }
        None => order.rig_roots(rig),
    };
    let mut scene = json!({ "name": rig.name });
    if !roots.is_empty() {
        scene["nodes"] = json!(roots);
    }
    let mut document = json!({
        "asset": { "version": "2.0", "generator": generator },
        "scene": 0,
        "scenes": [scene],
    });
    set_list(&mut document, "nodes", nodes);
    set_list(&mut document, "meshes", meshes);
    set_list(&mut document, "skins", skins);
    let pointers = animations.iter().any(super::super::animations::encoded_pointers);
    set_list(&mut document, "animations", animations);
    materials.add_to(&mut document);
    if pointers {
        let used = super::super::document::array_mut(&mut document, "extensionsUsed")?;
        used.push(crate::rig::POINTER_EXTENSION.into());
    }
    notes.extend(super::super::placement::place_skinned_meshes_at_root(&mut document));

    let files = gltf_files(document, chunk, out, format)?;
    for (path, _) in &files {
        if inputs.iter().any(|input| same_file(input, path)) {
            return Err(SaveError::WouldOverwriteInput { path: path.clone() });
        }
    }
    write_files(&files)?;
    Ok(Saved {
        written: files.into_iter().map(|(path, _)| path).collect(),
        backup: None,
        notes,
    })
}

/// The mesh (by index in the rig) and skin a node holds.
type MeshOfNode = Option<(usize, Option<usize>)>;

/// Each node's mesh and skin. One mesh per node in glTF, as in both importers; a mesh node's
/// skin is the instance's.
fn meshes_of_nodes(rig: &Rig) -> Result<Vec<MeshOfNode>, SaveError> {
    let mut mesh_of_node: Vec<MeshOfNode> = vec![None; rig.nodes.len()];
    for instance in &rig.instances {
        let what = || format!("the instance of mesh {} on node {}", instance.mesh, instance.node);
        if instance.mesh >= rig.meshes.len() || instance.skin.is_some_and(|s| s >= rig.skins.len()) {
            return Err(rig_data(what(), "its mesh or skin does not exist"));
        }
        let slot = (mesh_of_node.get_mut(instance.node)).ok_or_else(|| rig_data(what(), "the node does not exist"))?;
        if slot.replace((instance.mesh, instance.skin)).is_some() {
            return Err(rig_data(
                what(),
                "the node already holds a mesh, and a glTF node holds one",
            ));
        }
    }
    Ok(mesh_of_node)
}

/// The meshes, and where each of the rig's meshes is written. glTF asks every mesh for a
/// primitive: a mesh the importer kept none of (no triangles) is left out, and the nodes that
/// held it hold none.
fn meshes_json(
    rig: &Rig,
    mesh_of_node: &[MeshOfNode],
    materials: &Materials,
    chunk: &mut Chunk,
    notes: &mut Vec<String>,
) -> Result<(Vec<Value>, Vec<Option<usize>>), SaveError> {
    let mut meshes = Vec::new();
    let mut written_mesh = vec![None; rig.meshes.len()];
    for (m, mesh) in rig.meshes.iter().enumerate() {
        if mesh.primitives.is_empty() {
            notes.push(format!("mesh '{}' has no triangles and was left out", mesh.name));
            continue;
        }
        meshes.push(mesh_json(rig, m, mesh_of_node, materials, chunk)?);
        written_mesh[m] = Some(meshes.len() - 1);
    }
    Ok((meshes, written_mesh))
}

/// The skins, with their joints in file order and their inverse bind matrices in `chunk`.
fn skins_json(rig: &Rig, order: &FileOrder, chunk: &mut Chunk) -> Result<Vec<Value>, SaveError> {
    (rig.skins.iter().enumerate())
        .map(|(s, skin)| {
            let what = || format!("skin {s} ('{}')", skin.name);
            if skin.joints.is_empty() {
                return Err(rig_data(what(), "it has no joints"));
            }
            if skin.inverse_binds.len() != skin.joints.len() {
                return Err(rig_data(
                    what(),
                    format!(
                        "{} joints, {} inverse bind matrices",
                        skin.joints.len(),
                        skin.inverse_binds.len()
                    ),
                ));
            }
            let joints = (skin.joints.iter())
                .map(|&j| order.file_of.get(j).copied())
                .collect::<Option<Vec<usize>>>()
                .ok_or_else(|| rig_data(what(), "a joint is not a node of the rig"))?;
            let matrices: Vec<[f32; 16]> = skin.inverse_binds.iter().map(|m| m.to_cols_array()).collect();
            if !matrices.iter().flatten().all(|v| v.is_finite()) {
                return Err(rig_data(what(), "an inverse bind matrix is not finite"));
            }
            // Inverse bind matrices are read by the CPU, not bound as vertex data: no target.
            let inverse = chunk.floats_in(&matrices, None);
            Ok(json!({ "name": skin.name, "joints": joints, "inverseBindMatrices": inverse }))
        })
        .collect::<Result<Vec<_>, _>>()
}

/// The nodes in file order, with their rest transforms, children, meshes and skins.
fn nodes_json(
    rig: &Rig,
    order: &FileOrder,
    mesh_of_node: &[MeshOfNode],
    written_mesh: &[Option<usize>],
) -> Result<Vec<Value>, SaveError> {
    if let Some((node, n)) = rig.nodes.iter().enumerate().find(|(_, n)| !trs_finite(&n.rest)) {
        return Err(rig_data(
            format!("node {node} ('{}')", n.name),
            "its rest transform is not finite",
        ));
    }
    let nodes: Vec<Value> = (order.rig_of.iter())
        .map(|&node| {
            let n = &rig.nodes[node];
            let mut written = json!({ "name": n.name });
            trs_json(&n.rest, &mut written);
            let children: Vec<usize> = order.children[node].iter().map(|&c| order.file_of[c]).collect();
            if !children.is_empty() {
                written["children"] = json!(children);
            }
            if let Some((mesh, skin)) = mesh_of_node[node]
                && let Some(mesh) = written_mesh[mesh]
            {
                written["mesh"] = json!(mesh);
                if let Some(skin) = skin {
                    written["skin"] = json!(skin);
                }
            }
            written
        })
        .collect();
    Ok(nodes)
}

/// The clips as glTF animations, their keys in `chunk`.
fn animations_json(
    rig: &Rig,
    order: &FileOrder,
    mesh_of_node: &[MeshOfNode],
    written_mesh: &[Option<usize>],
    chunk: &mut Chunk,
    notes: &mut Vec<String>,
) -> Result<Vec<Value>, SaveError> {
    let mut animations = Vec::new();
    for (clip, c) in rig.clips.iter().enumerate() {
        let targets_on = |file_node: usize| {
            let mesh = order.rig_node(file_node).and_then(|n| mesh_of_node[n]);
            let written = mesh.filter(|(mesh, _)| written_mesh[*mesh].is_some());
            Ok(written.map_or(0, |(mesh, _)| target_count(rig, mesh)))
        };
        let file_node = |node: usize| order.file_of.get(node).copied();
        let other_channels = rig.morphs.channels.iter().any(|m| m.clip == clip)
            || rig.facts.property_tracks.iter().any(|t| t.clip == clip);
        // A glTF animation needs a channel: a clip without any (an FBX take that animates
        // nothing, say) holds the first root at rest, which poses the rig as the clip does.
        let held = (c.channels.is_empty() && !other_channels)
            .then(|| held_rest(rig, clip))
            .flatten();
        let encoded = match &held {
            Some(held) => {
                notes.push(format!(
                    "clip '{}' animates nothing: written as one key of '{}' at rest",
                    c.name, rig.nodes[0].name
                ));
                encode_clip(held, 0, file_node, targets_on)?
            }
            None => encode_clip(rig, clip, file_node, targets_on)?,
        };
        animations.push(chunk.animation(encoded));
    }
    Ok(animations)
}

/// A rig of clip `clip` alone (no morph channels), keyed once at time 0 with node 0's rest
/// translation; `None` for a rig without nodes.
fn held_rest(rig: &Rig, clip: usize) -> Option<Rig> {
    let rest = rig.nodes.first()?.rest.translation;
    let held = crate::rig::Clip {
        name: rig.clips.get(clip)?.name.clone(),
        duration: 0.0,
        channels: vec![crate::rig::Channel {
            node: 0,
            property: crate::rig::Property::Translation,
            interpolation: crate::rig::Interpolation::Step,
            times: vec![0.0],
            values: vec![rest.extend(0.0)],
        }],
        source: None,
    };
    Some(Rig {
        clips: vec![held],
        ..Rig::default()
    })
}

fn trs_finite(trs: &Trs) -> bool {
    trs.translation.is_finite() && trs.rotation.is_finite() && trs.scale.is_finite()
}

/// A node's rest transform as glTF TRS, leaving out the parts that are glTF's defaults.
fn trs_json(trs: &Trs, node: &mut Value) {
    if trs.translation != Vec3::ZERO {
        node["translation"] = json!(trs.translation.to_array());
    }
    if trs.rotation != Quat::IDENTITY {
        node["rotation"] = json!(trs.rotation.to_array());
    }
    if trs.scale != Vec3::ONE {
        node["scale"] = json!(trs.scale.to_array());
    }
}

mod meshes;

use meshes::{mesh_json, target_count};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::Node;

    #[test]
    fn nodes_go_in_rig_order_and_a_parent_after_its_child_is_refused() {
        // Rig order (parents first, depth first): a, a/b, a/b/c, a/d, e.
        let node = |name: &str, parent| Node {
            name: name.into(),
            parent,
            rest: Trs::IDENTITY,
        };
        let rig = Rig {
            nodes: vec![
                node("a", None),
                node("b", Some(0)),
                node("c", Some(1)),
                node("d", Some(0)),
                node("e", None),
            ],
            ..Rig::default()
        };
        let order = FileOrder::of(&rig).unwrap();
        let names: Vec<&str> = order.rig_of.iter().map(|&n| rig.nodes[n].name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e"]);
        assert_eq!(order.file_of, [0, 1, 2, 3, 4]);
        let mut bad = rig.clone();
        bad.nodes[1].parent = Some(3);
        assert!(matches!(FileOrder::of(&bad), Err(SaveError::RigData { .. })));
    }
}
