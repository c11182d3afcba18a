//! CPU skinning of 100,000 vertices with 64 joints: one static matrix for every vertex (the
//! floor: same memory traffic, no blending), the reference LBS, and the fast LBS; 1, 4 and 8
//! influences with random normalized weights (fixed seed), positions only and positions+normals.
//!
//! `cargo bench --bench skinning`; per-vertex time = reported time / 100,000.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{Mat4, Quat, Vec3};
use rigscope::rig::Influences;
use rigscope::skin::fast::{Kernel, skin_lbs_with};
use rigscope::skin::{blend_matrix, normal_matrix, skin_lbs_reference};
use std::hint::black_box;
use std::time::Duration;

const VERTICES: usize = 100_000;
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
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    influences: [Influences; 3],
}

fn influences(rng: &mut XorShift, per_vertex: usize) -> Influences {
    let sets = per_vertex.div_ceil(4);
    let mut out = Influences {
        sets,
        joints: Vec::with_capacity(VERTICES * sets),
        weights: Vec::with_capacity(VERTICES * sets),
    };
    for _ in 0..VERTICES {
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

fn data() -> Data {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let palette = (0..JOINTS)
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
    let positions = (0..VERTICES).map(|_| rng.vec3()).collect();
    let normals = (0..VERTICES).map(|_| rng.vec3().normalize_or(Vec3::Y)).collect();
    let influences = [
        influences(&mut rng, 1),
        influences(&mut rng, 4),
        influences(&mut rng, 8),
    ];
    Data {
        palette,
        positions,
        normals,
        influences,
    }
}

/// The floor: every vertex transformed by one matrix (normals by its cofactor, normalized).
fn static_transform(m: &Mat4, positions: &[Vec3], normals: &[Vec3], out_p: &mut [Vec3], out_n: &mut [Vec3]) {
    for (o, p) in out_p.iter_mut().zip(positions) {
        *o = m.transform_point3(*p);
    }
    if !normals.is_empty() {
        let nm = normal_matrix(m);
        for (o, n) in out_n.iter_mut().zip(normals) {
            *o = (nm * *n).normalize_or_zero();
        }
    }
}

fn bench(c: &mut Criterion) {
    let d = data();
    let kernel = Kernel::detect();
    let mut out_p = vec![Vec3::ZERO; VERTICES];
    let mut out_n = vec![Vec3::ZERO; VERTICES];
    for with_normals in [false, true] {
        let name = if with_normals {
            "skinning 100k/positions+normals"
        } else {
            "skinning 100k/positions"
        };
        let mut group = c.benchmark_group(name);
        group
            .throughput(Throughput::Elements(VERTICES as u64))
            .sample_size(20)
            .warm_up_time(Duration::from_millis(700))
            .measurement_time(Duration::from_secs(2));
        let normals: &[Vec3] = if with_normals { &d.normals } else { &[] };
        group.bench_function("static", |b| {
            b.iter(|| static_transform(black_box(&d.palette[0]), &d.positions, normals, &mut out_p, &mut out_n))
        });
        for (influences, count) in d.influences.iter().zip([1, 4, 8]) {
            group.bench_with_input(BenchmarkId::new("reference", count), influences, |b, inf| {
                b.iter(|| {
                    if with_normals {
                        skin_lbs_reference(&d.palette, inf, &d.positions, &d.normals, &mut out_p, &mut out_n);
                    } else {
                        // The reference's formula without the normals.
                        for (v, (o, p)) in out_p.iter_mut().zip(&d.positions).enumerate() {
                            *o = blend_matrix(&d.palette, inf, v).transform_point3(*p);
                        }
                    }
                })
            });
            group.bench_with_input(
                BenchmarkId::new(format!("fast {}", kernel.label()), count),
                influences,
                |b, inf| {
                    b.iter(|| {
                        let normals = with_normals.then_some((&d.normals[..], &mut out_n[..]));
                        skin_lbs_with(kernel, &d.palette, inf, &d.positions, normals, &mut out_p)
                    })
                },
            );
            if kernel != Kernel::Portable && count == 4 {
                group.bench_with_input(BenchmarkId::new("fast portable", count), influences, |b, inf| {
                    b.iter(|| {
                        let normals = with_normals.then_some((&d.normals[..], &mut out_n[..]));
                        skin_lbs_with(Kernel::Portable, &d.palette, inf, &d.positions, normals, &mut out_p)
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
