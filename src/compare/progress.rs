//! How far a comparison has got: a fraction of its steps (the skeleton, the vertices, each
//! clip of A, the materials and findings) and what it is doing, shared with a progress bar.

use std::sync::Mutex;

/// Called at the start of each step with the fraction done before it and what the step does,
/// and with 1 once the comparison is done.
pub type ProgressFn<'a> = dyn FnMut(f32, &str) + 'a;

/// The steps of one comparison, counted as they start.
pub(super) struct Steps<'a, 'f> {
    done: usize,
    total: usize,
    report: &'a mut ProgressFn<'f>,
}

impl<'a, 'f> Steps<'a, 'f> {
    pub(super) fn new(total: usize, report: &'a mut ProgressFn<'f>) -> Self {
        Steps {
            done: 0,
            total: total.max(1),
            report,
        }
    }

    /// Starts the next step (the one before it is done).
    pub(super) fn start(&mut self, what: &str) {
        (self.report)(self.done as f32 / self.total as f32, what);
        self.done = (self.done + 1).min(self.total);
    }

    pub(super) fn finish(&mut self) {
        self.done = self.total;
        (self.report)(1.0, "done");
    }
}

/// The latest report of a comparison running on another thread, for the window's progress
/// bar (see [`super::compare_with_progress`]).
#[derive(Debug, Default)]
pub struct CompareProgress {
    latest: Mutex<(f32, String)>,
}

impl CompareProgress {
    pub fn set(&self, fraction: f32, what: &str) {
        if let Ok(mut latest) = self.latest.lock() {
            latest.0 = fraction;
            latest.1.clear();
            latest.1.push_str(what);
        }
    }

    /// The fraction done (0 to 1) and what the comparison is doing.
    pub fn get(&self) -> (f32, String) {
        self.latest.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl crate::job::Progress for CompareProgress {}
