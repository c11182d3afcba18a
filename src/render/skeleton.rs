//! Skeleton overlay geometry: bones from parent joint to child joint, a cross at every joint,
//! and optionally each joint's local axes, as colored lines in world space.

use crate::anim::{Bounds, PoseBuffers};
use crate::render::views::SkeletonOptions;
use crate::rig::Rig;
use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct LineVertex {
    pub position: [f32; 3],
    pub color: [f32; 4],
}

pub const BONE_COLOR: [f32; 4] = [0.55, 0.8, 1.0, 1.0];
pub const SELECTED_COLOR: [f32; 4] = [1.0, 0.85, 0.1, 1.0];
/// The bind-pose skeleton drawn over the current pose.
pub const BIND_COLOR: [f32; 4] = [0.35, 1.0, 0.3, 1.0];

/// A joint's world position error against the file compared with, relative to the rig's size,
/// at which the skeleton overlay draws it red (0 is dark blue, on the heat ramp).
pub const JOINT_ERROR_FULL_SCALE: f32 = 0.02;

/// The skeleton overlay's color for a joint `error` (see [`JOINT_ERROR_FULL_SCALE`]) away from
/// its match; a joint without a match (an infinite error) is red.
pub fn joint_error_color(error: f32) -> [f32; 4] {
    let [r, g, b] = crate::render::views::heat(error / JOINT_ERROR_FULL_SCALE);
    [r, g, b, 1.0]
}
pub const DESCENDANT_COLOR: [f32; 4] = [1.0, 0.45, 0.1, 1.0];
const AXIS_COLORS: [[f32; 4]; 3] = [[0.95, 0.25, 0.2, 1.0], [0.3, 0.9, 0.3, 1.0], [0.25, 0.45, 1.0, 1.0]];

/// Line vertices one joint can need: a bone (2), a cross (6), axes (6).
pub const VERTICES_PER_JOINT: usize = 14;

/// Whether node `node` is `ancestor` or lies below it.
pub fn is_descendant(rig: &Rig, node: usize, ancestor: usize) -> bool {
    let mut current = Some(node);
    while let Some(n) = current {
        if n == ancestor {
            return true;
        }
        current = rig.nodes[n].parent;
    }
    false
}

/// Appends a line from `a` to `b` in `color`.
fn push_line(out: &mut Vec<LineVertex>, a: Vec3, b: Vec3, color: [f32; 4]) {
    out.push(LineVertex {
        position: a.to_array(),
        color,
    });
    out.push(LineVertex {
        position: b.to_array(),
        color,
    });
}

/// Writes the overlay's line vertices for the current pose into `out` (cleared first). `marker`
/// is the size of the joint crosses and axes in world units. With `errors` (per node, while
/// comparing) joints other than the selected one take [`joint_error_color`].
#[allow(clippy::too_many_arguments)]
pub fn skeleton_lines(
    rig: &Rig,
    bones: &[bool],
    worlds: &[Mat4],
    selected: Option<usize>,
    errors: Option<&[f32]>,
    options: &SkeletonOptions,
    marker: f32,
    out: &mut Vec<LineVertex>,
) {
    out.clear();
    for (node, &bone) in bones.iter().enumerate() {
        if !bone {
            continue;
        }
        let error = errors.and_then(|errors| errors.get(node));
        let color = match (selected, error) {
            (Some(s), _) if s == node => SELECTED_COLOR,
            (_, Some(&error)) => joint_error_color(error),
            (Some(s), None) if is_descendant(rig, node, s) => DESCENDANT_COLOR,
            _ => BONE_COLOR,
        };
        let world = worlds[node];
        let position = world.w_axis.truncate();
        let mut line = |a: Vec3, b: Vec3, color: [f32; 4]| push_line(out, a, b, color);
        if let Some(parent) = rig.nodes[node].parent.filter(|&p| bones[p]) {
            line(worlds[parent].w_axis.truncate(), position, color);
        }
        let half = marker * 0.5;
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            line(position - axis * half, position + axis * half, color);
        }
        if options.axes {
            for (k, axis) in [world.x_axis, world.y_axis, world.z_axis].iter().enumerate() {
                let direction = axis.truncate().normalize_or_zero();
                line(position, position + direction * marker * 2.0, AXIS_COLORS[k]);
            }
        }
    }
}

/// Appends to `out` the bones of `worlds` (a pose other than the current one: a ghost, the bind
/// pose) in one `color`, each from its parent joint to the joint, with a small cross of `marker`
/// world units at the joint.
pub fn bone_lines(rig: &Rig, bones: &[bool], worlds: &[Mat4], color: [f32; 4], marker: f32, out: &mut Vec<LineVertex>) {
    let mut line = |a: Vec3, b: Vec3| push_line(out, a, b, color);
    for (node, _) in bones.iter().enumerate().filter(|(_, bone)| **bone) {
        let position = worlds[node].w_axis.truncate();
        if let Some(parent) = rig.nodes[node].parent.filter(|&p| bones[p]) {
            line(worlds[parent].w_axis.truncate(), position);
        }
        let half = marker * 0.25;
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            line(position - axis * half, position + axis * half);
        }
    }
}

/// World positions of every joint in `pose`, for picking and name labels.
pub fn joint_positions<'a>(bones: &'a [bool], pose: &'a PoseBuffers) -> impl Iterator<Item = (usize, Vec3)> + 'a {
    bones
        .iter()
        .enumerate()
        .filter(|(_, j)| **j)
        .map(|(node, _)| (node, pose.worlds[node].w_axis.truncate()))
}

const ATTACHMENT_COLOR: [f32; 4] = [1.0, 0.3, 0.8, 1.0];
const TRAIL_COLOR: [f32; 4] = [1.0, 0.85, 0.3, 0.9];
const MARK_COLOR: [f32; 4] = [0.1, 1.0, 1.0, 1.0];

/// Line vertices an attachment needs: three axes and the twelve edges of its box.
pub const VERTICES_PER_ATTACHMENT: usize = 30;

/// Attachment markers (axes and a box at each attachment's transform) and the root motion trail
/// (on the ground plane), written into `out` after whatever it holds.
pub fn overlay_lines(
    attachments: &[crate::anim::Attachment],
    worlds: &[Mat4],
    trail: &crate::anim::RootTrail,
    marks: &[Vec3],
    mark_size: f32,
    out: &mut Vec<LineVertex>,
) {
    let mut line = |a: Vec3, b: Vec3, color: [f32; 4]| push_line(out, a, b, color);
    for attachment in attachments.iter().filter(|a| a.node < worlds.len()) {
        let m = attachment.world(worlds);
        let h = attachment.size * 0.5;
        let origin = m.transform_point3(Vec3::ZERO);
        for (k, axis) in [Vec3::X, Vec3::Y, Vec3::Z].into_iter().enumerate() {
            line(origin, m.transform_point3(axis * attachment.size), AXIS_COLORS[k]);
        }
        let corner = |i: u32| {
            m.transform_point3(Vec3::new(
                if i & 1 == 0 { -h } else { h },
                if i & 2 == 0 { -h } else { h },
                if i & 4 == 0 { -h } else { h },
            ))
        };
        for i in 0..8u32 {
            for bit in [1, 2, 4] {
                if i & bit == 0 {
                    line(corner(i), corner(i | bit), ATTACHMENT_COLOR);
                }
            }
        }
    }
    for &p in marks {
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            line(p - axis * mark_size, p + axis * mark_size, MARK_COLOR);
        }
    }
    let place = |p: Vec3| if trail.on_ground { Vec3::new(p.x, 0.0, p.z) } else { p };
    for pair in trail.points.windows(2) {
        line(place(pair[0]), place(pair[1]), TRAIL_COLOR);
    }
    if !trail.on_ground {
        // A tick across the path at every frame, so that spacing shows speed.
        for &p in &trail.points {
            line(p - Vec3::Y * mark_size, p + Vec3::Y * mark_size, TRAIL_COLOR);
        }
    }
}

/// Grid lines on the ground plane (y = 0) with a spacing that suits the rig's size, and the
/// three world axes (X red, Y green, Z blue) from the origin.
pub fn grid_lines(bounds: &Bounds) -> Vec<LineVertex> {
    let size = if bounds.is_empty() {
        2.0
    } else {
        bounds.size().max(1e-3)
    };
    let step = 10f32.powf((size / 4.0).log10().floor());
    let half_lines = 10;
    let extent = step * half_lines as f32;
    let centre = if bounds.is_empty() {
        Vec3::ZERO
    } else {
        (bounds.center() / step).round() * step
    };
    let minor = [0.5, 0.5, 0.55, 0.35];
    let mut lines = Vec::new();
    let mut line = |a: Vec3, b: Vec3, color: [f32; 4]| {
        lines.push(LineVertex {
            position: a.to_array(),
            color,
        });
        lines.push(LineVertex {
            position: b.to_array(),
            color,
        });
    };
    for k in -half_lines..=half_lines {
        let offset = k as f32 * step;
        let (x, z) = (centre.x + offset, centre.z + offset);
        line(
            Vec3::new(x, 0.0, centre.z - extent),
            Vec3::new(x, 0.0, centre.z + extent),
            minor,
        );
        line(
            Vec3::new(centre.x - extent, 0.0, z),
            Vec3::new(centre.x + extent, 0.0, z),
            minor,
        );
    }
    let axis = step * 2.0;
    line(Vec3::ZERO, Vec3::X * axis, [0.95, 0.25, 0.2, 1.0]);
    line(Vec3::ZERO, Vec3::Y * axis, [0.3, 0.9, 0.3, 1.0]);
    line(Vec3::ZERO, Vec3::Z * axis, [0.25, 0.45, 1.0, 1.0]);
    lines
}

const SPRING_COLOR: [f32; 4] = [1.0, 0.55, 0.85, 1.0];
const COLLIDER_COLOR: [f32; 4] = [0.95, 0.35, 0.35, 0.8];
/// Segments of each circle a collider is drawn with.
const CIRCLE_SEGMENTS: usize = 16;

/// The spring bones as simulated: each joint to its tail, and each collider as three circles
/// (one per axis plane) around each end, with the capsule's side lines between its ends.
pub fn spring_lines(springs: &crate::anim::spring_bones::SpringSim, worlds: &[Mat4], out: &mut Vec<LineVertex>) {
    for (node, tail) in springs.tails() {
        if let Some(world) = worlds.get(node) {
            push_line(out, world.w_axis.truncate(), tail, SPRING_COLOR);
        }
    }
    for collider in springs.colliders() {
        for center in [collider.a, collider.b] {
            circles(out, center, collider.radius);
        }
        if collider.a != collider.b {
            for offset in [Vec3::X, Vec3::NEG_X, Vec3::Z, Vec3::NEG_Z] {
                let side = offset * collider.radius;
                push_line(out, collider.a + side, collider.b + side, COLLIDER_COLOR);
            }
        }
    }
}

fn circles(out: &mut Vec<LineVertex>, center: Vec3, radius: f32) {
    for (u, v) in [(Vec3::X, Vec3::Y), (Vec3::Y, Vec3::Z), (Vec3::Z, Vec3::X)] {
        let point = |k: usize| {
            let angle = std::f32::consts::TAU * k as f32 / CIRCLE_SEGMENTS as f32;
            center + (u * angle.cos() + v * angle.sin()) * radius
        };
        for k in 0..CIRCLE_SEGMENTS {
            push_line(out, point(k), point(k + 1), COLLIDER_COLOR);
        }
    }
}

#[cfg(test)]
mod spring_tests {
    use super::*;
    use crate::anim::{PoseBuffers, PoseInputs, evaluate_pose};

    #[test]
    fn spring_lines_join_each_joint_to_its_tail_and_ring_each_collider_at_its_radius() {
        let gltf = serde_json::json!({
            "asset": { "version": "2.0" },
            "extensions": { "VRMC_springBone": {
                "specVersion": "1.0",
                "colliders": [{ "node": 0, "shape": { "sphere": { "offset": [0.5, 0.0, 0.0], "radius": 0.2 } } }],
                "colliderGroups": [{ "colliders": [0] }],
                "springs": [{ "joints": [{ "node": 1 }, { "node": 2 }], "colliderGroups": [0] }]
            }},
            "scenes": [{ "nodes": [0] }],
            "nodes": [
                { "name": "root", "translation": [0.0, 1.0, 0.0], "children": [1] },
                { "name": "joint", "children": [2] },
                { "name": "tail", "translation": [0.0, -0.3, 0.0] }
            ]
        });
        let rig = crate::rig::load_slice(gltf.to_string().as_bytes(), None, "spring.gltf").unwrap();
        let mut pose = PoseBuffers::new(&rig);
        let inputs = PoseInputs {
            springs: Some(0.1),
            ..PoseInputs::clip_at(None, 0.0)
        };
        evaluate_pose(&rig, &inputs, &mut pose);
        let mut lines = Vec::new();
        spring_lines(pose.springs.as_ref().unwrap(), &pose.worlds, &mut lines);
        assert_eq!(
            lines.len(),
            2 + 2 * 3 * CIRCLE_SEGMENTS * 2,
            "one joint, a sphere ringed at both (equal) ends"
        );
        let position = |v: &LineVertex| Vec3::from(v.position);
        // The joint's line ends where the tail node is drawn.
        assert!((position(&lines[0]) - Vec3::new(0.0, 1.0, 0.0)).length() < 1e-6);
        assert!((position(&lines[1]) - pose.worlds[2].w_axis.truncate()).length() < 1e-5);
        let center = Vec3::new(0.5, 1.0, 0.0);
        for vertex in &lines[2..] {
            assert!(((position(vertex) - center).length() - 0.2).abs() < 1e-5);
        }
    }
}
