//! The retarget pose: the target skeleton turned, joint by joint and parents first, so that its
//! bones point where the source's bones point at rest.
//!
//! Carrying a joint's world turn from the source's rest straight onto the target's rest keeps
//! whatever differs between the two rests (a T-pose's arms and an A-pose's are 60° apart) in
//! the motion for the whole clip. Turning the target into the source's rest first — its
//! *retarget pose* — and carrying the turns onto that removes the difference: a rig whose rest
//! alone was changed then plays a clip exactly as the original.

use glam::{Quat, Vec3};

/// Rests closer than this (as the sine of the angle between two unit directions) are one
/// direction; below it a bone's direction is too short or too close to another to turn by.
const SAME_DIRECTION: f32 = 1e-6;

/// A bone's bend plane is used for its roll only where both rigs bend it clearly: the parts of
/// the next bone across this one must be at least this long (the sine of a 10° bend) on both
/// sides. Straighter limbs give a plane that is mostly noise, and a wrong roll twists the skin.
const CLEAR_BEND: f32 = 0.17;

/// Directions to the other children are used for the roll where they stand at least this far
/// (sine of about 6°) off the bone itself.
const CLEAR_SIDE: f32 = 0.1;

/// One pair of directions the alignment brings together: the target's (as it stands before
/// the turn) and the source's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DirectionPair {
    pub target: Vec3,
    pub source: Vec3,
}

/// What a joint is turned by: its bone (to its main mapped child) and the directions that fix
/// its roll about that bone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JointDirections {
    /// The bone: from the joint to its main mapped child. `None`: the joint follows its parent.
    pub bone: Option<DirectionPair>,
    /// Directions to the joint's other mapped children (hips to legs beside the spine, a hand to
    /// its fingers): roll where they stand clear of the bone.
    pub siblings: Vec<DirectionPair>,
    /// The next bone along the chain (the limb's bend plane): roll where both rigs bend clearly.
    pub next: Option<DirectionPair>,
}

/// The turn that takes the target's bone onto the source's exactly and then, about that bone,
/// brings the other directions across it as close as they come (least squares in the plane
/// across the bone); identity for a joint without a bone.
pub fn align(directions: &JointDirections) -> Quat {
    let Some(bone) = directions.bone else {
        return Quat::IDENTITY;
    };
    let (Some(from), Some(to)) = (unit(bone.target), unit(bone.source)) else {
        return Quat::IDENTITY;
    };
    let swing = Quat::from_rotation_arc(from, to);
    // Roll: the angle about `to` that best brings each pair's parts across the bone together,
    // atan2(Σ to·(p×q), Σ p·q) over the pairs (p turned by the swing), weighted by their lengths.
    let (mut sine, mut cosine) = (0.0f32, 0.0f32);
    let mut add = |pair: &DirectionPair, clear: f32| {
        let (Some(target), Some(source)) = (unit(pair.target), unit(pair.source)) else {
            return;
        };
        let across = |v: Vec3| v - to * to.dot(v);
        let (p, q) = (across(swing * target), across(source));
        if p.length() < clear || q.length() < clear {
            return;
        }
        sine += to.dot(p.cross(q));
        cosine += p.dot(q);
    };
    if directions.siblings.is_empty() {
        if let Some(next) = &directions.next {
            add(next, CLEAR_BEND);
        }
    } else {
        for sibling in &directions.siblings {
            add(sibling, CLEAR_SIDE);
        }
    }
    if sine.hypot(cosine) <= SAME_DIRECTION {
        return swing;
    }
    (Quat::from_axis_angle(to, sine.atan2(cosine)) * swing).normalize()
}

fn unit(v: Vec3) -> Option<Vec3> {
    let length = v.length();
    (length > SAME_DIRECTION && length.is_finite()).then(|| v / length)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    fn pair(target: Vec3, source: Vec3) -> DirectionPair {
        DirectionPair { target, source }
    }

    fn angle(a: Vec3, b: Vec3) -> f64 {
        DVec3::from(a.normalize()).angle_between(DVec3::from(b.normalize()))
    }

    #[test]
    fn the_bone_lands_exactly_on_the_source_bone() {
        for (from, to) in [
            (Vec3::new(0.5, -0.8, 0.1), Vec3::X),
            (Vec3::X, -Vec3::X),
            (Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 1.0, 0.001)),
        ] {
            let turn = align(&JointDirections {
                bone: Some(pair(from, to)),
                ..JointDirections::default()
            });
            assert!(angle(turn * from, to) < 1e-6, "{from} → {to}");
        }
    }

    #[test]
    fn siblings_fix_the_roll_about_the_bone() {
        // A hips joint: spine up, legs out to the sides. The target stands turned 70° about the
        // vertical and leaning 20°; aligning spine and legs undoes the whole turn.
        let turn = Quat::from_rotation_x(0.35) * Quat::from_rotation_y(70f32.to_radians());
        let (spine, left, right) = (Vec3::Y, Vec3::new(0.1, -0.05, 0.0), Vec3::new(-0.1, -0.05, 0.0));
        let directions = JointDirections {
            bone: Some(pair(turn * spine, spine)),
            siblings: vec![pair(turn * left, left), pair(turn * right, right)],
            next: None,
        };
        let found = align(&directions) * turn;
        assert!(found.angle_between(Quat::IDENTITY) < 1e-5, "{found}");
    }

    #[test]
    fn a_clear_bend_fixes_the_roll_and_a_straight_limb_keeps_it() {
        // An upper arm along X whose elbow bends 30° forward (+Z) in the source and 30° down
        // in the target: the roll about the bone is 90°.
        let bent = |towards: Vec3| Vec3::X * 30f32.to_radians().cos() + towards * 30f32.to_radians().sin();
        let turn = align(&JointDirections {
            bone: Some(pair(Vec3::X, Vec3::X)),
            next: Some(pair(bent(-Vec3::Y), bent(Vec3::Z))),
            ..JointDirections::default()
        });
        assert!(angle(turn * Vec3::X, Vec3::X) < 1e-6);
        assert!(angle(turn * bent(-Vec3::Y), bent(Vec3::Z)) < 1e-5);
        // Bent 3° only: no roll, the plain swing.
        let slightly = |towards: Vec3| Vec3::X + towards * 3f32.to_radians().tan();
        let turn = align(&JointDirections {
            bone: Some(pair(Vec3::X, Vec3::X)),
            next: Some(pair(slightly(-Vec3::Y), slightly(Vec3::Z))),
            ..JointDirections::default()
        });
        assert!(turn.angle_between(Quat::IDENTITY) < 1e-6);
    }

    #[test]
    fn without_a_bone_the_joint_follows_its_parent() {
        assert_eq!(align(&JointDirections::default()), Quat::IDENTITY);
        let zero = JointDirections {
            bone: Some(pair(Vec3::ZERO, Vec3::X)),
            ..JointDirections::default()
        };
        assert_eq!(align(&zero), Quat::IDENTITY);
    }
}
