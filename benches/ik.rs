//! What posing by hand costs a frame, on Xbot.glb (from ../shared/rigs/real): one two-bone IK
//! solve (left arm), one goal applied to a pose (the solve plus the world matrices made again),
//! a four-joint look-at chain (spine to head), and a whole pose evaluation of the walk with its
//! feet locked against the same evaluation unlocked.
//!
//! `cargo bench --bench ik`

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{Mat4, Quat, Vec3};
use rigscope::anim::ik::{AimChain, TwoBoneIk, fill_chain_weights};
use rigscope::anim::ik_layer::{IkGoal, IkOutcome, apply_ik_goals};
use rigscope::anim::{PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::motion::foot_lock::{FootLockOptions, plan_foot_lock};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

fn posing(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/rigs/real/Xbot.glb");
    let Ok(rig) = rigscope::rig::load_file(&path) else {
        eprintln!("skipped: {} is absent", path.display());
        return;
    };
    let node = |name: &str| rig.find_node(name).unwrap_or_else(|| panic!("Xbot has no {name}"));
    let walk = rig
        .clips
        .iter()
        .position(|c| c.name == "walk")
        .expect("Xbot has a walk");
    let mut pose = PoseBuffers::new(&rig);
    evaluate_pose(&rig, &PoseInputs::clip_at(Some(walk), 0.3), &mut pose);
    let worlds = pose.worlds.clone();
    let (shoulder, elbow, hand) = (
        node("mixamorig:LeftArm"),
        node("mixamorig:LeftForeArm"),
        node("mixamorig:LeftHand"),
    );
    // A point the arm reaches: the hand moved a tenth of the arm's length forwards and up.
    let reach = worlds[shoulder].w_axis.distance(worlds[hand].w_axis);
    let target = worlds[hand].w_axis.truncate() + Vec3::new(0.0, 0.1, 0.1) * reach;

    let mut group = c.benchmark_group("posing, Xbot.glb");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("two-bone solve (arm)", |b| {
        let mut ik = TwoBoneIk::new(worlds[shoulder], worlds[elbow], worlds[hand], target);
        ik.soften = 0.97;
        b.iter(|| black_box(black_box(&ik).solve()))
    });
    let goal = IkGoal::for_end_joint(&rig.nodes, hand, target).expect("the hand ends a chain");
    let (locals, mut outcomes) = (pose.locals.clone(), [IkOutcome::Skipped]);
    let (mut scratch_locals, mut scratch_worlds) = (locals.clone(), worlds.clone());
    group.bench_function("goal applied to the pose (arm)", |b| {
        b.iter(|| {
            scratch_locals.copy_from_slice(&locals);
            scratch_worlds.copy_from_slice(&worlds);
            apply_ik_goals(
                &rig.nodes,
                &[goal],
                &mut scratch_locals,
                &mut scratch_worlds,
                &mut outcomes,
            );
            black_box(&scratch_worlds);
        })
    });
    let chain: Vec<usize> = [
        "mixamorig:Head",
        "mixamorig:Neck",
        "mixamorig:Spine2",
        "mixamorig:Spine1",
    ]
    .iter()
    .map(|n| node(n))
    .collect();
    let models: Vec<Mat4> = chain.iter().map(|&j| worlds[j]).collect();
    let mut weights = [0.0f32; 4];
    fill_chain_weights(0.5, &mut weights);
    let look_at = worlds[chain[0]].w_axis.truncate() + Vec3::new(0.5, 0.2, 1.0) * reach;
    group.bench_function("look-at chain (4 joints)", |b| {
        let aim = AimChain {
            joint_models: &models,
            joint_weights: &weights,
            chain_weight: 1.0,
            target: look_at,
            forward: Vec3::Z,
            up: Vec3::Y,
            offset: Vec3::ZERO,
            pole: Vec3::Y,
            twist: 0.0,
        };
        let mut corrections = [Quat::IDENTITY; 4];
        b.iter(|| black_box(black_box(&aim).solve(&mut corrections)))
    });
    let lock = plan_foot_lock(&rig, walk, &FootLockOptions::default()).expect("Xbot's feet lock");
    let mut time = 0.0f32;
    let duration = rig.clips[walk].duration;
    for (label, locked) in [("walk pose, feet free", false), ("walk pose, feet locked", true)] {
        group.bench_function(label, |b| {
            b.iter(|| {
                time = (time + 1.0 / 60.0) % duration;
                let inputs = PoseInputs {
                    foot_lock: locked.then_some(&lock),
                    ..PoseInputs::clip_at(Some(walk), time)
                };
                evaluate_pose(&rig, &inputs, &mut pose);
                black_box(&pose.palettes);
            })
        });
    }
}

criterion_group!(benches, posing);
criterion_main!(benches);
