//! Drawing a comparison: each half of a side-by-side image is a render of its side alone
//! through the shared camera at the active side's clip and time; the overlay of a file with
//! itself is that file drawn with its wireframe (the other side's back edges hidden by the
//! active side's surface); `render --compare` writes such an image.

use crate::common;
use crate::common::gpu;

use crate::common::different_pixels;
use egui_kittest::kittest::Queryable;
use image::RgbaImage;
use rigscope::draw::compare::split_width;
use rigscope::render::{Gpu, OrbitCamera};
use rigscope::rig::Rig;
use rigscope::screenshot::render_view;
use rigscope::viewer::CompareLayout;
use rigscope::viewer::Viewer;
use std::path::Path;
use std::process::Command;

const WIDTH: u32 = 320;
const HEIGHT: u32 = 200;

/// A still viewer of `rig` at `time` of clip `clip` (its rest pose for `None`), without the
/// grid and the skeleton (whose joints a comparison colors by their error).
fn still_viewer(rig: Rig, clip: Option<&str>, time: f32) -> Viewer {
    let clip = clip.map(|name| rig.find_clip(name).unwrap_or_else(|| panic!("no clip {name}")));
    let mut viewer = Viewer::new(rig, None);
    viewer.view.options.grid = false;
    viewer.view.options.skeleton.show = false;
    viewer.hold(clip, time);
    viewer
}

/// `viewer` alone at `width`×`HEIGHT`, through `camera`.
fn single(gpu: &Gpu, mut viewer: Viewer, camera: OrbitCamera, width: u32) -> RgbaImage {
    viewer.view.camera = camera;
    render_view(gpu, &mut viewer, width, HEIGHT).expect("one side renders")
}

fn assert_alike(what: &str, a: &RgbaImage, b: &RgbaImage) {
    let (width, height) = a.dimensions();
    let changed = different_pixels(a, b);
    assert!(
        changed <= (width * height) as usize / 200,
        "{what}: {changed} of {} pixels differ",
        width * height
    );
}

fn half(image: &RgbaImage, x: u32, width: u32) -> RgbaImage {
    image::imageops::crop_imm(image, x, 0, width, image.height()).to_image()
}

#[test]
fn each_half_of_side_by_side_is_its_side_alone_at_the_active_clip_and_time() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let Some(dir) = common::shared_rigs() else { return };
    let original = dir.join("Fox.glb");
    let quantized = dir.join("compressed/Fox.quantize.glb");
    // Run is not the first clip: the other side has to follow the clip by name.
    let mut viewer = still_viewer(common::load_rig(&dir, "Fox.glb"), Some("Run"), 0.4);
    viewer.compare_with(
        common::load_rig(&dir, "compressed/Fox.quantize.glb"),
        Some(quantized.clone()),
        CompareLayout::Side,
    );
    let image = render_view(&gpu, &mut viewer, WIDTH, HEIGHT).expect("the comparison renders");
    assert_eq!(image.dimensions(), (WIDTH, HEIGHT));
    let comparison = viewer.comparison().expect("comparing");
    assert_eq!(comparison.missing_clip(), None);
    let other = comparison.other();
    assert_eq!(other.player().clip, other.rig().find_clip("Run"));
    assert_eq!(other.player().time, 0.4);

    let camera = viewer.view.camera;
    let (left, right) = split_width(WIDTH);
    let alone = |rig: Rig| single(&gpu, still_viewer(rig, Some("Run"), 0.4), camera, left);
    let original_alone = alone(rigscope::rig::load_file(&original).expect("Fox loads"));
    let quantized_alone = alone(rigscope::rig::load_file(&quantized).expect("its copy loads"));
    assert_alike(
        "left half against Fox.glb alone",
        &half(&image, 0, left),
        &original_alone,
    );
    assert_alike(
        "right half against Fox.quantize.glb alone",
        &half(&image, left, right),
        &quantized_alone,
    );
    // The halves are not the same picture twice: a different time moves the fox.
    let later = alone(rigscope::rig::load_file(&original).expect("Fox loads"));
    let mut moved = still_viewer(common::load_rig(&dir, "Fox.glb"), Some("Run"), 0.1);
    moved.view.camera = camera;
    let earlier = render_view(&gpu, &mut moved, left, HEIGHT).expect("renders");
    assert!(different_pixels(&later, &earlier) > (left * HEIGHT) as usize / 100);
}

#[test]
fn a_clip_the_other_file_lacks_leaves_it_in_its_rest_pose_and_says_so() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let Some(dir) = common::shared_rigs() else { return };
    let mut viewer = still_viewer(common::load_rig(&dir, "Fox.glb"), Some("Survey"), 1.5);
    viewer.compare_with(rigscope::rig::open(None).expect("demo rig"), None, CompareLayout::Side);
    let image = render_view(&gpu, &mut viewer, WIDTH, HEIGHT).expect("the comparison renders");
    let comparison = viewer.comparison().expect("comparing");
    assert_eq!(comparison.missing_clip(), Some("Survey"));
    assert_eq!(comparison.other().player().clip, None);
    let (left, right) = split_width(WIDTH);
    let rest = single(
        &gpu,
        still_viewer(rigscope::rig::open(None).expect("demo rig"), None, 0.0),
        viewer.view.camera,
        right,
    );
    assert_alike(
        "right half against the demo rig's rest pose",
        &half(&image, left, right),
        &rest,
    );

    // Stopping the comparison draws the active side alone over the whole width.
    viewer.stop_comparing();
    assert!(viewer.comparison().is_none());
    let alone = render_view(&gpu, &mut viewer, WIDTH, HEIGHT).expect("renders");
    let whole = single(
        &gpu,
        still_viewer(common::load_rig(&dir, "Fox.glb"), Some("Survey"), 1.5),
        viewer.view.camera,
        WIDTH,
    );
    assert_alike("after stopping", &alone, &whole);
}

#[test]
fn the_overlay_of_a_file_with_itself_is_the_file_with_its_wireframe() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let Some(dir) = common::shared_rigs() else { return };
    let mut viewer = still_viewer(common::load_rig(&dir, "Fox.glb"), Some("Walk"), 0.3);
    viewer.compare_with(common::load_rig(&dir, "Fox.glb"), None, CompareLayout::Overlay);
    let overlay = render_view(&gpu, &mut viewer, WIDTH, HEIGHT).expect("the overlay renders");
    let camera = viewer.view.camera;
    let mut wired = still_viewer(common::load_rig(&dir, "Fox.glb"), Some("Walk"), 0.3);
    wired.view.options.wireframe = true;
    let wired = single(&gpu, wired, camera, WIDTH);
    let plain = single(
        &gpu,
        still_viewer(common::load_rig(&dir, "Fox.glb"), Some("Walk"), 0.3),
        camera,
        WIDTH,
    );
    assert_alike(
        "overlay of Fox with itself against Fox with its wireframe",
        &overlay,
        &wired,
    );
    assert!(
        different_pixels(&overlay, &plain) > (WIDTH * HEIGHT) as usize / 100,
        "the other side's wireframe shows over the plain render"
    );
    // The active side's view options hold: the overlay drew the other side's lines only.
    assert!(!viewer.view.options.wireframe);
}

#[test]
fn render_compare_writes_both_sides() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let Some(dir) = common::shared_rigs() else { return };
    let out_dir = common::temp_dir("compare-view");
    let run = |layout: &str, out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_rigscope"))
            .args(["render"])
            .arg(dir.join("Fox.glb"))
            .arg("--compare")
            .arg(dir.join("compressed/Fox.quantize.glb"))
            .args(["--layout", layout, "--size", "320x200", "--clip", "Walk", "--out"])
            .arg(out)
            .output()
            .expect("the rigscope binary runs")
    };
    for layout in ["side", "overlay"] {
        let out = out_dir.join(format!("{layout}.png"));
        let output = run(layout, &out);
        assert!(
            output.status.success(),
            "render --compare --layout {layout} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let image = image::open(&out).expect("the PNG opens");
        assert_eq!((image.width(), image.height()), (320, 200));
    }
    let refused = run("beside", &out_dir.join("refused.png"));
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("overlay"));
}

#[test]
fn file_compare_with_opens_the_other_side_and_the_menu_switches_layout_and_stops() {
    let Some(dir) = common::shared_rigs() else { return };
    let mut viewer = Viewer::new(common::load_rig(&dir, "Fox.glb"), None);
    let mut state = rigscope::ui::UiState::default();
    // A file that cannot be read: no comparison, and the error is the file's.
    let missing = dir.join("no such rig.glb");
    assert!(matches!(
        viewer.compare_with_file(missing.clone()),
        Err(rigscope::rig::RigError::File(_))
    ));
    assert!(rigscope::ui::compare_from_dialog(&mut viewer, &mut state, |_| Some(
        missing
    )));
    assert!(viewer.comparison().is_none());
    // A cancelled dialog does nothing.
    assert!(!rigscope::ui::compare_from_dialog(&mut viewer, &mut state, |_| None));
    let quantized = dir.join("compressed/Fox.quantize.glb");
    assert!(rigscope::ui::compare_from_dialog(&mut viewer, &mut state, |_| Some(
        quantized.clone()
    )));
    let comparison = viewer.comparison().expect("comparing");
    assert_eq!(comparison.other().document().path.as_deref(), Some(quantized.as_path()));
    assert_eq!(comparison.layout, CompareLayout::Side);
    let mut harness = common::main_window(viewer, 1280.0, 800.0);
    // The Compare window asks for the files to be compared; the window's next frame does it.
    harness.step();
    harness.state_mut().0.prepare_frame();
    harness.run();
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Overlay").click();
    harness.run();
    let layout = harness.state().0.comparison().map(|c| c.layout);
    assert_eq!(layout, Some(CompareLayout::Overlay));
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Stop comparing").click();
    harness.run();
    assert!(harness.state().0.comparison().is_none());
}

/// Clicks the entry of the Compare window that reads `text`.
fn click_entry(harness: &mut egui_kittest::Harness<'_, (Viewer, rigscope::ui::UiState)>, text: &str) {
    harness.get_by_label(text).click();
    harness.run();
}

/// `viewer`'s comparison computed at once, and the main window showing it.
fn compared(
    mut viewer: Viewer,
) -> (
    rigscope::compare::RigDiff,
    egui_kittest::Harness<'static, (Viewer, rigscope::ui::UiState)>,
) {
    viewer.ensure_comparison_diff();
    let diff = viewer.comparison().and_then(|c| c.diff()).expect("compared at once");
    let diff = (**diff).clone();
    let mut harness = common::main_window(viewer, 1400.0, 900.0);
    harness.run();
    (diff, harness)
}

#[test]
fn the_compare_window_lists_the_worst_first_and_a_click_shows_it_in_both_views() {
    let Some(dir) = common::shared_rigs() else { return };
    // One vertex loses its weights: the worst vertex, ½ Σ|w| = 0.5 from it.
    let mut changed = common::load_rig(&dir, "Fox.glb");
    let influences = changed.meshes[0].primitives[0].influences.as_mut().expect("skinned");
    influences.weights[0] = [0.0; 4];
    let mut viewer = still_viewer(common::load_rig(&dir, "Fox.glb"), Some("Walk"), 0.0);
    viewer.compare_with(changed, None, CompareLayout::Side);
    let (diff, mut harness) = compared(viewer);
    let worst = diff.weights.changed_vertices[0];
    assert_eq!((worst.a.mesh, worst.a.primitive_index, worst.a.vertex), (0, 0, 0));
    assert!((worst.difference - 0.5).abs() < 1e-6, "{}", worst.difference);
    click_entry(&mut harness, &rigscope::ui::compare::vertex_entry(&worst));
    let viewer = &harness.state().0;
    let marked = |v: &rigscope::compare::VertexRef| rigscope::viewer::VertexRef {
        instance: v.instance,
        primitive: v.primitive_index,
        vertex: v.vertex,
    };
    assert_eq!(viewer.inspected_vertex(), Some(marked(&worst.a)));
    let other = viewer.comparison().expect("comparing").other();
    assert_eq!(other.inspected_vertex(), Some(marked(&worst.b)));

    // Against the gltfpack copy, whose Walk is resampled: the clip entry seeks to its worst
    // time and selects its worst joint.
    let mut viewer = still_viewer(common::load_rig(&dir, "Fox.glb"), Some("Survey"), 0.0);
    let packed = common::load_rig(&dir, "compressed/Fox.gltfpack.glb");
    viewer.compare_with(packed, None, CompareLayout::Overlay);
    let (diff, mut harness) = compared(viewer);
    let walk = diff.clips.iter().find(|c| c.name == "Walk").expect("Walk compared");
    click_entry(&mut harness, &rigscope::ui::compare::clip_entry(walk));
    let viewer = &harness.state().0;
    assert_eq!(viewer.player().clip, viewer.rig().find_clip("Walk"));
    assert_eq!(Some(viewer.player().time), walk.worst_time);
    let joint = viewer.view.selected_joint.map(|n| viewer.rig().nodes[n].name.clone());
    assert_eq!(joint, walk.worst_joint);
}

#[test]
fn the_skeleton_overlay_measures_each_joints_error_against_its_match() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let demo = || rigscope::rig::open(None).expect("demo rig");
    let rig = demo();
    let joints = rig.skins[0].joints.clone();
    let moved = *joints.last().expect("joints");
    let mut other = demo();
    // Both in the rest pose: only the moved joint and those below it are off, by the shift.
    let shift = 0.05;
    other.nodes[moved].rest.translation.x += shift;
    let mut viewer = still_viewer(rig, None, 0.0);
    viewer.view.options.skeleton.show = true;
    viewer.compare_with(other, None, CompareLayout::Overlay);
    render_view(&gpu, &mut viewer, 160, 120).expect("renders");
    let size = viewer.document().rest_bounds.size();
    let errors = viewer.joint_errors().expect("comparing").to_vec();
    let rig = viewer.rig().clone();
    for &joint in &joints {
        let below = rigscope::render::skeleton::is_descendant(&rig, joint, moved) || joint == moved;
        let expected = if below { shift / size } else { 0.0 };
        assert!(
            (errors[joint] - expected).abs() < 1e-4 * expected.max(1.0),
            "{}: {} instead of {expected}",
            rig.nodes[joint].name,
            errors[joint]
        );
    }
}

#[test]
fn a_turned_joint_is_coloured_by_the_larger_of_its_position_and_rotation_error() {
    use glam::{DMat4, DQuat, DVec3};
    use rigscope::render::skeleton::JOINT_ERROR_FULL_SCALE;
    use rigscope::viewer::JOINT_ROTATION_FULL_SCALE_DEGREES;
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let demo = || rigscope::rig::open(None).expect("demo rig");
    let rig = demo();
    let joints = rig.skins[0].joints.clone();
    let turned = joints[1];
    let degrees = 4.0f64;
    let mut other = demo();
    other.nodes[turned].rest.rotation *= glam::Quat::from_rotation_z((degrees as f32).to_radians());
    // Rest world matrices of both rigs in f64.
    let worlds = |rig: &Rig| {
        let mut worlds: Vec<DMat4> = Vec::with_capacity(rig.nodes.len());
        for node in &rig.nodes {
            let rest = node.rest;
            let local = DMat4::from_scale_rotation_translation(
                rest.scale.as_dvec3(),
                DQuat::from_array(rest.rotation.to_array().map(f64::from)).normalize(),
                rest.translation.as_dvec3(),
            );
            let parent = node.parent.map_or(DMat4::IDENTITY, |p| worlds[p]);
            worlds.push(parent * local);
        }
        worlds
    };
    let (mine, theirs) = (worlds(&rig), worlds(&other));
    let mut viewer = still_viewer(rig, None, 0.0);
    viewer.view.options.skeleton.show = true;
    viewer.compare_with(other, None, CompareLayout::Side);
    render_view(&gpu, &mut viewer, 160, 120).expect("renders");
    let size = f64::from(viewer.document().rest_bounds.size());
    let errors = viewer.joint_errors().expect("comparing").to_vec();
    let rig = viewer.rig().clone();
    let mut by_rotation = 0;
    for &joint in &joints {
        let below = rigscope::render::skeleton::is_descendant(&rig, joint, turned);
        let position = DVec3::distance(mine[joint].w_axis.truncate(), theirs[joint].w_axis.truncate()) / size;
        let rotation = if below { degrees } else { 0.0 };
        let as_position = rotation / f64::from(JOINT_ROTATION_FULL_SCALE_DEGREES) * f64::from(JOINT_ERROR_FULL_SCALE);
        by_rotation += usize::from(as_position > position);
        let expected = position.max(as_position);
        assert!(
            (f64::from(errors[joint]) - expected).abs() < 2e-4 * expected.max(0.01),
            "{}: {} instead of {expected} (position {position}, rotation {rotation}°)",
            rig.nodes[joint].name,
            errors[joint]
        );
    }
    assert!(
        by_rotation >= 1,
        "the turned joint itself stays in place: its rotation colours it"
    );
}
