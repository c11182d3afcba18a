//! The edit journal: the edits of each open document, appended as data to a file of its own in
//! the `journals` folder beside the settings, the log and the crash reports, as they are made.
//! After a crash, a `kill -9` or a power cut the next start finds the journals no running window
//! holds and offers to make their edits again on their files (see `viewer/recovery.rs`);
//! saving or closing a file removes its journal.
//!
//! # Format
//!
//! ```text
//! magic       8 bytes  "RSJRNL\r\n" (the line ending catches a text-mode copy)
//! format      u32 LE   FORMAT_VERSION
//! record 0    the header (JSON: the Rigscope version, the document's path, its files' facts)
//! record 1…   one edit each (JSON: an `Entry`)
//!
//! record      u32 LE  payload length
//!             u32 LE  CRC-32 of the length's 4 bytes and the payload
//!             payload
//! ```
//!
//! Each record is written with one `write` and flushed to the disk before the next edit, so a
//! journal ends after a whole record unless the machine stopped mid-write. A journal that does
//! not read whole — a record cut off, a checksum that fails, a payload that is not an entry, or a
//! header from another format or version of Rigscope — is never applied in part: it is reported
//! and set aside (renamed, never deleted).
//!
//! A running window holds a lock on each journal it writes (released by the system when the
//! process ends, however it ends), so a start finds only the journals of windows that are gone.

pub mod records;

pub use records::Entry;

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The journals' folder inside the settings folder.
pub const FOLDER_NAME: &str = "journals";

/// A journal file's extension.
pub const EXTENSION: &str = "journal";

/// What a journal set aside ends with (before a number that keeps names unique).
pub const SET_ASIDE: &str = ".set-aside";

const MAGIC: &[u8; 8] = b"RSJRNL\r\n";

/// The version of the layout above and of the records' JSON. A journal of another format is
/// set aside, not guessed at.
pub const FORMAT_VERSION: u32 = 1;

/// The Rigscope that writes and reads journals: the version and the commit, as
/// `ui::about::VERSION` says them (made here too, as the journal sits below the UI). Edits are
/// made again by the same code or not at all.
pub const RIGSCOPE: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("RIGSCOPE_COMMIT"), ")");

/// Bytes before each payload: its length and its checksum.
const FRAME: usize = 8;

/// No record a journal writes comes near this (a pose of 10,000 bent joints is under 2 MiB):
/// a longer length is damage, refused before anything is allocated for it.
pub const MAX_RECORD: usize = 64 << 20;

/// What identifies one version of a file: its length, its CRC-32 and when it was modified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileFacts {
    pub path: PathBuf,
    pub len: u64,
    pub crc32: u32,
    /// Nanoseconds since the Unix epoch; `None` where the system keeps no modification time.
    pub modified_ns: Option<u64>,
}

impl FileFacts {
    /// Reads `path` through once for its checksum.
    pub fn of(path: &Path) -> io::Result<FileFacts> {
        let mut file = File::open(path)?;
        let metadata = file.metadata()?;
        let mut hasher = crc32fast::Hasher::new();
        let mut buffer = vec![0; 1 << 20];
        loop {
            let read = match file.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => read,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            hasher.update(&buffer[..read]);
        }
        Ok(FileFacts {
            path: path.to_owned(),
            len: metadata.len(),
            crc32: hasher.finalize(),
            modified_ns: modified_ns(&metadata),
        })
    }

    /// Whether the file at `self.path` holds other bytes now (its modification time alone
    /// does not count: copying a file back changes it and not the bytes).
    pub fn changed(&self) -> bool {
        !matches!(FileFacts::of(&self.path), Ok(now) if (now.len, now.crc32) == (self.len, self.crc32))
    }
}

/// A file's modification time in nanoseconds since the Unix epoch.
pub fn modified_ns(metadata: &std::fs::Metadata) -> Option<u64> {
    let since = metadata.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_nanos()).ok()
}

/// Record 0: whose edits these are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// [`RIGSCOPE`] of the Rigscope that wrote it.
    pub rigscope: String,
    /// The document's file.
    pub document: PathBuf,
    /// The document's file and the files it uses, as they were when the first edit was made;
    /// `None` when that is not known (the file had already changed on disk).
    pub files: Option<Vec<FileFacts>>,
}

/// Why a journal cannot be read, or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("not a Rigscope journal")]
    NotAJournal,
    #[error("written in journal format {found}; this Rigscope reads format {FORMAT_VERSION}")]
    OtherFormat { found: u32 },
    #[error("written by Rigscope {found}; this is Rigscope {}", RIGSCOPE)]
    OtherVersion { found: String },
    #[error("cut off inside record {record} (at byte {offset}): the write was interrupted")]
    Truncated { record: usize, offset: usize },
    #[error("record {record} (at byte {offset}) claims {length} bytes, more than any record holds")]
    TooLong {
        record: usize,
        offset: usize,
        length: usize,
    },
    #[error("record {record} (at byte {offset}) fails its checksum: the file is damaged")]
    Checksum { record: usize, offset: usize },
    #[error("record {record} does not read as {}: {message}", if *record == 0 { "a header" } else { "an edit" })]
    Malformed { record: usize, message: String },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// A journal read whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Journal {
    pub header: Header,
    pub entries: Vec<Entry>,
}

/// One record framed: its length, its checksum, the payload.
fn frame(payload: &[u8]) -> Vec<u8> {
    let length = u32::try_from(payload.len()).unwrap_or(u32::MAX).to_le_bytes();
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&length);
    hasher.update(payload);
    let mut bytes = Vec::with_capacity(FRAME + payload.len());
    bytes.extend_from_slice(&length);
    bytes.extend_from_slice(&hasher.finalize().to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// The bytes of a journal holding `header` and `entries` (what a writer leaves after writing
/// them; tests and the fuzzing test build journals with it).
pub fn encode(header: &Header, entries: &[Entry]) -> Result<Vec<u8>, JournalError> {
    let mut bytes = start_bytes(header)?;
    for entry in entries {
        bytes.extend(frame(&payload_of(entry)?));
    }
    Ok(bytes)
}

fn start_bytes(header: &Header) -> Result<Vec<u8>, JournalError> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend(frame(&payload_of(header)?));
    Ok(bytes)
}

fn payload_of(value: &impl Serialize) -> Result<Vec<u8>, JournalError> {
    let payload = serde_json::to_vec(value).map_err(|e| JournalError::Malformed {
        record: 0,
        message: e.to_string(),
    })?;
    if payload.len() > MAX_RECORD {
        return Err(JournalError::TooLong {
            record: 0,
            offset: 0,
            length: payload.len(),
        });
    }
    Ok(payload)
}

/// Reads a journal's bytes whole: every record framed, checksummed and parsed, or an error that
/// says where it is not. Allocates nothing a record's length claims before the bytes are there.
pub fn parse(bytes: &[u8]) -> Result<Journal, JournalError> {
    let rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or(JournalError::NotAJournal)?;
    let (format, mut rest) = rest.split_first_chunk::<4>().ok_or(JournalError::NotAJournal)?;
    let format = u32::from_le_bytes(*format);
    if format != FORMAT_VERSION {
        return Err(JournalError::OtherFormat { found: format });
    }
    let mut payloads = Vec::new();
    while !rest.is_empty() {
        let (record, offset) = (payloads.len(), bytes.len() - rest.len());
        let truncated = JournalError::Truncated { record, offset };
        let (length, after) = rest.split_first_chunk::<4>().ok_or(truncated)?;
        let (checksum, after) = after
            .split_first_chunk::<4>()
            .ok_or(JournalError::Truncated { record, offset })?;
        let length_value = u32::from_le_bytes(*length) as usize;
        if length_value > MAX_RECORD {
            return Err(JournalError::TooLong {
                record,
                offset,
                length: length_value,
            });
        }
        let payload = after
            .get(..length_value)
            .ok_or(JournalError::Truncated { record, offset })?;
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(length);
        hasher.update(payload);
        if hasher.finalize() != u32::from_le_bytes(*checksum) {
            return Err(JournalError::Checksum { record, offset });
        }
        payloads.push(payload);
        rest = &after[length_value..];
    }
    let (header, entries) = payloads.split_first().ok_or(JournalError::Truncated {
        record: 0,
        offset: bytes.len(),
    })?;
    let header: Header = serde_json::from_slice(header).map_err(|e| JournalError::Malformed {
        record: 0,
        message: e.to_string(),
    })?;
    if header.rigscope != RIGSCOPE {
        return Err(JournalError::OtherVersion { found: header.rigscope });
    }
    let entries = (entries.iter().enumerate())
        .map(|(k, payload)| {
            serde_json::from_slice(payload).map_err(|e| JournalError::Malformed {
                record: k + 1,
                message: e.to_string(),
            })
        })
        .collect::<Result<Vec<Entry>, _>>()?;
    Ok(Journal { header, entries })
}

/// Reads the journal at `path` (see [`parse`]).
pub fn read(path: &Path) -> Result<Journal, JournalError> {
    parse(&std::fs::read(path)?)
}

/// A journal being written: created with its header, then one record per edit.
///
/// A record is in the system's hands once its `write` returns, which a crash or a kill of the
/// window does not undo; getting it onto the disk itself (for a power cut) takes milliseconds, so
/// it is done on a thread of the journal's own, a few milliseconds behind the edit, rather than
/// in the frame that made the edit.
#[derive(Debug)]
pub struct JournalWriter {
    /// Open for appending, and locked while this window runs.
    file: File,
    path: PathBuf,
    /// Bytes written whole: a failed write is cut back to here.
    len: u64,
    entries: usize,
    /// The thread that flushes the file to the disk, and how to ask it to; `None` when no
    /// thread could start (each record is then flushed as it is written).
    flush: Option<Flushing>,
}

#[derive(Debug)]
struct Flushing {
    asks: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Drop for JournalWriter {
    /// Waits for the flushing thread: its copy of the file shares the lock, which must be gone
    /// once the writer is (the journal is offered to the next start, or removed).
    fn drop(&mut self) {
        if let Some(Flushing { asks, thread }) = self.flush.take() {
            drop(asks);
            let _ = thread.join();
        }
    }
}

/// Starts the thread that flushes `file` to the disk each time it is asked (several asks waiting
/// are one flush), until the journal is dropped.
fn start_flushing(file: &File, path: &Path) -> Option<Flushing> {
    let file = file.try_clone().ok()?;
    let (asks, asked) = std::sync::mpsc::channel::<()>();
    let name = path.display().to_string();
    let started = std::thread::Builder::new().name("journal flush".into()).spawn(move || {
        while asked.recv().is_ok() {
            while asked.try_recv().is_ok() {}
            if let Err(e) = file.sync_data() {
                log::warn!("cannot flush the journal {name} to the disk: {e}");
            }
        }
    });
    started.ok().map(|thread| Flushing { asks, thread })
}

impl JournalWriter {
    /// Creates a new journal in `folder` (made when missing) for `header`, named after the
    /// document's file, and locks it.
    pub fn create(folder: &Path, header: &Header) -> Result<JournalWriter, JournalError> {
        std::fs::create_dir_all(folder)?;
        let start = start_bytes(header)?;
        let stem = file_stem_for(&header.document);
        let mut n = 0u32;
        let (mut file, path) = loop {
            let path = folder.join(match n {
                0 => format!("{stem}.{EXTENSION}"),
                n => format!("{stem}-{n}.{EXTENSION}"),
            });
            match OpenOptions::new().append(true).create_new(true).open(&path) {
                Ok(file) => break (file, path),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 10_000 => n += 1,
                Err(e) => return Err(e.into()),
            }
        };
        // Taken at once: a start of Rigscope finding this file meanwhile would skip it as held.
        if let Err(e) = file.try_lock() {
            log::warn!("cannot lock {}: {e}; another start may offer it", path.display());
        }
        let written = file.write_all(&start).and_then(|()| file.sync_data());
        if let Err(e) = written {
            let _ = std::fs::remove_file(&path);
            return Err(e.into());
        }
        sync_folder(folder);
        let flush = start_flushing(&file, &path);
        Ok(JournalWriter {
            file,
            path,
            len: start.len() as u64,
            entries: 0,
            flush,
        })
    }

    /// Appends `entry` as one record (one `write`), then has it flushed to the disk. On a
    /// failure the file is cut back to its last whole record, so it stays readable.
    pub fn append(&mut self, entry: &Entry) -> Result<(), JournalError> {
        let bytes = frame(&payload_of(entry)?);
        let written = self.file.write_all(&bytes);
        if let Err(e) = written {
            let _ = self.file.set_len(self.len);
            return Err(e.into());
        }
        self.len += bytes.len() as u64;
        self.entries += 1;
        let asked = self.flush.as_ref().is_some_and(|flush| flush.asks.send(()).is_ok());
        if !asked {
            self.file.sync_data()?;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records after the header.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Removes the journal: its edits are saved, or were let go.
    pub fn remove(self) {
        let path = self.path.clone();
        // Closed first: some systems do not remove a file that is open.
        drop(self);
        if let Err(e) = std::fs::remove_file(&path) {
            log::warn!("cannot remove the journal {}: {e}", path.display());
        }
    }
}

/// A journal's file name: the document's file name, kept to characters every file system takes.
fn file_stem_for(document: &Path) -> String {
    let name = document.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let kept: String = (name.chars())
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    if kept.is_empty() { "document".to_owned() } else { kept }
}

/// Makes a new file's name in `folder` survive a power cut (Unix; elsewhere the file system
/// does it with the file).
fn sync_folder(folder: &Path) {
    #[cfg(unix)]
    if let Ok(folder) = File::open(folder) {
        let _ = folder.sync_all();
    }
    #[cfg(not(unix))]
    let _ = folder;
}

/// A journal found at start that no running window holds, locked by this one until it is
/// restored, kept for later or set aside.
#[derive(Debug)]
pub struct Found {
    pub path: PathBuf,
    pub held: Held,
    pub journal: Result<Journal, JournalError>,
}

/// The lock on a journal found: another start meanwhile skips it. Dropping it lets go.
#[derive(Debug)]
pub struct Held {
    _file: File,
}

/// The journals in `folder` that no running window holds, read, oldest name first.
pub fn find_left(folder: &Path) -> Vec<Found> {
    let Ok(listing) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = (listing.filter_map(Result::ok))
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == EXTENSION) && path.is_file())
        .collect();
    paths.sort();
    (paths.into_iter())
        .filter_map(|path| {
            let mut lock = File::open(&path).ok()?;
            // Held: a window still running writes it.
            lock_soon(&lock)?;
            // Read through the handle that holds the lock: on Windows a lock keeps other
            // handles, this process's included, from reading.
            let mut bytes = Vec::new();
            let journal = match lock.read_to_end(&mut bytes) {
                Ok(_) => parse(&bytes),
                Err(e) => Err(e.into()),
            };
            Some(Found {
                path,
                held: Held { _file: lock },
                journal,
            })
        })
        .collect()
}

/// How long a start waits for a journal's lock to come free before it takes the journal as held.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

/// Locks `file`, or `None` when another holder keeps it for [`LOCK_WAIT`]. A lock can outlive
/// its holder by a moment: a process the holder's process is starting shares the lock through
/// its copy of the descriptor until its `exec` closes it, so a window closing while it starts a
/// helper (or a test beside it starting one) leaves the lock behind for that moment.
fn lock_soon(file: &File) -> Option<()> {
    let started = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Some(()),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(_) => return None,
        }
    }
}

/// Renames the journal at `path` so that it is never offered again, keeping its bytes for a
/// bug report; returns the new path.
pub fn set_aside(path: &Path) -> io::Result<PathBuf> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in 0..10_000u32 {
        let aside = path.with_file_name(match n {
            0 => format!("{name}{SET_ASIDE}"),
            n => format!("{name}{SET_ASIDE}-{n}"),
        });
        if !aside.exists() {
            std::fs::rename(path, &aside)?;
            return Ok(aside);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free name to set the journal aside",
    ))
}

#[cfg(test)]
mod tests;
