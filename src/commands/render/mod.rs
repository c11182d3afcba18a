//! `rigscope render`: one frame offscreen as a PNG, the whole window with its panels (`--ui`),
//! or one PNG per frame of a clip (`--sequence`).

mod look;
mod request;

pub use look::{LookArgs, LookError, Orbit};
pub use request::{RenderRequest, viewer_for};

use crate::anim::{BlendMode, RootMotion};
use crate::cli::{SkinningChoice, ViewArgs, parse_bend, parse_ik_target, parse_layer, parse_size};
use crate::commands::{CommandError, Outcome, demo_or_file};
use crate::draw::{Clock, ViewRenderer};
use crate::names;
use crate::render::camera::CameraAngle;
use crate::render::{Gpu, Msaa};
use crate::screenshot::{UiWindows, render_window, write_png};
use crate::skin::SkinningPath;
use crate::viewer::CompareLayout;
use crate::viewer::RepairOptions;
use glam::Vec3;
use std::path::PathBuf;

/// The arguments of `rigscope render`.
#[derive(clap::Args, Debug, Clone)]
pub struct RenderArgs {
    /// A .gltf, .glb, .vrm, .fbx or .bvh file; `demo` renders the built-in demo rig.
    pub file: PathBuf,
    /// The PNG to write; with `--sequence`, the folder for the frames.
    #[arg(long)]
    pub out: PathBuf,
    /// Clip name or index (default: the first clip).
    #[arg(long)]
    pub clip: Option<String>,
    /// Time in the clip, in seconds.
    #[arg(long, default_value_t = 0.0)]
    pub time: f32,
    /// Image size, WxH.
    #[arg(long, default_value = "960x720", value_parser = parse_size)]
    pub size: (u32, u32),
    #[command(flatten)]
    pub view: ViewArgs,
    /// Draw the rig as this engine profile draws it (see `rigscope check`): unity-editor, unity,
    /// unity-2, unity-1, unreal, godot, three, babylon, bevy, bevy-webgl2, filament,
    /// sample-renderer.
    #[arg(long, value_name = "NAME", value_parser = crate::engine::parse_engine)]
    pub engine: Option<crate::engine::Engine>,
    /// The selected joint (by node name): its weights in `--view weights`, highlighted in the skeleton.
    #[arg(long)]
    pub joint: Option<String>,
    /// Where vertices are skinned.
    #[arg(long, default_value_t = SkinningPath::Gpu, value_parser = names::cli::<SkinningPath>())]
    pub skinning: SkinningPath,
    #[command(flatten)]
    pub method: SkinningChoice,
    /// Bend a joint by hand: NAME=X,Y,Z in degrees about its local axes (repeatable).
    #[arg(long, value_parser = parse_bend)]
    pub bend: Vec<(String, Vec3)>,
    /// Pull a hand or foot (the end of a two-bone chain) to a world position with IK, over the
    /// clip: JOINT=X,Y,Z (repeatable).
    #[arg(long, value_name = "JOINT=X,Y,Z", value_parser = parse_ik_target)]
    pub ik: Vec<(String, Vec3)>,
    /// Mirror the pose left ↔ right at `--time` (after `--bend` and `--ik`), as an animation
    /// tool's paste flipped.
    #[arg(long)]
    pub mirror_pose: bool,
    /// Draw without the VRM spring bones (by default `--time` simulates them from the clip's
    /// start at a fixed 60 Hz, so one time always gives one picture).
    #[arg(long)]
    pub no_springs: bool,
    /// Hold the feet where they land during each contact of the clip (leg IK, the hips lowered
    /// where a leg cannot reach), as the Layers panel's Lock feet does.
    #[arg(long)]
    pub lock_feet: bool,
    /// Turn the head (the neck and spine taking a share) to look at a world position, over
    /// the clip: X,Y,Z.
    #[arg(long, value_name = "X,Y,Z", value_parser = look::parse_point)]
    pub look_at: Option<Vec3>,
    /// Blend a clip over the base clip: CLIP[:WEIGHT[:add]] (repeatable; mixed unless `add`).
    // The brackets are the help text's syntax, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_parser = parse_layer)]
    pub layer: Vec<(String, f32, BlendMode)>,
    /// Attach a marker (axes and a box) to a joint (repeatable).
    #[arg(long)]
    pub attach: Vec<String>,
    /// Hold the motion root over its rest position on the ground.
    #[arg(long)]
    pub lock_root: bool,
    /// Draw the motion root's path over the clip on the ground.
    #[arg(long)]
    pub trail: bool,
    /// Draw this joint's world path over the clip (node name), with a tick at every frame.
    #[arg(long, value_name = "JOINT")]
    pub trail_joint: Option<String>,
    /// Multisample anti-aliasing: auto is 4× on a GPU and off on a CPU adapter (a software
    /// Vulkan driver), where every sample costs rasterizer time; the window's setting decides
    /// the same way.
    #[arg(long, default_value_t = Msaa::Auto, value_parser = names::cli::<Msaa>())]
    pub msaa: Msaa,
    /// Boxed: the command enum's variants stay near one size.
    #[command(flatten)]
    pub look: Box<LookArgs>,
    // The brackets are the help text's syntax, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Where the camera looks from, around the framed rig: AZIMUTH,ELEVATION[,ZOOM] in degrees
    /// (azimuth 0 looks from +Z, 90 from +X; elevation above the ground; zoom 2 twice as close).
    /// The viewer's framing (about 34,17) when omitted.
    #[arg(long, value_name = "AZIMUTH,ELEVATION[,ZOOM]", value_parser = CameraAngle::parse)]
    pub camera: Option<CameraAngle>,
    /// Write one PNG per frame of the clip into the folder `--out` (frame_0000.png, …), from
    /// time 0 to the clip's end at `--fps`.
    #[arg(long, conflicts_with_all = ["time", "ui"])]
    pub sequence: bool,
    /// Frames per second of `--sequence`.
    #[arg(long, default_value_t = 30.0, requires = "sequence")]
    pub fps: f32,
    /// Draw the whole window (panels, menus and the 3D view) as the viewer shows it.
    #[arg(long)]
    pub ui: bool,
    /// With `--ui`: open the Audit window, audit the rig and show its worst joint's worst pose.
    #[arg(long, requires = "ui")]
    pub audit: bool,
    /// With `--ui`: open the Curves window on the joint given by `--joint`.
    #[arg(long, requires_all = ["ui", "joint"])]
    pub curves: bool,
    #[command(flatten)]
    pub clips: crate::cli::ClipsArgs,
    #[command(flatten)]
    pub fix: super::fix::RenderFixArgs,
    /// Draw a second file beside (or over) the first, through the same camera, at the same
    /// clip (by name) and time; a file without that clip shows its rest pose. `demo` compares
    /// with the built-in demo rig.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["sequence", "ui"])]
    pub compare: Option<PathBuf>,
    /// With `--compare`: the two halves of the image side by side, or the second file's
    /// wireframe over the first.
    #[arg(long, default_value_t = CompareLayout::Side, value_parser = names::cli::<CompareLayout>(), requires = "compare")]
    pub layout: CompareLayout,
}

impl RenderArgs {
    pub fn request(&self) -> RenderRequest {
        RenderRequest {
            file: demo_or_file(&self.file).map(PathBuf::from),
            out: self.out.clone(),
            clip: self.clip.clone(),
            time: self.time,
            width: self.size.0,
            height: self.size.1,
            view: self.view.options(),
            path: self.skinning,
            method: self.method.clone(),
            joint: self.joint.clone(),
            bends: self.bend.clone(),
            ik: self.ik.clone(),
            mirror_pose: self.mirror_pose,
            springs: !self.no_springs,
            lock_feet: self.lock_feet,
            look_at: self.look_at,
            layers: self.layer.clone(),
            attach: self.attach.clone(),
            root_motion: RootMotion {
                lock: self.lock_root,
                trail: self.trail,
                ..RootMotion::default()
            },
            trail_joint: self.trail_joint.clone(),
            camera: self.camera,
            clips: self.clips.files(),
            repair: self.fix.plan(),
            engine: self.engine,
            compare: (self.compare.as_deref()).map(|file| (demo_or_file(file).map(PathBuf::from), self.layout)),
            msaa: self.msaa,
            look: (*self.look).clone(),
        }
    }
}

/// `rigscope render`: one frame, the whole UI, or a sequence of frames at `--fps`.
pub fn run(args: &RenderArgs) -> Result<Outcome, CommandError> {
    let request = args.request();
    if args.sequence {
        render_sequence(&request, args.fps)?;
    } else if args.ui {
        let windows = UiWindows {
            audit: args.audit,
            curves: args.curves,
            repair: None,
        };
        render_ui_to_png(&request, windows)?;
    } else {
        render_to_png(&request)?;
    }
    Ok(Outcome::Passed)
}

/// Renders one frame offscreen and writes it as a PNG.
pub fn render_to_png(request: &RenderRequest) -> Result<(), CommandError> {
    let start = std::time::Instant::now();
    let lap = |what: &str| log::debug!("{what}: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    // The rig loads while the driver starts: neither needs the other.
    let (viewer, gpu) = rayon::join(
        || {
            std::panic::catch_unwind(|| viewer_for(request))
                .unwrap_or_else(|_| Err(CommandError::Failed("loading the rig panicked".into())))
        },
        || {
            let gpu = Gpu::headless();
            lap("adapter and device");
            gpu
        },
    );
    lap("rig loaded");
    let (mut viewer, gpu) = (viewer?, gpu?);
    let samples = request.samples(&gpu);
    let mut image = crate::screenshot::render_view_with(&gpu, &mut viewer, request.width, request.height, samples)?;
    if request.look.transparent {
        look::unpremultiply(&mut image);
    }
    lap("frame rendered and read back");
    write_png(&image, &request.out)?;
    lap("PNG written");
    Ok(())
}

/// `rigscope render --ui`: the whole window, panels included, as a PNG, with the `windows`
/// asked for; with `--fix`, the Repair weights window open on the loaded rig, previewing the
/// repairs asked for.
pub fn render_ui_to_png(request: &RenderRequest, windows: UiWindows) -> Result<(), CommandError> {
    let loaded = RenderRequest {
        repair: crate::repair::RepairPlan::default(),
        ..request.clone()
    };
    let mut viewer = viewer_for(&loaded)?;
    let gpu = Gpu::headless()?;
    let repair = (!request.repair.is_empty()).then(|| RepairOptions::from_plan(&request.repair));
    if let Some(options) = &repair {
        viewer.preview_repair(options);
        if let Some(analysis) = viewer.repair_analysis(options) {
            for line in super::fix::summary_lines(viewer.rig(), &analysis.summary) {
                eprintln!("fix: {line}");
            }
        }
    }
    let windows = UiWindows { repair, ..windows };
    let samples = request.samples(&gpu);
    let image = render_window(&gpu, &mut viewer, windows, (request.width, request.height), samples)?;
    write_png(&image, &request.out).map_err(CommandError::from)
}

/// The times of a sequence at `fps` over a clip of `duration` seconds: 0, 1/fps, … up to
/// and including the end (one frame for a clip of no length).
pub fn sequence_times(duration: f32, fps: f32) -> Vec<f32> {
    let frames = (duration.max(0.0) * fps + 1e-3).floor() as usize + 1;
    (0..frames).map(|i| i as f32 / fps).collect()
}

/// Frames at most a sequence may have, so a typo in `--fps` cannot fill a disk.
pub const MAX_SEQUENCE_FRAMES: usize = 100_000;

/// `rigscope render --sequence`: one PNG per frame of the clip at `fps` into the folder
/// `request.out` (created when missing), named `frame_0000.png`, `frame_0001.png`, … The rig
/// is uploaded once and one offscreen target draws every frame; each frame is what `render
/// --time` draws at its time, spring bones included. Returns the files written.
pub fn render_sequence(request: &RenderRequest, fps: f32) -> Result<Vec<PathBuf>, CommandError> {
    if !(fps.is_finite() && fps > 0.0) {
        return Err(CommandError::Argument(format!(
            "--fps {fps} is not a positive number of frames per second"
        )));
    }
    let mut viewer = viewer_for(request)?;
    let times = sequence_times(viewer.clip_duration(), fps);
    if times.len() > MAX_SEQUENCE_FRAMES {
        return Err(CommandError::Argument(format!(
            "{} frames at {fps} fps is more than the {MAX_SEQUENCE_FRAMES}-frame limit",
            times.len()
        )));
    }
    std::fs::create_dir_all(&request.out).map_err(|source| CommandError::Io {
        path: request.out.clone(),
        source,
    })?;
    let gpu = Gpu::headless()?;
    let samples = request.samples(&gpu);
    let (target, mut renderer) = ViewRenderer::offscreen_target(&gpu, request.width, request.height, samples)?;
    let mut written = Vec::with_capacity(times.len());
    for (i, time) in times.into_iter().enumerate() {
        // Each frame is the picture `render --time` draws at its time: springs simulated from
        // the clip's start.
        if request.springs {
            viewer.run_springs_to(time);
        }
        let mut image = renderer.render_image_at(&gpu, &target, &mut viewer, Clock::Seek(time), None, None)?;
        if request.look.transparent {
            look::unpremultiply(&mut image);
        }
        let path = request.out.join(format!("frame_{i:04}.png"));
        write_png(&image, &path)?;
        written.push(path);
    }
    log::info!("wrote {} frames to {}", written.len(), request.out.display());
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_cover_the_clip_including_its_end() {
        assert_eq!(sequence_times(2.0, 10.0).len(), 21);
        assert_eq!(sequence_times(0.0, 30.0), [0.0]);
        let times = sequence_times(1.0, 3.0);
        assert_eq!(times.len(), 4);
        assert!((times[3] - 1.0).abs() < 1e-6);
        // A duration a hair short of a whole frame does not lose the last frame to rounding.
        assert_eq!(sequence_times(0.9999999, 30.0).len(), 31);
    }
}
