//! Editing the active document in the window: clip edits previewed at once (the rig's clips
//! change in place, playback follows the clip it showed), pose edits, undo and redo of every
//! kind of edit through the document's history, and saving the edited file (File ▸ Save as…)
//! through the one glTF writer, on a thread of its own in the window.

use super::Viewer;
use super::clip_edits::{ClipEdit, ClipEdits, ReplayFailure, ReplayedStep};
use super::history::{Direction, History, PoseSnapshot, StepState};
use crate::anim::JointOverride;
use crate::anim::clip_edit::ClipEditError;
use crate::job::Job;
use crate::journal::Entry;
use crate::retarget::CarriedClips;
use crate::retarget::pose_copy::PoseClipboard;
use crate::rig::Rig;
use crate::save::{PlannedAnimation, SaveError, SaveOptions, Saved};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a clip edit was not made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClipListError {
    #[error(transparent)]
    Edit(#[from] ClipEditError),
    /// The save reads the clips as they were when it started, and reopens the file it wrote.
    #[error("the file is being saved: edit its clips once the save is done")]
    Saving,
}

/// Why File ▸ Save as… wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum DocumentSaveError {
    #[error("the demo rig has no file to save a copy of")]
    NoFile,
    #[error("a save is already running")]
    Busy,
    #[error(transparent)]
    Save(#[from] SaveError),
    #[error("the save stopped unexpectedly: {0}")]
    Stopped(String),
}

/// A save running on a thread of its own.
pub(super) struct PendingSave {
    output: PathBuf,
    /// The document saved: once written, the file written is loaded in its place.
    generation: u64,
    job: Job<Result<Saved, SaveError>>,
}

/// Whether `path` names an FBX file (which a save refuses; the menu says so before asking).
pub fn is_fbx_path(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("fbx"))
}

/// The name Save as… suggests for an edited copy of `input`: `NAME.edited.glb` (`.gltf` for a
/// `.gltf` input, which keeps its format).
pub fn suggested_save_name(input: &Path) -> String {
    let stem = input.file_stem().map_or_else(|| "rig".into(), |s| s.to_string_lossy());
    let gltf = input.extension().is_some_and(|e| e.eq_ignore_ascii_case("gltf"));
    format!("{stem}.edited.{}", if gltf { "gltf" } else { "glb" })
}

/// A document as the pose clipboard names it: its file's name, or "the demo rig".
fn short_label(path: Option<&Path>) -> String {
    match path.and_then(Path::file_name) {
        Some(name) => name.to_string_lossy().into_owned(),
        None => super::label(path),
    }
}

impl Viewer {
    /// The active document's clip record and history.
    pub fn clip_edits(&self) -> &ClipEdits {
        &self.document().clip_edits
    }

    /// Whether clip `clip` of the active document differs from the animation it was read as.
    pub fn clip_changed(&self, clip: usize) -> bool {
        let document = self.document();
        document.clip_edits.is_changed(&document.rig, clip)
    }

    /// The animations File ▸ Save as… would write for the active document.
    pub fn save_plan(&self) -> Vec<PlannedAnimation> {
        let document = self.document();
        document.clip_edits.plan(&document.rig)
    }

    /// The active document's edit history.
    pub fn history(&self) -> &History {
        &self.document().history
    }

    /// Whether the active document has edits a save would write that are not in its file.
    pub fn has_unsaved_edits(&self) -> bool {
        self.document().history.is_changed()
    }

    /// The open documents with edits not in their files, by name (for the question before
    /// quitting).
    pub fn unsaved_documents(&self) -> Vec<String> {
        (self.documents.iter())
            .filter(|d| d.history.is_changed())
            .map(|d| super::label(d.path.as_deref()))
            .collect()
    }

    /// Why the document cannot be edited now, if it cannot.
    pub fn clip_edit_blocked(&self) -> Option<ClipListError> {
        self.saving.is_some().then_some(ClipListError::Saving)
    }

    /// Makes `edit` on the active document's clips, shown at once; it can be undone.
    pub fn edit_clip(&mut self, edit: ClipEdit) -> Result<(), ClipListError> {
        if let Some(blocked) = self.clip_edit_blocked() {
            return Err(blocked);
        }
        self.write_pose();
        let label = edit.label(self.rig());
        let record = super::recovery::clip_record(&edit);
        let before = self.change_clips(|rig, edits| edits.apply(rig, edit))?;
        self.record_edit(label, StepState::Clips(before));
        self.journal(self.active, Entry::Clip(record));
        Ok(())
    }

    /// Files an edit made on the active document in its history. A new edit ends a repair
    /// preview's before/after toggle: the repair stays, as the edit under this one.
    pub(super) fn record_edit(&mut self, label: String, before: StepState) -> u64 {
        self.end_bend_preview(false);
        let document = &mut self.documents[self.active];
        if document.repair.end_preview_keeping_repair() {
            self.marks.stale = true;
        }
        self.documents[self.active].history.push(label, before)
    }

    /// Notes that the pose (bends, morph weights set by hand, IK goals) is about to change, so
    /// that the change can be undone: the changes of one gesture (until
    /// [`Viewer::end_gesture`]) are one edit.
    pub fn record_pose_edit(&mut self, label: &str) {
        self.end_bend_preview(false);
        if self.documents[self.active].history.joins_open_pose_step() {
            self.note_pose_change();
            return;
        }
        self.write_pose();
        let before = PoseSnapshot::of(&self.playback.animation);
        self.record_edit(label.to_owned(), StepState::Pose(before));
        self.journal(
            self.active,
            Entry::PoseStep {
                label: label.to_owned(),
            },
        );
        self.note_pose_change();
    }

    /// Mirrors the pose left ↔ right (see [`crate::anim::mirror`]) as bends on the clip at
    /// this moment: playback pauses there, and the edit can be undone.
    pub fn mirror_pose(&mut self) -> Result<(), crate::anim::mirror::MirrorError> {
        let rig = Arc::clone(self.rig());
        let pairs = crate::audit::symmetry::name_pairs(&rig);
        let mirror = crate::anim::mirror::PoseMirror::new(&rig, &pairs)?;
        self.refresh(false);
        let posed = &self.playback.pose.locals;
        let mut mirrored = Vec::with_capacity(posed.len());
        mirror.mirror_locals(&rig, posed, &mut mirrored);
        let bends = (posed.iter().zip(&mirrored))
            .zip(&self.playback.animation.overrides)
            .map(|((posed, wanted), bend)| JointOverride::between(&bend.removed_from(posed), wanted))
            .collect();
        self.end_gesture();
        self.record_pose_edit("mirror pose");
        self.player_mut().playing = false;
        self.animation_mut().overrides = bends;
        self.end_gesture();
        Ok(())
    }

    /// The pose as it stands (bends and IK goals included), to paste onto this document or another.
    pub fn copy_pose(&mut self) -> PoseClipboard {
        self.refresh(false);
        let source = short_label(self.document().path.as_deref());
        PoseClipboard::copy(self.rig(), &self.playback.pose.locals, source)
    }

    /// The pose of the other side of a comparison as it is drawn, if a file is compared.
    pub fn copy_other_pose(&self) -> Option<PoseClipboard> {
        let other = self.comparison()?.other();
        let source = short_label(other.document().path.as_deref());
        Some(PoseClipboard::copy(other.rig(), &other.last_pose().locals, source))
    }

    /// Bends the joints of the names in `clipboard` into the pose copied (see
    /// [`PoseClipboard::wanted_locals`]) over the clip at this moment: playback pauses there, and the
    /// edit can be undone. Returns how many joints matched (none: nothing changes).
    pub fn paste_pose(&mut self, clipboard: &PoseClipboard) -> usize {
        let rig = Arc::clone(self.rig());
        let wanted = clipboard.wanted_locals(&rig);
        let matched = wanted.iter().flatten().count();
        if matched == 0 {
            return 0;
        }
        self.refresh(false);
        let posed = &self.playback.pose.locals;
        let bends = (posed.iter().zip(&wanted))
            .zip(&self.playback.animation.overrides)
            .map(|((posed, wanted), bend)| match wanted {
                Some(wanted) => JointOverride::between(&bend.removed_from(posed), wanted),
                None => *bend,
            })
            .collect();
        self.end_gesture();
        self.record_pose_edit(&format!("paste pose from {}", clipboard.source));
        self.player_mut().playing = false;
        self.animation_mut().overrides = bends;
        self.end_gesture();
        matched
    }

    /// Takes the selected joint's bend off, as an edit of its own.
    pub fn reset_selected_joint(&mut self) {
        let Some(node) = self.view.selected_joint else { return };
        self.end_gesture();
        self.set_override(node, JointOverride::IDENTITY);
        self.end_gesture();
    }

    /// Adds the pose as it stands (every bone's local transform) as a clip of one key named `name`,
    /// which Save as… writes; an edit of the clip list that can be undone. Returns the clip's index.
    pub fn save_pose_as_clip(&mut self, name: &str) -> Result<usize, ClipListError> {
        self.refresh(false);
        let rig = self.rig();
        let bones = &rig.hierarchy().bones;
        let pose = (self.playback.pose.locals.iter().enumerate())
            .filter(|(node, _)| bones.get(*node).copied().unwrap_or(false))
            .map(|(node, local)| (node, *local))
            .collect();
        let clip = rig.clips.len();
        self.edit_clip(ClipEdit::AddPose {
            clip,
            name: name.to_owned(),
            pose,
        })?;
        Ok(clip)
    }

    /// The gesture in progress ended (a mouse button was released): the next pose change is
    /// an edit of its own, and the pose it left is journaled.
    pub fn end_gesture(&mut self) {
        self.documents[self.active].history.end_gesture();
        self.write_pose();
    }

    /// Takes back the active document's last edit, whatever its kind; returns its label
    /// (`None`: nothing to undo, or edits are blocked now).
    pub fn undo(&mut self) -> Option<String> {
        self.take_step(Direction::Undo)
    }

    /// Makes the last undone edit again; returns its label.
    pub fn redo(&mut self) -> Option<String> {
        self.take_step(Direction::Redo)
    }

    pub(super) fn take_step(&mut self, direction: Direction) -> Option<String> {
        if self.clip_edit_blocked().is_some() {
            return None;
        }
        self.end_bend_preview(false);
        self.write_pose();
        let mut step = self.documents[self.active].history.take(direction)?;
        self.exchange_state(&mut step.state);
        let label = step.label.clone();
        self.documents[self.active].history.taken(direction, step);
        let entry = match direction {
            Direction::Undo => Entry::Undo,
            Direction::Redo => Entry::Redo,
        };
        self.journal(self.active, entry);
        Some(label)
    }

    /// Puts `state` into the active document (and its playback) and keeps what it replaced.
    fn exchange_state(&mut self, state: &mut StepState) {
        match state {
            StepState::Clips(snapshot) => {
                let exchanged = self.change_clips(|rig, edits| {
                    edits.exchange(rig, snapshot);
                    Ok::<(), std::convert::Infallible>(())
                });
                let Ok(()) = exchanged;
            }
            StepState::Rig(shown) => {
                shown.swap_with(&mut self.documents[self.active]);
                self.marks.stale = true;
                self.mark_dirty();
            }
            StepState::Pose(pose) => {
                pose.exchange(&mut self.playback.animation);
                self.mark_dirty();
            }
        }
    }

    /// Runs `change` on the active document's rig and record; when it succeeds, the document
    /// becomes a new generation (caches made from the old clips are dropped: the report, the
    /// curves, the repair analysis) and playback moves to where its clip went.
    fn change_clips<T, E>(&mut self, change: impl FnOnce(&mut Rig, &mut ClipEdits) -> Result<T, E>) -> Result<T, E> {
        self.change_clips_of(self.active, change)
    }

    /// [`Viewer::change_clips`] on document `index`, shown or not.
    fn change_clips_of<T, E>(
        &mut self,
        index: usize,
        change: impl FnOnce(&mut Rig, &mut ClipEdits) -> Result<T, E>,
    ) -> Result<T, E> {
        let document = &mut self.documents[index];
        let before = document.clip_edits.ids();
        // Cloned only when something else holds the rig (a running check), which keeps its copy.
        let rig = Arc::make_mut(&mut document.rig);
        let done = change(rig, &mut document.clip_edits)?;
        self.last_generation += 1;
        let document = &mut self.documents[index];
        let old = std::mem::replace(&mut document.generation, self.last_generation);
        document.report = None;
        document.repair.forget_analysis();
        let after = document.clip_edits.ids();
        self.follow_generation(old, self.last_generation);
        if index == self.active {
            let document = &self.documents[self.active];
            let moved = |clip: usize| before.get(clip).and_then(|id| after.iter().position(|a| a == id));
            self.playback.clips_changed(&document.rig, moved);
            self.mark_dirty();
        }
        Ok(done)
    }

    /// Adds a clip file's carried clips to document `index` as one edit of its history, in
    /// place of those carried from the file before with `replace`.
    pub(super) fn add_carried_clips(
        &mut self,
        index: usize,
        carried: Arc<CarriedClips>,
        replace: bool,
    ) -> Result<(), ClipEditError> {
        if index == self.active {
            self.write_pose();
        }
        let edit = match replace {
            true => ClipEdit::Recarry { carried },
            false => ClipEdit::AddCarried { carried },
        };
        let label = edit.label(&self.documents[index].rig);
        let record = super::recovery::clip_record(&edit);
        let before = self.change_clips_of(index, |rig, edits| edits.apply(rig, edit))?;
        match index == self.active {
            true => self.record_edit(label, StepState::Clips(before)),
            false => self.documents[index].history.push(label, StepState::Clips(before)),
        };
        self.journal(index, Entry::Clip(record));
        Ok(())
    }

    /// Writes the active document's file with its edits (its clips as edited, see
    /// [`ClipEdits::plan`], and the weights of a repair applied) to `output` (`.glb` or
    /// `.gltf`, never the input), then loads the
    /// file written in the document's place. With [`Viewer::background_checks`] the write runs
    /// on a thread of its own and `Ok(None)` says it started ([`Viewer::poll_save`] takes it);
    /// otherwise it is done here and its result returned.
    pub fn save_as(&mut self, output: &Path) -> Result<Option<Saved>, DocumentSaveError> {
        if self.saving.is_some() {
            return Err(DocumentSaveError::Busy);
        }
        let document = self.document();
        let input = document.path.clone().ok_or(DocumentSaveError::NoFile)?;
        let rig = Arc::clone(&document.rig);
        let plan = document.clip_edits.plan(&rig);
        let weights_read = document.weights_read.clone();
        let generation = document.generation;
        let destination = output.to_owned();
        // An FBX or BVH rig has no glTF to edit: the whole rig is written as a new one, its
        // clips as they are now.
        let write = move || {
            if is_fbx_path(&input) || rig.facts.bvh.is_some() {
                let generator = format!("Rigscope, from {}", rig.name);
                crate::save::write_rig(&rig, &destination, std::slice::from_ref(&input), &generator)
            } else {
                let primitives = match &weights_read {
                    Some(read) => crate::save::changed_primitives(read, &rig)?,
                    None => Vec::new(),
                };
                let edits = crate::save::Edits {
                    primitives: &primitives,
                    animations: Some(crate::save::AnimationPlan { rig: &rig, plan: &plan }),
                };
                crate::save::save_edits(&input, &destination, &edits, SaveOptions::default())
            }
        };
        if self.background_checks {
            self.saving = Some(PendingSave {
                output: output.to_owned(),
                generation,
                job: Job::spawn(write),
            });
            return Ok(None);
        }
        let saved = write()?;
        self.saved(output, generation);
        Ok(Some(saved))
    }

    /// The file being saved, while a save runs.
    pub fn saving(&self) -> Option<&Path> {
        self.saving.as_ref().map(|s| s.output.as_path())
    }

    /// Takes a finished background save: on success the file written is loaded in the saved
    /// document's place and a notice is left for [`Viewer::take_notice`]; a failure goes to the
    /// error window. Returns true when one finished.
    pub fn poll_save(&mut self) -> bool {
        let Some(pending) = self.saving.take() else {
            return false;
        };
        let result = match pending.job.try_wait() {
            Ok(result) => result,
            Err(job) => {
                self.saving = Some(PendingSave { job, ..pending });
                return false;
            }
        };
        self.finish_save(&pending.output, pending.generation, result);
        true
    }

    /// Waits for a background save and takes it (for tests); returns true when one ran.
    pub fn wait_for_save(&mut self) -> bool {
        let Some(pending) = self.saving.take() else {
            return false;
        };
        let result = pending.job.wait();
        self.finish_save(&pending.output, pending.generation, result);
        true
    }

    fn finish_save(
        &mut self,
        output: &Path,
        generation: u64,
        result: Result<Result<Saved, SaveError>, crate::job::Panicked>,
    ) {
        let error = match result {
            Ok(Ok(saved)) => {
                for note in &saved.notes {
                    log::info!("{note}");
                }
                self.saved(output, generation);
                return;
            }
            Ok(Err(e)) => DocumentSaveError::Save(e),
            Err(panicked) => DocumentSaveError::Stopped(panicked.0),
        };
        self.diagnostics.error = Some(format!("cannot save {}: {error}", output.display()));
    }

    /// After `output` was written from document `generation`: the file written opens in its
    /// place, its clips now the file's own (carried clips are in it, so no clip file is added
    /// again), and the edit history starts over.
    fn saved(&mut self, output: &Path, generation: u64) {
        self.notice = Some(format!("Saved {}", output.display()));
        if let Some(document) = self.documents.iter_mut().find(|d| d.generation == generation) {
            // Until the file written is open in its place, its contents are those saved.
            document.history.mark_saved();
            if let Some(journal) = document.journal.take() {
                journal.remove();
            }
            self.start_load(Some(output.to_owned()), Some(generation), Vec::new());
            self.forget_clip_edits_on_load();
        }
    }

    /// A message for the window to show briefly (a save done), taken once.
    pub fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    /// The edits a reload of document `generation` makes again on the rig it read, with what
    /// failed; `None` when the document is gone.
    pub(super) fn replay_clip_edits(
        &self,
        generation: u64,
        rig: &mut Rig,
        recarried: &[Arc<CarriedClips>],
    ) -> Option<(ClipEdits, Vec<ReplayedStep>, Option<String>)> {
        let document = self.documents.iter().find(|d| d.generation == generation)?;
        let log = document.clip_edits.log();
        if log.is_empty() {
            return None;
        }
        let (edits, steps, failure) = ClipEdits::replayed(rig, log, recarried);
        let message = failure.map(|ReplayFailure { edit, error, skipped }| {
            let later = match skipped {
                0 => String::new(),
                1 => "; the edit after it was left out".to_owned(),
                n => format!("; the {n} edits after it were left out"),
            };
            format!(
                "the reloaded file no longer takes the clip edit '{}': {error}{later}",
                edit.label(rig)
            )
        });
        Some((edits, steps, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::demo::DEMO_GLB;

    /// The demo rig (two clips) opened from a file in a folder of its own.
    fn opened() -> (tempfile::TempDir, PathBuf, Viewer) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("demo.glb");
        std::fs::write(&file, DEMO_GLB).unwrap();
        let mut viewer = Viewer::new(Rig::default(), None);
        viewer.open_now(&file).unwrap();
        assert_eq!(viewer.rig().clips.len(), 2);
        (dir, file, viewer)
    }

    fn names(viewer: &Viewer) -> Vec<String> {
        viewer.rig().clips.iter().map(|c| c.name.clone()).collect()
    }

    #[test]
    fn playback_follows_its_clip_through_drops_and_undo() {
        let (_dir, _file, mut viewer) = opened();
        let [first, second] = [0, 1].map(|c| viewer.rig().clips[c].name.clone());
        viewer.select_clip(Some(1));
        let generation = viewer.document().generation;
        viewer.edit_clip(ClipEdit::Drop { clip: 1 }).unwrap();
        assert_ne!(
            viewer.document().generation,
            generation,
            "caches of the old clips are dropped"
        );
        assert_eq!(
            viewer.player().clip,
            Some(0),
            "the shown clip is gone: the last one shows"
        );
        assert_eq!(viewer.undo().as_deref(), Some(format!("drop {second}").as_str()));
        assert_eq!(names(&viewer), [first.clone(), second.clone()]);
        assert_eq!(viewer.player().clip, Some(0), "the clip shown stays shown");

        viewer.select_clip(Some(1));
        let half = viewer.clip_duration() / 2.0;
        viewer.seek(half);
        viewer.edit_clip(ClipEdit::Drop { clip: 0 }).unwrap();
        assert_eq!(
            (viewer.player().clip, viewer.player().time),
            (Some(0), half),
            "moved down, same time"
        );
        viewer.undo();
        assert_eq!((viewer.player().clip, viewer.player().time), (Some(1), half));
        // Every clip dropped: the rest pose.
        viewer.edit_clip(ClipEdit::Drop { clip: 0 }).unwrap();
        viewer.edit_clip(ClipEdit::Drop { clip: 0 }).unwrap();
        assert_eq!(viewer.player().clip, None);
        viewer.pose();
        assert_eq!(viewer.undo(), Some(format!("drop {second}")));
        assert_eq!(viewer.redo(), Some(format!("drop {second}")));
        assert_eq!(viewer.redo(), None);
    }

    #[test]
    fn a_reload_keeps_the_edits_and_a_save_makes_them_the_file_s() {
        let (dir, file, mut viewer) = opened();
        let second = viewer.rig().clips[1].name.clone();
        let duration = viewer.rig().clips[1].duration;
        viewer
            .edit_clip(ClipEdit::Rename {
                clip: 0,
                name: "Swing".into(),
            })
            .unwrap();
        viewer
            .edit_clip(ClipEdit::Trim {
                clip: 1,
                start: 0.0,
                end: duration / 2.0,
            })
            .unwrap();
        let edited = format!("{:?}", viewer.rig().clips);

        viewer.reload();
        assert!(viewer.wait_for_load());
        assert_eq!(
            format!("{:?}", viewer.rig().clips),
            edited,
            "made again on the file read"
        );
        assert_eq!(viewer.history().undo_label(), Some(format!("trim {second}").as_str()));
        assert!(viewer.clip_changed(0) && viewer.clip_changed(1));
        assert!(viewer.diagnostics.error.is_none());

        // In the window the save runs on a thread of its own and reports when done.
        viewer.background_checks = true;
        let output = dir.path().join(suggested_save_name(&file));
        assert_eq!(output.file_name().unwrap(), "demo.edited.glb");
        assert!(viewer.save_as(&output).unwrap().is_none(), "started");
        assert!(matches!(viewer.save_as(&output), Err(DocumentSaveError::Busy)));
        assert_eq!(viewer.edit_clip(ClipEdit::Drop { clip: 0 }), Err(ClipListError::Saving));
        assert!(viewer.wait_for_save());
        assert_eq!(viewer.take_notice(), Some(format!("Saved {}", output.display())));
        assert!(viewer.wait_for_load());
        assert_eq!(viewer.document().path.as_deref(), Some(output.as_path()));
        assert_eq!(names(&viewer), ["Swing".to_owned(), second]);
        assert_eq!(viewer.rig().clips[1].duration, duration / 2.0);
        assert!(
            !viewer.clip_changed(0) && !viewer.clip_changed(1),
            "the file written holds the edits"
        );
        assert_eq!(viewer.history().undo_label(), None);
        assert_eq!(
            viewer.save_plan(),
            [
                PlannedAnimation::Original { index: 0, name: None },
                PlannedAnimation::Original { index: 1, name: None }
            ]
        );

        // A write that fails says so in the error window.
        viewer.background_checks = false;
        let refused = viewer.save_as(&output.with_extension("txt"));
        assert!(matches!(
            refused,
            Err(DocumentSaveError::Save(SaveError::OutputFormat { .. }))
        ));
    }
}
