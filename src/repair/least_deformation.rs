//! Limiting a vertex's influences to the subset that moves its drawing least: the `limit`
//! repair of `rigscope fix`, which weighs every choice over the poses the engine check draws
//! instead of assuming the smallest weights matter least.
//!
//! Two small weights on joints that swing the vertex opposite ways, or a joint whose pivot sits
//! on the vertex (its turns never move it), can make the largest-N choice worse than another:
//! dropping a weight costs what that joint's motion of the vertex is worth, not its size.

use super::{Entries, MAX_ENTRIES, Repair, Repaired, Target, per_vertex};
use crate::rig::Rig;
use glam::{Mat4, Vec3};

/// How many influences beyond the limit are candidates for keeping: the largest `limit +
/// EXTRA_CANDIDATES` weights of a vertex are tried in every combination, the smaller ones are
/// always dropped. With at most 8 influences per vertex (two sets) this is every
/// influence for the usual limits, and never more than C(8, 4) = 70 subsets.
pub const EXTRA_CANDIDATES: usize = 4;

/// The most subsets a vertex has: C(8, 4).
const MAX_SUBSETS: usize = 70;

/// A subset replaces the current best (the largest weights come first) only when its worst
/// distance is smaller by more than this fraction: float noise never reorders equal choices.
const CLEARLY_SMALLER: f32 = 1e-4;

/// Each skinned instance's palette at each pose, `[pose][instance][joint]` (see
/// [`crate::engine::check::pose_palettes`]).
pub type PosePalettes = Vec<Vec<Vec<Mat4>>>;

/// At most `limit` influences per vertex, chosen so that the vertex, skinned with the kept
/// weights renormalized, lies nearest to where all its weights (renormalized) put it: the
/// subset whose **worst** distance over the poses `palettes` gives is smallest. Worst rather
/// than sum of squares because the result is judged the way `rigscope check` judges engines,
/// by the farthest a vertex is drawn at any pose, and a choice that is good on average can
/// still tear one pose. The kept influences are sorted largest first and renormalized.
///
/// `palettes` is called once, at the first vertex with more than `limit` influences. The
/// positions are the mesh's own, without morph targets. Vertices with `limit` or fewer
/// influences are untouched; a joint index past the palette counts as not moving.
pub fn limit_least_deformation(rig: &Rig, limit: usize, palettes: impl FnOnce() -> PosePalettes) -> Repaired {
    let mut palettes = Some(palettes);
    let mut poses = PosePalettes::new();
    let drawn_by = skinned_instances_per_mesh(rig);
    per_vertex(rig, Repair::Limit, |target, v, entries| {
        entries.clear_unusable();
        if entries.nonzero() <= limit {
            return Some(false);
        }
        if let Some(build) = palettes.take() {
            poses = build();
        }
        entries.sort_by_weight();
        let keep = least_deforming_subset(entries, limit, target, v, &poses, &drawn_by[target.mesh]);
        for (k, e) in entries.slice_mut().iter_mut().enumerate() {
            if keep & (1 << k) == 0 {
                *e = (0, 0.0);
            }
        }
        entries.sort_by_weight();
        entries.renormalize();
        Some(true)
    })
}

/// Per mesh, the instances that draw it skinned.
fn skinned_instances_per_mesh(rig: &Rig) -> Vec<Vec<usize>> {
    let mut drawn_by = vec![Vec::new(); rig.meshes.len()];
    for (i, instance) in rig.instances.iter().enumerate() {
        if instance.skin.is_some()
            && let Some(list) = drawn_by.get_mut(instance.mesh)
        {
            list.push(i);
        }
    }
    drawn_by
}

/// The subsets of `limit` of the first `candidates` slots, as bit masks in increasing order:
/// the first is the largest weights (slots are sorted largest first).
fn subsets(candidates: usize, limit: usize) -> ([u8; MAX_SUBSETS], usize) {
    let mut masks = [0u8; MAX_SUBSETS];
    let mut count = 0;
    for mask in 0..(1u16 << candidates) {
        if mask.count_ones() as usize == limit && count < MAX_SUBSETS {
            masks[count] = mask as u8;
            count += 1;
        }
    }
    (masks, count)
}

/// The worst distance over `poses` of each subset of `entries` (sorted largest first, `limit`
/// of its first candidates kept), and the mask of the least: without allocating.
fn least_deforming_subset(
    entries: &Entries,
    limit: usize,
    target: &Target,
    v: usize,
    poses: &PosePalettes,
    instances: &[usize],
) -> u8 {
    let all = entries.slice();
    let used = entries.nonzero();
    let candidates = used.min(limit + EXTRA_CANDIDATES).min(MAX_ENTRIES);
    let (masks, count) = subsets(candidates, limit);
    let mut kept_sum = [0.0f32; MAX_SUBSETS];
    for (sum, &mask) in kept_sum.iter_mut().zip(&masks[..count]) {
        *sum = (0..candidates)
            .filter(|&k| mask & (1 << k) != 0)
            .map(|k| all[k].1)
            .sum();
    }
    let total: f32 = all[..used].iter().map(|e| e.1).sum();
    let position = target.positions[v];
    let mut worst = [0.0f32; MAX_SUBSETS];
    let mut moved = [Vec3::ZERO; MAX_ENTRIES];
    for pose in poses {
        for palette in instances.iter().filter_map(|&i| pose.get(i)) {
            for (q, &(joint, _)) in moved.iter_mut().zip(&all[..used]) {
                *q = palette
                    .get(usize::from(joint))
                    .map_or(position, |m| m.transform_point3(position));
            }
            let full = (0..used).map(|k| moved[k] * all[k].1).sum::<Vec3>() / total;
            // With every weight's motion taken relative to the full position, a renormalized
            // subset lies Σ w·(q − full) / Σ w away from it.
            for s in 0..count {
                let offset: Vec3 = (0..candidates)
                    .filter(|&k| masks[s] & (1 << k) != 0)
                    .map(|k| (moved[k] - full) * all[k].1)
                    .sum();
                worst[s] = worst[s].max(offset.length() / kept_sum[s]);
            }
        }
    }
    let mut best = 0;
    for s in 1..count {
        if worst[s] < worst[best] * (1.0 - CLEARLY_SMALLER) {
            best = s;
        }
    }
    masks[best]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest weights come first, so that ties keep them; every subset is listed once.
    #[test]
    fn subsets_start_with_the_largest_weights_and_list_each_once() {
        let (masks, count) = subsets(8, 4);
        assert_eq!((count, masks[0]), (70, 0b1111));
        assert!(masks[..count].windows(2).all(|pair| pair[0] < pair[1]));
        assert!(masks[..count].iter().all(|m| m.count_ones() == 4));
        let (masks, count) = subsets(5, 1);
        assert_eq!(&masks[..count], &[1, 2, 4, 8, 16]);
    }
}
