//! The shared FBX files against what their authoring tools made of them: every file opens with
//! the joints, vertices and clips it holds; the skinned meshes at a stack and time match the
//! tool's own deformed mesh (`fbx/truth/*.obj`, see fbx/SOURCES.md); Mixamo rigs come out in
//! metres facing +Z.

use crate::common;

use crate::common::{farthest_from_nearest, shared_rigs};
use glam::{DMat4, DVec3};
use rigscope::anim::PoseBuffers;
use rigscope::rig::Rig;
use rigscope::skin::{SkinnedPose, SkinningMethod};
use std::path::Path;

/// How far (metres) a skinned vertex may be from the nearest vertex of the tool's mesh and the
/// reverse. The OBJs print 6 decimals of a centimetre (5e-9 m); the rig is f32, whose spacing
/// is 1.2e-7 m at 1 m, and a vertex goes through a few products of matrices: the worst
/// measured is 9.0e-7 m (max_transformed_skin_5), all others under 7e-7 m.
const TRUTH_TOLERANCE: f64 = 2e-6;

/// FBX time units per second (FBX `KTime`).
const KTIME_PER_SECOND: f64 = 46_186_158_000.0;

/// A Y-up file in centimetres: only the unit changes.
fn y_up_centimetres() -> DMat4 {
    DMat4::from_scale(DVec3::splat(0.01))
}

/// A Z-up right-handed file in centimetres (3ds Max): Z becomes Y, Y becomes −Z.
fn z_up_centimetres() -> DMat4 {
    DMat4::from_cols_array(&[
        0.01, 0.0, 0.0, 0.0, //
        0.0, 0.0, -0.01, 0.0, //
        0.0, 0.01, 0.0, 0.0, //
        0.0, 0.0, 0.0, 1.0,
    ])
}

/// One reference mesh: the FBX file, the OBJ the tool wrote, the stack (clip name; `None`: the
/// file's only or first), where that stack starts (the clip counts from there) and the time on
/// the file's timeline, and how the file's space maps to the rig's (Y up, metres).
struct Truth {
    fbx: &'static str,
    obj: &'static str,
    clip: Option<&'static str>,
    stack_start: f64,
    time: f64,
    file_to_rig: fn() -> DMat4,
}

/// Stack starts read from the files by hand: the combined Maya sausage puts its three stacks one
/// after another (LocalStart 1924423250, 38488465000, 76976930000 KTime: frames 1, 20 and 40 at
/// 24 fps); Blender's Spin take starts a frame early (LocalTime −1924423249), the others at 0.
const TRUTHS: &[Truth] = &[
    Truth {
        fbx: "maya_game_sausage_7500_ascii_combined.fbx",
        obj: "maya_game_sausage_wiggle_10.obj",
        clip: Some("wiggle"),
        stack_start: 1_924_423_250.0 / KTIME_PER_SECOND,
        time: 10.0 / 24.0,
        file_to_rig: y_up_centimetres,
    },
    Truth {
        fbx: "maya_game_sausage_7500_ascii_combined.fbx",
        obj: "maya_game_sausage_wiggle_18.obj",
        clip: Some("wiggle"),
        stack_start: 1_924_423_250.0 / KTIME_PER_SECOND,
        time: 18.0 / 24.0,
        file_to_rig: y_up_centimetres,
    },
    Truth {
        fbx: "maya_game_sausage_7500_ascii_combined.fbx",
        obj: "maya_game_sausage_spin_7.obj",
        clip: Some("spin"),
        stack_start: 38_488_465_000.0 / KTIME_PER_SECOND,
        time: 27.0 / 24.0,
        file_to_rig: y_up_centimetres,
    },
    Truth {
        fbx: "maya_game_sausage_7500_ascii_combined.fbx",
        obj: "maya_game_sausage_spin_15.obj",
        clip: Some("spin"),
        stack_start: 38_488_465_000.0 / KTIME_PER_SECOND,
        time: 35.0 / 24.0,
        file_to_rig: y_up_centimetres,
    },
    Truth {
        fbx: "maya_game_sausage_7500_ascii_combined.fbx",
        obj: "maya_game_sausage_deform_8.obj",
        clip: Some("deform"),
        stack_start: 76_976_930_000.0 / KTIME_PER_SECOND,
        time: 48.0 / 24.0,
        file_to_rig: y_up_centimetres,
    },
    Truth {
        fbx: "maya_game_sausage_7500_ascii_combined.fbx",
        obj: "maya_game_sausage_deform_15.obj",
        clip: Some("deform"),
        stack_start: 76_976_930_000.0 / KTIME_PER_SECOND,
        time: 55.0 / 24.0,
        file_to_rig: y_up_centimetres,
    },
    Truth {
        fbx: "blender_279_sausage_6100_ascii.fbx",
        obj: "blender_279_sausage_base_0.obj",
        clip: Some("Base"),
        stack_start: 0.0,
        time: 0.0,
        file_to_rig: y_up_centimetres,
    },
    Truth {
        fbx: "blender_279_sausage_6100_ascii.fbx",
        obj: "blender_279_sausage_spin_15.obj",
        clip: Some("Spin"),
        stack_start: -1_924_423_249.0 / KTIME_PER_SECOND,
        time: 15.0 / 24.0,
        file_to_rig: y_up_centimetres,
    },
    Truth {
        fbx: "blender_279_sausage_6100_ascii.fbx",
        obj: "blender_279_sausage_wiggle_20.obj",
        clip: Some("Wiggle"),
        stack_start: 0.0,
        time: 20.0 / 24.0,
        file_to_rig: y_up_centimetres,
    },
    Truth {
        fbx: "max_transformed_skin_6100_ascii.fbx",
        obj: "max_transformed_skin_5.obj",
        clip: None,
        stack_start: 0.0,
        time: 5.0 / 30.0,
        file_to_rig: z_up_centimetres,
    },
    Truth {
        fbx: "max_transformed_skin_6100_ascii.fbx",
        obj: "max_transformed_skin_15.obj",
        clip: None,
        stack_start: 0.0,
        time: 15.0 / 30.0,
        file_to_rig: z_up_centimetres,
    },
    Truth {
        fbx: "maya_kenney_character_7700_binary.fbx",
        obj: "maya_kenney_character_4.obj",
        clip: None,
        stack_start: 0.0,
        time: 4.0 / 24.0,
        file_to_rig: y_up_centimetres,
    },
    Truth {
        fbx: "maya_kenney_character_7700_binary.fbx",
        obj: "maya_kenney_character_9.obj",
        clip: None,
        stack_start: 0.0,
        time: 9.0 / 24.0,
        file_to_rig: y_up_centimetres,
    },
];

/// The `v` lines of an OBJ file.
fn obj_positions(path: &Path) -> Vec<DVec3> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter_map(|line| line.strip_prefix("v "))
        .map(|rest| {
            let v: Vec<f64> = rest
                .split_whitespace()
                .map(|x| x.parse().expect("an OBJ coordinate"))
                .collect();
            DVec3::new(v[0], v[1], v[2])
        })
        .collect()
}

/// Every skinned vertex of `rig` at `time` of `clip`, CPU linear blend skinning, in world space.
fn skinned_vertices(rig: &Rig, clip: Option<usize>, time: f32) -> Vec<DVec3> {
    let mut pose = PoseBuffers::new(rig);
    pose.evaluate(rig, clip, time);
    let mut skinned = SkinnedPose::new(rig);
    skinned.skin(rig, &pose, SkinningMethod::Lbs);
    skinned
        .meshes
        .iter()
        .flatten()
        .flat_map(|p| p.positions.iter().map(|v| v.as_dvec3()))
        .collect()
}

fn clip_index(rig: &Rig, name: Option<&str>) -> Option<usize> {
    match name {
        Some(name) => Some(
            rig.clips
                .iter()
                .position(|c| c.name == name)
                .unwrap_or_else(|| panic!("{}: no clip '{name}'", rig.name)),
        ),
        None => (!rig.clips.is_empty()).then_some(0),
    }
}

#[test]
fn skinned_meshes_match_the_authoring_tools_deformed_meshes() {
    let Some(dir) = shared_rigs() else { return };
    let dir = dir.join("fbx");
    let mut worst = Vec::new();
    for truth in TRUTHS {
        let rig = common::load_rig(&dir, truth.fbx);
        let to_rig = (truth.file_to_rig)();
        let expected: Vec<DVec3> = obj_positions(&dir.join("truth").join(truth.obj))
            .into_iter()
            .map(|p| to_rig.transform_point3(p))
            .collect();
        let clip = clip_index(&rig, truth.clip);
        let got = skinned_vertices(&rig, clip, (truth.time - truth.stack_start) as f32);
        let distance = farthest_from_nearest(&got, &expected).max(farthest_from_nearest(&expected, &got));
        // The same comparison of the rest pose, to show that it tells poses apart.
        let rest = skinned_vertices(&rig, None, 0.0);
        let rest_distance = farthest_from_nearest(&rest, &expected).max(farthest_from_nearest(&expected, &rest));
        println!(
            "{}: {} vertices against {}: {distance:.3e} m (rest pose {rest_distance:.3e} m)",
            truth.obj,
            got.len(),
            expected.len()
        );
        worst.push((truth.obj, distance, rest_distance));
    }
    for (obj, distance, rest_distance) in worst {
        assert!(distance < TRUTH_TOLERANCE, "{obj}: {distance:.3e} m");
        assert!(
            rest_distance > 1e-3 || obj.ends_with("base_0.obj"),
            "{obj}: the rest pose is only {rest_distance:.3e} m away"
        );
    }
}

/// What fbx/SOURCES.md counted in each file: skin clusters (joints over all skins), the
/// distinct bones they link, control points (distinct bind positions per mesh, summed; the
/// barbarian's 34 geometries are counted once however many nodes draw them) and each stack with
/// its span in seconds (`None` where SOURCES gives none; kenney's keys end at 0.667 s, its
/// stack at 0.833 s).
struct Counted {
    fbx: &'static str,
    clusters: usize,
    bones: usize,
    control_points: usize,
    clips: &'static [(&'static str, Option<f32>)],
}

const COUNTED: &[Counted] = &[
    Counted {
        fbx: "Samba Dancing.fbx",
        clusters: 104,
        bones: 52,
        control_points: 27_850,
        clips: &[("Take 001", None), ("mixamo.com", Some(18.2))],
    },
    Counted {
        fbx: "mixamo.fbx",
        clusters: 129,
        bones: 65,
        control_points: 24_746,
        clips: &[("Take 001", None), ("mixamo.com", Some(16.833))],
    },
    Counted {
        fbx: "xsi_man_skinning.fbx",
        clusters: 67,
        bones: 67,
        control_points: 1_191,
        clips: &[("Take 001", Some(0.5))],
    },
    Counted {
        fbx: "morph_test.fbx",
        clusters: 0,
        bones: 0,
        control_points: 8,
        clips: &[],
    },
    Counted {
        fbx: "animation_with_skeleton.fbx",
        clusters: 14,
        bones: 14,
        control_points: 1_058,
        clips: &[("Armature|ArmatureAction", Some(0.833))],
    },
    Counted {
        fbx: "blender_293_barbarian_7400_binary.fbx",
        // 38 clusters over 19 bones, and the node of mesh 'hair' (two of its control points no
        // cluster weighs: they follow it, as FBX draws them).
        clusters: 39,
        bones: 20,
        // 1,760 control points, of which 21 repeat a position of their own mesh (counted once with
        // a separate reader of the binary format).
        control_points: 1_739,
        clips: &[("Armature|idle", Some(2.583))],
    },
    Counted {
        fbx: "maya_kenney_character_7700_binary.fbx",
        clusters: 45,
        bones: 45,
        control_points: 804,
        clips: &[("Take 001", None)],
    },
    Counted {
        fbx: "maya_slime_7500_binary.fbx",
        clusters: 3,
        bones: 3,
        control_points: 2_444,
        clips: &[("Idle", Some(2.0))],
    },
    Counted {
        fbx: "maya_game_sausage_7500_ascii_combined.fbx",
        clusters: 3,
        bones: 3,
        control_points: 24,
        clips: &[("wiggle", Some(0.792)), ("spin", Some(0.833)), ("deform", Some(0.833))],
    },
    Counted {
        fbx: "blender_279_sausage_6100_ascii.fbx",
        clusters: 3,
        bones: 3,
        control_points: 290,
        clips: &[("Default Take", None), ("Base", None), ("Spin", None), ("Wiggle", None)],
    },
    Counted {
        fbx: "max_transformed_skin_6100_ascii.fbx",
        clusters: 5,
        bones: 5,
        control_points: 90,
        clips: &[("Take 001", Some(3.333))],
    },
];

#[test]
fn every_shared_fbx_opens_with_what_it_holds() {
    let Some(dir) = shared_rigs() else { return };
    let dir = dir.join("fbx");
    let on_disk = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "fbx"))
        .count();
    assert_eq!(on_disk, COUNTED.len(), "a shared FBX file is not in the table");
    for counted in COUNTED {
        let file = counted.fbx;
        let started = std::time::Instant::now();
        let rig = common::load_rig(&dir, file);
        let load_time = started.elapsed();
        let clusters: usize = rig.skins.iter().map(|s| s.joints.len()).sum();
        let mut bones: Vec<usize> = rig.skins.iter().flat_map(|s| s.joints.iter().copied()).collect();
        bones.sort_unstable();
        bones.dedup();
        let control_points: usize = rig
            .meshes
            .iter()
            .map(|mesh| {
                let mut points: Vec<[u32; 3]> = mesh
                    .primitives
                    .iter()
                    .flat_map(|p| p.positions.iter().map(|v| v.to_array().map(f32::to_bits)))
                    .collect();
                points.sort_unstable();
                points.dedup();
                points.len()
            })
            .sum();
        let vertices: usize = rig
            .meshes
            .iter()
            .flat_map(|m| &m.primitives)
            .map(|p| p.vertex_count())
            .sum();
        println!(
            "{file}: {clusters} clusters, {} bones, {control_points} control points ({vertices} vertices), {} clips, loaded in {load_time:?}",
            bones.len(),
            rig.clips.len()
        );
        assert_eq!(clusters, counted.clusters, "{file}: clusters");
        assert_eq!(bones.len(), counted.bones, "{file}: bones");
        assert_eq!(control_points, counted.control_points, "{file}: control points");
        let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
        let expected: Vec<&str> = counted.clips.iter().map(|c| c.0).collect();
        assert_eq!(names, expected, "{file}: clips");
        for (clip, &(name, span)) in rig.clips.iter().zip(counted.clips) {
            if let Some(span) = span {
                // Within half a frame at 24 fps: SOURCES rounds to the millisecond.
                assert!(
                    (clip.duration - span).abs() < 0.021,
                    "{file} '{name}': {} s, not {span} s",
                    clip.duration
                );
                assert!(!clip.channels.is_empty(), "{file} '{name}': no channels");
            }
        }
    }
}

/// World position of the node named `name` in the rest pose.
fn rest_position(rig: &Rig, name: &str) -> DVec3 {
    let node = rig
        .nodes
        .iter()
        .position(|n| n.name == name)
        .unwrap_or_else(|| panic!("{}: no node '{name}'", rig.name));
    let mut pose = PoseBuffers::new(rig);
    pose.evaluate(rig, None, 0.0);
    pose.worlds[node].w_axis.truncate().as_dvec3()
}

#[test]
fn mixamo_rigs_are_in_metres_standing_up_and_facing_plus_z() {
    let Some(dir) = shared_rigs() else { return };
    let dir = dir.join("fbx");
    for file in ["Samba Dancing.fbx", "mixamo.fbx"] {
        let rig = common::load_rig(&dir, file);
        let joints: Vec<&str> = rig
            .skins
            .iter()
            .flat_map(|s| &s.joints)
            .map(|&j| rig.nodes[j].name.as_str())
            .collect();
        assert!(
            joints.iter().all(|name| name.starts_with("mixamorig:")),
            "{file}: joints without the mixamorig: prefix"
        );
        // Centimetres converted: a person of 1.7 to 1.9 m, feet on the ground.
        let vertices = skinned_vertices(&rig, None, 0.0);
        let (low, high) = vertices.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.y), hi.max(p.y))
        });
        println!("{file}: {} joints, from {low:.3} m to {high:.3} m", joints.len());
        assert!((1.7..1.9).contains(&(high - low)), "{file}: {:.3} m tall", high - low);
        assert!(low.abs() < 0.05, "{file}: feet at {low:.3} m");
        // Facing +Z: the toes are in front of the ankles, and the character's left (+X when
        // facing +Z, Y up, right-handed) holds the left hand.
        for side in ["Left", "Right"] {
            let toe = rest_position(&rig, &format!("mixamorig:{side}ToeBase"));
            let foot = rest_position(&rig, &format!("mixamorig:{side}Foot"));
            assert!(
                toe.z > foot.z + 0.05,
                "{file}: {side} toe at z {:.3}, foot at {:.3}",
                toe.z,
                foot.z
            );
        }
        assert!(
            rest_position(&rig, "mixamorig:LeftHand").x > 0.3,
            "{file}: the left hand is not at +X"
        );
        assert!(
            rest_position(&rig, "mixamorig:RightHand").x < -0.3,
            "{file}: the right hand is not at −X"
        );
    }
}

#[test]
fn every_clip_of_every_shared_fbx_plays_to_finite_vertices_near_the_rig() {
    let Some(dir) = shared_rigs() else { return };
    let dir = dir.join("fbx");
    for counted in COUNTED {
        let rig = common::load_rig(&dir, counted.fbx);
        let rest = skinned_vertices(&rig, None, 0.0);
        let extent = rest.iter().map(|p| p.length()).fold(0.0, f64::max);
        for (c, clip) in rig.clips.iter().enumerate() {
            for fraction in [0.0, 0.25, 0.5, 0.75, 1.0] {
                let time = clip.duration * fraction;
                let vertices = skinned_vertices(&rig, Some(c), time);
                assert_eq!(vertices.len(), rest.len());
                // Dancing moves a character around, but not to another place: within ten
                // times the rest pose's reach of the origin.
                let reach = vertices.iter().map(|p| p.length()).fold(0.0, f64::max);
                assert!(
                    vertices.iter().all(|p| p.is_finite()) && reach < 10.0 * extent + 1.0,
                    "{} '{}' at {time} s: reach {reach} m against {extent} m at rest",
                    counted.fbx,
                    clip.name
                );
            }
        }
    }
}
