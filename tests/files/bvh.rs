//! BVH motion capture read and written. Every file of `../shared/corpus/motion/bvh` opens with
//! the counts its SOURCES.md states; joint positions are checked against values worked out by
//! hand and against an evaluation of the CMU walk's text written here, in f64, apart from the
//! importer; a written clip reads back to the same joint positions and turns; the CMU walk
//! carried onto Xbot and readyplayer.me points its limbs where the source points them.

use crate::common;

use glam::{DMat3, DQuat, DVec3};
use rigscope::anim::{PoseBuffers, rig_height};
use rigscope::retarget::{JointMap, RetargetOptions, load_clips_into};
use rigscope::rig::{BvhRotationOrder, LoadOptions, Rig, RigError, load_file, load_file_with};
use rigscope::save::bvh::{BvhOptions, bvh_text};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `../shared/corpus/motion/bvh` (see [`common::shared_folder`]).
fn bvh_folder() -> Option<PathBuf> {
    common::shared_folder("corpus/motion/bvh")
}

/// Reads lengths as written (one metre per unit), so that positions compare with the file's.
const AS_WRITTEN: LoadOptions = LoadOptions { bvh_scale: Some(1.0) };

fn load_bvh(path: &Path, options: &LoadOptions) -> Rig {
    load_file_with(path, options).unwrap_or_else(|e| panic!("{} failed to load: {e}", path.display()))
}

/// Each file's joints (ROOT and JOINT), end sites, channels, frames and frames a second, as
/// SOURCES.md gives them.
const CORPUS: &[(&str, usize, usize, usize, usize, f64)] = &[
    ("cmu_12_01_walk.bvh", 31, 7, 96, 524, 120.0),
    ("bvh_test1.bvh", 24, 5, 75, 75, 30.0),
    ("bvh_test2.bvh", 23, 5, 72, 61, 120.0),
    ("rotation_first_root.bvh", 4, 2, 15, 4, 25.0),
    ("full_precision_frame_time.bvh", 2, 1, 9, 3, 23.976),
    ("test_simple.bvh", 2, 1, 9, 2, 30.0),
];

#[test]
fn every_corpus_file_opens_with_the_counts_its_sources_state() {
    let Some(dir) = bvh_folder() else { return };
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("the BVH folder is readable")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".bvh"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CORPUS.iter().map(|c| c.0.to_owned()).collect();
    listed.sort();
    assert_eq!(
        on_disk, listed,
        "every BVH file of the corpus is checked, and only those"
    );
    for &(file, joints, end_sites, channels, frames, fps) in CORPUS {
        let started = std::time::Instant::now();
        let rig = load_file(&dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let seconds = started.elapsed().as_secs_f64();
        let facts = rig.facts.bvh.as_ref().expect("BVH facts");
        assert_eq!(
            (facts.joints, facts.end_sites, facts.channels, facts.frames),
            (joints, end_sites, channels, frames),
            "{file}"
        );
        assert_eq!(rig.nodes.len(), joints + end_sites, "{file}");
        let leaves = (0..rig.nodes.len()).filter(|&n| rig.hierarchy().children[n].is_empty());
        assert_eq!(leaves.count(), end_sites, "{file}: every chain ends at an end site");
        assert!(
            rig.hierarchy().bones.iter().all(|&bone| bone),
            "{file}: every node is drawn"
        );
        let clip = &rig.clips[0];
        assert!(clip.channels.iter().all(|c| c.times.len() == frames), "{file}");
        let rate = 1.0 / facts.frame_time;
        assert!((rate - fps).abs() < 1e-3 * fps, "{file}: {rate} fps, not {fps}");
        let last = ((frames - 1) as f64 * facts.frame_time) as f32;
        assert_eq!(clip.duration, last, "{file}");
        println!(
            "{file}: {joints} joints + {end_sites} end sites, {frames} frames at {rate:.3} fps, read as {} (×{}), loaded in {:.2} ms",
            facts.unit,
            facts.unit.metres(),
            seconds * 1e3
        );
    }
}

#[test]
fn a_frame_time_of_23_976_fps_is_kept_to_the_last_digit() {
    let Some(dir) = bvh_folder() else { return };
    let rig = load_file(&dir.join("full_precision_frame_time.bvh")).unwrap();
    let facts = rig.facts.bvh.as_ref().unwrap();
    assert_eq!(facts.frame_time, 0.0417083750417);
    let times = &rig.clips[0].channels[0].times;
    let frame_time = 0.0417083750417f64;
    assert_eq!(times, &[0.0, frame_time as f32, (2.0 * frame_time) as f32]);
    // 24 fps would put the last frame here.
    assert_ne!(times[2], (2.0 / 24.0f64) as f32);
}

/// Two joints and an end site, the root turned 90° about Z and the child 90° about X: the
/// positions follow by hand (a 90° turn about Z takes +Y to −X, about X takes +Y to +Z).
#[test]
fn joints_land_where_hand_worked_turns_put_them() {
    let text = "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
                \tJOINT Chest\n\t{\n\t\tOFFSET 0 2 0\n\t\tCHANNELS 3 Xrotation Yrotation Zrotation\n\t\tEnd Site\n\t\t{\n\
                \t\t\tOFFSET 0 1 0\n\t\t}\n\t}\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n\
                0 0 0 0 0 0 0 0 0\n1 2 3 90 0 0 90 0 0\n";
    let rig = rigscope::rig::load_slice_with(text.as_bytes(), None, "hand.bvh", &AS_WRITTEN).unwrap();
    let pose = PoseBuffers::at(&rig, Some(0), 0.5);
    let at = |node: usize| pose.worlds[node].w_axis.truncate().to_array();
    // Hips at its position channels; Chest 2 along the turned +Y, so at (1 − 2, 2, 3); the end
    // 1 along +Y turned about X (to +Z), then about Z (+Z stays), so at (−1, 2, 4).
    let expected = [[1.0, 2.0, 3.0], [-1.0, 2.0, 3.0], [-1.0, 2.0, 4.0]];
    for (node, want) in expected.iter().enumerate() {
        let got = at(node);
        let error = got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0f32, f32::max);
        assert!(error < 1e-6, "{}: {got:?}, not {want:?}", rig.nodes[node].name);
    }
    // Halfway, the turns are half done: the chest at (−√2, √2) about the hips' place.
    let halfway = PoseBuffers::at(&rig, Some(0), 0.25);
    let chest = halfway.worlds[1].w_axis.truncate();
    let (s, c) = (45f32.to_radians().sin(), 45f32.to_radians().cos());
    let want = glam::Vec3::new(0.5 - 2.0 * s, 1.0 + 2.0 * c, 1.5);
    assert!((chest - want).length() < 1e-5, "{chest} not {want}");
}

/// A BVH file's joints and frames, read here apart from the importer, and every joint's world
/// position at a frame computed in f64 with rotation matrices.
struct Reference {
    names: Vec<String>,
    parents: Vec<Option<usize>>,
    offsets: Vec<DVec3>,
    /// Per joint, its channels as (is a position, axis 0..3).
    channels: Vec<Vec<(bool, usize)>>,
    frames: Vec<Vec<f64>>,
    frame_time: f64,
}

impl Reference {
    fn read(text: &str) -> Reference {
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).collect();
        let mut reference = Reference {
            names: Vec::new(),
            parents: Vec::new(),
            offsets: Vec::new(),
            channels: Vec::new(),
            frames: Vec::new(),
            frame_time: 0.0,
        };
        let mut open: Vec<usize> = Vec::new();
        let mut k = 0;
        while k < lines.len() {
            let words = &lines[k];
            k += 1;
            match words.first().copied() {
                Some("ROOT" | "JOINT") | Some("End") => {
                    let name = if words[0] == "End" {
                        format!("{}_End", reference.names[*open.last().unwrap()])
                    } else {
                        words[1..].join(" ")
                    };
                    reference.names.push(name);
                    reference.parents.push(open.last().copied());
                    reference.offsets.push(DVec3::ZERO);
                    reference.channels.push(Vec::new());
                    open.push(reference.names.len() - 1);
                }
                Some("OFFSET") => {
                    let v: Vec<f64> = words[1..4].iter().map(|w| w.parse().unwrap()).collect();
                    reference.offsets[*open.last().unwrap()] = DVec3::new(v[0], v[1], v[2]);
                }
                Some("CHANNELS") => {
                    reference.channels[*open.last().unwrap()] = words[2..]
                        .iter()
                        .map(|w| (w.ends_with("position"), "XYZ".find(&w[..1]).unwrap()))
                        .collect();
                }
                Some("}") => {
                    open.pop();
                }
                Some("Frame") => {
                    reference.frame_time = words[2].parse().unwrap();
                    reference.frames = lines[k..]
                        .iter()
                        .filter(|l| !l.is_empty())
                        .map(|l| l.iter().map(|w| w.parse().unwrap()).collect())
                        .collect();
                    break;
                }
                _ => {}
            }
        }
        reference
    }

    /// Every joint's world position at frame `f`, in file units.
    fn positions(&self, f: usize) -> Vec<DVec3> {
        let rotation = |axis: usize, degrees: f64| {
            let (s, c) = degrees.to_radians().sin_cos();
            match axis {
                0 => DMat3::from_cols_array(&[1.0, 0.0, 0.0, 0.0, c, s, 0.0, -s, c]),
                1 => DMat3::from_cols_array(&[c, 0.0, -s, 0.0, 1.0, 0.0, s, 0.0, c]),
                _ => DMat3::from_cols_array(&[c, s, 0.0, -s, c, 0.0, 0.0, 0.0, 1.0]),
            }
        };
        let mut values = self.frames[f].iter();
        let mut worlds: Vec<(DMat3, DVec3)> = Vec::new();
        for (j, channels) in self.channels.iter().enumerate() {
            let mut local = DMat3::IDENTITY;
            let mut place = self.offsets[j];
            for &(position, axis) in channels {
                let value = *values.next().unwrap();
                if position {
                    place[axis] = value;
                } else {
                    local *= rotation(axis, value);
                }
            }
            worlds.push(match self.parents[j] {
                Some(p) => (worlds[p].0 * local, worlds[p].1 + worlds[p].0 * place),
                None => (local, place),
            });
        }
        worlds.into_iter().map(|(_, position)| position).collect()
    }
}

#[test]
fn the_cmu_walk_poses_every_joint_where_its_text_puts_it() {
    let Some(dir) = bvh_folder() else { return };
    let path = dir.join("cmu_12_01_walk.bvh");
    let reference = Reference::read(&std::fs::read_to_string(&path).unwrap());
    let rig = load_bvh(&path, &LoadOptions::default());
    let names: Vec<&str> = rig.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, reference.names);
    let metres = rig.facts.bvh.as_ref().unwrap().unit.metres();
    let height = f64::from(rig_height(&rig)) / metres;
    let mut pose = PoseBuffers::new(&rig);
    let mut worst = 0.0f64;
    for f in 0..reference.frames.len() {
        pose.evaluate(&rig, Some(0), (f as f64 * reference.frame_time) as f32);
        for (node, want) in reference.positions(f).into_iter().enumerate() {
            let got = pose.worlds[node].w_axis.truncate().as_dvec3() / metres;
            worst = worst.max((got - want).length());
        }
    }
    println!(
        "CMU walk: {} frames × {} joints, worst {worst:.3e} file units ({:.2e} of the height {height:.2})",
        reference.frames.len(),
        rig.nodes.len(),
        worst / height
    );
    assert!(
        worst < 1e-5 * height,
        "a joint is {worst} units from where the text puts it"
    );
}

/// Per node name: the world position and the world turn from the rest pose at `time`.
pub(crate) fn joint_poses(rig: &Rig, clip: usize, time: f32) -> HashMap<String, (DVec3, DQuat)> {
    let world_rotations = |pose: &PoseBuffers| {
        let mut rotations: Vec<DQuat> = Vec::with_capacity(rig.nodes.len());
        for (node, data) in rig.nodes.iter().enumerate() {
            let local = pose.locals[node].rotation.as_dquat();
            rotations.push(data.parent.map_or(local, |p| rotations[p] * local));
        }
        rotations
    };
    let rest = world_rotations(&PoseBuffers::new(rig));
    let pose = PoseBuffers::at(rig, Some(clip), time);
    let now = world_rotations(&pose);
    (rig.nodes.iter().enumerate())
        .map(|(n, node)| {
            let place = pose.worlds[n].w_axis.truncate().as_dvec3();
            (node.name.clone(), (place, now[n] * rest[n].conjugate()))
        })
        .collect()
}

/// Writes clip `clip` of `rig` as BVH, reads it back in metres, and returns the largest joint
/// position error (as a fraction of the rig's height) and turn error (degrees) over every frame
/// written, and the number of joints compared.
fn round_trip(rig: &Rig, clip: usize, order: BvhRotationOrder) -> (f64, f64, usize, Rig) {
    let options = BvhOptions { order, rate: None };
    let text = bvh_text(rig, clip, &options).unwrap_or_else(|e| panic!("{}: {e}", rig.name));
    let back = rigscope::rig::load_slice_with(text.as_bytes(), None, "back.bvh", &AS_WRITTEN)
        .unwrap_or_else(|e| panic!("{} written as BVH does not read back: {e}", rig.name));
    let height = f64::from(rig_height(rig));
    let bones = &rig.hierarchy().bones;
    let compared: Vec<&str> = (rig.nodes.iter().enumerate())
        .filter(|&(n, node)| bones[n] && back.find_node(&node.name).is_some())
        .map(|(_, node)| node.name.as_str())
        .collect();
    let (mut position, mut turn) = (0.0f64, 0.0f64);
    for &time in &back.clips[0].channels[0].times {
        let (want, got) = (joint_poses(rig, clip, time), joint_poses(&back, 0, time));
        for name in &compared {
            let ((p0, r0), (p1, r1)) = (want[*name], got[*name]);
            position = position.max((p0 - p1).length() / height);
            turn = turn.max(rigscope::rig::degrees_between(r0, r1));
        }
    }
    (position, turn, compared.len(), back)
}

#[test]
fn the_cmu_walk_written_as_bvh_reads_back_in_every_rotation_order() {
    let Some(dir) = bvh_folder() else { return };
    let rig = load_bvh(&dir.join("cmu_12_01_walk.bvh"), &LoadOptions::default());
    for &order in <BvhRotationOrder as strum::VariantArray>::VARIANTS {
        let (position, turn, joints, back) = round_trip(&rig, 0, order);
        println!("CMU walk → BVH {order} → back: {joints} joints within {position:.2e} of the height and {turn:.2e}°");
        assert_eq!(joints, rig.nodes.len(), "every joint and end site keeps its name");
        assert!(
            position < 1e-4 && turn < 0.01,
            "{order}: {position} of the height, {turn}°"
        );
        let facts = back.facts.bvh.as_ref().unwrap();
        assert_eq!(facts.frames, 524);
        assert_eq!(facts.frame_time, rig.facts.bvh.as_ref().unwrap().frame_time);
    }
}

#[test]
fn every_corpus_file_reads_back_after_writing() {
    let Some(dir) = bvh_folder() else { return };
    for &(file, ..) in CORPUS {
        let rig = load_bvh(&dir.join(file), &LoadOptions::default());
        let (position, turn, joints, back) = round_trip(&rig, 0, BvhRotationOrder::Zxy);
        println!("{file} → BVH → back: {joints} joints within {position:.2e} of the height and {turn:.2e}°");
        assert_eq!(joints, rig.nodes.len(), "{file}");
        assert!(
            position < 1e-4 && turn < 0.01,
            "{file}: {position} of the height, {turn}°"
        );
        let (facts, back_facts) = (rig.facts.bvh.as_ref().unwrap(), back.facts.bvh.as_ref().unwrap());
        assert_eq!(
            (back_facts.frames, back_facts.frame_time),
            (facts.frames, facts.frame_time),
            "{file}"
        );
    }
}

/// `../shared/rigs/real/Xbot.glb` and `../shared/corpus/rigs/readyplayer.me.glb`.
fn humanoid_rigs() -> Option<[(String, PathBuf); 2]> {
    let rigs = common::shared_rigs()?;
    let corpus = common::shared_folder("corpus/rigs")?;
    Some([
        ("Xbot".to_owned(), rigs.join("real/Xbot.glb")),
        ("readyplayer.me".to_owned(), corpus.join("readyplayer.me.glb")),
    ])
}

#[test]
fn a_glb_clip_and_a_carried_clip_written_as_bvh_read_back() {
    let (Some(dir), Some([(_, xbot), _])) = (bvh_folder(), humanoid_rigs()) else {
        return;
    };
    let xbot = load_file(&xbot).expect("Xbot loads");
    let (position, turn, joints, _) = round_trip(&xbot, 0, BvhRotationOrder::Zxy);
    println!(
        "Xbot '{}' → BVH → back: {joints} joints within {position:.2e} of the height and {turn:.2e}°",
        xbot.clips[0].name
    );
    assert!(joints > 50, "only {joints} joints compared");
    assert!(position < 1e-4 && turn < 0.01, "{position} of the height, {turn}°");

    let walk = dir.join("cmu_12_01_walk.bvh");
    let (carried, _) = load_clips_into(
        xbot,
        &walk,
        (&Default::default(), &JointMap::default()),
        &RetargetOptions::default(),
    )
    .expect("the walk carries onto Xbot");
    let clip = carried.find_clip("cmu_12_01_walk").expect("the walk is added");
    let (position, turn, joints, back) = round_trip(&carried, clip, BvhRotationOrder::Yxz);
    println!("the walk on Xbot → BVH → back: {joints} joints within {position:.2e} of the height and {turn:.2e}°");
    assert!(position < 1e-4 && turn < 0.01, "{position} of the height, {turn}°");
    let rate = 1.0 / back.facts.bvh.as_ref().unwrap().frame_time;
    assert!(
        (rate - 120.0).abs() < 0.01,
        "the carried walk keeps the source's 120 fps, not {rate}"
    );
}

/// The limbs compared between a source and a carried clip, as (from, to) joints by the name
/// both skeletons give them (Mixamo's prefix left out).
const LIMBS: &[(&str, &str)] = &[
    ("LeftArm", "LeftForeArm"),
    ("LeftForeArm", "LeftHand"),
    ("RightArm", "RightForeArm"),
    ("RightForeArm", "RightHand"),
    ("LeftUpLeg", "LeftLeg"),
    ("LeftLeg", "LeftFoot"),
    ("RightUpLeg", "RightLeg"),
    ("RightLeg", "RightFoot"),
];

fn node_named(rig: &Rig, name: &str) -> usize {
    (rig.nodes.iter())
        .position(|n| n.name == name || n.name.rsplit(':').next() == Some(name))
        .unwrap_or_else(|| panic!("{}: no joint {name}", rig.name))
}

/// The turn about +Y from the way `source` faces to the way `target` faces at rest, read from
/// the hips' left and right legs.
fn facing(source: &Rig, target: &Rig) -> DQuat {
    let heading = |rig: &Rig| {
        let rest = PoseBuffers::new(rig);
        let at = |name| rest.worlds[node_named(rig, name)].w_axis.truncate().as_dvec3();
        let side = at("LeftUpLeg") - at("RightUpLeg");
        side.x.atan2(side.z)
    };
    DQuat::from_rotation_y(heading(target) - heading(source))
}

/// The largest angle between a limb of the walk and the same limb carried onto `target`, at
/// every 10th frame, the source turned to face as the target does.
fn worst_limb_degrees(source: &Rig, target: &Rig, target_clip: usize) -> (f64, String) {
    let turn = facing(source, target);
    let facts = source.facts.bvh.as_ref().unwrap();
    let (mut source_pose, mut target_pose) = (PoseBuffers::new(source), PoseBuffers::new(target));
    let mut worst = (0.0, String::new());
    for f in (0..facts.frames).step_by(10) {
        let time = (f as f64 * facts.frame_time) as f32;
        source_pose.evaluate(source, Some(0), time);
        target_pose.evaluate(target, Some(target_clip), time);
        for (from, to) in LIMBS {
            let direction = |rig: &Rig, pose: &PoseBuffers| {
                let at = |name| pose.worlds[node_named(rig, name)].w_axis.truncate().as_dvec3();
                (at(to) - at(from)).normalize()
            };
            let (want, got) = (turn * direction(source, &source_pose), direction(target, &target_pose));
            let degrees = want.cross(got).length().atan2(want.dot(got)).to_degrees();
            if degrees > worst.0 {
                worst = (degrees, format!("{from}→{to} at frame {f}"));
            }
        }
    }
    worst
}

#[test]
fn the_cmu_walk_carried_onto_xbot_and_readyplayer_me_points_its_limbs_as_the_source() {
    let (Some(dir), Some(targets)) = (bvh_folder(), humanoid_rigs()) else {
        return;
    };
    let walk = dir.join("cmu_12_01_walk.bvh");
    let source = load_bvh(&walk, &LoadOptions::default());
    for (label, path) in targets {
        let target = load_file(&path).unwrap_or_else(|e| panic!("{label}: {e}"));
        let (carried, report) = load_clips_into(
            target,
            &walk,
            (&Default::default(), &JointMap::default()),
            &RetargetOptions::default(),
        )
        .unwrap_or_else(|e| panic!("the walk onto {label}: {e}"));
        let clip_report = &report.clips[0];
        let clip = carried.find_clip(&clip_report.name).expect("the walk is added");
        let (measured, where_) = worst_limb_degrees(&source, &carried, clip);
        let worst = clip_report.worst_limb().expect("the walk has bones");
        println!(
            "CMU walk on {label}: {} of {} channels matched; limbs measured here within {measured:.3}° ({where_}); \
             the report's worst bone {} → {} {:.3}° at {:.2} s",
            clip_report.matched_channels,
            source.clips[0].channels.len(),
            worst.joint,
            worst.child,
            worst.degrees,
            worst.time
        );
        print!("{}", report.summary());
        assert!(
            measured < 0.5,
            "{label}: a limb strays {measured:.2}° from the walk's ({where_})"
        );
        // Every channel but those of the CMU joints a Mixamo-like skeleton has no counterpart
        // for: the hip offsets, the second neck joint, the finger bases and the thumbs.
        let unmatched = [
            "LHipJoint",
            "RHipJoint",
            "Neck1",
            "LeftFingerBase",
            "LThumb",
            "RightFingerBase",
            "RThumb",
        ];
        assert_eq!(report.joints.unmatched_source, unmatched, "{label}");
        assert_eq!(clip_report.matched_channels, 25, "{label}");
    }
}

#[test]
fn the_unit_is_guessed_or_given() {
    let Some(dir) = bvh_folder() else { return };
    let path = dir.join("bvh_test2.bvh");
    let guessed = load_bvh(&path, &LoadOptions::default());
    let given = load_bvh(&path, &LoadOptions { bvh_scale: Some(0.5) });
    let facts = guessed.facts.bvh.as_ref().unwrap();
    assert_eq!(
        facts.unit,
        rigscope::rig::BvhUnit::Centimetre,
        "a 182-unit skeleton is in centimetres"
    );
    let height = |rig: &Rig| f64::from(rig_height(rig));
    assert!((height(&guessed) - 1.82).abs() < 0.01, "{}", height(&guessed));
    assert!((height(&given) - 0.5 * 182.346).abs() < 0.05, "{}", height(&given));
}

/// Errors by kind through the public entry, with the line they are on.
#[test]
fn broken_files_are_refused_with_the_line_of_the_problem() {
    let Some(dir) = bvh_folder() else { return };
    let original = std::fs::read_to_string(dir.join("rotation_first_root.bvh")).unwrap();
    let line_of = |needle: &str| original.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let frames_line = line_of("Frames:");
    let cases: Vec<(String, usize, &str)> = vec![
        (
            original.replacen("JOINT Head", "BONE Head", 1),
            line_of("JOINT Head"),
            "unknown keyword 'BONE'",
        ),
        (
            original.replacen("Frames: 4", "Frames: 5", 1),
            original.lines().count() + 1,
            "cut short",
        ),
        (
            original.replacen("Frames: 4", "Frames: 3", 1),
            frames_line + 5,
            "more lines of values",
        ),
        (
            original.replacen("7.000000 -1.000000", "nan -1.000000", 1),
            frames_line + 4,
            "'nan' is not a finite number",
        ),
        (
            original.replacen("CHANNELS 3 Xrotation", "CHANNELS 4 Xrotation", 1),
            line_of("CHANNELS 3 Xrotation"),
            "CHANNELS says 4 but names 3",
        ),
        (
            original.replacen("Frames: 4", "Frames: 4000000000", 1),
            frames_line,
            "more than the",
        ),
    ];
    for (text, line, message) in cases {
        let (result, allocated) =
            common::counting::watch(|| rigscope::rig::load_slice(text.as_bytes(), None, "broken.bvh"));
        let error = match result {
            Err(RigError::Bvh(error)) => error,
            other => panic!("expected a BVH error ({message}), got {other:?}"),
        };
        assert_eq!(error.line, line, "{error}");
        assert!(error.to_string().contains(message), "{error}");
        assert!(
            allocated.largest < 1 << 20,
            "{error}: an allocation of {} bytes",
            allocated.largest
        );
    }
}

/// xorshift64*: a fixed sequence, so that a failure is reproducible.
struct Choose(u64);

impl Choose {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// Numbers that claim far more than any file holds, or are no finite number.
const HOSTILE_NUMBERS: [&str; 7] = [
    "4294967295",
    "18446744073709551616",
    "99999999999",
    "-1",
    "nan",
    "inf",
    "1e308",
];

/// The shared BVH files truncated, with bytes overwritten and with numbers (counts among them)
/// replaced by hostile ones: each loads or fails with a BVH error, never panics, never makes an
/// allocation near what a claim the text does not back would take, and takes little time. The
/// `load_bvh` fuzz target explores the same space without end.
#[test]
fn mutated_corpus_files_load_or_fail_with_a_bvh_error() {
    let Some(dir) = bvh_folder() else { return };
    let mut choose = Choose(0x9e37_79b9_7f4a_7c15);
    let (mut loaded, mut refused, mut failures) = (0, 0, Vec::new());
    let mut kinds: HashMap<String, usize> = HashMap::new();
    for &(file, ..) in CORPUS {
        let original = std::fs::read(dir.join(file)).unwrap();
        let numbers: Vec<usize> = (1..original.len())
            .filter(|&i| original[i].is_ascii_digit() && original[i - 1].is_ascii_whitespace())
            .collect();
        let per_kind = if original.len() > 100_000 { 12 } else { 80 };
        for kind in 0..3 {
            for k in 0..per_kind {
                let mut bytes = original.clone();
                let what = match kind {
                    0 => {
                        let at = choose.below(bytes.len());
                        bytes.truncate(at);
                        format!("cut at {at}")
                    }
                    1 => {
                        let mut set = Vec::new();
                        for _ in 0..1 + choose.below(6) {
                            let (at, value) = (choose.below(bytes.len()), choose.below(256) as u8);
                            bytes[at] = value;
                            set.push(format!("{at}={value}"));
                        }
                        format!("bytes {}", set.join(","))
                    }
                    _ => {
                        let at = numbers[choose.below(numbers.len())];
                        let end = at + bytes[at..].iter().take_while(|b| b.is_ascii_digit()).count();
                        let number = HOSTILE_NUMBERS[choose.below(HOSTILE_NUMBERS.len())];
                        bytes.splice(at..end, number.bytes());
                        format!("number at {at} set to {number}")
                    }
                };
                let started = std::time::Instant::now();
                let (result, allocated) = common::counting::watch(|| {
                    std::panic::catch_unwind(|| {
                        rigscope::rig::load_slice(&bytes, None, "mutated.bvh")
                            .map(|rig| rigscope::report::RigReport::new(&rig).findings.len())
                    })
                });
                let case = format!("{file} #{kind}.{k} ({what})");
                match result {
                    Err(_) => failures.push(format!("{case}: panicked")),
                    Ok(Err(RigError::Bvh(e))) => {
                        refused += 1;
                        *kinds
                            .entry(format!("{:?}", e.kind).split(['(', ' ']).next().unwrap().to_owned())
                            .or_default() += 1;
                    }
                    Ok(Err(e)) => failures.push(format!("{case}: not a BVH error: {e}")),
                    Ok(Ok(_)) => loaded += 1,
                }
                // The CMU walk's keys take about 2 MB; no claim may reach far past that.
                if allocated.largest >= 16 << 20 {
                    failures.push(format!("{case}: one allocation of {} bytes", allocated.largest));
                }
                if started.elapsed() > std::time::Duration::from_secs(2) {
                    failures.push(format!("{case}: took {:?}", started.elapsed()));
                }
            }
        }
    }
    let mut kinds: Vec<_> = kinds.into_iter().collect();
    kinds.sort();
    println!(
        "{loaded} mutated files loaded, {refused} refused ({kinds:?}), {} misbehaved",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        refused > loaded,
        "the mutations reach the reader's checks: {refused} refused, {loaded} loaded"
    );
}

/// The command line: a BVH file inspected (with its curves), audited for motion, written back
/// with another rotation order, and carried onto Xbot and written as BVH.
#[test]
fn the_commands_read_and_write_bvh() {
    let (Some(dir), Some([(_, xbot), _])) = (bvh_folder(), humanoid_rigs()) else {
        return;
    };
    let walk = dir.join("cmu_12_01_walk.bvh");
    let walk = walk.to_str().unwrap();
    let (status, out, err) = common::run_rigscope(&["inspect", walk]);
    assert!(status == Some(0) || status == Some(1), "{err}");
    assert!(
        out.contains("BVH motion capture: 31 joints, 7 end sites, 96 channels, 524 frames"),
        "{out}"
    );
    let (status, out, err) = common::run_rigscope(&["inspect", walk, "--bvh-scale", "0.01"]);
    assert!(status == Some(0) || status == Some(1), "{err}");
    assert!(out.contains("units of 0.01 m, as given"), "{out}");
    let (status, out, err) = common::run_rigscope(&["inspect", walk, "--curves", "--joint", "LeftArm"]);
    assert_eq!(status, Some(0), "{err}");
    assert!(out.contains("rotation"), "{out}");
    let (status, out, err) = common::run_rigscope(&["audit", walk, "--motion"]);
    assert!(status == Some(0) || status == Some(1), "{err}");
    assert!(out.contains("cmu_12_01_walk"), "{out}");

    let folder = common::temp_dir("bvh-commands");
    let written = folder.join("walk-xyz.bvh");
    let (status, out, err) =
        common::run_rigscope(&["clips", walk, "--out", written.to_str().unwrap(), "--bvh-order", "XYZ"]);
    assert_eq!(status, Some(0), "{out}{err}");
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(
        text.contains("CHANNELS 3 Xrotation Yrotation Zrotation"),
        "{}",
        &text[..400]
    );
    let back = load_bvh(&written, &AS_WRITTEN);
    assert_eq!(back.facts.bvh.as_ref().unwrap().frames, 524);

    let carried = folder.join("walk-on-xbot.bvh");
    let xbot = xbot.to_str().unwrap();
    let args = [
        "clips",
        xbot,
        "--add",
        walk,
        "--clip",
        "cmu_12_01_walk",
        "--out",
        carried.to_str().unwrap(),
    ];
    let (status, out, err) = common::run_rigscope(&args);
    assert_eq!(status, Some(0), "{out}{err}");
    let back = load_bvh(&carried, &AS_WRITTEN);
    assert!(
        back.find_node("mixamorig:LeftArm").is_some(),
        "Xbot's skeleton is written"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 2, "no temporary file is left: {leftovers:?}");

    let broken = folder.join("broken.bvh");
    std::fs::write(&broken, "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n}\n").unwrap();
    let (status, _, err) = common::run_rigscope(&["inspect", broken.to_str().unwrap()]);
    assert_eq!(status, Some(2), "{err}");
    assert!(err.contains("BVH line 4: expected three numbers after OFFSET"), "{err}");
}
