//! The artist's workflow, driven as a person would: open a file through the Open dialog's code
//! path, play, switch views, bend and reset; hot reload when the file changes on disk;
//! screenshots and frame sequences; settings that stick; the keyboard map.

use crate::common;
use crate::common::gpu;

use crate::common::viewer_command;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rigscope::anim::JointOverride;
use rigscope::render::ViewMode;
use rigscope::rig::demo::demo_glb;
use rigscope::settings::{CONFIG_DIR_ENV, Settings};
use rigscope::ui::{self, FrameInfo, UiAction, UiState};
use rigscope::viewer::Viewer;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The longest a load or a hot reload may take before a test gives up.
const BOUND: Duration = Duration::from_secs(20);

/// Everything a person's session holds: the viewer, the UI state, what the UI asked the
/// window to do in the last frame, and where the 3D view was.
struct Session {
    viewer: Viewer,
    ui: UiState,
    actions: Vec<UiAction>,
    viewport: egui::Rect,
}

fn harness<'a>(viewer: Viewer) -> Harness<'a, Session> {
    let session = Session {
        viewer,
        ui: UiState::default(),
        actions: Vec::new(),
        viewport: egui::Rect::NOTHING,
    };
    Harness::builder().with_size(egui::vec2(1400.0, 1000.0)).build_ui_state(
        |ui, session: &mut Session| {
            let output = ui::show(ui, &mut session.viewer, &mut session.ui, &FrameInfo::default());
            session.actions.extend(output.actions);
            session.viewport = output.viewport;
        },
        session,
    )
}

/// Ticks the viewer (as the window's clock does) until `done` holds, or panics after [`BOUND`].
fn tick_until(viewer: &mut Viewer, what: &str, mut done: impl FnMut(&mut Viewer) -> bool) -> Duration {
    let started = Instant::now();
    while !done(viewer) {
        assert!(started.elapsed() < BOUND, "{what} did not happen within {BOUND:?}");
        viewer.tick(0.0);
        if viewer.loading().is_some() {
            viewer.wait_for_load();
        } else {
            // Changes on disk arrive from the OS's watcher thread in real time.
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    started.elapsed()
}

fn joint_names(viewer: &Viewer) -> Vec<String> {
    viewer.rig().skins[0]
        .joints
        .iter()
        .map(|&j| viewer.rig().nodes[j].name.clone())
        .collect()
}

#[test]
fn a_person_opens_a_file_plays_it_switches_the_view_and_resets_the_pose() {
    let dir = common::temp_dir("person");
    let file = dir.join("tail.glb");
    std::fs::write(&file, demo_glb(4)).unwrap();
    let mut harness = harness(Viewer::new(common::load_demo(), None));
    harness.run();

    // Ctrl+O asks for the Open dialog; the file picked there goes the dialog's way.
    harness.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    harness.run();
    assert_eq!(harness.state().actions, [UiAction::OpenDialog]);
    let session = harness.state_mut();
    let mut dialog_started_in = None;
    let picked = ui::open_from_dialog(&mut session.viewer, &mut session.ui, |folder| {
        dialog_started_in = Some(folder.map(Path::to_owned));
        Some(file.clone())
    });
    assert!(picked);
    assert_eq!(dialog_started_in, Some(None), "no folder known yet for the demo rig");
    tick_until(&mut session.viewer, "the load", |v| v.loading().is_none());
    session.actions.clear();
    let viewer = &harness.state().viewer;
    assert_eq!(viewer.diagnostics.error, None);
    assert_eq!(viewer.document().path.as_deref(), Some(file.as_path()));
    assert_eq!(joint_names(viewer), ["joint0", "joint1", "joint2", "joint3"]);
    assert_eq!(viewer.title(), "tail.glb — Rigscope");
    assert_eq!(
        viewer.recent.first().map(|p| p.file_name().unwrap()),
        Some("tail.glb".as_ref())
    );
    assert_eq!(harness.state().ui.last_folder.as_deref(), Some(dir.as_path()));
    harness.run();

    // Space pauses: the clock no longer moves the clip; space again plays and it moves.
    assert!(harness.state().viewer.player().playing);
    harness.key_press(egui::Key::Space);
    harness.run();
    assert!(!harness.state().viewer.player().playing);
    let paused_at = harness.state().viewer.player().time;
    for _ in 0..5 {
        harness.state_mut().viewer.tick(1.0 / 60.0);
    }
    assert_eq!(harness.state().viewer.player().time, paused_at);
    harness.key_press(egui::Key::Space);
    harness.run();
    let palette = harness.state_mut().viewer.pose().palettes[0].clone();
    for _ in 0..6 {
        harness.state_mut().viewer.tick(1.0 / 60.0);
        harness.run();
    }
    let viewer = &mut harness.state_mut().viewer;
    assert!(
        (viewer.player().time - paused_at - 0.1).abs() < 1e-4,
        "{}",
        viewer.player().time
    );
    assert_ne!(viewer.pose().palettes[0], palette, "the pose follows the clip");

    // `2` shows the weights view.
    assert_eq!(harness.state().viewer.view.options.mode, ViewMode::Shaded);
    harness.key_press(egui::Key::Num2);
    harness.run();
    assert_eq!(harness.state().viewer.view.options.mode, ViewMode::Weights);

    // Bend a joint in the tree, then click "Reset pose".
    harness.get_by_label("joint2").click();
    harness.run();
    harness
        .get_by_role_and_label(egui::accesskit::Role::Slider, "rotate Z")
        .set_value_accesskit(30.0);
    harness.run();
    assert!(harness.state().viewer.animation().has_overrides());
    harness.get_by_label("Reset pose").click();
    harness.run();
    assert!(!harness.state().viewer.animation().has_overrides());

    // The file opens again from File ▸ Recent after another one replaced it.
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Open demo rig").click();
    // The demo rig loads through the background loader, like a file.
    harness.step();
    tick_until(&mut harness.state_mut().viewer, "the demo rig", |v| {
        v.loading().is_none()
    });
    assert_eq!(harness.state().viewer.document().path, None);
    assert_eq!(harness.state().viewer.rig().name, "demo.glb");
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Recent").click();
    harness.run();
    harness.get_by_label("tail.glb").click();
    // One frame: while a load runs the status bar's spinner keeps asking for frames.
    harness.step();
    tick_until(&mut harness.state_mut().viewer, "the load from Recent", |v| {
        v.loading().is_none()
    });
    assert_eq!(harness.state().viewer.document().path.as_deref(), Some(file.as_path()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn f1_and_the_help_menu_show_the_keyboard_map() {
    let mut harness = harness(Viewer::new(common::load_demo(), None));
    harness.run();
    let rows = ui::help::rows();
    let f12 = ui::help::panel_text(rows.iter().find(|s| s.input == "`F12`").unwrap().action);
    assert!(harness.query_by_label(&f12).is_none(), "the map is closed at first");
    harness.key_press(egui::Key::F1);
    harness.run();
    assert!(harness.state().ui.help_open);
    for shortcut in &rows {
        // A key such as `1` may also label something else on screen; each action is unique.
        assert!(
            harness
                .query_all_by_label(&ui::help::panel_text(shortcut.input))
                .count()
                >= 1
        );
        harness.get_by_label(&ui::help::panel_text(shortcut.action));
    }
    harness.key_press(egui::Key::F1);
    harness.run();
    assert!(!harness.state().ui.help_open);
    assert!(harness.query_by_label(&f12).is_none());
    harness.get_by_label("Help").click();
    harness.run();
    harness.get_by_label_contains("Keyboard shortcuts").click();
    harness.run();
    assert!(harness.state().ui.help_open);
    harness.get_by_label("play / pause");
}

#[test]
fn the_readme_keyboard_table_is_the_help_panel_table() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table = ui::help::markdown_table();
    assert!(
        readme.contains(&table),
        "README.md should hold the keyboard map exactly as the Help panel has it:\n{table}"
    );
}

#[test]
fn hot_reload_shows_the_new_file_and_keeps_camera_view_clip_time_selection_and_bends() {
    let dir = common::temp_dir("hot-reload");
    let file = dir.join("tail.glb");
    std::fs::write(&file, demo_glb(6)).unwrap();
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.open_now(&file).unwrap();
    viewer.watch_files(None);
    assert!(viewer.is_watching());

    // The state a person built up: camera, view, clip and time, a selection and two bends,
    // one on a joint the new file no longer has.
    viewer.view.camera.orbit(60.0, -20.0);
    viewer.view.camera.zoom(1.5);
    viewer.view.options.mode = ViewMode::Joints;
    viewer.view.options.wireframe = true;
    let twist = viewer.rig().find_clip("Twist").unwrap();
    viewer.select_clip(Some(twist));
    viewer.seek(0.4);
    viewer.toggle_play();
    let joint2 = viewer.rig().find_node("joint2").unwrap();
    let joint5 = viewer.rig().find_node("joint5").unwrap();
    viewer.view.selected_joint = Some(joint2);
    let bend = JointOverride::from_euler_degrees(glam::Vec3::new(0.0, 0.0, 35.0));
    viewer.set_override(joint2, bend);
    viewer.set_override(joint5, bend);
    let (camera, view, generation) = (viewer.view.camera, viewer.view.options, viewer.document().generation);

    // The artist exports a version with four joints over the old file. The bends are edits, so
    // the viewer asks first; the answer keeps them.
    std::fs::write(&file, demo_glb(4)).unwrap();
    let took = tick_until(&mut viewer, "the hot reload", |v| {
        if v.reload_question().is_some() {
            v.answer_reload(0, rigscope::viewer::ReloadAnswer::ReloadKeepingEdits);
        }
        v.document().generation != generation
    });
    println!("hot reload of the demo rig took {:.0} ms", took.as_secs_f64() * 1e3);
    assert_eq!(viewer.diagnostics.error, None);
    assert_eq!(joint_names(&viewer), ["joint0", "joint1", "joint2", "joint3"]);
    assert_eq!(viewer.view.camera, camera, "the camera stays where the person put it");
    assert_eq!(viewer.view.options, view);
    assert_eq!(viewer.player().clip, viewer.rig().find_clip("Twist"));
    assert!((viewer.player().time - 0.4).abs() < 1e-6);
    assert!(!viewer.player().playing);
    let joint2 = viewer.rig().find_node("joint2").unwrap();
    assert_eq!(viewer.view.selected_joint, Some(joint2));
    assert_eq!(viewer.animation().overrides[joint2], bend);
    assert_eq!(
        viewer.animation().overrides.iter().filter(|o| !o.is_identity()).count(),
        1,
        "the bend of the vanished joint5 is dropped"
    );
    assert!(!viewer.document().file_changed);
    assert_eq!(viewer.title(), "tail.glb — Rigscope");

    // A broken export keeps the rig on screen, says why, and marks the title.
    let generation = viewer.document().generation;
    std::fs::write(&file, b"{ not a glTF").unwrap();
    tick_until(&mut viewer, "the failed reload", |v| v.diagnostics.error.is_some());
    assert_eq!(viewer.document().generation, generation);
    assert_eq!(joint_names(&viewer).len(), 4);
    assert!(viewer.diagnostics.error.as_ref().unwrap().contains("could not open"));
    assert!(viewer.document().file_changed);
    assert_eq!(viewer.title(), "• tail.glb — Rigscope");

    // With hot reload off, a change only marks the title until the person reloads (F5).
    std::fs::write(&file, demo_glb(5)).unwrap();
    tick_until(&mut viewer, "the reload of a good file", |v| !v.document().file_changed);
    let generation = viewer.document().generation;
    viewer.hot_reload = false;
    viewer.diagnostics.error = None;
    std::fs::write(&file, demo_glb(6)).unwrap();
    tick_until(&mut viewer, "the change mark", |v| v.document().file_changed);
    // Long after the changes settled, as the viewer's clock sees it.
    viewer.poll_files(Instant::now() + rigscope::reload::DEBOUNCE * 3);
    viewer.tick(0.0);
    assert!(viewer.loading().is_none(), "nothing reloads by itself");
    assert_eq!(viewer.document().generation, generation, "nothing reloads by itself");
    assert_eq!(viewer.title(), "• tail.glb — Rigscope");
    let mut harness = harness(viewer);
    harness.run();
    harness.key_press(egui::Key::F5);
    harness.step();
    tick_until(&mut harness.state_mut().viewer, "the reload on F5", |v| {
        v.loading().is_none()
    });
    let viewer = &harness.state().viewer;
    assert_eq!(joint_names(viewer).len(), 6);
    assert!(!viewer.document().file_changed);
    assert_eq!(viewer.view.camera, camera);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_reload_never_cancels_another_file_being_opened() {
    let dir = common::temp_dir("reload-vs-open");
    let (a, b) = (dir.join("a.glb"), dir.join("b.glb"));
    std::fs::write(&a, demo_glb(3)).unwrap();
    std::fs::write(&b, demo_glb(5)).unwrap();
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.open_now(&a).unwrap();
    viewer.open(b.clone());
    viewer.reload();
    tick_until(&mut viewer, "the load", |v| v.loading().is_none());
    assert_eq!(viewer.document().path.as_deref(), Some(b.as_path()));
    assert_eq!(joint_names(&viewer).len(), 5);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_change_to_an_external_buffer_reloads_the_gltf_that_uses_it() {
    let Some(rigs) = common::shared_rigs() else { return };
    let dir = common::temp_dir("external");
    for name in ["InterpolationTest.gltf", "interpolation_test.bin"] {
        std::fs::copy(rigs.join(name), dir.join(name)).unwrap();
    }
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.open_now(&dir.join("InterpolationTest.gltf")).unwrap();
    // The file names a texture that is not there (a warning): watched all the same, so that
    // the texture showing up reloads the rig.
    assert_eq!(
        viewer.rig().sources,
        [dir.join("interpolation_test.bin"), dir.join("l.jpg")]
    );
    viewer.watch_files(None);
    let generation = viewer.document().generation;
    let bin = std::fs::read(dir.join("interpolation_test.bin")).unwrap();
    std::fs::write(dir.join("interpolation_test.bin"), &bin).unwrap();
    tick_until(&mut viewer, "the reload after the .bin changed", |v| {
        v.document().generation != generation
    });
    assert_eq!(viewer.diagnostics.error, None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn settings_carry_view_skinning_theme_curves_and_recent_files_to_the_next_run() {
    let dir = common::temp_dir("settings");
    let file = dir.join("settings.toml");
    let mut viewer = Viewer::new(common::load_demo(), None);
    let mut state = UiState::default();
    viewer.view.options.mode = ViewMode::Influences;
    viewer.view.options.skeleton.names = true;
    viewer.set_skinning(rigscope::skin::SkinningPath::Cpu, rigscope::skin::SkinningMethod::Dqs);
    viewer.hot_reload = false;
    viewer.recent = vec![dir.join("a.glb"), dir.join("b.glb")];
    state.theme = rigscope::settings::Theme::Light;
    state.screenshot.with_ui = true;
    state.screenshot.folder = Some(dir.join("shots"));
    state.curves.options.rotation_view = rigscope::motion::rotation::RotationView::LocalY;
    state.curves.options.jump_degrees = 20.0;
    rigscope::app::capture_settings(&viewer, &state, (900.0, 700.0))
        .save_to(&file)
        .unwrap();

    let settings = Settings::load_from(&file);
    assert_eq!(settings.window_size(), (900.0, 700.0));
    let mut next = Viewer::new(common::load_demo(), None);
    let mut next_state = UiState::default();
    rigscope::app::apply_settings(&settings, &mut next, &mut next_state);
    assert_eq!(next.view.options, viewer.view.options);
    assert_eq!(next.skinning_path(), rigscope::skin::SkinningPath::Cpu);
    assert_eq!(next.skinning_method(), rigscope::skin::SkinningMethod::Dqs);
    assert!(!next.hot_reload);
    assert_eq!(next.recent, viewer.recent);
    assert_eq!(next_state.theme, rigscope::settings::Theme::Light);
    assert_eq!(next_state.screenshot, state.screenshot);
    assert_eq!(next_state.curves.options, state.curves.options);

    // A corrupt file does not stop the next run: defaults.
    std::fs::write(&file, [0xff, 0xfe, 0x00, b'[']).unwrap();
    assert_eq!(Settings::load_from(&file), Settings::default());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn f12_saves_a_png_of_the_view_at_its_size_and_toasts_the_path() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let dir = common::temp_dir("f12");
    let mut harness = harness(Viewer::new(common::load_demo(), None));
    harness.state_mut().ui.screenshot.folder = Some(dir.clone());
    harness.run();
    harness.key_press(egui::Key::F12);
    harness.run();
    assert_eq!(harness.state().actions, [UiAction::Screenshot { with_ui: false }]);
    let session = harness.state_mut();
    let rect = session.viewport;
    // kittest draws at 1 pixel per point.
    let viewport = rigscope::render::PixelRect {
        x: rect.min.x.round() as u32,
        y: rect.min.y.round() as u32,
        width: rect.width().round() as u32,
        height: rect.height().round() as u32,
    };
    let saved = rigscope::screenshot::save_viewport(&gpu, &mut session.viewer, &mut session.ui, viewport)
        .unwrap_or_else(|| panic!("no screenshot: {:?}", session.viewer.diagnostics.error));
    assert_eq!(saved, dir.join("demo-001.png"));
    let image = image::open(&saved).unwrap().to_rgba8();
    assert_eq!(image.dimensions(), (viewport.width, viewport.height));
    assert!(viewport.width > 400 && viewport.height > 400, "{viewport:?}");
    let background = *image.get_pixel(0, 0);
    assert!(
        image.pixels().filter(|p| **p != background).count() > 1000,
        "the rig is in the picture"
    );
    harness.run();
    let toast = format!("Screenshot saved to {}", saved.display());
    harness.get_by_label(&toast);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_whole_ui_renders_offscreen_with_panels_over_the_view() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = Viewer::new(common::load_demo(), None);
    let mut state = UiState::default();
    let with_ui = rigscope::screenshot::render_ui(
        &gpu,
        &mut viewer,
        &mut state,
        1000,
        700,
        1.0,
        rigscope::render::scene::OFFSCREEN_SAMPLES,
    )
    .unwrap();
    let bare = rigscope::screenshot::render_view(&gpu, &mut viewer, 1000, 700).unwrap();
    assert_eq!(with_ui.dimensions(), (1000, 700));
    // The left panel covers the view's background there with its own (uniform) fill and text.
    let background = *bare.get_pixel(5, 350);
    let panel = *with_ui.get_pixel(5, 350);
    assert_ne!(panel, background);
    let different = with_ui.pixels().zip(bare.pixels()).filter(|(a, b)| a != b).count();
    assert!(different > 1000 * 700 / 5, "only {different} pixels differ");
    // Text is drawn: the panel column holds more than one shade.
    let shades: std::collections::BTreeSet<[u8; 4]> = (0..700).map(|y| with_ui.get_pixel(40, y).0).collect();
    assert!(shades.len() > 3, "{shades:?}");
}

fn rigscope_command(config: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rigscope"));
    command.env(CONFIG_DIR_ENV, config);
    command
}

#[test]
fn render_sequence_writes_one_png_per_frame_of_the_clip() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let dir = common::temp_dir("sequence");
    let frames = dir.join("frames");
    let output = rigscope_command(&dir)
        .args([
            "render",
            "demo",
            "--sequence",
            "--fps",
            "10",
            "--size",
            "64x48",
            "--clip",
            "Wave",
            "--out",
        ])
        .arg(&frames)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut names: Vec<String> = std::fs::read_dir(&frames)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // The demo clips last 2 s: frames at 0, 0.1, … 2.0.
    let expected: Vec<String> = (0..21).map(|i| format!("frame_{i:04}.png")).collect();
    assert_eq!(names, expected);
    let first = image::open(frames.join("frame_0000.png")).unwrap().to_rgba8();
    let middle = image::open(frames.join("frame_0005.png")).unwrap().to_rgba8();
    assert_eq!(first.dimensions(), (64, 48));
    assert_ne!(first, middle, "the pose moves through the sequence");

    let bad = rigscope_command(&dir)
        .args(["render", "demo", "--sequence", "--fps", "0", "--out"])
        .arg(&frames)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--fps 0"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn render_ui_writes_the_whole_window() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let dir = common::temp_dir("render-ui");
    let out = dir.join("ui.png");
    let output = rigscope_command(&dir)
        .args(["render", "demo", "--ui", "--size", "900x600", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(image::open(&out).unwrap().to_rgba8().dimensions(), (900, 600));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_window_opens_at_the_saved_size_saves_its_screenshot_and_keeps_the_settings() {
    let dir = common::temp_dir("window");
    let settings = Settings {
        window_width: 960.0,
        window_height: 640.0,
        view: rigscope::render::ViewOptions {
            mode: rigscope::render::ViewMode::Normals,
            ..Default::default()
        },
        ..Settings::default()
    };
    settings.save_to(&dir.join(rigscope::settings::FILE_NAME)).unwrap();
    let shot = dir.join("window.png");
    let rig = dir.join("tail.glb");
    std::fs::write(&rig, demo_glb(5)).unwrap();
    let Some(mut command) = viewer_command(&[]) else {
        return;
    };
    let output = command
        .arg(&rig)
        .args(["--exit-after-frames", "20", "--screenshot"])
        .arg(&shot)
        .env(CONFIG_DIR_ENV, &dir)
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let image = image::open(&shot).unwrap().to_rgba8();
    assert_eq!(image.dimensions(), (960, 640), "{stderr}");
    // The panels are in the picture: the menu bar's corner is not the 3D view's background,
    // which shows between the side panels.
    let corner = *image.get_pixel(2, 2);
    let view = *image.get_pixel(480, 60);
    assert_ne!(corner, view, "{stderr}");
    let kept = Settings::load_from(&dir.join(rigscope::settings::FILE_NAME));
    assert_eq!(kept.window_size(), (960.0, 640.0));
    assert_eq!(kept.view.mode, rigscope::render::ViewMode::Normals);
    assert_eq!(kept.recent, std::slice::from_ref(&rig), "the file opened is remembered");
    assert_eq!(kept.last_folder.as_deref(), Some(dir.as_path()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_window_reloads_a_file_changed_on_disk() {
    let dir = common::temp_dir("window-reload");
    let file = dir.join("tail.glb");
    std::fs::write(&file, demo_glb(6)).unwrap();
    let Some(mut command) = viewer_command(&[]) else {
        return;
    };
    // Enough frames for the reload (a quarter second) with a wide margin on a busy machine.
    let mut child = command
        .arg(&file)
        .args(["--exit-after-frames", "120"])
        .env(CONFIG_DIR_ENV, &dir)
        .env("RUST_LOG", "rigscope=info")
        .env_remove("WAYLAND_DISPLAY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut log = String::new();
    let wait_for = |needle: &str, log: &mut String| {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(120) {
            match received.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    log.push_str(&line);
                    log.push('\n');
                    if line.contains(needle) {
                        return true;
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return false,
            }
        }
        false
    };
    assert!(wait_for("window open", &mut log), "the window did not open:\n{log}");
    std::fs::write(&file, demo_glb(3)).unwrap();
    let reloaded = wait_for("reloaded", &mut log);
    let status = child.wait().unwrap();
    while let Ok(line) = received.recv_timeout(Duration::from_secs(1)) {
        log.push_str(&line);
        log.push('\n');
    }
    assert!(reloaded, "the window did not reload the file:\n{log}");
    assert!(status.success(), "{log}");
    assert!(log.contains(&format!("reloaded {}", file.display())), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The artist's loop on a real rig: Fox.glb is written over in a temp folder; the new file is
/// reloaded and drawn. The moments the change is seen, the reload is done and the new frame is
/// rendered are printed, not asserted: speed is measured by `rigscope bench` and the benchmarks.
#[test]
fn fox_edit_to_new_frame_loop_time() {
    let Some(rigs) = common::shared_rigs() else { return };
    let dir = common::temp_dir("fox-loop");
    let fox = dir.join("Fox.glb");
    let bytes = std::fs::read(rigs.join("Fox.glb")).unwrap();
    std::fs::write(&fox, &bytes).unwrap();
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.open_now(&fox).unwrap();
    viewer.watch_files(None);
    // The window keeps its renderer between files: so does this test.
    let renderer = gpu::gpu_or_skip().map(|gpu| {
        let target = rigscope::render::Offscreen::new(&gpu, 960, 720).unwrap();
        // Drawn once, as the window had before the edit (software drivers compile on first use).
        let mut renderer = rigscope::draw::ViewRenderer::offscreen(&gpu);
        renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
        (gpu, target, renderer)
    });
    let generation = viewer.document().generation;

    let written = Instant::now();
    std::fs::write(&fox, &bytes).unwrap();
    let mut seen = None;
    while viewer.document().generation == generation {
        assert!(written.elapsed() < BOUND, "Fox.glb was not reloaded");
        viewer.tick(0.0);
        if seen.is_none() && viewer.document().file_changed {
            seen = Some(written.elapsed());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let reloaded = written.elapsed();
    viewer.prepare_frame();
    let _state = viewer.frame_state(4.0 / 3.0);
    let state_ready = written.elapsed();
    let mut report = format!(
        "Fox.glb loop: change seen {:.0} ms, reloaded {:.0} ms, frame state {:.0} ms after the write",
        seen.unwrap_or(reloaded).as_secs_f64() * 1e3,
        reloaded.as_secs_f64() * 1e3,
        state_ready.as_secs_f64() * 1e3
    );
    if let Some((gpu, target, mut renderer)) = renderer {
        let image = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
        assert_eq!(image.dimensions(), (960, 720));
        report += &format!(
            ", new frame drawn and read back (upload, 960x720) {:.0} ms",
            written.elapsed().as_secs_f64() * 1e3
        );
    }
    println!("{report}");
    assert_eq!(viewer.rig().name, "Fox.glb");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ctrl_click_inspects_the_vertex_under_the_cursor_and_marks_it() {
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.set_playing(false);
    let mut harness = harness(viewer);
    harness.run();
    let viewport = harness.state().viewport;
    let pos = viewport.center();
    // The same ray, cast apart from the UI, finds the vertex the click must inspect.
    let expected = {
        let viewer = &mut harness.state_mut().viewer;
        let x = (pos.x - viewport.min.x) / viewport.width() * 2.0 - 1.0;
        let y = 1.0 - (pos.y - viewport.min.y) / viewport.height() * 2.0;
        let (origin, direction) = viewer.view.camera.ray(x, y, viewport.aspect_ratio());
        viewer
            .pick_vertex(origin, direction)
            .expect("the framed rig is under the centre")
    };
    harness.event(egui::Event::PointerMoved(pos));
    for pressed in [true, false] {
        harness.event_modifiers(
            egui::Event::PointerButton {
                pos,
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: egui::Modifiers::COMMAND,
            },
            egui::Modifiers::COMMAND,
        );
    }
    harness.run();
    let inspected = harness
        .state()
        .viewer
        .inspected_vertex()
        .expect("a vertex is inspected");
    assert_eq!(
        (inspected.instance, inspected.primitive, inspected.vertex),
        (expected.instance, expected.primitive, expected.vertex)
    );
    harness.get_by_label_contains(&format!("vertex {}", expected.vertex));
    harness.get_by_label_contains("influences, sum 1.0000");

    // It is marked in the view where the mesh has it.
    let viewer = &mut harness.state_mut().viewer;
    let at = viewer.inspected_position().unwrap();
    viewer.prepare_frame();
    let state = viewer.frame_state(1.0);
    assert_eq!(state.marks, [at]);
}

#[test]
fn clicking_beside_a_bone_selects_the_joint_it_turns_about() {
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.set_playing(false);
    viewer.view.options.skeleton.show = true;
    let mut harness = harness(viewer);
    harness.run();
    let viewport = harness.state().viewport;
    // A point 4 points beside a bone, far from every joint dot, where the mesh under the cursor
    // belongs most to another joint (or there is no mesh): only the bone can give its joint.
    let (parent, at) = {
        let viewer = &mut harness.state_mut().viewer;
        let worlds = viewer.pose().worlds.clone();
        let projection = viewer.view.camera.view_projection(viewport.aspect_ratio());
        let screen = |p: glam::Vec3| {
            let clip = projection * p.extend(1.0);
            let ndc = clip.truncate() / clip.w;
            glam::Vec2::new(
                viewport.min.x + (ndc.x * 0.5 + 0.5) * viewport.width(),
                viewport.min.y + (0.5 - ndc.y * 0.5) * viewport.height(),
            )
        };
        let bones = viewer.rig().hierarchy().bones.clone();
        let dots: Vec<glam::Vec2> = (0..bones.len())
            .filter(|&n| bones[n])
            .map(|n| screen(worlds[n].w_axis.truncate()))
            .collect();
        let mut found = None;
        for (child, node) in viewer.rig().nodes.clone().iter().enumerate() {
            let Some(parent) = node.parent.filter(|&p| bones[p] && bones[child]) else {
                continue;
            };
            let (a, b) = (
                screen(worlds[parent].w_axis.truncate()),
                screen(worlds[child].w_axis.truncate()),
            );
            for fraction in [0.9, 0.8, 0.7, 0.6, 0.5] {
                let at = a + (b - a) * fraction + (b - a).perp().normalize_or_zero() * 4.0;
                if dots.iter().any(|d| d.distance(at) <= 9.0) {
                    continue;
                }
                let x = (at.x - viewport.min.x) / viewport.width() * 2.0 - 1.0;
                let y = 1.0 - (at.y - viewport.min.y) / viewport.height() * 2.0;
                let (origin, direction) = viewer.view.camera.ray(x, y, viewport.aspect_ratio());
                let on_mesh = viewer
                    .pick_vertex(origin, direction)
                    .and_then(|hit| rigscope::skin::pick::dominant_joint(viewer.rig(), &hit));
                if on_mesh != Some(parent) {
                    found = Some((parent, at));
                    break;
                }
            }
            if found.is_some() {
                break;
            }
        }
        found.expect("a bone of the demo with a point beside it owned by another joint")
    };
    let pos = egui::pos2(at.x, at.y);
    harness.event(egui::Event::PointerMoved(pos));
    for pressed in [true, false] {
        harness.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
    harness.run();
    assert_eq!(harness.state().viewer.view.selected_joint, Some(parent));
}

/// A file changed on disk under edits is not reloaded by itself: the viewer asks, and each
/// answer does what it says (edits made again, the document kept and no longer watched, or the
/// edits dropped).
#[test]
fn a_change_on_disk_under_edits_asks_before_reloading() {
    use rigscope::viewer::{ClipEdit, ReloadAnswer};
    let dir = common::temp_dir("reload-under-edits");
    let file = dir.join("tail.glb");
    let changed_under_edits = |answer: ReloadAnswer| {
        std::fs::write(&file, demo_glb(5)).unwrap();
        let mut viewer = Viewer::new(common::load_demo(), None);
        viewer.open_now(&file).unwrap();
        viewer.watch_files(None);
        let name = viewer.rig().clips[0].name.clone();
        viewer
            .edit_clip(ClipEdit::Rename {
                clip: 0,
                name: "Renamed".into(),
            })
            .unwrap();
        let generation = viewer.document().generation;
        std::fs::write(&file, demo_glb(6)).unwrap();
        tick_until(&mut viewer, "the change mark", |v| v.document().file_changed);
        // Long after the changes settled, as the viewer's clock sees it; a late notice of the
        // same write is stamped with that clock, so the next look is later still.
        let question = (1..=20)
            .find_map(|k| {
                viewer.poll_files(Instant::now() + rigscope::reload::DEBOUNCE * (3 * k));
                assert!(viewer.loading().is_none(), "nothing reloads under edits");
                viewer.reload_question()
            })
            .expect("the viewer asks");
        assert_eq!((question.document, question.dropped.len()), (0, 0));
        viewer.answer_reload(0, answer);
        if viewer.loading().is_some() {
            viewer.wait_for_load();
        }
        assert!(viewer.reload_question().is_none(), "answered once");
        (viewer, name, generation)
    };

    let (viewer, _, _) = changed_under_edits(ReloadAnswer::ReloadKeepingEdits);
    assert_eq!(joint_names(&viewer).len(), 6, "the new file is read");
    assert_eq!(viewer.rig().clips[0].name, "Renamed", "the edit is made again");
    assert_eq!(viewer.history().undo_label(), Some("rename Wave to Renamed"));

    let (viewer, _, generation) = changed_under_edits(ReloadAnswer::KeepMine);
    assert_eq!(viewer.document().generation, generation, "the document stays");
    assert_eq!(joint_names(&viewer).len(), 5);
    assert!(!viewer.is_watching(), "not watched until saved");

    let (viewer, name, _) = changed_under_edits(ReloadAnswer::ReloadDroppingEdits);
    assert_eq!(joint_names(&viewer).len(), 6);
    assert_eq!(viewer.rig().clips[0].name, name, "the edit is dropped");
    assert!(viewer.history().undo_label().is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}
