//! The Engines panel's check: every engine profile against the active document's rig (see
//! [`crate::engine::check::check_engines`]), run on a thread of its own in the window, and the
//! choice of a line: that engine, shown where it draws a vertex farthest from the file.

use super::{VertexRef, Viewer};
use crate::engine::Engine;
use crate::engine::check::EngineCheck;
use std::sync::Arc;

/// Where the check of every engine stands for the active document's rig.
pub enum EngineChecksState<'a> {
    /// Not asked for since the rig last changed.
    NotStarted,
    Running,
    Done(&'a [EngineCheck]),
    /// The check panicked: why.
    Failed(&'a str),
}

/// The check of every engine, made for one generation of one document's rig.
#[derive(Default)]
pub(super) struct EngineChecks {
    /// The document generation the result or the job is for.
    made_for: u64,
    result: Option<Result<Arc<Vec<EngineCheck>>, String>>,
    job: Option<crate::job::Job<Vec<EngineCheck>>>,
}

impl EngineChecks {
    pub(super) fn is_running(&self) -> bool {
        self.job.is_some()
    }
}

impl Viewer {
    /// Checks every engine against the active document's rig, unless that is done or under
    /// way for the rig as it is now: on a thread of its own with
    /// [`Viewer::background_checks`], else before returning.
    pub fn check_all_engines(&mut self) {
        let document = &self.documents[self.active];
        let checks = &mut self.engines.checks;
        if checks.made_for == document.generation && (checks.result.is_some() || checks.job.is_some()) {
            return;
        }
        let rig = Arc::clone(&document.rig);
        *checks = EngineChecks {
            made_for: document.generation,
            result: None,
            job: None,
        };
        if self.background_checks {
            checks.job = Some(crate::job::Job::spawn(move || {
                crate::engine::check::check_engines(&rig, &Engine::ALL)
            }));
        } else {
            checks.result = Some(Ok(Arc::new(crate::engine::check::check_engines(&rig, &Engine::ALL))));
        }
    }

    /// Takes the engines' check when its thread is done; forgets it once the rig changed.
    pub(super) fn update_engine_checks(&mut self) {
        let generation = self.documents[self.active].generation;
        let checks = &mut self.engines.checks;
        if checks.made_for != generation {
            *checks = EngineChecks::default();
            return;
        }
        if let Some(job) = checks.job.take() {
            match job.try_wait() {
                Err(job) => checks.job = Some(job),
                Ok(result) => checks.result = Some(result.map(Arc::new).map_err(|p| p.0)),
            }
        }
    }

    /// The Engines panel's check as it stands (see [`Viewer::check_all_engines`]).
    pub fn engine_checks(&self) -> EngineChecksState<'_> {
        let checks = &self.engines.checks;
        if checks.made_for != self.documents[self.active].generation {
            return EngineChecksState::NotStarted;
        }
        match (&checks.result, &checks.job) {
            (Some(Ok(done)), _) => EngineChecksState::Done(done),
            (Some(Err(why)), _) => EngineChecksState::Failed(why),
            (None, Some(_)) => EngineChecksState::Running,
            (None, None) => EngineChecksState::NotStarted,
        }
    }

    /// Shows `engine`'s drawing where the check found it farthest from the file's: that
    /// engine chosen, its worst pose (the clip and time, or the sweep's joint bent as an edit),
    /// the engine distance view, and its worst vertex inspected. Refused, nothing changed, where the engine does not load the rig.
    pub fn show_engine_worst(&mut self, engine: Engine) -> Result<(), crate::engine::EngineRefusal> {
        self.set_engine(Some(engine))?;
        self.view.options.mode = crate::render::ViewMode::EngineDistance;
        let worst = match &self.engines.checks.result {
            Some(Ok(checks)) => (checks.iter())
                .find(|c| c.engine == engine.name())
                .and_then(|c| c.worst.clone()),
            _ => None,
        };
        let Some(worst) = worst else {
            return Ok(());
        };
        match &worst.turn {
            // A sweep pose: the rest pose with that joint bent, as an edit Undo takes back.
            Some(turn) => {
                self.hold(None, 0.0);
                self.end_gesture();
                self.set_override(turn.node, turn.joint_override());
                self.end_gesture();
                self.view.selected_joint = Some(turn.node);
            }
            None => {
                let clip = worst.clip.as_deref().and_then(|name| self.rig().find_clip(name));
                self.select_clip(clip);
                self.seek(worst.time);
            }
        }
        self.inspect_vertex(Some(VertexRef {
            instance: worst.instance,
            primitive: worst.primitive,
            vertex: worst.vertex,
        }));
        Ok(())
    }
}
