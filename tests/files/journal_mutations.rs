//! The edit journal's reader and its restoring, fuzzed as the importers are (a fixed random
//! sequence, so a failure repeats; the `read_journal` fuzz target explores without end):
//!
//! - bytes: a real session's journal with bytes flipped, overwritten, cut out, inserted or cut
//!   off must be refused with an error or read as a shorter journal of the same edits — never
//!   read as other edits, never with a panic, never allocating more than the file justifies;
//! - records: the same journal with its records' JSON edited as an attacker would (a clip index,
//!   a node, a count, a key removed, a value of another type) and checksummed again, as a
//!   journal written by a broken or hostile writer would be, must restore or stop at a record
//!   it names, never panic and never take long.

use crate::common;
use crate::json_mutations::json_mutation;

use rigscope::anim::JointOverride;
use rigscope::anim::ik_layer::IkGoal;
use rigscope::journal::{self, Entry, JournalError};
use rigscope::rig::Rig;
use rigscope::viewer::{ClipEdit, RepairOptions, RestoreAnswer, Viewer};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const BYTE_MUTATIONS: usize = 4000;
const RECORD_MUTATIONS: usize = 800;

/// xorshift64*: a fixed sequence, independent of any crate's random generator.
fn chooser(mut state: u64) -> impl FnMut(usize) -> usize {
    move |n: usize| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// A session of every kind of edit on a demo rig opened from `dir`, journaled into
/// `dir/journals`; returns the rig's file and the journal's bytes.
fn a_session_s_journal(dir: &Path) -> (PathBuf, Vec<u8>) {
    let file = dir.join("tail.glb");
    std::fs::write(&file, rigscope::rig::demo::demo_glb(6)).unwrap();
    let clips = dir.join("clips.glb");
    std::fs::write(&clips, rigscope::rig::demo::demo_glb(6)).unwrap();
    let mut viewer = Viewer::new(Rig::default(), None);
    viewer.keep_journals(dir.join("journals"));
    viewer.open_now(&file).unwrap();
    viewer.load_clips_from(clips);
    assert!(viewer.wait_for_load());
    let duration = viewer.rig().clips[0].duration;
    viewer
        .edit_clip(ClipEdit::Trim {
            clip: 0,
            start: 0.0,
            end: duration / 2.0,
        })
        .unwrap();
    viewer
        .edit_clip(ClipEdit::Rename {
            clip: 1,
            name: "Renamed".into(),
        })
        .unwrap();
    viewer.preview_repair(&RepairOptions::default());
    for (k, joint) in [1, 2, 3].into_iter().enumerate() {
        let mut bend = JointOverride::IDENTITY;
        bend.rotation = glam::Quat::from_rotation_x(0.2 * (k + 1) as f32);
        viewer.set_override(joint, bend);
        viewer.end_gesture();
    }
    let end = viewer.rig().nodes.len() - 1;
    let goal = IkGoal::for_end_joint(&viewer.rig().nodes, end, glam::Vec3::new(0.3, 1.0, 0.2)).unwrap();
    viewer.edit_pose(rigscope::viewer::PoseEdit::AddIkGoal(goal));
    viewer.end_gesture();
    viewer.undo();
    viewer.redo();
    viewer.save_pose_as_clip("Held").unwrap();
    viewer.edit_clip(ClipEdit::Drop { clip: 0 }).unwrap();
    viewer.undo();
    viewer.flush_journal();
    let bytes = std::fs::read(viewer.journal_path().unwrap()).unwrap();
    // Gone as in a crash; the journal is read from the bytes kept here.
    let path = viewer.journal_path().unwrap().to_owned();
    drop(viewer);
    std::fs::remove_file(path).unwrap();
    (file, bytes)
}

/// One blind change of `bytes`, as a damaged disk or an interrupted copy makes: what was done.
fn damage(bytes: &mut Vec<u8>, choose: &mut impl FnMut(usize) -> usize) -> String {
    let at = choose(bytes.len());
    match choose(6) {
        0 => {
            let bit = choose(8);
            bytes[at] ^= 1 << bit;
            format!("bit {bit} of byte {at} flipped")
        }
        1 => {
            let value = [0x00, 0xff, 0x7f, 0x80, b'"', b'{', b'9'][choose(7)];
            bytes[at] = value;
            format!("byte {at} set to {value:#04x}")
        }
        2 => {
            let end = (at + 1 + choose(64)).min(bytes.len());
            bytes.drain(at..end);
            format!("bytes {at}..{end} cut out")
        }
        3 => {
            let inserted: Vec<u8> = (0..1 + choose(16)).map(|_| choose(256) as u8).collect();
            let n = inserted.len();
            bytes.splice(at..at, inserted);
            format!("{n} bytes inserted at {at}")
        }
        4 => {
            bytes.truncate(at);
            format!("cut off at {at}")
        }
        _ => {
            // A length field's worth of an edge value anywhere: a claimed length past the file.
            let value = [u32::MAX, 0, 1, 0x0400_0001, 0x7fff_ffff][choose(5)];
            let end = (at + 4).min(bytes.len());
            let n = end - at;
            bytes[at..end].copy_from_slice(&value.to_le_bytes()[..n]);
            format!("{value:#x} written at {at}")
        }
    }
}

#[test]
fn damaged_bytes_are_refused_or_read_as_a_shorter_journal_of_the_same_edits() {
    let dir = tempfile::tempdir().unwrap();
    let (_, original) = a_session_s_journal(dir.path());
    let whole = journal::parse(&original).expect("the session's journal reads");
    assert!(whole.entries.len() > 15, "{} records", whole.entries.len());
    let mut choose = chooser(0x9e37_79b9_7f4a_7c15);
    let mut failures = Vec::new();
    let (mut refused, mut shorter) = (0, 0);
    for k in 0..BYTE_MUTATIONS {
        let mut bytes = original.clone();
        let done: Vec<String> = (0..1 + choose(3)).map(|_| damage(&mut bytes, &mut choose)).collect();
        if bytes.is_empty() || bytes == original {
            continue;
        }
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(|| common::counting::watch(|| journal::parse(&bytes)));
        let Ok((read, allocated)) = outcome else {
            failures.push(format!("#{k}: panicked after {done:?}"));
            continue;
        };
        // The bytes read are all a read may hold, with JSON's own overhead on top.
        let justified = 8 * bytes.len() + (64 << 10);
        if allocated.largest > justified {
            failures.push(format!("#{k}: allocated {} bytes after {done:?}", allocated.largest));
        }
        if started.elapsed() > Duration::from_secs(1) {
            failures.push(format!("#{k}: took {:?} after {done:?}", started.elapsed()));
        }
        match read {
            Ok(journal) if journal.header == whole.header && whole.entries.starts_with(&journal.entries) => {
                shorter += 1
            }
            Ok(journal) => failures.push(format!(
                "#{k}: read as other edits after {done:?}: {:?}",
                journal.entries.first()
            )),
            Err(JournalError::Io(e)) => failures.push(format!("#{k}: an I/O error from bytes: {e}")),
            Err(e) if e.to_string().trim().is_empty() => failures.push(format!("#{k}: an empty error")),
            Err(_) => refused += 1,
        }
    }
    println!(
        "{BYTE_MUTATIONS} damaged journals: {refused} refused, {shorter} read shorter, {} misbehaved",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(refused > BYTE_MUTATIONS / 2, "most damage is refused: {refused}");
}

#[test]
fn records_edited_as_an_attacker_would_restore_or_stop_where_they_say_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (file, original) = a_session_s_journal(dir.path());
    let whole = journal::parse(&original).unwrap();
    let journals = dir.path().join("mutated");
    let mut choose = chooser(0x2545_f491_4f6c_dd1d);
    let mut failures = Vec::new();
    let (mut made, mut stopped, mut malformed) = (0, 0, 0);
    for k in 0..RECORD_MUTATIONS {
        let mut entries = whole.entries.clone();
        let at = choose(entries.len());
        let mut json = serde_json::to_value(&entries[at]).unwrap();
        let done = json_mutation::mutate(&mut json, &mut choose);
        match serde_json::from_value::<Entry>(json) {
            Ok(entry) => entries[at] = entry,
            // Refused by the reader as malformed (the byte test covers those); not restored.
            Err(_) => {
                malformed += 1;
                continue;
            }
        }
        std::fs::create_dir_all(&journals).unwrap();
        std::fs::write(
            journals.join("mutated.journal"),
            journal::encode(&whole.header, &entries).unwrap(),
        )
        .unwrap();
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(|| {
            let mut viewer = Viewer::new(Rig::default(), None);
            assert!(viewer.keep_journals(journals.clone()).is_empty());
            let restored = viewer.answer_restore(0, RestoreAnswer::Restore);
            viewer.pose();
            viewer.close_journals();
            restored
        });
        let _ = std::fs::remove_dir_all(&journals);
        match outcome {
            Err(_) => failures.push(format!("#{k}: record {at} panicked after {done:?}")),
            Ok(Ok(Some(restored))) => match restored.stopped {
                None => made += 1,
                Some(why) if why.trim().is_empty() => failures.push(format!("#{k}: stopped without a reason")),
                Some(_) => stopped += 1,
            },
            Ok(other) => failures.push(format!("#{k}: {other:?}")),
        }
        if started.elapsed() > Duration::from_secs(5) {
            failures.push(format!("#{k}: took {:?} after {done:?}", started.elapsed()));
        }
    }
    assert!(file.exists());
    println!(
        "{RECORD_MUTATIONS} edited records: {made} restored whole, {stopped} stopped at a record, {malformed} not an \
         edit any more, {} misbehaved",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(stopped > 0 && made > 0, "both outcomes happen");
}
