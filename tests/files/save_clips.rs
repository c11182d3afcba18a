//! Writing clips into a glTF file: the saved file's animations are exactly the plan (kept,
//! renamed, dropped, re-encoded), the re-encoded clips reopen with the keys written, the kept
//! ones as they were, the rest of the rig unchanged and the input untouched; a plan the file or
//! the rig cannot satisfy is a typed error that writes nothing.

use crate::common;

use crate::common::{Doc, bits, same, shared_folder, shared_rigs, temp_dir};
use glam::Vec4;
use rigscope::rig::{Clip, Interpolation, MorphChannel, Property, Rig, load_file};
use rigscope::save::{
    AnimationPlan, ClipProblem, Edits, PlannedAnimation, SaveError, SaveOptions, changed_primitives, save_animations,
    save_edits,
};
use serde_json::Value;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

/// Everything but the animations: nodes, skins, meshes, instances, materials, morph targets.
/// Returns where each of `before`'s nodes is in `saved` (see [`common::nodes_after_placement`]).
fn assert_rest_unchanged(before: &Rig, saved: &Rig) -> Vec<usize> {
    let node_of = common::nodes_after_placement(before, saved);
    let kept = before.nodes.len();
    same(
        &before.facts.gltf_node,
        &saved.facts.gltf_node[..kept].to_vec(),
        "node order",
    );
    same(&before.skins, &saved.skins, "skins");
    same(&before.meshes, &saved.meshes, "meshes");
    same(&before.materials, &saved.materials, "materials");
    same(&before.morphs.targets, &saved.morphs.targets, "morph targets");
    same(
        &before.morphs.default_weights,
        &saved.morphs.default_weights,
        "default morph weights",
    );
    assert_eq!(before.textures.len(), saved.textures.len());
    node_of
}

fn time_bits(times: &[f32]) -> Vec<u32> {
    times.iter().map(|t| t.to_bits()).collect()
}

/// `got` (reopened) has `want`'s channels bit for bit. `written` says `want` is what the save
/// encoded rather than what the importer read: the importer scales linear and step rotation
/// keys to unit length, so those are expected after that same step.
fn assert_same_channels(want: &Clip, got: &Clip, written: bool, at: &str) {
    assert_eq!(want.channels.len(), got.channels.len(), "{at}: channel count");
    for (k, (a, b)) in want.channels.iter().zip(&got.channels).enumerate() {
        assert_eq!(
            (a.node, a.property, a.interpolation),
            (b.node, b.property, b.interpolation),
            "{at} channel {k}: target or interpolation"
        );
        assert_eq!(time_bits(&a.times), time_bits(&b.times), "{at} channel {k}: key times");
        let expected: Vec<Vec4> =
            if written && a.property == Property::Rotation && a.interpolation != Interpolation::CubicSpline {
                a.values.iter().map(|q| q.normalize_or(Vec4::W)).collect()
            } else {
                a.values.clone()
            };
        assert_eq!(bits(&expected), bits(&b.values), "{at} channel {k}: key values");
    }
}

fn morphs_of(rig: &Rig, clip: usize) -> Vec<&MorphChannel> {
    rig.morphs.channels.iter().filter(|m| m.clip == clip).collect()
}

/// `got` (reopened) has `want`'s morph channels, on the nodes `node_of` says they are on now.
fn assert_same_morphs(want: &[&MorphChannel], got: &[&MorphChannel], node_of: &[usize], at: &str) {
    assert_eq!(want.len(), got.len(), "{at}: morph channel count");
    for (k, (a, b)) in want.iter().zip(got).enumerate() {
        assert_eq!(
            (node_of[a.node], a.interpolation, a.targets),
            (b.node, b.interpolation, b.targets),
            "{at} morph channel {k}"
        );
        assert_eq!(
            time_bits(&a.times),
            time_bits(&b.times),
            "{at} morph channel {k}: key times"
        );
        assert_eq!(
            time_bits(&a.values),
            time_bits(&b.values),
            "{at} morph channel {k}: weights"
        );
    }
}

/// The raw JSON text of each of the file's animations.
fn animation_texts(path: &Path) -> Vec<String> {
    let bytes = std::fs::read(path).unwrap();
    let json = if bytes.starts_with(b"glTF") {
        common::split_glb(&bytes).0.to_vec()
    } else {
        bytes
    };
    #[derive(serde::Deserialize)]
    struct Animations<'a> {
        #[serde(borrow, default)]
        animations: Vec<&'a RawValue>,
    }
    let parsed: Animations = serde_json::from_slice(&json).unwrap();
    parsed.animations.iter().map(|a| a.get().to_owned()).collect()
}

/// Every file under `dir`, with its bytes.
fn files_in(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

/// `clip` edited the way a clip editor would: keys later and slower, translations moved,
/// rotations inverted, one channel switched to step interpolation, the last channel removed.
fn edited(clip: &Clip) -> Clip {
    let mut clip = clip.clone();
    clip.name = format!("{} (edited)", clip.name);
    clip.channels.pop();
    for channel in &mut clip.channels {
        for t in &mut channel.times {
            *t = *t * 1.5 + 0.25;
        }
        for v in &mut channel.values {
            *v = match channel.property {
                Property::Translation => *v + Vec4::new(0.125, -0.5, 3.0, 0.0),
                Property::Rotation => Vec4::new(-v.x, -v.y, -v.z, v.w),
                Property::Scale => *v * 1.25,
            };
        }
    }
    if let Some(first) = clip.channels.first_mut()
        && first.interpolation == Interpolation::Linear
    {
        first.interpolation = Interpolation::Step;
    }
    clip.duration = clip.duration * 1.5 + 0.25;
    clip
}

/// Checks the JSON of a re-encoded animation against the data written: every sampler input has
/// true bounds, float accessors aligned in their buffer views, targets are the glTF indices of
/// the rig nodes (the importer sorts nodes, so these differ from rig indices), and values are
/// the floats of `clip`.
fn assert_encoded(output: &Path, animation: usize, rig: &Rig, clip: &Clip) {
    let doc = Doc::open(output);
    let json = &doc.json["animations"][animation];
    assert_eq!(json["name"], clip.name.as_str());
    let channels = json["channels"].as_array().unwrap();
    let samplers = json["samplers"].as_array().unwrap();
    let node_channels: Vec<&Value> = channels.iter().filter(|c| c["target"]["path"] != "weights").collect();
    assert_eq!(node_channels.len(), clip.channels.len());
    for (channel, want) in node_channels.iter().zip(&clip.channels) {
        let gltf_node = channel["target"]["node"].as_u64().unwrap() as usize;
        assert_eq!(gltf_node, rig.facts.gltf_node[want.node]);
        let file_name = doc.json["nodes"][gltf_node]["name"].as_str().unwrap();
        assert_eq!(file_name, rig.nodes[want.node].name, "the channel targets its node");
        let sampler = &samplers[channel["sampler"].as_u64().unwrap() as usize];
        let input = sampler["input"].as_u64().unwrap() as usize;
        let output_accessor = sampler["output"].as_u64().unwrap() as usize;
        for accessor in [input, output_accessor] {
            let offset = doc.json["accessors"][accessor]["byteOffset"].as_u64().unwrap_or(0);
            let view = doc.json["accessors"][accessor]["bufferView"].as_u64().unwrap() as usize;
            let view_offset = doc.json["bufferViews"][view]["byteOffset"].as_u64().unwrap_or(0);
            assert_eq!((offset + view_offset) % 4, 0, "accessor {accessor} is 4-byte aligned");
            assert!(doc.json["bufferViews"][view].get("target").is_none());
        }
        let times: Vec<f64> = doc.read_floats(input).into_iter().map(|t| t[0]).collect();
        let want_times: Vec<f64> = want.times.iter().map(|&t| f64::from(t)).collect();
        assert_eq!(times, want_times);
        // serde_json's parse may be one f64 unit off the text; as f32 it is exact.
        let bound = |key: &str| doc.json["accessors"][input][key][0].as_f64().map(|v| v as f32);
        assert_eq!(bound("min"), want.times.first().copied());
        assert_eq!(bound("max"), want.times.last().copied());
        let components = if want.property == Property::Rotation { 4 } else { 3 };
        let values = doc.read_floats(output_accessor);
        let want_values: Vec<Vec<f64>> = want
            .values
            .iter()
            .map(|v| v.to_array()[..components].iter().map(|&c| f64::from(c)).collect())
            .collect();
        assert_eq!(values, want_values, "the floats written are the clip's");
        let interpolation = match want.interpolation {
            Interpolation::Step => "STEP",
            Interpolation::Linear => "LINEAR",
            Interpolation::CubicSpline => "CUBICSPLINE",
        };
        assert_eq!(sampler["interpolation"], interpolation);
    }
}

#[test]
fn a_glb_keeps_renames_drops_and_reencodes_its_animations() {
    let Some(dir) = shared_folder("rigs/real") else { return };
    let input = dir.join("Xbot.glb");
    let input_bytes = std::fs::read(&input).unwrap();
    let before = load_file(&input).unwrap();
    assert_eq!(before.clips.len(), 7);
    assert!(
        before.facts.gltf_node.iter().enumerate().any(|(i, &g)| i != g),
        "Xbot's nodes are reordered by the importer, so node targets are checked through the map"
    );
    let mut rig = before.clone();
    rig.clips[6] = edited(&before.clips[6]);
    let plan = [
        PlannedAnimation::Original { index: 0, name: None },
        PlannedAnimation::Original {
            index: 3,
            name: Some("sprint".into()),
        },
        PlannedAnimation::Clip { clip: 6 },
        PlannedAnimation::Original { index: 2, name: None },
    ];
    let out_dir = temp_dir("save-clips-glb");
    let output = out_dir.join("xbot-clips.glb");
    let saved = save_animations(&input, &output, &rig, &plan, SaveOptions::default()).expect("the clips save");
    assert_eq!(saved.written, vec![output.clone()]);
    assert!(
        saved
            .notes
            .iter()
            .any(|n| n.contains("'sneak_pose'") && n.contains("left out")),
        "{:?}",
        saved.notes
    );

    let after = load_file(&output).expect("the saved file reopens");
    assert_rest_unchanged(&before, &after);
    let names: Vec<&str> = after.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["agree", "sprint", "walk (edited)", "idle"]);
    assert_same_channels(&before.clips[0], &after.clips[0], false, "kept agree");
    assert_same_channels(&before.clips[3], &after.clips[1], false, "renamed run");
    assert_same_channels(&rig.clips[6], &after.clips[2], true, "edited walk");
    assert_same_channels(&before.clips[2], &after.clips[3], false, "moved idle");
    assert_eq!(after.clips[2].duration, rig.clips[6].duration);
    assert!(after.clips[2].channels[0].interpolation == Interpolation::Step);
    assert_encoded(&output, 2, &rig, &rig.clips[6]);

    // Kept animations are their input text, byte for byte; the renamed one differs only by name.
    let input_texts = animation_texts(&input);
    let output_texts = animation_texts(&output);
    assert_eq!(output_texts[0], input_texts[0]);
    assert_eq!(output_texts[3], input_texts[2]);
    let renamed: Value = serde_json::from_str(&output_texts[1]).unwrap();
    let mut original: Value = serde_json::from_str(&input_texts[3]).unwrap();
    original["name"] = "sprint".into();
    assert_eq!(renamed, original);

    assert_eq!(std::fs::read(&input).unwrap(), input_bytes, "the input is untouched");
}

#[test]
fn a_gltf_with_an_external_buffer_reencodes_cubic_spline_and_step_clips() {
    let Some(shared) = shared_rigs() else { return };
    // The file names an image the shared folder lacks, which a save into another folder could
    // not take along: the input is copied, and the output written beside it.
    let dir = temp_dir("save-clips-gltf");
    for name in ["InterpolationTest.gltf", "interpolation_test.bin"] {
        std::fs::copy(shared.join(name), dir.join(name)).unwrap();
    }
    let input = dir.join("InterpolationTest.gltf");
    let companion = dir.join("interpolation_test.bin");
    let input_bytes = (std::fs::read(&input).unwrap(), std::fs::read(&companion).unwrap());
    let before = load_file(&input).unwrap();
    let names: Vec<&str> = before.clips.iter().map(|c| c.name.as_str()).collect();
    let cubic = names.iter().position(|&n| n == "CubicSpline Rotation").unwrap();
    let step = names.iter().position(|&n| n == "Step Translation").unwrap();
    assert_eq!(
        before.clips[cubic].channels[0].interpolation,
        Interpolation::CubicSpline
    );

    let mut rig = before.clone();
    // Cubic-spline values are in-tangent, value, out-tangent triplets; the importer stores them
    // as read, so they must come back exactly. The keyed rotations stay unit quaternions (the
    // same rotations, negated); the tangents are scaled.
    for channel in &mut rig.clips[cubic].channels {
        assert_eq!(channel.values.len(), channel.times.len() * 3);
        for (k, v) in channel.values.iter_mut().enumerate() {
            *v = if k % 3 == 1 { -*v } else { *v * 0.75 };
        }
    }
    rig.clips[step].channels[0].times.iter_mut().for_each(|t| *t += 0.5);
    let mut plan: Vec<PlannedAnimation> = (0..before.clips.len())
        .filter(|&i| i != 0)
        .map(|index| match index {
            i if i == cubic || i == step => PlannedAnimation::Clip { clip: i },
            1 => PlannedAnimation::Original {
                index,
                name: Some("Renamed".into()),
            },
            _ => PlannedAnimation::Original { index, name: None },
        })
        .collect();
    plan.reverse();

    let output = dir.join("interpolation.gltf");
    let saved = save_animations(&input, &output, &rig, &plan, SaveOptions::default()).expect("the clips save");
    let new_bin = dir.join("interpolation.bin");
    assert_eq!(
        saved.written,
        [new_bin, output.clone()],
        "the new data is in a new .bin"
    );
    let doc = Doc::open(&output);
    let uris: Vec<&str> = common::array(&doc.json, "buffers")
        .iter()
        .map(|b| b["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        ["interpolation_test.bin", "interpolation.bin"],
        "the input's buffer is still read"
    );

    let after = load_file(&output).expect("the saved file reopens");
    assert_rest_unchanged(&before, &after);
    assert_eq!(after.clips.len(), plan.len());
    for (k, planned) in plan.iter().enumerate() {
        match planned {
            PlannedAnimation::Clip { clip } => {
                assert_eq!(after.clips[k].name, rig.clips[*clip].name);
                assert_same_channels(&rig.clips[*clip], &after.clips[k], true, &format!("clip {clip}"));
                assert_encoded(&output, k, &rig, &rig.clips[*clip]);
            }
            PlannedAnimation::Original { index, name } => {
                let want = name.as_deref().unwrap_or(&before.clips[*index].name);
                assert_eq!(after.clips[k].name, want);
                assert_same_channels(
                    &before.clips[*index],
                    &after.clips[k],
                    false,
                    &format!("original {index}"),
                );
            }
        }
    }
    assert!(
        !after.clips.iter().any(|c| c.name == before.clips[0].name),
        "the left-out animation is gone"
    );
    assert_eq!(std::fs::read(&input).unwrap(), input_bytes.0, "the input is untouched");
    assert_eq!(std::fs::read(&companion).unwrap(), input_bytes.1);
}

#[test]
fn morph_weight_channels_are_written_with_their_clip() {
    let Some(dir) = shared_folder("rigs/real") else { return };
    let input = dir.join("RobotExpressive.glb");
    let before = load_file(&input).unwrap();
    let wave = before.clips.iter().position(|c| c.name == "Wave").unwrap();
    let yes = before.clips.iter().position(|c| c.name == "Yes").unwrap();
    assert!(!morphs_of(&before, wave).is_empty());
    let mut rig = before.clone();
    rig.clips[wave] = edited(&before.clips[wave]);
    for channel in rig.morphs.channels.iter_mut().filter(|m| m.clip == wave) {
        for w in &mut channel.values {
            *w = 1.0 - *w;
        }
    }
    let plan = [
        PlannedAnimation::Clip { clip: wave },
        PlannedAnimation::Original { index: yes, name: None },
    ];
    let output = temp_dir("save-clips-morph").join("robot.glb");
    save_animations(&input, &output, &rig, &plan, SaveOptions::default()).expect("the clips save");
    let after = load_file(&output).unwrap();
    let node_of = assert_rest_unchanged(&before, &after);
    assert_same_channels(&rig.clips[wave], &after.clips[0], true, "edited wave");
    assert_same_morphs(&morphs_of(&rig, wave), &morphs_of(&after, 0), &node_of, "edited wave");
    assert_same_channels(&before.clips[yes], &after.clips[1], false, "kept yes");
    assert_same_morphs(&morphs_of(&before, yes), &morphs_of(&after, 1), &node_of, "kept yes");
    assert_eq!(
        after.morphs.channels.len(),
        morphs_of(&rig, wave).len() + morphs_of(&before, yes).len()
    );
    let doc = Doc::open(&output);
    let weights = doc.json["animations"][0]["channels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["target"]["path"] == "weights")
        .count();
    assert_eq!(weights, morphs_of(&rig, wave).len());
}

#[test]
fn a_morph_only_gltf_saves_as_glb_and_gltf() {
    let Some(dir) = shared_folder("corpus/rigs") else {
        return;
    };
    let input = dir.join("MorphStressTest.gltf");
    let before = load_file(&input).unwrap();
    assert!(before.clips.iter().all(|c| c.channels.is_empty()));
    let mut rig = before.clone();
    let last = rig.clips.len() - 1;
    for channel in rig.morphs.channels.iter_mut().filter(|m| m.clip == last) {
        channel.times.iter_mut().for_each(|t| *t *= 2.0);
    }
    let plan = [
        PlannedAnimation::Clip { clip: last },
        PlannedAnimation::Original {
            index: 0,
            name: Some("first".into()),
        },
    ];
    let out_dir = temp_dir("save-clips-morph-only");
    for name in ["morphs.glb", "morphs.gltf"] {
        let output = out_dir.join(name);
        save_animations(&input, &output, &rig, &plan, SaveOptions::default()).expect("the clips save");
        let after = load_file(&output).unwrap();
        let node_of = assert_rest_unchanged(&before, &after);
        assert_eq!(after.clips[1].name, "first");
        assert_same_morphs(&morphs_of(&rig, last), &morphs_of(&after, 0), &node_of, name);
        assert_same_morphs(&morphs_of(&before, 0), &morphs_of(&after, 1), &node_of, name);
    }
}

#[test]
fn weights_and_clips_are_written_by_one_save() {
    let Some(dir) = shared_folder("rigs/real") else { return };
    let input = dir.join("RobotExpressive.glb");
    let before = load_file(&input).unwrap();
    let repaired = common::with_normalized_weights(before.clone());
    let changes = changed_primitives(&before, &repaired).unwrap();
    assert!(!changes.is_empty(), "RobotExpressive's weights do not sum to 1");
    let mut rig = before.clone();
    rig.clips[0] = edited(&before.clips[0]);
    let plan = [PlannedAnimation::Clip { clip: 0 }];
    let edits = Edits {
        primitives: &changes,
        animations: Some(AnimationPlan { rig: &rig, plan: &plan }),
    };
    let output = temp_dir("save-clips-both").join("robot.glb");
    let saved = save_edits(&input, &output, &edits, SaveOptions::default()).unwrap();
    assert!(saved.notes.iter().any(|n| n.contains("WEIGHTS_0")), "{:?}", saved.notes);
    let after = load_file(&output).unwrap();
    assert_eq!(after.clips.len(), 1);
    assert_same_channels(&rig.clips[0], &after.clips[0], true, "edited clip");
    for (a, b) in repaired.meshes.iter().zip(&after.meshes) {
        for (p, q) in a.primitives.iter().zip(&b.primitives) {
            if let (Some(want), Some(got)) = (&p.influences, &q.influences) {
                for (x, y) in want.weights.iter().flatten().zip(got.weights.iter().flatten()) {
                    assert!((x - y).abs() <= 2.5 / 255.0, "weights written in the same save");
                }
            }
        }
    }
}

#[test]
fn a_plan_the_file_or_rig_cannot_satisfy_is_a_typed_error_that_writes_nothing() {
    let Some(dir) = shared_rigs() else { return };
    let input = dir.join("Fox.glb");
    let rig = load_file(&input).unwrap();
    let out_dir = temp_dir("save-clips-errors");
    let output = out_dir.join("fox.glb");
    let fails = |rig: &Rig, plan: &[PlannedAnimation]| {
        let error = save_animations(&input, &output, rig, plan, SaveOptions::default()).unwrap_err();
        assert!(files_in(&out_dir).is_empty(), "nothing written after: {error}");
        error
    };

    let error = fails(&rig, &[PlannedAnimation::Original { index: 3, name: None }]);
    assert!(
        matches!(error, SaveError::NoAnimation { index: 3, count: 3 }),
        "{error}"
    );
    let error = fails(&rig, &[PlannedAnimation::Clip { clip: 7 }]);
    assert!(matches!(error, SaveError::NoClip { clip: 7, count: 3 }), "{error}");

    let mut bad = rig.clone();
    bad.clips[1].channels[2].times.swap(3, 4);
    let error = fails(&bad, &[PlannedAnimation::Clip { clip: 1 }]);
    assert!(
        matches!(
            error,
            SaveError::Clip {
                clip: 1,
                problem: ClipProblem::TimesNotIncreasing { key: 4, .. },
                ..
            }
        ),
        "{error}"
    );
    let mut bad = rig.clone();
    bad.clips[0].channels[0].values.pop();
    let error = fails(&bad, &[PlannedAnimation::Clip { clip: 0 }]);
    assert!(
        matches!(
            error,
            SaveError::Clip {
                problem: ClipProblem::ValueCount { .. },
                ..
            }
        ),
        "{error}"
    );
    let mut bad = rig.clone();
    let duplicate = bad.clips[0].channels[0].clone();
    bad.clips[0].channels.push(duplicate);
    let error = fails(&bad, &[PlannedAnimation::Clip { clip: 0 }]);
    assert!(
        matches!(
            error,
            SaveError::Clip {
                problem: ClipProblem::SameTarget { .. },
                ..
            }
        ),
        "{error}"
    );

    // A rig loaded from another file does not say which of this file's nodes its clips move.
    let Some(real) = shared_folder("rigs/real") else { return };
    let other = load_file(&real.join("Xbot.glb")).unwrap();
    let error = fails(&other, &[PlannedAnimation::Clip { clip: 0 }]);
    assert!(matches!(error, SaveError::RigMismatch(_)), "{error}");

    // The output is the input: refused without --overwrite, the input left as it was.
    let copy_dir = temp_dir("save-clips-in-place");
    let copy = copy_dir.join("fox.glb");
    std::fs::copy(&input, &copy).unwrap();
    let before = files_in(&copy_dir);
    let plan = [PlannedAnimation::Clip { clip: 0 }];
    let error = save_animations(&copy, &copy, &rig, &plan, SaveOptions::default()).unwrap_err();
    assert!(matches!(error, SaveError::WouldOverwriteInput { .. }), "{error}");
    assert_eq!(files_in(&copy_dir), before, "nothing written beside the input");
}

#[test]
fn an_empty_plan_leaves_no_animations_and_a_morph_clip_must_match_its_mesh() {
    let Some(dir) = shared_folder("corpus/rigs") else {
        return;
    };
    let input = dir.join("MorphStressTest.gltf");
    let rig = load_file(&input).unwrap();
    let out_dir = temp_dir("save-clips-empty");
    let output = out_dir.join("none.gltf");
    save_animations(&input, &output, &rig, &[], SaveOptions::default()).unwrap();
    let doc = Doc::open(&output);
    assert!(
        doc.json.get("animations").is_none(),
        "glTF has no empty animations array"
    );
    let after = load_file(&output).unwrap();
    assert!(after.clips.is_empty() && after.morphs.channels.is_empty());
    assert_rest_unchanged(&rig, &after);

    let mut bad = rig.clone();
    let channel = bad.morphs.channels.iter_mut().find(|m| m.clip == 0).unwrap();
    let keys = channel.times.len();
    channel.targets += 1;
    channel.values = vec![0.5; keys * channel.targets];
    let output = out_dir.join("bad.gltf");
    let error = save_animations(
        &input,
        &output,
        &bad,
        &[PlannedAnimation::Clip { clip: 0 }],
        SaveOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            SaveError::Clip {
                problem: ClipProblem::MorphTargets { .. },
                ..
            }
        ),
        "{error}"
    );
    assert!(!output.exists());
}

#[test]
fn a_gltf_with_a_data_uri_buffer_round_trips_its_one_clip() {
    let Some(dir) = shared_rigs() else { return };
    let input = dir.join("RiggedSimple.gltf");
    let input_bytes = std::fs::read(&input).unwrap();
    let before = load_file(&input).unwrap();
    let mut rig = before.clone();
    rig.clips[0] = edited(&before.clips[0]);
    let out_dir = temp_dir("save-clips-data-uri");
    let plan = [
        PlannedAnimation::Original { index: 0, name: None },
        PlannedAnimation::Clip { clip: 0 },
    ];
    let output = out_dir.join("simple.gltf");
    save_animations(&input, &output, &rig, &plan, SaveOptions::default()).unwrap();
    let after = load_file(&output).unwrap();
    assert_rest_unchanged(&before, &after);
    assert_same_channels(&before.clips[0], &after.clips[0], false, "kept");
    assert_same_channels(&rig.clips[0], &after.clips[1], true, "edited");
    assert_encoded(&output, 1, &rig, &rig.clips[0]);
    assert_eq!(std::fs::read(&input).unwrap(), input_bytes);
}

#[test]
fn fox_reopens_with_an_edited_run_and_a_renamed_survey() {
    let Some(dir) = shared_rigs() else { return };
    let input = dir.join("Fox.glb");
    let before = load_file(&input).unwrap();
    let mut rig = before.clone();
    rig.clips[2] = edited(&before.clips[2]);
    let plan = [
        PlannedAnimation::Clip { clip: 2 },
        PlannedAnimation::Original {
            index: 0,
            name: Some("Look around".into()),
        },
    ];
    let output = temp_dir("save-clips-fox").join("fox.glb");
    save_animations(&input, &output, &rig, &plan, SaveOptions::default()).unwrap();
    let after = load_file(&output).unwrap();
    assert_rest_unchanged(&before, &after);
    let names: Vec<&str> = after.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Run (edited)", "Look around"]);
    assert_same_channels(&rig.clips[2], &after.clips[0], true, "edited run");
    assert_same_channels(&before.clips[0], &after.clips[1], false, "renamed survey");
    assert_encoded(&output, 0, &rig, &rig.clips[2]);
}
