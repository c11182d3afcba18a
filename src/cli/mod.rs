//! What the command line names: where the rig comes from (`FILE`, `demo`, `--synthetic`), the
//! arguments several commands share (the view, the skinning choice) and the parsers of compound
//! values (sizes, bends, layers).

mod clip_files;
pub use clip_files::{ClipsArgs, JointPairError, add_clip_files, parse_joint_pair};

use crate::anim::{BlendMode, GhostOptions};
use crate::names::Named;
use crate::render::{DeformationMeasure, SurfaceAxis, ViewMode, ViewOptions};
use crate::rig::{LoadOptions, Rig, RigError};
use crate::skin::SkinningMethod;
use crate::synthetic::{add_face_targets, skinned_tube};
use crate::viewer::Viewer;
use glam::Vec3;

/// `--bvh-scale`: how the commands that read rigs and clips read a BVH file's lengths.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct BvhScaleArg {
    /// Metres per length unit of a .bvh file (0.01 for centimetres, 0.0254 for inches), instead
    /// of the unit guessed from the skeleton's size.
    #[arg(long = "bvh-scale", value_name = "METRES", value_parser = parse_bvh_scale)]
    pub bvh_scale: Option<f64>,
}

impl BvhScaleArg {
    pub fn options(&self) -> LoadOptions {
        LoadOptions {
            bvh_scale: self.bvh_scale,
        }
    }
}

/// A `--bvh-scale` value that is not a positive number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("'{0}' is not a positive number of metres per unit (e.g. 0.01 for centimetres)")]
pub struct BvhScaleError(pub String);

/// `--bvh-scale`: a positive, finite number.
pub fn parse_bvh_scale(text: &str) -> Result<f64, BvhScaleError> {
    match text.trim().parse::<f64>() {
        Ok(scale) if scale.is_finite() && scale > 0.0 => Ok(scale),
        _ => Err(BvhScaleError(text.to_owned())),
    }
}

/// Where the rig the window or `rigscope bench` shows comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum RigSource {
    /// The built-in demo rig.
    Demo,
    File(std::path::PathBuf),
    /// A generated tube (see [`skinned_tube`]), to try rigs of any size.
    Synthetic(SyntheticSize),
}

/// What `--synthetic` generates: a tube of `vertices` vertices along `joints` joints, with
/// `targets` morph targets of which `in_use` are animated (see [`add_face_targets`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntheticSize {
    pub vertices: usize,
    pub joints: usize,
    pub targets: usize,
    pub in_use: usize,
}

impl std::fmt::Display for SyntheticSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{}", self.vertices, self.joints)?;
        if self.targets > 0 {
            write!(f, ",{},{}", self.targets, self.in_use)?;
        }
        Ok(())
    }
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
    #[error("'{0}' is not VERTICES,JOINTS[,TARGETS[,IN_USE]] (e.g. 100000,64 or 100000,64,200,5)")]
    NotAPair(String),
    #[error("'{0}' is not VERTICES,JOINTS[,TARGETS[,IN_USE]] with positive VERTICES and JOINTS")]
    NotPositive(String),
    #[error("'{0}': more morph targets in use than there are")]
    InUseOverTargets(String),
}

impl RigSource {
    /// The command line's choice: `--synthetic` sizes, else the file (`demo`, or none, for the
    /// demo rig).
    pub fn from_args(file: Option<std::path::PathBuf>, synthetic: Option<SyntheticSize>) -> RigSource {
        match (file, synthetic) {
            (_, Some(size)) => RigSource::Synthetic(size),
            (Some(file), None) if file.as_os_str() != "demo" => RigSource::File(file),
            _ => RigSource::Demo,
        }
    }

    /// The rig, and the file it came from.
    pub fn open(&self) -> Result<(Rig, Option<std::path::PathBuf>), SourceError> {
        self.open_with(&LoadOptions::default())
    }

    /// [`RigSource::open`] with what a file leaves open told by `options`.
    pub fn open_with(&self, options: &LoadOptions) -> Result<(Rig, Option<std::path::PathBuf>), SourceError> {
        Ok(match self {
            RigSource::Demo => (crate::rig::open(None)?, None),
            RigSource::File(file) => (crate::rig::open_with(Some(file), options)?, Some(file.clone())),
            RigSource::Synthetic(size) => {
                let SyntheticSize { vertices, joints, .. } = *size;
                if joints == 0 || joints > usize::from(u16::MAX) || vertices == 0 {
                    return Err(SourceError::SyntheticSize { vertices, joints });
                }
                let mut rig = skinned_tube(vertices, joints);
                if size.targets > 0 {
                    add_face_targets(&mut rig, size.targets, size.in_use);
                }
                (rig, None)
            }
        })
    }
}

/// Where the rig comes from, as the window and `rigscope bench` take it.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct RigArgs {
    /// A .gltf, .glb, .vrm, .fbx or .bvh file; the built-in demo rig when omitted (or `demo`).
    #[arg(conflicts_with = "synthetic")]
    pub file: Option<std::path::PathBuf>,
    /// A generated skinned tube of VERTICES,JOINTS (4 influences) instead of a file, e.g.
    /// 1000000,256, to see how Rigscope copes with a big rig; with TARGETS, that many morph
    /// targets as a face has them (each moving about 3% of the vertices), IN_USE of them
    /// (5 when left out) animated by the clip and the rest at weight 0, e.g. 100000,64,200,5.
    #[arg(long, value_name = "VERTICES,JOINTS[,TARGETS[,IN_USE]]", value_parser = parse_synthetic)]
    pub synthetic: Option<SyntheticSize>,
}

impl RigArgs {
    pub fn source(&self) -> RigSource {
        RigSource::from_args(self.file.clone(), self.synthetic)
    }

    /// The rig's name in messages: the file, `demo`, or the `--synthetic` sizes.
    pub fn label(&self) -> std::path::PathBuf {
        match (&self.file, self.synthetic) {
            (_, Some(size)) => format!("--synthetic {size}").into(),
            (Some(file), None) => file.clone(),
            (None, None) => "demo".into(),
        }
    }
}

/// What the mesh and its overlays show, as `render` and `bench` take it.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct ViewArgs {
    /// What the mesh shows.
    #[arg(long, default_value_t = ViewMode::Shaded, value_parser = crate::names::cli::<ViewMode>())]
    pub view: ViewMode,
    /// In the joints view, color by the strongest joint only.
    #[arg(long)]
    pub dominant: bool,
    /// What `--view deformation` measures: the posed / bind triangle area, or the edge stretch.
    #[arg(long, default_value_t = DeformationMeasure::Area, value_parser = crate::names::cli::<DeformationMeasure>())]
    pub deformation: DeformationMeasure,
    /// What `--view normals` colors: the normal, or the tangent or bitangent a normal map reads.
    #[arg(long, default_value_t = SurfaceAxis::Normal, value_parser = crate::names::cli::<SurfaceAxis>())]
    pub surface_axis: SurfaceAxis,
    /// Onion skin: N ghost poses on each side of the moment drawn, K frames (of 1/30 s) apart
    /// (K 5 when left out), past ones blue and future ones orange, fading with distance.
    #[arg(long, value_name = "N[,K]", value_parser = GhostOptions::parse)]
    pub ghosts: Option<GhostOptions>,
    /// Draw the --ghosts as skeletons instead of skinned meshes.
    #[arg(long, requires = "ghosts")]
    pub ghost_skeletons: bool,
    /// Draw the skeleton overlay (on by default, as in the window).
    #[arg(long, conflicts_with = "no_skeleton")]
    pub skeleton: bool,
    /// Leave out the skeleton overlay (for pictures of the surface alone).
    #[arg(long)]
    pub no_skeleton: bool,
    /// Draw the skeleton in its bind pose (where the inverse bind matrices put the joints) over
    /// the current pose, in green.
    #[arg(long)]
    pub bind_skeleton: bool,
    /// Draw the wireframe overlay.
    #[arg(long)]
    pub wireframe: bool,
    /// Leave out the ground grid and axes.
    #[arg(long)]
    pub no_grid: bool,
}

impl ViewArgs {
    /// The view the flags ask for, over the defaults.
    pub fn options(&self) -> ViewOptions {
        let mut options = ViewOptions::default();
        self.apply(&mut options);
        options
    }

    /// Sets what the flags name in `options`; overlays already on stay on.
    pub fn apply(&self, options: &mut ViewOptions) {
        options.grid &= !self.no_grid;
        options.mode = self.view;
        options.dominant_joint |= self.dominant;
        options.deformation = self.deformation;
        options.surface_axis = self.surface_axis;
        options.skeleton.show = (options.skeleton.show || self.skeleton) && !self.no_skeleton;
        options.wireframe |= self.wireframe;
        options.bind_skeleton |= self.bind_skeleton;
        if let Some(ghosts) = self.ghosts {
            options.ghosts = GhostOptions {
                skeleton: self.ghost_skeletons,
                ..ghosts
            };
        }
    }
}

/// `VERTICES,JOINTS[,TARGETS[,IN_USE]]`, e.g. `100000,64` or `100000,64,200,5` (the
/// `--synthetic` argument); IN_USE is 5 (at most TARGETS) when left out.
pub fn parse_synthetic(text: &str) -> Result<SyntheticSize, SyntheticSizeError> {
    let parts: Vec<&str> = text.split(',').collect();
    if !(2..=4).contains(&parts.len()) {
        return Err(SyntheticSizeError::NotAPair(text.to_owned()));
    }
    let number = |k: usize| parts.get(k).map(|s| s.trim().parse::<usize>().ok());
    let not_positive = || SyntheticSizeError::NotPositive(text.to_owned());
    let (Some(Some(vertices)), Some(Some(joints))) = (number(0), number(1)) else {
        return Err(not_positive());
    };
    if vertices == 0 || joints == 0 {
        return Err(not_positive());
    }
    let targets = number(2).unwrap_or(Some(0)).ok_or_else(not_positive)?;
    let in_use = number(3).unwrap_or(Some(targets.min(5))).ok_or_else(not_positive)?;
    if in_use > targets {
        return Err(SyntheticSizeError::InUseOverTargets(text.to_owned()));
    }
    Ok(SyntheticSize {
        vertices,
        joints,
        targets,
        in_use,
    })
}

/// A compound flag value refused, with the text given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    #[error("size '{0}' is not WxH (e.g. 800x600)")]
    SizeNotAPair(String),
    #[error("size '{0}' is not WxH with positive whole numbers (e.g. 800x600)")]
    SizeNotPositive(String),
    #[error("{} '{text}' is not NAME=X,Y,Z ({}), e.g. joint3={}", kind.what(), kind.numbers(), kind.example())]
    NotAJointVector { kind: VectorKind, text: String },
    #[error("{} '{text}' needs three {} after '=', e.g. {name}={}", kind.what(), kind.numbers(), kind.example())]
    VectorNumbers {
        kind: VectorKind,
        text: String,
        name: String,
    },
    #[error("layer '{0}' names no clip")]
    LayerWithoutClip(String),
    #[error("layer '{text}': weight '{weight}' is not a number")]
    LayerWeight { text: String, weight: String },
    #[error("layer '{text}': blend '{blend}' is not {}", BlendMode::names().collect::<Vec<_>>().join(" or "))]
    LayerBlend { text: String, blend: String },
}

/// Which `NAME=X,Y,Z` flag a value was given to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorKind {
    /// `--bend`: Euler angles in degrees.
    Bend,
    /// `--ik`: a world position.
    IkTarget,
}

impl VectorKind {
    fn what(self) -> &'static str {
        match self {
            VectorKind::Bend => "bend",
            VectorKind::IkTarget => "IK target",
        }
    }

    fn numbers(self) -> &'static str {
        match self {
            VectorKind::Bend => "angles in degrees",
            VectorKind::IkTarget => "world coordinates",
        }
    }

    fn example(self) -> &'static str {
        match self {
            VectorKind::Bend => "0,0,45",
            VectorKind::IkTarget => "0.3,1.2,0.2",
        }
    }
}

/// `WxH`, e.g. `800x600`.
pub fn parse_size(text: &str) -> Result<(u32, u32), ValueError> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| ValueError::SizeNotAPair(text.to_owned()))?;
    let parse = |s: &str| s.trim().parse::<u32>().ok().filter(|&v| v > 0);
    match (parse(w), parse(h)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(ValueError::SizeNotPositive(text.to_owned())),
    }
}

/// `NAME=X,Y,Z`: a joint and Euler angles in degrees about its local axes.
pub fn parse_bend(text: &str) -> Result<(String, Vec3), ValueError> {
    parse_joint_and_vector(text, VectorKind::Bend)
}

/// `NAME=X,Y,Z`: the end joint of a two-bone chain (a hand, a foot) and the world position
/// IK pulls it to (`--ik`).
pub fn parse_ik_target(text: &str) -> Result<(String, Vec3), ValueError> {
    parse_joint_and_vector(text, VectorKind::IkTarget)
}

/// `NAME=X,Y,Z` for `kind`: three finite numbers after the last `=`.
fn parse_joint_and_vector(text: &str, kind: VectorKind) -> Result<(String, Vec3), ValueError> {
    let (name, vector) = text.rsplit_once('=').ok_or_else(|| ValueError::NotAJointVector {
        kind,
        text: text.to_owned(),
    })?;
    let values: Vec<f32> = vector.split(',').filter_map(|v| v.trim().parse().ok()).collect();
    match values[..] {
        [x, y, z] if values.iter().all(|v| v.is_finite()) => Ok((name.to_owned(), Vec3::new(x, y, z))),
        _ => Err(ValueError::VectorNumbers {
            kind,
            text: text.to_owned(),
            name: name.to_owned(),
        }),
    }
}

/// `CLIP[:WEIGHT[:add]]`: a clip layer, mixed unless `add` makes it additive.
pub fn parse_layer(text: &str) -> Result<(String, f32, BlendMode), ValueError> {
    let mut parts = text.split(':');
    let clip = parts
        .next()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| ValueError::LayerWithoutClip(text.to_owned()))?;
    let weight = match parts.next() {
        None => 1.0,
        Some(w) => w
            .parse::<f32>()
            .ok()
            .filter(|w| w.is_finite())
            .ok_or_else(|| ValueError::LayerWeight {
                text: text.to_owned(),
                weight: w.to_owned(),
            })?,
    };
    let mode = match parts.next() {
        None => BlendMode::default(),
        Some(name) => name.parse().map_err(|_| ValueError::LayerBlend {
            text: text.to_owned(),
            blend: name.to_owned(),
        })?,
    };
    Ok((clip.to_owned(), weight, mode))
}

/// A node name given on the command line that the rig lacks.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no node named '{name}' in {rig} (joints include: {})", joints.join(", "))]
pub struct NoNodeError {
    pub name: String,
    /// The rig's name.
    pub rig: String,
    /// The first few of the rig's joints, to show what names it has.
    pub joints: Vec<String>,
}

/// The node named `name` in `rig`.
pub fn find_node(rig: &Rig, name: &str) -> Result<usize, NoNodeError> {
    rig.find_node(name).ok_or_else(|| NoNodeError {
        name: name.to_owned(),
        rig: rig.name.clone(),
        joints: (rig.skins.iter().flat_map(|s| &s.joints))
            .map(|&j| rig.nodes[j].name.clone())
            .take(12)
            .collect(),
    })
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
    pub fn apply(&self, viewer: &mut Viewer) -> Result<SkinningMethod, NoNodeError> {
        let masked = (self.dqs_joints.iter())
            .map(|name| find_node(viewer.rig(), name))
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
        let size = |vertices, joints, targets, in_use| SyntheticSize {
            vertices,
            joints,
            targets,
            in_use,
        };
        assert_eq!(parse_synthetic("100000,64"), Ok(size(100_000, 64, 0, 0)));
        assert_eq!(parse_synthetic("100000,64,200"), Ok(size(100_000, 64, 200, 5)));
        assert_eq!(parse_synthetic("100000,64,200,7"), Ok(size(100_000, 64, 200, 7)));
        assert_eq!(parse_synthetic("100000,64,3"), Ok(size(100_000, 64, 3, 3)));
        assert_eq!(
            parse_synthetic("100000,64,3,4"),
            Err(SyntheticSizeError::InUseOverTargets("100000,64,3,4".into()))
        );
        assert_eq!(
            parse_synthetic("100000,64,x"),
            Err(SyntheticSizeError::NotPositive("100000,64,x".into()))
        );
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
        let size = |vertices, joints, targets, in_use| SyntheticSize {
            vertices,
            joints,
            targets,
            in_use,
        };
        let (tube, path) = RigSource::from_args(None, Some(size(640, 8, 0, 0))).open().unwrap();
        assert_eq!((tube.skins[0].joints.len(), path), (8, None));
        assert_eq!(tube.meshes[0].primitives[0].vertex_count(), 640);
        assert!(tube.morphs.targets.is_empty());
        let (face, _) = RigSource::from_args(None, Some(size(6400, 8, 30, 4))).open().unwrap();
        assert_eq!(face.morphs.of(0, 0).len(), 30);
        assert_eq!(face.morphs.channels.len(), 1);
        let (demo, path) = RigSource::from_args(Some("demo".into()), None).open().unwrap();
        assert_eq!((demo.name.as_str(), path), ("demo.glb", None));
        let error = RigSource::Synthetic(size(64, 70_000, 0, 0)).open().unwrap_err();
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
        let error = parse_layer("walk:1:over").unwrap_err().to_string();
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
        let message = unknown.expect_err("an unknown joint is an error").to_string();
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
