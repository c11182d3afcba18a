//! The symmetry view's data: the weight symmetry check run once per loaded rig, the first time
//! the view is shown.

use super::Viewer;
use crate::audit::{SymmetryOptions, SymmetryReport, VertexSymmetry, vertex_symmetry};

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

impl Viewer {
    /// Runs the symmetry check if the loaded rig has none yet.
    pub fn ensure_symmetry(&mut self) {
        if self
            .symmetry
            .as_ref()
            .is_some_and(|s| s.generation == self.rig_generation)
        {
            return;
        }
        let options = SymmetryOptions::default();
        let (report, values) = vertex_symmetry(&self.rig, &options);
        self.symmetry = Some(SymmetryView {
            generation: self.rig_generation,
            summary: summary(&report, &options),
            values,
        });
    }

    /// What the symmetry check found in the loaded rig, once the symmetry view has run it.
    pub fn symmetry_summary(&self) -> Option<&str> {
        (self.symmetry.as_ref())
            .filter(|s| s.generation == self.rig_generation)
            .map(|s| s.summary.as_str())
    }
}
