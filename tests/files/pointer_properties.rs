//! KHR_animation_pointer channels to properties: material factors, a texture transform, a
//! node's visibility and a light play at the values their keys give (interpolated here in f64,
//! apart from the player); a camera pointer is listed as not played; broken channels are error
//! findings while the rest play; a clip written anew keeps its property channels as pointers.

use crate::common;

use common::property_scene::{
    BASE_COLOR_KEYS, EMISSIVE_KEYS, INTENSITY_KEYS, OFFSET_KEYS, ROUGHNESS_KEYS, VISIBLE_KEYS, property_scene,
};
use rigscope::anim::PoseBuffers;
use rigscope::rig::{Interpolation, MaterialTexture, PropertyTarget, Rig, load_file, load_slice};
use rigscope::save::{PlannedAnimation, SaveOptions, save_animations};
use serde_json::{Value, json};

const TIMES: [f64; 8] = [0.0, 0.2, 0.25, 0.5, 0.6, 0.75, 1.0, 1.5];

fn load_scene(document: Value, bin: &[u8]) -> Rig {
    load_slice(&common::gltf_with(document, bin), None, "properties.gltf").expect("the scene loads")
}

/// Linear interpolation of `keys` (time, components) at `t`, clamped to the first and last.
fn lerp_keys<const N: usize>(keys: &[(f32, [f32; N])], t: f64) -> [f64; N] {
    let at = |k: usize| keys[k].1.map(f64::from);
    let last = keys.len() - 1;
    if t <= f64::from(keys[0].0) {
        return at(0);
    }
    if t >= f64::from(keys[last].0) {
        return at(last);
    }
    let k = (0..last).find(|&k| t < f64::from(keys[k + 1].0)).unwrap();
    let (t0, t1) = (f64::from(keys[k].0), f64::from(keys[k + 1].0));
    let s = (t - t0) / (t1 - t0);
    std::array::from_fn(|c| at(k)[c] + (at(k + 1)[c] - at(k)[c]) * s)
}

/// The value of the last key at or before `t` (the first before it).
fn held<T: Copy>(keys: &[(f32, T)], t: f64) -> T {
    let k = keys.iter().rposition(|key| f64::from(key.0) <= t).unwrap_or(0);
    keys[k].1
}

/// The two-key cubic spline of [`EMISSIVE_KEYS`] at `t` (glTF 2.0 Appendix C).
fn emissive_at(t: f64) -> [f64; 3] {
    let (k0, k1) = (EMISSIVE_KEYS[0], EMISSIVE_KEYS[1]);
    let (t0, t1) = (f64::from(k0.0), f64::from(k1.0));
    let s = ((t - t0) / (t1 - t0)).clamp(0.0, 1.0);
    let dt = t1 - t0;
    let (s2, s3) = (s * s, s * s * s);
    std::array::from_fn(|c| {
        let (p0, m0) = (f64::from(k0.2[c]), f64::from(k0.3[c]) * dt);
        let (p1, m1) = (f64::from(k1.2[c]), f64::from(k1.1[c]) * dt);
        (2.0 * s3 - 3.0 * s2 + 1.0) * p0 + (s3 - 2.0 * s2 + s) * m0 + (-2.0 * s3 + 3.0 * s2) * p1 + (s3 - s2) * m1
    })
}

fn assert_close(got: &[f32], want: &[f64], what: &str) {
    let off = (got.iter().zip(want))
        .map(|(g, w)| (f64::from(*g) - w).abs())
        .fold(0.0, f64::max);
    assert!(off < 1e-6, "{what}: {got:?}, computed {want:?}");
}

#[test]
fn property_channels_play_at_the_values_their_keys_give() {
    let (document, bin) = property_scene();
    let started = std::time::Instant::now();
    let rig = load_scene(document, &bin);
    let seconds = started.elapsed().as_secs_f64();
    let tracks = &rig.facts.property_tracks;
    assert_eq!(tracks.len(), 6, "{tracks:?}");
    assert_eq!(rig.clips.len(), 1);
    assert_eq!(rig.clips[0].duration, 1.0);
    let findings = &rig.facts.pointer_findings;
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(!findings[0].invalid && findings[0].pointer == "/cameras/0/perspective/yfov");
    assert!(tracks.iter().any(|t| t.interpolation == Interpolation::CubicSpline));
    let scene_json = property_scene().0;
    let (left, right) = (
        common::rig_node_of(&rig, &scene_json, 0),
        common::rig_node_of(&rig, &scene_json, 1),
    );
    for t in TIMES {
        let pose = PoseBuffers::at(&rig, Some(0), t as f32);
        let state = &pose.properties;
        let at = format!("at {t} s");
        let left_material = state.material(0).expect("material 0 is animated");
        let right_material = state.material(1).expect("material 1 is animated");
        assert_close(
            &left_material.base_color.unwrap().to_array(),
            &lerp_keys(&BASE_COLOR_KEYS, t),
            &format!("base colour {at}"),
        );
        assert_close(
            &[left_material.roughness.unwrap()],
            &[f64::from(held(&ROUGHNESS_KEYS, t))],
            &format!("roughness {at}"),
        );
        assert_close(
            &right_material.emissive.unwrap().to_array(),
            &emissive_at(t),
            &format!("emissive {at}"),
        );
        let offset = right_material
            .uv_of(&rig.materials[1], MaterialTexture::Occlusion)
            .offset;
        assert_close(
            &offset.to_array(),
            &lerp_keys(&OFFSET_KEYS, t),
            &format!("occlusion offset {at}"),
        );
        assert_eq!(
            state.is_hidden(right),
            held(&VISIBLE_KEYS, t) == 0,
            "right node hidden {at}"
        );
        assert!(!state.is_hidden(left), "the left node stays shown {at}");
        let intensity = state.lights[0].intensity.unwrap();
        assert_close(
            &[intensity],
            &lerp_keys(&INTENSITY_KEYS.map(|(t, v)| (t, [v])), t),
            &format!("intensity {at}"),
        );
    }
    println!(
        "property scene: {} property tracks, {} listed; loaded in {:.2} ms",
        tracks.len(),
        findings.len(),
        seconds * 1e3
    );
}

/// Channels whose pointer names a material the file lacks, whose sampler is missing, whose
/// output type is not the target's, or whose keys and values do not pair up are error
/// findings; the other channels still play.
#[test]
fn broken_property_channels_are_error_findings_and_the_rest_play() {
    let (mut document, bin) = property_scene();
    let animation = &mut document["animations"][0];
    let channels = animation["channels"].as_array_mut().unwrap();
    channels[2]["target"]["extensions"]["KHR_animation_pointer"]["pointer"] = json!("/materials/7/emissiveFactor");
    channels[3]["sampler"] = json!(99);
    channels[5]["sampler"] = channels[0]["sampler"].clone();
    let roughness_output = common::index(&animation["samplers"][1]["output"], "output");
    document["accessors"][roughness_output]["count"] = json!(2);
    let rig = load_scene(document, &bin);
    let errors: Vec<_> = rig.facts.pointer_findings.iter().filter(|f| f.invalid).collect();
    assert_eq!(errors.len(), 4, "{errors:?}");
    let has = |pointer: &str, reason: &str| {
        errors
            .iter()
            .any(|f| f.pointer.contains(pointer) && f.reason.contains(reason))
    };
    assert!(has("/materials/7/", "material 7"), "{errors:?}");
    assert!(has("KHR_texture_transform/offset", "sampler"), "{errors:?}");
    assert!(
        has("lights/0/intensity", "takes SCALAR values, its sampler gives VEC4"),
        "{errors:?}"
    );
    assert!(has("roughnessFactor", "3 key times but 2 values"), "{errors:?}");
    let targets: Vec<PropertyTarget> = rig.facts.property_tracks.iter().map(|t| t.target).collect();
    assert_eq!(targets.len(), 2, "base colour and visibility play: {targets:?}");
    let report = rigscope::report::RigReport::new(&rig);
    let reported = (report.findings.iter())
        .filter(|f| f.severity == rigscope::report::Severity::Error && f.message.contains("pointer"))
        .count();
    assert_eq!(reported, 4, "the report lists each as an error");
}

/// The scene's clip written anew (beside the file's own animation, kept as read) reopens with
/// the same property tracks, written as pointer channels under KHR_animation_pointer.
#[test]
fn a_clip_written_anew_keeps_its_property_channels() {
    let (document, bin) = property_scene();
    let dir = common::temp_dir("pointer-properties-save");
    let input = dir.join("properties.gltf");
    std::fs::write(&input, common::gltf_with(document, &bin)).unwrap();
    let rig = load_file(&input).unwrap();
    let output = dir.join("saved.gltf");
    let plan = [
        PlannedAnimation::Original { index: 0, name: None },
        PlannedAnimation::Clip { clip: 0 },
    ];
    save_animations(&input, &output, &rig, &plan, SaveOptions::default()).unwrap();
    let saved = load_file(&output).unwrap();
    let of = |rig: &Rig, clip: usize| -> Vec<_> {
        (rig.facts.property_tracks.iter())
            .filter(|t| t.clip == clip)
            .map(|t| (t.target, t.interpolation, t.times.clone(), t.values.clone()))
            .collect()
    };
    assert_eq!(of(&saved, 0), of(&rig, 0), "the kept animation");
    assert_eq!(of(&saved, 1), of(&rig, 0), "the clip written anew");
    let doc = common::Doc::open(&output);
    let used = doc.json["extensionsUsed"].as_array().unwrap();
    assert!(used.contains(&json!("KHR_animation_pointer")), "{used:?}");
    let written = common::array(&doc.json["animations"][1], "channels");
    assert_eq!(written.len(), 6, "the camera channel is not the rig's to write");
    assert!(written.iter().all(|c| c["target"]["path"] == "pointer"));
}
