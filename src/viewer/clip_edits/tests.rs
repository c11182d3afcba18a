use super::*;
use crate::rig::{Channel, Interpolation, Node, Property, Trs};
use glam::{Quat, Vec3, Vec4};

/// Three clips of the file (the second with a morph weight channel) and one carried from
/// another file.
fn rig() -> Rig {
    let node = |name: &str, parent: Option<usize>| Node {
        name: name.into(),
        parent,
        rest: Trs::IDENTITY,
    };
    let clip = |name: &str, travel: f32, source: Option<&str>| {
        let times: Vec<f32> = (0..5).map(|k| 0.25 * k as f32).collect();
        Clip {
            name: name.into(),
            duration: 1.0,
            channels: vec![
                Channel {
                    node: 1,
                    property: Property::Translation,
                    interpolation: Interpolation::Linear,
                    values: times
                        .iter()
                        .map(|&t| Vec4::new(travel * t, 1.0 + 0.1 * t, 0.0, 0.0))
                        .collect(),
                    times: times.clone(),
                },
                Channel {
                    node: 2,
                    property: Property::Rotation,
                    interpolation: Interpolation::Linear,
                    values: times
                        .iter()
                        .map(|&t| Vec4::from(Quat::from_rotation_z(travel * t)))
                        .collect(),
                    times,
                },
            ],
            source: source.map(Into::into),
        }
    };
    let mut rig = Rig {
        nodes: vec![node("Armature", None), node("Hips", Some(0)), node("Spine", Some(1))],
        clips: vec![
            clip("Walk", 1.0, None),
            clip("Run", 3.0, None),
            clip("Idle", 0.0, None),
            clip("Dance", 0.5, Some("dance.glb")),
        ],
        ..Rig::default()
    };
    rig.morphs.channels.push(MorphChannel {
        clip: 1,
        node: 2,
        interpolation: Interpolation::Linear,
        times: vec![0.0, 1.0],
        values: vec![0.0, 1.0],
        targets: 1,
    });
    rig.facts.channels = vec![vec![ChannelFacts::default(); 2]; 4];
    rig
}

/// Every bit of the clip data an edit may change.
fn bits(rig: &Rig) -> String {
    format!(
        "{:?} {:?} {:?} {:?}",
        rig.clips, rig.morphs.channels, rig.facts.channels, rig.facts.dropped_channels
    )
}

fn original(index: usize, name: Option<&str>) -> PlannedAnimation {
    PlannedAnimation::Original {
        index,
        name: name.map(Into::into),
    }
}

#[test]
fn an_unedited_document_keeps_its_animations_and_encodes_carried_clips() {
    let rig = rig();
    let edits = ClipEdits::for_rig(&rig);
    let plan = edits.plan(&rig);
    assert_eq!(
        plan,
        [
            original(0, None),
            original(1, None),
            original(2, None),
            PlannedAnimation::Clip { clip: 3 }
        ]
    );
    assert!((0..4).all(|c| !edits.is_changed(&rig, c)));
}

#[test]
fn the_plan_follows_renames_trims_and_drops() {
    let mut rig = rig();
    let mut edits = ClipEdits::for_rig(&rig);
    let rename = |clip, name: &str| ClipEdit::Rename {
        clip,
        name: name.into(),
    };
    edits.apply(&mut rig, rename(0, "Stroll")).unwrap();
    edits
        .apply(
            &mut rig,
            ClipEdit::Trim {
                clip: 1,
                start: 0.25,
                end: 0.75,
            },
        )
        .unwrap();
    edits.apply(&mut rig, ClipEdit::Drop { clip: 2 }).unwrap();
    // The carried clip moved down to 2; the trimmed one is written from the rig.
    assert_eq!(
        edits.plan(&rig),
        [
            original(0, Some("Stroll")),
            PlannedAnimation::Clip { clip: 1 },
            PlannedAnimation::Clip { clip: 2 }
        ]
    );
    assert_eq!(rig.clips[2].name, "Dance");
    assert!(edits.is_changed(&rig, 0) && edits.is_changed(&rig, 1) && !edits.is_changed(&rig, 2));
    assert_eq!(rig.clips[1].duration, 0.5);

    // Renamed back to its name as read, it is the file's animation untouched again.
    edits.apply(&mut rig, rename(0, "Walk")).unwrap();
    assert_eq!(edits.plan(&rig)[0], original(0, None));
    assert!(!edits.is_changed(&rig, 0));
    // Dropping the first clip moves the trimmed one to index 0, still encoded anew.
    edits.apply(&mut rig, ClipEdit::Drop { clip: 0 }).unwrap();
    assert_eq!(
        edits.plan(&rig),
        [PlannedAnimation::Clip { clip: 0 }, PlannedAnimation::Clip { clip: 1 }]
    );
    assert_eq!(edits.log().len(), 5);
}

#[test]
fn exchanging_snapshots_undoes_and_redoes_every_bit_and_the_plan() {
    let mut rig = rig();
    let mut edits = ClipEdits::for_rig(&rig);
    let mut states = vec![(bits(&rig), edits.plan(&rig), edits.ids())];
    let script = [
        ClipEdit::Trim {
            clip: 1,
            start: 0.1,
            end: 0.9,
        },
        ClipEdit::Rename {
            clip: 1,
            name: "Sprint".into(),
        },
        ClipEdit::InPlace { clip: 0 },
        ClipEdit::Resample { clip: 1, rate: 30.0 },
        ClipEdit::Drop { clip: 1 },
        ClipEdit::Drop { clip: 0 },
    ];
    let mut undo = Vec::new();
    for edit in &script {
        undo.push(edits.apply(&mut rig, edit.clone()).unwrap());
        states.push((bits(&rig), edits.plan(&rig), edits.ids()));
    }
    assert!(rig.morphs.channels.is_empty(), "the dropped Run took its morph channel");
    let mut redo = Vec::new();
    for k in (0..script.len()).rev() {
        let mut step = undo.pop().unwrap();
        edits.exchange(&mut rig, &mut step);
        redo.push(step);
        assert_eq!(
            (bits(&rig), edits.plan(&rig), edits.ids()),
            states[k],
            "undo to state {k}"
        );
    }
    assert!(edits.log().is_empty());
    for (k, state) in states.iter().enumerate().skip(1) {
        let mut step = redo.pop().unwrap();
        edits.exchange(&mut rig, &mut step);
        assert_eq!(&(bits(&rig), edits.plan(&rig), edits.ids()), state, "redo to state {k}");
    }
    assert_eq!(edits.log(), script);
}

#[test]
fn a_pose_saved_as_a_clip_is_one_key_a_node_written_anew_and_undone_whole() {
    let mut rig = rig();
    let mut edits = ClipEdits::for_rig(&rig);
    let bent = Trs {
        translation: Vec3::new(0.0, 1.5, 0.0),
        rotation: Quat::from_rotation_z(0.5),
        scale: Vec3::splat(2.0),
    };
    let save = |clip, name: &str| ClipEdit::AddPose {
        clip,
        name: name.into(),
        pose: vec![(1, Trs::IDENTITY), (2, bent), (7, bent)],
    };
    assert_eq!(save(4, "Bent").label(&rig), "save pose as Bent");
    // A name taken, an empty one, or an index that is not the next one: refused, nothing recorded.
    assert!(matches!(
        edits.apply(&mut rig, save(4, "Walk")),
        Err(ClipEditError::NameTaken { other: 0, .. })
    ));
    assert!(matches!(
        edits.apply(&mut rig, save(4, "")),
        Err(ClipEditError::EmptyName)
    ));
    assert!(
        matches!(
            edits.apply(&mut rig, save(2, "Bent")),
            Err(ClipEditError::ClipOutOfRange { index: 2, count: 4 })
        ),
        "only after the last clip"
    );
    assert_eq!(rig.clips.len(), 4);
    assert!(edits.log().is_empty());

    let before = edits.apply(&mut rig, save(4, "Bent")).unwrap();
    let clip = &rig.clips[4];
    assert_eq!(
        (clip.name.as_str(), clip.duration, clip.source.as_ref()),
        ("Bent", 0.0, None)
    );
    // Translation, rotation and scale of nodes 1 and 2; node 7 is not in this rig.
    assert_eq!(clip.channels.len(), 6);
    let rotation = (clip.channels.iter())
        .find(|c| c.node == 2 && c.property == Property::Rotation)
        .unwrap();
    assert_eq!(
        (rotation.times.as_slice(), rotation.values.as_slice()),
        (&[0.0][..], &[Vec4::from(bent.rotation)][..])
    );
    let mut sampled = vec![Trs::IDENTITY; rig.nodes.len()];
    crate::anim::sample_clip(&rig.nodes, Some(clip), 0.0, &mut [0; 6], &mut sampled);
    assert_eq!(sampled[2], bent);
    // A new clip has no animation in the file: a save encodes it; its id is one no other clip has.
    assert_eq!(edits.plan(&rig)[4], PlannedAnimation::Clip { clip: 4 });
    let ids = edits.ids();
    assert_eq!(ids.len(), 5);
    assert!(ids[..4].iter().all(|&id| id != ids[4]));

    let mut state = before;
    edits.exchange(&mut rig, &mut state);
    assert_eq!(rig.clips.len(), 4, "undone");
    assert!(edits.log().is_empty());
}

#[test]
fn a_failed_edit_changes_nothing_and_is_not_recorded() {
    let mut rig = rig();
    let mut edits = ClipEdits::for_rig(&rig);
    let before = bits(&rig);
    let taken = ClipEdit::Rename {
        clip: 0,
        name: "Run".into(),
    };
    assert!(matches!(
        edits.apply(&mut rig, taken),
        Err(ClipEditError::NameTaken { other: 1, .. })
    ));
    let backwards = ClipEdit::Trim {
        clip: 0,
        start: 0.5,
        end: 0.2,
    };
    assert!(edits.apply(&mut rig, backwards).is_err());
    assert!(edits.apply(&mut rig, ClipEdit::Drop { clip: 9 }).is_err());
    assert_eq!(bits(&rig), before);
    assert!(edits.log().is_empty());
}

#[test]
fn a_reload_makes_the_edits_again_and_stops_at_one_that_no_longer_fits() {
    let mut edited = rig();
    let mut edits = ClipEdits::for_rig(&edited);
    let log = [
        ClipEdit::Drop { clip: 0 },
        ClipEdit::Trim {
            clip: 0,
            start: 0.5,
            end: 1.0,
        },
        ClipEdit::Rename {
            clip: 1,
            name: "Rest".into(),
        },
    ];
    for edit in &log {
        edits.apply(&mut edited, edit.clone()).unwrap();
    }
    let mut reloaded = rig();
    let (again, steps, failure) = ClipEdits::replayed(&mut reloaded, edits.log(), &[]);
    assert_eq!(failure, None);
    assert_eq!(bits(&reloaded), bits(&edited));
    assert_eq!(again.plan(&reloaded), edits.plan(&edited));
    let labels: Vec<&str> = steps.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(labels, ["drop Walk", "trim Run", "rename Idle to Rest"]);

    // The file changed on disk: its first clip is now too short for the trim.
    let mut shorter = rig();
    clip_edit::trim(&mut shorter, 1, 0.0, 0.25).unwrap();
    let (partial, steps, failure) = ClipEdits::replayed(&mut shorter, edits.log(), &[]);
    assert_eq!(steps.len(), 1);
    let failure = failure.expect("the trim no longer fits");
    assert_eq!((failure.edit.clone(), failure.skipped), (log[1].clone(), 1));
    assert!(matches!(failure.error, ClipEditError::TimeOutsideClip { .. }));
    assert_eq!(partial.log(), &log[..1]);
    assert_eq!(shorter.clips.len(), 3);
}

#[test]
fn in_place_keeps_the_height_and_takes_the_travel_out() {
    let mut rig = rig();
    let mut edits = ClipEdits::for_rig(&rig);
    let walk = rig.clips[0].clone();
    edits.apply(&mut rig, ClipEdit::InPlace { clip: 0 }).unwrap();
    let mut expected = walk.clone();
    // Independently: the motion root (Hips, under an unmoving identity parent) keeps its
    // rest place's x and z (0) and its own height at every key.
    for value in &mut expected.channels[0].values {
        *value = Vec4::new(0.0, value.y, 0.0, 0.0);
    }
    let got = &rig.clips[0].channels[0];
    assert_eq!(got.times, expected.channels[0].times);
    for (g, w) in got.values.iter().zip(&expected.channels[0].values) {
        assert!((*g - *w).abs().max_element() < 1e-6, "{g} against {w}");
    }
    assert_eq!(
        format!("{:?}", rig.clips[0].channels[1]),
        format!("{:?}", walk.channels[1])
    );
    assert_eq!(edits.plan(&rig)[0], PlannedAnimation::Clip { clip: 0 });
}
