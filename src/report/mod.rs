//! The rig report: what a file contains (skins, meshes, clips, materials) and what is wrong with
//! it, as findings with a severity, each pointing at the nodes and vertices concerned.
//!
//! [`RigReport::new`] is a pure function of a [`Rig`] (including the raw facts the importer
//! kept in [`Rig::facts`]); every check is linear in the size of the rig.

mod analysis;
mod clip_checks;
mod measures;
mod mesh_checks;
mod output;
mod skin_checks;

use crate::anim::sample_channel;
use crate::rig::{Influences, Interpolation, PrimitiveFacts, Property, Rig, Trs};
use analysis::{Analysis, PrimitiveView, VertexSet};
use glam::{Mat3, Mat4, Quat, Vec3, Vec4Swizzles};
use measures::*;
use serde_json::{Value, json};

pub use output::node_label;
use output::{describe_deviation, node_list};

/// How many vertex indices a finding keeps (the count is always exact).
pub const MAX_LISTED_VERTICES: usize = 1000;
/// How many node names a finding message spells out.
const NAMED_NODES: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; nothing is wrong.
    Info,
    /// Suspicious or against the glTF specification, with a small or local effect.
    Warning,
    /// Renders wrongly or breaks the specification in a way that matters.
    Error,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Vertices of one primitive that a finding is about.
#[derive(Debug, Clone, PartialEq)]
pub struct VertexList {
    pub mesh: usize,
    /// Index into `Mesh::primitives`; `None` for a primitive that is not drawn.
    pub primitive: Option<usize>,
    /// The primitive's index in the file.
    pub gltf_primitive: usize,
    /// At most [`MAX_LISTED_VERTICES`] vertex indices, ascending.
    pub vertices: Vec<u32>,
    /// How many vertices the finding is about in all.
    pub total: usize,
}

/// What kind of thing a finding is about. Its kebab-case name (`weights-not-normalized`) is
/// stable: the text and JSON outputs print it and pipelines may match on it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::IntoStaticStr, strum::EnumString, strum::Display,
)]
#[strum(serialize_all = "kebab-case")]
pub enum FindingCode {
    BindPoseScaleShear,
    ChannelLeftOut,
    ChannelNotPlayed,
    ChannelTargetsNonJoint,
    ClipEmpty,
    ClipZeroDuration,
    FbxBindPoseInconsistent,
    FbxBindPoseMissing,
    FbxClusterNotBone,
    FbxInheritedScale,
    #[strum(serialize = "fbx-influences-over-8")]
    FbxInfluencesOver8,
    FbxSourceSystem,
    FbxTextureNotFound,
    FileData,
    FirstFrameNotBindPose,
    Import,
    ImportNote,
    #[strum(serialize = "influences-over-4")]
    InfluencesOver4,
    #[strum(serialize = "influences-over-8")]
    InfluencesOver8,
    InfluencesUnpaired,
    InverseBindNotAffine,
    InverseBindNotInvertible,
    JointIndexOutsideSkin,
    JointIndexOutsideSkinUnweighted,
    JointsDuplicate,
    JointsUnused,
    KeysCubicOvershoot,
    KeysJump,
    KeysNegativeTime,
    KeysNotIncreasing,
    MirrorUnmatched,
    NoMesh,
    NodeMatrixNotTrs,
    PositionsNotFinite,
    PrimitiveNotDrawn,
    QuaternionHemisphereFlip,
    QuaternionNotUnit,
    QuaternionZero,
    ReportIncomplete,
    SkinJointRepeated,
    SkinNoCommonRoot,
    SkinSkeletonNotRoot,
    SkinUnused,
    SkinWithoutWeights,
    SkinnedMeshIsJoint,
    SkinnedMeshTransform,
    WeightsAllZero,
    WeightsAsymmetric,
    WeightsNegative,
    WeightsNotFinite,
    WeightsNotNormalized,
    WeightsWithoutSkin,
}

impl FindingCode {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl PartialEq<&str> for FindingCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub severity: Severity,
    pub code: FindingCode,
    pub message: String,
    /// Rig nodes concerned, most relevant first (a joint, the node holding a mesh, a target).
    pub nodes: Vec<usize>,
    pub vertices: Option<VertexList>,
    pub clip: Option<usize>,
}

impl Finding {
    fn new(severity: Severity, code: FindingCode, message: String) -> Finding {
        Finding {
            severity,
            code,
            message,
            nodes: Vec::new(),
            vertices: None,
            clip: None,
        }
    }

    fn nodes(mut self, nodes: impl IntoIterator<Item = usize>) -> Finding {
        self.nodes = nodes.into_iter().collect();
        self
    }

    fn vertices(mut self, vertices: VertexList) -> Finding {
        self.vertices = Some(vertices);
        self
    }

    fn clip(mut self, clip: usize) -> Finding {
        self.clip = Some(clip);
        self
    }

    /// The joint (node) to select when the finding is picked.
    pub fn node(&self) -> Option<usize> {
        self.nodes.first().copied()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SkinSummary {
    pub name: String,
    pub joints: usize,
    /// The deepest node that is an ancestor of (or is) every joint; `None` when the joints do
    /// not share one hierarchy.
    pub root: Option<usize>,
    /// The `skeleton` node the file names, if any.
    pub skeleton: Option<usize>,
    /// Whether all joints hang under one root node.
    pub shared_hierarchy: bool,
    /// Mesh instances drawn with this skin.
    pub instances: usize,
    /// Joints with a non-zero weight on at least one vertex of a mesh drawn with this skin.
    pub joints_used: usize,
    /// Largest distance between a joint in the rest pose and in the bind pose, in the units of
    /// the mesh, and the joint; `None` when no mesh uses the skin.
    pub rest_vs_bind: Option<Deviation>,
}

/// How far a pose is from the bind pose: the joint that moved most and by how much.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deviation {
    /// Largest joint displacement, in mesh units.
    pub distance: f32,
    /// `distance` relative to the size of the rig in the bind pose (its bounding box diagonal).
    pub relative: f32,
    /// The joint (rig node) that moved most.
    pub joint: usize,
    /// Largest joint rotation away from the bind pose, in degrees, and the joint.
    pub degrees: f32,
    pub rotated_joint: usize,
}

impl Deviation {
    /// Whether the pose is the bind pose, within rounding.
    pub fn is_bind_pose(&self) -> bool {
        self.relative <= 1e-3 && self.degrees <= 0.5
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PrimitiveSummary {
    /// Index in `Mesh::primitives`; `None` when the primitive is not drawn.
    pub primitive: Option<usize>,
    pub gltf_index: usize,
    /// glTF mode: 4 for triangles.
    pub mode: u32,
    pub vertices: usize,
    pub triangles: usize,
    /// Joint/weight sets kept (0 = not skinned, 1 = four influences, 2 = eight).
    pub influence_sets: usize,
    /// Non-zero influences per vertex: the most on one vertex and the mean.
    pub influences_max: usize,
    pub influences_mean: f32,
    pub material: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MeshSummary {
    pub name: String,
    /// Nodes that draw the mesh.
    pub instances: usize,
    pub primitives: Vec<PrimitiveSummary>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClipSummary {
    pub name: String,
    pub duration: f32,
    pub channels: usize,
    /// Interpolation modes used, in the order STEP, LINEAR, CUBICSPLINE.
    pub interpolations: Vec<&'static str>,
    pub animated_nodes: usize,
    /// The clip's first frame against the bind pose, for the first skinned mesh instance.
    pub first_frame_vs_bind: Option<Deviation>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MaterialSummary {
    pub name: String,
    pub base_color: [f32; 4],
    pub base_color_texture: Option<usize>,
    pub double_sided: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TextureSummary {
    pub name: String,
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RigReport {
    pub name: String,
    pub nodes: usize,
    pub skins: Vec<SkinSummary>,
    pub meshes: Vec<MeshSummary>,
    pub clips: Vec<ClipSummary>,
    pub materials: Vec<MaterialSummary>,
    pub textures: Vec<TextureSummary>,
    /// Most severe first.
    pub findings: Vec<Finding>,
    /// Time taken to compute the report, in seconds.
    pub seconds: f64,
}

/// Limits of the report's checks that a user can set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReportLimits {
    /// A rotation turning more than this many degrees within one frame is a `keys-jump`.
    pub keys_jump_degrees: f32,
}

impl Default for ReportLimits {
    fn default() -> Self {
        ReportLimits {
            keys_jump_degrees: crate::motion::curves::KEY_JUMP_DEGREES,
        }
    }
}

impl RigReport {
    pub fn new(rig: &Rig) -> RigReport {
        RigReport::with_limits(rig, ReportLimits::default())
    }

    pub fn with_limits(rig: &Rig, limits: ReportLimits) -> RigReport {
        let started = std::time::Instant::now();
        let mut analysis = Analysis::new(rig);
        analysis.limits = limits;
        let mut report = analysis.run();
        report.seconds = started.elapsed().as_secs_f64();
        report
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == severity).count()
    }

    pub fn has_errors(&self) -> bool {
        self.count(Severity::Error) > 0
    }
}
