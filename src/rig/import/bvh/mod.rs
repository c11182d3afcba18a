//! BVH (Biovision Hierarchy) motion capture → [`Rig`]: a skeleton without skins or meshes, whose
//! nodes are the file's joints and end sites, and one clip of its frames.
//!
//! [`parse`] reads the text; this module turns it into the rig. Each `ROOT` and `JOINT` is a
//! node at its `OFFSET` with no rest turn (a BVH skeleton's rest pose is every channel at zero);
//! each `End Site` is a leaf node named `JOINT_End`, so that the last bone of every chain has a
//! direction to draw and to carry. Per joint, the position channels make a translation channel
//! (a position replaces the offset along its axis) and the rotation channels a rotation channel,
//! the turns composed in the order the joint lists them. Keys fall at `frame × Frame Time`,
//! computed in f64, so a frame time of 0.0417083750417 s plays at 23.976 frames a second.
//!
//! Lengths are turned into metres by the unit of [`BvhUnit::guess`] (from the skeleton's size),
//! or by the scale a [`LoadOptions`] gives. The frame count is checked against the text left
//! before anything is reserved for the frames, and the keys are charged to the import's
//! [`Budget`].

mod error;
mod parse;

pub use error::{BvhError, BvhErrorKind};

use super::LoadOptions;
use super::accessor::Budget;
use crate::rig::{Channel, Clip, ImportFacts, Interpolation, Node, Property, Rig, RigError, Trs};
use glam::{DQuat, DVec3, EulerRot, Vec4};
use parse::{ChannelKind, Joint};

/// The height a human character has, which [`BvhUnit::guess`] reads a skeleton's size against.
const HUMAN_HEIGHT_METRES: f64 = 1.7;

/// The length unit a BVH file's offsets and positions are taken to be in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BvhUnit {
    Metre,
    Centimetre,
    Millimetre,
    Inch,
    /// The unit of the CMU motion capture library's skeletons (its ASF files' `length 0.45`:
    /// 1/0.45 inch), which its BVH conversions keep.
    CmuUnit,
    /// Metres per unit, given instead of guessed (`--bvh-scale`).
    Given(f64),
}

impl BvhUnit {
    /// The units [`BvhUnit::guess`] chooses from.
    pub const GUESSES: [BvhUnit; 5] = [
        BvhUnit::Metre,
        BvhUnit::Centimetre,
        BvhUnit::Millimetre,
        BvhUnit::Inch,
        BvhUnit::CmuUnit,
    ];

    pub fn metres(self) -> f64 {
        match self {
            BvhUnit::Metre => 1.0,
            BvhUnit::Centimetre => 0.01,
            BvhUnit::Millimetre => 0.001,
            BvhUnit::Inch => 0.0254,
            BvhUnit::CmuUnit => 0.0254 / 0.45,
            BvhUnit::Given(metres) => metres,
        }
    }

    /// The unit that makes a skeleton `size` file units tall (its rest pose's largest extent
    /// along an axis) closest to a person's height, by ratio: up to about 7 units it is metres,
    /// then CMU units up to 45, inches up to 107, centimetres up to 538, millimetres above.
    /// A skeleton without size is taken to be in metres.
    pub fn guess(size: f64) -> BvhUnit {
        if !(size.is_finite() && size > 0.0) {
            return BvhUnit::Metre;
        }
        let distance = |unit: &BvhUnit| (size * unit.metres() / HUMAN_HEIGHT_METRES).ln().abs();
        Self::GUESSES
            .into_iter()
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
            .unwrap_or(BvhUnit::Metre)
    }
}

impl std::fmt::Display for BvhUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BvhUnit::Metre => write!(f, "metres"),
            BvhUnit::Centimetre => write!(f, "centimetres"),
            BvhUnit::Millimetre => write!(f, "millimetres"),
            BvhUnit::Inch => write!(f, "inches"),
            BvhUnit::CmuUnit => write!(f, "CMU units (1/0.45 inch)"),
            BvhUnit::Given(metres) => write!(f, "units of {metres} m, as given"),
        }
    }
}

/// What a BVH file held, kept for the report and for checks.
#[derive(Debug, Clone, PartialEq)]
pub struct BvhFacts {
    /// `ROOT`s and `JOINT`s.
    pub joints: usize,
    pub end_sites: usize,
    /// Values per frame.
    pub channels: usize,
    pub frames: usize,
    /// Seconds between frames, as written.
    pub frame_time: f64,
    /// The rest pose's largest extent along an axis, in file units.
    pub size: f64,
    pub unit: BvhUnit,
}

/// True when `bytes` (named `name`) are BVH: text starting with `HIERARCHY`, or a `.bvh` name on
/// something that is not glTF (GLB or JSON).
pub fn is_bvh(bytes: &[u8], name: &str) -> bool {
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let first = text.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(text.len());
    let start = &text[first..];
    if start
        .get(..9)
        .is_some_and(|word| word.eq_ignore_ascii_case(b"HIERARCHY"))
    {
        return true;
    }
    let looks_gltf = bytes.starts_with(b"glTF") || start.first() == Some(&b'{');
    !looks_gltf && name.to_ascii_lowercase().ends_with(".bvh")
}

/// Loads BVH bytes named `name` (the clip takes the name without its extension).
pub fn load(bytes: &[u8], name: &str, options: &LoadOptions) -> Result<Rig, RigError> {
    // Joint names in another encoding than UTF-8 are read with replacement characters rather
    // than refused: only the names can hold such bytes.
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let header = parse::header(text)?;
    let size = rest_size(&header.joints);
    let unit = options.bvh_scale.map_or_else(|| BvhUnit::guess(size), BvhUnit::Given);
    let scale = unit.metres();

    let mut budget = Budget::for_input(bytes.len() as u64);
    let nodes: Vec<Node> = (header.joints.iter())
        .map(|joint| Node {
            name: joint.name.clone(),
            parent: joint.parent,
            rest: Trs {
                translation: (joint.offset * scale).as_vec3(),
                ..Trs::IDENTITY
            },
        })
        .collect();
    let clips = if header.frames > 0 {
        vec![read_clip(&header, clip_name(name), scale, &mut budget)?]
    } else {
        Vec::new()
    };
    let facts = BvhFacts {
        joints: header.joints.iter().filter(|j| !j.end_site).count(),
        end_sites: header.joints.iter().filter(|j| j.end_site).count(),
        channels: header.channels,
        frames: header.frames,
        frame_time: header.frame_time,
        size,
        unit,
    };
    let facts = ImportFacts {
        gltf_node: (0..nodes.len()).collect(),
        node_matrices: nodes.iter().map(|n| n.rest.to_mat4()).collect(),
        notes: vec![summary(&facts)],
        channels: clips
            .iter()
            .map(|c| vec![Default::default(); c.channels.len()])
            .collect(),
        decoded_bytes: budget.used(),
        bvh: Some(facts),
        ..ImportFacts::default()
    };
    let rig = Rig {
        name: name.to_owned(),
        nodes,
        clips,
        facts,
        ..Rig::default()
    };
    rig.hierarchy();
    Ok(rig)
}

/// The report's line about the file: its counts, frame rate and unit.
fn summary(facts: &BvhFacts) -> String {
    format!(
        "BVH motion capture: {} joints, {} end sites, {} channels, {} frames at {} fps (Frame Time {} s); \
         the skeleton is {} units tall, read as {} (×{} m)",
        facts.joints,
        facts.end_sites,
        facts.channels,
        facts.frames,
        short(1.0 / facts.frame_time, 3),
        facts.frame_time,
        short(facts.size, 3),
        facts.unit,
        short(facts.unit.metres(), 6)
    )
}

/// `value` with at most `decimals` decimals, trailing zeros left out.
fn short(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_owned(),
        false => text,
    }
}

/// The file's name without its folder and extension, or `motion`.
fn clip_name(name: &str) -> String {
    let stem = std::path::Path::new(name).file_stem().map(|s| s.to_string_lossy());
    match stem {
        Some(stem) if !stem.is_empty() => stem.into_owned(),
        _ => "motion".to_owned(),
    }
}

/// The largest extent of the rest pose's joints along an axis, in file units.
fn rest_size(joints: &[Joint]) -> f64 {
    let mut positions: Vec<DVec3> = Vec::with_capacity(joints.len());
    let (mut low, mut high) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for joint in joints {
        let position = joint.parent.map_or(DVec3::ZERO, |p| positions[p]) + joint.offset;
        positions.push(position);
        (low, high) = (low.min(position), high.max(position));
    }
    let extent = (high - low).max_element();
    if extent.is_finite() { extent } else { 0.0 }
}

/// Where one joint's values are in a frame, and the channels they make.
struct JointChannels<'j> {
    joint: &'j Joint,
    /// Index of the joint's first value in a frame.
    first: usize,
    translation: Option<usize>,
    rotation: Option<usize>,
}

/// The clip of every frame, a translation and a rotation channel per joint that has such
/// channels. Allocates the keys once (the header has checked the frame count against the text).
fn read_clip(header: &parse::Header, name: String, scale: f64, budget: &mut Budget) -> Result<Clip, RigError> {
    let frames = header.frames;
    let times: Vec<f32> = (0..frames).map(|f| (f as f64 * header.frame_time) as f32).collect();
    let mut channels: Vec<Channel> = Vec::new();
    let mut per_joint: Vec<JointChannels> = Vec::new();
    let mut first = 0;
    for (node, joint) in header.joints.iter().enumerate() {
        let mut channel_of = |listed: bool, property| {
            listed.then(|| {
                channels.push(Channel {
                    node,
                    property,
                    interpolation: Interpolation::Linear,
                    times: Vec::new(),
                    values: Vec::new(),
                });
                channels.len() - 1
            })
        };
        let positions = (joint.channels.iter()).any(|c| matches!(c, ChannelKind::Position(_)));
        let rotations = (joint.channels.iter()).any(|c| matches!(c, ChannelKind::Rotation(_)));
        let translation = channel_of(positions, Property::Translation);
        let rotation = channel_of(rotations, Property::Rotation);
        if !joint.channels.is_empty() {
            per_joint.push(JointChannels {
                joint,
                first,
                translation,
                rotation,
            });
        }
        first += joint.channels.len();
    }
    let key_bytes = (std::mem::size_of::<f32>() + std::mem::size_of::<Vec4>()) as u64;
    budget.charge(
        (frames as u64)
            .saturating_mul(channels.len() as u64)
            .saturating_mul(key_bytes),
        &format!("{frames} frames of {} channels", channels.len()),
    )?;
    for channel in &mut channels {
        channel.times = times.clone();
        channel.values.reserve_exact(frames);
    }

    let mut values = vec![0.0; header.channels];
    let mut lines = header.frames();
    for _ in 0..frames {
        lines.read_into(&mut values)?;
        for joint in &per_joint {
            let (translation, rotation) = pose(joint.joint, &values[joint.first..], scale);
            if let Some(c) = joint.translation {
                channels[c].values.push(translation.as_vec3().extend(0.0));
            }
            if let Some(c) = joint.rotation {
                let keys = &mut channels[c].values;
                let mut key = Vec4::from(rotation.as_quat());
                // Each key on the side of the previous one, so that the curves read smoothly.
                if keys.last().is_some_and(|previous| previous.dot(key) < 0.0) {
                    key = -key;
                }
                keys.push(key);
            }
        }
    }
    lines.finish()?;
    Ok(Clip {
        name,
        duration: times.last().copied().unwrap_or(0.0),
        channels,
        source: None,
    })
}

/// A joint's local translation (in metres) and rotation from its values of one frame.
fn pose(joint: &Joint, values: &[f64], scale: f64) -> (DVec3, DQuat) {
    let mut translation = joint.offset;
    let mut rotation = DQuat::IDENTITY;
    for (kind, &value) in joint.channels.iter().zip(values) {
        match *kind {
            ChannelKind::Position(axis) => translation[axis.index()] = value,
            ChannelKind::Rotation(axis) => rotation *= DQuat::from_axis_angle(axis.unit(), value.to_radians()),
        }
    }
    (translation * scale, rotation.normalize())
}

crate::names::named_enum! {
    /// The order a written BVH file lists each joint's rotation channels in, which is the order
    /// its turns compose: `ZXY` is Rz·Rx·Ry.
    #[strum(serialize_all = "UPPERCASE")]
    pub enum BvhRotationOrder {
        Xyz,
        Xzy,
        Yxz,
        Yzx,
        /// What most BVH files use (the CMU library's conversions aside, which use ZYX).
        #[default]
        Zxy,
        Zyx,
    }
}

impl BvhRotationOrder {
    /// The same composition as glam's intrinsic Euler angles: `EulerRot::ZXY` is Rz·Rx·Ry.
    pub fn euler(self) -> EulerRot {
        match self {
            BvhRotationOrder::Xyz => EulerRot::XYZ,
            BvhRotationOrder::Xzy => EulerRot::XZY,
            BvhRotationOrder::Yxz => EulerRot::YXZ,
            BvhRotationOrder::Yzx => EulerRot::YZX,
            BvhRotationOrder::Zxy => EulerRot::ZXY,
            BvhRotationOrder::Zyx => EulerRot::ZYX,
        }
    }

    /// The axes' letters in channel order.
    pub fn axes(self) -> [char; 3] {
        let name: &'static str = self.into();
        let mut letters = name.chars();
        std::array::from_fn(|_| letters.next().unwrap_or('X'))
    }
}

/// The rotation `angles` (degrees, in the order's channel order) make, as a BVH reader
/// composes them.
pub fn rotation_from_degrees(order: BvhRotationOrder, angles: [f64; 3]) -> DQuat {
    let [a, b, c] = angles.map(f64::to_radians);
    DQuat::from_euler(order.euler(), a, b, c)
}

/// Euler angles in degrees (in the order's channel order) that compose to `rotation`.
pub fn degrees_from_rotation(order: BvhRotationOrder, rotation: DQuat) -> [f64; 3] {
    let (a, b, c) = rotation.normalize().to_euler(order.euler());
    [a, b, c].map(f64::to_degrees)
}

/// How far apart two rotations are, in degrees: the smallest turn from one to the other
/// (through the sine of the half angle, which keeps small angles exact where `acos` does not).
pub fn degrees_between(a: DQuat, b: DQuat) -> f64 {
    let turn = a.normalize().conjugate() * b.normalize();
    2.0 * turn.xyz().length().atan2(turn.w.abs()).to_degrees()
}

#[cfg(test)]
mod tests;
