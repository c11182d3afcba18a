//! The onion skin's poses: evaluated with the current pose's inputs at the ghosts' moments,
//! each once per change of the pose or the options, in buffers kept between frames.

use super::playback::Playback;
use crate::anim::{GhostOptions, Player, PoseInputs, evaluate_pose};
use crate::render::scene::GhostPose;
use crate::rig::Rig;
use crate::skin::{SkinningMethod, SkinningPath};

/// The ghosts of one rig's playback.
#[derive(Default)]
pub struct Ghosts {
    /// Grown to the most ghosts shown so far, never shrunk: a frame allocates nothing.
    poses: Vec<GhostPose>,
    /// This frame's moments (see [`GhostOptions::times`]).
    times: Vec<(i32, f32)>,
    /// How many of `poses` are shown.
    shown: usize,
    /// The evaluation of the current pose, the options and the method the poses follow.
    made_for: Option<(u64, GhostOptions, SkinningMethod)>,
    /// The evaluation whose ghosts are skinned on the CPU.
    skinned_for: Option<u64>,
}

impl Ghosts {
    /// The ghosts shown, farthest first.
    pub fn shown(&self) -> &[GhostPose] {
        &self.poses[..self.shown]
    }
}

impl Playback {
    /// Brings the ghosts up to date with the current pose (refreshed first) and `options`:
    /// evaluates them when either changed, and skins them on the CPU path.
    pub(crate) fn refresh_ghosts(&mut self, rig: &Rig, options: &GhostOptions) {
        let evaluation = self.work_done().evaluations;
        let key = (evaluation, *options, self.method);
        let ghosts = &mut self.ghosts;
        if ghosts.made_for != Some(key) {
            ghosts.made_for = Some(key);
            ghosts.skinned_for = None;
            let duration = self
                .player
                .clip
                .and_then(|c| rig.clips.get(c))
                .map_or(0.0, |c| c.duration);
            options.times(self.player.time, duration, self.player.looping, &mut ghosts.times);
            while ghosts.poses.len() < ghosts.times.len() {
                ghosts.poses.push(GhostPose::new(rig));
            }
            for (&(offset, time), ghost) in ghosts.times.iter().zip(&mut ghosts.poses) {
                let player = Player { time, ..self.player };
                // A crossfade belongs to the moment it runs at, not to the ghosts'.
                let inputs = PoseInputs {
                    fade: None,
                    dual_quaternions: self.method.needs_dual_quats(),
                    ..self.animation.inputs(&player)
                };
                evaluate_pose(rig, &inputs, &mut ghost.pose);
                (ghost.offset, ghost.time) = (offset, time);
            }
            ghosts.shown = ghosts.times.len();
        }
        let skinned_drawn = self.path == SkinningPath::Cpu && !options.skeleton;
        if skinned_drawn && ghosts.skinned_for != Some(evaluation) {
            for ghost in &mut ghosts.poses[..ghosts.shown] {
                if !std::sync::Arc::ptr_eq(ghost.skinned.blend(), self.skinned.blend()) {
                    ghost.skinned.set_blend(self.skinned.blend().clone());
                }
                ghost.skinned.skin(rig, &ghost.pose, self.method);
            }
            ghosts.skinned_for = Some(evaluation);
        }
    }
}
