//! Work done without a window: opening rigs and rendering single frames to PNG.

use crate::anim::{Attachment, BlendMode, JointOverride, Layer, RootMotion};
use crate::names::Named;
use crate::render::camera::CameraAngle;
use crate::render::{Gpu, ViewOptions};
use crate::rig::Rig;
use crate::skin::{SkinningMethod, SkinningPath};
use crate::viewer::Viewer;
use glam::Vec3;
use std::path::PathBuf;

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
    let (name, angles) = text
        .rsplit_once('=')
        .ok_or_else(|| format!("bend '{text}' is not NAME=X,Y,Z (degrees), e.g. joint3=0,0,45"))?;
    let values: Vec<f32> = angles.split(',').filter_map(|v| v.trim().parse().ok()).collect();
    match values[..] {
        [x, y, z] if values.iter().all(|v| v.is_finite()) => Ok((name.to_owned(), Vec3::new(x, y, z))),
        _ => Err(format!(
            "bend '{text}' needs three angles in degrees after '=', e.g. {name}=0,0,45"
        )),
    }
}

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
    pub method: SkinningMethod,
    /// Node name of the selected joint (weights view, skeleton highlight).
    pub joint: Option<String>,
    /// Joints bent by hand: node name and Euler degrees.
    pub bends: Vec<(String, Vec3)>,
    /// Clip layers over the base clip: clip name or index, weight, blend mode.
    pub layers: Vec<(String, f32, BlendMode)>,
    /// Joints (node names) that get an attachment marker.
    pub attach: Vec<String>,
    pub root_motion: RootMotion,
    /// The framed camera's angle and zoom (the viewer's default framing when `None`).
    pub camera: Option<CameraAngle>,
    /// Other files whose clips are added to the rig (`--clips`); `clip` may name them.
    pub clips: crate::retarget::ClipFiles,
    /// Weight repairs run on the loaded rig before it is drawn (none by default).
    pub repair: crate::repair::RepairPlan,
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

fn find_node(rig: &Rig, name: &str) -> Result<usize, String> {
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
pub fn viewer_for(request: &RenderRequest) -> Result<Viewer, String> {
    let rig = crate::rig::open(request.file.as_deref()).map_err(|e| e.to_string())?;
    let mut rig = crate::commands::clips::add_clip_files(rig, &request.clips).map_err(|e| e.to_string())?;
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
        return Err(format!("time {} is not a number of seconds", request.time));
    }
    let selected = request.joint.as_deref().map(|name| find_node(&rig, name)).transpose()?;
    let bends = request
        .bends
        .iter()
        .map(|(name, degrees)| Ok((find_node(&rig, name)?, *degrees)))
        .collect::<Result<Vec<_>, String>>()?;
    let mut viewer = Viewer::new(rig, request.file.clone());
    viewer.view.options = request.view;
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
    viewer.animation_mut().root_motion = request.root_motion;
    if let Some(angle) = request.camera {
        viewer.view.camera.look_from(angle);
    }
    viewer.set_skinning(request.path, request.method);
    Ok(viewer)
}

/// Renders one frame offscreen and writes it as a PNG.
pub fn render_to_png(request: &RenderRequest) -> Result<(), String> {
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
    let image =
        crate::draw::render_view(&gpu, &mut viewer, request.width, request.height).map_err(|e| e.to_string())?;
    lap("frame rendered and read back");
    image
        .save_with_format(&request.out, image::ImageFormat::Png)
        .map_err(|e| format!("cannot write {}: {e}", request.out.display()))?;
    lap("PNG written");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
