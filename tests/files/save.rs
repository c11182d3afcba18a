//! Writing repaired weights back: the saved file reopens with everything but the weights as it
//! was (rig and JSON), normalized integer weights sum exactly to 1 in their stored form, a failed
//! write leaves nothing, and `rigscope fix` clears the weight-sum findings of real rigs.

use crate::common;

use crate::common::{Doc, array, rigscope, same, shared_folder, shared_rigs, temp_dir};
use rigscope::report::{FindingCode, RigReport};
use rigscope::rig::{Influences, Rig, load_file};
use rigscope::save::{SaveError, SaveOptions, save_repaired};
use serde_json::{Value, json};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// `saved` (reopened) has `before`'s nodes, skins, clips, materials, textures and geometry, and
/// `repaired`'s joints and weights to within half the stored type's step.
fn assert_only_weights_changed(before: &Rig, repaired: &Rig, saved: &Rig) {
    let node_of = common::nodes_after_placement(before, saved);
    same(&before.skins, &saved.skins, "skins");
    same(&before.clips, &saved.clips, "clips");
    same(&before.materials, &saved.materials, "materials");
    same(&before.morphs.targets, &saved.morphs.targets, "morph targets");
    same(
        &before.morphs.default_weights,
        &saved.morphs.default_weights,
        "default morph weights",
    );
    let moved_morphs: Vec<_> = (before.morphs.channels.iter())
        .map(|m| rigscope::rig::MorphChannel {
            node: node_of[m.node],
            ..m.clone()
        })
        .collect();
    same(&moved_morphs, &saved.morphs.channels, "morph channels");
    assert_eq!(before.textures.len(), saved.textures.len());
    for (a, b) in before.textures.iter().zip(&saved.textures) {
        assert!(a.name == b.name && a.width == b.width && a.height == b.height && a.rgba8() == b.rgba8());
    }
    assert_eq!(before.meshes.len(), saved.meshes.len());
    for (m, ((old, new), saved_mesh)) in before
        .meshes
        .iter()
        .zip(&repaired.meshes)
        .zip(&saved.meshes)
        .enumerate()
    {
        assert_eq!(old.name, saved_mesh.name);
        for (k, ((old, new), saved_p)) in old
            .primitives
            .iter()
            .zip(&new.primitives)
            .zip(&saved_mesh.primitives)
            .enumerate()
        {
            let at = format!("mesh {m} primitive {k}");
            same(&old.positions, &saved_p.positions, &format!("{at} positions"));
            same(&old.normals, &saved_p.normals, &format!("{at} normals"));
            same(&old.uvs, &saved_p.uvs, &format!("{at} uvs"));
            same(&old.colors, &saved_p.colors, &format!("{at} colors"));
            assert_eq!(old.indices, saved_p.indices, "{at} indices");
            assert_eq!(old.material, saved_p.material, "{at} material");
            let quantum = before.facts.primitives[m][k].weight_quantum;
            match (&new.influences, &saved_p.influences) {
                (None, None) => {}
                (Some(want), Some(got)) => assert_influences_close(want, got, quantum, &at),
                _ => panic!("{at}: influences appeared or vanished"),
            }
        }
    }
}

fn assert_influences_close(want: &Influences, got: &Influences, quantum: f32, at: &str) {
    assert_eq!(want.sets, got.sets, "{at} sets");
    assert_eq!(want.joints, got.joints, "{at} joints");
    for (v, (a, b)) in want.weights.iter().zip(&got.weights).enumerate() {
        for (x, y) in a.iter().zip(b) {
            if quantum == 0.0 {
                assert_eq!(
                    x.to_bits(),
                    y.to_bits(),
                    "{at} vertex {v}: float weights are written as they are"
                );
            } else {
                // Rounding plus what the exact sum moves onto the largest weight.
                assert!((x - y).abs() <= quantum * 2.5, "{at} vertex {v}: {x} saved as {y}");
            }
        }
    }
}

/// The accessors the saved document's JOINTS/WEIGHTS attributes point at that read new buffer
/// views (views past the `old_views` the original had).
fn rewritten_accessors(saved: &Value, old_views: usize) -> Vec<usize> {
    let mut found = Vec::new();
    for mesh in array(saved, "meshes") {
        for primitive in array(mesh, "primitives") {
            for (name, accessor) in primitive["attributes"].as_object().unwrap() {
                let accessor = accessor.as_u64().unwrap() as usize;
                let view = saved["accessors"][accessor]["bufferView"].as_u64();
                if (name.starts_with("JOINTS_") || name.starts_with("WEIGHTS_"))
                    && view.is_some_and(|v| v as usize >= old_views)
                {
                    found.push(accessor);
                }
            }
        }
    }
    found.sort_unstable();
    found
}

/// The JSON of `saved` equals `before` except for the rewritten accessors (which differ only in
/// where their data is and its bounds), the added buffer views and the buffers' lengths and URIs.
/// Draco primitives' stream attribute lists are compared by the caller. Nodes and scenes change
/// where a skinned mesh is moved to the scene's root; the reopened rig's check
/// (`common::nodes_after_placement`) holds them.
fn assert_json_kept(before: &Value, saved: &Value) -> Vec<usize> {
    let old_views = array(before, "bufferViews").len();
    let rewritten = rewritten_accessors(saved, old_views);
    assert!(!rewritten.is_empty(), "some accessor was rewritten");
    for (key, value) in before.as_object().unwrap() {
        match key.as_str() {
            "accessors" | "bufferViews" | "buffers" | "meshes" | "extensionsUsed" | "extensionsRequired" | "nodes"
            | "scenes" => {}
            _ => assert_eq!(Some(value), saved.get(key), "top-level '{key}' kept"),
        }
    }
    let mut meshes = before["meshes"].clone();
    let mut saved_meshes = saved["meshes"].clone();
    for list in [&mut meshes, &mut saved_meshes] {
        for mesh in list.as_array_mut().unwrap() {
            for primitive in mesh["primitives"].as_array_mut().unwrap() {
                if let Some(draco) = primitive.pointer_mut("/extensions/KHR_draco_mesh_compression") {
                    draco.as_object_mut().unwrap().remove("attributes");
                }
            }
        }
    }
    assert_eq!(meshes, saved_meshes, "meshes kept");
    let (old, new) = (array(before, "accessors"), array(saved, "accessors"));
    assert_eq!(old.len(), new.len(), "no accessor added");
    for (i, (a, b)) in old.iter().zip(new).enumerate() {
        if rewritten.contains(&i) {
            let strip = |v: &Value| {
                let mut v = v.clone();
                for key in ["bufferView", "byteOffset", "min", "max", "sparse"] {
                    v.as_object_mut().unwrap().remove(key);
                }
                v
            };
            assert_eq!(strip(a), strip(b), "accessor {i} changes only where its data is");
        } else {
            assert_eq!(a, b, "accessor {i} kept");
        }
    }
    assert_eq!(
        array(before, "bufferViews"),
        &array(saved, "bufferViews")[..old_views],
        "buffer views kept"
    );
    for (i, (a, b)) in array(before, "buffers").iter().zip(array(saved, "buffers")).enumerate() {
        for (key, value) in a.as_object().unwrap() {
            if key != "byteLength" && key != "uri" {
                assert_eq!(Some(value), b.get(key), "buffer {i} '{key}'");
            }
        }
    }
    rewritten
}

/// `rig` with every vertex's weights scaled to sum to 1 (the `fix --normalize` repair).
fn normalized(rig: &Rig) -> Rig {
    let plan = rigscope::repair::RepairPlan {
        normalize: true,
        ..Default::default()
    };
    rigscope::repair::apply(rig, &plan).0
}

/// `rig` with every weighted vertex's weights moved around: vertex v's weights become
/// (weights rotated by v mod 4) — a change of every attribute that keeps sums and joints.
fn shuffled_weights(rig: &Rig) -> Rig {
    let mut repaired = rig.clone();
    for primitive in repaired.meshes.iter_mut().flat_map(|m| &mut m.primitives) {
        if let Some(influences) = &mut primitive.influences {
            for (v, w) in influences.weights.iter_mut().enumerate() {
                w.rotate_left(v % 4);
            }
        }
    }
    repaired
}

/// The JSON of a `.gltf` or `.glb` file (buffers not read: a meshopt fallback buffer has none).
fn json_of(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let json = if bytes.starts_with(b"glTF") {
        common::split_glb(&bytes).0
    } else {
        &bytes[..]
    };
    serde_json::from_slice(json).expect("glTF JSON parses")
}

fn save(input: &Path, output: &Path, before: &Rig, repaired: &Rig) -> Rig {
    let saved = save_repaired(input, output, before, repaired, SaveOptions::default())
        .unwrap_or_else(|e| panic!("saving {} failed: {e}", output.display()));
    assert_eq!(saved.written.last().map(PathBuf::as_path), Some(output));
    load_file(output).unwrap_or_else(|e| panic!("the saved {} does not load: {e}", output.display()))
}

fn weight_sum_findings(rig: &Rig) -> usize {
    RigReport::new(rig)
        .findings
        .iter()
        .filter(|f| f.code == FindingCode::WeightsNotNormalized)
        .count()
}

/// Loads `input` (which has weight-sum findings), normalizes it and saves it as each of `names`
/// in a new folder, which is returned: each reopens with only its weights changed and no
/// weight-sum finding.
fn normalize_into(input: &Path, folder: &str, names: &[&str]) -> PathBuf {
    let before = load_file(input).unwrap();
    assert!(
        weight_sum_findings(&before) > 0,
        "{} has weights that do not sum to 1",
        input.display()
    );
    let repaired = normalized(&before);
    let out = temp_dir(folder);
    for name in names {
        let saved = save(input, &out.join(name), &before, &repaired);
        assert_only_weights_changed(&before, &repaired, &saved);
        assert_eq!(weight_sum_findings(&saved), 0, "{name}: no weight-sum finding");
    }
    out
}

#[test]
fn a_normalized_real_rig_reopens_with_only_its_weights_changed_as_glb_and_gltf() {
    let Some(dir) = shared_rigs() else { return };
    let input = dir.join("real/RobotExpressive.glb");
    let names = ["robot.glb", "robot.gltf"];
    let out = normalize_into(&input, "save-robot", &names);
    for name in names {
        let rewritten = assert_json_kept(&json_of(&input), &json_of(&out.join(name)));
        // Only the hands' weights are off: 2 meshes × 2 primitives.
        assert_eq!(rewritten.len(), 4, "{name}");
    }
    // The .gltf carries the GLB's binary chunk, grown by the new data, in a new file beside it.
    let gltf = json_of(&out.join("robot.gltf"));
    assert_eq!(gltf["buffers"][0]["uri"], "robot.bin");
    assert!(out.join("robot.bin").is_file());
}

#[test]
fn a_gltf_with_data_uris_saves_as_gltf_and_as_glb() {
    let Some(dir) = shared_folder("corpus/rigs") else {
        return;
    };
    let input = dir.join("CesiumMan.gltf");
    let out = normalize_into(&input, "save-cesium", &["cesium.gltf", "cesium.glb"]);
    // .gltf: the data URI buffer is kept and the new data is a second buffer in cesium.bin.
    let original = json_of(&input);
    let gltf = json_of(&out.join("cesium.gltf"));
    assert_json_kept(&original, &gltf);
    assert_eq!(gltf["buffers"][0], original["buffers"][0]);
    assert_eq!(gltf["buffers"][1]["uri"], "cesium.bin");
    // .glb: the data URI buffer is the binary chunk, buffer 0 without a URI (a data URI in a
    // GLB is a validator warning), its bytes first and the new data after them.
    let glb = json_of(&out.join("cesium.glb"));
    assert_eq!(array(&glb, "buffers").len(), 1);
    assert!(glb["buffers"][0].get("uri").is_none());
    for (a, b) in array(&original, "bufferViews").iter().zip(array(&glb, "bufferViews")) {
        assert_eq!(b["buffer"], a["buffer"]);
    }
    let uri = original["buffers"][0]["uri"].as_str().unwrap();
    let base64_text = &uri[uri.find(";base64,").unwrap() + ";base64,".len()..];
    let data = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, base64_text).unwrap();
    let bytes = std::fs::read(out.join("cesium.glb")).unwrap();
    let chunk = common::split_glb(&bytes).1.expect("a binary chunk");
    assert_eq!(glb["buffers"][0]["byteLength"].as_u64().unwrap() as usize, chunk.len());
    assert_eq!(&chunk[..data.len()], &data[..]);
}

/// The stored integer weights of every WEIGHTS accessor the saved file rewrote sum exactly to
/// `max` per vertex.
fn assert_stored_sums_exact(output: &Path, old_views: usize, component_type: u64, max: f64) {
    let doc = Doc::open(output);
    let mut checked = 0;
    for accessor in rewritten_accessors(&doc.json, old_views) {
        let object = &doc.json["accessors"][accessor];
        if object["componentType"] != component_type || object["normalized"] != true {
            continue;
        }
        let elements = doc.read_accessor(accessor);
        let mut min = [f64::INFINITY; 4];
        let mut max_seen = [f64::NEG_INFINITY; 4];
        for (v, element) in elements.iter().enumerate() {
            let stored: Vec<f64> = element.iter().map(|x| (x * max).round()).collect();
            let sum: f64 = stored.iter().sum();
            assert!(
                sum == max || sum == 0.0,
                "accessor {accessor} vertex {v}: stored sum {sum}"
            );
            for c in 0..4 {
                min[c] = min[c].min(stored[c]);
                max_seen[c] = max_seen[c].max(stored[c]);
            }
            checked += 1;
        }
        if object.get("min").is_some() {
            assert_eq!(common::numbers(&object["min"]), min.to_vec(), "accessor {accessor} min");
            assert_eq!(
                common::numbers(&object["max"]),
                max_seen.to_vec(),
                "accessor {accessor} max"
            );
        }
    }
    assert!(
        checked > 0,
        "some normalized weights were rewritten in {}",
        output.display()
    );
}

#[test]
fn normalized_u8_weights_sum_exactly_to_one_in_stored_form() {
    let Some(dir) = shared_rigs() else { return };
    let input = dir.join("compressed/Fox.quantize.glb");
    let before = load_file(&input).unwrap();
    // Weights that do not fall on the 1/255 grid: thirds and sevenths, normalized.
    let mut repaired = before.clone();
    for primitive in repaired.meshes.iter_mut().flat_map(|m| &mut m.primitives) {
        if let Some(influences) = &mut primitive.influences {
            for (v, w) in influences.weights.iter_mut().enumerate() {
                let raw = [1.0 + (v % 7) as f32, 3.0, 1.0 + (v % 3) as f32, 0.5];
                let sum: f32 = raw.iter().sum();
                *w = raw.map(|x| x / sum);
            }
        }
    }
    let output = temp_dir("save-u8").join("fox.glb");
    let saved = save(&input, &output, &before, &repaired);
    assert_only_weights_changed(&before, &repaired, &saved);
    let old_views = array(&json_of(&input), "bufferViews").len();
    assert_stored_sums_exact(&output, old_views, 5121, 255.0);
}

/// One triangle of three vertices weighted to two joints with normalized u16 weights that sum
/// to 40000/65535, 65535/65535 and 80000/65535, with min/max on the weights accessor.
fn u16_triangle() -> Vec<u8> {
    let mut bin = Vec::new();
    for p in [[0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] {
        for c in p {
            bin.extend_from_slice(&c.to_le_bytes());
        }
    }
    for _ in 0..3 {
        for j in [0u16, 1, 0, 0] {
            bin.extend_from_slice(&j.to_le_bytes());
        }
    }
    for w in [[30000u16, 10000, 0, 0], [65535, 0, 0, 0], [50000, 30000, 0, 0]] {
        for x in w {
            bin.extend_from_slice(&x.to_le_bytes());
        }
    }
    let document = json!({
        "scene": 0,
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [
            {"name": "root", "children": [2]},
            {"name": "skinned", "mesh": 0, "skin": 0, "extras": {"kept": true}},
            {"name": "tip", "translation": [0.0, 1.0, 0.0]},
        ],
        "skins": [{"joints": [0, 2]}],
        "meshes": [{"name": "tri", "primitives": [{
            "attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2},
        }]}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0]},
            {"bufferView": 1, "componentType": 5123, "count": 3, "type": "VEC4"},
            {"bufferView": 2, "componentType": 5123, "normalized": true, "count": 3, "type": "VEC4",
             "min": [30000, 0, 0, 0], "max": [65535, 30000, 0, 0]},
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 24},
            {"buffer": 0, "byteOffset": 60, "byteLength": 24},
        ],
        "extensionsUsed": ["EXT_example_unknown"],
        "extensions": {"EXT_example_unknown": {"anything": [1, 2, 3]}},
    });
    common::gltf_with(document, &bin)
}

#[test]
fn normalized_u16_weights_sum_exactly_to_one_and_keep_true_bounds() {
    let out = temp_dir("save-u16");
    let input = out.join("triangle.gltf");
    std::fs::write(&input, u16_triangle()).unwrap();
    let before = load_file(&input).unwrap();
    let repaired = normalized(&before);
    let output = out.join("fixed.gltf");
    let saved = save(&input, &output, &before, &repaired);
    assert_only_weights_changed(&before, &repaired, &saved);
    assert_stored_sums_exact(&output, 3, 5123, 65535.0);
    // By hand: 30000/40000 → 0.75 → 49151.25 → 49151, 0.25 → 16383.75 → 16384 (65535);
    // 50000/80000 → 0.625 → 40959.375 → 40959, 0.375 → 24575.625 → 24576 (65535).
    let doc = Doc::open(&output);
    let accessor = doc.json["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"]
        .as_u64()
        .unwrap() as usize;
    let stored: Vec<Vec<f64>> = doc
        .read_accessor(accessor)
        .iter()
        .map(|e| e.iter().map(|x| (x * 65535.0).round()).collect())
        .collect();
    assert_eq!(
        stored,
        vec![
            vec![49151.0, 16384.0, 0.0, 0.0],
            vec![65535.0, 0.0, 0.0, 0.0],
            vec![40959.0, 24576.0, 0.0, 0.0]
        ]
    );
    assert_eq!(doc.json["accessors"][accessor]["min"], json!([40959, 0, 0, 0]));
    assert_eq!(doc.json["accessors"][accessor]["max"], json!([65535, 24576, 0, 0]));
    assert_json_kept(&json_of(&input), &doc.json);
}

#[test]
fn compressed_inputs_round_trip() {
    let Some(dir) = shared_rigs() else { return };
    let out = temp_dir("save-compressed");
    for name in [
        "Fox.draco.glb",
        "Fox.meshopt.glb",
        "Fox.quantize.glb",
        "RobotExpressive.meshopt.glb",
    ] {
        let input = dir.join("compressed").join(name);
        let before = load_file(&input).unwrap();
        let repaired = shuffled_weights(&before);
        let output = out.join(name);
        let saved = save(&input, &output, &before, &repaired);
        assert_only_weights_changed(&before, &repaired, &saved);
        let original = json_of(&input);
        let written = json_of(&output);
        assert_json_kept(&original, &written);
        // The compression the file still uses is still declared.
        assert_eq!(original["extensionsUsed"], written["extensionsUsed"], "{name}");
        if name.contains("draco") {
            // The stream no longer supplies the weights it would decode stale; it still supplies
            // the rest.
            let streamed =
                written["meshes"][0]["primitives"][0]["extensions"]["KHR_draco_mesh_compression"]["attributes"]
                    .as_object()
                    .unwrap();
            assert!(!streamed.contains_key("WEIGHTS_0") && streamed.contains_key("POSITION"));
            assert!(streamed.contains_key("JOINTS_0"), "joints did not change");
        }
    }
}

#[test]
fn a_failed_write_is_a_typed_error_and_leaves_no_file() {
    let Some(dir) = shared_rigs() else { return };
    let input = dir.join("real/RobotExpressive.glb");
    let before = load_file(&input).unwrap();
    let repaired = normalized(&before);
    let out = temp_dir("save-fail");
    let fails = |output: &Path| save_repaired(&input, output, &before, &repaired, SaveOptions::default()).unwrap_err();
    let missing = out.join("no/such/folder/robot.glb");
    let error = fails(&missing);
    assert!(
        matches!(&error, SaveError::Write { path, .. } if path == &missing),
        "{error}"
    );
    assert!(!out.join("no").exists());
    // A folder that is a file.
    let file = out.join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let error = fails(&file.join("robot.glb"));
    assert!(matches!(error, SaveError::Write { .. }), "{error}");
    // A read-only folder (which the superuser may still write to: then only the above apply).
    let read_only = out.join("read-only");
    std::fs::create_dir(&read_only).unwrap();
    let mut permissions = std::fs::metadata(&read_only).unwrap().permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(&read_only, permissions).unwrap();
    if std::fs::write(read_only.join("probe"), b"").is_err() {
        let error = fails(&read_only.join("robot.glb"));
        assert!(matches!(error, SaveError::Write { .. }), "{error}");
        assert_eq!(std::fs::read_dir(&read_only).unwrap().count(), 0, "nothing left behind");
    } else {
        eprintln!("the read-only folder is writable here (superuser): that case is not checked");
    }
    // An unknown output extension, and the input itself without --overwrite.
    let error = fails(&out.join("robot.obj"));
    assert!(matches!(error, SaveError::OutputFormat { .. }), "{error}");
    let copy = out.join("copy.glb");
    std::fs::copy(&input, &copy).unwrap();
    let error = save_repaired(&copy, &copy, &before, &repaired, SaveOptions::default()).unwrap_err();
    assert!(matches!(error, SaveError::WouldOverwriteInput { .. }), "{error}");
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&input).unwrap());
    let names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 3, "only the test's own files and folders: {names:?}");
}

#[test]
fn overwrite_keeps_a_backup_of_the_input() {
    let Some(dir) = shared_rigs() else { return };
    let out = temp_dir("save-overwrite");
    let file = out.join("robot.glb");
    std::fs::copy(dir.join("real/RobotExpressive.glb"), &file).unwrap();
    let original = std::fs::read(&file).unwrap();
    let before = load_file(&file).unwrap();
    let repaired = normalized(&before);
    let saved = save_repaired(&file, &file, &before, &repaired, SaveOptions { overwrite: true }).unwrap();
    assert_eq!(saved.backup.as_deref(), Some(out.join("robot.glb.bak").as_path()));
    assert_eq!(std::fs::read(out.join("robot.glb.bak")).unwrap(), original);
    assert_eq!(weight_sum_findings(&load_file(&file).unwrap()), 0);
}

#[test]
fn fix_normalize_clears_the_weight_sum_findings_of_real_rigs_and_exits_by_outcome() {
    let (Some(rigs), Some(corpus)) = (shared_rigs(), shared_folder("corpus/rigs")) else {
        return;
    };
    let out = temp_dir("fix-cli");
    for (input, expected_line) in [
        (
            rigs.join("real/RobotExpressive.glb"),
            "normalize: 798 vertices changed (mesh 'Hand.R' primitive 0: 186, mesh 'Hand.R' primitive 1: 215",
        ),
        (
            corpus.join("CesiumMan.gltf"),
            "normalize: 555 vertices changed (mesh 'Cesium_Man' primitive 0: 555)",
        ),
    ] {
        let before = load_file(&input).unwrap();
        assert!(weight_sum_findings(&before) > 0);
        let name = input.file_name().unwrap().to_owned();
        let output = out.join(&name);
        let run = rigscope([
            OsStr::new("fix"),
            input.as_os_str(),
            OsStr::new("--normalize"),
            OsStr::new("--out"),
            output.as_os_str(),
        ]);
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert_eq!(
            run.status.code(),
            Some(0),
            "{stdout}{}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(stdout.contains(expected_line), "{stdout}");
        assert_eq!(weight_sum_findings(&load_file(&output).unwrap()), 0, "{name:?}");
        // Fixing the fixed file finds nothing to do and writes nothing.
        let again = out.join("again.glb");
        let run = rigscope([
            OsStr::new("fix"),
            output.as_os_str(),
            OsStr::new("--normalize"),
            OsStr::new("--out"),
            again.as_os_str(),
        ]);
        assert_eq!(run.status.code(), Some(1), "{}", String::from_utf8_lossy(&run.stdout));
        assert!(!again.exists());
    }
    // A dry run writes nothing; a missing input and an unwritable output exit with 2.
    let input = rigs.join("real/RobotExpressive.glb");
    let dry = out.join("dry.glb");
    let run = rigscope([
        OsStr::new("fix"),
        input.as_os_str(),
        OsStr::new("--normalize"),
        OsStr::new("--dry-run"),
        OsStr::new("--out"),
        dry.as_os_str(),
    ]);
    assert_eq!(run.status.code(), Some(0));
    assert!(!dry.exists());
    let run = rigscope([
        OsStr::new("fix"),
        out.join("missing.glb").as_os_str(),
        OsStr::new("--normalize"),
        OsStr::new("--out"),
        dry.as_os_str(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    let nowhere = out.join("missing/out.glb");
    let run = rigscope([
        OsStr::new("fix"),
        input.as_os_str(),
        OsStr::new("--normalize"),
        OsStr::new("--out"),
        nowhere.as_os_str(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("cannot write"));
}

#[test]
fn a_gltf_saved_into_another_folder_takes_its_external_buffer_along() {
    let out = temp_dir("save-elsewhere");
    let source = out.join("source");
    let target = out.join("target");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::create_dir_all(&target).unwrap();
    // The triangle with its buffer moved from a data URI to triangle.bin beside it.
    let mut document: Value = serde_json::from_slice(&u16_triangle()).unwrap();
    let uri = document["buffers"][0]["uri"].as_str().unwrap().to_owned();
    let bin = common::base64_decode(uri.split_once(',').unwrap().1);
    std::fs::write(source.join("triangle.bin"), &bin).unwrap();
    document["buffers"][0]["uri"] = json!("triangle.bin");
    let input = source.join("triangle.gltf");
    std::fs::write(&input, serde_json::to_vec(&document).unwrap()).unwrap();
    let before = load_file(&input).unwrap();
    let repaired = normalized(&before);
    let output = target.join("fixed.gltf");
    let saved = save(&input, &output, &before, &repaired);
    assert_only_weights_changed(&before, &repaired, &saved);
    assert_eq!(
        std::fs::read(target.join("triangle.bin")).unwrap(),
        bin,
        "copied as it was"
    );
    assert_eq!(
        std::fs::read(source.join("triangle.bin")).unwrap(),
        bin,
        "the input's buffer untouched"
    );
    assert_eq!(json_of(&output)["buffers"][1]["uri"], "fixed.bin");
    // A different file already there is never replaced.
    std::fs::write(target.join("triangle.bin"), b"other").unwrap();
    let error = save_repaired(
        &input,
        &target.join("again.gltf"),
        &before,
        &repaired,
        SaveOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(error, SaveError::Companion { .. }), "{error}");
    assert!(!target.join("again.gltf").exists() && !target.join("again.bin").exists());
}
