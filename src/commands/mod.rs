//! The subcommands, one module each, above the layers they use and below the window.
//!
//! Every subcommand has the same shape: its arguments are a `clap::Args` struct in its module,
//! and `pub fn run(args: &XArgs) -> Result<Outcome, CommandError>` does the work, printing its
//! output; [`finish`] turns the result into the exit status, the same for every command;
//! `completions` and `man` take the command line's definition beside their arguments.
//! Arguments several commands take are declared once in [`crate::cli`] and flattened in:
//! [`crate::cli::ClipsArgs`], [`crate::cli::SkinningChoice`], [`crate::cli::ViewArgs`] and
//! [`crate::cli::RigArgs`].
//!
//! What every subcommand ends with, kept here: an [`Outcome`] or a [`CommandError`], the exit
//! status each maps to, and the one JSON error document `--json` prints.
//!
//! The statuses are the same for every command, so that a pipeline can gate on any of them
//! alike: 0 when it ran and has nothing to flag, 1 when it ran and flags something (findings,
//! differences, nothing to change), 2 when it could not run (a file that cannot be loaded or
//! written, a bad argument).

pub mod audit;
pub mod bench;
pub mod check;
pub mod clips;
pub mod completions;
pub mod diff;
pub mod export;
pub mod fix;
pub mod inspect;
pub mod make_demo;
pub mod man;
pub mod render;

use crate::cli::{NoNodeError, SourceError};
use crate::render::GpuError;
use crate::retarget::RetargetError;
use crate::rig::{Rig, RigError};
use crate::save::SaveError;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status of a command that ran and has nothing to flag.
pub const EXIT_OK: u8 = 0;
/// Exit status of a command that ran and flags something: error findings (`inspect`, `audit`),
/// differences beyond the thresholds (`diff`), nothing to change (`fix`, `clips`).
pub const EXIT_FLAGGED: u8 = 1;
/// Exit status of a command that could not run: a file that cannot be loaded or written, an
/// argument refused (clap's own usage errors exit with 2 as well).
pub const EXIT_FAILED: u8 = 2;

/// How a command that ran to its end went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// [`EXIT_OK`].
    Passed,
    /// [`EXIT_FLAGGED`].
    Flagged,
}

impl Outcome {
    /// [`Outcome::Flagged`] when `flagged`, else [`Outcome::Passed`].
    pub fn flagged_if(flagged: bool) -> Outcome {
        if flagged { Outcome::Flagged } else { Outcome::Passed }
    }

    pub fn exit_status(self) -> u8 {
        match self {
            Outcome::Passed => EXIT_OK,
            Outcome::Flagged => EXIT_FLAGGED,
        }
    }
}

/// Why a command could not run. Every variant exits with [`EXIT_FAILED`].
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("cannot load {}: {source}", path.display())]
    Load {
        path: PathBuf,
        #[source]
        source: RigError,
    },
    /// Where the rig comes from (a file, `--synthetic`) gave none.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A `--clips` file that could not be added.
    #[error(transparent)]
    Clips(#[from] RetargetError),
    /// A joint named on the command line that the rig lacks.
    #[error(transparent)]
    NoNode(#[from] NoNodeError),
    /// A flag's value refused, or one that names what the file lacks (a clip, a vertex).
    #[error("{0}")]
    Argument(String),
    /// A `--vertex` the file lacks.
    #[error(transparent)]
    Vertex(#[from] inspect::VertexError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Ui(#[from] crate::screenshot::UiRenderError),
    /// The device reported an error while frames were drawn.
    #[error("the GPU refused a frame: {0}")]
    FrameRefused(#[source] GpuError),
    #[error(transparent)]
    Pose(#[from] crate::compare::PoseError),
    #[error(transparent)]
    ClipEdit(#[from] crate::anim::clip_edit::ClipEditError),
    /// `--lock-feet` on a rig whose feet cannot be found or held.
    #[error(transparent)]
    FootLock(#[from] crate::motion::foot_lock::FootLockError),
    #[error(transparent)]
    Export(#[from] export::ExportError),
    /// The edited rig could not be written to `path`.
    #[error("cannot write {}: {source}", path.display())]
    Save {
        path: PathBuf,
        #[source]
        source: SaveError,
    },
    /// The file at `path` holds something that cannot be saved back.
    #[error("{}: {source}", path.display())]
    Unsaveable {
        path: PathBuf,
        #[source]
        source: SaveError,
    },
    #[error("cannot write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Png(#[from] crate::screenshot::ScreenshotError),
    /// The window's failure (the window sits above the commands, so it comes in words).
    #[error("{0}")]
    Failed(String),
}

impl CommandError {
    /// Whether the command's input was loaded when it failed: false for a file (the rig, a
    /// `--clips` file) that could not be read, true for everything that goes wrong after.
    pub fn loaded(&self) -> bool {
        !matches!(
            self,
            CommandError::Load { .. }
                | CommandError::Source(SourceError::Rig(_))
                | CommandError::Clips(RetargetError::Load { .. })
        )
    }

    /// The file the error is about when it names one of the command's inputs.
    fn input(&self) -> Option<&Path> {
        match self {
            CommandError::Load { path, .. } => Some(path),
            _ => None,
        }
    }
}

/// The one shape of the JSON document a command given `--json` prints when it fails.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorDocument {
    /// The input the error is about: the file that did not load, else the command's (first)
    /// input.
    pub file: String,
    /// See [`CommandError::loaded`].
    pub loaded: bool,
    pub error: String,
}

impl ErrorDocument {
    pub fn new(error: &CommandError, input: &Path) -> ErrorDocument {
        ErrorDocument {
            file: error.input().unwrap_or(input).display().to_string(),
            loaded: error.loaded(),
            error: error.to_string(),
        }
    }
}

/// Where a command prints its failure besides standard error.
#[derive(Debug, Clone, PartialEq)]
pub enum ErrorOutput {
    /// Standard error only.
    Text,
    /// Also an [`ErrorDocument`] on standard output (`--json`), about `input`.
    Json { input: PathBuf },
}

impl ErrorOutput {
    /// [`ErrorOutput::Json`] about `input` when `json`, else [`ErrorOutput::Text`].
    pub fn json_if(json: bool, input: &Path) -> ErrorOutput {
        if json {
            ErrorOutput::Json {
                input: input.to_owned(),
            }
        } else {
            ErrorOutput::Text
        }
    }
}

/// The exit status of a command's `result`, after printing a failure on standard error (and as
/// JSON on standard output when `output` asks).
pub fn finish(result: Result<Outcome, CommandError>, output: ErrorOutput) -> ExitCode {
    match result {
        Ok(outcome) => ExitCode::from(outcome.exit_status()),
        Err(error) => {
            if let ErrorOutput::Json { input } = output {
                let document = ErrorDocument::new(&error, &input);
                println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
            }
            eprintln!("rigscope: {error}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// The rig at `file`, or the built-in demo rig when `file` is `demo`.
pub fn open_rig(file: &Path) -> Result<Rig, CommandError> {
    open_rig_with(file, &crate::rig::LoadOptions::default())
}

/// [`open_rig`] with what a file leaves open told by `options`.
pub fn open_rig_with(file: &Path, options: &crate::rig::LoadOptions) -> Result<Rig, CommandError> {
    crate::rig::open_with(demo_or_file(file), options).map_err(|source| CommandError::Load {
        path: file.to_owned(),
        source,
    })
}

/// `None` for the name `demo`, which stands for the built-in demo rig, else `file`.
pub fn demo_or_file(file: &Path) -> Option<&Path> {
    (file.as_os_str() != "demo").then_some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_does_not_load_is_named_in_the_error_document() {
        let error = open_rig(Path::new("no-such-rig.glb")).unwrap_err();
        let document = ErrorDocument::new(&error, Path::new("other.glb"));
        assert_eq!(document.file, "no-such-rig.glb");
        assert!(!document.loaded);
        assert!(
            document.error.starts_with("cannot load no-such-rig.glb: "),
            "{}",
            document.error
        );
        let refused = CommandError::Argument("--fps must be positive".into());
        let document = ErrorDocument::new(&refused, Path::new("rig.glb"));
        assert_eq!((document.file.as_str(), document.loaded), ("rig.glb", true));
    }

    #[test]
    fn outcomes_map_to_their_statuses() {
        assert_eq!(Outcome::flagged_if(false).exit_status(), EXIT_OK);
        assert_eq!(Outcome::flagged_if(true).exit_status(), EXIT_FLAGGED);
    }
}
