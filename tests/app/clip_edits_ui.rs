//! The clip list driven as a person would on Fox.glb: a clip renamed by typing, one trimmed to a
//! range set at the playhead, one dropped and the drop undone (menu and keys), then the file
//! saved and read back: names, count, the trimmed clip against the trim made independently on
//! the file as read, and the untouched clip as the file had it.

use crate::common;

use crate::common::bits;
use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT, Queryable};
use rigscope::anim::clip_edit;
use rigscope::anim::sample_channel;
use rigscope::rig::{Clip, Property, Rig, load_file};
use rigscope::viewer::Viewer;

type Harness<'a> = egui_kittest::Harness<'a, (Viewer, rigscope::ui::UiState)>;

fn names(rig: &Rig) -> Vec<String> {
    rig.clips.iter().map(|c| c.name.clone()).collect()
}

fn click(harness: &mut Harness, label: &str) {
    harness.get_by_label_contains(label).click();
    harness.run();
}

/// The largest difference between `want` and `got` sampled by the player at every key time of
/// either and at 120 Hz, relative to the value's size.
fn largest_difference(want: &Clip, got: &Clip) -> f32 {
    assert_eq!(
        want.channels.len(),
        got.channels.len(),
        "channel count of {}",
        want.name
    );
    let mut worst = 0.0f32;
    for a in &want.channels {
        let b = (got.channels.iter())
            .find(|b| (b.node, b.property) == (a.node, a.property))
            .unwrap_or_else(|| panic!("{}: no channel for node {} {:?}", got.name, a.node, a.property));
        let steps = (want.duration * 120.0).ceil() as usize;
        let times = (0..=steps)
            .map(|k| (k as f32 / 120.0).min(want.duration))
            .chain(a.times.iter().copied())
            .chain(b.times.iter().copied());
        let (mut ha, mut hb) = (0, 0);
        for t in times {
            let (va, vb) = (sample_channel(a, t, &mut ha), sample_channel(b, t, &mut hb));
            // q and -q are one turn; other values are compared relative to their size (Fox's
            // translations are in centimetres, a few ulps of which exceed 1e-5).
            let vb = if a.property == Property::Rotation && va.dot(vb) < 0.0 {
                -vb
            } else {
                vb
            };
            let difference = (va - vb).abs().max_element() / va.abs().max_element().max(1.0);
            worst = worst.max(difference);
        }
    }
    worst
}

#[test]
fn rename_trim_drop_undo_and_save_write_what_the_list_shows() {
    let Some(rigs) = common::shared_rigs() else { return };
    let input = rigs.join("Fox.glb");
    let original = load_file(&input).expect("Fox.glb loads");
    assert_eq!(names(&original), ["Survey", "Walk", "Run"]);
    let mut viewer = Viewer::new(original.clone(), Some(input.clone()));
    viewer.set_playing(false);
    let mut harness = common::main_window(viewer, 1400.0, 1800.0);
    harness.run();

    // Rename the selected clip (Survey) by typing its new name.
    let field = harness.get_by_role_and_label(Role::TextInput, "Clip name");
    field.focus();
    harness.run();
    harness.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    harness
        .get_by_role_and_label(Role::TextInput, "Clip name")
        .type_text("Look");
    harness.run();
    harness.key_press(egui::Key::Enter);
    harness.run();
    assert_eq!(names(harness.state().0.rig()), ["Look", "Walk", "Run"]);
    assert!(
        harness.query_by_label_contains("• Look").is_some(),
        "the renamed clip is marked"
    );
    assert!(harness.query_by_label_contains("• Walk").is_none());

    // Trim Walk to its middle half, the range set at the playhead.
    click(&mut harness, "Walk (");
    assert_eq!(harness.state().0.player().clip, Some(1));
    let duration = original.clips[1].duration;
    let (start, end) = (0.25 * duration, 0.75 * duration);
    harness.state_mut().0.seek(start);
    harness.run();
    click(&mut harness, "Set start");
    harness.state_mut().0.seek(end);
    harness.run();
    click(&mut harness, "Set end");
    assert!(harness.query_by_label(&format!("Set start {start:.3} s")).is_some());
    assert!(harness.query_by_label(&format!("Set end {end:.3} s")).is_some());
    click(&mut harness, "Trim to range");
    let viewer = &harness.state().0;
    assert!((viewer.rig().clips[1].duration - (end - start)).abs() < 1e-6);
    assert_eq!(viewer.player().clip, Some(1), "playback stays on the trimmed clip");
    assert!(viewer.player().time <= viewer.clip_duration(), "and inside it");
    assert!(harness.query_by_label_contains("• Walk").is_some());

    // Drop Run, then undo it from the Edit menu; redo and undo it again by keys.
    click(&mut harness, "Run (");
    click(&mut harness, "Drop");
    let viewer = &harness.state().0;
    assert_eq!(names(viewer.rig()), ["Look", "Walk"]);
    assert_eq!(viewer.player().clip, Some(1), "playback moved to a clip that exists");
    click(&mut harness, "Edit");
    click(&mut harness, "Undo drop Run");
    assert_eq!(names(harness.state().0.rig()), ["Look", "Walk", "Run"]);
    harness.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::Z);
    harness.run();
    assert_eq!(
        names(harness.state().0.rig()),
        ["Look", "Walk"],
        "Ctrl+Shift+Z redoes the drop"
    );
    harness.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    harness.run();
    assert_eq!(
        names(harness.state().0.rig()),
        ["Look", "Walk", "Run"],
        "Ctrl+Z undoes it"
    );
    let run = &harness.state().0.rig().clips[2];
    assert_eq!(
        format!("{:?}", run.channels),
        format!("{:?}", original.clips[2].channels),
        "the undone drop puts Run back bit for bit"
    );

    // Save (the path Save as… takes after its dialog) and read the file written.
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("Fox.edited.glb");
    let viewer = &mut harness.state_mut().0;
    assert!(viewer.save_as(&output).expect("the edited Fox saves").is_some());
    let saved = load_file(&output).expect("the file written loads");
    assert_eq!(names(&saved), ["Look", "Walk", "Run"]);

    let mut expected = original.clone();
    clip_edit::trim(&mut expected, 1, start, end).unwrap();
    let walk = &saved.clips[1];
    assert!(
        (walk.duration - (end - start)).abs() < 1e-6,
        "{} against {}",
        walk.duration,
        end - start
    );
    let difference = largest_difference(&expected.clips[1], walk);
    assert!(
        difference < 1e-5,
        "the saved Walk is off the independent trim by {difference}"
    );
    // Survey was renamed only and Run untouched: the file's keys as read.
    for (kept, from) in [(0, 0), (2, 2)] {
        for (a, b) in original.clips[from].channels.iter().zip(&saved.clips[kept].channels) {
            assert_eq!((a.node, a.property), (b.node, b.property));
            assert_eq!(a.times, b.times);
            assert_eq!(bits(&a.values), bits(&b.values), "clip {kept}");
        }
    }

    // The file written opens in the document's place, its edits now the file's own.
    let viewer = &mut harness.state_mut().0;
    assert!(viewer.wait_for_load());
    assert_eq!(viewer.document().path.as_deref(), Some(output.as_path()));
    assert_eq!(names(viewer.rig()), ["Look", "Walk", "Run"]);
    assert!((0..3).all(|c| !viewer.clip_changed(c)));
    assert_eq!(viewer.history().undo_label(), None);
    assert!(viewer.diagnostics.error.is_none());
}

#[test]
fn a_failed_save_is_shown_and_an_fbx_document_is_saved_as_a_new_gltf() {
    let Some(rigs) = common::shared_rigs() else { return };
    let input = rigs.join("Fox.glb");
    let mut viewer = Viewer::new(load_file(&input).unwrap(), Some(input.clone()));
    viewer.edit_clip(rigscope::viewer::ClipEdit::Drop { clip: 0 }).unwrap();
    let mut state = rigscope::ui::UiState::default();
    // The save dialog answers with a name the writer refuses.
    rigscope::ui::clip_list::save_as_from_dialog(&mut viewer, &mut state, |_, suggested| {
        assert_eq!(suggested, "Fox.edited.glb");
        Some(std::env::temp_dir().join("Fox.edited.png"))
    });
    let error = viewer.diagnostics.error.clone().expect("the failure is shown");
    assert!(error.contains("must end in .glb or .gltf"), "{error}");
    assert_eq!(viewer.rig().clips.len(), 2, "the document keeps its edits");

    let fbx = rigs.join("fbx/animation_with_skeleton.fbx");
    let viewer = Viewer::new(load_file(&fbx).unwrap(), Some(fbx.clone()));
    let clips: Vec<String> = viewer.rig().clips.iter().map(|c| c.name.clone()).collect();
    let mut harness = common::main_window(viewer, 1400.0, 1000.0);
    harness.run();
    click(&mut harness, "File");
    let item = harness.get_by_label("Save as…");
    assert!(!item.accesskit_node().is_disabled(), "Save as… is on for FBX");
    let out = common::temp_dir("fbx-save-as").join("animation_with_skeleton.glb");
    harness
        .state_mut()
        .0
        .save_as(&out)
        .expect("an FBX rig is written as glTF");
    let written = load_file(&out).expect("the glTF written loads");
    let names: Vec<String> = written.clips.iter().map(|c| c.name.clone()).collect();
    assert_eq!(names, clips);
    assert_eq!(written.skins.len(), load_file(&fbx).unwrap().skins.len());
}
