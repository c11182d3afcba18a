//! The morphed bind pose kept from frame to frame: the targets in use each frame, the vertices
//! they move, and the split of that work between two threads.

use super::sum::{Plan, morph_part, morph_part_again};
use crate::rig::MorphTarget;
use glam::{Vec3, Vec4};

/// Entries in use from which a frame's morph is split over two threads (below, starting them
/// costs more than it saves).
const PARALLEL_ENTRIES: usize = 8192;

/// The morphed bind pose of one primitive, kept from frame to frame so that a frame visits only
/// the targets in use and the vertices they move (and those the last frame moved), not every
/// target at every vertex. It holds the result of [`apply_morph`](super::apply_morph) with the same weights, bit for
/// bit; making and applying allocate nothing after [`MorphedPrimitive::new`].
#[derive(Debug, Clone, Default)]
pub struct MorphedPrimitive {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    /// The morphed tangents when a target moves them: see [`MorphedTangents`].
    pub tangents: MorphedTangents,
    /// Whether `positions` and `normals` hold the bind pose (normals normalized) at every vertex
    /// outside `touched`.
    ready: bool,
    /// Per half of the vertices (the second empty when not split): the vertices the last apply
    /// moved there, each once, and those this one moves.
    lists: [(Vec<u32>, Vec<u32>); 2],
    /// Per vertex, the number of the last apply that moved it (`applies` counts them from 1),
    /// or 0 once a plan has been made from that apply (see `Plan::mark_last_terms`): only
    /// whether it is the current apply's number counts.
    stamp: Vec<u32>,
    applies: u32,
    /// Where the vertices were split at the last apply (their count when not split); the lists
    /// hold vertices counted from the start of their half.
    mid: usize,
    /// The targets in use this frame and their weights, in target order.
    active: Vec<(u32, f32)>,
    /// The targets the last apply used, all at finite weights (empty otherwise): while a frame
    /// uses the same ones, the vertices they move are the same, listed in `lists[..].0`.
    last_targets: Vec<u32>,
    /// Per half, the terms of `last_targets` there as the frame that listed them added them
    /// (which start their vertex's sum from the bind pose, which add to it, which end it).
    plans: [Plan; 2],
    /// Per half, room for where each target in use has got to (see `by_chunks` in the sum).
    cursors: [Vec<std::ops::Range<usize>>; 2],
}

impl MorphedPrimitive {
    /// Room for a primitive of `vertices` vertices with `targets` targets.
    pub fn new(vertices: usize, targets: usize) -> Self {
        MorphedPrimitive {
            positions: vec![Vec3::ZERO; vertices],
            normals: vec![Vec3::ZERO; vertices],
            tangents: MorphedTangents::default(),
            ready: false,
            lists: [0, 1].map(|_| (Vec::with_capacity(vertices), Vec::with_capacity(vertices))),
            stamp: vec![0; vertices],
            applies: 0,
            mid: vertices,
            active: Vec::with_capacity(targets),
            last_targets: Vec::with_capacity(targets),
            plans: [0, 1].map(|_| Plan::with_capacity(vertices)),
            cursors: [0, 1].map(|_| Vec::with_capacity(targets)),
        }
    }

    /// Room for a primitive of `vertices` vertices whose `targets` move its tangents too (when
    /// any does): [`MorphedPrimitive::apply_tangents`] then keeps them.
    pub fn with_tangents(vertices: usize, targets: &[MorphTarget]) -> Self {
        let mut morphed = Self::new(vertices, targets.len());
        if targets.iter().any(MorphTarget::has_tangents) {
            morphed.tangents = MorphedTangents::new(vertices);
        }
        morphed
    }

    /// The targets in use at the last [`MorphedPrimitive::apply`] and their weights.
    pub fn active(&self) -> &[(u32, f32)] {
        &self.active
    }

    /// Morphs the bind pose `positions`/`normals` by `targets` at `weights` into
    /// `self.positions`/`self.normals`; false (and nothing written) when no weight is non-zero,
    /// where the bind pose is to be used as it is.
    pub fn apply(&mut self, targets: &[MorphTarget], weights: &[f32], positions: &[Vec3], normals: &[Vec3]) -> bool {
        let no_more = |_: usize, _: &[Vec3], _: &[Vec3]| ();
        let Some(frame) = self.start_frame(targets, weights, positions, normals) else {
            return false;
        };
        // Each half of the vertices takes its part of every target, in target order, so each
        // vertex sums as it would in one piece.
        let split = frame.entries >= PARALLEL_ENTRIES && rayon::current_num_threads() > 1;
        let mid = if split {
            self.balanced_split(targets, weights, positions.len(), 1, 0.0)
        } else {
            positions.len()
        };
        self.morph_halves(frame, mid, (no_more, no_more));
        true
    }

    /// [`MorphedPrimitive::apply`] split at vertex `mid` over two threads, each handing its
    /// half of the morphed bind pose to its part of `then` as soon as it is morphed, piece by
    /// piece in order while the targets in use stay the same: `then(start, positions, normals)`
    /// for the vertices from `start` (counted from the half's first). Skinning there reads the
    /// vertices the morph moved while they are in that core's cache, and the two threads start
    /// once for both steps. False (and `then` not called) when no weight is non-zero.
    pub fn apply_then<A, B>(
        &mut self,
        targets: &[MorphTarget],
        weights: &[f32],
        (positions, normals): (&[Vec3], &[Vec3]),
        mid: usize,
        then: (A, B),
    ) -> bool
    where
        A: FnMut(usize, &[Vec3], &[Vec3]) + Send,
        B: FnMut(usize, &[Vec3], &[Vec3]) + Send,
    {
        let Some(frame) = self.start_frame(targets, weights, positions, normals) else {
            return false;
        };
        self.morph_halves(frame, mid.min(positions.len()), then);
        true
    }

    /// Where to split `vertices` vertices over two threads for `weights`: the frame's terms
    /// (every vertex for a weight that is not finite) plus `vertex_cost` terms a vertex balanced
    /// between the halves, the second starting at a multiple of `align`. While the targets in
    /// use stay the last apply's, where that apply split (when aligned so), so that the frames
    /// that keep their targets keep their lists.
    pub fn balanced_split(
        &self,
        targets: &[MorphTarget],
        weights: &[f32],
        vertices: usize,
        align: usize,
        vertex_cost: f32,
    ) -> usize {
        let align = align.max(1);
        let in_use = || targets.iter().zip(weights).enumerate().filter(|(_, (_, w))| **w != 0.0);
        let kept = self.ready
            && self.mid < vertices
            && self.mid.is_multiple_of(align)
            && in_use().all(|(_, (_, w))| w.is_finite())
            && !self.last_targets.is_empty()
            && self.last_targets.iter().copied().eq(in_use().map(|(t, _)| t as u32));
        if kept {
            return self.mid;
        }
        let terms_below = |m: usize| -> usize {
            in_use()
                .map(|(_, (target, w))| {
                    if w.is_finite() {
                        target.vertices.partition_point(|&v| (v as usize) < m)
                    } else {
                        m
                    }
                })
                .sum()
        };
        let cost = |m: usize| vertex_cost * m as f32 + terms_below(m) as f32;
        let half = cost(vertices) / 2.0;
        // The first multiple of `align` whose cost below reaches half (the cost grows with m).
        let (mut low, mut high) = (1, vertices / align);
        while low < high {
            let m = (low + high) / 2;
            if cost(m * align) < half {
                low = m + 1;
            } else {
                high = m;
            }
        }
        (low * align).min(vertices)
    }

    /// Moves the split between the halves to `mid`: the lists of the vertices the last apply
    /// moved are dealt again (the stamps and the kept pose do not depend on it); the marks of
    /// which terms start their sums do, so the next apply lists its terms afresh.
    fn move_split(&mut self, mid: usize) {
        let old = self.mid as u32;
        let [(first, scratch), (second, _)] = &mut self.lists;
        scratch.clear();
        scratch.extend(first.iter().copied());
        scratch.extend(second.iter().map(|&v| v + old));
        first.clear();
        second.clear();
        for &v in scratch.iter() {
            match (v as usize).checked_sub(mid) {
                None => first.push(v),
                Some(v) => second.push(v as u32),
            }
        }
        scratch.clear();
        self.mid = mid;
        self.last_targets.clear();
    }

    /// Lists the targets in use; None when there is none. Otherwise readies the kept buffers
    /// and says what kind of frame this is.
    fn start_frame<'a>(
        &mut self,
        targets: &'a [MorphTarget],
        weights: &[f32],
        positions: &'a [Vec3],
        normals: &'a [Vec3],
    ) -> Option<Frame<'a>> {
        self.active.clear();
        let in_use = targets.iter().zip(weights).enumerate().filter(|(_, (_, w))| **w != 0.0);
        self.active.extend(in_use.map(|(t, (_, &w))| (t as u32, w)));
        if self.active.is_empty() {
            return None;
        }
        let entries: usize = (self.active.iter())
            .map(|&(t, w)| {
                if w.is_finite() {
                    targets[t as usize].vertices.len()
                } else {
                    positions.len()
                }
            })
            .sum();
        // A plan numbers the targets in use in u16.
        let keeps_plan = self.active.len() <= usize::from(u16::MAX) && self.active.iter().all(|(_, w)| w.is_finite());
        let same = keeps_plan
            && !self.last_targets.is_empty()
            && self
                .last_targets
                .iter()
                .copied()
                .eq(self.active.iter().map(|&(t, _)| t));
        Some(Frame {
            targets,
            bind: (positions, normals),
            entries,
            keeps_plan,
            same,
        })
    }

    /// Morphs the vertices below `mid` and those from `mid` on (on two threads when both have
    /// some), each half then handed to its part of `then`.
    fn morph_halves<A, B>(&mut self, mut frame: Frame<'_>, mid: usize, (then0, mut then1): (A, B))
    where
        A: FnMut(usize, &[Vec3], &[Vec3]) + Send,
        B: FnMut(usize, &[Vec3], &[Vec3]) + Send,
    {
        let (positions, normals) = frame.bind;
        if self.ready && self.applies < u32::MAX && mid != self.mid {
            self.move_split(mid);
            frame.same = false;
        }
        if !self.ready || self.applies == u32::MAX {
            self.positions.copy_from_slice(positions);
            for (out, n) in self.normals.iter_mut().zip(normals) {
                *out = n.normalize_or_zero();
            }
            self.lists.iter_mut().for_each(|(touched, _)| touched.clear());
            self.stamp.fill(0);
            self.applies = 0;
            self.mid = mid;
            self.ready = true;
            self.last_targets.clear();
            frame.same = false;
        }
        if !frame.same {
            self.last_targets.clear();
            if frame.keeps_plan {
                self.last_targets.extend(self.active.iter().map(|&(t, _)| t));
            }
        }
        self.applies += 1;
        let now = self.applies;
        let (p0, p1) = self.positions.split_at_mut(mid);
        let (n0, n1) = self.normals.split_at_mut(mid);
        let (s0, s1) = self.stamp.split_at_mut(mid);
        let [l0, l1] = &mut self.lists;
        let [plan0, plan1] = &mut self.plans;
        let [c0, c1] = &mut self.cursors;
        let (active, frame) = (&self.active[..], &frame);
        let first = Half {
            start: 0,
            out: (p0, n0),
            stamp: s0,
            lists: l0,
            plan: plan0,
            cursors: c0,
        };
        if p1.is_empty() {
            frame.morph(active, now, first, then0);
            return then1(0, &[], &[]);
        }
        let second = Half {
            start: mid,
            out: (p1, n1),
            stamp: s1,
            lists: l1,
            plan: plan1,
            cursors: c1,
        };
        rayon::join(
            || frame.morph(active, now, first, then0),
            || frame.morph(active, now, second, then1),
        );
    }
}

/// One frame of [`MorphedPrimitive::apply`]: the targets and the bind pose, and what the
/// targets in use are like.
struct Frame<'a> {
    targets: &'a [MorphTarget],
    bind: (&'a [Vec3], &'a [Vec3]),
    /// Terms in all: the entries of the targets in use (every vertex for a weight that is not
    /// finite).
    entries: usize,
    /// Whether the frame's terms are recorded for the next frames: every weight in use is
    /// finite (one that is not moves every vertex) and the targets in use are numbered in u16.
    keeps_plan: bool,
    /// Whether the targets in use are the last frame's, all at finite weights.
    same: bool,
}

/// The vertices from `start` on that `out` holds, with their kept state.
struct Half<'a> {
    start: usize,
    out: (&'a mut [Vec3], &'a mut [Vec3]),
    stamp: &'a mut [u32],
    lists: &'a mut (Vec<u32>, Vec<u32>),
    plan: &'a mut Plan,
    cursors: &'a mut Vec<std::ops::Range<usize>>,
}

impl Frame<'_> {
    /// Morphs `half` by the targets `active`, in apply number `now`, then hands it to `then`.
    fn morph(&self, active: &[(u32, f32)], now: u32, half: Half<'_>, mut then: impl FnMut(usize, &[Vec3], &[Vec3])) {
        let (start, len) = (half.start, half.out.0.len());
        let bind = (&self.bind.0[start..start + len], &self.bind.1[start..start + len]);
        let (out_p, out_n) = half.out;
        if self.same {
            let again = (&mut *out_p, &mut *out_n);
            morph_part_again(self.targets, active, again, half.plan, &mut then);
        } else {
            half.plan.clear();
            let plan = self.keeps_plan.then_some(half.plan);
            let out = (&mut *out_p, &mut *out_n);
            morph_part(
                self.targets,
                active,
                start,
                bind,
                out,
                half.stamp,
                half.lists,
                plan,
                now,
                half.cursors,
            );
            then(0, out_p, out_n);
        }
    }
}

impl MorphedPrimitive {
    /// Morphs the bind tangents `tangents` by the targets in use at the last
    /// [`MorphedPrimitive::apply`] (which found one in use) into `self.tangents`; nothing when
    /// the primitive was not made [`MorphedPrimitive::with_tangents`] or `tangents` is not one
    /// per vertex.
    pub fn apply_tangents(&mut self, targets: &[MorphTarget], tangents: &[Vec4]) {
        self.tangents.apply(targets, &self.active, tangents);
    }
}

/// The morphed tangents of a primitive whose targets move them: at every vertex
/// `normalize_or_zero(t.xyz + Σ w·Δt)` over the targets in use, in target order, with the
/// bitangent's sign `t.w` kept. The sum starts from the bind tangent as it is and is normalized
/// after, as the normals' is, so a vertex no target moves holds its bind tangent normalized.
/// Only the vertices the targets in use move (and those the last frame moved) are visited.
#[derive(Debug, Clone, Default)]
pub struct MorphedTangents {
    /// Empty unless a target moves tangents.
    tangents: Vec<Vec4>,
    /// Whether `tangents` holds the normalized bind tangents outside `moved`.
    ready: bool,
    /// The vertices the last apply moved, each once.
    moved: Vec<u32>,
    /// Per vertex, the number of the last apply that moved it (`applies` counts them).
    stamp: Vec<u32>,
    applies: u32,
}

impl MorphedTangents {
    fn new(vertices: usize) -> Self {
        MorphedTangents {
            tangents: vec![Vec4::ZERO; vertices],
            ready: false,
            moved: Vec::with_capacity(vertices),
            stamp: vec![0; vertices],
            applies: 0,
        }
    }

    /// The morphed tangents when kept, else `bind` (the primitive's own, which then are what
    /// is drawn).
    pub fn or<'a>(&'a self, bind: &'a [Vec4]) -> &'a [Vec4] {
        if self.ready && self.tangents.len() == bind.len() {
            &self.tangents
        } else {
            bind
        }
    }

    fn apply(&mut self, targets: &[MorphTarget], active: &[(u32, f32)], bind: &[Vec4]) {
        let n = self.tangents.len();
        if n == 0 || bind.len() != n {
            return;
        }
        let normalized = |t: Vec4| t.truncate().normalize_or_zero().extend(t.w);
        if !self.ready || self.applies == u32::MAX {
            for (out, &t) in self.tangents.iter_mut().zip(bind) {
                *out = normalized(t);
            }
            self.moved.clear();
            self.stamp.fill(0);
            self.applies = 0;
            self.ready = true;
        }
        for &v in &self.moved {
            self.tangents[v as usize] = normalized(bind[v as usize]);
        }
        self.moved.clear();
        self.applies += 1;
        let now = self.applies;
        let (tangents, stamp, moved) = (&mut self.tangents, &mut self.stamp, &mut self.moved);
        // The sum leaves `w` alone: adding a zero to it would turn -0 into +0.
        let mut add = |v: usize, offset: Vec3| {
            if stamp[v] != now {
                stamp[v] = now;
                moved.push(v as u32);
                tangents[v] = bind[v];
            }
            let t = tangents[v];
            tangents[v] = (t.truncate() + offset).extend(t.w);
        };
        for &(t, w) in active {
            let target = &targets[t as usize];
            if !target.has_tangents() {
                continue;
            }
            let entries = target.vertices.iter().zip(&target.tangent_offsets);
            if w.is_finite() {
                for (&v, &dt) in entries.filter(|(v, _)| (**v as usize) < n) {
                    add(v as usize, dt * w);
                }
            } else {
                // As `add_target`: every vertex takes its term, +0 where the target keeps none.
                let mut entries = entries.peekable();
                for v in 0..n {
                    let dt = entries
                        .next_if(|(e, _)| **e as usize == v)
                        .map_or(Vec3::ZERO, |(_, &dt)| dt);
                    add(v, dt * w);
                }
            }
        }
        for &v in moved.iter() {
            tangents[v as usize] = normalized(tangents[v as usize]);
        }
    }
}
