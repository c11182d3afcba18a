//! The light the shaded view is lit by: an environment map (an equirectangular panorama of
//! linear radiance, from a Radiance `.hdr` file or the built-in studio room painted here), or the
//! old directional light with its sky/ground ambient. `render::ibl` prefilters the map on the GPU.

use glam::DVec3;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

crate::names::named_enum! {
    /// What lights the shaded view (`render --light`, the View panel; the settings file keeps
    /// it).
    #[strum(serialize_all = "kebab-case")]
    pub enum Lighting {
        /// Image-based light from the environment map: the built-in studio room, or the
        /// `.hdr` file loaded.
        #[default]
        Environment,
        /// One directional light over a sky/ground ambient (Rigscope's look before image-based
        /// light).
        Directional,
    }
}

impl Lighting {
    /// The code the mesh shader reads (`LIGHT_*`).
    pub fn shader_code(self) -> u32 {
        self as u32
    }

    pub fn is_default(&self) -> bool {
        *self == Lighting::default()
    }

    pub fn label(self) -> &'static str {
        match self {
            Lighting::Environment => "Environment",
            Lighting::Directional => "Directional light",
        }
    }
}

/// An equirectangular panorama of linear RGB radiance: texel (i, j) sees direction
/// [`Equirect::direction`] of its centre; u runs with the azimuth atan2(x, −z) from −π at the
/// left edge (so the middle of the image lies along −Z, ahead of the default camera) and v with
/// the angle from +Y at the top.
#[derive(Debug, Clone, PartialEq)]
pub struct Equirect {
    pub width: u32,
    pub height: u32,
    /// Row by row from the top, RGBA with alpha 1.
    pub texels: Vec<[f32; 4]>,
}

impl Equirect {
    /// The direction through (u, v) in 0..1 across the image.
    pub fn direction(u: f64, v: f64) -> DVec3 {
        let azimuth = (u - 0.5) * std::f64::consts::TAU;
        let polar = v * std::f64::consts::PI;
        DVec3::new(polar.sin() * azimuth.sin(), polar.cos(), -polar.sin() * azimuth.cos())
    }

    /// A `width`×`height` panorama painted by `radiance` per direction, each texel the mean of
    /// `grid`×`grid` directions spread over it (so that a sharp edge in `radiance` does not alias).
    pub fn painted(width: u32, height: u32, grid: u32, radiance: impl Fn(DVec3) -> DVec3) -> Equirect {
        let mut texels = Vec::with_capacity((width * height) as usize);
        let per = f64::from(grid * grid);
        for j in 0..height {
            for i in 0..width {
                let mut sum = DVec3::ZERO;
                for a in 0..grid {
                    for b in 0..grid {
                        let u = (f64::from(i) + (f64::from(a) + 0.5) / f64::from(grid)) / f64::from(width);
                        let v = (f64::from(j) + (f64::from(b) + 0.5) / f64::from(grid)) / f64::from(height);
                        sum += radiance(Equirect::direction(u, v));
                    }
                }
                let c = (sum / per).as_vec3();
                texels.push([c.x, c.y, c.z, 1.0]);
            }
        }
        Equirect { width, height, texels }
    }

    /// The same radiance `rgb` from every direction.
    pub fn constant(rgb: [f32; 3]) -> Equirect {
        let (width, height) = (8, 4);
        Equirect {
            width,
            height,
            texels: vec![[rgb[0], rgb[1], rgb[2], 1.0]; (width * height) as usize],
        }
    }

    /// Half the width and height, each texel the mean of four (a panorama wider than the GPU
    /// takes is brought down so).
    fn halved(&self) -> Equirect {
        let (width, height) = ((self.width / 2).max(1), (self.height / 2).max(1));
        let at = |i: u32, j: u32| self.texels[(j.min(self.height - 1) * self.width + i.min(self.width - 1)) as usize];
        let mut texels = Vec::with_capacity((width * height) as usize);
        for j in 0..height {
            for i in 0..width {
                let quad = [
                    at(2 * i, 2 * j),
                    at(2 * i + 1, 2 * j),
                    at(2 * i, 2 * j + 1),
                    at(2 * i + 1, 2 * j + 1),
                ];
                let mean = |c: usize| quad.iter().map(|t| t[c]).sum::<f32>() * 0.25;
                texels.push([mean(0), mean(1), mean(2), 1.0]);
            }
        }
        Equirect { width, height, texels }
    }
}

/// Panoramas are brought down to at most this many texels across before upload: the cube they
/// are turned into has far fewer.
pub const MAX_EQUIRECT_WIDTH: u32 = 4096;

/// Why an environment map could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a Radiance .hdr image", path.display())]
    NotHdr { path: PathBuf },
    #[error("cannot decode {}: {source}", path.display())]
    Decode {
        path: PathBuf,
        #[source]
        source: image::ImageError,
    },
    #[error("{} is {width}x{height}; an equirectangular panorama is twice as wide as it is high", path.display())]
    NotPanorama { path: PathBuf, width: u32, height: u32 },
}

/// Reads an equirectangular Radiance `.hdr` file.
pub fn load_hdr(path: &Path) -> Result<Equirect, EnvironmentError> {
    let io = |source| EnvironmentError::Io {
        path: path.to_owned(),
        source,
    };
    let decode = |source| EnvironmentError::Decode {
        path: path.to_owned(),
        source,
    };
    let reader = image::ImageReader::open(path)
        .map_err(io)?
        .with_guessed_format()
        .map_err(io)?;
    if reader.format() != Some(image::ImageFormat::Hdr) {
        return Err(EnvironmentError::NotHdr { path: path.to_owned() });
    }
    let image = reader.decode().map_err(decode)?.into_rgb32f();
    let (width, height) = image.dimensions();
    // Panoramas are 2:1; a little off (a row cropped) is still one.
    if height == 0 || width.abs_diff(2 * height) > width / 16 {
        return Err(EnvironmentError::NotPanorama {
            path: path.to_owned(),
            width,
            height,
        });
    }
    let texels = image
        .pixels()
        .map(|p| {
            let c = p.0.map(|c| if c.is_finite() { c.max(0.0) } else { 0.0 });
            [c[0], c[1], c[2], 1.0]
        })
        .collect();
    let mut map = Equirect { width, height, texels };
    while map.width > MAX_EQUIRECT_WIDTH {
        map = map.halved();
    }
    Ok(map)
}

/// A rectangle of light on one of the room's surfaces: its bounds along the surface's two other
/// axes, and its radiance.
struct Panel {
    /// The surface: 0 ±x walls, 1 floor and ceiling, 2 ±z walls; and which side.
    axis: usize,
    positive: bool,
    /// Bounds along the first and second of the other two axes (in x, y, z order).
    first: (f64, f64),
    second: (f64, f64),
    radiance: f64,
}

/// The room's half width (x) and half depth (z), its floor and ceiling heights, around the model
/// at the origin.
const ROOM_HALF: f64 = 5.0;
const ROOM_FLOOR: f64 = -2.0;
const ROOM_CEILING: f64 = 5.0;
/// How far a panel's edge fades, in the room's units.
const PANEL_SOFTNESS: f64 = 0.35;

const PANELS: [Panel; 5] = [
    // Overhead: the main light.
    Panel {
        axis: 1,
        positive: true,
        first: (-2.0, 2.0),
        second: (-2.0, 1.5),
        radiance: 5.0,
    },
    // Left wall (−x), a tall strip: the key from the side.
    Panel {
        axis: 0,
        positive: false,
        first: (0.0, 3.5),
        second: (-2.5, 1.0),
        radiance: 3.5,
    },
    // Right wall (+x): a weaker fill.
    Panel {
        axis: 0,
        positive: true,
        first: (0.5, 3.0),
        second: (-1.0, 2.5),
        radiance: 1.6,
    },
    // Behind the model (−z), high: a rim.
    Panel {
        axis: 2,
        positive: false,
        first: (-3.0, 3.0),
        second: (2.5, 4.0),
        radiance: 2.5,
    },
    // Behind the default camera (+z): what smooth metals facing it reflect.
    Panel {
        axis: 2,
        positive: true,
        first: (-1.5, 1.5),
        second: (0.0, 3.0),
        radiance: 2.0,
    },
];

/// The studio room's radiance seen from the origin along unit `d`: grey walls (lighter higher
/// up), a darker floor, a lighter ceiling, and soft-edged rectangular light panels.
pub fn room_radiance(d: DVec3) -> DVec3 {
    // The nearest of the six planes along d.
    let bounds = [
        (ROOM_HALF, -ROOM_HALF),
        (ROOM_CEILING, ROOM_FLOOR),
        (ROOM_HALF, -ROOM_HALF),
    ];
    let mut nearest = (f64::INFINITY, 0, true);
    for (axis, (high, low)) in bounds.into_iter().enumerate() {
        let c = d[axis];
        if c.abs() < 1e-12 {
            continue;
        }
        let positive = c > 0.0;
        let t = if positive { high } else { low } / c;
        if t < nearest.0 {
            nearest = (t, axis, positive);
        }
    }
    let (t, axis, positive) = nearest;
    let p = d * t;
    let height = ((p.y - ROOM_FLOOR) / (ROOM_CEILING - ROOM_FLOOR)).clamp(0.0, 1.0);
    let mut radiance = match (axis, positive) {
        (1, false) => 0.22,
        (1, true) => 0.45,
        _ => 0.28 + 0.14 * height,
    };
    let others = [(axis + 1) % 3, (axis + 2) % 3];
    let (first, second) = (p[others[0].min(others[1])], p[others[0].max(others[1])]);
    let fade = |x: f64, (lo, hi): (f64, f64)| {
        let inside = (x - lo).min(hi - x);
        smoothstep(-PANEL_SOFTNESS, PANEL_SOFTNESS, inside)
    };
    for panel in PANELS.iter().filter(|p| p.axis == axis && p.positive == positive) {
        let cover = fade(first, panel.first) * fade(second, panel.second);
        radiance += (panel.radiance - radiance) * cover;
    }
    DVec3::splat(radiance)
}

fn smoothstep(edge0: f64, edge1: f64, x: f64) -> f64 {
    let t = ((x - edge0) / (edge1 - edge0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The built-in room as a panorama, painted once per process (about ten milliseconds).
pub fn room() -> Arc<Equirect> {
    static ROOM: OnceLock<Arc<Equirect>> = OnceLock::new();
    ROOM.get_or_init(|| Arc::new(Equirect::painted(512, 256, 2, room_radiance)))
        .clone()
}

/// The environment map the shaded view is lit by: the built-in room, or a loaded panorama.
#[derive(Debug, Clone, Default)]
pub enum Environment {
    #[default]
    Room,
    Map {
        /// Unique in the process: the renderer prefilters again when it changes.
        id: u64,
        /// Shown in the UI (the file's name).
        name: Arc<str>,
        map: Arc<Equirect>,
    },
}

impl Environment {
    /// `map` under `name`, with an id of its own.
    pub fn from_map(name: &str, map: Equirect) -> Environment {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Environment::Map {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            name: name.into(),
            map: Arc::new(map),
        }
    }

    /// The `.hdr` panorama at `path`.
    pub fn open(path: &Path) -> Result<Environment, EnvironmentError> {
        let map = load_hdr(path)?;
        let name = path
            .file_name()
            .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        Ok(Environment::from_map(&name, map))
    }

    /// 0 for the room; each loaded map's own otherwise.
    pub fn id(&self) -> u64 {
        match self {
            Environment::Room => 0,
            Environment::Map { id, .. } => *id,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Environment::Room => "Studio room (built in)",
            Environment::Map { name, .. } => name,
        }
    }

    pub fn map(&self) -> Arc<Equirect> {
        match self {
            Environment::Room => room(),
            Environment::Map { map, .. } => map.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_run_as_documented() {
        let close = |a: DVec3, b: DVec3| (a - b).length() < 1e-12;
        assert!(close(Equirect::direction(0.5, 0.5), DVec3::NEG_Z));
        assert!(close(Equirect::direction(0.75, 0.5), DVec3::X));
        assert!(close(Equirect::direction(0.25, 0.5), DVec3::NEG_X));
        assert!(close(Equirect::direction(0.3, 0.0), DVec3::Y));
    }

    #[test]
    fn the_room_has_its_panels_where_they_were_put_and_is_grey_elsewhere() {
        // Straight up: the middle of the overhead panel.
        assert!((room_radiance(DVec3::Y) - DVec3::splat(5.0)).length() < 1e-9);
        // Straight down: the floor.
        assert_eq!(room_radiance(DVec3::NEG_Y), DVec3::splat(0.22));
        // Towards −x a little up: the left wall's strip (x = −5, y ≈ 1.7, z ≈ −0.8).
        let left = room_radiance(DVec3::new(-5.0, 1.7, -0.8).normalize());
        assert!((left.x - 3.5).abs() < 1e-9, "{left}");
        // Grey, never coloured; never negative.
        for k in 0..200 {
            let d = Equirect::direction(f64::from(k) / 200.0, (f64::from(k) * 0.618).fract());
            let c = room_radiance(d);
            assert!(c.x == c.y && c.y == c.z && c.x >= 0.2 && c.x <= 5.0 + 1e-9, "{d}: {c}");
        }
    }

    #[test]
    fn a_missing_or_non_hdr_file_is_an_error_with_its_path() {
        let missing = load_hdr(Path::new("no/such/sky.hdr")).unwrap_err();
        assert!(matches!(missing, EnvironmentError::Io { .. }));
        assert!(missing.to_string().contains("no/such/sky.hdr"), "{missing}");
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("not.hdr");
        std::fs::write(&text, "just text").unwrap();
        assert!(matches!(load_hdr(&text), Err(EnvironmentError::Decode { .. })));
        // A PNG, whatever its name says.
        let png = dir.path().join("png.hdr");
        image::RgbImage::new(4, 2)
            .save_with_format(&png, image::ImageFormat::Png)
            .unwrap();
        assert!(matches!(load_hdr(&png), Err(EnvironmentError::NotHdr { .. })));
        // A Radiance header whose pixels are cut short.
        let cut = dir.path().join("cut.hdr");
        std::fs::write(&cut, "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 4 +X 8\n\x01\x02").unwrap();
        assert!(
            matches!(load_hdr(&cut), Err(EnvironmentError::Decode { .. })),
            "{:?}",
            load_hdr(&cut)
        );
    }

    #[test]
    fn an_hdr_file_reads_back_as_its_linear_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sky.hdr");
        let (width, height) = (16u32, 8u32);
        let pixels: Vec<image::Rgb<f32>> = (0..width * height)
            .map(|k| image::Rgb([0.5 + k as f32 * 0.25, 2.0, 0.125]))
            .collect();
        let file = std::fs::File::create(&path).unwrap();
        image::codecs::hdr::HdrEncoder::new(file)
            .encode(&pixels, width as usize, height as usize)
            .unwrap();
        let map = load_hdr(&path).unwrap();
        assert_eq!((map.width, map.height), (width, height));
        for (got, want) in map.texels.iter().zip(&pixels) {
            for c in 0..3 {
                // RGBE keeps 8 bits of mantissa under a shared exponent.
                assert!(
                    (got[c] - want.0[c]).abs() <= want.0[0].max(2.0) / 128.0,
                    "{got:?} vs {want:?}"
                );
            }
        }
        let narrow = dir.path().join("narrow.hdr");
        let file = std::fs::File::create(&narrow).unwrap();
        image::codecs::hdr::HdrEncoder::new(file)
            .encode(&pixels, 8, 16)
            .unwrap();
        assert!(matches!(load_hdr(&narrow), Err(EnvironmentError::NotPanorama { .. })));
    }
}
