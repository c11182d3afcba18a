//! Where a written file puts its skinned meshes: on nodes at the root of the scene with no
//! transform of their own, where every importer agrees.
//!
//! glTF says a skinned mesh node's own transform is ignored (the joints place the vertices),
//! and the validator warns of such nodes placed elsewhere (`NODE_SKINNED_MESH_NON_ROOT`,
//! `NODE_SKINNED_MESH_LOCAL_TRANSFORMS`) because importers read them differently: Blender's
//! importer applies the node's place, and the Sample Renderer lights with it. A node holding a
//! skinned mesh somewhere else keeps its place (it may be a joint, or have children); its mesh,
//! skin and morph weights move to a new node at the root, and the animations' morph weight
//! channels follow them. Drawn as glTF says, nothing moves.

use serde_json::{Value, json};

/// The transform a node gives its contents is the identity (no `matrix`, `translation`,
/// `rotation` or `scale`, or each its identity value).
fn has_no_transform(node: &Value) -> bool {
    let is = |key: &str, identity: &[f64]| {
        node.get(key).is_none_or(|v| {
            v.as_array().is_some_and(|a| {
                a.len() == identity.len() && a.iter().zip(identity).all(|(x, y)| x.as_f64() == Some(*y))
            })
        })
    };
    is(
        "matrix",
        &[
            1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        ],
    ) && is("translation", &[0.0; 3])
        && is("rotation", &[0.0, 0.0, 0.0, 1.0])
        && is("scale", &[1.0; 3])
}

/// Moves every skinned mesh placed elsewhere than on a transform-free root node onto a new such
/// node, appended after the file's nodes (so every node keeps its index). Returns a note per
/// mesh moved.
pub(super) fn place_skinned_meshes_at_root(document: &mut Value) -> Vec<String> {
    let Some(count) = document.get("nodes").and_then(Value::as_array).map(Vec::len) else {
        return Vec::new();
    };
    let mut parent = vec![None; count];
    for (p, node) in document["nodes"].as_array().into_iter().flatten().enumerate() {
        for child in node.get("children").and_then(Value::as_array).into_iter().flatten() {
            if let Some(c) = child.as_u64().map(|c| c as usize).filter(|&c| c < count) {
                parent[c] = Some(p);
            }
        }
    }
    let root_of = |mut n: usize| {
        // A cycle is the reader's to refuse; stop after visiting every node once.
        for _ in 0..count {
            match parent[n] {
                Some(p) => n = p,
                None => break,
            }
        }
        n
    };
    let misplaced: Vec<usize> = (0..count)
        .filter(|&n| {
            let node = &document["nodes"][n];
            node.get("skin").is_some() && node.get("mesh").is_some() && (parent[n].is_some() || !has_no_transform(node))
        })
        .collect();
    let mut notes = Vec::new();
    for node in misplaced {
        let new = document["nodes"].as_array().map_or(0, Vec::len);
        let old = document["nodes"][node].as_object_mut().expect("a node is an object");
        let name = old.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
        let mut moved = serde_json::Map::new();
        if !name.is_empty() {
            moved.insert("name".into(), json!(format!("{name} mesh")));
        }
        for key in ["mesh", "skin", "weights"] {
            if let Some(value) = old.remove(key) {
                moved.insert(key.into(), value);
            }
        }
        if let Some(nodes) = document["nodes"].as_array_mut() {
            nodes.push(Value::Object(moved));
        }
        let root = root_of(node);
        let mut in_a_scene = false;
        for scene in document
            .get_mut("scenes")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let Some(roots) = scene.get_mut("nodes").and_then(Value::as_array_mut) else {
                continue;
            };
            if roots.iter().any(|r| r.as_u64() == Some(root as u64)) {
                roots.push(json!(new));
                in_a_scene = true;
            }
        }
        if !in_a_scene {
            notes.push(format!(
                "node '{name}' holds a skinned mesh in no scene: its mesh moved to node {new}, in no scene either"
            ));
        }
        follow_the_mesh(document, node, new);
        notes.push(format!(
            "the skinned mesh of node '{name}' is written on a node of its own at the scene's root, without a \
             transform (glTF ignores a skinned mesh node's place; some importers apply it)"
        ));
    }
    notes
}

/// Points what named node `from` for its mesh at node `to`: morph weight channels (as a path or
/// as a KHR_animation_pointer), and VRM 1.0's expression binds and first-person annotations.
fn follow_the_mesh(document: &mut Value, from: usize, to: usize) {
    let from_pointer = format!("/nodes/{from}/weights");
    let retarget = |value: &mut Value| {
        if value.as_u64() == Some(from as u64) {
            *value = json!(to);
        }
    };
    for channel in
        array_items(document.get_mut("animations")).flat_map(|animation| array_items(animation.get_mut("channels")))
    {
        let Some(target) = channel.get_mut("target") else {
            continue;
        };
        if target.get("path").and_then(Value::as_str) == Some("weights")
            && let Some(node) = target.get_mut("node")
        {
            retarget(node);
        }
        let pointer = (target.pointer_mut("/extensions/KHR_animation_pointer/pointer"))
            .filter(|p| p.as_str() == Some(from_pointer.as_str()));
        if let Some(pointer) = pointer {
            *pointer = json!(format!("/nodes/{to}/weights"));
        }
    }
    let Some(vrm) = document.pointer_mut("/extensions/VRMC_vrm") else {
        return;
    };
    for group in ["preset", "custom"] {
        let Some(expressions) = vrm
            .pointer_mut(&format!("/expressions/{group}"))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        for bind in expressions
            .values_mut()
            .flat_map(|expression| array_items(expression.get_mut("morphTargetBinds")))
        {
            if let Some(node) = bind.get_mut("node") {
                retarget(node);
            }
        }
    }
    for annotation in array_items(vrm.pointer_mut("/firstPerson/meshAnnotations")) {
        if let Some(node) = annotation.get_mut("node") {
            retarget(node);
        }
    }
}

fn array_items(value: Option<&mut Value>) -> impl Iterator<Item = &mut Value> {
    value.and_then(Value::as_array_mut).into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skinned_mesh_under_a_scaled_armature_moves_to_the_root_and_its_weights_follow() {
        let mut document = json!({
            "scenes": [{"nodes": [0]}],
            "nodes": [
                {"name": "Armature", "scale": [0.01, 0.01, 0.01], "children": [1, 2]},
                {"name": "Body", "mesh": 0, "skin": 0, "weights": [0.5], "rotation": [0.6, 0, 0, 0.8]},
                {"name": "Hips"},
                {"name": "Prop", "mesh": 1},
                {"name": "Clean", "mesh": 2, "skin": 0}
            ],
            "animations": [{"channels": [
                {"target": {"node": 1, "path": "weights"}, "sampler": 0},
                {"target": {"node": 1, "path": "rotation"}, "sampler": 1}
            ]}]
        });
        document["scenes"][0]["nodes"] = json!([0, 3, 4]);
        let notes = place_skinned_meshes_at_root(&mut document);
        assert_eq!(notes.len(), 1, "{notes:?}");
        let nodes = document["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), 6);
        assert_eq!(
            nodes[5],
            json!({"name": "Body mesh", "mesh": 0, "skin": 0, "weights": [0.5]})
        );
        assert_eq!(nodes[1], json!({"name": "Body", "rotation": [0.6, 0, 0, 0.8]}));
        assert_eq!(document["scenes"][0]["nodes"], json!([0, 3, 4, 5]));
        let channels = &document["animations"][0]["channels"];
        assert_eq!(channels[0]["target"]["node"], 5, "weights follow the mesh");
        assert_eq!(channels[1]["target"]["node"], 1, "the node's own motion stays");
        // A mesh without a skin, and a skinned mesh already at the root, stay.
        assert_eq!(nodes[3]["mesh"], 1);
        assert_eq!(nodes[4]["mesh"], 2);
    }

    #[test]
    fn pointers_and_vrm_binds_naming_the_mesh_node_follow_the_mesh() {
        let mut document = json!({
            "scenes": [{"nodes": [0]}],
            "nodes": [
                {"name": "Armature", "children": [1]},
                {"name": "Face", "mesh": 0, "skin": 0}
            ],
            "animations": [{"channels": [
                {"target": {"path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer": "/nodes/1/weights"}}}, "sampler": 0},
                {"target": {"path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer": "/nodes/1/rotation"}}}, "sampler": 1}
            ]}],
            "extensions": {"VRMC_vrm": {
                "expressions": {"preset": {"happy": {"morphTargetBinds": [{"node": 1, "index": 0, "weight": 1.0}]}},
                                "custom": {"wink": {"morphTargetBinds": [{"node": 1, "index": 1, "weight": 1.0}]}}},
                "firstPerson": {"meshAnnotations": [{"node": 1, "type": "thirdPersonOnly"}]}
            }}
        });
        place_skinned_meshes_at_root(&mut document);
        let pointer = "/extensions/KHR_animation_pointer/pointer";
        let channels = &document["animations"][0]["channels"];
        assert_eq!(channels[0]["target"].pointer(pointer), Some(&json!("/nodes/2/weights")));
        assert_eq!(
            channels[1]["target"].pointer(pointer),
            Some(&json!("/nodes/1/rotation"))
        );
        let vrm = &document["extensions"]["VRMC_vrm"];
        assert_eq!(vrm["expressions"]["preset"]["happy"]["morphTargetBinds"][0]["node"], 2);
        assert_eq!(vrm["expressions"]["custom"]["wink"]["morphTargetBinds"][0]["node"], 2);
        assert_eq!(vrm["firstPerson"]["meshAnnotations"][0]["node"], 2);
    }

    #[test]
    fn an_identity_transform_at_the_root_is_left_alone() {
        let mut document = json!({
            "scenes": [{"nodes": [0]}],
            "nodes": [{"mesh": 0, "skin": 0, "scale": [1, 1, 1], "translation": [0, 0, 0]}]
        });
        let before = document.clone();
        assert!(place_skinned_meshes_at_root(&mut document).is_empty());
        assert_eq!(document, before);
    }
}
