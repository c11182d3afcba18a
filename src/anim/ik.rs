//! Posing by hand: two-bone IK and aim (look-at) as plain jobs.
//!
//! Both follow the semantics of ozz-animation's `IKTwoBoneJob` and `IKAimJob`: the inputs are model-space
//! (world) matrices, the outputs are *local-space corrections* — quaternions to multiply onto the right of each
//! joint's local rotation (`local.rotation = local.rotation * correction`) — and a `reached` flag. Nothing here
//! allocates; a chain is slices in, slices out.

use glam::{Mat4, Quat, Vec3};

/// Why a job refuses to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IkError {
    #[error("the {0} axis is not normalized")]
    NotNormalized(&'static str),
    #[error("the {0} is not finite")]
    NotFinite(&'static str),
    #[error("the {0} joint's model matrix cannot be inverted")]
    SingularMatrix(&'static str),
    #[error("the {0} bone has no length")]
    ZeroLengthBone(&'static str),
    #[error("the chain's slices differ in length ({joints} joints, {weights} weights, {corrections} corrections)")]
    ChainLengthMismatch {
        joints: usize,
        weights: usize,
        corrections: usize,
    },
    #[error("the chain is empty")]
    EmptyChain,
}

/// Squared length tolerance for "normalized" axes: loose enough for axes typed in a panel or read from f32
/// files, tight enough that an un-normalized axis does not silently scale an angle.
const NORMALIZED_TOLERANCE: f32 = 1e-3;
/// Below this determinant a joint matrix has collapsed (a zero scale) and its inverse is meaningless.
const MIN_DETERMINANT: f32 = 1e-12;
/// Squared length under which a direction is treated as undefined.
const MIN_DIRECTION_LENGTH_SQUARED: f32 = 1e-12;
/// Sine of the angle between target and pole under which their plane is undefined (about 0.06°): the chain
/// would flip from one frame to the next, so the current bend plane is kept instead.
const MIN_POLE_SINE: f32 = 1e-3;

fn check_finite_vec(v: Vec3, what: &'static str) -> Result<(), IkError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(IkError::NotFinite(what))
    }
}

fn check_finite(x: f32, what: &'static str) -> Result<(), IkError> {
    if x.is_finite() {
        Ok(())
    } else {
        Err(IkError::NotFinite(what))
    }
}

fn check_normalized(v: Vec3, what: &'static str) -> Result<(), IkError> {
    check_finite_vec(v, what)?;
    if (v.length_squared() - 1.0).abs() <= NORMALIZED_TOLERANCE {
        Ok(())
    } else {
        Err(IkError::NotNormalized(what))
    }
}

fn check_joint_matrix(m: &Mat4, joint: &'static str) -> Result<(), IkError> {
    if !m.is_finite() {
        return Err(IkError::NotFinite(joint));
    }
    if m.determinant().abs() <= MIN_DETERMINANT {
        return Err(IkError::SingularMatrix(joint));
    }
    Ok(())
}

/// The rotation taking direction `from` onto `to` (neither needs to be unit length); identity when either
/// has no direction.
fn rotation_between(from: Vec3, to: Vec3) -> Quat {
    match (from.try_normalize(), to.try_normalize()) {
        (Some(from), Some(to)) => Quat::from_rotation_arc(from, to),
        _ => Quat::IDENTITY,
    }
}

/// The rotation about `axis` (unit) that turns `from`'s component perpendicular to the axis onto `to`'s;
/// identity when either component vanishes (the plane they define is undefined).
fn rotation_about_axis_aligning(axis: Vec3, from: Vec3, to: Vec3) -> Quat {
    let from_perpendicular = from - axis * from.dot(axis);
    let to_perpendicular = to - axis * to.dot(axis);
    if from_perpendicular.length_squared() <= MIN_DIRECTION_LENGTH_SQUARED * from.length_squared().max(1.0)
        || to_perpendicular.length_squared() <= MIN_DIRECTION_LENGTH_SQUARED * to.length_squared().max(1.0)
    {
        return Quat::IDENTITY;
    }
    let angle = axis
        .dot(from_perpendicular.cross(to_perpendicular))
        .atan2(from_perpendicular.dot(to_perpendicular));
    Quat::from_axis_angle(axis, angle)
}

/// Blends a full correction with the identity. Slerp, not nlerp: a weight of ½ is exactly half the angle,
/// which is what a weight slider promises. `w` is made non-negative first so the blend takes the short way.
fn weighted(correction: Quat, weight: f32) -> Quat {
    let correction = if correction.w < 0.0 { -correction } else { correction };
    if weight >= 1.0 {
        correction
    } else {
        Quat::IDENTITY.slerp(correction, weight.max(0.0)).normalize()
    }
}

/// Two-bone IK: rotates a start joint (hip, shoulder) and a mid joint (knee, elbow) so that an end joint
/// (ankle, wrist) reaches `target`.
///
/// The three joints must be ancestors of one another (start above mid above end), not necessarily direct
/// parents; joints in between keep their local transforms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoBoneIk {
    /// Model-space matrices of the start, mid and end joints.
    pub start_model: Mat4,
    pub mid_model: Mat4,
    pub end_model: Mat4,
    /// Where the end joint should go, in model space.
    pub target: Vec3,
    /// Model-space direction the mid joint should point to, seen from the start→target line. It must not be
    /// parallel to start→target; when it is, the current bend plane is kept (see [`current_bend_pole`]).
    pub pole: Vec3,
    /// Unit axis, in the mid joint's local space, about which the mid joint bends; a positive rotation about
    /// it opens the angle between the bones (so it is `cross(mid→start, mid→end)` for a bent limb). For a
    /// limb straight at rest, take it from the rig's rest pose: a straight limb has no bend plane of its own.
    pub mid_axis: Vec3,
    /// Rotation in radians of the whole chain about the start→target line, after the pole has placed it.
    pub twist: f32,
    /// Fraction of the chain length past which the end starts to lag behind the target, so that the limb
    /// never snaps straight (`1` = no softening, ozz's default; 0.9–0.97 looks natural).
    pub soften: f32,
    /// 0 = no correction, 1 = full correction; in between the corrections are slerped from identity.
    pub weight: f32,
}

/// The output of [`TwoBoneIk::solve`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoBoneCorrection {
    /// Multiply onto the right of the start joint's local rotation.
    pub start: Quat,
    /// Multiply onto the right of the mid joint's local rotation.
    pub mid: Quat,
    /// The end lands on the target: in reach, not softened, and at full weight.
    pub reached: bool,
}

impl TwoBoneCorrection {
    pub const IDENTITY: TwoBoneCorrection = TwoBoneCorrection {
        start: Quat::IDENTITY,
        mid: Quat::IDENTITY,
        reached: false,
    };
}

impl TwoBoneIk {
    /// Defaults as ozz's: no twist, no softening, full weight, bending about local Z, pole along +Y.
    pub fn new(start_model: Mat4, mid_model: Mat4, end_model: Mat4, target: Vec3) -> Self {
        TwoBoneIk {
            start_model,
            mid_model,
            end_model,
            target,
            pole: Vec3::Y,
            mid_axis: Vec3::Z,
            twist: 0.0,
            soften: 1.0,
            weight: 1.0,
        }
    }

    pub fn validate(&self) -> Result<(), IkError> {
        check_joint_matrix(&self.start_model, "start")?;
        check_joint_matrix(&self.mid_model, "mid")?;
        check_finite_vec(self.end_model.w_axis.truncate(), "end")?;
        check_finite_vec(self.target, "target")?;
        check_finite_vec(self.pole, "pole")?;
        check_finite(self.twist, "twist")?;
        check_finite(self.soften, "soften")?;
        check_finite(self.weight, "weight")?;
        check_normalized(self.mid_axis, "mid")?;
        let start = self.start_model.w_axis.truncate();
        let mid = self.mid_model.w_axis.truncate();
        let end = self.end_model.w_axis.truncate();
        if (mid - start).length_squared() <= MIN_DIRECTION_LENGTH_SQUARED {
            return Err(IkError::ZeroLengthBone("upper"));
        }
        if (end - mid).length_squared() <= MIN_DIRECTION_LENGTH_SQUARED {
            return Err(IkError::ZeroLengthBone("lower"));
        }
        Ok(())
    }

    pub fn solve(&self) -> Result<TwoBoneCorrection, IkError> {
        self.validate()?;
        if self.weight <= 0.0 {
            return Ok(TwoBoneCorrection::IDENTITY);
        }

        // Lengths and the target live in the start joint's space (`_ss`): the start correction is expressed
        // there, and a scaled parent scales everything alike. Directions the mid correction needs live in
        // the mid joint's space (`_ms`).
        let inverse_start = self.start_model.inverse();
        let inverse_mid = self.mid_model.inverse();
        let start_position = self.start_model.w_axis.truncate();
        let mid_position = self.mid_model.w_axis.truncate();
        let end_position = self.end_model.w_axis.truncate();

        let mid_ss = inverse_start.transform_point3(mid_position);
        let end_ss = inverse_start.transform_point3(end_position);
        let upper_length_squared = mid_ss.length_squared();
        let lower_length_squared = (end_ss - mid_ss).length_squared();
        let current_reach_squared = end_ss.length_squared();
        let start_to_mid_ms = -inverse_mid.transform_point3(start_position);
        let mid_to_end_ms = inverse_mid.transform_point3(end_position);

        let (target_ss, in_reach) = self.softened_target(
            inverse_start.transform_point3(self.target),
            upper_length_squared.sqrt(),
            lower_length_squared.sqrt(),
        );
        let target_reach_squared = target_ss.length_squared();

        // Mid joint: the law of cosines gives the interior angle the triangle needs; the current angle is
        // signed (negative when the limb is bent against its axis, a knee bent forwards) so that the
        // difference also unbends a limb bent the wrong way.
        let cosine_of = |reach_squared: f32| {
            ((upper_length_squared + lower_length_squared - reach_squared)
                / (2.0 * (upper_length_squared * lower_length_squared).sqrt()))
            .clamp(-1.0, 1.0)
        };
        let wanted_angle = cosine_of(target_reach_squared).acos();
        let bent_the_right_way = start_to_mid_ms.cross(self.mid_axis).dot(mid_to_end_ms) >= 0.0;
        let current_angle = cosine_of(current_reach_squared).acos();
        let current_angle = if bent_the_right_way {
            current_angle
        } else {
            -current_angle
        };
        let mid_correction = Quat::from_axis_angle(self.mid_axis, wanted_angle - current_angle);

        // Start joint: swing the bent chain's end onto the target direction...
        let lower_bone_ss_after =
            inverse_start.transform_vector3(self.mid_model.transform_vector3(mid_correction * mid_to_end_ms));
        let swing = rotation_between(mid_ss + lower_bone_ss_after, target_ss);

        // ...then roll it about start→target so that the bend plane contains the pole on the mid's side. The
        // bend plane's normal is the mid axis; the wanted normal is target × pole (the mid joint then sits on
        // the pole's side). When target and pole line up the wanted plane is undefined: keep the swung plane.
        let mut start_correction = swing;
        if let Some(target_direction) = target_ss.try_normalize() {
            let pole_ss = inverse_start.transform_vector3(self.pole);
            let wanted_normal = target_direction.cross(pole_ss);
            if wanted_normal.length_squared() > (MIN_POLE_SINE * MIN_POLE_SINE) * pole_ss.length_squared() {
                let bend_normal_ss =
                    swing * inverse_start.transform_vector3(self.mid_model.transform_vector3(self.mid_axis));
                let roll = rotation_about_axis_aligning(target_direction, bend_normal_ss, wanted_normal);
                start_correction = roll * start_correction;
            }
            if self.twist != 0.0 {
                start_correction = Quat::from_axis_angle(target_direction, self.twist) * start_correction;
            }
        }

        Ok(TwoBoneCorrection {
            start: weighted(start_correction.normalize(), self.weight),
            mid: weighted(mid_correction, self.weight),
            reached: in_reach && self.weight >= 1.0,
        })
    }

    /// Pulls the target towards the start once it is further than `soften` × chain length, along a curve
    /// that leaves the target's speed unchanged where softening begins and approaches (never reaches) full
    /// extension: reach = soft_start + soft_span · (1 − 3⁴ / (α + 3)⁴), α = excess / soft_span. Returns the
    /// target in start space and whether it is reachable as given (neither softened nor inside the
    /// innermost reach |upper − lower|).
    fn softened_target(&self, target_ss: Vec3, upper_length: f32, lower_length: f32) -> (Vec3, bool) {
        let chain_length = upper_length + lower_length;
        let soft_start = chain_length * self.soften.clamp(0.0, 1.0);
        let soft_span = chain_length - soft_start;
        let distance = target_ss.length();
        let beyond_soft_start = distance > soft_start;
        let reachable = !beyond_soft_start && distance > (upper_length - lower_length).abs();
        if beyond_soft_start && distance > 0.0 && soft_span > 0.0 {
            let alpha = (distance - soft_start) / soft_span;
            let falloff = (3.0 / (alpha + 3.0)).powi(4);
            let softened_distance = soft_start + soft_span * (1.0 - falloff);
            (target_ss * (softened_distance / distance), reachable)
        } else {
            (target_ss, reachable)
        }
    }
}

/// The direction a limb bends towards, in model space, for use as a default pole: the mid joint's offset
/// from the start→end line, or — when the limb is straight and has no bend of its own — the direction its
/// bend axis (`mid_axis`, local to the mid joint) would bend it. Returns `None` only when even that is
/// undefined (the axis is parallel to the limb).
pub fn current_bend_pole(start_model: &Mat4, mid_model: &Mat4, end_model: &Mat4, mid_axis: Vec3) -> Option<Vec3> {
    let start = start_model.w_axis.truncate();
    let mid = mid_model.w_axis.truncate();
    let end = end_model.w_axis.truncate();
    let limb = (end - start).try_normalize()?;
    let mid_offset = mid - start;
    let bend = mid_offset - limb * mid_offset.dot(limb);
    // A bend under 1e-4 of the upper bone's length is numerical noise of a straight limb.
    if bend.length_squared() > 1e-8 * mid_offset.length_squared() {
        return bend.try_normalize();
    }
    // For the axis n = cross(mid→start, mid→end) the mid joint sits on the side n × limb.
    mid_model.transform_vector3(mid_axis).cross(limb).try_normalize()
}

/// Aim (look-at): rotates one joint so that a ray from `offset` along `forward` (both in the joint's local
/// space) passes through `target`, with `up` turned towards `pole`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aim {
    /// The joint's model-space matrix.
    pub joint_model: Mat4,
    /// Model-space point to aim at.
    pub target: Vec3,
    /// Unit axis in the joint's local space that should point at the target.
    pub forward: Vec3,
    /// Unit axis in the joint's local space that should point towards the pole (roll control).
    pub up: Vec3,
    /// Model-space direction the `up` axis should turn to, seen from the aim line.
    pub pole: Vec3,
    /// Where the aiming ray starts, in the joint's local space (the eyes, relative to a head joint).
    pub offset: Vec3,
    /// Rotation in radians about the joint→target line, after the pole has placed `up`.
    pub twist: f32,
    /// 0 = no correction, 1 = full correction; in between the correction is slerped from identity.
    pub weight: f32,
}

/// The output of [`Aim::solve`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AimCorrection {
    /// Multiply onto the right of the joint's local rotation.
    pub rotation: Quat,
    /// The ray passes through the target: the target is outside the offset's reach and weight is full.
    pub reached: bool,
}

impl Aim {
    /// Defaults as ozz's: aim along local X, up along local Y, pole along +Y, no offset, full weight.
    pub fn new(joint_model: Mat4, target: Vec3) -> Self {
        Aim {
            joint_model,
            target,
            forward: Vec3::X,
            up: Vec3::Y,
            pole: Vec3::Y,
            offset: Vec3::ZERO,
            twist: 0.0,
            weight: 1.0,
        }
    }

    pub fn validate(&self) -> Result<(), IkError> {
        check_joint_matrix(&self.joint_model, "aiming")?;
        check_finite_vec(self.target, "target")?;
        check_finite_vec(self.pole, "pole")?;
        check_finite_vec(self.offset, "offset")?;
        check_finite(self.twist, "twist")?;
        check_finite(self.weight, "weight")?;
        check_normalized(self.forward, "forward")?;
        check_normalized(self.up, "up")?;
        Ok(())
    }

    pub fn solve(&self) -> Result<AimCorrection, IkError> {
        self.validate()?;
        let inverse_joint = self.joint_model.inverse();
        let target_js = inverse_joint.transform_point3(self.target);
        let Some(target_direction) = target_js.try_normalize() else {
            // The target sits on the joint: every direction points at it.
            return Ok(AimCorrection {
                rotation: Quat::IDENTITY,
                reached: false,
            });
        };
        if self.weight <= 0.0 {
            return Ok(AimCorrection {
                rotation: Quat::IDENTITY,
                reached: false,
            });
        }

        // The rotation turns the whole ray rigidly about the joint, so the ray's point that is as far from
        // the joint as the target must be turned onto the target: offset + s·forward with |…| = |target|,
        // the root ahead of the offset. Without such a point (the target is closer to the joint than the ray
        // ever gets) aim the forward axis itself, from the joint.
        let along = self.offset.dot(self.forward);
        let discriminant = along * along - self.offset.length_squared() + target_js.length_squared();
        let (aimed_point, reachable) = if discriminant >= 0.0 {
            let s = -along + discriminant.sqrt();
            (self.offset + self.forward * s, s >= 0.0)
        } else {
            (self.forward, false)
        };
        let swing = rotation_between(aimed_point, target_js);

        // Roll about joint→target (the only axis that keeps the ray on the target) until `up` lies in the
        // plane of that line and the pole, on the pole's side.
        let pole_js = inverse_joint.transform_vector3(self.pole);
        let roll = rotation_about_axis_aligning(target_direction, swing * self.up, pole_js);
        let mut rotation = roll * swing;
        if self.twist != 0.0 {
            rotation = Quat::from_axis_angle(target_direction, self.twist) * rotation;
        }
        Ok(AimCorrection {
            rotation: weighted(rotation.normalize(), self.weight),
            reached: reachable && self.weight >= 1.0,
        })
    }
}

/// Aim spread over a chain (look-at over spine → neck → head): each joint turns a share of the way and the
/// last one finishes the job.
#[derive(Debug, Clone, Copy)]
pub struct AimChain<'a> {
    /// Model-space matrices, the aiming joint first (head) and then its ancestors in order (neck, spine…);
    /// they need not be direct parents.
    pub joint_models: &'a [Mat4],
    /// Each joint's share, same order; the last one is normally 1 so that the ray ends on the target (see
    /// [`fill_chain_weights`]).
    pub joint_weights: &'a [f32],
    /// Multiplies every joint's weight: fades the whole look-at in and out.
    pub chain_weight: f32,
    /// Model-space point to look at.
    pub target: Vec3,
    /// The first joint's forward axis, up axis and ray start (eyes), all in its local space.
    pub forward: Vec3,
    pub up: Vec3,
    pub offset: Vec3,
    /// Model-space direction `up` should turn to.
    pub pole: Vec3,
    pub twist: f32,
}

/// Fills weights for [`AimChain`]: `share` for every joint but the last, which gets 1 (ozz's look-at sample
/// uses one share for all joints but the last).
pub fn fill_chain_weights(share: f32, weights: &mut [f32]) {
    if let Some((last, rest)) = weights.split_last_mut() {
        rest.fill(share);
        *last = 1.0;
    }
}

impl AimChain<'_> {
    pub fn validate(&self, corrections: &[Quat]) -> Result<(), IkError> {
        if self.joint_models.is_empty() {
            return Err(IkError::EmptyChain);
        }
        if self.joint_weights.len() != self.joint_models.len() || corrections.len() != self.joint_models.len() {
            return Err(IkError::ChainLengthMismatch {
                joints: self.joint_models.len(),
                weights: self.joint_weights.len(),
                corrections: corrections.len(),
            });
        }
        for &weight in self.joint_weights {
            check_finite(weight, "joint weight")?;
        }
        check_finite(self.chain_weight, "chain weight")?;
        Ok(())
    }

    /// Writes one local correction per joint (same order as `joint_models`) and returns whether the last
    /// joint's aim reached the target.
    ///
    /// Joints are solved from the aiming joint towards the root. A joint's correction moves only the joints
    /// below it, so its ancestors' model matrices are still valid; what the next joint aims is the previous
    /// joint's corrected forward axis and ray start, carried into the next joint's space. The up axis is
    /// carried the same way, so the last joint rolls the first joint's up towards the pole.
    pub fn solve(&self, corrections: &mut [Quat]) -> Result<bool, IkError> {
        self.validate(corrections)?;
        let mut forward = self.forward;
        let mut up = self.up;
        let mut offset = self.offset;
        let mut reached = false;
        for index in 0..self.joint_models.len() {
            let joint_model = self.joint_models[index];
            if index > 0 {
                let previous_model = self.joint_models[index - 1];
                let previous_correction = corrections[index - 1];
                let inverse_joint = joint_model.inverse();
                let carry_vector = |v: Vec3| {
                    inverse_joint.transform_vector3(previous_model.transform_vector3(previous_correction * v))
                };
                // Renormalized: a scaled joint would otherwise hand on a scaled axis and fail validation.
                forward = carry_vector(forward).normalize_or(forward);
                up = carry_vector(up).normalize_or(up);
                offset = inverse_joint.transform_point3(previous_model.transform_point3(previous_correction * offset));
            }
            let aim = Aim {
                joint_model,
                target: self.target,
                forward,
                up,
                pole: self.pole,
                offset,
                twist: self.twist,
                weight: self.joint_weights[index] * self.chain_weight,
            };
            let correction = aim.solve()?;
            corrections[index] = correction.rotation;
            reached = correction.reached;
        }
        Ok(reached)
    }
}

#[cfg(test)]
mod tests;
