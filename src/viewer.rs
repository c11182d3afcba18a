//! The viewer's state, independent of the window and the GPU: the open rig, playback, pose,
//! camera and view options. The window code feeds it time and input; the UI edits it.

use crate::anim::{AnimationStack, Bounds, JointOverride, Player, PoseBuffers, evaluate_pose};
use crate::reload::{FileWatcher, Waker};
use crate::render::compute::{Comparison, ComputeSkinner};
use crate::render::{FrameState, Gpu, GpuError, OrbitCamera, ViewOptions};
use crate::rig::{Rig, RigError};
use crate::skin::{SkinnedPose, SkinningMethod, SkinningPath, posed_bounds};
use crate::timings::FrameStages;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError, channel};
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

/// One vertex of one primitive of one mesh instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VertexRef {
    pub instance: usize,
    /// Index into the mesh's primitives.
    pub primitive: usize,
    pub vertex: usize,
}

/// A load running on a background thread.
struct PendingLoad {
    /// The file, or `None` for the built-in demo rig.
    path: Option<PathBuf>,
    started: Instant,
    result: Receiver<Result<Rig, RigError>>,
    /// A reload of the file on screen: the view, selection, playback and bends carry over.
    reload: bool,
}

/// How messages name a file being loaded (`None`: the demo rig).
pub fn label(path: Option<&Path>) -> String {
    path.map_or_else(|| "the demo rig".into(), |p| p.display().to_string())
}

/// What a reload keeps of the viewer's state, by name where indices may change.
struct KeptState {
    camera: OrbitCamera,
    selected: Option<String>,
    /// The clip's name; `None` for the rest pose.
    clip: Option<String>,
    time: f32,
    playing: bool,
    overrides: Vec<(String, JointOverride)>,
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
    /// Vertices a selected finding names, pointed out in the view.
    finding_marks: Vec<VertexRef>,
    /// The vertex shown in the vertex inspector.
    inspected: Option<VertexRef>,
    /// World positions of `finding_marks` and `inspected` in the current pose.
    mark_points: Vec<glam::Vec3>,
    /// `mark_points` needs recomputing (the marks or the pose changed).
    marks_stale: bool,
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
    pub report: Option<(u64, Arc<crate::report::RigReport>)>,
    pending: Option<PendingLoad>,
    /// Seconds the last frame took, smoothed, for the status line.
    pub frame_seconds: f32,
    /// Per-stage timings of the last frames (recorded by the window, shown by the Timings panel).
    pub timings: crate::timings::Timings,
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
            finding_marks: Vec::new(),
            inspected: None,
            mark_points: Vec::new(),
            marks_stale: false,
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
            timings: crate::timings::Timings::default(),
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
        self.selected_joint = rig.skins.first().and_then(|s| s.joints.first().copied());
        self.finding_marks.clear();
        self.inspected = None;
        self.influence_counts = influence_counts(&rig);
        // The rest pose, as the pose buffers start out.
        self.skinned.skin(&rig, &self.pose, SkinningMethod::Lbs);
        self.rest_bounds = posed_bounds(&rig, &self.pose, &self.skinned);
        self.camera.frame(&self.rest_bounds);
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

    /// Starts loading `path` on a background thread; the current rig stays until it succeeds.
    pub fn open(&mut self, path: PathBuf) {
        self.start_load(Some(path), false);
    }

    /// Starts loading the built-in demo rig the way a file is loaded.
    pub fn open_demo(&mut self) {
        self.start_load(None, false);
    }

    fn start_load(&mut self, path: Option<PathBuf>, reload: bool) {
        log::info!(
            "{} {}",
            if reload { "reloading" } else { "opening" },
            label(path.as_deref())
        );
        let (sender, result) = channel();
        let thread_path = path.clone();
        std::thread::spawn(move || {
            let _ = sender.send(crate::rig::open(thread_path.as_deref()));
        });
        self.pending = Some(PendingLoad {
            path,
            started: Instant::now(),
            result,
            reload,
        });
    }

    /// Loads the open file again in the background, keeping camera, selection, clip, time and
    /// bends where their names still match. Nothing happens for the demo rig, or while another
    /// file is being opened.
    pub fn reload(&mut self) {
        if self.opening_other_file() {
            return;
        }
        if let Some(path) = self.path.clone() {
            self.start_load(Some(path), true);
        }
    }

    /// Loads `path` on this thread (for tests and the command line).
    pub fn open_now(&mut self, path: &Path) -> Result<(), RigError> {
        let rig = crate::rig::open(Some(path))?;
        self.set_rig(rig, Some(path.to_owned()));
        Ok(())
    }

    /// Whether a file other than a reload of the open one is loading.
    fn opening_other_file(&self) -> bool {
        self.pending.as_ref().is_some_and(|p| !p.reload)
    }

    /// Watches the open file, and every file opened later, with the files they use, for
    /// changes on disk: they mark [`Viewer::file_changed`] and, with [`Viewer::hot_reload`] on,
    /// reload the file once the changes settle. `waker` is called from the watching thread on
    /// each change (the window uses it to wake its event loop); [`Viewer::tick`] does the rest.
    pub fn watch_files(&mut self, waker: Option<Waker>) {
        self.watching = Some(waker);
        self.watcher = None;
        self.update_watcher();
    }

    /// Whether the open file is being watched.
    pub fn is_watching(&self) -> bool {
        self.watcher.is_some()
    }

    /// Points the watcher at the open file and its sources (when watching is on).
    fn update_watcher(&mut self) {
        let Some(waker) = &self.watching else { return };
        let Some(path) = &self.path else {
            self.watcher = None;
            return;
        };
        let mut files = vec![path.clone()];
        files.extend(self.rig.sources.iter().cloned());
        if self.watcher.as_ref().is_some_and(|w| w.watches(&files)) {
            return;
        }
        self.watcher = match FileWatcher::new(&files, waker.clone()) {
            Ok(watcher) => Some(watcher),
            Err(e) => {
                log::warn!("{e}; hot reload is unavailable for {}", path.display());
                None
            }
        };
    }

    /// Takes the file watcher's news: marks the file changed and, once changes have settled
    /// and hot reload is on, starts a reload. Returns true when something changed.
    pub fn poll_files(&mut self) -> bool {
        let busy = self.opening_other_file();
        let Some(watcher) = &mut self.watcher else { return false };
        let changed = watcher.poll();
        let now = Instant::now();
        if !changed.is_empty() {
            for file in &changed {
                log::debug!("changed on disk: {}", file.display());
            }
            self.file_changed = true;
            self.changed_at = Some(now);
        }
        if self.hot_reload && !busy && watcher.settled(now) {
            self.reload();
            return true;
        }
        !changed.is_empty()
    }

    /// When the viewer next has something to do without input (changes on disk settling).
    pub fn next_deadline(&self) -> Option<Instant> {
        if !self.hot_reload {
            return None;
        }
        self.watcher.as_ref().and_then(FileWatcher::deadline)
    }

    /// The window title: the file name, marked with `•` while the file on disk is newer than
    /// what is shown.
    pub fn title(&self) -> String {
        let name = self
            .path
            .as_ref()
            .and_then(|p| p.file_name())
            .map_or_else(|| "demo rig".to_owned(), |n| n.to_string_lossy().into_owned());
        let marker = if self.file_changed { "• " } else { "" };
        format!("{marker}{name} — Rigscope")
    }

    fn keep_state(&self) -> KeptState {
        let name = |node: usize| self.rig.nodes.get(node).map(|n| n.name.clone());
        KeptState {
            camera: self.camera,
            selected: self.selected_joint.and_then(name),
            clip: self
                .player
                .clip
                .and_then(|c| self.rig.clips.get(c))
                .map(|c| c.name.clone()),
            time: self.player.time,
            playing: self.player.playing,
            overrides: self
                .animation
                .overrides
                .iter()
                .enumerate()
                .filter(|(_, o)| !o.is_identity())
                .filter_map(|(node, o)| name(node).map(|n| (n, *o)))
                .collect(),
        }
    }

    fn restore_state(&mut self, kept: KeptState) {
        self.camera = kept.camera;
        if let Some(node) = kept.selected.and_then(|n| self.rig.find_node(&n)) {
            self.selected_joint = Some(node);
        }
        match kept.clip {
            Some(name) => {
                if let Some(clip) = self.rig.clips.iter().position(|c| c.name == name) {
                    self.player.select(Some(clip));
                }
            }
            None => self.player.select(None),
        }
        self.player.playing = kept.playing;
        self.player.seek(kept.time, self.clip_duration());
        for (name, joint_override) in kept.overrides {
            if let Some(node) = self.rig.find_node(&name) {
                self.animation.overrides[node] = joint_override;
            }
        }
        self.mark_dirty();
    }

    /// The file being loaded (`None`: the demo rig) and for how long, while a load runs.
    pub fn loading(&self) -> Option<(Option<&Path>, Duration)> {
        self.pending.as_ref().map(|p| (p.path.as_deref(), p.started.elapsed()))
    }

    /// Takes a finished background load. Returns true when the rig changed.
    pub fn poll_load(&mut self) -> bool {
        self.receive_load(None)
    }

    /// Waits up to `limit` for the background load to finish and takes it (for the command line
    /// and tests, which have nothing else to do meanwhile). Returns true when the rig changed.
    pub fn wait_for_load(&mut self, limit: Duration) -> bool {
        self.receive_load(Some(limit))
    }

    fn receive_load(&mut self, wait: Option<Duration>) -> bool {
        let Some(pending) = &self.pending else { return false };
        let received = match wait {
            None => pending.result.try_recv(),
            Some(limit) => pending.result.recv_timeout(limit).map_err(|e| match e {
                RecvTimeoutError::Timeout => TryRecvError::Empty,
                RecvTimeoutError::Disconnected => TryRecvError::Disconnected,
            }),
        };
        match received {
            Err(TryRecvError::Empty) => false,
            Err(TryRecvError::Disconnected) => {
                self.error = Some(format!(
                    "loading {} stopped unexpectedly",
                    label(pending.path.as_deref())
                ));
                self.pending = None;
                false
            }
            Ok(result) => {
                let (path, started, reload) = (pending.path.clone(), pending.started, pending.reload);
                self.pending = None;
                match result {
                    Ok(rig) => {
                        log::info!(
                            "{} {} in {:.0} ms",
                            if reload { "reloaded" } else { "opened" },
                            label(path.as_deref()),
                            started.elapsed().as_secs_f64() * 1e3
                        );
                        self.error = None;
                        let reload = reload && path.is_some() && self.path == path;
                        let kept = reload.then(|| self.keep_state());
                        self.set_rig(rig, path);
                        if let Some(kept) = kept {
                            self.restore_state(kept);
                        }
                        if self.changed_at.is_none_or(|at| at <= started) {
                            self.file_changed = false;
                        }
                        true
                    }
                    Err(e) => {
                        self.error = Some(format!(
                            "could not open {}: {e} (the previous rig is still shown)",
                            label(path.as_deref())
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
        let files = self.poll_files();
        let loaded = self.poll_load();
        let moved = self.player.advance(dt, self.clip_duration());
        let fading = self.animation.advance(dt, &self.player, &self.rig);
        if moved || fading {
            self.mark_dirty();
        }
        files || loaded || moved || self.pending.is_some()
    }

    /// Notes that an input of the pose changed: it is evaluated again when next needed.
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
        self.cpu_skinned = false;
        self.comparison = None;
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

    /// Where the marked vertices are drawn. On the GPU path this skins the pose on the CPU
    /// too, only while something is marked.
    fn update_mark_points(&mut self) {
        self.mark_points.clear();
        let marks = self.finding_marks.iter().chain(&self.inspected);
        if marks.clone().next().is_none() {
            return;
        }
        if !self.cpu_skinned {
            self.skin_current_pose();
        }
        for mark in self.finding_marks.iter().chain(&self.inspected) {
            if let Some(p) = self.posed_position(*mark) {
                self.mark_points.push(p);
            }
        }
    }

    /// A vertex's position as drawn in the last evaluated pose (CPU-skinned vertices must be
    /// current), in world space; `None` when the reference is outside the rig.
    fn posed_position(&self, mark: VertexRef) -> Option<glam::Vec3> {
        let instance = self.rig.instances.get(mark.instance)?;
        if mark.primitive >= self.rig.meshes.get(instance.mesh)?.primitives.len() {
            return None;
        }
        let positions = self.skinned.positions(&self.rig, mark.instance, mark.primitive);
        let world = self.pose.instance_world(&self.rig, mark.instance);
        positions.get(mark.vertex).map(|&p| world.transform_point3(p))
    }

    /// Points out `marks` in the view (the vertices of a selected finding); empty clears them.
    pub fn set_finding_marks(&mut self, marks: Vec<VertexRef>) {
        if marks != self.finding_marks {
            self.finding_marks = marks;
            self.marks_stale = true;
        }
    }

    /// Shows `vertex` in the vertex inspector and marks it in the view (`None`: nothing).
    pub fn inspect_vertex(&mut self, vertex: Option<VertexRef>) {
        if vertex != self.inspected {
            self.inspected = vertex;
            self.marks_stale = true;
        }
    }

    pub fn inspected_vertex(&self) -> Option<VertexRef> {
        self.inspected
    }

    /// The inspected vertex's position as drawn now, in world space.
    pub fn inspected_position(&mut self) -> Option<glam::Vec3> {
        let mark = self.inspected?;
        self.skin_on_cpu();
        self.posed_position(mark)
    }

    fn skin_current_pose(&mut self) {
        self.skinned.skin(&self.rig, &self.pose, self.skinning_method);
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
        let Some(node) = self.selected_joint.filter(|&n| n < self.animation.overrides.len()) else {
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

    /// Skins the current pose with the current method on the CPU and in a GPU compute pass
    /// (the shader's own skinning function) and keeps the difference in `comparison`.
    pub fn compare(&mut self, gpu: &Gpu, skinner: &ComputeSkinner) -> Result<(), GpuError> {
        self.skin_on_cpu();
        let rig_size = self.rest_bounds.size().max(f32::MIN_POSITIVE);
        let method = self.skinning_method;
        self.comparison = Some(skinner.compare(gpu, &self.rig, &self.pose, &self.skinned, method, rig_size)?);
        Ok(())
    }

    /// What the renderer needs to draw the current state into a view of aspect `aspect`; the
    /// pose is brought up to date first.
    pub fn frame_state(&mut self, aspect: f32) -> FrameState<'_> {
        self.refresh();
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
            attachments: &self.animation.attachments,
            trail: &self.animation.trail.points,
            marks: &self.mark_points,
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
        self.camera.frame(&posed_bounds(&self.rig, &self.pose, &self.skinned));
    }

    pub fn reset_view(&mut self) {
        self.camera.frame(&self.rest_bounds);
    }

    /// Whether the picture changes without input (a clip is playing or a load is running).
    pub fn is_animating(&self) -> bool {
        (self.player.playing && self.player.clip.is_some()) || self.pending.is_some()
    }
}
