//! Morph target weights: the mesh defaults, animated by `weights` channels, overridden by hand;
//! and the morph itself, applied to vertices before skinning.

use crate::anim::key_interval;
use crate::anim::layers::{BlendMode, LayerSample};
use crate::anim::sample::hermite;
use crate::rig::{Interpolation, MorphChannel, MorphTarget, Rig};
use glam::Vec3;

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
        if w == 0.0 {
            continue;
        }
        for (p, d) in out_positions.iter_mut().zip(&target.positions) {
            *p += *d * w;
        }
        for (n, d) in out_normals.iter_mut().zip(&target.normals) {
            *n += *d * w;
        }
    }
    for n in out_normals.iter_mut() {
        *n = n.normalize_or_zero();
    }
}

/// Whether any weight of `weights` is non-zero for a primitive with `targets`.
pub fn is_morphed(targets: &[MorphTarget], weights: &[f32]) -> bool {
    !targets.is_empty() && weights.iter().take(targets.len()).any(|&w| w != 0.0)
}
