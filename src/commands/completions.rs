//! `rigscope completions`: the shell completion script packages ship, generated from the
//! command line's definition. That definition lives in the binary, so it is given as `cli`
//! beside the arguments.

use super::{CommandError, Outcome};

/// The arguments of `rigscope completions`.
#[derive(clap::Args, Debug, Clone)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script for the shell asked for.
pub fn run(args: &CompletionsArgs, mut cli: clap::Command) -> Result<Outcome, CommandError> {
    clap_complete::generate(args.shell, &mut cli, "rigscope", &mut std::io::stdout());
    Ok(Outcome::Passed)
}
