//! The symmetry view's data: the weight symmetry check run once per loaded rig, the first time
//! the view is shown (in the window, on a thread of its own).

use super::Viewer;
use crate::audit::{SymmetryOptions, SymmetryReport, VertexSymmetry, vertex_symmetry};
use crate::job::Job;

/// The symmetry check of one loaded rig.
pub(super) struct SymmetryView {
    generation: u64,
    /// One line for the view panel.
    summary: String,
    pub(super) values: VertexSymmetry,
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

/// A symmetry check running on a thread of its own, for the rig of `generation`.
pub(super) struct SymmetryJob {
    generation: u64,
    result: Job<SymmetryView>,
}

impl SymmetryJob {
    pub(super) fn is_running(&self) -> bool {
        !self.result.is_finished()
    }
}

/// The symmetry check of `rig`, loaded as `generation`.
fn check(rig: &crate::rig::Rig, generation: u64) -> SymmetryView {
    let options = SymmetryOptions::default();
    let (report, values) = vertex_symmetry(rig, &options);
    SymmetryView {
        generation,
        summary: summary(&report, &options),
        values,
    }
}

impl Viewer {
    /// Runs the symmetry check if the loaded rig has none yet: with
    /// [`Viewer::background_checks`] on a thread of its own (a big rig takes seconds, and the
    /// view shows its vertices as unchecked meanwhile), else here. Call it again to take the
    /// result.
    pub fn ensure_symmetry(&mut self) {
        let generation = self.rig_generation;
        if self.symmetry.as_ref().is_some_and(|s| s.generation == generation) {
            return;
        }
        // A check of a rig no longer shown is left to finish on its own.
        let job = self.symmetry_job.take().filter(|job| job.generation == generation);
        match job {
            Some(job) if !job.is_running() || !self.background_checks => {
                let view = job.result.wait().unwrap_or_else(|_| SymmetryView {
                    generation,
                    summary: "The symmetry check failed.".to_owned(),
                    values: VertexSymmetry::unchecked(&self.rig),
                });
                self.symmetry = Some(view);
            }
            Some(job) => self.symmetry_job = Some(job),
            None if self.background_checks => {
                let rig = std::sync::Arc::clone(&self.rig);
                self.symmetry_job = Some(SymmetryJob {
                    generation,
                    result: Job::spawn(move || check(&rig, generation)),
                });
            }
            None => self.symmetry = Some(check(&self.rig, generation)),
        }
    }

    /// Runs the symmetry check of the loaded rig to its end here, taking the result of one
    /// already running (for the command line and tests, which have nothing else to do).
    pub fn wait_for_symmetry(&mut self) {
        let background = std::mem::replace(&mut self.background_checks, false);
        self.ensure_symmetry();
        self.background_checks = background;
    }

    /// What the symmetry check found in the loaded rig, once the symmetry view has run it.
    pub fn symmetry_summary(&self) -> Option<&str> {
        self.current_symmetry().map(|s| s.summary.as_str())
    }

    /// Whether the symmetry check of the loaded rig is running.
    pub fn checking_symmetry(&self) -> bool {
        self.symmetry_job
            .as_ref()
            .is_some_and(|job| job.generation == self.rig_generation && job.is_running())
    }

    /// The symmetry check of the loaded rig, when it is done.
    pub(super) fn current_symmetry(&self) -> Option<&SymmetryView> {
        self.symmetry.as_ref().filter(|s| s.generation == self.rig_generation)
    }
}
