//! The importer against the files themselves: every shared rig is loaded with
//! `rigscope::rig::load_file` and compared with values read independently from its glTF JSON.

use crate::common;

use crate::common::{Doc, array, index, json_node_name, rig_node_of, shared_rigs};
use rigscope::rig::demo::{DEMO_GLB, DEMO_JOINTS, demo_glb};
use rigscope::rig::{Primitive, Property, Rig, load_file};
use std::path::PathBuf;

/// Every `.gltf` / `.glb` file of the shared rigs folder and of its `real/` folder (rigs made by
/// others), sorted by name.
fn rig_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = [dir.to_path_buf(), dir.join("real")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("shared rigs folder is readable"))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("gltf" | "glb")))
        .collect();
    files.sort();
    files
}

/// Compares everything the importer produced with the document's JSON.
fn check_against_json(file: &str, rig: &Rig, doc: &Doc) {
    let json = &doc.json;

    // Nodes: count, names, parents before children, and the same hierarchy as the JSON.
    let json_nodes = doc.array("nodes");
    assert_eq!(rig.nodes.len(), json_nodes.len(), "{file}: node count");
    for (i, node) in rig.nodes.iter().enumerate() {
        if let Some(p) = node.parent {
            assert!(
                p < i,
                "{file}: node {i} '{}' has parent {p}, which is not before it",
                node.name
            );
        }
    }
    for (i, node) in json_nodes.iter().enumerate() {
        if let Some(name) = node["name"].as_str() {
            assert!(
                rig.nodes.iter().any(|n| n.name == name),
                "{file}: node name '{name}' is missing from the rig"
            );
        }
        let own = rig_node_of(rig, json, i);
        for child in array(node, "children") {
            let child = rig_node_of(rig, json, index(child, "child"));
            assert_eq!(
                rig.nodes[child].parent,
                Some(own),
                "{file}: parent of '{}'",
                rig.nodes[child].name
            );
        }
    }
    let child_count: usize = json_nodes.iter().map(|n| array(n, "children").len()).sum();
    let root_count = rig.nodes.iter().filter(|n| n.parent.is_none()).count();
    assert_eq!(root_count + child_count, json_nodes.len(), "{file}: root nodes");

    // Skins: count, joint count and which nodes the joints are.
    let json_skins = doc.array("skins");
    assert_eq!(rig.skins.len(), json_skins.len(), "{file}: skin count");
    for (s, (skin, json_skin)) in rig.skins.iter().zip(json_skins).enumerate() {
        let joints = array(json_skin, "joints");
        assert_eq!(skin.joints.len(), joints.len(), "{file}: skin {s} joint count");
        assert_eq!(skin.inverse_binds.len(), joints.len(), "{file}: skin {s} inverse binds");
        for (k, joint) in joints.iter().enumerate() {
            let expected = rig_node_of(rig, json, index(joint, "joint"));
            assert_eq!(skin.joints[k], expected, "{file}: skin {s} joint {k}");
        }
    }

    // Clips: names ("clip {index}" when unnamed) and durations (latest sampler input max).
    let animations = doc.array("animations");
    assert_eq!(rig.clips.len(), animations.len(), "{file}: clip count");
    for (a, (clip, animation)) in rig.clips.iter().zip(animations).enumerate() {
        let name = animation["name"]
            .as_str()
            .map_or_else(|| format!("clip {a}"), str::to_owned);
        assert_eq!(clip.name, name, "{file}: name of clip {a}");
        let duration = array(animation, "samplers")
            .iter()
            .map(|sampler| {
                let input = &json["accessors"][index(&sampler["input"], "sampler input")];
                input["max"][0].as_f64().expect("input accessors have max")
            })
            .fold(0.0f64, f64::max);
        assert!(
            (f64::from(clip.duration) - duration).abs() <= 1e-6,
            "{file}: clip '{name}' lasts {} s, the JSON says {duration} s",
            clip.duration
        );
    }

    // Channels: each node-moving channel's keys as stored (rotation keys may come back normalized).
    for (a, (clip, animation)) in rig.clips.iter().zip(animations).enumerate() {
        let mut expected_channels = 0;
        for (c, channel) in array(animation, "channels").iter().enumerate() {
            let at = format!("{file}: clip {a} channel {c}");
            let property = match channel["target"]["path"].as_str() {
                Some("translation") => Property::Translation,
                Some("rotation") => Property::Rotation,
                Some("scale") => Property::Scale,
                _ => continue,
            };
            expected_channels += 1;
            let node = rig_node_of(rig, json, index(&channel["target"]["node"], "target node"));
            let got = clip
                .channels
                .iter()
                .find(|ch| ch.node == node && ch.property == property)
                .unwrap_or_else(|| panic!("{at}: no {property:?} channel for '{}'", rig.nodes[node].name));
            let sampler = &animation["samplers"][index(&channel["sampler"], "sampler")];
            let times = doc.read_accessor(index(&sampler["input"], "input"));
            let got_times: Vec<f64> = got.times.iter().map(|&t| f64::from(t)).collect();
            let want_times: Vec<f64> = times.iter().map(|t| t[0]).collect();
            assert_eq!(got_times, want_times, "{at}: key times");
            let values = doc.read_accessor(index(&sampler["output"], "output"));
            assert_eq!(got.values.len(), values.len(), "{at}: value count");
            let cubic = sampler["interpolation"] == "CUBICSPLINE";
            for (k, (g, w)) in got.values.iter().zip(&values).enumerate() {
                let g = g.to_array().map(f64::from);
                let mut w = w.clone();
                if property == Property::Rotation && !cubic {
                    let length = w.iter().map(|x| x * x).sum::<f64>().sqrt();
                    w.iter_mut().for_each(|x| *x /= length);
                }
                let off = w.iter().zip(g).map(|(w, g)| (w - g).abs()).fold(0.0, f64::max);
                assert!(off <= 1e-6, "{at}: value {k} is {g:?}, the file says {w:?}");
            }
        }
        assert_eq!(clip.channels.len(), expected_channels, "{file}: clip {a} channel count");
    }

    // Meshes: the triangle-mode primitives in file order, with their vertex and index counts.
    let json_meshes = doc.array("meshes");
    assert_eq!(rig.meshes.len(), json_meshes.len(), "{file}: mesh count");
    for (m, (mesh, json_mesh)) in rig.meshes.iter().zip(json_meshes).enumerate() {
        let triangles: Vec<&serde_json::Value> = array(json_mesh, "primitives")
            .iter()
            .filter(|p| p["mode"].as_u64().unwrap_or(4) == 4)
            .collect();
        assert_eq!(
            mesh.primitives.len(),
            triangles.len(),
            "{file}: mesh {m} primitive count"
        );
        for (k, (primitive, json_primitive)) in mesh.primitives.iter().zip(triangles).enumerate() {
            let at = format!("{file}: mesh {m} primitive {k}");
            let position = index(&json_primitive["attributes"]["POSITION"], "POSITION");
            let vertices = index(&json["accessors"][position]["count"], "count");
            assert_eq!(primitive.vertex_count(), vertices, "{at}: vertex count");
            assert_eq!(primitive.normals.len(), vertices, "{at}: normal count");
            assert_eq!(primitive.uvs.len(), vertices, "{at}: uv count");
            let indices = match json_primitive.get("indices") {
                Some(i) => index(&json["accessors"][index(i, "indices")]["count"], "count"),
                None => vertices,
            };
            assert_eq!(primitive.indices.len(), indices, "{at}: index count");
            check_attribute_values(&at, doc, primitive, json_primitive);
            let skinned = json_primitive["attributes"].get("JOINTS_0").is_some();
            assert_eq!(primitive.influences.is_some(), skinned, "{at}: influences present");
        }
    }

    // Mesh instances: one per node with a mesh, with that node's mesh and skin.
    let with_mesh: Vec<usize> = (0..json_nodes.len())
        .filter(|&i| json_nodes[i].get("mesh").is_some())
        .collect();
    assert_eq!(rig.instances.len(), with_mesh.len(), "{file}: mesh instance count");
    for i in with_mesh {
        let node = rig_node_of(rig, json, i);
        let instance = rig
            .instances
            .iter()
            .find(|inst| inst.node == node)
            .unwrap_or_else(|| panic!("{file}: no instance for node '{}'", json_node_name(json, i)));
        assert_eq!(
            instance.mesh,
            index(&json_nodes[i]["mesh"], "mesh"),
            "{file}: instance mesh"
        );
        assert_eq!(
            instance.skin,
            json_nodes[i].get("skin").map(|s| index(s, "skin")),
            "{file}: instance skin"
        );
    }
}

/// An accessor's elements, each as its components in f64.
type Elements = Vec<Vec<f64>>;

/// Positions, indices and skinning influences as stored in the file.
fn check_attribute_values(at: &str, doc: &Doc, primitive: &Primitive, json_primitive: &serde_json::Value) {
    let attributes = &json_primitive["attributes"];
    let positions = doc.read_floats(index(&attributes["POSITION"], "POSITION"));
    for (v, (got, want)) in primitive.positions.iter().zip(&positions).enumerate() {
        assert_eq!(
            got.to_array().map(f64::from).as_slice(),
            want.as_slice(),
            "{at}: position {v}"
        );
    }
    if let Some(indices) = json_primitive.get("indices") {
        let indices = doc.read_accessor(index(indices, "indices"));
        for (k, (got, want)) in primitive.indices.iter().zip(&indices).enumerate() {
            assert_eq!(f64::from(*got), want[0], "{at}: index {k}");
        }
    }
    let sets: Vec<(Elements, Elements)> = (0..)
        .map_while(|set| {
            let joints = attributes.get(format!("JOINTS_{set}"))?;
            let weights = attributes.get(format!("WEIGHTS_{set}"))?;
            Some((
                doc.read_accessor(index(joints, "JOINTS")),
                doc.read_accessor(index(weights, "WEIGHTS")),
            ))
        })
        .collect();
    let Some(influences) = &primitive.influences else {
        assert!(sets.is_empty(), "{at}: JOINTS/WEIGHTS were not imported");
        return;
    };
    assert_eq!(influences.sets, sets.len(), "{at}: influence sets");
    for v in 0..primitive.vertex_count() {
        let got: Vec<(u16, f32)> = influences.of_vertex(v).collect();
        let want: Vec<(f64, f64)> = sets
            .iter()
            .flat_map(|(j, w)| j[v].iter().copied().zip(w[v].iter().copied()))
            .collect();
        assert_eq!(got.len(), want.len(), "{at}: influences of vertex {v}");
        for ((joint, weight), (want_joint, want_weight)) in got.into_iter().zip(want) {
            assert!(
                f64::from(joint) == want_joint && (f64::from(weight) - want_weight).abs() <= 1e-6,
                "{at}: vertex {v} has influence ({joint}, {weight}), the file says ({want_joint}, {want_weight})"
            );
        }
    }
}

#[test]
fn every_shared_rig_matches_its_json() {
    let Some(dir) = shared_rigs() else { return };
    let files = rig_files(&dir);
    assert!(
        files.len() >= 9,
        "expected the five shared rigs and four real ones, found {files:?}"
    );
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let rig = load_file(&path).unwrap_or_else(|e| panic!("{file} failed to load: {e}"));
        let doc = Doc::open(&path);
        check_against_json(&file, &rig, &doc);
        if file != "InterpolationTest.gltf" {
            assert!(
                rig.load_warnings().is_empty(),
                "{file}: unexpected warnings {:?}",
                rig.load_warnings()
            );
        }
        println!(
            "{file}: {} nodes, {} skins, {} clips, {} meshes, {} warnings",
            rig.nodes.len(),
            rig.skins.len(),
            rig.clips.len(),
            rig.meshes.len(),
            rig.load_warnings().len()
        );
    }
}

#[test]
fn fox_has_one_skin_of_24_joints_and_three_named_clips() {
    let Some(dir) = shared_rigs() else { return };
    let rig = common::load_rig(&dir, "Fox.glb");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 24);
    let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Survey", "Walk", "Run"]);
}

#[test]
fn fox_generated_normals_are_unit_and_follow_the_faces() {
    let Some(dir) = shared_rigs() else { return };
    let doc = Doc::open(&dir.join("Fox.glb"));
    for mesh in doc.array("meshes") {
        for primitive in array(mesh, "primitives") {
            assert!(
                primitive["attributes"].get("NORMAL").is_none(),
                "Fox.glb is expected to have no NORMAL attribute"
            );
        }
    }
    let rig = common::load_rig(&dir, "Fox.glb");
    let mut checked = 0;
    for primitive in rig.meshes.iter().flat_map(|m| &m.primitives) {
        // Area-weighted face normals summed per vertex, in f64.
        let mut sums = vec![[0.0f64; 3]; primitive.vertex_count()];
        for tri in primitive.indices.chunks_exact(3) {
            let p = |k: usize| primitive.positions[tri[k] as usize].as_dvec3();
            let n = (p(1) - p(0)).cross(p(2) - p(0));
            for &v in tri {
                let s = &mut sums[v as usize];
                s[0] += n.x;
                s[1] += n.y;
                s[2] += n.z;
            }
        }
        for (v, normal) in primitive.normals.iter().enumerate() {
            assert!(
                (normal.length() - 1.0).abs() < 1e-5,
                "normal {v} has length {}",
                normal.length()
            );
            let sum = glam::DVec3::from(sums[v]);
            if sum.length() > 1e-9 {
                let cos = normal.as_dvec3().dot(sum.normalize());
                assert!(cos > 0.999, "normal {v} is {normal}, faces say {}", sum.normalize());
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "Fox has vertices");
}

#[test]
fn interpolation_test_loads_with_a_texture_warning_and_nine_clips() {
    let Some(dir) = shared_rigs() else { return };
    let rig = common::load_rig(&dir, "InterpolationTest.gltf");
    assert!(
        rig.warnings
            .iter()
            .any(|w| w.contains("texture") && w.contains("l.jpg")),
        "expected a warning about the missing texture l.jpg, got {:?}",
        rig.warnings
    );
    assert_eq!(rig.clips.len(), 9);
    assert_eq!(rig.textures.len(), 1, "the missing texture keeps its slot");
    assert!(rig.vertex_count() > 0, "geometry is intact");
}

#[test]
fn box_animated_has_no_skins_and_two_mesh_instances() {
    let Some(dir) = shared_rigs() else { return };
    let rig = common::load_rig(&dir, "BoxAnimated.gltf");
    assert!(rig.skins.is_empty());
    assert_eq!(rig.instances.len(), 2);
    assert!(rig.instances.iter().all(|i| i.skin.is_none()));
    assert!(!rig.clips.is_empty(), "BoxAnimated animates its nodes");
}

#[test]
fn demo_rig_loads_with_one_skin_two_clips_and_normalized_weights() {
    let rig = common::load_demo();
    check_against_json("demo.glb", &rig, &Doc::from_bytes(DEMO_GLB, None));
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), DEMO_JOINTS);
    let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Wave", "Twist"]);
    let mut skinned_vertices = 0;
    for primitive in rig.meshes.iter().flat_map(|m| &m.primitives) {
        let influences = primitive.influences.as_ref().expect("the demo mesh is skinned");
        for v in 0..primitive.vertex_count() {
            let total: f32 = influences.of_vertex(v).map(|(_, w)| w).sum();
            assert!((total - 1.0).abs() <= 1e-5, "vertex {v} weights sum to {total}");
            skinned_vertices += 1;
        }
    }
    assert!(skinned_vertices > 0);
}

#[test]
fn committed_demo_asset_is_the_generator_output() {
    let generated = demo_glb(DEMO_JOINTS);
    let first_difference = generated
        .iter()
        .zip(DEMO_GLB)
        .position(|(a, b)| a != b)
        .unwrap_or(generated.len().min(DEMO_GLB.len()));
    assert!(
        generated == DEMO_GLB,
        "assets/demo.glb ({} bytes) differs from demo_glb({DEMO_JOINTS}) ({} bytes) from byte \
         {first_difference} on; regenerate it with `cargo run --release -- make-demo assets/demo.glb`",
        DEMO_GLB.len(),
        generated.len()
    );
}
