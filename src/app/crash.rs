//! Crash reports: a panic in the window writes what a bug report needs (the message and where it
//! happened, a backtrace, the version and commit, the graphics adapter, the files open) into the
//! `crashes` folder beside the settings, and the next start says where it went.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the window knows that a report should carry, kept up to date as it runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrashContext {
    pub adapter: String,
    pub files: Vec<PathBuf>,
}

static CONTEXT: Mutex<CrashContext> = Mutex::new(CrashContext {
    adapter: String::new(),
    files: Vec::new(),
});

/// A report's file name starts so; one already announced ends in `SEEN`.
const PREFIX: &str = "crash-";
const SEEN: &str = ".seen.txt";

/// The folder reports go to: `crashes` in the settings folder.
pub fn folder() -> Option<PathBuf> {
    crate::settings::config_dir().map(|d| d.join("crashes"))
}

/// Notes the adapter and the open files for a report; called every frame, it copies them only
/// when they changed.
pub fn note_context<'a>(adapter: &str, files: impl Iterator<Item = &'a Path> + Clone) {
    let Ok(mut context) = CONTEXT.lock() else { return };
    if context.adapter != adapter {
        context.adapter = adapter.to_owned();
    }
    if !context.files.iter().map(PathBuf::as_path).eq(files.clone()) {
        context.files = files.map(Path::to_owned).collect();
    }
}

/// Writes a report for every panic of the main thread from now on (then lets the default hook
/// print it as before).
pub fn install() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // A job's thread that panics is caught and its failure shown (see `crate::job`): only
        // the window's own thread stops the program.
        if std::thread::current().name() != Some("main") {
            default(info);
            return;
        }
        let message = (info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_owned());
        let location = info.location().map_or_else(String::new, ToString::to_string);
        let backtrace = std::backtrace::Backtrace::force_capture().to_string();
        // A poisoned lock still holds what was noted: a report without it would say less.
        let context = CONTEXT.lock().map_or_else(|e| e.into_inner().clone(), |c| c.clone());
        let text = report_text(&message, &location, &backtrace, &context);
        match folder().map(|folder| write_report(&folder, &text)) {
            Some(Ok(path)) => eprintln!("rigscope: a crash report was written to {}", path.display()),
            Some(Err(e)) => eprintln!("rigscope: the crash report could not be written: {e}"),
            None => {}
        }
        default(info);
    }));
}

/// The report's text.
pub fn report_text(message: &str, location: &str, backtrace: &str, context: &CrashContext) -> String {
    let files = if context.files.is_empty() {
        "  (the demo rig)".to_owned()
    } else {
        (context.files.iter())
            .map(|f| format!("  {}", f.display()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let adapter = if context.adapter.is_empty() {
        "not known yet"
    } else {
        &context.adapter
    };
    format!(
        "Rigscope stopped unexpectedly.\n\nmessage: {message}\nat: {location}\nversion: {}\ngraphics adapter: {adapter}\nfiles open:\n{files}\n\nbacktrace:\n{backtrace}\n",
        crate::ui::about::VERSION,
    )
}

/// Writes `text` as a new report in `folder` (made when missing), whole or not at all; returns
/// its path.
pub fn write_report(folder: &Path, text: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(folder)?;
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = (0..)
        .map(|n| folder.join(format!("{PREFIX}{seconds}-{n}.txt")))
        .find(|p| !p.exists())
        .expect("a free file name");
    let mut temp = crate::save::temp_file_in(folder, ".rigscope-crash-")?;
    std::io::Write::write_all(temp.as_file_mut(), text.as_bytes())?;
    temp.persist(&path).map_err(|e| e.error)?;
    Ok(path)
}

/// The reports in `folder` not announced yet, marked announced (renamed to end in `SEEN`):
/// their new paths, oldest first.
pub fn take_unseen_reports(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut unseen: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.starts_with(PREFIX) && name.ends_with(".txt") && !name.ends_with(SEEN)
        })
        .collect();
    unseen.sort();
    (unseen.into_iter())
        .filter_map(|path| {
            let stem = path.file_stem()?.to_str()?.to_owned();
            let seen = path.with_file_name(format!("{stem}{SEEN}"));
            std::fs::rename(&path, &seen).ok().map(|()| seen)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_says_what_where_which_version_adapter_and_files_and_is_announced_once() {
        let context = CrashContext {
            adapter: "llvmpipe (Vulkan)".into(),
            files: vec![PathBuf::from("/rigs/Fox.glb"), PathBuf::from("/rigs/Xbot.glb")],
        };
        let text = report_text("index out of bounds", "src/x.rs:1:2", "0: main", &context);
        for wanted in [
            "message: index out of bounds",
            "at: src/x.rs:1:2",
            crate::ui::about::VERSION,
            "graphics adapter: llvmpipe (Vulkan)",
            "  /rigs/Fox.glb\n  /rigs/Xbot.glb",
            "backtrace:\n0: main",
        ] {
            assert!(text.contains(wanted), "{wanted:?} in {text}");
        }

        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("crashes");
        let first = write_report(&folder, &text).unwrap();
        let second = write_report(&folder, "another").unwrap();
        assert_ne!(first, second);
        assert_eq!(std::fs::read_to_string(&first).unwrap(), text);
        let announced = take_unseen_reports(&folder);
        assert_eq!(announced.len(), 2);
        assert!(
            announced
                .iter()
                .all(|p| p.to_string_lossy().ends_with(SEEN) && p.exists())
        );
        assert_eq!(std::fs::read_to_string(&announced[0]).unwrap(), text, "oldest first");
        assert!(take_unseen_reports(&folder).is_empty(), "announced once");
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 2, "no temporary file left");
    }
}
