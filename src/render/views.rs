//! What the 3D view shows: the debug view mode, its options, and the skeleton overlay.
//!
//! The colors and scales of the debug views are defined here once: the UI uses the color
//! functions for legends and swatches, the tests to know what color a pixel must have, and the
//! mesh shader reads the same constants from the WGSL prelude `wgsl_prelude` writes from them.

use crate::render::gpu_data::wgsl_u32_constants;
use serde::{Deserialize, Serialize};

crate::names::named_enum! {
    /// Fragment coloring of the mesh. Named (`--view`, the settings file) as [`crate::names`] says;
    /// the discriminant is the mode's code in the mesh shader (`VIEW_*` in the WGSL prelude).
    #[strum(serialize_all = "kebab-case")]
    #[repr(u32)]
    pub enum ViewMode {
        /// Lit base color and texture.
        #[default]
        Shaded = 0,
        /// Weight of the selected joint as a heat map (0 dark blue → 1 red).
        Weights = 1,
        /// Each joint's color, blended by weight (or the dominant joint's).
        Joints = 2,
        /// Number of non-zero influences, 1 to 8.
        Influences = 3,
        /// |Σw − 1|: vertices whose weights do not sum to one (a mesh without a skin follows its
        /// node whole, so it counts as summing to one).
        WeightError = 4,
        /// World-space normals as colors.
        Normals = 5,
        /// How much each triangle is stretched or squashed relative to the bind pose (area ratio or
        /// edge stretch, by [`ViewOptions::deformation`]), live under every pose.
        Deformation = 6,
        /// How much each vertex's weights differ from its mirror image's; vertices with no mirror
        /// image in their own color.
        Symmetry = 7,
        /// With a comparison open: how much each vertex's weights differ from its matched
        /// vertex's in the other file (½ Σ|w − w′|, joints by name), on the symmetry view's
        /// ramp; vertices without a match in their own color.
        WeightDifference = 8,
        /// Each vertex's blend from linear (0, dark blue) to dual quaternion (1, red) skinning
        /// that the blended method uses: the file's, or the DQS mask's.
        DqsBlend = 9,
        /// With an engine chosen (View ▸ Engine): each vertex's distance between the engine's
        /// drawing and the file's own at the current pose, as a fraction of the rig's height,
        /// on the heat ramp up to [`ENGINE_DISTANCE_FULL_SCALE`]; 0 everywhere without one.
        EngineDistance = 10,
    }
}

impl ViewMode {
    pub fn label(self) -> &'static str {
        match self {
            ViewMode::Shaded => "Shaded",
            ViewMode::Weights => "Weights",
            ViewMode::Joints => "Joints",
            ViewMode::Influences => "Influence count",
            ViewMode::WeightError => "Weight-sum error",
            ViewMode::Normals => "Normals",
            ViewMode::Deformation => "Deformation",
            ViewMode::Symmetry => "Weight symmetry",
            ViewMode::WeightDifference => "Weight difference",
            ViewMode::DqsBlend => "DQS blend",
            ViewMode::EngineDistance => "Engine distance",
        }
    }

    /// The value of the mesh shader's `view_mode` constant.
    pub fn shader_code(self) -> u32 {
        self as u32
    }

    /// The name of the mode's code in the WGSL prelude: `VIEW_WEIGHT_ERROR` for `weight-error`.
    pub(crate) fn wgsl_constant(self) -> String {
        let name: &str = self.into();
        format!("VIEW_{}", name.to_uppercase().replace('-', "_"))
    }
}

crate::names::named_enum! {
    /// What the deformation view measures per triangle, posed against bind.
    #[strum(serialize_all = "kebab-case")]
    pub enum DeformationMeasure {
        /// Posed area / bind area.
        #[default]
        Area,
        /// The principal stretch farther from 1: the largest factor by which some direction in the
        /// triangle grew or shrank.
        Stretch,
    }
}

crate::names::named_enum! {
    /// Which axis of the surface frame the normals view colors.
    #[strum(serialize_all = "kebab-case")]
    pub enum SurfaceAxis {
        /// The shading normal.
        #[default]
        Normal,
        /// The tangent a normal map reads (grey where no normal map reads one).
        Tangent,
        /// The bitangent, cross(normal, tangent) × the tangent's sign.
        Bitangent,
    }
}

impl SurfaceAxis {
    fn is_normal(&self) -> bool {
        *self == SurfaceAxis::Normal
    }

    pub fn label(self) -> &'static str {
        match self {
            SurfaceAxis::Normal => "Normal",
            SurfaceAxis::Tangent => "Tangent",
            SurfaceAxis::Bitangent => "Bitangent",
        }
    }
}

impl DeformationMeasure {
    pub fn label(self) -> &'static str {
        match self {
            DeformationMeasure::Area => "Area ratio",
            DeformationMeasure::Stretch => "Edge stretch",
        }
    }
}

/// Skeleton overlay options. In the settings file they are the view table's `skeleton`,
/// `skeleton_depth_test`, `joint_names` and `joint_axes`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SkeletonOptions {
    #[serde(rename = "skeleton")]
    pub show: bool,
    /// Hide bones behind the mesh (off: draw on top).
    #[serde(rename = "skeleton_depth_test")]
    pub depth_test: bool,
    #[serde(rename = "joint_names")]
    pub names: bool,
    #[serde(rename = "joint_axes")]
    pub axes: bool,
}

impl Default for SkeletonOptions {
    fn default() -> Self {
        SkeletonOptions {
            show: true,
            depth_test: false,
            names: false,
            axes: false,
        }
    }
}

/// Options of the 3D view; the settings file's view table (missing fields take their defaults,
/// unknown names of the mode or measure read as the default one).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ViewOptions {
    #[serde(deserialize_with = "crate::names::or_default")]
    pub mode: ViewMode,
    pub grid: bool,
    /// In the weights view, draw weight exactly 0 in grey, apart from tiny weights.
    pub zero_distinct: bool,
    /// In the joints view, color each vertex by its strongest joint only.
    pub dominant_joint: bool,
    #[serde(deserialize_with = "crate::names::or_default")]
    pub deformation: DeformationMeasure,
    /// Which axis of the surface frame the normals view colors (kept only when not the normal).
    #[serde(
        deserialize_with = "crate::names::or_default",
        skip_serializing_if = "SurfaceAxis::is_normal"
    )]
    pub surface_axis: SurfaceAxis,
    pub wireframe: bool,
    #[serde(flatten)]
    pub skeleton: SkeletonOptions,
    /// The onion skin (kept only when changed from its defaults).
    #[serde(skip_serializing_if = "crate::anim::GhostOptions::is_default")]
    pub ghosts: crate::anim::GhostOptions,
    /// Draw the skeleton in its bind pose over the current pose (kept only when on).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bind_skeleton: bool,
    /// The shaded view's tone curve and exposure (kept only when changed from the defaults).
    #[serde(skip_serializing_if = "crate::render::pbr::ToneOptions::is_default")]
    pub tone: crate::render::pbr::ToneOptions,
    /// What lights the shaded view: the environment map or the directional light (kept only
    /// when not the default).
    #[serde(
        deserialize_with = "crate::names::or_default",
        skip_serializing_if = "crate::render::environment::Lighting::is_default"
    )]
    pub light: crate::render::environment::Lighting,
    /// Clear to transparent black instead of the background color, so that an image's alpha is
    /// the scene's coverage (`render --transparent`; never saved).
    #[serde(skip)]
    pub transparent: bool,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            mode: ViewMode::Shaded,
            grid: true,
            zero_distinct: true,
            dominant_joint: false,
            deformation: DeformationMeasure::Area,
            surface_axis: SurfaceAxis::Normal,
            wireframe: false,
            skeleton: SkeletonOptions::default(),
            ghosts: crate::anim::GhostOptions::default(),
            bind_skeleton: false,
            tone: crate::render::pbr::ToneOptions::default(),
            light: crate::render::environment::Lighting::Environment,
            transparent: false,
        }
    }
}

/// The view flags of the mesh shader's frame uniform (`FLAG_*` in the WGSL prelude).
const FLAG_ZERO_DISTINCT: u32 = 1;
const FLAG_DOMINANT_JOINT: u32 = 2;
const FLAG_STRETCH: u32 = 4;
const FLAG_TANGENT: u32 = 8;
const FLAG_BITANGENT: u32 = 16;

impl ViewOptions {
    pub(crate) fn shader_flags(&self) -> u32 {
        let flag = |on: bool, flag: u32| if on { flag } else { 0 };
        flag(self.zero_distinct, FLAG_ZERO_DISTINCT)
            | flag(self.dominant_joint, FLAG_DOMINANT_JOINT)
            | flag(self.deformation == DeformationMeasure::Stretch, FLAG_STRETCH)
            | flag(self.surface_axis == SurfaceAxis::Tangent, FLAG_TANGENT)
            | flag(self.surface_axis == SurfaceAxis::Bitangent, FLAG_BITANGENT)
    }
}

/// The weights view's ramp: dark blue (0) → blue → green → yellow → red (1), stops evenly
/// spaced.
pub const HEAT_STOPS: [[f32; 3]; 5] = [
    [0.0, 0.0, 0.5],
    [0.0, 0.35, 1.0],
    [0.0, 0.85, 0.35],
    [1.0, 0.9, 0.0],
    [1.0, 0.0, 0.0],
];

/// Color of weight `t` in the weights view: linear between the [`HEAT_STOPS`].
pub fn heat(t: f32) -> [f32; 3] {
    ramp(&HEAT_STOPS, t)
}

/// The color at `t` (0 to 1) of a ramp linear between evenly spaced `stops`.
fn ramp(stops: &[[f32; 3]], t: f32) -> [f32; 3] {
    let segments = stops.len() - 1;
    let x = t.clamp(0.0, 1.0) * segments as f32;
    let i = (x as usize).min(segments - 1);
    let f = x - i as f32;
    std::array::from_fn(|c| stops[i][c] + (stops[i + 1][c] - stops[i][c]) * f)
}

/// The weight-sum error view's ramp: green where the weights sum to 1, through yellow, to
/// magenta at [`WEIGHT_ERROR_FULL_SCALE`].
pub const WEIGHT_ERROR_STOPS: [[f32; 3]; 3] = [[0.2, 0.8, 0.3], [1.0, 0.9, 0.1], [1.0, 0.1, 0.9]];

/// The error |Σw − 1| drawn magenta, and the error below which weights count as summing to 1.
pub const WEIGHT_ERROR_FULL_SCALE: f32 = 0.1;
pub const WEIGHT_ERROR_TOLERANCE: f32 = 1e-4;

/// Color of a weight-sum error |Σw − 1| in the weight-sum error view. Linear RGB.
pub fn weight_error_color(error: f32) -> [f32; 3] {
    if error < WEIGHT_ERROR_TOLERANCE {
        WEIGHT_ERROR_STOPS[0]
    } else {
        ramp(&WEIGHT_ERROR_STOPS, error / WEIGHT_ERROR_FULL_SCALE)
    }
}

/// The weights view's color for a weight of exactly 0 (with [`ViewOptions::zero_distinct`]).
pub const ZERO_WEIGHT_COLOR: [f32; 3] = [0.08, 0.08, 0.1];

/// The color of "nothing to show here": a triangle too thin to measure in the deformation view,
/// a vertex not compared in the symmetry view.
pub const NO_VALUE_COLOR: [f32; 3] = [0.35, 0.35, 0.38];

/// The factor the deformation view's ramp spans each way: a ratio of 1/4 is drawn dark blue, 1
/// green, 4 red.
pub const DEFORMATION_RANGE: f32 = 4.0;

/// Color of a deformation ratio (area ratio or stretch, posed over bind): [`heat`] of its
/// logarithm, so that halving and doubling lie equally far either side of green.
pub fn deformation_color(ratio: f32) -> [f32; 3] {
    heat(0.5 + 0.5 * ratio.max(f32::MIN_POSITIVE).log2() / DEFORMATION_RANGE.log2())
}

/// The deformation view's color for a triangle turned inside out (its posed normal on the
/// other side of its vertices' skinned normals from where its bind one is), over any ratio.
pub const FLIPPED_COLOR: [f32; 3] = [1.0, 0.0, 1.0];

/// Weight difference at which the symmetry view turns red (0: the same weights as the mirror
/// image, 1: no joint in common).
pub const SYMMETRY_FULL_SCALE: f32 = 0.5;

/// The symmetry view's markers for a vertex with no vertex at its mirror image and for one not
/// compared.
pub const SYMMETRY_UNMATCHED: f32 = crate::audit::VertexSymmetry::UNMATCHED;
pub const SYMMETRY_UNCHECKED: f32 = crate::audit::VertexSymmetry::UNCHECKED;

/// The symmetry view's color for a vertex with no vertex at its mirror image.
pub const SYMMETRY_UNMATCHED_COLOR: [f32; 3] = [1.0, 0.2, 0.9];

/// Color of the symmetry view for a vertex's value (a weight difference, or one of the
/// `SYMMETRY_*` markers). Values between a marker and a difference (inside a triangle joining
/// them) take the nearest. Linear RGB.
pub fn symmetry_color(value: f32) -> [f32; 3] {
    if value < 0.5 * (SYMMETRY_UNCHECKED + SYMMETRY_UNMATCHED) {
        NO_VALUE_COLOR
    } else if value < 0.5 * SYMMETRY_UNMATCHED {
        SYMMETRY_UNMATCHED_COLOR
    } else {
        heat(value / SYMMETRY_FULL_SCALE)
    }
}

/// The distance from the file's drawing, as a fraction of the rig's height, that the engine
/// distance view draws red: a hundredth of the height, where a misplaced vertex is plain to see.
pub const ENGINE_DISTANCE_FULL_SCALE: f32 = 1e-2;

/// Color of a vertex drawn `fraction` of the rig's height from the file's drawing in the engine
/// distance view: [`heat`] up to [`ENGINE_DISTANCE_FULL_SCALE`]. Linear RGB.
pub fn engine_distance_color(fraction: f32) -> [f32; 3] {
    heat(fraction / ENGINE_DISTANCE_FULL_SCALE)
}

/// Joint colors are hues this far apart (the golden ratio's fraction, so that neighbours
/// differ clearly however many joints there are), at this saturation and value.
const JOINT_HUE_STEP: f32 = 0.618_034;
const JOINT_SATURATION: f32 = 0.7;
const JOINT_VALUE: f32 = 0.95;

/// The distinct, stable color of joint `joint`. Linear RGB.
pub fn joint_color(joint: u32) -> [f32; 3] {
    let hue = (joint as f32 * JOINT_HUE_STEP).fract();
    std::array::from_fn(|c| {
        let k = [5.0, 3.0, 1.0][c];
        let p = ((hue + k / 6.0).fract() * 6.0 - 3.0).abs();
        JOINT_VALUE * (1.0 + ((p - 1.0).clamp(0.0, 1.0) - 1.0) * JOINT_SATURATION)
    })
}

/// The influence-count view's colors, by count (0 to 8).
pub const INFLUENCE_COLORS: [[f32; 3]; 9] = [
    [0.15, 0.15, 0.15],
    [0.2, 0.4, 1.0],
    [0.1, 0.8, 0.9],
    [0.2, 0.85, 0.3],
    [0.95, 0.9, 0.2],
    [1.0, 0.55, 0.1],
    [1.0, 0.2, 0.15],
    [0.9, 0.2, 0.8],
    [1.0, 1.0, 1.0],
];

/// Color of influence count `n` (1 to 8) in the influence-count view. Linear RGB.
pub fn influence_color(n: u32) -> [f32; 3] {
    INFLUENCE_COLORS[(n as usize).min(INFLUENCE_COLORS.len() - 1)]
}

/// The ramp functions of the mesh shader (`heat`, `weight_error_color`, `joint_color`,
/// `count_color`, `deformation_color`, `symmetry_color`, `engine_distance_color`), written against the constants of [`wgsl_prelude`].
pub(crate) const RAMPS_WGSL: &str = include_str!("../../shaders/ramps.wgsl");

/// The WGSL declaration of every rule above that the mesh shader needs (view mode codes, view
/// flags, ramp stops, colors, scales and markers), written from the Rust values so that the
/// shader and the CPU cannot disagree. Composed before [`RAMPS_WGSL`].
pub(crate) fn wgsl_prelude() -> String {
    fn float(v: f32) -> String {
        // `{:?}` is the shortest text that reads back as the same f32; the suffix makes WGSL
        // read it as an f32 directly.
        format!("{v:?}f")
    }
    fn color(c: [f32; 3]) -> String {
        format!("vec3<f32>({}, {}, {})", float(c[0]), float(c[1]), float(c[2]))
    }
    fn colors(name: &str, list: &[[f32; 3]]) -> String {
        let items: Vec<String> = list.iter().map(|&c| color(c)).collect();
        let n = list.len();
        format!(
            "const {name}_COUNT: u32 = {n}u;\nconst {name} = array<vec3<f32>, {n}>({});\n",
            items.join(", ")
        )
    }
    let modes: Vec<(String, u32)> = <ViewMode as strum::VariantArray>::VARIANTS
        .iter()
        .map(|&mode| (mode.wgsl_constant(), mode.shader_code()))
        .collect();
    let modes: Vec<(&str, u32)> = modes.iter().map(|(name, code)| (name.as_str(), *code)).collect();
    let mut out = String::from("// Written by render::views::wgsl_prelude from the Rust constants.\n");
    out += &wgsl_u32_constants(&modes);
    out += &wgsl_u32_constants(&[
        ("FLAG_ZERO_DISTINCT", FLAG_ZERO_DISTINCT),
        ("FLAG_DOMINANT_JOINT", FLAG_DOMINANT_JOINT),
        ("FLAG_STRETCH", FLAG_STRETCH),
        ("FLAG_TANGENT", FLAG_TANGENT),
        ("FLAG_BITANGENT", FLAG_BITANGENT),
    ]);
    for (name, value) in [
        ("WEIGHT_ERROR_FULL_SCALE", WEIGHT_ERROR_FULL_SCALE),
        ("WEIGHT_ERROR_TOLERANCE", WEIGHT_ERROR_TOLERANCE),
        ("DEFORMATION_RANGE", DEFORMATION_RANGE),
        ("SYMMETRY_FULL_SCALE", SYMMETRY_FULL_SCALE),
        ("ENGINE_DISTANCE_FULL_SCALE", ENGINE_DISTANCE_FULL_SCALE),
        ("SYMMETRY_UNMATCHED", SYMMETRY_UNMATCHED),
        ("SYMMETRY_UNCHECKED", SYMMETRY_UNCHECKED),
        ("JOINT_HUE_STEP", JOINT_HUE_STEP),
        ("JOINT_SATURATION", JOINT_SATURATION),
        ("JOINT_VALUE", JOINT_VALUE),
    ] {
        out += &format!("const {name}: f32 = {};\n", float(value));
    }
    for (name, value) in [
        ("ZERO_WEIGHT_COLOR", ZERO_WEIGHT_COLOR),
        ("NO_VALUE_COLOR", NO_VALUE_COLOR),
        ("FLIPPED_COLOR", FLIPPED_COLOR),
        ("SYMMETRY_UNMATCHED_COLOR", SYMMETRY_UNMATCHED_COLOR),
    ] {
        out += &format!("const {name}: vec3<f32> = {};\n", color(value));
    }
    out += &colors("HEAT_STOPS", &HEAT_STOPS);
    out += &colors("WEIGHT_ERROR_STOPS", &WEIGHT_ERROR_STOPS);
    out += &colors("INFLUENCE_COLORS", &INFLUENCE_COLORS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_mode_codes_number_the_modes_from_zero() {
        let mut codes: Vec<u32> = <ViewMode as strum::VariantArray>::VARIANTS
            .iter()
            .map(|m| m.shader_code())
            .collect();
        codes.sort_unstable();
        let contiguous: Vec<u32> = (0..codes.len() as u32).collect();
        assert_eq!(codes, contiguous);
    }

    #[test]
    fn heat_runs_from_dark_blue_to_red() {
        assert_eq!(heat(0.0), [0.0, 0.0, 0.5]);
        assert_eq!(heat(1.0), [1.0, 0.0, 0.0]);
        assert_eq!(heat(0.5), [0.0, 0.85, 0.35]);
        let mid = heat(0.125);
        assert!((mid[1] - 0.175).abs() < 1e-6 && (mid[2] - 0.75).abs() < 1e-6);
    }

    #[test]
    fn weight_error_runs_from_green_through_yellow_to_magenta() {
        let cases = [
            (0.0, [0.2, 0.8, 0.3]),
            (0.5e-4, [0.2, 0.8, 0.3]),
            (0.025, [0.6, 0.85, 0.2]),
            (0.05, [1.0, 0.9, 0.1]),
            (0.1, [1.0, 0.1, 0.9]),
            (3.0, [1.0, 0.1, 0.9]),
        ];
        for (error, expected) in cases {
            let color = weight_error_color(error);
            let close = color.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-6);
            assert!(close, "{error}: {color:?} instead of {expected:?}");
        }
    }

    #[test]
    fn deformation_ramp_is_symmetric_in_the_logarithm() {
        assert_eq!(deformation_color(1.0), heat(0.5));
        assert_eq!(deformation_color(DEFORMATION_RANGE), heat(1.0));
        assert_eq!(deformation_color(1.0 / DEFORMATION_RANGE), heat(0.0));
        assert_eq!(deformation_color(2.0), heat(0.75));
        assert_eq!(deformation_color(0.5), heat(0.25));
        assert_eq!(deformation_color(0.0), heat(0.0));
    }

    #[test]
    fn neighbouring_joints_get_clearly_different_colors() {
        for j in 0..64 {
            let (a, b) = (joint_color(j), joint_color(j + 1));
            let distance: f32 = a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum();
            assert!(distance > 0.3, "joints {j} and {} look alike: {a:?} {b:?}", j + 1);
        }
    }
}
