//! Foot locking: while a foot is planted (a contact of the motion checks), two-bone leg IK
//! holds it where it lands — its place and its heading on the ground — blending in and out
//! over a few frames, and the hips come down when a leg cannot reach. The plan (which feet,
//! when, where) is made from the clip by [`crate::motion::foot_lock`]; this module only
//! applies it to a pose, allocation-free, after the clip, its layers and the bends.

use super::ik_layer::{IkGoal, IkOutcome, apply_ik_goals, rotation_of};
use crate::anim::local_to_world;
use crate::rig::{Node, Trs};
use glam::{Mat4, Quat, Vec3};

/// Why a clip's feet cannot be locked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FootLockError {
    #[error("the rig has no clip {0}")]
    NoClip(usize),
    #[error("no foot joints found by name (foot, ankle, toe); name them with --foot")]
    NoFeet,
    #[error("no joint named '{0}'")]
    UnknownFoot(String),
    #[error("{0} is not the end of a leg: it needs a parent (the shin) and a grandparent (the thigh)")]
    NotALeg(String),
}

/// One planted stretch of a foot, in clip seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pin {
    pub start: f32,
    pub end: f32,
    /// Where the foot joint is held at `start` (world space; its height is the clip's own, see
    /// [`Pin::held_place`]).
    pub place: Vec3,
    /// Ground-plane velocity of the hold: zero for a clip that travels, the steady treadmill
    /// motion of the contact for a clip played in place (its feet move back while planted).
    pub velocity: Vec3,
    /// The foot's heading while planted: its world rotation's part about the vertical axis.
    pub heading: Quat,
}

impl Pin {
    /// Where the foot is held at `time` during the contact.
    pub fn place_at(&self, time: f32) -> Vec3 {
        self.place + self.velocity * (time - self.start)
    }

    /// Where the foot goes at `time` when the clip puts it at `animated`: on the pin across
    /// the ground, at the clip's own height. The height is left alone so that the heel and toe
    /// still roll as animated, and so that a contact is found where it was: holding the height
    /// too would flatten the feet's approach and stretch the contacts into the blends.
    pub fn held_place(&self, time: f32, animated: Vec3) -> Vec3 {
        // While easing in or out the foot heads for where the contact begins or ends; a
        // treadmill's line carried on past them would pull the swinging foot further.
        let pinned = self.place_at(time.clamp(self.start, self.end));
        pinned - UP * pinned.dot(UP) + UP * animated.dot(UP)
    }

    /// How much the pin holds at `time`: 1 during the contact, easing from 0 over `blend`
    /// seconds before it and back to 0 over `blend` seconds after it.
    pub fn weight_at(&self, time: f32, blend: f32) -> f32 {
        let outside = if time < self.start {
            self.start - time
        } else if time > self.end {
            time - self.end
        } else {
            return 1.0;
        };
        if blend <= 0.0 || outside >= blend {
            return 0.0;
        }
        let x = 1.0 - outside / blend;
        x * x * (3.0 - 2.0 * x)
    }
}

/// A leg (thigh → shin → foot, as node indices) and the pins of its foot, in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct LockedLeg {
    pub thigh: usize,
    pub shin: usize,
    pub foot: usize,
    pub pins: Vec<Pin>,
}

impl LockedLeg {
    /// The pin holding most at `time` and its weight (weight 0: none holds).
    fn hold_at(&self, time: f32, blend: f32) -> Option<(&Pin, f32)> {
        self.pins
            .iter()
            .map(|pin| (pin, pin.weight_at(time, blend)))
            .filter(|(_, w)| *w > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// The feet of one clip held on their contacts.
#[derive(Debug, Clone, PartialEq)]
pub struct FootLock {
    /// The clip the pins were found in: the lock holds only while it plays.
    pub clip: usize,
    pub legs: Vec<LockedLeg>,
    /// The joint lowered when a leg cannot reach its pin (the legs' common ancestor); `None`
    /// leaves the hips as the clip has them.
    pub hips: Option<usize>,
    /// Seconds the lock eases in before a contact and out after it.
    pub blend_seconds: f32,
    /// Fraction of a leg's length (thigh to foot, as posed) the hips are lowered to keep the
    /// pin within, so that the knee never locks straight and snaps.
    pub max_reach: f32,
}

/// Vertical: glTF's +Y.
const UP: Vec3 = Vec3::Y;

/// The part of `rotation` about the vertical axis (the twist of a swing–twist split), or
/// `None` when it has none to speak of (a foot turned upside down about a level axis).
pub fn heading_of(rotation: Quat) -> Option<Quat> {
    let twist = Quat::from_xyzw(0.0, rotation.y, 0.0, rotation.w);
    (twist.length_squared() > 1e-8).then(|| twist.normalize())
}

impl FootLock {
    /// Holds the feet of `locals` (the pose of [`FootLock::clip`] at `time`, with `worlds`
    /// its world matrices, current on entry and on return). Nodes outside the rig are skipped.
    pub fn apply(&self, nodes: &[Node], time: f32, locals: &mut [Trs], worlds: &mut [Mat4]) {
        if locals.len() != nodes.len() || worlds.len() != nodes.len() {
            return;
        }
        let in_rig = |leg: &LockedLeg| leg.thigh.max(leg.shin).max(leg.foot) < nodes.len();
        // The feet came down with the hips; where the clip has them is that far up.
        let lowered = self.lower_hips(nodes, time, locals, worlds);
        for leg in self.legs.iter().filter(|leg| in_rig(leg)) {
            let Some((pin, weight)) = leg.hold_at(time, self.blend_seconds) else {
                continue;
            };
            let Some(foot_rotation) = rotation_of(&worlds[leg.foot]) else {
                continue;
            };
            let held_rotation = match heading_of(foot_rotation) {
                Some(heading) => (pin.heading * heading.conjugate() * foot_rotation).normalize(),
                None => foot_rotation,
            };
            let goal = IkGoal {
                start: leg.thigh,
                mid: leg.shin,
                end: leg.foot,
                target: pin.held_place(time, worlds[leg.foot].w_axis.truncate() + UP * lowered),
                pole_target: None,
                weight,
                soften: 1.0,
                enabled: true,
            };
            let mut outcome = [IkOutcome::Skipped];
            apply_ik_goals(nodes, std::slice::from_ref(&goal), locals, worlds, &mut outcome);
            let Some(parent) = nodes[leg.foot].parent else { continue };
            let Some(parent_rotation) = rotation_of(&worlds[parent]) else {
                continue;
            };
            let held_local = (parent_rotation.conjugate() * held_rotation).normalize();
            let local = &mut locals[leg.foot].rotation;
            *local = local.slerp(held_local, weight).normalize();
            local_to_world(nodes, locals, worlds);
        }
    }

    /// Lowers [`FootLock::hips`] by the most any held leg needs to reach its pin within
    /// [`FootLock::max_reach`] of its length, scaled by that leg's weight; returns how far
    /// they went down.
    fn lower_hips(&self, nodes: &[Node], time: f32, locals: &mut [Trs], worlds: &mut [Mat4]) -> f32 {
        let Some(hips) = self.hips.filter(|&h| h < nodes.len()) else {
            return 0.0;
        };
        let position = |node: usize| worlds[node].w_axis.truncate();
        let mut drop = 0.0f32;
        for leg in &self.legs {
            if leg.thigh.max(leg.shin).max(leg.foot) >= nodes.len() {
                continue;
            }
            let Some((pin, weight)) = leg.hold_at(time, self.blend_seconds) else {
                continue;
            };
            let length =
                position(leg.thigh).distance(position(leg.shin)) + position(leg.shin).distance(position(leg.foot));
            let reach = length * self.max_reach;
            let from_pin = position(leg.thigh) - pin.held_place(time, position(leg.foot));
            let across = from_pin - UP * from_pin.dot(UP);
            let height = from_pin.dot(UP);
            // The thigh joint may sit this high above the pin with the leg at `reach`.
            let highest = (reach * reach - across.length_squared()).max(0.0).sqrt();
            drop = drop.max((height - highest).max(0.0) * weight);
        }
        let parent_world = nodes[hips].parent.map_or(Mat4::IDENTITY, |p| worlds[p]);
        // A centimetre-scaled armature has a tiny determinant and a fine inverse: test the result.
        let to_parent = parent_world.inverse();
        if drop <= 0.0 || parent_world.determinant() == 0.0 || !to_parent.is_finite() {
            return 0.0;
        }
        let local_drop = to_parent.transform_vector3(-UP * drop);
        locals[hips].translation += local_drop;
        local_to_world(nodes, locals, worlds);
        drop
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin() -> Pin {
        Pin {
            start: 1.0,
            end: 2.0,
            place: Vec3::new(0.5, 0.0, 0.25),
            velocity: Vec3::new(0.0, 0.0, -0.5),
            heading: Quat::IDENTITY,
        }
    }

    #[test]
    fn a_pin_holds_fully_during_its_contact_and_eases_out_over_the_blend() {
        let p = pin();
        assert_eq!(p.weight_at(1.0, 0.2), 1.0);
        assert_eq!(p.weight_at(1.5, 0.2), 1.0);
        assert_eq!(p.weight_at(2.0, 0.2), 1.0);
        // Past the blend (0.8 and 2.2 lie on its edge, where f32 leaves a few ulps).
        assert_eq!(p.weight_at(0.75, 0.2), 0.0);
        assert_eq!(p.weight_at(2.25, 0.2), 0.0);
        assert!(p.weight_at(0.8, 0.2) < 1e-6);
        // Halfway through the blend: smoothstep(0.5) = 0.5; a quarter in: 0.15625.
        assert!((p.weight_at(0.9, 0.2) - 0.5).abs() < 1e-6);
        assert!((p.weight_at(2.15, 0.2) - 0.15625).abs() < 1e-5);
        assert_eq!(p.weight_at(0.99, 0.0), 0.0);
    }

    #[test]
    fn a_treadmill_pin_moves_at_its_velocity() {
        let p = pin();
        assert_eq!(p.place_at(1.0), Vec3::new(0.5, 0.0, 0.25));
        assert!((p.place_at(2.0) - Vec3::new(0.5, 0.0, -0.25)).length() < 1e-6);
    }

    #[test]
    fn the_heading_is_the_turn_about_the_vertical() {
        let yaw = Quat::from_rotation_y(0.7);
        let pitch = Quat::from_rotation_x(0.3);
        // Yaw applied last (outermost) is recovered exactly when the rest is a pitch only in
        // the x–z plane's frame: swing–twist of yaw·pitch about Y is (pitch', yaw).
        let heading = heading_of(yaw * pitch).unwrap();
        let angle = 2.0 * heading.y.atan2(heading.w);
        assert!((angle - 0.7).abs() < 1e-6, "{angle}");
        assert!(heading_of(Quat::from_rotation_x(std::f32::consts::PI)).is_none());
    }
}
