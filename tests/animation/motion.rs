//! Clip motion: files with a skeleton and clips but no mesh are drawn as bones, framed over
//! their clips, and reported as having no mesh.

use crate::common;
use crate::common::gpu;

use egui_kittest::kittest::Queryable;
use glam::{Vec3, Vec4};
use image::RgbaImage;
use rigscope::rig::Rig;
use serde_json::json;

/// Rest translations (relative to the parent) of a small skeleton without a mesh: hips 1 above
/// the ground, a spine and head above them, a leg and foot below.
const BONES: [(&str, Option<usize>, [f32; 3]); 5] = [
    ("Hips", None, [0.0, 1.0, 0.0]),
    ("Spine", Some(0), [0.0, 0.5, 0.0]),
    ("Head", Some(1), [0.0, 0.4, 0.0]),
    ("LeftLeg", Some(0), [0.2, -0.5, 0.0]),
    ("LeftFoot", Some(3), [0.0, -0.5, 0.0]),
];
/// The clip moves the hips by this much along x over one second.
const WALK: f32 = 1.0;

/// A glTF file of [`BONES`] and one clip, `walk`, that translates the hips linearly from their
/// rest place by [`WALK`] along x in one second.
fn skeleton_only_gltf() -> Vec<u8> {
    let times: [f32; 2] = [0.0, 1.0];
    let hips = Vec3::from(BONES[0].2);
    let positions: [[f32; 3]; 2] = [hips.to_array(), (hips + Vec3::X * WALK).to_array()];
    let mut bin: Vec<u8> = bytemuck::cast_slice(&times).to_vec();
    bin.extend_from_slice(bytemuck::cast_slice(&positions));
    let nodes: Vec<serde_json::Value> = BONES
        .iter()
        .enumerate()
        .map(|(i, (name, _, t))| {
            let children: Vec<usize> = (0..BONES.len()).filter(|&c| BONES[c].1 == Some(i)).collect();
            let mut node = json!({"name": name, "translation": t});
            if !children.is_empty() {
                node["children"] = json!(children);
            }
            node
        })
        .collect();
    let document = json!({
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": nodes,
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 8},
            {"buffer": 0, "byteOffset": 8, "byteLength": 24},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0]},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC3"},
        ],
        "animations": [{
            "name": "walk",
            "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}],
        }],
    });
    common::gltf_with(document, &bin)
}

fn skeleton_only_rig() -> Rig {
    rigscope::rig::load_slice(&skeleton_only_gltf(), None, "skeleton.gltf").expect("the skeleton-only file loads")
}

/// World positions of [`BONES`] with the hips moved `shift` along x, summed down the chain by hand.
fn bone_positions(shift: f32) -> Vec<Vec3> {
    let mut world: Vec<Vec3> = Vec::new();
    for (_, parent, t) in BONES {
        let base = parent.map_or(Vec3::X * shift, |p| world[p]);
        world.push(base + Vec3::from(t));
    }
    world
}

#[test]
fn a_skeleton_only_file_is_reported_as_having_no_mesh() {
    let rig = skeleton_only_rig();
    assert!(rig.instances.is_empty());
    let report = rigscope::report::RigReport::new(&rig);
    let finding = report
        .findings
        .iter()
        .find(|f| f.code == rigscope::report::FindingCode::NoMesh)
        .expect("a no-mesh finding");
    assert!(finding.message.contains("5 of 5 nodes"), "{}", finding.message);
    // A file with a mesh has no such finding.
    let demo = rigscope::report::RigReport::new(&common::load_demo());
    assert!(
        demo.findings
            .iter()
            .all(|f| f.code != rigscope::report::FindingCode::NoMesh)
    );
}

#[test]
fn a_skeleton_only_file_is_framed_over_its_clip_with_the_overlay_on() {
    let viewer = rigscope::viewer::Viewer::new(skeleton_only_rig(), None);
    assert!(
        viewer.view.options.skeleton.show,
        "the skeleton overlay is on without a mesh"
    );
    let bounds = viewer.document().rest_bounds;
    // Every bone at rest and at the clip's end: the hips' walk stretches the bounds along x.
    let (mut min, mut max) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for p in bone_positions(0.0).into_iter().chain(bone_positions(WALK)) {
        (min, max) = (min.min(p), max.max(p));
    }
    assert!(
        (bounds.min - min).abs().max_element() < 1e-5,
        "{bounds:?} against {min} {max}"
    );
    assert!(
        (bounds.max - max).abs().max_element() < 1e-5,
        "{bounds:?} against {min} {max}"
    );
    assert!(
        viewer.rig().hierarchy().bones.iter().all(|&b| b),
        "every node of the chain is a bone"
    );
}

/// Whether some pixel within `radius` of (`x`, `y`) differs from `background`.
fn drawn_near(image: &RgbaImage, x: f32, y: f32, radius: i32, background: &image::Rgba<u8>) -> bool {
    let (cx, cy) = (x.round() as i32, y.round() as i32);
    (-radius..=radius).any(|dy| {
        (-radius..=radius).any(|dx| {
            let (px, py) = (cx + dx, cy + dy);
            px >= 0
                && py >= 0
                && (px as u32) < image.width()
                && (py as u32) < image.height()
                && image
                    .get_pixel(px as u32, py as u32)
                    .0
                    .iter()
                    .zip(background.0)
                    .any(|(a, b)| a.abs_diff(b) > 24)
        })
    })
}

/// Width and height of the pictures the pixel checks render.
const SIDE: u32 = 200;

/// Where a world point lands in a [`SIDE`] × [`SIDE`] picture of `viewer`, in pixels from the
/// top left.
fn projector(viewer: &rigscope::viewer::Viewer) -> impl Fn(Vec3) -> (f32, f32) + use<> {
    let view_projection = viewer.view.camera.view_projection(1.0);
    move |p: Vec3| {
        let clip = view_projection * Vec4::from((p, 1.0));
        let ndc = clip.truncate() / clip.w;
        ((ndc.x + 1.0) * 0.5 * SIDE as f32, (1.0 - ndc.y) * 0.5 * SIDE as f32)
    }
}

#[test]
fn a_skeleton_only_file_draws_its_bones_where_the_joints_project() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = rigscope::viewer::Viewer::new(skeleton_only_rig(), None);
    viewer.view.options.grid = false;
    viewer.set_playing(false);
    viewer.seek(0.5);
    viewer.mark_dirty();
    let (width, height) = (SIDE, SIDE);
    let image = rigscope::screenshot::render_view(&gpu, &mut viewer, width, height).unwrap();
    let background = *image.get_pixel(0, 0);
    let to_pixel = projector(&viewer);
    for (i, p) in bone_positions(WALK * 0.5).into_iter().enumerate() {
        let (x, y) = to_pixel(p);
        assert!(
            (0.0..width as f32).contains(&x) && (0.0..height as f32).contains(&y),
            "{} projects into the view: ({x}, {y})",
            BONES[i].0
        );
        assert!(
            drawn_near(&image, x, y, 2, &background),
            "{} is drawn at ({x:.1}, {y:.1})",
            BONES[i].0
        );
    }
    // Framed over the clip: the hips at either end of the walk are inside the picture too.
    for shift in [0.0, WALK] {
        let (x, y) = to_pixel(bone_positions(shift)[0]);
        assert!(
            (0.0..width as f32).contains(&x) && (0.0..height as f32).contains(&y),
            "hips at {shift}: ({x}, {y})"
        );
    }
    // The pixels are the overlay's: hidden, nothing is drawn there.
    viewer.view.options.skeleton.show = false;
    let hidden = rigscope::screenshot::render_view(&gpu, &mut viewer, width, height).unwrap();
    for p in bone_positions(WALK * 0.5) {
        let (x, y) = to_pixel(p);
        assert!(
            !drawn_near(&hidden, x, y, 2, &background),
            "nothing at ({x:.1}, {y:.1}) without the overlay"
        );
    }
}

#[test]
fn rigscope_render_draws_a_skeleton_only_file() {
    let dir = common::temp_dir("motion-render");
    let file = dir.join("skeleton.gltf");
    std::fs::write(&file, skeleton_only_gltf()).unwrap();
    let out = dir.join("skeleton.png");
    let output = common::rigscope_with(
        common::rigscope_command()
            .args([
                "render",
                file.to_str().unwrap(),
                "--size",
                "160x120",
                "--no-grid",
                "--out",
            ])
            .arg(&out),
    );
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let image = image::open(&out).unwrap().to_rgba8();
    let background = *image.get_pixel(0, 0);
    let drawn = image
        .pixels()
        .filter(|p| p.0.iter().zip(background.0).any(|(a, b)| a.abs_diff(b) > 24))
        .count();
    assert!(drawn > 50, "the bones are drawn: {drawn} pixels");
}

fn audit_motion(file: &std::path::Path, extra: &[&str]) -> std::process::Output {
    common::rigscope_with(
        common::rigscope_command()
            .args(["audit", file.to_str().unwrap(), "--motion", "--json"])
            .args(extra),
    )
}

#[test]
fn audit_motion_reports_the_skeleton_only_walk_as_json_with_exit_statuses() {
    let dir = common::temp_dir("motion-audit");
    let file = dir.join("skeleton.gltf");
    std::fs::write(&file, skeleton_only_gltf()).unwrap();
    let output = audit_motion(&file, &[]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    // The bones span 0 to 1.9 in height at rest; the rigid leg's foot rides along with the hips,
    // so its one contact (the whole clip, on the ground) slides the whole walk.
    let height = 1.9;
    assert!((document["rig_height"].as_f64().unwrap() - height).abs() < 1e-5);
    let clip = &document["clips"][0];
    assert_eq!(clip["clip"], "walk");
    assert_eq!(clip["loops"], true);
    assert!(
        clip["seam_position_error"].as_f64().unwrap() < 1e-5,
        "the walk's travel is taken out"
    );
    assert!(clip["seam_rotation_error_deg"].as_f64().unwrap() < 1e-3);
    let foot = &clip["feet"][0];
    assert_eq!(foot["joint"], "LeftFoot");
    assert_eq!(foot["contacts"].as_array().unwrap().len(), 1);
    let walk = (WALK as f64) / height;
    assert!((foot["max_slide"].as_f64().unwrap() - walk).abs() < 1e-5, "{foot}");
    assert!((foot["worst_time"].as_f64().unwrap() - 1.0).abs() < 1e-5);
    let root = &clip["root"];
    assert_eq!(root["in_place"], false);
    assert!(
        (root["distance"].as_f64().unwrap() - walk).abs() < 1e-5
            && (root["speed"].as_f64().unwrap() - walk).abs() < 1e-5
    );
    assert_eq!(document["passed"], false);
    // Within a looser slide limit it passes; a foot that is not there is refused.
    assert_eq!(audit_motion(&file, &["--max-slide", "0.6"]).status.code(), Some(0));
    let unknown = audit_motion(&file, &["--foot", "Nope"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no node named 'Nope'"));
    assert_eq!(audit_motion(&file, &["--fps", "0"]).status.code(), Some(2));
}

/// [`BONES`] with one rotation channel on Spine: +170° about z at 0 s, then +190° stored as its
/// negation (the opposite hemisphere) at 1 s.
fn flipped_spine_gltf() -> (Vec<u8>, [[f32; 4]; 2]) {
    let q170 = glam::Quat::from_rotation_z(170f32.to_radians()).to_array();
    let q190 = (-glam::Quat::from_rotation_z(190f32.to_radians())).to_array();
    let rotations = [q170, q190];
    let times: [f32; 2] = [0.0, 1.0];
    let mut bin: Vec<u8> = bytemuck::cast_slice(&times).to_vec();
    bin.extend_from_slice(bytemuck::cast_slice(&rotations));
    let mut document: serde_json::Value = serde_json::from_slice(&skeleton_only_gltf()).unwrap();
    document["bufferViews"] = json!([
        {"buffer": 0, "byteOffset": 0, "byteLength": 8},
        {"buffer": 0, "byteOffset": 8, "byteLength": 32},
    ]);
    document["accessors"][1] = json!({"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC4"});
    document["animations"][0]["channels"][0]["target"] = json!({"node": 1, "path": "rotation"});
    (common::gltf_with(document, &bin), rotations)
}

#[test]
fn inspect_curves_prints_the_keys_and_samples_and_the_report_finds_the_flip() {
    let (gltf, rotations) = flipped_spine_gltf();
    let rig = rigscope::rig::load_slice(&gltf, None, "flip.gltf").unwrap();
    let report = rigscope::report::RigReport::new(&rig);
    let flip = report
        .findings
        .iter()
        .find(|f| f.code == rigscope::report::FindingCode::QuaternionHemisphereFlip)
        .expect("the flip is reported");
    assert!(flip.message.contains("key 1"), "{}", flip.message);
    let dir = common::temp_dir("motion-curves");
    let file = dir.join("flip.gltf");
    std::fs::write(&file, &gltf).unwrap();
    let inspect = |extra: &[&str]| {
        common::rigscope_with(
            common::rigscope_command()
                .args(["inspect", file.to_str().unwrap(), "--curves", "--json"])
                .args(extra),
        )
    };
    let output = inspect(&["--joint", "Spine", "--clip", "walk", "--samples-per-second", "4"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let channel = &document["channels"][0];
    assert_eq!(channel["property"], "rotation");
    assert_eq!(channel["interpolation"], "LINEAR");
    assert_eq!(channel["hemisphere_flips"], json!([1]));
    for (k, key) in channel["keys"].as_array().unwrap().iter().enumerate() {
        assert_eq!(key["time"].as_f64().unwrap(), k as f64);
        let value: Vec<f32> = key["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        assert_eq!(value, rotations[k]);
    }
    // Five samples a quarter second apart, continuous through 180°: 170, 175, 180, 185, 190.
    let samples = channel["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 5);
    for (k, sample) in samples.iter().enumerate() {
        let v: Vec<f32> = sample["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let q = glam::Quat::from_xyzw(v[0], v[1], v[2], v[3]);
        let expected = glam::Quat::from_rotation_z((170.0 + 5.0 * k as f32).to_radians());
        assert!(q.dot(expected).abs() > 1.0 - 1e-6, "sample {k}: {q}");
    }
    // A joint the clip leaves alone has no channels; an unknown one is refused.
    let still = inspect(&["--joint", "Head"]);
    let document: serde_json::Value = serde_json::from_slice(&still.stdout).unwrap();
    assert_eq!(document["channels"], json!([]));
    assert_eq!(inspect(&["--joint", "Nope"]).status.code(), Some(2));
    assert_eq!(inspect(&["--joint", "Spine", "--clip", "nope"]).status.code(), Some(2));
}

#[test]
fn a_joint_trail_follows_the_joint_at_every_frame_and_is_drawn_where_it_projects() {
    let mut viewer = rigscope::viewer::Viewer::new(skeleton_only_rig(), None);
    let head = viewer.rig().find_node("Head").unwrap();
    viewer.edit_pose_parts(|parts| parts.root_motion.trail_joint = Some(head));
    viewer.set_playing(false);
    viewer.seek(0.5);
    viewer.mark_dirty();
    viewer.pose();
    // One point per frame of the 1 s clip: the head carried 1/30 along x each frame.
    let points = viewer.animation().trail.points.clone();
    assert_eq!(points.len(), 31);
    for (k, p) in points.iter().enumerate() {
        let expected = bone_positions(WALK * k as f32 / 30.0)[2];
        assert!((*p - expected).length() < 1e-5, "frame {k}: {p} against {expected}");
    }
    assert!(!viewer.animation().trail.on_ground);
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    viewer.view.options.grid = false;
    viewer.view.options.skeleton.show = false;
    let (width, height) = (SIDE, SIDE);
    let image = rigscope::screenshot::render_view(&gpu, &mut viewer, width, height).unwrap();
    let background = *image.get_pixel(0, 0);
    let to_pixel = projector(&viewer);
    for p in [points[0], points[15], points[30]] {
        let (x, y) = to_pixel(p);
        assert!(
            drawn_near(&image, x, y, 2, &background),
            "the trail is drawn at ({x:.1}, {y:.1})"
        );
    }
    viewer.edit_pose_parts(|parts| parts.root_motion.trail_joint = None);
    viewer.mark_dirty();
    let without = rigscope::screenshot::render_view(&gpu, &mut viewer, width, height).unwrap();
    let (x, y) = to_pixel(points[0]);
    assert!(
        !drawn_near(&without, x, y, 2, &background),
        "nothing there without the trail"
    );
}

#[test]
fn the_layers_panel_turns_the_selected_joints_trail_on_and_off() {
    let mut viewer = rigscope::viewer::Viewer::new(skeleton_only_rig(), None);
    let head = viewer.rig().find_node("Head").unwrap();
    viewer.view.selected_joint = Some(head);
    let mut harness = egui_kittest::Harness::builder()
        .with_size(egui::vec2(500.0, 900.0))
        .build_ui_state(
            |ui, viewer: &mut rigscope::viewer::Viewer| rigscope::ui::layers::layers_panel(ui, viewer),
            viewer,
        );
    harness
        .get_by_label("Trail of the selected joint (every frame)")
        .click();
    harness.run();
    assert_eq!(harness.state().animation().root_motion.trail_joint, Some(head));
    harness
        .get_by_label("Trail of the selected joint (every frame)")
        .click();
    harness.run();
    assert_eq!(harness.state().animation().root_motion.trail_joint, None);
}

#[test]
fn the_audit_windows_motion_tab_shows_each_clips_figures() {
    let viewer = rigscope::viewer::Viewer::new(skeleton_only_rig(), None);
    let mut harness = common::main_window(viewer, 1400.0, 1000.0);
    harness.run();
    harness.key_press(egui::Key::A);
    harness.run();
    assert!(harness.state().1.audit.open);
    harness.get_by_label("Motion").click();
    harness.run();
    let (_, report) = harness
        .state()
        .1
        .audit
        .motion
        .as_ref()
        .expect("the tab checked the clips");
    // The rigid leg's foot slides the whole walk: 1 in a rig 1.9 high, past the limit.
    let slide = report.clips[0].feet[0].max_slide;
    assert!((slide - WALK / 1.9).abs() < 1e-5, "{slide}");
    harness.get_by_label(&format!("{slide:.4} LeftFoot"));
    harness.get_by_label("walk");
    // The rest pose lines: no arms in this skeleton, and no skin to have a bind pose.
    harness.get_by_label("rest pose: no upper arms found by name");
    harness.get_by_label("rest vs bind pose: no skin, so no bind pose");
}

#[test]
fn a_break_planted_in_soldiers_spine_is_named_at_the_spine() {
    let Some(corpus) = common::shared_folder("corpus") else {
        return;
    };
    let mut soldier = common::load_rig(&corpus.join("rigs"), "Soldier.glb");
    let walk = soldier.find_clip("Walk").expect("Soldier has a Walk");
    let spine = (soldier.nodes.iter())
        .position(|n| n.name.ends_with("Spine1"))
        .expect("Soldier has a Spine1");
    let channel = (soldier.clips[walk].channels.iter_mut())
        .find(|c| c.node == spine && c.property == rigscope::rig::Property::Rotation)
        .expect("Walk turns Spine1");
    let last = channel.values.last_mut().unwrap();
    *last = glam::Vec4::from(glam::Quat::from_vec4(*last) * glam::Quat::from_rotation_x(30f32.to_radians()));
    let feet = rigscope::motion::feet_by_name(&soldier);
    let report = rigscope::motion::check_motion(&soldier, &feet, &rigscope::motion::MotionOptions::default());
    let clip = &report.clips[walk];
    assert!(clip.seam_rotation_error_deg > 25.0, "{clip:?}");
    assert!(
        clip.seam_source_joint.as_deref().is_some_and(|j| j.ends_with("Spine1")),
        "the break is named at {:?} (worst in the world: {:?})",
        clip.seam_source_joint,
        clip.seam_worst_joint
    );
    assert!((clip.seam_source_rotation_deg - 30.0).abs() < 1.0, "{clip:?}");
}
