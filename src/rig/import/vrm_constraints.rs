//! `VRMC_node_constraint` 1.0: nodes whose rotation follows another node's (roll, aim and
//! rotation constraints), read per node and put in the order they must be evaluated in.
//!
//! A constraint that names a missing source, itself, an unknown axis or a weight outside 0..1
//! is left out with a warning; so is every constraint of a dependency cycle, which is reported
//! and never followed.

use glam::Vec3;
use serde_json::Value;

/// The node constraint extension of VRM 1.0.
pub const CONSTRAINT_EXTENSION: &str = "VRMC_node_constraint";

/// What a constraint copies from its source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConstraintKind {
    /// The source's turn from rest about this axis of the destination (a unit X, Y or Z).
    Roll { axis: Vec3 },
    /// The destination turned so this axis of it (a signed unit axis) points at the source.
    Aim { axis: Vec3 },
    /// The source's whole turn from rest, in local space.
    Rotation,
}

/// One constrained node, with rig node indices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeConstraint {
    pub node: usize,
    pub source: usize,
    pub kind: ConstraintKind,
    /// 0 to 1: how far from the rest rotation toward the constrained one.
    pub weight: f32,
}

/// A roll axis: `X`, `Y` or `Z`.
fn roll_axis(name: &str) -> Option<Vec3> {
    Some(match name {
        "X" => Vec3::X,
        "Y" => Vec3::Y,
        "Z" => Vec3::Z,
        _ => return None,
    })
}

/// An aim axis: `PositiveX` … `NegativeZ`.
fn aim_axis(name: &str) -> Option<Vec3> {
    let (sign, axis) = match name.strip_prefix("Positive") {
        Some(axis) => (1.0, axis),
        None => (-1.0, name.strip_prefix("Negative")?),
    };
    roll_axis(axis).map(|a| a * sign)
}

/// One node's constraint read from its extension, or why it cannot be used.
fn read_one(extension: &Value, slot: &[usize], node: usize) -> Result<NodeConstraint, String> {
    let constraint = extension.get("constraint").ok_or("it has no constraint")?;
    let named = |body: &Value, key: &str| body.get(key).and_then(Value::as_str).map(str::to_owned);
    let (body, kind) = match (
        constraint.get("roll"),
        constraint.get("aim"),
        constraint.get("rotation"),
    ) {
        (Some(body), None, None) => (
            body,
            named(body, "rollAxis")
                .as_deref()
                .and_then(roll_axis)
                .map(|axis| ConstraintKind::Roll { axis }),
        ),
        (None, Some(body), None) => (
            body,
            named(body, "aimAxis")
                .as_deref()
                .and_then(aim_axis)
                .map(|axis| ConstraintKind::Aim { axis }),
        ),
        (None, None, Some(body)) => (body, Some(ConstraintKind::Rotation)),
        _ => return Err("it needs exactly one of roll, aim and rotation".to_owned()),
    };
    let kind = kind.ok_or("its axis is not one the specification allows")?;
    let source = (body.get("source").and_then(Value::as_u64))
        .and_then(|s| slot.get(usize::try_from(s).ok()?).copied())
        .ok_or("its source is not a node of the file")?;
    if source == node {
        return Err("its source is the node itself".to_owned());
    }
    let weight = match body.get("weight") {
        None => 1.0,
        Some(w) => (w.as_f64().map(|w| w as f32))
            .filter(|w| (0.0..=1.0).contains(w))
            .ok_or("its weight is not a number from 0 to 1")?,
    };
    Ok(NodeConstraint {
        node,
        source,
        kind,
        weight,
    })
}

/// Every node's constraint, in an order where each comes after those it depends on.
/// `parents` is per rig node; `slot[gltf node]` its rig node.
pub(super) fn read_constraints(
    root: &gltf::json::Root,
    slot: &[usize],
    parents: &[Option<usize>],
    warnings: &mut Vec<String>,
) -> Vec<NodeConstraint> {
    let mut constraints = Vec::new();
    for (gltf_node, node) in root.nodes.iter().enumerate() {
        let Some(extension) = node
            .extensions
            .as_ref()
            .and_then(|e| e.others.get(CONSTRAINT_EXTENSION))
        else {
            continue;
        };
        let Some(&rig_node) = slot.get(gltf_node) else { continue };
        match read_one(extension, slot, rig_node) {
            Ok(constraint) => constraints.push(constraint),
            Err(why) => warnings.push(format!(
                "{CONSTRAINT_EXTENSION} on node {gltf_node}: {why}; it is left out"
            )),
        }
    }
    dependency_order(constraints, parents, warnings)
}

/// Whether `node` is `ancestor` or below it.
fn at_or_below(parents: &[Option<usize>], ancestor: usize, mut node: usize) -> bool {
    loop {
        if node == ancestor {
            return true;
        }
        match parents.get(node).copied().flatten() {
            Some(parent) => node = parent,
            None => return false,
        }
    }
}

/// Constraints sorted so that each comes after every constraint that moves its source or
/// its own parent (Kahn's algorithm). What is left when no constraint is free to go next lies on
/// or behind a cycle: it is reported and left out.
fn dependency_order(
    constraints: Vec<NodeConstraint>,
    parents: &[Option<usize>],
    warnings: &mut Vec<String>,
) -> Vec<NodeConstraint> {
    let n = constraints.len();
    // depends[i]: the constraints that must be evaluated before constraint i.
    let depends: Vec<Vec<usize>> = (constraints.iter())
        .map(|c| {
            (0..n)
                .filter(|&j| {
                    let other = constraints[j].node;
                    other != c.node
                        && (at_or_below(parents, other, c.source)
                            || parents
                                .get(c.node)
                                .copied()
                                .flatten()
                                .is_some_and(|p| at_or_below(parents, other, p)))
                })
                .collect()
        })
        .collect();
    let mut done = vec![false; n];
    let mut ordered = Vec::with_capacity(n);
    loop {
        let ready: Vec<usize> = (0..n)
            .filter(|&i| !done[i] && depends[i].iter().all(|&j| done[j]))
            .collect();
        if ready.is_empty() {
            break;
        }
        for i in ready {
            done[i] = true;
            ordered.push(constraints[i]);
        }
    }
    for (constraint, _) in constraints.iter().zip(&done).filter(|(_, done)| !**done) {
        warnings.push(format!(
            "{CONSTRAINT_EXTENSION}: the constraint of node {} is on or behind a cycle of constraints; it is left out",
            constraint.node
        ));
    }
    ordered
}
