//! Why a file could not be loaded, by kind. Each kind's `Display` is the sentence the person who
//! opened the file reads (in the CLI and on the window's error line).

use super::GlbError;
use super::import::SUPPORTED_EXTENSIONS;
pub use super::import::{BudgetExceeded, BvhError, FbxError, FbxErrorKind, FileError, UriError};
use std::sync::Arc;

/// A load or validation failure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RigError {
    /// The file itself could not be read.
    #[error(transparent)]
    File(#[from] FileError),
    /// A buffer's URI names a file next to the model that could not be read.
    #[error("buffer {index}: the file '{uri}' it refers to is missing or unreadable: {source}")]
    BufferFile {
        index: usize,
        uri: String,
        #[source]
        source: FileError,
    },
    /// A buffer's URI is refused (outside the model's folder, remote, a broken data URI).
    #[error("buffer {index}: {source}")]
    BufferUri {
        index: usize,
        #[source]
        source: UriError,
    },
    /// The external buffers together are bigger than the importer reads.
    #[error("buffer {index}: the external buffers total more than the {limit}-byte limit")]
    ExternalTooLarge { index: usize, limit: u64 },
    /// The bytes start like a GLB container but its header or chunks are broken.
    #[error("not a valid GLB file: {0}")]
    Glb(#[source] GlbError),
    /// The bytes are neither a GLB container nor JSON.
    #[error("not a glTF file: it starts neither with the GLB magic 'glTF' nor with a JSON object")]
    NotGltf,
    /// The JSON does not parse as a glTF document.
    #[error("not a valid glTF file: {0}")]
    Json(#[source] Arc<serde_json::Error>),
    /// The document breaks the glTF specification (the problems, listed).
    #[error("invalid glTF: {0}")]
    Invalid(String),
    /// The file requires extensions Rigscope does not implement.
    #[error(
        "the file requires the glTF extension{} {}, which Rigscope does not implement (it implements {})",
        if missing.len() == 1 { "" } else { "s" },
        missing.join(", "),
        SUPPORTED_EXTENSIONS.join(", ")
    )]
    UnsupportedExtension { missing: Vec<String> },
    /// ufbx could not read the FBX file (truncated, corrupt, over the memory budget).
    #[error(transparent)]
    Fbx(#[from] FbxError),
    /// The BVH text is not what the format says, on the line named.
    #[error(transparent)]
    Bvh(#[from] BvhError),
    /// A VRM Animation file's extension names nodes it does not have or is not shaped as its
    /// schema says.
    #[error(transparent)]
    Vrma(#[from] crate::rig::VrmaError),
    /// Decoding the file would take more memory than a file of its size may use.
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    /// A compressed buffer view or primitive does not decode.
    #[error("{message}")]
    Decoder { codec: Codec, message: String },
    /// Data the pose or the geometry depends on is out of range or not usable (node tree,
    /// transforms, skins, buffers, accessors).
    #[error("{0}")]
    Data(String),
    /// The importer panicked: a bug, reported with the panic's message.
    #[error("the importer failed on this file ({0}); this is a bug in Rigscope, please report it with the file")]
    Panic(String),
}

/// The compression a [`RigError::Decoder`] failure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// `KHR_draco_mesh_compression`.
    Draco,
    /// `EXT_meshopt_compression`.
    Meshopt,
}
