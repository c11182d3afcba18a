//! The sum's plan followed on every path, and the renormalization, against the operations written out.

use super::*;

/// A frame that follows the plan of the one before, on the path this CPU takes and on the
/// one others take, against the sum written out: target by target in target order, the
/// normals normalized after. The targets overlap, so stretches are split where their
/// vertices' last terms start or stop, and one runs on past the first chunk into the next,
/// where another overlaps it; then that one alone, each term its vertex's first and last.
/// Each chunk must be finished, normals normalized, when it is handed on.
#[test]
fn a_frame_following_the_plan_sums_as_the_frame_that_made_it() {
    let Face {
        bind: (bind_p, bind_n),
        targets,
    } = overlapping_face();
    let vertices = bind_p.len();
    let written_out = |active: &[(u32, f32)]| {
        let (mut p, mut n) = (bind_p.clone(), bind_n.clone());
        for &(t, w) in active {
            let target = &targets[t as usize];
            for (k, &v) in target.vertices.iter().enumerate() {
                p[v as usize] += target.position_offsets[k] * w;
                n[v as usize] += target.normal_offsets[k] * w;
            }
        }
        n.iter_mut().for_each(|n| *n = n.normalize_or_zero());
        (p, n)
    };
    let bits = |values: &[Vec3]| {
        values
            .iter()
            .map(|v| v.to_array().map(f32::to_bits))
            .collect::<Vec<_>>()
    };
    // Every target, overlapping, and target 1 alone, whose vertices take one term each; every
    // weight changes from the frame that makes the plan to the one that follows it.
    let overlapping: [&[(u32, f32)]; 2] = [
        &[(0, 0.5), (1, -1.25), (2, 0.75), (3, 0.25)],
        &[(0, -0.25), (1, 2.0), (2, 0.125), (3, 0.5)],
    ];
    let alone: [&[(u32, f32)]; 2] = [&[(1, -1.25)], &[(1, 2.0)]];
    for ([recorded, following], overlapping) in [(overlapping, true), (alone, false)] {
        let case = if overlapping { "" } else { ", target 1 alone" };
        let (mut out_p, mut out_n) = (
            bind_p.clone(),
            bind_n.iter().map(|n| n.normalize_or_zero()).collect::<Vec<_>>(),
        );
        let (mut stamp, mut lists, mut plan, mut cursors) =
            (vec![0; vertices], Default::default(), Plan::default(), Vec::new());
        let out = (&mut out_p[..], &mut out_n[..]);
        morph_part(
            &targets,
            recorded,
            0,
            (&bind_p, &bind_n),
            out,
            &mut stamp,
            &mut lists,
            Some(&mut plan),
            1,
            &mut cursors,
        );
        let (want_p, want_n) = written_out(recorded);
        assert_eq!(
            (bits(&out_p), bits(&out_n)),
            (bits(&want_p), bits(&want_n)),
            "the frame that made the plan{case}"
        );
        if overlapping {
            assert!(plan.stretches.iter().any(|s| s.last) && plan.stretches.iter().any(|s| !s.last));
        } else {
            assert!(plan.stretches.iter().all(|s| s.first && s.last));
        }
        let spills = |s: &Stretch| (s.vertex as usize) < CHUNK && s.vertex as usize + usize::from(s.len) > CHUNK;
        assert!(
            plan.stretches[..plan.chunk_ends[0] as usize].iter().any(spills),
            "no stretch runs on into the second chunk"
        );
        // The same targets at other weights, from what that frame left.
        let (want_p, want_n) = written_out(following);
        type Follow = unsafe fn(&[MorphTarget], &[(u32, f32)], (&mut [Vec3], &mut [Vec3]), &Plan, &mut ChunkTaker<'_>);
        let mut paths: Vec<(&str, Follow)> = vec![("float by float", follow_plan::<FloatByFloat>)];
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::Kernel::Avx512.is_available() {
            paths.push(("sixteen at a time", wide::follow_plan));
        }
        for (path, follow) in paths {
            let (mut p, mut n) = (out_p.clone(), out_n.clone());
            let mut handed = Vec::new();
            let mut check = |start: usize, p: &[Vec3], n: &[Vec3]| {
                let range = start..start + p.len();
                assert_eq!(
                    bits(n),
                    bits(&want_n[range.clone()]),
                    "{path}{case}: normals handed on from {start}"
                );
                assert_eq!(
                    bits(p),
                    bits(&want_p[range]),
                    "{path}{case}: positions handed on from {start}"
                );
                handed.push(start);
            };
            // SAFETY: the wide path is listed only where the CPU has AVX-512 F and BW.
            unsafe { follow(&targets, following, (&mut p, &mut n), &plan, &mut check) };
            assert_eq!(handed, [0, CHUNK, 2 * CHUNK], "{path}{case}");
            assert_eq!((bits(&p), bits(&n)), (bits(&want_p), bits(&want_n)), "{path}{case}");
        }
    }
}

/// A bind pose of three chunks and four targets that overlap, for following a plan.
struct Face {
    bind: (Vec<Vec3>, Vec<Vec3>),
    targets: Vec<MorphTarget>,
}

fn overlapping_face() -> Face {
    let vertices = 3 * CHUNK;
    let bind_p: Vec<Vec3> = (0..vertices).map(|v| Vec3::new(v as f32 * 1e-3, 1.0, -0.5)).collect();
    let bind_n: Vec<Vec3> = (0..vertices)
        .map(|v| Vec3::new((v as f32 * 0.1).sin(), 2.0, (v as f32 * 0.3).cos()))
        .collect();
    // Vertex ranges each target moves: 1, the last in the first chunk, runs on into the second
    // (where 0 moves nothing), and 2 overlaps it there and at a few vertices further on; 3
    // overlaps 2 and 0, and leaves the normal of vertex 9000 at zero.
    let ranges = [
        vec![100..300, 8500..8600],
        vec![3900..4250, 7001..7002],
        vec![4200..4400, 7000..7003],
        vec![4380..5050, 8550..8650, 9000..9001],
    ];
    let targets: Vec<MorphTarget> = (ranges.iter().enumerate())
        .map(|(t, ranges)| {
            let (mut dp, mut dn) = (vec![Vec3::ZERO; vertices], vec![Vec3::ZERO; vertices]);
            for v in ranges.iter().flat_map(|r| r.clone()) {
                let f = (v * (t + 3)) as f32;
                dp[v] = Vec3::new((f * 0.7).sin(), (f * 0.2).cos(), 0.3);
                dn[v] = Vec3::new((f * 0.11).cos(), -0.5, (f * 0.9).sin());
            }
            if t == 3 {
                dn[9000] = -bind_n[9000] / 0.5;
            }
            MorphTarget::sparse(&dp, &dn, &bind_p, &bind_n)
        })
        .collect();
    Face {
        bind: (bind_p, bind_n),
        targets,
    }
}

/// Normals of every kind (unit, long, short, subnormal, zero, infinite, NaN) at listed
/// vertices in runs of sixteen, broken runs and single ones: each normalized as
/// `Vec3::normalize_or_zero` normalizes it, bit for bit, and the others left alone.
#[test]
fn listed_normals_are_normalized_as_one_by_one() {
    let special = [0.0, -0.0, 1e-40, -3e-39, f32::INFINITY, f32::NAN, 1e30, -2.5];
    let normals: Vec<Vec3> = (0..400u32)
        .map(|i| {
            let f = i as f32;
            let mut n = Vec3::new((f * 0.37).sin() * 3.0, (f * 1.1).cos(), 0.01 * f - 1.0);
            if i % 7 == 3 {
                n[(i as usize / 7) % 3] = special[(i as usize / 3) % special.len()];
            }
            if i % 41 == 5 {
                n = Vec3::ZERO;
            }
            n
        })
        .collect();
    let mut list: Vec<u32> = (16..48).collect();
    list.extend([100, 3, 7, 200]);
    list.extend(60..84);
    list.extend((120..180).step_by(2));
    list.extend(300..316);
    list.extend([399, 250]);
    let mut want = normals.clone();
    for &v in &list {
        want[v as usize] = normals[v as usize].normalize_or_zero();
    }
    // The widest path this CPU takes, and the four-at-a-time one the others take.
    type Normalize = fn(&mut [Vec3], &[u32]);
    let paths: [(&str, Normalize); 2] = [("widest", normalize_listed), ("four at a time", normalize_in_fours)];
    for (path, normalize) in paths {
        let mut got = normals.clone();
        normalize(&mut got, &list);
        for (v, (g, w)) in got.iter().zip(&want).enumerate() {
            let bits = |n: &Vec3| n.to_array().map(f32::to_bits);
            assert_eq!(bits(g), bits(w), "{path}, vertex {v}: {g} against {w}");
        }
    }
}
