//! Crossfades between clips: when the clip changes, the previous one keeps playing under the new
//! one while the new one's weight rises from 0 to 1.

use crate::anim::Player;
use crate::anim::player::clip_time;
use crate::rig::Rig;

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
    /// The fade for a switch away from `from` (at `from_time`), or `None` when there is nothing
    /// to fade from or `seconds` is not positive.
    pub fn start(from: Option<usize>, from_time: f32, seconds: f32) -> Option<Fade> {
        match from {
            Some(from_clip) if seconds > 0.0 => Some(Fade {
                from_clip,
                from_time,
                elapsed: 0.0,
                duration: seconds,
            }),
            _ => None,
        }
    }

    /// Weight of the new clip.
    pub fn weight(&self) -> f32 {
        if self.duration <= 0.0 {
            1.0
        } else {
            (self.elapsed / self.duration).clamp(0.0, 1.0)
        }
    }

    /// Moves the fade on by `dt` seconds of wall time at the player's speed (nothing moves while
    /// the player is paused). Returns false once the fade is over.
    pub fn advance(&mut self, dt: f32, player: &Player, rig: &Rig) -> bool {
        if !player.playing {
            return true;
        }
        self.elapsed += dt * player.speed;
        let duration = rig.clips.get(self.from_clip).map_or(0.0, |c| c.duration);
        self.from_time = clip_time(self.from_time + dt * player.speed, duration, player.looping);
        self.elapsed < self.duration
    }
}
