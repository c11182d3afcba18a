//! The blocked world pass against the one-local-at-a-time pass, bit for bit: every float of
//! every world, on random rigs (chains, trees, broken chains, parents stored after their
//! children, non-uniform and negative scale, signed zeros, non-finite values) and on the
//! shared real rigs at rest and through their clips; and the palette loop, which reads each
//! joint's matrices a joint ahead, against the product joint by joint.

use super::{build_palette, columns_of, load, local_to_world, local_to_world_per_joint, mul, store};
use crate::cpu::Kernel;
use crate::rig::{Node, Trs};
use glam::{Mat4, Quat, Vec3};
use std::path::Path;

/// xorshift64*: the same rigs on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }
}

fn avx512_here() -> bool {
    let here = Kernel::Avx512.is_available();
    if !here {
        eprintln!("blocked world pass: not run, this CPU has no AVX-512");
    }
    here
}

/// Both passes over `nodes` and `locals` into buffers that start with the same contents,
/// compared float by float as bits (any NaN as any other: Rust leaves a NaN's sign and
/// payload unspecified, so they are no part of a result).
fn check(name: &str, nodes: &[Node], locals: &[Trs]) {
    let start: Vec<Mat4> = (0..nodes.len())
        .map(|i| Mat4::from_cols_array(&[i as f32 + 0.5; 16]))
        .collect();
    let (mut want, mut got) = (start.clone(), start);
    // SAFETY: AVX-512 F and BW, AVX2 and FMA are available (`avx512_here`).
    unsafe {
        local_to_world_per_joint(nodes, locals, &mut want);
        local_to_world(nodes, locals, &mut got);
    }
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        let (w, g) = (w.to_cols_array(), g.to_cols_array());
        let bits = |m: [f32; 16]| m.map(|v| if v.is_nan() { f32::NAN.to_bits() } else { v.to_bits() });
        assert_eq!(
            bits(w),
            bits(g),
            "{name}, node {i} (parent {:?}): per joint {w:?}, blocked {g:?}",
            nodes[i].parent
        );
    }
}

fn node(parent: Option<usize>) -> Node {
    Node {
        name: String::new(),
        parent,
        rest: Trs::IDENTITY,
    }
}

/// A value now and then replaced by a signed zero.
fn zeroed(rng: &mut Rng, v: f32) -> f32 {
    match rng.below(16) {
        0 => 0.0,
        1 => -0.0,
        _ => v,
    }
}

fn random_trs(rng: &mut Rng) -> Trs {
    let translation = Vec3::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0), rng.range(-2.0, 2.0));
    let translation = Vec3::new(
        zeroed(rng, translation.x),
        zeroed(rng, translation.y),
        zeroed(rng, translation.z),
    );
    let rotation = match rng.below(8) {
        0 => Quat::IDENTITY,
        // Not normalized: the pass takes the quaternion as it is.
        1 => Quat::from_xyzw(
            rng.range(-1.5, 1.5),
            rng.range(-1.5, 1.5),
            rng.range(-1.5, 1.5),
            rng.range(-1.5, 1.5),
        ),
        2 => Quat::from_xyzw(-0.0, zeroed(rng, 0.6), -0.0, 0.8),
        _ => Quat::from_xyzw(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        )
        .normalize(),
    };
    let axis = |rng: &mut Rng| {
        let s = rng.range(0.2, 3.0);
        let s = if rng.chance(0.15) { -s } else { s };
        zeroed(rng, s)
    };
    let scale = match rng.below(4) {
        0 => Vec3::ONE,
        1 => Vec3::splat(axis(rng)),
        _ => Vec3::new(axis(rng), axis(rng), axis(rng)),
    };
    Trs {
        translation,
        rotation,
        scale,
    }
}

/// Parents for `n` nodes in one of several shapes.
fn parents(rng: &mut Rng, shape: usize, n: usize) -> Vec<Option<usize>> {
    (0..n)
        .map(|i| match (shape, i) {
            (_, 0) => None,
            // One chain.
            (0, i) => Some(i - 1),
            // A mesh node, then a chain (its pairs start at even nodes, not odd ones).
            (1, 1) => None,
            (1, i) => Some(i - 1),
            // Breadth first, four children each: no chain at all.
            (2, i) => Some((i - 1) / 4),
            // Depth first, as files store skeletons: mostly the node before, now and then a
            // branch from an earlier node or a new root.
            (3, i) => match rng.below(10) {
                0 => None,
                1 | 2 => Some(rng.below(i)),
                _ => Some(i - 1),
            },
            // Chains of random lengths from random earlier nodes.
            (4, i) if rng.chance(0.2) => Some(rng.below(i)),
            (4, i) => Some(i - 1),
            // Anything below n, parents after children and self-parents included (the worlds
            // then read whatever the buffer holds, the same in both passes).
            (_, i) if rng.chance(0.5) => Some(i - 1),
            (_, _) => Some(rng.below(n)),
        })
        .collect()
}

#[test]
fn blocked_worlds_are_the_per_joint_bits_on_random_rigs() {
    if !avx512_here() {
        return;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let sizes = [
        1, 2, 3, 17, 31, 32, 33, 34, 35, 63, 64, 65, 66, 95, 96, 97, 128, 129, 200, 257, 300, 1000,
    ];
    for shape in 0..6 {
        for &n in &sizes {
            for round in 0..3 {
                let nodes: Vec<Node> = parents(&mut rng, shape, n).into_iter().map(node).collect();
                let locals: Vec<Trs> = (0..n).map(|_| random_trs(&mut rng)).collect();
                check(&format!("shape {shape}, {n} nodes, round {round}"), &nodes, &locals);
            }
        }
    }
}

#[test]
fn blocked_worlds_are_the_per_joint_bits_with_non_finite_locals() {
    if !avx512_here() {
        return;
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let odd = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-40,
    ];
    for shape in [0, 1, 3] {
        let n = 130;
        let nodes: Vec<Node> = parents(&mut rng, shape, n).into_iter().map(node).collect();
        let mut locals: Vec<Trs> = (0..n).map(|_| random_trs(&mut rng)).collect();
        for _ in 0..12 {
            let t = &mut locals[rng.below(n)];
            let v = odd[rng.below(odd.len())];
            match rng.below(3) {
                0 => t.translation[rng.below(3)] = v,
                1 => t.scale[rng.below(3)] = v,
                _ => {
                    let mut q = t.rotation.to_array();
                    q[rng.below(4)] = v;
                    t.rotation = Quat::from_array(q);
                }
            }
        }
        check(&format!("shape {shape} with non-finite values"), &nodes, &locals);
    }
}

#[test]
fn blocked_worlds_are_the_per_joint_bits_on_the_shared_rigs() {
    if !avx512_here() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/rigs");
    let mut files = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                folders.push(path);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| ["glb", "gltf", "fbx"].contains(&e.to_ascii_lowercase().as_str()))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut checked = 0;
    for file in &files {
        let Ok(rig) = crate::rig::load_file(file) else { continue };
        let name = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        let rest: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        check(&format!("{name} at rest"), &rig.nodes, &rest);
        for clip in &rig.clips {
            let mut hints = vec![0; clip.channels.len()];
            let mut locals = rest.clone();
            for k in 0..7 {
                let time = clip.duration * k as f32 / 6.0;
                crate::anim::sample_clip(&rig.nodes, Some(clip), time, &mut hints, &mut locals);
                check(&format!("{name}, {} at {time} s", clip.name), &rig.nodes, &locals);
            }
        }
        checked += 1;
    }
    eprintln!(
        "blocked world pass: {checked} of {} shared rig files checked",
        files.len()
    );
}

#[test]
fn palettes_are_the_joint_by_joint_products() {
    if !avx512_here() {
        return;
    }
    let mut rng = Rng(0x51f1_5eed);
    for n in [0, 1, 2, 3, 64, 257] {
        let nodes: Vec<Node> = parents(&mut rng, 3, n.max(1)).into_iter().map(node).collect();
        let locals: Vec<Trs> = (0..nodes.len()).map(|_| random_trs(&mut rng)).collect();
        let mut worlds = vec![Mat4::ZERO; nodes.len()];
        // SAFETY: AVX-512 F and BW, AVX2 and FMA are available (`avx512_here`).
        unsafe { local_to_world(&nodes, &locals, &mut worlds) };
        let joints: Vec<usize> = (0..n).map(|_| rng.below(nodes.len())).collect();
        let binds: Vec<Mat4> = (0..n)
            .map(|_| {
                let t = random_trs(&mut rng);
                Mat4::from_scale_rotation_translation(t.scale, t.rotation.normalize(), t.translation)
            })
            .collect();
        let mut got = vec![Mat4::IDENTITY; n];
        let mut want = got.clone();
        // SAFETY: as above; every matrix is a reference.
        unsafe {
            build_palette(&joints, &binds, &worlds, &mut got);
            for ((out, &joint), bind) in want.iter_mut().zip(&joints).zip(&binds) {
                store(out, mul(columns_of(&worlds[joint]), load(bind)));
            }
        }
        for (j, (w, g)) in want.iter().zip(&got).enumerate() {
            assert_eq!(
                w.to_cols_array().map(f32::to_bits),
                g.to_cols_array().map(f32::to_bits),
                "{n} joints, joint {j}"
            );
        }
    }
}
