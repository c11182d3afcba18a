use clap::{Args, CommandFactory, Parser, Subcommand};
use rigscope::cli::ClipsArgs;
use rigscope::cli::RigArgs;
use rigscope::commands::{
    CommandError, Outcome, audit, bench, check, clips, completions, diff, export, fix, inspect, make_demo, man, render,
};
use rigscope::commands::{ErrorOutput, finish};
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
    window: WindowArgs,
}

/// Opens the viewer window.
#[derive(Args)]
struct WindowArgs {
    #[command(flatten)]
    rig: RigArgs,
    /// Close the window after drawing this many frames (for smoke tests).
    #[arg(long, value_name = "N")]
    exit_after_frames: Option<u64>,
    /// With `--exit-after-frames`: save the last frame, panels included, as this PNG first.
    #[arg(long, value_name = "PNG", requires = "exit_after_frames")]
    screenshot: Option<PathBuf>,
    #[command(flatten)]
    clips: ClipsArgs,
    /// Open a window of its own even when one is already open (by default FILE opens in the
    /// open window).
    #[arg(long)]
    new_window: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Render one frame offscreen (no window or display needed) and write a PNG.
    Render(render::RenderArgs),
    /// Print the rig report: skins, meshes, clips, materials and findings. Exits with 1 when the
    /// report has error findings, 2 when the file cannot be loaded (or has no such --vertex).
    Inspect(inspect::InspectArgs),
    /// Sweep every weighted joint through twists and bends, skin each pose (LBS and DQS) and rank
    /// the joints by how badly their skinning deforms; check left/right weight symmetry. Exits
    /// with 1 when a joint crosses a threshold (or too many vertices are asymmetric), 2 when the
    /// file cannot be loaded or a --joint names no joint.
    Audit(audit::AuditArgs),
    /// How each engine (Unity, Unreal, Godot, three.js, Babylon.js, Bevy, Filament, the Sample
    /// Renderer) draws the rig, against the file's own drawing over the rest pose and every clip.
    /// Exits with 1 when a listed engine draws a vertex past the tolerance or does not load the
    /// file, 2 when the file cannot be loaded.
    Check(check::CheckArgs),
    /// Repair skin weights (normalize, limit influences) and write the result as a new .glb or
    /// .gltf that keeps everything else. Exits with 0 when something was repaired, 1 when nothing
    /// needed it, 2 when the file cannot be loaded or the output cannot be written.
    Fix(fix::FixArgs),
    /// Carry other files' clips onto a rig and edit its clips (in place, trim, resample, rename,
    /// drop), writing a new .glb or .gltf that keeps everything else; an FBX rig is written
    /// whole as a new glTF. Exits with 0 when written, 1 when nothing changed, 2 on a bad
    /// argument or a file that cannot be read or written.
    Clips(clips::EditClipsArgs),
    /// Compare two files of the same rig: joints, bind and rest poses, vertices and weights
    /// (matched by bind position), clips (world-space joint error over the whole clip),
    /// materials and report findings. Exits with 1 when they differ beyond the thresholds, 2
    /// when either file cannot be loaded.
    Diff(diff::DiffArgs),
    /// Write the skinned, morphed mesh at one moment of a clip as a static mesh (.obj with a .mtl
    /// and PNG textures beside it, or .glb). Exits with 0 when written, 2 when nothing was: the
    /// file cannot be loaded, no such clip, a time outside the clip, or an output that is not
    /// .obj or .glb.
    Export(export::ExportArgs),
    /// Write the built-in demo rig as a GLB file.
    MakeDemo(make_demo::MakeDemoArgs),
    /// Run the frame loop headless (offscreen, no window) on the GPU path, the CPU path and the
    /// same mesh drawn static, and print per-stage medians and ratios; the last line is JSON.
    Bench(bench::BenchArgs),
    /// Print a shell completion script (for packages: `rigscope completions bash > rigscope.bash`).
    #[command(hide = true)]
    Completions(completions::CompletionsArgs),
    /// Write man pages into a folder: rigscope.1 and one per subcommand (rigscope-render.1, …).
    #[command(hide = true)]
    Man(man::ManArgs),
}

/// Runs a subcommand; a failure goes to standard error, and as JSON to standard output when
/// the command was given `--json`.
fn run(command: &Command) -> ExitCode {
    let (result, errors) = match command {
        Command::Render(args) => (render::run(args), ErrorOutput::Text),
        Command::Inspect(args) => (inspect::run(args), ErrorOutput::json_if(args.json, &args.file)),
        Command::Audit(args) => (audit::run(args), ErrorOutput::json_if(args.json, &args.file)),
        Command::Check(args) => (check::run(args), ErrorOutput::json_if(args.json, &args.file)),
        Command::Fix(args) => (fix::run(args), ErrorOutput::Text),
        Command::Clips(args) => (clips::run(args), ErrorOutput::json_if(args.json, &args.file)),
        Command::Diff(args) => (diff::run(args), ErrorOutput::json_if(args.json, &args.a)),
        Command::Export(args) => (export::run(args), ErrorOutput::Text),
        Command::MakeDemo(args) => (make_demo::run(args), ErrorOutput::Text),
        Command::Bench(args) => (bench::run(args), ErrorOutput::json_if(args.json, &args.rig.label())),
        Command::Completions(args) => (completions::run(args, Cli::command()), ErrorOutput::Text),
        Command::Man(args) => (man::run(args, Cli::command()), ErrorOutput::Text),
    };
    finish(result, errors)
}

/// Opens the window as `args` ask.
fn open_window(args: WindowArgs) -> Result<Outcome, CommandError> {
    rigscope::app::run(
        args.rig.source(),
        args.clips.files(),
        args.exit_after_frames,
        args.screenshot,
        args.new_window,
    )
    .map_err(|e| CommandError::Failed(e.to_string()))?;
    Ok(Outcome::Passed)
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
    // Refused before anything else, `--version` included: a bug report or a test run under a
    // kernel the CPU lacks would otherwise say it ran code it did not.
    if let Err(e) = rigscope::cpu::Kernel::forced() {
        return finish(Err(CommandError::Failed(e.to_string())), ErrorOutput::Text);
    }
    let cli = Cli::parse();
    if cli.command.is_some() {
        leave_out_display_device_selection();
    }
    let mut logger = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("error,rigscope=info"));
    logger.format_timestamp_millis();
    // The window also keeps its log in a file: started from a desktop entry, its standard
    // error goes nowhere.
    if cli.command.is_none()
        && let Some(path) = rigscope::app::log_file::log_path()
    {
        let file = rigscope::app::log_file::RotatingLog::open(&path, rigscope::app::log_file::LOG_LIMIT, true);
        logger.target(env_logger::Target::Pipe(Box::new(file)));
    }
    logger.init();
    match &cli.command {
        Some(command) => run(command),
        None => finish(open_window(cli.window), ErrorOutput::Text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigscope::names::Named;
    use rigscope::render::{DeformationMeasure, ViewMode};
    use rigscope::skin::SkinningMethod;
    use rigscope::skin::SkinningPath;
    use strum::VariantArray;

    fn render_args(extra: &[&str]) -> Result<render::RenderArgs, clap::Error> {
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
            assert_eq!(render_args(&["--view", mode.name()]).unwrap().view.view, mode);
        }
        for &measure in DeformationMeasure::VARIANTS {
            assert_eq!(
                render_args(&["--deformation", measure.name()])
                    .unwrap()
                    .view
                    .deformation,
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
        assert_eq!(defaults.view.view, ViewMode::Shaded);
        assert_eq!(defaults.view.deformation, DeformationMeasure::Area);
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
        assert_eq!(
            viewer.window.clips.clips,
            [PathBuf::from("a.glb"), PathBuf::from("b.glb")]
        );
    }
}
