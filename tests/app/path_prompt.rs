//! File ▸ Open by path… (and the field offered when no native dialog opens): a path typed, Tab
//! completing it from the file system, Enter opening it.

use crate::common;

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use rigscope::viewer::Viewer;

#[test]
fn a_typed_path_completed_with_tab_opens_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo-typed.glb");
    std::fs::write(&file, rigscope::rig::demo::DEMO_GLB).unwrap();
    let mut harness = common::main_window(Viewer::new(common::load_demo(), None), 1400.0, 1000.0);
    harness.run();
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Open by path…").click();
    harness.run();
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
