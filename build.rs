//! Records the commit the binary is built from as `RIGSCOPE_COMMIT` (`rigscope --version`, Help ▸
//! About): `git rev-parse --short HEAD`, with `-dirty` when `git status --porcelain` lists
//! changes, or `unknown` when git or the repository is missing (a build from a source tarball).
//! A packager who knows the commit can set `RIGSCOPE_COMMIT` in the build's environment instead.
//!
//! The script reruns when HEAD moves (a checkout, a commit: `.git/HEAD` and the ref it points
//! to) or the index changes (`git add`); an edit that is not yet staged does not rerun it, so the
//! `-dirty` mark of a local build can lag behind until the next commit or `git add`.

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
