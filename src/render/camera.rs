//! Orbit camera: turns around a target point, pans in the view plane, zooms along the view axis.

use crate::anim::Bounds;
use glam::{Mat4, Vec3};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub distance: f32,
    /// Rotation about the world up axis (+Y), radians.
    pub yaw: f32,
    /// Elevation above the ground plane, radians.
    pub pitch: f32,
    pub fov_y: f32,
}

const DEFAULT_YAW: f32 = 0.6;
const DEFAULT_PITCH: f32 = 0.3;
const PITCH_LIMIT: f32 = 1.55;

/// Where a framed camera looks from: azimuth about the up axis (0 looks along −Z from +Z, 90
/// from +X) and elevation above the ground, in degrees, and a zoom (2: twice as close).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraAngle {
    pub azimuth: f32,
    pub elevation: f32,
    pub zoom: f32,
}

/// Why a `--camera` value was refused, with the text given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CameraAngleError {
    #[error("'{0}' is not AZIMUTH,ELEVATION[,ZOOM] in numbers (e.g. 90,10 or 0,0,2)")]
    NotNumbers(String),
    #[error("'{0}' is not AZIMUTH,ELEVATION[,ZOOM] (e.g. 90,10 or 0,0,2)")]
    WrongCount(String),
    #[error("elevation {elevation}° in '{text}' is beyond ±{limit:.1}° (straight up or down has no azimuth)")]
    Elevation { text: String, elevation: f32, limit: f32 },
    #[error("zoom {zoom} in '{text}' is not above 0")]
    Zoom { text: String, zoom: f32 },
}

impl CameraAngle {
    /// `AZIMUTH,ELEVATION[,ZOOM]`, e.g. `90,10` or `0,0,2`.
    pub fn parse(text: &str) -> Result<CameraAngle, CameraAngleError> {
        let numbers: Vec<f32> = text
            .split(',')
            .map(|n| n.trim().parse::<f32>().ok().filter(|n| n.is_finite()))
            .collect::<Option<_>>()
            .ok_or_else(|| CameraAngleError::NotNumbers(text.to_owned()))?;
        let (azimuth, elevation, zoom) = match numbers[..] {
            [azimuth, elevation] => (azimuth, elevation, 1.0),
            [azimuth, elevation, zoom] => (azimuth, elevation, zoom),
            _ => return Err(CameraAngleError::WrongCount(text.to_owned())),
        };
        let limit = PITCH_LIMIT.to_degrees();
        if elevation.abs() > limit {
            return Err(CameraAngleError::Elevation {
                text: text.to_owned(),
                elevation,
                limit,
            });
        }
        if zoom <= 0.0 {
            return Err(CameraAngleError::Zoom {
                text: text.to_owned(),
                zoom,
            });
        }
        Ok(CameraAngle {
            azimuth,
            elevation,
            zoom,
        })
    }
}

impl Default for OrbitCamera {
    fn default() -> Self {
        OrbitCamera {
            target: Vec3::ZERO,
            distance: 5.0,
            yaw: DEFAULT_YAW,
            pitch: DEFAULT_PITCH,
            fov_y: 40f32.to_radians(),
        }
    }
}

impl OrbitCamera {
    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        self.target + self.distance * Vec3::new(cp * sy, sp, cp * cy)
    }

    pub fn view(&self) -> Mat4 {
        glam::camera::rh::view::look_at_mat4(self.eye(), self.target, Vec3::Y)
    }

    pub fn projection(&self, aspect: f32) -> Mat4 {
        // Near and far follow the distance so that both tiny and huge rigs keep depth precision.
        let near = (self.distance * 0.01).max(1e-4);
        // wgpu clip space: depth in [0, 1], y up (the Direct3D convention).
        glam::camera::rh::proj::directx::perspective(self.fov_y, aspect.max(1e-3), near, self.distance * 100.0 + near)
    }

    pub fn view_projection(&self, aspect: f32) -> Mat4 {
        self.projection(aspect) * self.view()
    }

    /// The ray through normalized device coordinates (`x`, `y` in -1..1, y up) of a view with
    /// aspect `aspect`: origin on the near plane and unit direction.
    pub fn ray(&self, x: f32, y: f32, aspect: f32) -> (Vec3, Vec3) {
        let inverse = self.view_projection(aspect).inverse();
        let near = inverse.project_point3(Vec3::new(x, y, 0.0));
        let far = inverse.project_point3(Vec3::new(x, y, 1.0));
        (near, (far - near).normalize())
    }

    /// Looks at `bounds` from the default direction, far enough back to see all of it.
    /// Turns the camera about its target to `angle`, and moves it `angle.zoom` times closer.
    pub fn look_from(&mut self, angle: CameraAngle) {
        self.yaw = angle.azimuth.to_radians();
        self.pitch = angle.elevation.to_radians().clamp(-PITCH_LIMIT, PITCH_LIMIT);
        self.distance /= angle.zoom;
    }

    pub fn frame(&mut self, bounds: &Bounds) {
        *self = OrbitCamera {
            fov_y: self.fov_y,
            ..OrbitCamera::default()
        };
        if bounds.is_empty() {
            return;
        }
        let radius = (bounds.size() * 0.5).max(1e-3);
        self.target = bounds.center();
        self.distance = radius / (self.fov_y * 0.5).sin() * 1.05;
    }

    /// Turns by a mouse drag of (`dx`, `dy`) pixels.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.008;
        self.pitch = (self.pitch + dy * 0.008).clamp(-PITCH_LIMIT, PITCH_LIMIT);
    }

    /// Moves the target so the point under the cursor follows a drag of (`dx`, `dy`) pixels in a
    /// viewport `height` pixels tall.
    pub fn pan(&mut self, dx: f32, dy: f32, height: f32) {
        let world_per_pixel = 2.0 * self.distance * (self.fov_y * 0.5).tan() / height.max(1.0);
        let view = self.view();
        let right = view.row(0).truncate();
        let up = view.row(1).truncate();
        self.target += (-dx * right + dy * up) * world_per_pixel;
    }

    /// Zooms by `steps` wheel notches (positive moves closer).
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * 0.88f32.powf(steps)).max(1e-4);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_camera_angle_parses_and_places_the_eye_around_the_target() {
        let side = CameraAngle::parse("90, 0").unwrap();
        assert_eq!((side.azimuth, side.elevation, side.zoom), (90.0, 0.0, 1.0));
        let mut camera = OrbitCamera {
            target: Vec3::new(1.0, 2.0, 3.0),
            distance: 4.0,
            ..OrbitCamera::default()
        };
        camera.look_from(side);
        assert!(
            (camera.eye() - Vec3::new(5.0, 2.0, 3.0)).length() < 1e-5,
            "{}",
            camera.eye()
        );
        // 30° up, from behind (−Z), twice as close: 2 · (0, sin 30°, −cos 30°) from the target.
        camera.look_from(CameraAngle::parse("180,30,2").unwrap());
        let expected = Vec3::new(1.0, 2.0, 3.0) + 2.0 * Vec3::new(0.0, 0.5, -(0.75f32).sqrt());
        assert!((camera.eye() - expected).length() < 1e-5, "{}", camera.eye());
        use CameraAngleError::*;
        for bad in ["90", "1,2,3,4"] {
            assert_eq!(CameraAngle::parse(bad), Err(WrongCount(bad.into())));
        }
        for bad in ["x,0", "0,NaN"] {
            assert_eq!(CameraAngle::parse(bad), Err(NotNumbers(bad.into())));
        }
        assert_eq!(
            CameraAngle::parse("0,0,0"),
            Err(Zoom {
                text: "0,0,0".into(),
                zoom: 0.0
            })
        );
        let error = CameraAngle::parse("0,90").unwrap_err();
        assert!(
            matches!(&error, Elevation { text, elevation: 90.0, .. } if text == "0,90"),
            "{error:?}"
        );
        // The wording the command line shows.
        assert_eq!(
            error.to_string(),
            "elevation 90° in '0,90' is beyond ±88.8° (straight up or down has no azimuth)"
        );
    }

    #[test]
    fn framing_puts_the_whole_bounds_in_view() {
        let mut bounds = Bounds::EMPTY;
        bounds.include(Vec3::new(-1.0, 0.0, -1.0));
        bounds.include(Vec3::new(1.0, 4.0, 1.0));
        let mut camera = OrbitCamera::default();
        camera.frame(&bounds);
        let vp = camera.view_projection(1.0);
        for corner in 0..8 {
            let p = Vec3::new(
                if corner & 1 == 0 { -1.0 } else { 1.0 },
                if corner & 2 == 0 { 0.0 } else { 4.0 },
                if corner & 4 == 0 { -1.0 } else { 1.0 },
            );
            let ndc = vp.project_point3(p);
            assert!(
                ndc.x.abs() <= 1.0 && ndc.y.abs() <= 1.0 && (0.0..=1.0).contains(&ndc.z),
                "{p} → {ndc}"
            );
        }
    }

    #[test]
    fn panning_moves_the_target_in_the_view_plane() {
        let mut camera = OrbitCamera::default();
        let forward = (camera.target - camera.eye()).normalize();
        camera.pan(100.0, 50.0, 500.0);
        assert!(camera.target.length() > 0.0);
        assert!(camera.target.dot(forward).abs() < 1e-5);
    }
}
