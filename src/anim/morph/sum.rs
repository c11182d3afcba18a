//! The sum of a frame's morph on the CPU: the terms of the targets in use added chunk by chunk
//! of vertices, each vertex's in target order, and the moved normals renormalized.

use super::{add_target_range, entries_in};
use crate::rig::MorphTarget;
use glam::Vec3;

/// Vertices a frame's sum visits together: every target in use adds its terms in a chunk before
/// the next chunk starts, so a chunk's bind pose and sums (four arrays of 12 bytes a vertex,
/// 192 KiB) stay in the core's cache while the targets visit it, instead of each target
/// streaming the whole mesh's arrays through it again.
const CHUNK: usize = 4096;

/// What takes each chunk of a half of the vertices once morphed: `(start, positions, normals)`
/// for the vertices from `start`, counted from the half's first.
type ChunkTaker<'a> = dyn FnMut(usize, &[Vec3], &[Vec3]) + 'a;

/// What [`by_chunks`] does with each term and after each chunk.
trait ChunkedSum {
    /// Adds `w·(dp, dn)` at vertex `v` (counted from the part's start).
    fn term(&mut self, v: usize, dp: Vec3, dn: Vec3, w: f32);
    /// [`ChunkedSum::term`] at the consecutive vertices from `v` on, one a pair of offsets.
    fn run(&mut self, v: usize, dp: &[Vec3], dn: &[Vec3], w: f32) {
        for (k, (&dp, &dn)) in dp.iter().zip(dn).enumerate() {
            self.term(v + k, dp, dn, w);
        }
    }
    /// Every term of the vertices `start..end` is in (and of those before).
    fn chunk_done(&mut self, start: usize, end: usize);
}

/// Visits the terms of the targets in use (all at finite weights) at the `len` vertices from
/// `start` on, chunk by chunk of [`CHUNK`] vertices and within a chunk target by target in
/// target order, so each vertex still takes its terms in target order. `cursors` is room for
/// one range of entries per target in use.
fn by_chunks(
    targets: &[MorphTarget],
    active: &[(u32, f32)],
    start: usize,
    len: usize,
    cursors: &mut Vec<std::ops::Range<usize>>,
    sum: &mut impl ChunkedSum,
) {
    cursors.clear();
    cursors.extend(
        active
            .iter()
            .map(|&(t, _)| entries_in(&targets[t as usize], start, start + len)),
    );
    let mut chunk_start = 0;
    while chunk_start < len {
        let end = (chunk_start + CHUNK).min(len);
        for (&(t, w), cursor) in active.iter().zip(cursors.iter_mut()) {
            let target = &targets[t as usize];
            let stop = cursor.start + target.vertices[cursor.clone()].partition_point(|&v| (v as usize) < start + end);
            let here = cursor.start..stop;
            let vertices = &target.vertices[here.clone()];
            let (dp, dn) = (&target.position_offsets[here.clone()], &target.normal_offsets[here]);
            // Targets move patches of a surface, whose vertices are mostly numbered in runs.
            let mut i = 0;
            while i < vertices.len() {
                let first = vertices[i];
                let run = 1
                    + (vertices[i + 1..].iter().zip(1..))
                        .take_while(|&(&v, k)| v.wrapping_sub(first) == k)
                        .count();
                let j = i + run;
                sum.run(first as usize - start, &dp[i..j], &dn[i..j], w);
                i = j;
            }
            cursor.start = stop;
        }
        sum.chunk_done(chunk_start, end);
        chunk_start = end;
    }
}

/// The sum of a frame whose targets differ from the last frame's: a vertex's first term starts
/// from its bind pose as it is (normal not normalized), whatever the last frame left there, and
/// is stamped and listed.
struct FirstSum<'a> {
    bind: (&'a [Vec3], &'a [Vec3]),
    out: (&'a mut [Vec3], &'a mut [Vec3]),
    stamp: &'a mut [u32],
    now: u32,
    touching: &'a mut Vec<u32>,
    /// How many of `touching` are normalized.
    normalized: usize,
    firsts: Option<&'a mut Vec<bool>>,
}

impl ChunkedSum for FirstSum<'_> {
    #[inline(always)]
    fn term(&mut self, v: usize, dp: Vec3, dn: Vec3, w: f32) {
        let first = self.stamp[v] != self.now;
        let (p, n) = if first {
            self.stamp[v] = self.now;
            self.touching.push(v as u32);
            (self.bind.0[v], self.bind.1[v])
        } else {
            (self.out.0[v], self.out.1[v])
        };
        self.out.0[v] = p + dp * w;
        self.out.1[v] = n + dn * w;
        if let Some(firsts) = self.firsts.as_deref_mut() {
            firsts.push(first);
        }
    }

    fn chunk_done(&mut self, _start: usize, _end: usize) {
        normalize_listed(self.out.1, &self.touching[self.normalized..]);
        self.normalized = self.touching.len();
    }
}

/// The sum of a frame whose targets in use are the last frame's: `firsts` says which term
/// starts its vertex's sum, and the vertices moved are `touched`, the last frame's, listed chunk
/// by chunk as [`FirstSum`] listed them.
struct AgainSum<'a> {
    bind: (&'a [Vec3], &'a [Vec3]),
    out: (&'a mut [Vec3], &'a mut [Vec3]),
    firsts: std::slice::Iter<'a, bool>,
    touched: &'a [u32],
    /// Takes each chunk once its sums are done.
    then: &'a mut ChunkTaker<'a>,
}

impl ChunkedSum for AgainSum<'_> {
    #[inline(always)]
    fn term(&mut self, v: usize, dp: Vec3, dn: Vec3, w: f32) {
        let first = self.firsts.next().copied().unwrap_or(false);
        let (p, n) = if first {
            (self.bind.0[v], self.bind.1[v])
        } else {
            (self.out.0[v], self.out.1[v])
        };
        self.out.0[v] = p + dp * w;
        self.out.1[v] = n + dn * w;
    }

    fn run(&mut self, v: usize, dp: &[Vec3], dn: &[Vec3], w: f32) {
        let (firsts, rest) = self.firsts.as_slice().split_at(dp.len().min(self.firsts.len()));
        self.firsts = rest.iter();
        // Each stretch of vertices whose terms all start their sums, or all add to them (a term
        // without its mark adds, as in `term`).
        let mut k = 0;
        while k < dp.len() {
            let first = firsts.get(k).copied().unwrap_or(false);
            let e = match firsts.get(k..) {
                Some(marks) if !marks.is_empty() => k + marks.iter().take_while(|&&f| f == first).count(),
                _ => dp.len(),
            };
            let vertices = v + k..v + e;
            let (out_p, out_n) = (&mut self.out.0[vertices.clone()], &mut self.out.1[vertices.clone()]);
            if first {
                add_scaled_from(out_p, &self.bind.0[vertices.clone()], &dp[k..e], w);
                add_scaled_from(out_n, &self.bind.1[vertices], &dn[k..e], w);
            } else {
                add_scaled(out_p, &dp[k..e], w);
                add_scaled(out_n, &dn[k..e], w);
            }
            k = e;
        }
    }

    fn chunk_done(&mut self, start: usize, end: usize) {
        let here = self.touched.partition_point(|&v| (v as usize) < end);
        let (chunk, rest) = self.touched.split_at(here);
        normalize_listed(self.out.1, chunk);
        self.touched = rest;
        (self.then)(start, &self.out.0[start..end], &self.out.1[start..end]);
    }
}

/// `out = from + offsets·w`, component by component (a `Vec3`'s `p + d * w` in lanes: the
/// same bits).
fn add_scaled_from(out: &mut [Vec3], from: &[Vec3], offsets: &[Vec3], w: f32) {
    let out: &mut [f32] = bytemuck::cast_slice_mut(out);
    let (from, offsets): (&[f32], &[f32]) = (bytemuck::cast_slice(from), bytemuck::cast_slice(offsets));
    for ((o, &f), &d) in out.iter_mut().zip(from).zip(offsets) {
        *o = f + d * w;
    }
}

/// `out += offsets·w`, component by component (as [`add_scaled_from`]).
fn add_scaled(out: &mut [Vec3], offsets: &[Vec3], w: f32) {
    let out: &mut [f32] = bytemuck::cast_slice_mut(out);
    let offsets: &[f32] = bytemuck::cast_slice(offsets);
    for (o, &d) in out.iter_mut().zip(offsets) {
        *o += d * w;
    }
}

/// One part of [`MorphedPrimitive::apply`]: the vertices from `start` on that `out` holds, with
/// their bind pose `bind`, their stamps and their lists (moved last time, moved now). With
/// `firsts`, records for each term whether it is its vertex's first (for [`morph_part_again`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn morph_part(
    targets: &[MorphTarget],
    active: &[(u32, f32)],
    start: usize,
    (positions, normals): (&[Vec3], &[Vec3]),
    (out_p, out_n): (&mut [Vec3], &mut [Vec3]),
    stamp: &mut [u32],
    (touched, touching): &mut (Vec<u32>, Vec<u32>),
    firsts: Option<&mut Vec<bool>>,
    now: u32,
    cursors: &mut Vec<std::ops::Range<usize>>,
) {
    touching.clear();
    let len = out_p.len();
    if active.iter().all(|(_, w)| w.is_finite()) {
        let mut sum = FirstSum {
            bind: (positions, normals),
            out: (&mut *out_p, &mut *out_n),
            stamp: &mut *stamp,
            now,
            touching: &mut *touching,
            normalized: 0,
            firsts,
        };
        by_chunks(targets, active, start, len, cursors, &mut sum);
    } else {
        // A weight that is not finite moves every vertex (see `add_target`): target by target.
        for &(t, w) in active {
            let target = &targets[t as usize];
            let mut first = |v: usize| {
                if stamp[v] != now {
                    stamp[v] = now;
                    touching.push(v as u32);
                    out_p[v] = positions[v];
                    out_n[v] = normals[v];
                }
            };
            if w.is_finite() {
                let range = entries_in(target, start, start + len);
                target.vertices[range].iter().for_each(|&v| first(v as usize - start));
            } else {
                (0..len).for_each(first);
            }
            add_target_range(target, start, w, out_p, out_n);
        }
        normalize_listed(out_n, touching);
    }
    // What the last frame moved and this one does not goes back to the bind pose.
    for &v in touched.iter() {
        let v = v as usize;
        if stamp[v] != now {
            out_p[v] = positions[v];
            out_n[v] = normals[v].normalize_or_zero();
        }
    }
    std::mem::swap(touched, touching);
}

/// [`morph_part`] for a frame whose targets in use (all at finite weights) are the last
/// frame's: the vertices they move are `touched`, the last frame's, and `firsts` says which
/// term starts its vertex's sum, so each term is added in one pass (the first from the bind
/// pose) and no vertex needs resetting, stamping or listing; each chunk goes to `then` once its
/// sums are done. The same operations in the same order as `morph_part`: the same bits.
pub(super) fn morph_part_again(
    targets: &[MorphTarget],
    active: &[(u32, f32)],
    (start, bind): (usize, (&[Vec3], &[Vec3])),
    out: (&mut [Vec3], &mut [Vec3]),
    (touched, firsts): (&[u32], &[bool]),
    cursors: &mut Vec<std::ops::Range<usize>>,
    then: &mut ChunkTaker<'_>,
) {
    let len = out.0.len();
    let mut sum = AgainSum {
        bind,
        out,
        firsts: firsts.iter(),
        touched,
        then,
    };
    by_chunks(targets, active, start, len, cursors, &mut sum);
}

/// `normals[v] = normals[v].normalize_or_zero()` for each `v` of `list`: on x86-64 four at a
/// time in SSE lanes, with `Vec3::normalize_or_zero`'s operations in its order (x² + y², plus
/// z², its square root, one over that, kept where finite and positive, times each component),
/// each correctly rounded as the scalar ones are, so the bits are the same; the square root and
/// the division take as long for four lanes as for one.
fn normalize_listed(normals: &mut [Vec3], list: &[u32]) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    let list = {
        use std::arch::x86_64::*;
        let mut groups = list.chunks_exact(4);
        for group in &mut groups {
            // Element by element, not through an array of `Vec3`: that is stored 12 bytes at a
            // time and read back 16 at a time, and each such read waits for the stores to
            // reach the cache (it took longer than the arithmetic).
            let (a, b, c, d) = (
                group[0] as usize,
                group[1] as usize,
                group[2] as usize,
                group[3] as usize,
            );
            let (na, nb, nc, nd) = (normals[a], normals[b], normals[c], normals[d]);
            let (mut x, mut y, mut z) = ([0.0f32; 4], [0.0f32; 4], [0.0f32; 4]);
            // SAFETY: SSE and SSE2 are enabled at compile time (the `cfg` above; every x86-64
            // CPU has them); the stores write the three arrays of four floats above.
            unsafe {
                let nx = _mm_setr_ps(na.x, nb.x, nc.x, nd.x);
                let ny = _mm_setr_ps(na.y, nb.y, nc.y, nd.y);
                let nz = _mm_setr_ps(na.z, nb.z, nc.z, nd.z);
                let dot = _mm_add_ps(_mm_add_ps(_mm_mul_ps(nx, nx), _mm_mul_ps(ny, ny)), _mm_mul_ps(nz, nz));
                let rcp = _mm_div_ps(_mm_set1_ps(1.0), _mm_sqrt_ps(dot));
                // Finite and positive: below infinity and above zero (a NaN is neither).
                let keep = _mm_and_ps(
                    _mm_cmplt_ps(rcp, _mm_set1_ps(f32::INFINITY)),
                    _mm_cmpgt_ps(rcp, _mm_setzero_ps()),
                );
                _mm_storeu_ps(x.as_mut_ptr(), _mm_and_ps(keep, _mm_mul_ps(nx, rcp)));
                _mm_storeu_ps(y.as_mut_ptr(), _mm_and_ps(keep, _mm_mul_ps(ny, rcp)));
                _mm_storeu_ps(z.as_mut_ptr(), _mm_and_ps(keep, _mm_mul_ps(nz, rcp)));
            }
            normals[a] = Vec3::new(x[0], y[0], z[0]);
            normals[b] = Vec3::new(x[1], y[1], z[1]);
            normals[c] = Vec3::new(x[2], y[2], z[2]);
            normals[d] = Vec3::new(x[3], y[3], z[3]);
        }
        groups.remainder()
    };
    for &v in list {
        normals[v as usize] = normals[v as usize].normalize_or_zero();
    }
}
