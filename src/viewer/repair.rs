//! Repairing the active rig's weights in the window: what each repair would change (computed
//! on a thread of its own in the window), the repaired rig previewed in place of the loaded one
//! with a before/after toggle, the vertices that changed marked, and saving it.

use super::history::{Direction, StepState};
use super::symmetry::{SymmetryJob, SymmetryView};
use super::{Document, VertexRef, Viewer, marks_on_every_instance};
use crate::job::Job;
use crate::repair::{REPAIRS, RepairCounts, RepairOptions};
use crate::report::RigReport;
use crate::rig::Rig;
use crate::save::{SaveError, SaveOptions, Saved};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the repairs would do to one rig with one set of options.
pub struct RepairAnalysis {
    /// Each repair run alone on the loaded rig, in [`REPAIRS`] order.
    pub each: Vec<RepairCounts>,
    /// The rig with the chosen repairs applied together.
    pub repaired: Arc<Rig>,
    /// What applying them together did.
    pub summary: crate::repair::RepairSummary,
    /// Per mesh and primitive (index into `Mesh::primitives`), the vertices whose joints or
    /// weights the chosen repairs changed.
    pub changed: Vec<(usize, usize, Vec<usize>)>,
}

impl RepairAnalysis {
    fn of(rig: &Rig, options: &RepairOptions) -> RepairAnalysis {
        let each = (REPAIRS.iter())
            .flat_map(|&r| crate::repair::apply(rig, &options.single(r)).1.repairs)
            .collect();
        let (repaired, summary) = crate::repair::apply(rig, &options.plan());
        RepairAnalysis {
            each,
            changed: changed_vertices(rig, &repaired),
            repaired: Arc::new(repaired),
            summary,
        }
    }

    /// Vertices the chosen repairs changed, in every primitive.
    pub fn changed_count(&self) -> usize {
        self.changed.iter().map(|(_, _, v)| v.len()).sum()
    }
}

/// Per mesh and primitive, the vertices whose joints or weights differ between `before` and
/// `after` (bit for bit).
pub fn changed_vertices(before: &Rig, after: &Rig) -> Vec<(usize, usize, Vec<usize>)> {
    let mut changed = Vec::new();
    for (m, (old_mesh, new_mesh)) in before.meshes.iter().zip(&after.meshes).enumerate() {
        for (p, (old, new)) in old_mesh.primitives.iter().zip(&new_mesh.primitives).enumerate() {
            let (Some(old), Some(new)) = (&old.influences, &new.influences) else {
                continue;
            };
            if old.sets != new.sets {
                continue;
            }
            let sets = old.sets;
            let vertices: Vec<usize> = (0..old.joints.len().min(new.joints.len()) / sets.max(1))
                .filter(|&v| {
                    let range = v * sets..(v + 1) * sets;
                    old.joints[range.clone()] != new.joints[range.clone()]
                        || (old.weights[range.clone()].iter().flatten())
                            .zip(new.weights[range].iter().flatten())
                            .any(|(a, b)| a.to_bits() != b.to_bits())
                })
                .collect();
            if !vertices.is_empty() {
                changed.push((m, p, vertices));
            }
        }
    }
    changed
}

/// What is shown for one side of the preview, with the caches computed for it.
pub(super) struct Shown {
    rig: Arc<Rig>,
    generation: u64,
    influence_counts: Vec<usize>,
    report: Option<Arc<RigReport>>,
    symmetry: Option<SymmetryView>,
    symmetry_job: Option<SymmetryJob>,
}

impl Shown {
    fn new(rig: Arc<Rig>, generation: u64) -> Shown {
        Shown {
            influence_counts: super::influence_counts(&rig),
            rig,
            generation,
            report: None,
            symmetry: None,
            symmetry_job: None,
        }
    }

    /// Exchanges what `document` shows with this.
    pub(super) fn swap_with(&mut self, document: &mut Document) {
        std::mem::swap(&mut self.rig, &mut document.rig);
        std::mem::swap(&mut self.generation, &mut document.generation);
        std::mem::swap(&mut self.influence_counts, &mut document.influence_counts);
        std::mem::swap(&mut self.report, &mut document.report);
        std::mem::swap(&mut self.symmetry, &mut document.symmetry);
        std::mem::swap(&mut self.symmetry_job, &mut document.symmetry_job);
    }
}

/// A repair applied as the document's latest edit, with a before/after toggle that is undo and
/// redo of it.
struct Preview {
    /// The edit's serial in the document's history.
    serial: u64,
    /// The loaded rig, whichever side is shown (for saving).
    loaded: Arc<Rig>,
    /// The repaired rig, whichever side is shown.
    repaired: Arc<Rig>,
    /// The vertices it changed, on every instance.
    marks: Vec<VertexRef>,
    options: RepairOptions,
}

/// One document's repair state: the analysis for the options last asked about and the preview.
#[derive(Default)]
pub struct RepairState {
    analysis: Option<(RepairOptions, Arc<RepairAnalysis>)>,
    job: Option<(RepairOptions, Job<RepairAnalysis>)>,
    preview: Option<Preview>,
    /// Mark the vertices the previewed repair changed.
    pub mark_changed: bool,
}

impl RepairState {
    /// Drops the analysis made of the rig before its clips changed (its repaired rig carries
    /// the old clips); a running analysis is left to finish on its own, unused.
    pub(super) fn forget_analysis(&mut self) {
        self.analysis = None;
        self.job = None;
    }

    /// Ends the preview with the repair applied (another edit was made over it); returns
    /// whether one ended.
    pub(super) fn end_preview_keeping_repair(&mut self) -> bool {
        self.preview.take().is_some()
    }

    /// The vertices marked as changed by the preview.
    pub(super) fn marks(&self) -> &[VertexRef] {
        match &self.preview {
            Some(preview) if self.mark_changed => &preview.marks,
            _ => &[],
        }
    }
}

impl Document {
    /// The rig as loaded, whether or not a preview shows another.
    fn loaded_rig(&self) -> &Arc<Rig> {
        self.repair.preview.as_ref().map_or(&self.rig, |p| &p.loaded)
    }
}

/// Why saving the repaired rig did not happen.
#[derive(Debug, thiserror::Error)]
pub enum RepairSaveError {
    #[error("no repair is previewed: choose repairs and press Preview first")]
    NoPreview,
    #[error("the previewed repair changes no weight: nothing to save")]
    NothingChanged,
    #[error("the demo rig has no file to save a repaired copy of")]
    NoFile,
    #[error(transparent)]
    Save(#[from] SaveError),
}

/// The name Save as… suggests for a repaired copy of `input`: `NAME.fixed.glb` (`.gltf` for a
/// `.gltf` input, which keeps its format).
pub fn suggested_name(input: &Path) -> String {
    let stem = input.file_stem().map_or_else(|| "rig".into(), |s| s.to_string_lossy());
    let gltf = input.extension().is_some_and(|e| e.eq_ignore_ascii_case("gltf"));
    format!("{stem}.fixed.{}", if gltf { "gltf" } else { "glb" })
}

impl Viewer {
    /// What the repairs would do to the active document's loaded rig with `options`: `None`
    /// while that is computed (with [`Viewer::background_checks`] on a thread of its own, else
    /// here at once). Call it again to take the result.
    pub fn repair_analysis(&mut self, options: &RepairOptions) -> Option<Arc<RepairAnalysis>> {
        let background = self.background_checks;
        let document = &mut self.documents[self.active];
        let state = &mut document.repair;
        if let Some((asked, analysis)) = &state.analysis
            && asked == options
        {
            return Some(Arc::clone(analysis));
        }
        let finished = match state.job.take() {
            Some((asked, job)) if asked == *options && (!background || job.is_finished()) => Some(job.wait()),
            Some((asked, job)) if asked == *options => {
                state.job = Some((asked, job));
                return None;
            }
            // A job for other options is left to finish on its own.
            _ => None,
        };
        let analysis = match finished {
            Some(Ok(analysis)) => analysis,
            Some(Err(e)) => {
                self.diagnostics.error = Some(format!("the repair failed: {e}"));
                return None;
            }
            None => {
                let rig = Arc::clone(document.loaded_rig());
                if background {
                    let asked = *options;
                    let job = Job::spawn(move || RepairAnalysis::of(&rig, &asked));
                    document.repair.job = Some((asked, job));
                    return None;
                }
                RepairAnalysis::of(&rig, options)
            }
        };
        let analysis = Arc::new(analysis);
        document.repair.analysis = Some((*options, Arc::clone(&analysis)));
        Some(analysis)
    }

    /// Whether a repair analysis of the active document is running.
    pub fn analysing_repairs(&self) -> bool {
        (self.document().repair.job.as_ref()).is_some_and(|(_, job)| !job.is_finished())
    }

    /// Applies the repair with `options` to the active document as an edit: the repaired rig
    /// is shown in place of the loaded one, in every view and on both skinning paths, with the
    /// vertices it changed marked, and [`Viewer::show_repaired`] toggles before and after (undo
    /// and redo of it); `false` while the analysis is still running (see
    /// [`Viewer::repair_analysis`]).
    pub fn preview_repair(&mut self, options: &RepairOptions) -> bool {
        let Some(analysis) = self.repair_analysis(options) else {
            return false;
        };
        self.end_repair_preview();
        self.last_generation += 1;
        let generation = self.last_generation;
        let document = &mut self.documents[self.active];
        let loaded = Arc::clone(&document.rig);
        let repaired = Arc::clone(&analysis.repaired);
        let marks = (analysis.changed.iter())
            .flat_map(|(mesh, primitive, vertices)| {
                marks_on_every_instance(&loaded, *mesh, *primitive, vertices.iter().copied())
            })
            .collect();
        document.weights_read.get_or_insert_with(|| Arc::clone(&loaded));
        let mut before = Shown::new(Arc::clone(&repaired), generation);
        before.swap_with(document);
        let label = format!("repair weights ({})", options.chosen_names());
        let serial = self.record_edit(label, StepState::Rig(Box::new(before)));
        let document = &mut self.documents[self.active];
        document.repair.preview = Some(Preview {
            serial,
            loaded,
            repaired,
            marks,
            options: *options,
        });
        document.repair.mark_changed = true;
        self.marks.stale = true;
        self.mark_dirty();
        self.journal(self.active, crate::journal::Entry::Repair(*options));
        true
    }

    /// The options of the repair previewed, if one is.
    pub fn previewed_repair(&self) -> Option<RepairOptions> {
        self.document().repair.preview.as_ref().map(|p| p.options)
    }

    /// Whether the repaired rig (not the loaded one) is shown.
    pub fn showing_repaired(&self) -> bool {
        let document = self.document();
        (document.repair.preview.as_ref()).is_some_and(|p| Arc::ptr_eq(&p.repaired, &document.rig))
    }

    /// Shows the repaired rig (`true`: redo of the repair) or the loaded one (undo of it)
    /// during a preview; nothing happens without one. Each side keeps its rig and generation,
    /// so the loaded rig comes back as it was.
    pub fn show_repaired(&mut self, repaired: bool) {
        let Some(serial) = self.document().repair.preview.as_ref().map(|p| p.serial) else {
            return;
        };
        if repaired == self.showing_repaired() {
            return;
        }
        let direction = if repaired { Direction::Redo } else { Direction::Undo };
        if self
            .document()
            .history
            .next(direction)
            .is_some_and(|step| step.serial == serial)
        {
            self.take_step(direction);
        }
    }

    /// Ends the preview without the repair: the loaded rig is shown again, and the repair is
    /// not left to redo.
    pub fn end_repair_preview(&mut self) {
        let Some(serial) = self.document().repair.preview.as_ref().map(|p| p.serial) else {
            return;
        };
        self.show_repaired(false);
        let document = &mut self.documents[self.active];
        if document
            .history
            .next(Direction::Redo)
            .is_some_and(|step| step.serial == serial)
        {
            document.history.forget_next(Direction::Redo);
        }
        document.repair.preview = None;
        self.marks.stale = true;
        self.mark_dirty();
        self.journal(self.active, crate::journal::Entry::EndRepairPreview);
    }

    /// Whether the vertices the preview changed are marked.
    pub fn marking_repaired_vertices(&self) -> bool {
        self.document().repair.mark_changed
    }

    pub fn mark_repaired_vertices(&mut self, mark: bool) {
        if self.document().repair.mark_changed != mark {
            self.documents[self.active].repair.mark_changed = mark;
            self.marks.stale = true;
        }
    }

    /// Writes the previewed repair of the active document's file to `output` (`.glb` or
    /// `.gltf`; atomically, never over the input), then ends the preview and loads the file
    /// written in the document's place, as a reload does: clip files added again, camera, clip,
    /// time and bends kept.
    pub fn save_repaired_as(&mut self, output: &Path) -> Result<Saved, RepairSaveError> {
        let document = self.document();
        let preview = document.repair.preview.as_ref().ok_or(RepairSaveError::NoPreview)?;
        let input: PathBuf = document.path.clone().ok_or(RepairSaveError::NoFile)?;
        let changes = crate::save::changed_primitives(&preview.loaded, &preview.repaired)?;
        if changes.is_empty() {
            return Err(RepairSaveError::NothingChanged);
        }
        let saved = crate::save::save_changes(&input, output, &changes, SaveOptions::default())?;
        self.end_repair_preview();
        let document = self.document();
        let (generation, clip_files) = (document.generation, document.clip_files());
        self.start_load(Some(output.to_owned()), Some(generation), clip_files);
        Ok(saved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suggested_name_keeps_the_stem_and_a_gltf_stays_gltf() {
        assert_eq!(suggested_name(Path::new("/a/Robot.glb")), "Robot.fixed.glb");
        assert_eq!(suggested_name(Path::new("Man.GLTF")), "Man.fixed.gltf");
        assert_eq!(suggested_name(Path::new("avatar.vrm")), "avatar.fixed.glb");
    }
}
