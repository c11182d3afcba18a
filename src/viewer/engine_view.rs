//! View ▸ Engine: the active document drawn as an engine draws it (see [`crate::engine`]),
//! made once per generation of the rig, on a thread of its own in the window.

use super::{Viewer, document};
use std::sync::Arc;

/// What the viewer keeps for engines beyond the drawing itself.
#[derive(Default)]
pub(super) struct EngineState {
    /// The engine distance view's values (see `engine_distance.rs`).
    pub distance: super::engine_distance::DistanceView,
    /// Every engine checked against the rig, for the Engines panel (see `engine_checks.rs`).
    pub checks: super::engine_checks::EngineChecks,
}

impl Viewer {
    /// Shows the rig as `engine` draws it (`None`: as the file says) in every view and on both
    /// skinning paths. Refused, the file's drawing staying, where the engine does not load it.
    pub fn set_engine(&mut self, engine: Option<crate::engine::Engine>) -> Result<(), crate::engine::EngineRefusal> {
        if let Some(engine) = engine {
            engine.check_loads(&self.documents[self.active].rig)?;
        }
        self.view.engine = engine;
        self.refresh_engine_drawing();
        self.playback.mark_dirty();
        Ok(())
    }

    /// Makes the active document's engine drawing for the engine chosen and the rig's current
    /// generation, once (on a thread of its own with [`Viewer::background_checks`], the file's
    /// drawing shown until it is done); drops it when no engine is chosen or the engine refuses
    /// the rig as it is now (said in the diagnostics).
    pub(super) fn refresh_engine_drawing(&mut self) {
        let wanted = self.view.engine;
        let document = &mut self.documents[self.active];
        let generation = document.generation;
        let made = match document.engine_job.take() {
            Some(running) if Some(running.engine) == wanted && running.from == generation => {
                match running.job.try_wait() {
                    Err(job) => {
                        document.engine_job = Some(document::EngineJob { job, ..running });
                        return;
                    }
                    Ok(result) => Some((
                        running.engine,
                        result.unwrap_or_else(|p| Err(crate::engine::EngineRefusal::Stopped(p.0))),
                    )),
                }
            }
            // Made for another engine or another generation of the rig: not wanted any more.
            _ => None,
        };
        let current = |d: &document::EngineDrawing| Some(d.engine) == wanted && d.from == generation;
        if made.is_none()
            && (document.engine_drawing.as_ref().is_some_and(current)
                || (wanted.is_none() && document.engine_drawing.is_none()))
        {
            return;
        }
        let made = match (made, wanted) {
            (Some(made), _) => Some(made),
            (None, None) => None,
            (None, Some(engine)) if self.background_checks => {
                let rig = Arc::clone(&document.rig);
                document.engine_job = Some(document::EngineJob {
                    engine,
                    from: generation,
                    job: crate::job::Job::spawn(move || engine.draw(&rig)),
                });
                return;
            }
            (None, Some(engine)) => Some((engine, engine.draw(&document.rig))),
        };
        let drawing = match made {
            Some((engine, Ok(rig))) => {
                self.last_generation += 1;
                Some(document::EngineDrawing {
                    engine,
                    from: generation,
                    rig: Arc::new(rig),
                    generation: self.last_generation,
                })
            }
            Some((_, Err(refusal))) => {
                self.diagnostics.error = Some(format!("{refusal}; the file's own drawing is shown"));
                self.view.engine = None;
                None
            }
            None => None,
        };
        self.documents[self.active].engine_drawing = drawing;
        self.playback.mark_dirty();
    }
}
