//! Opening files in the background, reloading them, and watching them for changes on disk.

use super::*;
use crate::job::Job;
use crate::reload::FileWatcher;
use crate::render::OrbitCamera;

/// A load running on a background thread.
pub(super) struct PendingLoad {
    /// The file, or `None` for the built-in demo rig.
    path: Option<PathBuf>,
    started: Instant,
    job: Job<Result<Rig, RigError>>,
    /// A reload of the file on screen: the view, selection, playback and bends carry over.
    reload: bool,
}

/// How messages name a file being loaded (`None`: the demo rig).
pub fn label(path: Option<&Path>) -> String {
    path.map_or_else(|| "the demo rig".into(), |p| p.display().to_string())
}

/// What a reload keeps of the viewer's state, by name where indices may change.
struct KeptState {
    camera: OrbitCamera,
    selected: Option<String>,
    /// The clip's name; `None` for the rest pose.
    clip: Option<String>,
    time: f32,
    playing: bool,
    overrides: Vec<(String, JointOverride)>,
}

impl Viewer {
    /// Starts loading `path` on a background thread; the current rig stays until it succeeds.
    pub fn open(&mut self, path: PathBuf) {
        self.start_load(Some(path), false);
    }

    /// Starts loading the built-in demo rig the way a file is loaded.
    pub fn open_demo(&mut self) {
        self.start_load(None, false);
    }

    fn start_load(&mut self, path: Option<PathBuf>, reload: bool) {
        log::info!(
            "{} {}",
            if reload { "reloading" } else { "opening" },
            label(path.as_deref())
        );
        let thread_path = path.clone();
        let job = Job::spawn(move || crate::rig::open(thread_path.as_deref()));
        self.pending = Some(PendingLoad {
            path,
            started: Instant::now(),
            job,
            reload,
        });
    }

    /// Loads the open file again in the background, keeping camera, selection, clip, time and
    /// bends where their names still match. Nothing happens for the demo rig, or while another
    /// file is being opened.
    pub fn reload(&mut self) {
        if self.opening_other_file() {
            return;
        }
        if let Some(path) = self.path.clone() {
            self.start_load(Some(path), true);
        }
    }

    /// Loads `path` on this thread (for tests and the command line).
    pub fn open_now(&mut self, path: &Path) -> Result<(), RigError> {
        let rig = crate::rig::open(Some(path))?;
        self.set_rig(rig, Some(path.to_owned()));
        Ok(())
    }

    /// Whether a file other than a reload of the open one is loading.
    fn opening_other_file(&self) -> bool {
        self.pending.as_ref().is_some_and(|p| !p.reload)
    }

    /// Watches the open file, and every file opened later, with the files they use, for
    /// changes on disk: they mark [`Viewer::file_changed`] and, with [`Viewer::hot_reload`] on,
    /// reload the file once the changes settle. `waker` is called from the watching thread on
    /// each change (the window uses it to wake its event loop); [`Viewer::tick`] does the rest.
    pub fn watch_files(&mut self, waker: Option<Waker>) {
        self.watching = Some(waker);
        self.watcher = None;
        self.update_watcher();
    }

    /// Whether the open file is being watched.
    pub fn is_watching(&self) -> bool {
        self.watcher.is_some()
    }

    /// Points the watcher at the open file and its sources (when watching is on).
    pub(super) fn update_watcher(&mut self) {
        let Some(waker) = &self.watching else { return };
        let Some(path) = &self.path else {
            self.watcher = None;
            return;
        };
        let mut files = vec![path.clone()];
        files.extend(self.rig.sources.iter().cloned());
        if self.watcher.as_ref().is_some_and(|w| w.watches(&files)) {
            return;
        }
        self.watcher = match FileWatcher::new(&files, waker.clone()) {
            Ok(watcher) => Some(watcher),
            Err(e) => {
                log::warn!("{e}; hot reload is unavailable for {}", path.display());
                None
            }
        };
    }

    /// Takes the file watcher's news as of `now`: marks the file changed and, once changes have
    /// settled by `now` and hot reload is on, starts a reload. Returns true when something
    /// changed.
    pub fn poll_files(&mut self, now: Instant) -> bool {
        let busy = self.opening_other_file();
        let Some(watcher) = &mut self.watcher else { return false };
        let changed = watcher.poll(now);
        if !changed.is_empty() {
            for file in &changed {
                log::debug!("changed on disk: {}", file.display());
            }
            self.file_changed = true;
            self.changed_at = Some(now);
        }
        if self.hot_reload && !busy && watcher.settled(now) {
            self.reload();
            return true;
        }
        !changed.is_empty()
    }

    /// When the viewer next has something to do without input (changes on disk settling).
    pub fn next_deadline(&self) -> Option<Instant> {
        if !self.hot_reload {
            return None;
        }
        self.watcher.as_ref().and_then(FileWatcher::deadline)
    }

    /// The window title: the file name (the rig's name without a file), marked with `•` while
    /// the file on disk is newer than what is shown.
    pub fn title(&self) -> String {
        let name = self
            .path
            .as_ref()
            .and_then(|p| p.file_name())
            .map_or_else(|| self.rig.name.clone(), |n| n.to_string_lossy().into_owned());
        let marker = if self.file_changed { "• " } else { "" };
        format!("{marker}{name} — Rigscope")
    }

    fn keep_state(&self) -> KeptState {
        let name = |node: usize| self.rig.nodes.get(node).map(|n| n.name.clone());
        KeptState {
            camera: self.view.camera,
            selected: self.view.selected_joint.and_then(name),
            clip: self
                .player
                .clip
                .and_then(|c| self.rig.clips.get(c))
                .map(|c| c.name.clone()),
            time: self.player.time,
            playing: self.player.playing,
            overrides: self
                .animation
                .overrides
                .iter()
                .enumerate()
                .filter(|(_, o)| !o.is_identity())
                .filter_map(|(node, o)| name(node).map(|n| (n, *o)))
                .collect(),
        }
    }

    fn restore_state(&mut self, kept: KeptState) {
        self.view.camera = kept.camera;
        if let Some(node) = kept.selected.and_then(|n| self.rig.find_node(&n)) {
            self.view.selected_joint = Some(node);
        }
        match kept.clip {
            Some(name) => {
                if let Some(clip) = self.rig.clips.iter().position(|c| c.name == name) {
                    self.player.select(Some(clip));
                }
            }
            None => self.player.select(None),
        }
        self.player.playing = kept.playing;
        self.player.seek(kept.time, self.clip_duration());
        for (name, joint_override) in kept.overrides {
            if let Some(node) = self.rig.find_node(&name) {
                self.animation.overrides[node] = joint_override;
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
        let (path, started, reload) = (pending.path, pending.started, pending.reload);
        match received {
            Err(_) => {
                self.diagnostics.error = Some(format!("loading {} stopped unexpectedly", label(path.as_deref())));
                false
            }
            Ok(Ok(rig)) => {
                log::info!(
                    "{} {} in {:.0} ms",
                    if reload { "reloaded" } else { "opened" },
                    label(path.as_deref()),
                    started.elapsed().as_secs_f64() * 1e3
                );
                self.diagnostics.error = None;
                let reload = reload && path.is_some() && self.path == path;
                let kept = reload.then(|| self.keep_state());
                self.set_rig(rig, path);
                if let Some(kept) = kept {
                    self.restore_state(kept);
                }
                if self.changed_at.is_none_or(|at| at <= started) {
                    self.file_changed = false;
                }
                true
            }
            Ok(Err(e)) => {
                self.diagnostics.error = Some(format!(
                    "could not open {}: {e} (the previous rig is still shown)",
                    label(path.as_deref())
                ));
                false
            }
        }
    }
}
