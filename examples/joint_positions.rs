//! Every joint's world position at every frame of a clip, as JSON on standard output, for
//! other tools to compare with (tools/importers/run_bvh.sh plays the same file in Blender).
//! A BVH file is sampled at its own frames, anything else at 30 frames a second.
//!
//! `cargo run --release --example joint_positions -- FILE [BVH_SCALE] [CLIP]`
//!
//! BVH_SCALE is metres per unit of a BVH file (1 keeps the file's own units); CLIP is a clip
//! name or index (the first when left out).

use rigscope::anim::PoseBuffers;
use rigscope::rig::{LoadOptions, load_file_with};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        return Err("usage: joint_positions FILE [BVH_SCALE] [CLIP]".into());
    };
    let options = LoadOptions {
        bvh_scale: args.get(1).map(|s| s.parse()).transpose()?,
    };
    let rig = load_file_with(std::path::Path::new(file), &options)?;
    let clip = match args.get(2) {
        Some(key) => rig.find_clip(key).ok_or_else(|| format!("no clip '{key}'"))?,
        None if rig.clips.is_empty() => return Err(format!("{file} has no clip").into()),
        None => 0,
    };
    let frame_time = rig.facts.bvh.as_ref().map_or(1.0 / 30.0, |b| b.frame_time);
    let duration = f64::from(rig.clips[clip].duration);
    let frames = (duration / frame_time).round() as usize + 1;
    let mut pose = PoseBuffers::new(&rig);
    let mut positions = Vec::with_capacity(frames);
    for k in 0..frames {
        pose.evaluate(&rig, Some(clip), ((k as f64 * frame_time).min(duration)) as f32);
        let frame: Vec<[f32; 3]> = pose.worlds.iter().map(|w| w.w_axis.truncate().to_array()).collect();
        positions.push(frame);
    }
    let names: Vec<&str> = rig.nodes.iter().map(|n| n.name.as_str()).collect();
    let document = serde_json::json!({ "names": names, "frame_time": frame_time, "positions": positions });
    println!("{document}");
    Ok(())
}
