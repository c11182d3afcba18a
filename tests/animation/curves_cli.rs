//! `rigscope inspect` on hand-built clips: the `keys-jump` threshold as a flag, and
//! `--curves --rotation` printing rotation keys and samples as angles.

use crate::common;
use crate::common::gpu;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A glTF file of one node, `Arm`, whose clip `turn` rotates it with `interpolation` through
/// `rotations` (x, y, z, w) at 0 s and 1 s.
fn turning_arm(name: &str, interpolation: &str, rotations: [[f32; 4]; 2]) -> PathBuf {
    let times: [f32; 2] = [0.0, 1.0];
    let mut bin: Vec<u8> = bytemuck::cast_slice(&times).to_vec();
    bin.extend_from_slice(bytemuck::cast_slice(&rotations));
    let document = json!({
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "Arm"}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 8},
            {"buffer": 0, "byteOffset": 8, "byteLength": 32},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0]},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC4"},
        ],
        "animations": [{
            "name": "turn",
            "samplers": [{"input": 0, "output": 1, "interpolation": interpolation}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}],
        }],
    });
    let file = common::temp_dir("curves-cli").join(name);
    std::fs::write(&file, common::gltf_with(document, &bin)).unwrap();
    file
}

fn about_z(degrees: f32) -> [f32; 4] {
    glam::Quat::from_rotation_z(degrees.to_radians()).to_array()
}

fn inspect(file: &Path, extra: &[&str]) -> std::process::Output {
    common::rigscope_with(common::rigscope_command().arg("inspect").arg(file).args(extra))
}

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)))
}

fn has_jump(output: &std::process::Output) -> bool {
    let document = json_of(output);
    document["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "keys-jump")
}

#[test]
fn a_twenty_degree_step_is_a_keys_jump_past_fifteen_degrees_and_not_past_thirty() {
    // A STEP turns all at once: 20° within one frame.
    let file = turning_arm("step20.gltf", "STEP", [about_z(0.0), about_z(20.0)]);
    let at_15 = inspect(&file, &["--json", "--keys-jump-deg", "15"]);
    assert_eq!(at_15.status.code(), Some(0), "an info finding does not fail inspect");
    assert!(has_jump(&at_15));
    let document = json_of(&at_15);
    let jump = (document["findings"].as_array().unwrap().iter())
        .find(|f| f["code"] == "keys-jump")
        .unwrap();
    let message = jump["message"].as_str().unwrap();
    assert!(
        message.contains("more than 15°") && message.contains("by 20.0°"),
        "{message}"
    );
    assert!(!has_jump(&inspect(&file, &["--json", "--keys-jump-deg", "30"])));
    assert!(!has_jump(&inspect(&file, &["--json"])), "the default is 30°");
    // The same turn spread over the second between the keys is 20/30° a frame.
    let linear = turning_arm("linear20.gltf", "LINEAR", [about_z(0.0), about_z(20.0)]);
    assert!(!has_jump(&inspect(&linear, &["--json", "--keys-jump-deg", "15"])));
    assert!(has_jump(&inspect(&linear, &["--json", "--keys-jump-deg", "0.5"])));
    // A threshold that is no angle is refused; --help shows the default.
    assert_eq!(inspect(&file, &["--keys-jump-deg", "0"]).status.code(), Some(2));
    assert_eq!(inspect(&file, &["--keys-jump-deg", "NaN"]).status.code(), Some(2));
    let help = inspect(Path::new("demo"), &["--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--keys-jump-deg <DEGREES>"), "{help}");
    assert!(help.contains("[default: 30]"), "{help}");
}

#[test]
fn curves_print_rotations_as_unwrapped_angles_in_the_view_asked_for() {
    // +170° about z, then +190° stored negated (the other hemisphere) a second later.
    let flipped = about_z(190.0).map(|v| -v);
    let file = turning_arm("flip.gltf", "LINEAR", [about_z(170.0), flipped]);
    let curves = |view: &str| {
        let output = inspect(
            &file,
            &[
                "--curves",
                "--joint",
                "Arm",
                "--json",
                "--samples-per-second",
                "4",
                "--rotation",
                view,
            ],
        );
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        json_of(&output)["channels"][0]["rotation"].clone()
    };
    let numbers = |v: &Value| -> Vec<Vec<f64>> {
        (v.as_array().unwrap().iter())
            .map(|row| row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect())
            .collect()
    };
    // Euler x-y-z: z goes 170, 175, 180, 185, 190 through the flip; x and y stay 0.
    let euler = curves("euler-xyz");
    assert_eq!(euler["view"], "euler-xyz");
    assert_eq!(euler["components"], json!(["x", "y", "z"]));
    assert_eq!(euler["unit"], "degrees");
    for (k, sample) in numbers(&euler["samples"]).iter().enumerate() {
        assert_eq!(sample.len(), 3);
        assert!((sample[2] - (170.0 + 5.0 * k as f64)).abs() < 1e-3, "{k}: {sample:?}");
        assert!(sample[0].abs() < 1e-3 && sample[1].abs() < 1e-3, "{k}: {sample:?}");
    }
    let keys = numbers(&euler["keys"]);
    assert!(
        (keys[0][2] - 170.0).abs() < 1e-3 && (keys[1][2] - 190.0).abs() < 1e-3,
        "{keys:?}"
    );
    // About z: the same angle; in z-y-x order it comes first.
    let about = numbers(&curves("axis-z")["samples"]);
    assert!(
        about
            .iter()
            .enumerate()
            .all(|(k, s)| (s[0] - (170.0 + 5.0 * k as f64)).abs() < 1e-3),
        "{about:?}"
    );
    let zyx = numbers(&curves("euler-zyx")["keys"]);
    assert!((zyx[1][0] - 190.0).abs() < 1e-3, "{zyx:?}");
    // Quaternion components: the keys as stored (normalized on import), the flip's sign
    // change showing.
    let quat = curves("quat");
    assert_eq!(quat["unit"], "quaternion");
    let keys = numbers(&quat["keys"]);
    for (key, stored) in keys.iter().zip([about_z(170.0), flipped]) {
        assert_eq!(key.len(), 4);
        for (got, want) in key.iter().zip(stored) {
            assert!((got - f64::from(want)).abs() < 1e-6, "{key:?} against {stored:?}");
        }
    }
    // Text names the view; an unknown view is refused by the parser.
    let text = inspect(&file, &["--curves", "--joint", "Arm", "--rotation", "euler-yxz"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("euler-yxz"));
    let unknown = inspect(&file, &["--curves", "--joint", "Arm", "--rotation", "euler-abc"]);
    assert_eq!(unknown.status.code(), Some(2));
    // Without --rotation the channels are as before.
    let plain = json_of(&inspect(&file, &["--curves", "--joint", "Arm", "--json"]));
    assert!(plain["channels"][0].get("rotation").is_none());
}

#[test]
fn render_ui_curves_draws_the_window_over_the_view_and_needs_a_joint() {
    let dir = common::temp_dir("curves-render");
    let render = |extra: &[&str], out: &str| {
        common::rigscope_with(
            common::rigscope_command()
                .env(rigscope::settings::CONFIG_DIR_ENV, &dir)
                .args([
                    "render", "demo", "--clip", "Wave", "--time", "0.5", "--ui", "--size", "1280x760",
                ])
                .args(extra)
                .arg("--out")
                .arg(dir.join(out)),
        )
    };
    let refused = render(&["--curves"], "refused.png");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--joint"));
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let without = render(&["--joint", "joint3"], "without.png");
    assert!(without.status.success(), "{}", String::from_utf8_lossy(&without.stderr));
    let with = render(&["--joint", "joint3", "--curves"], "with.png");
    assert!(with.status.success(), "{}", String::from_utf8_lossy(&with.stderr));
    let (without, with) = (
        image::open(dir.join("without.png")).unwrap().to_rgba8(),
        image::open(dir.join("with.png")).unwrap().to_rgba8(),
    );
    // The window lies over the 3D view, between the side panels; the panels are unchanged.
    let differing = |xs: std::ops::Range<u32>, ys: std::ops::Range<u32>| {
        let total = xs.len() * ys.len();
        let changed = ys
            .flat_map(|y| xs.clone().map(move |x| (x, y)))
            .filter(|&(x, y)| without.get_pixel(x, y) != with.get_pixel(x, y))
            .count();
        changed as f64 / total as f64
    };
    let window = differing(320..900, 80..480);
    assert!(window > 0.3, "{window} of the window's area changed");
    let right_panel = differing(1000..1270, 400..700);
    assert!(right_panel < 0.01, "{right_panel} of the right panel changed");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `inspect --curves --json` gives the clip's property tracks with the keys the file holds.
#[test]
fn inspect_curves_lists_the_clips_property_tracks() {
    let (document, bin) = common::property_scene::property_scene();
    let file = common::temp_dir("curves-cli").join("properties.gltf");
    std::fs::write(&file, common::gltf_with(document, &bin)).unwrap();
    let output = inspect(&file, &["--curves", "--joint", "left", "--json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let json = json_of(&output);
    let properties = json["properties"].as_array().unwrap();
    assert_eq!(properties.len(), 6, "{properties:?}");
    let base = &properties[0];
    assert_eq!(base["pointer"], "/materials/0/pbrMetallicRoughness/baseColorFactor");
    assert_eq!(base["interpolation"], "LINEAR");
    let keys = common::property_scene::BASE_COLOR_KEYS;
    assert_eq!(base["times"], json!(keys.map(|k| k.0)));
    assert_eq!(base["values"], json!(keys.map(|k| k.1)));
    let text = inspect(&file, &["--curves", "--joint", "left"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("property /extensions/KHR_lights_punctual/lights/0/intensity (linear, 2 keys)"),
        "{text}"
    );
}
