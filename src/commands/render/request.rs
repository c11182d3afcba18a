//! What one `rigscope render` draws, and the viewer set up to draw it without a window.

use crate::anim::ik_layer::IkGoal;
use crate::anim::{Attachment, BlendMode, JointOverride, Layer, RootMotion};
use crate::cli::{SkinningChoice, find_node};
use crate::commands::CommandError;
use crate::render::camera::CameraAngle;
use crate::render::{Gpu, ViewOptions};
use crate::rig::Rig;
use crate::skin::SkinningPath;
use crate::viewer::{PoseEdit, PoseParts, Viewer};
use glam::Vec3;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct RenderRequest {
    /// `None` renders the demo rig.
    pub file: Option<PathBuf>,
    pub out: PathBuf,
    /// Clip name or index; the first clip when `None`.
    pub clip: Option<String>,
    pub time: f32,
    pub width: u32,
    pub height: u32,
    pub view: ViewOptions,
    pub path: SkinningPath,
    /// The skinning method and the DQS mask (`--method`, `--dqs-joint`).
    pub method: SkinningChoice,
    /// Node name of the selected joint (weights view, skeleton highlight).
    pub joint: Option<String>,
    /// Joints bent by hand: node name and Euler degrees.
    pub bends: Vec<(String, Vec3)>,
    /// IK targets: the end joint of a two-bone chain (node name) and its world position.
    pub ik: Vec<(String, Vec3)>,
    /// Mirror the pose left ↔ right (after the bends and IK goals).
    pub mirror_pose: bool,
    /// Simulate the spring bones from the clip's start to `time` (`--no-springs` turns them
    /// off).
    pub springs: bool,
    /// Hold the feet on their contacts (see [`crate::motion::foot_lock`]).
    pub lock_feet: bool,
    /// The head turned to this world position (see [`crate::anim::look_at`]).
    pub look_at: Option<Vec3>,
    /// Clip layers over the base clip: clip name or index, weight, blend mode.
    pub layers: Vec<(String, f32, BlendMode)>,
    /// Joints (node names) that get an attachment marker.
    pub attach: Vec<String>,
    pub root_motion: RootMotion,
    /// Node name of a joint whose path over the clip is drawn (`--trail-joint`).
    pub trail_joint: Option<String>,
    /// The framed camera's angle and zoom (the viewer's default framing when `None`).
    pub camera: Option<CameraAngle>,
    /// Other files whose clips are added to the rig (`--clips`); `clip` may name them.
    pub clips: crate::retarget::ClipFiles,
    /// Weight repairs run on the loaded rig before it is drawn (none by default).
    pub repair: crate::repair::RepairPlan,
    /// The engine profile the rig is drawn as (`--engine`; the file's own drawing when `None`).
    pub engine: Option<crate::engine::Engine>,
    /// A second file drawn as the other side of a comparison (`--compare`; `None` for the
    /// demo rig), and how.
    pub compare: Option<(Option<PathBuf>, crate::viewer::CompareLayout)>,
    /// Multisampling (`--msaa`); [`Msaa::Auto`](crate::render::Msaa::Auto) decides as the
    /// window does: 4× on a GPU, none on a CPU adapter.
    pub msaa: crate::render::Msaa,
    /// Camera placement, tone curve, exposure and background (`--orbit`, `--tonemap`, …).
    pub look: super::LookArgs,
}

impl RenderRequest {
    /// Samples per pixel of the request's pictures on `gpu`'s adapter.
    pub fn samples(&self, gpu: &Gpu) -> u32 {
        self.msaa
            .samples(&gpu.adapter, crate::render::offscreen::OFFSCREEN_FORMAT)
    }
}

/// The joints the request names, found in the rig before the viewer takes it.
struct NamedJoints {
    selected: Option<usize>,
    bends: Vec<(usize, Vec3)>,
    ik_goals: Vec<IkGoal>,
}

/// Sets up a viewer as the request describes, without a window.
pub fn viewer_for(request: &RenderRequest) -> Result<Viewer, CommandError> {
    let rig = load_rig(request)?;
    let clip = match &request.clip {
        Some(key) => Some(find_clip(&rig, key)?),
        None => (!rig.clips.is_empty()).then_some(0),
    };
    if !request.time.is_finite() {
        return Err(CommandError::Argument(format!(
            "time {} is not a number of seconds",
            request.time
        )));
    }
    let joints = named_joints(&rig, request)?;
    let mut viewer = Viewer::new(rig, request.file.clone());
    for goal in joints.ik_goals {
        viewer.edit_pose(PoseEdit::AddIkGoal(goal));
    }
    viewer.view.options = request.view;
    viewer.view.options.skeleton.show |= viewer.rig().instances.is_empty();
    viewer.hold(clip, request.time);
    if request.lock_feet {
        viewer.set_lock_feet(true)?;
    }
    if let Some(point) = request.look_at {
        (viewer.set_look_at(Some(crate::viewer::LookAtTarget::Point(point))))
            .map_err(|e| CommandError::Argument(format!("--look-at: {e}")))?;
    }
    if joints.selected.is_some() {
        viewer.view.selected_joint = joints.selected;
    }
    for (node, degrees) in joints.bends {
        viewer.set_override(node, JointOverride::from_euler_degrees(degrees));
    }
    add_layers_and_markers(&mut viewer, request)?;
    if let Some(angle) = request.camera {
        viewer.view.camera.look_from(angle);
    }
    request.look.apply(&mut viewer);
    viewer.environment =
        (request.look.environment()).map_err(|e| CommandError::Argument(format!("--environment: {e}")))?;
    let method = request.method.apply(&mut viewer)?;
    viewer.set_skinning(request.path, method);
    if request.mirror_pose {
        (viewer.mirror_pose()).map_err(|e| CommandError::Argument(format!("--mirror-pose: {e}")))?;
    }
    if request.springs {
        viewer.run_springs_to(request.time);
    } else {
        viewer.set_springs(false);
    }
    compare(&mut viewer, request)?;
    Ok(viewer)
}

/// The request's rig with its `--clips` added and its repairs run.
fn load_rig(request: &RenderRequest) -> Result<Rig, CommandError> {
    let rig = crate::rig::open_with(request.file.as_deref(), &request.clips.options.read).map_err(|source| {
        CommandError::Load {
            path: request.file.clone().unwrap_or_else(|| "demo".into()),
            source,
        }
    })?;
    let mut rig = crate::cli::add_clip_files(rig, &request.clips)?;
    for warning in rig.load_warnings() {
        eprintln!("warning: {warning}");
    }
    if !request.repair.is_empty() {
        let (repaired, summary) = crate::repair::apply(&rig, &request.repair);
        for line in crate::commands::fix::summary_lines(&rig, &summary) {
            eprintln!("fix: {line}");
        }
        rig = repaired;
    }
    if let Some(engine) = request.engine {
        rig = engine.draw(&rig).map_err(|e| CommandError::Failed(e.to_string()))?;
    }
    Ok(rig)
}

/// The clip `key` names (a name or an index); the error lists the rig's clips.
fn find_clip(rig: &Rig, key: &str) -> Result<usize, CommandError> {
    rig.find_clip(key).ok_or_else(|| {
        let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
        let clips = if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        };
        CommandError::Argument(format!("no clip '{key}' in {} (clips: {clips})", rig.name))
    })
}

fn named_joints(rig: &Rig, request: &RenderRequest) -> Result<NamedJoints, CommandError> {
    let selected = request.joint.as_deref().map(|name| find_node(rig, name)).transpose()?;
    let bends = (request.bends.iter())
        .map(|(name, degrees)| Ok((find_node(rig, name)?, *degrees)))
        .collect::<Result<Vec<_>, CommandError>>()?;
    let ik_goals = (request.ik.iter())
        .map(|(name, target)| {
            let end = find_node(rig, name)?;
            IkGoal::for_end_joint(&rig.nodes, end, *target).ok_or_else(|| {
                CommandError::Argument(format!(
                    "--ik: {name} is not the end of a two-bone chain (it needs a parent and a grandparent)"
                ))
            })
        })
        .collect::<Result<Vec<_>, CommandError>>()?;
    Ok(NamedJoints {
        selected,
        bends,
        ik_goals,
    })
}

/// The request's clip layers, attachment markers and root motion.
fn add_layers_and_markers(viewer: &mut Viewer, request: &RenderRequest) -> Result<(), CommandError> {
    let mut parts = PoseParts::of(viewer.animation());
    for (clip, weight, mode) in &request.layers {
        let index = viewer
            .rig()
            .find_clip(clip)
            .ok_or_else(|| CommandError::Argument(format!("no clip '{clip}' to layer in {}", viewer.rig().name)))?;
        parts.layers.push(Layer {
            weight: *weight,
            mode: *mode,
            ..Layer::new(index)
        });
    }
    let size = viewer.document().rest_bounds.size().max(1e-3) * 0.06;
    for name in &request.attach {
        let node = find_node(viewer.rig(), name)?;
        parts.attachments.push(Attachment {
            node,
            offset: Vec3::ZERO,
            rotation_degrees: Vec3::ZERO,
            size,
        });
    }
    let trail_joint = (request.trail_joint.as_deref())
        .map(|name| find_node(viewer.rig(), name))
        .transpose()?;
    parts.root_motion = RootMotion {
        trail_joint,
        ..request.root_motion
    };
    viewer.edit_pose(PoseEdit::Parts(parts));
    Ok(())
}

/// Opens the `--compare` file beside the rig, when there is one.
fn compare(viewer: &mut Viewer, request: &RenderRequest) -> Result<(), CommandError> {
    if request.view.mode == crate::render::ViewMode::WeightDifference && request.compare.is_none() {
        return Err(CommandError::Argument(
            "--view weight-difference compares with another file: it needs --compare FILE".into(),
        ));
    }
    let Some((path, layout)) = &request.compare else {
        return Ok(());
    };
    let other = crate::rig::open(path.as_deref()).map_err(|source| CommandError::Load {
        path: path.clone().unwrap_or_else(|| "demo".into()),
        source,
    })?;
    viewer.compare_with(other, path.clone(), *layout);
    if let Some(comparison) = viewer.comparison()
        && let Some(clip) = comparison.missing_clip()
    {
        let name = &comparison.other().rig().name;
        eprintln!("warning: {name} has no clip '{clip}': it is drawn in its rest pose");
    }
    Ok(())
}
