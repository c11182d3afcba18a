//! VRM spring bones: hair, skirts and accessories that swing after the pose, by the Verlet
//! integration the VRM 1.0 specification (`VRMC_springBone`) describes.
//!
//! Per joint the simulation keeps its tail's position now and one step ago, in the chain's
//! center space (the world when it has none). A step moves the tail by its inertia (less the
//! drag), pulls it back toward the rest direction (stiffness) and along the gravity, holds it at
//! the bone's length from the joint, pushes it out of the chain's colliders and turns the joint
//! to aim at it. Steps are a fixed [`SPRING_STEP_SECONDS`] long, taken from an accumulator of the
//! time given, so the motion does not depend on the frame rate, and the same times give the same
//! result bit for bit. Everything is sized in [`SpringSim::new`]: a step allocates nothing.

use crate::anim::local_to_world;
use crate::rig::{ColliderShape, Node, Rig, SpringBones, SpringSettings, SpringTail, Trs, VRM0_TAIL_METRES};
use glam::{Mat4, Quat, Vec3};

/// The simulation's fixed step: 60 Hz.
pub const SPRING_STEP_SECONDS: f32 = 1.0 / 60.0;

/// Most steps one call takes; a longer pause (a stall, a seek) is not caught up, which would
/// make the first frame after it cost as much as the pause was long.
const MAX_STEPS_PER_CALL: u32 = 15;

/// Tail motion per step under which the springs count as at rest, in metres.
const AT_REST_METRES: f32 = 1e-5;

/// One joint's fixed facts and its tail's state.
#[derive(Debug, Clone, Copy)]
struct JointState {
    node: usize,
    chain: usize,
    /// The tail in the joint's own space at rest.
    local_tail: Vec3,
    /// `local_tail` normalized: the direction the joint aims at rest.
    bone_axis: Vec3,
    rest_rotation: Quat,
    settings: SpringSettings,
    /// The tail now and one step ago, in the chain's center space.
    current: Vec3,
    previous: Vec3,
    /// The tail as last placed, in world space (for drawing).
    world_tail: Vec3,
}

/// A collider placed in the world for one step: the segment `a`–`b` swept by `radius` (a
/// sphere when they coincide).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlacedCollider {
    pub a: Vec3,
    pub b: Vec3,
    pub radius: f32,
}

/// The running state of a rig's spring bones.
#[derive(Debug, Clone)]
pub struct SpringSim {
    joints: Vec<JointState>,
    /// Per chain: its collider indices and center node.
    chain_colliders: Vec<Vec<usize>>,
    chain_centers: Vec<Option<usize>>,
    colliders: Vec<(usize, ColliderShape)>,
    placed: Vec<PlacedCollider>,
    /// Simulated time not yet taken as a step.
    accumulator: f32,
    /// The tails were placed from a pose (false until the first call and after a reset).
    started: bool,
    /// The largest tail move of the last step, in metres.
    last_motion: f32,
    /// Nodes below this index are above every joint: a joint's turn leaves their worlds as
    /// they are.
    first_joint_node: usize,
}

impl SpringSim {
    /// The simulation of `rig`'s springs, or `None` when it has none. Joints whose tail sits on
    /// the joint (nothing to aim) are left out.
    pub fn new(rig: &Rig) -> Option<SpringSim> {
        let springs: &SpringBones = rig.facts.springs.as_ref()?;
        let rest: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        let mut rest_worlds = vec![Mat4::IDENTITY; rig.nodes.len()];
        local_to_world(&rig.nodes, &rest, &mut rest_worlds);
        let position = |node: usize| rest_worlds[node].w_axis.truncate();
        let mut joints = Vec::new();
        for (c, chain) in springs.chains.iter().enumerate() {
            for joint in &chain.joints {
                let Some(world) = rest_worlds.get(joint.node) else {
                    continue;
                };
                let world_tail = match joint.tail {
                    SpringTail::Node(tail) => position(tail),
                    SpringTail::Extended => {
                        let parent = rig.nodes[joint.node].parent.map_or(Vec3::ZERO, position);
                        let along = (position(joint.node) - parent).normalize_or_zero();
                        position(joint.node) + along * VRM0_TAIL_METRES
                    }
                };
                let local_tail = world.inverse().transform_point3(world_tail);
                let Some(bone_axis) = local_tail.try_normalize() else {
                    continue;
                };
                joints.push(JointState {
                    node: joint.node,
                    chain: c,
                    local_tail,
                    bone_axis,
                    rest_rotation: rig.nodes[joint.node].rest.rotation,
                    settings: joint.settings,
                    current: world_tail,
                    previous: world_tail,
                    world_tail,
                });
            }
        }
        // Parents first (rig nodes are in that order), so a joint sees its ancestors moved.
        joints.sort_by_key(|j| j.node);
        let first_joint_node = joints.first()?.node;
        Some(SpringSim {
            joints,
            chain_colliders: springs.chains.iter().map(|c| c.colliders.clone()).collect(),
            chain_centers: springs.chains.iter().map(|c| c.center).collect(),
            colliders: springs.colliders.iter().map(|c| (c.node, c.shape)).collect(),
            placed: vec![
                PlacedCollider {
                    a: Vec3::ZERO,
                    b: Vec3::ZERO,
                    radius: 0.0
                };
                springs.colliders.len()
            ],
            accumulator: 0.0,
            started: false,
            last_motion: 0.0,
            first_joint_node,
        })
    }

    /// Starts over: the next call places every tail where the pose puts it, at rest.
    pub fn reset(&mut self) {
        self.started = false;
        self.accumulator = 0.0;
        self.last_motion = 0.0;
    }

    /// Whether the last step still moved a tail: a viewer redraws while it does.
    pub fn is_moving(&self) -> bool {
        self.last_motion > AT_REST_METRES
    }

    /// Each joint's node and its tail in world space, as last placed.
    pub fn tails(&self) -> impl Iterator<Item = (usize, Vec3)> + '_ {
        self.joints.iter().map(|j| (j.node, j.world_tail))
    }

    /// The colliders as placed for the last step.
    pub fn colliders(&self) -> &[PlacedCollider] {
        &self.placed
    }

    /// Runs `seconds` of simulation over the pose in `locals` and `worlds` (world matrices of
    /// `locals`, parents first) in whole steps, then turns the joints to their tails and
    /// updates `worlds`. With less than a step due the joints still aim at their tails.
    pub fn advance(&mut self, nodes: &[Node], seconds: f32, locals: &mut [Trs], worlds: &mut [Mat4]) {
        if !self.started {
            self.place_tails(nodes, locals, worlds);
        }
        self.accumulator += seconds.max(0.0);
        let mut steps = 0;
        while self.accumulator >= SPRING_STEP_SECONDS && steps < MAX_STEPS_PER_CALL {
            self.accumulator -= SPRING_STEP_SECONDS;
            steps += 1;
        }
        self.accumulator = self.accumulator.min(SPRING_STEP_SECONDS);
        if steps == 0 {
            self.pass(nodes, None, locals, worlds);
        }
        for _ in 0..steps {
            self.place_colliders(nodes, locals, worlds);
            self.pass(nodes, Some(SPRING_STEP_SECONDS), locals, worlds);
        }
        local_to_world(nodes, locals, worlds);
    }

    fn place_tails(&mut self, nodes: &[Node], locals: &[Trs], worlds: &[Mat4]) {
        for k in 0..self.joints.len() {
            let joint = self.joints[k];
            let world = fresh_world(nodes, locals, worlds, self.first_joint_node, joint.node);
            let tail = world.transform_point3(joint.local_tail);
            let center = self.center_world(nodes, locals, worlds, joint.chain).inverse();
            let joint = &mut self.joints[k];
            joint.current = center.transform_point3(tail);
            joint.previous = joint.current;
            joint.world_tail = tail;
        }
        self.started = true;
        self.last_motion = f32::INFINITY;
    }

    fn center_world(&self, nodes: &[Node], locals: &[Trs], worlds: &[Mat4], chain: usize) -> Mat4 {
        match self.chain_centers[chain] {
            Some(center) => fresh_world(nodes, locals, worlds, self.first_joint_node, center),
            None => Mat4::IDENTITY,
        }
    }

    fn place_colliders(&mut self, nodes: &[Node], locals: &[Trs], worlds: &[Mat4]) {
        for (placed, &(node, shape)) in self.placed.iter_mut().zip(&self.colliders) {
            let world = fresh_world(nodes, locals, worlds, self.first_joint_node, node);
            *placed = match shape {
                ColliderShape::Sphere { offset, radius } => {
                    let a = world.transform_point3(offset);
                    PlacedCollider { a, b: a, radius }
                }
                ColliderShape::Capsule { offset, tail, radius } => PlacedCollider {
                    a: world.transform_point3(offset),
                    b: world.transform_point3(tail),
                    radius,
                },
            };
        }
    }

    /// One pass over the joints, parents first: with `step`, the tails move by one step of
    /// that many seconds; either way each joint turns to aim at its tail.
    fn pass(&mut self, nodes: &[Node], step: Option<f32>, locals: &mut [Trs], worlds: &[Mat4]) {
        let mut motion: f32 = 0.0;
        for k in 0..self.joints.len() {
            let joint = self.joints[k];
            let parent_world = nodes[joint.node].parent.map_or(Mat4::IDENTITY, |p| {
                fresh_world(nodes, locals, worlds, self.first_joint_node, p)
            });
            // The joint at its rest turn under its parent as posed now.
            let at_rest = Trs {
                rotation: joint.rest_rotation,
                ..locals[joint.node]
            };
            let rest_frame = parent_world * at_rest.to_mat4();
            let head = rest_frame.w_axis.truncate();
            let rest_tail = rest_frame.transform_point3(joint.local_tail);
            let length = (rest_tail - head).length();
            let center = self.center_world(nodes, locals, worlds, joint.chain);
            let current = center.transform_point3(joint.current);
            let tail = match step {
                Some(dt) => {
                    let previous = center.transform_point3(joint.previous);
                    let s = joint.settings;
                    let inertia = (current - previous) * (1.0 - s.drag);
                    // Equal to parentRotation · restRotation · boneAxis for uniform scales.
                    let stiffness = (rest_tail - head).normalize_or_zero() * (s.stiffness * dt);
                    let gravity = s.gravity_dir * (s.gravity_power * dt);
                    let mut next = at_length(head, current + inertia + stiffness + gravity, length, rest_tail);
                    for &c in &self.chain_colliders[joint.chain] {
                        if let Some(push) = push_out(&self.placed[c], next, s.hit_radius) {
                            next = at_length(head, next + push, length, rest_tail);
                        }
                    }
                    motion = motion.max((next - current).length());
                    let inverse_center = center.inverse();
                    let state = &mut self.joints[k];
                    state.previous = state.current;
                    state.current = inverse_center.transform_point3(next);
                    next
                }
                None => current,
            };
            self.joints[k].world_tail = tail;
            let aim = rest_frame
                .inverse()
                .transform_point3(tail)
                .normalize_or(joint.bone_axis);
            locals[joint.node].rotation =
                (joint.rest_rotation * Quat::from_rotation_arc(joint.bone_axis, aim)).normalize();
        }
        if step.is_some() {
            self.last_motion = motion;
        }
    }
}

/// `point` moved along its direction from `head` to `length` away (to `fallback` when it sits
/// on the head).
fn at_length(head: Vec3, point: Vec3, length: f32, fallback: Vec3) -> Vec3 {
    match (point - head).try_normalize() {
        Some(direction) => head + direction * length,
        None => fallback,
    }
}

/// How far a tail of `hit_radius` at `tail` must move to touch `collider` from outside, or
/// `None` when it does not reach into it.
fn push_out(collider: &PlacedCollider, tail: Vec3, hit_radius: f32) -> Option<Vec3> {
    let segment = collider.b - collider.a;
    let mut delta = tail - collider.a;
    let along = segment.dot(delta);
    let squared = segment.length_squared();
    if along > 0.0 && squared > 0.0 {
        delta -= segment * (along / squared).min(1.0);
    }
    let distance = delta.length() - collider.radius - hit_radius;
    (distance < 0.0).then(|| delta.normalize_or_zero() * -distance)
}

/// Node `node`'s world matrix from `locals`, trusting `worlds` only for nodes above
/// `first_changed` (those no joint moves). Iterative, so a deep file cannot overflow the stack.
fn fresh_world(nodes: &[Node], locals: &[Trs], worlds: &[Mat4], first_changed: usize, node: usize) -> Mat4 {
    if node < first_changed {
        return worlds[node];
    }
    let mut world = locals[node].to_mat4();
    let mut parent = nodes[node].parent;
    while let Some(p) = parent {
        if p < first_changed {
            return worlds[p] * world;
        }
        world = locals[p].to_mat4() * world;
        parent = nodes[p].parent;
    }
    world
}
