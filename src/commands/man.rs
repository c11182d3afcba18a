//! `rigscope man`: man pages packages ship, generated from the command line's definition
//! (given as `cli` beside the arguments, as for `completions`).

use super::{CommandError, Outcome};
use std::path::PathBuf;

/// The arguments of `rigscope man`.
#[derive(clap::Args, Debug, Clone)]
pub struct ManArgs {
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Writes rigscope.1 and a page per visible subcommand (rigscope-render.1, …) into `--out`.
pub fn run(args: &ManArgs, cli: clap::Command) -> Result<Outcome, CommandError> {
    let failed = |source| CommandError::Io {
        path: args.out.clone(),
        source,
    };
    std::fs::create_dir_all(&args.out).map_err(failed)?;
    clap_mangen::generate_to(cli, &args.out).map_err(failed)?;
    Ok(Outcome::Passed)
}
