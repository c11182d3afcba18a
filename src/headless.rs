//! Work done without a window: opening rigs and rendering single frames to PNG.

use crate::anim::PoseEvaluator;
use crate::render::{Gpu, Offscreen, OrbitCamera, ViewOptions};
use crate::rig::{Rig, RigError, demo, load_file, load_slice};
use crate::skin::posed_bounds;
use std::path::{Path, PathBuf};

/// Opens `path`, or the built-in demo rig when there is none.
pub fn open_rig(path: Option<&Path>) -> Result<Rig, RigError> {
    match path {
        Some(path) => load_file(path),
        None => load_slice(demo::DEMO_GLB, None, "demo.glb"),
    }
}

/// A camera looking at the whole rig in its rest pose (the same for every clip and time, so
/// images of different frames line up).
pub fn framing_camera(rig: &Rig) -> OrbitCamera {
    let pose = PoseEvaluator::new(rig);
    let mut camera = OrbitCamera::default();
    camera.frame(&posed_bounds(rig, &pose));
    camera
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
}

/// Renders one frame offscreen and writes it as a PNG.
pub fn render_to_png(request: &RenderRequest) -> Result<(), String> {
    let rig = open_rig(request.file.as_deref()).map_err(|e| e.to_string())?;
    for warning in &rig.warnings {
        eprintln!("warning: {warning}");
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
    let gpu = Gpu::headless().map_err(|e| e.to_string())?;
    let offscreen = Offscreen::new(&gpu, request.width, request.height).map_err(|e| e.to_string())?;
    let rig_gpu = offscreen.scene.upload_rig(&gpu.device, &gpu.queue, &rig);
    let camera = framing_camera(&rig);
    let mut pose = PoseEvaluator::new(&rig);
    let mut scene = offscreen;
    scene.scene.set_grid(&gpu.device, &posed_bounds(&rig, &pose));
    pose.evaluate(&rig, clip, request.time);
    let image = scene
        .render(&gpu, &rig, &rig_gpu, &pose, &camera, &request.view)
        .map_err(|e| e.to_string())?;
    image
        .save_with_format(&request.out, image::ImageFormat::Png)
        .map_err(|e| format!("cannot write {}: {e}", request.out.display()))
}
