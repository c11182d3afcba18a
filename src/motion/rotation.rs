//! Rotation keys read as curves a person can follow: Euler angles in a chosen order, the angle
//! about one axis, or the quaternion's components. Angles are unwrapped against a reference (the
//! previous sample, or the sampled curve at the same time) so that a curve passing ±180° goes on
//! instead of jumping by 360°.

use glam::{DQuat, DVec3, EulerRot, Quat};

crate::names::named_enum! {
    /// How a rotation channel is plotted and printed.
    #[strum(serialize_all = "kebab-case")]
    pub enum RotationView {
        /// Euler angles, intrinsic: `euler-xyz` is the rotation Rx(a)·Ry(b)·Rz(c), printed a, b, c.
        #[default]
        EulerXyz,
        EulerXzy,
        EulerYxz,
        EulerYzx,
        EulerZxy,
        EulerZyx,
        /// The angle turned about the parent's X axis (the twist of the swing-twist split).
        AxisX,
        AxisY,
        AxisZ,
        /// The angle turned about the joint's own X axis away from its rest rotation.
        LocalX,
        LocalY,
        LocalZ,
        /// The quaternion's x, y, z, w as stored: a sign flip between keys shows.
        Quat,
    }
}

impl RotationView {
    /// Names of the values a rotation becomes, in the order they are given.
    pub fn components(self) -> &'static [&'static str] {
        match self {
            RotationView::EulerXyz => &["x", "y", "z"],
            RotationView::EulerXzy => &["x", "z", "y"],
            RotationView::EulerYxz => &["y", "x", "z"],
            RotationView::EulerYzx => &["y", "z", "x"],
            RotationView::EulerZxy => &["z", "x", "y"],
            RotationView::EulerZyx => &["z", "y", "x"],
            RotationView::AxisX | RotationView::LocalX => &["about x"],
            RotationView::AxisY | RotationView::LocalY => &["about y"],
            RotationView::AxisZ | RotationView::LocalZ => &["about z"],
            RotationView::Quat => &["x", "y", "z", "w"],
        }
    }

    /// Whether the values are angles in degrees (else quaternion components).
    pub fn is_angle(self) -> bool {
        self != RotationView::Quat
    }

    fn euler_order(self) -> Option<EulerRot> {
        Some(match self {
            RotationView::EulerXyz => EulerRot::XYZ,
            RotationView::EulerXzy => EulerRot::XZY,
            RotationView::EulerYxz => EulerRot::YXZ,
            RotationView::EulerYzx => EulerRot::YZX,
            RotationView::EulerZxy => EulerRot::ZXY,
            RotationView::EulerZyx => EulerRot::ZYX,
            _ => return None,
        })
    }

    /// The axis an `axis-*` or `local-*` view measures about, and whether it is the joint's own.
    fn axis(self) -> Option<(DVec3, bool)> {
        Some(match self {
            RotationView::AxisX => (DVec3::X, false),
            RotationView::AxisY => (DVec3::Y, false),
            RotationView::AxisZ => (DVec3::Z, false),
            RotationView::LocalX => (DVec3::X, true),
            RotationView::LocalY => (DVec3::Y, true),
            RotationView::LocalZ => (DVec3::Z, true),
            _ => return None,
        })
    }

    /// `rotation` (x, y, z, w, as a channel stores it) in this view; `rest` is the joint's rest
    /// rotation (for `local-*`). Angles are in degrees and, given a `reference` (values of this
    /// view), brought within 180° of it: of the two Euler triples that make one rotation, the one
    /// nearer the reference. Only the first [`RotationView::components`] values are meaningful.
    pub fn values(self, rotation: [f32; 4], rest: Quat, reference: Option<[f64; 4]>) -> [f64; 4] {
        let raw = rotation.map(f64::from);
        if self == RotationView::Quat {
            return raw;
        }
        let q = DQuat::from_array(raw).normalize();
        if let Some(order) = self.euler_order() {
            let (a, b, c) = q.to_euler(order);
            let primary = [a, b, c].map(f64::to_degrees);
            let Some(reference) = reference else {
                return [primary[0], primary[1], primary[2], 0.0];
            };
            // Rx(a)·Ry(b)·Rz(c) = Rx(a + 180°)·Ry(180° − b)·Rz(c + 180°) for every order.
            let alternative = [primary[0] + 180.0, 180.0 - primary[1], primary[2] + 180.0];
            let near = |t: [f64; 3]| [0, 1, 2].map(|i| unwrap_degrees(t[i], reference[i]));
            let distance = |t: &[f64; 3]| (0..3).map(|i| (t[i] - reference[i]).powi(2)).sum::<f64>();
            let (p, q) = (near(primary), near(alternative));
            let best = if distance(&q) < distance(&p) { q } else { p };
            return [best[0], best[1], best[2], 0.0];
        }
        let (axis, local) = self.axis().unwrap_or((DVec3::X, false));
        let turn = if local { rest_relative(q, rest) } else { q };
        let angle = twist_degrees(turn, axis);
        [reference.map_or(angle, |r| unwrap_degrees(angle, r[0])), 0.0, 0.0, 0.0]
    }
}

/// The rotation away from `rest` in the joint's own frame: `rest · turn = rotation`.
fn rest_relative(rotation: DQuat, rest: Quat) -> DQuat {
    DQuat::from_array(rest.to_array().map(f64::from)).normalize().inverse() * rotation
}

/// The angle, in degrees within (−180°, 180°], that `rotation` turns about the unit `axis`:
/// the twist left when the swing moving `axis` is taken out.
pub fn twist_degrees(rotation: DQuat, axis: DVec3) -> f64 {
    let along = rotation.xyz().dot(axis);
    let angle = 2.0 * along.atan2(rotation.w).to_degrees();
    unwrap_degrees(angle, 0.0)
}

/// `angle` moved by whole turns to within 180° of `reference`.
pub fn unwrap_degrees(angle: f64, reference: f64) -> f64 {
    angle - 360.0 * ((angle - reference) / 360.0).round()
}

/// Values of `rotations` (in time order) in `view`, each unwrapped against the one before, so
/// that the curve is continuous where the rotation is.
pub fn continuous_values(
    view: RotationView,
    rest: Quat,
    rotations: impl IntoIterator<Item = [f32; 4]>,
) -> Vec<[f64; 4]> {
    let mut previous = None;
    rotations
        .into_iter()
        .map(|r| {
            let v = view.values(r, rest, previous);
            previous = Some(v);
            v
        })
        .collect()
}

#[cfg(test)]
mod tests;
