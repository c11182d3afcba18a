//! The symmetry view's data: the weight symmetry check run once per loaded rig, the first time
//! the view is shown (in the window, on a thread of its own).

use super::{Document, Viewer};
use crate::audit::{SymmetryOptions, SymmetryReport, VertexSymmetry, vertex_symmetry};
use crate::job::Job;

/// The symmetry check of one loaded rig.
pub(crate) struct SymmetryView {
    /// One line for the view panel.
    summary: String,
    pub(crate) values: VertexSymmetry,
}

/// One line saying what the symmetry check found.
fn summary(report: &SymmetryReport, options: &SymmetryOptions) -> String {
    if report.plane.is_none() {
        return "No mirrored Left/Right joint pairs: nothing to compare.".to_owned();
    }
    format!(
        "{} joint pairs; {} of {} vertices differ by more than {} from their mirror; {} have no mirror vertex.",
        report.pairs.len(),
        report.asymmetric_count,
        report.checked_vertices,
        options.threshold,
        report.unmatched_vertices,
    )
}

/// A symmetry check running on a thread of its own.
pub(super) struct SymmetryJob {
    result: Job<SymmetryView>,
}

impl SymmetryJob {
    pub(super) fn is_running(&self) -> bool {
        !self.result.is_finished()
    }
}

fn check(rig: &crate::rig::Rig) -> SymmetryView {
    let options = SymmetryOptions::default();
    let (report, values) = vertex_symmetry(rig, &options);
    SymmetryView {
        summary: summary(&report, &options),
        values,
    }
}

impl Document {
    /// The symmetry check of this document's rig, when it is done.
    pub(crate) fn current_symmetry(&self) -> Option<&SymmetryView> {
        self.symmetry.as_ref()
    }

    /// Runs the symmetry check if it has not run: in `background` on a thread of its own, else
    /// here. Call it again to take the result.
    fn ensure_symmetry(&mut self, background: bool) {
        if self.symmetry.is_some() {
            return;
        }
        match self.symmetry_job.take() {
            Some(job) if !job.is_running() || !background => {
                let view = job.result.wait().unwrap_or_else(|_| SymmetryView {
                    summary: "The symmetry check failed.".to_owned(),
                    values: VertexSymmetry::unchecked(&self.rig),
                });
                self.symmetry = Some(view);
            }
            Some(job) => self.symmetry_job = Some(job),
            None if background => {
                let rig = std::sync::Arc::clone(&self.rig);
                self.symmetry_job = Some(SymmetryJob {
                    result: Job::spawn(move || check(&rig)),
                });
            }
            None => self.symmetry = Some(check(&self.rig)),
        }
    }
}

impl Viewer {
    /// Runs the symmetry check if the active document has none yet: with
    /// [`Viewer::background_checks`] on a thread of its own (a big rig takes seconds, and the
    /// view shows its vertices as unchecked meanwhile), else here. Call it again to take the
    /// result. A check of a document no longer open is left to finish on its own.
    pub fn ensure_symmetry(&mut self) {
        let background = self.background_checks;
        self.documents[self.active].ensure_symmetry(background);
    }

    /// [`Viewer::ensure_symmetry`] for the other side of a comparison.
    pub(super) fn ensure_other_symmetry(&mut self) {
        let background = self.background_checks;
        if let Some(comparison) = self.compare.as_mut() {
            comparison.other_document_mut().ensure_symmetry(background);
        }
    }

    /// Runs the symmetry check of the active document to its end here, taking the result of
    /// one already running (for the command line and tests, which have nothing else to do).
    pub fn wait_for_symmetry(&mut self) {
        self.documents[self.active].ensure_symmetry(false);
    }

    /// What the symmetry check found in the active document, once the symmetry view has run it.
    pub fn symmetry_summary(&self) -> Option<&str> {
        self.document().current_symmetry().map(|s| s.summary.as_str())
    }

    /// Whether the symmetry check of the active document is running.
    pub fn checking_symmetry(&self) -> bool {
        (self.document().symmetry_job.as_ref()).is_some_and(SymmetryJob::is_running)
    }
}
