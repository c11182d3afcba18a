//! Playback state: which clip, where in it, how fast.

/// Length of one "step frame" action.
pub const FRAME_SECONDS: f32 = 1.0 / 30.0;

#[derive(Debug, Clone, PartialEq)]
pub struct Player {
    pub clip: Option<usize>,
    pub time: f32,
    pub playing: bool,
    pub looping: bool,
    pub speed: f32,
}

impl Default for Player {
    fn default() -> Self {
        Player {
            clip: None,
            time: 0.0,
            playing: true,
            looping: true,
            speed: 1.0,
        }
    }
}

impl Player {
    /// Moves time forward by `dt` seconds of wall time when playing. A looping clip wraps; a
    /// non-looping one stops at its end. Returns whether the time changed.
    pub fn advance(&mut self, dt: f32, duration: f32) -> bool {
        if !self.playing || self.clip.is_none() {
            return false;
        }
        let before = self.time;
        self.time += dt * self.speed;
        if duration <= 0.0 {
            self.time = 0.0;
        } else if self.looping {
            self.time = clip_time(self.time, duration, true);
        } else if self.time >= duration || self.time <= 0.0 {
            self.time = self.time.clamp(0.0, duration);
            self.playing = false;
        }
        self.time != before
    }

    /// Steps `frames` frames (negative steps back) and pauses, as a frame-by-frame inspection does.
    pub fn step(&mut self, frames: i32, duration: f32) {
        self.playing = false;
        self.seek(self.time + frames as f32 * FRAME_SECONDS, duration);
    }

    pub fn seek(&mut self, time: f32, duration: f32) {
        self.time = clip_time(time, duration, self.looping);
    }

    /// Selects a clip and rewinds it.
    pub fn select(&mut self, clip: Option<usize>) {
        self.clip = clip;
        self.time = 0.0;
    }
}

/// A time inside a clip of `duration`: wrapped into it when `looping`, else held at its ends.
/// The clip's last instant is kept rather than wrapped to its start.
pub fn clip_time(time: f32, duration: f32, looping: bool) -> f32 {
    if looping && duration > 0.0 && !(0.0..=duration).contains(&time) {
        time.rem_euclid(duration)
    } else {
        time.clamp(0.0, duration.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looping_wraps_and_one_shot_stops_at_the_end() {
        let mut p = Player {
            clip: Some(0),
            ..Player::default()
        };
        assert!(p.advance(1.5, 1.0));
        assert!((p.time - 0.5).abs() < 1e-6);
        p.looping = false;
        p.advance(0.75, 1.0);
        assert_eq!(p.time, 1.0);
        assert!(!p.playing);
        assert!(!p.advance(0.1, 1.0), "a stopped player does not move");
    }

    #[test]
    fn stepping_pauses_and_moves_one_frame() {
        let mut p = Player {
            clip: Some(0),
            looping: false,
            ..Player::default()
        };
        p.step(3, 2.0);
        assert!(!p.playing);
        assert!((p.time - 3.0 * FRAME_SECONDS).abs() < 1e-6);
        p.step(-10, 2.0);
        assert_eq!(p.time, 0.0);
    }
}
