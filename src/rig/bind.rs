//! Where a skin's bind pose puts its joints and its mesh: the measures the rig report's bind
//! checks and the rest pose check of `audit --motion` share.

use crate::rig::Skin;
use glam::{Mat3, Mat4, Quat, Vec4Swizzles};

/// Where `skin` places its bound mesh when the nodes are at `worlds`. glTF skins in world space
/// (`world(joint) · inverseBind`, the mesh node's own transform ignored), so the bind pose is
/// where each of those products is the identity; but exporters that bind a mesh under a scaled
/// or turned armature (Mixamo rigs in centimetres) write inverse binds relative to the node that
/// draws the mesh, and every product is then that node's world matrix: the mesh is drawn where
/// that node puts it, undeformed. Of the two placements, the one under which the joints are
/// nearer their bind places.
pub fn bind_placement(skin: &Skin, worlds: &[Mat4], mesh_node: Option<usize>) -> Mat4 {
    let apart = |placement: &Mat4| -> f32 {
        let joints = skin.joints.iter().zip(&skin.inverse_binds);
        joints
            .filter_map(|(&j, ibm)| Some(bind_offset(worlds.get(j)?, ibm, placement).0))
            .sum()
    };
    match mesh_node.and_then(|node| worlds.get(node)) {
        Some(node) if node.is_finite() && apart(node) < apart(&Mat4::IDENTITY) => *node,
        _ => Mat4::IDENTITY,
    }
}

/// How far a joint whose world matrix is `world` is from the place its inverse bind matrix
/// undoes, with the bound mesh placed by `placement` (the identity: in world space): the
/// distance between the two origins (world units) and the angle of the rotation left in
/// `placement⁻¹ · world · inverseBind` (degrees).
pub fn bind_offset(world: &Mat4, inverse_bind: &Mat4, placement: &Mat4) -> (f32, f32) {
    let bind = *placement * inverse_bind.inverse();
    let distance = world.w_axis.xyz().distance(bind.w_axis.xyz());
    (
        distance,
        rotation_degrees(&(placement.inverse() * *world * *inverse_bind)),
    )
}

/// Angle of the rotation in a matrix's 3×3 part (scale removed), in degrees.
pub fn rotation_degrees(m: &Mat4) -> f32 {
    let (Some(x), Some(y), Some(z)) = (
        m.x_axis.xyz().try_normalize(),
        m.y_axis.xyz().try_normalize(),
        m.z_axis.xyz().try_normalize(),
    ) else {
        return 0.0;
    };
    let rotation = Quat::from_mat3(&Mat3::from_cols(x, y, z));
    if !rotation.is_finite() {
        return 0.0;
    }
    (2.0 * rotation.w.abs().min(1.0).acos()).to_degrees()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn rotation_angle_ignores_scale() {
        let m = Mat4::from_scale_rotation_translation(Vec3::new(3.0, 1.0, 2.0), Quat::from_rotation_y(0.5), Vec3::ZERO);
        assert!((rotation_degrees(&m) - 0.5f32.to_degrees()).abs() < 1e-3);
        assert_eq!(rotation_degrees(&Mat4::IDENTITY), 0.0);
    }
}
