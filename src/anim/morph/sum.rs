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

/// Stretches ahead of the one being added whose lines are asked for: the vertices a frame
/// moves lie in short runs spread over the mesh, which the CPU's own prefetchers do not
/// foresee, and by then the last frame's skinning has pushed them out of the core's cache.
const STRETCHES_AHEAD: usize = 4;

/// Terms of a frame that go together: consecutive entries of one target in use at consecutive
/// vertices, all starting their vertices' sums (from the bind pose) or all adding to them, and
/// all ending them or none.
#[derive(Debug, Clone, Copy)]
struct Stretch {
    /// First entry in the target's arrays.
    entry: u32,
    /// First vertex, counted from the half's first.
    vertex: u32,
    len: u16,
    /// Which target in use (its place in the frame's list).
    slot: u16,
    first: bool,
    /// Whether these are their vertices' last terms, after which their normals are normalized.
    last: bool,
}

impl Stretch {
    /// The part of the stretch from its term `from` to (not including) `to`.
    fn part(&self, from: u16, to: u16, last: bool) -> Stretch {
        Stretch {
            entry: self.entry + u32::from(from),
            vertex: self.vertex + u32::from(from),
            len: to - from,
            last,
            ..*self
        }
    }
}

/// A half's terms as a frame with new targets in use added them, stretch by stretch and chunk by
/// chunk: while the targets in use stay the same, so do the vertices they move and which term
/// starts each vertex's sum, and the next frames add their terms by it, without looking for
/// runs of vertices or which term comes first again.
#[derive(Debug, Clone, Default)]
pub(super) struct Plan {
    stretches: Vec<Stretch>,
    /// The bind pose of the vertices the stretches that start sums start, in their order: read
    /// in one sweep where the bind pose's own arrays would be read a run here and there.
    bind: (Vec<Vec3>, Vec<Vec3>),
    /// Per chunk, how many stretches start in it and the chunks before. A stretch may run on
    /// into the next chunks, where nothing came between: its terms there are their vertices'
    /// first in target order all the same, and are added before those chunks are finished.
    chunk_ends: Vec<u32>,
    /// Room for the stretches while they are split at their vertices' last terms.
    split: Vec<Stretch>,
}

impl Plan {
    /// Room for a plan of a half of up to `vertices` vertices moved in runs (more is made room
    /// for when a frame needs it).
    pub(super) fn with_capacity(vertices: usize) -> Self {
        Plan {
            stretches: Vec::with_capacity(vertices / 8),
            bind: (Vec::with_capacity(vertices / 2), Vec::with_capacity(vertices / 2)),
            chunk_ends: Vec::with_capacity(vertices.div_ceil(CHUNK)),
            split: Vec::with_capacity(vertices / 8),
        }
    }

    pub(super) fn clear(&mut self) {
        self.stretches.clear();
        self.bind.0.clear();
        self.bind.1.clear();
        self.chunk_ends.clear();
    }

    /// Appends the term of entry `entry` of the target in use `slot` at vertex `vertex`.
    #[inline(always)]
    fn push(&mut self, slot: usize, entry: usize, vertex: usize, first: bool) {
        if let Some(last) = self.stretches.last_mut()
            && usize::from(last.slot) == slot
            && last.first == first
            && last.len < u16::MAX
            && last.entry as usize + usize::from(last.len) == entry
            && last.vertex as usize + usize::from(last.len) == vertex
        {
            last.len += 1;
            return;
        }
        // Entries and vertices are counted in u32 (a target's vertex numbers are), the targets
        // in use fit in u16 wherever a frame keeps its plan (see `kept`).
        self.stretches.push(Stretch {
            entry: entry as u32,
            vertex: vertex as u32,
            len: 1,
            slot: slot as u16,
            first,
            last: false,
        });
    }

    /// Splits the stretches where their vertices' last terms start or stop, and marks those
    /// that hold them, so that a frame following the plan normalizes each moved normal as its
    /// last term is added, while it is in a register, instead of reading it back after. `stamp`
    /// is the part's, where every vertex the plan moves holds `now`, the frame's apply number;
    /// they hold 0 after, which is never one (the next frame only asks whether they hold its
    /// number).
    fn mark_last_terms(&mut self, stamp: &mut [u32], now: u32) {
        if self.stretches.iter().all(|stretch| stretch.first) {
            // No vertex takes two terms.
            self.stretches.iter_mut().for_each(|stretch| stretch.last = true);
            return;
        }
        const SEEN: u32 = 0;
        self.split.clear();
        // Walking back, a vertex's last term is the first met; each chunk's end is rewritten to
        // the parts made from the stretches after it, then counted from the front.
        let mut chunks_left = self.chunk_ends.len();
        for (i, stretch) in self.stretches.iter().enumerate().rev() {
            while chunks_left > 0 && self.chunk_ends[chunks_left - 1] as usize > i {
                self.chunk_ends[chunks_left - 1] = self.split.len() as u32;
                chunks_left -= 1;
            }
            let (mut to, mut to_last) = (stretch.len, None);
            for k in (0..stretch.len).rev() {
                let v = stretch.vertex as usize + usize::from(k);
                let last = stamp[v] == now;
                stamp[v] = SEEN;
                match to_last {
                    Some(same) if same == last => {}
                    Some(other) => {
                        self.split.push(stretch.part(k + 1, to, other));
                        to = k + 1;
                        to_last = Some(last);
                    }
                    None => to_last = Some(last),
                }
            }
            self.split.push(stretch.part(0, to, to_last.unwrap_or(false)));
        }
        self.chunk_ends[..chunks_left].fill(self.split.len() as u32);
        let parts = self.split.len() as u32;
        self.chunk_ends.iter_mut().for_each(|end| *end = parts - *end);
        self.split.reverse();
        std::mem::swap(&mut self.stretches, &mut self.split);
    }
}

/// Asks the CPU to fetch the lines of `slice[range]` (nothing past the end).
#[inline(always)]
fn prefetch_span(slice: &[Vec3], range: std::ops::Range<usize>) {
    if let Some(items) = slice.get(range) {
        // Five 12-byte vectors span 60 bytes, less than a line: every line is asked for.
        items
            .iter()
            .step_by(5)
            .chain(items.last())
            .for_each(|item| crate::cpu::prefetch(item));
    }
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
    sum: &mut FirstSum,
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
        for (slot, (&(t, w), cursor)) in active.iter().zip(cursors.iter_mut()).enumerate() {
            let target = &targets[t as usize];
            let stop = cursor.start + target.vertices[cursor.clone()].partition_point(|&v| (v as usize) < start + end);
            let here = cursor.start..stop;
            let vertices = &target.vertices[here.clone()];
            let (dp, dn) = (&target.position_offsets[here.clone()], &target.normal_offsets[here]);
            for (k, ((&v, &dp), &dn)) in vertices.iter().zip(dp).zip(dn).enumerate() {
                sum.term((slot, cursor.start + k), v as usize - start, dp, dn, w);
            }
            cursor.start = stop;
        }
        sum.chunk_done();
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
    /// Where the terms are recorded for the next frames (when all weights are finite).
    plan: Option<&'a mut Plan>,
}

impl FirstSum<'_> {
    /// Adds `w·(dp, dn)` at vertex `v` (counted from the part's start), the term of `entry` of
    /// the target in use `slot`.
    #[inline(always)]
    fn term(&mut self, (slot, entry): (usize, usize), v: usize, dp: Vec3, dn: Vec3, w: f32) {
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
        if let Some(plan) = self.plan.as_deref_mut() {
            plan.push(slot, entry, v, first);
            if first {
                plan.bind.0.push(p);
                plan.bind.1.push(n);
            }
        }
    }

    /// Every term of the chunk just visited (and of those before) is in.
    fn chunk_done(&mut self) {
        normalize_listed(self.out.1, &self.touching[self.normalized..]);
        self.normalized = self.touching.len();
        if let Some(plan) = self.plan.as_deref_mut() {
            plan.chunk_ends.push(plan.stretches.len() as u32);
        }
    }
}

/// How a stretch's terms are added: `out[k] = from[k] + offsets[k]·w` component by component
/// (a `Vec3`'s `p + d * w`, a product and then a sum: the same bits), from `out` itself where
/// `from` is None, and with `normalize` each result then normalized as
/// `Vec3::normalize_or_zero` normalizes it (see [`normalize_listed`]).
trait AddTerms {
    /// # Safety
    /// The CPU has the features the implementation names.
    unsafe fn add(out: &mut [Vec3], from: Option<&[Vec3]>, offsets: &[Vec3], w: f32, normalize: bool);
}

/// [`AddTerms`] on any CPU, float by float (the compiler's vectors) and normalized four at a
/// time in SSE lanes on x86-64.
struct FloatByFloat;

impl AddTerms for FloatByFloat {
    #[inline(always)]
    unsafe fn add(out: &mut [Vec3], from: Option<&[Vec3]>, offsets: &[Vec3], w: f32, normalize: bool) {
        match from {
            Some(from) => add_scaled_from(out, from, offsets, w),
            None => add_scaled(out, offsets, w),
        }
        if normalize {
            normalize_consecutive(out);
        }
    }
}

/// Adds the terms of `stretch` (targets in use `active`) into `out`; one that starts its
/// vertices' sums starts them from `bind`, the rest of its plan's bind pose, and takes its part.
///
/// # Safety
/// As [`AddTerms::add`] for `T`.
#[inline(always)]
unsafe fn add_stretch<T: AddTerms>(
    targets: &[MorphTarget],
    active: &[(u32, f32)],
    bind: &mut (&[Vec3], &[Vec3]),
    (out_p, out_n): (&mut [Vec3], &mut [Vec3]),
    stretch: &Stretch,
) {
    let (t, w) = active[usize::from(stretch.slot)];
    let target = &targets[t as usize];
    let len = usize::from(stretch.len);
    let entries = stretch.entry as usize..stretch.entry as usize + len;
    let vertices = stretch.vertex as usize..stretch.vertex as usize + len;
    let (dp, dn) = (
        &target.position_offsets[entries.clone()],
        &target.normal_offsets[entries],
    );
    let (out_p, out_n) = (&mut out_p[vertices.clone()], &mut out_n[vertices.clone()]);
    let from = if stretch.first {
        let ((bind_p, rest_p), (bind_n, rest_n)) = (bind.0.split_at(len), bind.1.split_at(len));
        *bind = (rest_p, rest_n);
        (Some(bind_p), Some(bind_n))
    } else {
        (None, None)
    };
    // SAFETY: the caller's contract.
    unsafe {
        T::add(out_p, from.0, dp, w, false);
        T::add(out_n, from.1, dn, w, stretch.last);
    }
}

/// Asks for the lines of the sums [`add_stretch`] will touch for `stretch` (the plan's bind
/// pose is read in order, which the CPU foresees).
#[inline(always)]
fn prefetch_stretch(out: (&[Vec3], &[Vec3]), stretch: &Stretch) {
    let vertices = stretch.vertex as usize..stretch.vertex as usize + usize::from(stretch.len);
    prefetch_span(out.0, vertices.clone());
    prefetch_span(out.1, vertices);
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
/// `plan`, records the terms in the order they are added (for [`morph_part_again`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn morph_part(
    targets: &[MorphTarget],
    active: &[(u32, f32)],
    start: usize,
    (positions, normals): (&[Vec3], &[Vec3]),
    (out_p, out_n): (&mut [Vec3], &mut [Vec3]),
    stamp: &mut [u32],
    (touched, touching): &mut (Vec<u32>, Vec<u32>),
    plan: Option<&mut Plan>,
    now: u32,
    cursors: &mut Vec<std::ops::Range<usize>>,
) {
    touching.clear();
    let len = out_p.len();
    let mut plan = plan;
    if active.iter().all(|(_, w)| w.is_finite()) {
        let mut sum = FirstSum {
            bind: (positions, normals),
            out: (&mut *out_p, &mut *out_n),
            stamp: &mut *stamp,
            now,
            touching: &mut *touching,
            normalized: 0,
            plan: plan.as_deref_mut(),
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
    // Last, as it changes the stamps the loop above reads.
    if let Some(plan) = plan {
        plan.mark_last_terms(stamp, now);
    }
    std::mem::swap(touched, touching);
}

/// [`morph_part`] for a frame whose targets in use (all at finite weights) are the last
/// frame's: `plan` holds the terms as that frame added them, so each term is added in one pass
/// (the first from the bind pose, the last normalizing the normal) and no vertex needs
/// resetting, stamping or listing (the vertices moved are the last frame's); each chunk goes
/// to `then` once its sums are done. The same operations in the same order as `morph_part`:
/// the same bits.
pub(super) fn morph_part_again(
    targets: &[MorphTarget],
    active: &[(u32, f32)],
    out: (&mut [Vec3], &mut [Vec3]),
    plan: &Plan,
    then: &mut ChunkTaker<'_>,
) {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::Kernel::Avx512.is_enabled() {
        // SAFETY: the CPU has AVX-512 F and BW (`is_enabled` implies `is_available`).
        return unsafe { wide::follow_plan(targets, active, out, plan, then) };
    }
    // SAFETY: `FloatByFloat` needs nothing of the CPU.
    unsafe { follow_plan::<FloatByFloat>(targets, active, out, plan, then) }
}

/// [`morph_part_again`] with the terms added by `T`.
///
/// # Safety
/// As [`AddTerms::add`] for `T`.
#[inline(always)]
unsafe fn follow_plan<T: AddTerms>(
    targets: &[MorphTarget],
    active: &[(u32, f32)],
    (out_p, out_n): (&mut [Vec3], &mut [Vec3]),
    plan: &Plan,
    then: &mut ChunkTaker<'_>,
) {
    let len = out_p.len();
    let mut bind = (&plan.bind.0[..], &plan.bind.1[..]);
    let mut from = 0;
    for (chunk, &end) in plan.chunk_ends.iter().enumerate() {
        let end = end as usize;
        for (k, stretch) in plan.stretches[from..end].iter().enumerate() {
            if let Some(ahead) = plan.stretches.get(from + k + STRETCHES_AHEAD) {
                prefetch_stretch((out_p, out_n), ahead);
            }
            // SAFETY: the caller's contract.
            unsafe { add_stretch::<T>(targets, active, &mut bind, (&mut *out_p, &mut *out_n), stretch) };
        }
        from = end;
        let vertices = (chunk * CHUNK).min(len)..((chunk + 1) * CHUNK).min(len);
        then(vertices.start, &out_p[vertices.clone()], &out_n[vertices]);
    }
}

/// `normals[v] = normals[v].normalize_or_zero()` for each `v` of `list`, with
/// `Vec3::normalize_or_zero`'s operations in its order (x² + y², plus z², its square root, one
/// over that, kept where finite and positive, times each component), each correctly rounded as
/// the scalar ones are, so the bits are the same: a run of up to sixteen consecutive vertices
/// at a time in AVX-512 lanes where the CPU has them (targets move patches of a surface, mostly
/// numbered in runs), four vertices at a time in SSE lanes elsewhere on x86-64. The square root
/// and the division take about as long for many lanes as for one.
fn normalize_listed(normals: &mut [Vec3], list: &[u32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::Kernel::Avx512.is_enabled() {
        // SAFETY: the CPU has AVX-512 F and BW (`is_enabled` implies `is_available`).
        return unsafe { wide::normalize_runs(normals, list) };
    }
    normalize_in_fours(normals, list);
}

/// [`normalize_listed`] four vertices at a time in SSE lanes on x86-64, one at a time
/// elsewhere.
fn normalize_in_fours(normals: &mut [Vec3], list: &[u32]) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    let list = {
        let mut groups = list.chunks_exact(4);
        for group in &mut groups {
            normalize_four(normals, [group[0], group[1], group[2], group[3]]);
        }
        groups.remainder()
    };
    for &v in list {
        normalize_one(normals, v);
    }
}

/// [`normalize_listed`] at every vertex of `normals`.
fn normalize_consecutive(normals: &mut [Vec3]) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    let done = {
        let fours = normals.len() / 4 * 4;
        for v in (0..fours as u32).step_by(4) {
            normalize_four(normals, [v, v + 1, v + 2, v + 3]);
        }
        fours
    };
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    let done = 0;
    for v in done..normals.len() {
        normalize_one(normals, v as u32);
    }
}

#[inline(always)]
fn normalize_one(normals: &mut [Vec3], v: u32) {
    normals[v as usize] = normals[v as usize].normalize_or_zero();
}

/// [`normalize_listed`] at the four vertices `group` in SSE lanes.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn normalize_four(normals: &mut [Vec3], group: [u32; 4]) {
    use std::arch::x86_64::*;
    // Element by element, not through an array of `Vec3`: that is stored 12 bytes at a time and
    // read back 16 at a time, and each such read waits for the stores to reach the cache (it
    // took longer than the arithmetic).
    let [a, b, c, d] = group.map(|v| v as usize);
    let (na, nb, nc, nd) = (normals[a], normals[b], normals[c], normals[d]);
    let (mut x, mut y, mut z) = ([0.0f32; 4], [0.0f32; 4], [0.0f32; 4]);
    // SAFETY: SSE and SSE2 are enabled at compile time (the `cfg` above; every x86-64 CPU has
    // them); the stores write the three arrays of four floats above.
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

#[cfg(target_arch = "x86_64")]
mod wide;

#[cfg(test)]
mod tests;
