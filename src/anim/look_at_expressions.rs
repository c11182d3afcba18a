//! Look-at of the expression type (VRM `lookAt.type` `expression`, VRM 0.x `BlendShape`): an
//! avatar without eye bones looks with its `lookUp`, `lookDown`, `lookLeft` and `lookRight`
//! expressions. They take the turn the head leaves: none when the head is on the target.

use crate::rig::{MeshInstance, VrmExpression};
use glam::{Mat4, Vec3};

/// Degrees of gaze at which a look expression is at its full weight: VRM 1.0's default range
/// map (`inputMaxValue` 90, `outputScale` 1 for expressions).
pub const LOOK_RANGE_DEG: f32 = 90.0;

/// The look expressions' names, in the order of [`look_expression_weights`]'s result.
pub const LOOK_EXPRESSIONS: [&str; 4] = ["lookUp", "lookDown", "lookLeft", "lookRight"];

/// Where `target` is seen from a head at `head_world` whose forward and up axes in its own
/// space are `forward` and `up`, as (yaw, pitch) in degrees: yaw towards the head's left
/// (`up × forward`) positive, pitch up positive; (0, 0) when the target is at the head.
pub fn gaze_angles(head_world: &Mat4, forward: Vec3, up: Vec3, target: Vec3) -> (f32, f32) {
    let seen = head_world.inverse().transform_point3(target);
    let left = up.cross(forward);
    let (ahead, aside, above) = (seen.dot(forward), seen.dot(left), seen.dot(up));
    if seen.length_squared() <= f32::EPSILON {
        return (0.0, 0.0);
    }
    let yaw = aside.atan2(ahead).to_degrees();
    let pitch = above.atan2(ahead.hypot(aside)).to_degrees();
    (yaw, pitch)
}

/// The weights of [`LOOK_EXPRESSIONS`] for a gaze of `yaw` and `pitch` degrees: each
/// direction's angle over [`LOOK_RANGE_DEG`], clamped to [0, 1]; the opposite one is 0.
pub fn look_expression_weights(yaw: f32, pitch: f32) -> [f32; 4] {
    let over_range = |degrees: f32| (degrees / LOOK_RANGE_DEG).clamp(0.0, 1.0);
    [over_range(pitch), over_range(-pitch), over_range(yaw), over_range(-yaw)]
}

/// Adds the binds of the avatar's look expressions at `weights` (see
/// [`look_expression_weights`]) to `morph_weights` (per mesh instance, per target), each
/// target clamped to [0, 1]. Allocates nothing.
pub fn add_look_expressions(
    expressions: &[VrmExpression],
    weights: [f32; 4],
    instances: &[MeshInstance],
    morph_weights: &mut [Vec<f32>],
) {
    for (name, weight) in LOOK_EXPRESSIONS.iter().zip(weights) {
        let Some(expression) = expressions.iter().find(|e| e.name == *name) else {
            continue;
        };
        if weight <= 0.0 {
            continue;
        }
        for bind in &expression.binds {
            for (instance, placed) in instances.iter().enumerate() {
                if placed.node != bind.node {
                    continue;
                }
                if let Some(target) = morph_weights.get_mut(instance).and_then(|t| t.get_mut(bind.target)) {
                    *target = (*target + weight * bind.weight).clamp(0.0, 1.0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::MorphBind;
    use glam::Quat;

    /// A head at (0, 1.5, 0) turned 90° about +Y (its forward +Z now world +X): a target at
    /// (1, 2.5, -1) is 1 ahead, 1 to its left (world −Z: it faces +X) and 1 above it.
    #[test]
    fn gaze_angles_are_measured_in_the_heads_frame() {
        let head = Mat4::from_rotation_translation(Quat::from_rotation_y(90f32.to_radians()), Vec3::new(0.0, 1.5, 0.0));
        let (yaw, pitch) = gaze_angles(&head, Vec3::Z, Vec3::Y, Vec3::new(1.0, 2.5, -1.0));
        assert!((yaw - 45.0).abs() < 1e-4, "{yaw}");
        // atan(1 / √2) = 35.264°.
        assert!((pitch - 35.26439).abs() < 1e-3, "{pitch}");
        let (yaw, pitch) = gaze_angles(&head, Vec3::Z, Vec3::Y, Vec3::new(5.0, 1.5, 0.0));
        assert!(yaw.abs() < 1e-4 && pitch.abs() < 1e-4, "{yaw}, {pitch}");
        // A quarter range right and a half range down.
        assert_eq!(look_expression_weights(-22.5, -45.0), [0.0, 0.5, 0.0, 0.25]);
        assert_eq!(look_expression_weights(180.0, 100.0), [1.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn look_expressions_add_to_the_weights_their_binds_move() {
        let bind = |target, weight| MorphBind {
            node: 2,
            target,
            weight,
        };
        let expressions = [
            VrmExpression {
                name: "lookLeft".into(),
                binds: vec![bind(0, 1.0), bind(1, 0.5)],
            },
            VrmExpression {
                name: "lookDown".into(),
                binds: vec![bind(1, 1.0)],
            },
            VrmExpression {
                name: "happy".into(),
                binds: vec![bind(2, 1.0)],
            },
        ];
        let instances = [MeshInstance {
            node: 2,
            mesh: 0,
            skin: None,
        }];
        let mut weights = vec![vec![0.25, 0.5, 0.5]];
        add_look_expressions(&expressions, [0.0, 0.75, 0.5, 0.0], &instances, &mut weights);
        // Target 0: 0.25 + 0.5; target 1: 0.5 + 0.5 × 0.5 + 0.75, clamped; target 2 untouched.
        assert_eq!(weights[0], [0.75, 1.0, 0.5]);
    }
}
