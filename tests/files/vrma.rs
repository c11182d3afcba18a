//! VRM Animation (`.vrma`) read as a clip source: every file of `../shared/corpus/motion/vrma`
//! opens with the counts its SOURCES.md states; carried onto Mixamo-like rigs its limbs point
//! where the source points them and a clip authored in centimetres under a 0.01-scaled root
//! travels in metres; expression and gaze tracks drive a VRM avatar's morph targets and a rig's
//! eyes or head as the file's own accessors, read here apart from the importer, say; broken
//! extensions are refused with a typed error.

use crate::common;

use common::Doc;
use glam::{DQuat, DVec3};
use rigscope::anim::PoseBuffers;
use rigscope::retarget::{JointMap, RetargetOptions, RetargetReport, load_clips_into};
use rigscope::rig::{Rig, RigError, VrmaError, load_file, load_slice};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// `../shared/corpus/motion/vrma` (see [`common::shared_folder`]).
fn vrma_folder() -> Option<PathBuf> {
    common::shared_folder("corpus/motion/vrma")
}

/// Each file's nodes, humanoid bones, channels, keys of its longest channel and duration in
/// seconds, as SOURCES.md gives them.
const CORPUS: &[(&str, usize, usize, usize, usize, f64)] = &[
    ("test.vrma", 53, 51, 3, 7, 3.0),
    ("idle_loop.vrma", 33, 22, 28, 250, 10.375),
    ("hips_spine_twisting.vrma", 18, 17, 6, 1800, 1799.0 / 30.0),
    ("nop.vrma", 54, 53, 12, 1, 0.0),
];

fn extension(doc: &Doc) -> &Value {
    &doc.json["extensions"]["VRMC_vrm_animation"]
}

/// The rig node of the file's humanoid `bone`, found through the file's own map.
fn bone_node(rig: &Rig, doc: &Doc, bone: &str) -> usize {
    let gltf = common::index(&extension(doc)["humanoid"]["humanBones"][bone]["node"], bone);
    common::rig_node_of(rig, &doc.json, gltf)
}

/// The input times and output values of the channel animating `path` of glTF node `node`.
fn track(doc: &Doc, node: usize, path: &str) -> (Vec<f64>, Vec<Vec<f64>>) {
    let animation = &doc.json["animations"][0];
    let channel = common::array(animation, "channels")
        .iter()
        .find(|c| c["target"]["node"].as_u64() == Some(node as u64) && c["target"]["path"] == path)
        .unwrap_or_else(|| panic!("no {path} channel on node {node}"));
    let sampler = &animation["samplers"][common::index(&channel["sampler"], "sampler")];
    let times = doc.read_floats(common::index(&sampler["input"], "input"));
    let values = doc.read_floats(common::index(&sampler["output"], "output"));
    (times.into_iter().map(|t| t[0]).collect(), values)
}

#[test]
fn every_corpus_file_opens_with_the_counts_its_sources_state() {
    let Some(dir) = vrma_folder() else { return };
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("the VRMA folder is readable")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CORPUS.iter().map(|c| c.0.to_owned()).collect();
    listed.sort();
    assert_eq!(
        on_disk, listed,
        "every VRMA file of the corpus is checked, and only those"
    );
    for &(file, nodes, bones, channels, keys, duration) in CORPUS {
        let started = std::time::Instant::now();
        let rig = load_file(&dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let seconds = started.elapsed().as_secs_f64();
        let doc = Doc::open(&dir.join(file));
        assert_eq!(rig.nodes.len(), nodes, "{file}");
        assert_eq!(rig.facts.humanoid.len(), bones, "{file}");
        for (bone, node) in &rig.facts.humanoid {
            assert_eq!(*node, bone_node(&rig, &doc, bone), "{file}: {bone}");
        }
        let clip = &rig.clips[0];
        assert_eq!(clip.channels.len(), channels, "{file}");
        let longest = clip.channels.iter().map(|c| c.times.len()).max().unwrap();
        assert_eq!(longest, keys, "{file}");
        assert!(
            (f64::from(clip.duration) - duration).abs() < 1e-3,
            "{file}: {} s",
            clip.duration
        );
        let vrma = rig.facts.vrma.as_ref().expect("the VRMA facts");
        let expressions = extension(&doc)["expressions"]["preset"]
            .as_object()
            .map_or(0, |o| o.len());
        assert_eq!(vrma.expressions.len(), expressions, "{file}");
        assert_eq!(
            vrma.look_at.is_some(),
            extension(&doc)["lookAt"]["node"].is_u64(),
            "{file}"
        );
        // Every key poses every joint at a finite place, a single-key clip of 0 s included.
        let times = [0.0, clip.duration * 0.5, clip.duration, clip.duration + 1.0];
        for time in times {
            let pose = PoseBuffers::at(&rig, Some(0), time);
            assert!(pose.worlds.iter().all(|w| w.is_finite()), "{file} at {time} s");
        }
        println!(
            "{file}: {nodes} nodes, {bones} humanoid bones, {channels} channels, {keys} keys over {:.3} s, loaded in {:.2} ms",
            clip.duration,
            seconds * 1e3
        );
    }
}

/// `../shared/rigs/real/Xbot.glb` and `../shared/corpus/rigs/readyplayer.me.glb`.
fn humanoid_rigs() -> Option<[(&'static str, PathBuf); 2]> {
    let rigs = common::shared_rigs()?;
    let corpus = common::shared_folder("corpus/rigs")?;
    Some([
        ("Xbot", rigs.join("real/Xbot.glb")),
        ("readyplayer.me", corpus.join("readyplayer.me.glb")),
    ])
}

fn carry(target: &Path, clips: &Path) -> (Rig, RetargetReport) {
    let target = load_file(target).unwrap_or_else(|e| panic!("{}: {e}", target.display()));
    load_clips_into(
        target,
        clips,
        (&Default::default(), &JointMap::default()),
        &RetargetOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{} carried: {e}", clips.display()))
}

/// A Mixamo-like joint by the name the file gives it, with or without a `mixamorig:` prefix.
fn mixamo_node(rig: &Rig, name: &str) -> usize {
    (rig.nodes.iter())
        .position(|n| n.name == name || n.name.rsplit(':').next() == Some(name))
        .unwrap_or_else(|| panic!("{}: no joint {name}", rig.name))
}

/// A limb as the joints it runs between: (from, to).
type Limb = (&'static str, &'static str);

/// The limbs compared, as humanoid bones of the VRMA and Mixamo names of the rig.
const LIMBS: &[(Limb, Limb)] = &[
    (("leftUpperArm", "leftLowerArm"), ("LeftArm", "LeftForeArm")),
    (("leftLowerArm", "leftHand"), ("LeftForeArm", "LeftHand")),
    (("rightUpperArm", "rightLowerArm"), ("RightArm", "RightForeArm")),
    (("rightLowerArm", "rightHand"), ("RightForeArm", "RightHand")),
    (("leftUpperLeg", "leftLowerLeg"), ("LeftUpLeg", "LeftLeg")),
    (("leftLowerLeg", "leftFoot"), ("LeftLeg", "LeftFoot")),
    (("rightUpperLeg", "rightLowerLeg"), ("RightUpLeg", "RightLeg")),
    (("rightLowerLeg", "rightFoot"), ("RightLeg", "RightFoot")),
];

/// The turn about +Y from the way the source faces to the way the target faces at rest, read
/// from the upper legs.
fn facing(source: &Rig, doc: &Doc, target: &Rig) -> DQuat {
    let (source_rest, target_rest) = (PoseBuffers::new(source), PoseBuffers::new(target));
    let at = |pose: &PoseBuffers, node: usize| pose.worlds[node].w_axis.truncate().as_dvec3();
    let side = (at(&source_rest, bone_node(source, doc, "leftUpperLeg"))
        - at(&source_rest, bone_node(source, doc, "rightUpperLeg")))
    .normalize();
    let target_side =
        at(&target_rest, mixamo_node(target, "LeftUpLeg")) - at(&target_rest, mixamo_node(target, "RightUpLeg"));
    DQuat::from_rotation_y(target_side.x.atan2(target_side.z) - side.x.atan2(side.z))
}

/// The largest angle between a limb of `source`'s clip and the same limb of `target`'s clip
/// `clip`, at every key of the source's first channel, the source turned as the target faces.
fn worst_limb_degrees(source: &Rig, doc: &Doc, target: &Rig, clip: usize) -> (f64, String) {
    let turn = facing(source, doc, target);
    let mut worst = (0.0, String::new());
    for &time in &source.clips[0].channels[0].times {
        let (source_pose, target_pose) = (
            PoseBuffers::at(source, Some(0), time),
            PoseBuffers::at(target, Some(clip), time),
        );
        for ((from, to), (target_from, target_to)) in LIMBS {
            let at = |pose: &PoseBuffers, node: usize| pose.worlds[node].w_axis.truncate().as_dvec3();
            let want = turn
                * (at(&source_pose, bone_node(source, doc, to)) - at(&source_pose, bone_node(source, doc, from)))
                    .normalize();
            let got = (at(&target_pose, mixamo_node(target, target_to))
                - at(&target_pose, mixamo_node(target, target_from)))
            .normalize();
            let degrees = want.cross(got).length().atan2(want.dot(got)).to_degrees();
            if degrees > worst.0 {
                worst = (degrees, format!("{from}→{to} at {time:.3} s"));
            }
        }
    }
    worst
}

/// idle_loop.vrma is authored in centimetres under a root scaled by 0.01: carried onto rigs in
/// metres, its hips travel by the file's centimetres over 100, times the ratio of hip heights,
/// and its limbs point as the source's.
#[test]
fn a_clip_in_centimetres_under_a_scaled_root_travels_in_metres_and_points_its_limbs_as_the_source() {
    let (Some(dir), Some(targets)) = (vrma_folder(), humanoid_rigs()) else {
        return;
    };
    let path = dir.join("idle_loop.vrma");
    let (source, doc) = (load_file(&path).expect("idle_loop loads"), Doc::open(&path));
    let hips = common::index(&extension(&doc)["humanoid"]["humanBones"]["hips"]["node"], "hips");
    let rest = common::numbers(&doc.json["nodes"][hips]["translation"]);
    let (times, values) = track(&doc, hips, "translation");
    // The hips' parent is the scaled root, the only transform above them.
    let parent = common::array(&doc.json, "nodes")
        .iter()
        .find(|n| {
            common::array(n, "children")
                .iter()
                .any(|c| c.as_u64() == Some(hips as u64))
        })
        .expect("the hips have a parent");
    let scale = common::numbers(&parent["scale"]);
    assert_eq!(scale, [0.01, 0.01, 0.01]);
    for (label, target) in targets {
        let (carried, report) = carry(&target, &path);
        let clip_report = &report.clips[0];
        let clip = carried.find_clip(&clip_report.name).expect("the clip is added");
        let root = mixamo_node(&carried, "Hips");
        let ratio = f64::from(clip_report.root_scale);
        assert!(ratio > 0.5 && ratio < 2.0, "{label}: hips height ratio {ratio}");
        let rest_place = PoseBuffers::new(&carried).worlds[root].w_axis.truncate().as_dvec3();
        let mut worst = 0.0f64;
        for (time, value) in times.iter().zip(&values) {
            let travel = DVec3::new(value[0] - rest[0], value[1] - rest[1], value[2] - rest[2]) * scale[0] * ratio;
            let pose = PoseBuffers::at(&carried, Some(clip), *time as f32);
            let moved = pose.worlds[root].w_axis.truncate().as_dvec3() - rest_place;
            // Compared by height and by horizontal distance, whichever way each rig faces.
            let horizontal = |v: DVec3| (v.x * v.x + v.z * v.z).sqrt();
            worst = worst
                .max((moved.y - travel.y).abs())
                .max((horizontal(moved) - horizontal(travel)).abs());
        }
        assert!(worst < 1e-4, "{label}: the hips stray {worst} m from the file's travel");
        let (degrees, where_) = worst_limb_degrees(&source, &doc, &carried, clip);
        println!(
            "idle_loop on {label}: hips travel within {worst:.1e} m of the file's centimetres ×0.01 ×{ratio:.3}; limbs within {degrees:.3}° ({where_})"
        );
        assert!(degrees < 0.5, "{label}: a limb strays {degrees:.2}° ({where_})");
    }
}

/// nop.vrma keys every channel once, at 0 s: the carried clip lasts 0 s and poses every joint
/// where the source's single keys put its limbs, at any time.
#[test]
fn single_keys_at_zero_carry_as_a_held_pose() {
    let (Some(dir), Some([(label, xbot), _])) = (vrma_folder(), humanoid_rigs()) else {
        return;
    };
    let path = dir.join("nop.vrma");
    let (source, doc) = (load_file(&path).expect("nop loads"), Doc::open(&path));
    let (carried, report) = carry(&xbot, &path);
    let clip = carried.find_clip(&report.clips[0].name).expect("the clip is added");
    assert_eq!(carried.clips[clip].duration, 0.0);
    for time in [0.0, 0.5, 10.0] {
        let pose = PoseBuffers::at(&carried, Some(clip), time);
        assert!(pose.worlds.iter().all(|w| w.is_finite()), "{label} at {time} s");
    }
    let (degrees, where_) = worst_limb_degrees(&source, &doc, &carried, clip);
    println!("nop on {label}: limbs within {degrees:.3}° ({where_})");
    assert!(degrees < 0.5, "{label}: a limb strays {degrees:.2}° ({where_})");
}

/// The value at `time` of a linearly keyed scalar or vector track.
fn linear(times: &[f64], values: &[Vec<f64>], time: f64) -> Vec<f64> {
    let next = times.iter().position(|&t| t > time).unwrap_or(times.len());
    if next == 0 {
        return values[0].clone();
    }
    if next == times.len() {
        return values[times.len() - 1].clone();
    }
    let s = (time - times[next - 1]) / (times[next] - times[next - 1]);
    (values[next - 1].iter().zip(&values[next]))
        .map(|(a, b)| a + (b - a) * s)
        .collect()
}

/// test.vrma's `happy` track on Godette (VRM 0.x): its `joy` blend shape group's binds take
/// the track's weight (translation X, clamped to [0, 1]) times the bind's weight in percent.
#[test]
fn an_expression_track_drives_the_avatars_blend_shape_binds() {
    let (Some(dir), Some(vrm)) = (vrma_folder(), common::shared_folder("corpus/motion/vrm")) else {
        return;
    };
    let path = dir.join("test.vrma");
    let doc = Doc::open(&path);
    let happy = common::index(&extension(&doc)["expressions"]["preset"]["happy"]["node"], "happy");
    let (times, values) = track(&doc, happy, "translation");
    let avatar = Doc::open(&vrm.join("Godette_vrm_v4.vrm"));
    let joy = common::array(
        &avatar.json["extensions"]["VRM"]["blendShapeMaster"],
        "blendShapeGroups",
    )
    .iter()
    .find(|g| g["presetName"] == "joy")
    .expect("Godette has a joy group");
    let binds: Vec<(usize, usize, f64)> = common::array(joy, "binds")
        .iter()
        .map(|b| {
            (
                common::index(&b["mesh"], "mesh"),
                common::index(&b["index"], "index"),
                b["weight"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(!binds.is_empty());
    let (carried, report) = carry(&vrm.join("Godette_vrm_v4.vrm"), &path);
    let clip = carried.find_clip(&report.clips[0].name).expect("the clip is added");
    assert_eq!(report.clips[0].matched_morph_channels, 1, "{}", report.summary());
    assert!(report.clips[0].dropped_expressions.is_empty());
    let mut compared = 0;
    let mut samples: Vec<f64> = times.clone();
    samples.extend(times.windows(2).map(|w| 0.5 * (w[0] + w[1])));
    for time in samples {
        let pose = PoseBuffers::at(&carried, Some(clip), time as f32);
        let weight = linear(&times, &values, time)[0].clamp(0.0, 1.0);
        for (instance, placed) in carried.instances.iter().enumerate() {
            let Some(weights) = pose.morph_weights.get(instance).filter(|w| !w.is_empty()) else {
                continue;
            };
            for (target, &got) in weights.iter().enumerate() {
                let want: f64 = (binds.iter())
                    .filter(|&&(mesh, index, _)| mesh == placed.mesh && index == target)
                    .map(|&(_, _, percent)| percent / 100.0 * weight)
                    .sum();
                assert!(
                    (f64::from(got) - want).abs() < 1e-5,
                    "mesh {} target {target} at {time} s: {got}, not {want}",
                    placed.mesh
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 0);
    // The track goes past 0 and 1 or reaches them: clamping shows.
    assert!(values.iter().any(|v| v[0] > 0.5), "the happy track rises");
}

/// test.vrma's gaze track (the lookAt node's rotation) turns Xbot's eyes and, on Godette, which
/// has no eye bones, its head: against the same file carried without its lookAt entry, each
/// turned joint's world turn gains a turn that takes the character's forward to the track's
/// rotation of +Z, turned as the rig faces.
#[test]
fn the_gaze_track_turns_the_eyes_or_the_head() {
    let (Some(dir), Some([(_, xbot), _]), Some(vrm)) = (
        vrma_folder(),
        humanoid_rigs(),
        common::shared_folder("corpus/motion/vrm"),
    ) else {
        return;
    };
    let path = dir.join("test.vrma");
    let (source, doc) = (load_file(&path).expect("test.vrma loads"), Doc::open(&path));
    let look = common::index(&extension(&doc)["lookAt"]["node"], "lookAt");
    let (times, values) = track(&doc, look, "rotation");
    let mut without = doc.json.clone();
    without["extensions"]["VRMC_vrm_animation"]
        .as_object_mut()
        .unwrap()
        .remove("lookAt");
    let no_gaze = common::temp_dir("vrma-gaze").join("no_gaze.vrma");
    std::fs::write(&no_gaze, common::gltf_with(without, &doc.buffers[0])).unwrap();
    let godette = vrm.join("Godette_vrm_v4.vrm");
    for (target, joints, legs) in [
        (
            &xbot,
            &["mixamorig:LeftEye", "mixamorig:RightEye"][..],
            ["mixamorig:LeftUpLeg", "mixamorig:RightUpLeg"],
        ),
        (
            &godette,
            &["head_Armature"][..],
            ["thigh.l_Armature", "thigh.r_Armature"],
        ),
    ] {
        let (carried, report) = carry(target, &path);
        let (plain, plain_report) = carry(target, &no_gaze);
        let clip = carried.find_clip(&report.clips[0].name).expect("the clip is added");
        let plain_clip = plain.find_clip(&plain_report.clips[0].name).expect("the clip is added");
        assert_eq!(report.clips[0].gaze, joints);
        assert!(plain_report.clips[0].gaze.is_empty());
        let rest = PoseBuffers::new(&carried);
        // Xbot's joints sit under a 0.01-scaled armature: the scale is left out.
        let world_rotation =
            |pose: &PoseBuffers, node: usize| pose.worlds[node].as_dmat4().to_scale_rotation_translation().1;
        let at = |pose: &PoseBuffers, node: usize| pose.worlds[node].w_axis.truncate().as_dvec3();
        let side = at(&rest, carried.find_node(legs[0]).unwrap()) - at(&rest, carried.find_node(legs[1]).unwrap());
        let source_rest = PoseBuffers::new(&source);
        let source_side = at(&source_rest, bone_node(&source, &doc, "leftUpperLeg"))
            - at(&source_rest, bone_node(&source, &doc, "rightUpperLeg"));
        let facing = DQuat::from_rotation_y(side.x.atan2(side.z) - source_side.x.atan2(source_side.z));
        let mut worst = 0.0f64;
        for (time, value) in times.iter().zip(&values) {
            let pose = PoseBuffers::at(&carried, Some(clip), *time as f32);
            let plain_pose = PoseBuffers::at(&plain, Some(plain_clip), *time as f32);
            let q = DQuat::from_xyzw(value[0], value[1], value[2], value[3]).normalize();
            let want = facing * (q * DVec3::Z);
            for joint in joints {
                let node = carried.find_node(joint).unwrap();
                let (turn, plain_turn) = (
                    world_rotation(&pose, node) * world_rotation(&rest, node).conjugate(),
                    world_rotation(&plain_pose, node) * world_rotation(&rest, node).conjugate(),
                );
                let got = plain_turn.conjugate() * turn * (facing * DVec3::Z);
                worst = worst.max(want.cross(got).length().atan2(want.dot(got)).to_degrees());
            }
        }
        println!(
            "test.vrma gaze on {}: {joints:?} look within {worst:.2e}° of the track",
            carried.name
        );
        assert!(worst < 0.01, "{}: the gaze strays {worst}°", carried.name);
    }
}

/// test.vrma with its extension broken one way at a time: each is refused with the VRMA error
/// that names the problem; cut anywhere, the file loads or fails, never panics.
#[test]
fn broken_vrma_extensions_are_refused_with_a_typed_error() {
    let Some(dir) = vrma_folder() else { return };
    let bytes = std::fs::read(dir.join("test.vrma")).unwrap();
    let doc = Doc::from_bytes(&bytes, None);
    let hips = extension(&doc)["humanoid"]["humanBones"]["hips"]["node"].clone();
    type Check = fn(&VrmaError) -> bool;
    let cases: [(&str, Value, Check); 6] = [
        ("/humanoid/humanBones/hips/node", json!(9999), |e| {
            matches!(
                e,
                VrmaError::NodeOutOfRange {
                    node: 9999,
                    count: 53,
                    ..
                }
            )
        }),
        ("/expressions/preset/happy/node", hips, |e| {
            matches!(e, VrmaError::NodeTwice { .. })
        }),
        (
            "/specVersion",
            json!("2.0"),
            |e| matches!(e, VrmaError::Version(v) if v == "2.0"),
        ),
        ("/humanoid", json!(5), |e| matches!(e, VrmaError::Shape { .. })),
        ("/lookAt/node", json!(-1), |e| matches!(e, VrmaError::Shape { .. })),
        ("/expressions/custom", json!({"wink": {"node": 1.5}}), |e| {
            matches!(e, VrmaError::Shape { .. })
        }),
    ];
    for (pointer, value, check) in cases {
        let mut json = doc.json.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        json["extensions"]["VRMC_vrm_animation"]
            .pointer_mut(parent)
            .unwrap_or_else(|| panic!("{parent}"))[key] = value;
        let file = common::gltf_with(json, &doc.buffers[0]);
        match load_slice(&file, None, "broken.vrma") {
            Err(RigError::Vrma(e)) => assert!(check(&e), "{pointer}: {e:?}"),
            other => panic!("{pointer}: {:?}", other.map(|r| r.name)),
        }
    }
    for end in (0..bytes.len()).step_by(61) {
        let _ = load_slice(&bytes[..end], None, "cut.vrma");
    }
}

/// The turn about +Y that makes `rig` face +Z with its left on +X, from its upper legs at rest
/// (`left` and `right` by name).
fn face_forward(rig: &Rig, left: &str, right: &str) -> DQuat {
    let rest = PoseBuffers::new(rig);
    let at = |name: &str| rest.worlds[rig.find_node(name).unwrap()].w_axis.truncate().as_dvec3();
    let side = at(left) - at(right);
    DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2 - side.x.atan2(side.z))
}

/// Writes clip `clip` of `rig` as VRM Animation, reads it back, and returns the largest joint
/// position error (a fraction of the rig's height) and turn error (degrees) over every written
/// key, against the rig's own clip turned to face +Z, and the number of bones compared.
fn vrma_round_trip(rig: &Rig, clip: usize, legs: [&str; 2]) -> (f64, f64, usize) {
    let bytes = rigscope::save::vrma::vrma_bytes(rig, clip).unwrap_or_else(|e| panic!("{}: {e}", rig.name));
    let back = load_slice(&bytes, None, "back.vrma").unwrap_or_else(|e| panic!("{} as VRMA: {e}", rig.name));
    let turn = face_forward(rig, legs[0], legs[1]);
    let height = f64::from(rigscope::anim::rig_height(rig));
    let compared: Vec<String> = back.nodes.iter().map(|n| n.name.clone()).collect();
    assert_eq!(
        back.facts.humanoid.len(),
        compared.len(),
        "every node written is a bone"
    );
    let (mut position, mut degrees) = (0.0f64, 0.0f64);
    for &time in &back.clips[0].channels[0].times {
        let (want, got) = (
            crate::bvh::joint_poses(rig, clip, time),
            crate::bvh::joint_poses(&back, 0, time),
        );
        for name in &compared {
            let ((p0, r0), (p1, r1)) = (want[name], got[name]);
            position = position.max((turn * p0 - p1).length() / height);
            degrees = degrees.max(rigscope::rig::degrees_between(turn * r0 * turn.conjugate(), r1));
        }
    }
    (position, degrees, compared.len())
}

/// A rig's own clip (Xbot, facing +Z) and a clip carried onto an avatar that faces −Z
/// (Godette) written as VRM Animation read back to the same bone places and turns, the avatar
/// turned to face +Z; the command writes the same file.
#[test]
fn a_clip_written_as_vrma_reads_back() {
    let (Some(dir), Some([(_, xbot), _]), Some(vrm)) = (
        vrma_folder(),
        humanoid_rigs(),
        common::shared_folder("corpus/motion/vrm"),
    ) else {
        return;
    };
    let rig = load_file(&xbot).expect("Xbot loads");
    let (position, degrees, bones) = vrma_round_trip(&rig, 0, ["mixamorig:LeftUpLeg", "mixamorig:RightUpLeg"]);
    println!(
        "Xbot '{}' → VRMA → back: {bones} bones within {position:.2e} of the height and {degrees:.2e}°",
        rig.clips[0].name
    );
    assert!(bones >= 20, "{bones} bones");
    assert!(
        position < 1e-4 && degrees < 0.01,
        "{position} of the height, {degrees}°"
    );

    let (godette, report) = carry(&vrm.join("Godette_vrm_v4.vrm"), &dir.join("idle_loop.vrma"));
    let clip = godette.find_clip(&report.clips[0].name).unwrap();
    let (position, degrees, bones) = vrma_round_trip(&godette, clip, ["thigh.l_Armature", "thigh.r_Armature"]);
    println!(
        "idle_loop on Godette → VRMA → back: {bones} bones within {position:.2e} of the height and {degrees:.2e}°"
    );
    assert!(
        position < 1e-4 && degrees < 0.01,
        "{position} of the height, {degrees}°"
    );

    let out = common::temp_dir("vrma-out").join("xbot.vrma");
    let (code, _, stderr) = common::run_rigscope(&["clips", xbot.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    let written = std::fs::read(&out).unwrap();
    assert_eq!(
        written,
        rigscope::save::vrma::vrma_bytes(&rig, 0).unwrap(),
        "the command writes the same file"
    );
}
