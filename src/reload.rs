//! Watching the open file and the files it uses for changes on disk (hot reload).
//!
//! The folders holding the files are watched rather than the files themselves, so that a file
//! replaced by a rename (how many exporters and editors save) is still seen. Events for other
//! files in those folders, and accesses that change nothing (opening and reading, as the
//! importer itself does), are ignored. Changes are debounced: a reload starts once no change
//! has come in for [`DEBOUNCE`], so a file written in several steps is read once, complete.

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant, SystemTime};

/// Quiet time after the last change before a reload starts.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

/// Called from the watcher's thread when a watched file changed, to wake a sleeping event loop.
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// Watches a set of files; [`FileWatcher::poll`] reports changes, debounced.
pub struct FileWatcher {
    files: Vec<PathBuf>,
    events: Receiver<PathBuf>,
    /// Time of the latest change not yet handed out by [`FileWatcher::settled`].
    last_change: Option<Instant>,
    _watcher: RecommendedWatcher,
}

/// Whether an event can mean new contents: creation, modification, removal, rename, or a file
/// closed after writing; not a read.
fn changes_contents(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// Why files could not be watched for changes.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot watch files for changes: {0}")]
    Start(#[source] notify::Error),
    #[error("cannot watch {} for changes: {source}", folder.display())]
    Folder {
        folder: PathBuf,
        #[source]
        source: notify::Error,
    },
}

impl FileWatcher {
    /// Starts watching `files` (relative paths are taken from the current folder). `waker`
    /// runs on the watcher's thread after each relevant change.
    pub fn new(files: &[PathBuf], waker: Option<Waker>) -> Result<FileWatcher, WatchError> {
        let files: Vec<PathBuf> = files
            .iter()
            .map(|f| std::path::absolute(f).unwrap_or_else(|_| f.clone()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let folders: BTreeSet<PathBuf> = files.iter().filter_map(|f| f.parent().map(Path::to_owned)).collect();
        let (sender, events) = channel();
        let watched = files.clone();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
            let event = match event {
                Ok(event) => event,
                Err(e) => {
                    log::warn!("file watching: {e}");
                    return;
                }
            };
            if !changes_contents(&event.kind) {
                return;
            }
            let mut relevant = false;
            for path in event.paths {
                if watched.contains(&path) {
                    relevant = true;
                    let _ = sender.send(path);
                }
            }
            if relevant && let Some(wake) = &waker {
                wake();
            }
        })
        .map_err(WatchError::Start)?;
        for folder in &folders {
            watcher
                .watch(folder, RecursiveMode::NonRecursive)
                .map_err(|source| WatchError::Folder {
                    folder: folder.clone(),
                    source,
                })?;
        }
        Ok(FileWatcher {
            files,
            events,
            last_change: None,
            _watcher: watcher,
        })
    }

    /// The watched files, absolute.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Whether this watcher watches exactly `files`.
    pub fn watches(&self, files: &[PathBuf]) -> bool {
        let wanted: BTreeSet<PathBuf> = files
            .iter()
            .map(|f| std::path::absolute(f).unwrap_or_else(|_| f.clone()))
            .collect();
        wanted.iter().eq(self.files.iter())
    }

    /// Takes the changes that came in, as seen at `now`; returns the files that changed (each
    /// once).
    pub fn poll(&mut self, now: Instant) -> Vec<PathBuf> {
        let changed: BTreeSet<PathBuf> = self.events.try_iter().collect();
        if !changed.is_empty() {
            self.last_change = Some(now);
        }
        changed.into_iter().collect()
    }

    /// True once, when changes came in and none has followed for [`DEBOUNCE`] by `now`.
    pub fn settled(&mut self, now: Instant) -> bool {
        match self.last_change {
            Some(at) if now.duration_since(at) >= DEBOUNCE => {
                self.last_change = None;
                true
            }
            _ => false,
        }
    }

    /// When the pending changes will have settled, if there are any.
    pub fn deadline(&self) -> Option<Instant> {
        self.last_change.map(|at| at + DEBOUNCE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn wait_for(watcher: &mut FileWatcher, what: &str) -> Vec<PathBuf> {
        let started = Instant::now();
        loop {
            let changed = watcher.poll(Instant::now());
            if !changed.is_empty() {
                return changed;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "no event for {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn sees_writes_and_replacements_of_watched_files_only_and_debounces() {
        let temporary_dir = tempfile::tempdir().unwrap();
        let dir = temporary_dir.path();
        let (model, bin, other) = (dir.join("a.gltf"), dir.join("a.bin"), dir.join("other.txt"));
        for f in [&model, &bin, &other] {
            std::fs::write(f, b"1").unwrap();
        }
        let wakes = Arc::new(AtomicUsize::new(0));
        let counter = wakes.clone();
        let mut watcher = FileWatcher::new(
            &[model.clone(), bin.clone()],
            Some(Arc::new(move || {
                counter.fetch_add(1, Ordering::SeqCst);
            })),
        )
        .unwrap();
        assert!(watcher.watches(&[bin.clone(), model.clone()]));

        // Reading a watched file and writing an unwatched one are not changes: the write of a
        // watched file that follows them is the only change reported.
        assert!(!watcher.settled(Instant::now()));
        std::fs::read(&model).unwrap();
        std::fs::write(&other, b"2").unwrap();
        std::fs::write(&bin, b"2").unwrap();
        assert_eq!(wait_for(&mut watcher, "a write"), std::slice::from_ref(&bin));
        assert!(wakes.load(Ordering::SeqCst) > 0);
        let deadline = watcher.deadline().expect("a change is pending");
        assert!(!watcher.settled(deadline - Duration::from_millis(1)));
        assert!(watcher.settled(deadline));
        assert!(!watcher.settled(deadline + DEBOUNCE), "handed out once");

        // Saved through a temporary file and a rename.
        let temporary = dir.join("a.gltf.tmp");
        std::fs::write(&temporary, b"3").unwrap();
        std::fs::rename(&temporary, &model).unwrap();
        // A late event of the write above (a busy machine delivers them after the poll that
        // handed the write out) can come first; the rename's follows.
        let started = Instant::now();
        while !wait_for(&mut watcher, "a rename").contains(&model) {
            assert!(started.elapsed() < Duration::from_secs(10), "no event for the rename");
        }
    }
}

/// One version of a file on disk, as far as its metadata tells: modification time and length.
/// Watchers report a write as several events that can arrive late; an event for a file whose
/// stamp is still the one read by the last load is the echo of a write already loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    modified: SystemTime,
    len: u64,
}

impl FileStamp {
    /// `None` when the file cannot be read or the system keeps no modification time.
    pub fn of(path: &Path) -> Option<FileStamp> {
        let metadata = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            modified: metadata.modified().ok()?,
            len: metadata.len(),
        })
    }
}
