//! A path typed by hand, for when no native file dialog can open (a Linux desktop without an XDG
//! desktop portal or zenity) or for whoever prefers the keyboard (File ▸ Open by path…): a text
//! field completed from the file system (Tab takes the suggestions' common part, a click one of
//! them), Enter to go.

use super::{UiState, discard};
use crate::viewer::Viewer;
use std::path::{Path, PathBuf};

/// Suggestions shown at most.
const SUGGESTIONS: usize = 12;

/// What the typed path is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathPurpose {
    Open,
    LoadClips,
    Compare,
    SaveAs,
    Environment,
}

impl PathPurpose {
    fn title(self) -> &'static str {
        match self {
            PathPurpose::Open => "Open a rig",
            PathPurpose::LoadClips => "Load clips from",
            PathPurpose::Compare => "Compare with",
            PathPurpose::SaveAs => "Save as",
            PathPurpose::Environment => "Light with the environment map",
        }
    }

    /// The extensions of the files the action opens or writes, as its native dialog filters them.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            PathPurpose::Open | PathPurpose::LoadClips | PathPurpose::Compare => crate::rig::RIG_FILE_EXTENSIONS,
            PathPurpose::SaveAs => &["glb", "gltf"],
            PathPurpose::Environment => &["hdr"],
        }
    }

    /// What the empty field says to type: "path to a .glb or .gltf file".
    fn hint(self) -> String {
        let extensions: Vec<String> = self.extensions().iter().map(|e| format!(".{e}")).collect();
        let listed = match extensions.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => "any".to_owned(),
        };
        format!("path to a {listed} file")
    }
}

/// The path field while it is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPrompt {
    pub purpose: PathPurpose,
    pub text: String,
    /// Why the field is shown instead of a dialog, when a dialog failed.
    pub why: Option<String>,
}

impl PathPrompt {
    /// The field for `purpose`, starting in the open file's folder.
    pub fn new(purpose: PathPurpose, viewer: &Viewer) -> PathPrompt {
        let folder = (viewer.document().path.as_deref())
            .and_then(|p| std::path::absolute(p).ok())
            .and_then(|p| p.parent().map(Path::to_owned));
        let mut text = folder.map_or_else(String::new, |f| format!("{}{}", f.display(), std::path::MAIN_SEPARATOR));
        if purpose == PathPurpose::SaveAs
            && let Some(input) = &viewer.document().path
        {
            text.push_str(&crate::viewer::suggested_save_name(input));
        }
        PathPrompt {
            purpose,
            text,
            why: None,
        }
    }

    /// The field shown because the native dialog for `purpose` could not open.
    pub fn after_failed_dialog(purpose: PathPurpose, viewer: &Viewer) -> PathPrompt {
        PathPrompt {
            why: Some(
                "No file dialog could be opened (it needs an XDG desktop portal or zenity): type the path instead."
                    .to_owned(),
            ),
            ..PathPrompt::new(purpose, viewer)
        }
    }
}

/// The entries of the folder `typed` is in whose names start with what follows its last
/// separator, as paths to type (folders end with a separator), sorted, at most `SUGGESTIONS`:
/// folders, and files only with one of `extensions` (in any case); hidden entries only when the
/// name typed starts with a dot.
pub fn completions(typed: &str, extensions: &[&str]) -> Vec<String> {
    let (folder, start) = match typed.rfind(std::path::is_separator) {
        Some(at) => (&typed[..=at], &typed[at + 1..]),
        None => ("", typed),
    };
    let listed = if folder.is_empty() {
        Path::new(".")
    } else {
        Path::new(folder)
    };
    let Ok(entries) = std::fs::read_dir(listed) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            // Through links: a link to a folder is a folder to go into.
            let is_folder = std::fs::metadata(entry.path()).ok()?.is_dir();
            let readable = is_folder
                || (Path::new(&name).extension().and_then(|e| e.to_str()))
                    .is_some_and(|e| extensions.iter().any(|wanted| e.eq_ignore_ascii_case(wanted)));
            let shown = readable && name.starts_with(start) && (start.starts_with('.') || !name.starts_with('.'));
            let folder_mark = is_folder.then_some(std::path::MAIN_SEPARATOR);
            shown.then(|| format!("{folder}{name}{}", folder_mark.map(String::from).unwrap_or_default()))
        })
        .collect();
    found.sort();
    found.truncate(SUGGESTIONS);
    found
}

/// The longest start every suggestion shares (what Tab completes to).
fn common_start(suggestions: &[String]) -> Option<String> {
    let first = suggestions.first()?;
    let mut length = first.len();
    for other in &suggestions[1..] {
        length = length.min(
            (first.char_indices().zip(other.chars()))
                .find(|((_, a), b)| a != b)
                .map_or(first.len().min(other.len()), |((at, _), _)| at),
        );
    }
    Some(first[..length].to_owned())
}

/// The path field's window, while one is open.
pub fn path_prompt_window(ctx: &egui::Context, viewer: &mut Viewer, state: &mut UiState) {
    let Some(mut prompt) = state.path_prompt.take() else {
        return;
    };
    let suggestions = completions(&prompt.text, prompt.purpose.extensions());
    let (mut go, mut cancel) = (false, false);
    egui::Window::new(prompt.purpose.title())
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_TOP, [0.0, 60.0])
        .show(ctx, |ui| {
            if let Some(why) = &prompt.why {
                ui.label(egui::RichText::new(why).color(ui.visuals().warn_fg_color));
            }
            let label = ui.label("Path");
            let field = ui
                .add(
                    egui::TextEdit::singleline(&mut prompt.text)
                        .desired_width(480.0)
                        .hint_text(prompt.purpose.hint())
                        .lock_focus(true),
                )
                .labelled_by(label.id);
            if !field.has_focus() && !field.lost_focus() {
                field.request_focus();
            }
            if field.has_focus()
                && ui.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Tab))
                && let Some(common) = common_start(&suggestions).filter(|c| c.len() > prompt.text.len())
            {
                prompt.text = common;
            }
            go = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            for suggestion in &suggestions {
                let name = suggestion.rsplit(std::path::is_separator).find(|s| !s.is_empty());
                if ui.small_button(name.unwrap_or(suggestion)).clicked() {
                    prompt.text = suggestion.clone();
                }
            }
            ui.horizontal(|ui| {
                go |= ui.button("OK").clicked();
                cancel = ui.button("Cancel").clicked() || ui.input(|i| i.key_pressed(egui::Key::Escape));
            });
        });
    let path = PathBuf::from(prompt.text.trim());
    if cancel {
        return;
    }
    if !go || path.as_os_str().is_empty() {
        state.path_prompt = Some(prompt);
        return;
    }
    carry_out(viewer, state, prompt.purpose, path);
}

/// Does with `path` what the dialog for `purpose` would have done with it.
fn carry_out(viewer: &mut Viewer, state: &mut UiState, purpose: PathPurpose, path: PathBuf) {
    let picked = |_: Option<&Path>| Some(path.clone());
    match purpose {
        PathPurpose::Open => {
            discard::do_or_ask(viewer, state, discard::AfterDiscard::Open(path), &mut Vec::new());
        }
        PathPurpose::LoadClips => {
            super::load_clips_from_dialog(viewer, state, picked);
        }
        PathPurpose::Compare => {
            super::compare_from_dialog(viewer, state, picked);
        }
        PathPurpose::SaveAs => super::clip_list::save_as_from_dialog(viewer, state, |_, _| Some(path.clone())),
        PathPurpose::Environment => {
            super::environment_from_dialog(viewer, state, picked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_list_folders_and_the_files_of_the_extensions_asked_hidden_ones_on_request() {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "walk.glb",
            "wave.gltf",
            "wave2.GLB",
            "run.fbx",
            "walk.png",
            ".hidden.glb",
        ] {
            std::fs::write(dir.path().join(file), b"").unwrap();
        }
        std::fs::create_dir(dir.path().join("walks")).unwrap();
        let folder = format!("{}{}", dir.path().display(), std::path::MAIN_SEPARATOR);
        let sep = std::path::MAIN_SEPARATOR;
        let rigs = PathPurpose::Open.extensions();
        assert_eq!(
            completions(&format!("{folder}wa"), rigs),
            [
                format!("{folder}walk.glb"),
                format!("{folder}walks{sep}"),
                format!("{folder}wave.gltf"),
                format!("{folder}wave2.GLB")
            ]
        );
        assert_eq!(
            completions(&folder, rigs).len(),
            5,
            "every entry but the picture and the hidden one"
        );
        let saved = completions(&folder, PathPurpose::SaveAs.extensions());
        assert_eq!(saved.len(), 4, "no FBX to save as: {saved:?}");
        assert_eq!(
            completions(&folder, PathPurpose::Environment.extensions()),
            [format!("{folder}walks{sep}")]
        );
        assert_eq!(
            completions(&format!("{folder}.h"), rigs),
            [format!("{folder}.hidden.glb")]
        );
        assert!(completions(&format!("{folder}nothing"), rigs).is_empty());
        assert!(completions("/no/such/folder/x", rigs).is_empty());
        let walks = completions(&format!("{folder}wal"), rigs);
        assert_eq!(common_start(&walks), Some(format!("{folder}walk")));
    }

    #[test]
    fn the_hint_names_the_extensions_the_action_takes() {
        assert_eq!(PathPurpose::SaveAs.hint(), "path to a .glb or .gltf file");
        assert_eq!(
            PathPurpose::Open.hint(),
            "path to a .glb, .gltf, .vrm, .vrma, .fbx or .bvh file"
        );
        assert_eq!(PathPurpose::Environment.hint(), "path to a .hdr file");
    }
}
