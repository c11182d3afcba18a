//! Rotating and moving a joint from the keyboard as Blender's pose mode does: `R` or `G` starts, the
//! cursor turns or moves the joint, `X` / `Y` / `Z` lock an axis (again: the joint's own axis, a third
//! time: free), digits type an exact amount, Enter confirms and Esc cancels. A plain state machine: keys and
//! cursor positions in, the joint's hand-made pose change out; the window only feeds it.

use super::{parent_space_delta, rotate_override, screen_turn, snap};
use crate::anim::JointOverride;
use glam::{Mat4, Quat, Vec2, Vec3};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModalKind {
    Rotate,
    /// Moves the joint (its translation); for joints that translate (a root, the hips).
    Move,
}

/// The axis a transform is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AxisLock {
    /// Rotate about the view axis; move in the view plane.
    #[default]
    Free,
    /// A world axis (0: X, 1: Y, 2: Z).
    World(usize),
    /// One of the joint's own axes.
    Local(usize),
}

/// The keys a transform listens to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModalKey {
    /// X (0), Y (1) or Z (2).
    Axis(usize),
    Digit(u8),
    /// Flips the sign of the typed amount.
    Minus,
    Point,
    Backspace,
    /// Enter (a left click too).
    Confirm,
    /// Esc (a right click too).
    Cancel,
}

/// What a key did to the transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModalStep {
    Going,
    Confirmed,
    Cancelled,
}

/// Where the joint stands as the transform starts, and how the view looks at it: what turns the cursor's
/// moves into a rotation or a move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointFrame {
    /// The joint's hand-made change before the transform; a cancel gives it back bit for bit.
    pub before: JointOverride,
    /// The joint's world rotation (with `before` in it, scale taken out).
    pub world_rotation: Quat,
    /// Its parent's world matrix (identity for a root): a move is made in the parent's space.
    pub parent_world: Mat4,
    /// Unit vector from the joint towards the camera: the free rotation's axis.
    pub toward_camera: Vec3,
    /// The screen's right and up directions in the world (unit).
    pub screen_right: Vec3,
    pub screen_up: Vec3,
    /// World length of one screen point at the joint's depth.
    pub world_per_point: f32,
    /// The joint on screen (points, y down): the cursor turns about it.
    pub center: Vec2,
}

const AXES: [Vec3; 3] = [Vec3::X, Vec3::Y, Vec3::Z];
const AXIS_NAMES: [&str; 3] = ["X", "Y", "Z"];

#[derive(Debug, Clone, PartialEq)]
pub struct ModalTransform {
    pub kind: ModalKind,
    pub frame: JointFrame,
    lock: AxisLock,
    /// Digits and a point as typed; an exact amount when not empty.
    typed: String,
    negative: bool,
    start_cursor: Vec2,
    last_cursor: Vec2,
    /// The angle the cursor went round the joint on screen, counter-clockwise positive, every turn counted.
    cursor_turn: f32,
    snapping: bool,
}

impl ModalTransform {
    pub fn new(kind: ModalKind, frame: JointFrame, cursor: Vec2) -> ModalTransform {
        ModalTransform {
            kind,
            frame,
            lock: AxisLock::Free,
            typed: String::new(),
            negative: false,
            start_cursor: cursor,
            last_cursor: cursor,
            cursor_turn: 0.0,
            snapping: false,
        }
    }

    pub fn lock(&self) -> AxisLock {
        self.lock
    }

    /// Takes a key; says whether the transform goes on, or ended and how.
    pub fn key(&mut self, key: ModalKey) -> ModalStep {
        match key {
            ModalKey::Axis(axis) => {
                self.lock = match self.lock {
                    AxisLock::World(a) if a == axis => AxisLock::Local(axis),
                    AxisLock::Local(a) if a == axis => AxisLock::Free,
                    _ => AxisLock::World(axis.min(2)),
                }
            }
            ModalKey::Digit(d) => self.typed.push(char::from(b'0' + d.min(9))),
            ModalKey::Point => {
                if !self.typed.contains('.') {
                    self.typed.push('.');
                }
            }
            ModalKey::Minus => self.negative = !self.negative,
            ModalKey::Backspace => {
                if self.typed.pop().is_none() {
                    self.negative = false;
                }
            }
            ModalKey::Confirm => return ModalStep::Confirmed,
            ModalKey::Cancel => return ModalStep::Cancelled,
        }
        ModalStep::Going
    }

    /// Follows the cursor to `cursor` (points, y down); `snap_held` rounds a rotation to 5° steps. Returns
    /// whether anything changed.
    pub fn pointer(&mut self, cursor: Vec2, snap_held: bool) -> bool {
        if cursor == self.last_cursor && snap_held == self.snapping {
            return false;
        }
        self.snapping = snap_held;
        let center = self.frame.center;
        // Right on the joint the angle round it means nothing: wait for the cursor to leave it.
        if cursor.distance(center) > 1e-3 && self.last_cursor.distance(center) > 1e-3 {
            self.cursor_turn += screen_turn(center, self.last_cursor, cursor);
        }
        self.last_cursor = cursor;
        true
    }

    /// The amount typed, signed, if any was: degrees for a rotation, world units for a move.
    pub fn typed_amount(&self) -> Option<f32> {
        if self.typed.is_empty() && !self.negative {
            return None;
        }
        let value = self.typed.parse::<f32>().unwrap_or(0.0);
        Some(if self.negative { -value } else { value })
    }

    /// The locked axis in the world; `None` when free.
    fn locked_axis(&self) -> Option<Vec3> {
        match self.lock {
            AxisLock::Free => None,
            AxisLock::World(axis) => Some(AXES[axis]),
            AxisLock::Local(axis) => Some((self.frame.world_rotation * AXES[axis]).normalize()),
        }
    }

    /// The rotation's world axis and angle (radians, right-handed about the axis).
    pub fn rotation(&self) -> (Vec3, f32) {
        let axis = self.locked_axis().unwrap_or(self.frame.toward_camera);
        if let Some(degrees) = self.typed_amount() {
            return (axis, degrees.to_radians());
        }
        // The joint turns the way the cursor went round it as the user sees it: about an axis pointing
        // away from the camera that is the other way round.
        let facing = if axis.dot(self.frame.toward_camera) < 0.0 {
            -1.0
        } else {
            1.0
        };
        let angle = self.cursor_turn * facing;
        let angle = if self.snapping {
            snap(angle, super::SNAP_STEP_RADIANS)
        } else {
            angle
        };
        (axis, angle)
    }

    /// The move in world units.
    pub fn movement(&self) -> Vec3 {
        let axis = self.locked_axis();
        if let Some(amount) = self.typed_amount() {
            // Typed with no axis: along X, as Blender does.
            return axis.unwrap_or(Vec3::X) * amount;
        }
        let frame = &self.frame;
        let moved = self.last_cursor - self.start_cursor;
        let in_view = (frame.screen_right * moved.x - frame.screen_up * moved.y) * frame.world_per_point;
        match axis {
            Some(axis) => axis * in_view.dot(axis),
            None => in_view,
        }
    }

    /// The joint's hand-made change as the transform stands now.
    pub fn result(&self) -> JointOverride {
        let before = self.frame.before;
        match self.kind {
            ModalKind::Rotate => {
                let (axis, angle) = self.rotation();
                let base = self.frame.world_rotation * before.rotation.conjugate();
                JointOverride {
                    rotation: rotate_override(before.rotation, base, axis, angle),
                    ..before
                }
            }
            ModalKind::Move => JointOverride {
                translation: before.translation + parent_space_delta(&self.frame.parent_world, self.movement()),
                ..before
            },
        }
    }

    /// What the view says of the transform: "Rotate X 45°", "Move Z (local) 0.250".
    pub fn describe(&self) -> String {
        let (verb, unit) = match self.kind {
            ModalKind::Rotate => ("Rotate", "°"),
            ModalKind::Move => ("Move", ""),
        };
        let axis = match self.lock {
            AxisLock::Free => String::new(),
            AxisLock::World(a) => format!(" {}", AXIS_NAMES[a]),
            AxisLock::Local(a) => format!(" {} (local)", AXIS_NAMES[a]),
        };
        let amount = match (self.typed_amount(), self.kind) {
            (Some(_), _) => format!("{}{}", if self.negative { "-" } else { "" }, self.typed),
            (None, ModalKind::Rotate) => format!("{:.1}", self.rotation().1.to_degrees()),
            (None, ModalKind::Move) => {
                let moved = self.movement();
                match self.locked_axis() {
                    Some(axis) => format!("{:.3}", moved.dot(axis)),
                    None => format!("{:.3} {:.3} {:.3}", moved.x, moved.y, moved.z),
                }
            }
        };
        format!("{verb}{axis} {amount}{unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::gizmo::euler_degrees_near;
    use std::f32::consts::FRAC_PI_2;

    fn frame(world_rotation: Quat) -> JointFrame {
        JointFrame {
            before: JointOverride::IDENTITY,
            world_rotation,
            parent_world: Mat4::IDENTITY,
            toward_camera: Vec3::Z,
            screen_right: Vec3::X,
            screen_up: Vec3::Y,
            world_per_point: 0.01,
            center: Vec2::new(100.0, 100.0),
        }
    }

    fn run(transform: &mut ModalTransform, keys: &[ModalKey]) -> ModalStep {
        let mut step = ModalStep::Going;
        for &key in keys {
            step = transform.key(key);
        }
        step
    }

    fn same_rotation(a: Quat, b: Quat) -> bool {
        a.dot(b).abs() > 1.0 - 1e-6
    }

    use ModalKey::{Axis, Backspace, Cancel, Confirm, Digit, Minus, Point};

    #[test]
    fn r_x_90_enter_turns_a_joint_a_quarter_about_world_x() {
        let mut rotate = ModalTransform::new(ModalKind::Rotate, frame(Quat::IDENTITY), Vec2::new(150.0, 100.0));
        assert_eq!(
            run(&mut rotate, &[Axis(0), Digit(9), Digit(0), Confirm]),
            ModalStep::Confirmed
        );
        let result = rotate.result();
        assert!(same_rotation(result.rotation, Quat::from_rotation_x(FRAC_PI_2)));
        assert!((euler_degrees_near(result.rotation, Vec3::ZERO) - Vec3::new(90.0, 0.0, 0.0)).length() < 1e-3);
        assert_eq!(rotate.describe(), "Rotate X 90°");
        assert_eq!((result.translation, result.scale), (Vec3::ZERO, 1.0));
    }

    #[test]
    fn a_world_axis_is_turned_about_in_the_world_whatever_the_joints_own_axes() {
        // The joint's world rotation is a quarter about Z (its parent's, say). A quarter about world X then
        // is, in the frame the override acts in, a quarter about Z⁻¹·X = −Y.
        let quarter_z = Quat::from_rotation_z(FRAC_PI_2);
        let mut rotate = ModalTransform::new(ModalKind::Rotate, frame(quarter_z), Vec2::new(150.0, 100.0));
        run(&mut rotate, &[Axis(0), Digit(9), Digit(0)]);
        let result = rotate.result();
        assert!(same_rotation(result.rotation, Quat::from_rotation_y(-FRAC_PI_2)));
        // The joint's world rotation becomes a quarter about X after the one about Z.
        let world = quarter_z * result.rotation;
        assert!(same_rotation(world, Quat::from_rotation_x(FRAC_PI_2) * quarter_z));

        // X again: the joint's own X (world Y here), which in its own frame is plain X.
        run(&mut rotate, &[Axis(0)]);
        assert_eq!(rotate.lock(), AxisLock::Local(0));
        assert_eq!(rotate.describe(), "Rotate X (local) 90°");
        assert!(same_rotation(
            rotate.result().rotation,
            Quat::from_rotation_x(FRAC_PI_2)
        ));
        // A third time: free again (the view axis), and another axis locks its world axis at once.
        run(&mut rotate, &[Axis(0)]);
        assert_eq!(rotate.lock(), AxisLock::Free);
        run(&mut rotate, &[Axis(1), Axis(2)]);
        assert_eq!(rotate.lock(), AxisLock::World(2));
    }

    #[test]
    fn typing_takes_a_sign_a_point_and_backspace() {
        let mut rotate = ModalTransform::new(ModalKind::Rotate, frame(Quat::IDENTITY), Vec2::ZERO);
        run(
            &mut rotate,
            &[Axis(2), Minus, Digit(4), Digit(5), Point, Digit(5), Point],
        );
        assert_eq!(rotate.typed_amount(), Some(-45.5));
        assert_eq!(rotate.describe(), "Rotate Z -45.5°");
        run(&mut rotate, &[Backspace, Backspace]);
        assert_eq!(rotate.typed_amount(), Some(-45.0));
        assert!(same_rotation(
            rotate.result().rotation,
            Quat::from_rotation_z(-45f32.to_radians())
        ));
        run(&mut rotate, &[Backspace, Backspace, Backspace]);
        assert_eq!(rotate.typed_amount(), None, "all typed, then the sign, taken back");
    }

    #[test]
    fn the_cursor_going_round_the_joint_turns_it_the_same_way_on_screen() {
        // The cursor starts right of the joint and goes up to above it: a quarter turn counter-clockwise
        // as seen. Free, the joint turns about the axis towards the camera (+Z): +90° about Z.
        let mut rotate = ModalTransform::new(ModalKind::Rotate, frame(Quat::IDENTITY), Vec2::new(150.0, 100.0));
        rotate.pointer(Vec2::new(135.0, 65.0), false);
        rotate.pointer(Vec2::new(100.0, 50.0), false);
        assert!(same_rotation(
            rotate.result().rotation,
            Quat::from_rotation_z(FRAC_PI_2)
        ));
        // On past the left and down to below: three quarters, every turn counted.
        rotate.pointer(Vec2::new(50.0, 100.0), false);
        rotate.pointer(Vec2::new(100.0, 150.0), false);
        assert!((rotate.rotation().1 - 3.0 * FRAC_PI_2).abs() < 1e-5);

        // Seen from behind (the camera on −Z) the same cursor path about a locked world Z is −90°: the
        // joint still turns counter-clockwise as the user sees it.
        let behind = JointFrame {
            toward_camera: Vec3::NEG_Z,
            ..frame(Quat::IDENTITY)
        };
        let mut rotate = ModalTransform::new(ModalKind::Rotate, behind, Vec2::new(150.0, 100.0));
        rotate.key(Axis(2));
        rotate.pointer(Vec2::new(100.0, 50.0), false);
        assert!(same_rotation(
            rotate.result().rotation,
            Quat::from_rotation_z(-FRAC_PI_2)
        ));
    }

    #[test]
    fn ctrl_snaps_the_cursors_angle_to_five_degrees() {
        let mut rotate = ModalTransform::new(ModalKind::Rotate, frame(Quat::IDENTITY), Vec2::new(200.0, 100.0));
        let at = |degrees: f32| {
            let a = degrees.to_radians();
            Vec2::new(100.0 + 100.0 * a.cos(), 100.0 - 100.0 * a.sin())
        };
        rotate.pointer(at(47.0), false);
        assert!((rotate.rotation().1.to_degrees() - 47.0).abs() < 1e-3);
        rotate.pointer(at(47.0), true);
        assert!((rotate.rotation().1.to_degrees() - 45.0).abs() < 1e-3);
        assert_eq!(rotate.describe(), "Rotate 45.0°");
    }

    #[test]
    fn nothing_turned_is_the_change_before_and_esc_cancels() {
        let before = JointOverride {
            rotation: crate::anim::euler_degrees_to_rotation(Vec3::new(12.3, -45.6, 78.9)),
            translation: Vec3::new(0.1, 0.2, 0.3),
            scale: 1.5,
        };
        let start = JointFrame {
            before,
            ..frame(Quat::from_rotation_y(0.3))
        };
        let mut rotate = ModalTransform::new(ModalKind::Rotate, start, Vec2::new(150.0, 100.0));
        rotate.pointer(Vec2::new(120.0, 40.0), false);
        assert_ne!(rotate.result(), before);
        // With nothing turned the result is the change before, bit for bit, whatever the cursor did.
        let untouched = ModalTransform::new(ModalKind::Rotate, start, Vec2::new(150.0, 100.0));
        assert_eq!(untouched.result().translation, before.translation);
        assert!(same_rotation(untouched.result().rotation, before.rotation));
        assert_eq!(rotate.key(Cancel), ModalStep::Cancelled);
    }

    #[test]
    fn g_moves_in_the_view_plane_in_the_parents_space() {
        // The parent is scaled by 0.5: a world move of 0.1 is 0.2 in its space.
        let start = JointFrame {
            parent_world: Mat4::from_scale(Vec3::splat(0.5)),
            ..frame(Quat::IDENTITY)
        };
        let mut grab = ModalTransform::new(ModalKind::Move, start, Vec2::new(150.0, 100.0));
        // 10 points right and 5 up at 0.01 a point: (0.1, 0.05, 0) in the world.
        grab.pointer(Vec2::new(160.0, 95.0), false);
        assert!((grab.result().translation - Vec3::new(0.2, 0.1, 0.0)).length() < 1e-6);
        // Held to Y: only the upward part.
        grab.key(Axis(1));
        assert!((grab.result().translation - Vec3::new(0.0, 0.1, 0.0)).length() < 1e-6);
        assert_eq!(grab.describe(), "Move Y 0.050");
        // Typed: 2 along Z is 4 in the parent's space.
        run(&mut grab, &[Axis(2), Digit(2)]);
        assert!((grab.result().translation - Vec3::new(0.0, 0.0, 4.0)).length() < 1e-6);
        assert_eq!(grab.result().rotation, Quat::IDENTITY, "a move leaves the rotation");
    }
}
