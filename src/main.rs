use clap::{Args, Parser, Subcommand};
use glam::Vec3;
use rigscope::anim::{BlendMode, GhostOptions, RootMotion};
use rigscope::cli::{parse_bend, parse_ik_target, parse_layer, parse_size};
use rigscope::commands::clips::CommandError;
use rigscope::headless::{RenderRequest, render_to_png};
use rigscope::names;
use rigscope::render::camera::CameraAngle;
use rigscope::render::{DeformationMeasure, Msaa, SkeletonOptions, ViewMode, ViewOptions};
use rigscope::screenshot::UiWindows;
use rigscope::skin::SkinningPath;
use rigscope::viewer::CompareLayout;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "rigscope",
    version = rigscope::ui::about::VERSION,
    about = "Open skinned glTF rigs, play their clips, inspect their skinning"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    view: ViewArgs,
}

/// Opens the viewer window.
#[derive(Args)]
struct ViewArgs {
    /// A .gltf, .glb, .vrm or .fbx file; the built-in demo rig when omitted.
    #[arg(conflicts_with = "synthetic")]
    file: Option<PathBuf>,
    /// Open a generated skinned tube of VERTICES,JOINTS (4 influences) instead of a file, e.g.
    /// 1000000,256 to see how the viewer copes with a big rig.
    #[arg(long, value_name = "VERTICES,JOINTS", value_parser = rigscope::cli::parse_synthetic)]
    synthetic: Option<(usize, usize)>,
    /// Close the window after drawing this many frames (for smoke tests).
    #[arg(long, value_name = "N")]
    exit_after_frames: Option<u64>,
    /// With `--exit-after-frames`: save the last frame, panels included, as this PNG first.
    #[arg(long, value_name = "PNG", requires = "exit_after_frames")]
    screenshot: Option<PathBuf>,
    /// Add the clips of another .gltf/.glb file, retargeted onto the rig by joint name and by the
    /// pairs kept from the Joint mapping window (repeatable).
    #[arg(long = "clips", value_name = "FILE")]
    clips: Vec<PathBuf>,
}

#[derive(Args)]
struct RenderArgs {
    /// A .gltf, .glb, .vrm or .fbx file; `demo` renders the built-in demo rig.
    file: PathBuf,
    /// The PNG to write; with `--sequence`, the folder for the frames.
    #[arg(long)]
    out: PathBuf,
    /// Clip name or index (default: the first clip).
    #[arg(long)]
    clip: Option<String>,
    /// Time in the clip, in seconds.
    #[arg(long, default_value_t = 0.0)]
    time: f32,
    /// Image size, WxH.
    #[arg(long, default_value = "960x720", value_parser = parse_size)]
    size: (u32, u32),
    /// What the mesh shows.
    #[arg(long, default_value_t = ViewMode::Shaded, value_parser = names::cli::<ViewMode>())]
    view: ViewMode,
    /// The selected joint (by node name): its weights in `--view weights`, highlighted in the skeleton.
    #[arg(long)]
    joint: Option<String>,
    /// Where vertices are skinned.
    #[arg(long, default_value_t = SkinningPath::Gpu, value_parser = names::cli::<SkinningPath>())]
    skinning: SkinningPath,
    #[command(flatten)]
    method: rigscope::cli::SkinningChoice,
    /// Bend a joint by hand: NAME=X,Y,Z in degrees about its local axes (repeatable).
    #[arg(long, value_parser = parse_bend)]
    bend: Vec<(String, Vec3)>,
    /// Pull a hand or foot (the end of a two-bone chain) to a world position with IK, over the
    /// clip: JOINT=X,Y,Z (repeatable).
    #[arg(long, value_name = "JOINT=X,Y,Z", value_parser = parse_ik_target)]
    ik: Vec<(String, Vec3)>,
    /// Blend a clip over the base clip: CLIP[:WEIGHT[:add]] (repeatable; mixed unless `add`).
    #[arg(long, value_parser = parse_layer)]
    layer: Vec<(String, f32, BlendMode)>,
    /// Attach a marker (axes and a box) to a joint (repeatable).
    #[arg(long)]
    attach: Vec<String>,
    /// Hold the motion root over its rest position on the ground.
    #[arg(long)]
    lock_root: bool,
    /// Draw the motion root's path over the clip on the ground.
    #[arg(long)]
    trail: bool,
    /// Draw this joint's world path over the clip (node name), with a tick at every frame.
    #[arg(long, value_name = "JOINT")]
    trail_joint: Option<String>,
    /// In the joints view, color by the strongest joint only.
    #[arg(long)]
    dominant: bool,
    /// What `--view deformation` measures: the posed / bind triangle area, or the edge stretch.
    #[arg(long, default_value_t = DeformationMeasure::Area, value_parser = names::cli::<DeformationMeasure>())]
    deformation: DeformationMeasure,
    /// Onion skin: N ghost poses on each side of --time, K frames (of 1/30 s) apart (K 5 when
    /// left out), past ones blue and future ones orange, fading with distance.
    #[arg(long, value_name = "N[,K]", value_parser = GhostOptions::parse)]
    ghosts: Option<GhostOptions>,
    /// Draw the --ghosts as skeletons instead of skinned meshes.
    #[arg(long, requires = "ghosts")]
    ghost_skeletons: bool,
    /// Draw the skeleton overlay.
    #[arg(long)]
    skeleton: bool,
    /// Draw the skeleton in its bind pose (where the inverse bind matrices put the joints) over
    /// the current pose, in green.
    #[arg(long)]
    bind_skeleton: bool,
    /// Draw the wireframe overlay.
    #[arg(long)]
    wireframe: bool,
    /// Leave out the ground grid and axes.
    #[arg(long)]
    no_grid: bool,
    /// Multisample anti-aliasing: auto is 4× on a GPU and off on a CPU adapter (a software
    /// Vulkan driver), where every sample costs rasterizer time; the window's setting decides
    /// the same way.
    #[arg(long, default_value_t = Msaa::Auto, value_parser = names::cli::<Msaa>())]
    msaa: Msaa,
    /// Where the camera looks from, around the framed rig: AZIMUTH,ELEVATION[,ZOOM] in degrees
    /// (azimuth 0 looks from +Z, 90 from +X; elevation above the ground; zoom 2 twice as close).
    /// The viewer's framing (about 34,17) when omitted.
    #[arg(long, value_name = "AZIMUTH,ELEVATION[,ZOOM]", value_parser = CameraAngle::parse)]
    camera: Option<CameraAngle>,
    /// Write one PNG per frame of the clip into the folder `--out` (frame_0000.png, …), from
    /// time 0 to the clip's end at `--fps`.
    #[arg(long, conflicts_with_all = ["time", "ui"])]
    sequence: bool,
    /// Frames per second of `--sequence`.
    #[arg(long, default_value_t = 30.0, requires = "sequence")]
    fps: f32,
    /// Draw the whole window (panels, menus and the 3D view) as the viewer shows it.
    #[arg(long)]
    ui: bool,
    /// With `--ui`: open the Audit window, audit the rig and show its worst joint's worst pose.
    #[arg(long, requires = "ui")]
    audit: bool,
    /// With `--ui`: open the Curves window on the joint given by `--joint`.
    #[arg(long, requires_all = ["ui", "joint"])]
    curves: bool,
    #[command(flatten)]
    clips: rigscope::commands::clips::ClipsArgs,
    #[command(flatten)]
    fix: rigscope::commands::fix::RenderFixArgs,
    /// Draw a second file beside (or over) the first, through the same camera, at the same
    /// clip (by name) and time; a file without that clip shows its rest pose. `demo` compares
    /// with the built-in demo rig.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["sequence", "ui"])]
    compare: Option<PathBuf>,
    /// With `--compare`: the two halves of the image side by side, or the second file's
    /// wireframe over the first.
    #[arg(long, default_value_t = CompareLayout::Side, value_parser = names::cli::<CompareLayout>(), requires = "compare")]
    layout: CompareLayout,
}

#[derive(Subcommand)]
enum Command {
    /// Render one frame offscreen (no window or display needed) and write a PNG.
    Render(RenderArgs),
    /// Print the rig report: skins, meshes, clips, materials and findings. Exits with 1 when the
    /// report has error findings, 2 when the file cannot be loaded (or has no such --vertex).
    Inspect {
        /// A .gltf, .glb, .vrm or .fbx file; `demo` inspects the built-in demo rig.
        file: PathBuf,
        /// Print one JSON document instead of text.
        #[arg(long)]
        json: bool,
        /// Print one vertex instead of the report: bind and posed position (the first clip at
        /// t = 0, else the bind pose) and its joints by weight. glTF mesh and primitive indices.
        #[arg(long, value_name = "MESH:PRIMITIVE:INDEX", value_parser = rigscope::commands::inspect::parse_vertex)]
        vertex: Option<(usize, usize, u32)>,
        #[command(flatten)]
        curves: rigscope::commands::curves::CurvesArgs,
        #[command(flatten)]
        limits: rigscope::commands::inspect::ReportLimitArgs,
    },
    /// Sweep every weighted joint through twists and bends, skin each pose (LBS and DQS) and rank
    /// the joints by how badly their skinning deforms; check left/right weight symmetry. Exits
    /// with 1 when a joint crosses a threshold (or too many vertices are asymmetric), 2 when the
    /// file cannot be loaded or a --joint names no joint.
    Audit(rigscope::commands::audit::AuditArgs),
    /// Repair skin weights (normalize, limit influences) and write the result as a new .glb or
    /// .gltf that keeps everything else. Exits with 0 when something was repaired, 1 when nothing
    /// needed it, 2 when the file cannot be loaded or the output cannot be written.
    Fix(rigscope::commands::fix::FixArgs),
    /// Carry other files' clips onto a rig and edit its clips (in place, trim, resample, rename,
    /// drop), writing a new .glb or .gltf that keeps everything else; an FBX rig is written
    /// whole as a new glTF. Exits with 0 when written, 1 when nothing changed, 2 on a bad
    /// argument or a file that cannot be read or written.
    Clips(rigscope::commands::edit_clips::EditClipsArgs),
    /// Compare two files of the same rig: joints, bind and rest poses, vertices and weights
    /// (matched by bind position), clips (world-space joint error over the whole clip),
    /// materials and report findings. Exits with 1 when they differ beyond the thresholds, 2
    /// when either file cannot be loaded.
    Diff(rigscope::commands::diff::DiffArgs),
    /// Write the skinned, morphed mesh at one moment of a clip as a static mesh (.obj with a .mtl
    /// and PNG textures beside it, or .glb). Exits with 0 when written, 2 when nothing was: the
    /// file cannot be loaded, no such clip, a time outside the clip, or an output that is not
    /// .obj or .glb.
    Export(rigscope::commands::export::ExportArgs),
    /// Write the built-in demo rig as a GLB file.
    MakeDemo {
        out: PathBuf,
        #[arg(long, default_value_t = rigscope::rig::demo::DEMO_JOINTS)]
        joints: usize,
    },
    /// Run the frame loop headless (offscreen, no window) on the GPU path, the CPU path and the
    /// same mesh drawn static, and print per-stage medians and ratios; the last line is JSON.
    Bench {
        /// A .gltf, .glb, .vrm or .fbx file (the demo rig when omitted and no --synthetic).
        #[arg(conflicts_with = "synthetic")]
        file: Option<PathBuf>,
        /// A generated skinned tube of VERTICES,JOINTS (4 influences), e.g. 100000,64.
        #[arg(long, value_name = "VERTICES,JOINTS", value_parser = rigscope::cli::parse_synthetic)]
        synthetic: Option<(usize, usize)>,
        /// Timed frames per path.
        #[arg(long, default_value_t = 120)]
        frames: usize,
        /// Image size, WxH.
        #[arg(long, default_value = "960x720", value_parser = parse_size)]
        size: (u32, u32),
        /// What the mesh shows in every timed frame (as `render --view`).
        #[arg(long, default_value_t = ViewMode::Shaded, value_parser = names::cli::<ViewMode>())]
        view: ViewMode,
        /// Print only the JSON line.
        #[arg(long)]
        json: bool,
        /// Time the window's way with heavy scenes instead: orbit the camera for --frames
        /// frames (a heavy rig shows its proxy), then hold still until the whole scene is
        /// finished portion by portion and kept. GPU path, anti-aliasing as the window's Auto.
        #[arg(long)]
        orbit: bool,
        /// Draw N onion-skin ghosts on each side, K frames apart, in every timed frame (as
        /// `render --ghosts`).
        #[arg(long, value_name = "N[,K]", value_parser = GhostOptions::parse)]
        ghosts: Option<GhostOptions>,
        #[command(flatten)]
        clips: rigscope::commands::clips::ClipsArgs,
        #[command(flatten)]
        method: rigscope::cli::SkinningChoice,
    },
    /// Print a shell completion script (for packages: `rigscope completions bash > rigscope.bash`).
    #[command(hide = true)]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write man pages into a folder: rigscope.1 and one per subcommand (rigscope-render.1, …).
    #[command(hide = true)]
    Man {
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// `rigscope man --out DIR`: rigscope.1 and a page per visible subcommand (rigscope-render.1, …),
/// generated from the command-line definition above, as packages ship them.
fn man_pages(out: &std::path::Path) -> Result<(), CommandError> {
    use clap::CommandFactory;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    clap_mangen::generate_to(Cli::command(), out)
        .map_err(|e| format!("cannot write man pages into {}: {e}", out.display()).into())
}

/// `rigscope render`: one frame, the whole UI, or a sequence of frames at `sequence` fps.
fn render(sequence: Option<f32>, ui: bool, windows: UiWindows, request: &RenderRequest) -> Result<(), CommandError> {
    match sequence {
        Some(fps) => rigscope::screenshot::render_sequence(request, fps).map(|_| ()),
        None if ui => rigscope::screenshot::render_ui_to_png(request, windows),
        None => render_to_png(request),
    }
}

/// Leaves Mesa's Vulkan device-select layer out of a command that draws on no display: the layer
/// asks the X server (or Wayland compositor) named in the environment which GPU drives the
/// display, which cost `rigscope render` 25 ms of its 0.12 s on a CPU adapter. Kept when the user
/// picks a device through it (`MESA_VK_DEVICE_SELECT…`) or has already decided
/// (`NODEVICE_SELECT`).
fn leave_out_display_device_selection() {
    let chosen = std::env::vars_os().any(|(name, _)| {
        let name = name.to_string_lossy();
        name.starts_with("MESA_VK_DEVICE_SELECT") || name == "NODEVICE_SELECT"
    });
    if !chosen {
        // SAFETY: called first thing in `main`, before any thread is started, so no other thread
        // reads or writes the environment meanwhile.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.command.is_some() {
        leave_out_display_device_selection();
    }
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("error,rigscope=info"))
        .format_timestamp_millis()
        .init();
    let result = match cli.command {
        Some(Command::Render(args)) => render(
            args.sequence.then_some(args.fps),
            args.ui,
            UiWindows {
                audit: args.audit,
                curves: args.curves,
            },
            &RenderRequest {
                file: (args.file.as_os_str() != "demo").then_some(args.file),
                out: args.out,
                clip: args.clip,
                time: args.time,
                width: args.size.0,
                height: args.size.1,
                view: ViewOptions {
                    grid: !args.no_grid,
                    mode: args.view,
                    dominant_joint: args.dominant,
                    deformation: args.deformation,
                    skeleton: SkeletonOptions {
                        show: args.skeleton,
                        ..SkeletonOptions::default()
                    },
                    wireframe: args.wireframe,
                    bind_skeleton: args.bind_skeleton,
                    ghosts: args.ghosts.map_or_else(GhostOptions::default, |ghosts| GhostOptions {
                        skeleton: args.ghost_skeletons,
                        ..ghosts
                    }),
                    ..ViewOptions::default()
                },
                path: args.skinning,
                method: args.method,
                joint: args.joint,
                bends: args.bend,
                ik: args.ik,
                layers: args.layer,
                attach: args.attach,
                root_motion: RootMotion {
                    lock: args.lock_root,
                    trail: args.trail,
                    ..RootMotion::default()
                },
                trail_joint: args.trail_joint,
                camera: args.camera,
                clips: args.clips.files(),
                repair: args.fix.plan(),
                compare: (args.compare).map(|file| ((file.as_os_str() != "demo").then_some(file), args.layout)),
                msaa: args.msaa,
            },
        ),
        Some(Command::Inspect {
            file,
            json,
            vertex,
            curves,
            limits,
        }) => {
            if curves.curves {
                return rigscope::commands::curves::curves_command(&file, &curves, json);
            }
            return rigscope::commands::inspect::inspect(
                (file.as_os_str() != "demo").then_some(file.as_path()),
                json,
                vertex,
                &limits,
            );
        }
        Some(Command::Audit(args)) => return rigscope::commands::audit::audit_command(&args),
        Some(Command::Fix(args)) => return rigscope::commands::fix::fix_command(&args),
        Some(Command::Clips(args)) => return rigscope::commands::edit_clips::edit_clips_command(&args),
        Some(Command::Diff(args)) => return rigscope::commands::diff::diff_command(&args),
        Some(Command::Export(args)) => return rigscope::commands::export::export_command(&args),
        Some(Command::MakeDemo { out, joints }) => std::fs::write(&out, rigscope::rig::demo::demo_glb(joints))
            .map_err(|e| format!("cannot write {}: {e}", out.display()).into()),
        Some(Command::Bench {
            file,
            synthetic,
            frames,
            size,
            view,
            json,
            orbit,
            ghosts,
            clips,
            method,
        }) => {
            use rigscope::commands::bench::{BenchOptions, bench_command};
            let options = BenchOptions {
                rig: rigscope::cli::RigSource::from_args(file, synthetic),
                frames: frames.max(1),
                width: size.0,
                height: size.1,
                view,
                ghosts: ghosts.unwrap_or_default(),
                clips: clips.files(),
                method,
            };
            bench_command(&options, orbit, json)
        }
        Some(Command::Completions { shell }) => {
            let mut cli = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cli, "rigscope", &mut std::io::stdout());
            Ok(())
        }
        Some(Command::Man { out }) => man_pages(&out),
        None => rigscope::app::run(
            rigscope::cli::RigSource::from_args(cli.view.file, cli.view.synthetic),
            cli.view.clips,
            cli.view.exit_after_frames,
            cli.view.screenshot,
        )
        .map_err(CommandError::from),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rigscope: {e}");
            e.exit_code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigscope::names::Named;
    use rigscope::skin::SkinningMethod;
    use strum::VariantArray;

    fn render_args(extra: &[&str]) -> Result<RenderArgs, clap::Error> {
        let base = ["rigscope", "render", "demo", "--out", "x.png"];
        match Cli::try_parse_from(base.iter().chain(extra))?.command {
            Some(Command::Render(args)) => Ok(args),
            _ => panic!("`render` parsed as another command"),
        }
    }

    #[test]
    fn fix_takes_an_optional_limit_and_needs_somewhere_to_write() {
        use rigscope::commands::fix::FixArgs;
        use rigscope::repair::MirrorDirection;
        let fix = |extra: &[&str]| -> Result<FixArgs, clap::error::ErrorKind> {
            let args = ["rigscope", "fix", "in.glb"].iter().chain(extra);
            match Cli::try_parse_from(args).map_err(|e| e.kind())?.command {
                Some(Command::Fix(args)) => Ok(args),
                _ => panic!("`fix` parsed as another command"),
            }
        };
        let limit = |extra: &[&str]| fix(extra).map(|a| a.limit);
        assert_eq!(limit(&["--out", "o.glb", "--limit"]), Ok(Some(4)));
        assert_eq!(limit(&["--out", "o.glb", "--limit", "8"]), Ok(Some(8)));
        assert_eq!(limit(&["--out", "o.glb"]), Ok(None));
        assert_eq!(
            limit(&["--out", "o.glb", "--limit", "9"]),
            Err(clap::error::ErrorKind::ValueValidation)
        );
        assert_eq!(
            fix(&["--normalize"]).map(|_| ()),
            Err(clap::error::ErrorKind::MissingRequiredArgument)
        );
        assert!(fix(&["--normalize", "--dry-run"]).is_ok() && fix(&["--normalize", "--overwrite"]).is_ok());
        assert_eq!(
            fix(&["--overwrite", "--out", "o.glb"]).map(|_| ()),
            Err(clap::error::ErrorKind::ArgumentConflict)
        );
        assert_eq!(
            fix(&["--dry-run", "--mirror", "right-to-left"]).map(|a| a.mirror),
            Ok(Some(MirrorDirection::RightToLeft))
        );
    }

    #[test]
    fn enum_options_take_exactly_the_names_users_type() {
        for &mode in ViewMode::VARIANTS {
            assert_eq!(render_args(&["--view", mode.name()]).unwrap().view, mode);
        }
        for &measure in DeformationMeasure::VARIANTS {
            assert_eq!(
                render_args(&["--deformation", measure.name()]).unwrap().deformation,
                measure
            );
        }
        for &path in SkinningPath::VARIANTS {
            assert_eq!(render_args(&["--skinning", path.name()]).unwrap().skinning, path);
        }
        for &method in SkinningMethod::VARIANTS {
            assert_eq!(
                render_args(&["--method", method.name()]).unwrap().method.method,
                Some(method)
            );
        }
        let defaults = render_args(&[]).unwrap();
        assert_eq!(defaults.view, ViewMode::Shaded);
        assert_eq!(defaults.deformation, DeformationMeasure::Area);
        assert_eq!(defaults.skinning, SkinningPath::Gpu);
        assert_eq!(defaults.method, rigscope::cli::SkinningChoice::default());
        for (option, name) in [
            ("--view", "weight_error"),
            ("--deformation", "volume"),
            ("--skinning", "GPU"),
            ("--method", "lbs2"),
        ] {
            let kind = render_args(&[option, name]).err().map(|e| e.kind());
            assert_eq!(kind, Some(clap::error::ErrorKind::InvalidValue), "{option} {name}");
        }
        let audit = |method: &str| match Cli::try_parse_from(["rigscope", "audit", "demo", "--method", method]) {
            Ok(Cli {
                command: Some(Command::Audit(args)),
                ..
            }) => Ok(args.method),
            Ok(_) => panic!("`audit` parsed as another command"),
            Err(e) => Err(e.kind()),
        };
        assert_eq!(audit("dqs"), Ok(Some(SkinningMethod::Dqs)));
        assert_eq!(audit("both"), Err(clap::error::ErrorKind::InvalidValue));
        assert_eq!(audit("blended"), Ok(Some(SkinningMethod::Blended)));
    }

    #[test]
    fn clips_files_repeat_and_in_place_needs_one() {
        let args = render_args(&["--clips", "a.glb", "--clips", "b.glb", "--in-place"]).unwrap();
        let files = args.clips.files();
        assert_eq!(files.files, [PathBuf::from("a.glb"), PathBuf::from("b.glb")]);
        assert!(files.options.in_place);
        assert!(render_args(&[]).unwrap().clips.files().files.is_empty());
        let kind = render_args(&["--in-place"]).err().map(|e| e.kind());
        assert_eq!(kind, Some(clap::error::ErrorKind::MissingRequiredArgument));
        let pairs = render_args(&[
            "--clips",
            "a.glb",
            "--map-joint",
            "Arm.L=mixamorig:LeftArm",
            "--map-joint",
            "Jaw=",
        ])
        .unwrap()
        .clips
        .files()
        .pairs
        .by_hand;
        let expected = [("Arm.L", "mixamorig:LeftArm"), ("Jaw", "")].map(|(a, b)| (a.to_owned(), b.to_owned()));
        assert_eq!(pairs, expected.into_iter().collect());
        for refused in [
            &["--clips", "a.glb", "--map-joint", "Arm.L"][..],
            &["--map-joint", "A=B"],
        ] {
            assert!(render_args(refused).is_err(), "{refused:?}");
        }
        let viewer = Cli::try_parse_from(["rigscope", "rig.glb", "--clips", "a.glb", "--clips", "b.glb"]).unwrap();
        assert!(viewer.command.is_none());
        assert_eq!(viewer.view.clips, [PathBuf::from("a.glb"), PathBuf::from("b.glb")]);
    }
}
