//! Baking one clip onto the target: the times it is sampled at, each paired joint's rotation
//! carried from the source's rest onto the retarget pose, the stretches between paired joints,
//! and the root's travel.

use super::limbs::LimbTracker;
use super::{ClipReport, Pose, RetargetOptions, Skeletons, relative_scale};
use crate::anim::root_motion::motion_root;
use crate::anim::{local_to_world, sample_clip};
use crate::rig::{Channel, Clip, Interpolation, Property, Trs};
use glam::{Mat4, Quat, Vec3, Vec4};

/// The sorted, distinct times a clip is baked at: every key of every channel, and samples at
/// `rate` per second over the clip when a channel steps or follows a spline.
pub(super) fn bake_times(clip: &Clip, rate: f32) -> Vec<f32> {
    let mut times: Vec<f32> = clip
        .channels
        .iter()
        .flat_map(|c| c.times.iter().copied())
        .filter(|t| t.is_finite())
        .collect();
    let resample = clip.channels.iter().any(|c| c.interpolation != Interpolation::Linear);
    if resample && rate > 0.0 && clip.duration.is_finite() && clip.duration > 0.0 {
        // Bounded: a clip of an hour at 30 Hz is about 100 000 samples.
        let steps = (clip.duration * rate).ceil().min(1e6) as usize;
        times.extend((0..=steps).map(|k| (k as f32 / rate).min(clip.duration)));
    }
    times.sort_by(f32::total_cmp);
    // Keys closer than this are one key (exporters write 1/30 s keys as 0.0333333 and 0.0333334).
    const SAME_TIME: f32 = 1e-6;
    times.dedup_by(|b, a| *b - *a <= SAME_TIME);
    if times.is_empty() {
        times.push(0.0);
    }
    times
}

fn property_name(property: Property) -> &'static str {
    match property {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
    }
}

/// One output channel being baked: the target node and property, and its values so far.
struct Baked {
    node: usize,
    property: Property,
    values: Vec<Vec4>,
}

/// A target joint whose source moves off its rest offset: the turn and stretch that take the
/// source's offset (from its parent, as the parent carries it) to where the clip puts it are
/// applied, in world space, to the target's offset, so that a target of other proportions keeps
/// them where the source does not move.
struct Stretch {
    joint: usize,
    parent: usize,
    /// The source's parent and joint.
    source: (usize, usize),
}

/// The [`Stretch`] of target joint `t` (driven by source joint `s`), when its parent is the
/// counterpart of `s`'s parent.
fn stretch_of(skeletons: &Skeletons, t: usize, s: usize) -> Option<Stretch> {
    let parent = skeletons.target.nodes[t].parent?;
    let source_parent = skeletons.source.nodes[s].parent?;
    (skeletons.source_of[parent] == Some(source_parent)).then_some(Stretch {
        joint: t,
        parent,
        source: (source_parent, s),
    })
}

/// The target's locals at one moment of the source's clip, parents first: a joint whose rest
/// and ancestors' rests are the source's copies its locals; another mapped joint takes the
/// source joint's world turn from its rest (turned as the target faces) onto its retarget pose,
/// and the source's translation where the rests agree and its scale relative to rest; the rest
/// keep their rest locals. `rotations` gets the world rotations those locals compose.
fn carry_turns(
    skeletons: &Skeletons,
    source_locals: &[Trs],
    source_pose: &Pose,
    locals: &mut [Trs],
    rotations: &mut [Quat],
) {
    let source = skeletons.source;
    for (t, node) in skeletons.target.nodes.iter().enumerate() {
        let parent_rotation = node.parent.map_or(Quat::IDENTITY, |p| rotations[p]);
        let local = &mut locals[t];
        *local = node.rest;
        if let Some(s) = skeletons.source_of[t] {
            if skeletons.copies_locals[t] {
                *local = source_locals[s];
            } else {
                let turn = skeletons.facing
                    * source_pose.rotations[s]
                    * skeletons.source_rest.rotations[s].conjugate()
                    * skeletons.facing.conjugate();
                let world = turn * skeletons.retarget_rotations[t];
                local.rotation = (parent_rotation.conjugate() * world).normalize();
                if skeletons.copies_translation[t] {
                    local.translation = source_locals[s].translation;
                }
                local.scale = node.rest.scale * relative_scale(source_locals[s].scale, source.nodes[s].rest.scale);
            }
        }
        rotations[t] = parent_rotation * local.rotation;
    }
}

/// Sets the translation of every [`Stretch`] joint: its rest offset, as its parent carries it
/// in `worlds`, given the turn and stretch that took the source's offset from where the source
/// parent carries it to where the clip puts it.
fn stretch_offsets(
    skeletons: &Skeletons,
    stretched: &[Stretch],
    source_pose: &Pose,
    worlds: &[Mat4],
    locals: &mut [Trs],
) {
    let (source, target) = (skeletons.source, skeletons.target);
    for stretch in stretched {
        let source_parent = glam::Mat3::from_mat4(source_pose.worlds[stretch.source.0]);
        let (rigid, actual) = (
            source_parent * source.nodes[stretch.source.1].rest.translation,
            (source_pose.worlds[stretch.source.1].w_axis - source_pose.worlds[stretch.source.0].w_axis).truncate(),
        );
        let (Some(from), Some(to)) = (rigid.try_normalize(), actual.try_normalize()) else {
            continue;
        };
        let turn = skeletons.facing * Quat::from_rotation_arc(from, to) * skeletons.facing.conjugate();
        let parent = glam::Mat3::from_mat4(worlds[stretch.parent]);
        let offset =
            turn * (parent * target.nodes[stretch.joint].rest.translation) * (actual.length() / rigid.length());
        let local = parent.inverse() * offset;
        if local.is_finite() {
            locals[stretch.joint].translation = local;
        }
    }
}

/// Carries clip `index` of `skeletons.source` onto the target.
pub(super) fn retarget_clip(skeletons: &Skeletons, index: usize, options: &RetargetOptions) -> (Clip, ClipReport) {
    let (source, target) = (skeletons.source, skeletons.target);
    let clip = &source.clips[index];
    let mut report = ClipReport {
        name: clip.name.clone(),
        root_scale: 1.0,
        ..ClipReport::default()
    };
    let animated = animated_properties(skeletons, clip, &mut report);

    let root = clip_root(skeletons, index, &mut report);
    let root_copied =
        root.is_some_and(|(_, t)| skeletons.copies_locals[t] && report.root_scale == 1.0 && !options.in_place);

    let (mut baked, stretched) = driven_properties(skeletons, &animated, root);

    let times = bake_times(clip, options.resample_rate);
    let mut hints = vec![0; clip.channels.len()];
    let mut source_locals: Vec<Trs> = source.nodes.iter().map(|n| n.rest).collect();
    let mut source_pose = skeletons.source_rest.clone();
    let mut target_locals: Vec<Trs> = target.nodes.iter().map(|n| n.rest).collect();
    let mut target_rotations = vec![Quat::IDENTITY; target.nodes.len()];
    let mut target_worlds = vec![Mat4::IDENTITY; target.nodes.len()];
    for value in &mut baked {
        value.values.reserve_exact(times.len());
    }
    let mut limbs = LimbTracker::new(skeletons);
    for &time in &times {
        sample_clip(&source.nodes, Some(clip), time, &mut hints, &mut source_locals);
        source_pose.set(source, &source_locals);
        carry_turns(
            skeletons,
            &source_locals,
            &source_pose,
            &mut target_locals,
            &mut target_rotations,
        );
        if !stretched.is_empty() {
            // A parent's world rotation and scale do not depend on any translation.
            local_to_world(&target.nodes, &target_locals, &mut target_worlds);
            stretch_offsets(skeletons, &stretched, &source_pose, &target_worlds, &mut target_locals);
        }
        if let Some((s, t)) = root.filter(|_| !root_copied) {
            // The parent's world matrix does not depend on the root's own translation.
            local_to_world(&target.nodes, &target_locals, &mut target_worlds);
            target_locals[t].translation = root_translation(
                skeletons,
                (s, t),
                &source_pose,
                &target_worlds,
                report.root_scale,
                options.in_place,
            );
        }
        local_to_world(&target.nodes, &target_locals, &mut target_worlds);
        limbs.measure(skeletons, &source_pose, &target_worlds, time);
        for value in &mut baked {
            let local = &target_locals[value.node];
            value.values.push(match value.property {
                Property::Translation => local.translation.extend(0.0),
                Property::Rotation => Vec4::from(local.rotation),
                Property::Scale => local.scale.extend(0.0),
            });
        }
    }

    report.limbs = limbs.finish(target);
    let duration = clip.duration.max(times.last().copied().unwrap_or(0.0));
    let channels = baked
        .into_iter()
        .map(|b| Channel {
            node: b.node,
            property: b.property,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: b.values,
        })
        .collect();
    let clip = Clip {
        name: clip.name.clone(),
        duration,
        channels,
        source: None,
    };
    (clip, report)
}

/// Which properties of each source node the clip animates (translation, rotation, scale);
/// counts in `report` the channels that reach a target joint and names those that do not.
fn animated_properties(skeletons: &Skeletons, clip: &Clip, report: &mut ClipReport) -> Vec<[bool; 3]> {
    let source = skeletons.source;
    let target_of = |s: usize| skeletons.target_of.get(s).copied().flatten();
    let mut animated = vec![[false; 3]; source.nodes.len()];
    let is_track = |node: usize| (source.facts.vrma.as_ref()).is_some_and(|v| v.is_track_node(node));
    // Expression and gaze tracks are carried apart (see `vrma`), not as joints' motion.
    for channel in clip.channels.iter().filter(|c| !is_track(c.node)) {
        let Some(flags) = animated.get_mut(channel.node) else {
            continue;
        };
        flags[channel.property as usize] = true;
        if target_of(channel.node).is_some() {
            report.matched_channels += 1;
        } else {
            report.dropped_channels.push(format!(
                "{} {}",
                source.nodes[channel.node].name,
                property_name(channel.property)
            ));
        }
    }
    animated
}

/// The root: the source's motion root of clip `index` and its counterpart (source, target);
/// sets in `report` the target root's name and the ratio of hip heights its travel is scaled by.
fn clip_root(skeletons: &Skeletons, index: usize, report: &mut ClipReport) -> Option<(usize, usize)> {
    let (source, target) = (skeletons.source, skeletons.target);
    let target_of = |s: usize| skeletons.target_of.get(s).copied().flatten();
    let root = motion_root(source, index).and_then(|s| Some((s, target_of(s)?)));
    if let Some((s, t)) = root {
        let source_height = skeletons.source_rest.worlds[s].w_axis.y - skeletons.source_floor;
        let target_height = skeletons.target_rest.worlds[t].w_axis.y - skeletons.target_floor;
        let ratio = target_height / source_height;
        report.root_scale = if ratio.is_finite() && ratio > 0.0 { ratio } else { 1.0 };
        report.root = Some(target.nodes[t].name.clone());
    }
    root
}

/// Which target properties the clip drives: rotations of joints whose source joint, or a
/// source joint between it and its matched ancestor, turns; the root's translation; and
/// whatever an aligned joint's source animates. Also the joints whose source moves them off
/// their rest offset and whose offset is not copied: their offsets follow the source's
/// directions instead (a Mixamo pose that moves a knee).
fn driven_properties(
    skeletons: &Skeletons,
    animated: &[[bool; 3]],
    root: Option<(usize, usize)>,
) -> (Vec<Baked>, Vec<Stretch>) {
    let source = skeletons.source;
    let target_of = |s: usize| skeletons.target_of.get(s).copied().flatten();
    let mut stretched: Vec<Stretch> = Vec::new();
    let mut baked = Vec::new();
    // A joint the alignment turned holds the source's rest through the clip even where the
    // source does not animate it: its rest local would put it back in the target's own rest
    // pose (an A-posed arm under a shoulder the clip turns).
    let aligned = |t: usize| {
        let parent = skeletons.target.nodes[t]
            .parent
            .map_or(Quat::IDENTITY, |p| skeletons.retarget_rotations[p]);
        let local = parent.conjugate() * skeletons.retarget_rotations[t];
        local.dot(skeletons.target.nodes[t].rest.rotation).abs() < 1.0 - 1e-6
    };
    for (t, source_node) in skeletons.source_of.iter().enumerate() {
        let Some(s) = *source_node else { continue };
        let mut turns = animated[s][Property::Rotation as usize] || aligned(t);
        let mut above = source.nodes[s].parent;
        while let Some(p) = above.filter(|&p| target_of(p).is_none()) {
            turns |= animated[p][Property::Rotation as usize];
            above = source.nodes[p].parent;
        }
        let is_root = root.is_some_and(|(_, root)| root == t);
        let moves = animated[s][Property::Translation as usize];
        if moves && !is_root && !skeletons.copies_translation[t] {
            stretched.extend(stretch_of(skeletons, t, s));
        }
        for (property, driven) in [
            (Property::Translation, is_root || moves),
            (Property::Rotation, turns),
            (Property::Scale, animated[s][Property::Scale as usize]),
        ] {
            if driven {
                baked.push(Baked {
                    node: t,
                    property,
                    values: Vec::new(),
                });
            }
        }
    }
    (baked, stretched)
}

/// The target root's local translation at this sample: its rest place moved by the source
/// root's travel from rest, turned to the target's facing and scaled by `root_scale` (kept
/// vertical only when `in_place`). `target_worlds` has the root's parent posed.
fn root_translation(
    skeletons: &Skeletons,
    (s, t): (usize, usize),
    source_pose: &Pose,
    target_worlds: &[Mat4],
    root_scale: f32,
    in_place: bool,
) -> Vec3 {
    let target = skeletons.target;
    let mut travel = skeletons.facing
        * (source_pose.worlds[s].w_axis - skeletons.source_rest.worlds[s].w_axis).truncate()
        * root_scale;
    if in_place {
        travel.x = 0.0;
        travel.z = 0.0;
    }
    let place = skeletons.target_rest.worlds[t].w_axis.truncate() + travel;
    let parent = target.nodes[t].parent.map_or(Mat4::IDENTITY, |p| target_worlds[p]);
    parent.inverse().transform_point3(place)
}
