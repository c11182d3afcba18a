//! The motion checks of `audit --motion`, per clip: the loop seam, foot contacts and how far
//! the feet slide during them, and the root's motion. Lengths are fractions of the rig's height
//! (the bones' vertical extent at rest), so that thresholds suit rigs of any size and unit.

use super::{ClipSampler, sample_time};
/// The rig's height as [`MotionReport::rig_height`] defines it.
pub use crate::anim::rig_height;
use crate::anim::root_motion::motion_root;
use crate::rig::Rig;
use glam::{Quat, Vec3};
use serde::Serialize;

/// How the checks sample and what counts as a contact.
#[derive(Debug, Clone, PartialEq)]
pub struct MotionOptions {
    /// Poses per second of clip (at least the clip's two ends are taken).
    pub frames_per_second: f32,
    /// Feet by node name; found by name (foot, then ankle, then toe) when empty.
    pub feet: Vec<String>,
    /// A foot is near its lowest height when within this fraction of the rig's height above it.
    pub contact_height: f32,
    /// A foot is still vertically when it moves up or down slower than this many rig heights
    /// per second.
    pub contact_speed: f32,
    /// A clip whose root ends within this fraction of the rig's height of where it started is
    /// in place.
    pub in_place_distance: f32,
    /// Clips (by name) played once: their seam is not checked.
    pub one_shot: Vec<String>,
    /// What weighs a seam jump in position against one in rotation when the worst joint is chosen.
    pub thresholds: MotionThresholds,
}

impl Default for MotionOptions {
    fn default() -> Self {
        MotionOptions {
            frames_per_second: 30.0,
            feet: Vec::new(),
            contact_height: 0.03,
            contact_speed: 0.25,
            in_place_distance: 0.05,
            one_shot: Vec::new(),
            thresholds: MotionThresholds::default(),
        }
    }
}

/// Limits past which a clip fails the checks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MotionThresholds {
    /// Largest seam jump of a joint's position, as a fraction of the rig's height.
    pub max_seam_position: f32,
    /// Largest seam jump of a joint's world rotation, in degrees.
    pub max_seam_rotation_deg: f32,
    /// Largest slide of a foot during one contact, as a fraction of the rig's height.
    pub max_slide: f32,
}

impl Default for MotionThresholds {
    fn default() -> Self {
        MotionThresholds {
            max_seam_position: 0.01,
            max_seam_rotation_deg: 5.0,
            max_slide: 0.02,
        }
    }
}

/// One stretch of time a foot is planted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contact {
    pub start: f32,
    pub end: f32,
    /// The farthest the foot gets, on the ground plane, from where the contact began (from its
    /// steady treadmill motion in an in-place clip, see [`find_contacts`]), as a fraction of
    /// the rig's height.
    pub slide: f32,
    /// When it is that far.
    pub slide_time: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FootMotion {
    pub joint: String,
    pub contacts: Vec<Contact>,
    /// The largest slide of any contact (0 without contacts).
    pub max_slide: f32,
    /// When that slide is reached.
    pub worst_time: Option<f32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RootSummary {
    /// The node carrying the motion: the shallowest with a translation channel, else the first bone.
    pub joint: Option<String>,
    /// Ground-plane distance from the root's place at the start to its place at the end, as a
    /// fraction of the rig's height.
    pub distance: f32,
    /// That distance per second of clip.
    pub speed: f32,
    /// Unit direction of that move on the ground plane (zero in place).
    pub direction: [f32; 3],
    pub in_place: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClipMotion {
    pub clip: String,
    pub duration: f32,
    pub loops: bool,
    /// Over the bones, the largest distance between a joint's place at the clip's end and at its
    /// start (the root's ground-plane travel taken out), as a fraction of the rig's height.
    pub seam_position_error: f32,
    /// Over the bones, the largest angle between a joint's world rotation at the end and at the
    /// start, in degrees.
    pub seam_rotation_error_deg: f32,
    /// The joint with the largest seam jump (position relative to its threshold, or rotation).
    pub seam_worst_joint: Option<String>,
    /// The joint whose own (local) rotation jumps most at the seam: where a break comes from,
    /// where [`ClipMotion::seam_worst_joint`] is often a descendant that the break carries
    /// further (a hand under a broken spine).
    pub seam_source_joint: Option<String>,
    /// That joint's local rotation jump, in degrees.
    pub seam_source_rotation_deg: f32,
    pub feet: Vec<FootMotion>,
    pub root: RootSummary,
}

impl ClipMotion {
    /// What of this clip exceeds `thresholds`, one line each.
    pub fn violations(&self, thresholds: &MotionThresholds) -> Vec<String> {
        let mut out = Vec::new();
        if self.loops && self.seam_position_error > thresholds.max_seam_position {
            out.push(format!(
                "clip '{}': the loop seam moves {} by {:.4} of the rig's height (limit {})",
                self.clip,
                self.seam_worst_joint.as_deref().unwrap_or("a joint"),
                self.seam_position_error,
                thresholds.max_seam_position
            ));
        }
        if self.loops && self.seam_rotation_error_deg > thresholds.max_seam_rotation_deg {
            out.push(format!(
                "clip '{}': the loop seam turns a joint by {:.2}° (limit {}°); it comes from {} (its own turn jumps {:.2}°)",
                self.clip,
                self.seam_rotation_error_deg,
                thresholds.max_seam_rotation_deg,
                self.seam_source_joint.as_deref().unwrap_or("a joint"),
                self.seam_source_rotation_deg
            ));
        }
        for foot in self.feet.iter().filter(|f| f.max_slide > thresholds.max_slide) {
            out.push(format!(
                "clip '{}': {} slides {:.4} of the rig's height during a contact at {:.3} s (limit {})",
                self.clip,
                foot.joint,
                foot.max_slide,
                foot.worst_time.unwrap_or(0.0),
                thresholds.max_slide
            ));
        }
        out
    }
}

/// The motion checks of every clip of a rig.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MotionReport {
    /// The length every figure is a fraction of: the bones' vertical extent at rest (their
    /// bounds' diagonal for a flat rig), in the file's units.
    pub rig_height: f32,
    /// The feet checked, by node name.
    pub feet: Vec<String>,
    pub clips: Vec<ClipMotion>,
    /// T- or A-pose, and the rest pose against the bind pose.
    pub rest_pose: super::rest_pose::RestPoseReport,
}

/// The nodes that look like feet by name: those with "foot" in it, else "ankle", else "toe"
/// (case-insensitive), among the skeleton's bones.
pub fn feet_by_name(rig: &Rig) -> Vec<usize> {
    let bones = &rig.hierarchy().bones;
    let names: Vec<String> = rig.nodes.iter().map(|n| n.name.to_lowercase()).collect();
    for word in ["foot", "ankle", "toe"] {
        let found: Vec<usize> = (0..rig.nodes.len())
            .filter(|&n| bones[n] && names[n].contains(word) && !names[n].contains("end"))
            .collect();
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// Runs the checks on every clip. `feet` are node indices (see [`feet_by_name`]).
pub fn check_motion(rig: &Rig, feet: &[usize], options: &MotionOptions) -> MotionReport {
    check_motion_on_contacts_of(rig, rig, feet, options)
}

/// [`check_motion`] of `rig`, its feet's contacts found in `contacts_rig` playing the same
/// clips: how an edit that moves the feet (a foot lock) changed their slide during the
/// contacts the original has. The two rigs have the same nodes and clips.
pub fn check_motion_on_contacts_of(
    rig: &Rig,
    contacts_rig: &Rig,
    feet: &[usize],
    options: &MotionOptions,
) -> MotionReport {
    let height = rig_height(rig);
    let clips = (0..rig.clips.len())
        .map(|c| check_clip(rig, contacts_rig, c, feet, height, options))
        .collect();
    let rest_worlds = ClipSampler::new(rig).worlds_at(None, 0.0).to_vec();
    MotionReport {
        rig_height: height,
        feet: feet.iter().map(|&f| rig.nodes[f].name.clone()).collect(),
        clips,
        rest_pose: super::rest_pose::check_rest_pose(rig, &rest_worlds, height),
    }
}

/// The checks of one clip, with the feet [`feet_by_name`] finds and the rig's own height: what
/// a carried clip's foot slide is read from.
pub fn check_one_clip(rig: &Rig, clip: usize, options: &MotionOptions) -> ClipMotion {
    check_clip(rig, rig, clip, &feet_by_name(rig), rig_height(rig), options)
}

/// [`check_one_clip`] of `rig` during the contacts `contacts_rig` has in that clip (see
/// [`check_motion_on_contacts_of`]).
pub fn check_one_clip_on_contacts_of(
    rig: &Rig,
    contacts_rig: &Rig,
    clip: usize,
    options: &MotionOptions,
) -> ClipMotion {
    check_clip(rig, contacts_rig, clip, &feet_by_name(rig), rig_height(rig), options)
}

/// The node carrying clip `c`'s motion: its [`motion_root`], else the skeleton's first bone.
pub(crate) fn clip_root(rig: &Rig, c: usize) -> Option<usize> {
    motion_root(rig, c).or_else(|| (0..rig.nodes.len()).find(|&n| rig.hierarchy().bones[n]))
}

/// Whether a clip whose root follows `root_path` (evenly spaced samples) ends where it began
/// on the ground, within [`MotionOptions::in_place_distance`] of the rig's `height`.
pub(crate) fn stays_in_place(root_path: &[Vec3], height: f32, options: &MotionOptions) -> bool {
    let (Some(first), Some(last)) = (root_path.first(), root_path.last()) else {
        return true;
    };
    ground(*last - *first).length() / height <= options.in_place_distance
}

/// Ground-plane part of a point.
pub(crate) fn ground(p: Vec3) -> Vec3 {
    Vec3::new(p.x, 0.0, p.z)
}

/// The angle between two rotations, in degrees (a quaternion and its negation are one rotation).
pub fn rotation_angle_deg(a: Quat, b: Quat) -> f32 {
    let dot = a.normalize().dot(b.normalize()).abs().min(1.0);
    (2.0 * dot.acos()).to_degrees()
}

fn check_clip(
    rig: &Rig,
    contacts_rig: &Rig,
    c: usize,
    feet: &[usize],
    height: f32,
    options: &MotionOptions,
) -> ClipMotion {
    let clip = &rig.clips[c];
    let bones: Vec<usize> = (0..rig.nodes.len()).filter(|&n| rig.hierarchy().bones[n]).collect();
    let root = clip_root(rig, c);
    let frames = ((clip.duration * options.frames_per_second).ceil() as usize + 1).max(2);
    let ClipPaths {
        root: root_path,
        feet: foot_paths,
        first,
        last,
    } = ClipPaths::sample(rig, c, (root, feet, &bones), frames);
    let travel = ground(root_path[frames - 1] - root_path[0]);
    let in_place = stays_in_place(&root_path, height, options);
    let seam = worst_seam(&first, &last, travel, height, options);
    let (seam_source, seam_source_rotation) = local_seam_jump(rig, c, &bones);
    let dt = clip.duration / (frames - 1) as f32;
    let contact_paths = (!std::ptr::eq(rig, contacts_rig)).then(|| {
        let mut sampler = ClipSampler::new(contacts_rig);
        let mut paths: Vec<Vec<Vec3>> = vec![Vec::with_capacity(frames); feet.len()];
        for k in 0..frames {
            let worlds = sampler.worlds_at(Some(c), sample_time(clip.duration, k, frames));
            for (path, &foot) in paths.iter_mut().zip(feet) {
                path.push(worlds[foot].w_axis.truncate());
            }
        }
        paths
    });
    let feet_motion = feet
        .iter()
        .enumerate()
        .zip(&foot_paths)
        .map(|((i, &foot), path)| {
            let contacts = match &contact_paths {
                None => find_contacts(path, dt, height, in_place, options),
                Some(paths) => find_contacts(&paths[i], dt, height, in_place, options)
                    .into_iter()
                    .map(|contact| {
                        let (first, last) = (
                            (contact.start / dt).round() as usize,
                            (contact.end / dt).round() as usize,
                        );
                        let (slide, at) = slide_during(path, first, last.min(path.len() - 1), in_place);
                        Contact {
                            slide: slide / height,
                            slide_time: at as f32 * dt,
                            ..contact
                        }
                    })
                    .collect(),
            };
            let worst = contacts.iter().max_by(|a, b| a.slide.total_cmp(&b.slide));
            FootMotion {
                joint: rig.nodes[foot].name.clone(),
                max_slide: worst.map_or(0.0, |w| w.slide),
                worst_time: worst.map(|w| w.slide_time),
                contacts,
            }
        })
        .collect();
    let distance = travel.length() / height;
    ClipMotion {
        clip: clip.name.clone(),
        duration: clip.duration,
        loops: !options.one_shot.contains(&clip.name),
        seam_position_error: seam.position,
        seam_rotation_error_deg: seam.rotation_deg,
        seam_worst_joint: seam.worst.map(|i| rig.nodes[bones[i]].name.clone()),
        seam_source_joint: seam_source.map(|n| rig.nodes[n].name.clone()),
        seam_source_rotation_deg: seam_source_rotation,
        feet: feet_motion,
        root: RootSummary {
            joint: root.map(|r| rig.nodes[r].name.clone()),
            distance,
            speed: if clip.duration > 0.0 {
                distance / clip.duration
            } else {
                0.0
            },
            direction: if in_place {
                [0.0; 3]
            } else {
                travel.normalize_or_zero().to_array()
            },
            in_place,
        },
    }
}

/// A clip sampled at `frames` even moments: the root's and each foot's world positions, and
/// every bone's world place at the first and last moments.
struct ClipPaths {
    root: Vec<Vec3>,
    feet: Vec<Vec<Vec3>>,
    first: Vec<(Vec3, Quat)>,
    last: Vec<(Vec3, Quat)>,
}

impl ClipPaths {
    fn sample(rig: &Rig, c: usize, (root, feet, bones): (Option<usize>, &[usize], &[usize]), frames: usize) -> Self {
        let duration = rig.clips[c].duration;
        let mut sampler = ClipSampler::new(rig);
        let mut paths = ClipPaths {
            root: Vec::with_capacity(frames),
            feet: vec![Vec::with_capacity(frames); feet.len()],
            first: Vec::new(),
            last: Vec::new(),
        };
        for k in 0..frames {
            let worlds = sampler.worlds_at(Some(c), sample_time(duration, k, frames));
            paths
                .root
                .push(root.map_or(Vec3::ZERO, |r| worlds[r].w_axis.truncate()));
            for (path, &foot) in paths.feet.iter_mut().zip(feet) {
                path.push(worlds[foot].w_axis.truncate());
            }
            if k == 0 || k + 1 == frames {
                let places = bones.iter().map(|&b| {
                    let (_, rotation, translation) = worlds[b].to_scale_rotation_translation();
                    (translation, rotation)
                });
                if k == 0 {
                    paths.first.extend(places)
                } else {
                    paths.last.extend(places)
                }
            }
        }
        paths
    }
}

/// How far a looping clip jumps where it wraps: the largest position (a fraction of the rig's
/// height) and rotation differences of any bone between its first and last moments, the
/// root's travel taken out, and the bone (its index in the places) worst against the limits.
struct Seam {
    position: f32,
    rotation_deg: f32,
    worst: Option<usize>,
}

/// The [`Seam`] between the bones' places at the `first` and `last` moments of a clip whose
/// root travels `travel`.
fn worst_seam(
    first: &[(Vec3, Quat)],
    last: &[(Vec3, Quat)],
    travel: Vec3,
    height: f32,
    options: &MotionOptions,
) -> Seam {
    let limits = &options.thresholds;
    let mut seam = Seam {
        position: 0.0,
        rotation_deg: 0.0,
        worst: None,
    };
    let mut worst_badness = 0.0f32;
    for (i, ((p0, q0), (p1, q1))) in first.iter().zip(last).enumerate() {
        let position = (*p1 - travel - *p0).length() / height;
        let rotation = rotation_angle_deg(*q0, *q1);
        seam.position = seam.position.max(position);
        seam.rotation_deg = seam.rotation_deg.max(rotation);
        let badness = (position / limits.max_seam_position).max(rotation / limits.max_seam_rotation_deg);
        if seam.worst.is_none() || badness > worst_badness {
            (seam.worst, worst_badness) = (Some(i), badness);
        }
    }
    seam
}

/// Among `bones`, the one whose local rotation differs most between the clip's first and last
/// moments, and by how many degrees.
fn local_seam_jump(rig: &Rig, clip: usize, bones: &[usize]) -> (Option<usize>, f32) {
    let sample = |time: f32| {
        let mut locals: Vec<crate::rig::Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        let mut hints = vec![0; rig.clips[clip].channels.len()];
        crate::anim::sample_clip(&rig.nodes, Some(&rig.clips[clip]), time, &mut hints, &mut locals);
        locals
    };
    let (first, last) = (sample(0.0), sample(rig.clips[clip].duration));
    bones
        .iter()
        .map(|&b| (Some(b), rotation_angle_deg(first[b].rotation, last[b].rotation)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((None, 0.0))
}

/// The contacts of a foot whose positions at frames `dt` seconds apart are `path`: runs of two
/// or more frames where it is near its lowest height and nearly still vertically. In an
/// `in_place` clip a planted foot moves back steadily, as on a treadmill, so its slide is how far
/// it strays from that steady motion (the contact's mean ground velocity); otherwise it is how
/// far it gets from where the contact began.
pub fn find_contacts(path: &[Vec3], dt: f32, height: f32, in_place: bool, options: &MotionOptions) -> Vec<Contact> {
    let Some(lowest) = path.iter().map(|p| p.y).reduce(f32::min) else {
        return Vec::new();
    };
    let near = lowest + options.contact_height * height;
    let still = options.contact_speed * height;
    let planted: Vec<bool> = (0..path.len())
        .map(|k| {
            let (a, b) = (k.saturating_sub(1), (k + 1).min(path.len() - 1));
            let speed = if b > a {
                (path[b].y - path[a].y).abs() / ((b - a) as f32 * dt)
            } else {
                0.0
            };
            path[k].y <= near && speed <= still
        })
        .collect();
    let mut contacts = Vec::new();
    let mut k = 0;
    while k < path.len() {
        if !planted[k] {
            k += 1;
            continue;
        }
        let start = k;
        while k < path.len() && planted[k] {
            k += 1;
        }
        if k - start < 2 {
            continue;
        }
        let end = k - 1;
        let (slide, at) = slide_during(path, start, end, in_place);
        contacts.push(Contact {
            start: start as f32 * dt,
            end: end as f32 * dt,
            slide: slide / height,
            slide_time: at as f32 * dt,
        });
    }
    contacts
}

/// How far the foot on `path` strays on the ground during frames `first..=last` (a contact),
/// and at which frame: from where it was at `first`, or, `in_place`, from the steady motion
/// between its places at `first` and `last` (a treadmill).
fn slide_during(path: &[Vec3], first: usize, last: usize, in_place: bool) -> (f32, usize) {
    let step = if in_place && last > first {
        ground(path[last] - path[first]) / (last - first) as f32
    } else {
        Vec3::ZERO
    };
    (first..=last)
        .map(|j| (ground(path[j] - path[first] - step * (j - first) as f32).length(), j))
        .fold((0.0f32, first), |best, x| if x.0 > best.0 { x } else { best })
}
