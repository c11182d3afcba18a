//! Opening files in the background, reloading them, and watching them for changes on disk.

use super::*;
use crate::job::Job;
use crate::reload::{FileStamp, FileWatcher};
use crate::render::OrbitCamera;
use crate::retarget::{CarriedClips, JointMap, JointMaps, RetargetError, RetargetOptions};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A load running on a background thread.
pub(super) struct PendingLoad {
    /// The file, or `None` for the built-in demo rig.
    path: Option<PathBuf>,
    started: Instant,
    job: Job<Result<Loaded, LoadError>>,
    /// The generation of the document this load reloads; `None` when it opens a file in place
    /// of the active document. A reload of the active document keeps the view, selection,
    /// playback and bends.
    reload_of: Option<u64>,
    /// The file's stamp as the load began: changes reported later for the same stamp were read.
    stamp: Option<FileStamp>,
    /// A reload makes the document's clip edits again on the rig it read (as they are when it
    /// finishes); the load of a file just saved from the document does not, as the edits are
    /// in it.
    keep_clip_edits: bool,
    /// The clips carried replace those already carried from the same files (other joint
    /// pairs) instead of being added beside them.
    recarry: bool,
}

/// The rig read (`None` when the load only carried clips onto the document's rig), and each
/// clip file's clips carried onto it, in order, to be added as edits of the document.
type Loaded = (Option<Rig>, Vec<Arc<CarriedClips>>);

/// Why a document could not be loaded: its own file, or one of its clip files.
#[derive(Debug, thiserror::Error)]
enum LoadError {
    #[error(transparent)]
    Rig(#[from] RigError),
    #[error(transparent)]
    Clips(#[from] RetargetError),
}

/// What a load reads: the rig at a path (the demo rig for `None`), or only clip files to carry
/// onto a rig already open.
enum LoadSource {
    File(Option<PathBuf>),
    Onto(Arc<Rig>),
}

/// Reads the rig of `source` and carries the clips of `clip_files` onto it, joints matched by
/// name and by the hand-made `maps`; the clips are not added (adding them is an edit).
fn load(
    source: LoadSource,
    clip_files: &[PathBuf],
    maps: &JointMaps,
    (options, pairs): &(RetargetOptions, JointMap),
) -> Result<Loaded, LoadError> {
    let (read, onto) = match source {
        LoadSource::File(path) => (Some(crate::rig::open_with(path.as_deref(), &options.read)?), None),
        LoadSource::Onto(rig) => (None, Some(rig)),
    };
    let Some(rig) = read.as_ref().or(onto.as_deref()) else {
        unreachable!("one of the two is set above")
    };
    let carried = (clip_files.iter())
        .map(|file| CarriedClips::load(rig, file, (maps, pairs), options).map(Arc::new))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((read, carried))
}

/// How messages name a file being loaded (`None`: the demo rig).
pub fn label(path: Option<&Path>) -> String {
    path.map_or_else(|| "the demo rig".into(), |p| p.display().to_string())
}

/// What a reload keeps of the viewer's state, by name where indices may change.
pub(super) struct KeptState {
    camera: OrbitCamera,
    selected: Option<String>,
    /// The clip's name; `None` for the rest pose.
    clip: Option<String>,
    time: f32,
    playing: bool,
    overrides: Vec<(String, JointOverride)>,
}

impl Viewer {
    /// Starts loading `path` on a background thread, to replace the active document once it
    /// succeeds.
    pub fn open(&mut self, path: PathBuf) {
        self.start_load(Some(path), None, Vec::new());
    }

    /// Starts loading the built-in demo rig the way a file is loaded.
    pub fn open_demo(&mut self) {
        self.start_load(None, None, Vec::new());
    }

    /// Starts adding the clips of `clips_file` to the active document's rig (joints matched
    /// by name and by the pairs [`Viewer::joint_maps`] keeps for the two skeletons, rotations
    /// carried from its rest pose onto the rig's): they are carried in the background onto the
    /// rig as it is now, then added as one edit, which Undo takes back out; every earlier edit
    /// stays. The clip file is watched with the document from then on.
    pub fn load_clips_from(&mut self, clips_file: PathBuf) {
        self.load_clips_from_files([clips_file]);
    }

    /// [`Viewer::load_clips_from`] for several files at once, in order (one edit each); a file
    /// whose clips are already in the document is not added again.
    pub fn load_clips_from_files(&mut self, files: impl IntoIterator<Item = PathBuf>) {
        let document = self.document();
        let added = document.clip_files();
        let mut clip_files: Vec<PathBuf> = Vec::new();
        for file in files {
            if !added.contains(&file) && !clip_files.contains(&file) {
                clip_files.push(file);
            }
        }
        if clip_files.is_empty() {
            return;
        }
        let (rig, generation) = (Arc::clone(&document.rig), document.generation);
        let label = format!("clips for {}", label(document.path.as_deref()));
        self.start_job(label, LoadSource::Onto(rig), Some(generation), clip_files, None);
    }

    pub(super) fn start_load(&mut self, path: Option<PathBuf>, reload_of: Option<u64>, clip_files: Vec<PathBuf>) {
        let stamp = path.as_deref().and_then(FileStamp::of);
        self.start_job(
            label(path.as_deref()),
            LoadSource::File(path),
            reload_of,
            clip_files,
            stamp,
        );
    }

    fn start_job(
        &mut self,
        what: String,
        source: LoadSource,
        reload_of: Option<u64>,
        clip_files: Vec<PathBuf>,
        stamp: Option<FileStamp>,
    ) {
        log::info!(
            "{} {what}",
            match (&source, reload_of) {
                (LoadSource::Onto(_), _) => "carrying",
                (LoadSource::File(_), Some(_)) => "reloading",
                (LoadSource::File(_), None) => "opening",
            }
        );
        let path = match &source {
            LoadSource::File(path) => path.clone(),
            LoadSource::Onto(_) => self.document().path.clone(),
        };
        let (maps, carry) = (self.joint_maps.clone(), self.clip_carry.clone());
        let job = Job::spawn(move || load(source, &clip_files, &maps, &carry));
        self.pending = Some(PendingLoad {
            path,
            started: Instant::now(),
            job,
            reload_of,
            stamp,
            keep_clip_edits: true,
            recarry: false,
        });
    }

    /// Carries the clips of every clip file of the active document again, in the background,
    /// onto the rig as it is now, with the joint pairs kept now; each file's new clips then
    /// replace its old ones as one edit (Undo gives the old ones back).
    pub(super) fn recarry_clip_files(&mut self) {
        let document = self.document();
        let clip_files = document.clip_files();
        if clip_files.is_empty() || self.pending.is_some() {
            return;
        }
        let (rig, generation) = (Arc::clone(&document.rig), document.generation);
        let label = format!("clips for {}", label(document.path.as_deref()));
        self.start_job(label, LoadSource::Onto(rig), Some(generation), clip_files, None);
        if let Some(pending) = &mut self.pending {
            pending.recarry = true;
        }
    }

    /// The load started last opens a file that already holds the document's clip edits.
    pub(super) fn forget_clip_edits_on_load(&mut self) {
        if let Some(pending) = &mut self.pending {
            pending.keep_clip_edits = false;
        }
    }

    /// Document `old` is now generation `new` (its clips were edited): a reload of it started
    /// before still finds it.
    pub(super) fn follow_generation(&mut self, old: u64, new: u64) {
        if let Some(pending) = &mut self.pending
            && pending.reload_of == Some(old)
        {
            pending.reload_of = Some(new);
        }
    }

    /// Loads the active document's file again in the background, keeping camera, selection,
    /// clip, time and bends where their names still match, and adding the clip files' clips
    /// again. Nothing happens for the demo rig without clip files, or while another load runs.
    pub fn reload(&mut self) {
        self.reload_document(self.active);
    }

    pub(super) fn reload_document(&mut self, index: usize) {
        if self.pending.is_some() {
            return;
        }
        let document = &self.documents[index];
        let clip_files = document.clip_files();
        if document.path.is_some() || !clip_files.is_empty() {
            self.start_load(document.path.clone(), Some(document.generation), clip_files);
        }
    }

    /// Loads `path` on this thread in place of the active document (for tests and the command
    /// line).
    pub fn open_now(&mut self, path: &Path) -> Result<(), RigError> {
        let rig = crate::rig::open_with(Some(path), &self.clip_carry.0.read)?;
        self.set_rig(rig, Some(path.to_owned()));
        Ok(())
    }

    /// Watches every open file, and every file opened later, with the files they use, for
    /// changes on disk: they mark the document's `file_changed` and, with
    /// [`Viewer::hot_reload`] on, reload it once the changes settle. `waker` is called from the
    /// watching thread on each change (the window uses it to wake its event loop);
    /// [`Viewer::tick`] does the rest.
    pub fn watch_files(&mut self, waker: Option<Waker>) {
        self.watching = Some(waker);
        for document in &mut self.documents {
            document.watcher = None;
        }
        self.update_watchers();
    }

    /// Whether the active document's file is being watched.
    pub fn is_watching(&self) -> bool {
        self.document().watcher.is_some()
    }

    /// Points each document's watcher at its file and sources (when watching is on).
    pub(super) fn update_watchers(&mut self) {
        let Some(waker) = &self.watching else { return };
        for document in &mut self.documents {
            let Some(files) = document.watched_files() else {
                document.watcher = None;
                continue;
            };
            if document.watcher.as_ref().is_some_and(|w| w.watches(&files)) {
                continue;
            }
            document.watcher = match FileWatcher::new(&files, waker.clone()) {
                Ok(watcher) => Some(watcher),
                Err(e) => {
                    log::warn!("{e}; hot reload is unavailable for {}", files[0].display());
                    None
                }
            };
        }
    }

    /// Takes the file watchers' news as of `now`: marks documents changed and, once a
    /// document's changes have settled by `now` and hot reload is on, starts its reload (one
    /// load at a time; the others wait for it). Returns true when something changed.
    pub fn poll_files(&mut self, now: Instant) -> bool {
        let mut news = false;
        let mut settled = None;
        for (index, document) in self.documents.iter_mut().enumerate() {
            let Some(watcher) = &mut document.watcher else { continue };
            let changed = watcher.poll(now);
            let (path, loaded_stamp) = (&document.path, document.loaded_stamp);
            let already_loaded = |file: &PathBuf| {
                path.as_ref() == Some(file) && loaded_stamp.is_some() && FileStamp::of(file) == loaded_stamp
            };
            if changed.iter().any(|file| !already_loaded(file)) {
                for file in &changed {
                    log::debug!("changed on disk: {}", file.display());
                }
                document.file_changed = true;
                document.changed_at = Some(now);
                news = true;
            }
            if self.hot_reload && self.pending.is_none() && settled.is_none() && watcher.settled(now) {
                if document.history.has_edits() {
                    // A reload would rebuild the document under the user's edits: ask first.
                    news |= !document.reload_asked;
                    document.reload_asked = true;
                } else {
                    settled = Some(index);
                }
            }
        }
        if let Some(index) = settled {
            self.reload_document(index);
            return true;
        }
        news
    }

    /// When the viewer next has something to do without input (changes on disk settling).
    pub fn next_deadline(&self) -> Option<Instant> {
        if !self.hot_reload {
            return None;
        }
        (self.documents.iter())
            .filter_map(|d| d.watcher.as_ref().and_then(FileWatcher::deadline))
            .min()
    }

    /// The window title: the active file's name (the rig's name without a file), marked with
    /// `•` while the file on disk is newer than what is shown.
    pub fn title(&self) -> String {
        let document = self.document();
        let name = (document.path.as_ref())
            .and_then(|p| p.file_name())
            .map_or_else(|| document.rig.name.clone(), |n| n.to_string_lossy().into_owned());
        let marker = if document.file_changed { "• " } else { "" };
        format!("{marker}{name} — Rigscope")
    }

    /// What a change of rig keeps of the viewer's state, by name.
    pub(super) fn keep_state(&self) -> KeptState {
        let rig = self.rig();
        let name = |node: usize| rig.nodes.get(node).map(|n| n.name.clone());
        let player = &self.playback.player;
        KeptState {
            camera: self.view.camera,
            selected: self.view.selected_joint.and_then(name),
            clip: player.clip.and_then(|c| rig.clips.get(c)).map(|c| c.name.clone()),
            time: player.time,
            playing: player.playing,
            overrides: (self.playback.animation.overrides.iter().enumerate())
                .filter(|(_, o)| !o.is_identity())
                .filter_map(|(node, o)| name(node).map(|n| (n, *o)))
                .collect(),
        }
    }

    pub(super) fn restore_state(&mut self, kept: KeptState) {
        let rig = &self.documents[self.active].rig;
        let playback = &mut self.playback;
        self.view.camera = kept.camera;
        if let Some(node) = kept.selected.and_then(|n| rig.find_node(&n)) {
            self.view.selected_joint = Some(node);
        }
        match kept.clip {
            Some(name) => {
                if let Some(clip) = rig.clips.iter().position(|c| c.name == name) {
                    playback.player.select(Some(clip));
                }
            }
            None => playback.player.select(None),
        }
        playback.player.playing = kept.playing;
        let duration = playback.clip_duration(rig);
        playback.player.seek(kept.time, duration);
        for (name, joint_override) in kept.overrides {
            if let Some(node) = rig.find_node(&name) {
                playback.animation.overrides[node] = joint_override;
            }
        }
        self.mark_dirty();
    }

    /// The file being loaded (`None`: the demo rig) and for how long, while a load runs.
    pub fn loading(&self) -> Option<(Option<&Path>, Duration)> {
        self.pending.as_ref().map(|p| (p.path.as_deref(), p.started.elapsed()))
    }

    /// Takes a finished background load. Returns true when the rig changed.
    pub fn poll_load(&mut self) -> bool {
        self.receive_load(false)
    }

    /// Waits for the background load to finish and takes it (for the command line and tests,
    /// which have nothing else to do meanwhile). Returns true when the rig changed.
    pub fn wait_for_load(&mut self) -> bool {
        self.receive_load(true)
    }

    fn receive_load(&mut self, block: bool) -> bool {
        let Some(pending) = self.pending.take() else {
            return false;
        };
        let received = if block {
            pending.job.wait()
        } else {
            match pending.job.try_wait() {
                Ok(received) => received,
                Err(job) => {
                    self.pending = Some(PendingLoad { job, ..pending });
                    return false;
                }
            }
        };
        let (path, started, reload_of, stamp, keep_clip_edits, recarry) = (
            pending.path,
            pending.started,
            pending.reload_of,
            pending.stamp,
            pending.keep_clip_edits,
            pending.recarry,
        );
        match received {
            Err(_) => {
                self.diagnostics.error = Some(format!("loading {} stopped unexpectedly", label(path.as_deref())));
                false
            }
            Ok(Ok((None, carried))) => {
                self.diagnostics.error = None;
                let Some(target) = reload_of.and_then(|g| self.documents.iter().position(|d| d.generation == g)) else {
                    // Closed (or replaced) while the clips were carried.
                    return false;
                };
                log::info!(
                    "carried the clips of {} file(s) in {:.0} ms",
                    carried.len(),
                    started.elapsed().as_secs_f64() * 1e3
                );
                for carried in carried {
                    if let Err(e) = self.add_carried_clips(target, carried, recarry) {
                        self.diagnostics.error = Some(format!("cannot add the clips: {e}"));
                    }
                }
                self.update_watchers();
                true
            }
            Ok(Ok((Some(mut rig), carried))) => {
                log::info!(
                    "{} {} in {:.0} ms",
                    if reload_of.is_some() { "reloaded" } else { "opened" },
                    label(path.as_deref()),
                    started.elapsed().as_secs_f64() * 1e3
                );
                self.diagnostics.error = None;
                let target = match reload_of {
                    None => self.active,
                    Some(generation) => match self.documents.iter().position(|d| d.generation == generation) {
                        Some(index) => index,
                        // Closed while it reloaded.
                        None => return false,
                    },
                };
                // Clip edits are part of the document: a reload (the file changed on disk, a
                // repair saved) makes them again on what it read, its carried clips carried
                // anew onto it.
                let replayed = (reload_of.filter(|_| keep_clip_edits))
                    .and_then(|generation| self.replay_clip_edits(generation, &mut rig, &carried));
                if target == self.active {
                    let kept = reload_of.is_some().then(|| self.keep_state());
                    self.set_rig(rig, path);
                    if let Some(kept) = kept {
                        self.restore_state(kept);
                    }
                } else {
                    self.put_document(target, rig, path, None);
                }
                let document = &mut self.documents[target];
                document.loaded_stamp = stamp;
                if let Some((clip_edits, steps, failure)) = replayed {
                    document.clip_edits = clip_edits;
                    for (label, before) in steps {
                        document.history.push(label, super::history::StepState::Clips(before));
                    }
                    self.diagnostics.error = failure;
                } else if reload_of.is_none() {
                    // A file opened with clip files (`--clips`): adding them is the first edit.
                    for carried in carried {
                        if let Err(e) = self.add_carried_clips(target, carried, false) {
                            self.diagnostics.error = Some(format!("cannot add the clips: {e}"));
                        }
                    }
                }
                if reload_of.is_some() && keep_clip_edits {
                    // The reloaded document holds the edits made again and the bends kept.
                    self.journal_again(target);
                }
                let document = &mut self.documents[target];
                // Changes seen before this load began are in it; so is any change whose file
                // is still the version it read (a watcher's news can arrive after the load
                // started, stamped later, for a write the load already read).
                let disk_is_loaded = stamp.is_some() && document.path.as_deref().and_then(FileStamp::of) == stamp;
                if disk_is_loaded || document.changed_at.is_none_or(|at| at <= started) {
                    document.file_changed = false;
                }
                self.update_watchers();
                true
            }
            Ok(Err(LoadError::Rig(e))) => {
                self.diagnostics.error = Some(format!(
                    "could not open {}: {e} (the previous rig is still shown)",
                    label(path.as_deref())
                ));
                false
            }
            Ok(Err(LoadError::Clips(e))) => {
                self.diagnostics.error = Some(format!("{e} (the rig is shown as it was)"));
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::demo::DEMO_GLB;
    use std::time::Duration;

    fn demo() -> crate::rig::Rig {
        crate::rig::load_slice(DEMO_GLB, None, "demo.glb").unwrap()
    }

    /// A watcher's news of a write can reach the viewer after a reload of that very write
    /// began, stamped later than the load's start: the file on disk is the version the load
    /// read, so it is not marked as changed. A write the load did not read stays marked.
    #[test]
    fn only_a_version_the_load_did_not_read_stays_marked_changed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rig.glb");
        std::fs::write(&file, DEMO_GLB).unwrap();
        let mut viewer = Viewer::new(demo(), None);
        viewer.open_now(&file).unwrap();
        let later = Instant::now() + Duration::from_secs(3600);

        viewer.reload();
        let document = &mut viewer.documents[viewer.active];
        (document.file_changed, document.changed_at) = (true, Some(later));
        assert!(viewer.wait_for_load());
        assert!(!viewer.document().file_changed);

        viewer.reload();
        // Written while the load ran: a version it may not have read. Replaced by a rename, as
        // editors save, so the load reads one whole version or the other, never a half-written
        // file (which would fail the load instead of testing the mark).
        let mut longer = DEMO_GLB.to_vec();
        longer.extend_from_slice(&[0; 4]);
        let replacement = dir.path().join("rig.glb.new");
        std::fs::write(&replacement, &longer).unwrap();
        std::fs::rename(&replacement, &file).unwrap();
        let document = &mut viewer.documents[viewer.active];
        (document.file_changed, document.changed_at) = (true, Some(later));
        assert!(viewer.wait_for_load());
        assert!(viewer.document().file_changed);
    }
}
