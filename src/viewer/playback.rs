//! Playback and pose: which clip plays and how, what sits between the clip and the pose, and
//! the pose and CPU-skinned vertices computed from them, each once per change.

use crate::anim::{AnimationStack, Bounds, Player, PoseBuffers, PoseInputs, evaluate_pose};
use crate::rig::Rig;
use crate::skin::{SkinnedPose, SkinningMethod, SkinningPath, posed_bounds};
use crate::timings::FrameStages;
use std::time::Instant;

/// Counts of the work behind the frames: how often the pose was evaluated and skinned on the
/// CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkDone {
    pub evaluations: u64,
    pub cpu_skinnings: u64,
}

/// The animated state of the active document's rig. Its buffers are sized for one rig: a new
/// rig gets a new one ([`Playback::for_rig`]).
pub struct Playback {
    /// Which clip plays, where in it and how.
    pub(crate) player: Player,
    /// Layers, crossfades, root motion, bends and attachments between the clip and the pose.
    pub(crate) animation: AnimationStack,
    /// The pose of the last evaluation.
    pub(crate) pose: PoseBuffers,
    /// CPU-skinned vertices; current when `cpu_skinned` is set.
    pub(crate) skinned: SkinnedPose,
    pub(crate) path: SkinningPath,
    pub(crate) method: SkinningMethod,
    /// An input of the pose changed since it was last evaluated.
    dirty: bool,
    /// `skinned` holds the current pose skinned with the current method.
    cpu_skinned: bool,
    /// Stage times of the evaluations since the frame last took them.
    stage_times: Option<FrameStages>,
    /// Pose evaluations and CPU skinnings made so far.
    work_done: WorkDone,
    /// The onion skin's poses.
    pub(crate) ghosts: super::ghosts::Ghosts,
    /// The DQS mask: joints (nodes) whose vertices, with their descendants', skin toward dual
    /// quaternions with the blended method; empty: the file's blend.
    pub(crate) dqs_mask: Vec<usize>,
    /// Every node's world matrix in the bind pose (`None` inside without skins), made the first
    /// time the bind-pose skeleton is drawn.
    pub(crate) bind_worlds: Option<Option<Vec<glam::Mat4>>>,
    /// What the foot lock's pins were made for (see [`super::foot_lock`]).
    pub(super) foot_lock_state: super::foot_lock::FootLockState,
    /// The bend shown while `R` or `G` runs (see [`super::pose_edit`]).
    pub(super) bend_preview: Option<super::pose_edit::BendPreview>,
    /// The spring bones swing (a rig without them ignores it).
    pub(crate) springs_on: bool,
    /// Wall time the springs have to catch up with at the next evaluation.
    spring_seconds: f32,
}

impl Playback {
    /// Playback of `rig` from its rest pose, with the first clip selected and playing; the
    /// player's speed and looping, the skinning path and method and the work counts carry over
    /// from `previous`.
    pub(super) fn for_rig(rig: &Rig, previous: Option<Playback>) -> Playback {
        let mut playback = Playback {
            player: Player::default(),
            animation: AnimationStack::new(rig),
            pose: PoseBuffers::new(rig),
            skinned: SkinnedPose::new(rig),
            path: SkinningPath::Gpu,
            method: SkinningMethod::Lbs,
            dirty: true,
            bend_preview: None,
            cpu_skinned: false,
            stage_times: None,
            work_done: WorkDone::default(),
            ghosts: Default::default(),
            dqs_mask: Vec::new(),
            bind_worlds: None,
            foot_lock_state: Default::default(),
            springs_on: true,
            spring_seconds: 0.0,
        };
        if let Some(previous) = previous {
            playback.player = previous.player;
            playback.springs_on = previous.springs_on;
            (playback.path, playback.method) = (previous.path, previous.method);
            playback.work_done = previous.work_done;
        }
        // A file skinned with dual quaternions or weight blended opens that way.
        if let Some(method) = rig.skinning.method {
            playback.method = method;
        }
        playback.player.select((!rig.clips.is_empty()).then_some(0));
        playback.player.playing = true;
        playback
    }

    /// Bounds of `rig` in the rest pose, which the pose buffers hold until first evaluated.
    pub(super) fn rest_bounds(&mut self, rig: &Rig) -> Bounds {
        self.skinned.skin(rig, &self.pose, SkinningMethod::Lbs);
        self.cpu_skinned = false;
        posed_bounds(rig, &self.pose, &self.skinned)
    }

    pub(super) fn clip_duration(&self, rig: &Rig) -> f32 {
        self.player
            .clip
            .and_then(|c| rig.clips.get(c))
            .map_or(0.0, |c| c.duration)
    }

    /// Advances playback, crossfades and the spring bones by `dt` seconds; returns whether the
    /// pose moved. Springs still swinging move it even while the clip is paused.
    pub(super) fn advance(&mut self, dt: f32, rig: &Rig) -> bool {
        let moved = self.player.advance(dt, self.clip_duration(rig));
        let fading = self.animation.advance(dt, &self.player, rig);
        let swinging = match &self.pose.springs {
            Some(springs) if self.springs_on => {
                // A long stall is not caught up: the simulation takes a few steps at most.
                self.spring_seconds = (self.spring_seconds + dt).min(0.25);
                springs.is_moving()
            }
            _ => false,
        };
        moved || fading || swinging
    }

    /// Turns the spring bones on or off; either way they start again from the pose.
    pub(crate) fn set_springs(&mut self, on: bool) {
        self.springs_on = on;
        self.reset_springs();
    }

    /// Simulates the spring bones from the clip's start to `time` in fixed steps, evaluating
    /// the pose at each step's time, and leaves the player at `time` with the springs where the
    /// steps took them: the same time gives the same pose bit for bit, whatever ran before.
    pub(crate) fn run_springs_to(&mut self, rig: &Rig, time: f32) {
        use crate::anim::spring_bones::SPRING_STEP_SECONDS;
        /// Ten minutes of steps: a longer time is simulated over its last ten minutes.
        const MAX_STEPS: u32 = 36_000;
        self.reset_springs();
        if !self.springs_on || self.pose.springs.is_none() {
            return;
        }
        let duration = self.clip_duration(rig);
        let steps = (time.max(0.0) / SPRING_STEP_SECONDS).floor().min(MAX_STEPS as f32) as u32;
        let start = time.max(0.0) - steps as f32 * SPRING_STEP_SECONDS;
        for k in 0..=steps {
            self.player.seek(start + k as f32 * SPRING_STEP_SECONDS, duration);
            self.spring_seconds = if k == 0 { 0.0 } else { SPRING_STEP_SECONDS };
            self.mark_dirty();
            self.refresh(rig, false, None);
        }
        self.player.time = time;
        self.spring_seconds = 0.0;
        self.mark_dirty();
    }

    /// Puts the spring bones back at rest under the current pose.
    pub(crate) fn reset_springs(&mut self) {
        if let Some(springs) = &mut self.pose.springs {
            springs.reset();
        }
        self.spring_seconds = 0.0;
        self.mark_dirty();
    }

    /// Notes that an input of the pose changed.
    pub(crate) fn mark_dirty(&mut self) {
        self.dirty = true;
        self.cpu_skinned = false;
    }

    /// Evaluates the pose when an input changed since the last evaluation, then skins it on
    /// the CPU when that is the path drawn (or `cpu_needed`) and it is not skinned yet.
    /// However often it is called, each runs once per change.
    /// `shown_rest`, when given, is the pose shown in place of the clip (a retarget pose).
    pub(crate) fn refresh(&mut self, rig: &Rig, cpu_needed: bool, shown_rest: Option<&[crate::rig::Trs]>) {
        if self.dirty {
            self.dirty = false;
            self.cpu_skinned = false;
            let mut inputs = PoseInputs {
                dual_quaternions: self.method.needs_dual_quats(),
                springs: self.springs_on.then(|| std::mem::take(&mut self.spring_seconds)),
                ..self.animation.inputs(&self.player)
            };
            if shown_rest.is_some() {
                (inputs.clip, inputs.fade, inputs.layers, inputs.rest) = (None, None, &[], shown_rest);
            }
            let times = evaluate_pose(rig, &inputs, &mut self.pose);
            self.work_done.evaluations += 1;
            self.stage_times.get_or_insert_default().pose = Some(times);
            let motion = self.animation.root_motion;
            let (clip, trail_shown) = (self.player.clip, motion.trail || motion.trail_joint.is_some());
            let animation = &mut self.animation;
            animation
                .trail
                .update(rig, clip, &animation.overrides, trail_shown, motion.trail_joint);
        }
        if (cpu_needed || self.path == SkinningPath::Cpu) && !self.cpu_skinned {
            let start = Instant::now();
            self.skinned.skin(rig, &self.pose, self.method);
            self.work_done.cpu_skinnings += 1;
            self.cpu_skinned = true;
            if self.path == SkinningPath::Cpu {
                self.stage_times.get_or_insert_default().cpu_skinning = Some(start.elapsed());
            }
        }
    }

    /// Follows an edit of `rig`'s clips (see `editing.rs`): `moved` says where each clip
    /// that was at an index went (`None`: dropped). The player stays on its clip at its time
    /// (held inside a trimmed clip); when its clip was dropped it shows the clip that took its
    /// place, or the last one, from the start. Layers on a dropped clip go; what was computed
    /// per clip (the crossfade, the trail, the layer mixer's and the ghosts' per-clip data) is
    /// made again for the clips as they are now.
    pub(super) fn clips_changed(&mut self, rig: &Rig, moved: impl Fn(usize) -> Option<usize>) {
        let count = rig.clips.len();
        if let Some(clip) = self.player.clip {
            match moved(clip) {
                Some(now) => {
                    self.player.clip = Some(now);
                    let time = self.player.time;
                    self.player.seek(time, rig.clips[now].duration);
                }
                None => self.player.select((count > 0).then(|| clip.min(count - 1))),
            }
        }
        self.animation.layers.retain_mut(|layer| match moved(layer.clip) {
            Some(now) => {
                layer.clip = now;
                true
            }
            None => false,
        });
        self.animation.fade = None;
        self.animation.trail = Default::default();
        self.pose = PoseBuffers::new(rig);
        self.ghosts = Default::default();
        self.mark_dirty();
    }

    /// Stage times of the evaluations and skinnings since the last call.
    pub(super) fn take_stage_times(&mut self) -> Option<FrameStages> {
        self.stage_times.take()
    }

    pub(super) fn work_done(&self) -> WorkDone {
        self.work_done
    }
}

impl super::Viewer {
    /// Whether the active rig has spring bones.
    pub fn has_springs(&self) -> bool {
        self.playback.pose.springs.is_some()
    }

    /// Whether the spring bones swing (View ▸ Spring bones).
    pub fn springs_on(&self) -> bool {
        self.playback.springs_on
    }

    pub fn set_springs(&mut self, on: bool) {
        self.playback.set_springs(on);
    }

    /// Puts the spring bones back at rest under the current pose (View ▸ Reset springs).
    pub fn reset_springs(&mut self) {
        self.playback.reset_springs();
    }

    /// The springs as simulated from the clip's start to `time` at a fixed step, the player
    /// left at `time` (what `render --time` draws).
    pub fn run_springs_to(&mut self, time: f32) {
        let rig = &self.documents[self.active].rig;
        self.playback.run_springs_to(rig, time);
    }
}
