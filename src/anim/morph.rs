//! Morph target weights: the mesh defaults, animated by `weights` channels, overridden by hand;
//! and the morph itself, applied to vertices before skinning.

use crate::anim::key_interval;
use crate::anim::layers::{BlendMode, LayerSample};
use crate::anim::sample::hermite;
use crate::rig::{Interpolation, MorphChannel, MorphTarget, Rig};
use glam::Vec3;
pub use kept::{MorphedPrimitive, MorphedTangents};

mod kept;
mod sum;

/// Weight of target `target` of `channel` at `time` (clamped to the first and last keys).
pub fn sample_morph_channel(channel: &MorphChannel, target: usize, time: f32) -> f32 {
    let (times, n) = (&channel.times, channel.targets);
    let cubic = channel.interpolation == Interpolation::CubicSpline;
    let value = |k: usize| {
        if cubic {
            channel.values[(3 * k + 1) * n + target]
        } else {
            channel.values[k * n + target]
        }
    };
    let last = times.len() - 1;
    if time <= times[0] || last == 0 {
        return value(0);
    }
    if time >= times[last] {
        return value(last);
    }
    let mut hint = 0;
    let k = key_interval(times, time, &mut hint);
    let dt = times[k + 1] - times[k];
    let s = if dt > 0.0 { (time - times[k]) / dt } else { 0.0 };
    match channel.interpolation {
        Interpolation::Step => value(k),
        Interpolation::Linear => value(k) + (value(k + 1) - value(k)) * s,
        Interpolation::CubicSpline => {
            let out_tangent = channel.values[(3 * k + 2) * n + target] * dt;
            let in_tangent = channel.values[(3 * (k + 1)) * n + target] * dt;
            hermite(value(k), out_tangent, value(k + 1), in_tangent, s)
        }
    }
}

/// Morph weights of every mesh instance (`weights[i]` for instance `i`): the mesh's defaults,
/// then the channels of `clip` that target the instance's node.
pub fn sample_morph_weights(rig: &Rig, clip: Option<usize>, time: f32, weights: &mut [Vec<f32>]) {
    for (instance, out) in rig.instances.iter().zip(weights.iter_mut()) {
        out.fill(0.0);
        if let Some(defaults) = rig.morphs.default_weights.get(instance.mesh) {
            for (w, d) in out.iter_mut().zip(defaults) {
                *w = *d;
            }
        }
        let Some(clip) = clip else { continue };
        for channel in rig
            .morphs
            .channels
            .iter()
            .filter(|c| c.clip == clip && c.node == instance.node)
        {
            for (target, w) in out.iter_mut().enumerate().take(channel.targets) {
                *w = sample_morph_channel(channel, target, time);
            }
        }
    }
}

/// Blends one layer (or the incoming clip of a crossfade) over the morph weights, as its joints
/// are blended: only the targets its clip animates, on meshes whose node lies under its mask; a
/// mix layer moves them toward its clip's weights by its weight, an additive one adds what its
/// clip changes since its first key, times its weight.
pub fn blend_layer_morph_weights(rig: &Rig, layer: &LayerSample, weights: &mut [Vec<f32>]) {
    let under_mask = |mut node: usize| {
        let Some(root) = layer.mask else { return true };
        loop {
            if node == root {
                return true;
            }
            match rig.nodes[node].parent {
                Some(parent) => node = parent,
                None => return false,
            }
        }
    };
    for (instance, out) in rig.instances.iter().zip(weights.iter_mut()) {
        if !under_mask(instance.node) {
            continue;
        }
        let channels = rig.morphs.channels.iter();
        for channel in channels.filter(|c| c.clip == layer.clip && c.node == instance.node) {
            for (target, w) in out.iter_mut().enumerate().take(channel.targets) {
                let value = sample_morph_channel(channel, target, layer.time);
                *w += match layer.mode {
                    BlendMode::Mix => (value - *w) * layer.weight,
                    BlendMode::Additive => {
                        (value - sample_morph_channel(channel, target, channel.times[0])) * layer.weight
                    }
                };
            }
        }
    }
}

/// `positions + Σ weight·offset` (and the same for normals, renormalized): the morphed bind pose.
/// Each vertex takes its targets' offsets in target order, as a dense sum over every vertex
/// would, so the result has that sum's bits (see [`MorphTarget::sparse`]).
pub fn apply_morph(
    targets: &[MorphTarget],
    weights: &[f32],
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    out_positions.copy_from_slice(positions);
    out_normals.copy_from_slice(normals);
    for (target, &w) in targets.iter().zip(weights) {
        if w != 0.0 {
            add_target(target, w, out_positions, out_normals);
        }
    }
    for n in out_normals.iter_mut() {
        *n = n.normalize_or_zero();
    }
}

/// Adds `w` times `target`'s offsets to `positions` and `normals`. A weight that is not finite
/// turns the zero offsets of a dense sum into NaN (`0·∞`, `0·NaN`), whatever their sign, so then
/// every vertex takes its term, +0 where the target keeps none.
fn add_target(target: &MorphTarget, w: f32, positions: &mut [Vec3], normals: &mut [Vec3]) {
    add_target_range(target, 0, w, positions, normals);
}

/// [`add_target`] over the vertices from `start` on that `positions` and `normals` hold.
fn add_target_range(target: &MorphTarget, start: usize, w: f32, positions: &mut [Vec3], normals: &mut [Vec3]) {
    let range = entries_in(target, start, start + positions.len());
    let entries = (target.vertices[range.clone()].iter())
        .zip(&target.position_offsets[range.clone()])
        .zip(&target.normal_offsets[range]);
    if w.is_finite() {
        for ((&v, &dp), &dn) in entries {
            let v = v as usize - start;
            positions[v] += dp * w;
            normals[v] += dn * w;
        }
        return;
    }
    let mut entries = entries.peekable();
    for (v, (p, n)) in positions.iter_mut().zip(normals.iter_mut()).enumerate() {
        let (dp, dn) = match entries.next_if(|((e, _), _)| **e as usize == start + v) {
            Some(((_, &dp), &dn)) => (dp, dn),
            None => (Vec3::ZERO, Vec3::ZERO),
        };
        *p += dp * w;
        *n += dn * w;
    }
}

/// The entries of `target` whose vertices lie in `start..end` (they are sorted).
fn entries_in(target: &MorphTarget, start: usize, end: usize) -> std::ops::Range<usize> {
    let vertices = &target.vertices;
    if start == 0 && vertices.last().is_none_or(|&v| (v as usize) < end) {
        return 0..vertices.len();
    }
    vertices.partition_point(|&v| (v as usize) < start)..vertices.partition_point(|&v| (v as usize) < end)
}

/// Whether any weight of `weights` is non-zero for a primitive with `targets`.
pub fn is_morphed(targets: &[MorphTarget], weights: &[f32]) -> bool {
    !targets.is_empty() && weights.iter().take(targets.len()).any(|&w| w != 0.0)
}
