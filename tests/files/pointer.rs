//! KHR_animation_pointer: ghost_v2.glb, whose only clip is written with pointers, plays every
//! key its accessors hold (read here apart from the importer) and the same clip as its plain
//! channels; the validator's pointer cases play their material pointers and refuse a broken
//! one as an error finding, as many as the validator's own reports count; a pointer that names
//! no node, or whose output type is not its target's, is an error and the rest still plays.

use crate::common;

use common::Doc;
use rigscope::anim::PoseBuffers;
use rigscope::report::{FindingCode, RigReport, Severity};
use rigscope::rig::{Rig, load_file, load_slice};
use serde_json::{Value, json};
use std::path::PathBuf;

/// `../shared/corpus/motion/gltf` (see [`common::shared_folder`]).
fn gltf_folder() -> Option<PathBuf> {
    common::shared_folder("corpus/motion/gltf")
}

/// A channel's pointer, or `None` for a plain channel.
fn pointer_of(channel: &Value) -> Option<&str> {
    channel["target"]["extensions"]["KHR_animation_pointer"]["pointer"].as_str()
}

/// Per pointer channel of animation 0: (glTF node, property, key times, values per key).
type Track = (usize, String, Vec<f64>, Vec<Vec<f64>>);

fn pointer_tracks(doc: &Doc) -> Vec<Track> {
    let animation = &doc.json["animations"][0];
    (common::array(animation, "channels").iter())
        .map(|channel| {
            let pointer = pointer_of(channel).expect("every channel is a pointer");
            let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
            let ["nodes", node, property] = parts[..] else {
                panic!("pointer {pointer} is not a node property");
            };
            let sampler = &animation["samplers"][common::index(&channel["sampler"], "sampler")];
            let times: Vec<f64> = (doc.read_floats(common::index(&sampler["input"], "input")).into_iter())
                .map(|t| t[0])
                .collect();
            let values = doc.read_floats(common::index(&sampler["output"], "output"));
            (node.parse().unwrap(), property.to_owned(), times, values)
        })
        .collect()
}

/// Each key of every pointer channel of ghost_v2.glb's clip is where the clip puts its node
/// (or its mesh's weights) at that key's time.
#[test]
fn ghost_plays_every_key_its_pointer_accessors_hold() {
    let Some(dir) = gltf_folder() else { return };
    let path = dir.join("ghost_v2.glb");
    let started = std::time::Instant::now();
    let rig = load_file(&path).unwrap_or_else(|e| panic!("ghost_v2.glb: {e}"));
    let seconds = started.elapsed().as_secs_f64();
    let doc = Doc::open(&path);
    let tracks = pointer_tracks(&doc);
    assert_eq!(tracks.len(), 94);
    assert_eq!(rig.clips.len(), 1);
    let weights = tracks.iter().filter(|t| t.1 == "weights").count();
    assert_eq!(weights, 3);
    assert_eq!(
        rig.clips[0].channels.len() + weights,
        tracks.len(),
        "every node channel plays"
    );
    assert_eq!(rig.morphs.channels.len(), weights, "every weights channel plays");
    assert!(
        rig.facts.pointer_findings.is_empty(),
        "{:?}",
        rig.facts.pointer_findings
    );
    assert!(rig.facts.property_tracks.is_empty(), "node channels only");
    let mut compared = 0;
    for (node, property, times, values) in &tracks {
        let rig_node = common::rig_node_of(&rig, &doc.json, *node);
        let targets = values.len() / times.len();
        for (k, &time) in times.iter().enumerate() {
            // Where two keys share a time the clip holds one of them there.
            let shared = (k > 0 && times[k - 1] == time) || times.get(k + 1) == Some(&time);
            if shared {
                continue;
            }
            let pose = PoseBuffers::at(&rig, Some(0), time as f32);
            let local = &pose.locals[rig_node];
            let error = match property.as_str() {
                "translation" | "scale" => {
                    let got = if property == "scale" {
                        local.scale
                    } else {
                        local.translation
                    };
                    (0..3)
                        .map(|c| (f64::from(got[c]) - values[k][c]).abs())
                        .fold(0.0, f64::max)
                }
                "rotation" => {
                    let want = glam::DQuat::from_slice(&values[k]).normalize();
                    1.0 - want.dot(local.rotation.as_dquat()).abs()
                }
                "weights" => {
                    let instance = rig
                        .instances
                        .iter()
                        .position(|i| i.node == rig_node)
                        .expect("a mesh node");
                    let got = &pose.morph_weights[instance];
                    (0..targets)
                        .map(|t| (f64::from(got[t]) - values[k * targets + t][0]).abs())
                        .fold(0.0, f64::max)
                }
                other => panic!("unexpected property {other}"),
            };
            assert!(
                error < 1e-5,
                "node {node} {property} key {k} at {time} s: off by {error}"
            );
            compared += 1;
        }
    }
    println!(
        "ghost_v2.glb: {} nodes, {} joints, clip '{}' of {} pointer channels over {:.3} s; {compared} keys match their accessors; loaded in {:.2} ms",
        rig.nodes.len(),
        rig.skins[0].joints.len(),
        rig.clips[0].name,
        tracks.len(),
        rig.clips[0].duration,
        seconds * 1e3
    );
    assert!(compared > 300, "{compared} keys compared");

    // The same clip written as plain channels loads to the same clip.
    let mut plain = doc.json.clone();
    for channel in plain["animations"][0]["channels"].as_array_mut().unwrap() {
        let pointer = pointer_of(channel).unwrap().to_owned();
        let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
        channel["target"] = json!({ "node": parts[1].parse::<u64>().unwrap(), "path": parts[2] });
    }
    let plain = load_slice(&common::gltf_with(plain, &doc.buffers[0]), None, "plain.gltf").expect("plain loads");
    assert_eq!(plain.clips, rig.clips);
    assert_eq!(plain.morphs.channels, rig.morphs.channels);
}

/// The channel findings of `rig`'s report: (errors, infos), as messages.
fn pointer_findings(rig: &Rig) -> (Vec<String>, Vec<String>) {
    let report = RigReport::new(rig);
    let of = |severity: Severity, code: FindingCode| {
        (report.findings.iter())
            .filter(|f| f.severity == severity && f.code == code && f.message.contains("pointer"))
            .map(|f| f.message.clone())
            .collect::<Vec<_>>()
    };
    (
        of(Severity::Error, FindingCode::ChannelLeftOut),
        of(Severity::Info, FindingCode::ChannelNotPlayed),
    )
}

/// The validator's valid file plays both material pointers (its accessors have no buffer view,
/// so every key is zero) with no error; its file whose pointer lacks the leading `/` has as
/// many errors as the validator's report and plays nothing.
#[test]
fn the_validators_pointer_files_play_or_are_refused_as_its_reports_say() {
    let Some(dir) = gltf_folder() else { return };
    let dir = dir.join("validator/KHR_animation_pointer");
    for (file, played) in [("valid.gltf", 2), ("invalid_pointer_syntax.gltf", 0)] {
        let started = std::time::Instant::now();
        let rig = load_file(&dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let seconds = started.elapsed().as_secs_f64();
        let report: Value =
            serde_json::from_slice(&std::fs::read(dir.join(format!("{file}.report.json"))).unwrap()).unwrap();
        let expected_errors = report["issues"]["numErrors"].as_u64().unwrap() as usize;
        let (errors, infos) = pointer_findings(&rig);
        assert_eq!(errors.len(), expected_errors, "{file}: {errors:?}");
        assert!(infos.is_empty(), "{file}: {infos:?}");
        let tracks = &rig.facts.property_tracks;
        assert_eq!(tracks.len(), played, "{file}: {tracks:?}");
        let doc = Doc::open(&dir.join(file));
        for (channel, message) in common::array(&doc.json["animations"][0], "channels")
            .iter()
            .zip(&errors)
        {
            assert!(message.contains(pointer_of(channel).unwrap()), "{file}: {message}");
        }
        for (track, channel) in tracks.iter().zip(common::array(&doc.json["animations"][0], "channels")) {
            assert_eq!(
                Some(track.target.pointer(&rig.facts.gltf_node).as_str()),
                pointer_of(channel)
            );
            assert!(track.values.iter().all(|v| *v == glam::Vec4::ZERO), "{file}: {track:?}");
        }
        if played > 0 {
            let pose = PoseBuffers::at(&rig, Some(0), 0.0);
            let material = pose.properties.material(0).copied().unwrap_or_default();
            assert_eq!(material.base_color, Some(glam::Vec4::ZERO), "{file}");
            assert_eq!(material.roughness, Some(0.0), "{file}");
        }
        assert_eq!(rig.clips.len(), usize::from(played > 0), "{file}");
        println!(
            "{file}: {} error(s), {} property tracks, loaded in {:.2} ms: {errors:?}",
            errors.len(),
            tracks.len(),
            seconds * 1e3
        );
    }
    let (code, stdout, _) =
        common::run_rigscope(&["inspect", dir.join("invalid_pointer_syntax.gltf").to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("[channel-left-out]"), "{stdout}");
}

/// ghost_v2.glb with one pointer naming a node it does not have and one rotation pointer fed
/// a translation's (VEC3) sampler: both are error findings, and the other 92 channels play.
#[test]
fn a_pointer_that_does_not_resolve_or_mismatches_its_type_is_an_error() {
    let Some(dir) = gltf_folder() else { return };
    let doc = Doc::open(&dir.join("ghost_v2.glb"));
    let mut json = doc.json.clone();
    let channels = json["animations"][0]["channels"].as_array_mut().unwrap();
    let rotation = channels
        .iter()
        .position(|c| pointer_of(c).unwrap().ends_with("/rotation"))
        .unwrap();
    let translation = channels
        .iter()
        .position(|c| pointer_of(c).unwrap().ends_with("/translation"))
        .unwrap();
    let vec3_sampler = channels[translation]["sampler"].clone();
    channels[rotation]["sampler"] = vec3_sampler;
    channels[translation]["target"]["extensions"]["KHR_animation_pointer"]["pointer"] = json!("/nodes/999/translation");
    let rig = load_slice(&common::gltf_with(json, &doc.buffers[0]), None, "broken.gltf").expect("loads");
    let (errors, _) = pointer_findings(&rig);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("/nodes/999/translation") && e.contains("node 999")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("takes VEC4 values, its sampler gives VEC3")),
        "{errors:?}"
    );
    assert_eq!(rig.clips[0].channels.len() + rig.morphs.channels.len(), 92);
}
