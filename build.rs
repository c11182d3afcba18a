//! Records the commit the binary is built from as `RIGSCOPE_COMMIT` (`rigscope --version`, Help ▸
//! About): `git rev-parse --short HEAD`, with `-dirty` when `git status --porcelain` lists
//! changes, or `unknown` when git or the repository is missing (a build from a source tarball).
//! A packager who knows the commit can set `RIGSCOPE_COMMIT` in the build's environment instead.
//!
//! The script reruns when HEAD moves (a checkout, a commit: `.git/HEAD` and the ref it points
//! to) or the index changes (`git add`); an edit that is not yet staged does not rerun it, so the
//! `-dirty` mark of a local build can lag behind until the next commit or `git add`.
//!
//! For a Windows target it also builds the executable's resources (`windows_resources`): the
//! version information Explorer shows, and the icon when `RIGSCOPE_WINDOWS_ICON` names an `.ico`
//! (`packaging/windows.sh` makes one from `assets/icon/rigscope.svg`). Other targets skip this.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RIGSCOPE_COMMIT");
    let commit = match std::env::var("RIGSCOPE_COMMIT") {
        Ok(given) if !given.trim().is_empty() => given.trim().to_owned(),
        _ => {
            let manifest_dir =
                PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
            git_commit(&manifest_dir).unwrap_or_else(|| "unknown".to_owned())
        }
    };
    println!("cargo:rustc-env=RIGSCOPE_COMMIT={commit}");
    // The target's OS, not the OS the build script runs on: cross builds from Linux included.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("windows") {
        windows_resources();
    }
}

/// The environment variable naming the `.ico` to put in `rigscope.exe`.
const ICON_ENV: &str = "RIGSCOPE_WINDOWS_ICON";

/// Writes `rigscope.rc` into `OUT_DIR` and compiles it into the rigscope binary with
/// `embed-resource` (MinGW's `windres` for `*-windows-gnu`, `rc.exe` or `llvm-rc` for MSVC): a
/// VERSIONINFO block from the package's version, and the icon named by `RIGSCOPE_WINDOWS_ICON`.
/// Without that variable the executable has no icon, and cargo prints a warning saying so; with it,
/// a resource compiler that cannot be found or fails is an error.
fn windows_resources() {
    println!("cargo:rerun-if-env-changed={ICON_ENV}");
    let icon = std::env::var_os(ICON_ENV)
        .filter(|path| !path.is_empty())
        .map(PathBuf::from);
    let mut rc = String::new();
    if let Some(icon) = &icon {
        assert!(icon.is_file(), "{ICON_ENV}={} is not a file", icon.display());
        println!("cargo:rerun-if-changed={}", icon.display());
        let path = icon.to_str().unwrap_or_else(|| panic!("{ICON_ENV} is not valid UTF-8"));
        // The first icon in the file, by ID, is the one Explorer shows for the executable.
        rc.push_str(&format!("1 ICON {}\n\n", rc_string(path)));
    } else {
        println!("cargo:warning=rigscope.exe gets no icon: {ICON_ENV} is not set (packaging/windows.sh sets it)");
    }
    let version = |part: &str| std::env::var(format!("CARGO_PKG_VERSION_{part}")).expect("cargo sets the version");
    let (major, minor, patch) = (version("MAJOR"), version("MINOR"), version("PATCH"));
    let full = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    let strings = [
        ("FileDescription", "Rigscope"),
        ("ProductName", "Rigscope"),
        ("FileVersion", full.as_str()),
        ("ProductVersion", full.as_str()),
        ("InternalName", "rigscope"),
        ("OriginalFilename", "rigscope.exe"),
        ("LegalCopyright", "MIT OR Apache-2.0"),
    ];
    rc.push_str(&format!(
        "1 VERSIONINFO\nFILEVERSION {major},{minor},{patch},0\nPRODUCTVERSION {major},{minor},{patch},0\n\
         FILEOS 0x40004\nFILETYPE 0x1\nBEGIN\n  BLOCK \"StringFileInfo\"\n  BEGIN\n    \
         BLOCK \"040904B0\"\n    BEGIN\n"
    ));
    for (key, value) in strings {
        rc.push_str(&format!("      VALUE {}, {}\n", rc_string(key), rc_string(value)));
    }
    // U.S. English (0x409), Unicode (1200), as the string block's name says.
    rc.push_str(
        "    END\n  END\n  BLOCK \"VarFileInfo\"\n  BEGIN\n    VALUE \"Translation\", 0x409, 1200\n  END\nEND\n",
    );
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let rc_path = out_dir.join("rigscope.rc");
    std::fs::write(&rc_path, rc).unwrap_or_else(|e| panic!("cannot write {}: {e}", rc_path.display()));
    let result = embed_resource::compile_for(&rc_path, ["rigscope"], embed_resource::NONE);
    if icon.is_some() {
        result
            .manifest_required()
            .unwrap_or_else(|e| panic!("the Windows resources: {e}"));
    } else if let Err(e) = result.manifest_optional() {
        panic!("the Windows resources: {e}");
    }
}

/// `text` as a resource-script string literal: in quotes, with quotes doubled and backslashes
/// escaped (windres and rc.exe read `\\` as one backslash).
fn rc_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\"\""))
}

/// Runs git in `dir` and returns its trimmed standard output, or `None` when git is missing or
/// fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        // Without optional locks `git status` does not rewrite the index, which would make this
        // script rerun on every build.
        .arg("--no-optional-locks")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// The short commit of the repository whose top folder is `dir`, with `-dirty` for uncommitted
/// changes; `None` when `dir` is not the top of a repository (a tarball unpacked inside some other
/// checkout is not that checkout's commit).
fn git_commit(dir: &Path) -> Option<String> {
    let top = PathBuf::from(git(dir, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != dir.canonicalize().ok()? {
        return None;
    }
    let hash = git(dir, &["rev-parse", "--short", "HEAD"]).filter(|h| !h.is_empty())?;
    // HEAD itself, the branch it names (a loose ref, or packed-refs once packed) and the index.
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned(), "index".to_owned()];
    watched.extend(git(dir, &["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(dir, &["rev-parse", "--git-path", &name]) {
            let path = dir.join(path);
            // A path that does not exist would make cargo rerun the script on every build.
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    let dirty = git(dir, &["status", "--porcelain"]).is_some_and(|changes| !changes.is_empty());
    Some(if dirty { format!("{hash}-dirty") } else { hash })
}
