//! Joints of clips from another file mapped by hand: the table lists what name matching leaves
//! unmatched, a pair set by hand makes the joint play the source's motion (joint world
//! transforms against the source file's keys composed in f64), and the pair is kept in the
//! settings for that pair of skeletons and used on the next load.

use crate::common;

use egui_kittest::kittest::Queryable;
use glam::{DMat4, DQuat, DVec3};
use rigscope::retarget::{JointMap, match_joints};
use rigscope::settings::Settings;
use rigscope::ui::UiState;
use rigscope::viewer::Viewer;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The demo joint the clip file renames, and its name there (no name rule pairs the two).
const RENAMED: (&str, &str) = ("joint3", "Segment 3");
const CLIP: &str = "Wave";
const CARRIED: &str = "Wave (clips.gltf)";

/// The demo rig written as a .gltf with `RENAMED` renamed, in `dir`.
fn clip_file(dir: &Path) -> PathBuf {
    let glb = rigscope::rig::demo::demo_glb(rigscope::rig::demo::DEMO_JOINTS);
    let (json, bin) = common::split_glb(&glb);
    let mut json: Value = serde_json::from_slice(json).unwrap();
    let nodes = json["nodes"].as_array_mut().unwrap();
    let node = (nodes.iter_mut())
        .find(|n| n["name"] == RENAMED.0)
        .expect("the demo has the joint");
    node["name"] = RENAMED.1.into();
    json.as_object_mut().unwrap().remove("buffers");
    let path = dir.join("clips.gltf");
    std::fs::write(&path, common::gltf_with(json, bin.unwrap())).unwrap();
    path
}

/// Per key time of `clip` in the glTF file at `path`, the world matrix of every node by name,
/// composed in f64 from the file's JSON: rest transforms, and each animated rotation's key value
/// (the middle of a cubic spline's three values) at that time.
fn worlds_at_keys(path: &Path, clip: &str) -> Vec<(f64, Vec<(String, DMat4)>)> {
    let doc = common::Doc::open(path);
    let nodes = doc.array("nodes");
    let mut parent = vec![None; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for child in common::array(node, "children") {
            parent[common::index(child, "child")] = Some(i);
        }
    }
    let animation = (doc.array("animations").iter())
        .find(|a| a["name"] == clip)
        .expect("the clip");
    let samplers = common::array(animation, "samplers");
    let channels = common::array(animation, "channels");
    let times = doc.read_floats(common::index(&samplers[0]["input"], "input"));
    (0..times.len())
        .map(|key| {
            let mut rotations: Vec<DQuat> = (nodes.iter())
                .map(|n| DQuat::from_array(common::json_rest_trs(n).1))
                .collect();
            for channel in channels {
                assert_eq!(channel["target"]["path"], "rotation");
                let sampler = &samplers[common::index(&channel["sampler"], "sampler")];
                assert_eq!(sampler["interpolation"], "CUBICSPLINE");
                assert_eq!(doc.read_floats(common::index(&sampler["input"], "input")), times);
                let values = doc.read_floats(common::index(&sampler["output"], "output"));
                let v = &values[3 * key + 1];
                rotations[common::index(&channel["target"]["node"], "node")] =
                    DQuat::from_xyzw(v[0], v[1], v[2], v[3]).normalize();
            }
            let local = |i: usize| {
                let (t, _, s) = common::json_rest_trs(&nodes[i]);
                DMat4::from_scale_rotation_translation(DVec3::from(s), rotations[i], DVec3::from(t))
            };
            let world = |mut i: usize| {
                let mut world = local(i);
                while let Some(p) = parent[i] {
                    world = local(p) * world;
                    i = p;
                }
                world
            };
            let worlds = (0..nodes.len()).map(|i| (common::json_node_name(&doc.json, i), world(i)));
            (times[key][0], worlds.collect())
        })
        .collect()
}

fn wait_for_load(viewer: &mut Viewer) {
    viewer.wait_for_load();
    assert!(viewer.loading().is_none(), "the load never finished");
    assert_eq!(viewer.diagnostics.error, None);
}

/// The largest difference, over the clip file's key times and the joints both rigs have under
/// the same name or as `RENAMED`, between the viewer's carried clip's joint world matrices and
/// the source's.
fn largest_error(viewer: &mut Viewer, source: &[(f64, Vec<(String, DMat4)>)]) -> f64 {
    let clip = viewer.rig().find_clip(CARRIED).expect("the carried clip");
    viewer.select_clip(Some(clip));
    let mut largest = 0.0f64;
    for (time, worlds) in source {
        viewer.seek(*time as f32);
        for (name, expected) in worlds {
            let target_name = if name == RENAMED.1 { RENAMED.0 } else { name };
            let Some(node) = viewer.rig().find_node(target_name) else {
                continue;
            };
            let actual = viewer.pose().worlds[node].as_dmat4();
            let error = (actual.to_cols_array().iter().zip(expected.to_cols_array()))
                .map(|(a, e)| (a - e).abs())
                .fold(0.0, f64::max);
            largest = largest.max(error);
        }
    }
    largest
}

#[test]
fn a_joint_mapped_by_hand_plays_the_source_motion_and_the_map_is_kept_for_the_next_load() {
    let dir = tempfile::tempdir().unwrap();
    let file = clip_file(dir.path());
    let source_rig = rigscope::rig::load_file(&file).unwrap();
    let source_worlds = worlds_at_keys(&file, CLIP);
    assert!(source_worlds.len() > 2);

    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.load_clips_from(file.clone());
    wait_for_load(&mut viewer);

    // The table lists what name matching leaves unmatched, on both sides.
    let by_name = match_joints(&source_rig, viewer.rig(), &JointMap::default());
    let tables = viewer.joint_map_tables();
    assert_eq!(tables.len(), 1);
    let table = &tables[0];
    assert_eq!(table.file, file);
    assert_eq!(table.key, JointMap::key(&source_rig, viewer.rig()));
    assert_eq!(table.unmatched_source, by_name.unmatched_source);
    assert_eq!(table.unmatched_target, by_name.unmatched_target);
    assert_eq!(table.unmatched_source, [RENAMED.1]);
    assert_eq!(table.unmatched_target, [RENAMED.0]);
    assert!(table.by_hand.is_empty() && !table.changed);
    let unmapped_error = largest_error(&mut viewer, &source_worlds);
    assert!(
        unmapped_error > 0.05,
        "the unmatched joint stays at rest, unlike the source: {unmapped_error}"
    );

    // Paired by hand and applied: the joint and those below it move as in the source.
    let key = table.key.clone();
    viewer.set_joint_pair(&key, RENAMED.1, Some(RENAMED.0));
    assert!(viewer.joint_map_tables()[0].changed, "set but not applied yet");
    viewer.apply_joint_maps();
    wait_for_load(&mut viewer);
    let table = &viewer.joint_map_tables()[0];
    assert!(table.unmatched_source.is_empty() && table.unmatched_target.is_empty());
    assert_eq!(table.by_hand, [(RENAMED.1.to_owned(), RENAMED.0.to_owned())]);
    assert!(!table.changed);
    let mapped_error = largest_error(&mut viewer, &source_worlds);
    assert!(mapped_error < 1e-5, "{mapped_error}");

    // Through the settings file into a viewer started afresh: the pair is used on its own.
    let settings_file = dir.path().join("settings.toml");
    rigscope::app::capture_settings(&viewer, &UiState::default(), (800.0, 600.0))
        .save_to(&settings_file)
        .unwrap();
    let settings = Settings::load_from(&settings_file);
    assert_eq!(settings.joint_maps, viewer.joint_maps);
    let mut next = Viewer::new(common::load_demo(), None);
    rigscope::app::apply_settings(&settings, &mut next, &mut UiState::default());
    next.load_clips_from(file.clone());
    wait_for_load(&mut next);
    assert!(next.joint_map_tables()[0].unmatched_source.is_empty());
    let kept_error = largest_error(&mut next, &source_worlds);
    assert!(kept_error < 1e-5, "{kept_error}");

    // Cleared: the joint is unmatched again once applied.
    next.set_joint_pair(&key, RENAMED.1, None);
    assert!(next.joint_maps.is_empty());
    next.apply_joint_maps();
    wait_for_load(&mut next);
    assert_eq!(next.joint_map_tables()[0].unmatched_source, [RENAMED.1]);
}

#[test]
fn a_pair_set_from_the_target_side_replaces_the_target_joints_earlier_pair() {
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.set_joint_pair("a>b", "Jaw", Some("Head"));
    viewer.set_joint_pair("a>b", "Chin", Some("Head"));
    viewer.set_joint_pair("a>b", "Tail", Some("Spine"));
    let pairs: Vec<(&str, &str)> = (viewer.joint_maps["a>b"].by_hand.iter())
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(pairs, [("Chin", "Head"), ("Tail", "Spine")]);
    viewer.set_joint_pair("a>b", "Chin", None);
    viewer.set_joint_pair("a>b", "Tail", None);
    assert!(viewer.joint_maps.is_empty(), "an empty map is not kept");
}

/// The main window on `viewer` with File ▸ Map joints of added clips… opened.
fn joint_mapping_window(viewer: Viewer) -> egui_kittest::Harness<'static, (Viewer, UiState)> {
    let mut harness = common::main_window(viewer, 1400.0, 1000.0);
    harness.run();
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Map joints of added clips…").click();
    harness.run();
    harness
}

#[test]
fn the_window_lists_the_unmatched_joints_applies_a_pair_and_clears_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = clip_file(dir.path());
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.load_clips_from(file);
    wait_for_load(&mut viewer);
    let mut harness = joint_mapping_window(viewer);
    harness.get_by_label(RENAMED.1);
    harness.get_by_label("Unmatched by name: 1 of its joints, 1 of this rig's.");
    harness.get_by_label("Limb directions against the source");

    let key = harness.state().0.joint_map_tables()[0].key.clone();
    harness.state_mut().0.set_joint_pair(&key, RENAMED.1, Some(RENAMED.0));
    harness.run();
    harness.get_by_label(&format!("drives {}", RENAMED.0));
    harness.get_by_label("Apply").click();
    // One frame: the load's spinner keeps repainting until it is taken.
    harness.step();
    wait_for_load(&mut harness.state_mut().0);
    harness.run();
    let table = &harness.state().0.joint_map_tables()[0];
    assert!(table.unmatched_source.is_empty() && !table.changed);
    harness.get_by_label("Unmatched by name: 0 of its joints, 0 of this rig's.");

    harness.get_by_label("Clear").click();
    harness.run();
    assert!(harness.state().0.joint_maps.is_empty());
    assert!(
        harness.state().0.joint_map_tables()[0].changed,
        "cleared, not yet applied"
    );
}

#[test]
fn robot_expressive_fingers_paired_by_hand_drive_ybots_fingers() {
    let (Some(rigs), Some(corpus)) = (common::shared_rigs(), common::shared_folder("corpus")) else {
        return;
    };
    let source_file = rigs.join("real/RobotExpressive.glb");
    let source = common::load_rig(&rigs, "real/RobotExpressive.glb");
    let target_file = corpus.join("rigs/ybot.glb");
    let target = common::load_rig(&corpus, "rigs/ybot.glb");
    // The arms pair by humanoid bone (`UpperArm.L` is `LeftArm`), the spine by its place
    // between the hips and the neck (`Abdomen` is the bottom of it, as `mixamorig:Spine` is);
    // these names mean nothing to the profile.
    let pairs = [
        ("Index.L", "mixamorig:LeftHandIndex1"),
        ("Index.R", "mixamorig:RightHandIndex1"),
    ];
    let mut viewer = Viewer::new(target, Some(target_file));
    viewer.load_clips_from(source_file);
    wait_for_load(&mut viewer);
    let table = viewer.joint_map_tables().remove(0);
    let by_name = match_joints(&source, viewer.rig(), &JointMap::default());
    let abdomen = source.find_node("Abdomen").unwrap();
    let spine = viewer.rig().find_node("mixamorig:Spine");
    assert_eq!(by_name.target_of[abdomen], spine, "the bottoms of the spines pair");
    assert_eq!(table.unmatched_source, by_name.unmatched_source);
    assert_eq!(table.unmatched_target, by_name.unmatched_target);
    for (from, to) in pairs {
        assert!(table.unmatched_source.iter().any(|n| n == from), "{from}");
        assert!(table.unmatched_target.iter().any(|n| n == to), "{to}");
    }
    let matched_before: Vec<usize> = (viewer.document().carried()[0].report.clips.iter())
        .map(|c| c.matched_channels)
        .collect();

    for (from, to) in pairs {
        viewer.set_joint_pair(&table.key, from, Some(to));
    }
    let clip_count = viewer.rig().clips.len();
    viewer.apply_joint_maps();
    wait_for_load(&mut viewer);
    // The clips carried again replace the old ones, as one edit that Undo takes back.
    assert_eq!(viewer.rig().clips.len(), clip_count);
    let label = viewer.history().undo_label().unwrap_or_default().to_owned();
    assert!(label.starts_with("map joints of "), "{label}");
    let map = viewer.joint_maps[&table.key].clone();
    let expected = match_joints(&source, viewer.rig(), &map);
    let table = viewer.joint_map_tables().remove(0);
    assert_eq!(table.unmatched_source, expected.unmatched_source);
    assert_eq!(table.unmatched_target, expected.unmatched_target);
    assert_eq!(
        table.unmatched_source.len() + pairs.len(),
        by_name.unmatched_source.len()
    );
    // Each clip now carries the channels of the two joints as well, counted in the file.
    let paired: Vec<usize> = pairs.iter().map(|(from, _)| source.find_node(from).unwrap()).collect();
    let report = &viewer.document().carried()[0].report;
    for ((clip, before), source_clip) in report.clips.iter().zip(&matched_before).zip(&source.clips) {
        let paired_channels = (source_clip.channels.iter())
            .filter(|c| paired.contains(&c.node))
            .count();
        assert_eq!(clip.matched_channels, before + paired_channels, "{}", clip.name);
    }
    // And ybot's finger moves through them: its local rotation is keyed in every carried clip
    // whose source animates the robot's (and in others too where the alignment turned it, to
    // hold the source's rest).
    let finger = viewer.rig().find_node(pairs[0].1).unwrap();
    for (clip, source_clip) in report.clips.iter().zip(&source.clips) {
        let animated = source_clip.channels.iter().any(|c| c.node == paired[0]);
        let carried = &viewer.rig().clips[viewer.rig().find_clip(&clip.name).unwrap()];
        let keyed = carried.channels.iter().any(|c| c.node == finger);
        assert!(keyed || !animated, "{}", clip.name);
    }
}

#[test]
fn map_joint_pairs_a_joint_for_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let file = clip_file(dir.path());
    let stderr = |extra: &[&str]| {
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_rigscope"))
            .args(["audit", "demo", "--clips"])
            .arg(&file)
            .args(extra)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("rigscope runs");
        let output = common::wait_or_kill(child, std::time::Duration::from_secs(120), "rigscope audit");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let by_name = stderr(&[]);
    assert!(
        by_name.contains(&format!("source joints unmatched: {}\n", RENAMED.1)),
        "{by_name}"
    );
    let pair = format!("{}={}", RENAMED.1, RENAMED.0);
    let mapped = stderr(&["--map-joint", &pair]);
    assert!(mapped.contains("source joints unmatched: none\n"), "{mapped}");
    assert!(mapped.contains("target joints unmatched: none\n"), "{mapped}");
    let stale = stderr(&["--map-joint", "Nothing=joint3"]);
    assert!(
        stale.contains("hand-made pair Nothing → joint3 names no such joint; left out"),
        "{stale}"
    );
}

#[test]
fn the_window_opens_by_itself_only_when_added_clips_leave_joints_unmatched() {
    let dir = tempfile::tempdir().unwrap();
    let matched = dir.path().join("same.glb");
    std::fs::write(
        &matched,
        rigscope::rig::demo::demo_glb(rigscope::rig::demo::DEMO_JOINTS),
    )
    .unwrap();
    let renamed = clip_file(dir.path());
    for (file, opens) in [(matched, false), (renamed, true)] {
        let mut harness = common::main_window(Viewer::new(common::load_demo(), None), 1400.0, 1000.0);
        harness.run();
        let (viewer, state) = harness.state_mut();
        assert!(rigscope::ui::load_clips_from_dialog(viewer, state, |_| Some(
            file.clone()
        )));
        wait_for_load(viewer);
        harness.run();
        assert_eq!(harness.state().1.joint_map_open, opens, "{}", file.display());
        assert_eq!(harness.query_by_label("Joint mapping").is_some(), opens);
    }
}

/// The angle of the bone from `joint` to `child` below the horizontal, in degrees, in `worlds`.
fn droop_degrees(viewer: &mut Viewer, joint: &str, child: &str) -> f64 {
    let (j, c) = (
        viewer.rig().find_node(joint).unwrap(),
        viewer.rig().find_node(child).unwrap(),
    );
    let worlds = &viewer.pose().worlds;
    let bone = (worlds[c].w_axis - worlds[j].w_axis).truncate().as_dvec3().normalize();
    (-bone.y).asin().to_degrees()
}

#[test]
fn the_retarget_pose_stands_an_a_posed_avatar_in_the_t_pose_of_its_clips() {
    let Some(corpus) = common::shared_folder("corpus") else {
        return;
    };
    let rigs = corpus.join("rigs");
    let avatar = common::load_rig(&rigs, "readyplayer.me.glb");
    let mut viewer = Viewer::new(avatar, Some(rigs.join("readyplayer.me.glb")));
    viewer.load_clips_from(rigs.join("Michelle.glb"));
    wait_for_load(&mut viewer);
    viewer.select_clip(None);
    let at_rest = droop_degrees(&mut viewer, "LeftArm", "LeftForeArm");
    assert!(at_rest > 30.0, "Ready Player Me rests in an A-pose: {at_rest}°");

    let mut harness = joint_mapping_window(viewer);
    harness.get_by_label("Show the retarget pose").click();
    harness.run();
    let viewer = &mut harness.state_mut().0;
    assert_eq!(viewer.retarget_pose_shown(), Some(0));
    // Michelle's T-pose: the upper arm level, as hers is at rest.
    let michelle = common::load_rig(&rigs, "Michelle.glb");
    let mut hers = Viewer::new(michelle, None);
    hers.select_clip(None);
    let want = droop_degrees(&mut hers, "mixamorig:LeftArm", "mixamorig:LeftForeArm");
    let got = droop_degrees(viewer, "LeftArm", "LeftForeArm");
    assert!(want.abs() < 10.0, "Michelle rests in a T-pose: {want}°");
    assert!(
        (got - want).abs() < 0.05,
        "retarget pose {got}° against Michelle's rest {want}°"
    );
    let locals = viewer.pose().locals.clone();
    assert_eq!(locals, viewer.document().carried()[0].report.retarget_pose);

    harness.get_by_label("Show the retarget pose").click();
    harness.run();
    let viewer = &mut harness.state_mut().0;
    assert_eq!(viewer.retarget_pose_shown(), None);
    let back = droop_degrees(viewer, "LeftArm", "LeftForeArm");
    assert!((back - at_rest).abs() < 1e-6, "{back}° against {at_rest}° at rest");
}

#[test]
fn the_window_s_map_joint_pairs_a_joint_for_every_clip_file_it_adds() {
    let dir = tempfile::tempdir().unwrap();
    let file = clip_file(dir.path());
    let source_worlds = worlds_at_keys(&file, CLIP);
    // What `rigscope FILE --clips CLIPS --map-joint SOURCE=TARGET` sets before its clips load.
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.clip_carry.1 = JointMap {
        by_hand: [(RENAMED.1.to_owned(), RENAMED.0.to_owned())].into(),
    };
    viewer.load_clips_from(file.clone());
    wait_for_load(&mut viewer);
    let report = &viewer.document().carried()[0].report;
    assert!(
        report.joints.unmatched_source.is_empty(),
        "{:?}",
        report.joints.unmatched_source
    );
    assert!(
        report.joints.unmatched_target.is_empty(),
        "{:?}",
        report.joints.unmatched_target
    );
    let error = largest_error(&mut viewer, &source_worlds);
    assert!(error < 1e-5, "the paired joint moves as in the source: {error}");
}
