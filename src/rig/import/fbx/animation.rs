//! Every FBX animation stack (take) → a clip, baked by ufbx to keyed translation, rotation and
//! scale per node and blend channel weights per mesh instance, times counted from the stack's
//! start.

use super::blend_shapes::{bends_between, spread_weight};
use super::geometry::{ChannelTargets, Geometry};
use super::{Nodes, vec3};
use crate::rig::import::accessor::Budget;
use crate::rig::{Channel, ChannelFacts, Clip, ImportFacts, Interpolation, MorphChannel, Property, RigError};
use glam::Vec4;
use std::collections::HashMap;

/// Bytes charged per baked key (time and value).
const KEY_BYTES: u64 = 4 + 16;

/// The blend channel property FBX animates, in percent.
const DEFORM_PERCENT: &str = "DeformPercent";

pub(super) fn read_clips(
    scene: &ufbx::Scene,
    nodes: &Nodes,
    geometry: &Geometry,
    budget: &mut Budget,
    facts: &mut ImportFacts,
    warnings: &mut Vec<String>,
) -> Result<(Vec<Clip>, Vec<MorphChannel>), RigError> {
    let mut clips = Vec::with_capacity(scene.anim_stacks.len());
    let mut morph_channels = Vec::new();
    for stack in &scene.anim_stacks {
        let name = stack.element.name.to_string();
        let opts = ufbx::BakeOpts {
            temp_allocator: super::allocator_within(budget),
            result_allocator: super::allocator_within(budget),
            ..Default::default()
        };
        let baked = match ufbx::bake_anim(scene, &stack.anim, opts) {
            Ok(baked) => baked,
            Err(e) => {
                warnings.push(format!(
                    "FBX animation stack '{name}' left out: {}",
                    super::FbxError::from(&e)
                ));
                continue;
            }
        };
        let start = stack.time_begin;
        let mut channels = Vec::new();
        for baked_node in &baked.nodes {
            let Some(node) = scene.nodes.get(baked_node.typed_id as usize).and_then(|n| nodes.of(n)) else {
                continue;
            };
            let tracks = [
                (Property::Translation, keys_vec3(&baked_node.translation_keys, start)),
                (Property::Rotation, keys_quat(&baked_node.rotation_keys, start)),
                (Property::Scale, keys_vec3(&baked_node.scale_keys, start)),
            ];
            for (property, keys) in tracks {
                match keys {
                    Ok((times, values)) if !times.is_empty() => {
                        budget.charge(times.len() as u64 * KEY_BYTES, &format!("clip '{name}'"))?;
                        channels.push(Channel {
                            node,
                            property,
                            interpolation: Interpolation::Linear,
                            times,
                            values,
                        });
                    }
                    Ok(_) => {}
                    Err(why) => warnings.push(format!(
                        "FBX animation stack '{name}': {property:?} of node '{}' left out: {why}",
                        nodes.nodes[node].name
                    )),
                }
            }
        }
        let weights = morph_weights(&baked, clips.len(), start, geometry, budget, &name)?;
        let duration = channels
            .iter()
            .filter_map(|c| c.times.last().copied())
            .chain(weights.iter().filter_map(|c| c.times.last().copied()))
            .fold(0.0f32, f32::max);
        morph_channels.extend(weights);
        facts.channels.push(
            (0..channels.len())
                .map(|i| ChannelFacts {
                    gltf_index: i,
                    worst_quaternion: None,
                })
                .collect(),
        );
        clips.push(Clip {
            name,
            duration,
            channels,
            source: None,
        });
    }
    Ok((clips, morph_channels))
}

/// The animated blend channel weights of one baked stack as morph weight channels, one per
/// instance of each mesh they deform: the keys of all its channels merged (and the times a
/// channel's weight passes one of its in-between shapes), every target's weight at each (its
/// channel's weight, linear between its own keys, spread over the channel's shapes; its default
/// weight when not animated).
fn morph_weights(
    baked: &ufbx::BakedAnim,
    clip: usize,
    start: f64,
    geometry: &Geometry,
    budget: &mut Budget,
    clip_name: &str,
) -> Result<Vec<MorphChannel>, RigError> {
    let targets_of: HashMap<u32, &ChannelTargets> = geometry
        .channel_targets
        .iter()
        .map(|targets| (targets.channel, targets))
        .collect();
    let mut animated: Vec<AnimatedChannel> = Vec::new();
    for element in &baked.elements {
        let Some(&targets) = targets_of.get(&element.element_id) else {
            continue;
        };
        let Some(prop) = element.props.iter().find(|p| &*p.name == DEFORM_PERCENT) else {
            continue;
        };
        let keys: Vec<(f32, f32)> = prop
            .keys
            .iter()
            .map(|k| (((k.time - start).max(0.0)) as f32, (k.value.x / 100.0) as f32))
            .filter(|(t, w)| t.is_finite() && w.is_finite())
            .collect();
        if !keys.is_empty() {
            animated.push(AnimatedChannel { targets, keys });
        }
    }
    // Grouped by mesh, each group walked once: a file may animate many channels.
    animated.sort_by_key(|a| (a.targets.mesh, a.targets.first));
    let mut instances_of: Vec<Vec<usize>> = vec![Vec::new(); geometry.meshes.len()];
    for instance in &geometry.instances {
        if let Some(list) = instances_of.get_mut(instance.mesh) {
            list.push(instance.node);
        }
    }
    let mut channels = Vec::new();
    for group in animated.chunk_by(|a, b| a.targets.mesh == b.targets.mesh) {
        let mesh = group[0].targets.mesh;
        let defaults = geometry.morphs.default_weights.get(mesh).map_or(&[][..], Vec::as_slice);
        let targets = defaults.len();
        let instances = instances_of.get(mesh).map_or(&[][..], Vec::as_slice);
        let mut times: Vec<f32> = group.iter().flat_map(|a| a.keys.iter().map(|k| k.0)).collect();
        // Keys also where a channel's weight passes an in-between shape, where its targets'
        // weights bend.
        for a in group {
            for pair in a.keys.windows(2) {
                bends_between(&a.targets.full_weights, pair[0], pair[1], &mut times);
            }
        }
        times.sort_by(f32::total_cmp);
        times.dedup();
        budget.charge(
            (times.len() as u64)
                .saturating_mul(targets as u64 + 1)
                .saturating_mul(4)
                .saturating_mul(instances.len() as u64 + 1),
            &format!("blend shape weights of clip '{clip_name}'"),
        )?;
        let mut values = Vec::with_capacity(times.len() * targets);
        for &time in &times {
            let row = values.len();
            values.extend_from_slice(defaults);
            for a in group {
                let (first, count) = (a.targets.first, a.targets.full_weights.len());
                if let Some(weights) = values.get_mut(row + first..row + first + count) {
                    spread_weight(&a.targets.full_weights, linear_at(&a.keys, time), weights);
                }
            }
        }
        for &node in instances {
            channels.push(MorphChannel {
                clip,
                node,
                interpolation: Interpolation::Linear,
                times: times.clone(),
                values: values.clone(),
                targets,
            });
        }
    }
    Ok(channels)
}

/// One animated blend channel: its targets, and its keys as (time from the stack's start,
/// weight 0..1).
struct AnimatedChannel<'a> {
    targets: &'a ChannelTargets,
    keys: Vec<(f32, f32)>,
}

/// The value of linear keys (increasing times) at `time`, held before the first and after the
/// last.
fn linear_at(keys: &[(f32, f32)], time: f32) -> f32 {
    let after = keys.partition_point(|k| k.0 <= time);
    match (after.checked_sub(1).map(|i| keys[i]), keys.get(after)) {
        (Some((t0, v0)), Some(&(t1, v1))) if t1 > t0 => v0 + (v1 - v0) * (time - t0) / (t1 - t0),
        (Some((_, v)), _) | (None, Some(&(_, v))) => v,
        (None, None) => 0.0,
    }
}

/// Why a baked track is left out of its clip.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum KeyError {
    #[error("a key at {0} s is not finite")]
    NotFinite(f32),
    #[error("key times do not increase at {0} s")]
    NotIncreasing(f32),
}

type Keys = Result<(Vec<f32>, Vec<Vec4>), KeyError>;

fn keys_vec3(keys: &[ufbx::BakedVec3], start: f64) -> Keys {
    keys_of(keys.iter().map(|k| (k.time, vec3(k.value).extend(0.0))), start)
}

fn keys_quat(keys: &[ufbx::BakedQuat], start: f64) -> Keys {
    let mut previous = Vec4::new(0.0, 0.0, 0.0, 1.0);
    keys_of(
        keys.iter().map(|k| {
            let q = Vec4::new(k.value.x as f32, k.value.y as f32, k.value.z as f32, k.value.w as f32).normalize();
            // Each key on the same hemisphere as the one before, so interpolation takes the short way.
            let q = if q.dot(previous) < 0.0 { -q } else { q };
            previous = q;
            (k.time, q)
        }),
        start,
    )
}

/// Times from `start`, checked to be finite and increasing, with their values checked finite.
fn keys_of(keys: impl Iterator<Item = (f64, Vec4)>, start: f64) -> Keys {
    let mut times: Vec<f32> = Vec::new();
    let mut values = Vec::new();
    for (time, value) in keys {
        let time = (time - start).max(0.0) as f32;
        if !time.is_finite() || !value.is_finite() {
            return Err(KeyError::NotFinite(time));
        }
        if times.last().is_some_and(|&last| time <= last) {
            // Keys before the stack's start all land on 0: only the last of them is kept.
            if time == 0.0 {
                values.pop();
                times.pop();
            } else {
                return Err(KeyError::NotIncreasing(time));
            }
        }
        times.push(time);
        values.push(value);
    }
    Ok((times, values))
}
