//! The cost of layering: one frame of pose evaluation on Fox.glb (from ../shared/rigs) with the
//! base clip alone and with 2 and 4 extra layers (mix and additive), time moving 1/60 s a frame.
//!
//! `cargo bench --bench layers`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rigscope::anim::{AnimationStack, BlendMode, Layer, Player, PoseBuffers, evaluate_pose};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

fn layering(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/rigs/Fox.glb");
    let Ok(rig) = rigscope::rig::load_file(&path) else {
        eprintln!("skipped: {} is absent", path.display());
        return;
    };
    let mut group = c.benchmark_group("layered pose, Fox.glb");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for extra in [0usize, 2, 4] {
        let mut stack = AnimationStack::new(&rig);
        for k in 0..extra {
            let mode = if k % 2 == 0 {
                BlendMode::Mix
            } else {
                BlendMode::Additive
            };
            stack.layers.push(Layer {
                weight: 0.5,
                mode,
                ..Layer::new((k + 1) % rig.clips.len())
            });
        }
        let mut pose = PoseBuffers::new(&rig);
        let mut player = Player {
            clip: Some(0),
            ..Player::default()
        };
        let duration = rig.clips[0].duration;
        group.bench_function(BenchmarkId::new("extra layers", extra), |b| {
            b.iter(|| {
                player.advance(1.0 / 60.0, duration);
                evaluate_pose(&rig, &stack.inputs(&player), &mut pose);
                black_box(&pose.palettes);
            })
        });
    }
}

criterion_group!(benches, layering);
criterion_main!(benches);
