//! Crash and kill recovery: every edit of a document with a file is appended to its journal
//! (see [`crate::journal`]) as it is made, and the journals a window left behind are offered at
//! the next start, to be made again on their files through the code paths that made them first.
//!
//! What is journaled follows the history (`history.rs`) step for step: a clip edit as the edit
//! (carried clips as how to carry them again), a weight repair as its options, undo and redo as
//! records of their own, and a pose edit as its start (a step) followed by the pose it left. The
//! pose is written when it settles (the gesture ends, another edit or an undo comes, the frame
//! ends), and at most twice a second while a drag goes on: a crash mid-drag loses at most the
//! last half second of that drag.

use super::Viewer;
use super::clip_edits::ClipEdit;
use super::history::{HandPose, PoseSnapshot, StackParts};
use crate::anim::ik_layer::IkGoal;
use crate::anim::look_at::{LookAt, MAX_LOOK_AT_JOINTS};
use crate::anim::{Attachment, BlendMode, JointOverride, Layer};
use crate::journal::records::{
    AttachmentRecord, BendRecord, CarryRecord, ClipRecord, Exact, IkGoalRecord, LayerRecord, LookAtRecord, PoseRecord,
    StackRecord, TrsRecord, exact, floats,
};
use crate::journal::{self, Entry, FileFacts, Found, Header, Held, JournalWriter};
use crate::names::Named;
use crate::retarget::{CarriedClips, RetargetOptions};
use crate::rig::{Rig, RigError, Trs};
use glam::{Quat, Vec3};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The journals' folder: `journals` in the settings folder (`$RIGSCOPE_CONFIG_DIR` when set),
/// beside the log and the crash reports.
pub fn journal_folder() -> Option<PathBuf> {
    crate::settings::config_dir().map(|d| d.join(journal::FOLDER_NAME))
}

/// The viewer's side of journaling: where journals go, and those found at start.
#[derive(Default)]
pub(super) struct Recovery {
    /// `None`: nothing is journaled (the command line, most tests).
    folder: Option<PathBuf>,
    offers: Vec<Offer>,
    /// A pose edit changed the pose since it was last written to the active document's journal.
    pose_unwritten: bool,
    /// When the pose was last written (see [`Viewer::flush_journal`]).
    pose_written_at: Option<std::time::Instant>,
}

/// While a drag goes on, the pose is written no more often than this.
const POSE_WRITE_INTERVAL_WHILE_DRAGGING: std::time::Duration = std::time::Duration::from_millis(500);

/// A journal found at start, read whole, waiting for an answer.
struct Offer {
    path: PathBuf,
    /// Let go when the offer is answered.
    held: Held,
    journal: journal::Journal,
    /// The files that hold other bytes than when the edits were made.
    changed: Vec<PathBuf>,
}

/// One document's journal.
pub(super) struct DocumentJournal {
    /// `None` once a write failed: the journal stays as it was, whole, and no more is added.
    writer: Option<JournalWriter>,
    /// The pose as last written (or as the file opens), so that an unchanged pose is not written
    /// again.
    last_pose: PoseRecord,
}

impl DocumentJournal {
    pub(super) fn path(&self) -> Option<&Path> {
        self.writer.as_ref().map(JournalWriter::path)
    }

    /// Removes the file: its edits were saved, or let go.
    pub(super) fn remove(self) {
        if let Some(writer) = self.writer {
            writer.remove();
        }
    }
}

/// A journal offered for restoring, as the question lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreOffer {
    /// The document's file.
    pub document: PathBuf,
    /// The edits it holds (pose records and undos not counted), for the question.
    pub edits: usize,
    /// The document's file, or files it uses, that hold other bytes now than when the edits
    /// were made; empty: all as they were. With no facts kept, the document's file itself.
    pub changed: Vec<PathBuf>,
}

/// What to do with a journal found at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreAnswer {
    /// Open the file and make the edits again. On a file that changed on disk since, the edits
    /// that still apply are made, up to the first that does not (which is named).
    Restore,
    /// Leave the journal for the next start.
    Later,
    /// Set the journal aside (renamed, never deleted): it is not offered again.
    Discard,
}

/// A journal made again on its file.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    pub document: PathBuf,
    /// Records made again, of all it held.
    pub made: usize,
    pub of: usize,
    /// The record that could not be made, and why: the ones after it were not made either.
    pub stopped: Option<String>,
    /// The file (or one it uses) had changed on disk since the edits.
    pub file_changed: bool,
}

/// Why a journal was not restored.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("no journal is offered as number {0}")]
    NoSuchOffer(usize),
    #[error("a file is being loaded or saved: restore once it is done")]
    Busy,
    #[error("cannot open {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: RigError,
    },
}

impl Viewer {
    /// Journals every edit of the documents with a file in `folder` from now on, and takes the
    /// journals left there by windows that ended without closing their files: those that read
    /// whole are offered ([`Viewer::restore_offers`]); the others are set aside, and the
    /// returned lines say which and why.
    pub fn keep_journals(&mut self, folder: PathBuf) -> Vec<String> {
        let mut reports = Vec::new();
        for Found { path, held, journal } in journal::find_left(&folder) {
            match journal {
                Ok(journal) => {
                    log::info!(
                        "{} was left with unsaved edits ({}); offering to restore them",
                        journal.header.document.display(),
                        path.display()
                    );
                    let changed = files_changed(&journal.header);
                    self.recovery.offers.push(Offer {
                        path,
                        held,
                        journal,
                        changed,
                    });
                }
                Err(error) => {
                    drop(held);
                    let aside = journal::set_aside(&path).map_or_else(
                        |e| format!("; it could not be set aside: {e}"),
                        |p| format!("; it was set aside as {}", p.display()),
                    );
                    reports.push(format!(
                        "the edit journal {} cannot be used: {error}{aside}",
                        path.display()
                    ));
                }
            }
        }
        for report in &reports {
            log::warn!("{report}");
        }
        // Documents edited before journaling began cannot be journaled from the middle.
        for document in &mut self.documents {
            if document.history.has_edits() && document.journal.is_none() {
                document.journal = Some(DocumentJournal {
                    writer: None,
                    last_pose: PoseRecord::empty(),
                });
            }
        }
        self.recovery.folder = Some(folder);
        reports
    }

    /// The journals found at start that wait for an answer.
    pub fn restore_offers(&self) -> Vec<RestoreOffer> {
        (self.recovery.offers.iter())
            .map(|offer| RestoreOffer {
                document: offer.journal.header.document.clone(),
                edits: (offer.journal.entries.iter())
                    .filter(|e| matches!(e, Entry::Clip(_) | Entry::Repair(_) | Entry::PoseStep { .. }))
                    .count(),
                changed: offer.changed.clone(),
            })
            .collect()
    }

    /// Answers offer `index` of [`Viewer::restore_offers`]. Restoring opens the file as a
    /// document (in place of the demo rig when only that is open), makes the journal's edits
    /// again in order, and shows it; the journal found is then removed (the document has a new
    /// one). `Ok(None)` for the other answers.
    pub fn answer_restore(&mut self, index: usize, answer: RestoreAnswer) -> Result<Option<Restored>, RestoreError> {
        if index >= self.recovery.offers.len() {
            return Err(RestoreError::NoSuchOffer(index));
        }
        match answer {
            RestoreAnswer::Later => {
                // Unlocked as it is dropped: the next start offers it again.
                self.recovery.offers.remove(index);
                Ok(None)
            }
            RestoreAnswer::Discard => {
                let Offer { path, held, .. } = self.recovery.offers.remove(index);
                drop(held);
                if let Err(e) = journal::set_aside(&path) {
                    self.diagnostics.error = Some(format!("cannot set {} aside: {e}", path.display()));
                }
                Ok(None)
            }
            RestoreAnswer::Restore => self.restore(index).map(Some),
        }
    }

    fn restore(&mut self, index: usize) -> Result<Restored, RestoreError> {
        if self.restore_waits() {
            return Err(RestoreError::Busy);
        }
        let path = self.recovery.offers[index].journal.header.document.clone();
        let rig = crate::rig::open(Some(&path)).map_err(|source| RestoreError::Open {
            path: path.clone(),
            source,
        })?;
        let offer = self.recovery.offers.remove(index);
        let file_changed = !offer.changed.is_empty();
        let started = std::time::Instant::now();
        self.show_for_restore(rig, path.clone());
        // Made here and now, as the edits were: a repair's analysis included.
        let background = std::mem::replace(&mut self.background_checks, false);
        let entries = &offer.journal.entries;
        let mut stopped = None;
        let mut made = 0;
        for entry in entries {
            if let Err(why) = self.replay(entry) {
                stopped = Some(format!("{}: {why}", entry.describe()));
                break;
            }
            made += 1;
        }
        self.background_checks = background;
        self.end_gesture();
        self.write_pose();
        log::info!(
            "restored {} edit record(s) of {} for {} in {:.0} ms",
            made,
            entries.len(),
            path.display(),
            started.elapsed().as_secs_f64() * 1e3
        );
        let Offer { path: old, held, .. } = offer;
        drop(held);
        if stopped.is_none() {
            if let Err(e) = std::fs::remove_file(&old) {
                log::warn!("cannot remove the journal {} once restored: {e}", old.display());
            }
        } else if let Err(e) = journal::set_aside(&old) {
            log::warn!("cannot set {} aside: {e}", old.display());
        }
        Ok(Restored {
            document: path,
            made,
            of: entries.len(),
            stopped,
            file_changed,
        })
    }

    /// Shows `rig` read from `path` as the active document, its pose as the file opens: in
    /// place of the same file opened again without edits (as a start with the file does), or of
    /// the demo rig alone, else beside the open documents.
    fn show_for_restore(&mut self, rig: Rig, path: PathBuf) {
        let unedited = |d: &super::Document| !d.history.has_edits();
        let same_file = (self.documents.iter()).position(|d| d.path.as_deref() == Some(path.as_path()) && unedited(d));
        let only_demo = self.documents.len() == 1 && self.document().path.is_none() && unedited(self.document());
        match same_file {
            Some(index) => {
                self.activate(index);
                self.set_rig(rig, Some(path));
            }
            None if only_demo => self.set_rig(rig, Some(path)),
            None => {
                let index = self.add_document(rig, Some(path));
                self.activate(index);
            }
        }
        // Showing a document carries the bends over by joint name: the journal starts from the
        // pose as the file opens.
        let rest = PoseSnapshot::of(&crate::anim::AnimationStack::new(self.rig()));
        rest.put(&mut self.playback.animation);
        self.playback.animation.look_at_camera = false;
        self.recovery.pose_unwritten = false;
        self.mark_dirty();
    }

    /// Whether a restore would have to wait (a file is being loaded or saved).
    pub fn restore_waits(&self) -> bool {
        self.pending.is_some() || self.saving.is_some()
    }

    /// Makes one journal record again on the active document.
    fn replay(&mut self, entry: &Entry) -> Result<(), String> {
        match entry {
            Entry::Clip(record) => self.replay_clip(record),
            Entry::Repair(options) => {
                if *options != options.checked() {
                    return Err("options the Repair window cannot set".into());
                }
                match self.preview_repair(options) {
                    true => Ok(()),
                    false => Err("the repair did not run".into()),
                }
            }
            Entry::PoseStep { label } => {
                self.end_gesture();
                self.record_pose_edit(label);
                Ok(())
            }
            Entry::Pose(record) => {
                let rig = Arc::clone(self.rig());
                let snapshot = pose_from_record(record, &rig, &self.playback.animation)?;
                snapshot.put(&mut self.playback.animation);
                self.note_pose_change();
                self.mark_dirty();
                Ok(())
            }
            Entry::Undo => self.undo().map(drop).ok_or_else(|| "nothing to undo".into()),
            Entry::Redo => self.redo().map(drop).ok_or_else(|| "nothing to redo".into()),
            Entry::EndRepairPreview => match self.previewed_repair() {
                Some(_) => {
                    self.end_repair_preview();
                    Ok(())
                }
                None => Err("no repair is previewed".into()),
            },
        }
    }

    fn replay_clip(&mut self, record: &ClipRecord) -> Result<(), String> {
        let (carry, replace) = match record {
            ClipRecord::AddCarried(carry) => (carry, false),
            ClipRecord::Recarry(carry) => (carry, true),
            _ => {
                let edit = clip_edit_from_record(record);
                return self.edit_clip(edit).map_err(|e| e.to_string());
            }
        };
        let source = crate::rig::load_file(&carry.file).map_err(|e| e.to_string())?;
        if source.clips.is_empty() {
            return Err(format!("{} has no clips", carry.file.display()));
        }
        let options = RetargetOptions {
            in_place: carry.in_place,
            resample_rate: carry.resample_rate.get(),
            ..RetargetOptions::default()
        };
        let carried = CarriedClips::carry(self.rig(), &source, &carry.file, &carry.map, &options);
        (self.add_carried_clips(self.active, Arc::new(carried), replace)).map_err(|e| e.to_string())
    }

    /// Appends `entry` to document `index`'s journal, starting the journal (with the pose as it
    /// is, when it is not the file's) if it has none. Does nothing without a journals' folder or
    /// a file, or once the journal failed.
    pub(super) fn journal(&mut self, index: usize, entry: Entry) {
        if self.recovery.folder.is_none() || self.documents[index].path.is_none() {
            return;
        }
        let active = index == self.active;
        if active && !matches!(entry, Entry::Pose(_)) {
            // Each pose is written before the edit after it.
            self.write_pose();
        }
        if self.documents[index].journal.is_none() {
            let journal = self.start_journal(index);
            self.documents[index].journal = Some(journal);
        }
        let Some(journal) = &mut self.documents[index].journal else {
            return;
        };
        if let Entry::Pose(pose) = &entry
            && *pose == journal.last_pose
        {
            return;
        }
        let Some(writer) = &mut journal.writer else { return };
        if let Err(e) = writer.append(&entry) {
            journal.writer = None;
            let path = self.documents[index].path.clone().unwrap_or_default();
            self.journal_failed(&path, &e);
            return;
        }
        if active {
            // What making the records so far again gives, to tell later whether the pose moved.
            journal.last_pose = pose_record(&self.playback.animation);
            if log::log_enabled!(log::Level::Debug) {
                log::debug!(
                    "journal record {} ({}); document {}",
                    writer.entries(),
                    entry.describe(),
                    self.document_fingerprint()
                );
            }
        }
    }

    /// A new journal for document `index`: its header, then its pose where edits of the active
    /// document left one the file does not open with.
    fn start_journal(&mut self, index: usize) -> DocumentJournal {
        let document = &self.documents[index];
        let (Some(folder), Some(path)) = (self.recovery.folder.clone(), document.path.clone()) else {
            return DocumentJournal {
                writer: None,
                last_pose: PoseRecord::empty(),
            };
        };
        // A file changed on disk before the first edit: what the document was read from is
        // not known any more.
        let files = (!document.file_changed).then(|| {
            let sources = document.rig.sources.iter().map(PathBuf::as_path);
            (std::iter::once(path.as_path()).chain(sources))
                .filter_map(|file| FileFacts::of(file).ok())
                .collect()
        });
        let header = Header {
            rigscope: journal::RIGSCOPE.to_owned(),
            document: path.clone(),
            files,
        };
        let rest = pose_record(&crate::anim::AnimationStack::new(&document.rig));
        let writer = match JournalWriter::create(&folder, &header) {
            Ok(writer) => {
                log::info!(
                    "journaling the edits of {} in {}",
                    path.display(),
                    writer.path().display()
                );
                Some(writer)
            }
            Err(e) => {
                self.journal_failed(&path, &e);
                None
            }
        };
        let mut journal = DocumentJournal {
            writer,
            last_pose: rest,
        };
        if index == self.active {
            let now = pose_record(&self.playback.animation);
            if now != journal.last_pose
                && let Some(writer) = &mut journal.writer
            {
                match writer.append(&Entry::Pose(now.clone())) {
                    Ok(()) => journal.last_pose = now,
                    Err(e) => {
                        journal.writer = None;
                        self.journal_failed(&path, &e);
                    }
                }
            }
        }
        journal
    }

    fn journal_failed(&mut self, path: &Path, error: &journal::JournalError) {
        let message = format!(
            "the edits of {} can no longer be kept for recovery after a crash: {error}",
            path.display()
        );
        log::warn!("{message}");
        self.diagnostics.error = Some(message);
    }

    /// A pose edit changed the active document's pose: it is written once it settles.
    pub(super) fn note_pose_change(&mut self) {
        self.recovery.pose_unwritten = true;
    }

    /// Writes the active document's pose to its journal if a pose edit changed it since, unless
    /// a gesture (a drag) goes on and the pose was written less than half a second ago: a drag is
    /// written when it ends, and twice a second meanwhile. The window calls it after every frame.
    pub fn flush_journal(&mut self) {
        let dragging = self.documents[self.active].history.joins_open_pose_step();
        let written = self.recovery.pose_written_at;
        if dragging && written.is_some_and(|at| at.elapsed() < POSE_WRITE_INTERVAL_WHILE_DRAGGING) {
            return;
        }
        self.write_pose();
    }

    /// Writes the active document's pose to its journal now if a pose edit changed it since.
    pub(super) fn write_pose(&mut self) {
        if !std::mem::take(&mut self.recovery.pose_unwritten) || self.recovery.folder.is_none() {
            return;
        }
        self.recovery.pose_written_at = Some(std::time::Instant::now());
        let now = pose_record(&self.playback.animation);
        let document = &self.documents[self.active];
        let unchanged = match &document.journal {
            Some(journal) => journal.last_pose == now,
            None => now == pose_record(&crate::anim::AnimationStack::new(&document.rig)),
        };
        if !unchanged {
            self.journal(self.active, Entry::Pose(now));
        }
    }

    /// Starts document `index`'s journal over from what it holds now (a reload made its clip
    /// edits again on what it read): its clip edits in effect, then its pose.
    pub(super) fn journal_again(&mut self, index: usize) {
        if let Some(journal) = self.documents[index].journal.take() {
            journal.remove();
        }
        let records: Vec<Entry> = (self.documents[index].clip_edits.log().iter())
            .map(|edit| Entry::Clip(clip_record(edit)))
            .collect();
        for record in records {
            self.journal(index, record);
        }
        if index == self.active {
            self.note_pose_change();
            self.write_pose();
        }
    }

    /// Removes every document's journal: the window closes as asked (its edits saved, or let
    /// go when it asked).
    pub fn close_journals(&mut self) {
        for document in &mut self.documents {
            if let Some(journal) = document.journal.take() {
                journal.remove();
            }
        }
    }

    /// The active document's journal file, while it has one.
    pub fn journal_path(&self) -> Option<&Path> {
        self.document().journal.as_ref().and_then(DocumentJournal::path)
    }

    /// The active document's state, bit for bit, as a few numbers: its clips (keys, morph
    /// channels, per-clip facts), its weights, its clip record, its history (what Undo and Redo
    /// would take, whether a save would write something, the repair previewed) and its pose.
    pub fn document_fingerprint(&self) -> DocumentFingerprint {
        let document = self.document();
        let rig = &document.rig;
        let mut clips = Fnv::default();
        let _ = write!(
            clips,
            "{:?}{:?}{:?}{:?}",
            rig.clips, rig.morphs.channels, rig.facts.channels, rig.facts.dropped_channels
        );
        let mut weights = Fnv::default();
        for primitive in rig.meshes.iter().flat_map(|m| &m.primitives) {
            if let Some(influences) = &primitive.influences {
                weights.bytes(&(influences.sets as u64).to_le_bytes());
                for joints in &influences.joints {
                    joints.iter().for_each(|j| weights.bytes(&j.to_le_bytes()));
                }
                for set in &influences.weights {
                    set.iter().for_each(|w| weights.bytes(&w.to_bits().to_le_bytes()));
                }
            }
        }
        let mut record = Fnv::default();
        let _ = write!(
            record,
            "{:?}{:?}",
            document.clip_edits.origins(),
            document.clip_edits.log()
        );
        let mut history = Fnv::default();
        let (undo, redo) = document.history.labels();
        let _ = write!(
            history,
            "{undo:?}{redo:?}{}{:?}{}",
            document.history.is_changed(),
            self.previewed_repair(),
            self.showing_repaired()
        );
        let mut pose = Fnv::default();
        let _ = write!(pose, "{:?}", pose_record(&self.playback.animation));
        DocumentFingerprint {
            clips: clips.0,
            weights: weights.0,
            record: record.0,
            history: history.0,
            pose: pose.0,
        }
    }
}

/// A document's state as five 64-bit hashes (see [`Viewer::document_fingerprint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentFingerprint {
    pub clips: u64,
    pub weights: u64,
    pub record: u64,
    pub history: u64,
    pub pose: u64,
}

impl std::fmt::Display for DocumentFingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "clips {:016x} weights {:016x} record {:016x} history {:016x} pose {:016x}",
            self.clips, self.weights, self.record, self.history, self.pose
        )
    }
}

/// FNV-1a, 64 bits: written out so that two builds (the window and a test) hash alike.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn bytes(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl std::fmt::Write for Fnv {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.bytes(text.as_bytes());
        Ok(())
    }
}

/// Which of `header`'s files hold other bytes now (the document's file when no facts were kept).
fn files_changed(header: &Header) -> Vec<PathBuf> {
    match &header.files {
        Some(files) => (files.iter()).filter(|f| f.changed()).map(|f| f.path.clone()).collect(),
        None => vec![header.document.clone()],
    }
}

/// A clip edit as the journal keeps it.
pub(super) fn clip_record(edit: &ClipEdit) -> ClipRecord {
    match edit {
        ClipEdit::Rename { clip, name } => ClipRecord::Rename {
            clip: *clip,
            name: name.clone(),
        },
        ClipEdit::Trim { clip, start, end } => ClipRecord::Trim {
            clip: *clip,
            start: Exact::of(*start),
            end: Exact::of(*end),
        },
        ClipEdit::InPlace { clip } => ClipRecord::InPlace { clip: *clip },
        ClipEdit::Resample { clip, rate } => ClipRecord::Resample {
            clip: *clip,
            rate: Exact::of(*rate),
        },
        ClipEdit::Drop { clip } => ClipRecord::Drop { clip: *clip },
        ClipEdit::LockFeet { clip } => ClipRecord::LockFeet { clip: *clip },
        ClipEdit::AddPose { clip, name, pose } => ClipRecord::AddPose {
            clip: *clip,
            name: name.clone(),
            pose: (pose.iter())
                .map(|(node, trs)| {
                    let record = TrsRecord {
                        translation: exact(trs.translation.to_array()),
                        rotation: exact(trs.rotation.to_array()),
                        scale: exact(trs.scale.to_array()),
                    };
                    (*node, record)
                })
                .collect(),
        },
        ClipEdit::AddCarried { carried } => ClipRecord::AddCarried(carry_record(carried)),
        ClipEdit::Recarry { carried } => ClipRecord::Recarry(carry_record(carried)),
    }
}

fn carry_record(carried: &CarriedClips) -> CarryRecord {
    let metadata = std::fs::metadata(&carried.origin).ok();
    CarryRecord {
        file: carried.origin.clone(),
        map: carried.report.map.clone(),
        in_place: carried.options.in_place,
        resample_rate: Exact::of(carried.options.resample_rate),
        len: metadata.as_ref().map(std::fs::Metadata::len),
        modified_ns: metadata.as_ref().and_then(journal::modified_ns),
    }
}

/// The clip edit a record (other than a carry) holds.
fn clip_edit_from_record(record: &ClipRecord) -> ClipEdit {
    match record {
        ClipRecord::Rename { clip, name } => ClipEdit::Rename {
            clip: *clip,
            name: name.clone(),
        },
        ClipRecord::Trim { clip, start, end } => ClipEdit::Trim {
            clip: *clip,
            start: start.get(),
            end: end.get(),
        },
        ClipRecord::InPlace { clip } => ClipEdit::InPlace { clip: *clip },
        ClipRecord::Resample { clip, rate } => ClipEdit::Resample {
            clip: *clip,
            rate: rate.get(),
        },
        ClipRecord::Drop { clip } => ClipEdit::Drop { clip: *clip },
        ClipRecord::LockFeet { clip } => ClipEdit::LockFeet { clip: *clip },
        ClipRecord::AddPose { clip, name, pose } => ClipEdit::AddPose {
            clip: *clip,
            name: name.clone(),
            pose: (pose.iter())
                .map(|(node, trs)| {
                    let trs = Trs {
                        translation: Vec3::from_array(floats(trs.translation)),
                        rotation: Quat::from_array(floats(trs.rotation)),
                        scale: Vec3::from_array(floats(trs.scale)),
                    };
                    (*node, trs)
                })
                .collect(),
        },
        ClipRecord::AddCarried(_) | ClipRecord::Recarry(_) => unreachable!("carried clips are carried again, not read"),
    }
}

impl PoseRecord {
    /// A pose of no rig: what a journal that cannot be written compares against.
    fn empty() -> PoseRecord {
        PoseRecord {
            nodes: 0,
            bends: Vec::new(),
            morph_weights: Vec::new(),
            ik_goals: Vec::new(),
            look_at: None,
            stack: StackRecord::default(),
        }
    }
}

/// The pose of `animation` as the journal keeps it: bends other than none, bit for bit.
fn pose_record(animation: &crate::anim::AnimationStack) -> PoseRecord {
    let identity = bend_record(&JointOverride::IDENTITY);
    PoseRecord {
        nodes: animation.overrides.len(),
        bends: (animation.overrides.iter().enumerate())
            .map(|(node, bend)| (node, bend_record(bend)))
            .filter(|(_, bend)| *bend != identity)
            .collect(),
        morph_weights: (animation.morph_overrides.iter())
            .map(|weights| weights.iter().map(|w| w.map(Exact::of)).collect())
            .collect(),
        ik_goals: (animation.ik_goals.iter())
            .map(|goal| IkGoalRecord {
                start: goal.start,
                mid: goal.mid,
                end: goal.end,
                target: exact(goal.target.to_array()),
                pole_target: goal.pole_target.map(|p| exact(p.to_array())),
                weight: Exact::of(goal.weight),
                soften: Exact::of(goal.soften),
                enabled: goal.enabled,
            })
            .collect(),
        look_at: animation.look_at.as_ref().map(|look_at| LookAtRecord {
            chain: look_at.chain.clone(),
            target: exact(look_at.target.to_array()),
            forward: exact(look_at.forward.to_array()),
            up: exact(look_at.up.to_array()),
            share: Exact::of(look_at.share),
            weight: Exact::of(look_at.weight),
            enabled: look_at.enabled,
            follows_camera: animation.look_at_camera,
        }),
        stack: StackRecord {
            layers: (animation.layers.iter())
                .map(|layer| LayerRecord {
                    clip: layer.clip,
                    weight: Exact::of(layer.weight),
                    speed: Exact::of(layer.speed),
                    time_offset: Exact::of(layer.time_offset),
                    looping: layer.looping,
                    enabled: layer.enabled,
                    mode: layer.mode.name().to_owned(),
                    mask: layer.mask,
                })
                .collect(),
            crossfade_seconds: Exact::of(animation.crossfade_seconds),
            root_lock: animation.root_motion.lock,
            attachments: (animation.attachments.iter())
                .map(|attachment| AttachmentRecord {
                    node: attachment.node,
                    offset: exact(attachment.offset.to_array()),
                    rotation_degrees: exact(attachment.rotation_degrees.to_array()),
                    size: Exact::of(attachment.size),
                })
                .collect(),
            lock_feet: animation.lock_feet,
        },
    }
}

fn bend_record(bend: &JointOverride) -> BendRecord {
    BendRecord {
        rotation: exact(bend.rotation.to_array()),
        translation: exact(bend.translation.to_array()),
        scale: Exact::of(bend.scale),
    }
}

/// The pose a record holds, checked against `rig` and the shape of `animation`'s pose before
/// anything is made of it: node indices in range, one morph weight per target.
fn pose_from_record(
    record: &PoseRecord,
    rig: &Rig,
    animation: &crate::anim::AnimationStack,
) -> Result<PoseSnapshot, String> {
    let nodes = rig.nodes.len();
    if record.nodes != nodes || animation.overrides.len() != nodes {
        return Err(format!(
            "the pose is of a rig of {} nodes; this one has {nodes}",
            record.nodes
        ));
    }
    let in_range = |node: usize| match node < nodes {
        true => Ok(node),
        false => Err(format!("node {node} of a rig of {nodes}")),
    };
    let mut overrides = vec![JointOverride::IDENTITY; nodes];
    let mut previous = None;
    for &(node, bend) in &record.bends {
        in_range(node)?;
        if previous.is_some_and(|p| p >= node) {
            return Err("bends out of node order".into());
        }
        previous = Some(node);
        overrides[node] = JointOverride {
            rotation: Quat::from_array(floats(bend.rotation)),
            translation: Vec3::from_array(floats(bend.translation)),
            scale: bend.scale.get(),
        };
    }
    let shape = |weights: &[Vec<Option<f32>>]| weights.iter().map(Vec::len).collect::<Vec<_>>();
    let record_shape: Vec<usize> = record.morph_weights.iter().map(Vec::len).collect();
    if record_shape != shape(&animation.morph_overrides) {
        return Err("morph weights for other morph targets".into());
    }
    let morph_overrides = (record.morph_weights.iter())
        .map(|weights| weights.iter().map(|w| w.map(Exact::get)).collect())
        .collect();
    let ik_goals = (record.ik_goals.iter())
        .map(|goal| {
            Ok(IkGoal {
                start: in_range(goal.start)?,
                mid: in_range(goal.mid)?,
                end: in_range(goal.end)?,
                target: Vec3::from_array(floats(goal.target)),
                pole_target: goal.pole_target.map(|p| Vec3::from_array(floats(p))),
                weight: goal.weight.get(),
                soften: goal.soften.get(),
                enabled: goal.enabled,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let look_at = match &record.look_at {
        None => None,
        Some(look_at) => {
            if look_at.chain.is_empty() || look_at.chain.len() > MAX_LOOK_AT_JOINTS {
                return Err(format!("a look-at of {} joints", look_at.chain.len()));
            }
            for &node in &look_at.chain {
                in_range(node)?;
            }
            Some(LookAt {
                chain: look_at.chain.clone(),
                target: Vec3::from_array(floats(look_at.target)),
                forward: Vec3::from_array(floats(look_at.forward)),
                up: Vec3::from_array(floats(look_at.up)),
                share: look_at.share.get(),
                weight: look_at.weight.get(),
                enabled: look_at.enabled,
            })
        }
    };
    let hand = HandPose {
        overrides,
        morph_overrides,
        // The journal keeps the morph weights the expressions set, not the sliders.
        expression_weights: vec![0.0; rig.facts.expressions.len()],
        ik_goals,
        look_at,
        look_at_camera: record.look_at.as_ref().is_some_and(|l| l.follows_camera),
    };
    Ok(PoseSnapshot::new(hand, stack_from_record(&record.stack, rig)?))
}

/// The Layers panel's part of a pose record, checked against `rig`: clips and nodes in range,
/// blend modes by name.
fn stack_from_record(record: &StackRecord, rig: &Rig) -> Result<StackParts, String> {
    let nodes = rig.nodes.len();
    let node_in_range = |node: usize| match node < nodes {
        true => Ok(node),
        false => Err(format!("node {node} of a rig of {nodes}")),
    };
    let layers = (record.layers.iter())
        .map(|layer| {
            if layer.clip >= rig.clips.len() {
                return Err(format!("a layer of clip {} of {}", layer.clip, rig.clips.len()));
            }
            let mode = BlendMode::from_name_ignoring_case(&layer.mode)
                .ok_or_else(|| format!("a layer blended by '{}'", layer.mode))?;
            Ok(Layer {
                clip: layer.clip,
                weight: layer.weight.get(),
                speed: layer.speed.get(),
                time_offset: layer.time_offset.get(),
                looping: layer.looping,
                enabled: layer.enabled,
                mode,
                mask: layer.mask.map(node_in_range).transpose()?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let attachments = (record.attachments.iter())
        .map(|attachment| {
            Ok(Attachment {
                node: node_in_range(attachment.node)?,
                offset: Vec3::from_array(floats(attachment.offset)),
                rotation_degrees: Vec3::from_array(floats(attachment.rotation_degrees)),
                size: attachment.size.get(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(StackParts {
        layers,
        crossfade_seconds: record.crossfade_seconds.get(),
        root_lock: record.root_lock,
        attachments,
        lock_feet: record.lock_feet,
    })
}
