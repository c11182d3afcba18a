//! The viewer's state, independent of the window and the GPU: the open rig, playback, pose,
//! camera and view options. The window code feeds it time and input; the UI edits it.

use crate::anim::{AnimationStack, Bounds, JointOverride, Player, PoseBuffers, evaluate_pose};
use crate::reload::{FileWatcher, Waker};
use crate::render::FrameState;
use crate::rig::{Rig, RigError};
use crate::skin::{SkinnedPose, SkinningMethod, SkinningPath, posed_bounds};
use crate::timings::FrameStages;
pub use diagnostics::Diagnostics;
use loading::PendingLoad;
pub use loading::label;
pub use marks::{VertexRef, marks_on_every_instance};
pub use view::View;

mod diagnostics;
mod loading;
mod marks;
mod symmetry;
mod view;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// Counts of the work behind the frames: how often the pose was evaluated and skinned on the
/// CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkDone {
    pub evaluations: u64,
    pub cpu_skinnings: u64,
}

pub struct Viewer {
    pub rig: Arc<Rig>,
    /// Where the rig came from; `None` for the demo rig.
    pub path: Option<PathBuf>,
    /// Bumped every time `rig` is replaced, so the renderer knows to upload it again.
    pub rig_generation: u64,
    /// Which clip plays, where in it and how. Changing it through the viewer's methods marks
    /// the pose for evaluation; see [`Viewer::player_mut`].
    player: Player,
    /// Layers, crossfades, root motion, bends and attachments between the clip and the pose.
    animation: AnimationStack,
    /// The pose of the last evaluation; [`Viewer::pose`] brings it up to date.
    pose: PoseBuffers,
    /// CPU-skinned vertices; current when `cpu_skinned` is set.
    skinned: SkinnedPose,
    skinning_path: SkinningPath,
    skinning_method: SkinningMethod,
    /// An input of the pose changed since it was last evaluated.
    dirty: bool,
    /// `skinned` holds the current pose skinned with the current method.
    cpu_skinned: bool,
    /// Stage times of the evaluations since the window last took them.
    stage_times: Option<FrameStages>,
    /// Pose evaluations and CPU skinnings made so far (see [`Viewer::work_done`]).
    work_done: WorkDone,
    /// Vertices a selected finding names, pointed out in the view.
    finding_marks: Vec<VertexRef>,
    /// The vertex shown in the vertex inspector.
    inspected: Option<VertexRef>,
    /// World positions of `finding_marks` and `inspected` in the current pose.
    mark_points: Vec<glam::Vec3>,
    /// `mark_points` needs recomputing (the marks or the pose changed).
    marks_stale: bool,
    /// Per node: how many vertices it influences with a non-zero weight.
    pub influence_counts: Vec<usize>,
    /// How the rig is looked at: camera, view options, selection.
    pub view: View,
    /// Bounds of the rest pose, used for the grid and for framing.
    pub rest_bounds: Bounds,
    /// What the frames measured and what went wrong, for the panels to show.
    pub diagnostics: Diagnostics,
    /// The rig report and the `rig_generation` it was computed for (see `ui::report`).
    pub report: Option<(u64, Arc<crate::report::RigReport>)>,
    /// The symmetry view's check, run the first time the view is shown.
    symmetry: Option<symmetry::SymmetryView>,
    /// That check while it runs on a thread (see [`Viewer::background_checks`]).
    symmetry_job: Option<symmetry::SymmetryJob>,
    /// Run checks that can take seconds on big rigs (the symmetry view's) on threads of their
    /// own, showing their results when they are done (the window), instead of before the next
    /// frame (offscreen renders, tests).
    pub background_checks: bool,
    pending: Option<PendingLoad>,
    /// Reload the file when it or a file it uses changes on disk (needs [`Viewer::watch_files`]).
    pub hot_reload: bool,
    /// The file on disk (or one it uses) changed after what is shown was read: hot reload is
    /// off, waiting for the changes to settle, loading, or the new contents failed to load.
    pub file_changed: bool,
    /// Files opened, most recent first (File ▸ Recent).
    pub recent: Vec<PathBuf>,
    watching: Option<Option<Waker>>,
    watcher: Option<FileWatcher>,
    /// When the latest change on disk was seen.
    changed_at: Option<Instant>,
}

impl Viewer {
    pub fn new(rig: Rig, path: Option<PathBuf>) -> Viewer {
        let pose = PoseBuffers::new(&rig);
        let mut viewer = Viewer {
            skinned: SkinnedPose::new(&rig),
            animation: AnimationStack::new(&rig),
            rig: Arc::new(Rig::default()),
            path: None,
            rig_generation: 0,
            player: Player::default(),
            pose,
            skinning_path: SkinningPath::Gpu,
            skinning_method: SkinningMethod::Lbs,
            dirty: true,
            cpu_skinned: false,
            stage_times: None,
            work_done: WorkDone::default(),
            finding_marks: Vec::new(),
            inspected: None,
            mark_points: Vec::new(),
            marks_stale: false,
            influence_counts: Vec::new(),
            view: View::default(),
            rest_bounds: Bounds::EMPTY,
            diagnostics: Diagnostics::default(),
            report: None,
            symmetry: None,
            symmetry_job: None,
            background_checks: false,
            pending: None,
            hot_reload: true,
            file_changed: false,
            recent: Vec::new(),
            watching: None,
            watcher: None,
            changed_at: None,
        };
        viewer.set_rig(rig, path);
        viewer
    }

    /// Shows `rig`: first clip selected and playing, camera framing the whole rig.
    pub fn set_rig(&mut self, rig: Rig, path: Option<PathBuf>) {
        self.pose = PoseBuffers::new(&rig);
        self.skinned = SkinnedPose::new(&rig);
        self.animation = AnimationStack::new(&rig);
        self.view.selected_joint = rig.skins.first().and_then(|s| s.joints.first().copied());
        self.finding_marks.clear();
        self.inspected = None;
        self.influence_counts = influence_counts(&rig);
        // The rest pose, as the pose buffers start out.
        self.skinned.skin(&rig, &self.pose, SkinningMethod::Lbs);
        self.rest_bounds = posed_bounds(&rig, &self.pose, &self.skinned);
        self.view.camera.frame(&self.rest_bounds);
        self.player.select((!rig.clips.is_empty()).then_some(0));
        self.player.playing = true;
        self.rig = Arc::new(rig);
        if path != self.path {
            self.file_changed = false;
            self.changed_at = None;
        }
        if let Some(path) = &path {
            crate::settings::add_recent(&mut self.recent, path);
        }
        self.path = path;
        self.rig_generation += 1;
        self.update_watcher();
        self.mark_dirty();
    }

    pub fn clip_duration(&self) -> f32 {
        self.player
            .clip
            .and_then(|c| self.rig.clips.get(c))
            .map_or(0.0, |c| c.duration)
    }

    /// Polls the files and loads, and advances playback by `dt` seconds; returns whether
    /// anything needs redrawing. Changes on disk are taken as of the wall clock's now (tests
    /// drive [`Viewer::poll_files`] instead).
    pub fn tick(&mut self, dt: f32) -> bool {
        let files = self.poll_files(Instant::now());
        let loaded = self.poll_load();
        let moved = self.advance(dt);
        files || loaded || moved || self.pending.is_some()
    }

    /// Advances playback and crossfades by `dt` seconds, marking the pose for evaluation when
    /// they moved; returns whether they did.
    pub fn advance(&mut self, dt: f32) -> bool {
        let moved = self.player.advance(dt, self.clip_duration());
        let fading = self.animation.advance(dt, &self.player, &self.rig);
        if moved || fading {
            self.mark_dirty();
        }
        moved || fading
    }

    /// How many pose evaluations and CPU skinnings this viewer has made: what a frame cost in
    /// work, independent of time.
    pub fn work_done(&self) -> WorkDone {
        self.work_done
    }

    /// Notes that an input of the pose changed: it is evaluated again when next needed.
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
        self.cpu_skinned = false;
        self.diagnostics.comparison = None;
        self.marks_stale = true;
    }

    /// Evaluates the pose when an input changed since the last evaluation, then skins it on
    /// the CPU when that is the path drawn and it is not skinned yet. However often it is
    /// called, each runs once per change.
    fn refresh(&mut self) {
        if self.dirty {
            self.dirty = false;
            self.cpu_skinned = false;
            let inputs = crate::anim::PoseInputs {
                dual_quaternions: self.skinning_method == SkinningMethod::Dqs,
                ..self.animation.inputs(&self.player)
            };
            let times = evaluate_pose(&self.rig, &inputs, &mut self.pose);
            self.work_done.evaluations += 1;
            self.stage_times.get_or_insert_default().pose = Some(times);
            let (clip, trail_shown) = (self.player.clip, self.animation.root_motion.trail);
            let animation = &mut self.animation;
            animation
                .trail
                .update(&self.rig, clip, &animation.overrides, trail_shown);
        }
        if self.skinning_path == SkinningPath::Cpu && !self.cpu_skinned {
            let start = Instant::now();
            self.skin_current_pose();
            self.stage_times.get_or_insert_default().cpu_skinning = Some(start.elapsed());
        }
        if self.marks_stale {
            self.marks_stale = false;
            self.update_mark_points();
        }
    }

    fn skin_current_pose(&mut self) {
        self.skinned.skin(&self.rig, &self.pose, self.skinning_method);
        self.work_done.cpu_skinnings += 1;
        self.cpu_skinned = true;
    }

    /// The current pose (evaluated first if an input changed).
    pub fn pose(&mut self) -> &PoseBuffers {
        self.refresh();
        &self.pose
    }

    /// The pose as last evaluated, which may lag behind inputs changed since (for drawing code
    /// that only reads; the frame brings it up to date before drawing).
    pub fn last_pose(&self) -> &PoseBuffers {
        &self.pose
    }

    /// Brings the pose (and the CPU path's vertices) up to date for a frame, and returns what
    /// that cost with any evaluation made since the last frame (`None`: nothing changed).
    pub fn prepare_frame(&mut self) -> Option<FrameStages> {
        self.refresh();
        self.stage_times.take()
    }

    pub fn player(&self) -> &Player {
        &self.player
    }

    /// The player, for changes the viewer's own methods do not make (speed, looping); marks the
    /// pose for evaluation.
    pub fn player_mut(&mut self) -> &mut Player {
        self.mark_dirty();
        &mut self.player
    }

    pub fn animation(&self) -> &AnimationStack {
        &self.animation
    }

    /// The layers, crossfade, root motion, bends and attachments, for editing; marks the pose
    /// for evaluation.
    pub fn animation_mut(&mut self) -> &mut AnimationStack {
        self.mark_dirty();
        &mut self.animation
    }

    pub fn skinning_path(&self) -> SkinningPath {
        self.skinning_path
    }

    pub fn skinning_method(&self) -> SkinningMethod {
        self.skinning_method
    }

    /// Switches where and how vertices are skinned. Only a change of method evaluates the pose
    /// again (dual quaternions are built only for DQS); a change of path only skins.
    pub fn set_skinning(&mut self, path: SkinningPath, method: SkinningMethod) {
        self.skinning_path = path;
        if method != self.skinning_method {
            self.skinning_method = method;
            self.mark_dirty();
        }
    }

    /// Changes node `node`'s hand-made pose change.
    pub fn set_override(&mut self, node: usize, joint_override: JointOverride) {
        if node < self.animation.overrides.len() {
            self.animation_mut().overrides[node] = joint_override;
        }
    }

    /// Bends the selected joint by a mouse drag of (`dx`, `dy`) points: sideways turns it about
    /// its local Y axis, up and down about its local X axis, half a degree per point.
    pub fn bend_selected_by_drag(&mut self, dx: f32, dy: f32) {
        let Some(node) = self.view.selected_joint.filter(|&n| n < self.animation.overrides.len()) else {
            return;
        };
        let mut bend = self.animation.overrides[node];
        let wrap = |degrees: f32| (degrees + 180.0).rem_euclid(360.0) - 180.0;
        bend.euler_degrees.x = wrap(bend.euler_degrees.x + dy * 0.5);
        bend.euler_degrees.y = wrap(bend.euler_degrees.y + dx * 0.5);
        self.set_override(node, bend);
    }

    pub fn reset_overrides(&mut self) {
        self.animation_mut().overrides.fill(JointOverride::IDENTITY);
    }

    /// The CPU-skinned vertices as last skinned (see [`Viewer::skin_on_cpu`]).
    pub fn last_skinned(&self) -> &SkinnedPose {
        &self.skinned
    }

    /// What the renderer needs to draw the current state into a view of aspect `aspect`; the
    /// pose is brought up to date first.
    pub fn frame_state(&mut self, aspect: f32) -> FrameState<'_> {
        self.refresh();
        if self.view.options.mode == crate::render::ViewMode::Symmetry {
            self.ensure_symmetry();
        }
        FrameState {
            rig: &self.rig,
            pose: &self.pose,
            skinned: &self.skinned,
            camera: &self.view.camera,
            aspect,
            view: &self.view.options,
            path: self.skinning_path,
            method: self.skinning_method,
            selected: self.view.selected_joint,
            marker_size: self.rest_bounds.size().max(1e-3) * 0.015,
            attachments: &self.animation.attachments,
            trail: &self.animation.trail.points,
            marks: &self.mark_points,
            symmetry: self.current_symmetry().map(|s| &s.values),
        }
    }

    /// Switches clips, crossfading when a crossfade duration is set.
    pub fn select_clip(&mut self, clip: Option<usize>) {
        self.animation.start_fade(self.player.clip, self.player.time);
        self.player.select(clip);
        self.mark_dirty();
    }

    pub fn seek(&mut self, time: f32) {
        let duration = self.clip_duration();
        self.player_mut().seek(time, duration);
    }

    pub fn step(&mut self, frames: i32) {
        let duration = self.clip_duration();
        self.player_mut().step(frames, duration);
    }

    pub fn toggle_play(&mut self) {
        let duration = self.clip_duration();
        if !self.player.playing && !self.player.looping && self.player.time >= duration {
            self.player.time = 0.0;
            self.mark_dirty();
        }
        self.player.playing = !self.player.playing;
    }

    /// Skins the current pose on the CPU with the current method, whatever the path, so that
    /// the CPU-skinned vertices are the surface that is drawn (for picking, framing and
    /// comparing). Returns them.
    pub fn skin_on_cpu(&mut self) -> &SkinnedPose {
        self.refresh();
        if !self.cpu_skinned {
            self.skin_current_pose();
        }
        &self.skinned
    }

    /// The vertex under a world-space ray, on the surface as drawn.
    pub fn pick_vertex(&mut self, origin: glam::Vec3, direction: glam::Vec3) -> Option<crate::skin::pick::MeshHit> {
        self.skin_on_cpu();
        crate::skin::pick::ray_cast(&self.rig, &self.pose, &self.skinned, origin, direction)
    }

    /// Frames the rig in its current pose.
    pub fn frame_all(&mut self) {
        self.skin_on_cpu();
        self.view
            .camera
            .frame(&posed_bounds(&self.rig, &self.pose, &self.skinned));
    }

    pub fn reset_view(&mut self) {
        self.view.camera.frame(&self.rest_bounds);
    }

    /// Whether the picture changes without input (a clip is playing or a load is running).
    pub fn is_animating(&self) -> bool {
        (self.player.playing && self.player.clip.is_some())
            || self.pending.is_some()
            || self
                .symmetry_job
                .as_ref()
                .is_some_and(symmetry::SymmetryJob::is_running)
    }
}
