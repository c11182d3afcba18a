//! The subcommands, one module each, above the layers they use and below the window.
//!
//! Every subcommand has the same shape: its arguments are a `clap::Args` struct in its module,
//! and `pub fn run(args: &XArgs) -> Result<Outcome, CommandError>` does the work, printing its
//! output; [`status::finish`] turns the result into the exit status, the same for every command
//! (see [`status`]); `completions` and `man` take the command line's definition beside their
//! arguments ([`packaging`]). Arguments several commands take are declared once and flattened in:
//! [`clips::ClipsArgs`], [`crate::cli::SkinningChoice`], [`crate::cli::ViewArgs`] and
//! [`crate::cli::RigArgs`].

pub mod audit;
pub mod audit_motion;
pub mod bench;
pub mod check;
pub mod clips;
pub mod curves;
pub mod diff;
pub mod edit_clips;
pub mod export;
pub mod fix;
pub mod inspect;
pub mod make_demo;
pub mod orbit;
pub mod packaging;
pub mod render;
pub mod status;

pub use status::{CommandError, Outcome};
