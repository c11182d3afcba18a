//! One open file: the rig read from it, where it came from, what is derived from it once, and
//! the watch on it for changes on disk.

use super::symmetry::{SymmetryJob, SymmetryView};
use crate::anim::Bounds;
use crate::engine::Engine;
use crate::reload::{FileStamp, FileWatcher};
use crate::report::RigReport;
use crate::retarget::CarriedClips;
use crate::rig::Rig;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Per node, the number of vertices it influences with a non-zero weight (through any skin).
pub fn influence_counts(rig: &Rig) -> Vec<usize> {
    let mut counts = vec![0; rig.nodes.len()];
    for instance in &rig.instances {
        let Some(skin) = instance.skin.map(|s| &rig.skins[s]) else {
            continue;
        };
        for primitive in &rig.meshes[instance.mesh].primitives {
            let Some(influences) = &primitive.influences else {
                continue;
            };
            for v in 0..primitive.vertex_count() {
                for (joint, weight) in influences.of_vertex(v) {
                    if weight != 0.0
                        && let Some(&node) = skin.joints.get(joint as usize)
                    {
                        counts[node] += 1;
                    }
                }
            }
        }
    }
    counts
}

pub struct Document {
    pub rig: Arc<Rig>,
    /// Where the rig came from; `None` for the demo rig.
    pub path: Option<PathBuf>,
    /// Unique among the rigs one viewer has shown, so that the renderer knows when to upload
    /// again and caches know what they were computed for.
    pub generation: u64,
    /// Per node: how many vertices it influences with a non-zero weight.
    pub influence_counts: Vec<usize>,
    /// Bounds of the rest pose (of the skeleton over every clip when the file has no mesh), used
    /// for the grid and for framing.
    pub rest_bounds: Bounds,
    /// The rig report, once a panel asked for it (see `ui::report`).
    pub report: Option<Arc<RigReport>>,
    /// The file on disk (or one it uses) changed after what is shown was read: hot reload is
    /// off, waiting for the changes to settle, loading, or the new contents failed to load.
    pub file_changed: bool,
    pub(super) watcher: Option<FileWatcher>,
    /// When the latest change on disk was seen.
    pub(super) changed_at: Option<Instant>,
    /// The file's stamp when the load that produced this document began.
    pub(super) loaded_stamp: Option<FileStamp>,
    /// The symmetry view's check, run the first time the view shows this rig.
    pub(super) symmetry: Option<SymmetryView>,
    /// That check while it runs on a thread (see `Viewer::background_checks`).
    pub(super) symmetry_job: Option<SymmetryJob>,
    /// What the repairs would change, and the repaired rig while it is previewed.
    pub repair: super::repair::RepairState,
    /// Which of the rig's clips is which animation of the file, and the clip edits made since
    /// it was read (see `clip_edits.rs`).
    pub(super) clip_edits: super::clip_edits::ClipEdits,
    /// Every edit since the file was read, for undo and redo (see `history.rs`).
    pub(super) history: super::history::History,
    /// The rig as read, kept once a repair changed its weights: a save writes the primitives
    /// whose weights differ from it.
    pub(super) weights_read: Option<Arc<Rig>>,
    /// The file changed on disk under edits: the reload waits for [`super::ReloadAnswer`].
    pub reload_asked: bool,
    /// The user kept the edits over a change on disk: not watched again until saved.
    pub(super) watch_paused: bool,
    /// The rig as an engine draws it, while View ▸ Engine shows one (see [`crate::engine`]).
    pub(super) engine_drawing: Option<EngineDrawing>,
    /// That drawing being made on a thread of its own (a million vertices take longer than a
    /// frame); the file's drawing is shown meanwhile.
    pub(super) engine_job: Option<EngineJob>,
    /// Where the edits are journaled for recovery after a crash, once one was made (see
    /// `recovery.rs`).
    pub(super) journal: Option<super::recovery::DocumentJournal>,
}

/// An engine's drawing of one generation of the document's rig, being made.
pub(super) struct EngineJob {
    pub engine: Engine,
    pub from: u64,
    pub job: crate::job::Job<Result<Rig, crate::engine::EngineRefusal>>,
}

/// The rig as an engine draws it, made from one generation of the document's rig.
pub(super) struct EngineDrawing {
    pub engine: Engine,
    /// The generation of the document's rig it was made from.
    pub from: u64,
    pub rig: Arc<Rig>,
    /// Its own generation, so that the renderer uploads it as a rig of its own.
    pub generation: u64,
}

impl Document {
    pub(super) fn new(rig: Rig, path: Option<PathBuf>, generation: u64, rest_bounds: Bounds) -> Document {
        Document {
            influence_counts: influence_counts(&rig),
            clip_edits: super::clip_edits::ClipEdits::for_rig(&rig),
            rig: Arc::new(rig),
            path,
            generation,
            rest_bounds,
            report: None,
            file_changed: false,
            watcher: None,
            changed_at: None,
            loaded_stamp: None,
            symmetry: None,
            symmetry_job: None,
            repair: Default::default(),
            history: Default::default(),
            weights_read: None,
            engine_drawing: None,
            engine_job: None,
            reload_asked: false,
            watch_paused: false,
            journal: None,
        }
    }

    /// The rig drawn and its generation: the engine's drawing of the rig when one is made for
    /// this generation of it, else the rig itself.
    pub fn shown_rig(&self) -> (&Arc<Rig>, u64) {
        match &self.engine_drawing {
            Some(drawing) if drawing.from == self.generation => (&drawing.rig, drawing.generation),
            _ => (&self.rig, self.generation),
        }
    }

    /// Files whose clips were added to the rig (File ▸ Load clips from…, `--clips`) by edits
    /// in effect, in order: a reload carries them again, and their changes on disk reload it.
    pub fn clip_files(&self) -> Vec<PathBuf> {
        self.clip_edits.clip_files()
    }

    /// The clips of each of [`Document::clip_files`] as carried, with what carrying them
    /// matched and left out.
    pub fn carried(&self) -> Vec<&CarriedClips> {
        self.clip_edits.carried()
    }

    /// The files to watch for this document: the file itself, those it uses and the clip
    /// files added to it.
    pub(super) fn watched_files(&self) -> Option<Vec<PathBuf>> {
        if self.watch_paused {
            return None;
        }
        let sources = self.path.is_some().then_some(&self.rig.sources).into_iter().flatten();
        let clip_files = self.clip_files();
        let files: Vec<PathBuf> = (self.path.iter().chain(sources).chain(&clip_files)).cloned().collect();
        (!files.is_empty()).then_some(files)
    }
}
