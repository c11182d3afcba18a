//! How `rigscope render` looks at the scene and shows it: the camera placed as model-viewer and
//! the Khronos Render Fidelity harness place it (`--orbit`, `--target`, `--fov`), the shaded
//! view's tone curve and exposure, and a transparent background.

use crate::names;
use crate::render::environment::{Environment, EnvironmentError, Lighting};
use crate::render::pbr::{ToneOptions, Tonemap};
use crate::viewer::Viewer;
use glam::Vec3;
use std::path::PathBuf;

/// The arguments of `rigscope render` that place the camera and tone the image.
#[derive(clap::Args, Debug, Clone, Default, PartialEq)]
pub struct LookArgs {
    /// The shaded view's tone curve: Khronos PBR Neutral, ACES (Narkowicz's fit), or none
    /// (linear, clipped at 1).
    #[arg(long, default_value_t = Tonemap::Neutral, value_parser = names::cli::<Tonemap>())]
    pub tonemap: Tonemap,
    /// Exposure of the shaded view in EV: +1 doubles the light, −1 halves it.
    #[arg(long, value_name = "EV", default_value_t = 0.0, allow_hyphen_values = true, value_parser = parse_exposure)]
    pub exposure: f32,
    /// Place the camera on a sphere around the target: THETA,PHI,RADIUS with θ the azimuth from
    /// +Z toward +X and φ the angle from +Y, in degrees, and the radius in scene units (as
    /// model-viewer's camera-orbit).
    #[arg(long, value_name = "THETA,PHI,RADIUS", allow_hyphen_values = true, value_parser = Orbit::parse, conflicts_with = "camera")]
    pub orbit: Option<Orbit>,
    /// The point the camera looks at, in scene units (the framed rig's centre when omitted).
    #[arg(long, value_name = "X,Y,Z", allow_hyphen_values = true, value_parser = parse_point)]
    pub target: Option<Vec3>,
    /// The vertical field of view in degrees (40 when omitted); without --orbit the rig is
    /// framed again for it.
    #[arg(long, value_name = "DEG", value_parser = parse_fov)]
    pub fov: Option<f32>,
    /// A transparent background: the PNG's alpha is the scene's coverage (the grid is left out).
    #[arg(long)]
    pub transparent: bool,
    /// What lights the shaded view: the environment map (image-based light) or the directional
    /// light with a sky/ground ambient (the look before image-based light).
    #[arg(long, default_value_t = Lighting::Environment, value_parser = names::cli::<Lighting>())]
    pub light: Lighting,
    /// An equirectangular Radiance .hdr panorama to light the shaded view with, in place of the
    /// built-in studio room.
    #[arg(long, value_name = "FILE.hdr")]
    pub environment: Option<PathBuf>,
}

/// A camera on a sphere: azimuth θ from +Z toward +X, polar angle φ from +Y (degrees), radius.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Orbit {
    pub theta: f32,
    pub phi: f32,
    pub radius: f32,
}

/// Why a value of `--orbit`, `--target`, `--fov` or `--exposure` was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LookError {
    #[error("'{text}' is not {form} in numbers")]
    NotNumbers { text: String, form: &'static str },
    #[error("φ {phi}° in '{text}' is outside {min:.1}..={max:.1}° (straight up or down has no azimuth)")]
    Polar { text: String, phi: f32, min: f32, max: f32 },
    #[error("radius {radius} in '{text}' is not above 0")]
    Radius { text: String, radius: f32 },
    #[error("field of view {0}° is not between 1 and 179 degrees")]
    Fov(f32),
    #[error("exposure {0} EV is outside ±20")]
    Exposure(f32),
}

/// `text` as exactly `N` finite numbers separated by commas.
fn numbers<const N: usize>(text: &str, form: &'static str) -> Result<[f32; N], LookError> {
    let refused = || LookError::NotNumbers {
        text: text.to_owned(),
        form,
    };
    let values: Vec<f32> = text
        .split(',')
        .map(|n| n.trim().parse::<f32>().ok().filter(|n| n.is_finite()))
        .collect::<Option<_>>()
        .ok_or_else(refused)?;
    values.try_into().map_err(|_| refused())
}

impl Orbit {
    /// The camera's pitch limit keeps φ this far from the poles.
    const POLE_MARGIN: f32 = 90.0 - 88.8;

    /// `THETA,PHI,RADIUS`, e.g. `30,75,2.5`.
    pub fn parse(text: &str) -> Result<Orbit, LookError> {
        let [theta, phi, radius] = numbers::<3>(text, "THETA,PHI,RADIUS")?;
        let (min, max) = (Self::POLE_MARGIN, 180.0 - Self::POLE_MARGIN);
        if !(min..=max).contains(&phi) {
            return Err(LookError::Polar {
                text: text.to_owned(),
                phi,
                min,
                max,
            });
        }
        if radius <= 0.0 {
            return Err(LookError::Radius {
                text: text.to_owned(),
                radius,
            });
        }
        Ok(Orbit { theta, phi, radius })
    }

    /// Where the eye is, relative to the target: r (sin φ sin θ, cos φ, sin φ cos θ).
    pub fn offset(&self) -> Vec3 {
        let (st, ct) = self.theta.to_radians().sin_cos();
        let (sp, cp) = self.phi.to_radians().sin_cos();
        self.radius * Vec3::new(sp * st, cp, sp * ct)
    }
}

pub fn parse_point(text: &str) -> Result<Vec3, LookError> {
    numbers::<3>(text, "X,Y,Z").map(Vec3::from)
}

pub fn parse_fov(text: &str) -> Result<f32, LookError> {
    let [fov] = numbers::<1>(text, "DEG")?;
    if !(1.0..=179.0).contains(&fov) {
        return Err(LookError::Fov(fov));
    }
    Ok(fov)
}

pub fn parse_exposure(text: &str) -> Result<f32, LookError> {
    let [ev] = numbers::<1>(text, "EV")?;
    if ev.abs() > 20.0 {
        return Err(LookError::Exposure(ev));
    }
    Ok(ev)
}

impl LookArgs {
    /// Sets the viewer's tone, background and camera as the arguments say; runs after the view
    /// options and `--camera` are applied.
    pub fn apply(&self, viewer: &mut Viewer) {
        let options = &mut viewer.view.options;
        options.tone = ToneOptions {
            curve: self.tonemap,
            exposure: self.exposure,
        };
        options.light = self.light;
        if self.transparent {
            options.transparent = true;
            options.grid = false;
        }
        let camera = &mut viewer.view.camera;
        if let Some(fov) = self.fov {
            let fov = fov.to_radians();
            if self.orbit.is_none() {
                // Framing puts the camera at the bounds' radius over sin(fov / 2): moved so for
                // the new angle, any --camera zoom kept.
                camera.distance *= (camera.fov_y * 0.5).sin() / (fov * 0.5).sin();
            }
            camera.fov_y = fov;
        }
        if let Some(target) = self.target {
            camera.target = target;
        }
        if let Some(orbit) = self.orbit {
            camera.yaw = orbit.theta.to_radians();
            camera.pitch = (90.0 - orbit.phi).to_radians();
            camera.distance = orbit.radius;
        }
    }
}

impl LookArgs {
    /// The environment `--environment` names, read (the built-in room without it).
    pub fn environment(&self) -> Result<Environment, EnvironmentError> {
        self.environment
            .as_deref()
            .map_or(Ok(Environment::Room), Environment::open)
    }
}

/// Turns an image drawn over a transparent background, whose edge pixels hold their colour
/// times their coverage (the samples resolved with the cleared ones), into straight alpha as
/// PNG keeps it: each partly covered pixel's linear colour divided by its alpha.
pub fn unpremultiply(image: &mut image::RgbaImage) {
    for pixel in image.pixels_mut() {
        let alpha = pixel[3];
        if alpha == 0 || alpha == 255 {
            continue;
        }
        let a = f32::from(alpha) / 255.0;
        for c in &mut pixel.0[..3] {
            *c = srgb_encode((srgb_decode(*c) / a).min(1.0));
        }
    }
}

fn srgb_decode(c: u8) -> f32 {
    let s = f32::from(c) / 255.0;
    if s <= 0.04045 {
        s / 12.92
    } else {
        ((s + 0.055) / 1.055).powf(2.4)
    }
}

fn srgb_encode(linear: f32) -> u8 {
    let s = if linear <= 0.003_130_8 {
        12.92 * linear
    } else {
        1.055 * linear.powf(1.0 / 2.4) - 0.055
    };
    (s * 255.0).round().clamp(0.0, 255.0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_orbit_parses_and_puts_the_eye_where_the_formula_says() {
        let orbit = Orbit::parse("90, 90, 2").unwrap();
        assert!((orbit.offset() - Vec3::new(2.0, 0.0, 0.0)).length() < 1e-6);
        // θ 0 looks from +Z; φ 60 is 30° above the horizon.
        let from_front = Orbit::parse("0,60,4").unwrap().offset();
        assert!((from_front - Vec3::new(0.0, 2.0, 4.0 * 60f32.to_radians().sin())).length() < 1e-5);
        assert!(matches!(Orbit::parse("0,0,1"), Err(LookError::Polar { .. })));
        assert!(matches!(Orbit::parse("0,90,0"), Err(LookError::Radius { .. })));
        assert!(matches!(Orbit::parse("0,90"), Err(LookError::NotNumbers { .. })));
        assert_eq!(parse_point("1,-2,3.5"), Ok(Vec3::new(1.0, -2.0, 3.5)));
        assert_eq!(parse_fov("0.5"), Err(LookError::Fov(0.5)));
        assert_eq!(parse_exposure("-1.5"), Ok(-1.5));
        assert_eq!(
            LookError::Fov(200.0).to_string(),
            "field of view 200° is not between 1 and 179 degrees"
        );
    }

    #[test]
    fn unpremultiplying_restores_the_colour_of_a_half_covered_pixel() {
        let mut image = image::RgbaImage::from_pixel(1, 1, image::Rgba([srgb_encode(0.25), 0, 0, 128]));
        unpremultiply(&mut image);
        let red = srgb_decode(image.get_pixel(0, 0)[0]);
        assert!((red - 0.25 / (128.0 / 255.0)).abs() < 0.01, "{red}");
    }
}
