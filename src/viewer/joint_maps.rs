//! Joints of added clips mapped by hand: per clip file, what name matching left unmatched on
//! both sides and the pairs kept for that pair of skeletons; applying the pairs loads the clips
//! again with them.

use super::Viewer;
use crate::retarget::{JointMap, LimbError, RetargetReport};
use std::path::PathBuf;

/// What the hand-mapping table shows for one clip file added to the active document.
#[derive(Debug, Clone, PartialEq)]
pub struct JointMapTable {
    /// The clip file.
    pub file: PathBuf,
    /// The [`JointMap::key`] of the file's skeleton and the rig's.
    pub key: String,
    /// The clip file's joints that drive nothing, by name, in node order.
    pub unmatched_source: Vec<String>,
    /// The rig's joints nothing drives, by name, in node order.
    pub unmatched_target: Vec<String>,
    /// The pairs kept for the two skeletons, source → target.
    pub by_hand: Vec<(String, String)>,
    /// Kept pairs that name a joint one of the rigs lacks (left out when the clips loaded).
    pub stale: Vec<(String, String)>,
    /// The kept pairs differ from those the clips were loaded with: applying loads them again.
    pub changed: bool,
    /// Per carried clip, its name and the bone pointing furthest from the source's over it.
    pub worst_limbs: Vec<(String, Option<LimbError>)>,
}

impl JointMapTable {
    fn new(file: &std::path::Path, report: &RetargetReport, kept: Option<&JointMap>) -> JointMapTable {
        let kept_pairs = kept.map(|m| &m.by_hand);
        JointMapTable {
            file: file.to_owned(),
            key: report.map_key.clone(),
            unmatched_source: report.joints.unmatched_source.clone(),
            unmatched_target: report.joints.unmatched_target.clone(),
            by_hand: (kept_pairs.into_iter().flatten())
                .map(|(from, to)| (from.clone(), to.clone()))
                .collect(),
            stale: report.joints.stale_by_hand.clone(),
            changed: kept.cloned().unwrap_or_default() != report.map,
            worst_limbs: (report.clips.iter())
                .map(|clip| (clip.name.clone(), clip.worst_limb().cloned()))
                .collect(),
        }
    }
}

impl Viewer {
    /// One table per clip file added to the active document, in the order they were added.
    pub fn joint_map_tables(&self) -> Vec<JointMapTable> {
        let document = self.document();
        (document.carried().iter())
            .map(|c| JointMapTable::new(&c.origin, &c.report, self.joint_maps.get(&c.report.map_key)))
            .collect()
    }

    /// Keeps `source` (a joint of the clip file) driving `target` (a joint of the rig) for the
    /// skeleton pair `key`, in place of any other pair of either joint; `None` clears the
    /// source joint's pair. Takes effect with [`Viewer::apply_joint_maps`].
    pub fn set_joint_pair(&mut self, key: &str, source: &str, target: Option<&str>) {
        let map = self.joint_maps.entry(key.to_owned()).or_default();
        map.by_hand.remove(source);
        if let Some(target) = target {
            map.by_hand.retain(|_, to| to != target);
            map.by_hand.insert(source.to_owned(), target.to_owned());
        }
        if map.by_hand.is_empty() {
            self.joint_maps.remove(key);
        }
    }

    /// Shows the rig standing in the retarget pose for clip file `file` (the pose its clips are
    /// carried onto: the rig turned into that file's rest pose), or plays again with `None`.
    pub fn show_retarget_pose(&mut self, file: Option<usize>) {
        if self.retarget_pose_shown != file {
            self.retarget_pose_shown = file;
            self.playback.mark_dirty();
        }
    }

    /// The clip file whose retarget pose is shown, if any.
    pub fn retarget_pose_shown(&self) -> Option<usize> {
        self.retarget_pose_shown
    }

    /// Carries the active document's clip files again in the background, their joints matched
    /// with the pairs kept now; the clips carried then replace the old ones as one edit per
    /// file, over every edit made before.
    pub fn apply_joint_maps(&mut self) {
        self.recarry_clip_files();
    }
}
