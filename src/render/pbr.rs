//! Physically based shading of the shaded view: the glTF 2.0 specification's metallic-roughness
//! BRDF (its Appendix B) under the directional light and a sky/ground ambient, and the tone
//! curves with exposure. The f64 functions here are the reference `shaders/pbr.wgsl` is tested
//! against; the constants both use are written into the WGSL from here ([`wgsl_constants`]).

use super::environment::Lighting;
use crate::rig::{Material, TextureRef};
use glam::{DVec3, Vec4};

/// Irradiance the directional light gives a surface facing it: a white Lambertian surface facing
/// the light reflects 2.5/π ≈ 0.8 of white, about the brightest the old fixed light gave.
pub const LIGHT_IRRADIANCE: f32 = 2.5;
/// Ambient light, from the sky (normals straight up) blending to the ground (straight down): the
/// old fixed shading's hemisphere, so the unlit side stays as readable as it was.
pub const SKY_AMBIENT: f32 = 0.38;
pub const GROUND_AMBIENT: f32 = 0.18;
/// Reflectance at normal incidence of a dielectric of index 1.5 (the specification's 0.04).
pub const DIELECTRIC_F0: f32 = 0.04;
/// Perceptual roughness is kept at or above this: at 0 the GGX distribution is a spike no
/// pixel samples, and a directional light's highlight would vanish or flash.
pub const MIN_ROUGHNESS: f32 = 0.03;

/// Which textures a draw samples (the draw uniform's `maps.x`), and with `<< MAP_SET1_SHIFT`
/// which of them read `TEXCOORD_1` rather than `TEXCOORD_0`.
pub const MAP_METALLIC_ROUGHNESS: u32 = 1;
pub const MAP_NORMAL: u32 = 2;
pub const MAP_OCCLUSION: u32 = 4;
pub const MAP_EMISSIVE: u32 = 8;
/// KHR_materials_specular's strength (alpha) and color (RGB, sRGB) textures.
pub const MAP_SPECULAR: u32 = 16;
pub const MAP_SPECULAR_COLOR: u32 = 32;
pub const MAP_SET1_SHIFT: u32 = 8;
/// How many textures beside the base colour's have their own coordinates (`uv_rows`).
pub const MAP_SLOTS: usize = 6;

crate::names::named_enum! {
    /// The curve that maps the shaded view's linear radiance (after exposure) to the display.
    #[strum(serialize_all = "kebab-case")]
    pub enum Tonemap {
        /// Khronos PBR Neutral: base colours lit at full strength show as they are, highlights
        /// roll off to white.
        #[default]
        Neutral,
        /// The ACES filmic curve as Narkowicz fitted it (2015), applied to the input as published.
        Aces,
        /// Linear, clipped at 1 (what another renderer's "Standard" view transform shows).
        None,
    }
}

impl Tonemap {
    /// The code the shader reads (`TONEMAP_*`).
    pub fn shader_code(self) -> u32 {
        self as u32
    }

    pub fn label(self) -> &'static str {
        match self {
            Tonemap::Neutral => "PBR Neutral",
            Tonemap::Aces => "ACES (Narkowicz fit)",
            Tonemap::None => "None (clip)",
        }
    }
}

/// The tone curve and exposure of the shaded view.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ToneOptions {
    #[serde(deserialize_with = "crate::names::or_default")]
    pub curve: Tonemap,
    /// Exposure in EV: radiance is multiplied by 2^EV before the curve.
    pub exposure: f32,
}

impl Default for ToneOptions {
    fn default() -> Self {
        ToneOptions {
            curve: Tonemap::Neutral,
            exposure: 0.0,
        }
    }
}

impl ToneOptions {
    pub fn is_default(&self) -> bool {
        *self == ToneOptions::default()
    }

    /// The factor radiance is multiplied by; 1 for an exposure that is not a number.
    pub fn scale(&self) -> f32 {
        if self.exposure.is_finite() {
            self.exposure.exp2()
        } else {
            1.0
        }
    }
}

/// Khronos PBR Neutral (KhronosGroup/ToneMapping, `PBR_Neutral` specification), on a
/// non-negative linear colour.
pub fn neutral(color: DVec3) -> DVec3 {
    let f90 = f64::from(DIELECTRIC_F0);
    let ks = f64::from(NEUTRAL_START_COMPRESSION);
    let kd = f64::from(NEUTRAL_DESATURATION);
    let x = color.min_element();
    let offset = if x <= 2.0 * f90 { x - x * x / (4.0 * f90) } else { f90 };
    let c = color - offset;
    let p = c.max_element();
    if p <= ks {
        return c;
    }
    let pn = 1.0 - (1.0 - ks) * (1.0 - ks) / (p + 1.0 - 2.0 * ks);
    let g = 1.0 / (kd * (p - pn) + 1.0);
    c * (pn / p) * g + DVec3::splat(pn) * (1.0 - g)
}

/// PBR Neutral's start of highlight compression, 0.8 − F90.
pub const NEUTRAL_START_COMPRESSION: f32 = 0.8 - DIELECTRIC_F0;
/// PBR Neutral's speed of desaturation.
pub const NEUTRAL_DESATURATION: f32 = 0.15;

/// Narkowicz's fit of the ACES filmic curve (x(ax + b)) / (x(cx + d) + e), clamped to 0..1.
pub const ACES_FIT: [f32; 5] = [2.51, 0.03, 2.43, 0.59, 0.14];

pub fn aces(color: DVec3) -> DVec3 {
    let [a, b, c, d, e] = ACES_FIT.map(f64::from);
    let x = color;
    ((x * (a * x + b)) / (x * (c * x + d) + e)).clamp(DVec3::ZERO, DVec3::ONE)
}

/// `color` (linear radiance) exposed by `options` and mapped by its curve, as the shader does
/// before the output's sRGB encoding.
pub fn tone_map(options: ToneOptions, color: DVec3) -> DVec3 {
    let exposed = color.max(DVec3::ZERO) * f64::from(options.scale());
    match options.curve {
        Tonemap::Neutral => neutral(exposed),
        Tonemap::Aces => aces(exposed),
        Tonemap::None => exposed.min(DVec3::ONE),
    }
}

/// The specification's BRDF (Appendix B, with KHR_materials_specular's Fresnel): a dielectric
/// (Lambert under a GGX specular layer, mixed by Schlick's Fresnel from the layer's `dielectric`
/// F0 to F90, the diffuse part keeping what the strongest channel of the layer leaves) and a
/// metal (the layer tinted by Schlick's Fresnel with F0 = the base colour), mixed by
/// `metallic`. D is GGX (Trowbridge-Reitz) and V the height-correlated Smith visibility, α =
/// roughness².
pub fn brdf(
    base: DVec3,
    metallic: f64,
    roughness: f64,
    dielectric: &DielectricLayer,
    n: DVec3,
    v: DVec3,
    l: DVec3,
) -> DVec3 {
    let h = (l + v).normalize();
    let alpha = roughness.max(f64::from(MIN_ROUGHNESS)).powi(2);
    let a2 = alpha * alpha;
    let n_dot_l = n.dot(l).max(0.0);
    let n_dot_v = n.dot(v).max(0.0);
    let n_dot_h = n.dot(h).max(0.0);
    let v_dot_h = v.dot(h).max(0.0);
    let d = a2 / (std::f64::consts::PI * (n_dot_h * n_dot_h * (a2 - 1.0) + 1.0).powi(2));
    let visibility = smith_visibility(a2, n_dot_l, n_dot_v);
    let specular = d * visibility;
    let schlick = (1.0 - v_dot_h).powi(5);
    let fresnel = dielectric.f0 + (DVec3::splat(dielectric.f90) - dielectric.f0) * schlick;
    let diffuse = base / std::f64::consts::PI;
    let dielectric = diffuse * (1.0 - fresnel.max_element()) + fresnel * specular;
    let metal = specular * (base + (DVec3::ONE - base) * schlick);
    dielectric.lerp(metal, metallic)
}

/// A dielectric's specular layer at a shaded point: its reflectance at normal incidence (F0,
/// per channel) and at grazing angles (F90), textures applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DielectricLayer {
    pub f0: DVec3,
    pub f90: f64,
}

impl DielectricLayer {
    /// glTF's dielectric without KHR_materials_specular or KHR_materials_ior: F0 0.04, F90 1.
    pub const PLAIN: DielectricLayer = DielectricLayer {
        f0: DVec3::splat(DIELECTRIC_F0 as f64),
        f90: 1.0,
    };

    /// `specular`'s layer where its textures read `texture_color` (RGB) and `texture_strength`
    /// (alpha): F0 = min(F0(ior) · color · texture color, 1) · strength, F90 = strength, with
    /// strength = factor · texture alpha.
    pub fn of(specular: &crate::rig::Specular, texture_color: DVec3, texture_strength: f64) -> DielectricLayer {
        let strength = f64::from(specular.factor) * texture_strength;
        let f0 = (specular.f0_color().as_dvec3() * texture_color).min(DVec3::ONE) * strength;
        DielectricLayer { f0, f90: strength }
    }

    /// F0 and F90 of the specular layer of a surface `metallic` between this dielectric and a
    /// metal of colour `base` (F0 the base colour, F90 1).
    fn mixed_with_metal(&self, base: DVec3, metallic: f64) -> (DVec3, f64) {
        (self.f0.lerp(base, metallic), self.f90 + (1.0 - self.f90) * metallic)
    }
}

/// V = G / (4 |n·l| |n·v|) for the height-correlated Smith G of GGX.
fn smith_visibility(a2: f64, n_dot_l: f64, n_dot_v: f64) -> f64 {
    let ggx_v = n_dot_l * (n_dot_v * n_dot_v * (1.0 - a2) + a2).sqrt();
    let ggx_l = n_dot_v * (n_dot_l * n_dot_l * (1.0 - a2) + a2).sqrt();
    let sum = ggx_v + ggx_l;
    if sum > 0.0 { 0.5 / sum } else { 0.0 }
}

/// The share of a uniform environment a surface reflects specularly (the split-sum's scale and
/// bias), by Karis's analytic fit (2014, after Lazarov 2013): the ambient's specular part until
/// image-based light replaces it.
pub fn ambient_specular(f0: DVec3, f90: f64, roughness: f64, n_dot_v: f64) -> DVec3 {
    let r = roughness * DVec3::new(-1.0, -0.0275, -0.572) + DVec3::new(1.0, 0.0425, 1.04);
    let r_w = roughness * 0.022 - 0.04;
    let a004 = (r.x * r.x).min((-9.28 * n_dot_v).exp2()) * r.x + r.y;
    let scale = -1.04 * a004 + r.z;
    let bias = 1.04 * a004 + r_w;
    f0 * scale + DVec3::splat(f90 * bias)
}

/// What one shaded point's surface gives the shader: base colour, metallic, roughness, the
/// occlusion applied to ambient light (1 none) and the emitted radiance.
#[derive(Debug, Clone, Copy)]
pub struct Surface {
    pub base: DVec3,
    pub metallic: f64,
    pub roughness: f64,
    pub occlusion: f64,
    pub emissive: DVec3,
    /// The dielectric part's specular layer.
    pub dielectric: DielectricLayer,
}

/// The radiance leaving a surface point towards the eye (`v` from the point to the eye, `l`
/// towards the light, `n` the shading normal; all unit): the directional light through the
/// BRDF, the sky/ground ambient (diffuse and specular, occluded), and emission.
pub fn radiance(surface: &Surface, n: DVec3, v: DVec3, l: DVec3) -> DVec3 {
    let direct = brdf(
        surface.base,
        surface.metallic,
        surface.roughness,
        &surface.dielectric,
        n,
        v,
        l,
    ) * f64::from(LIGHT_IRRADIANCE)
        * n.dot(l).max(0.0);
    let sky = (n.y * 0.5 + 0.5).clamp(0.0, 1.0);
    let ambient_light = f64::from(GROUND_AMBIENT) + (f64::from(SKY_AMBIENT) - f64::from(GROUND_AMBIENT)) * sky;
    let (f0, f90) = surface.dielectric.mixed_with_metal(surface.base, surface.metallic);
    let roughness = surface.roughness.max(f64::from(MIN_ROUGHNESS));
    let ambient = surface.base * (1.0 - surface.metallic) + ambient_specular(f0, f90, roughness, n.dot(v).max(0.0));
    direct + ambient * ambient_light * surface.occlusion + surface.emissive
}

/// The radiance leaving a surface point lit by an environment map, by the split sum: `prefiltered`
/// the specular cube's radiance along the reflected ray at the surface's roughness, `irradiance`
/// the irradiance cube's (over π) along the normal, `(a, b)` the BRDF table's scale and bias of
/// F0 at (n·v, roughness). Specular `prefiltered·(F0·A + F90·B)`, diffuse `irradiance·base·(1 −
/// metallic)`, both occluded; plus emission.
pub fn ibl_radiance(surface: &Surface, prefiltered: DVec3, irradiance: DVec3, (a, b): (f64, f64)) -> DVec3 {
    let (f0, f90) = surface.dielectric.mixed_with_metal(surface.base, surface.metallic);
    let specular = prefiltered * (f0 * a + DVec3::splat(f90 * b));
    let diffuse = irradiance * surface.base * (1.0 - surface.metallic);
    (diffuse + specular) * surface.occlusion + surface.emissive
}

/// The WGSL constants the shading and tone curves read, written from the Rust ones.
pub fn wgsl_constants() -> String {
    let floats = [
        ("LIGHT_IRRADIANCE", LIGHT_IRRADIANCE),
        ("SKY_AMBIENT", SKY_AMBIENT),
        ("GROUND_AMBIENT", GROUND_AMBIENT),
        ("DIELECTRIC_F0", DIELECTRIC_F0),
        ("MIN_ROUGHNESS", MIN_ROUGHNESS),
        ("NEUTRAL_START_COMPRESSION", NEUTRAL_START_COMPRESSION),
        ("NEUTRAL_DESATURATION", NEUTRAL_DESATURATION),
    ];
    let mut out: String = floats
        .iter()
        .map(|(name, value)| format!("const {name}: f32 = {value:?};\n"))
        .collect();
    let [a, b, c, d, e] = ACES_FIT;
    out += &format!("const ACES_FIT: array<f32, 5> = array<f32, 5>({a:?}, {b:?}, {c:?}, {d:?}, {e:?});\n");
    out += &super::gpu_data::wgsl_u32_constants(&[
        ("MAP_METALLIC_ROUGHNESS", MAP_METALLIC_ROUGHNESS),
        ("MAP_NORMAL", MAP_NORMAL),
        ("MAP_OCCLUSION", MAP_OCCLUSION),
        ("MAP_EMISSIVE", MAP_EMISSIVE),
        ("MAP_SPECULAR", MAP_SPECULAR),
        ("MAP_SPECULAR_COLOR", MAP_SPECULAR_COLOR),
        ("MAP_SET1_SHIFT", MAP_SET1_SHIFT),
        ("MAP_UV_ROWS", 2 * MAP_SLOTS as u32),
        ("TONEMAP_NEUTRAL", Tonemap::Neutral.shader_code()),
        ("TONEMAP_ACES", Tonemap::Aces.shader_code()),
        ("TONEMAP_NONE", Tonemap::None.shader_code()),
        ("LIGHT_ENVIRONMENT", Lighting::Environment.shader_code()),
        ("LIGHT_DIRECTIONAL", Lighting::Directional.shader_code()),
    ]);
    out += &format!(
        "const SPECULAR_MAX_LOD: f32 = {:?};\n",
        (super::ibl::SPECULAR_LEVELS - 1) as f32
    );
    out
}

/// The shading functions (`shaders/pbr.wgsl`), after [`wgsl_constants`].
pub const PBR_WGSL: &str = include_str!("../../shaders/pbr.wgsl");

/// A material's shading parameters as the draw uniform carries them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaterialShading {
    /// x metallic, y roughness, z normal scale, w occlusion strength.
    pub pbr: Vec4,
    /// `MAP_*` flags of the textures sampled (before a draw leaves its normal map out).
    pub maps: u32,
    /// The dielectric's specular layer before its textures: xyz its F0 colour (the index's
    /// reflectance times the specular colour), w its strength.
    pub specular: Vec4,
    /// Each texture's KHR_texture_transform as two rows of a 3×2 matrix, in the order
    /// metallic-roughness, normal, occlusion, emissive, specular, specular colour.
    pub uv_rows: [Vec4; 2 * MAP_SLOTS],
}

impl MaterialShading {
    /// `material`'s parameters; a normal map counts only where `has_tangents`.
    pub fn of(material: &Material, has_tangents: bool) -> MaterialShading {
        let textures = [
            (material.metallic_roughness_texture, MAP_METALLIC_ROUGHNESS),
            (material.normal_texture.filter(|_| has_tangents), MAP_NORMAL),
            (material.occlusion_texture, MAP_OCCLUSION),
            (material.emissive_texture, MAP_EMISSIVE),
            (material.specular.texture, MAP_SPECULAR),
            (material.specular.color_texture, MAP_SPECULAR_COLOR),
        ];
        let mut maps = 0;
        let mut uv_rows = [Vec4::ZERO; 2 * MAP_SLOTS];
        for (k, (texture, flag)) in textures.into_iter().enumerate() {
            let rows = texture.map_or_else(|| crate::rig::UvTransform::default().rows(), |t| t.uv.rows());
            uv_rows[2 * k] = rows[0].extend(0.0);
            uv_rows[2 * k + 1] = rows[1].extend(0.0);
            if let Some(TextureRef { uv, .. }) = texture {
                maps |= flag;
                if uv.set == 1 {
                    maps |= flag << MAP_SET1_SHIFT;
                }
            }
        }
        MaterialShading {
            pbr: Vec4::new(
                material.metallic,
                material.roughness,
                material.normal_scale,
                material.occlusion_strength,
            ),
            maps,
            specular: material.specular.f0_color().extend(material.specular.factor),
            uv_rows,
        }
    }

    /// Whether the draw reads per-vertex data beyond the base colour's coordinates (another
    /// coordinate set or its tangents).
    pub fn reads_surface_stream(&self) -> bool {
        self.maps != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: DVec3, b: DVec3, tolerance: f64) -> bool {
        (a - b).abs().max_element() <= tolerance
    }

    /// The constants are f32 (the shader's), so 0.04 is 0.04 to about 1e-9.
    const F32_CONSTANTS: f64 = 1e-8;

    #[test]
    fn pbr_neutral_shows_base_colours_as_they_are_below_the_start_of_compression() {
        // The curve takes away F90 = 0.04 (the specular a dielectric adds) and leaves the rest
        // alone while the peak is at most 0.8 − 0.04: colour c + 0.04 shows as c.
        for c in [
            DVec3::new(0.05, 0.3, 0.7),
            DVec3::splat(0.76),
            DVec3::new(0.76, 0.04, 0.5),
        ] {
            let shown = neutral(c + 0.04);
            assert!(close(shown, c, F32_CONSTANTS), "{c} → {shown}");
        }
        // Below 2·F90 the offset is x − x²/(4·F90): black stays black, 0.08 loses 0.04.
        assert_eq!(neutral(DVec3::ZERO), DVec3::ZERO);
        let dark = neutral(DVec3::new(0.02, 0.5, 0.5));
        // x = 0.02: offset 0.02 − 0.0004/0.16 = 0.0175.
        assert!(close(dark, DVec3::new(0.0025, 0.4825, 0.4825), F32_CONSTANTS), "{dark}");
        // Above: a grey of 2.0 (+ 0.04) has p = 2, p_n = 1 − 0.0576/1.48, g = 1/(0.15 (p − p_n) + 1),
        // and being grey comes out grey at p_n.
        let pn = 1.0 - 0.24 * 0.24 / (2.0 + 1.0 - 1.52);
        let grey = neutral(DVec3::splat(2.04));
        assert!(close(grey, DVec3::splat(pn), F32_CONSTANTS), "{grey} vs {pn}");
        // Never above 1, however bright.
        assert!(neutral(DVec3::new(1e6, 3.0, 0.0)).max_element() <= 1.0);
    }

    #[test]
    fn aces_is_the_published_fit() {
        // x = 1: (2.51 + 0.03) / (2.43 + 0.59 + 0.14).
        let one = aces(DVec3::ONE).x;
        assert!((one - 2.54 / 3.16).abs() < 1e-7, "{one}");
        assert_eq!(aces(DVec3::ZERO), DVec3::ZERO);
        assert_eq!(aces(DVec3::splat(1e4)), DVec3::ONE);
    }

    #[test]
    fn exposure_is_in_stops() {
        let plus_one = ToneOptions {
            curve: Tonemap::None,
            exposure: 1.0,
        };
        assert_eq!(tone_map(plus_one, DVec3::splat(0.25)), DVec3::splat(0.5));
        assert_eq!(tone_map(plus_one, DVec3::splat(0.75)), DVec3::ONE);
    }

    #[test]
    fn the_brdf_conserves_energy_and_reduces_to_lambert_for_a_rough_dielectric_face_on() {
        let n = DVec3::Y;
        // A white rough dielectric lit and seen straight on (h = n, v·h = 1: Fresnel is F0):
        // Lambert's 1/π less the 4% the specular layer takes, plus that layer: D = 1/(π α²) and
        // V = 0.5 / (2 √1) = 1/4 at n·l = n·v = 1; α = 1.
        let f = brdf(DVec3::ONE, 0.0, 1.0, &DielectricLayer::PLAIN, n, n, n);
        let expected = (1.0 - 0.04) / std::f64::consts::PI + 0.04 / std::f64::consts::PI * 0.25;
        assert!(close(f, DVec3::splat(expected), F32_CONSTANTS), "{f} vs {expected}");
        // The hemisphere's reflected share (∫ f cosθ dω, a midpoint sum over the hemisphere) of
        // a white metal stays below 1 at any roughness, near 1 when smooth, and falls as it
        // roughens: a single-scattering microfacet model loses the light that bounces between
        // microfacets (about 0.35 left at roughness 1, 37° off the normal).
        let mut last = 1.0;
        for roughness in [0.3, 0.5, 1.0] {
            let v = DVec3::new(0.6, 0.8, 0.0);
            let steps = 200;
            let mut total = 0.0;
            for i in 0..steps {
                for j in 0..steps {
                    let cos_theta = (i as f64 + 0.5) / steps as f64;
                    let phi = (j as f64 + 0.5) / steps as f64 * std::f64::consts::TAU;
                    let sin_theta = (1.0 - cos_theta * cos_theta).sqrt();
                    let l = DVec3::new(sin_theta * phi.cos(), cos_theta, sin_theta * phi.sin());
                    let f = brdf(DVec3::ONE, 1.0, roughness, &DielectricLayer::PLAIN, n, v, l).x;
                    total += f * cos_theta * (1.0 / steps as f64) * (std::f64::consts::TAU / steps as f64);
                }
            }
            assert!(total < last, "roughness {roughness}: albedo {total}, {last} smoother");
            assert!(
                total > if roughness < 0.4 { 0.9 } else { 0.3 },
                "roughness {roughness}: albedo {total}"
            );
            last = total;
        }
    }
}
