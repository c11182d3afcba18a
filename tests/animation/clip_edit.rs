//! Clip edits on the shared rigs, each checked against a reference computed apart from the edit:
//! a trimmed clip against the original sampled later by the start; a clip held in place against
//! the original's world heights and locals (Xbot's Armature turns and scales its Hips); a
//! resampled clip against the original sampled at 30 Hz and interpolated between, joint by joint
//! in world space, within bounds derived from the tolerances.

use crate::common;

use glam::{DQuat, DVec4, Mat4, Quat, Vec3, Vec4};
use rigscope::anim::clip_edit::{
    ClipEditError, ResampleTolerance, drop_clip, find_clip, in_place, keyframe_size, rename, resample, trim,
};
use rigscope::anim::morph::sample_morph_channel;
use rigscope::anim::root_motion::motion_root;
use rigscope::anim::{local_to_world, sample_channel, sample_clip};
use rigscope::motion::ClipSampler;
use rigscope::rig::{Channel, Interpolation, Property, Rig, Trs};

/// Xbot.glb (shared rigs), Soldier.glb and RobotExpressive.glb, or `None` when `../shared` is
/// absent.
fn shared_rigs() -> Option<Vec<Rig>> {
    let real = common::shared_rigs()?.join("real");
    let corpus = common::shared_folder("corpus")?.join("rigs");
    Some(vec![
        common::load_rig(&real, "Xbot.glb"),
        common::load_rig(&corpus, "Soldier.glb"),
        common::load_rig(&real, "RobotExpressive.glb"),
    ])
}

/// Every node's local transform with `clip` of `rig` at `time`.
fn locals_at(rig: &Rig, clip: usize, time: f32) -> Vec<Trs> {
    let mut locals = vec![Trs::IDENTITY; rig.nodes.len()];
    let mut hints = vec![0; rig.clips[clip].channels.len()];
    sample_clip(&rig.nodes, Some(&rig.clips[clip]), time, &mut hints, &mut locals);
    locals
}

fn worlds_of(rig: &Rig, locals: &[Trs]) -> Vec<Mat4> {
    let mut worlds = vec![Mat4::IDENTITY; rig.nodes.len()];
    local_to_world(&rig.nodes, locals, &mut worlds);
    worlds
}

/// `count + 1` times from 0 to `duration`, both ends exact.
fn even_times(duration: f32, count: usize) -> impl Iterator<Item = (usize, f32)> {
    (0..=count).map(move |k| {
        let t = if k == count {
            duration
        } else {
            duration * k as f32 / count as f32
        };
        (k, t)
    })
}

#[test]
fn trimmed_clips_play_the_original_from_the_start() {
    let Some(rigs) = shared_rigs() else { return };
    for original in &rigs {
        for clip in 0..original.clips.len() {
            let duration = original.clips[clip].duration;
            let (start, end) = (0.31 * duration, 0.77 * duration);
            let mut rig = original.clone();
            trim(&mut rig, clip, start, end).unwrap();
            let length = end - start;
            let label = format!("{} '{}'", original.name, original.clips[clip].name);
            assert_eq!(rig.clips[clip].duration, length, "{label}");
            let (mut worst, mut worst_rotation) = (0.0f32, 0.0f32);
            for (before, after) in original.clips[clip].channels.iter().zip(&rig.clips[clip].channels) {
                assert_eq!((before.node, before.property), (after.node, after.property));
                assert!(
                    after.times.windows(2).all(|w| w[0] < w[1]),
                    "{label}: keys out of order"
                );
                let scale = before.values.iter().map(|v| v.abs().max_element()).fold(1.0, f32::max);
                for (k, t) in even_times(length, 400) {
                    // The ends against the cut times themselves, which `start + t` rounds.
                    let original_time = match k {
                        0 => start,
                        400 => end,
                        _ => start + t,
                    };
                    let want = sample_channel(before, original_time, &mut 0);
                    let mut got = sample_channel(after, t, &mut 0);
                    if before.property == Property::Rotation && got.dot(want) < 0.0 {
                        got = -got;
                    }
                    let error = (got - want).abs().max_element() / scale;
                    if k == 0 || k == 400 {
                        assert!(error <= 1e-6, "{label}: end {k} off by {error}");
                    }
                    if before.property == Property::Rotation {
                        worst_rotation = worst_rotation.max(error);
                    } else {
                        worst = worst.max(error);
                    }
                }
            }
            assert!(worst <= 1e-6, "{label}: off by {worst} of the channel's largest value");
            // Between keys the player's polynomial slerp is within 2e-6 of the exact one, on the
            // original's arc and on the trimmed piece of it alike.
            assert!(worst_rotation <= 4e-6, "{label}: rotations off by {worst_rotation}");
            println!("{label}: trimmed, off by {worst:.1e} (rotations {worst_rotation:.1e})");
            for (before, after) in original.morphs.channels.iter().zip(&rig.morphs.channels) {
                if before.clip != clip {
                    assert_eq!(before, after);
                    continue;
                }
                for (k, t) in even_times(length, 400) {
                    let original_time = if k == 400 { end } else { start + t };
                    for target in 0..before.targets {
                        let want = sample_morph_channel(before, target, original_time);
                        let got = sample_morph_channel(after, target, t);
                        assert!((want - got).abs() <= 1e-6, "{label}: morph weight {target} at {t}");
                    }
                }
            }
        }
    }
}

#[test]
fn in_place_clips_hold_the_root_over_its_rest_place() {
    let Some(rigs) = shared_rigs() else { return };
    for original in &rigs[..2] {
        let height = rigscope::motion::checks::rig_height(original);
        let rest = ClipSampler::new(original).worlds_at(None, 0.0).to_vec();
        for clip in 0..original.clips.len() {
            let root = motion_root(original, clip).expect("a Mixamo clip moves its hips");
            let label = format!("{} '{}'", original.name, original.clips[clip].name);
            let ancestors_move = original.clips[clip]
                .channels
                .iter()
                .any(|c| original.subtrees(&[c.node])[root] && c.node != root);
            assert!(
                !ancestors_move,
                "{label}: the test expects nothing above the root to move"
            );
            let parent = original.nodes[root].parent.expect("the hips hang under the armature");
            let parent_scale = rest[parent].x_axis.truncate().length();
            assert!(
                original.name.contains("Soldier") || (parent_scale - 0.01).abs() < 1e-4,
                "{label}: Xbot's Armature scales by 0.01 ({parent_scale})"
            );
            let mut rig = original.clone();
            in_place(&mut rig, clip).unwrap();
            let place = rest[root].w_axis.truncate();
            let (mut travel, mut worst_ground, mut worst_height) = (0.0f32, 0.0f32, 0.0f32);
            let duration = original.clips[clip].duration;
            for (_, time) in even_times(duration, (duration * 120.0).ceil() as usize) {
                let (before, after) = (locals_at(original, clip, time), locals_at(&rig, clip, time));
                let (worlds_before, worlds_after) = (worlds_of(original, &before), worlds_of(&rig, &after));
                let (was, now) = (
                    worlds_before[root].w_axis.truncate(),
                    worlds_after[root].w_axis.truncate(),
                );
                travel = travel.max(Vec3::new(was.x - place.x, 0.0, was.z - place.z).length());
                worst_ground = worst_ground.max(Vec3::new(now.x - place.x, 0.0, now.z - place.z).length());
                worst_height = worst_height.max((now.y - was.y).abs());
                for (node, (b, a)) in before.iter().zip(&after).enumerate() {
                    if node == root {
                        assert_eq!((b.rotation, b.scale), (a.rotation, a.scale), "{label}");
                    } else {
                        assert_eq!(b, a, "{label}: node {node} at {time}");
                    }
                }
            }
            println!(
                "{label}: travel {travel:.4} taken out; root off its place by {worst_ground:.2e}, height off by \
                 {worst_height:.2e} (rig height {height:.3})"
            );
            assert!(worst_ground <= 1e-5 * height, "{label}: root moves {worst_ground}");
            assert!(
                worst_height <= 1e-5 * height,
                "{label}: height changes by {worst_height}"
            );
        }
    }
}

/// Spherical interpolation in f64 along the shorter arc.
fn slerp(a: Vec4, b: Vec4, s: f64) -> Vec4 {
    let (a, b) = (
        Quat::from_vec4(a).as_dquat().normalize(),
        Quat::from_vec4(b).as_dquat().normalize(),
    );
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let DQuat { x, y, z, w } = a.slerp(b, s);
    DVec4::new(x, y, z, w).as_vec4()
}

/// The original's channel sampled at grid times `a` and `b` and interpolated at `time` as a
/// linear (or step) channel keyed at them would be.
fn grid_interpolated(channel: &Channel, a: f32, b: f32, time: f32) -> Vec4 {
    let (va, vb) = (sample_channel(channel, a, &mut 0), sample_channel(channel, b, &mut 0));
    let s = if b > a {
        f64::from(time - a) / f64::from(b - a)
    } else {
        0.0
    };
    match (channel.interpolation, channel.property) {
        (Interpolation::Step, _) => {
            if time >= b {
                vb
            } else {
                va
            }
        }
        (_, Property::Rotation) => slerp(va, vb, s),
        _ => (va.as_dvec4() * (1.0 - s) + vb.as_dvec4() * s).as_vec4(),
    }
}

/// Locals of the reference at `time`: each channel of the original sampled at the 30 Hz grid
/// times around `time` and interpolated between them.
fn reference_locals(rig: &Rig, clip: usize, grid: &[f32], time: f32) -> Vec<Trs> {
    let after = grid.partition_point(|&g| g <= time).clamp(1, grid.len().max(2) - 1);
    let (a, b) = (grid[after - 1], grid[after.min(grid.len() - 1)]);
    let mut locals: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
    for channel in &rig.clips[clip].channels {
        let v = grid_interpolated(channel, a, b, time);
        let local = &mut locals[channel.node];
        match channel.property {
            Property::Translation => local.translation = v.truncate(),
            Property::Rotation => local.rotation = Quat::from_vec4(v).normalize(),
            Property::Scale => local.scale = v.truncate(),
        }
    }
    locals
}

/// The 30 Hz grid of a clip: `k / 30` seconds, then the end.
fn grid_of(duration: f32) -> Vec<f32> {
    let mut grid: Vec<f32> = (0..)
        .map(|k| (f64::from(k) / 30.0) as f32)
        .take_while(|&t| f64::from(t) < f64::from(duration) - 1e-6)
        .collect();
    grid.push(duration);
    grid
}

/// Per node, the bound on its world position error that the tolerances give: for every node
/// on its path from the root that a channel moves, the translation tolerance, and the rotation
/// (radians) and relative scale tolerances times the farthest the node gets from it in the clip.
fn error_bounds(rig: &Rig, clip: usize, tolerance: &ResampleTolerance, position: f32) -> Vec<f32> {
    let n = rig.nodes.len();
    let mut moved = vec![[false; 3]; n];
    for channel in &rig.clips[clip].channels {
        moved[channel.node][channel.property as usize] = true;
    }
    let mut reach = vec![vec![0.0f32; n]; n];
    let duration = rig.clips[clip].duration;
    for (_, time) in even_times(duration, (duration * 30.0).ceil() as usize) {
        let worlds = worlds_of(rig, &locals_at(rig, clip, time));
        for node in 0..n {
            let mut above = Some(node);
            while let Some(a) = above {
                let distance = (worlds[node].w_axis - worlds[a].w_axis).truncate().length();
                reach[node][a] = reach[node][a].max(distance);
                above = rig.nodes[a].parent;
            }
        }
    }
    let radians = tolerance.rotation_degrees.to_radians();
    (0..n)
        .map(|node| {
            let mut bound = 0.0;
            let mut above = Some(node);
            while let Some(a) = above {
                let [t, r, s] = moved[a];
                // Reach grows between the 30 Hz poses it was measured at; 10 % covers it.
                let far = 1.1 * reach[node][a];
                bound += f32::from(u8::from(t)) * position
                    + f32::from(u8::from(r)) * radians * far
                    + f32::from(u8::from(s)) * tolerance.scale_relative * far;
                above = rig.nodes[a].parent;
            }
            bound
        })
        .collect()
}

#[test]
fn resampled_clips_stay_within_tolerance_of_the_original() {
    let Some(rigs) = shared_rigs() else { return };
    let tolerance = ResampleTolerance::default();
    for original in &rigs {
        let mut rig = original.clone();
        let height = rigscope::motion::checks::rig_height(original);
        let (mut before, mut after) = (0, 0);
        let (mut worst_position, mut worst_rotation, mut worst_to_original) = (0.0f32, 0.0f32, 0.0f32);
        for clip in 0..rig.clips.len() {
            let report = resample(&mut rig, clip, 30.0, &tolerance).unwrap();
            println!("{}: {}", original.name, report.summary());
            before += report.before.bytes;
            after += report.after.bytes;
            worst_position = worst_position.max(report.worst_position / height);
            worst_rotation = worst_rotation.max(report.worst_rotation_degrees);
            assert!(report.worst_position <= report.position_tolerance);
            assert!(report.worst_rotation_degrees <= tolerance.rotation_degrees);
            assert!(report.worst_scale_relative <= tolerance.scale_relative);
            assert!(report.worst_morph_weight <= tolerance.morph_weight);
            assert_eq!(report.after, keyframe_size(&rig, clip));

            let bounds = error_bounds(original, clip, &tolerance, report.position_tolerance);
            // Float noise of world matrices composed down a chain of f32 transforms.
            let noise = 2e-6 * height;
            let duration = original.clips[clip].duration;
            assert_eq!(rig.clips[clip].duration, duration);
            let grid = grid_of(duration);
            let mut sampler = ClipSampler::new(&rig);
            let mut original_sampler = ClipSampler::new(original);
            let mut worst_ratio = 0.0f32;
            for (_, time) in even_times(duration, (duration * 120.0).ceil() as usize) {
                let reference = worlds_of(original, &reference_locals(original, clip, &grid, time));
                let unreduced = original_sampler.worlds_at(Some(clip), time).to_vec();
                let worlds = sampler.worlds_at(Some(clip), time);
                for node in 0..rig.nodes.len() {
                    let error = (worlds[node].w_axis - reference[node].w_axis).truncate().length();
                    assert!(
                        error <= bounds[node] + noise,
                        "{} '{}' node {} at {time}: {error} over {}",
                        original.name,
                        original.clips[clip].name,
                        original.nodes[node].name,
                        bounds[node] + noise
                    );
                    worst_ratio = worst_ratio.max(error / (bounds[node] + noise));
                    let to_original = (worlds[node].w_axis - unreduced[node].w_axis).truncate().length();
                    worst_to_original = worst_to_original.max(to_original / height);
                }
            }
            println!("  joints within {:.0} % of their bounds", 100.0 * worst_ratio);
        }
        println!(
            "{}: resample 30: {before} → {after} bytes of keyframes ({:.1} %); worst position error {:.2e} of \
             the rig's height ({height:.3}), rotation {worst_rotation:.4}°; joints off the original between \
             30 Hz samples by up to {worst_to_original:.2e} of the height",
            original.name,
            100.0 * after as f64 / before as f64,
            worst_position,
        );
        assert!(
            after < before,
            "{}: resampling at 30 Hz shrinks the keys",
            original.name
        );
    }
}

#[test]
fn dropping_a_clip_renumbers_later_clips_morph_channels() {
    let Some(rigs) = shared_rigs() else { return };
    let original = &rigs[2];
    let morph_clips: Vec<usize> = original.morphs.channels.iter().map(|c| c.clip).collect();
    println!(
        "{}: {} clips, {} morph weight channels in clips {:?}",
        original.name,
        original.clips.len(),
        morph_clips.len(),
        morph_clips
    );
    // RobotExpressive animates its face in every clip: dropping the second takes its morph
    // channel away and moves those of the later clips down by one.
    assert!(morph_clips.contains(&1) && morph_clips.iter().any(|&c| c > 1));
    let dropped = 1;
    let mut rig = original.clone();
    let removed = drop_clip(&mut rig, dropped).unwrap();
    assert_eq!(removed.name, original.clips[dropped].name);
    assert_eq!(rig.clips.len(), original.clips.len() - 1);
    let kept: Vec<_> = original.morphs.channels.iter().filter(|c| c.clip != dropped).collect();
    assert_eq!(rig.morphs.channels.len(), kept.len());
    for (before, after) in kept.iter().zip(&rig.morphs.channels) {
        // The channel still belongs to the clip of the same name.
        assert_eq!(original.clips[before.clip].name, rig.clips[after.clip].name);
        assert_eq!(before.times, after.times);
    }
    // Each later clip still samples its weights.
    for (c, clip) in rig.clips.iter().enumerate() {
        let was = find_clip(original, &clip.name).unwrap();
        let count = |rig: &Rig, c: usize| rig.morphs.channels.iter().filter(|m| m.clip == c).count();
        assert_eq!(count(&rig, c), count(original, was), "clip '{}'", clip.name);
    }
}

#[test]
fn edits_report_their_errors_by_kind() {
    let Some(rigs) = shared_rigs() else { return };
    let mut rig = rigs[0].clone();
    let count = rig.clips.len();
    let first = rig.clips[0].name.clone();
    let duration = rig.clips[0].duration;
    assert_eq!(
        find_clip(&rig, "no such clip"),
        Err(ClipEditError::NoSuchClip("no such clip".into()))
    );
    assert_eq!(find_clip(&rig, &first), Ok(0));
    assert!(matches!(
        trim(&mut rig, 0, 0.5, 0.5),
        Err(ClipEditError::StartNotBeforeEnd { .. })
    ));
    assert!(matches!(
        trim(&mut rig, 0, 0.0, duration + 1.0),
        Err(ClipEditError::TimeOutsideClip { .. })
    ));
    assert!(matches!(
        resample(&mut rig, 0, 0.0, &ResampleTolerance::default()),
        Err(ClipEditError::BadRate(_))
    ));
    let negative = ResampleTolerance {
        position_fraction: -1.0,
        ..ResampleTolerance::default()
    };
    assert!(matches!(
        resample(&mut rig, 0, 30.0, &negative),
        Err(ClipEditError::BadTolerance { name: "position", .. })
    ));
    if count > 1 {
        let second = rig.clips[1].name.clone();
        assert_eq!(
            rename(&mut rig, 0, &second),
            Err(ClipEditError::NameTaken { name: second, other: 1 })
        );
    }
    assert!(matches!(
        in_place(&mut rig, count),
        Err(ClipEditError::ClipOutOfRange { .. })
    ));
    // Nothing failed half way: the rig is as loaded.
    assert_eq!(rig.clips[0].name, first);
    assert_eq!(rig.clips[0].duration, duration);
    assert_eq!(keyframe_size(&rig, 0), keyframe_size(&rigs[0], 0));
}
