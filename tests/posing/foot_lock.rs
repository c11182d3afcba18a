//! Foot locking: feet held where they land during their contacts, measured the way
//! `audit --motion` measures foot slide, on the shared walks and on a clip made to slide.

use crate::common;
use crate::common::gpu;

use crate::common::*;
use glam::{Quat, Vec3};
use rigscope::anim::foot_lock::{FootLock, heading_of};
use rigscope::anim::{ClipSampler, PoseBuffers, PoseInputs, evaluate_pose, rig_height};
use rigscope::motion::MotionOptions;
use rigscope::motion::checks::{check_one_clip, check_one_clip_on_contacts_of};
use rigscope::motion::foot_lock::{FootLockError, FootLockOptions, bake_foot_lock, plan_foot_lock};
use rigscope::rig::{Channel, Clip, Interpolation, Property, Rig};

fn clip_named(rig: &Rig, name: &str) -> usize {
    (rig.clips.iter().position(|c| c.name == name)).unwrap_or_else(|| panic!("{}: no clip {name}", rig.name))
}

/// The largest slide of any foot during its contacts.
fn worst_slide(motion: &rigscope::motion::ClipMotion) -> f32 {
    motion.feet.iter().map(|f| f.max_slide).fold(0.0, f32::max)
}

/// The rotation of a world matrix with its scale taken out.
fn rotation_of(m: &glam::Mat4) -> Quat {
    let (_, rotation, _) = m.to_scale_rotation_translation();
    rotation
}

fn angle_deg(a: Quat, b: Quat) -> f32 {
    (2.0 * a.dot(b).abs().min(1.0).acos()).to_degrees()
}

/// Clip `clip` with the lock and without at `time`: every node's world matrix, both ways.
fn both_ways(rig: &Rig, lock: &FootLock, clip: usize, time: f32) -> (Vec<glam::Mat4>, Vec<glam::Mat4>) {
    let mut pose = PoseBuffers::new(rig);
    evaluate_pose(rig, &PoseInputs::clip_at(Some(clip), time), &mut pose);
    let free = pose.worlds.clone();
    let inputs = PoseInputs {
        foot_lock: Some(lock),
        ..PoseInputs::clip_at(Some(clip), time)
    };
    evaluate_pose(rig, &inputs, &mut pose);
    (free, pose.worlds.clone())
}

/// Xbot's and Soldier's walks and runs, each rig with its two clips' names (`None`: the shared
/// folders are absent).
fn shared_walks() -> Option<[(Rig, [&'static str; 2]); 2]> {
    let (rigs, corpus) = (shared_rigs()?, shared_folder("corpus/rigs")?);
    Some([
        (load_rig(&rigs, "real/Xbot.glb"), ["walk", "run"]),
        (load_rig(&corpus, "Soldier.glb"), ["Walk", "Run"]),
    ])
}

/// During every contact the held foot is on its pin across the ground, at the clip's own
/// height, and turned to the pin's heading; the lock reaches every pin of these walks.
#[test]
fn held_feet_are_on_their_pins_during_contacts() {
    let Some(cases) = shared_walks() else { return };
    for (rig, clips) in &cases {
        let height = rig_height(rig);
        for name in clips {
            let clip = clip_named(rig, name);
            let lock = plan_foot_lock(rig, clip, &FootLockOptions::default()).unwrap();
            assert_eq!(lock.legs.len(), 2, "{name}: two legs");
            let (mut checked, mut worst_across, mut worst_up, mut worst_turn) = (0, 0.0f32, 0.0f32, 0.0f32);
            for leg in &lock.legs {
                assert!(
                    !leg.pins.is_empty(),
                    "{name}: {} has no contact",
                    rig.nodes[leg.foot].name
                );
                for pin in &leg.pins {
                    for k in 0..=8 {
                        let time = pin.start + (pin.end - pin.start) * k as f32 / 8.0;
                        let (free, held) = both_ways(rig, &lock, clip, time);
                        let foot = held[leg.foot].w_axis.truncate();
                        let animated = free[leg.foot].w_axis.truncate();
                        let want = pin.place_at(time);
                        let across = Vec3::new(foot.x - want.x, 0.0, foot.z - want.z).length() / height;
                        let up = (foot.y - animated.y).abs() / height;
                        let heading = heading_of(rotation_of(&held[leg.foot])).unwrap();
                        let turn = angle_deg(heading, pin.heading);
                        worst_across = worst_across.max(across);
                        worst_up = worst_up.max(up);
                        worst_turn = worst_turn.max(turn);
                        checked += 1;
                    }
                }
            }
            println!(
                "{}/{name}: {checked} moments; worst {worst_across:.2e} heights across, {worst_up:.2e} up, {worst_turn:.3}° turned",
                rig.name
            );
            // A leg held at 99.5% of its length leaves the foot within a millimetre of its pin
            // (the knee's angle comes from an arccosine near 1, where f32 loses digits).
            assert!(worst_across < 1e-3 && worst_up < 1e-3, "{name}: off its pin");
            assert!(worst_turn < 0.5, "{name}: turned {worst_turn}°");
        }
    }
}

/// A clip whose hips sway from side to side over still legs: its feet skate with the hips.
/// Locked, they stay put (slide at most a fifth of the unlocked one) while the hips keep
/// swaying.
#[test]
fn a_swaying_clip_keeps_its_sway_and_plants_its_feet() {
    let Some(rigs) = shared_rigs() else { return };
    let mut rig = load_rig(&rigs, "real/Xbot.glb");
    let hips = rig.find_node("mixamorig:Hips").unwrap();
    let height = rig_height(&rig);
    // Sway of 4% of the height, across (x) in the world, put into the hips' parent's space.
    let parent = rig.nodes[hips].parent.unwrap();
    let parent_world = ClipSampler::new(&rig).worlds_at(None, 0.0)[parent];
    let across = parent_world.inverse().transform_vector3(Vec3::X * 0.04 * height);
    let rest = rig.nodes[hips].rest.translation;
    let times: Vec<f32> = (0..=40).map(|k| k as f32 / 40.0 * 2.0).collect();
    let values = times
        .iter()
        .map(|t| (rest + across * (std::f32::consts::PI * t).sin()).extend(0.0))
        .collect();
    rig.clips.push(Clip {
        name: "sway".into(),
        duration: 2.0,
        channels: vec![Channel {
            node: hips,
            property: Property::Translation,
            interpolation: Interpolation::Linear,
            times,
            values,
        }],
        source: None,
    });
    let clip = rig.clips.len() - 1;
    let unlocked = rig.clone();
    let baked = bake_foot_lock(&mut rig, clip, &FootLockOptions::default()).unwrap();
    let before = worst_slide(&check_one_clip(&unlocked, clip, &MotionOptions::default()));
    let after = worst_slide(&check_one_clip_on_contacts_of(
        &rig,
        &unlocked,
        clip,
        &MotionOptions::default(),
    ));
    let sway = |rig: &Rig| {
        let mut sampler = ClipSampler::new(rig);
        let xs: Vec<f32> = (0..=60)
            .map(|k| sampler.position_at(Some(clip), k as f32 / 30.0, hips).x)
            .collect();
        xs.iter().copied().fold(f32::MIN, f32::max) - xs.iter().copied().fold(f32::MAX, f32::min)
    };
    let (sway_before, sway_after) = (sway(&unlocked) / height, sway(&rig) / height);
    println!(
        "sway clip: {} pins; slide {before:.4} → {after:.4} of the height; hips sway {sway_before:.4} → {sway_after:.4}",
        baked.pins
    );
    assert!(before > 0.035, "the unlocked feet slide {before}");
    assert!(after <= before / 5.0, "locked slide {after} against {before}");
    assert!(
        sway_after >= 0.9 * sway_before,
        "the hips sway {sway_after}, were {sway_before}"
    );
}

/// On the shared walks and runs the lock never adds slide, takes the worst of it away, and
/// what it writes into the keys plays as the live lock does.
#[test]
fn shared_walks_slide_less_locked_and_bake_as_they_play() {
    let Some(cases) = shared_walks() else { return };
    for (rig, clips) in cases {
        let height = rig_height(&rig);
        for name in clips {
            let clip = clip_named(&rig, name);
            let lock = plan_foot_lock(&rig, clip, &FootLockOptions::default()).unwrap();
            let mut baked = rig.clone();
            bake_foot_lock(&mut baked, clip, &FootLockOptions::default()).unwrap();
            let before = worst_slide(&check_one_clip(&rig, clip, &MotionOptions::default()));
            let after = worst_slide(&check_one_clip_on_contacts_of(
                &baked,
                &rig,
                clip,
                &MotionOptions::default(),
            ));
            println!(
                "{}/{name}: largest foot slide {before:.4} → {after:.4} of the height",
                rig.name
            );
            assert!(after <= before + 1e-4 && after < 0.005, "{name}: {before} → {after}");
            // The baked keys sit at 30 a second: at them the baked clip is the live lock.
            let mut baked_pose = PoseBuffers::new(&baked);
            let duration = rig.clips[clip].duration;
            let frames = (duration * 30.0).ceil() as usize + 1;
            for k in 0..frames {
                let time = duration * k as f32 / (frames - 1) as f32;
                let (_, live) = both_ways(&rig, &lock, clip, time);
                evaluate_pose(&baked, &PoseInputs::clip_at(Some(clip), time), &mut baked_pose);
                for leg in &lock.legs {
                    let gap = live[leg.foot].w_axis.distance(baked_pose.worlds[leg.foot].w_axis) / height;
                    assert!(
                        gap < 1e-4,
                        "{name} at {time}: baked foot {gap} heights from the live lock"
                    );
                }
            }
        }
    }
}

#[test]
fn rigs_without_legs_say_why() {
    let Some(rigs) = shared_rigs() else { return };
    let simple = load_rig(&rigs, "SimpleSkin.gltf");
    let mut with_clip = simple.clone();
    if with_clip.clips.is_empty() {
        with_clip.clips.push(Clip {
            name: "still".into(),
            duration: 1.0,
            channels: Vec::new(),
            source: None,
        });
    }
    assert_eq!(
        plan_foot_lock(&with_clip, 0, &FootLockOptions::default()),
        Err(FootLockError::NoFeet)
    );
    assert_eq!(
        plan_foot_lock(&with_clip, 99, &FootLockOptions::default()),
        Err(FootLockError::NoClip(99))
    );
    let xbot = load_rig(&rigs, "real/Xbot.glb");
    let named = |feet: &[&str]| FootLockOptions {
        motion: MotionOptions {
            feet: feet.iter().map(|f| f.to_string()).collect(),
            ..MotionOptions::default()
        },
        ..FootLockOptions::default()
    };
    assert_eq!(
        plan_foot_lock(&xbot, 0, &named(&["LeftPaw"])),
        Err(FootLockError::UnknownFoot("LeftPaw".into()))
    );
    // The hips have a parent but no grandparent joint to be a thigh: not the end of a leg.
    let root_child = (0..xbot.nodes.len())
        .find(|&n| xbot.nodes[n].parent.is_some_and(|p| xbot.nodes[p].parent.is_none()))
        .unwrap();
    let name = xbot.nodes[root_child].name.clone();
    assert_eq!(
        plan_foot_lock(&xbot, 0, &named(&[&name])),
        Err(FootLockError::NotALeg(name.clone()))
    );
}

/// From the command line: `clips --lock-feet` writes the lock into the walk, `audit --motion
/// --lock-feet` measures it, and `render --lock-feet` draws it.
#[test]
fn the_command_line_bakes_measures_and_draws_the_lock() {
    let Some(rigs) = shared_rigs() else { return };
    let input = rigs.join("real/Xbot.glb");
    let input = input.to_str().unwrap();
    let dir = temp_dir("foot_lock_cli");
    let out = dir.join("locked.glb");
    let (code, stdout, stderr) = run_rigscope(&["clips", input, "--lock-feet", "walk", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("clip 'walk': feet locked on 4 contact(s)"), "{stdout}");
    let original = load_rig(&rigs, "real/Xbot.glb");
    let written = rigscope::rig::load_file(&out).unwrap();
    let clip = clip_named(&written, "walk");
    let slide = worst_slide(&check_one_clip_on_contacts_of(
        &written,
        &original,
        clip,
        &MotionOptions::default(),
    ));
    assert!(slide < 0.005, "the saved walk slides {slide}");
    // The other clips are written as the file had them.
    for (a, b) in original
        .clips
        .iter()
        .zip(&written.clips)
        .filter(|(a, _)| a.name != "walk")
    {
        assert_eq!((a.name.as_str(), a.channels.len()), (b.name.as_str(), b.channels.len()));
    }

    let (code, stdout, stderr) = run_rigscope(&["audit", input, "--motion", "--lock-feet", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    // Flagged (1) for the run's loop seam, which the file has either way; never an error (2).
    assert!(matches!(code, Some(0 | 1)), "{stdout}{stderr}");
    assert_eq!(report["feet_locked"], true);
    let violations = report["violations"].as_array().unwrap();
    assert!(
        !violations.iter().any(|v| v.as_str().unwrap().contains("slides")),
        "{violations:?}"
    );
    let walk = (report["clips"].as_array().unwrap().iter())
        .find(|c| c["clip"] == "walk")
        .unwrap();
    for foot in walk["feet"].as_array().unwrap() {
        assert!(foot["max_slide"].as_f64().unwrap() < 0.005, "{foot}");
    }

    let Some(_gpu) = gpu::gpu_or_skip() else { return };
    let render = |lock: bool, png: &str| {
        let png = dir.join(png);
        let mut args = vec![input, "--clip", "walk", "--time", "0.3", "--size", "160x160", "--out"];
        args.insert(0, "render");
        let png_text = png.to_str().unwrap().to_owned();
        args.push(&png_text);
        if lock {
            args.push("--lock-feet");
        }
        let (code, stdout, stderr) = run_rigscope(&args);
        assert_eq!(code, Some(0), "{stdout}{stderr}");
        image::open(&png).unwrap().to_rgba8()
    };
    let (free, held) = (render(false, "free.png"), render(true, "held.png"));
    let moved = different_pixels(&free, &held);
    println!("render --lock-feet: {moved} pixels differ at 0.3 s");
    assert!(moved > 20, "the lock changed {moved} pixels");
}

/// In the window: Layers ▸ Lock feet holds the playing walk's feet, the panel says how many
/// contacts each foot has, and unticking lets the clip slide again.
#[test]
fn the_layers_panel_locks_the_feet_of_the_clip_playing() {
    use egui_kittest::kittest::Queryable;
    let Some(rigs) = shared_rigs() else { return };
    let rig = load_rig(&rigs, "real/Xbot.glb");
    let clip = clip_named(&rig, "walk");
    let lock = plan_foot_lock(&rig, clip, &FootLockOptions::default()).unwrap();
    let left = &lock.legs[0];
    let pin = left.pins[0];
    let time = (pin.start + pin.end) / 2.0;
    let mut viewer = rigscope::viewer::Viewer::new(rig.clone(), Some(rigs.join("real/Xbot.glb")));
    viewer.hold(Some(clip), time);
    let mut harness = common::main_window(viewer, 1400.0, 2400.0);
    harness.run();
    harness.get_by_label("Layers, crossfade, attachments").click();
    harness.run();
    harness.get_by_label("Lock feet").click();
    harness.run();
    let foot_at = |harness: &mut egui_kittest::Harness<'_, (rigscope::viewer::Viewer, rigscope::ui::UiState)>| {
        let (viewer, _) = harness.state_mut();
        viewer.pose().worlds[left.foot].w_axis.truncate()
    };
    let held = foot_at(&mut harness);
    assert!(harness.state().0.lock_feet());
    let counted = format!("{}: {} contact(s) held", rig.nodes[left.foot].name, left.pins.len());
    harness.get_by_label(&counted);
    let want = pin.place_at(time);
    let off = Vec3::new(held.x - want.x, 0.0, held.z - want.z).length() / rig_height(&rig);
    assert!(off < 1e-3, "the held foot is {off} heights off its pin");
    harness.get_by_label("Lock feet").click();
    harness.run();
    let free = foot_at(&mut harness);
    let (unlocked, _) = both_ways(&rig, &lock, clip, time);
    assert_eq!(
        free,
        unlocked[left.foot].w_axis.truncate(),
        "unticked: the clip's own foot"
    );
    assert!(held.distance(free) / rig_height(&rig) > 0.01, "the lock moved the foot");

    // Locked again and baked: the clip's keys now plant the foot, the live lock is off, and
    // Save as… writes the planted walk.
    harness.get_by_label("Lock feet").click();
    harness.run();
    harness.get_by_label("Bake into the clip").click();
    harness.run();
    assert!(!harness.state().0.lock_feet(), "baking turns the live lock off");
    let baked = foot_at(&mut harness);
    let off = Vec3::new(baked.x - want.x, 0.0, baked.z - want.z).length() / rig_height(&rig);
    assert!(off < 1e-3, "the baked foot is {off} heights off its pin");
    let dir = temp_dir("foot_lock_bake_ui");
    let out = dir.join("planted.glb");
    let viewer = &mut harness.state_mut().0;
    assert_eq!(viewer.history().undo_label(), Some("lock the feet of walk"));
    viewer.save_as(&out).unwrap();
    let written = rigscope::rig::load_file(&out).unwrap();
    let slide = worst_slide(&check_one_clip_on_contacts_of(
        &written,
        &rig,
        clip_named(&written, "walk"),
        &MotionOptions::default(),
    ));
    assert!(slide < 0.005, "the saved walk slides {slide}");
}

/// The lock changes the legs during contacts and nothing else: rendered, the silhouette of a
/// locked walk is the clip's own (IoU at least 0.97) whenever no pin holds, and stays close
/// while one does. In these walks a foot is planted at every moment, so the second is what is
/// measured: Xbot's walk slides its foot by 0.12 of its height mid-contact, which the lock
/// takes out, and the legs' pixels move by that much.
#[test]
fn locked_walks_keep_their_silhouette_outside_the_contacts() {
    let (Some(rigs), Some(corpus)) = (shared_rigs(), shared_folder("corpus/rigs")) else {
        return;
    };
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let foreground = |image: &image::RgbaImage| -> Vec<bool> {
        let background = *image.get_pixel(0, 0);
        (image.pixels())
            .map(|p| p.0.iter().zip(background.0).any(|(a, b)| a.abs_diff(b) > 24))
            .collect()
    };
    let iou = |a: &[bool], b: &[bool]| {
        let both = a.iter().zip(b).filter(|(a, b)| **a && **b).count();
        let either = a.iter().zip(b).filter(|(a, b)| **a || **b).count();
        both as f32 / either.max(1) as f32
    };
    for (rig, name) in [
        (load_rig(&rigs, "real/Xbot.glb"), "walk"),
        (load_rig(&corpus, "Soldier.glb"), "Walk"),
    ] {
        let clip = clip_named(&rig, name);
        let lock = plan_foot_lock(&rig, clip, &FootLockOptions::default()).unwrap();
        let mut viewer = rigscope::viewer::Viewer::new(rig.clone(), None);
        viewer.view.options.grid = false;
        viewer.hold(Some(clip), 0.0);
        let duration = rig.clips[clip].duration;
        let (mut free_worst, mut free_frames) = (1.0f32, 0);
        let mut held_overlaps = Vec::new();
        for k in 0..30 {
            let time = duration * k as f32 / 30.0;
            viewer.seek(time);
            viewer.set_lock_feet(false).unwrap();
            let free = foreground(&rigscope::screenshot::render_view(&gpu, &mut viewer, 160, 160).unwrap());
            viewer.set_lock_feet(true).unwrap();
            let held = foreground(&rigscope::screenshot::render_view(&gpu, &mut viewer, 160, 160).unwrap());
            let overlap = iou(&free, &held);
            let holding = lock
                .legs
                .iter()
                .flat_map(|leg| &leg.pins)
                .any(|pin| pin.weight_at(time, lock.blend_seconds) > 0.0);
            if holding {
                held_overlaps.push(overlap);
            } else {
                free_worst = free_worst.min(overlap);
                free_frames += 1;
            }
        }
        held_overlaps.sort_by(f32::total_cmp);
        let held_median = held_overlaps[held_overlaps.len() / 2];
        println!(
            "{}/{name}: silhouette IoU locked vs clip, {free_frames} frames without a pin: worst {free_worst:.4}; {} with one: median {held_median:.4}, worst {:.4}",
            rig.name,
            held_overlaps.len(),
            held_overlaps[0]
        );
        assert!(free_worst >= 0.97, "{name}: {free_worst}");
        assert!(held_median >= 0.9, "{name}: {held_overlaps:?}");
    }
}
