//! Two-bone IK as a layer over the pose: after the clip, its layers and the bends, each goal
//! pulls a chain's end joint (a hand, a foot) to a point, the way [`super::ik::TwoBoneIk`]
//! solves it, so that a clip plays with a hand pinned.

use super::ik::{TwoBoneIk, current_bend_pole};
use crate::anim::local_to_world;
use crate::rig::{Node, Trs};
use glam::{Mat3, Mat4, Quat, Vec3};

/// One goal: the chain start → mid → end (nodes: upper arm, forearm, hand; or thigh, shin,
/// foot) and where its end should be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IkGoal {
    pub start: usize,
    pub mid: usize,
    pub end: usize,
    /// Where the end joint goes, in world space.
    pub target: Vec3,
    /// A point the limb bends towards (the knee or elbow goes its way); `None`: the way the limb
    /// bends now, so that it does not flip.
    pub pole_target: Option<Vec3>,
    /// 0: the clip as it is; 1: the end on the target.
    pub weight: f32,
    /// Fraction of the chain's length past which the end lags behind the target instead of
    /// snapping the limb straight (1: never).
    pub soften: f32,
    pub enabled: bool,
}

impl IkGoal {
    /// A goal pulling `end` (whose parent is the mid joint, whose parent is the start joint) to
    /// `target` at full weight, softened from 97% of the chain's reach.
    pub fn for_end_joint(nodes: &[Node], end: usize, target: Vec3) -> Option<IkGoal> {
        let mid = nodes.get(end)?.parent?;
        let start = nodes[mid].parent?;
        Some(IkGoal {
            start,
            mid,
            end,
            target,
            pole_target: None,
            weight: 1.0,
            soften: 0.97,
            enabled: true,
        })
    }
}

/// What a goal did on the last pose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IkOutcome {
    /// The end is on the target.
    Reached,
    /// The target is out of reach (or inside the chain's shortest span, or softened): the limb
    /// points at it.
    NotReached,
    /// Nothing was done: the goal is off, its joints are not a chain of this rig, or its input
    /// is degenerate.
    #[default]
    Skipped,
}

/// Applies `goals` in order to `locals` (their start and mid rotations), keeping `worlds` the
/// world matrices of `locals`, and writes each goal's outcome to `outcomes` (one per goal; the
/// rest is left). `worlds` must be current on entry.
pub fn apply_ik_goals(
    nodes: &[Node],
    goals: &[IkGoal],
    locals: &mut [Trs],
    worlds: &mut [Mat4],
    outcomes: &mut [IkOutcome],
) {
    for (goal, outcome) in goals.iter().zip(outcomes.iter_mut()) {
        *outcome = IkOutcome::Skipped;
        if !goal.enabled || !is_chain(nodes, goal) || locals.len() != nodes.len() || worlds.len() != nodes.len() {
            continue;
        }
        let Some(correction) = solve(goal, worlds) else {
            continue;
        };
        locals[goal.start].rotation = (locals[goal.start].rotation * correction.start).normalize();
        locals[goal.mid].rotation = (locals[goal.mid].rotation * correction.mid).normalize();
        local_to_world(nodes, locals, worlds);
        *outcome = if correction.reached {
            IkOutcome::Reached
        } else {
            IkOutcome::NotReached
        };
    }
}

/// Whether the goal's joints exist and `mid` lies under `start` and `end` under `mid`.
fn is_chain(nodes: &[Node], goal: &IkGoal) -> bool {
    let under = |child: usize, ancestor: usize| {
        let mut above = nodes.get(child).and_then(|n| n.parent);
        while let Some(p) = above {
            if p == ancestor {
                return true;
            }
            above = nodes.get(p).and_then(|n| n.parent);
        }
        false
    };
    goal.end < nodes.len() && under(goal.end, goal.mid) && under(goal.mid, goal.start)
}

fn solve(goal: &IkGoal, worlds: &[Mat4]) -> Option<super::ik::TwoBoneCorrection> {
    let (start, mid, end) = (worlds[goal.start], worlds[goal.mid], worlds[goal.end]);
    let position = |m: &Mat4| m.w_axis.truncate();
    // The bend axis in the mid joint's frame: across the two bones as they are now, else across
    // the upper bone and the pole (a limb held straight bends towards its pole).
    let pole = match goal.pole_target {
        Some(point) => (point - position(&start)).try_normalize()?,
        None => current_bend_pole(&start, &mid, &end, Vec3::ZERO).unwrap_or(Vec3::Y),
    };
    let to_start = position(&start) - position(&mid);
    let axis_world = to_start
        .cross(position(&end) - position(&mid))
        .try_normalize()
        .or_else(|| to_start.cross(pole).try_normalize())?;
    let mid_rotation = rotation_of(&mid)?;
    let mut ik = TwoBoneIk::new(start, mid, end, goal.target);
    ik.pole = pole;
    ik.mid_axis = (mid_rotation.conjugate() * axis_world).normalize();
    ik.weight = goal.weight.clamp(0.0, 1.0);
    ik.soften = goal.soften.clamp(0.0, 1.0);
    ik.solve().ok()
}

/// The rotation of a world matrix, its columns normalized (scale taken out).
pub(crate) fn rotation_of(world: &Mat4) -> Option<Quat> {
    let m = Mat3::from_mat4(*world);
    let columns = [
        m.x_axis.try_normalize()?,
        m.y_axis.try_normalize()?,
        m.z_axis.try_normalize()?,
    ];
    Some(Quat::from_mat3(&Mat3::from_cols(columns[0], columns[1], columns[2])).normalize())
}
