//! One open file: the rig read from it, where it came from, what is derived from it once, and
//! the watch on it for changes on disk.

use super::symmetry::{SymmetryJob, SymmetryView};
use crate::anim::Bounds;
use crate::reload::FileWatcher;
use crate::report::RigReport;
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
    /// Bounds of the rest pose, used for the grid and for framing.
    pub rest_bounds: Bounds,
    /// The rig report, once a panel asked for it (see `ui::report`).
    pub report: Option<Arc<RigReport>>,
    /// The file on disk (or one it uses) changed after what is shown was read: hot reload is
    /// off, waiting for the changes to settle, loading, or the new contents failed to load.
    pub file_changed: bool,
    pub(super) watcher: Option<FileWatcher>,
    /// When the latest change on disk was seen.
    pub(super) changed_at: Option<Instant>,
    /// The symmetry view's check, run the first time the view shows this rig.
    pub(super) symmetry: Option<SymmetryView>,
    /// That check while it runs on a thread (see `Viewer::background_checks`).
    pub(super) symmetry_job: Option<SymmetryJob>,
}

impl Document {
    pub(super) fn new(rig: Rig, path: Option<PathBuf>, generation: u64, rest_bounds: Bounds) -> Document {
        Document {
            influence_counts: influence_counts(&rig),
            rig: Arc::new(rig),
            path,
            generation,
            rest_bounds,
            report: None,
            file_changed: false,
            watcher: None,
            changed_at: None,
            symmetry: None,
            symmetry_job: None,
        }
    }

    /// The files to watch for this document: the file itself and those it uses.
    pub(super) fn watched_files(&self) -> Option<Vec<PathBuf>> {
        let path = self.path.as_ref()?;
        Some(
            std::iter::once(path.clone())
                .chain(self.rig.sources.iter().cloned())
                .collect(),
        )
    }
}
