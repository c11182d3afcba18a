//! `--clips FILE` of the window, `render`, `audit` and `bench`: clips of other files carried onto
//! the rig.

use super::BvhScaleArg;
use crate::retarget::{ClipFiles, JointMap, RetargetError, RetargetOptions};
use crate::rig::Rig;
use std::path::PathBuf;

/// The command-line arguments that add clips from other files.
#[derive(clap::Args, Debug, Clone, Default, PartialEq)]
pub struct ClipsArgs {
    /// Add the clips of another file (.gltf, .glb, .vrm, .vrma, .fbx or .bvh), retargeted onto this
    /// rig's skeleton by joint name and by the pairs kept from the Joint mapping window
    /// (repeatable). They follow the rig's own clips; one whose name is taken is called
    /// `NAME (FILE)`.
    #[arg(long = "clips", value_name = "FILE")]
    pub clips: Vec<PathBuf>,
    /// With --clips: keep the added clips' root over its rest place (no travel on the ground).
    #[arg(long, requires = "clips")]
    pub in_place: bool,
    /// With --clips: the clip file's joint SOURCE drives the rig's joint TARGET, whatever their
    /// names (repeatable; over name matching); `SOURCE=` leaves SOURCE out.
    #[arg(long = "map-joint", value_name = "SOURCE=TARGET", value_parser = parse_joint_pair, requires = "clips")]
    pub map_joint: Vec<(String, String)>,
    /// Read for the rig and for every --clips file.
    #[command(flatten)]
    pub bvh: BvhScaleArg,
}

/// A `--map-joint` value that is not `SOURCE=TARGET`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("'{0}' is not SOURCE=TARGET (joint names, e.g. UpperArm.L=mixamorig:LeftArm)")]
pub struct JointPairError(pub String);

/// `SOURCE=TARGET` of `--map-joint`, split at the first `=`.
pub fn parse_joint_pair(text: &str) -> Result<(String, String), JointPairError> {
    match text.split_once('=') {
        Some((source, target)) if !source.is_empty() => Ok((source.to_owned(), target.to_owned())),
        _ => Err(JointPairError(text.to_owned())),
    }
}

impl ClipsArgs {
    pub fn files(&self) -> ClipFiles {
        ClipFiles {
            files: self.clips.clone(),
            options: RetargetOptions {
                in_place: self.in_place,
                read: self.bvh.options(),
                ..RetargetOptions::default()
            },
            maps: Default::default(),
            pairs: JointMap {
                by_hand: self.map_joint.iter().cloned().collect(),
            },
        }
    }
}

/// `rig` with the clips of `files` added, each file's report (channels matched and dropped,
/// joints unmatched) printed to stderr, so that standard output stays the command's own.
pub fn add_clip_files(rig: Rig, files: &ClipFiles) -> Result<Rig, RetargetError> {
    let (rig, reports) = files.add_to(rig)?;
    for (file, report) in files.files.iter().zip(&reports) {
        eprint!("clips from {}:\n{}", file.display(), report.summary());
    }
    Ok(rig)
}
