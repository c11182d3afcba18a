//! What the command line names: where the rig comes from (`FILE`, `demo`, `--synthetic`) and
//! the parsers of its compound values (sizes, bends, layers).

use crate::anim::BlendMode;
use crate::names::Named;
use crate::rig::{Rig, RigError};
use crate::skin::SkinningMethod;
use crate::synthetic::skinned_tube;
use crate::viewer::Viewer;
use glam::Vec3;

/// Where the rig the window or `rigscope bench` shows comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum RigSource {
    /// The built-in demo rig.
    Demo,
    File(std::path::PathBuf),
    /// A generated tube (see [`skinned_tube`]), to try rigs of any size.
    Synthetic {
        vertices: usize,
        joints: usize,
    },
}

/// Why a [`RigSource`] gave no rig.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SourceError {
    #[error(transparent)]
    Rig(#[from] RigError),
    #[error("--synthetic {vertices},{joints}: need vertices ≥ 1 and 1 ≤ joints ≤ 65535")]
    SyntheticSize { vertices: usize, joints: usize },
}

/// Why a `--synthetic` value was refused, with the text given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SyntheticSizeError {
    #[error("'{0}' is not VERTICES,JOINTS (e.g. 100000,64)")]
    NotAPair(String),
    #[error("'{0}' is not VERTICES,JOINTS with positive whole numbers")]
    NotPositive(String),
}

impl RigSource {
    /// The command line's choice: `--synthetic` sizes, else the file (`demo`, or none, for the
    /// demo rig).
    pub fn from_args(file: Option<std::path::PathBuf>, synthetic: Option<(usize, usize)>) -> RigSource {
        match (file, synthetic) {
            (_, Some((vertices, joints))) => RigSource::Synthetic { vertices, joints },
            (Some(file), None) if file.as_os_str() != "demo" => RigSource::File(file),
            _ => RigSource::Demo,
        }
    }

    /// The rig, and the file it came from.
    pub fn open(&self) -> Result<(Rig, Option<std::path::PathBuf>), SourceError> {
        Ok(match self {
            RigSource::Demo => (crate::rig::open(None)?, None),
            RigSource::File(file) => (crate::rig::open(Some(file))?, Some(file.clone())),
            RigSource::Synthetic { vertices, joints } => {
                if *joints == 0 || *joints > usize::from(u16::MAX) || *vertices == 0 {
                    return Err(SourceError::SyntheticSize {
                        vertices: *vertices,
                        joints: *joints,
                    });
                }
                (skinned_tube(*vertices, *joints), None)
            }
        })
    }
}

/// `VERTICES,JOINTS`, e.g. `100000,64` (the `--synthetic` argument).
pub fn parse_synthetic(text: &str) -> Result<(usize, usize), SyntheticSizeError> {
    let (v, j) = text
        .split_once(',')
        .ok_or_else(|| SyntheticSizeError::NotAPair(text.to_owned()))?;
    let parse = |s: &str| s.trim().parse::<usize>().ok().filter(|&n| n > 0);
    match (parse(v), parse(j)) {
        (Some(v), Some(j)) => Ok((v, j)),
        _ => Err(SyntheticSizeError::NotPositive(text.to_owned())),
    }
}

/// `WxH`, e.g. `800x600`.
pub fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("size '{text}' is not WxH (e.g. 800x600)"))?;
    let parse = |s: &str| s.trim().parse::<u32>().ok().filter(|&v| v > 0);
    match (parse(w), parse(h)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(format!(
            "size '{text}' is not WxH with positive whole numbers (e.g. 800x600)"
        )),
    }
}

/// `NAME=X,Y,Z`: a joint and Euler angles in degrees about its local axes.
pub fn parse_bend(text: &str) -> Result<(String, Vec3), String> {
    parse_joint_and_vector(text, "bend", "angles in degrees", "0,0,45")
}

/// `NAME=X,Y,Z`: the end joint of a two-bone chain (a hand, a foot) and the world position
/// IK pulls it to (`--ik`).
pub fn parse_ik_target(text: &str) -> Result<(String, Vec3), String> {
    parse_joint_and_vector(text, "IK target", "world coordinates", "0.3,1.2,0.2")
}

/// `NAME=X,Y,Z` for `what`, three finite numbers (`numbers` says which) after the last `=`.
fn parse_joint_and_vector(text: &str, what: &str, numbers: &str, example: &str) -> Result<(String, Vec3), String> {
    let (name, vector) = text
        .rsplit_once('=')
        .ok_or_else(|| format!("{what} '{text}' is not NAME=X,Y,Z ({numbers}), e.g. joint3={example}"))?;
    let values: Vec<f32> = vector.split(',').filter_map(|v| v.trim().parse().ok()).collect();
    match values[..] {
        [x, y, z] if values.iter().all(|v| v.is_finite()) => Ok((name.to_owned(), Vec3::new(x, y, z))),
        _ => Err(format!(
            "{what} '{text}' needs three {numbers} after '=', e.g. {name}={example}"
        )),
    }
}

/// `CLIP[:WEIGHT[:add]]`: a clip layer, mixed unless `add` makes it additive.
pub fn parse_layer(text: &str) -> Result<(String, f32, BlendMode), String> {
    let mut parts = text.split(':');
    let clip = parts
        .next()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| format!("layer '{text}' names no clip"))?;
    let weight = match parts.next() {
        None => 1.0,
        Some(w) => w
            .parse::<f32>()
            .ok()
            .filter(|w| w.is_finite())
            .ok_or_else(|| format!("layer '{text}': weight '{w}' is not a number"))?,
    };
    let mode = match parts.next() {
        None => BlendMode::default(),
        Some(name) => name.parse().map_err(|_| {
            let names: Vec<&str> = BlendMode::names().collect();
            format!("layer '{text}': blend '{name}' is not {}", names.join(" or "))
        })?,
    };
    Ok((clip.to_owned(), weight, mode))
}

/// How a command skins: `--method` and the DQS mask `--dqs-joint`, as `render` and `bench` take
/// them.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct SkinningChoice {
    /// How joints are blended: linear blend, dual quaternion, or blended per vertex between the
    /// two (default: the file's method, else lbs).
    #[arg(long, value_parser = crate::names::cli::<SkinningMethod>())]
    pub method: Option<SkinningMethod>,
    /// DQS mask: this joint (node name) and its descendants skin toward dual quaternions with
    /// the blended method (the default method when a mask is given), each vertex by its share
    /// of weight on them (repeatable).
    #[arg(long = "dqs-joint", value_name = "JOINT")]
    pub dqs_joints: Vec<String>,
}

impl SkinningChoice {
    /// Sets `viewer`'s DQS mask and returns the method: the one named, else the blended one when
    /// joints are masked, else the file's own, else linear blend. A joint the rig lacks is an
    /// error that lists the rig's joints.
    pub fn apply(&self, viewer: &mut Viewer) -> Result<SkinningMethod, String> {
        let masked = (self.dqs_joints.iter())
            .map(|name| crate::headless::find_node(viewer.rig(), name))
            .collect::<Result<Vec<_>, _>>()?;
        let masked_method = (!masked.is_empty()).then_some(SkinningMethod::Blended);
        let method = (self.method.or(masked_method))
            .or(viewer.rig().skinning.method)
            .unwrap_or_default();
        viewer.set_dqs_mask(masked);
        Ok(method)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::FileError;

    #[test]
    fn synthetic_sizes_parse() {
        assert_eq!(parse_synthetic("100000,64"), Ok((100_000, 64)));
        assert_eq!(
            parse_synthetic("100000"),
            Err(SyntheticSizeError::NotAPair("100000".into()))
        );
        assert_eq!(
            parse_synthetic("0,64"),
            Err(SyntheticSizeError::NotPositive("0,64".into()))
        );
    }

    #[test]
    fn a_source_opens_its_rig_and_refuses_impossible_sizes() {
        let (tube, path) = RigSource::from_args(None, Some((640, 8))).open().unwrap();
        assert_eq!((tube.skins[0].joints.len(), path), (8, None));
        assert_eq!(tube.meshes[0].primitives[0].vertex_count(), 640);
        let (demo, path) = RigSource::from_args(Some("demo".into()), None).open().unwrap();
        assert_eq!((demo.name.as_str(), path), ("demo.glb", None));
        let error = RigSource::Synthetic {
            vertices: 64,
            joints: 70_000,
        }
        .open()
        .unwrap_err();
        assert!(
            matches!(
                error,
                SourceError::SyntheticSize {
                    vertices: 64,
                    joints: 70_000
                }
            ),
            "{error:?}"
        );
        assert!(error.to_string().contains("1 ≤ joints ≤ 65535"), "{error}");
        let missing = RigSource::from_args(Some("no-such-rig.glb".into()), None)
            .open()
            .unwrap_err();
        assert!(
            matches!(&missing, SourceError::Rig(RigError::File(FileError::Open { path, .. })) if path.ends_with("no-such-rig.glb")),
            "{missing:?}"
        );
    }

    #[test]
    fn a_layer_names_its_clip_weight_and_blend() {
        let layer = |text: &str| parse_layer(text).ok();
        assert_eq!(layer("walk"), Some(("walk".to_owned(), 1.0, BlendMode::Mix)));
        assert_eq!(layer("walk:0.5"), Some(("walk".to_owned(), 0.5, BlendMode::Mix)));
        assert_eq!(layer("walk:0.5:mix"), Some(("walk".to_owned(), 0.5, BlendMode::Mix)));
        assert_eq!(layer("2:0.25:add"), Some(("2".to_owned(), 0.25, BlendMode::Additive)));
        for wrong in ["walk:0.5:additive", "walk:0.5:Add", "walk:heavy", ":0.5", "walk:inf"] {
            assert_eq!(layer(wrong), None, "{wrong}");
        }
        let error = parse_layer("walk:1:over").unwrap_err();
        assert!(error.contains("'over' is not mix or add"), "{error}");
    }

    #[test]
    fn a_dqs_mask_asks_for_the_blended_method_unless_another_is_named() {
        let demo = crate::rig::load_slice(crate::rig::demo::DEMO_GLB, None, "demo.glb").unwrap();
        let joint = |name: &str| demo.find_node(name).expect("a demo joint");
        let mut viewer = Viewer::new(demo.clone(), None);
        let choice = |method, joints: &[&str]| SkinningChoice {
            method,
            dqs_joints: joints.iter().map(|&j| j.to_owned()).collect(),
        };
        assert_eq!(choice(None, &[]).apply(&mut viewer), Ok(SkinningMethod::Lbs));
        assert!(viewer.dqs_mask().is_empty());
        assert_eq!(
            choice(None, &["joint3"]).apply(&mut viewer),
            Ok(SkinningMethod::Blended)
        );
        assert_eq!(viewer.dqs_mask(), [joint("joint3")]);
        let dqs = choice(Some(SkinningMethod::Dqs), &["joint2", "joint4"]).apply(&mut viewer);
        assert_eq!(dqs, Ok(SkinningMethod::Dqs));
        assert_eq!(viewer.dqs_mask(), [joint("joint2"), joint("joint4")]);
        let unknown = choice(None, &["joint3", "no such joint"]).apply(&mut viewer);
        let message = unknown.expect_err("an unknown joint is an error");
        assert!(
            message.contains("no node named 'no such joint'") && message.contains("joint0"),
            "{message}"
        );
        assert_eq!(
            viewer.dqs_mask(),
            [joint("joint2"), joint("joint4")],
            "an error leaves the mask"
        );
    }
}
