//! No allocation in the per-frame CPU work once a rig is loaded: a counting global allocator
//! watches 100 frames of advancing the player, evaluating the pose (clip, layers, hand-made
//! overrides, palettes), skinning on the CPU with LBS and with DQS, building the skeleton
//! overlay's lines and recording the frame's timings.

use crate::common;

use glam::Vec3;
use rigscope::anim::JointOverride;
use rigscope::render::SkeletonOptions;
use rigscope::render::skeleton::{LineVertex, VERTICES_PER_JOINT, skeleton_lines};
use rigscope::rig::Rig;
use rigscope::skin::{SkinningMethod, SkinningPath};
use rigscope::timings::FrameTimings;
use rigscope::viewer::Viewer;

/// Allocations made by `f` on this thread.
fn allocations_in(f: impl FnOnce()) -> usize {
    common::counting::watch(f).1.count
}

/// One frame of the viewer's CPU work; `lines` is the skeleton overlay's reused buffer.
fn frame(viewer: &mut Viewer, is_joint: &[bool], lines: &mut Vec<LineVertex>) {
    viewer.advance(1.0 / 60.0);
    let mut timings = FrameTimings::default();
    timings.record_stages(viewer.prepare_frame());
    let options = SkeletonOptions {
        show: true,
        axes: true,
        ..SkeletonOptions::default()
    };
    skeleton_lines(
        viewer.rig(),
        is_joint,
        &viewer.last_pose().worlds,
        viewer.view.selected_joint,
        None,
        &options,
        0.01,
        lines,
    );
    viewer.diagnostics.timings.record(timings);
}

fn check(name: &str, rig: Rig) {
    check_allowing(name, rig, 0);
}

/// Work handed from the calling thread to rayon's pool goes through its queue, which takes a
/// new block of room every 63 hand-overs: that many frames share one allocation.
const FRAMES_PER_QUEUE_BLOCK: usize = 63;

/// Held by each check: the tests of this file run on threads of their own but share rayon's
/// pool, and another test's hand-overs fill the queue's blocks too, so a watched thread could
/// meet more new blocks than its own hand-overs fill.
static ONE_CHECK_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// [`check`], allowing `allowed` allocations in the 100 frames.
fn check_allowing(name: &str, rig: Rig, allowed: usize) {
    let _alone = ONE_CHECK_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut viewer = Viewer::new(rig, None);
    viewer.set_playing(true);
    viewer.set_looping(true);
    // Bend a few joints by hand, as a user does.
    let joints: Vec<usize> = viewer
        .rig()
        .skins
        .iter()
        .flat_map(|s| s.joints.iter().copied())
        .collect();
    for &node in joints.iter().step_by(3) {
        let bend = JointOverride {
            rotation: rigscope::anim::euler_degrees_to_rotation(Vec3::new(10.0, -5.0, 20.0)),
            translation: Vec3::new(0.0, 0.01, 0.0),
            scale: 1.05,
        };
        viewer.set_override(node, bend);
    }
    let is_joint = viewer.rig().hierarchy().is_joint.clone();
    let mut lines = Vec::with_capacity(is_joint.len() * VERTICES_PER_JOINT);
    assert!(
        viewer.rig().vertex_count() > 0 && !joints.is_empty(),
        "{name}: the rig must be skinned for this test to mean anything"
    );
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs, SkinningMethod::Blended] {
        viewer.set_skinning(SkinningPath::Cpu, method);
        if method == SkinningMethod::Blended {
            // A DQS mask on a joint halfway down the list, so that some vertices blend.
            viewer.set_dqs_mask(vec![joints[joints.len() / 2]]);
            assert!(viewer.dqs_blend().any(), "{name}: the mask blends some vertices");
        }
        // The first frame may size what is sized lazily; every later one must not allocate.
        frame(&mut viewer, &is_joint, &mut lines);
        let before = viewer.skin_on_cpu().meshes.clone();
        let count = allocations_in(|| {
            for _ in 0..100 {
                frame(&mut viewer, &is_joint, &mut lines);
            }
        });
        assert!(
            count <= allowed,
            "{name}, {method:?}: 100 frames allocated {count} times"
        );
        assert!(!lines.is_empty(), "{name}: the skeleton overlay has lines");
        let moved = viewer
            .skin_on_cpu()
            .meshes
            .iter()
            .flatten()
            .zip(before.iter().flatten())
            .any(|(a, b)| a.positions != b.positions);
        assert!(
            moved || viewer.rig().clips.is_empty(),
            "{name}, {method:?}: the frames really skinned a moving pose"
        );
    }
}

#[test]
fn the_counter_sees_allocations() {
    let count = allocations_in(|| {
        let v: Vec<u64> = Vec::with_capacity(std::hint::black_box(16));
        std::hint::black_box(&v);
    });
    assert_eq!(count, 1);
}

#[test]
fn a_hundred_frames_of_the_demo_rig_allocate_nothing() {
    check("demo.glb", common::load_demo());
}

#[test]
fn a_hundred_frames_of_fox_allocate_nothing() {
    let Some(dir) = common::shared_rigs() else { return };
    check("Fox.glb", common::load_rig(&dir, "Fox.glb"));
}

#[test]
fn a_hundred_frames_of_a_large_generated_rig_allocate_nothing() {
    check("synthetic tube", rigscope::synthetic::skinned_tube(20_000, 64));
}

#[test]
fn a_hundred_frames_of_a_face_with_many_morph_targets_allocate_nothing() {
    let mut face = rigscope::synthetic::skinned_tube(20_000, 64);
    rigscope::synthetic::add_face_targets(&mut face, 200, 5);
    check("synthetic face", face);
}

/// A mesh big enough for its skinning to be split over two threads (the calling thread is
/// watched): nothing per frame, only the blocks of rayon's queue, one hand-over a frame.
#[test]
fn a_mesh_skinned_on_two_threads_allocates_nothing_per_frame() {
    let tube = rigscope::synthetic::skinned_tube(70_000, 64);
    check_allowing("big synthetic tube", tube, 100usize.div_ceil(FRAMES_PER_QUEUE_BLOCK));
}

/// A face big enough for its morph and skinning to be split over two threads (with linear
/// blending, each half skinned right after its morph; the calling thread is watched): nothing
/// per frame, only the blocks of rayon's queue that the hand-overs to the other thread fill, at
/// most two a frame (the morph's and the blend's).
#[test]
fn a_face_morphed_and_skinned_on_two_threads_allocates_nothing_per_frame() {
    let mut face = rigscope::synthetic::skinned_tube(70_000, 64);
    rigscope::synthetic::add_face_targets(&mut face, 60, 5);
    check_allowing(
        "big synthetic face",
        face,
        (2 * 100usize).div_ceil(FRAMES_PER_QUEUE_BLOCK),
    );
}

/// Sampling a clip's property tracks (material factors, a texture transform, a node's
/// visibility, a light) with the pose allocates nothing once its buffers are made.
#[test]
fn evaluating_animated_properties_allocates_nothing() {
    let (document, bin) = common::property_scene::property_scene();
    let rig = rigscope::rig::load_slice(&common::gltf_with(document, &bin), None, "properties.gltf").unwrap();
    assert_eq!(rig.facts.property_tracks.len(), 6);
    let mut pose = rigscope::anim::PoseBuffers::new(&rig);
    pose.evaluate(&rig, Some(0), 0.0);
    let count = allocations_in(|| {
        for frame in 0..100 {
            pose.evaluate(&rig, Some(0), frame as f32 / 60.0);
        }
    });
    assert_eq!(count, 0, "100 evaluations allocated {count} times");
    assert!(
        pose.properties.is_hidden(rig.find_node("right").unwrap()),
        "the last frame hides the node"
    );
}
