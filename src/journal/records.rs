//! What one journal record holds: an edit of a document as data, made again on restore through
//! the code path that made it first.
//!
//! These are the journal's own types, not the viewer's: what a file on disk holds must not
//! change when a struct of the viewer does. Floats are kept as their bits ([`Exact`]), so that
//! a restored document is the one journaled bit for bit (JSON numbers would lose NaN payloads
//! and could not hold infinities at all).

use crate::repair::RepairOptions;
use crate::retarget::JointMap;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// An `f32` written as its bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Exact(pub u32);

impl Exact {
    pub fn of(value: f32) -> Exact {
        Exact(value.to_bits())
    }

    pub fn get(self) -> f32 {
        f32::from_bits(self.0)
    }
}

/// Three or four floats (a vector, a quaternion) as bits.
pub fn exact<const N: usize>(values: [f32; N]) -> [Exact; N] {
    values.map(Exact::of)
}

/// Floats back from their bits.
pub fn floats<const N: usize>(values: [Exact; N]) -> [f32; N] {
    values.map(Exact::get)
}

/// One record after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Entry {
    /// A clip edit made: one step of the history.
    Clip(ClipRecord),
    /// A weight repair applied with these options: one step.
    Repair(RepairOptions),
    /// A pose edit began: a step whose state before is the pose as it is.
    PoseStep {
        label: String,
    },
    /// The pose as it is now, after the changes made since the record before.
    Pose(PoseRecord),
    Undo,
    Redo,
    /// The repair preview ended without the repair: its step is not left to redo.
    EndRepairPreview,
}

/// A clip edit (see `viewer::ClipEdit`); clips named by their index at the time of the edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum ClipRecord {
    Rename {
        clip: usize,
        name: String,
    },
    Trim {
        clip: usize,
        start: Exact,
        end: Exact,
    },
    InPlace {
        clip: usize,
    },
    Resample {
        clip: usize,
        rate: Exact,
    },
    Drop {
        clip: usize,
    },
    LockFeet {
        clip: usize,
    },
    AddPose {
        clip: usize,
        name: String,
        pose: Vec<(usize, TrsRecord)>,
    },
    /// A clip file's clips carried onto the rig and added.
    AddCarried(CarryRecord),
    /// A clip file's clips carried again (other joint pairs) in place of those carried before.
    Recarry(CarryRecord),
}

/// How a clip file's clips were carried: enough to carry them again, the same way, from the
/// file (clips are megabytes; these are a few lines).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CarryRecord {
    pub file: PathBuf,
    /// The joint pairs set by hand that carrying used (the kept map and the command line's).
    pub map: JointMap,
    pub in_place: bool,
    pub resample_rate: Exact,
    /// The clip file's length and modification time then, to tell whether it changed since.
    pub len: Option<u64>,
    pub modified_ns: Option<u64>,
}

/// A node's local transform.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrsRecord {
    pub translation: [Exact; 3],
    pub rotation: [Exact; 4],
    pub scale: [Exact; 3],
}

/// The pose a pose edit leaves: bends, morph weights set by hand, IK goals, the look-at and the
/// Layers panel's part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseRecord {
    /// The rig's node count: every other node has no bend.
    pub nodes: usize,
    /// The nodes with a bend, in node order.
    pub bends: Vec<(usize, BendRecord)>,
    /// Per mesh instance, per morph target: the weight set by hand, if any.
    pub morph_weights: Vec<Vec<Option<Exact>>>,
    pub ik_goals: Vec<IkGoalRecord>,
    pub look_at: Option<LookAtRecord>,
    /// Written only when it holds something, so that a pose without it reads and writes as
    /// format 1 did before the Layers panel's part was journaled.
    #[serde(default, skip_serializing_if = "StackRecord::is_empty")]
    pub stack: StackRecord,
}

/// The Layers panel's part of a pose: the layers, the crossfade, the root lock, the attachments
/// and the foot lock (the root's trails only draw, and stay out).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackRecord {
    pub layers: Vec<LayerRecord>,
    pub crossfade_seconds: Exact,
    pub root_lock: bool,
    pub attachments: Vec<AttachmentRecord>,
    pub lock_feet: bool,
}

impl StackRecord {
    pub fn is_empty(&self) -> bool {
        *self == StackRecord::default()
    }
}

/// A clip layer (see `anim::Layer`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerRecord {
    pub clip: usize,
    pub weight: Exact,
    pub speed: Exact,
    pub time_offset: Exact,
    pub looping: bool,
    pub enabled: bool,
    /// The blend mode's name (`mix`, `add`).
    pub mode: String,
    pub mask: Option<usize>,
}

/// A marker attached to a joint (see `anim::Attachment`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttachmentRecord {
    pub node: usize,
    pub offset: [Exact; 3],
    pub rotation_degrees: [Exact; 3],
    pub size: Exact,
}

/// A bend (see `anim::JointOverride`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BendRecord {
    pub rotation: [Exact; 4],
    pub translation: [Exact; 3],
    pub scale: Exact,
}

/// An IK goal (see `anim::ik_layer::IkGoal`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IkGoalRecord {
    pub start: usize,
    pub mid: usize,
    pub end: usize,
    pub target: [Exact; 3],
    pub pole_target: Option<[Exact; 3]>,
    pub weight: Exact,
    pub soften: Exact,
    pub enabled: bool,
}

/// A look-at (see `anim::look_at::LookAt`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookAtRecord {
    pub chain: Vec<usize>,
    pub target: [Exact; 3],
    pub forward: [Exact; 3],
    pub up: [Exact; 3],
    pub share: Exact,
    pub weight: Exact,
    pub enabled: bool,
    /// It follows the camera.
    pub follows_camera: bool,
}

impl Entry {
    /// How a report names the record.
    pub fn describe(&self) -> String {
        match self {
            Entry::Clip(clip) => match clip {
                ClipRecord::Rename { clip, name } => format!("rename clip {clip} to {name}"),
                ClipRecord::Trim { clip, .. } => format!("trim clip {clip}"),
                ClipRecord::InPlace { clip } => format!("in place clip {clip}"),
                ClipRecord::Resample { clip, .. } => format!("resample clip {clip}"),
                ClipRecord::Drop { clip } => format!("drop clip {clip}"),
                ClipRecord::LockFeet { clip } => format!("lock the feet of clip {clip}"),
                ClipRecord::AddPose { name, .. } => format!("save pose as {name}"),
                ClipRecord::AddCarried(carry) => format!("load clips from {}", carry.file.display()),
                ClipRecord::Recarry(carry) => format!("map joints of {}", carry.file.display()),
            },
            Entry::Repair(options) => format!("repair weights ({})", options.chosen_names()),
            Entry::PoseStep { label } => label.clone(),
            Entry::Pose(_) => "pose".to_owned(),
            Entry::Undo => "undo".to_owned(),
            Entry::Redo => "redo".to_owned(),
            Entry::EndRepairPreview => "end the repair preview".to_owned(),
        }
    }
}
