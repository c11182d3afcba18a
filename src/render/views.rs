//! What the 3D view shows: the debug view mode, its options, and the skeleton overlay.
//!
//! The color functions here mirror those in `shaders/mesh.wgsl` (one per language); the UI uses
//! them for legends and swatches, the tests to know what color a pixel must have.

/// Fragment coloring of the mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ViewMode {
    /// Lit base color and texture.
    #[default]
    Shaded,
    /// Weight of the selected joint as a heat map (0 dark blue → 1 red).
    Weights,
    /// Each joint's color, blended by weight (or the dominant joint's).
    Joints,
    /// Number of non-zero influences, 1 to 8.
    Influences,
    /// |Σw − 1|: vertices whose weights do not sum to one.
    WeightError,
    /// World-space normals as colors.
    Normals,
    /// How much each triangle is stretched or squashed relative to the bind pose (area ratio or
    /// edge stretch, by [`ViewOptions::deformation`]), live under every pose.
    Deformation,
    /// How much each vertex's weights differ from its mirror image's; vertices with no mirror
    /// image in their own color.
    Symmetry,
}

impl ViewMode {
    pub const ALL: [ViewMode; 8] = [
        ViewMode::Shaded,
        ViewMode::Weights,
        ViewMode::Joints,
        ViewMode::Influences,
        ViewMode::WeightError,
        ViewMode::Normals,
        ViewMode::Deformation,
        ViewMode::Symmetry,
    ];

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
        }
    }

    /// Name used on the command line (`--view`).
    pub fn cli_name(self) -> &'static str {
        match self {
            ViewMode::Shaded => "shaded",
            ViewMode::Weights => "weights",
            ViewMode::Joints => "joints",
            ViewMode::Influences => "influences",
            ViewMode::WeightError => "weight-error",
            ViewMode::Normals => "normals",
            ViewMode::Deformation => "deformation",
            ViewMode::Symmetry => "symmetry",
        }
    }

    pub fn from_cli_name(name: &str) -> Option<ViewMode> {
        Self::ALL.into_iter().find(|m| m.cli_name() == name)
    }

    /// The value of the mesh shader's `view_mode` constant.
    pub fn shader_code(self) -> u32 {
        Self::ALL.iter().position(|&m| m == self).unwrap_or(0) as u32
    }
}

/// What the deformation view measures per triangle, posed against bind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeformationMeasure {
    /// Posed area / bind area.
    #[default]
    Area,
    /// The principal stretch farther from 1: the largest factor by which some direction in the
    /// triangle grew or shrank.
    Stretch,
}

impl DeformationMeasure {
    pub const ALL: [DeformationMeasure; 2] = [DeformationMeasure::Area, DeformationMeasure::Stretch];

    pub fn label(self) -> &'static str {
        match self {
            DeformationMeasure::Area => "Area ratio",
            DeformationMeasure::Stretch => "Edge stretch",
        }
    }

    /// Name in the settings file and on the command line.
    pub fn cli_name(self) -> &'static str {
        match self {
            DeformationMeasure::Area => "area",
            DeformationMeasure::Stretch => "stretch",
        }
    }

    pub fn from_cli_name(name: &str) -> Option<DeformationMeasure> {
        Self::ALL.into_iter().find(|m| m.cli_name() == name)
    }
}

/// Skeleton overlay options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkeletonOptions {
    pub show: bool,
    /// Hide bones behind the mesh (off: draw on top).
    pub depth_test: bool,
    pub names: bool,
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

/// Options of the 3D view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewOptions {
    pub grid: bool,
    pub mode: ViewMode,
    /// In the weights view, draw weight exactly 0 in grey, apart from tiny weights.
    pub zero_distinct: bool,
    /// In the joints view, color each vertex by its strongest joint only.
    pub dominant_joint: bool,
    pub deformation: DeformationMeasure,
    pub skeleton: SkeletonOptions,
    pub wireframe: bool,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            grid: true,
            mode: ViewMode::Shaded,
            zero_distinct: true,
            dominant_joint: false,
            deformation: DeformationMeasure::Area,
            skeleton: SkeletonOptions::default(),
            wireframe: false,
        }
    }
}

impl ViewOptions {
    pub(crate) fn shader_flags(&self) -> u32 {
        u32::from(self.zero_distinct)
            | (u32::from(self.dominant_joint) << 1)
            | (u32::from(self.deformation == DeformationMeasure::Stretch) << 2)
    }
}

/// Color of weight `t` in the weights view: linear between five stops a quarter apart, as in
/// `mesh.wgsl`'s `heat`.
pub fn heat(t: f32) -> [f32; 3] {
    const STOPS: [[f32; 3]; 5] = [
        [0.0, 0.0, 0.5],
        [0.0, 0.35, 1.0],
        [0.0, 0.85, 0.35],
        [1.0, 0.9, 0.0],
        [1.0, 0.0, 0.0],
    ];
    let x = t.clamp(0.0, 1.0) * 4.0;
    let i = (x as usize).min(3);
    let f = x - i as f32;
    std::array::from_fn(|c| STOPS[i][c] + (STOPS[i + 1][c] - STOPS[i][c]) * f)
}

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

/// Color of the symmetry view for a vertex's value (a weight difference, or one of the
/// `SYMMETRY_*` markers), as in `mesh.wgsl`'s `symmetry_color`. Values between a marker and a
/// difference (inside a triangle joining them) take the nearest. Linear RGB.
pub fn symmetry_color(value: f32) -> [f32; 3] {
    if value < 0.5 * (SYMMETRY_UNCHECKED + SYMMETRY_UNMATCHED) {
        [0.35, 0.35, 0.38]
    } else if value < 0.5 * SYMMETRY_UNMATCHED {
        [1.0, 0.2, 0.9]
    } else {
        heat(value / SYMMETRY_FULL_SCALE)
    }
}

/// The distinct, stable color of joint `joint` (hues spaced by the golden ratio), as in
/// `mesh.wgsl`'s `joint_color`. Linear RGB.
pub fn joint_color(joint: u32) -> [f32; 3] {
    let hue = (joint as f32 * 0.618_034).fract();
    std::array::from_fn(|c| {
        let k = [5.0, 3.0, 1.0][c];
        let p = ((hue + k / 6.0).fract() * 6.0 - 3.0).abs();
        0.95 * (1.0 + ((p - 1.0).clamp(0.0, 1.0) - 1.0) * 0.7)
    })
}

/// Color of influence count `n` (1 to 8) in the influence-count view, as in `mesh.wgsl`'s
/// `count_color`. Linear RGB.
pub fn influence_color(n: u32) -> [f32; 3] {
    const COLORS: [[f32; 3]; 9] = [
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
    COLORS[n.min(8) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_runs_from_dark_blue_to_red() {
        assert_eq!(heat(0.0), [0.0, 0.0, 0.5]);
        assert_eq!(heat(1.0), [1.0, 0.0, 0.0]);
        assert_eq!(heat(0.5), [0.0, 0.85, 0.35]);
        let mid = heat(0.125);
        assert!((mid[1] - 0.175).abs() < 1e-6 && (mid[2] - 0.75).abs() < 1e-6);
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
