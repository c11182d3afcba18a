//! The viewer's state, independent of the window and the GPU: the open rig, playback, pose,
//! camera and view options. The window code feeds it time and input; the UI edits it.

use crate::anim::{Bounds, Player, PoseEvaluator};
use crate::headless::open_rig;
use crate::render::{OrbitCamera, ViewOptions};
use crate::rig::{Rig, RigError};
use crate::skin::posed_bounds;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::time::{Duration, Instant};

/// A load running on a background thread.
struct PendingLoad {
    path: PathBuf,
    started: Instant,
    result: Receiver<Result<Rig, RigError>>,
}

pub struct Viewer {
    pub rig: Arc<Rig>,
    /// Where the rig came from; `None` for the demo rig.
    pub path: Option<PathBuf>,
    /// Bumped every time `rig` is replaced, so the renderer knows to upload it again.
    pub rig_generation: u64,
    pub player: Player,
    pub pose: PoseEvaluator,
    pub camera: OrbitCamera,
    pub view: ViewOptions,
    /// Bounds of the rest pose, used for the grid and for framing.
    pub rest_bounds: Bounds,
    /// The last load error, shown until dismissed.
    pub error: Option<String>,
    pending: Option<PendingLoad>,
    /// Seconds the last frame took, smoothed, for the status line.
    pub frame_seconds: f32,
}

impl Viewer {
    pub fn new(rig: Rig, path: Option<PathBuf>) -> Viewer {
        let pose = PoseEvaluator::new(&rig);
        let mut viewer = Viewer {
            rig: Arc::new(Rig::default()),
            path: None,
            rig_generation: 0,
            player: Player::default(),
            pose,
            camera: OrbitCamera::default(),
            view: ViewOptions::default(),
            rest_bounds: Bounds::EMPTY,
            error: None,
            pending: None,
            frame_seconds: 0.0,
        };
        viewer.set_rig(rig, path);
        viewer
    }

    /// Shows `rig`: first clip selected and playing, camera framing the whole rig.
    pub fn set_rig(&mut self, rig: Rig, path: Option<PathBuf>) {
        self.pose = PoseEvaluator::new(&rig);
        self.rest_bounds = posed_bounds(&rig, &self.pose);
        self.camera.frame(&self.rest_bounds);
        self.player.select((!rig.clips.is_empty()).then_some(0));
        self.player.playing = true;
        self.rig = Arc::new(rig);
        self.path = path;
        self.rig_generation += 1;
        self.evaluate();
    }

    /// Starts loading `path` on a background thread; the current rig stays until it succeeds.
    pub fn open(&mut self, path: PathBuf) {
        let (sender, result) = channel();
        let thread_path = path.clone();
        std::thread::spawn(move || {
            let _ = sender.send(open_rig(Some(&thread_path)));
        });
        self.pending = Some(PendingLoad {
            path,
            started: Instant::now(),
            result,
        });
    }

    /// Loads `path` on this thread (for tests and the command line).
    pub fn open_now(&mut self, path: &Path) -> Result<(), RigError> {
        let rig = open_rig(Some(path))?;
        self.set_rig(rig, Some(path.to_owned()));
        Ok(())
    }

    /// The file being loaded and for how long, while a load runs.
    pub fn loading(&self) -> Option<(&Path, Duration)> {
        self.pending.as_ref().map(|p| (p.path.as_path(), p.started.elapsed()))
    }

    /// Takes a finished background load. Returns true when the rig changed.
    pub fn poll_load(&mut self) -> bool {
        let Some(pending) = &self.pending else { return false };
        match pending.result.try_recv() {
            Err(TryRecvError::Empty) => false,
            Err(TryRecvError::Disconnected) => {
                self.error = Some(format!("loading {} stopped unexpectedly", pending.path.display()));
                self.pending = None;
                false
            }
            Ok(result) => {
                let path = pending.path.clone();
                self.pending = None;
                match result {
                    Ok(rig) => {
                        self.error = None;
                        self.set_rig(rig, Some(path));
                        true
                    }
                    Err(e) => {
                        self.error = Some(format!("could not open {}: {e}", path.display()));
                        false
                    }
                }
            }
        }
    }

    pub fn clip_duration(&self) -> f32 {
        self.player
            .clip
            .and_then(|c| self.rig.clips.get(c))
            .map_or(0.0, |c| c.duration)
    }

    /// Advances playback by `dt` seconds; returns whether anything needs redrawing.
    pub fn tick(&mut self, dt: f32) -> bool {
        let loaded = self.poll_load();
        let moved = self.player.advance(dt, self.clip_duration());
        if moved {
            self.evaluate();
        }
        loaded || moved || self.pending.is_some()
    }

    /// Recomputes the pose from the player's clip and time.
    pub fn evaluate(&mut self) {
        self.pose.evaluate(&self.rig, self.player.clip, self.player.time);
    }

    pub fn select_clip(&mut self, clip: Option<usize>) {
        self.player.select(clip);
        self.evaluate();
    }

    pub fn seek(&mut self, time: f32) {
        self.player.seek(time, self.clip_duration());
        self.evaluate();
    }

    pub fn step(&mut self, frames: i32) {
        self.player.step(frames, self.clip_duration());
        self.evaluate();
    }

    pub fn toggle_play(&mut self) {
        let duration = self.clip_duration();
        if !self.player.playing && !self.player.looping && self.player.time >= duration {
            self.player.time = 0.0;
        }
        self.player.playing = !self.player.playing;
    }

    /// Frames the rig in its current pose.
    pub fn frame_all(&mut self) {
        self.camera.frame(&posed_bounds(&self.rig, &self.pose));
    }

    pub fn reset_view(&mut self) {
        self.camera.frame(&self.rest_bounds);
    }

    /// Whether the picture changes without input (a clip is playing or a load is running).
    pub fn is_animating(&self) -> bool {
        (self.player.playing && self.player.clip.is_some()) || self.pending.is_some()
    }
}
