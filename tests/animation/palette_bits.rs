//! The AVX-512 pose path (world pass, then palette) against a scalar statement of its
//! arithmetic, bit for bit: every multiply, fused multiply-add and add in the order the kernel
//! has always done them, so that a faster kernel can be shown to return the same matrices. Run
//! on the shared rigs (at rest and part-way through their first clip) and on 256-joint chains
//! and bushes. Where the CPU has no AVX-512 the test says so and checks nothing.

use crate::common;

use glam::{Mat4, Quat, Vec3};
use rigscope::anim::{build_palette_with, local_to_world_with, sample_clip};
use rigscope::cpu::Kernel;
use rigscope::rig::{Interpolation, Node, Rig, Trs};
use rigscope::synthetic::{Shape, skeleton, trs_clip};

type M = [f32; 16];

/// `a · b` for affine transforms, column-major: element (row r, column c) is
/// `(a₁ᵣ·b_c1 + a₀ᵣ·b_c0) + (a₃ᵣ·t_c + a₂ᵣ·b_c2)` with t = (0, 0, 0, 1), each sum in brackets a
/// product followed by a fused multiply-add.
fn mul(a: &M, b: &M) -> M {
    std::array::from_fn(|e| {
        let (c, r) = (e / 4, e % 4);
        let t = if c == 3 { 1.0 } else { 0.0 };
        let near = a[4 + r].mul_add(b[4 * c + 1], a[r] * b[4 * c]);
        let far = a[12 + r].mul_add(t, a[8 + r] * b[4 * c + 2]);
        near + far
    })
}

/// The matrix of a TRS: element e is `(q[P]·f[R] + (q[S]·f[U] + identity with the
/// translation)) · scale`, with f = (2q, −2q, x·0) and the quaternion lanes x, y, z, w.
fn trs(local: &Trs) -> M {
    const NEG: usize = 4;
    const ZERO: usize = 8;
    const P: [usize; 16] = [1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    #[rustfmt::skip]
    const R: [usize; 16] = [NEG + 1, 1, 2, ZERO, 1, NEG, 2, ZERO, 2, 2, NEG, ZERO, ZERO, ZERO, ZERO, ZERO];
    const S: [usize; 16] = [2, 3, 3, 0, 3, 2, 3, 0, 3, 3, 1, 0, 0, 0, 0, 0];
    #[rustfmt::skip]
    const U: [usize; 16] = [NEG + 2, 2, NEG + 1, ZERO, NEG + 2, NEG + 2, 0, ZERO, 1, NEG, NEG + 1, ZERO, ZERO, ZERO, ZERO, ZERO];
    let q = local.rotation.to_array();
    let f: [f32; 9] = std::array::from_fn(|i| match i {
        0..4 => q[i] * 2.0,
        4..8 => q[i - 4] * -2.0,
        _ => q[0] * 0.0,
    });
    let (t, s) = (local.translation.to_array(), local.scale.to_array());
    std::array::from_fn(|e| {
        let (c, r) = (e / 4, e % 4);
        let base = match (c, r) {
            (3, 3) => 1.0,
            (3, r) => t[r],
            (c, r) if c == r => 1.0,
            _ => 0.0,
        };
        let scale = if c == 3 { 1.0 } else { s[c] };
        q[P[e]].mul_add(f[R[e]], q[S[e]].mul_add(f[U[e]], base)) * scale
    })
}

/// Worlds parents first: two links of a chain at a time where a node's parent is the node
/// before it and the next node's parent is this one (the second world through the product of
/// the two locals), otherwise one node at a time.
fn worlds_of(nodes: &[Node], locals: &[Trs]) -> Vec<M> {
    let mut worlds = vec![[0.0; 16]; nodes.len()];
    let mut previous = [0.0; 16];
    let mut i = 0;
    while i < nodes.len() {
        let local = trs(&locals[i]);
        let chained = nodes[i].parent.is_some_and(|p| p + 1 == i);
        if chained && nodes.get(i + 1).is_some_and(|n| n.parent == Some(i)) {
            worlds[i] = mul(&previous, &local);
            previous = mul(&previous, &mul(&local, &trs(&locals[i + 1])));
            worlds[i + 1] = previous;
            i += 2;
            continue;
        }
        worlds[i] = match nodes[i].parent {
            Some(_) if chained => mul(&previous, &local),
            Some(p) => mul(&worlds[p], &local),
            None => local,
        };
        previous = worlds[i];
        i += 1;
    }
    worlds
}

/// Bits of every element; any NaN as any other (Rust does not promise a NaN's sign or payload
/// through arithmetic).
fn bits(m: &M) -> [u32; 16] {
    m.map(|v| if v.is_nan() { f32::NAN.to_bits() } else { v.to_bits() })
}

fn check(name: &str, rig: &Rig, locals: &[Trs]) -> usize {
    let nodes = &rig.nodes;
    let want = worlds_of(nodes, locals);
    let mut worlds = vec![Mat4::ZERO; nodes.len()];
    local_to_world_with(Kernel::Avx512, nodes, locals, &mut worlds);
    for (i, (got, want)) in worlds.iter().zip(&want).enumerate() {
        assert_eq!(bits(&got.to_cols_array()), bits(want), "{name}: world of node {i}");
    }
    let mut checked = 0;
    for (s, skin) in rig.skins.iter().enumerate() {
        if !skin.inverse_binds.iter().all(rigscope::anim::is_affine) {
            continue;
        }
        let mut palette = vec![Mat4::ZERO; skin.joints.len()];
        build_palette_with(Kernel::Avx512, &skin.joints, &skin.inverse_binds, &worlds, &mut palette);
        for (j, (got, (&joint, bind))) in palette
            .iter()
            .zip(skin.joints.iter().zip(&skin.inverse_binds))
            .enumerate()
        {
            let want = mul(&want[joint], &bind.to_cols_array());
            assert_eq!(
                bits(&got.to_cols_array()),
                bits(&want),
                "{name}: skin {s}, palette matrix {j}"
            );
        }
        checked += palette.len();
    }
    checked
}

/// The rig at rest and, when it has a clip, 40% of the way through its first.
fn poses(rig: &Rig) -> Vec<(&'static str, Vec<Trs>)> {
    let rest: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
    let mut poses = vec![("rest", rest.clone())];
    if let Some(clip) = rig.clips.first() {
        let mut locals = rest;
        let mut hints = vec![0; clip.channels.len()];
        sample_clip(&rig.nodes, Some(clip), clip.duration * 0.4, &mut hints, &mut locals);
        poses.push(("posed", locals));
    }
    poses
}

fn avx512_here() -> bool {
    let here = Kernel::Avx512.is_available();
    if !here {
        eprintln!("skipped: this CPU has no AVX-512, the kernel these bits belong to");
    }
    here
}

#[test]
fn synthetic_chains_and_bushes_match_the_scalar_statement() {
    if !avx512_here() {
        return;
    }
    for shape in [Shape::Chain, Shape::Bushy] {
        for joints in [1, 2, 3, 31, 32, 33, 64, 255, 256, 1024] {
            let mut rig = skeleton(joints, shape);
            rig.clips.push(trs_clip(&rig, 30, 1.0, Interpolation::Linear));
            for (pose, locals) in poses(&rig) {
                check(&format!("{} {joints} {pose}", shape.label()), &rig, &locals);
            }
        }
    }
    // Non-uniform, negative and zero scales, and a second root part-way along a chain.
    let mut rig = skeleton(256, Shape::Chain);
    rig.nodes[100].parent = None;
    let locals: Vec<Trs> = (0..rig.nodes.len())
        .map(|i| {
            let f = i as f32;
            Trs {
                translation: Vec3::new(0.05 * (f * 0.7).sin(), 0.1, -0.03 * (f * 1.3).cos()),
                rotation: Quat::from_euler(glam::EulerRot::ZXY, 0.3 * (f * 0.9).sin(), 0.2, -0.1 * f.cos()),
                scale: match i % 37 {
                    5 => Vec3::new(-1.0, 1.0, 1.0),
                    9 => Vec3::new(0.0, 1.0, 1.0),
                    _ => Vec3::new(1.0 + 0.03 * (f * 0.4).sin(), 0.98, 1.02),
                },
            }
        })
        .collect();
    check("chain 256 with scales and a second root", &rig, &locals);
}

#[test]
fn shared_rigs_match_the_scalar_statement() {
    let Some(dir) = common::shared_rigs() else {
        return;
    };
    if !avx512_here() {
        return;
    }
    let mut files = 0;
    for name in [
        "Fox.glb",
        "SimpleSkin.gltf",
        "RiggedSimple.gltf",
        "BoxAnimated.gltf",
        "real/Xbot.glb",
        "real/BrainStem.glb",
        "real/RobotExpressive.glb",
        "real/RiggedFigure.glb",
        "fbx/mixamo.fbx",
    ] {
        if !dir.join(name).is_file() {
            continue;
        }
        let rig = common::load_rig(&dir, name);
        let mut matrices = 0;
        for (pose, locals) in poses(&rig) {
            matrices += check(&format!("{name} {pose}"), &rig, &locals);
        }
        eprintln!(
            "{name}: {} nodes, {matrices} palette matrices, same bits",
            rig.nodes.len()
        );
        files += 1;
    }
    assert!(files >= 8, "only {files} shared rigs found in {}", dir.display());
}
