//! What carrying clips onto a rig matched, left out and bent: per clip and for the file, and
//! the summary the command line prints.

use super::{JointMap, JointMatch, LimbError};
use crate::rig::Trs;

/// What happened to one clip.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClipReport {
    /// The clip's name on the target rig.
    pub name: String,
    /// Source channels whose node has a counterpart on the target.
    pub matched_channels: usize,
    /// Source channels left out because their node has none, as `node property`.
    pub dropped_channels: Vec<String>,
    /// The target node that carries the clip's travel, if any.
    pub root: Option<String>,
    /// Target hip height over source hip height: the factor on the root's travel.
    pub root_scale: f32,
    /// Morph weight channels carried over and left out.
    pub matched_morph_channels: usize,
    pub dropped_morph_channels: usize,
    /// A VRM Animation's expressions the target has no binds for (the carried ones count as
    /// morph channels).
    pub dropped_expressions: Vec<String>,
    /// The joints a VRM Animation's gaze turns (the eyes, else the head).
    pub gaze: Vec<String>,
    /// Per bone of the target that has a counterpart in the source, the largest angle between
    /// its direction and the source bone's over the clip, largest first.
    pub limbs: Vec<LimbError>,
}

impl ClipReport {
    /// The bone whose direction strays furthest from the source's, if the clip has bones.
    pub fn worst_limb(&self) -> Option<&LimbError> {
        self.limbs.first()
    }
}

/// How many of a clip's dropped channels the summary names (a pack for another skeleton drops
/// hundreds).
const DROPPED_LISTED: usize = 6;

/// How many of a clip's worst bones the summary names.
const LIMBS_LISTED: usize = 3;

/// What carrying a file's clips onto a rig matched and left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RetargetReport {
    pub joints: JointMatch,
    /// The [`JointMap::key`] of the source's skeleton and the target's, under which a
    /// hand-made map for them is kept.
    pub map_key: String,
    /// The hand-made map the joints were matched with (empty when none was kept).
    pub map: JointMap,
    pub clips: Vec<ClipReport>,
    /// The target's locals in its retarget pose for this source (see [`retarget_pose`](super::retarget_pose)).
    pub retarget_pose: Vec<Trs>,
}

impl RetargetReport {
    /// A few lines for the command line: per clip its channels, and the joints left unmatched.
    pub fn summary(&self) -> String {
        let mut text = String::new();
        for clip in &self.clips {
            text += &format!(
                "clip '{}': {} channels matched, {} dropped",
                clip.name,
                clip.matched_channels,
                clip.dropped_channels.len()
            );
            if !clip.dropped_channels.is_empty() {
                let listed = &clip.dropped_channels[..clip.dropped_channels.len().min(DROPPED_LISTED)];
                let more = clip.dropped_channels.len() - listed.len();
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                text += &format!(" ({}{more})", listed.join(", "));
            }
            if let Some(root) = &clip.root {
                text += &format!("; root {root} travel ×{:.3}", clip.root_scale);
            }
            if clip.matched_morph_channels > 0 {
                text += &format!("; {} morph weight channels", clip.matched_morph_channels);
            }
            if !clip.dropped_expressions.is_empty() {
                text += &format!(
                    "; expressions the target has no binds for: {}",
                    clip.dropped_expressions.join(", ")
                );
            }
            if !clip.gaze.is_empty() {
                text += &format!("; gaze turns {}", clip.gaze.join(", "));
            }
            text += "\n";
            if let Some(worst) = clip.worst_limb() {
                let listed: Vec<String> = clip
                    .limbs
                    .iter()
                    .take(LIMBS_LISTED)
                    .map(|l| format!("{} {:.2}° at {:.2} s", l.joint, l.degrees, l.time))
                    .collect();
                text += &format!(
                    "  limb directions against the source, {} bones: worst {:.2}° ({})\n",
                    clip.limbs.len(),
                    worst.degrees,
                    listed.join(", ")
                );
            }
        }
        let list = |names: &[String]| {
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        };
        text += &format!("source joints unmatched: {}\n", list(&self.joints.unmatched_source));
        text += &format!("target joints unmatched: {}\n", list(&self.joints.unmatched_target));
        for (from, to) in &self.joints.stale_by_hand {
            text += &format!("hand-made pair {from} → {to} names no such joint; left out\n");
        }
        text
    }
}
