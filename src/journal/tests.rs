use super::records::*;
use super::*;

fn header() -> Header {
    Header {
        rigscope: RIGSCOPE.to_owned(),
        document: PathBuf::from("/rigs/Fox.glb"),
        files: Some(vec![FileFacts {
            path: PathBuf::from("/rigs/Fox.glb"),
            len: 162_852,
            crc32: 0x1234_5678,
            modified_ns: Some(1_700_000_000_000_000_000),
        }]),
    }
}

fn entries() -> Vec<Entry> {
    vec![
        Entry::Clip(ClipRecord::Trim {
            clip: 1,
            start: Exact::of(0.25),
            end: Exact::of(f32::NAN),
        }),
        Entry::PoseStep {
            label: "bend Neck".into(),
        },
        Entry::Pose(PoseRecord {
            nodes: 3,
            bends: vec![(
                2,
                BendRecord {
                    rotation: exact([0.0, -0.0, 0.6, 0.8]),
                    translation: exact([1.0, f32::INFINITY, -1.5]),
                    scale: Exact::of(1.0),
                },
            )],
            morph_weights: vec![vec![None, Some(Exact::of(0.5))]],
            ik_goals: Vec::new(),
            look_at: None,
            stack: StackRecord {
                layers: vec![LayerRecord {
                    clip: 0,
                    weight: Exact::of(0.35),
                    speed: Exact::of(-1.0),
                    time_offset: Exact::of(f32::NAN),
                    looping: false,
                    enabled: true,
                    mode: "add".into(),
                    mask: Some(2),
                }],
                crossfade_seconds: Exact::of(0.3),
                root_lock: true,
                attachments: vec![AttachmentRecord {
                    node: 1,
                    offset: exact([0.0, -0.0, 0.02]),
                    rotation_degrees: exact([0.0, 45.0, 0.0]),
                    size: Exact::of(0.05),
                }],
                lock_feet: true,
            },
        }),
        Entry::Undo,
        Entry::Redo,
        Entry::Repair(crate::repair::RepairOptions::default()),
        Entry::EndRepairPreview,
    ]
}

#[test]
fn a_journal_reads_back_bit_for_bit_and_every_cut_inside_a_record_is_reported() {
    let bytes = encode(&header(), &entries()).unwrap();
    let journal = parse(&bytes).unwrap();
    assert_eq!(journal.header, header());
    assert_eq!(journal.entries, entries());
    let Entry::Clip(ClipRecord::Trim { end, .. }) = journal.entries[0] else {
        unreachable!()
    };
    assert_eq!(end.0, f32::NAN.to_bits(), "a NaN keeps its bits");

    // Where each record ends: a cut there is a shorter journal, a cut anywhere else is not one.
    let mut ends = vec![encode(&header(), &[]).unwrap().len()];
    for k in 1..=entries().len() {
        ends.push(encode(&header(), &entries()[..k]).unwrap().len());
    }
    for cut in 0..bytes.len() {
        match parse(&bytes[..cut]) {
            Ok(journal) => {
                let kept = ends
                    .iter()
                    .position(|&end| end == cut)
                    .expect("a cut at a record's end");
                assert_eq!(journal.entries, entries()[..kept], "cut at {cut}");
            }
            Err(JournalError::NotAJournal) => assert!(cut < 12, "cut at {cut}"),
            Err(JournalError::Truncated { .. }) => assert!(!ends.contains(&cut), "cut at {cut}"),
            Err(e) => panic!("cut at {cut}: {e}"),
        }
    }
}

#[test]
fn any_one_bit_flipped_is_reported_and_never_read_as_other_edits() {
    let bytes = encode(&header(), &entries()).unwrap();
    for bit in 0..bytes.len() * 8 {
        let mut damaged = bytes.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        match parse(&damaged) {
            Ok(journal) => panic!("bit {bit} flipped still reads, as {journal:?}"),
            Err(
                JournalError::NotAJournal
                | JournalError::OtherFormat { .. }
                | JournalError::Checksum { .. }
                | JournalError::Truncated { .. }
                | JournalError::TooLong { .. },
            ) => {}
            Err(e) => panic!("bit {bit}: {e}"),
        }
    }
}

#[test]
fn another_version_a_claimed_huge_record_and_a_bad_payload_are_refused_by_kind() {
    let mut other = header();
    other.rigscope = "0.0.1 (commit abcdef0)".into();
    let error = parse(&encode(&other, &entries()).unwrap()).unwrap_err();
    assert!(matches!(error, JournalError::OtherVersion { ref found } if found == "0.0.1 (commit abcdef0)"));

    let mut other_format = encode(&header(), &[]).unwrap();
    other_format[8..12].copy_from_slice(&2u32.to_le_bytes());
    assert!(matches!(
        parse(&other_format),
        Err(JournalError::OtherFormat { found: 2 })
    ));

    // A length of 4 GiB with its checksum right: refused for the length, nothing allocated.
    let mut huge = encode(&header(), &[]).unwrap();
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    huge.extend_from_slice(&[0; 4]);
    assert!(matches!(
        parse(&huge),
        Err(JournalError::TooLong { record: 1, length, .. }) if length == u32::MAX as usize
    ));

    // Framed and checksummed, but not an edit of this format.
    let mut unknown = encode(&header(), &[]).unwrap();
    unknown.extend(frame(br#"{"Explode":{"now":true}}"#));
    let error = parse(&unknown).unwrap_err();
    assert!(matches!(error, JournalError::Malformed { record: 1, .. }), "{error}");
    assert!(error.to_string().contains("does not read as an edit"), "{error}");

    assert!(matches!(
        parse(b"PK\x03\x04 not a journal"),
        Err(JournalError::NotAJournal)
    ));
}

#[test]
fn a_writer_appends_whole_records_and_a_held_journal_is_not_found() {
    let folder = tempfile::tempdir().unwrap();
    let mut writer = JournalWriter::create(folder.path(), &header()).unwrap();
    assert_eq!(writer.path().file_name().unwrap(), "Fox.glb.journal");
    for entry in entries() {
        writer.append(&entry).unwrap();
    }
    assert_eq!(writer.entries(), entries().len());
    assert_eq!(read(writer.path()).unwrap().entries, entries());
    assert!(find_left(folder.path()).is_empty(), "held by the writer");

    // A second journal for the same file takes a name of its own.
    let second = JournalWriter::create(folder.path(), &header()).unwrap();
    assert_eq!(second.path().file_name().unwrap(), "Fox.glb-1.journal");
    second.remove();

    // The writer gone without removing its journal (a crash): the next start finds it.
    let path = writer.path().to_owned();
    drop(writer);
    let found = find_left(folder.path());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].path, path);
    assert_eq!(found[0].journal.as_ref().unwrap().entries, entries());
    assert!(find_left(folder.path()).is_empty(), "locked by the first finder");
    drop(found);

    let aside = set_aside(&path).unwrap();
    assert_eq!(aside.file_name().unwrap(), "Fox.glb.journal.set-aside");
    assert!(find_left(folder.path()).is_empty(), "set aside: never offered again");
    assert!(aside.exists(), "kept, not deleted");
}

#[test]
fn file_facts_tell_other_bytes_from_the_same_bytes() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("rig.glb");
    std::fs::write(&file, b"glTF version one").unwrap();
    let facts = FileFacts::of(&file).unwrap();
    assert_eq!(facts.crc32, crc32fast::hash(b"glTF version one"));
    assert!(!facts.changed());
    std::fs::write(&file, b"glTF version two").unwrap();
    assert!(facts.changed(), "same length, other bytes");
    std::fs::remove_file(&file).unwrap();
    assert!(facts.changed(), "gone");
}

/// The records' JSON as journals of this format hold it (and `fuzz/seed_corpus.py` writes it):
/// a change that fails here changes the format, and needs a new [`FORMAT_VERSION`].
#[test]
fn records_written_in_this_format_read_as_the_same_edits() {
    let records = [
        r#"{"Clip":{"Trim":{"clip":1,"start":1048576000,"end":1056964608}}}"#,
        r#"{"Clip":{"AddCarried":{"file":"clips.glb","map":{"by_hand":{"Hips":"hips"}},"in_place":false,"resample_rate":1106247680,"len":1024,"modified_ns":null}}}"#,
        r#"{"Repair":{"normalize":true,"limit":true,"limit_to":4}}"#,
        r#"{"PoseStep":{"label":"bend joint1"}}"#,
        r#"{"Pose":{"nodes":5,"bends":[[2,{"rotation":[0,0,1056964608,1061997773],"translation":[0,0,0],"scale":1065353216}]],"morph_weights":[[null,1056964608]],"ik_goals":[{"start":1,"mid":2,"end":3,"target":[0,1065353216,0],"pole_target":null,"weight":1065353216,"soften":1064849900,"enabled":true}],"look_at":null}}"#,
        r#""Undo""#,
        r#""EndRepairPreview""#,
    ];
    let mut bytes = encode(&header(), &[]).unwrap();
    for record in records {
        bytes.extend(frame(record.as_bytes()));
    }
    let entries = parse(&bytes).unwrap().entries;
    assert_eq!(
        entries[0],
        Entry::Clip(ClipRecord::Trim {
            clip: 1,
            start: Exact::of(0.25),
            end: Exact::of(0.5),
        })
    );
    let Entry::Clip(ClipRecord::AddCarried(carry)) = &entries[1] else {
        panic!("{:?}", entries[1])
    };
    assert_eq!(
        (carry.resample_rate.get(), carry.map.by_hand["Hips"].as_str()),
        (30.0, "hips")
    );
    assert!(matches!(&entries[2], Entry::Repair(options) if options.normalize && !options.mirror));
    let Entry::Pose(pose) = &entries[4] else {
        panic!("{:?}", entries[4])
    };
    assert_eq!(floats(pose.bends[0].1.rotation), [0.0, 0.0, 0.5, 0.8]);
    assert_eq!(pose.morph_weights, [vec![None, Some(Exact::of(0.5))]]);
    assert_eq!(pose.ik_goals[0].end, 3);
    assert_eq!(entries[5], Entry::Undo);
    assert_eq!(entries[6], Entry::EndRepairPreview);
    // Written again, each record is the text it was read from.
    for (record, entry) in records
        .iter()
        .zip(&entries)
        .filter(|(_, e)| !matches!(e, Entry::Repair(_)))
    {
        assert_eq!(serde_json::to_string(entry).unwrap(), *record);
    }
}

#[test]
fn a_pose_record_of_a_journal_without_the_layers_part_reads_as_an_empty_stack() {
    let earlier = r#"{"nodes":1,"bends":[],"morph_weights":[],"ik_goals":[],"look_at":null}"#;
    let record: PoseRecord = serde_json::from_str(earlier).unwrap();
    assert_eq!(record.stack, StackRecord::default());
    assert_eq!(record.stack.crossfade_seconds.get(), 0.0);
}
