//! Writing a glTF file back with repaired joints and weights and with its animations replaced
//! by kept, renamed, edited or carried clips, keeping everything else.
//!
//! The file is read again as JSON (`serde_json::Value`, so unknown extensions, extras, names
//! and materials pass through untouched) and only the accessors of the attributes whose data
//! changed are pointed at new data, and only the animations the plan encodes anew get new
//! accessors, in new buffer views of one new or grown buffer (see `document` and
//! `animations`); every part of the JSON the save leaves unchanged is written as the original
//! text (`json_text`). Every kind of edit goes through the one writer, [`save_edits`]. Writing
//! goes through a temporary file in the output's folder that is renamed into place, so a failed
//! write leaves no partial file.
//!
//! Vertex order: the importer keeps the file's vertex order. Rig vertex `v` of a primitive is
//! element `v` of its accessors; for a Draco primitive it is point `v` of the decoded stream (the
//! order the decoder returns, which is the order the stream's indices use); meshopt only
//! compresses bytes of buffer views, so its element order is the accessor's. Repaired data is
//! therefore written element for element in that order.

mod animations;
pub mod bvh;
mod document;
mod encode;
mod json_text;
pub mod new_gltf;
mod placement;
mod quantize;
pub mod vrma;

pub use animations::{ChannelRef, ClipProblem, PlannedAnimation};
pub use bvh::{BvhOptions, write_bvh};
pub use new_gltf::write_rig;
pub use quantize::{quantize_weights_u8, quantize_weights_u16};
pub use vrma::write_vrma;

use crate::rig::{FileError, GlbError, Influences, Rig};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a repaired file could not be written. Nothing is left at the output when one is returned.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error(transparent)]
    Read(#[from] FileError),
    #[error("not a valid GLB file: {0}")]
    Glb(#[from] GlbError),
    #[error("not a valid glTF file: {0}")]
    Json(#[source] serde_json::Error),
    #[error("the output {} must end in .glb or .gltf", path.display())]
    OutputFormat { path: PathBuf },
    #[error("the output {} is the input file (or one it refers to); write it elsewhere, or use --overwrite", path.display())]
    WouldOverwriteInput { path: PathBuf },
    #[error("the repaired rig does not match the file: {0}")]
    RigMismatch(String),
    #[error("{} is an FBX file, which Rigscope reads but does not write: repairs are saved into glTF files", path.display())]
    FbxInput { path: PathBuf },
    #[error("the rig's {what} cannot be written as glTF: {problem}")]
    RigData { what: String, problem: String },
    #[error("the file's {what} is not what a glTF file holds there: {problem}")]
    Malformed { what: String, problem: String },
    #[error("mesh {mesh} primitive {primitive}, {attribute}: {problem}")]
    Attribute {
        mesh: usize,
        primitive: usize,
        attribute: String,
        problem: AttributeProblem,
    },
    #[error("the plan keeps the file's animation {index}, but the file has {count} animations")]
    NoAnimation { index: usize, count: usize },
    #[error("the plan writes clip {clip}, but the rig has {count} clips")]
    NoClip { clip: usize, count: usize },
    #[error("clip {clip} ('{name}') cannot be written: {problem}")]
    Clip {
        clip: usize,
        name: String,
        problem: ClipProblem,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot copy {} beside the output to {}: {problem}", from.display(), to.display())]
    Companion {
        from: PathBuf,
        to: PathBuf,
        problem: String,
    },
}

/// What is wrong with one joints or weights attribute of the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttributeProblem {
    #[error("the primitive has no such attribute")]
    Missing,
    #[error("it names accessor {0}, which does not exist")]
    NoAccessor(u64),
    #[error("its accessor {accessor} is {found}, not a VEC4 of the types glTF allows for it")]
    Layout { accessor: usize, found: String },
    #[error("its accessor {accessor} has {count} elements, the repaired data {expected}")]
    Count {
        accessor: usize,
        count: u64,
        expected: usize,
    },
    #[error("joint {joint} does not fit its accessor {accessor}'s unsigned bytes")]
    JointTooLarge { accessor: usize, joint: u16 },
    #[error("the file has {file} JOINTS/WEIGHTS set(s) the skinning reads, the repaired data {repaired}")]
    Sets { file: usize, repaired: usize },
}

/// How a save may treat the input.
#[derive(Debug, Clone, Copy, Default)]
pub struct SaveOptions {
    /// Allow the output to be the input; a copy of the input is kept as `NAME.bak` first.
    pub overwrite: bool,
}

/// What a save wrote and what the reader should know about it.
#[derive(Debug, Clone, Default)]
pub struct Saved {
    /// Every file written, the model last.
    pub written: Vec<PathBuf>,
    /// The backup of the input an in-place save kept.
    pub backup: Option<PathBuf>,
    /// One line per attribute written and per compression change.
    pub notes: Vec<String>,
}

/// One primitive whose joints or weights differ between the loaded and the repaired rig.
#[derive(Debug, Clone, Copy)]
pub struct PrimitiveChange<'a> {
    /// glTF mesh index.
    pub mesh: usize,
    /// glTF primitive index within the mesh.
    pub primitive: usize,
    /// The repaired influences, in the primitive's vertex order.
    pub influences: &'a Influences,
    pub joints_changed: bool,
    pub weights_changed: bool,
}

/// The primitives whose influences `repaired` changed from `original` (the rig loaded from the
/// file), with their glTF indices.
pub fn changed_primitives<'a>(original: &Rig, repaired: &'a Rig) -> Result<Vec<PrimitiveChange<'a>>, SaveError> {
    if original.meshes.len() != repaired.meshes.len() {
        return Err(SaveError::RigMismatch(format!(
            "{} meshes loaded, {} repaired",
            original.meshes.len(),
            repaired.meshes.len()
        )));
    }
    let mut changes = Vec::new();
    for (m, (before, after)) in original.meshes.iter().zip(&repaired.meshes).enumerate() {
        let facts = original.facts.primitives.get(m).map_or(&[][..], Vec::as_slice);
        if before.primitives.len() != after.primitives.len() || facts.len() != before.primitives.len() {
            return Err(SaveError::RigMismatch(format!(
                "mesh {m} has a different number of primitives"
            )));
        }
        for ((old, new), facts) in before.primitives.iter().zip(&after.primitives).zip(facts) {
            let (old, new) = match (&old.influences, &new.influences) {
                (None, None) => continue,
                (Some(old), Some(new)) => (old, new),
                _ => {
                    return Err(SaveError::RigMismatch(format!(
                        "mesh {m} primitive {}: weights were added or removed",
                        facts.gltf_index
                    )));
                }
            };
            let joints_changed = old.joints != new.joints;
            let weights_changed = old.sets != new.sets
                || old.weights.len() != new.weights.len()
                || old
                    .weights
                    .iter()
                    .flatten()
                    .zip(new.weights.iter().flatten())
                    .any(|(a, b)| a.to_bits() != b.to_bits());
            if joints_changed || weights_changed {
                changes.push(PrimitiveChange {
                    mesh: m,
                    primitive: facts.gltf_index,
                    influences: new,
                    joints_changed,
                    weights_changed,
                });
            }
        }
    }
    Ok(changes)
}

/// The file format an output path asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Glb,
    Gltf,
}

impl OutputFormat {
    pub fn of(path: &Path) -> Result<OutputFormat, SaveError> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("glb" | "vrm") => Ok(OutputFormat::Glb),
            Some("gltf") => Ok(OutputFormat::Gltf),
            _ => Err(SaveError::OutputFormat { path: path.to_owned() }),
        }
    }
}

/// Writes `input` to `output` with `repaired`'s joints and weights where they differ from
/// `original` (the rig loaded from `input`).
pub fn save_repaired(
    input: &Path,
    output: &Path,
    original: &Rig,
    repaired: &Rig,
    options: SaveOptions,
) -> Result<Saved, SaveError> {
    // Before comparing the rigs: an FBX input is refused as such, not as a mismatch.
    refuse_fbx(input)?;
    let changes = changed_primitives(original, repaired)?;
    save_changes(input, output, &changes, options)
}

/// FBX is read, never written: the JSON edits below need a glTF file.
fn refuse_fbx(input: &Path) -> Result<(), SaveError> {
    use std::io::Read;
    let mut head = [0u8; 64];
    let read = std::fs::File::open(input)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let name = input.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    if crate::rig::is_fbx(&head[..read], &name) {
        return Err(SaveError::FbxInput { path: input.to_owned() });
    }
    Ok(())
}

/// Writes `input` to `output` with `changes` applied.
pub fn save_changes(
    input: &Path,
    output: &Path,
    changes: &[PrimitiveChange],
    options: SaveOptions,
) -> Result<Saved, SaveError> {
    let edits = Edits {
        primitives: changes,
        animations: None,
    };
    save_edits(input, output, &edits, options)
}

/// Writes `input` to `output` with its `animations` replaced by `plan`, in order: the file's
/// own animations kept as read (or renamed), and clips of `rig` (the rig loaded from `input`,
/// its clips edited or carried) encoded anew. An animation the plan does not name is dropped.
pub fn save_animations(
    input: &Path,
    output: &Path,
    rig: &Rig,
    plan: &[PlannedAnimation],
    options: SaveOptions,
) -> Result<Saved, SaveError> {
    let edits = Edits {
        primitives: &[],
        animations: Some(AnimationPlan { rig, plan }),
    };
    save_edits(input, output, &edits, options)
}

/// The animations a save writes: `plan` in order, clips taken from `rig`.
#[derive(Debug, Clone, Copy)]
pub struct AnimationPlan<'a> {
    /// The rig loaded from the input, with its clips as they are to be written.
    pub rig: &'a Rig,
    pub plan: &'a [PlannedAnimation],
}

/// Every change one save writes into the file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Edits<'a> {
    /// Primitives whose joints or weights are written anew.
    pub primitives: &'a [PrimitiveChange<'a>],
    /// The file's new `animations`; `None` keeps them as read.
    pub animations: Option<AnimationPlan<'a>>,
}

/// Writes `input` to `output` with `edits` applied: the one writer every kind of change goes
/// through.
pub fn save_edits(input: &Path, output: &Path, edits: &Edits, options: SaveOptions) -> Result<Saved, SaveError> {
    refuse_fbx(input)?;
    let format = OutputFormat::of(output)?;
    let input_dir = folder_of(input);
    let output_dir = folder_of(output);
    let overwrites_input = same_file(input, output);
    if overwrites_input && !options.overwrite {
        return Err(SaveError::WouldOverwriteInput {
            path: output.to_owned(),
        });
    }
    let bytes = crate::rig::read_file_bounded(input)?;
    let (json_bytes, blob) = if bytes.starts_with(b"glTF") {
        let (json, blob) = crate::rig::split_glb(&bytes)?;
        (json, blob)
    } else {
        (&bytes[..], None)
    };
    let json: serde_json::Value = serde_json::from_slice(json_bytes).map_err(SaveError::Json)?;

    let companions = document::external_uris(&json);
    if companions.iter().any(|uri| same_file(&input_dir.join(uri), output)) {
        return Err(SaveError::WouldOverwriteInput {
            path: output.to_owned(),
        });
    }
    let bin_name = document::free_bin_name(output, &json);
    let original = json.clone();
    let mut edited = document::Edited::new(json);
    for change in edits.primitives {
        edited.rewrite_primitive(change)?;
    }
    if let Some(AnimationPlan { rig, plan }) = edits.animations {
        edited.set_animations(rig, plan)?;
    }
    let moved_meshes = placement::place_skinned_meshes_at_root(edited.json_mut());
    let placed = edited.place_data(format, blob, &bin_name)?;
    let mut notes = placed.notes;
    notes.extend(moved_meshes);

    let mut written = Vec::new();
    // An in-place save keeps the input's permissions; new files get the usual ones.
    let permissions = overwrites_input
        .then(|| std::fs::metadata(input).ok().map(|m| m.permissions()))
        .flatten();
    let mut pending = Vec::new();
    if let Some(bin) = &placed.external_bin {
        let path = output_dir.join(&bin_name);
        pending.push((path.clone(), temp_with(&output_dir, &path, bin, None)?));
    }
    let json = json_text::text_keeping_original(json_bytes, &original, &placed.json, &placed.origins)?;
    let model = match format {
        OutputFormat::Glb => crate::rig::glb_container(&json, placed.glb_bin.as_deref()),
        OutputFormat::Gltf => json,
    };
    let model_temp = temp_with(&output_dir, output, &model, permissions)?;
    if !same_dir(&input_dir, &output_dir) {
        for uri in document::external_uris(&placed.json) {
            if uri == bin_name {
                continue;
            }
            let from = input_dir.join(&uri);
            let to = output_dir.join(&uri);
            if let Some(temp) = companion_copy(&from, &to)? {
                notes.push(format!("copied {uri} beside the output"));
                pending.push((to, temp));
            }
        }
    }
    let backup = if overwrites_input {
        let backup = backup_path(input);
        std::fs::copy(input, &backup).map_err(|source| SaveError::Write {
            path: backup.clone(),
            source,
        })?;
        Some(backup)
    } else {
        None
    };
    pending.push((output.to_owned(), model_temp));
    for (path, temp) in pending {
        if let Err(e) = temp.persist(&path) {
            for done in &written {
                let _ = std::fs::remove_file(done);
            }
            return Err(SaveError::Write { path, source: e.error });
        }
        written.push(path);
    }
    Ok(Saved { written, backup, notes })
}

/// The folder `path` is in (`.` for a bare file name).
pub(crate) fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// Whether `a` and `b` name the same existing file (through links and `..`).
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    same_file(a, b)
}

/// The first of `NAME.bak`, `NAME.bak1`, `NAME.bak2`, … that does not exist.
fn backup_path(input: &Path) -> PathBuf {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (0u32..)
        .map(|n| {
            let suffix = if n == 0 { String::new() } else { n.to_string() };
            input.with_file_name(format!("{name}.bak{suffix}"))
        })
        .find(|p| !p.exists())
        .expect("some backup name is free")
}

/// An empty temporary file in `dir` named from `prefix`, to be renamed over its target once
/// written: read and write for everyone the umask allows, like a file created the ordinary way
/// (a temporary file is otherwise private to its owner).
pub(crate) fn temp_file_in(dir: &Path, prefix: &str) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// A temporary file in `dir` holding `bytes`, to be renamed to `path`.
fn temp_with(
    dir: &Path,
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> Result<tempfile::NamedTempFile, SaveError> {
    let failed = |source| SaveError::Write {
        path: path.to_owned(),
        source,
    };
    let mut temp = temp_file_in(dir, ".rigscope-save-").map_err(failed)?;
    temp.write_all(bytes).map_err(failed)?;
    temp.as_file().sync_all().map_err(failed)?;
    if let Some(permissions) = permissions {
        temp.as_file().set_permissions(permissions).map_err(failed)?;
    }
    Ok(temp)
}

/// A file the model refers to, copied to the same relative place beside an output in another
/// folder (`None` when the same bytes are already there). An existing different file is never
/// replaced.
fn companion_copy(from: &Path, to: &Path) -> Result<Option<tempfile::NamedTempFile>, SaveError> {
    let failed = |problem: String| SaveError::Companion {
        from: from.to_owned(),
        to: to.to_owned(),
        problem,
    };
    let bytes = crate::rig::read_file_bounded(from).map_err(|e| failed(e.to_string()))?;
    if to.exists() {
        return match std::fs::read(to) {
            Ok(there) if there == bytes => Ok(None),
            _ => Err(failed("a different file is already there".into())),
        };
    }
    let dir = folder_of(to);
    std::fs::create_dir_all(&dir).map_err(|e| failed(e.to_string()))?;
    temp_with(&dir, to, &bytes, None).map(Some)
}
