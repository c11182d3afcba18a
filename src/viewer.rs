//! The viewer's state, independent of the window and the GPU: the open rig, playback, pose,
//! camera and view options. The window code feeds it time and input; the UI edits it.

use crate::anim::{Bounds, JointOverride, Player, PoseEvaluator};
use crate::headless::open_rig;
use crate::render::compute::ComputeSkinner;
use crate::render::{FrameState, Gpu, GpuError, OrbitCamera, ViewOptions};
use crate::rig::{Rig, RigError};
use crate::skin::{SkinnedPose, SkinningMethod, SkinningPath, posed_bounds};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::time::{Duration, Instant};

/// Vertices deviating more than this fraction of the rig size count as disagreeing.
pub const COMPARE_THRESHOLD: f32 = 1e-4;

/// CPU skinning against GPU skinning (the compute pass with the shader's skinning function) on
/// one pose.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub method: SkinningMethod,
    pub vertices: usize,
    /// Largest and mean distance (max norm) between CPU and GPU positions, in model units.
    pub max: f32,
    pub mean: f32,
    /// Diagonal of the rest-pose bounds, for relative figures.
    pub rig_size: f32,
    /// Vertices deviating more than `COMPARE_THRESHOLD` of the rig size.
    pub over_threshold: usize,
}

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
    /// Dual quaternion palettes and CPU-skinned vertices of the current pose.
    pub skinned: SkinnedPose,
    pub skinning_path: SkinningPath,
    pub skinning_method: SkinningMethod,
    /// The selected node (a joint, usually): highlighted, shown in the weights view, bent by
    /// the joint controls.
    pub selected_joint: Option<usize>,
    /// Per node: how many vertices it influences with a non-zero weight.
    pub influence_counts: Vec<usize>,
    /// The last CPU-vs-GPU comparison, until the pose or skinning changes.
    pub comparison: Option<Comparison>,
    pub camera: OrbitCamera,
    pub view: ViewOptions,
    /// Bounds of the rest pose, used for the grid and for framing.
    pub rest_bounds: Bounds,
    /// The last load error, shown until dismissed.
    pub error: Option<String>,
    /// The rig report and the `rig_generation` it was computed for (see `ui::report`).
    pub report: Option<(u64, Arc<crate::rig::report::RigReport>)>,
    pending: Option<PendingLoad>,
    /// Seconds the last frame took, smoothed, for the status line.
    pub frame_seconds: f32,
}

impl Viewer {
    pub fn new(rig: Rig, path: Option<PathBuf>) -> Viewer {
        let pose = PoseEvaluator::new(&rig);
        let mut viewer = Viewer {
            skinned: SkinnedPose::new(&rig),
            rig: Arc::new(Rig::default()),
            path: None,
            rig_generation: 0,
            player: Player::default(),
            pose,
            skinning_path: SkinningPath::Gpu,
            skinning_method: SkinningMethod::Lbs,
            selected_joint: None,
            influence_counts: Vec::new(),
            comparison: None,
            camera: OrbitCamera::default(),
            view: ViewOptions::default(),
            rest_bounds: Bounds::EMPTY,
            error: None,
            report: None,
            pending: None,
            frame_seconds: 0.0,
        };
        viewer.set_rig(rig, path);
        viewer
    }

    /// Shows `rig`: first clip selected and playing, camera framing the whole rig.
    pub fn set_rig(&mut self, rig: Rig, path: Option<PathBuf>) {
        self.pose = PoseEvaluator::new(&rig);
        self.skinned = SkinnedPose::new(&rig);
        self.selected_joint = rig.skins.first().and_then(|s| s.joints.first().copied());
        self.influence_counts = influence_counts(&rig);
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
                        self.error = Some(format!(
                            "could not open {}: {e} (the previous rig is still shown)",
                            path.display()
                        ));
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

    /// Recomputes the pose from the player's clip, time and overrides, and what the current
    /// skinning path and method derive from it.
    pub fn evaluate(&mut self) {
        self.comparison = None;
        self.pose.evaluate(&self.rig, self.player.clip, self.player.time);
        if self.skinning_method == SkinningMethod::Dqs {
            self.skinned.update_dual_quats(&self.pose);
        }
        if self.skinning_path == SkinningPath::Cpu {
            self.skinned.skin(&self.rig, &self.pose, self.skinning_method);
        }
    }

    pub fn set_skinning(&mut self, path: SkinningPath, method: SkinningMethod) {
        self.skinning_path = path;
        self.skinning_method = method;
        self.evaluate();
    }

    /// Changes node `node`'s hand-made pose change.
    pub fn set_override(&mut self, node: usize, joint_override: JointOverride) {
        if let Some(slot) = self.pose.overrides.get_mut(node) {
            *slot = joint_override;
            self.evaluate();
        }
    }

    pub fn reset_overrides(&mut self) {
        self.pose.overrides.fill(JointOverride::IDENTITY);
        self.evaluate();
    }

    /// Skins the current pose with the current method on the CPU and in a GPU compute pass
    /// (the shader's own skinning function) and keeps the difference in `comparison`.
    pub fn compare(&mut self, gpu: &Gpu, skinner: &ComputeSkinner) -> Result<(), GpuError> {
        let method = self.skinning_method;
        self.skinned.update_dual_quats(&self.pose);
        self.skinned.skin(&self.rig, &self.pose, method);
        let rig_size = self.rest_bounds.size().max(f32::MIN_POSITIVE);
        let (mut max, mut sum, mut vertices, mut over_threshold) = (0.0f32, 0.0f64, 0usize, 0usize);
        for (i, instance) in self.rig.instances.iter().enumerate().filter(|(_, i)| i.skin.is_some()) {
            for (k, primitive) in self.rig.meshes[instance.mesh].primitives.iter().enumerate() {
                let palette = &self.pose.palettes[i];
                let (gpu_positions, _) = skinner.skin(gpu, primitive, palette, &self.skinned.dual_quats[i], method)?;
                for (g, c) in gpu_positions.iter().zip(&self.skinned.meshes[i][k].positions) {
                    let d = (*g - *c).abs().max_element();
                    max = max.max(d);
                    sum += f64::from(d);
                    vertices += 1;
                    over_threshold += usize::from(d > COMPARE_THRESHOLD * rig_size);
                }
            }
        }
        self.comparison = Some(Comparison {
            method,
            vertices,
            max,
            mean: if vertices == 0 {
                0.0
            } else {
                (sum / vertices as f64) as f32
            },
            rig_size,
            over_threshold,
        });
        Ok(())
    }

    /// What the renderer needs to draw the current state into a view of aspect `aspect`.
    pub fn frame_state(&self, aspect: f32) -> FrameState<'_> {
        FrameState {
            rig: &self.rig,
            pose: &self.pose,
            skinned: &self.skinned,
            camera: &self.camera,
            aspect,
            view: &self.view,
            path: self.skinning_path,
            method: self.skinning_method,
            selected: self.selected_joint,
            marker_size: self.rest_bounds.size().max(1e-3) * 0.015,
        }
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
