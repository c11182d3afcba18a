//! The head looking at a point or at the camera, as a pose edit of the active document.

use super::Viewer;
use crate::anim::look_at::{LookAt, find_head};
use glam::Vec3;

/// What the head looks at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LookAtTarget {
    /// The camera's eye, followed as the view turns.
    Camera,
    /// A world position.
    Point(Vec3),
}

/// A rig without a joint named as a head.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no joint is named as a head (a bone with \"head\" in its name)")]
pub struct NoHead;

/// Joints a look-at turns by default: the head, the neck and two spine joints, as ozz's
/// look-at sample does.
const LOOK_AT_JOINTS: usize = 4;

impl Viewer {
    /// Turns the head (with the neck and spine taking a share) towards `target`, or lets the
    /// pose be (`None`); an undoable pose edit.
    pub fn set_look_at(&mut self, target: Option<LookAtTarget>) -> Result<(), NoHead> {
        let look_at = match target {
            None => None,
            Some(target) => {
                let point = match target {
                    LookAtTarget::Camera => self.view.camera.eye(),
                    LookAtTarget::Point(point) => point,
                };
                let kept = self.playback.animation.look_at.clone();
                let rig = self.rig();
                let head = find_head(rig).ok_or(NoHead)?;
                let mut look_at = LookAt::for_head(rig, head, LOOK_AT_JOINTS, point).ok_or(NoHead)?;
                if let Some(kept) = kept {
                    (look_at.share, look_at.weight) = (kept.share, kept.weight);
                }
                Some(look_at)
            }
        };
        self.record_pose_edit("look at");
        let animation = self.animation_mut();
        animation.look_at = look_at;
        animation.look_at_camera = target == Some(LookAtTarget::Camera);
        Ok(())
    }

    /// The look-at in use, if any.
    pub fn look_at(&self) -> Option<&LookAt> {
        self.playback.animation.look_at.as_ref()
    }

    /// Whether the look-at follows the camera.
    pub fn look_at_follows_camera(&self) -> bool {
        self.playback.animation.look_at_camera && self.look_at().is_some()
    }

    /// Sets the look-at's share per joint and weight (a slider: joined into one edit until the
    /// mouse button is released).
    pub fn set_look_at_weights(&mut self, share: f32, weight: f32) {
        if self.look_at().is_some_and(|l| (l.share, l.weight) != (share, weight)) {
            self.record_pose_edit("look-at weights");
            if let Some(look_at) = &mut self.animation_mut().look_at {
                (look_at.share, look_at.weight) = (share, weight);
            }
        }
    }

    /// Moves a look-at that follows the camera to where the camera's eye is now.
    pub(super) fn follow_camera_with_look_at(&mut self) {
        if !self.look_at_follows_camera() {
            return;
        }
        let eye = self.view.camera.eye();
        let animation = &mut self.playback.animation;
        if let Some(look_at) = &mut animation.look_at
            && look_at.target != eye
        {
            look_at.target = eye;
            self.playback.mark_dirty();
        }
    }
}
