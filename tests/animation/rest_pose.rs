//! `audit --motion`'s rest and bind pose checks on real rigs: the upper arms' angles against
//! ones worked out in f64 from the file's node transforms, and the pose named from them.

use crate::common;
use crate::common::gpu;

use glam::{DMat4, DQuat, DVec3};
use serde_json::Value;

fn audit_motion_json(file: &std::path::Path) -> Value {
    let output =
        common::rigscope_with(common::rigscope_command().args(["audit", file.to_str().unwrap(), "--motion", "--json"]));
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Every glTF node's world matrix at rest, from the JSON alone, in f64.
fn json_rest_worlds(json: &Value) -> Vec<DMat4> {
    let nodes = common::array(json, "nodes");
    let mut parent = vec![None; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for child in common::array(node, "children") {
            parent[common::index(child, "child")] = Some(i);
        }
    }
    let local = |i: usize| {
        let (t, r, s) = common::json_rest_trs(&nodes[i]);
        DMat4::from_scale_rotation_translation(DVec3::from(s), DQuat::from_array(r).normalize(), DVec3::from(t))
    };
    (0..nodes.len())
        .map(|i| {
            let mut world = local(i);
            let mut at = parent[i];
            while let Some(p) = at {
                world = local(p) * world;
                at = parent[p];
            }
            world
        })
        .collect()
}

fn node_named(json: &Value, name: &str) -> usize {
    let found: Vec<usize> = (0..common::array(json, "nodes").len())
        .filter(|&i| common::json_node_name(json, i) == name)
        .collect();
    assert_eq!(found.len(), 1, "one node named {name}");
    found[0]
}

#[test]
fn upper_arm_angles_match_the_files_node_transforms_and_name_the_pose() {
    let Some(dir) = common::shared_folder("rigs/real") else {
        return;
    };
    for (file, expected_arms) in [
        ("Xbot.glb", ["mixamorig:LeftArm", "mixamorig:RightArm"]),
        ("RobotExpressive.glb", ["UpperArm.L", "UpperArm.R"]),
    ] {
        let path = dir.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let json: Value = serde_json::from_slice(common::split_glb(&bytes).0).unwrap();
        let worlds = json_rest_worlds(&json);
        let report = audit_motion_json(&path);
        let rest_pose = &report["rest_pose"];
        let arms = rest_pose["arms"].as_array().unwrap();
        let names: Vec<&str> = arms.iter().map(|a| a["joint"].as_str().unwrap()).collect();
        assert_eq!(names, expected_arms, "{file}");
        let mut angles = Vec::new();
        for arm in arms {
            let at = |key: &str| worlds[node_named(&json, arm[key].as_str().unwrap())].w_axis.truncate();
            let d = at("elbow") - at("joint");
            let degrees = (-d.y).atan2(DVec3::new(d.x, 0.0, d.z).length()).to_degrees();
            let reported = arm["rest_deg"].as_f64().unwrap();
            assert!((reported - degrees).abs() < 0.01, "{file} {arm}: {degrees}");
            angles.push(degrees);
        }
        // T-pose within 15° of the horizontal, A-pose lowered by 15° to 60°.
        let pose = if angles.iter().all(|a| a.abs() <= 15.0) {
            "t-pose"
        } else if angles.iter().all(|a| *a > 15.0 && *a <= 60.0) {
            "a-pose"
        } else {
            "neither"
        };
        assert_eq!(rest_pose["arm_pose"], pose, "{file}: {angles:?}");
        let position = rest_pose["bind_position_error"].as_f64().unwrap();
        let joints = rest_pose["joints"].as_array().unwrap();
        let largest = joints
            .iter()
            .map(|j| j["position"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(position, largest, "{file}: the worst joint's figure is the largest");
    }
}

/// Whether a pixel within `radius` of (`x`, `y`) is the bind-pose skeleton's green.
fn green_near(image: &image::RgbaImage, x: f32, y: f32, radius: i32) -> bool {
    let (cx, cy) = (x.round() as i32, y.round() as i32);
    (-radius..=radius).any(|dy| {
        (-radius..=radius).any(|dx| {
            let (px, py) = (cx + dx, cy + dy);
            let inside = px >= 0 && py >= 0 && (px as u32) < image.width() && (py as u32) < image.height();
            inside && {
                let [r, g, b, _] = image.get_pixel(px as u32, py as u32).0;
                g > 150 && g > r.saturating_add(60) && g > b.saturating_add(60)
            }
        })
    })
}

#[test]
fn the_bind_pose_skeleton_is_drawn_where_the_inverted_inverse_bind_matrices_put_the_joints() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let rig = common::load_demo();
    // The joints' bind places, straight from the file's matrices.
    let skin = &rig.skins[0];
    let places: Vec<glam::Vec3> = skin
        .inverse_binds
        .iter()
        .map(|m| m.inverse().w_axis.truncate())
        .collect();
    let mut viewer = rigscope::viewer::Viewer::new(rig, None);
    viewer.view.options.grid = false;
    viewer.view.options.skeleton.show = false;
    viewer.set_playing(false);
    // Bent well away from the bind pose, so that the green is not the current skeleton's.
    viewer.seek(0.5);
    viewer.view.options.bind_skeleton = true;
    viewer.mark_dirty();
    let side = 240;
    let image = rigscope::screenshot::render_view(&gpu, &mut viewer, side, side).unwrap();
    let view_projection = viewer.view.camera.view_projection(1.0);
    let to_pixel = |p: glam::Vec3| {
        let clip = view_projection * p.extend(1.0);
        let ndc = clip.truncate() / clip.w;
        ((ndc.x + 1.0) * 0.5 * side as f32, (1.0 - ndc.y) * 0.5 * side as f32)
    };
    for (j, p) in places.iter().enumerate() {
        let (x, y) = to_pixel(*p);
        assert!(green_near(&image, x, y, 2), "bind joint {j} at ({x:.1}, {y:.1})");
    }
    viewer.view.options.bind_skeleton = false;
    viewer.mark_dirty();
    let without = rigscope::screenshot::render_view(&gpu, &mut viewer, side, side).unwrap();
    for p in &places {
        let (x, y) = to_pixel(*p);
        assert!(
            !green_near(&without, x, y, 2),
            "no green at ({x:.1}, {y:.1}) without it"
        );
    }
}

#[test]
fn rigscope_render_draws_the_bind_pose_skeleton() {
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let dir = common::temp_dir("bind-skeleton");
    let out = dir.join("bind.png");
    let render = |extra: &[&str]| {
        let output = common::rigscope_with(
            common::rigscope_command()
                .args([
                    "render",
                    "demo",
                    "--time",
                    "0.5",
                    "--size",
                    "160x120",
                    "--no-grid",
                    "--out",
                ])
                .arg(&out)
                .args(extra),
        );
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        image::open(&out).unwrap().to_rgba8()
    };
    let green = |image: &image::RgbaImage| {
        image
            .pixels()
            .filter(|p| p.0[1] > 150 && p.0[1] > p.0[0].saturating_add(60) && p.0[1] > p.0[2].saturating_add(60))
            .count()
    };
    assert_eq!(green(&render(&[])), 0);
    assert!(green(&render(&["--bind-skeleton"])) > 20);
}
