//! Everything between the player's clip and the final pose: extra layers, crossfades between
//! clips, root motion locking, and markers attached to joints.

use crate::anim::layers::{BlendMode, Layer, LayerMixer, LayerSample};
use crate::anim::{Player, PoseEvaluator};
use crate::rig::{Property, Rig, Trs};
use glam::{Mat4, Quat, Vec3};

/// A crossfade in progress: the previous clip keeps playing under the new one, whose weight
/// rises from 0 to 1 over `duration` seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fade {
    pub from_clip: usize,
    pub from_time: f32,
    pub elapsed: f32,
    pub duration: f32,
}

impl Fade {
    pub fn weight(&self) -> f32 {
        if self.duration <= 0.0 {
            1.0
        } else {
            (self.elapsed / self.duration).clamp(0.0, 1.0)
        }
    }
}

/// A marker that follows a joint: drawn as axes and a box at `world(joint) · T(offset) · R(rotation)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Attachment {
    pub node: usize,
    pub offset: Vec3,
    /// Euler degrees about the joint's local X, Y, Z.
    pub rotation_degrees: Vec3,
    /// Edge length of the box, in model units.
    pub size: f32,
}

impl Attachment {
    pub fn world(&self, worlds: &[Mat4]) -> Mat4 {
        let r = self.rotation_degrees * (std::f32::consts::PI / 180.0);
        worlds[self.node]
            * Mat4::from_rotation_translation(Quat::from_euler(glam::EulerRot::XYZ, r.x, r.y, r.z), self.offset)
    }
}

/// Root motion display.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RootMotion {
    /// Keep the motion root over its rest position on the ground plane (its height still moves).
    pub lock: bool,
    /// Draw the motion root's path over the whole clip on the ground.
    pub trail: bool,
}

/// Points of a root trail over a clip.
pub const TRAIL_SAMPLES: usize = 96;

pub struct AnimationStack {
    /// Layers blended over the player's clip, bottom to top.
    pub layers: Vec<Layer>,
    /// Seconds a clip change crossfades over (0: switch at once).
    pub crossfade_seconds: f32,
    pub fade: Option<Fade>,
    pub root_motion: RootMotion,
    pub attachments: Vec<Attachment>,
    /// The motion root's world positions over the current clip (when the trail is on).
    pub trail: Vec<Vec3>,
    trail_clip: Option<usize>,
    mixer: LayerMixer,
    samples: Vec<LayerSample>,
}

/// The node that carries a clip's root motion: the shallowest node with a translation channel.
pub fn motion_root(rig: &Rig, clip: usize) -> Option<usize> {
    let depth = |mut n: usize| {
        let mut d = 0;
        while let Some(p) = rig.nodes[n].parent {
            n = p;
            d += 1;
        }
        d
    };
    rig.clips
        .get(clip)?
        .channels
        .iter()
        .filter(|c| c.property == Property::Translation)
        .map(|c| c.node)
        .min_by_key(|&n| (depth(n), n))
}

/// Most layers (plus one crossfade) blended per frame without allocating.
const LAYER_CAPACITY: usize = 16;

impl AnimationStack {
    pub fn new(rig: &Rig) -> AnimationStack {
        AnimationStack {
            layers: Vec::new(),
            crossfade_seconds: 0.0,
            fade: None,
            root_motion: RootMotion::default(),
            attachments: Vec::new(),
            trail: Vec::with_capacity(TRAIL_SAMPLES),
            trail_clip: None,
            mixer: LayerMixer::new(rig),
            samples: Vec::with_capacity(LAYER_CAPACITY + 1),
        }
    }

    /// Called before the player switches from `from` (at `from_time`) to another clip.
    pub fn start_fade(&mut self, from: Option<usize>, from_time: f32) {
        self.fade = match from {
            Some(from_clip) if self.crossfade_seconds > 0.0 => Some(Fade {
                from_clip,
                from_time,
                elapsed: 0.0,
                duration: self.crossfade_seconds,
            }),
            _ => None,
        };
    }

    /// Moves a running crossfade on by `dt` seconds of wall time; returns whether one runs.
    pub fn advance(&mut self, dt: f32, player: &Player, rig: &Rig) -> bool {
        let Some(fade) = &mut self.fade else { return false };
        if !player.playing {
            return true;
        }
        fade.elapsed += dt * player.speed;
        let duration = rig.clips.get(fade.from_clip).map_or(0.0, |c| c.duration);
        fade.from_time = crate::anim::player::clip_time(fade.from_time + dt * player.speed, duration, player.looping);
        if fade.elapsed >= fade.duration {
            self.fade = None;
        }
        true
    }

    /// Samples the player's clip, the crossfade and the layers into `pose`, then its world
    /// matrices and palettes.
    pub fn evaluate(&mut self, rig: &Rig, player: &Player, pose: &mut PoseEvaluator) {
        self.samples.clear();
        let (base_clip, base_time) = match (self.fade, player.clip) {
            (Some(fade), Some(clip)) => {
                self.samples.push(LayerSample {
                    clip,
                    time: player.time,
                    weight: fade.weight(),
                    mode: BlendMode::Mix,
                    mask: None,
                });
                (Some(fade.from_clip), fade.from_time)
            }
            _ => (player.clip, player.time),
        };
        for layer in self.layers.iter().filter(|l| l.enabled).take(LAYER_CAPACITY) {
            let duration = rig.clips.get(layer.clip).map_or(0.0, |c| c.duration);
            self.samples.push(LayerSample {
                clip: layer.clip,
                time: layer.local_time(player.time, duration),
                weight: layer.weight,
                mode: layer.mode,
                mask: layer.mask,
            });
        }
        let lock = if self.root_motion.lock {
            player.clip.and_then(|c| motion_root(rig, c))
        } else {
            None
        };
        self.mixer.lock_root = lock;
        pose.sample_layered(rig, base_clip, base_time, Some(&mut self.mixer), &self.samples);
        pose.update(rig);
        self.update_trail(rig, player, pose);
    }

    /// Recomputes the trail when it is on and the clip changed (allocation-free afterwards).
    fn update_trail(&mut self, rig: &Rig, player: &Player, pose: &PoseEvaluator) {
        if !self.root_motion.trail {
            self.trail.clear();
            self.trail_clip = None;
            return;
        }
        if self.trail_clip == player.clip && !self.trail.is_empty() {
            return;
        }
        self.trail.clear();
        self.trail_clip = player.clip;
        let Some(clip) = player.clip else { return };
        let Some(root) = motion_root(rig, clip) else { return };
        let duration = rig.clips[clip].duration;
        // A private evaluator: the trail must not disturb the shown pose.
        let mut scratch = PoseEvaluator::new(rig);
        scratch.overrides.copy_from_slice(&pose.overrides);
        for k in 0..TRAIL_SAMPLES {
            scratch.evaluate(rig, Some(clip), duration * k as f32 / (TRAIL_SAMPLES - 1) as f32);
            self.trail.push(scratch.worlds[root].w_axis.truncate());
        }
    }
}

/// Keeps `node`'s translation over its rest position on the ground plane (x and z).
pub fn lock_to_rest(locals: &mut [Trs], rest: &Trs, node: usize) {
    let local = &mut locals[node];
    local.translation.x = rest.translation.x;
    local.translation.z = rest.translation.z;
}
