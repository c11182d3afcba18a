//! A second file shown as the other side of the active one: its own document and playback
//! (with its own skinning choice and DQS mask), following the active side's clock and looked
//! at through the active side's camera and view options.

use super::{Document, Marks, Playback, SideInputs, VertexRef, View, Viewer, apply_dqs_mask};
use crate::anim::{Player, PoseBuffers};
use crate::audit::VertexSymmetry;
use crate::compare::{CompareProgress, NodeMatch, RigDiff, Thresholds};
use crate::render::skeleton::JOINT_ERROR_FULL_SCALE;
use crate::render::{FrameState, ViewMode};
use crate::rig::Rig;
use crate::skin::{SkinningMethod, SkinningPath};
use std::path::PathBuf;
use std::sync::Arc;

crate::names::named_enum! {
    /// How the two sides of a comparison share the view.
    #[strum(serialize_all = "kebab-case")]
    pub enum CompareLayout {
        /// The view split in two, the active file on the left, the other on the right, both
        /// through the same camera.
        #[default]
        Side,
        /// The other file drawn into the same view as a wireframe over the active one.
        Overlay,
    }
}

impl CompareLayout {
    pub fn label(self) -> &'static str {
        match self {
            CompareLayout::Side => "Side by side",
            CompareLayout::Overlay => "Overlay",
        }
    }
}

/// The other side of a comparison: a document of its own, played and skinned by a playback of
/// its own (its skinning choice and DQS mask), following the active side's clock and looked at
/// through the active side's camera.
pub struct Side {
    document: Document,
    playback: Playback,
    /// The active side's view, with the joint of the same name selected and, in the overlay,
    /// drawn as a wireframe.
    view: View,
    marks: Marks,
}

impl Side {
    pub fn document(&self) -> &Document {
        &self.document
    }

    pub fn rig(&self) -> &Arc<Rig> {
        &self.document.rig
    }

    pub fn player(&self) -> &Player {
        &self.playback.player
    }

    /// The pose as last evaluated (the frame brings it up to date).
    pub fn last_pose(&self) -> &PoseBuffers {
        &self.playback.pose
    }

    pub fn view(&self) -> &View {
        &self.view
    }

    pub fn skinning_path(&self) -> SkinningPath {
        self.playback.path
    }

    pub fn skinning_method(&self) -> SkinningMethod {
        self.playback.method
    }

    /// The CPU-skinned vertices as last skinned (current on the CPU path after a frame).
    pub fn last_skinned(&self) -> &crate::skin::SkinnedPose {
        &self.playback.skinned
    }

    /// The DQS mask's joints (node indices of this side's rig).
    pub fn dqs_mask(&self) -> &[usize] {
        &self.playback.dqs_mask
    }

    pub fn inspected_vertex(&self) -> Option<VertexRef> {
        self.marks.inspected()
    }

    /// Shows `vertex` of this side marked in the view.
    pub fn inspect_vertex(&mut self, vertex: Option<VertexRef>) {
        self.marks.inspect(vertex);
    }

    /// Brings the pose up to date (and the CPU-skinned vertices where the path or the marks
    /// need them), then the marks' positions.
    fn refresh(&mut self) {
        let rig = &self.document.rig;
        self.playback.refresh(rig, self.marks.any(), None);
        self.playback.refresh_ghosts(rig, &self.view.options.ghosts);
        if self.view.options.bind_skeleton && self.playback.bind_worlds.is_none() {
            self.playback.bind_worlds = Some(crate::motion::rest_pose::bind_pose_worlds(rig));
        }
        if self.marks.stale {
            self.marks.update(rig, &self.playback, &[]);
        }
    }

    fn mark_dirty(&mut self) {
        self.playback.mark_dirty();
        self.marks.stale = true;
    }
}

/// Two files compared: the other side, and what comparing them found.
pub struct Comparison {
    other: Side,
    pub layout: CompareLayout,
    /// The other side skins as the active side does: the same path and method, and the active
    /// side's DQS mask on the joints of the same names. Off once the other side's skinning is
    /// set on its own ([`Comparison::set_other_skinning`]).
    pub same_skinning: bool,
    /// The active side's DQS mask the other side's was last carried from (by joint name), so
    /// that a frame carries it again only when it changed.
    carried_mask: Option<Vec<usize>>,
    /// The files' comparison is wanted (the Compare window shows it); the weight-difference
    /// view wants it too.
    diff_wanted: bool,
    /// The active side's clip when the other file has no clip of that name (it then shows
    /// its rest pose).
    missing_clip: Option<String>,
    /// The comparison of the active document (of this generation) with the other file.
    diff: Option<(u64, Arc<RigDiff>)>,
    /// That comparison while it runs on a thread (see `Viewer::background_checks`).
    diff_job: Option<(u64, crate::job::Job<RigDiff, CompareProgress>)>,
    /// Why comparing the files failed (it panicked), shown instead of the differences.
    pub diff_error: Option<String>,
    /// Which node of the other file each node of the active one is (by name, then path).
    nodes: NodeMatch,
    /// Per node of the active side, its error against its match at the current time (see
    /// [`joint_error`]; infinite without a match).
    pub(crate) joint_errors: Vec<f32>,
    /// The other side is the active document's rig as this engine draws it (see
    /// [`Viewer::compare_with_engine`]), not another file.
    engine: Option<crate::engine::Engine>,
}

/// A joint's world rotation error, in degrees, that the skeleton overlay colours like a
/// position error of [`JOINT_ERROR_FULL_SCALE`] (red).
pub const JOINT_ROTATION_FULL_SCALE_DEGREES: f32 = 10.0;

/// A joint's error as the skeleton overlay colours it: its world position error relative to
/// the rig's `size`, or its world rotation error scaled so that
/// [`JOINT_ROTATION_FULL_SCALE_DEGREES`] counts as [`JOINT_ERROR_FULL_SCALE`], whichever is
/// larger against its full scale.
pub fn joint_error(mine: &glam::Mat4, theirs: &glam::Mat4, size: f32) -> f32 {
    let position = mine.w_axis.truncate().distance(theirs.w_axis.truncate()) / size;
    let degrees = crate::compare::rotation_between(mine, theirs);
    position.max(degrees / JOINT_ROTATION_FULL_SCALE_DEGREES * JOINT_ERROR_FULL_SCALE)
}

impl Comparison {
    /// The engine whose drawing of the active document the other side is (`None`: another
    /// file).
    pub fn engine(&self) -> Option<crate::engine::Engine> {
        self.engine
    }

    /// The other side.
    pub fn other(&self) -> &Side {
        &self.other
    }

    pub(crate) fn other_document_mut(&mut self) -> &mut Document {
        &mut self.other.document
    }

    /// Skins the other side on `path` with `method`, whatever the active side does (until
    /// [`Comparison::same_skinning`] is set again).
    pub fn set_other_skinning(&mut self, path: SkinningPath, method: SkinningMethod) {
        self.same_skinning = false;
        // Linked again later, the active side's mask is carried anew.
        self.carried_mask = None;
        let playback = &mut self.other.playback;
        playback.path = path;
        if method != playback.method {
            playback.method = method;
            self.other.mark_dirty();
        }
    }

    /// Sets the other side's own DQS mask (nodes of its rig), whatever the active side's is.
    pub fn set_other_dqs_mask(&mut self, joints: Vec<usize>) {
        self.same_skinning = false;
        // Linked again later, the active side's mask is carried anew.
        self.carried_mask = None;
        if apply_dqs_mask(&self.other.document.rig, &mut self.other.playback, joints) {
            self.other.mark_dirty();
        }
    }

    /// Asks for the files to be compared: the next frame starts it (see
    /// [`Viewer::prepare_frame`]).
    pub fn want_diff(&mut self) {
        self.diff_wanted = true;
    }

    /// Whether the comparison of the files is wanted now.
    pub(crate) fn diff_wanted(&self, mode: ViewMode) -> bool {
        self.diff_wanted || mode == ViewMode::WeightDifference
    }

    /// The active side's clip, when the other file lacks it and shows its rest pose instead.
    pub fn missing_clip(&self) -> Option<&str> {
        self.missing_clip.as_deref()
    }

    /// What comparing the two files found, once computed (see [`Viewer::ensure_comparison_diff`]).
    pub fn diff(&self) -> Option<&Arc<RigDiff>> {
        self.diff.as_ref().map(|(_, diff)| diff)
    }

    /// The weight-difference view's value of every vertex of the active side, with the other
    /// side's generation (what they were computed against).
    pub(crate) fn weight_differences(&self) -> Option<(u64, &VertexSymmetry)> {
        let diff = self.diff()?;
        Some((self.other.document.generation, &diff.weights.per_vertex))
    }

    /// What the renderer needs to draw the other side into a view of aspect `aspect`, as of
    /// the last [`Viewer::prepare_frame`]; `active_generation` is the active side's, which the
    /// weight-difference view's values of this side are computed against.
    pub(crate) fn other_frame_state(&self, aspect: f32, active_generation: u64) -> FrameState<'_> {
        let side = &self.other;
        let symmetry = match side.view.options.mode {
            ViewMode::WeightDifference => (self.diff.as_ref())
                .filter(|(generation, _)| *generation == active_generation)
                .map(|(generation, diff)| (*generation, &diff.weights.per_vertex_b)),
            _ => side.document.current_symmetry().map(|s| (0, &s.values)),
        };
        let inputs = SideInputs {
            document: &side.document,
            playback: &side.playback,
            view: &side.view,
            marks: &side.marks.points,
            symmetry,
            engine_distances: None,
            joint_errors: None,
        };
        inputs.frame_state(aspect)
    }
}

impl Viewer {
    /// Shows `rig` (read from `path`) as the other side of the active document, in place of
    /// any earlier comparison.
    pub fn compare_with(&mut self, rig: Rig, path: Option<PathBuf>, layout: CompareLayout) {
        let (document, playback) = self.new_document(rig, path, None);
        let nodes = NodeMatch::new(self.rig(), &document.rig);
        let other = Side {
            document,
            playback,
            view: self.view,
            marks: Marks::default(),
        };
        self.compare = Some(Comparison {
            nodes,
            joint_errors: Vec::new(),
            other,
            layout,
            same_skinning: true,
            carried_mask: None,
            diff_wanted: false,
            missing_clip: None,
            diff: None,
            diff_job: None,
            diff_error: None,
            engine: None,
        });
        self.follow_comparison();
    }

    /// Compares the active document with itself as `engine` draws it (its rig as it is now),
    /// in the layout of the comparison open, if any; choosing an engine in View ▸ Engine as well
    /// compares two engines. Refused, nothing changed, where the engine does not load the rig.
    pub fn compare_with_engine(&mut self, engine: crate::engine::Engine) -> Result<(), crate::engine::EngineRefusal> {
        let mut drawn = engine.draw(self.rig())?;
        drawn.name = format!("{} in {}", drawn.name, engine.label());
        let layout = self.compare.as_ref().map_or_else(CompareLayout::default, |c| c.layout);
        self.compare_with(drawn, None, layout);
        if let Some(comparison) = &mut self.compare {
            comparison.engine = Some(engine);
        }
        Ok(())
    }

    /// Compares the active document with the other file (joints, vertices, clips) unless that
    /// was done for this document already: on a thread with [`Viewer::background_checks`]
    /// (the window, which calls this again each frame to collect the result), else at once.
    pub fn ensure_comparison_diff(&mut self) {
        let document = &self.documents[self.active];
        let generation = document.generation;
        let Some(comparison) = self.compare.as_mut() else {
            return;
        };
        let done = comparison.diff.as_ref().is_some_and(|(done, _)| *done == generation);
        if done || comparison.diff_error.is_some() {
            return;
        }
        let (rig, other) = (Arc::clone(&document.rig), Arc::clone(comparison.other.rig()));
        let compare = move |progress: &CompareProgress| {
            let mut report = |fraction, what: &str| progress.set(fraction, what);
            crate::compare::compare_with_progress(&rig, &other, &Thresholds::default(), &mut report)
        };
        if !self.background_checks {
            comparison.diff = Some((generation, Arc::new(compare(&CompareProgress::default()))));
            return;
        }
        match comparison.diff_job.take() {
            Some((started, job)) if started == generation => match job.try_wait() {
                Ok(Ok(diff)) => comparison.diff = Some((generation, Arc::new(diff))),
                Ok(Err(panicked)) => comparison.diff_error = Some(panicked.0),
                Err(job) => comparison.diff_job = Some((started, job)),
            },
            _ => {
                let job = crate::job::Job::with_progress(CompareProgress::default(), compare);
                comparison.diff_job = Some((generation, job));
            }
        }
    }

    /// Measures each joint's error ([`joint_error`]) against its match in the other side's
    /// pose as last evaluated (the frame brings that up to date first).
    pub(crate) fn update_joint_errors(&mut self) {
        let Some(comparison) = self.compare.as_mut() else {
            return;
        };
        let size = self.documents[self.active].rest_bounds.size().max(1e-6);
        let (mine, theirs) = (&self.playback.pose.worlds, &comparison.other.last_pose().worlds);
        comparison.joint_errors.clear();
        comparison
            .joint_errors
            .extend(mine.iter().enumerate().map(|(node, world)| {
                let other = comparison
                    .nodes
                    .a_to_b
                    .get(node)
                    .copied()
                    .flatten()
                    .and_then(|m| theirs.get(m));
                other.map_or(f32::INFINITY, |other| joint_error(world, other, size))
            }));
    }

    /// The skeleton overlay's per-node errors (see `Viewer::update_joint_errors`), as of the
    /// last frame drawn with the skeleton shown.
    pub fn joint_errors(&self) -> Option<&[f32]> {
        self.compare.as_ref().map(|c| c.joint_errors.as_slice())
    }

    /// Whether the comparison of the two files is running on its thread.
    pub fn comparing_in_background(&self) -> bool {
        self.compare.as_ref().is_some_and(|c| c.diff_job.is_some())
    }

    /// How far the comparison running on its thread has got: the fraction done and what it is
    /// doing (see [`crate::compare::compare_with_progress`]).
    pub fn comparison_progress(&self) -> Option<(f32, String)> {
        let (_, job) = self.compare.as_ref()?.diff_job.as_ref()?;
        Some(job.progress().get())
    }

    /// Reads the file at `path` and shows it as the other side of the active document (in
    /// the current comparison's layout, else side by side).
    pub fn compare_with_file(&mut self, path: PathBuf) -> Result<(), crate::rig::RigError> {
        let rig = crate::rig::load_file(&path)?;
        let layout = self.compare.as_ref().map_or_else(CompareLayout::default, |c| c.layout);
        self.compare_with(rig, Some(path), layout);
        Ok(())
    }

    /// Ends the comparison; the active document stays shown.
    pub fn stop_comparing(&mut self) {
        self.compare = None;
    }

    pub fn comparison(&self) -> Option<&Comparison> {
        self.compare.as_ref()
    }

    /// How the two sides are laid out; nothing without a comparison.
    pub fn set_compare_layout(&mut self, layout: CompareLayout) {
        if let Some(comparison) = &mut self.compare {
            comparison.layout = layout;
        }
    }

    /// Asks for the two files to be compared (the Compare window shows what it finds).
    pub fn want_comparison_diff(&mut self) {
        if let Some(comparison) = &mut self.compare {
            comparison.want_diff();
        }
    }

    /// The other side's skinning: `None` skins it as the active side, `Some(method)` with a
    /// method of its own on the active side's path.
    pub fn set_other_side_skinning(&mut self, method: Option<SkinningMethod>) {
        let path = self.skinning_path();
        if let Some(comparison) = &mut self.compare {
            match method {
                None => comparison.same_skinning = true,
                Some(method) => comparison.set_other_skinning(path, method),
            }
        }
    }

    /// Inspects a vertex of the other side (its matched vertex, say).
    pub fn inspect_other_vertex(&mut self, vertex: Option<VertexRef>) {
        if let Some(comparison) = &mut self.compare {
            comparison.other.inspect_vertex(vertex);
        }
    }

    /// Moves the other side to the active side's state: the clip of the same name at the
    /// same time (its rest pose when it has none of that name), the same camera and view
    /// options, the joint of the same name selected, and with [`Comparison::same_skinning`] the
    /// same skinning. Cheap when nothing changed: the other side's pose is evaluated again only
    /// when its clip, time or skinning moved.
    pub(crate) fn follow_comparison(&mut self) {
        let Some(comparison) = self.compare.as_mut() else {
            return;
        };
        let rig = &self.documents[self.active].rig;
        let player = &self.playback.player;
        let clip_name = player.clip.and_then(|c| rig.clips.get(c)).map(|c| c.name.as_str());
        let other = &mut comparison.other;
        let other_clip = clip_name.and_then(|name| other.rig().clips.iter().position(|c| c.name == name));
        // Each frame comes here: the name is copied only when it changes.
        let missing = clip_name.filter(|_| other_clip.is_none());
        if comparison.missing_clip.as_deref() != missing {
            comparison.missing_clip = missing.map(str::to_owned);
        }
        let (time, speed, looping) = (player.time, player.speed, player.looping);
        let other_player = &mut other.playback.player;
        if other_player.clip != other_clip || other_player.time != time {
            other_player.select(other_clip);
            other_player.time = time;
            other.mark_dirty();
        }
        let other_player = &mut other.playback.player;
        (other_player.playing, other_player.speed, other_player.looping) = (false, speed, looping);
        let selected_name = self
            .view
            .selected_joint
            .and_then(|n| rig.nodes.get(n))
            .map(|n| n.name.as_str());
        let selected = selected_name.and_then(|name| other.rig().find_node(name));
        let mut view = View {
            selected_joint: selected,
            ..self.view
        };
        view.options.wireframe |= comparison.layout == CompareLayout::Overlay;
        if view.options.ghosts != other.view.options.ghosts {
            other.mark_dirty();
        }
        other.view = view;
        if comparison.same_skinning {
            let playback = &mut other.playback;
            playback.path = self.playback.path;
            if playback.method != self.playback.method {
                playback.method = self.playback.method;
                other.mark_dirty();
            }
            let active_mask = &self.playback.dqs_mask;
            if comparison.carried_mask.as_ref() != Some(active_mask) {
                let a_to_b = &comparison.nodes.a_to_b;
                let mask = (active_mask.iter())
                    .filter_map(|&node| a_to_b.get(node).copied().flatten())
                    .collect();
                if apply_dqs_mask(&other.document.rig, &mut other.playback, mask) {
                    other.mark_dirty();
                }
                comparison.carried_mask = Some(active_mask.clone());
            }
        }
    }

    /// The other side's pose and marks brought up to date for a frame.
    pub(crate) fn refresh_comparison(&mut self) {
        if let Some(comparison) = self.compare.as_mut() {
            comparison.other.refresh();
        }
    }

    /// What the renderer needs to draw the other side of the comparison into a view of aspect
    /// `aspect` (`None` without a comparison), as of the last [`Viewer::prepare_frame`].
    pub fn other_frame_state(&self, aspect: f32) -> Option<FrameState<'_>> {
        let generation = self.document().generation;
        (self.compare.as_ref()).map(|comparison| comparison.other_frame_state(aspect, generation))
    }
}
