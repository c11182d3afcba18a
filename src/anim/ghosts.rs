//! Onion skin: which moments around the current time are shown as ghosts, and how each is
//! tinted. The poses themselves come from the same evaluation as the current one.

use crate::anim::FRAME_SECONDS;
use glam::Vec4;
use serde::{Deserialize, Serialize};

/// Most ghosts on each side of the current time.
pub const MAX_GHOSTS_PER_SIDE: u32 = 8;

/// Tint of the ghosts before the current time (linear RGB).
pub const PAST_TINT: [f32; 3] = [0.15, 0.45, 1.0];
/// Tint of the ghosts after the current time (linear RGB).
pub const FUTURE_TINT: [f32; 3] = [1.0, 0.45, 0.08];
/// Opacity of the ghosts next to the current time; farther ones fade towards none.
pub const NEAREST_OPACITY: f32 = 0.5;

/// The onion skin's settings (the settings file's `[view.ghosts]` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GhostOptions {
    pub show: bool,
    /// Ghosts on each side of the current time (at most [`MAX_GHOSTS_PER_SIDE`]).
    pub count: u32,
    /// Frames (of [`FRAME_SECONDS`]) between neighbouring ghosts.
    pub every: u32,
    /// Draw the ghosts as skeletons instead of skinned meshes.
    pub skeleton: bool,
}

impl Default for GhostOptions {
    fn default() -> Self {
        GhostOptions {
            show: false,
            count: 3,
            every: 5,
            skeleton: false,
        }
    }
}

/// Why a `--ghosts` value was refused, with the text given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GhostsArgError {
    #[error("'{0}' is not N[,K] in whole numbers (e.g. 3 or 4,5)")]
    NotCounts(String),
    #[error("{count} ghosts on each side in '{text}' is not 1 to {MAX_GHOSTS_PER_SIDE}")]
    Count { text: String, count: u32 },
    #[error("every {every} frames in '{text}' is not at least 1")]
    Every { text: String, every: u32 },
}

impl GhostOptions {
    /// Shown ghosts from `N[,K]`: N on each side of the current time, K frames apart (the
    /// default spacing when K is left out), e.g. `3` or `4,5`.
    pub fn parse(text: &str) -> Result<GhostOptions, GhostsArgError> {
        let numbers: Vec<u32> = text
            .split(',')
            .map(|n| n.trim().parse::<u32>().ok())
            .collect::<Option<_>>()
            .ok_or_else(|| GhostsArgError::NotCounts(text.to_owned()))?;
        let (count, every) = match numbers[..] {
            [count] => (count, GhostOptions::default().every),
            [count, every] => (count, every),
            _ => return Err(GhostsArgError::NotCounts(text.to_owned())),
        };
        if !(1..=MAX_GHOSTS_PER_SIDE).contains(&count) {
            return Err(GhostsArgError::Count {
                text: text.to_owned(),
                count,
            });
        }
        if every == 0 {
            return Err(GhostsArgError::Every {
                text: text.to_owned(),
                every,
            });
        }
        Ok(GhostOptions {
            show: true,
            count,
            every,
            skeleton: false,
        })
    }

    pub fn is_default(&self) -> bool {
        *self == GhostOptions::default()
    }

    /// Ghosts on each side, within bounds (none when hidden).
    pub fn per_side(&self) -> u32 {
        if self.show {
            self.count.min(MAX_GHOSTS_PER_SIDE)
        } else {
            0
        }
    }

    /// Seconds between neighbouring ghosts.
    pub fn spacing(&self) -> f32 {
        self.every.max(1) as f32 * FRAME_SECONDS
    }

    /// The moments shown as ghosts around `time` in a clip of `duration` seconds, as pairs of
    /// (signed distance in ghosts, time), written into `out` (cleared first), farthest first
    /// so that nearer ghosts blend over farther ones. A looping clip wraps around its ends; in
    /// one that does not loop, moments outside it are left out, as are all without a clip.
    pub fn times(&self, time: f32, duration: f32, looping: bool, out: &mut Vec<(i32, f32)>) {
        out.clear();
        if duration.is_nan() || duration <= 0.0 || !time.is_finite() {
            return;
        }
        let per_side = self.per_side() as i32;
        for distance in (1..=per_side).rev() {
            for offset in [-distance, distance] {
                let at = time + offset as f32 * self.spacing();
                let at = if looping {
                    at.rem_euclid(duration)
                } else if (0.0..=duration).contains(&at) {
                    at
                } else {
                    continue;
                };
                out.push((offset, at));
            }
        }
    }
}

/// The tint (RGB) and opacity (A) of the ghost `offset` ghosts away from the current time, of
/// `per_side` on each side: past ones [`PAST_TINT`], future ones [`FUTURE_TINT`], the nearest
/// at [`NEAREST_OPACITY`] and each farther one less, linearly.
pub fn ghost_tint(offset: i32, per_side: u32) -> Vec4 {
    let [r, g, b] = if offset < 0 { PAST_TINT } else { FUTURE_TINT };
    let distance = offset.unsigned_abs().max(1) as f32;
    let opacity = NEAREST_OPACITY * (per_side.max(1) as f32 + 1.0 - distance) / per_side.max(1) as f32;
    Vec4::new(r, g, b, opacity.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(count: u32, every: u32) -> GhostOptions {
        GhostOptions {
            show: true,
            count,
            every,
            skeleton: false,
        }
    }

    #[test]
    fn ghost_times_step_by_whole_frames_farthest_first_and_wrap_in_a_loop() {
        let mut out = Vec::new();
        options(2, 5).times(1.0, 2.0, true, &mut out);
        let step = 5.0 / 30.0;
        let expected = [
            (-2, 1.0 - 2.0 * step),
            (2, 1.0 + 2.0 * step),
            (-1, 1.0 - step),
            (1, 1.0 + step),
        ];
        assert_eq!(out.len(), expected.len());
        for ((offset, time), (want_offset, want_time)) in out.iter().zip(expected) {
            assert_eq!(*offset, want_offset);
            assert!(
                (f64::from(*time) - want_time).abs() < 1e-6,
                "{time} against {want_time}"
            );
        }
        // Near the start of a loop the past wraps to its end.
        options(1, 3).times(0.05, 2.0, true, &mut out);
        assert!((f64::from(out[0].1) - (2.0 + 0.05 - 0.1)).abs() < 1e-6, "{:?}", out);
        // Without looping the moment before the start is left out.
        options(1, 3).times(0.05, 2.0, false, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 1);
        // Hidden, or without a clip: none.
        GhostOptions::default().times(1.0, 2.0, true, &mut out);
        assert!(out.is_empty());
        options(3, 5).times(1.0, 0.0, true, &mut out);
        assert!(out.is_empty());
        // Bounded.
        options(1000, 1).times(1.0, 100.0, true, &mut out);
        assert_eq!(out.len(), 2 * MAX_GHOSTS_PER_SIDE as usize);
    }

    #[test]
    fn ghosts_parse_from_count_and_spacing_and_refuse_what_cannot_be_drawn() {
        assert_eq!(GhostOptions::parse("4,2"), Ok(options(4, 2)));
        assert_eq!(
            GhostOptions::parse(" 3 "),
            Ok(options(3, GhostOptions::default().every))
        );
        assert!(matches!(GhostOptions::parse("x"), Err(GhostsArgError::NotCounts(_))));
        assert!(matches!(
            GhostOptions::parse("1,2,3"),
            Err(GhostsArgError::NotCounts(_))
        ));
        assert!(matches!(GhostOptions::parse("-1"), Err(GhostsArgError::NotCounts(_))));
        assert!(matches!(
            GhostOptions::parse("0"),
            Err(GhostsArgError::Count { count: 0, .. })
        ));
        assert!(matches!(
            GhostOptions::parse("9"),
            Err(GhostsArgError::Count { count: 9, .. })
        ));
        assert!(matches!(
            GhostOptions::parse("2,0"),
            Err(GhostsArgError::Every { every: 0, .. })
        ));
    }

    #[test]
    fn ghosts_fade_with_distance_and_are_tinted_by_side() {
        let nearest_past = ghost_tint(-1, 3);
        let farthest_future = ghost_tint(3, 3);
        assert_eq!(nearest_past.truncate().to_array(), PAST_TINT);
        assert_eq!(farthest_future.truncate().to_array(), FUTURE_TINT);
        assert!((nearest_past.w - NEAREST_OPACITY).abs() < 1e-6);
        assert!((farthest_future.w - NEAREST_OPACITY / 3.0).abs() < 1e-6);
        assert!((ghost_tint(2, 3).w - NEAREST_OPACITY * 2.0 / 3.0).abs() < 1e-6);
    }
}
