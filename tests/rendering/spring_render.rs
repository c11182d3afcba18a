//! `render --time` with VRM spring bones: simulated from the clip's start at a fixed 60 Hz, so
//! one time gives one picture, bit for bit; `--no-springs` draws the pose without them.

use crate::common;
use crate::common::gpu;

use clap::Parser;
use rigscope::anim::spring_bones::SPRING_STEP_SECONDS;
use rigscope::anim::{PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::commands::render::{RenderArgs, viewer_for};
use std::path::PathBuf;

const FILE: &str = "springbone_collider_capsule_x0p02_r0p05.vrm";
/// 90.6 steps of 1/60 s: 90 whole steps, whatever the rounding.
const TIME: f32 = 1.51;

#[derive(Parser)]
struct Render {
    #[command(flatten)]
    args: RenderArgs,
}

fn capsule_file() -> Option<PathBuf> {
    Some(common::shared_folder("corpus/motion/vrm")?.join(FILE))
}

/// Every node's world matrix as `render` would draw it with `extra` arguments.
fn render_worlds(file: &std::path::Path, extra: &[&str]) -> Vec<glam::Mat4> {
    let mut argv = vec!["render".to_owned(), file.display().to_string()];
    argv.extend([
        "--time".to_owned(),
        TIME.to_string(),
        "--out".to_owned(),
        "x.png".to_owned(),
    ]);
    argv.extend(extra.iter().map(|s| (*s).to_owned()));
    let render = Render::try_parse_from(argv).expect("the arguments parse");
    let mut viewer = viewer_for(&render.args.request()).expect("the viewer is set up");
    viewer.pose().worlds.clone()
}

#[test]
fn render_time_simulates_the_springs_from_the_start_and_no_springs_leaves_them_out() {
    let Some(file) = capsule_file() else { return };
    let first = render_worlds(&file, &[]);
    let second = render_worlds(&file, &[]);
    assert_eq!(
        common::bits(&to_vec4(&first)),
        common::bits(&to_vec4(&second)),
        "one time, one pose"
    );
    let without = render_worlds(&file, &["--no-springs"]);
    let rig = common::load_rig(file.parent().unwrap(), FILE);
    let sampled = PoseBuffers::at(&rig, None, TIME);
    assert_eq!(
        common::bits(&to_vec4(&without)),
        common::bits(&to_vec4(&sampled.worlds)),
        "--no-springs draws the pose as sampled"
    );
    // The same 90 steps taken by hand over the pose pipeline.
    let mut stepped = PoseBuffers::new(&rig);
    for k in 0..=91 {
        let seconds = match k {
            0 | 91 => 0.0,
            _ => SPRING_STEP_SECONDS,
        };
        let inputs = PoseInputs {
            springs: Some(seconds),
            ..PoseInputs::clip_at(None, TIME)
        };
        evaluate_pose(&rig, &inputs, &mut stepped);
    }
    assert_eq!(
        common::bits(&to_vec4(&first)),
        common::bits(&to_vec4(&stepped.worlds)),
        "render's springs are 90 fixed steps"
    );
    let moved = (first.iter().zip(&without))
        .map(|(a, b)| (a.w_axis - b.w_axis).length())
        .fold(0.0, f32::max);
    assert!(moved > 0.01, "the springs move a joint by {moved} m in {TIME} s");
}

fn to_vec4(worlds: &[glam::Mat4]) -> Vec<glam::Vec4> {
    worlds
        .iter()
        .flat_map(|m| m.to_cols_array_2d().map(glam::Vec4::from))
        .collect()
}

fn render_png(file: &std::path::Path, extra: &[&str], name: &str) -> Vec<u8> {
    let out = common::temp_dir("springs").join(format!("{name}.png"));
    let mut args = vec!["render".into(), file.as_os_str().to_owned()];
    for arg in ["--time", &TIME.to_string(), "--size", "160x160", "--no-grid", "--out"] {
        args.push(arg.into());
    }
    args.push(out.as_os_str().to_owned());
    args.extend(extra.iter().map(|s| std::ffi::OsString::from(*s)));
    let output = common::rigscope(args);
    assert!(
        output.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read(&out).expect("the PNG was written")
}

#[test]
fn two_renders_at_one_time_are_the_same_picture_and_no_springs_another() {
    let Some(file) = capsule_file() else { return };
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let first = render_png(&file, &[], "first");
    let second = render_png(&file, &[], "second");
    assert!(first == second, "two renders at {TIME} s differ");
    let without = render_png(&file, &["--no-springs"], "without");
    let (a, b) = (
        image::load_from_memory(&first).unwrap().to_rgba8(),
        image::load_from_memory(&without).unwrap().to_rgba8(),
    );
    assert!(common::different_pixels(&a, &b) > 20, "the springs change the picture");
}

/// `render --sequence` of Godette playing a VRM Animation clip: each frame is the picture
/// `render --time` draws at that frame's time, its springs simulated from the clip's start.
#[test]
fn each_frame_of_a_sequence_is_the_render_at_its_time() {
    let (Some(avatars), Some(clips)) = (
        common::shared_folder("corpus/motion/vrm"),
        common::shared_folder("corpus/motion/vrma"),
    ) else {
        return;
    };
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let (avatar, clip) = (avatars.join("Godette_vrm_v4.vrm"), clips.join("idle_loop.vrma"));
    let folder = common::temp_dir("spring-sequence");
    let run = |extra: &[&str]| {
        let mut args: Vec<std::ffi::OsString> = vec!["render".into(), avatar.clone().into(), "--clips".into()];
        args.push(clip.clone().into());
        for arg in ["--size", "96x96", "--no-grid"].iter().chain(extra) {
            args.push(arg.into());
        }
        let output = common::rigscope(args);
        assert!(
            output.status.success(),
            "render failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let frames = folder.join("frames");
    run(&["--sequence", "--fps", "2", "--out", frames.to_str().unwrap()]);
    let count = std::fs::read_dir(&frames).unwrap().count();
    assert!(count >= 3, "a clip of a second or more gives frames: {count}");
    for frame in [1, count - 1] {
        let time = frame as f32 / 2.0;
        let still = folder.join(format!("still_{frame}.png"));
        run(&["--time", &time.to_string(), "--out", still.to_str().unwrap()]);
        let sequence_frame = std::fs::read(frames.join(format!("frame_{frame:04}.png"))).unwrap();
        assert!(
            sequence_frame == std::fs::read(&still).unwrap(),
            "frame {frame} differs from the render at {time} s"
        );
    }
    // The springs show in those frames: without them the last frame is another picture.
    let time = (count - 1) as f32 / 2.0;
    let without = folder.join("without.png");
    run(&[
        "--time",
        &time.to_string(),
        "--no-springs",
        "--out",
        without.to_str().unwrap(),
    ]);
    let last = std::fs::read(frames.join(format!("frame_{:04}.png", count - 1))).unwrap();
    assert!(
        last != std::fs::read(&without).unwrap(),
        "the springs change frame {}",
        count - 1
    );
    std::fs::remove_dir_all(&folder).unwrap();
}
