//! CPU skinning with 64 joints: one static matrix for every vertex (the floor: same memory
//! traffic, no blending), the reference LBS and every fast LBS kernel this CPU runs, with 1, 4
//! and 8 influences (random normalized weights, fixed seed), positions only and
//! positions+normals, on 100k and 1M vertices; dual quaternion skinning (reference and fast);
//! and threads against one thread over mesh sizes (where threads start to pay).
//!
//! `cargo bench --bench skinning -- --warm-up-time 1 --measurement-time 3`; per-vertex time =
//! reported time / vertices. Before criterion's groups, a summary measured in this same run
//! prints medians in ns/vertex and each one's ratio to the static transform (and DQS's to LBS),
//! so that ratios never mix runs. `SKINNING_SUMMARY_ONLY=1` prints only the summary;
//! `SKINNING_VERTICES=10000,100000` sets its mesh sizes; `SKINNING_NO_SUMMARY=1` skips it.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{Mat4, Quat, Vec3};
use rigscope::rig::Influences;
use rigscope::skin::dqs::skin_dqs_reference;
use rigscope::skin::fast::{Kernel, skin_lbs_parallel, skin_lbs_with, static_transform};
use rigscope::skin::{DualQuat, blend_matrix, dual_quat_palette, skin_dqs, skin_lbs_reference};
use std::hint::black_box;
use std::time::{Duration, Instant};

const JOINTS: usize = 64;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0))
    }
}

struct Data {
    palette: Vec<Mat4>,
    dual_quats: Vec<DualQuat>,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    /// 1, 4 and 8 influences per vertex.
    influences: [Influences; 3],
    out_p: Vec<Vec3>,
    out_n: Vec<Vec3>,
}

const COUNTS: [usize; 3] = [1, 4, 8];

fn influences(rng: &mut XorShift, vertices: usize, per_vertex: usize) -> Influences {
    let sets = per_vertex.div_ceil(4);
    let mut out = Influences {
        sets,
        joints: Vec::with_capacity(vertices * sets),
        weights: Vec::with_capacity(vertices * sets),
    };
    for _ in 0..vertices {
        let mut j = [0u16; 8];
        let mut w = [0f32; 8];
        for k in 0..per_vertex {
            j[k] = (rng.next() % JOINTS as u64) as u16;
            w[k] = rng.range(0.05, 1.0);
        }
        let sum: f32 = w.iter().sum();
        w.iter_mut().for_each(|w| *w /= sum);
        for s in 0..sets {
            out.joints.push([j[4 * s], j[4 * s + 1], j[4 * s + 2], j[4 * s + 3]]);
            out.weights.push([w[4 * s], w[4 * s + 1], w[4 * s + 2], w[4 * s + 3]]);
        }
    }
    out
}

fn data(vertices: usize) -> Data {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let palette: Vec<Mat4> = (0..JOINTS)
        .map(|_| {
            let r = Quat::from_euler(
                glam::EulerRot::XYZ,
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
            );
            Mat4::from_scale_rotation_translation(Vec3::splat(rng.range(0.8, 1.2)), r, rng.vec3())
        })
        .collect();
    let mut dual_quats = vec![DualQuat::IDENTITY; JOINTS];
    dual_quat_palette(&palette, &mut dual_quats);
    let positions = (0..vertices).map(|_| rng.vec3()).collect();
    let normals = (0..vertices).map(|_| rng.vec3().normalize_or(Vec3::Y)).collect();
    let influences = COUNTS.map(|count| influences(&mut rng, vertices, count));
    Data {
        palette,
        dual_quats,
        positions,
        normals,
        influences,
        out_p: vec![Vec3::ZERO; vertices],
        out_n: vec![Vec3::ZERO; vertices],
    }
}

/// What one measurement runs.
#[derive(Clone, Copy, PartialEq)]
enum Method {
    Static,
    Reference,
    Fast(Kernel),
    /// The best kernel over this many threads (0: [`skin_lbs_parallel`]'s own choice).
    Threads(usize),
    DqsReference,
    DqsFast,
}

impl Method {
    fn label(self) -> String {
        match self {
            // The library's function names, as `rigscope bench` and the peer harness print them.
            Method::Static => "static_transform".into(),
            Method::Reference => "skin_lbs_reference".into(),
            Method::Fast(kernel) => format!("skin_lbs {}", kernel.label()),
            Method::Threads(0) => "skin_lbs_parallel auto".into(),
            Method::Threads(n) => format!("skin_lbs_parallel {n}"),
            Method::DqsReference => "skin_dqs_reference".into(),
            Method::DqsFast => "skin_dqs".into(),
        }
    }
}

/// Runs `method` once over all of `d`'s vertices with `influences[count]`.
fn run(d: &mut Data, method: Method, count: usize, with_normals: bool) {
    let inf = &d.influences[count];
    let normals: &[Vec3] = if with_normals { &d.normals } else { &[] };
    let pair = with_normals.then_some((&d.normals[..], &mut d.out_n[..]));
    match method {
        Method::Static => static_transform(
            black_box(&d.palette[0]),
            &d.positions,
            normals,
            &mut d.out_p,
            &mut d.out_n,
        ),
        Method::Reference if with_normals => {
            skin_lbs_reference(&d.palette, inf, &d.positions, &d.normals, &mut d.out_p, &mut d.out_n)
        }
        // The reference's formula without the normals.
        Method::Reference => {
            for (v, (o, p)) in d.out_p.iter_mut().zip(&d.positions).enumerate() {
                *o = blend_matrix(&d.palette, inf, v).transform_point3(*p);
            }
        }
        Method::Fast(kernel) => skin_lbs_with(kernel, &d.palette, inf, &d.positions, pair, &mut d.out_p),
        Method::Threads(n) => skin_lbs_parallel(Kernel::detect(), n, &d.palette, inf, &d.positions, pair, &mut d.out_p),
        Method::DqsReference => {
            skin_dqs_reference(&d.dual_quats, inf, &d.positions, &d.normals, &mut d.out_p, &mut d.out_n)
        }
        Method::DqsFast => skin_dqs(&d.dual_quats, inf, &d.positions, &d.normals, &mut d.out_p, &mut d.out_n),
    }
    black_box(&d.out_p);
}

/// Median ns/vertex of `method` over `samples` runs after one warm-up run.
fn median_ns(d: &mut Data, method: Method, count: usize, with_normals: bool, samples: usize) -> f64 {
    run(d, method, count, with_normals);
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            run(d, method, count, with_normals);
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[samples / 2] * 1e9 / d.positions.len() as f64
}

/// What moving a vertex's bytes costs at the speed one thread copies memory (the best of seven
/// copies of 256 MiB, each byte read once and written once): the f32 layout with 4 influences
/// and normals reads 48 bytes a vertex (positions, normals, u16 joints, f32 weights) and writes
/// 24, so that 72 bytes take `72 / speed`, the traffic floor.
fn copy_floor_ns() -> f64 {
    let bytes = 256 << 20;
    let source = vec![1u8; bytes];
    let mut copy = vec![0u8; bytes];
    let best = (0..7)
        .map(|_| {
            let start = Instant::now();
            copy.copy_from_slice(&source);
            black_box(&copy);
            start.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min);
    let bytes_per_ns = 2.0 * bytes as f64 / best / 1e9;
    72.0 / bytes_per_ns
}

fn kernels() -> Vec<Kernel> {
    Kernel::ALL.into_iter().filter(|k| k.is_available()).collect()
}

/// The summary: medians in ns/vertex and ratios, all from this run.
fn summary(_: &mut Criterion) {
    if std::env::var_os("SKINNING_NO_SUMMARY").is_some() {
        return;
    }
    let best = Kernel::detect();
    println!("\nskinning summary, {JOINTS} joints, medians (ns/vertex) and ratios to the static transform");
    let sizes = std::env::var("SKINNING_VERTICES").unwrap_or_else(|_| "100000,1000000".into());
    for vertices in sizes.split(',').filter_map(|v| v.trim().parse::<usize>().ok()) {
        let samples = if vertices > 200_000 { 11 } else { 41 };
        let mut d = data(vertices);
        for with_normals in [false, true] {
            let what = if with_normals { "positions+normals" } else { "positions" };
            let floor = median_ns(&mut d, Method::Static, 0, with_normals, samples);
            println!("\n{vertices} vertices, {what}: static_transform {floor:.2} ns/v");
            let mut methods = vec![Method::Reference];
            methods.extend(kernels().into_iter().map(Method::Fast));
            methods.push(Method::Threads(0));
            for method in methods {
                let row: Vec<String> = (0..3)
                    .map(|count| {
                        let ns = median_ns(&mut d, method, count, with_normals, samples);
                        format!("{} infl {ns:6.2} ({:.2}×)", COUNTS[count], ns / floor)
                    })
                    .collect();
                println!("  {:<18} {}", method.label(), row.join("   "));
            }
        }
        let lbs = median_ns(&mut d, Method::Fast(best), 1, true, samples);
        let dqs_ref = median_ns(&mut d, Method::DqsReference, 1, true, samples);
        let dqs = median_ns(&mut d, Method::DqsFast, 1, true, samples);
        println!(
            "\n{vertices} vertices, 4 influences, positions+normals: skin_lbs {} {lbs:.2} ns/v; skin_dqs_reference {dqs_ref:.2} ({:.2}× LBS), skin_dqs {dqs:.2} ({:.2}× LBS)",
            best.label(),
            dqs_ref / lbs,
            dqs / lbs
        );
        // Weights as some files hold them: not heaviest first, the first slot empty.
        let sorted = d.influences[1].clone();
        for weights in d.influences[1].weights.iter_mut() {
            weights[0] = 0.0;
            let sum: f32 = weights.iter().sum();
            weights.iter_mut().for_each(|w| *w /= sum);
        }
        let lbs_empty = median_ns(&mut d, Method::Fast(best), 1, true, samples);
        let dqs_empty = median_ns(&mut d, Method::DqsFast, 1, true, samples);
        d.influences[1] = sorted;
        println!(
            "{vertices} vertices, 3 of 4 slots used, the first empty: skin_lbs {lbs_empty:.2} ns/v, skin_dqs {dqs_empty:.2} ({:.2}× LBS, {:.2}× DQS on full slots)",
            dqs_empty / lbs_empty,
            dqs_empty / dqs
        );
    }
    let floor = copy_floor_ns();
    println!(
        "\nthreads against one thread, {} kernel, 4 influences, positions+normals; the copy floor \
         (72 bytes a vertex at the speed of one thread's copy) {floor:.2} ns/v",
        best.label()
    );
    for vertices in [4_096, 16_384, 32_768, 65_536, 262_144, 1_048_576] {
        let mut d = data(vertices);
        let samples = if vertices > 100_000 { 11 } else { 41 };
        let one = median_ns(&mut d, Method::Fast(best), 1, true, samples);
        let two = median_ns(&mut d, Method::Threads(2), 1, true, samples);
        let auto = median_ns(&mut d, Method::Threads(0), 1, true, samples);
        print!(
            "  {vertices:>9} vertices: 1 thread {one:.2} ns/v, 2 threads {two:.2} ({:.2}× faster), auto {auto:.2}",
            one / two
        );
        // Only a mesh far past the caches is held to the floor.
        if vertices > 500_000 {
            print!(
                "; × the copy floor: 1 thread {:.2}, 2 threads {:.2}, auto {:.2}",
                one / floor,
                two / floor,
                auto / floor
            );
        }
        println!();
    }
    println!();
}

fn bench(c: &mut Criterion) {
    if std::env::var_os("SKINNING_SUMMARY_ONLY").is_some() {
        return;
    }
    let best = Kernel::detect();
    for vertices in [100_000, 1_000_000] {
        let mut d = data(vertices);
        let size = if vertices == 100_000 { "100k" } else { "1M" };
        for with_normals in [false, true] {
            let what = if with_normals { "positions+normals" } else { "positions" };
            let mut group = c.benchmark_group(format!("skinning {size}/{what}"));
            group
                .throughput(Throughput::Elements(vertices as u64))
                .sample_size(10)
                .warm_up_time(Duration::from_millis(500))
                .measurement_time(Duration::from_secs(2));
            let mut methods = vec![Method::Static];
            if vertices == 100_000 {
                methods.push(Method::Reference);
                methods.extend(kernels().into_iter().map(Method::Fast));
            } else {
                methods.push(Method::Fast(best));
            }
            methods.push(Method::Threads(0));
            for method in methods {
                for (count, per_vertex) in COUNTS.into_iter().enumerate() {
                    if method == Method::Static && count > 0 {
                        continue;
                    }
                    let id = BenchmarkId::new(method.label(), per_vertex);
                    group.bench_function(id, |b| b.iter(|| run(&mut d, method, count, with_normals)));
                }
            }
            if with_normals {
                for method in [Method::DqsReference, Method::DqsFast] {
                    let id = BenchmarkId::new(method.label(), 4);
                    group.bench_function(id, |b| b.iter(|| run(&mut d, method, 1, true)));
                }
            }
            group.finish();
        }
    }
}

criterion_group!(benches, summary, bench);
criterion_main!(benches);
