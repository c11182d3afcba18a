//! The walk's round through files, after each rig's walk: File ▸ Save as…, then a change on
//! disk under an edit, answered in the window. File ▸ Open over unsaved edits follows with the
//! next rig's walk (see [`Monkey::open`]).

use super::{Monkey, Session};
use egui::Modifiers;
use egui_kittest::kittest::Queryable;
use rigscope::ui;
use rigscope::viewer::{ClipEdit, Viewer};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a change on disk may take to reach the viewer from the OS's watcher thread.
const NOTICE_BOUND: Duration = Duration::from_secs(10);

fn clip_names(viewer: &Viewer) -> Vec<String> {
    viewer.rig().clips.iter().map(|clip| clip.name.clone()).collect()
}

impl Monkey {
    /// Saves the document as `walk-N.glb` in `folder` through Save as…'s answer: the file
    /// written opens in the document's place, with the same clips and no edits. Then renames a
    /// clip, writes the file again on disk, and answers the window's question with "Reload and
    /// keep my edits": the file reloads and the rename is made again on it.
    pub(super) fn file_round(&mut self, folder: &Path, walk: usize) -> String {
        self.settle();
        let file = self.stage.file;
        let names = clip_names(self.viewer());
        let output = folder.join(format!("walk-{walk}.glb"));
        let Session { viewer, ui, .. } = self.harness.state_mut();
        ui::clip_list::save_as_from_dialog(viewer, ui, |_, _| Some(output.clone()));
        viewer.wait_for_save();
        viewer.wait_for_load();
        self.frame();
        let viewer = self.viewer();
        assert_eq!(
            viewer.diagnostics.error,
            None,
            "{file} as edited saves as {}",
            output.display()
        );
        assert_eq!(
            viewer.document().path.as_deref(),
            Some(output.as_path()),
            "the file written opens"
        );
        assert_eq!(viewer.history().undo_count(), 0, "the file written opens with no edits");
        assert_eq!(clip_names(viewer), names, "the file written of {file} has its clips");
        if names.is_empty() {
            return "save as (no clip to rename)".into();
        }
        let renamed = format!("walk {walk}");
        let rename = ClipEdit::Rename {
            clip: 0,
            name: renamed.clone(),
        };
        viewer.edit_clip(rename).expect("a clip of the file written renames");
        // The walk may have clicked File ▸ Hot reload off; the round is about the question a
        // reload under edits asks, so it turns it on for the round.
        let hot_reload = std::mem::replace(&mut viewer.hot_reload, true);
        viewer.watch_files(None);
        let written = std::fs::read(&output).expect("the file written reads");
        std::fs::write(&output, written).expect("the file written writes again");
        self.answer_change_on_disk();
        let viewer = self.viewer();
        viewer.hot_reload = hot_reload;
        assert_eq!(viewer.diagnostics.error, None, "the file written of {file} reloads");
        assert_eq!(
            viewer.rig().clips[0].name,
            renamed,
            "the rename is made again on the reloaded file"
        );
        let undo = format!("rename {} to {renamed}", names[0]);
        assert_eq!(viewer.history().undo_label(), Some(undo.as_str()));
        format!("save as {}, renamed a clip, reloaded keeping it", output.display())
    }

    /// Waits for the change on disk to reach the viewer, lets it settle (on the viewer's clock,
    /// not in real time), and clicks "Reload and keep my edits" in the question it asks.
    fn answer_change_on_disk(&mut self) {
        let started = Instant::now();
        while !self.viewer().document().file_changed {
            assert!(started.elapsed() < NOTICE_BOUND, "the change on disk is noticed");
            self.viewer().tick(0.0);
            std::thread::sleep(Duration::from_millis(2));
        }
        // Long after the changes settled, as the viewer's clock sees it; a late notice of the
        // same write (from the watcher thread, in real time) is stamped with that clock, so
        // each look is later still.
        let mut looks = 0;
        let asked = loop {
            looks += 1;
            let viewer = self.viewer();
            viewer.poll_files(Instant::now() + rigscope::reload::DEBOUNCE * (3 * looks));
            assert!(viewer.loading().is_none(), "nothing reloads under edits");
            if viewer.reload_question().is_some() || started.elapsed() > NOTICE_BOUND {
                break viewer.reload_question().is_some();
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        assert!(asked, "a change on disk under edits asks");
        self.click_when_shown("Reload and keep my edits");
        assert!(self.viewer().reload_question().is_none(), "the question is answered");
        self.viewer().wait_for_load();
        self.frame();
    }

    /// Clicks the button labelled `label` once a window shows it (a question's window shows
    /// from the frame after it is asked).
    pub(super) fn click_when_shown(&mut self, label: &str) {
        for _ in 0..5 {
            self.frame();
            if let Some(button) = self.harness.query_by_label(label) {
                let at = button.rect().center();
                self.click_anything(at, Modifiers::NONE);
                return;
            }
        }
        panic!("no '{label}' button shows");
    }
}
