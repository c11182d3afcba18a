use super::*;
use crate::skin::skin_lbs_reference;
use glam::Quat;

/// The kernels this CPU runs (every one, the portable included), printed with the ones it
/// lacks.
fn kernels() -> impl Iterator<Item = Kernel> {
    crate::cpu::report_kernels("LBS").into_iter()
}

/// A small xorshift generator: reproducible test data without a dependency.
pub(crate) struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn vec3(&mut self, s: f32) -> Vec3 {
        Vec3::new(self.range(-s, s), self.range(-s, s), self.range(-s, s))
    }
}

/// Affine matrices with rotation, translation, non-uniform scale, some shear and some
/// mirroring, and a bottom row that is not (0, 0, 0, 1) in a few (which LBS ignores).
pub(crate) fn palette(rng: &mut Rng, joints: usize) -> Vec<Mat4> {
    (0..joints)
        .map(|j| {
            let rotation = Quat::from_euler(
                glam::EulerRot::XYZ,
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
            );
            let mut scale = Vec3::new(rng.range(0.5, 2.0), rng.range(0.5, 2.0), rng.range(0.5, 2.0));
            if j % 7 == 3 {
                scale.x = -scale.x;
            }
            let mut m = Mat4::from_scale_rotation_translation(scale, rotation, rng.vec3(3.0));
            if j % 5 == 1 {
                m.x_axis.y += 0.3;
            }
            if j % 11 == 2 {
                m.x_axis.w = 0.25;
                m.w_axis.w = 2.0;
            }
            m
        })
        .collect()
}

/// Influences covering the awkward cases: normalized random weights, zero weights,
/// joints outside the palette, all-zero vertices, weights that cancel to a zero sum, and
/// weights that do not sum to one; every other run of 32 vertices has none of these.
pub(crate) fn influences(rng: &mut Rng, vertices: usize, sets: usize, joints: usize) -> Influences {
    let mut out = Influences {
        sets,
        joints: Vec::with_capacity(vertices * sets),
        weights: Vec::with_capacity(vertices * sets),
    };
    for v in 0..vertices {
        let count = sets * 4;
        let mut j: Vec<u16> = (0..count).map(|_| rng.below(joints as u64) as u16).collect();
        let mut w: Vec<f32> = (0..count).map(|_| rng.range(0.01, 1.0)).collect();
        // Every other run of 32 vertices is clean (whole SIMD blocks that need no check).
        let case = if (v / 32) % 2 == 0 { 12 } else { v % 13 };
        match case {
            0 => w.iter_mut().for_each(|w| *w = 0.0),
            1 => w[1..].iter_mut().for_each(|w| *w = 0.0),
            2 => {
                w[2] = 0.0;
                j[2] = u16::MAX;
            }
            3 => j[1] = joints as u16,
            4 => j[count - 1] = 60_000,
            5 => {
                w.iter_mut().for_each(|w| *w = 0.0);
                w[0] = 0.5;
                w[1] = -0.5;
            }
            6 => j.iter_mut().for_each(|j| *j = joints as u16 + 3),
            7 => w[0] = -0.25,
            // Not sorted heaviest first: an empty first slot, and lightest first.
            9 => w[0] = 0.0,
            10 => w.sort_by(f32::total_cmp),
            _ => {}
        }
        if case != 8 {
            let sum: f32 = w.iter().sum();
            if sum != 0.0 && case != 5 && case != 7 {
                w.iter_mut().for_each(|w| *w /= sum);
            }
        }
        for s in 0..sets {
            out.joints.push([j[4 * s], j[4 * s + 1], j[4 * s + 2], j[4 * s + 3]]);
            out.weights.push([w[4 * s], w[4 * s + 1], w[4 * s + 2], w[4 * s + 3]]);
        }
    }
    out
}

fn assert_close(what: &str, got: &[Vec3], want: &[Vec3]) {
    assert_eq!(got.len(), want.len());
    for (v, (g, w)) in got.iter().zip(want).enumerate() {
        let tolerance = 1e-5 * w.length().max(1.0);
        assert!(
            (*g - *w).length() <= tolerance,
            "{what}: vertex {v}: {g} differs from the reference {w} by {}",
            (*g - *w).length()
        );
    }
}

fn check(kernel: Kernel, sets: usize, vertices: usize, joints: usize, scale: f32, seed: u64) {
    let mut rng = Rng(seed);
    let palette: Vec<Mat4> = palette(&mut rng, joints)
        .into_iter()
        .map(|mut m| {
            m.w_axis = (m.w_axis.truncate() * scale).extend(m.w_axis.w);
            m
        })
        .collect();
    let influences = influences(&mut rng, vertices, sets, joints);
    let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(scale)).collect();
    let mut normals: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(1.0).normalize()).collect();
    normals[vertices / 2] = Vec3::ZERO;
    let (mut want_p, mut want_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
    skin_lbs_reference(&palette, &influences, &positions, &normals, &mut want_p, &mut want_n);
    let what = format!("{kernel:?}, {sets} set(s), {vertices} vertices");
    let mesh = (&palette[..], &influences, &positions[..], &normals[..]);
    let got_n = check_kernel(kernel, &what, mesh, (&want_p, &want_n));
    assert_eq!(got_n[vertices / 2], Vec3::ZERO, "a zero normal stays zero");
    let mut only_p = vec![Vec3::NAN; vertices];
    skin_lbs_with(kernel, &palette, &influences, &positions, None, &mut only_p);
    assert_close(&format!("{what}: positions only"), &only_p, &want_p);
    let (mut par_p, mut par_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
    // More threads than blocks: chunk boundaries, whole blocks and a short last chunk.
    let threads = vertices.div_ceil(40);
    let normals = Some((&normals[..], &mut par_n[..]));
    skin_lbs_parallel(kernel, threads, &palette, &influences, &positions, normals, &mut par_p);
    assert_close(&format!("{what}: threads, positions"), &par_p, &want_p);
    assert_close(&format!("{what}: threads, normals"), &par_n, &want_n);
}

/// Positions and normals from `kernel` against the reference's `want`; returns the normals.
fn check_kernel(
    kernel: Kernel,
    what: &str,
    (palette, influences, positions, normals): (&[Mat4], &Influences, &[Vec3], &[Vec3]),
    (want_p, want_n): (&[Vec3], &[Vec3]),
) -> Vec<Vec3> {
    let (mut got_p, mut got_n) = (vec![Vec3::NAN; positions.len()], vec![Vec3::NAN; positions.len()]);
    skin_lbs_with(
        kernel,
        palette,
        influences,
        positions,
        Some((normals, &mut got_n)),
        &mut got_p,
    );
    assert_close(&format!("{what}: positions"), &got_p, want_p);
    assert_close(&format!("{what}: normals"), &got_n, want_n);
    got_n
}

#[test]
fn every_kernel_matches_the_reference_with_four_and_eight_influences() {
    for kernel in kernels() {
        for sets in [1, 2] {
            // 16k + 5 vertices: whole blocks, mixed blocks and a tail.
            check(kernel, sets, 1029, 64, 1.0, 0x9E37_79B9_7F4A_7C15 + sets as u64);
            check(kernel, sets, 203, 7, 1000.0, 12345 + sets as u64);
            // Fewer vertices than a block, and tails of every length below sixteen.
            for vertices in [1, 2, 7, 15, 17, 31] {
                check(kernel, sets, vertices, 64, 1.0, 99 + vertices as u64);
            }
            // More joints than the portable kernel blends as rows: its column blend.
            let joints = super::portable::ROWS_PALETTE + 44;
            check(kernel, sets, 333, joints, 1.0, 4242 + sets as u64);
        }
    }
}

#[test]
fn three_sets_fall_back_to_the_portable_path() {
    for kernel in kernels() {
        check(kernel, 3, 101, 16, 1.0, 77);
    }
}

#[test]
fn no_influence_sets_keep_the_bind_pose_like_the_reference() {
    let influences = Influences {
        sets: 0,
        joints: Vec::new(),
        weights: Vec::new(),
    };
    let palette = [Mat4::from_translation(Vec3::X)];
    let p = vec![Vec3::new(1.0, 2.0, 3.0); 9];
    let n = vec![Vec3::new(0.0, 0.0, 2.0); 9];
    let (mut want_p, mut want_n) = (vec![Vec3::NAN; 9], vec![Vec3::NAN; 9]);
    skin_lbs_reference(&palette, &influences, &p, &n, &mut want_p, &mut want_n);
    let (mut op, mut on) = (vec![Vec3::NAN; 9], vec![Vec3::NAN; 9]);
    skin_lbs(&palette, &influences, &p, &n, &mut op, &mut on);
    assert_eq!(op, want_p);
    assert_eq!(on, want_n);
    assert_eq!(op[0], p[0]);
}

#[test]
fn the_special_cases_follow_the_reference_exactly() {
    let m = Mat4::from_scale_rotation_translation(Vec3::new(2.0, 1.0, 0.5), Quat::from_rotation_z(0.7), Vec3::X);
    let palette = [m, Mat4::from_translation(Vec3::Y)];
    // 32 vertices (two AVX-512 blocks): no weight, joint outside, cancelling weights, mixed.
    let cases: [([u16; 4], [f32; 4]); 4] = [
        ([0, 1, 0, 0], [0.0; 4]),
        ([9, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]),
        ([0, 1, 0, 0], [0.5, -0.5, 0.0, 0.0]),
        ([0, 1, 5, 1], [0.25, 0.25, 0.25, 0.5]),
    ];
    let influences = Influences {
        sets: 1,
        joints: (0..32).map(|v| cases[v % 4].0).collect(),
        weights: (0..32).map(|v| cases[v % 4].1).collect(),
    };
    let p = vec![Vec3::new(0.3, -0.2, 0.9); 32];
    let n = vec![Vec3::new(0.0, 3.0, 4.0); 32];
    for kernel in kernels() {
        let (mut op, mut on) = (vec![Vec3::NAN; 32], vec![Vec3::NAN; 32]);
        skin_lbs_with(kernel, &palette, &influences, &p, Some((&n, &mut on)), &mut op);
        for v in 0..32 {
            match v % 4 {
                // No weight, the only weight on a joint outside the palette, weights that
                // cancel: each keeps the bind pose.
                0..=2 => {
                    assert_eq!(op[v], p[v], "{kernel:?}: vertex {v} keeps the bind pose");
                    assert!((on[v] - Vec3::new(0.0, 0.6, 0.8)).length() < 1e-6);
                }
                _ => {
                    // Joint 5 is outside: 0.25·m + 0.75·translate(Y), computed here by hand.
                    let blended = m * 0.25 + Mat4::from_translation(Vec3::Y) * 0.75;
                    let want = blended.transform_point3(p[v]);
                    assert!((op[v] - want).length() < 1e-6, "{kernel:?}: {} vs {want}", op[v]);
                }
            }
        }
    }
}

#[test]
fn normals_of_a_mirroring_matrix_keep_their_side() {
    let mirror = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    let influences = Influences {
        sets: 1,
        joints: vec![[0; 4]; 32],
        weights: vec![[1.0, 0.25, 0.5, 0.25]; 32],
    };
    let p = vec![Vec3::ONE; 32];
    let n = vec![Vec3::X; 32];
    for kernel in kernels() {
        let (mut op, mut on) = (vec![Vec3::ZERO; 32], vec![Vec3::ZERO; 32]);
        skin_lbs_with(kernel, &[mirror], &influences, &p, Some((&n, &mut on)), &mut op);
        // The inverse transpose of a mirror in x sends +x to -x (the weights sum to 2).
        assert!(
            on.iter().all(|n| (*n - Vec3::NEG_X).length() < 1e-6),
            "{kernel:?}: {on:?}"
        );
        assert!(
            op.iter().all(|p| (*p - Vec3::new(-2.0, 2.0, 2.0)).length() < 1e-6),
            "{kernel:?}: {op:?}"
        );
    }
}

#[test]
fn not_a_number_goes_where_the_reference_puts_it() {
    let palette = [Mat4::from_rotation_z(0.5), Mat4::from_translation(Vec3::NAN)];
    let count = 35;
    let influences = Influences {
        sets: 1,
        joints: (0..count).map(|v| [0, (v % 3 == 0) as u16, 0, 0]).collect(),
        weights: (0..count)
            .map(|v| {
                if v % 5 == 1 {
                    [f32::NAN, 0.5, 0.0, 0.0]
                } else {
                    [0.5, 0.5, 0.0, 0.0]
                }
            })
            .collect(),
    };
    let p: Vec<Vec3> = (0..count)
        .map(|v| if v % 7 == 2 { Vec3::NAN } else { Vec3::ONE })
        .collect();
    let n: Vec<Vec3> = (0..count)
        .map(|v| {
            if v % 4 == 3 {
                Vec3::new(f32::NAN, 1.0, 0.0)
            } else {
                Vec3::Y
            }
        })
        .collect();
    let (mut want_p, mut want_n) = (vec![Vec3::ZERO; count], vec![Vec3::ZERO; count]);
    skin_lbs_reference(&palette, &influences, &p, &n, &mut want_p, &mut want_n);
    for kernel in kernels() {
        let (mut op, mut on) = (vec![Vec3::ZERO; count], vec![Vec3::ZERO; count]);
        skin_lbs_with(kernel, &palette, &influences, &p, Some((&n, &mut on)), &mut op);
        for v in 0..count {
            let same = |a: Vec3, b: Vec3| a.is_nan() == b.is_nan() && (a.is_nan() || (a - b).length() < 1e-5);
            assert!(
                same(op[v], want_p[v]),
                "{kernel:?}: vertex {v}: {} vs {}",
                op[v],
                want_p[v]
            );
            assert!(
                same(on[v], want_n[v]),
                "{kernel:?}: vertex {v}: {} vs {}",
                on[v],
                want_n[v]
            );
        }
    }
}

/// The audit's positions: the portable path's bits from every kernel this CPU picks, on the
/// hostile data of `check` (zero and negative weights, joints outside the palette, vertices
/// with nothing left), on a palette with a NaN matrix (every block checked), and on sorted
/// weights whose unused slots are blended as zeros.
#[test]
fn exact_positions_have_the_portable_paths_bits() {
    let compare = |what: &str, palette: &[Mat4], influences: &Influences, positions: &[Vec3]| {
        let n = positions.len();
        // The one-vertex-at-a-time path is what the others must match bit for bit.
        let mut want = vec![Vec3::NAN; n];
        let mut job = Job::new(palette, Inf::of(influences), positions, None, &mut want).unwrap();
        super::portable::range(&mut job, 0..n);
        let (mut exact, mut blocks) = (vec![Vec3::NAN; n], vec![Vec3::NAN; n]);
        skin_lbs_positions_exact(palette, influences, positions, &mut exact);
        // With normals and without: the portable kernel's two ways through its blocks.
        let mut normals = vec![Vec3::NAN; n];
        let normals = Some((positions, &mut normals[..]));
        skin_lbs_with(Kernel::Portable, palette, influences, positions, normals, &mut blocks);
        let mut points = vec![Vec3::NAN; n];
        skin_lbs_with(Kernel::Portable, palette, influences, positions, None, &mut points);
        let paths = [
            (&exact, "exact"),
            (&blocks, "portable blocks"),
            (&points, "portable blocks, positions alone"),
        ];
        for (got, path) in paths {
            for v in 0..n {
                assert_eq!(
                    got[v].to_array().map(f32::to_bits),
                    want[v].to_array().map(f32::to_bits),
                    "{what}: {path}: vertex {v}: {} vs the one-vertex path's {}",
                    got[v],
                    want[v]
                );
            }
        }
    };
    for sets in [1, 2, 3] {
        // The last: more joints than the portable kernel blends as rows.
        let columns = super::portable::ROWS_PALETTE + 1;
        for (vertices, joints, seed) in [(1029, 64, 3), (203, 7, 5), (31, 64, 9), (5, 3, 1), (301, columns, 4)] {
            let mut rng = Rng(seed + 10 * sets as u64);
            let mut palette = palette(&mut rng, joints);
            let influences = influences(&mut rng, vertices, sets, joints);
            let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(3.0)).collect();
            let what = format!("{sets} set(s), {vertices} vertices");
            compare(&what, &palette, &influences, &positions);
            palette[joints / 2] = Mat4::NAN;
            compare(&format!("{what}, a NaN matrix"), &palette, &influences, &positions);
        }
    }
    let mut rng = Rng(23);
    let palette = palette(&mut rng, 20);
    for (sets, used) in [(1, 2), (1, 3), (2, 5)] {
        let vertices = 77;
        let mut influences = Influences {
            sets,
            joints: Vec::new(),
            weights: Vec::new(),
        };
        for _ in 0..vertices * sets {
            influences.joints.push([0; 4].map(|_| rng.below(20) as u16));
            influences.weights.push([0.0; 4]);
        }
        for v in 0..vertices {
            for k in 0..used {
                influences.weights[v * sets + k / 4][k % 4] = rng.range(0.1, 1.0);
            }
        }
        let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
        compare(
            &format!("{sets} set(s), {used} used"),
            &palette,
            &influences,
            &positions,
        );
    }
}

#[test]
fn sorted_weights_with_unused_slots_match_the_reference() {
    // Whole blocks whose vertices use only their first few slots (as exporters write weights),
    // the unused ones pointing at any joint, inside the palette or not.
    let mut rng = Rng(5);
    let palette = palette(&mut rng, 20);
    for (sets, used) in [(1, 1), (1, 2), (1, 3), (2, 1), (2, 5), (2, 7)] {
        let vertices = 67;
        let mut influences = Influences {
            sets,
            joints: Vec::new(),
            weights: Vec::new(),
        };
        for v in 0..vertices {
            let mut w = [0.0f32; 8];
            let mut j = [0u16; 8];
            for k in 0..8 {
                j[k] = if k >= used && v % 40 == 0 {
                    500
                } else {
                    rng.below(20) as u16
                };
                if k < used {
                    w[k] = rng.range(0.1, 1.0);
                }
            }
            for s in 0..sets {
                influences
                    .joints
                    .push([j[4 * s], j[4 * s + 1], j[4 * s + 2], j[4 * s + 3]]);
                influences
                    .weights
                    .push([w[4 * s], w[4 * s + 1], w[4 * s + 2], w[4 * s + 3]]);
            }
        }
        let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
        let normals: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(1.0)).collect();
        let (mut want_p, mut want_n) = (vec![Vec3::NAN; vertices], vec![Vec3::NAN; vertices]);
        skin_lbs_reference(&palette, &influences, &positions, &normals, &mut want_p, &mut want_n);
        for kernel in kernels() {
            let what = format!("{kernel:?}, {sets} set(s), {used} used");
            let mesh = (&palette[..], &influences, &positions[..], &normals[..]);
            check_kernel(kernel, &what, mesh, (&want_p, &want_n));
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_simd_block_checks_answer_as_the_generic_one() {
    use super::block::block_slots;
    type Check = unsafe fn(Inf<'_>, std::ops::Range<usize>, usize) -> Option<usize>;
    let widths: [(Kernel, usize, [Check; 2]); 3] = [
        (
            Kernel::Portable,
            4,
            [super::portable::block_slots::<1>, super::portable::block_slots::<2>],
        ),
        (
            Kernel::Avx2Fma,
            8,
            [super::avx2::block_slots::<1>, super::avx2::block_slots::<2>],
        ),
        (
            Kernel::Avx512,
            16,
            [super::avx512::block_slots::<1>, super::avx512::block_slots::<2>],
        ),
    ];
    for (kernel, lanes, checks) in widths {
        if !kernel.is_available() {
            eprintln!("skipped: no {} on this CPU", kernel.label());
            continue;
        }
        let mut rng = Rng(0x5107);
        let mut seen = [0usize; 10];
        for case in 0..4000 {
            let sets = 1 + case % 2;
            let per = lanes * sets;
            // Weights: mostly sorted and used up to a random slot, with the things that make
            // a block take the checked path now and then.
            let used = 1 + rng.below(4 * sets as u64) as usize;
            let mut weights = vec![[0f32; 4]; per];
            let mut joints = vec![[0u16; 4]; per];
            for v in 0..lanes {
                for k in 0..used {
                    let (set, slot) = (v * sets + k / 4, k % 4);
                    weights[set][slot] = rng.range(0.01, 1.0);
                    joints[set][slot] = rng.below(64) as u16;
                }
            }
            let (v, k) = (rng.below(lanes as u64) as usize, rng.below(4 * sets as u64) as usize);
            let (set, slot) = (v * sets + k / 4, k % 4);
            match rng.below(8) {
                0 => weights[set][slot] = -0.25,
                1 => weights[set][slot] = f32::NAN,
                2 => weights[v * sets][0] = 0.0,
                3 => weights[v * sets][0] = -0.0,
                4 => joints[set][slot] = 64 + rng.below(1000) as u16,
                5 => weights[set][slot] = f32::INFINITY,
                6 => joints[set][slot] = 0x8000 + rng.below(0x8000) as u16,
                _ => {}
            }
            let influences = Inf {
                sets,
                joints: &joints,
                weights: &weights,
            };
            // Mostly the 64 joints drawn above; now and then a palette that ends at or before
            // them, none at all, or one beyond what a 16-bit index reaches.
            let palette = [64, 64, 64, 64, 1, 0, 65_535, 65_536, 70_000][rng.below(9) as usize];
            let want = if sets == 1 {
                block_slots::<1>(influences, 0..per, palette)
            } else {
                block_slots::<2>(influences, 0..per, palette)
            };
            // SAFETY: the kernel's features are available (checked above), which the checks
            // of its width need.
            let got = unsafe { checks[sets - 1](influences, 0..per, palette) };
            assert_eq!(
                got,
                want,
                "{} case {case}: {sets} set(s), palette {palette}, weights {weights:?}, joints {joints:?}",
                kernel.label()
            );
            seen[want.unwrap_or(0)] += 1;
        }
        // Both answers came up, and several slot counts.
        assert!(seen[0] > 100, "{seen:?}");
        assert!(seen[1..].iter().filter(|&&n| n > 0).count() >= 6, "{seen:?}");
    }
}

/// Positions and normals of `kernel` into outputs that start `offsets` floats into their
/// buffers (so that every alignment a `Vec3` can have is met), streamed or not.
fn skin_streamed(
    kernel: Kernel,
    (palette, influences, positions, normals): (&[Mat4], &Influences, &[Vec3], &[Vec3]),
    offsets: (usize, usize),
    stream: bool,
) -> (Vec<[u32; 3]>, Vec<[u32; 3]>) {
    let n = positions.len();
    // Floats, so that an offset moves the outputs by 4 bytes, not by a whole `Vec3`.
    let (mut out_p, mut out_n) = (vec![f32::NAN; 3 * n + 16], vec![f32::NAN; 3 * n + 16]);
    let p: &mut [Vec3] = bytemuck::cast_slice_mut(&mut out_p[offsets.0..offsets.0 + 3 * n]);
    let q: &mut [Vec3] = bytemuck::cast_slice_mut(&mut out_n[offsets.1..offsets.1 + 3 * n]);
    let mut job = Job::new(palette, Inf::of(influences), positions, Some((normals, q)), p).unwrap();
    job.stream = stream;
    job.run(kernel);
    let bits = |floats: &[f32], offset: usize| {
        floats[offset..offset + 3 * n]
            .chunks_exact(3)
            .map(|v| [0, 1, 2].map(|i| v[i].to_bits()))
            .collect()
    };
    (bits(&out_p, offsets.0), bits(&out_n, offsets.1))
}

/// Streaming stores change where the outputs go through, not their bits: every kernel, outputs
/// at every alignment (positions and normals alike, or apart, when only positions stream), on
/// the hostile data of `check`, with blocks before the first aligned one and after the last.
#[test]
fn streamed_outputs_have_the_bits_of_cached_ones() {
    for kernel in kernels() {
        for (sets, vertices) in [(1, 16 * 9 + 5), (2, 16 * 4 + 15), (1, 16), (1, 37)] {
            let mut rng = Rng(41 + vertices as u64);
            let palette = palette(&mut rng, 40);
            let influences = influences(&mut rng, vertices, sets, 40);
            let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
            let normals: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(1.0).normalize()).collect();
            let mesh = (&palette[..], &influences, &positions[..], &normals[..]);
            let cached = skin_streamed(kernel, mesh, (0, 0), false);
            for offsets in (0..16).map(|k| (k, k)).chain([(1, 2), (3, 0), (0, 5)]) {
                let streamed = skin_streamed(kernel, mesh, offsets, true);
                assert!(
                    streamed == cached,
                    "{kernel:?}, {sets} set(s), {vertices} vertices, outputs {offsets:?} floats in: streamed bits differ"
                );
            }
        }
    }
}

/// Calls whose outputs reach [`STREAM_MIN_BYTES`] stream, one vertex fewer does not, and both
/// have the bits of a cached run of the same kernel (with normals, and positions alone).
#[test]
fn outputs_stream_from_the_threshold_with_unchanged_bits() {
    let threshold = STREAM_MIN_BYTES.div_ceil(2 * std::mem::size_of::<Vec3>());
    let mut rng = Rng(77);
    let palette = palette(&mut rng, 64);
    let influences = influences(&mut rng, threshold, 1, 64);
    let positions: Vec<Vec3> = (0..threshold).map(|_| rng.vec3(2.0)).collect();
    let normals: Vec<Vec3> = (0..threshold).map(|_| rng.vec3(1.0).normalize()).collect();
    for n in [threshold - 1, threshold] {
        let (mut p, mut q) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        let inf = Inf::of(&influences);
        let job = Job::new(&palette, inf, &positions[..n], Some((&normals[..n], &mut q)), &mut p).unwrap();
        assert_eq!(job.stream, n == threshold, "{n} vertices with normals");
        let job = Job::new(&palette, inf, &positions[..n], None, &mut p).unwrap();
        assert!(!job.stream, "{n} vertices, positions alone: half the bytes");
        let mesh = (&palette[..], &influences, &positions[..n], &normals[..n]);
        for kernel in kernels() {
            let (mut got_p, mut got_n) = (vec![Vec3::NAN; n], vec![Vec3::NAN; n]);
            let normals = Some((&normals[..n], &mut got_n[..]));
            skin_lbs_with(kernel, &palette, &influences, &positions[..n], normals, &mut got_p);
            let bits = |v: &[Vec3]| v.iter().map(|v| v.to_array().map(f32::to_bits)).collect::<Vec<_>>();
            let cached = skin_streamed(kernel, mesh, (1, 1), false);
            assert!(bits(&got_p) == cached.0, "{kernel:?}, {n} vertices: positions");
            assert!(bits(&got_n) == cached.1, "{kernel:?}, {n} vertices: normals");
        }
    }
}
