use clap::{Args, Parser, Subcommand};
use rigscope::headless::{RenderRequest, parse_size, render_to_png};
use rigscope::render::ViewOptions;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "rigscope",
    version,
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
    /// A .gltf or .glb file; the built-in demo rig when omitted.
    file: Option<PathBuf>,
    /// Close the window after drawing this many frames (for smoke tests).
    #[arg(long, value_name = "N")]
    exit_after_frames: Option<u64>,
}

#[derive(Subcommand)]
enum Command {
    /// Render one frame offscreen (no window or display needed) and write a PNG.
    Render {
        /// A .gltf or .glb file; `demo` renders the built-in demo rig.
        file: PathBuf,
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
        /// Leave out the ground grid and axes.
        #[arg(long)]
        no_grid: bool,
    },
    /// Write the built-in demo rig as a GLB file.
    MakeDemo {
        out: PathBuf,
        #[arg(long, default_value_t = rigscope::rig::demo::DEMO_JOINTS)]
        joints: usize,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Render {
            file,
            out,
            clip,
            time,
            size,
            no_grid,
        }) => render_to_png(&RenderRequest {
            file: (file.as_os_str() != "demo").then_some(file),
            out,
            clip,
            time,
            width: size.0,
            height: size.1,
            view: ViewOptions { grid: !no_grid },
        }),
        Some(Command::MakeDemo { out, joints }) => std::fs::write(&out, rigscope::rig::demo::demo_glb(joints))
            .map_err(|e| format!("cannot write {}: {e}", out.display())),
        None => rigscope::app::run(cli.view.file, cli.view.exit_after_frames),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rigscope: {e}");
            ExitCode::FAILURE
        }
    }
}
