//! `rigscope make-demo`: the built-in demo rig written as a GLB file.

use crate::commands::{CommandError, Outcome};
use std::path::PathBuf;

/// The arguments of `rigscope make-demo`.
#[derive(clap::Args, Debug, Clone)]
pub struct MakeDemoArgs {
    /// The .glb file to write.
    pub out: PathBuf,
    /// Joints in the demo rig's chain.
    #[arg(long, default_value_t = crate::rig::demo::DEMO_JOINTS)]
    pub joints: usize,
}

pub fn run(args: &MakeDemoArgs) -> Result<Outcome, CommandError> {
    std::fs::write(&args.out, crate::rig::demo::demo_glb(args.joints)).map_err(|source| CommandError::Io {
        path: args.out.clone(),
        source,
    })?;
    Ok(Outcome::Passed)
}
