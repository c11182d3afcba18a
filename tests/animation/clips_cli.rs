//! `rigscope clips`: carried and edited clips written into a new file that reloads with the same
//! clips, the skeleton and meshes unchanged, the input untouched; exit codes and nothing written
//! on a bad argument.

use crate::common;

use rigscope::anim::clip_edit;
use rigscope::anim::sample_channel;
use rigscope::retarget::{JointMap, RetargetOptions, with_clips_from};
use rigscope::rig::{Clip, Rig, load_file};
use std::path::{Path, PathBuf};

fn shared() -> Option<(PathBuf, PathBuf)> {
    let rigs = common::shared_rigs()?;
    let corpus = common::shared_folder("corpus")?.join("rigs");
    Some((rigs, corpus))
}

/// Every channel of `got` sampled at its keys and between them equals `want` sampled there,
/// within `tolerance` per component (rotations up to sign).
fn same_motion(got: &Clip, want: &Clip, tolerance: f32) {
    assert_eq!(got.channels.len(), want.channels.len(), "{}", got.name);
    for channel in &want.channels {
        let other = (got.channels.iter())
            .find(|c| c.node == channel.node && c.property == channel.property)
            .unwrap_or_else(|| panic!("{}: no channel for node {}", got.name, channel.node));
        let (mut a, mut b) = (0, 0);
        for k in 0..=40 {
            let time = want.duration * k as f32 / 40.0;
            let (x, y) = (
                sample_channel(other, time, &mut a),
                sample_channel(channel, time, &mut b),
            );
            let error = (x - y).abs().max_element().min((x + y).abs().max_element());
            assert!(
                error <= tolerance,
                "{} node {} at {time}: {x} against {y}",
                got.name,
                channel.node
            );
        }
    }
}

fn vertex_positions(rig: &Rig) -> Vec<glam::Vec3> {
    rig.meshes
        .iter()
        .flat_map(|m| &m.primitives)
        .flat_map(|p| p.positions.iter().copied())
        .collect()
}

#[test]
fn carried_clips_are_written_and_reload_as_carried() {
    let Some((rigs, corpus)) = shared() else {
        return;
    };
    let dir = common::temp_dir("clips-add");
    let (target_path, source_path) = (corpus.join("readyplayer.me.glb"), rigs.join("real/Xbot.glb"));
    let before = std::fs::read(&target_path).unwrap();
    let out = dir.join("avatar.glb");
    let (code, stdout, stderr) = common::run_rigscope(&[
        "clips",
        target_path.to_str().unwrap(),
        "--add",
        source_path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("limb directions against the source"), "{stdout}");
    assert!(stdout.contains("foot slide"), "{stdout}");
    assert_eq!(std::fs::read(&target_path).unwrap(), before, "the input is untouched");

    let (target, source) = (load_file(&target_path).unwrap(), load_file(&source_path).unwrap());
    let (carried, _) = with_clips_from(
        target.clone(),
        &source,
        &source_path,
        &JointMap::default(),
        &RetargetOptions::default(),
    );
    let written = load_file(&out).unwrap();
    assert_eq!(written.clips.len(), source.clips.len());
    for (got, want) in written.clips.iter().zip(&carried.clips) {
        assert_eq!(got.name, want.name);
        same_motion(got, want, 1e-6);
    }
    // The skeleton and the meshes are the file's own; its skinned meshes below the armature
    // are written at the scene's root.
    let node_of = common::nodes_after_placement(&target, &written);
    assert_eq!(node_of.iter().enumerate().filter(|(a, b)| a != *b).count(), 10);
    assert_eq!(vertex_positions(&written), vertex_positions(&target));
    assert_eq!(written.skins.len(), target.skins.len());
    assert_eq!(written.materials.len(), target.materials.len());
}

#[test]
fn edits_are_written_in_order_and_originals_kept_as_read() {
    let Some((rigs, _)) = shared() else {
        return;
    };
    let dir = common::temp_dir("clips-edit");
    let input = rigs.join("real/Xbot.glb");
    let original = load_file(&input).unwrap();
    let out = dir.join("xbot.gltf");
    let (code, stdout, stderr) = common::run_rigscope(&[
        "clips",
        input.to_str().unwrap(),
        "--trim",
        "walk=0.2:0.8",
        "--in-place",
        "run",
        "--drop",
        "sad_pose",
        "--rename",
        "walk=short walk",
        "--rename",
        "idle=standing",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("JSON on standard output");
    assert_eq!(report["changed"], true);

    // The same edits, made here with the library.
    let mut want = original.clone();
    let walk = want.find_clip("walk").unwrap();
    clip_edit::trim(&mut want, walk, 0.2, 0.8).unwrap();
    let run = want.find_clip("run").unwrap();
    clip_edit::in_place(&mut want, run).unwrap();
    let sad = want.find_clip("sad_pose").unwrap();
    clip_edit::drop_clip(&mut want, sad).unwrap();

    let written = load_file(&out).unwrap();
    let names: Vec<&str> = written.clips.iter().map(|c| c.name.as_str()).collect();
    let mut expected: Vec<String> = want.clips.iter().map(|c| c.name.clone()).collect();
    for name in &mut expected {
        *name = match name.as_str() {
            "walk" => "short walk".into(),
            "idle" => "standing".into(),
            other => other.into(),
        };
    }
    assert_eq!(names, expected);
    let walk = written.find_clip("short walk").unwrap();
    assert!((written.clips[walk].duration - 0.6).abs() < 1e-5);
    for (got, want) in written.clips.iter().zip(&want.clips) {
        same_motion(got, want, 1e-6);
    }
    // An untouched clip keeps its keys exactly as the file has them.
    let agree = (
        written.find_clip("agree").unwrap(),
        original.find_clip("agree").unwrap(),
    );
    let (kept, read) = (&written.clips[agree.0], &original.clips[agree.1]);
    assert_eq!(kept.channels.len(), read.channels.len());
    for (a, b) in kept.channels.iter().zip(&read.channels) {
        assert_eq!(
            (a.node, a.property, &a.times, &a.values),
            (b.node, b.property, &b.times, &b.values)
        );
    }
}

fn assert_fails_writing_nothing(args: &[&str], out: &Path, want_code: i32, message: &str) {
    let (code, stdout, stderr) = common::run_rigscope(args);
    assert_eq!(code, Some(want_code), "{args:?}\n{stdout}\n{stderr}");
    assert!(
        stderr.contains(message) || stdout.contains(message),
        "{args:?}: {stderr}{stdout}"
    );
    assert!(!out.exists(), "{args:?} wrote {}", out.display());
}

#[test]
fn bad_arguments_exit_2_and_no_change_exits_1_writing_nothing() {
    let Some((rigs, _)) = shared() else {
        return;
    };
    let dir = common::temp_dir("clips-errors");
    let input = rigs.join("real/Xbot.glb");
    let input = input.to_str().unwrap();
    let out = dir.join("out.glb");
    let out_text = out.to_str().unwrap();
    let base = |extra: &[&'static str]| -> Vec<String> {
        let mut args = vec!["clips".to_owned(), input.to_owned()];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(["--out".to_owned(), out_text.to_owned()]);
        args
    };
    for (extra, message) in [
        (&["--trim", "nothing=0:1"][..], "nothing"),
        (&["--trim", "walk=0.8:0.2"][..], "start"),
        (&["--trim", "walk=0.2:90"][..], "90"),
        (&["--drop", "walk", "--drop", "nothing"][..], "nothing"),
        (&["--rename", "walk=idle"][..], "idle"),
        (&["--in-place", "nothing"][..], "nothing"),
    ] {
        let args = base(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_fails_writing_nothing(&args, &out, 2, message);
    }
    let args = base(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_fails_writing_nothing(&args, &out, 1, "nothing changed");
    // An FBX input is checked as strictly (its conversion is tests/fbx/fbx_to_gltf.rs).
    let fbx = rigs.join("fbx/Samba Dancing.fbx");
    assert_fails_writing_nothing(
        &[
            "clips",
            fbx.to_str().unwrap(),
            "--drop",
            "no such clip",
            "--out",
            out_text,
        ],
        &out,
        2,
        "no such clip",
    );
    // The output may not be the input.
    let copy = dir.join("copy.glb");
    std::fs::copy(input, &copy).unwrap();
    let (code, _, stderr) = common::run_rigscope(&[
        "clips",
        copy.to_str().unwrap(),
        "--drop",
        "walk",
        "--out",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(input).unwrap());
}

#[test]
fn resample_reports_the_bytes_it_saves() {
    let Some((rigs, _)) = shared() else {
        return;
    };
    let dir = common::temp_dir("clips-resample");
    let input = rigs.join("real/Xbot.glb");
    let out = dir.join("xbot.glb");
    let (code, stdout, stderr) = common::run_rigscope(&[
        "clips",
        input.to_str().unwrap(),
        "--resample",
        "30",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let lines = report["resampled"].as_array().unwrap();
    let original = load_file(&input).unwrap();
    assert_eq!(lines.len(), original.clips.len());
    let total = |key: &str| lines.iter().map(|l| l[key].as_u64().unwrap()).sum::<u64>();
    assert!(total("bytes_after") < total("bytes_before"), "{report}");
    // Each clip stays within the rotation tolerance at its samples.
    for line in lines {
        assert!(
            line["worst_rotation_degrees"].as_f64().unwrap() <= 0.05 + 1e-6,
            "{line}"
        );
    }
    let written = load_file(&out).unwrap();
    assert_eq!(written.clips.len(), original.clips.len());
    let keys: usize = written
        .clips
        .iter()
        .flat_map(|c| &c.channels)
        .map(|c| c.times.len())
        .sum();
    let before: usize = original
        .clips
        .iter()
        .flat_map(|c| &c.channels)
        .map(|c| c.times.len())
        .sum();
    assert!(keys < before, "{keys} keys against {before}");
}
