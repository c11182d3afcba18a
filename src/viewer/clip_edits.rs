//! A document's clip list as edits of its rig: which rig clip is which animation of the file,
//! the edits made since it was read (rename, trim, in place, drop, a pose saved as a clip), the animations a save writes
//! for them, and the snapshots of the document's clip data that undo and redo exchange (see
//! `history.rs`).
//!
//! The rig's clips are edited in place (the view previews an edit at once) through
//! [`crate::anim::clip_edit`]; beside them each clip keeps its [`ClipOrigin`], so that a save
//! keeps an untouched animation as the file has it (renamed if renamed) and encodes only edited
//! and carried clips anew. Undo puts back the clip data exactly as it was (clips, their morph
//! weight channels, the import facts that are per clip, origins).

use crate::anim::clip_edit::{self, ClipEditError};
use crate::retarget::CarriedClips;
use crate::rig::{Channel, ChannelFacts, Clip, DroppedChannel, Interpolation, MorphChannel, Property, Rig, Trs};
use crate::save::PlannedAnimation;
use glam::Vec4;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One edit of a document's clip list. Clips are named by their index in the rig at the time
/// of the edit.
#[derive(Debug, Clone, PartialEq)]
pub enum ClipEdit {
    Rename {
        clip: usize,
        name: String,
    },
    /// Keeps `start..end` seconds, moved to begin at 0 (see [`clip_edit::trim`]).
    Trim {
        clip: usize,
        start: f32,
        end: f32,
    },
    /// Takes the horizontal travel out (see [`clip_edit::in_place`]).
    InPlace {
        clip: usize,
    },
    /// Keys every channel at `rate` a second, then drops those linear interpolation restores
    /// within the default tolerances (see [`clip_edit::resample`]).
    Resample {
        clip: usize,
        rate: f32,
    },
    Drop {
        clip: usize,
    },
    /// Holds the feet on their contacts and bakes it into the keys (see
    /// [`crate::motion::foot_lock::bake_foot_lock`]).
    LockFeet {
        clip: usize,
    },
    /// Adds a clip named `name` at index `clip` (after the last) holding one key, at 0 s, of each
    /// node's local transform in `pose` (a pose saved as a clip).
    AddPose {
        clip: usize,
        name: String,
        pose: Vec<(usize, Trs)>,
    },
    /// Appends the clips of a clip file carried onto the rig (File ▸ Load clips from…,
    /// `--clips`), renamed where a name is taken (see [`CarriedClips::add_to`]).
    AddCarried {
        carried: Arc<CarriedClips>,
    },
    /// Takes out the clips carried from `carried`'s file and adds them as carried again (the
    /// Joint mapping window's Apply, with other joint pairs).
    Recarry {
        carried: Arc<CarriedClips>,
    },
}

impl ClipEdit {
    /// The clip the edit changes (`None`: it adds clips after the last).
    pub fn clip(&self) -> Option<usize> {
        match *self {
            ClipEdit::Rename { clip, .. }
            | ClipEdit::Trim { clip, .. }
            | ClipEdit::InPlace { clip }
            | ClipEdit::Resample { clip, .. }
            | ClipEdit::Drop { clip }
            | ClipEdit::LockFeet { clip }
            | ClipEdit::AddPose { clip, .. } => Some(clip),
            ClipEdit::AddCarried { .. } | ClipEdit::Recarry { .. } => None,
        }
    }

    /// How Edit ▸ Undo names the edit made on `rig` (as it was before): "trim Walk".
    pub fn label(&self, rig: &Rig) -> String {
        match self {
            ClipEdit::AddPose { name, .. } => return format!("save pose as {name}"),
            ClipEdit::AddCarried { carried } => return format!("load clips from {}", file_name(&carried.origin)),
            ClipEdit::Recarry { carried } => return format!("map joints of {}", file_name(&carried.origin)),
            _ => {}
        }
        let name = (self.clip().and_then(|c| rig.clips.get(c))).map_or("?", |c| c.name.as_str());
        match self {
            ClipEdit::Rename { name: new, .. } => format!("rename {name} to {new}"),
            ClipEdit::Trim { .. } => format!("trim {name}"),
            ClipEdit::InPlace { .. } => format!("in place {name}"),
            ClipEdit::Resample { rate, .. } => format!("resample {name} at {rate} fps"),
            ClipEdit::Drop { .. } => format!("drop {name}"),
            ClipEdit::LockFeet { .. } => format!("lock the feet of {name}"),
            ClipEdit::AddPose { .. } | ClipEdit::AddCarried { .. } | ClipEdit::Recarry { .. } => {
                unreachable!("named above")
            }
        }
    }

    /// Makes the edit on `rig`; an edit that adds clips records here the names they got.
    fn apply(&mut self, rig: &mut Rig) -> Result<(), ClipEditError> {
        match *self {
            ClipEdit::Rename { clip, ref name } => clip_edit::rename(rig, clip, name),
            ClipEdit::Trim { clip, start, end } => clip_edit::trim(rig, clip, start, end),
            ClipEdit::InPlace { clip } => clip_edit::in_place(rig, clip),
            ClipEdit::Resample { clip, rate } => {
                clip_edit::resample(rig, clip, rate, &clip_edit::ResampleTolerance::default()).map(drop)
            }
            ClipEdit::Drop { clip } => clip_edit::drop_clip(rig, clip).map(drop),
            ClipEdit::LockFeet { clip } => {
                let options = crate::motion::foot_lock::FootLockOptions::default();
                crate::motion::foot_lock::bake_foot_lock(rig, clip, &options)
                    .map(drop)
                    .map_err(ClipEditError::from)
            }
            ClipEdit::AddPose {
                clip,
                ref name,
                ref pose,
            } => add_pose_clip(rig, clip, name, pose),
            ClipEdit::AddCarried { ref mut carried } => {
                Arc::make_mut(carried).add_to(rig);
                Ok(())
            }
            ClipEdit::Recarry { ref mut carried } => {
                for clip in carried_from(rig, &carried.origin).into_iter().rev() {
                    clip_edit::drop_clip(rig, clip)?;
                }
                Arc::make_mut(carried).add_to(rig);
                Ok(())
            }
        }
    }
}

/// The indices of `rig`'s clips carried from `file`, in order.
fn carried_from(rig: &Rig, file: &Path) -> Vec<usize> {
    (rig.clips.iter().enumerate())
        .filter(|(_, c)| c.source.as_deref() == Some(file))
        .map(|(i, _)| i)
        .collect()
}

/// A path as a short label names it: its file name.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into_owned())
}

/// Adds the one-key clip of [`ClipEdit::AddPose`]; nodes the rig does not have (it was reloaded
/// with fewer) are left out.
fn add_pose_clip(rig: &mut Rig, clip: usize, name: &str, pose: &[(usize, Trs)]) -> Result<(), ClipEditError> {
    if clip != rig.clips.len() {
        return Err(ClipEditError::ClipOutOfRange {
            index: clip,
            count: rig.clips.len(),
        });
    }
    if name.is_empty() {
        return Err(ClipEditError::EmptyName);
    }
    if let Some(other) = rig.clips.iter().position(|c| c.name == name) {
        return Err(ClipEditError::NameTaken {
            name: name.to_owned(),
            other,
        });
    }
    let key = |node: usize, property: Property, value: Vec4| Channel {
        node,
        property,
        interpolation: Interpolation::Step,
        times: vec![0.0],
        values: vec![value],
    };
    let channels = (pose.iter())
        .filter(|(node, _)| *node < rig.nodes.len())
        .flat_map(|&(node, trs)| {
            [
                key(node, Property::Translation, trs.translation.extend(0.0)),
                key(node, Property::Rotation, Vec4::from(trs.rotation)),
                key(node, Property::Scale, trs.scale.extend(0.0)),
            ]
        })
        .collect();
    rig.clips.push(Clip {
        name: name.to_owned(),
        duration: 0.0,
        channels,
        source: None,
    });
    // The import facts are per clip, index for index.
    if rig.facts.channels.len() == clip {
        rig.facts.channels.push(Vec::new());
    }
    // Without skins, which nodes count as bones depends on the clips' channels.
    rig.hierarchy_cache = Default::default();
    Ok(())
}

/// Where one clip of the rig comes from, and whether its keys changed since.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipOrigin {
    /// Unique among the clips of one record (their indices as read): follows the clip through edits, undo and
    /// redo, which move clips to other indices, so that playback stays on the clip it showed.
    pub id: u64,
    /// The file's animation the clip was read from; `None` for a clip carried from another
    /// file, which exists only in the rig.
    pub animation: Option<usize>,
    /// Its name as read.
    pub name_read: String,
    /// Its keys were edited (trim, in place): a save encodes it anew.
    pub keys_changed: bool,
}

/// The document's clip data that edits change, as it was at one moment.
#[derive(Debug, Clone)]
pub(super) struct ClipSnapshot {
    clips: Vec<Clip>,
    morph_channels: Vec<MorphChannel>,
    channel_facts: Vec<Vec<ChannelFacts>>,
    dropped_channels: Vec<DroppedChannel>,
    origins: Vec<ClipOrigin>,
    log: Vec<ClipEdit>,
}

#[cfg(test)]
impl ClipSnapshot {
    pub(super) fn empty_for_tests() -> ClipSnapshot {
        ClipEdits::for_rig(&Rig::default()).snapshot(&Rig::default())
    }
}

/// A document's clip record, kept beside its rig (whose clips it describes, index for index).
#[derive(Debug, Clone)]
pub struct ClipEdits {
    origins: Vec<ClipOrigin>,
    /// The edits made since the file was read, in order, as made: replayed on a reload (see
    /// [`ClipEdits::replayed`]); undo takes them back off.
    log: Vec<ClipEdit>,
}

/// An edit made again on a reloaded rig: its label and the clip data before it, for the
/// document's history.
pub(super) type ReplayedStep = (String, ClipSnapshot);

/// An edit that could not be made again on a reloaded rig.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayFailure {
    pub edit: ClipEdit,
    pub error: ClipEditError,
    /// Edits after it that were left out (their clip indices may no longer mean the same clips).
    pub skipped: usize,
}

impl ClipEdits {
    /// The record of `rig` as read from its file: its own clips (which come first, in the
    /// file's order) are the file's animations, the clips carried from other files follow.
    pub fn for_rig(rig: &Rig) -> ClipEdits {
        let origins: Vec<ClipOrigin> = (rig.clips.iter().enumerate())
            .map(|(i, clip)| ClipOrigin {
                id: i as u64,
                animation: clip.source.is_none().then_some(i),
                name_read: clip.name.clone(),
                keys_changed: false,
            })
            .collect();
        // Clips added later take ids above every id in the record, so the indices as read are
        // ids no later clip can take.
        ClipEdits {
            origins,
            log: Vec::new(),
        }
    }

    /// The record of `rig` (freshly read) with `log` made on it again, in order, with each
    /// edit's undo step as when first made; clips carried from a file are added as `recarried`
    /// carries them onto the fresh rig where it has that file (the file or the joint pairs may
    /// have changed). Stops at the first edit that fails: the edits after it name clips by
    /// index, which would no longer be the clips they meant.
    pub(super) fn replayed(
        rig: &mut Rig,
        log: &[ClipEdit],
        recarried: &[Arc<CarriedClips>],
    ) -> (ClipEdits, Vec<ReplayedStep>, Option<ReplayFailure>) {
        let mut edits = ClipEdits::for_rig(rig);
        let mut steps = Vec::with_capacity(log.len());
        let fresh = |carried: &Arc<CarriedClips>| {
            (recarried.iter())
                .find(|fresh| fresh.origin == carried.origin)
                .unwrap_or(carried)
                .clone()
        };
        for (k, edit) in log.iter().enumerate() {
            let edit = match edit {
                ClipEdit::AddCarried { carried } => ClipEdit::AddCarried {
                    carried: fresh(carried),
                },
                ClipEdit::Recarry { carried } => ClipEdit::Recarry {
                    carried: fresh(carried),
                },
                _ => edit.clone(),
            };
            let label = edit.label(rig);
            match edits.apply(rig, edit.clone()) {
                Ok(before) => steps.push((label, before)),
                Err(error) => {
                    let failure = ReplayFailure {
                        edit,
                        error,
                        skipped: log.len() - k - 1,
                    };
                    return (edits, steps, Some(failure));
                }
            }
        }
        (edits, steps, None)
    }

    pub fn origins(&self) -> &[ClipOrigin] {
        &self.origins
    }

    /// The edits made since the file was read (less those undone).
    pub fn log(&self) -> &[ClipEdit] {
        &self.log
    }

    /// The clip files whose clips were added and are still in the record, in the order they
    /// were added, with what carrying each matched (clip names as the file has them).
    pub fn carried(&self) -> Vec<&CarriedClips> {
        let mut files: Vec<&CarriedClips> = Vec::new();
        for edit in &self.log {
            if let ClipEdit::AddCarried { carried } | ClipEdit::Recarry { carried } = edit {
                // A file carried again (other joint pairs) keeps its place, as carried last.
                match files.iter_mut().find(|c| c.origin == carried.origin) {
                    Some(slot) => *slot = carried,
                    None => files.push(carried),
                }
            }
        }
        files
    }

    /// The files of [`ClipEdits::carried`].
    pub fn clip_files(&self) -> Vec<PathBuf> {
        self.carried().into_iter().map(|c| c.origin.clone()).collect()
    }

    /// Each clip's id, in rig order (see [`ClipOrigin::id`]).
    pub fn ids(&self) -> Vec<u64> {
        self.origins.iter().map(|o| o.id).collect()
    }

    /// Whether clip `clip` of `rig` differs from the file's animation it was read as: renamed,
    /// or its keys edited.
    pub fn is_changed(&self, rig: &Rig, clip: usize) -> bool {
        match (self.origins.get(clip), rig.clips.get(clip)) {
            (Some(origin), Some(current)) => origin.keys_changed || current.name != origin.name_read,
            _ => false,
        }
    }

    /// The animations a save writes for `rig`'s clips, in rig order: an untouched clip of the
    /// file as the file has it (renamed where its name changed), an edited or carried clip
    /// encoded anew; a dropped clip is in neither, so the save leaves it out.
    pub fn plan(&self, rig: &Rig) -> Vec<PlannedAnimation> {
        (self.origins.iter().zip(&rig.clips).enumerate())
            .map(|(clip, (origin, current))| match origin.animation {
                Some(index) if !origin.keys_changed => PlannedAnimation::Original {
                    index,
                    name: (current.name != origin.name_read).then(|| current.name.clone()),
                },
                _ => PlannedAnimation::Clip { clip },
            })
            .collect()
    }

    /// Makes `edit` on `rig` and records it, returning the clip data before it (for the undo
    /// step); on an error the rig and the record are as they were.
    pub(super) fn apply(&mut self, rig: &mut Rig, mut edit: ClipEdit) -> Result<ClipSnapshot, ClipEditError> {
        let before = self.snapshot(rig);
        let replaced = match &edit {
            ClipEdit::Recarry { carried } => carried_from(rig, &carried.origin),
            _ => Vec::new(),
        };
        if let Err(e) = edit.apply(rig) {
            // The edits promise to leave the rig alone on an error; putting the snapshot back
            // makes that hold whatever an edit did before it failed.
            self.restore(rig, before);
            return Err(e);
        }
        match edit {
            ClipEdit::Drop { clip } => {
                self.origins.remove(clip);
            }
            ClipEdit::Trim { clip, .. }
            | ClipEdit::InPlace { clip }
            | ClipEdit::Resample { clip, .. }
            | ClipEdit::LockFeet { clip } => self.origins[clip].keys_changed = true,
            ClipEdit::Rename { .. } => {}
            ClipEdit::AddPose { .. } | ClipEdit::AddCarried { .. } | ClipEdit::Recarry { .. } => {
                // Larger than every id in the record, so no clip shown before is taken for one
                // of them.
                let first_id = self.origins.iter().map(|o| o.id + 1).max().unwrap_or(0);
                for &clip in replaced.iter().rev() {
                    self.origins.remove(clip);
                }
                let added = &rig.clips[self.origins.len()..];
                for (id, clip) in (first_id..).zip(added) {
                    self.origins.push(ClipOrigin {
                        id,
                        animation: None,
                        name_read: clip.name.clone(),
                        keys_changed: true,
                    });
                }
            }
        }
        self.log.push(edit);
        Ok(before)
    }

    /// Puts `state`'s clip data into `rig` and this record, and keeps the data they had in
    /// `state` (undo and redo are the same exchange).
    pub(super) fn exchange(&mut self, rig: &mut Rig, state: &mut ClipSnapshot) {
        let now = self.snapshot(rig);
        let then = std::mem::replace(state, now);
        self.restore(rig, then);
    }

    fn snapshot(&self, rig: &Rig) -> ClipSnapshot {
        ClipSnapshot {
            clips: rig.clips.clone(),
            morph_channels: rig.morphs.channels.clone(),
            channel_facts: rig.facts.channels.clone(),
            dropped_channels: rig.facts.dropped_channels.clone(),
            origins: self.origins.clone(),
            log: self.log.clone(),
        }
    }

    fn restore(&mut self, rig: &mut Rig, state: ClipSnapshot) {
        rig.clips = state.clips;
        rig.morphs.channels = state.morph_channels;
        rig.facts.channels = state.channel_facts;
        rig.facts.dropped_channels = state.dropped_channels;
        // Without skins, which nodes count as bones depends on the clips' channels.
        rig.hierarchy_cache = Default::default();
        self.origins = state.origins;
        self.log = state.log;
    }
}

#[cfg(test)]
mod tests;
