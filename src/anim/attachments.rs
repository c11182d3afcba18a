//! Markers that follow a joint, to check what a prop or a weapon held by it would do.

use glam::{Mat4, Quat, Vec3};

/// A marker that follows a joint: drawn as axes and a box at `world(joint) · T(offset) · R(rotation)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Attachment {
    pub node: usize,
    pub offset: Vec3,
    /// Euler degrees about the joint's local X, Y, Z.
    pub rotation_degrees: Vec3,
    /// Edge length of the box, in model units.
    pub size: f32,
}

impl Attachment {
    pub fn world(&self, worlds: &[Mat4]) -> Mat4 {
        let r = self.rotation_degrees * (std::f32::consts::PI / 180.0);
        worlds[self.node]
            * Mat4::from_rotation_translation(Quat::from_euler(glam::EulerRot::XYZ, r.x, r.y, r.z), self.offset)
    }
}
