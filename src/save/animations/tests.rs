use super::*;
use crate::rig::{Channel, Clip, Node, Trs};
use crate::save::OutputFormat;

/// Two nodes, the child first in the file: the importer puts the root first, so rig node 0
/// is glTF node 1. One original animation and one mesh with two morph targets on the child.
fn document_and_rig() -> (Value, Rig) {
    let json = json!({
        "asset": { "version": "2.0" },
        "nodes": [ { "name": "child", "mesh": 0 }, { "name": "root", "children": [0] } ],
        "meshes": [ { "primitives": [ { "attributes": {}, "targets": [{}, {}] } ] } ],
        "animations": [ { "name": "old", "channels": [], "samplers": [],
                          "extensions": { "EXT_example": {} } } ],
        "extensionsUsed": ["EXT_example", "KHR_mesh_quantization"],
    });
    let node = |name: &str, parent| Node {
        name: name.into(),
        parent,
        rest: Trs::IDENTITY,
    };
    let mut rig = Rig {
        nodes: vec![node("root", None), node("child", Some(0))],
        ..Rig::default()
    };
    rig.facts.gltf_node = vec![1, 0];
    let times = vec![0.0, 0.5, 1.0];
    rig.clips.push(Clip {
        name: "new".into(),
        duration: 1.0,
        channels: vec![
            Channel {
                node: 1,
                property: Property::Translation,
                interpolation: Interpolation::Step,
                times: times.clone(),
                values: vec![Vec4::new(1.0, 2.0, 3.0, 9.0); 3],
            },
            Channel {
                node: 0,
                property: Property::Rotation,
                interpolation: Interpolation::Linear,
                times: times.clone(),
                values: vec![Vec4::W; 3],
            },
        ],
        source: None,
    });
    rig.morphs.channels.push(MorphChannel {
        clip: 0,
        node: 1,
        interpolation: Interpolation::CubicSpline,
        times: vec![0.25, 2.0],
        values: (0..12).map(|i| i as f32).collect(),
        targets: 2,
    });
    (json, rig)
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn a_clip_is_encoded_with_gltf_node_indices_shared_times_and_true_bounds() {
    let (json, rig) = document_and_rig();
    let mut edited = Edited::new(json);
    let plan = [
        PlannedAnimation::Clip { clip: 0 },
        PlannedAnimation::Original {
            index: 0,
            name: Some("renamed".into()),
        },
    ];
    edited.set_animations(&rig, &plan).unwrap();
    let placed = edited.place_data(OutputFormat::Glb, None, "unused.bin").unwrap();
    let json = placed.json;
    let bin = placed.glb_bin.unwrap();
    assert_eq!(placed.origins["animations"], [None, Some(0)]);
    assert_eq!(json["animations"][1]["name"], "renamed");
    let animation = &json["animations"][0];
    let targets: Vec<(u64, &str)> = animation["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["target"]["node"].as_u64().unwrap(),
                c["target"]["path"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(targets, [(0, "translation"), (1, "rotation"), (0, "weights")]);
    let samplers = animation["samplers"].as_array().unwrap();
    let interpolations: Vec<&str> = samplers.iter().map(|s| s["interpolation"].as_str().unwrap()).collect();
    assert_eq!(interpolations, ["STEP", "LINEAR", "CUBICSPLINE"]);
    // Times [0, 0.5, 1] (shared), translation, rotation, times [0.25, 2], weights.
    let accessor = |sampler: usize, key: &str| samplers[sampler][key].as_u64().unwrap() as usize;
    assert_eq!(accessor(0, "input"), accessor(1, "input"));
    assert_eq!(json["accessors"].as_array().unwrap().len(), 5);
    let read = |index: usize| {
        let a = &json["accessors"][index];
        let view = &json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let start = view["byteOffset"].as_u64().unwrap() + a["byteOffset"].as_u64().unwrap_or(0);
        assert_eq!(start % 4, 0);
        assert!(view.get("target").is_none());
        let width = match a["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC3" => 3,
            _ => 4,
        };
        let length = a["count"].as_u64().unwrap() * width * 4;
        floats(&bin[start as usize..(start + length) as usize])
    };
    assert_eq!(read(accessor(0, "input")), [0.0, 0.5, 1.0]);
    assert_eq!(
        read(accessor(0, "output")),
        [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    );
    assert_eq!(read(accessor(1, "output")), [0.0, 0.0, 0.0, 1.0].repeat(3));
    assert_eq!(read(accessor(2, "input")), [0.25, 2.0]);
    assert_eq!(
        read(accessor(2, "output")),
        (0..12).map(|i| i as f32).collect::<Vec<_>>()
    );
    let times = &json["accessors"][accessor(2, "input")];
    assert_eq!(
        (times["min"].clone(), times["max"].clone()),
        (json!([0.25]), json!([2.0]))
    );
    assert_eq!(json["accessors"][accessor(2, "output")]["type"], "SCALAR");
    // The original that names the extension is kept, so the extension stays listed.
    assert_eq!(json["extensionsUsed"], json!(["EXT_example", "KHR_mesh_quantization"]));
}

#[test]
fn a_dropped_animation_takes_its_extension_out_of_the_lists_when_nothing_else_uses_it() {
    let (json, rig) = document_and_rig();
    let mut edited = Edited::new(json);
    edited
        .set_animations(&rig, &[PlannedAnimation::Clip { clip: 0 }])
        .unwrap();
    let placed = edited.place_data(OutputFormat::Glb, None, "unused.bin").unwrap();
    assert_eq!(placed.json["extensionsUsed"], json!(["KHR_mesh_quantization"]));
    assert!(
        placed
            .notes
            .iter()
            .any(|n| n.contains("'old'") && n.contains("left out"))
    );
}

#[test]
fn claims_the_document_or_rig_cannot_back_are_typed_errors() {
    let error =
        |json: Value, rig: &Rig, plan: &[PlannedAnimation]| Edited::new(json).set_animations(rig, plan).unwrap_err();
    let (json, rig) = document_and_rig();
    let original = |index| PlannedAnimation::Original { index, name: None };
    assert!(matches!(
        error(json.clone(), &rig, &[original(1)]),
        SaveError::NoAnimation { index: 1, count: 1 }
    ));
    assert!(matches!(
        error(json.clone(), &rig, &[PlannedAnimation::Clip { clip: 1 }]),
        SaveError::NoClip { clip: 1, count: 1 }
    ));
    let mut renamed = json.clone();
    renamed["nodes"][0]["name"] = "other".into();
    assert!(matches!(
        error(renamed, &rig, &[PlannedAnimation::Clip { clip: 0 }]),
        SaveError::RigMismatch(_)
    ));
    let mut bad = json.clone();
    bad["animations"] = json!({});
    assert!(matches!(error(bad, &rig, &[]), SaveError::Malformed { .. }));
    let mut bad = json.clone();
    bad["nodes"][0]["mesh"] = 7.into();
    assert!(matches!(
        error(bad, &rig, &[PlannedAnimation::Clip { clip: 0 }]),
        SaveError::Malformed { .. }
    ));

    let clip_problem = |rig: &Rig| match error(json.clone(), rig, &[PlannedAnimation::Clip { clip: 0 }]) {
        SaveError::Clip { clip: 0, problem, .. } => problem,
        other => panic!("not a clip problem: {other}"),
    };
    let mut bad = rig.clone();
    bad.clips[0].channels[1].times[0] = -1.0;
    assert_eq!(
        clip_problem(&bad),
        ClipProblem::BadTime {
            channel: ChannelRef::Node(1),
            key: 0,
            time: -1.0
        }
    );
    let mut bad = rig.clone();
    bad.clips[0].channels[0].values[2].y = f32::NAN;
    assert_eq!(
        clip_problem(&bad),
        ClipProblem::NotFinite {
            channel: ChannelRef::Node(0),
            index: 2
        }
    );
    let mut bad = rig.clone();
    bad.clips[0].channels[1].values[1] = Vec4::new(0.0, 0.0, 0.0, 0.5);
    assert_eq!(
        clip_problem(&bad),
        ClipProblem::RotationNotUnit {
            channel: ChannelRef::Node(1),
            key: 1,
            length: 0.5
        }
    );
    let mut bad = rig.clone();
    bad.clips[0].channels[0].node = 5;
    assert_eq!(
        clip_problem(&bad),
        ClipProblem::NoNode {
            channel: ChannelRef::Node(0),
            node: 5
        }
    );
    let mut bad = rig.clone();
    bad.morphs.channels[0].values.pop();
    assert_eq!(
        clip_problem(&bad),
        ClipProblem::ValueCount {
            channel: ChannelRef::Weights(0),
            keys: 2,
            values: 11,
            expected: 12
        }
    );
    let mut bad = rig.clone();
    bad.morphs.channels[0].node = 0;
    assert_eq!(
        clip_problem(&bad),
        ClipProblem::MorphTargets {
            channel: ChannelRef::Weights(0),
            node: 0,
            channel_targets: 2,
            mesh_targets: 0
        }
    );
    let mut bad = rig.clone();
    bad.clips[0].channels.clear();
    bad.morphs.channels.clear();
    assert_eq!(clip_problem(&bad), ClipProblem::NoChannels);
}
