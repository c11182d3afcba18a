//! Pose evaluation: palette build (locals → world transforms → palette) for chain and bushy
//! skeletons of 16, 64, 256 and 1024 joints, and clip sampling (one frame, playback moving
//! forward 1/60 s per frame) for Fox.glb (from ../shared/rigs, when present) and for a generated
//! 256-joint rig with translation, rotation and scale channels on every joint.
//!
//! `cargo bench --bench palette`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rigscope::anim::affine::local_to_world_per_joint;
use rigscope::anim::{PoseBuffers, build_palette, local_to_world, sample_clip};
use rigscope::rig::{Interpolation, Rig};
use rigscope::synthetic::{Shape, skeleton, trs_clip};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

fn palette_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("palette build");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for shape in [Shape::Chain, Shape::Bushy] {
        for joints in [16, 64, 256, 1024] {
            let mut rig = skeleton(joints, shape);
            rig.clips.push(trs_clip(&rig, 30, 1.0, Interpolation::Linear));
            let mut pose = PoseBuffers::new(&rig);
            // A posed (not rest) set of locals; the build itself does not depend on them.
            pose.evaluate(&rig, Some(0), 0.4);
            let (locals, mut worlds, mut palette) =
                (pose.locals.clone(), pose.worlds.clone(), pose.palettes[0].clone());
            let skin = &rig.skins[0];
            group.bench_function(BenchmarkId::new(shape.label(), joints), |b| {
                b.iter(|| {
                    local_to_world(&rig.nodes, black_box(&locals), &mut worlds);
                    build_palette(&skin.joints, &skin.inverse_binds, &worlds, &mut palette);
                    black_box(&palette);
                })
            });
            // The two passes apart, to see where the time goes.
            group.bench_function(BenchmarkId::new(format!("{} world pass", shape.label()), joints), |b| {
                b.iter(|| {
                    local_to_world(&rig.nodes, black_box(&locals), &mut worlds);
                    black_box(&worlds);
                })
            });
            group.bench_function(
                BenchmarkId::new(format!("{} palette pass", shape.label()), joints),
                |b| {
                    b.iter(|| {
                        build_palette(&skin.joints, &skin.inverse_binds, black_box(&worlds), &mut palette);
                        black_box(&palette);
                    })
                },
            );
            // The world pass one local at a time, as before the AVX-512 kernel converted 32 at
            // a time (the same bits): the before of that change, in the same run.
            group.bench_function(BenchmarkId::new(format!("{} per joint", shape.label()), joints), |b| {
                b.iter(|| {
                    local_to_world_per_joint(&rig.nodes, black_box(&locals), &mut worlds);
                    build_palette(&skin.joints, &skin.inverse_binds, &worlds, &mut palette);
                    black_box(&palette);
                })
            });
            // The same formula in plain glam 4×4 (a general inverse and full products): the
            // baseline the affine path is compared with in the same run.
            group.bench_function(
                BenchmarkId::new(format!("{} plain glam 4x4", shape.label()), joints),
                |b| {
                    b.iter(|| {
                        let locals = black_box(&locals);
                        for (i, node) in rig.nodes.iter().enumerate() {
                            let local = locals[i].to_mat4();
                            worlds[i] = node.parent.map_or(local, |p| worlds[p] * local);
                        }
                        let to_mesh = worlds[0].inverse();
                        for ((out, &joint), inverse_bind) in
                            palette.iter_mut().zip(&skin.joints).zip(&skin.inverse_binds)
                        {
                            *out = to_mesh * worlds[joint] * *inverse_bind;
                        }
                        black_box(&palette);
                    })
                },
            );
        }
    }
    // Real skeletons (depth-first, chains broken by branches), from ../shared/rigs when present:
    // the world pass alone, blocked and one local at a time.
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/rigs");
    for file in [
        "real/Xbot.glb",
        "real/BrainStem.glb",
        "real/RobotExpressive.glb",
        "fbx/mixamo.fbx",
    ] {
        let Ok(rig) = rigscope::rig::load_file(&shared.join(file)) else {
            eprintln!("skipped {file}: not loaded from {}", shared.display());
            continue;
        };
        let mut locals: Vec<_> = rig.nodes.iter().map(|n| n.rest).collect();
        if let Some(clip) = rig.clips.first() {
            let mut hints = vec![0; clip.channels.len()];
            sample_clip(&rig.nodes, Some(clip), clip.duration * 0.4, &mut hints, &mut locals);
        }
        let mut worlds = vec![glam::Mat4::IDENTITY; rig.nodes.len()];
        let name = format!("{file} ({} nodes)", rig.nodes.len());
        group.bench_function(BenchmarkId::new("world pass", &name), |b| {
            b.iter(|| {
                local_to_world(&rig.nodes, black_box(&locals), &mut worlds);
                black_box(&worlds);
            })
        });
        group.bench_function(BenchmarkId::new("world pass per joint", &name), |b| {
            b.iter(|| {
                local_to_world_per_joint(&rig.nodes, black_box(&locals), &mut worlds);
                black_box(&worlds);
            })
        });
    }
    group.finish();
}

/// Samples `clip` frame after frame at 60 FPS, looping, as playback does.
fn bench_sampling(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    rig: &Rig,
    clip: usize,
) {
    let mut locals: Vec<_> = rig.nodes.iter().map(|n| n.rest).collect();
    let mut hints = vec![0; rig.clips[clip].channels.len()];
    let duration = rig.clips[clip].duration.max(1e-3);
    let mut time = 0.0f32;
    group.bench_function(name, |b| {
        b.iter(|| {
            time = (time + 1.0 / 60.0) % duration;
            sample_clip(
                &rig.nodes,
                rig.clips.get(clip),
                black_box(time),
                &mut hints,
                &mut locals,
            );
            black_box(&locals);
        })
    });
}

fn sampling(c: &mut Criterion) {
    let mut group = c.benchmark_group("clip sampling");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let fox = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/rigs/Fox.glb");
    if fox.is_file() {
        let rig = rigscope::rig::load_file(&fox).expect("Fox.glb loads");
        for (i, clip) in rig.clips.iter().enumerate() {
            bench_sampling(
                &mut group,
                &format!("Fox {} ({} channels)", clip.name, clip.channels.len()),
                &rig,
                i,
            );
        }
    } else {
        eprintln!("skipped Fox.glb: {} is absent", fox.display());
    }
    let mut rig = skeleton(256, Shape::Chain);
    rig.clips.push(trs_clip(&rig, 60, 2.0, Interpolation::Linear));
    rig.clips.push(trs_clip(&rig, 60, 2.0, Interpolation::CubicSpline));
    bench_sampling(&mut group, "256 joints TRS LINEAR (768 channels)", &rig, 0);
    bench_sampling(&mut group, "256 joints TRS CUBICSPLINE (768 channels)", &rig, 1);
    group.finish();
}

criterion_group!(benches, palette_build, sampling);
criterion_main!(benches);
