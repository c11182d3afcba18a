//! VRM spring bones read from the files of `../shared/corpus/motion/vrm`: chains, joints,
//! settings and colliders as the files' own JSON gives them (read here apart from the
//! importer), and broken setups left out with a warning instead of failing the load.

use crate::common;

use common::Doc;
use glam::Vec3;
use rigscope::rig::{ColliderShape, SpringSource, SpringTail, load_slice};
use serde_json::{Value, json};
use std::path::PathBuf;

fn vrm_folder() -> Option<PathBuf> {
    common::shared_folder("corpus/motion/vrm")
}

fn vec3(value: &Value) -> Vec3 {
    let n = common::numbers(value);
    Vec3::new(n[0] as f32, n[1] as f32, n[2] as f32)
}

#[test]
fn vrm0_bone_groups_become_one_chain_per_root_with_mirrored_collider_offsets() {
    let Some(dir) = vrm_folder() else { return };
    let path = dir.join("Godette_vrm_v4.vrm");
    let rig = common::load_rig(&dir, "Godette_vrm_v4.vrm");
    let doc = Doc::open(&path);
    let secondary = &doc.json["extensions"]["VRM"]["secondaryAnimation"];
    let springs = rig.facts.springs.as_ref().expect("Godette has spring bones");
    assert_eq!(springs.source, SpringSource::Vrm0);
    // 4 + 1 + 3 root bones, each with one child that ends the chain.
    let roots: Vec<usize> = common::array(secondary, "boneGroups")
        .iter()
        .flat_map(|g| common::array(g, "bones").iter().map(|b| common::index(b, "bone")))
        .collect();
    assert_eq!(roots.len(), 8);
    assert_eq!(springs.chains.len(), 8);
    assert_eq!(springs.joint_count(), 16);
    for (chain, &root) in springs.chains.iter().zip(&roots) {
        let child = common::index(&doc.json["nodes"][root]["children"][0], "child");
        assert_eq!(chain.joints[0].node, common::rig_node_of(&rig, &doc.json, root));
        let child_node = common::rig_node_of(&rig, &doc.json, child);
        assert_eq!(chain.joints[0].tail, SpringTail::Node(child_node));
        assert_eq!(chain.joints[1].node, child_node);
        assert_eq!(
            chain.joints[1].tail,
            SpringTail::Extended,
            "the leaf gets the 7 cm tail"
        );
        assert_eq!(chain.center, None, "center -1 is the world");
    }
    let first = &springs.chains[0].joints[0].settings;
    assert_eq!((first.stiffness, first.drag, first.gravity_power), (2.5, 0.4, 0.0));
    assert!((first.hit_radius - 0.02).abs() < 1e-7);
    assert_eq!(springs.chains[7].joints[0].settings.stiffness, 4.0);
    // Two groups of two spheres; offsets mirrored in X into the glTF axes.
    assert_eq!(springs.colliders.len(), 4);
    let groups = common::array(secondary, "colliderGroups");
    let mut k = 0;
    for group in groups {
        let node = common::rig_node_of(&rig, &doc.json, common::index(&group["node"], "node"));
        for collider in common::array(group, "colliders") {
            let offset = &collider["offset"];
            let expected = Vec3::new(
                -offset["x"].as_f64().unwrap() as f32,
                offset["y"].as_f64().unwrap() as f32,
                offset["z"].as_f64().unwrap() as f32,
            );
            assert_eq!(springs.colliders[k].node, node);
            match springs.colliders[k].shape {
                ColliderShape::Sphere { offset, radius } => {
                    assert_eq!(offset, expected);
                    assert_eq!(radius, collider["radius"].as_f64().unwrap() as f32);
                }
                other => panic!("VRM 0.x colliders are spheres, got {other:?}"),
            }
            k += 1;
        }
    }
    // The first bone group collides with collider group 1 (the head's two spheres).
    assert_eq!(springs.chains[0].colliders, vec![2, 3]);
    assert_eq!(springs.chains[4].colliders, vec![0, 1]);
    assert!(springs.chains[5].colliders.is_empty());
}

#[test]
fn vrm1_chain_with_a_capsule_reads_three_swinging_joints_and_the_capsule() {
    let Some(dir) = vrm_folder() else { return };
    let name = "springbone_collider_capsule_x0p02_r0p05.vrm";
    let rig = common::load_rig(&dir, name);
    let doc = Doc::open(&dir.join(name));
    let extension = &doc.json["extensions"]["VRMC_springBone"];
    let springs = rig.facts.springs.as_ref().expect("the file has spring bones");
    assert_eq!(springs.source, SpringSource::Vrm1);
    assert_eq!(springs.chains.len(), 1);
    let chain = &springs.chains[0];
    let listed = common::array(&extension["springs"][0], "joints");
    assert_eq!(listed.len(), 4);
    assert_eq!(chain.joints.len(), 3, "the last joint is only a tail");
    for (j, joint) in chain.joints.iter().enumerate() {
        let node = common::rig_node_of(&rig, &doc.json, common::index(&listed[j]["node"], "node"));
        let tail = common::rig_node_of(&rig, &doc.json, common::index(&listed[j + 1]["node"], "node"));
        assert_eq!((joint.node, joint.tail), (node, SpringTail::Node(tail)));
        assert_eq!(joint.settings.stiffness, 0.5);
        assert_eq!(joint.settings.gravity_power, 0.5);
        assert_eq!(joint.settings.gravity_dir, Vec3::NEG_Y);
        assert_eq!(joint.settings.drag, 0.5);
    }
    assert_eq!(springs.colliders.len(), 1);
    let capsule = &extension["colliders"][0]["shape"]["capsule"];
    assert_eq!(
        springs.colliders[0].node,
        common::rig_node_of(
            &rig,
            &doc.json,
            common::index(&extension["colliders"][0]["node"], "node")
        )
    );
    assert_eq!(
        springs.colliders[0].shape,
        ColliderShape::Capsule {
            offset: vec3(&capsule["offset"]),
            tail: vec3(&capsule["tail"]),
            radius: capsule["radius"].as_f64().unwrap() as f32,
        }
    );
    assert_eq!(chain.colliders, vec![0]);
}

#[test]
fn three_vrm_collider_samples_read_their_core_sphere() {
    let Some(dir) = vrm_folder() else { return };
    for (file, offset_x, radius) in [
        ("sphere-collider.gltf", 0.0, 0.5),
        ("plane-collider.gltf", -10000.0, 10000.0),
        ("inside-collider.gltf", 10000.0, 0.0),
    ] {
        let rig = common::load_rig(&dir.join("three-vrm-springbone"), file);
        let springs = rig.facts.springs.as_ref().expect("the sample has spring bones");
        assert_eq!(springs.chains.len(), 1, "{file}");
        assert_eq!(
            springs.chains[0].joints.len(),
            4,
            "{file}: 5 listed, the 5th only a tail"
        );
        assert_eq!(springs.chains[0].joints[0].settings.hit_radius, 0.25, "{file}");
        assert_eq!(
            springs.colliders[0].shape,
            ColliderShape::Sphere {
                offset: Vec3::new(offset_x, 0.0, 0.0),
                radius
            },
            "{file}"
        );
    }
}

#[test]
fn a_vrm_without_springs_has_none() {
    let Some(rigs) = common::shared_folder("corpus/rigs") else {
        return;
    };
    let rig = common::load_rig(&rigs, "sphere.vrm");
    assert!(rig.facts.springs.is_none());
}

/// A glTF of `nodes` in a line (node i the parent of i + 1) with `extension` as its
/// `VRMC_springBone`.
fn line_with_springs(nodes: usize, extension: Value) -> Vec<u8> {
    let nodes: Vec<Value> = (0..nodes)
        .map(|i| {
            let mut node = json!({ "name": format!("n{i}"), "translation": [0.0, -0.1, 0.0] });
            if i + 1 < nodes {
                node["children"] = json!([i + 1]);
            }
            node
        })
        .collect();
    serde_json::to_vec(&json!({
        "asset": { "version": "2.0" },
        "extensionsUsed": ["VRMC_springBone"],
        "extensions": { "VRMC_springBone": extension },
        "scenes": [{ "nodes": [0] }],
        "nodes": nodes,
    }))
    .unwrap()
}

#[test]
fn broken_springs_and_colliders_are_left_out_with_a_warning() {
    let extension = json!({
        "specVersion": "1.0",
        "colliders": [
            { "node": 99, "shape": { "sphere": { "radius": 0.1 } } },
            { "node": 0, "shape": { "sphere": { "radius": -1.0 } } },
            { "node": 0, "shape": { "capsule": { "radius": 0.1, "tail": [0, "x", 0] } } },
            { "node": 0, "shape": { "sphere": { "offset": [0, 1, 0], "radius": 0.2 } } }
        ],
        "colliderGroups": [{ "colliders": [0, 1, 2, 3, 7] }],
        "springs": [
            { "name": "good", "joints": [{ "node": 0 }, { "node": 1 }, { "node": 2 }], "colliderGroups": [0, 5] },
            { "name": "upside down", "joints": [{ "node": 3 }, { "node": 2 }] },
            { "name": "nowhere", "joints": [{ "node": 3 }, { "node": 40 }] },
            { "name": "drag", "joints": [{ "node": 3, "dragForce": 2.0 }, { "node": 4 }] },
            { "name": "shared", "joints": [{ "node": 1 }, { "node": 3 }] }
        ]
    });
    let rig = load_slice(&line_with_springs(5, extension), None, "broken springs").expect("the file still opens");
    let springs = rig.facts.springs.as_ref().expect("the good spring is kept");
    assert_eq!(springs.colliders.len(), 1, "only the last collider is sound");
    let names: Vec<&str> = springs.chains.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    assert_eq!(springs.chains[0].joints.len(), 2);
    assert_eq!(springs.chains[0].colliders, vec![0]);
    for expected in [
        "collider 0",
        "collider 1",
        "collider 2",
        "names collider 7",
        "names collider group 5",
        "upside down: joint 1 is not below joint 0",
        "nowhere: joint 1 names no node",
        "drag: joint 0 has a setting",
        "shared",
    ] {
        assert!(
            rig.warnings.iter().any(|w| w.contains(expected)),
            "no warning mentions '{expected}': {:#?}",
            rig.warnings
        );
    }
}
