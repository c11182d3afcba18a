//! Every FBX animation stack (take) → a clip, baked by ufbx to keyed translation, rotation and
//! scale per node, times counted from the stack's start.

use super::{Nodes, vec3};
use crate::rig::import::accessor::Budget;
use crate::rig::{Channel, ChannelFacts, Clip, ImportFacts, Interpolation, Property, RigError};
use glam::Vec4;

/// Bytes charged per baked key (time and value).
const KEY_BYTES: u64 = 4 + 16;

pub(super) fn read_clips(
    scene: &ufbx::Scene,
    nodes: &Nodes,
    budget: &mut Budget,
    facts: &mut ImportFacts,
    warnings: &mut Vec<String>,
) -> Result<Vec<Clip>, RigError> {
    let mut clips = Vec::with_capacity(scene.anim_stacks.len());
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
        let duration = channels
            .iter()
            .filter_map(|c| c.times.last().copied())
            .fold(0.0f32, f32::max);
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
    Ok(clips)
}

type Keys = Result<(Vec<f32>, Vec<Vec4>), String>;

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
            return Err(format!("a key at {time} s is not finite"));
        }
        if times.last().is_some_and(|&last| time <= last) {
            // Keys before the stack's start all land on 0: only the last of them is kept.
            if time == 0.0 {
                values.pop();
                times.pop();
            } else {
                return Err(format!("key times do not increase at {time} s"));
            }
        }
        times.push(time);
        values.push(value);
    }
    Ok((times, values))
}
