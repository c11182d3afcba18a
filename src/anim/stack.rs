//! What the user sets between the player's clip and the final pose: extra layers, crossfades
//! between clips, root motion locking, bends and morph weights by hand, and markers attached to
//! joints. Evaluating them is [`evaluate_pose`](crate::anim::evaluate_pose)'s job.

use crate::anim::{Attachment, Fade, JointOverride, Layer, Player, PoseInputs, RootMotion, RootTrail};
use crate::rig::Rig;

pub struct AnimationStack {
    /// Layers blended over the player's clip, bottom to top.
    pub layers: Vec<Layer>,
    /// Seconds a clip change crossfades over (0: switch at once).
    pub crossfade_seconds: f32,
    pub fade: Option<Fade>,
    pub root_motion: RootMotion,
    pub attachments: Vec<Attachment>,
    /// Hand-made changes per node, applied after sampling and blending; they stay when the clip
    /// or time changes, until reset.
    pub overrides: Vec<JointOverride>,
    /// Weights set by hand per mesh instance and target, in place of the sampled ones.
    pub morph_overrides: Vec<Vec<Option<f32>>>,
    /// A VRM avatar's expression weights set by hand (one per
    /// [`ImportFacts::expressions`](crate::rig::ImportFacts::expressions)); what they bind is
    /// in [`AnimationStack::morph_overrides`].
    pub expression_weights: Vec<f32>,
    /// The motion root's path over the current clip (when the trail is on).
    pub trail: RootTrail,
    /// Two-bone IK goals over the pose (see [`crate::anim::ik_layer`]).
    pub ik_goals: Vec<crate::anim::ik_layer::IkGoal>,
    /// The user wants the feet held on their contacts (the Layers panel's Lock feet).
    pub lock_feet: bool,
    /// The pins of the clip playing, made when [`AnimationStack::lock_feet`] is on (see
    /// [`crate::motion::foot_lock`]); used only while its clip plays.
    pub foot_lock: Option<crate::anim::foot_lock::FootLock>,
    /// The head turned to a point (see [`crate::anim::look_at`]).
    pub look_at: Option<crate::anim::look_at::LookAt>,
    /// The look-at follows the camera: its target is the eye, each frame.
    pub look_at_camera: bool,
}

impl AnimationStack {
    pub fn new(rig: &Rig) -> AnimationStack {
        AnimationStack {
            layers: Vec::new(),
            crossfade_seconds: 0.0,
            fade: None,
            root_motion: RootMotion::default(),
            attachments: Vec::new(),
            overrides: vec![JointOverride::IDENTITY; rig.nodes.len()],
            morph_overrides: rig
                .instances
                .iter()
                .map(|i| vec![None; rig.morphs.weight_count(i.mesh)])
                .collect(),
            expression_weights: vec![0.0; rig.facts.expressions.len()],
            trail: RootTrail::default(),
            ik_goals: Vec::new(),
            lock_feet: false,
            foot_lock: None,
            look_at: None,
            look_at_camera: false,
        }
    }

    /// The pose pipeline's inputs for the player's clip and time.
    pub fn inputs(&self, player: &Player) -> PoseInputs<'_> {
        PoseInputs {
            clip: player.clip,
            time: player.time,
            fade: self.fade.filter(|_| player.clip.is_some()),
            layers: &self.layers,
            root_lock: self.root_motion.lock,
            overrides: &self.overrides,
            morph_overrides: &self.morph_overrides,
            dual_quaternions: false,
            rest: None,
            ik: &self.ik_goals,
            foot_lock: self.foot_lock.as_ref().filter(|_| self.lock_feet),
            look_at: self.look_at.as_ref(),
            springs: None,
        }
    }

    /// Called before the player switches from `from` (at `from_time`) to another clip.
    pub fn start_fade(&mut self, from: Option<usize>, from_time: f32) {
        self.fade = Fade::start(from, from_time, self.crossfade_seconds);
    }

    /// Moves a running crossfade on by `dt` seconds of wall time; returns whether one ran.
    pub fn advance(&mut self, dt: f32, player: &Player, rig: &Rig) -> bool {
        let Some(fade) = &mut self.fade else { return false };
        if !fade.advance(dt, player, rig) {
            self.fade = None;
        }
        true
    }

    /// Whether any node has a hand-made change.
    pub fn has_overrides(&self) -> bool {
        self.overrides.iter().any(|o| !o.is_identity())
    }
}
