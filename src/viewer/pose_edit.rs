//! Changes of the pose made by hand, as values: panels and commands describe the change and
//! [`Viewer::edit_pose`] applies it as a pose edit, so that nothing outside the viewer writes the
//! animation stack around the history. A bend previewed while `R` or `G` runs is the one change
//! shown before it is an edit, and the viewer holds what it replaced until the preview ends.

use super::Viewer;
use crate::anim::ik_layer::IkGoal;
use crate::anim::{AnimationStack, Attachment, JointOverride, Layer, RootMotion, set_expression_morph_weights};
use crate::rig::Rig;
use glam::Vec3;

/// The parts of the animation stack the Layers panel edits, copied out of the stack and given
/// back whole.
#[derive(Debug, Clone, PartialEq)]
pub struct PoseParts {
    pub crossfade_seconds: f32,
    pub layers: Vec<Layer>,
    pub root_motion: RootMotion,
    pub attachments: Vec<Attachment>,
    pub morph_overrides: Vec<Vec<Option<f32>>>,
    pub expression_weights: Vec<f32>,
    pub ik_goals: Vec<IkGoal>,
}

impl PoseParts {
    pub fn of(animation: &AnimationStack) -> PoseParts {
        PoseParts {
            crossfade_seconds: animation.crossfade_seconds,
            layers: animation.layers.clone(),
            root_motion: animation.root_motion,
            attachments: animation.attachments.clone(),
            morph_overrides: animation.morph_overrides.clone(),
            expression_weights: animation.expression_weights.clone(),
            ik_goals: animation.ik_goals.clone(),
        }
    }

    /// How Edit ▸ Undo names the change from `animation` to these parts; `None` when only the
    /// root's trail settings changed, which are drawn and are no edit.
    pub fn edit_label(&self, animation: &AnimationStack) -> Option<&'static str> {
        if animation.ik_goals != self.ik_goals {
            Some("IK goals")
        } else if animation.expression_weights != self.expression_weights {
            Some("expressions")
        } else if animation.morph_overrides != self.morph_overrides {
            Some("morph weights")
        } else if animation.layers != self.layers {
            Some("layers")
        } else if animation.crossfade_seconds != self.crossfade_seconds {
            Some("crossfade")
        } else if animation.root_motion.lock != self.root_motion.lock {
            Some("root lock")
        } else if animation.attachments != self.attachments {
            Some("attachments")
        } else {
            None
        }
    }

    /// Sets expression `expression` of `rig` (see
    /// [`ImportFacts::expressions`](crate::rig::ImportFacts::expressions)) to `weight`, and
    /// the morph weights its binds move with it.
    pub fn set_expression_weight(&mut self, rig: &Rig, expression: usize, weight: f32) {
        let Some(slot) = self.expression_weights.get_mut(expression) else {
            return;
        };
        *slot = weight.clamp(0.0, 1.0);
        set_expression_morph_weights(
            &rig.facts.expressions,
            &self.expression_weights,
            &rig.instances,
            &mut self.morph_overrides,
        );
    }

    fn put_into(self, animation: &mut AnimationStack) {
        animation.crossfade_seconds = self.crossfade_seconds;
        animation.layers = self.layers;
        animation.root_motion = self.root_motion;
        animation.attachments = self.attachments;
        animation.morph_overrides = self.morph_overrides;
        animation.expression_weights = self.expression_weights;
        animation.ik_goals = self.ik_goals;
    }
}

/// One change of the pose by hand.
#[derive(Debug, Clone, PartialEq)]
pub enum PoseEdit {
    /// The Layers panel's parts as edited there.
    Parts(PoseParts),
    /// A new IK goal, at the end of the list.
    AddIkGoal(IkGoal),
    /// IK goal `goal` (an index into the stack's goals) pulls towards `target`.
    MoveIkGoal { goal: usize, target: Vec3 },
}

/// A bend shown while `R` or `G` runs, and the bend it hides.
#[derive(Debug, Clone, Copy)]
pub(super) struct BendPreview {
    node: usize,
    before: JointOverride,
}

impl Viewer {
    /// Makes `edit` on the active document's pose as a pose edit (joined with the others of
    /// the same gesture, see [`Viewer::end_gesture`]); an edit that changes nothing is no step.
    pub fn edit_pose(&mut self, edit: PoseEdit) {
        self.end_bend_preview(false);
        let animation = &self.playback.animation;
        match edit {
            PoseEdit::Parts(parts) => {
                if parts == PoseParts::of(animation) {
                    return;
                }
                if let Some(label) = parts.edit_label(animation) {
                    self.record_pose_edit(label);
                }
                parts.put_into(self.animation_mut());
            }
            PoseEdit::AddIkGoal(goal) => {
                self.record_pose_edit("add IK goal");
                self.animation_mut().ik_goals.push(goal);
            }
            PoseEdit::MoveIkGoal { goal, target } => {
                if animation.ik_goals.get(goal).is_none_or(|g| g.target == target) {
                    return;
                }
                self.record_pose_edit("move IK goal");
                self.animation_mut().ik_goals[goal].target = target;
            }
        }
    }

    /// Changes the Layers panel's parts of the pose as `change` says, as one [`PoseEdit::Parts`].
    pub fn edit_pose_parts(&mut self, change: impl FnOnce(&mut PoseParts)) {
        let mut parts = PoseParts::of(&self.playback.animation);
        change(&mut parts);
        self.edit_pose(PoseEdit::Parts(parts));
    }

    /// Shows `shown` as node `node`'s bend without making it an edit (a running `R` or `G`).
    /// [`Viewer::end_bend_preview`] ends it; any edit, undo or redo first puts the hidden bend
    /// back, so the history never holds a preview.
    pub fn preview_bend(&mut self, node: usize, shown: JointOverride) {
        let Some(&current) = self.playback.animation.overrides.get(node) else {
            return;
        };
        match self.playback.bend_preview {
            Some(preview) if preview.node != node => {
                self.end_bend_preview(false);
                return self.preview_bend(node, shown);
            }
            Some(_) => {}
            None => self.playback.bend_preview = Some(BendPreview { node, before: current }),
        }
        if current != shown {
            self.animation_mut().overrides[node] = shown;
        }
    }

    /// Ends a bend preview: `keep` makes the bend shown an edit of its own, otherwise the
    /// bend it hid comes back and no step is made.
    pub fn end_bend_preview(&mut self, keep: bool) {
        let Some(BendPreview { node, before }) = self.playback.bend_preview.take() else {
            return;
        };
        let shown = self.playback.animation.overrides[node];
        if shown != before {
            self.animation_mut().overrides[node] = before;
        }
        if keep {
            self.end_gesture();
            self.set_override(node, shown);
            self.end_gesture();
        }
    }

    /// The bend preview running, as (node, the bend it hides).
    pub fn bend_preview(&self) -> Option<(usize, JointOverride)> {
        self.playback.bend_preview.map(|p| (p.node, p.before))
    }
}
