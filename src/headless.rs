//! Work done without a window: opening rigs and rendering single frames to PNG.

use crate::anim::{Attachment, BlendMode, JointOverride, Layer, RootMotion};
use crate::cli::SkinningChoice;
use crate::commands::clips::CommandError;
use crate::render::camera::CameraAngle;
use crate::render::{Gpu, ViewOptions};
use crate::rig::Rig;
use crate::skin::SkinningPath;
use crate::viewer::Viewer;
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
    /// A second file drawn as the other side of a comparison (`--compare`; `None` for the
    /// demo rig), and how.
    pub compare: Option<(Option<PathBuf>, crate::viewer::CompareLayout)>,
    /// Multisampling (`--msaa`); [`Msaa::Auto`](crate::render::Msaa::Auto) decides as the
    /// window does: 4× on a GPU, none on a CPU adapter.
    pub msaa: crate::render::Msaa,
}

impl RenderRequest {
    /// Samples per pixel of the request's pictures on `gpu`'s adapter.
    pub fn samples(&self, gpu: &Gpu) -> u32 {
        self.msaa
            .samples(&gpu.adapter, crate::render::offscreen::OFFSCREEN_FORMAT)
    }
}

pub(crate) fn find_node(rig: &Rig, name: &str) -> Result<usize, String> {
    rig.find_node(name).ok_or_else(|| {
        let joints: Vec<&str> = rig
            .skins
            .iter()
            .flat_map(|s| &s.joints)
            .map(|&j| rig.nodes[j].name.as_str())
            .take(12)
            .collect();
        format!(
            "no node named '{name}' in {} (joints include: {})",
            rig.name,
            joints.join(", ")
        )
    })
}

/// Sets up a viewer as the request describes, without a window.
pub fn viewer_for(request: &RenderRequest) -> Result<Viewer, CommandError> {
    let rig = crate::rig::open(request.file.as_deref()).map_err(|e| e.to_string())?;
    let mut rig = crate::commands::clips::add_clip_files(rig, &request.clips)?;
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
    let clip = match &request.clip {
        Some(key) => Some(rig.find_clip(key).ok_or_else(|| {
            let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
            format!(
                "no clip '{key}' in {} (clips: {})",
                rig.name,
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            )
        })?),
        None => (!rig.clips.is_empty()).then_some(0),
    };
    if !request.time.is_finite() {
        return Err(format!("time {} is not a number of seconds", request.time).into());
    }
    let selected = request.joint.as_deref().map(|name| find_node(&rig, name)).transpose()?;
    let bends = request
        .bends
        .iter()
        .map(|(name, degrees)| Ok((find_node(&rig, name)?, *degrees)))
        .collect::<Result<Vec<_>, String>>()?;
    let ik_goals = request
        .ik
        .iter()
        .map(|(name, target)| {
            let end = find_node(&rig, name)?;
            crate::anim::ik_layer::IkGoal::for_end_joint(&rig.nodes, end, *target).ok_or_else(|| {
                format!("--ik: {name} is not the end of a two-bone chain (it needs a parent and a grandparent)")
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut viewer = Viewer::new(rig, request.file.clone());
    viewer.animation_mut().ik_goals = ik_goals;
    viewer.view.options = request.view;
    viewer.view.options.skeleton.show |= viewer.rig().instances.is_empty();
    viewer.player_mut().select(clip);
    viewer.player_mut().playing = false;
    viewer.player_mut().time = request.time;
    if selected.is_some() {
        viewer.view.selected_joint = selected;
    }
    for (node, degrees) in bends {
        viewer.set_override(
            node,
            JointOverride {
                euler_degrees: degrees,
                ..JointOverride::IDENTITY
            },
        );
    }
    for (clip, weight, mode) in &request.layers {
        let index = viewer
            .rig()
            .find_clip(clip)
            .ok_or_else(|| format!("no clip '{clip}' to layer in {}", viewer.rig().name))?;
        viewer.animation_mut().layers.push(Layer {
            weight: *weight,
            mode: *mode,
            ..Layer::new(index)
        });
    }
    let size = viewer.document().rest_bounds.size().max(1e-3) * 0.06;
    for name in &request.attach {
        let node = find_node(viewer.rig(), name)?;
        viewer.animation_mut().attachments.push(Attachment {
            node,
            offset: Vec3::ZERO,
            rotation_degrees: Vec3::ZERO,
            size,
        });
    }
    viewer.animation_mut().root_motion = RootMotion {
        trail_joint: request
            .trail_joint
            .as_deref()
            .map(|name| find_node(viewer.rig(), name))
            .transpose()?,
        ..request.root_motion
    };
    if let Some(angle) = request.camera {
        viewer.view.camera.look_from(angle);
    }
    let method = request.method.apply(&mut viewer)?;
    viewer.set_skinning(request.path, method);
    if request.view.mode == crate::render::ViewMode::WeightDifference && request.compare.is_none() {
        return Err("--view weight-difference compares with another file: it needs --compare FILE".into());
    }
    if let Some((path, layout)) = &request.compare {
        let other = crate::rig::open(path.as_deref()).map_err(|e| e.to_string())?;
        viewer.compare_with(other, path.clone(), *layout);
        if let Some(comparison) = viewer.comparison()
            && let Some(clip) = comparison.missing_clip()
        {
            let name = &comparison.other().rig().name;
            eprintln!("warning: {name} has no clip '{clip}': it is drawn in its rest pose");
        }
    }
    Ok(viewer)
}

/// Renders one frame offscreen and writes it as a PNG.
pub fn render_to_png(request: &RenderRequest) -> Result<(), CommandError> {
    let start = std::time::Instant::now();
    let lap = |what: &str| log::debug!("{what}: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    // The rig loads while the driver starts: neither needs the other.
    let (viewer, gpu) = rayon::join(
        || std::panic::catch_unwind(|| viewer_for(request)).unwrap_or_else(|_| Err("loading the rig panicked".into())),
        || {
            let gpu = Gpu::headless().map_err(|e| e.to_string());
            lap("adapter and device");
            gpu
        },
    );
    lap("rig loaded");
    let (mut viewer, gpu) = (viewer?, gpu?);
    let samples = request.samples(&gpu);
    let image = crate::draw::render_view_with(&gpu, &mut viewer, request.width, request.height, samples)
        .map_err(|e| e.to_string())?;
    lap("frame rendered and read back");
    crate::screenshot::write_png(&image, &request.out)?;
    lap("PNG written");
    Ok(())
}
