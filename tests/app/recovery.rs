//! Crash and kill recovery: every edit is journaled as it is made; a viewer gone without
//! closing its files (a crash) leaves journals that the next one offers, and restoring one gives
//! the document bit for bit as it was — clips, weights, pose, IK goals, look-at, history. A
//! journal that does not read whole is reported and set aside, never applied in part; saving,
//! closing and discarding remove or set aside what they should.

use crate::common;

use rigscope::anim::ik_layer::IkGoal;
use rigscope::anim::{Attachment, BlendMode, JointOverride, Layer};
use rigscope::journal::{self, JournalError};
use rigscope::rig::Rig;
use rigscope::viewer::{ClipEdit, LookAtTarget, PoseEdit, RepairOptions, RestoreAnswer, Viewer};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Everything of the active document a user can change, bit for bit, beside its fingerprint.
#[derive(Debug, PartialEq)]
struct DocumentBits {
    fingerprint: rigscope::viewer::DocumentFingerprint,
    clips: String,
    morph_channels: String,
    weights: Vec<Vec<u32>>,
    overrides: Vec<[u32; 8]>,
    morph_overrides: Vec<Vec<Option<u32>>>,
    ik_goals: String,
    look_at: String,
    undo: Option<String>,
    redo: Option<String>,
    unsaved: bool,
    repair: Option<RepairOptions>,
}

fn document_bits(viewer: &Viewer) -> DocumentBits {
    let rig = viewer.rig();
    let animation = viewer.animation();
    DocumentBits {
        fingerprint: viewer.document_fingerprint(),
        clips: format!("{:?}", rig.clips),
        morph_channels: format!("{:?}", rig.morphs.channels),
        weights: (rig.meshes.iter().flat_map(|m| &m.primitives))
            .filter_map(|p| p.influences.as_ref())
            .map(|i| i.weights.iter().flatten().map(|w| w.to_bits()).collect())
            .collect(),
        overrides: (animation.overrides.iter())
            .map(|o| {
                let [x, y, z, w] = o.rotation.to_array().map(f32::to_bits);
                let [a, b, c] = o.translation.to_array().map(f32::to_bits);
                [x, y, z, w, a, b, c, o.scale.to_bits()]
            })
            .collect(),
        morph_overrides: (animation.morph_overrides.iter())
            .map(|m| m.iter().map(|w| w.map(f32::to_bits)).collect())
            .collect(),
        ik_goals: format!("{:?}", animation.ik_goals),
        look_at: format!("{:?}", animation.look_at),
        undo: viewer.history().undo_label().map(str::to_owned),
        redo: viewer.history().redo_label().map(str::to_owned),
        unsaved: viewer.has_unsaved_edits(),
        repair: viewer.previewed_repair(),
    }
}

/// A viewer journaling into `journals`, with `file` open.
fn journaling(journals: &Path, file: &Path) -> Viewer {
    let mut viewer = Viewer::new(Rig::default(), None);
    assert!(viewer.keep_journals(journals.to_owned()).is_empty());
    viewer.open_now(file).expect("the rig opens");
    viewer
}

/// A joint whose parent and grandparent exist (a hand or a foot on a humanoid), from the end of
/// the first skin.
fn chain_end(viewer: &Viewer) -> usize {
    let rig = viewer.rig();
    (rig.skins[0].joints.iter().rev().copied())
        .find(|&j| IkGoal::for_end_joint(&rig.nodes, j, glam::Vec3::ZERO).is_some())
        .expect("a two-bone chain")
}

/// A session of every kind of edit: clips carried from `clips` (a file), clip edits, a weight
/// repair, bends over several frames, an IK goal, morph weights, a look-at, a layer, a crossfade,
/// the root lock, a marker, the foot lock, undo and redo, a pose saved as a clip, and one edit
/// left undone (to redo).
fn play_a_session(viewer: &mut Viewer, clips: &Path) {
    viewer.load_clips_from(clips.to_owned());
    assert!(viewer.wait_for_load());
    assert_eq!(viewer.diagnostics.error, None);
    let duration = viewer.rig().clips[0].duration;
    viewer
        .edit_clip(ClipEdit::Trim {
            clip: 0,
            start: duration * 0.25,
            end: duration * 0.75,
        })
        .unwrap();
    viewer
        .edit_clip(ClipEdit::Rename {
            clip: 1,
            name: "Renamed".into(),
        })
        .unwrap();
    assert!(viewer.preview_repair(&RepairOptions::default()));

    let joint = viewer.view.selected_joint.expect("a joint is selected");
    for degrees in [4.0, 8.0, 12.5] {
        let mut bend = JointOverride::IDENTITY;
        bend.rotation = glam::Quat::from_rotation_z(f32::to_radians(degrees));
        bend.translation = glam::Vec3::new(0.0, -0.0, 0.01);
        viewer.set_override(joint, bend);
    }
    viewer.end_gesture();

    let end = chain_end(viewer);
    let place = viewer.pose().worlds[end].w_axis.truncate();
    let goal = IkGoal::for_end_joint(&viewer.rig().nodes, end, place + glam::Vec3::new(0.1, 0.2, 0.0)).unwrap();
    viewer.edit_pose(PoseEdit::AddIkGoal(goal));
    viewer.end_gesture();
    // A drag of the goal over three frames: one edit.
    for k in 1..=3 {
        let target = place + glam::Vec3::new(0.05 * k as f32, 0.3, 0.0);
        viewer.edit_pose(PoseEdit::MoveIkGoal { goal: 0, target });
    }
    viewer.end_gesture();
    assert_eq!(viewer.undo().as_deref(), Some("move IK goal"));
    assert_eq!(viewer.redo().as_deref(), Some("move IK goal"));

    if let Some(weights) = viewer.animation().morph_overrides.iter().position(|w| !w.is_empty()) {
        viewer.edit_pose_parts(|parts| parts.morph_overrides[weights][0] = Some(0.7));
        viewer.end_gesture();
    }
    if viewer
        .set_look_at(Some(LookAtTarget::Point(glam::Vec3::new(1.0, 1.5, 2.0))))
        .is_ok()
    {
        viewer.set_look_at_weights(0.4, 0.8);
        viewer.end_gesture();
    }
    // The Layers panel's part: a masked layer, a crossfade, the root lock, a marker and the
    // foot lock (a rig without feet refuses it, and nothing changes).
    viewer.edit_pose_parts(|parts| {
        parts.layers.push(Layer {
            weight: 0.35,
            mode: BlendMode::Additive,
            mask: Some(joint),
            ..Layer::new(0)
        });
        parts.crossfade_seconds = 0.3;
        parts.root_motion.lock = true;
        parts.attachments.push(Attachment {
            node: end,
            offset: glam::Vec3::new(0.0, 0.02, 0.0),
            rotation_degrees: glam::Vec3::new(0.0, 45.0, 0.0),
            size: 0.05,
        });
    });
    viewer.end_gesture();
    let _ = viewer.set_lock_feet(true);
    let _ = viewer.mirror_pose();
    viewer.save_pose_as_clip("Held").unwrap();
    viewer.set_override(
        end,
        JointOverride {
            scale: 1.25,
            ..JointOverride::IDENTITY
        },
    );
    viewer.end_gesture();
    let last = viewer.rig().clips.len() - 1;
    viewer.edit_clip(ClipEdit::Drop { clip: last - 1 }).unwrap();
    assert!(viewer.undo().is_some());
    viewer.flush_journal();
}

/// The rig `name` of the shared real rigs copied into `dir` (the journal names the copy), with
/// a second copy to carry clips from.
fn copied_rig(dir: &Path, name: &str) -> Option<(PathBuf, PathBuf)> {
    let rigs = common::shared_folder("rigs/real")?;
    let file = dir.join(name);
    std::fs::copy(rigs.join(name), &file).unwrap();
    let clips = dir.join(format!("clips-{name}"));
    std::fs::copy(rigs.join(name), &clips).unwrap();
    Some((file, clips))
}

/// Restores offer 0 of a fresh viewer journaling into `journals`; returns it and how long it took.
fn restored(journals: &Path) -> (Viewer, f64) {
    let mut viewer = Viewer::new(Rig::default(), None);
    assert!(viewer.keep_journals(journals.to_owned()).is_empty());
    let offers = viewer.restore_offers();
    assert_eq!(offers.len(), 1, "{offers:?}");
    assert!(offers[0].changed.is_empty(), "{offers:?}");
    let started = Instant::now();
    let restored = viewer.answer_restore(0, RestoreAnswer::Restore).unwrap().unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(restored.stopped, None, "{restored:?}");
    assert_eq!(restored.made, restored.of);
    (viewer, seconds)
}

#[test]
fn every_kind_of_edit_is_restored_bit_for_bit_after_the_viewer_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let Some((file, clips)) = copied_rig(dir.path(), "RobotExpressive.glb") else {
        return;
    };
    let journals = dir.path().join("journals");
    let mut viewer = journaling(&journals, &file);
    assert_eq!(viewer.journal_path(), None, "no journal before the first edit");
    play_a_session(&mut viewer, &clips);
    let before = document_bits(&viewer);
    assert!(before.unsaved && before.redo.is_some());
    assert!(before.ik_goals.contains("IkGoal"), "{}", before.ik_goals);
    assert!(before.look_at.starts_with("Some"), "RobotExpressive has a head");
    let journal = viewer.journal_path().expect("journaled").to_owned();
    // Gone without closing its files, as in a crash.
    drop(viewer);
    assert!(journal.exists());

    let (viewer, seconds) = restored(&journals);
    println!(
        "RobotExpressive: {} records restored in {seconds:.3} s",
        journal_entries(&viewer)
    );
    assert_eq!(viewer.document().path.as_deref(), Some(file.as_path()));
    assert_eq!(viewer.documents().len(), 1, "in place of the demo rig");
    assert_eq!(document_bits(&viewer), before);
    assert!(
        !journal.exists(),
        "the journal found was replaced by the restored document's own"
    );
    let again = viewer
        .journal_path()
        .expect("the restored document is journaled")
        .to_owned();

    // And once more: the restored document's journal restores it too.
    drop(viewer);
    let (viewer, _) = restored(&journals);
    assert_eq!(document_bits(&viewer), before);
    assert!(!again.exists());
}

fn journal_entries(viewer: &Viewer) -> usize {
    (viewer.journal_path()).map_or(0, |p| journal::read(p).map_or(0, |j| j.entries.len()))
}

/// Xbot: what a restore costs on a real rig, and what a journal write costs per edit.
#[test]
fn restoring_xbot_takes_a_moment_and_a_journal_write_costs_little() {
    let dir = tempfile::tempdir().unwrap();
    let Some((file, clips)) = copied_rig(dir.path(), "Xbot.glb") else {
        return;
    };
    let journals = dir.path().join("journals");
    let mut viewer = journaling(&journals, &file);
    play_a_session(&mut viewer, &clips);
    // Bends one joint at a time, each an edit of its own: one pose step and one pose each.
    let joints: Vec<usize> = viewer.rig().skins[0].joints.iter().copied().take(40).collect();
    let started = Instant::now();
    for (k, &joint) in joints.iter().enumerate() {
        let mut bend = JointOverride::IDENTITY;
        bend.rotation = glam::Quat::from_rotation_y(0.01 * (k + 1) as f32);
        viewer.set_override(joint, bend);
        viewer.end_gesture();
    }
    let per_edit = started.elapsed().as_secs_f64() / joints.len() as f64;
    let before = document_bits(&viewer);
    let path = viewer.journal_path().unwrap().to_owned();
    let size = std::fs::metadata(&path).unwrap().len();
    let records = journal::read(&path).unwrap().entries.len();
    drop(viewer);
    let (viewer, seconds) = restored(&journals);
    assert_eq!(document_bits(&viewer), before);
    println!(
        "Xbot: a bend journaled (two records written; the disk flush follows on the journal's thread) in {:.2} ms an edit; {records} records, \
         {size} bytes; restored in {seconds:.3} s",
        per_edit * 1e3
    );
}

/// A journal of `file` holding one rename, written the way a window writes it.
fn one_rename_journal(journals: &Path, file: &Path) -> PathBuf {
    let mut viewer = journaling(journals, file);
    viewer
        .edit_clip(ClipEdit::Rename {
            clip: 0,
            name: "Kept".into(),
        })
        .unwrap();
    viewer.journal_path().unwrap().to_owned()
}

#[test]
fn journals_cut_off_damaged_or_from_another_version_are_reported_and_set_aside_never_applied() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.glb");
    std::fs::write(&file, rigscope::rig::demo::DEMO_GLB).unwrap();
    let journals = dir.path().join("journals");
    let written = one_rename_journal(&journals, &file);
    let bytes = std::fs::read(&written).unwrap();
    std::fs::remove_file(&written).unwrap();

    let cut = journals.join("cut.journal");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let damaged = journals.join("damaged.journal");
    let mut flipped = bytes.clone();
    let last = flipped.len() - 2;
    flipped[last] ^= 0x20;
    std::fs::write(&damaged, &flipped).unwrap();
    let other = journals.join("other.journal");
    let header = journal::Header {
        rigscope: "0.0.9 (commit 0000000)".into(),
        document: file.clone(),
        files: None,
    };
    std::fs::write(&other, journal::encode(&header, &[]).unwrap()).unwrap();

    for (path, kind) in [(&cut, "cut off"), (&damaged, "checksum"), (&other, "0.0.9")] {
        let error = journal::read(path).unwrap_err();
        assert!(error.to_string().contains(kind), "{error}");
    }
    assert!(matches!(
        journal::read(&cut),
        Err(JournalError::Truncated { record: 1, .. })
    ));
    assert!(matches!(
        journal::read(&damaged),
        Err(JournalError::Checksum { record: 1, .. })
    ));
    assert!(matches!(journal::read(&other), Err(JournalError::OtherVersion { .. })));

    let mut viewer = Viewer::new(Rig::default(), None);
    let reports = viewer.keep_journals(journals.clone());
    assert_eq!(reports.len(), 3, "{reports:?}");
    for (report, name) in reports.iter().zip(["cut.journal", "damaged.journal", "other.journal"]) {
        assert!(report.contains(name) && report.contains("set aside as"), "{report}");
    }
    assert!(viewer.restore_offers().is_empty(), "none is offered");
    assert_eq!(viewer.document().path, None, "nothing was applied");
    for path in [&cut, &damaged, &other] {
        assert!(!path.exists());
        let aside = PathBuf::from(format!("{}{}", path.display(), journal::SET_ASIDE));
        assert!(aside.exists(), "{} kept", aside.display());
    }
    assert!(
        Viewer::new(Rig::default(), None).keep_journals(journals).is_empty(),
        "reported once"
    );
}

#[test]
fn a_file_changed_on_disk_since_is_said_and_the_edits_that_still_apply_are_made() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tail.glb");
    std::fs::write(&file, rigscope::rig::demo::demo_glb(4)).unwrap();
    let journals = dir.path().join("journals");
    let mut viewer = journaling(&journals, &file);
    viewer
        .edit_clip(ClipEdit::Rename {
            clip: 0,
            name: "Kept".into(),
        })
        .unwrap();
    // Bends on a rig of four joints: the file changes to one of six.
    viewer.set_override(
        1,
        JointOverride {
            scale: 2.0,
            ..JointOverride::IDENTITY
        },
    );
    viewer.end_gesture();
    drop(viewer);
    std::fs::write(&file, rigscope::rig::demo::demo_glb(6)).unwrap();

    let mut viewer = Viewer::new(Rig::default(), None);
    viewer.keep_journals(journals.clone());
    let offers = viewer.restore_offers();
    assert_eq!(offers[0].changed, std::slice::from_ref(&file));
    assert_eq!(offers[0].edits, 2);
    let restored = viewer.answer_restore(0, RestoreAnswer::Restore).unwrap().unwrap();
    assert!(restored.file_changed);
    assert_eq!(restored.made, 2, "the rename and the bend's step: {restored:?}");
    let stopped = restored.stopped.expect("the bend's pose is of another rig");
    assert!(stopped.contains("rig of"), "{stopped}");
    assert_eq!(viewer.rig().clips[0].name, "Kept");
    let now = rigscope::rig::open(Some(&file)).unwrap();
    assert_eq!(viewer.rig().nodes.len(), now.nodes.len(), "the file as it is now");
    assert_eq!(
        std::fs::read_dir(&journals)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(journal::SET_ASIDE))
            .count(),
        1,
        "the journal not made whole is set aside"
    );
}

#[test]
fn saving_or_closing_removes_the_journal_discard_sets_it_aside_and_later_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.glb");
    std::fs::write(&file, rigscope::rig::demo::DEMO_GLB).unwrap();
    let journals = dir.path().join("journals");

    // Saved: the journal goes.
    let mut viewer = journaling(&journals, &file);
    viewer.edit_clip(ClipEdit::Drop { clip: 1 }).unwrap();
    let journal = viewer.journal_path().unwrap().to_owned();
    viewer.save_as(&dir.path().join("saved.glb")).unwrap();
    assert!(!journal.exists(), "saved");
    assert!(viewer.wait_for_load());
    assert_eq!(viewer.journal_path(), None);

    // Closed: the journal goes; the other document's stays.
    let second = dir.path().join("second.glb");
    std::fs::write(&second, rigscope::rig::demo::demo_glb(3)).unwrap();
    viewer.set_override(
        0,
        JointOverride {
            scale: 0.5,
            ..JointOverride::IDENTITY
        },
    );
    viewer.end_gesture();
    let first_journal = viewer.journal_path().unwrap().to_owned();
    let index = viewer.add_document(rigscope::rig::open(Some(&second)).unwrap(), Some(second.clone()));
    viewer.activate(index);
    viewer
        .edit_clip(ClipEdit::Rename {
            clip: 0,
            name: "X".into(),
        })
        .unwrap();
    let second_journal = viewer.journal_path().unwrap().to_owned();
    viewer.close_document(index);
    assert!(!second_journal.exists(), "closed");
    assert!(first_journal.exists());
    // The window closed as asked: none is left.
    viewer.close_journals();
    assert!(!first_journal.exists());

    // Later keeps it for the next start; Discard sets it aside.
    let left = one_rename_journal(&journals, &file);
    let mut viewer = Viewer::new(Rig::default(), None);
    viewer.keep_journals(journals.clone());
    viewer.answer_restore(0, RestoreAnswer::Later).unwrap();
    assert!(viewer.restore_offers().is_empty() && left.exists());
    let mut viewer = Viewer::new(Rig::default(), None);
    viewer.keep_journals(journals.clone());
    assert_eq!(viewer.restore_offers().len(), 1, "offered again");
    viewer.answer_restore(0, RestoreAnswer::Discard).unwrap();
    assert!(!left.exists());
    assert!(PathBuf::from(format!("{}{}", left.display(), journal::SET_ASIDE)).exists());
    assert!(matches!(
        viewer.answer_restore(0, RestoreAnswer::Restore),
        Err(rigscope::viewer::RestoreError::NoSuchOffer(0))
    ));
}

#[test]
fn the_restore_question_lists_the_file_and_restore_brings_its_edits_back() {
    use egui_kittest::kittest::Queryable;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.glb");
    std::fs::write(&file, rigscope::rig::demo::DEMO_GLB).unwrap();
    let journals = dir.path().join("journals");
    one_rename_journal(&journals, &file);

    let mut viewer = Viewer::new(Rig::default(), None);
    viewer.keep_journals(journals);
    let mut harness = common::main_window(viewer, 1400.0, 1000.0);
    harness.run();
    assert!(harness.query_by_label("Restore unsaved edits?").is_some());
    assert!(harness.query_by_label("demo.glb: 1 edit not saved").is_some());
    harness.get_by_label("Restore").click();
    harness.run();
    let viewer = &harness.state().0;
    assert_eq!(viewer.document().path.as_deref(), Some(file.as_path()));
    assert_eq!(viewer.rig().clips[0].name, "Kept");
    assert!(viewer.history().undo_label().is_some_and(|l| l.ends_with("to Kept")));
    assert!(viewer.has_unsaved_edits());
    assert!(viewer.restore_offers().is_empty());
    assert!(harness.query_by_label("Restore unsaved edits?").is_none(), "answered");
}

#[test]
fn a_reload_keeping_the_edits_journals_them_anew_and_a_start_with_the_file_restores_in_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.glb");
    std::fs::write(&file, rigscope::rig::demo::DEMO_GLB).unwrap();
    let journals = dir.path().join("journals");
    let mut viewer = journaling(&journals, &file);
    viewer
        .edit_clip(ClipEdit::Rename {
            clip: 0,
            name: "Kept".into(),
        })
        .unwrap();
    let joint = viewer.view.selected_joint.unwrap();
    viewer.set_override(
        joint,
        JointOverride {
            scale: 1.5,
            ..JointOverride::IDENTITY
        },
    );
    viewer.end_gesture();
    // The file changes on disk (replaced whole, as editors save); the reload makes the clip edit
    // again and keeps the bend by joint name.
    let mut longer = rigscope::rig::demo::DEMO_GLB.to_vec();
    longer.extend_from_slice(&[0; 4]);
    let replacement = dir.path().join("demo.glb.new");
    std::fs::write(&replacement, &longer).unwrap();
    std::fs::rename(&replacement, &file).unwrap();
    viewer.reload();
    assert!(viewer.wait_for_load());
    assert_eq!(viewer.rig().clips[0].name, "Kept");
    let before = document_bits(&viewer);
    assert_ne!(
        before.overrides,
        document_bits(&Viewer::new(Rig::default(), None)).overrides
    );
    drop(viewer);

    // A start with the file opens it, unedited, before the journal is answered.
    let mut viewer = Viewer::new(Rig::default(), None);
    assert!(viewer.keep_journals(journals).is_empty());
    viewer.open_now(&file).unwrap();
    let offers = viewer.restore_offers();
    assert_eq!(offers.len(), 1);
    assert!(offers[0].changed.is_empty(), "journaled anew for the file as reloaded");
    let restored = viewer.answer_restore(0, RestoreAnswer::Restore).unwrap().unwrap();
    assert_eq!(restored.stopped, None);
    assert_eq!(viewer.documents().len(), 1, "in place of the file opened again");
    assert_eq!(document_bits(&viewer), before);
}

#[test]
fn each_file_left_with_edits_is_offered_and_restored_beside_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let journals = dir.path().join("journals");
    let [a, b] = ["a.glb", "b.glb"].map(|name| dir.path().join(name));
    std::fs::write(&a, rigscope::rig::demo::demo_glb(3)).unwrap();
    std::fs::write(&b, rigscope::rig::demo::demo_glb(5)).unwrap();
    let mut viewer = journaling(&journals, &a);
    let rename = |viewer: &mut Viewer, name: &str| {
        (viewer.edit_clip(ClipEdit::Rename {
            clip: 0,
            name: name.into(),
        }))
        .unwrap()
    };
    rename(&mut viewer, "A");
    let index = viewer.add_document(rigscope::rig::open(Some(&b)).unwrap(), Some(b.clone()));
    viewer.activate(index);
    rename(&mut viewer, "B");
    drop(viewer);

    let mut viewer = Viewer::new(Rig::default(), None);
    viewer.keep_journals(journals);
    let offered: Vec<PathBuf> = viewer.restore_offers().into_iter().map(|o| o.document).collect();
    assert_eq!(offered, [a.clone(), b.clone()]);
    viewer.answer_restore(0, RestoreAnswer::Restore).unwrap();
    viewer.answer_restore(0, RestoreAnswer::Restore).unwrap();
    let documents: Vec<Option<&Path>> = viewer.documents().iter().map(|d| d.path.as_deref()).collect();
    assert_eq!(documents, [Some(a.as_path()), Some(b.as_path())]);
    assert_eq!(viewer.rig().clips[0].name, "B");
    viewer.activate(0);
    assert_eq!(viewer.rig().clips[0].name, "A");
    assert!(viewer.has_unsaved_edits());
}

/// The window as a person uses it, in a real process on an X server of the test's own: clips
/// carried at start (`--clips`), two bends made with `R` and the mouse and confirmed with Enter,
/// one undone with Ctrl+Z; then the process is killed with SIGKILL, and its journal restored
/// through the restore question gives the document the window last journaled, bit for bit.
#[cfg(target_os = "linux")]
#[test]
fn a_window_killed_mid_session_is_restored_as_it_was() {
    use common::xinput::{Input, Screen, XK_Control_L, XK_Return, XK_r, XK_z};
    use egui_kittest::kittest::Queryable;
    use std::io::BufRead;
    use std::sync::mpsc;
    use std::time::Duration;

    let required = std::env::var_os(rigscope::render::REQUIRE_ADAPTER_ENV).is_some();
    let Some(screen) = Screen::start(1280, 800) else {
        assert!(!required, "no X server of the test's own could start");
        return;
    };
    let Some(input) = Input::open(&screen.display) else {
        assert!(!required, "no XTEST input (libX11 and libXtst)");
        eprintln!("skipped: no libX11 or libXtst to give the window input");
        return;
    };
    let dir = common::temp_dir("recovery-window");
    let (config, runtime) = (dir.join("config"), dir.join("runtime"));
    std::fs::create_dir_all(&runtime).unwrap();
    let file = dir.join("tail.glb");
    std::fs::write(&file, rigscope::rig::demo::demo_glb(4)).unwrap();
    let clips = dir.join("clips.glb");
    std::fs::write(&clips, rigscope::rig::demo::demo_glb(4)).unwrap();
    let mut window = std::process::Command::new(env!("CARGO_BIN_EXE_rigscope"))
        .arg(&file)
        .arg("--clips")
        .arg(&clips)
        .arg("--new-window")
        .env("DISPLAY", &screen.display)
        .env_remove("WAYLAND_DISPLAY")
        .env(rigscope::settings::CONFIG_DIR_ENV, &config)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("RUST_LOG", "rigscope=info,rigscope::viewer::recovery=debug")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the window starts");
    let stderr = window.stderr.take().unwrap();
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut log = String::new();
    // Polls the window's log, up to `bound`, for a line holding `needle`.
    let (short, long) = (Duration::from_secs(15), Duration::from_secs(120));
    let mut wait_for = |needle: &str, bound: Duration| -> Option<String> {
        let started = Instant::now();
        while started.elapsed() < bound {
            match received.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    log.push_str(&line);
                    log.push('\n');
                    if line.contains(needle) {
                        return Some(line);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        eprintln!("no line with {needle:?} in the window's log after {bound:?}:\n{log}");
        None
    };
    // A person's pace: each key and move lands in a frame of its own (the clip plays, so the
    // window draws continuously).
    let pause = || std::thread::sleep(Duration::from_millis(300));
    let mut steps = || -> Option<String> {
        wait_for("window open", long)?;
        wait_for("journal record 1 (load clips from", long)?;
        let started = Instant::now();
        let placed = loop {
            if let Some(placed) = input.find_window("tail.glb") {
                break placed;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the window is not on the screen"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        input.focus(placed.window);
        let (x, y) = (placed.x + placed.width / 2, placed.y + placed.height / 2);
        // `R`, the pointer moved round the selected joint, Enter: a bend.
        let bend = |turn: [i32; 2]| {
            input.move_to(x, y);
            pause();
            input.key(&[], XK_r);
            pause();
            input.move_to(x + turn[0] / 2, y + turn[1] / 2);
            pause();
            input.move_to(x + turn[0], y + turn[1]);
            pause();
            input.key(&[], XK_Return);
        };
        // A frame slower than the pauses (a busy machine) can take Enter with `R`, before the
        // transform runs: Enter again then confirms it.
        let mut bent = |turn: [i32; 2], record: &str| {
            bend(turn);
            (wait_for(record, short).is_some()).then_some(()).or_else(|| {
                input.key(&[], XK_Return);
                wait_for(record, long).map(drop)
            })
        };
        bent([140, -90], "journal record 3 (pose)")?;
        bent([-120, 70], "journal record 5 (pose)")?;
        pause();
        input.key(&[XK_Control_L], XK_z);
        let undone = wait_for("journal record 6 (undo)", long)?;
        Some(undone)
    };
    let undone = steps();
    // Killed as `kill -9` does, mid-session: nothing of the window's own runs after it.
    window.kill().unwrap();
    let status = window.wait().unwrap();
    let undone = undone.expect("the window journaled the session");
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9));
    let before = undone
        .split("document ")
        .nth(1)
        .expect("the document's fingerprint")
        .to_owned();
    let journals = config.join(journal::FOLDER_NAME);
    let left: Vec<PathBuf> = std::fs::read_dir(&journals)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");

    // The next start offers it; closed unanswered, it leaves it for the start after.
    let mut again = std::process::Command::new(env!("CARGO_BIN_EXE_rigscope"));
    again
        .args(["--new-window", "--exit-after-frames", "5"])
        .env("DISPLAY", &screen.display)
        .env_remove("WAYLAND_DISPLAY")
        .env(rigscope::settings::CONFIG_DIR_ENV, &config)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("RUST_LOG", "rigscope=info");
    let output = common::rigscope_with(&mut again);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{} was left with unsaved edits", file.display())),
        "{stderr}"
    );
    assert!(left[0].exists(), "not answered: kept");

    let mut viewer = Viewer::new(Rig::default(), None);
    assert!(viewer.keep_journals(journals.clone()).is_empty());
    let mut harness = common::main_window(viewer, 1280.0, 800.0);
    harness.run();
    assert!(harness.query_by_label("tail.glb: 3 edits not saved").is_some());
    harness.get_by_label("Restore").click();
    harness.run();
    let viewer = &harness.state().0;
    assert_eq!(viewer.document().path.as_deref(), Some(file.as_path()));
    assert_eq!(viewer.document_fingerprint().to_string(), before);
    assert!(viewer.history().redo_label().is_some_and(|l| l.starts_with("bend")));
    assert!(
        viewer.animation().overrides.iter().any(|o| !o.is_identity()),
        "the first bend"
    );
    drop(harness);
    let _ = std::fs::remove_dir_all(&dir);
}
