//! Work on a thread of its own — a load, a check, a simplification, an audit — behind one type:
//! its result, the progress it shares while it runs, and a way to ask it to stop.

use std::sync::Arc;
use std::thread::JoinHandle;

/// What a job shares with whoever started it while it runs. `()` for a job that reports no
/// progress and cannot stop early.
pub trait Progress: Send + Sync + 'static {
    /// Asks the job to stop early; a job that cannot stop finishes as usual.
    fn cancel(&self) {}

    fn is_cancelled(&self) -> bool {
        false
    }
}

impl Progress for () {}

/// A job's thread panicked before it had a result.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the background job stopped unexpectedly: {0}")]
pub struct Panicked(pub String);

/// Work running on a thread of its own. Dropping it detaches the thread: the work finishes
/// and its result is thrown away (cancel it first to have it stop early).
pub struct Job<T, P: Progress = ()> {
    thread: JoinHandle<T>,
    progress: Arc<P>,
}

impl<T: Send + 'static> Job<T> {
    /// Starts `work` on a thread of its own.
    pub fn spawn(work: impl FnOnce() -> T + Send + 'static) -> Self {
        Self::with_progress((), move |_| work())
    }
}

impl<T: Send + 'static, P: Progress> Job<T, P> {
    /// Starts `work` on a thread of its own, sharing `progress` with it.
    pub fn with_progress(progress: P, work: impl FnOnce(&P) -> T + Send + 'static) -> Self {
        let progress = Arc::new(progress);
        let shared = Arc::clone(&progress);
        Self {
            thread: std::thread::spawn(move || work(&shared)),
            progress,
        }
    }

    /// What the job reports while it runs.
    pub fn progress(&self) -> &P {
        &self.progress
    }

    /// Asks the job to stop early (see [`Progress::cancel`]).
    pub fn cancel(&self) {
        self.progress.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.progress.is_cancelled()
    }

    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Blocks until the job is done and returns its result.
    pub fn wait(self) -> Result<T, Panicked> {
        self.thread.join().map_err(|payload| {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned());
            Panicked(message.unwrap_or_else(|| "no message".to_owned()))
        })
    }

    /// The job's result when it is done (without blocking), else the job back.
    pub fn try_wait(self) -> Result<Result<T, Panicked>, Self> {
        if self.is_finished() { Ok(self.wait()) } else { Err(self) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::channel;

    #[test]
    fn a_job_hands_back_its_result_and_is_unfinished_until_its_work_returns() {
        let (release, gate) = channel::<()>();
        let job = Job::spawn(move || {
            gate.recv().unwrap();
            6 * 7
        });
        let job = job.try_wait().expect_err("the work is blocked on the gate");
        assert!(!job.is_finished());
        release.send(()).unwrap();
        assert_eq!(job.wait(), Ok(42));
    }

    #[test]
    fn a_panic_in_the_work_is_an_error_with_its_message() {
        let job = Job::spawn(|| -> u32 { panic!("bad input") });
        assert_eq!(job.wait(), Err(Panicked("bad input".to_owned())));
    }

    #[derive(Default)]
    struct Stop(AtomicBool);

    impl Progress for Stop {
        fn cancel(&self) {
            self.0.store(true, Ordering::Relaxed);
        }
        fn is_cancelled(&self) -> bool {
            self.0.load(Ordering::Relaxed)
        }
    }

    #[test]
    fn cancelling_reaches_the_work_through_its_progress() {
        let (started, running) = channel::<()>();
        let job = Job::with_progress(Stop::default(), move |stop| {
            started.send(()).unwrap();
            let mut spins = 0u64;
            while !stop.is_cancelled() {
                spins += 1;
                std::hint::spin_loop();
            }
            spins
        });
        running.recv().unwrap();
        assert!(!job.is_cancelled());
        job.cancel();
        assert!(job.is_cancelled());
        assert!(job.wait().is_ok(), "the work saw the cancel and returned");
    }

    #[test]
    fn progress_without_cancel_ignores_it() {
        let job = Job::spawn(|| 1);
        job.cancel();
        assert!(!job.is_cancelled());
        assert_eq!(job.wait(), Ok(1));
    }
}
