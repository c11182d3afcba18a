//! Clips carried between FBX and glTF (`--clips`): Mixamo's FBX dance onto Mixamo's glTF Xbot
//! and Xbot's glTF clips onto the FBX rig. The two skeletons have the same joint names but
//! different proportions and joint axes, so the check is on what the retargeting keeps: each
//! limb's world direction, the same in both rigs at every time.

use crate::common;

use crate::common::shared_rigs;
use glam::Vec3;
use rigscope::anim::PoseBuffers;
use rigscope::retarget::{JointMap, RetargetOptions, load_clips_into};
use rigscope::rig::Rig;

/// Limbs as (from, to) joints, `mixamorig:` left out.
const LIMBS: &[(&str, &str)] = &[
    ("Hips", "Spine"),
    ("Spine2", "Neck"),
    ("LeftArm", "LeftForeArm"),
    ("LeftForeArm", "LeftHand"),
    ("RightArm", "RightForeArm"),
    ("RightForeArm", "RightHand"),
    ("LeftUpLeg", "LeftLeg"),
    ("LeftLeg", "LeftFoot"),
    ("RightUpLeg", "RightLeg"),
    ("RightLeg", "RightFoot"),
];

/// Directions of [`LIMBS`] in the world at `time` of `clip` (`None`: the rest pose).
fn limb_directions(rig: &Rig, clip: Option<usize>, time: f32) -> Vec<Vec3> {
    let mut pose = PoseBuffers::new(rig);
    pose.evaluate(rig, clip, time);
    let at = |name: &str| {
        let full = format!("mixamorig:{name}");
        let node = rig
            .nodes
            .iter()
            .position(|n| n.name == full)
            .unwrap_or_else(|| panic!("{}: no joint {full}", rig.name));
        pose.worlds[node].w_axis.truncate()
    };
    LIMBS.iter().map(|(from, to)| (at(to) - at(from)).normalize()).collect()
}

fn angles(a: &[Vec3], b: &[Vec3]) -> Vec<f32> {
    a.iter()
        .zip(b)
        .map(|(a, b)| a.dot(*b).clamp(-1.0, 1.0).acos().to_degrees())
        .collect()
}

/// The largest angle, in degrees, between a limb of clip `source_clip` on `source` and the same
/// limb in the clip named alike on `target`, at three times: carried clips point every limb
/// where the source's points, whatever the two rest poses.
fn worst_limb_angle(source: &Rig, source_clip: usize, target: &Rig) -> f32 {
    let name = &source.clips[source_clip].name;
    let target_clip = target
        .clips
        .iter()
        .position(|c| &c.name == name)
        .unwrap_or_else(|| panic!("{}: clip '{name}' not added", target.name));
    let duration = source.clips[source_clip].duration;
    let mut worst = 0.0f32;
    for fraction in [0.2, 0.5, 0.8] {
        let time = duration * fraction;
        let from = limb_directions(source, Some(source_clip), time);
        let to = limb_directions(target, Some(target_clip), time);
        worst = angles(&from, &to).into_iter().fold(worst, f32::max);
    }
    worst
}

#[test]
fn mixamo_fbx_clips_play_on_the_gltf_xbot_and_the_reverse() {
    let Some(dir) = shared_rigs() else { return };
    let fbx = dir.join("fbx/mixamo.fbx");
    let glb = dir.join("real/Xbot.glb");
    let options = RetargetOptions::default();

    let xbot = common::load_rig(&dir, "real/Xbot.glb");
    let (xbot_dancing, report) = load_clips_into(xbot, &fbx, (&Default::default(), &JointMap::default()), &options)
        .expect("FBX clips onto glTF");
    let source = common::load_rig(&dir, "fbx/mixamo.fbx");
    let dance = source.clips.iter().position(|c| c.name == "mixamo.com").unwrap();
    let clip_report = report
        .clips
        .iter()
        .find(|c| c.name == "mixamo.com")
        .expect("the dance is added");
    assert_eq!(clip_report.matched_channels, source.clips[dance].channels.len());
    let angle = worst_limb_angle(&source, dance, &xbot_dancing);
    println!("mixamo.fbx dance on Xbot.glb: limbs within {angle:.3}° of the FBX's");
    assert!(angle < 0.1, "a limb strays {angle:.2}° from the FBX's");

    let beta = common::load_rig(&dir, "fbx/mixamo.fbx");
    let (beta_with_xbot, report) = load_clips_into(beta, &glb, (&Default::default(), &JointMap::default()), &options)
        .expect("glTF clips onto FBX");
    let xbot = common::load_rig(&dir, "real/Xbot.glb");
    assert_eq!(report.clips.len(), xbot.clips.len());
    for clip in 0..xbot.clips.len() {
        let angle = worst_limb_angle(&xbot, clip, &beta_with_xbot);
        println!(
            "Xbot.glb '{}' on mixamo.fbx: limbs within {angle:.3}° of Xbot's",
            xbot.clips[clip].name
        );
        assert!(
            angle < 0.1,
            "'{}': a limb strays {angle:.2}° from Xbot's",
            xbot.clips[clip].name
        );
    }
}
