//! `rigscope completions` and `rigscope man`: files packages ship, generated from the command
//! line's definition. That definition lives in the binary, so these two take it as `cli`
//! beside their arguments.

use super::status::{CommandError, Outcome};
use std::path::PathBuf;

/// The arguments of `rigscope completions`.
#[derive(clap::Args, Debug, Clone)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script for the shell asked for.
pub fn completions(args: &CompletionsArgs, mut cli: clap::Command) -> Result<Outcome, CommandError> {
    clap_complete::generate(args.shell, &mut cli, "rigscope", &mut std::io::stdout());
    Ok(Outcome::Passed)
}

/// The arguments of `rigscope man`.
#[derive(clap::Args, Debug, Clone)]
pub struct ManArgs {
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Writes rigscope.1 and a page per visible subcommand (rigscope-render.1, …) into `--out`.
pub fn man_pages(args: &ManArgs, cli: clap::Command) -> Result<Outcome, CommandError> {
    let failed = |source| CommandError::Io {
        path: args.out.clone(),
        source,
    };
    std::fs::create_dir_all(&args.out).map_err(failed)?;
    clap_mangen::generate_to(cli, &args.out).map_err(failed)?;
    Ok(Outcome::Passed)
}
