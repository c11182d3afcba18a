//! Foot locking planned from a clip: the contacts `audit --motion` finds become pins
//! ([`crate::anim::foot_lock`]) that hold each foot where it lands, and a lock can be baked into
//! the clip's keys so that a saved clip keeps it.

use super::checks::{clip_root, find_contacts, ground, stays_in_place};
use super::{MotionOptions, sample_time};
pub use crate::anim::foot_lock::FootLockError;
use crate::anim::foot_lock::{FootLock, LockedLeg, Pin, heading_of};
use crate::anim::ik_layer::rotation_of;
use crate::anim::{ClipSampler, PoseBuffers, PoseInputs, evaluate_pose, rig_height};
use crate::rig::{Channel, Interpolation, Property, Rig, Trs};
use glam::{Quat, Vec3, Vec4};

/// How feet are found and held.
#[derive(Debug, Clone, PartialEq)]
pub struct FootLockOptions {
    /// Which joints are feet ([`MotionOptions::feet`]) and what counts as a contact.
    pub motion: MotionOptions,
    /// Seconds the hold eases in before a contact and out after it.
    pub blend_seconds: f32,
    /// Fraction of a leg's length the hips are lowered to keep a pin within.
    pub max_reach: f32,
}

impl Default for FootLockOptions {
    fn default() -> Self {
        FootLockOptions {
            motion: MotionOptions::default(),
            blend_seconds: 0.1,
            max_reach: 0.995,
        }
    }
}

/// The legs to hold: the feet `options` names, else those [`super::feet_by_name`] finds, each
/// with its parent (shin) and grandparent (thigh).
fn legs(rig: &Rig, options: &MotionOptions) -> Result<Vec<LockedLeg>, FootLockError> {
    let feet = if options.feet.is_empty() {
        super::feet_by_name(rig)
    } else {
        (options.feet.iter())
            .map(|name| {
                rig.find_node(name)
                    .ok_or_else(|| FootLockError::UnknownFoot(name.clone()))
            })
            .collect::<Result<_, _>>()?
    };
    if feet.is_empty() {
        return Err(FootLockError::NoFeet);
    }
    feet.into_iter()
        .map(|foot| {
            let shin = rig.nodes[foot].parent;
            let thigh = shin.and_then(|s| rig.nodes[s].parent);
            match (shin, thigh) {
                (Some(shin), Some(thigh)) => Ok(LockedLeg {
                    thigh,
                    shin,
                    foot,
                    pins: Vec::new(),
                }),
                _ => Err(FootLockError::NotALeg(rig.nodes[foot].name.clone())),
            }
        })
        .collect()
}

/// The nearest node above every one of `nodes` (for one node, its parent).
fn common_ancestor(rig: &Rig, nodes: &[usize]) -> Option<usize> {
    let chain = |n: usize| std::iter::successors(rig.nodes[n].parent, |&p| rig.nodes[p].parent);
    let first = *nodes.first()?;
    chain(first).find(|&candidate| nodes[1..].iter().all(|&n| chain(n).any(|a| a == candidate)))
}

/// Finds the contacts of clip `clip`'s feet and makes a lock holding them.
pub fn plan_foot_lock(rig: &Rig, clip: usize, options: &FootLockOptions) -> Result<FootLock, FootLockError> {
    let duration = rig.clips.get(clip).ok_or(FootLockError::NoClip(clip))?.duration;
    let mut legs = legs(rig, &options.motion)?;
    let height = rig_height(rig);
    let frames = ((duration * options.motion.frames_per_second).ceil() as usize + 1).max(2);
    let dt = duration / (frames - 1) as f32;
    let root = clip_root(rig, clip);
    let mut sampler = ClipSampler::new(rig);
    let mut root_path = Vec::with_capacity(frames);
    let mut foot_paths = vec![Vec::with_capacity(frames); legs.len()];
    let mut foot_rotations = vec![Vec::with_capacity(frames); legs.len()];
    for k in 0..frames {
        let worlds = sampler.worlds_at(Some(clip), sample_time(duration, k, frames));
        root_path.push(root.map_or(Vec3::ZERO, |r| worlds[r].w_axis.truncate()));
        for (leg, (path, rotations)) in legs.iter().zip(foot_paths.iter_mut().zip(&mut foot_rotations)) {
            path.push(worlds[leg.foot].w_axis.truncate());
            rotations.push(rotation_of(&worlds[leg.foot]).unwrap_or(Quat::IDENTITY));
        }
    }
    let in_place = stays_in_place(&root_path, height, &options.motion);
    for (leg, (path, rotations)) in legs.iter_mut().zip(foot_paths.iter().zip(&foot_rotations)) {
        leg.pins = find_contacts(path, dt, height, in_place, &options.motion)
            .iter()
            .map(|contact| {
                let first = (contact.start / dt).round() as usize;
                let last = ((contact.end / dt).round() as usize).clamp(first, frames - 1);
                pin_for(path, rotations, first, last, dt, in_place)
            })
            .collect();
    }
    let thighs: Vec<usize> = legs.iter().map(|leg| leg.thigh).collect();
    Ok(FootLock {
        clip,
        hips: common_ancestor(rig, &thighs),
        legs,
        blend_seconds: options.blend_seconds,
        max_reach: options.max_reach,
    })
}

/// The pin of a contact from frame `first` to `last` of a foot's `path`: held at the contact's
/// mean place (less disturbance to the leg than its first place), moving with the contact's
/// steady ground motion in a clip played in place, turned to its heading at the contact's
/// middle.
fn pin_for(path: &[Vec3], rotations: &[Quat], first: usize, last: usize, dt: f32, in_place: bool) -> Pin {
    let span = (last - first) as f32 * dt;
    let velocity = if in_place && span > 0.0 {
        ground(path[last] - path[first]) / span
    } else {
        Vec3::ZERO
    };
    let count = (last - first + 1) as f32;
    let place = (first..=last)
        .map(|k| path[k] - velocity * ((k - first) as f32 * dt))
        .sum::<Vec3>()
        / count;
    Pin {
        start: first as f32 * dt,
        end: last as f32 * dt,
        place,
        velocity,
        heading: heading_of(rotations[(first + last) / 2]).unwrap_or(Quat::IDENTITY),
    }
}

/// What baking a lock did to a clip.
#[derive(Debug, Clone, PartialEq)]
pub struct BakedLock {
    /// Contacts held, over all feet.
    pub pins: usize,
    /// Channels written anew (each replacing the clip's own for that node and property).
    pub channels: usize,
    /// Keys a second of the baked channels.
    pub rate: f32,
}

/// Bakes the foot lock of clip `clip` into its keys: the rotations of each held leg's thigh,
/// shin and foot, and the hips' translation when the lock lowers them, sampled at the motion
/// options' rate (both ends included) as linear channels in place of the clip's own.
pub fn bake_foot_lock(rig: &mut Rig, clip: usize, options: &FootLockOptions) -> Result<BakedLock, FootLockError> {
    let lock = plan_foot_lock(rig, clip, options)?;
    let duration = rig.clips[clip].duration;
    let rate = options.motion.frames_per_second;
    let frames = ((duration * rate).ceil() as usize + 1).max(2);
    let times: Vec<f32> = (0..frames).map(|k| sample_time(duration, k, frames)).collect();
    let mut rotated: Vec<usize> = Vec::new();
    for leg in lock.legs.iter().filter(|leg| !leg.pins.is_empty()) {
        rotated.extend([leg.thigh, leg.shin, leg.foot]);
    }
    rotated.sort_unstable();
    rotated.dedup();
    let (free, held) = (
        sample_locals(rig, clip, &times, None),
        sample_locals(rig, clip, &times, Some(&lock)),
    );
    let hips_moved = lock.hips.filter(|&hips| {
        (free.iter().zip(&held)).any(|(a, b)| a[hips].translation.distance(b[hips].translation) > 1e-7)
    });
    let mut channels: Vec<Channel> = rotated
        .iter()
        .map(|&node| rotation_channel(node, &times, &held))
        .collect();
    if let Some(hips) = hips_moved {
        channels.push(Channel {
            node: hips,
            property: Property::Translation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: held.iter().map(|locals| locals[hips].translation.extend(0.0)).collect(),
        });
    }
    let written = channels.len();
    let edited = &mut rig.clips[clip];
    edited.channels.retain(|c| {
        !channels
            .iter()
            .any(|new| new.node == c.node && new.property == c.property)
    });
    edited.channels.extend(channels);
    Ok(BakedLock {
        pins: lock.legs.iter().map(|leg| leg.pins.len()).sum(),
        channels: written,
        rate,
    })
}

/// Every node's local transform with `clip` at each of `times`, held by `lock` when given.
fn sample_locals(rig: &Rig, clip: usize, times: &[f32], lock: Option<&FootLock>) -> Vec<Vec<Trs>> {
    let mut pose = PoseBuffers::new(rig);
    times
        .iter()
        .map(|&time| {
            let inputs = PoseInputs {
                foot_lock: lock,
                ..PoseInputs::clip_at(Some(clip), time)
            };
            evaluate_pose(rig, &inputs, &mut pose);
            pose.locals.clone()
        })
        .collect()
}

/// A linear rotation channel of `node` through `poses`, each key on the same side of the
/// sphere as the one before, so that interpolation takes the short way.
fn rotation_channel(node: usize, times: &[f32], poses: &[Vec<Trs>]) -> Channel {
    let mut previous = Quat::IDENTITY;
    let values = poses
        .iter()
        .map(|locals| {
            let q = locals[node].rotation;
            let q = if q.dot(previous) < 0.0 { -q } else { q };
            previous = q;
            Vec4::from(q)
        })
        .collect();
    Channel {
        node,
        property: Property::Rotation,
        interpolation: Interpolation::Linear,
        times: times.to_vec(),
        values,
    }
}
