//! File ▸ Open by path… (and the field offered when no native dialog opens): a path typed, Tab
//! completing it from the file system, Enter opening it.

use crate::common;

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use rigscope::ui::UiState;
use rigscope::ui::path_prompt::{PathPrompt, PathPurpose};
use rigscope::viewer::Viewer;

/// The main window with File ▸ Open by path… chosen.
fn path_prompt_opened() -> egui_kittest::Harness<'static, (Viewer, UiState)> {
    let mut harness = common::main_window(Viewer::new(common::load_demo(), None), 1400.0, 1000.0);
    harness.run();
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Open by path…").click();
    harness.run();
    harness
}

#[test]
fn a_typed_path_completed_with_tab_opens_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo-typed.glb");
    std::fs::write(&file, rigscope::rig::demo::DEMO_GLB).unwrap();
    let mut harness = path_prompt_opened();
    let typed = format!("{}{}demo-ty", dir.path().display(), std::path::MAIN_SEPARATOR);
    let field = harness.get_by_role_and_label(Role::TextInput, "Path");
    field.focus();
    harness.run();
    harness.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    harness.get_by_role_and_label(Role::TextInput, "Path").type_text(&typed);
    harness.run();
    harness.key_press(egui::Key::Tab);
    harness.run();
    let prompt = harness.state().1.path_prompt.clone().expect("the field is open");
    assert_eq!(prompt.text, file.display().to_string(), "Tab completes the only match");
    harness.key_press(egui::Key::Enter);
    // The file loads on a thread with a spinner: one frame, then wait for the load.
    harness.step();
    let viewer = &mut harness.state_mut().0;
    assert!(viewer.wait_for_load());
    assert_eq!(viewer.document().path.as_deref(), Some(file.as_path()));
    assert!(harness.state().1.path_prompt.is_none(), "the field closes once used");
}

#[test]
fn the_field_suggests_folders_and_only_the_files_the_action_takes() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["avatar.glb", "avatar.png", "dance.fbx", "notes.txt", "sky.hdr"] {
        std::fs::write(dir.path().join(file), b"").unwrap();
    }
    std::fs::create_dir(dir.path().join("takes")).unwrap();
    let folder = format!("{}{}", dir.path().display(), std::path::MAIN_SEPARATOR);
    let mut harness = path_prompt_opened();
    let shown = |harness: &mut egui_kittest::Harness<'_, (Viewer, UiState)>, purpose: PathPurpose| {
        harness.state_mut().1.path_prompt = Some(PathPrompt {
            purpose,
            text: folder.clone(),
            why: None,
        });
        harness.run();
        let mut names: Vec<&str> = ["avatar.glb", "avatar.png", "dance.fbx", "notes.txt", "sky.hdr", "takes"]
            .into_iter()
            .filter(|name| harness.query_by_label(name).is_some())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        shown(&mut harness, PathPurpose::Open),
        ["avatar.glb", "dance.fbx", "takes"]
    );
    assert_eq!(
        shown(&mut harness, PathPurpose::LoadClips),
        ["avatar.glb", "dance.fbx", "takes"]
    );
    assert_eq!(shown(&mut harness, PathPurpose::SaveAs), ["avatar.glb", "takes"]);
    assert_eq!(shown(&mut harness, PathPurpose::Environment), ["sky.hdr", "takes"]);
}
