//! The viewer's state, independent of the window and the GPU: the open documents, playback
//! and pose, how they are looked at, and what the frames measured. The window code feeds it
//! time and input; the UI edits it.

use crate::anim::{AnimationStack, JointOverride, Player, PoseBuffers};
use crate::reload::Waker;
use crate::render::FrameState;
pub use crate::repair::{REPAIRS, RepairOptions};
use crate::rig::{Rig, RigError};
use crate::skin::{SkinnedPose, SkinningMethod, SkinningPath, posed_bounds};
use crate::timings::FrameStages;
pub use clip_edits::{ClipEdit, ClipEdits, ClipOrigin};
pub use comparison::{CompareLayout, Comparison, JOINT_ROTATION_FULL_SCALE_DEGREES, Side, joint_error};
pub use diagnostics::Diagnostics;
pub use document::{Document, influence_counts};
pub use document_state::DocumentState;
pub(crate) use dqs_mask::apply_dqs_mask;
pub use editing::{ClipListError, DocumentSaveError, is_fbx_path, suggested_save_name};
pub use engine_checks::EngineChecksState;
pub use history::{Direction, History, UNDO_DEPTH};
pub use joint_maps::JointMapTable;
use loading::PendingLoad;
pub use loading::label;
pub use look_at::{LookAtTarget, NoHead};
pub(crate) use marks::Marks;
pub use marks::{VertexRef, marks_on_every_instance};
pub(crate) use playback::Playback;
pub use playback::WorkDone;
pub use pose_edit::{PoseEdit, PoseParts};
pub use recovery::{DocumentFingerprint, RestoreAnswer, RestoreError, RestoreOffer, Restored, journal_folder};
pub use reload_question::{ReloadAnswer, ReloadQuestion};
pub use repair::{RepairAnalysis, RepairSaveError, changed_vertices, suggested_name};
pub use view::View;

mod clip_edits;
mod comparison;
mod diagnostics;
mod document;
mod document_state;
mod dqs_mask;
mod editing;
mod engine_checks;
mod engine_distance;
mod engine_view;
mod foot_lock;
mod ghosts;
mod history;
mod joint_maps;
mod loading;
mod look_at;
mod marks;
mod playback;
mod pose_edit;
mod recovery;
mod reload_question;
mod repair;
mod symmetry;
mod view;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What one side of the view draws: a document as a playback poses it, through a view.
pub(crate) struct SideInputs<'a> {
    pub(crate) document: &'a Document,
    pub(crate) playback: &'a Playback,
    pub(crate) view: &'a View,
    pub(crate) marks: &'a [glam::Vec3],
    pub(crate) symmetry: Option<(u64, &'a crate::audit::VertexSymmetry)>,
    pub(crate) engine_distances: Option<(u64, &'a crate::engine::distance::VertexDistances)>,
    pub(crate) joint_errors: Option<&'a [f32]>,
}

impl<'a> SideInputs<'a> {
    pub(crate) fn frame_state(self, aspect: f32) -> FrameState<'a> {
        let SideInputs {
            document,
            playback,
            view,
            ..
        } = self;
        let (rig, generation) = document.shown_rig();
        FrameState {
            rig,
            generation,
            rest_bounds: document.rest_bounds,
            pose: &playback.pose,
            skinned: &playback.skinned,
            camera: &view.camera,
            aspect,
            view: &view.options,
            path: playback.path,
            method: playback.method,
            selected: view.selected_joint,
            marker_size: document.rest_bounds.size().max(1e-3) * 0.015,
            attachments: &playback.animation.attachments,
            trail: &playback.animation.trail,
            marks: self.marks,
            symmetry: self.symmetry,
            engine_distances: self.engine_distances,
            joint_errors: self.joint_errors,
            ghosts: playback.ghosts.shown(),
            bind_skeleton: (playback.bind_worlds.as_ref())
                .filter(|_| view.options.bind_skeleton)
                .and_then(|worlds| worlds.as_deref()),
        }
    }
}

pub struct Viewer {
    /// The open files; at least one (the demo rig when nothing else is open).
    pub(crate) documents: Vec<Document>,
    /// The document shown and played.
    pub(crate) active: usize,
    /// The active document's clip, layers, bends and pose.
    pub(crate) playback: Playback,
    /// How the rig is looked at: camera, view options, selection.
    pub view: View,
    /// The environment map the shaded view is lit by (the built-in room unless one is loaded).
    pub environment: crate::render::environment::Environment,
    /// Vertices pointed out in the view.
    marks: Marks,
    /// What the frames measured and what went wrong, for the panels to show.
    pub diagnostics: Diagnostics,
    /// Run checks that can take seconds on big rigs (the symmetry view's) on threads of their
    /// own, showing their results when they are done (the window), instead of before the next
    /// frame (offscreen renders, tests).
    pub background_checks: bool,
    pending: Option<PendingLoad>,
    /// Reload a file when it or a file it uses changes on disk (needs [`Viewer::watch_files`]).
    pub hot_reload: bool,
    /// Files opened, most recent first (File ▸ Recent).
    pub recent: Vec<PathBuf>,
    /// Whether files are watched, and whom to wake on a change.
    watching: Option<Option<Waker>>,
    /// The generation of the last document made.
    last_generation: u64,
    /// A second file shown beside or over the active one (see [`Viewer::compare_with`]).
    pub(crate) compare: Option<Comparison>,
    /// Joint pairs set by hand per pair of skeletons, used whenever clips are added (see
    /// `joint_maps.rs`).
    pub joint_maps: crate::retarget::JointMaps,
    /// How clips are carried whenever they are added, and pairs for every clip file over the
    /// kept maps (the command line's `--in-place` and `--map-joint`).
    pub clip_carry: (crate::retarget::RetargetOptions, crate::retarget::JointMap),
    /// DQS masks by joint name, per skeleton (see `dqs_mask.rs`).
    dqs_masks: crate::skin::blend::DqsMasks,
    /// File ▸ Save as… while it writes on a thread of its own (see `editing.rs`).
    saving: Option<editing::PendingSave>,
    /// A message for the window to show briefly, taken once ([`Viewer::take_notice`]).
    notice: Option<String>,
    /// Show the rig standing in the retarget pose of this clip file (its index among the
    /// document's clip files) instead of playing (see `joint_maps.rs`).
    retarget_pose_shown: Option<usize>,
    /// Where edits are journaled, and the journals found at start (see `recovery.rs`).
    recovery: recovery::Recovery,
    /// The engine distance view's values and the Engines panel's check (see `engine_view.rs`).
    engines: engine_view::EngineState,
}

impl Viewer {
    pub fn new(rig: Rig, path: Option<PathBuf>) -> Viewer {
        let mut viewer = Viewer {
            documents: Vec::new(),
            active: 0,
            playback: Playback::for_rig(&Rig::default(), None),
            view: View::default(),
            environment: Default::default(),
            marks: Marks::default(),
            diagnostics: Diagnostics::default(),
            background_checks: false,
            pending: None,
            hot_reload: true,
            recent: Vec::new(),
            watching: None,
            last_generation: 0,
            compare: None,
            joint_maps: Default::default(),
            clip_carry: Default::default(),
            dqs_masks: Default::default(),
            saving: None,
            notice: None,
            retarget_pose_shown: None,
            recovery: Default::default(),
            engines: Default::default(),
        };
        viewer.set_rig(rig, path);
        viewer
    }

    /// The document shown and played.
    pub fn document(&self) -> &Document {
        &self.documents[self.active]
    }

    /// The report of the active document's rig, made the first time it is asked for and kept in
    /// the document until its rig changes.
    pub fn rig_report(&mut self) -> Arc<crate::report::RigReport> {
        let document = &mut self.documents[self.active];
        let report = (document.report).get_or_insert_with(|| Arc::new(crate::report::RigReport::new(&document.rig)));
        Arc::clone(report)
    }

    /// The active document's rig.
    pub fn rig(&self) -> &Arc<Rig> {
        &self.document().rig
    }

    /// Every open document; [`Viewer::active_index`] says which one is shown.
    pub fn documents(&self) -> &[Document] {
        &self.documents
    }

    pub fn active_index(&self) -> usize {
        self.active
    }

    /// A new document for `rig` with a playback made for it (carrying over `previous`'s
    /// settings), its rest bounds measured.
    pub(crate) fn new_document(
        &mut self,
        rig: Rig,
        path: Option<PathBuf>,
        previous: Option<Playback>,
    ) -> (Document, Playback) {
        let mut playback = Playback::for_rig(&rig, previous);
        let rest_bounds = if rig.instances.is_empty() {
            crate::motion::skeleton_bounds(&rig)
        } else {
            playback.rest_bounds(&rig)
        };
        self.last_generation += 1;
        (Document::new(rig, path, self.last_generation, rest_bounds), playback)
    }

    /// [`Viewer::new_document`] for a file opened, which File ▸ Recent then lists.
    fn make_document(&mut self, rig: Rig, path: Option<PathBuf>, previous: Option<Playback>) -> (Document, Playback) {
        if let Some(path) = &path {
            crate::settings::add_recent(&mut self.recent, path);
        }
        self.new_document(rig, path, previous)
    }

    /// The playback, replaced by an empty one until a new one is made from it.
    fn take_playback(&mut self) -> Playback {
        std::mem::replace(&mut self.playback, Playback::for_rig(&Rig::default(), None))
    }

    /// Puts a new document for `rig` at `index` (after the last when `index` is the count),
    /// keeping the watch on its file when the file is the same; returns the playback made for it.
    fn put_document(&mut self, index: usize, rig: Rig, path: Option<PathBuf>, previous: Option<Playback>) -> Playback {
        let (mut document, playback) = self.make_document(rig, path, previous);
        match self.documents.get_mut(index) {
            Some(old) => {
                // Its edits are let go (asked first when a save would have written them), or a
                // reload makes them again and journals them anew (`Viewer::journal_again`).
                if let Some(journal) = old.journal.take() {
                    journal.remove();
                }
                if old.path == document.path {
                    document.file_changed = old.file_changed;
                    document.changed_at = old.changed_at;
                    document.watcher = old.watcher.take();
                }
                *old = document;
            }
            None => self.documents.push(document),
        }
        self.update_watchers();
        playback
    }

    /// Shows `rig` in place of the active document: first clip selected and playing, camera
    /// framing the whole rig.
    pub fn set_rig(&mut self, rig: Rig, path: Option<PathBuf>) {
        let previous = self.take_playback();
        self.playback = self.put_document(self.active, rig, path, Some(previous));
        self.show_active();
    }

    /// Opens `rig` as a further document beside the open ones and returns its index; the
    /// active document stays shown.
    pub fn add_document(&mut self, rig: Rig, path: Option<PathBuf>) -> usize {
        let index = self.documents.len();
        self.put_document(index, rig, path, None);
        index
    }

    /// Shows document `index` (nothing happens for an index out of range): its playback starts
    /// again, keeping the clip, time, selection and bends where their names match.
    pub fn activate(&mut self, index: usize) {
        if index >= self.documents.len() || index == self.active {
            return;
        }
        self.write_pose();
        let kept = self.keep_state();
        self.active = index;
        let previous = self.take_playback();
        self.playback = Playback::for_rig(&self.documents[index].rig, Some(previous));
        self.show_active();
        self.restore_state(kept);
        // The bends came over by joint name: the pose this document now shows is journaled.
        self.note_pose_change();
    }

    /// Closes document `index` when another stays open; the one after it (or before, for the
    /// last) becomes active if it was.
    pub fn close_document(&mut self, index: usize) {
        if self.documents.len() < 2 || index >= self.documents.len() {
            return;
        }
        if index == self.active {
            let next = if index + 1 < self.documents.len() {
                index + 1
            } else {
                index - 1
            };
            self.activate(next);
        }
        if let Some(journal) = self.documents.remove(index).journal {
            journal.remove();
        }
        if self.active > index {
            self.active -= 1;
        }
    }

    /// Resets the view to the active document: selection, marks and camera framing its rest
    /// pose; the pose is evaluated again.
    fn show_active(&mut self) {
        let document = &self.documents[self.active];
        self.view.selected_joint = document.rig.skins.first().and_then(|s| s.joints.first().copied());
        self.marks.clear();
        self.view.camera.frame(&document.rest_bounds);
        if document.rig.instances.is_empty() {
            // Without a mesh the skeleton is all there is to see.
            self.view.options.skeleton.show = true;
        }
        self.restore_dqs_mask();
        self.mark_dirty();
    }

    pub fn clip_duration(&self) -> f32 {
        self.playback.clip_duration(self.rig())
    }

    /// Polls the files and loads, and advances playback by `dt` seconds; returns whether
    /// anything needs redrawing. Changes on disk are taken as of the wall clock's now (tests
    /// drive [`Viewer::poll_files`] instead).
    pub fn tick(&mut self, dt: f32) -> bool {
        let files = self.poll_files(Instant::now());
        let loaded = self.poll_load();
        let saved = self.poll_save();
        let moved = self.advance(dt);
        files || loaded || saved || moved || self.pending.is_some()
    }

    /// Advances playback and crossfades by `dt` seconds, marking the pose for evaluation when
    /// they moved; returns whether they did.
    pub fn advance(&mut self, dt: f32) -> bool {
        let moved = self.playback.advance(dt, &self.documents[self.active].rig);
        if moved {
            self.mark_dirty();
        }
        moved
    }

    /// How many pose evaluations and CPU skinnings this viewer has made: what a frame cost in
    /// work, independent of time.
    pub fn work_done(&self) -> WorkDone {
        self.playback.work_done()
    }

    /// Notes that an input of the pose changed: it is evaluated again when next needed.
    pub fn mark_dirty(&mut self) {
        self.playback.mark_dirty();
        self.diagnostics.comparison = None;
        self.marks.stale = true;
    }

    /// Brings the pose up to date (and the CPU-skinned vertices, on the CPU path or when
    /// `cpu_needed`), then the marks' positions.
    fn refresh(&mut self, cpu_needed: bool) {
        self.refresh_foot_lock();
        self.follow_camera_with_look_at();
        self.refresh_engine_drawing();
        let document = &self.documents[self.active];
        let repaired = document.repair.marks();
        let shown_rest = (self.retarget_pose_shown)
            .and_then(|file| document.carried().get(file).copied())
            .map(|carried| carried.report.retarget_pose.as_slice());
        // The engine's drawing has the rig's nodes and clips: only its weights differ.
        (self.playback).refresh(
            document.shown_rig().0,
            cpu_needed || self.marks.any() || !repaired.is_empty(),
            shown_rest,
        );
        self.playback.refresh_ghosts(&document.rig, &self.view.options.ghosts);
        if self.view.options.bind_skeleton && self.playback.bind_worlds.is_none() {
            self.playback.bind_worlds = Some(crate::motion::rest_pose::bind_pose_worlds(&document.rig));
        }
        if self.marks.stale {
            self.marks.update(&document.rig, &self.playback, repaired);
        }
    }

    /// The current pose (evaluated first if an input changed).
    pub fn pose(&mut self) -> &PoseBuffers {
        self.refresh(false);
        &self.playback.pose
    }

    /// The pose as last evaluated, which may lag behind inputs changed since (for drawing code
    /// that only reads; the frame brings it up to date before drawing).
    pub fn last_pose(&self) -> &PoseBuffers {
        &self.playback.pose
    }

    /// The frame's one changing step: the other side of a comparison follows the active one,
    /// both poses (and the CPU path's vertices) are brought up to date, and the checks the view
    /// shows are started or collected (`Viewer::update_checks`). Returns what the pose cost
    /// with any evaluation made since the last frame (`None`: nothing changed). After it,
    /// [`Viewer::frame_state`] reads the frame.
    pub fn prepare_frame(&mut self) -> Option<FrameStages> {
        self.follow_comparison();
        self.refresh(false);
        self.refresh_comparison();
        self.update_checks();
        self.playback.take_stage_times()
    }

    /// Starts, or takes the results of, the checks the view needs now, each from its owner:
    /// the symmetry check of the documents shown (the symmetry view), the comparison of the
    /// two files (the weight-difference view and the Compare window), the joints' errors
    /// against the other side (the skeleton overlay), the distances from the engine's drawing
    /// (the engine distance view) and the check of every engine (the Engines window).
    fn update_checks(&mut self) {
        let mode = self.view.options.mode;
        if mode == crate::render::ViewMode::Symmetry {
            self.ensure_symmetry();
            self.ensure_other_symmetry();
        }
        if self.compare.as_ref().is_some_and(|c| c.diff_wanted(mode)) {
            self.ensure_comparison_diff();
        }
        if self.view.options.skeleton.show {
            self.update_joint_errors();
        }
        if mode == crate::render::ViewMode::EngineDistance {
            self.update_engine_distance();
        }
        self.update_engine_checks();
    }

    pub fn player(&self) -> &Player {
        &self.playback.player
    }

    fn player_mut(&mut self) -> &mut Player {
        self.mark_dirty();
        &mut self.playback.player
    }

    pub fn set_playing(&mut self, playing: bool) {
        self.player_mut().playing = playing;
    }

    /// Whether the clip wraps at its end or stops there.
    pub fn set_looping(&mut self, looping: bool) {
        self.player_mut().looping = looping;
    }

    /// Playback speed, 1 for the clip's own.
    pub fn set_speed(&mut self, speed: f32) {
        self.player_mut().speed = speed;
    }

    /// Holds `clip` at `time`, paused: a still, with no crossfade from the clip shown before
    /// and the time taken as given (a render or export of one moment).
    pub fn hold(&mut self, clip: Option<usize>, time: f32) {
        let player = self.player_mut();
        player.select(clip);
        player.playing = false;
        player.time = time;
    }

    pub fn animation(&self) -> &AnimationStack {
        &self.playback.animation
    }

    /// The layers, crossfade, root motion, bends and attachments, for the viewer's own edits
    /// (others go through [`Viewer::edit_pose`]); marks the pose for evaluation.
    fn animation_mut(&mut self) -> &mut AnimationStack {
        self.mark_dirty();
        &mut self.playback.animation
    }

    pub fn skinning_path(&self) -> SkinningPath {
        self.playback.path
    }

    pub fn skinning_method(&self) -> SkinningMethod {
        self.playback.method
    }

    /// Switches where and how vertices are skinned. Only a change of method evaluates the pose
    /// again (dual quaternions are built only for DQS); a change of path only skins.
    pub fn set_skinning(&mut self, path: SkinningPath, method: SkinningMethod) {
        self.playback.path = path;
        if method != self.playback.method {
            self.playback.method = method;
            self.mark_dirty();
        }
    }

    /// Changes node `node`'s hand-made pose change: a pose edit, joined with the others of
    /// the same gesture (see [`Viewer::end_gesture`]).
    pub fn set_override(&mut self, node: usize, joint_override: JointOverride) {
        let overrides = &self.playback.animation.overrides;
        if overrides.get(node).is_none_or(|&old| old == joint_override) {
            return;
        }
        let name = self.rig().nodes.get(node).map_or("joint", |n| n.name.as_str());
        self.record_pose_edit(&format!("bend {name}"));
        self.animation_mut().overrides[node] = joint_override;
    }

    /// Bends the selected joint by a mouse drag of (`dx`, `dy`) points: sideways turns it about
    /// its local Y axis, up and down about its local X axis, half a degree per point.
    pub fn bend_selected_by_drag(&mut self, dx: f32, dy: f32) {
        let overrides = &self.playback.animation.overrides;
        let Some(node) = self.view.selected_joint.filter(|&n| n < overrides.len()) else {
            return;
        };
        let mut bend = overrides[node];
        let turn =
            glam::Quat::from_rotation_x((dy * 0.5).to_radians()) * glam::Quat::from_rotation_y((dx * 0.5).to_radians());
        bend.rotation = (bend.rotation * turn).normalize();
        self.set_override(node, bend);
    }

    /// Takes every bend off: a pose edit of its own.
    pub fn reset_overrides(&mut self) {
        if !self.playback.animation.has_overrides() {
            return;
        }
        self.end_gesture();
        self.record_pose_edit("reset pose");
        self.animation_mut().overrides.fill(JointOverride::IDENTITY);
    }

    /// The CPU-skinned vertices as last skinned (see [`Viewer::skin_on_cpu`]).
    pub fn last_skinned(&self) -> &SkinnedPose {
        &self.playback.skinned
    }

    /// What the renderer needs to draw the active document into a view of aspect `aspect`, as
    /// of the last [`Viewer::prepare_frame`].
    pub fn frame_state(&self, aspect: f32) -> FrameState<'_> {
        let document = &self.documents[self.active];
        let symmetry = match self.view.options.mode {
            crate::render::ViewMode::WeightDifference => self.compare.as_ref().and_then(Comparison::weight_differences),
            _ => document.current_symmetry().map(|s| (0, &s.values)),
        };
        let inputs = SideInputs {
            document,
            playback: &self.playback,
            view: &self.view,
            marks: &self.marks.points,
            symmetry,
            engine_distances: (self.view.options.mode == crate::render::ViewMode::EngineDistance)
                .then(|| self.engine_distances())
                .flatten(),
            joint_errors: (self.compare.as_ref())
                .filter(|_| self.view.options.skeleton.show)
                .map(|c| c.joint_errors.as_slice()),
        };
        inputs.frame_state(aspect)
    }

    /// Switches clips, crossfading when a crossfade duration is set.
    pub fn select_clip(&mut self, clip: Option<usize>) {
        let player = &mut self.playback.player;
        self.playback.animation.start_fade(player.clip, player.time);
        player.select(clip);
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
        let player = &mut self.playback.player;
        if !player.playing && !player.looping && player.time >= duration {
            player.time = 0.0;
            self.mark_dirty();
        }
        let player = &mut self.playback.player;
        player.playing = !player.playing;
    }

    /// Skins the current pose on the CPU with the current method, whatever the path, so that
    /// the CPU-skinned vertices are the surface that is drawn (for picking, framing and
    /// comparing). Returns them.
    pub fn skin_on_cpu(&mut self) -> &SkinnedPose {
        self.refresh(true);
        &self.playback.skinned
    }

    /// The vertex under a world-space ray, on the surface as drawn.
    pub fn pick_vertex(&mut self, origin: glam::Vec3, direction: glam::Vec3) -> Option<crate::skin::pick::MeshHit> {
        self.skin_on_cpu();
        let playback = &self.playback;
        crate::skin::pick::ray_cast(self.rig(), &playback.pose, &playback.skinned, origin, direction)
    }

    /// Frames the rig in its current pose.
    pub fn frame_all(&mut self) {
        let bounds = if self.rig().instances.is_empty() {
            self.document().rest_bounds
        } else {
            self.skin_on_cpu();
            posed_bounds(self.rig(), &self.playback.pose, &self.playback.skinned)
        };
        self.view.camera.frame(&bounds);
    }

    pub fn reset_view(&mut self) {
        self.view.camera.frame(&self.documents[self.active].rest_bounds);
    }

    /// Whether the picture changes without input (a clip is playing or a load is running).
    pub fn is_animating(&self) -> bool {
        let player = &self.playback.player;
        (player.playing && player.clip.is_some())
            || self.pending.is_some()
            || self.saving.is_some()
            || (self.document().symmetry_job.as_ref()).is_some_and(symmetry::SymmetryJob::is_running)
            || self.comparing_in_background()
            || self.document().engine_job.is_some()
            || self.engines.checks.is_running()
    }
}
