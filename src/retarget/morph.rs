//! Morph weight channels carried from one rig to another: a target mesh takes the weight of
//! each of its targets from the source mesh target of the same name; meshes without target
//! names pair by their nodes' names when their target counts agree.

use super::matching::normalized_name;
use crate::rig::{Interpolation, MorphChannel, Rig};

/// The carried channels and, per source clip, (channels carried, channels left out).
pub(super) struct CarriedMorphs {
    pub channels: Vec<MorphChannel>,
    pub counts: Vec<(usize, usize)>,
}

/// Mesh `mesh`'s target names, when the file gives any.
fn target_names(rig: &Rig, mesh: usize) -> Option<&[String]> {
    rig.morphs
        .target_names
        .get(mesh)
        .map(Vec::as_slice)
        .filter(|n| !n.is_empty())
}

/// For a target mesh: per target, the source weight index feeding it.
fn weight_sources(source: &Rig, source_mesh: usize, target: &Rig, target_mesh: usize) -> Vec<Option<usize>> {
    let count = target.morphs.weight_count(target_mesh);
    if let (Some(source_names), Some(target_names)) =
        (target_names(source, source_mesh), target_names(target, target_mesh))
    {
        return (0..count)
            .map(|k| {
                let name = target_names.get(k)?;
                source_names.iter().position(|s| s == name)
            })
            .collect();
    }
    if source.morphs.weight_count(source_mesh) == count {
        (0..count).map(Some).collect()
    } else {
        vec![None; count]
    }
}

/// Whether the source mesh on `source_node` and the target mesh on `target_node` are to be
/// paired: when both have target names, any shared name; else their nodes' names agree.
fn paired(
    source: &Rig,
    source_node: usize,
    source_mesh: usize,
    target: &Rig,
    target_node: usize,
    target_mesh: usize,
) -> bool {
    match (target_names(source, source_mesh), target_names(target, target_mesh)) {
        (Some(s), Some(t)) => t.iter().any(|name| s.contains(name)),
        _ => normalized_name(&source.nodes[source_node].name) == normalized_name(&target.nodes[target_node].name),
    }
}

/// `source`'s morph channels bound to `target`'s mesh instances, their clips numbered from
/// `first_clip` (where the carried clips are appended).
pub(super) fn carry_morph_channels(source: &Rig, target: &Rig, first_clip: usize) -> CarriedMorphs {
    let mut carried = CarriedMorphs {
        channels: Vec::new(),
        counts: vec![(0, 0); source.clips.len()],
    };
    for channel in &source.morphs.channels {
        let Some(source_mesh) = source.instances.iter().find(|i| i.node == channel.node).map(|i| i.mesh) else {
            continue;
        };
        let per_key = if channel.interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        let groups = channel.times.len() * per_key;
        // A channel whose values do not cover its keys is left out rather than read past.
        let whole = channel.targets > 0 && channel.values.len() == groups * channel.targets;
        let mut used = false;
        for instance in &target.instances {
            let already = carried
                .channels
                .iter()
                .any(|c| c.clip == first_clip + channel.clip && c.node == instance.node);
            if !whole || already || !paired(source, channel.node, source_mesh, target, instance.node, instance.mesh) {
                continue;
            }
            let sources = weight_sources(source, source_mesh, target, instance.mesh);
            if sources.iter().all(Option::is_none) {
                continue;
            }
            let defaults = target.morphs.default_weights.get(instance.mesh);
            let mut values = Vec::with_capacity(groups * sources.len());
            for group in 0..groups {
                let is_value = per_key == 1 || group % 3 == 1;
                let row = &channel.values[group * channel.targets..(group + 1) * channel.targets];
                values.extend(sources.iter().enumerate().map(|(k, from)| match from {
                    Some(from) => row.get(*from).copied().unwrap_or(0.0),
                    // Targets the source does not drive hold their default (tangents stay flat).
                    None if is_value => defaults.and_then(|d| d.get(k)).copied().unwrap_or(0.0),
                    None => 0.0,
                }));
            }
            carried.channels.push(MorphChannel {
                clip: first_clip + channel.clip,
                node: instance.node,
                interpolation: channel.interpolation,
                times: channel.times.clone(),
                values,
                targets: sources.len(),
            });
            used = true;
        }
        if let Some(count) = carried.counts.get_mut(channel.clip) {
            if used {
                count.0 += 1;
            } else {
                count.1 += 1;
            }
        }
    }
    carried
}
