//! A document's edit history: every kind of edit (clip edits, an applied weight repair, pose
//! edits) as one undo and redo list, and whether the file's contents changed since it was read
//! or saved.
//!
//! Each step keeps the state on the other side of its edit, not an inverse edit (a trim cannot
//! be undone by computation): undo and redo exchange it with the document's current state, so
//! that taking a step back and forth gives back every bit.

use super::clip_edits::ClipSnapshot;
use super::repair::Shown;
use crate::anim::{AnimationStack, JointOverride, ik_layer::IkGoal};

/// Most edits that can be undone; older ones are forgotten (a clip step keeps a copy of every
/// clip, a repair step the rig it replaced).
pub const UNDO_DEPTH: usize = 64;

/// The state on the other side of one edit.
pub(super) enum StepState {
    /// The clip data (clips, their morph channels, per-clip facts, the clip record).
    Clips(ClipSnapshot),
    /// The rig shown, with what is derived from it (a weight repair replaces the whole rig).
    Rig(Box<Shown>),
    /// The bends, morph weights set by hand and IK goals laid over the clip.
    Pose(PoseSnapshot),
}

impl StepState {
    /// Whether the edit changes what a save writes (a pose edit does not).
    fn changes_file(&self) -> bool {
        !matches!(self, StepState::Pose(_))
    }
}

/// What a pose edit changes, kept whole: a pose is a few hundred joints at most. Everything
/// the user lays over the clip is in it: the bends, morph weights set by hand, IK goals and
/// look-at, and the layers, crossfade, root lock, attachments and foot lock of the Layers panel
/// (the root's trails only draw, and stay out).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PoseSnapshot {
    overrides: Vec<JointOverride>,
    morph_overrides: Vec<Vec<Option<f32>>>,
    expression_weights: Vec<f32>,
    ik_goals: Vec<IkGoal>,
    look_at: Option<crate::anim::look_at::LookAt>,
    look_at_camera: bool,
    layers: Vec<crate::anim::Layer>,
    crossfade_seconds: f32,
    root_lock: bool,
    attachments: Vec<crate::anim::Attachment>,
    lock_feet: bool,
}

impl PoseSnapshot {
    /// The pose of the parts given.
    pub(super) fn new(hand: HandPose, stack: StackParts) -> PoseSnapshot {
        PoseSnapshot {
            overrides: hand.overrides,
            morph_overrides: hand.morph_overrides,
            expression_weights: hand.expression_weights,
            ik_goals: hand.ik_goals,
            look_at: hand.look_at,
            look_at_camera: hand.look_at_camera,
            layers: stack.layers,
            crossfade_seconds: stack.crossfade_seconds,
            root_lock: stack.root_lock,
            attachments: stack.attachments,
            lock_feet: stack.lock_feet,
        }
    }

    pub(super) fn of(animation: &AnimationStack) -> PoseSnapshot {
        PoseSnapshot {
            overrides: animation.overrides.clone(),
            morph_overrides: animation.morph_overrides.clone(),
            expression_weights: animation.expression_weights.clone(),
            ik_goals: animation.ik_goals.clone(),
            look_at: animation.look_at.clone(),
            look_at_camera: animation.look_at_camera,
            layers: animation.layers.clone(),
            crossfade_seconds: animation.crossfade_seconds,
            root_lock: animation.root_motion.lock,
            attachments: animation.attachments.clone(),
            lock_feet: animation.lock_feet,
        }
    }

    /// Puts this pose into `animation` (made for the same rig).
    pub(super) fn put(mut self, animation: &mut AnimationStack) {
        self.swap(animation);
    }

    /// Puts this pose into `animation` and keeps the one it had. A pose recorded for a rig with
    /// another joint count (the document was reloaded since) is not put back.
    pub(super) fn exchange(&mut self, animation: &mut AnimationStack) -> bool {
        if self.overrides.len() != animation.overrides.len()
            || self.morph_overrides.len() != animation.morph_overrides.len()
            || self.expression_weights.len() != animation.expression_weights.len()
        {
            return false;
        }
        self.swap(animation);
        true
    }

    fn swap(&mut self, animation: &mut AnimationStack) {
        std::mem::swap(&mut self.overrides, &mut animation.overrides);
        std::mem::swap(&mut self.morph_overrides, &mut animation.morph_overrides);
        std::mem::swap(&mut self.expression_weights, &mut animation.expression_weights);
        std::mem::swap(&mut self.ik_goals, &mut animation.ik_goals);
        std::mem::swap(&mut self.look_at, &mut animation.look_at);
        std::mem::swap(&mut self.look_at_camera, &mut animation.look_at_camera);
        std::mem::swap(&mut self.layers, &mut animation.layers);
        std::mem::swap(&mut self.crossfade_seconds, &mut animation.crossfade_seconds);
        std::mem::swap(&mut self.root_lock, &mut animation.root_motion.lock);
        std::mem::swap(&mut self.attachments, &mut animation.attachments);
        std::mem::swap(&mut self.lock_feet, &mut animation.lock_feet);
    }
}

/// The parts of a pose set by hand in the view: bends, morph weights, IK goals and the look-at.
pub(super) struct HandPose {
    pub overrides: Vec<JointOverride>,
    pub morph_overrides: Vec<Vec<Option<f32>>>,
    pub expression_weights: Vec<f32>,
    pub ik_goals: Vec<IkGoal>,
    pub look_at: Option<crate::anim::look_at::LookAt>,
    pub look_at_camera: bool,
}

/// The Layers panel's part of a pose.
pub(super) struct StackParts {
    pub layers: Vec<crate::anim::Layer>,
    pub crossfade_seconds: f32,
    pub root_lock: bool,
    pub attachments: Vec<crate::anim::Attachment>,
    pub lock_feet: bool,
}

/// One entry of the undo or redo list.
pub(super) struct Step {
    pub label: String,
    /// Unique within the history: tells which edit a state belongs to (see
    /// [`History::is_changed`]).
    pub serial: u64,
    pub state: StepState,
}

/// Which way a step is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Undo,
    Redo,
}

#[derive(Default)]
pub struct History {
    undo: Vec<Step>,
    redo: Vec<Step>,
    last_serial: u64,
    /// [`History::file_state`] when the file was read or last saved.
    saved_state: u64,
    /// The pose step that further pose changes join until the gesture ends (a slider dragged
    /// over many frames is one edit).
    open_pose_step: Option<u64>,
}

impl History {
    /// Records an edit made, with the state before it; forgets what could have been redone.
    /// Returns the step's serial.
    pub(super) fn push(&mut self, label: String, state: StepState) -> u64 {
        self.last_serial += 1;
        let serial = self.last_serial;
        self.open_pose_step = matches!(state, StepState::Pose(_)).then_some(serial);
        self.undo.push(Step { label, serial, state });
        if self.undo.len() > UNDO_DEPTH {
            self.undo.remove(0);
        }
        self.redo.clear();
        serial
    }

    /// Whether a pose change now joins the pose step still open (see [`History::end_gesture`]).
    pub(super) fn joins_open_pose_step(&self) -> bool {
        self.open_pose_step.is_some() && self.undo.last().map(|s| s.serial) == self.open_pose_step
    }

    /// Ends the gesture (a mouse button released): the next pose change is an edit of its own.
    pub fn end_gesture(&mut self) {
        self.open_pose_step = None;
    }

    /// Takes the step `direction` would take next, for its state to be exchanged with the
    /// document's; give it back with [`History::taken`].
    pub(super) fn take(&mut self, direction: Direction) -> Option<Step> {
        self.open_pose_step = None;
        match direction {
            Direction::Undo => self.undo.pop(),
            Direction::Redo => self.redo.pop(),
        }
    }

    /// Files a step taken in `direction` (its state now the other side's) on the other list.
    pub(super) fn taken(&mut self, direction: Direction, step: Step) {
        match direction {
            Direction::Undo => self.redo.push(step),
            Direction::Redo => self.undo.push(step),
        }
    }

    /// The next step `direction` would take.
    pub(super) fn next(&self, direction: Direction) -> Option<&Step> {
        match direction {
            Direction::Undo => self.undo.last(),
            Direction::Redo => self.redo.last(),
        }
    }

    /// Forgets the step `direction` would take next (a preview ended without keeping it).
    pub(super) fn forget_next(&mut self, direction: Direction) {
        match direction {
            Direction::Undo => self.undo.pop(),
            Direction::Redo => self.redo.pop(),
        };
    }

    /// Whether any edit can be undone: a reload would have something to keep or drop.
    pub fn has_edits(&self) -> bool {
        !self.undo.is_empty()
    }

    /// The labels of the edits a reload cannot make again on what it reads (weight repairs:
    /// a repair replaces the whole rig it was made on).
    pub fn edits_a_reload_drops(&self) -> Vec<String> {
        (self.undo.iter())
            .filter(|s| matches!(s.state, StepState::Rig(_)))
            .map(|s| s.label.clone())
            .collect()
    }

    /// The labels of the steps Undo and Redo would take, the next last.
    pub(super) fn labels(&self) -> (Vec<&str>, Vec<&str>) {
        fn labels(steps: &[Step]) -> Vec<&str> {
            steps.iter().map(|s| s.label.as_str()).collect()
        }
        (labels(&self.undo), labels(&self.redo))
    }

    /// How many edits Undo can take back (at most [`UNDO_DEPTH`]).
    pub fn undo_count(&self) -> usize {
        self.undo.len()
    }

    /// The label of the edit Undo would take back.
    pub fn undo_label(&self) -> Option<&str> {
        self.undo.last().map(|s| s.label.as_str())
    }

    /// The label of the edit Redo would make again.
    pub fn redo_label(&self) -> Option<&str> {
        self.redo.last().map(|s| s.label.as_str())
    }

    /// The latest edit in effect that a save would write: the file's contents as of now.
    fn file_state(&self) -> u64 {
        (self.undo.iter().rev())
            .find(|s| s.state.changes_file())
            .map_or(0, |s| s.serial)
    }

    /// Whether what a save writes differs from the file as read or last saved.
    pub fn is_changed(&self) -> bool {
        self.file_state() != self.saved_state
    }

    /// The document's contents are in its file now.
    pub(super) fn mark_saved(&mut self) {
        self.saved_state = self.file_state();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pose(value: f32) -> StepState {
        let mut overrides = vec![JointOverride::IDENTITY; 2];
        overrides[1].rotation = glam::Quat::from_rotation_x(value);
        StepState::Pose(PoseSnapshot {
            overrides,
            morph_overrides: Vec::new(),
            expression_weights: Vec::new(),
            ik_goals: Vec::new(),
            look_at: None,
            look_at_camera: false,
            layers: Vec::new(),
            crossfade_seconds: 0.0,
            root_lock: false,
            attachments: Vec::new(),
            lock_feet: false,
        })
    }

    #[test]
    fn pose_edits_do_not_change_the_file_and_undo_back_to_the_saved_state_is_unchanged() {
        let mut history = History::default();
        assert!(!history.is_changed());
        history.push("bend".into(), pose(1.0));
        assert!(!history.is_changed(), "a pose is not written by a save");
        assert!(history.joins_open_pose_step());
        history.end_gesture();
        assert!(!history.joins_open_pose_step());

        let clips = StepState::Clips(ClipSnapshot::empty_for_tests());
        history.push("trim Walk".into(), clips);
        assert!(history.is_changed());
        assert!(!history.joins_open_pose_step(), "another edit closes the pose step");
        let step = history.take(Direction::Undo).unwrap();
        assert_eq!(step.label, "trim Walk");
        history.taken(Direction::Undo, step);
        assert!(!history.is_changed(), "back to the file as read");
        assert_eq!(history.redo_label(), Some("trim Walk"));
        let step = history.take(Direction::Redo).unwrap();
        history.taken(Direction::Redo, step);
        assert!(history.is_changed());
        history.mark_saved();
        assert!(!history.is_changed());
        history.push("bend".into(), pose(2.0));
        assert!(!history.is_changed());
        let step = history.take(Direction::Undo).unwrap();
        history.taken(Direction::Undo, step);
        let step = history.take(Direction::Undo).unwrap();
        history.taken(Direction::Undo, step);
        assert!(history.is_changed(), "undone past the save");
    }

    #[test]
    fn the_oldest_steps_are_forgotten_past_the_depth() {
        let mut history = History::default();
        for k in 0..UNDO_DEPTH + 5 {
            history.push(format!("edit {k}"), pose(k as f32));
            history.end_gesture();
        }
        let mut count = 0;
        while let Some(step) = history.take(Direction::Undo) {
            history.taken(Direction::Undo, step);
            count += 1;
        }
        assert_eq!(count, UNDO_DEPTH);
        assert_eq!(history.redo_label(), Some("edit 5"));
    }

    #[test]
    fn a_pose_recorded_for_another_joint_count_is_not_put_back() {
        let StepState::Pose(mut snapshot) = pose(3.0) else {
            unreachable!()
        };
        let rig = crate::rig::Rig::default();
        let mut animation = AnimationStack::new(&rig);
        assert!(!snapshot.exchange(&mut animation));
        assert!(animation.overrides.is_empty());
    }
}
