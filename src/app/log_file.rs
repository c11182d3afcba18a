//! The window's log, kept in a file beside the settings as well as on standard error, so that a
//! bug report can carry what happened before a failure even when Rigscope was started from a
//! desktop entry, where standard error goes nowhere. The file is size-limited: past
//! [`LOG_LIMIT`] bytes it becomes `rigscope.log.1` (replacing the one before) and a new file
//! starts, so the two never hold more than twice that.
//!
//! Written here rather than with a rotation crate because the one maintained crate for it
//! panics when the folder cannot be created, and a log must never take the window down: every
//! failure of the file is ignored and standard error still gets the line.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Bytes the current log file may hold before it is rotated.
pub const LOG_LIMIT: u64 = 1 << 20;

/// The log file's place: `rigscope.log` in the settings folder.
pub fn log_path() -> Option<PathBuf> {
    crate::settings::config_dir().map(|d| d.join("rigscope.log"))
}

/// A log file that rotates past a size, written beside standard error.
pub struct RotatingLog {
    path: PathBuf,
    limit: u64,
    file: Option<File>,
    written: u64,
    /// Also copy every line to standard error.
    to_stderr: bool,
}

impl RotatingLog {
    /// Appends to `path` (its folder made when missing), rotating past `limit` bytes.
    pub fn open(path: &Path, limit: u64, to_stderr: bool) -> RotatingLog {
        let mut log = RotatingLog {
            path: path.to_owned(),
            limit: limit.max(1),
            file: None,
            written: 0,
            to_stderr,
        };
        log.reopen();
        log
    }

    /// The previous file's place: `rigscope.log.1` beside `rigscope.log`.
    pub fn previous_path(path: &Path) -> PathBuf {
        let mut name = path.as_os_str().to_owned();
        name.push(".1");
        PathBuf::from(name)
    }

    fn reopen(&mut self) {
        if let Some(folder) = self.path.parent() {
            let _ = std::fs::create_dir_all(folder);
        }
        self.file = OpenOptions::new().create(true).append(true).open(&self.path).ok();
        self.written = (self.file.as_ref())
            .and_then(|f| f.metadata().ok())
            .map_or(0, |m| m.len());
    }

    fn rotate(&mut self) {
        self.file = None;
        let _ = std::fs::rename(&self.path, Self::previous_path(&self.path));
        self.reopen();
    }
}

impl Write for RotatingLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.to_stderr {
            let _ = io::stderr().write_all(buf);
        }
        // A record larger than the limit still goes in whole, into a file of its own.
        if self.written > 0 && self.written + buf.len() as u64 > self.limit {
            self.rotate();
        }
        if let Some(file) = &mut self.file
            && file.write_all(buf).is_ok()
        {
            self.written += buf.len() as u64;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(file) = &mut self.file {
            let _ = file.flush();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_past_its_limit_and_keeps_one_previous_file() {
        let folder = std::env::temp_dir().join(format!("rigscope-log-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        let path = folder.join("nested").join("rigscope.log");
        let line = |k: usize| format!("line {k:04} of the log\n");
        let mut log = RotatingLog::open(&path, 100, false);
        for k in 0..12 {
            log.write_all(line(k).as_bytes()).unwrap();
        }
        log.flush().unwrap();
        // 21 bytes a line: four fit in 100 bytes. Lines 0–3, 4–7, 8–11: the first file is gone.
        assert_eq!(line(0).len(), 21);
        let lines = |range: std::ops::Range<usize>| range.map(line).collect::<String>();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), lines(8..12));
        assert_eq!(
            std::fs::read_to_string(RotatingLog::previous_path(&path)).unwrap(),
            lines(4..8)
        );
        drop(log);
        // Opened again, it appends after what is there and counts it against the limit.
        let mut log = RotatingLog::open(&path, 100, false);
        for k in 12..17 {
            log.write_all(line(k).as_bytes()).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), lines(16..17));
        assert_eq!(
            std::fs::read_to_string(RotatingLog::previous_path(&path)).unwrap(),
            lines(12..16)
        );
        let _ = std::fs::remove_dir_all(&folder);
    }

    #[test]
    fn a_log_that_cannot_be_written_still_takes_every_line() {
        // A folder where the file should be: opening fails, writing still succeeds.
        let folder = std::env::temp_dir().join(format!("rigscope-log-blocked-{}", std::process::id()));
        std::fs::create_dir_all(folder.join("rigscope.log")).unwrap();
        let mut log = RotatingLog::open(&folder.join("rigscope.log"), 100, false);
        assert_eq!(log.write(b"nowhere to go\n").unwrap(), 14);
        log.flush().unwrap();
        let _ = std::fs::remove_dir_all(&folder);
    }
}
