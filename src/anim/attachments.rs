//! Markers that follow a joint, to check what a prop or a weapon held by it would do.

use glam::{Mat4, Vec3};

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
        worlds[self.node]
            * Mat4::from_rotation_translation(
                crate::anim::euler_degrees_to_rotation(self.rotation_degrees),
                self.offset,
            )
    }
}
