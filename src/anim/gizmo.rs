//! The math of posing by hand with the mouse: the rotation gizmo's rings (hit, pick, drag, snap), the axes
//! they turn about, and picking a bone drawn on screen. Plain functions of rays and points; the viewer turns
//! the cursor into a ray and the angle into a joint rotation.

use glam::{Mat3, Mat4, Quat, Vec2, Vec3};

pub mod modal;

/// `|cos|` between a ray and a ring's axis under which the ring is seen (nearly) edge-on: its plane is hit
/// far away or not at all, and small cursor moves swing the hit wildly, so the ring is treated as the line
/// it looks like instead (about 6°).
pub const EDGE_ON_COSINE: f32 = 0.1;

/// Radius of the view ring relative to the axis rings: drawn just outside them so it can be grabbed.
pub const VIEW_RING_SCALE: f32 = 1.2;

/// Snapping step while Ctrl is held.
pub const SNAP_STEP_RADIANS: f32 = 5.0 * std::f32::consts::PI / 180.0;

/// A half-line; `direction` should be unit length so that hit distances are distances.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ray {
    pub origin: Vec3,
    pub direction: Vec3,
}

/// A circle the user drags to rotate about `axis` (unit).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ring {
    pub center: Vec3,
    pub axis: Vec3,
    pub radius: f32,
}

/// Two unit vectors spanning the plane perpendicular to `axis` (unit), with `u × v = axis`; angles on a ring
/// are measured from `u` towards `v`. The seed is world X unless the axis is close to it, so a ring about Z
/// measures from X towards Y, a ring about X from Y towards Z.
pub fn ring_basis(axis: Vec3) -> (Vec3, Vec3) {
    let seed = if axis.x.abs() < 0.9 { Vec3::X } else { Vec3::Y };
    let u = (seed - axis * seed.dot(axis)).normalize();
    (u, axis.cross(u))
}

fn angle_in_plane(axis: Vec3, offset: Vec3) -> f32 {
    let (u, v) = ring_basis(axis);
    offset.dot(v).atan2(offset.dot(u))
}

/// Distance along the ray to where it crosses the plane, if it does so in front of its origin.
pub fn ray_plane_hit(ray_origin: Vec3, ray_dir: Vec3, plane_point: Vec3, plane_normal: Vec3) -> Option<f32> {
    let approach = ray_dir.dot(plane_normal);
    if approach.abs() <= f32::EPSILON {
        return None;
    }
    let distance = (plane_point - ray_origin).dot(plane_normal) / approach;
    (distance >= 0.0).then_some(distance)
}

/// Where the ray grabs the ring, if it passes within `tolerance` of it: the distance along the ray and the
/// angle on the ring (see [`ring_basis`]).
///
/// Seen from the front, "within tolerance" means the plane hit is within `tolerance` of the circle. Seen
/// edge-on the ring is a line on screen: the ray, flattened into the ring's plane, must cross the circle
/// (or pass within tolerance of it) at a point the ray passes within `tolerance` of, and the nearest such
/// crossing wins.
pub fn ray_ring_hit(
    ray_origin: Vec3,
    ray_dir: Vec3,
    ring_center: Vec3,
    ring_axis: Vec3,
    radius: f32,
    tolerance: f32,
) -> Option<(f32, f32)> {
    if ray_dir.dot(ring_axis).abs() >= EDGE_ON_COSINE {
        let distance = ray_plane_hit(ray_origin, ray_dir, ring_center, ring_axis)?;
        let offset = ray_origin + ray_dir * distance - ring_center;
        return ((offset.length() - radius).abs() <= tolerance).then(|| (distance, angle_in_plane(ring_axis, offset)));
    }
    let (distance, point, miss) = edge_on_nearest(ray_origin, ray_dir, ring_center, ring_axis, radius)?;
    (miss <= tolerance).then(|| (distance, angle_in_plane(ring_axis, point - ring_center)))
}

/// For a ray (nearly) in the ring's plane: the nearest point where the flattened ray crosses the circle, or
/// where it comes closest to it when it passes outside. Returns the distance along the ray, the point on
/// the circle, and how far the ray passes from it there.
fn edge_on_nearest(
    ray_origin: Vec3,
    ray_dir: Vec3,
    ring_center: Vec3,
    ring_axis: Vec3,
    radius: f32,
) -> Option<(f32, Vec3, f32)> {
    // The ray's point at s is o + s·d; in the plane it is p + s·q, and it stands h0 + s·h1 off the plane.
    let relative_origin = ray_origin - ring_center;
    let height_at_origin = relative_origin.dot(ring_axis);
    let height_slope = ray_dir.dot(ring_axis);
    let flat_origin = relative_origin - ring_axis * height_at_origin;
    let flat_dir = ray_dir - ring_axis * height_slope;
    let a = flat_dir.length_squared();
    if a <= f32::EPSILON {
        return None;
    }
    let half_b = flat_origin.dot(flat_dir);
    let c = flat_origin.length_squared() - radius * radius;
    let quarter_discriminant = half_b * half_b - a * c;
    let (distance, radial_miss) = if quarter_discriminant >= 0.0 {
        let root = quarter_discriminant.sqrt();
        let near = (-half_b - root) / a;
        let far = (-half_b + root) / a;
        let distance = if near >= 0.0 { near } else { far };
        (distance, 0.0)
    } else {
        // Passing outside: the closest approach of the flattened line to the centre.
        let distance = -half_b / a;
        (distance, (flat_origin + flat_dir * distance).length() - radius)
    };
    if distance < 0.0 {
        return None;
    }
    let flat_point = flat_origin + flat_dir * distance;
    let on_circle = flat_point.try_normalize()? * radius;
    let height = height_at_origin + height_slope * distance;
    Some((distance, ring_center + on_circle, radial_miss.hypot(height)))
}

impl Ring {
    pub fn hit(&self, ray: Ray, tolerance: f32) -> Option<(f32, f32)> {
        ray_ring_hit(
            ray.origin,
            ray.direction,
            self.center,
            self.axis,
            self.radius,
            tolerance,
        )
    }
}

/// The rings of a rotation gizmo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingKind {
    X,
    Y,
    Z,
    /// About the view direction, slightly larger than the others.
    View,
}

impl RingKind {
    pub const ALL: [RingKind; 4] = [RingKind::X, RingKind::Y, RingKind::Z, RingKind::View];
}

/// A rotation gizmo around a joint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RotationGizmo {
    pub center: Vec3,
    pub radius: f32,
    /// The X, Y and Z rings' axes, from [`axis_frame`].
    pub axes: [Vec3; 3],
    /// Unit direction the camera looks along (towards the gizmo).
    pub view_direction: Vec3,
}

impl RotationGizmo {
    pub fn ring(&self, kind: RingKind) -> Ring {
        let (axis, radius) = match kind {
            RingKind::X => (self.axes[0], self.radius),
            RingKind::Y => (self.axes[1], self.radius),
            RingKind::Z => (self.axes[2], self.radius),
            // Facing the camera, so dragging it counter-clockwise on screen is a positive angle.
            RingKind::View => (-self.view_direction, self.radius * VIEW_RING_SCALE),
        };
        Ring {
            center: self.center,
            axis,
            radius,
        }
    }
}

/// The ring the ray grabs, nearest along the ray when it passes within `tolerance` of several, with the
/// angle it grabs it at.
pub fn pick_ring(gizmo: &RotationGizmo, ray: Ray, tolerance: f32) -> Option<(RingKind, f32)> {
    let mut best: Option<(RingKind, f32, f32)> = None;
    for kind in RingKind::ALL {
        if let Some((distance, angle)) = gizmo.ring(kind).hit(ray, tolerance)
            && best.is_none_or(|(_, best_distance, _)| distance < best_distance)
        {
            best = Some((kind, distance, angle));
        }
    }
    best.map(|(kind, _, angle)| (kind, angle))
}

/// The signed angle (right-handed about the ring's axis) a drag has turned the ring through, from where
/// `start_ray` grabbed it to where `current_ray` is now.
///
/// Normally both rays hit the ring's plane and the angle is the one between the hits, seen from the centre;
/// it is the shortest one (within ±π), so a caller accumulating a drag of several turns adds frame-to-frame
/// deltas. When the start ray sees the ring edge-on (see [`EDGE_ON_COSINE`]) the plane is useless: the cursor's
/// movement, measured in a plane facing the camera through the grabbed point, is projected onto the ring's
/// tangent there and divided by the radius — the ring turns as if the cursor dragged its rim. The mode is
/// chosen by the start ray, so one drag never jumps between the two.
pub fn drag_angle(ring: &Ring, start_ray: Ray, current_ray: Ray) -> f32 {
    if start_ray.direction.dot(ring.axis).abs() >= EDGE_ON_COSINE {
        let hit = |ray: Ray| {
            ray_plane_hit(ray.origin, ray.direction, ring.center, ring.axis)
                .map(|distance| ray.origin + ray.direction * distance - ring.center)
        };
        if let (Some(from), Some(to)) = (hit(start_ray), hit(current_ray)) {
            return ring.axis.dot(from.cross(to)).atan2(from.dot(to));
        }
        // The current ray turned away from the plane: no angle to measure yet.
        return 0.0;
    }
    let Some((_, grabbed, _)) = edge_on_nearest(
        start_ray.origin,
        start_ray.direction,
        ring.center,
        ring.axis,
        ring.radius,
    ) else {
        return 0.0;
    };
    let tangent = ring.axis.cross(grabbed - ring.center).normalize_or_zero();
    let screen_normal = start_ray.direction;
    let on_screen_plane = |ray: Ray| {
        ray_plane_hit(ray.origin, ray.direction, grabbed, screen_normal)
            .map(|distance| ray.origin + ray.direction * distance)
    };
    match (on_screen_plane(start_ray), on_screen_plane(current_ray)) {
        (Some(from), Some(to)) if ring.radius > 0.0 => (to - from).dot(tangent) / ring.radius,
        _ => 0.0,
    }
}

/// `angle` rounded to the nearest multiple of `step` (halves away from zero); unchanged when `step` is not
/// positive.
pub fn snap(angle: f32, step: f32) -> f32 {
    if step > 0.0 {
        (angle / step).round() * step
    } else {
        angle
    }
}

/// The space a gizmo's axes are drawn and turned in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GizmoSpace {
    /// The joint's own axes.
    #[default]
    Local,
    /// The parent's axes: what the joint's local rotation is expressed in.
    Parent,
    World,
}

/// The world-space X, Y and Z axes of the gizmo in `space`, from the joint's and its parent's world rotations.
pub fn axis_frame(space: GizmoSpace, joint_world: Quat, parent_world: Quat) -> [Vec3; 3] {
    let rotation = match space {
        GizmoSpace::Local => joint_world,
        GizmoSpace::Parent => parent_world,
        GizmoSpace::World => Quat::IDENTITY,
    };
    [rotation * Vec3::X, rotation * Vec3::Y, rotation * Vec3::Z]
}

/// Distance on screen from `point` to the segment from `a` to `b`.
pub fn distance_to_segment_on_screen(point: Vec2, a: Vec2, b: Vec2) -> f32 {
    let along = b - a;
    let length_squared = along.length_squared();
    let t = if length_squared > 0.0 {
        ((point - a).dot(along) / length_squared).clamp(0.0, 1.0)
    } else {
        0.0
    };
    point.distance(a + along * t)
}

/// The bone under the cursor: among bones drawn within `radius` of it, the one nearest the camera (smallest
/// `depth`), the one nearest the cursor among equally deep ones. `bones_screen` holds each bone's screen
/// end points and its depth.
pub fn pick_bone(bones_screen: &[(Vec2, Vec2, f32)], cursor: Vec2, radius: f32) -> Option<usize> {
    let mut best: Option<(usize, f32, f32)> = None;
    for (index, &(a, b, depth)) in bones_screen.iter().enumerate() {
        let distance = distance_to_segment_on_screen(cursor, a, b);
        if distance > radius {
            continue;
        }
        let nearer = best.is_none_or(|(_, best_depth, best_distance)| {
            depth < best_depth || (depth == best_depth && distance < best_distance)
        });
        if nearer {
            best = Some((index, depth, distance));
        }
    }
    best.map(|(index, _, _)| index)
}

/// A ring being dragged: the angle turned so far, over as many turns as the cursor goes round.
///
/// [`drag_angle`] measures from where the drag started and so folds a drag past half a turn back into ±π;
/// this adds the frame-to-frame turns instead. A drag that started with the ring edge-on keeps measuring
/// along the rim's tangent from the start, which never folds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RingDrag {
    pub ring: Ring,
    start_ray: Ray,
    last_ray: Ray,
    turned: f32,
}

impl RingDrag {
    pub fn new(ring: Ring, start_ray: Ray) -> RingDrag {
        RingDrag {
            ring,
            start_ray,
            last_ray: start_ray,
            turned: 0.0,
        }
    }

    /// Follows the cursor to `ray`; returns the whole angle turned since the start (radians, about the
    /// ring's axis).
    pub fn update(&mut self, ray: Ray) -> f32 {
        if self.start_ray.direction.dot(self.ring.axis).abs() < EDGE_ON_COSINE {
            self.turned = drag_angle(&self.ring, self.start_ray, ray);
        } else if let Some(step) = plane_turn(&self.ring, self.last_ray, ray) {
            // A ray that misses the plane (turned away from it) leaves the last one to measure from.
            self.turned += step;
            self.last_ray = ray;
        }
        self.turned
    }

    pub fn turned(&self) -> f32 {
        self.turned
    }
}

/// The shortest signed angle about the ring's axis between where two rays hit its plane, seen from its centre.
fn plane_turn(ring: &Ring, from: Ray, to: Ray) -> Option<f32> {
    let hit = |ray: Ray| {
        ray_plane_hit(ray.origin, ray.direction, ring.center, ring.axis)
            .map(|distance| ray.origin + ray.direction * distance - ring.center)
    };
    let (from, to) = (hit(from)?, hit(to)?);
    Some(ring.axis.dot(from.cross(to)).atan2(from.dot(to)))
}

/// The angle the cursor went round `center` from `from` to `to`, in screen coordinates whose y grows
/// downwards: positive when it went counter-clockwise as the user sees it, within ±π.
pub fn screen_turn(center: Vec2, from: Vec2, to: Vec2) -> f32 {
    let (a, b) = (from - center, to - center);
    // y down flips the handedness: what the perp-dot calls clockwise the eye sees counter-clockwise.
    -a.perp_dot(b).atan2(a.dot(b))
}

/// The rotation of a world matrix with its scale taken out (an armature scaled by 0.01 is common); identity
/// for a degenerate matrix.
pub fn world_rotation(world: &Mat4) -> Quat {
    let m = Mat3::from_mat4(*world);
    match (
        m.x_axis.try_normalize(),
        m.y_axis.try_normalize(),
        m.z_axis.try_normalize(),
    ) {
        (Some(x), Some(y), Some(z)) => Quat::from_mat3(&Mat3::from_cols(x, y, z)).normalize(),
        _ => Quat::IDENTITY,
    }
}

/// A joint's hand-made rotation `override_rotation` (applied after its sampled local rotation, see
/// [`crate::anim::JointOverride::apply`]) changed so that the joint turns by `angle` about `world_axis`
/// (unit), its children with it. `base` is the world rotation the override sits under: the joint's world
/// rotation with the override taken out (`world · override⁻¹`).
///
/// Turning the world rotation `base · o` by `q` on the left is `base · (base⁻¹ q base) · o`, and
/// `base⁻¹ q base` is the same angle about `base⁻¹ axis`.
pub fn rotate_override(override_rotation: Quat, base: Quat, world_axis: Vec3, angle: f32) -> Quat {
    let axis = (base.conjugate() * world_axis).normalize_or_zero();
    if axis == Vec3::ZERO {
        return override_rotation;
    }
    (Quat::from_axis_angle(axis, angle) * override_rotation).normalize()
}

/// The X-then-Y-then-Z Euler angles (degrees, each within ±180°) of `rotation`, of its two sets the one
/// nearer `near` (the angles shown the frame before).
///
/// Every rotation has two such sets, (x, y, z) and (x + 180°, 180° − y, z + 180°); a decomposition that
/// always keeps y within ±90° swaps from one to the other as y passes 90°, and x and z jump half a turn
/// there. Keeping to the set nearer the last one keeps the read-outs (and the sliders that hold them)
/// continuous through it.
pub fn euler_degrees_near(rotation: Quat, near: Vec3) -> Vec3 {
    let (x, y, z) = rotation.to_euler(glam::EulerRot::XYZ);
    let first = Vec3::new(x, y, z).map(f32::to_degrees);
    let second = Vec3::new(first.x + 180.0, 180.0 - first.y, first.z + 180.0);
    let wrap = |v: Vec3| v.map(wrap_degrees);
    let (first, second) = (wrap(first), wrap(second));
    let distance = |v: Vec3| {
        let d = v - near;
        d.map(|c| wrap_degrees(c).abs()).element_sum()
    };
    if distance(second) < distance(first) {
        second
    } else {
        first
    }
}

/// `degrees` brought within (−180°, 180°].
pub fn wrap_degrees(degrees: f32) -> f32 {
    let wrapped = (degrees + 180.0).rem_euclid(360.0) - 180.0;
    if wrapped == -180.0 { 180.0 } else { wrapped }
}

/// A world-space move of a joint as the change of its local translation: in its parent's space, whose world
/// matrix is `parent_world` (identity for a root), scale included.
pub fn parent_space_delta(parent_world: &Mat4, world_delta: Vec3) -> Vec3 {
    let inverse = parent_world.inverse();
    if !inverse.is_finite() {
        return world_delta;
    }
    inverse.transform_vector3(world_delta)
}

/// How long one screen point is in world units at `distance` from a camera with vertical field of view
/// `fov_y` drawing `height` points tall.
pub fn world_per_point(distance: f32, fov_y: f32, height: f32) -> f32 {
    2.0 * distance * (fov_y * 0.5).tan() / height.max(1.0)
}

#[cfg(test)]
mod tests;
