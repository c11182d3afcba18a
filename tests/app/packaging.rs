//! What packages ship: `rigscope --version` with the commit, Help ▸ About…, shell completions and
//! man pages from the command-line definition, and the Linux archive of `packaging/linux.sh`
//! unpacked, run and installed under a temporary prefix.

use crate::common;
use crate::common::gpu;

use crate::common::has_program;
use egui_kittest::kittest::Queryable;
use rigscope::ui::about::{COMMIT, VERSION};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Runs `command` (killed past five minutes) and returns its output; fails the test, with its
/// standard error, when it does not exit with 0.
fn run_ok(command: &mut Command, what: &str) -> Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what} does not start: {e}"));
    let output = common::wait_or_kill(child, Duration::from_secs(300), what);
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Every file under `dir`, as paths relative to it with `/` separators.
fn files_under(dir: &Path) -> BTreeSet<String> {
    fn walk(dir: &Path, root: &Path, files: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, files);
            } else {
                files.insert(path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut files = BTreeSet::new();
    walk(dir, dir, &mut files);
    files
}

/// The visible subcommands, as `rigscope --help` lists them (without `help`).
fn subcommands() -> Vec<String> {
    let (code, help, _) = common::run_rigscope(&["--help"]);
    assert_eq!(code, Some(0));
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

fn gunzip(path: &Path) -> String {
    let output = run_ok(Command::new("gzip").arg("-dc").arg(path), "gzip -dc");
    String::from_utf8(output.stdout).expect("a man page is text")
}

#[test]
fn version_prints_the_package_version_and_a_commit_of_this_repository() {
    let (code, stdout, stderr) = common::run_rigscope(&["--version"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, format!("rigscope {VERSION}\n"));
    assert!(
        VERSION.starts_with(&format!("{} (commit ", env!("CARGO_PKG_VERSION"))),
        "{VERSION}"
    );
    let hash = COMMIT.strip_suffix("-dirty").unwrap_or(COMMIT);
    if hash == "unknown" {
        // Built outside a git checkout (a source tarball).
        assert!(!Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.git")).exists());
        return;
    }
    assert!(
        hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{COMMIT}"
    );
    // The commit is one of this repository's (HEAD may have moved on since the build).
    run_ok(
        Command::new("git")
            .args(["-C", env!("CARGO_MANIFEST_DIR"), "cat-file", "-e"])
            .arg(format!("{hash}^{{commit}}")),
        "git cat-file",
    );
}

#[test]
fn help_about_shows_version_commit_and_adapter() {
    use rigscope::ui::{self, FrameInfo, UiState};
    use rigscope::viewer::Viewer;
    let adapter = "Test GPU (Vulkan, DiscreteGpu)";
    let mut harness = egui_kittest::Harness::builder()
        .with_size(egui::vec2(1400.0, 1000.0))
        .build_ui_state(
            |ui, (viewer, state): &mut (Viewer, UiState)| {
                let info = FrameInfo {
                    adapter: adapter.to_owned(),
                    ..FrameInfo::default()
                };
                ui::show(ui, viewer, state, &info);
            },
            (Viewer::new(common::load_demo(), None), UiState::default()),
        );
    harness.run();
    // The status bar names the adapter too; the About window adds a second.
    assert_eq!(harness.query_all_by_label(adapter).count(), 1);
    assert!(
        harness.query_by_label("Graphics adapter").is_none(),
        "About is closed at first"
    );
    harness.get_by_label("Help").click();
    harness.run();
    harness.get_by_label("About…").click();
    harness.run();
    assert!(harness.state().1.about_open);
    harness.get_by_label("Graphics adapter");
    assert_eq!(harness.query_all_by_label(adapter).count(), 2);
    harness.get_by_label(COMMIT);
    harness.get_by_label(env!("CARGO_PKG_VERSION"));
    harness.get_by_label(env!("CARGO_PKG_LICENSE"));
    // An adapter not known yet is said so, not left blank.
    assert!(ui::about::rows("").contains(&("Graphics adapter", "not known yet".to_owned())));
}

#[test]
fn completions_name_the_subcommands_and_their_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, script, stderr) = common::run_rigscope(&["completions", shell]);
        assert_eq!(code, Some(0), "{shell}: {stderr}");
        for word in ["render", "audit", "clips"] {
            assert!(script.contains(word), "the {shell} completion does not mention {word}");
        }
    }
    let (_, bash, _) = common::run_rigscope(&["completions", "bash"]);
    assert!(bash.contains("--clips") && bash.contains("--out"), "{bash}");
    assert!(
        bash.contains("complete -F _rigscope"),
        "bash registers the completion function"
    );
    let (code, _, stderr) = common::run_rigscope(&["completions", "tcsh"]);
    assert_eq!(code, Some(2), "an unknown shell is refused: {stderr}");
}

#[test]
fn man_writes_a_page_per_visible_subcommand() {
    let dir = common::temp_dir("man").join("man1");
    let (code, _, stderr) = common::run_rigscope(&["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    let mut expected: BTreeSet<String> = subcommands().iter().map(|s| format!("rigscope-{s}.1")).collect();
    assert!(expected.contains("rigscope-render.1") && expected.contains("rigscope-audit.1"));
    expected.insert("rigscope.1".to_owned());
    assert_eq!(files_under(&dir), expected, "hidden subcommands get no page");
    let render = std::fs::read_to_string(dir.join("rigscope-render.1")).unwrap();
    // roff escapes the hyphens.
    assert!(render.contains(r"\-\-out"), "{render}");
    assert!(
        render.contains("\n.TH rigscope-render 1 "),
        "a man page titled rigscope-render(1): {render}"
    );
}

#[test]
fn the_linux_archive_holds_everything_installs_and_runs() {
    let work = common::temp_dir("package");
    let out = work.join("out");
    let version = env!("CARGO_PKG_VERSION");
    let name = format!("rigscope-{version}-x86_64-linux");
    let built = run_ok(
        Command::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/packaging/linux.sh"))
            .args(["--binary", env!("CARGO_BIN_EXE_rigscope"), "--out"])
            .arg(&out),
        "packaging/linux.sh",
    );
    let archive = out.join(format!("{name}.tar.gz"));
    assert_eq!(String::from_utf8_lossy(&built.stdout).trim(), archive.to_str().unwrap());
    assert!(!out.join(&name).exists(), "the staging folder is removed");

    let unpacked = work.join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    run_ok(
        Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(&unpacked),
        "tar -xzf",
    );
    assert_eq!(std::fs::read_dir(&unpacked).unwrap().count(), 1, "one top folder");
    let top = unpacked.join(&name);

    let pngs = has_program("rsvg-convert");
    let mut expected: BTreeSet<String> = [
        "bin/rigscope",
        "install.sh",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "README.md",
        "THIRD_PARTY_NOTICES.md",
        "share/applications/rigscope.desktop",
        "share/mime/packages/rigscope.xml",
        "share/icons/hicolor/scalable/apps/rigscope.svg",
        "share/bash-completion/completions/rigscope",
        "share/zsh/site-functions/_rigscope",
        "share/fish/vendor_completions.d/rigscope.fish",
        "share/man/man1/rigscope.1.gz",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    expected.extend(
        subcommands()
            .iter()
            .map(|s| format!("share/man/man1/rigscope-{s}.1.gz")),
    );
    if pngs {
        expected.extend([48, 128, 256].map(|size| format!("share/icons/hicolor/{size}x{size}/apps/rigscope.png")));
    } else {
        eprintln!("rsvg-convert is not installed: the archive is checked without PNG icons");
    }
    assert_eq!(files_under(&top), expected);

    let desktop = std::fs::read_to_string(top.join("share/applications/rigscope.desktop")).unwrap();
    assert!(desktop.starts_with("[Desktop Entry]\n"));
    assert!(desktop.lines().any(|l| l == "Exec=rigscope %f"), "{desktop}");
    assert!(desktop.lines().any(|l| l == "Icon=rigscope"), "{desktop}");
    let mime_line = desktop
        .lines()
        .find(|l| l.starts_with("MimeType="))
        .expect("a MimeType line");
    let mime = std::fs::read_to_string(top.join("share/mime/packages/rigscope.xml")).unwrap();
    for (kind, glob) in [
        ("model/gltf+json", "*.gltf"),
        ("model/gltf-binary", "*.glb"),
        ("model/vrm", "*.vrm"),
        ("application/x-fbx", "*.fbx"),
    ] {
        assert!(mime_line.contains(&format!("{kind};")), "{kind} in {mime_line}");
        assert!(
            mime.contains(&format!(r#"<mime-type type="{kind}">"#)),
            "{kind} in the MIME XML"
        );
        assert!(
            mime.contains(&format!(r#"<glob pattern="{glob}"/>"#)),
            "{glob} in the MIME XML"
        );
    }
    let svg = std::fs::read_to_string(top.join("share/icons/hicolor/scalable/apps/rigscope.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("viewBox=\"0 0 256 256\""));
    if pngs {
        for size in [48, 128, 256] {
            let png = top.join(format!("share/icons/hicolor/{size}x{size}/apps/rigscope.png"));
            let image = image::open(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
            assert_eq!((image.width(), image.height()), (size, size));
        }
    }
    let notices = std::fs::read_to_string(top.join("THIRD_PARTY_NOTICES.md")).unwrap();
    for crate_row in ["| wgpu | ", "| egui | ", "| glam | ", "| clap_complete | "] {
        assert!(notices.contains(crate_row), "{crate_row} in the notices");
    }
    assert!(
        !notices.contains("| criterion | "),
        "dev-dependencies are not in the binary"
    );
    assert!(notices.contains("Permission is hereby granted") && notices.contains("Apache License"));
    let licence = std::fs::read_to_string(top.join("LICENSE-MIT")).unwrap();
    assert!(licence.contains("The Rigscope developers"));
    let render_page = gunzip(&top.join("share/man/man1/rigscope-render.1.gz"));
    assert!(render_page.contains(r"\-\-out"));
    let bash = std::fs::read_to_string(top.join("share/bash-completion/completions/rigscope")).unwrap();
    assert!(bash.contains("render") && bash.contains("--clips"));

    let binary = top.join("bin/rigscope");
    let version_line = run_ok(
        Command::new(&binary).arg("--version"),
        "the unpacked rigscope --version",
    );
    assert_eq!(
        String::from_utf8_lossy(&version_line.stdout),
        format!("rigscope {VERSION}\n")
    );

    let prefix = work.join("prefix with space");
    run_ok(
        Command::new("bash")
            .arg(top.join("install.sh"))
            .arg("--prefix")
            .arg(&prefix),
        "install.sh --prefix",
    );
    let installed = files_under(&prefix);
    for file in expected
        .iter()
        .filter(|f| f.starts_with("bin/") || f.starts_with("share/"))
    {
        assert!(installed.contains(file), "{file} is installed: {installed:?}");
    }
    for doc in ["LICENSE-MIT", "LICENSE-APACHE", "THIRD_PARTY_NOTICES.md", "README.md"] {
        assert!(
            installed.contains(&format!("share/doc/rigscope/{doc}")),
            "{doc} is installed"
        );
    }
    let installed_binary = prefix.join("bin/rigscope");
    let installed_desktop = std::fs::read_to_string(prefix.join("share/applications/rigscope.desktop")).unwrap();
    assert!(
        installed_desktop
            .lines()
            .any(|l| l == format!("Exec=\"{}\" %f", installed_binary.display())),
        "the installed entry starts the installed binary: {installed_desktop}"
    );
    assert!(
        installed_desktop
            .lines()
            .any(|l| l == format!("TryExec={}", installed_binary.display()))
    );
    if has_program("update-mime-database") {
        let globs = std::fs::read_to_string(prefix.join("share/mime/globs2")).expect("the MIME database is built");
        assert!(
            globs.contains("model/vrm:*.vrm") && globs.contains("application/x-fbx:*.fbx"),
            "{globs}"
        );
    }
    run_ok(
        Command::new(&installed_binary).arg("--version"),
        "the installed rigscope --version",
    );

    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let png = work.join("x.png");
    run_ok(
        Command::new(&binary).args(["render", "demo", "--out"]).arg(&png),
        "the unpacked rigscope render demo",
    );
    let bytes = std::fs::read(&png).expect("render wrote the PNG");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let image = image::load_from_memory(&bytes).unwrap();
    assert_eq!((image.width(), image.height()), (960, 720));
    let pixels = image.to_rgba8();
    let first = pixels.get_pixel(0, 0);
    assert!(pixels.pixels().any(|p| p != first), "the picture is not one flat color");
}
