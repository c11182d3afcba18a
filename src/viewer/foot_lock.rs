//! Foot locking in the window: the pins of the clip playing, made when the user turns Lock
//! feet on and made again whenever another clip plays or the document's clips change.

use super::Viewer;
use crate::anim::foot_lock::FootLock;
use crate::motion::foot_lock::{FootLockError, FootLockOptions, plan_foot_lock};

/// What the pins in use were made for, and why none could be.
#[derive(Debug, Default)]
pub(super) struct FootLockState {
    /// The clip and document generation of the pins in the animation stack.
    made_for: Option<(usize, u64)>,
    problem: Option<FootLockError>,
}

impl Viewer {
    /// Whether the feet are held on their contacts (the Layers panel's Lock feet).
    pub fn lock_feet(&self) -> bool {
        self.playback.animation.lock_feet
    }

    /// Turns foot locking on or off, as a pose edit of its own, making the pins of the clip
    /// playing at once; says why that clip cannot be locked (locking stays on, and holds the
    /// clips that can be).
    pub fn set_lock_feet(&mut self, on: bool) -> Result<(), FootLockError> {
        if self.lock_feet() != on {
            self.end_gesture();
            self.record_pose_edit(if on { "lock feet" } else { "unlock feet" });
            self.animation_mut().lock_feet = on;
            self.end_gesture();
        }
        self.refresh_foot_lock();
        self.foot_lock_problem().cloned().map_or(Ok(()), Err)
    }

    /// The lock holding the clip playing, when locking is on and its pins could be made.
    pub fn foot_lock(&self) -> Option<&FootLock> {
        let animation = &self.playback.animation;
        animation.foot_lock.as_ref().filter(|_| animation.lock_feet)
    }

    /// Why the clip playing cannot be locked (no feet found, a foot without a leg).
    pub fn foot_lock_problem(&self) -> Option<&FootLockError> {
        self.playback
            .foot_lock_state
            .problem
            .as_ref()
            .filter(|_| self.lock_feet())
    }

    /// Makes the pins of the clip playing when locking is on and those in use were made for
    /// another clip or an older version of the document's clips.
    pub(super) fn refresh_foot_lock(&mut self) {
        let Some(clip) = self.playback.player.clip.filter(|_| self.lock_feet()) else {
            return;
        };
        let document = &self.documents[self.active];
        let wanted = (clip, document.generation);
        if self.playback.foot_lock_state.made_for == Some(wanted) {
            return;
        }
        let planned = plan_foot_lock(&document.rig, clip, &FootLockOptions::default());
        let state = &mut self.playback.foot_lock_state;
        state.made_for = Some(wanted);
        (self.playback.animation.foot_lock, state.problem) = match planned {
            Ok(lock) => (Some(lock), None),
            Err(problem) => (None, Some(problem)),
        };
        self.playback.mark_dirty();
    }
}
