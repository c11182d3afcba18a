//! Animation layers: clips blended on top of the base clip, by mix (lerp/slerp towards the layer)
//! or additively (the layer's change from its own first frame, scaled by the weight), optionally
//! masked to one joint and its descendants.

use crate::anim::sample_clip;
use crate::rig::{Rig, Trs};
use glam::{Quat, Vec3};

crate::names::named_enum! {
    /// How a layer blends over the pose below it (named `mix` and `add` on the command line).
    #[strum(serialize_all = "lowercase")]
    pub enum BlendMode {
        /// `pose = lerp(pose, layer, weight)`, rotations by shortest-arc slerp.
        #[default]
        Mix,
        /// `pose += (layer − reference) · weight`, where the reference is the layer clip's own
        /// first frame: a layer adds only what its clip changes.
        #[strum(serialize = "add")]
        Additive,
    }
}

/// One layer of the stack, as the user sets it up.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub clip: usize,
    pub weight: f32,
    /// Layer time = player time × speed + offset.
    pub speed: f32,
    pub time_offset: f32,
    pub looping: bool,
    pub enabled: bool,
    pub mode: BlendMode,
    /// Only this node and its descendants are affected (e.g. the upper body).
    pub mask: Option<usize>,
}

impl Layer {
    pub fn new(clip: usize) -> Layer {
        Layer {
            clip,
            weight: 1.0,
            speed: 1.0,
            time_offset: 0.0,
            looping: true,
            enabled: true,
            mode: BlendMode::Mix,
            mask: None,
        }
    }

    /// The layer's own clip time when the player is at `time`.
    pub fn local_time(&self, time: f32, duration: f32) -> f32 {
        crate::anim::player::clip_time(time * self.speed + self.time_offset, duration, self.looping)
    }
}

/// A clip sampled at a time and blended into the pose: what a [`Layer`] or a crossfade resolves
/// to for one frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerSample {
    pub clip: usize,
    pub time: f32,
    pub weight: f32,
    pub mode: BlendMode,
    pub mask: Option<usize>,
}

/// Scratch and per-clip facts for blending layers, kept between frames.
pub struct LayerMixer {
    /// Per clip: which nodes it animates (a mix layer leaves the others alone).
    animated: Vec<Vec<bool>>,
    /// Per clip: its first frame, the reference of additive blending.
    first_frames: Vec<Vec<Trs>>,
    scratch: Vec<Trs>,
    in_mask: Vec<bool>,
    hints: Vec<Vec<usize>>,
}

impl LayerMixer {
    pub fn new(rig: &Rig) -> LayerMixer {
        let nodes = rig.nodes.len();
        let animated = rig
            .clips
            .iter()
            .map(|clip| {
                let mut flags = vec![false; nodes];
                for channel in &clip.channels {
                    flags[channel.node] = true;
                }
                flags
            })
            .collect();
        let first_frames = rig
            .clips
            .iter()
            .map(|clip| {
                let mut pose = vec![Trs::IDENTITY; nodes];
                let mut hints = vec![0; clip.channels.len()];
                sample_clip(&rig.nodes, Some(clip), 0.0, &mut hints, &mut pose);
                pose
            })
            .collect();
        LayerMixer {
            animated,
            first_frames,
            scratch: vec![Trs::IDENTITY; nodes],
            in_mask: vec![true; nodes],
            hints: rig.clips.iter().map(|c| vec![0; c.channels.len()]).collect(),
        }
    }

    /// Blends each sample, in order, into `locals`.
    pub fn apply(&mut self, rig: &Rig, samples: &[LayerSample], locals: &mut [Trs]) {
        for sample in samples {
            let Some(clip) = rig.clips.get(sample.clip) else {
                continue;
            };
            if sample.weight == 0.0 {
                continue;
            }
            sample_clip(
                &rig.nodes,
                Some(clip),
                sample.time,
                &mut self.hints[sample.clip],
                &mut self.scratch,
            );
            match sample.mask {
                None => self.in_mask.fill(true),
                Some(root) => {
                    // Parents come first, so one pass spreads the mask down the hierarchy.
                    for node in 0..rig.nodes.len() {
                        self.in_mask[node] = node == root || rig.nodes[node].parent.is_some_and(|p| self.in_mask[p]);
                    }
                }
            }
            let animated = &self.animated[sample.clip];
            let reference = &self.first_frames[sample.clip];
            for node in 0..locals.len() {
                if !(animated[node] && self.in_mask[node]) {
                    continue;
                }
                let layer = self.scratch[node];
                let pose = &mut locals[node];
                match sample.mode {
                    BlendMode::Mix => *pose = mix(pose, &layer, sample.weight),
                    BlendMode::Additive => add(pose, &layer, &reference[node], sample.weight),
                }
            }
        }
    }
}

/// `lerp(a, b, w)` with rotations by shortest-arc slerp.
pub fn mix(a: &Trs, b: &Trs, w: f32) -> Trs {
    Trs {
        translation: a.translation.lerp(b.translation, w),
        rotation: a.rotation.slerp(b.rotation, w),
        scale: a.scale.lerp(b.scale, w),
    }
}

/// Adds `weight` times the change from `reference` to `layer` onto `pose`: translation by
/// difference, rotation by the local delta rotation (slerped from identity), scale by ratio.
pub fn add(pose: &mut Trs, layer: &Trs, reference: &Trs, weight: f32) {
    pose.translation += (layer.translation - reference.translation) * weight;
    let delta = (reference.rotation.inverse() * layer.rotation).normalize();
    pose.rotation = (pose.rotation * Quat::IDENTITY.slerp(delta, weight)).normalize();
    let ratio = layer.scale / Vec3::select(reference.scale.cmpne(Vec3::ZERO), reference.scale, Vec3::ONE);
    pose.scale *= Vec3::ONE.lerp(ratio, weight);
}
