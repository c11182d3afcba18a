//! A file changed on disk under a document's edits: the question the viewer asks before a
//! reload would rebuild the document, and what each answer does.

use super::{Viewer, label};

/// A file changed on disk under a document's edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReloadQuestion {
    pub document: usize,
    /// The file, as messages name it.
    pub name: String,
    /// The edits a reload cannot make again (see [`super::history::History::edits_a_reload_drops`]).
    pub dropped: Vec<String>,
}

/// What to do with edits when their file changed on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReloadAnswer {
    /// Reload, making the edits again where they still apply (clip edits, carried clips, bends
    /// by joint name); the others are named.
    ReloadKeepingEdits,
    /// Keep the document as it is; its file is not watched again until it is saved.
    KeepMine,
    /// Reload and drop every edit.
    ReloadDroppingEdits,
}

impl Viewer {
    /// The document whose file changed on disk under edits, waiting for an answer, if any.
    pub fn reload_question(&self) -> Option<ReloadQuestion> {
        let (index, document) = self.documents.iter().enumerate().find(|(_, d)| d.reload_asked)?;
        Some(ReloadQuestion {
            document: index,
            name: label(document.path.as_deref()),
            dropped: document.history.edits_a_reload_drops(),
        })
    }

    /// Answers [`Viewer::reload_question`] for document `index`.
    pub fn answer_reload(&mut self, index: usize, answer: ReloadAnswer) {
        let Some(document) = self.documents.get_mut(index) else {
            return;
        };
        document.reload_asked = false;
        match answer {
            ReloadAnswer::ReloadKeepingEdits => {
                let dropped = document.history.edits_a_reload_drops();
                if !dropped.is_empty() {
                    self.notice = Some(format!(
                        "not made again on the file as it is now: {}",
                        dropped.join(", ")
                    ));
                }
                self.reload_document(index);
            }
            ReloadAnswer::KeepMine => {
                document.watch_paused = true;
                document.watcher = None;
                self.update_watchers();
            }
            ReloadAnswer::ReloadDroppingEdits => {
                let (path, generation) = (document.path.clone(), document.generation);
                if path.is_some() && self.pending.is_none() {
                    self.start_load(path, Some(generation), Vec::new());
                    self.forget_clip_edits_on_load();
                }
            }
        }
    }
}
