//! VRM node constraints (`VRMC_node_constraint`) over the pose: twist bones rolled by their
//! source, nodes aimed at theirs, rotations copied, each slerped from the destination's rest
//! rotation by its weight, in the dependency order the importer sorted them into.

use crate::anim::local_to_world;
use crate::rig::{ConstraintKind, Node, NodeConstraint, Trs};
use glam::{Mat4, Quat};

/// Applies `constraints`, in order, to `locals`, keeping `worlds` (their world matrices,
/// parents first) up to date after each, since an aim reads world positions.
pub fn apply_constraints(nodes: &[Node], constraints: &[NodeConstraint], locals: &mut [Trs], worlds: &mut [Mat4]) {
    for constraint in constraints {
        let (node, source) = (constraint.node, constraint.source);
        let (Some(destination), Some(source_node)) = (nodes.get(node), nodes.get(source)) else {
            continue;
        };
        let rest = destination.rest.rotation;
        let source_rest = source_node.rest.rotation;
        let source_delta = source_rest.inverse() * locals[source].rotation;
        let target = match constraint.kind {
            ConstraintKind::Rotation => rest * source_delta,
            ConstraintKind::Roll { axis } => {
                // The source's turn carried into the destination's rest axes, less its swing.
                let in_parent = source_rest * source_delta * source_rest.inverse();
                let in_destination = rest.inverse() * in_parent * rest;
                let swing = Quat::from_rotation_arc(axis, (in_destination * axis).normalize_or(axis));
                rest * swing.inverse() * in_destination
            }
            ConstraintKind::Aim { axis } => {
                let parent = destination.parent.map_or(Quat::IDENTITY, |p| {
                    worlds[p].to_scale_rotation_translation().1.normalize()
                });
                let from = parent * rest * axis;
                let to = (worlds[source].w_axis - worlds[node].w_axis).truncate();
                match to.try_normalize() {
                    Some(to) => parent.inverse() * Quat::from_rotation_arc(from, to) * parent * rest,
                    None => rest,
                }
            }
        };
        locals[node].rotation = rest.slerp(target.normalize(), constraint.weight).normalize();
        local_to_world(nodes, locals, worlds);
    }
}
