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
use crate::rig::{Channel, ChannelFacts, Clip, DroppedChannel, Interpolation, MorphChannel, Property, Rig, Trs};
use crate::save::PlannedAnimation;
use glam::Vec4;

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
}

impl ClipEdit {
    /// The clip the edit changes.
    pub fn clip(&self) -> usize {
        match *self {
            ClipEdit::Rename { clip, .. }
            | ClipEdit::Trim { clip, .. }
            | ClipEdit::InPlace { clip }
            | ClipEdit::Resample { clip, .. }
            | ClipEdit::Drop { clip }
            | ClipEdit::LockFeet { clip }
            | ClipEdit::AddPose { clip, .. } => clip,
        }
    }

    /// How Edit ▸ Undo names the edit made on `rig` (as it was before): "trim Walk".
    pub fn label(&self, rig: &Rig) -> String {
        if let ClipEdit::AddPose { name, .. } = self {
            return format!("save pose as {name}");
        }
        let name = rig.clips.get(self.clip()).map_or("?", |c| c.name.as_str());
        match self {
            ClipEdit::Rename { name: new, .. } => format!("rename {name} to {new}"),
            ClipEdit::Trim { .. } => format!("trim {name}"),
            ClipEdit::InPlace { .. } => format!("in place {name}"),
            ClipEdit::Resample { rate, .. } => format!("resample {name} at {rate} fps"),
            ClipEdit::Drop { .. } => format!("drop {name}"),
            ClipEdit::LockFeet { .. } => format!("lock the feet of {name}"),
            ClipEdit::AddPose { .. } => unreachable!("named above"),
        }
    }

    fn apply(&self, rig: &mut Rig) -> Result<(), ClipEditError> {
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
        }
    }
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
        // Edits only ever remove clips (carried clips arrive with a reload, which makes a new
        // record), so the indices as read are ids no later clip can take.
        ClipEdits {
            origins,
            log: Vec::new(),
        }
    }

    /// The record of `rig` (freshly read) with `log` made on it again, in order, with each
    /// edit's undo step as when first made. Stops at the first edit that fails: the edits after
    /// it name clips by index, which would no longer be the clips they meant.
    pub(super) fn replayed(rig: &mut Rig, log: &[ClipEdit]) -> (ClipEdits, Vec<ReplayedStep>, Option<ReplayFailure>) {
        let mut edits = ClipEdits::for_rig(rig);
        let mut steps = Vec::with_capacity(log.len());
        for (k, edit) in log.iter().enumerate() {
            let label = edit.label(rig);
            match edits.apply(rig, edit.clone()) {
                Ok(before) => steps.push((label, before)),
                Err(error) => {
                    let failure = ReplayFailure {
                        edit: edit.clone(),
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
    pub(super) fn apply(&mut self, rig: &mut Rig, edit: ClipEdit) -> Result<ClipSnapshot, ClipEditError> {
        let before = self.snapshot(rig);
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
            ClipEdit::AddPose { ref name, .. } => {
                // Larger than every id in the record, so no clip shown before is taken for it.
                let id = self.origins.iter().map(|o| o.id + 1).max().unwrap_or(0);
                self.origins.push(ClipOrigin {
                    id,
                    animation: None,
                    name_read: name.clone(),
                    keys_changed: true,
                });
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
mod tests {
    use super::*;
    use crate::rig::{Channel, Interpolation, Node, Property, Trs};
    use glam::{Quat, Vec3, Vec4};

    /// Three clips of the file (the second with a morph weight channel) and one carried from
    /// another file.
    fn rig() -> Rig {
        let node = |name: &str, parent: Option<usize>| Node {
            name: name.into(),
            parent,
            rest: Trs::IDENTITY,
        };
        let clip = |name: &str, travel: f32, source: Option<&str>| {
            let times: Vec<f32> = (0..5).map(|k| 0.25 * k as f32).collect();
            Clip {
                name: name.into(),
                duration: 1.0,
                channels: vec![
                    Channel {
                        node: 1,
                        property: Property::Translation,
                        interpolation: Interpolation::Linear,
                        values: times
                            .iter()
                            .map(|&t| Vec4::new(travel * t, 1.0 + 0.1 * t, 0.0, 0.0))
                            .collect(),
                        times: times.clone(),
                    },
                    Channel {
                        node: 2,
                        property: Property::Rotation,
                        interpolation: Interpolation::Linear,
                        values: times
                            .iter()
                            .map(|&t| Vec4::from(Quat::from_rotation_z(travel * t)))
                            .collect(),
                        times,
                    },
                ],
                source: source.map(Into::into),
            }
        };
        let mut rig = Rig {
            nodes: vec![node("Armature", None), node("Hips", Some(0)), node("Spine", Some(1))],
            clips: vec![
                clip("Walk", 1.0, None),
                clip("Run", 3.0, None),
                clip("Idle", 0.0, None),
                clip("Dance", 0.5, Some("dance.glb")),
            ],
            ..Rig::default()
        };
        rig.morphs.channels.push(MorphChannel {
            clip: 1,
            node: 2,
            interpolation: Interpolation::Linear,
            times: vec![0.0, 1.0],
            values: vec![0.0, 1.0],
            targets: 1,
        });
        rig.facts.channels = vec![vec![ChannelFacts::default(); 2]; 4];
        rig
    }

    /// Every bit of the clip data an edit may change.
    fn bits(rig: &Rig) -> String {
        format!(
            "{:?} {:?} {:?} {:?}",
            rig.clips, rig.morphs.channels, rig.facts.channels, rig.facts.dropped_channels
        )
    }

    fn original(index: usize, name: Option<&str>) -> PlannedAnimation {
        PlannedAnimation::Original {
            index,
            name: name.map(Into::into),
        }
    }

    #[test]
    fn an_unedited_document_keeps_its_animations_and_encodes_carried_clips() {
        let rig = rig();
        let edits = ClipEdits::for_rig(&rig);
        let plan = edits.plan(&rig);
        assert_eq!(
            plan,
            [
                original(0, None),
                original(1, None),
                original(2, None),
                PlannedAnimation::Clip { clip: 3 }
            ]
        );
        assert!((0..4).all(|c| !edits.is_changed(&rig, c)));
    }

    #[test]
    fn the_plan_follows_renames_trims_and_drops() {
        let mut rig = rig();
        let mut edits = ClipEdits::for_rig(&rig);
        let rename = |clip, name: &str| ClipEdit::Rename {
            clip,
            name: name.into(),
        };
        edits.apply(&mut rig, rename(0, "Stroll")).unwrap();
        edits
            .apply(
                &mut rig,
                ClipEdit::Trim {
                    clip: 1,
                    start: 0.25,
                    end: 0.75,
                },
            )
            .unwrap();
        edits.apply(&mut rig, ClipEdit::Drop { clip: 2 }).unwrap();
        // The carried clip moved down to 2; the trimmed one is written from the rig.
        assert_eq!(
            edits.plan(&rig),
            [
                original(0, Some("Stroll")),
                PlannedAnimation::Clip { clip: 1 },
                PlannedAnimation::Clip { clip: 2 }
            ]
        );
        assert_eq!(rig.clips[2].name, "Dance");
        assert!(edits.is_changed(&rig, 0) && edits.is_changed(&rig, 1) && !edits.is_changed(&rig, 2));
        assert_eq!(rig.clips[1].duration, 0.5);

        // Renamed back to its name as read, it is the file's animation untouched again.
        edits.apply(&mut rig, rename(0, "Walk")).unwrap();
        assert_eq!(edits.plan(&rig)[0], original(0, None));
        assert!(!edits.is_changed(&rig, 0));
        // Dropping the first clip moves the trimmed one to index 0, still encoded anew.
        edits.apply(&mut rig, ClipEdit::Drop { clip: 0 }).unwrap();
        assert_eq!(
            edits.plan(&rig),
            [PlannedAnimation::Clip { clip: 0 }, PlannedAnimation::Clip { clip: 1 }]
        );
        assert_eq!(edits.log().len(), 5);
    }

    #[test]
    fn exchanging_snapshots_undoes_and_redoes_every_bit_and_the_plan() {
        let mut rig = rig();
        let mut edits = ClipEdits::for_rig(&rig);
        let mut states = vec![(bits(&rig), edits.plan(&rig), edits.ids())];
        let script = [
            ClipEdit::Trim {
                clip: 1,
                start: 0.1,
                end: 0.9,
            },
            ClipEdit::Rename {
                clip: 1,
                name: "Sprint".into(),
            },
            ClipEdit::InPlace { clip: 0 },
            ClipEdit::Resample { clip: 1, rate: 30.0 },
            ClipEdit::Drop { clip: 1 },
            ClipEdit::Drop { clip: 0 },
        ];
        let mut undo = Vec::new();
        for edit in &script {
            undo.push(edits.apply(&mut rig, edit.clone()).unwrap());
            states.push((bits(&rig), edits.plan(&rig), edits.ids()));
        }
        assert!(rig.morphs.channels.is_empty(), "the dropped Run took its morph channel");
        let mut redo = Vec::new();
        for k in (0..script.len()).rev() {
            let mut step = undo.pop().unwrap();
            edits.exchange(&mut rig, &mut step);
            redo.push(step);
            assert_eq!(
                (bits(&rig), edits.plan(&rig), edits.ids()),
                states[k],
                "undo to state {k}"
            );
        }
        assert!(edits.log().is_empty());
        for (k, state) in states.iter().enumerate().skip(1) {
            let mut step = redo.pop().unwrap();
            edits.exchange(&mut rig, &mut step);
            assert_eq!(&(bits(&rig), edits.plan(&rig), edits.ids()), state, "redo to state {k}");
        }
        assert_eq!(edits.log(), script);
    }

    #[test]
    fn a_pose_saved_as_a_clip_is_one_key_a_node_written_anew_and_undone_whole() {
        let mut rig = rig();
        let mut edits = ClipEdits::for_rig(&rig);
        let bent = Trs {
            translation: Vec3::new(0.0, 1.5, 0.0),
            rotation: Quat::from_rotation_z(0.5),
            scale: Vec3::splat(2.0),
        };
        let save = |clip, name: &str| ClipEdit::AddPose {
            clip,
            name: name.into(),
            pose: vec![(1, Trs::IDENTITY), (2, bent), (7, bent)],
        };
        assert_eq!(save(4, "Bent").label(&rig), "save pose as Bent");
        // A name taken, an empty one, or an index that is not the next one: refused, nothing recorded.
        assert!(matches!(
            edits.apply(&mut rig, save(4, "Walk")),
            Err(ClipEditError::NameTaken { other: 0, .. })
        ));
        assert!(matches!(
            edits.apply(&mut rig, save(4, "")),
            Err(ClipEditError::EmptyName)
        ));
        assert!(
            matches!(
                edits.apply(&mut rig, save(2, "Bent")),
                Err(ClipEditError::ClipOutOfRange { index: 2, count: 4 })
            ),
            "only after the last clip"
        );
        assert_eq!(rig.clips.len(), 4);
        assert!(edits.log().is_empty());

        let before = edits.apply(&mut rig, save(4, "Bent")).unwrap();
        let clip = &rig.clips[4];
        assert_eq!(
            (clip.name.as_str(), clip.duration, clip.source.as_ref()),
            ("Bent", 0.0, None)
        );
        // Translation, rotation and scale of nodes 1 and 2; node 7 is not in this rig.
        assert_eq!(clip.channels.len(), 6);
        let rotation = (clip.channels.iter())
            .find(|c| c.node == 2 && c.property == Property::Rotation)
            .unwrap();
        assert_eq!(
            (rotation.times.as_slice(), rotation.values.as_slice()),
            (&[0.0][..], &[Vec4::from(bent.rotation)][..])
        );
        let mut sampled = vec![Trs::IDENTITY; rig.nodes.len()];
        crate::anim::sample_clip(&rig.nodes, Some(clip), 0.0, &mut [0; 6], &mut sampled);
        assert_eq!(sampled[2], bent);
        // A new clip has no animation in the file: a save encodes it; its id is one no other clip has.
        assert_eq!(edits.plan(&rig)[4], PlannedAnimation::Clip { clip: 4 });
        let ids = edits.ids();
        assert_eq!(ids.len(), 5);
        assert!(ids[..4].iter().all(|&id| id != ids[4]));

        let mut state = before;
        edits.exchange(&mut rig, &mut state);
        assert_eq!(rig.clips.len(), 4, "undone");
        assert!(edits.log().is_empty());
    }

    #[test]
    fn a_failed_edit_changes_nothing_and_is_not_recorded() {
        let mut rig = rig();
        let mut edits = ClipEdits::for_rig(&rig);
        let before = bits(&rig);
        let taken = ClipEdit::Rename {
            clip: 0,
            name: "Run".into(),
        };
        assert!(matches!(
            edits.apply(&mut rig, taken),
            Err(ClipEditError::NameTaken { other: 1, .. })
        ));
        let backwards = ClipEdit::Trim {
            clip: 0,
            start: 0.5,
            end: 0.2,
        };
        assert!(edits.apply(&mut rig, backwards).is_err());
        assert!(edits.apply(&mut rig, ClipEdit::Drop { clip: 9 }).is_err());
        assert_eq!(bits(&rig), before);
        assert!(edits.log().is_empty());
    }

    #[test]
    fn a_reload_makes_the_edits_again_and_stops_at_one_that_no_longer_fits() {
        let mut edited = rig();
        let mut edits = ClipEdits::for_rig(&edited);
        let log = [
            ClipEdit::Drop { clip: 0 },
            ClipEdit::Trim {
                clip: 0,
                start: 0.5,
                end: 1.0,
            },
            ClipEdit::Rename {
                clip: 1,
                name: "Rest".into(),
            },
        ];
        for edit in &log {
            edits.apply(&mut edited, edit.clone()).unwrap();
        }
        let mut reloaded = rig();
        let (again, steps, failure) = ClipEdits::replayed(&mut reloaded, edits.log());
        assert_eq!(failure, None);
        assert_eq!(bits(&reloaded), bits(&edited));
        assert_eq!(again.plan(&reloaded), edits.plan(&edited));
        let labels: Vec<&str> = steps.iter().map(|(label, _)| label.as_str()).collect();
        assert_eq!(labels, ["drop Walk", "trim Run", "rename Idle to Rest"]);

        // The file changed on disk: its first clip is now too short for the trim.
        let mut shorter = rig();
        clip_edit::trim(&mut shorter, 1, 0.0, 0.25).unwrap();
        let (partial, steps, failure) = ClipEdits::replayed(&mut shorter, edits.log());
        assert_eq!(steps.len(), 1);
        let failure = failure.expect("the trim no longer fits");
        assert_eq!((failure.edit.clone(), failure.skipped), (log[1].clone(), 1));
        assert!(matches!(failure.error, ClipEditError::TimeOutsideClip { .. }));
        assert_eq!(partial.log(), &log[..1]);
        assert_eq!(shorter.clips.len(), 3);
    }

    #[test]
    fn in_place_keeps_the_height_and_takes_the_travel_out() {
        let mut rig = rig();
        let mut edits = ClipEdits::for_rig(&rig);
        let walk = rig.clips[0].clone();
        edits.apply(&mut rig, ClipEdit::InPlace { clip: 0 }).unwrap();
        let mut expected = walk.clone();
        // Independently: the motion root (Hips, under an unmoving identity parent) keeps its
        // rest place's x and z (0) and its own height at every key.
        for value in &mut expected.channels[0].values {
            *value = Vec4::new(0.0, value.y, 0.0, 0.0);
        }
        let got = &rig.clips[0].channels[0];
        assert_eq!(got.times, expected.channels[0].times);
        for (g, w) in got.values.iter().zip(&expected.channels[0].values) {
            assert!((*g - *w).abs().max_element() < 1e-6, "{g} against {w}");
        }
        assert_eq!(
            format!("{:?}", rig.clips[0].channels[1]),
            format!("{:?}", walk.channels[1])
        );
        assert_eq!(edits.plan(&rig)[0], PlannedAnimation::Clip { clip: 0 });
    }
}
