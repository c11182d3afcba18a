//! Hostile and broken files built in the test (glTF JSON with data URIs, GLB containers): each
//! must load to a clear error that names the problem, or load with a report finding that does,
//! without a large allocation.

use crate::common;

use crate::common::gltf_with;
use base64::Engine;
use rigscope::report::{RigReport, Severity};
use rigscope::rig::{GlbError, Rig, RigError, UriError, glb_container, load_file, load_slice};
use serde_json::{Value, json};

/// No single allocation a hostile file causes may reach this: what a file claims (counts,
/// lengths, set numbers) must not be reserved before the data backs it.
const HUGE_ALLOCATION: usize = 256 << 20;

/// Runs `f`, failing the test if one allocation in it reaches [`HUGE_ALLOCATION`].
fn without_huge_allocation<T>(f: impl FnOnce() -> T) -> T {
    let (result, allocated) = common::counting::watch(f);
    assert!(
        allocated.largest < HUGE_ALLOCATION,
        "an allocation of {} bytes",
        allocated.largest
    );
    result
}

fn floats(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Loads `bytes` and returns the error, failing the test if the load succeeds or allocates
/// hugely.
fn load_error(bytes: &[u8]) -> RigError {
    let result = without_huge_allocation(|| load_slice(bytes, None, "test.gltf"));
    match result {
        Ok(rig) => panic!("expected a load error, got a rig with {} nodes", rig.nodes.len()),
        Err(e) => e,
    }
}

/// Fails unless `error` is of the kind `kind` matches.
macro_rules! assert_kind {
    ($error:expr, $kind:pat) => {
        assert!(matches!($error, $kind), "expected {}: {:?}", stringify!($kind), $error)
    };
}

fn load_ok(bytes: &[u8]) -> Rig {
    load_slice(bytes, None, "test.gltf").unwrap_or_else(|e| panic!("expected the file to load: {e}"))
}

fn assert_contains(message: &dyn std::fmt::Display, parts: &[&str]) {
    let message = message.to_string();
    for part in parts {
        assert!(message.contains(part), "'{message}' should mention '{part}'");
    }
}

/// The finding with `code`, failing the test when the report has none.
fn finding<'r>(report: &'r RigReport, code: &str) -> &'r rigscope::report::Finding {
    report.findings.iter().find(|f| f.code == code).unwrap_or_else(|| {
        let codes: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
        panic!("no '{code}' finding; the report has {codes:?}")
    })
}

/// One triangle (three vertices on the XY plane) as POSITION accessor 0, bytes 0..36.
fn triangle() -> (Value, Vec<u8>) {
    let bin = floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let document = json!({
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 1, 0]}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}],
    });
    (document, bin)
}

#[test]
fn a_triangle_loads() {
    let (document, bin) = triangle();
    let rig = load_ok(&gltf_with(document, &bin));
    assert_eq!(rig.vertex_count(), 3);
    assert_eq!(rig.meshes[0].primitives[0].indices, [0, 1, 2]);
}

#[test]
fn a_billion_vertex_accessor_in_a_kilobyte_is_refused_before_allocating() {
    let (mut document, bin) = triangle();
    document["accessors"][0]["count"] = json!(1_000_000_000u64);
    let bytes = gltf_with(document, &bin);
    assert!(bytes.len() < 1024);
    let e = load_error(&bytes);
    assert_kind!(e, RigError::Data(_));
    assert_contains(
        &e,
        &[
            "POSITION",
            "accessor 0 claims 1000000000 elements",
            "holds only 36 bytes",
        ],
    );
}

#[test]
fn a_billion_zero_filled_vertices_exceed_the_memory_budget() {
    // No buffer view: glTF says the elements are zeros, so the data is not in the file at all.
    let document = json!({
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"componentType": 5126, "count": 1_000_000_000u64, "type": "VEC3",
                       "min": [0, 0, 0], "max": [0, 0, 0]}],
    });
    let e = load_error(&gltf_with(document, &[]));
    assert_kind!(e, RigError::Budget(_));
    assert_contains(&e, &["accessor 0 (1000000000 elements)", "11.2 GiB", "beyond the"]);
}

#[test]
fn a_huge_sparse_accessor_exceeds_the_memory_budget() {
    let bin: Vec<u8> = [0u8, 0, 0, 0].into_iter().chain(floats(&[1.0, 2.0, 3.0])).collect();
    let document = json!({
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"componentType": 5126, "count": 400_000_000u64, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 2, 3],
                       "sparse": {"count": 1, "indices": {"bufferView": 0, "componentType": 5125},
                                  "values": {"bufferView": 1}}}],
        "bufferViews": [{"buffer": 0, "byteLength": 4}, {"buffer": 0, "byteOffset": 4, "byteLength": 12}],
    });
    let e = load_error(&gltf_with(document, &bin));
    assert_kind!(e, RigError::Budget(_));
    assert_contains(&e, &["accessor 0 (400000000 elements)", "of memory"]);
}

#[test]
fn sparse_substitutions_apply_and_bad_indices_are_named() {
    // Three zero vertices, vertex 2 replaced by (1, 2, 3).
    let bin: Vec<u8> = [2u8, 0, 0, 0].into_iter().chain(floats(&[1.0, 2.0, 3.0])).collect();
    let mut document = json!({
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 2, 3],
                       "sparse": {"count": 1, "indices": {"bufferView": 0, "componentType": 5125},
                                  "values": {"bufferView": 1}}}],
        "bufferViews": [{"buffer": 0, "byteLength": 4}, {"buffer": 0, "byteOffset": 4, "byteLength": 12}],
    });
    let rig = load_ok(&gltf_with(document.clone(), &bin));
    let positions = &rig.meshes[0].primitives[0].positions;
    assert_eq!(positions[0], glam::Vec3::ZERO);
    assert_eq!(positions[2], glam::Vec3::new(1.0, 2.0, 3.0));

    let bad: Vec<u8> = [7u8, 0, 0, 0].into_iter().chain(floats(&[1.0, 2.0, 3.0])).collect();
    let e = load_error(&gltf_with(document.clone(), &bad));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["accessor 0 (sparse)", "index 7", "out of range"]);

    document["accessors"][0]["sparse"]["count"] = json!(5);
    let e = load_error(&gltf_with(document, &bin));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["5 substitutions for 3 elements"]);
}

#[test]
fn a_stride_shorter_than_the_element_is_refused() {
    let (mut document, bin) = triangle();
    document["bufferViews"][0]["byteStride"] = json!(4);
    let e = load_error(&gltf_with(document, &bin));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["byte stride of 4", "12-byte element"]);
}

#[test]
fn a_position_of_the_wrong_type_is_named() {
    let (mut document, bin) = triangle();
    document["accessors"][0]["componentType"] = json!(5121);
    let e = load_error(&gltf_with(document, &bin));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["POSITION", "VEC3 of unsigned byte", "expected VEC3 of float"]);
}

#[test]
fn an_attribute_naming_a_missing_accessor_is_named() {
    let (mut document, bin) = triangle();
    document["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(9);
    let e = load_error(&gltf_with(document, &bin));
    assert_kind!(e, RigError::Invalid(_));
    assert_contains(
        &e,
        &["meshes[0].primitives[0].attributes.POSITION", "index out of range"],
    );
}

#[test]
fn an_index_beyond_the_vertices_is_named() {
    let (mut document, mut bin) = triangle();
    bin.extend([0u16, 1, 7, 0].iter().flat_map(|i| i.to_le_bytes()));
    document["accessors"]
        .as_array_mut()
        .unwrap()
        .push(json!({"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"}));
    document["bufferViews"]
        .as_array_mut()
        .unwrap()
        .push(json!({"buffer": 0, "byteOffset": 36, "byteLength": 6}));
    document["meshes"][0]["primitives"][0]["indices"] = json!(1);
    let e = load_error(&gltf_with(document, &bin));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["index 7 is out of range for 3 vertices"]);
}

#[test]
fn a_buffer_shorter_than_declared_is_named() {
    let (document, bin) = triangle();
    let mut bytes: Value = serde_json::from_slice(&gltf_with(document, &bin)).unwrap();
    bytes["buffers"][0]["byteLength"] = json!(100);
    let e = load_error(&serde_json::to_vec(&bytes).unwrap());
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["buffer 0 declares 100 bytes but holds only 36"]);
}

#[test]
fn node_cycles_and_double_parents_are_named() {
    let document = json!({"nodes": [{"children": [1]}, {"children": [2]}, {"children": [1]}]});
    let e = load_error(&gltf_with(document, &[]));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["node 1 has two parents"]);
    let document = json!({"nodes": [{"children": [1]}, {"children": [0]}, {}]});
    let e = load_error(&gltf_with(document, &[]));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["cycle", "nodes 0, 1"]);
    let document = json!({"nodes": [{"children": [0]}]});
    assert_contains(&load_error(&gltf_with(document, &[])), &["node 0 lists itself"]);
}

#[test]
fn a_long_node_cycle_is_found() {
    // 200 000 nodes in one ring: no root, so nothing can be ordered.
    let n = 200_000;
    let nodes: Vec<Value> = (0..n).map(|i| json!({"children": [(i + 1) % n]})).collect();
    let e = load_error(&gltf_with(json!({ "nodes": nodes }), &[]));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["cycle", "nodes 0, 1, 2"]);
}

#[test]
fn a_skin_with_no_joints_is_named() {
    let document = json!({"nodes": [{}], "skins": [{"joints": []}]});
    let e = load_error(&gltf_with(document, &[]));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["skin 0 has no joints"]);
}

/// A skinned triangle: nodes 0 (mesh, skin 0) and 1 (the joint), one JOINTS_0/WEIGHTS_0 set.
fn skinned_triangle(joints: [[u16; 4]; 3], weights: [[f32; 4]; 3]) -> (Value, Vec<u8>) {
    let (mut document, mut bin) = triangle();
    bin.extend(joints.iter().flatten().flat_map(|j| j.to_le_bytes()));
    bin.extend(weights.iter().flatten().flat_map(|w| w.to_le_bytes()));
    let accessors = document["accessors"].as_array_mut().unwrap();
    accessors.push(json!({"bufferView": 1, "componentType": 5123, "count": 3, "type": "VEC4"}));
    accessors.push(json!({"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"}));
    let views = document["bufferViews"].as_array_mut().unwrap();
    views.push(json!({"buffer": 0, "byteOffset": 36, "byteLength": 24}));
    views.push(json!({"buffer": 0, "byteOffset": 60, "byteLength": 48}));
    document["meshes"][0]["primitives"][0]["attributes"] = json!({"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2});
    document["nodes"] = json!([{"mesh": 0, "skin": 0}, {}]);
    document["skins"] = json!([{"joints": [1]}]);
    (document, bin)
}

#[test]
fn a_joint_index_of_65535_is_a_finding_naming_it() {
    let (document, bin) = skinned_triangle(
        [[0, 0, 0, 0], [65535, 0, 0, 0], [0, 0, 0, 0]],
        [[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]],
    );
    let rig = load_ok(&gltf_with(document, &bin));
    let report = RigReport::new(&rig);
    let f = finding(&report, "joint-index-outside-skin");
    assert_eq!(f.severity, Severity::Error);
    assert_contains(&f.message, &["1 vertices", "1 joints", "largest index 65535"]);
    assert_eq!(f.vertices.as_ref().unwrap().vertices, [1]);
}

#[test]
fn non_finite_inverse_binds_and_node_matrices_are_named() {
    let (mut document, mut bin) = skinned_triangle([[0; 4]; 3], [[1.0, 0.0, 0.0, 0.0]; 3]);
    let mut ibm = glam::Mat4::IDENTITY.to_cols_array();
    ibm[13] = f32::NAN;
    bin.extend(floats(&ibm));
    document["accessors"]
        .as_array_mut()
        .unwrap()
        .push(json!({"bufferView": 3, "componentType": 5126, "count": 1, "type": "MAT4"}));
    document["bufferViews"]
        .as_array_mut()
        .unwrap()
        .push(json!({"buffer": 0, "byteOffset": 108, "byteLength": 64}));
    document["skins"][0]["inverseBindMatrices"] = json!(3);
    let e = load_error(&gltf_with(document.clone(), &bin));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["skin 0: inverse bind matrix 0 is not finite"]);

    // JSON has no NaN, but 1e39 overflows a 32-bit float to infinity.
    let (mut document, bin) = triangle();
    document["nodes"][0]["translation"] = json!([1e39, 0, 0]);
    let e = load_error(&gltf_with(document, &bin));
    assert_kind!(e, RigError::Data(_));
    assert_contains(&e, &["node 0", "transform that is not finite"]);
}

/// A triangle whose node is animated by one translation channel with these keys.
fn animated_triangle(times: &[f32], values: &[f32], interpolation: &str) -> Vec<u8> {
    let (mut document, mut bin) = triangle();
    let times_at = bin.len();
    bin.extend(floats(times));
    let values_at = bin.len();
    bin.extend(floats(values));
    let accessors = document["accessors"].as_array_mut().unwrap();
    accessors.push(
        json!({"bufferView": 1, "componentType": 5126, "count": times.len(), "type": "SCALAR",
                          "min": [times.iter().cloned().fold(f32::INFINITY, f32::min)],
                          "max": [times.iter().cloned().fold(f32::NEG_INFINITY, f32::max)]}),
    );
    accessors.push(json!({"bufferView": 2, "componentType": 5126, "count": values.len() / 3, "type": "VEC3"}));
    let views = document["bufferViews"].as_array_mut().unwrap();
    views.push(json!({"buffer": 0, "byteOffset": times_at, "byteLength": times.len() * 4}));
    views.push(json!({"buffer": 0, "byteOffset": values_at, "byteLength": values.len() * 4}));
    document["animations"] = json!([{
        "name": "Move",
        "samplers": [{"input": 1, "output": 2, "interpolation": interpolation}],
        "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}],
    }]);
    gltf_with(document, &bin)
}

#[test]
fn nan_keyframes_leave_the_channel_out_with_a_finding() {
    let bytes = animated_triangle(&[0.0, 1.0], &[0.0, 0.0, 0.0, f32::NAN, 1.0, 0.0], "LINEAR");
    let rig = load_ok(&bytes);
    assert_eq!(rig.clips.len(), 1, "the clip stays, without the broken channel");
    assert!(rig.clips[0].channels.is_empty());
    assert_contains(
        &rig.load_warnings().join("\n"),
        &["clip 'Move' channel 0 left out", "key value 1 is not finite"],
    );
    let report = RigReport::new(&rig);
    let f = finding(&report, "channel-left-out");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.nodes, [0]);
    assert_eq!(finding(&report, "clip-empty").clip, Some(0));
}

#[test]
fn decreasing_and_repeated_key_times_are_named() {
    let rig = load_ok(&animated_triangle(&[0.0, 2.0, 1.0], &[0.0; 9], "LINEAR"));
    assert_contains(
        &rig.load_warnings().join("\n"),
        &["key times decrease at key 2: 1 after 2"],
    );

    let rig = load_ok(&animated_triangle(&[-1.0, 0.5, 0.5], &[0.0; 9], "LINEAR"));
    assert_eq!(rig.clips[0].channels.len(), 1, "repeated times still play");
    let report = RigReport::new(&rig);
    assert_contains(
        &finding(&report, "keys-not-increasing").message,
        &["key 2 repeats time 0.5"],
    );
    assert_contains(&finding(&report, "keys-negative-time").message, &["before time 0"]);
}

#[test]
fn cubic_splines_need_three_values_per_key() {
    let rig = load_ok(&animated_triangle(&[0.0, 1.0], &[0.0; 6], "CUBICSPLINE"));
    assert!(rig.clips[0].channels.is_empty());
    assert_contains(
        &rig.load_warnings().join("\n"),
        &["2 keys but 2 values (cubic splines need three per key)"],
    );
}

#[test]
fn an_empty_animation_loads_with_a_finding() {
    let (mut document, bin) = triangle();
    document["animations"] = json!([{"name": "Nothing", "channels": [], "samplers": []}]);
    let rig = load_ok(&gltf_with(document, &bin));
    assert_eq!(rig.clips[0].duration, 0.0);
    let report = RigReport::new(&rig);
    assert_contains(
        &finding(&report, "clip-empty").message,
        &["clip 'Nothing' has no channels"],
    );
}

#[test]
fn an_animation_targeting_a_missing_node_is_named() {
    let bytes = animated_triangle(&[0.0, 1.0], &[0.0; 6], "LINEAR");
    let mut document: Value = serde_json::from_slice(&bytes).unwrap();
    document["animations"][0]["channels"][0]["target"]["node"] = json!(5);
    let e = load_error(&serde_json::to_vec(&document).unwrap());
    assert_kind!(e, RigError::Invalid(_));
    assert_contains(&e, &["animations[0].channels[0].target.node", "index out of range"]);
    document["animations"][0]["channels"][0]["target"]["node"] = json!(0);
    document["animations"][0]["channels"][0]["target"]["path"] = json!("bend");
    let e = load_error(&serde_json::to_vec(&document).unwrap());
    assert_kind!(e, RigError::Invalid(_));
    assert_contains(&e, &["animations[0].channels[0].target.path"]);
}

#[test]
fn an_image_that_fails_to_decode_is_a_warning() {
    let (mut document, bin) = triangle();
    let garbage = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\nthis is not a png");
    document["images"] = json!([{"uri": format!("data:image/png;base64,{garbage}"), "name": "skin.png"}]);
    document["textures"] = json!([{"source": 0}]);
    document["materials"] = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]);
    document["meshes"][0]["primitives"][0]["material"] = json!(0);
    let rig = load_ok(&gltf_with(document, &bin));
    assert_eq!(rig.textures.len(), 1, "the texture keeps its slot");
    assert_contains(
        &rig.load_warnings().join("\n"),
        &["texture 0 (skin.png) not loaded: cannot decode it"],
    );
    let report = RigReport::new(&rig);
    assert_eq!(finding(&report, "import").severity, Severity::Warning);
}

#[test]
fn external_files_missing_or_outside_the_model_folder_are_named() {
    let dir = common::temp_dir("hostile");
    let model = dir.join("model");
    std::fs::create_dir_all(&model).unwrap();
    std::fs::write(dir.join("outside.bin"), [0u8; 36]).unwrap();
    let write = |uri: &str| {
        let (mut document, _) = triangle();
        document["asset"] = json!({"version": "2.0"});
        document["buffers"] = json!([{"byteLength": 36, "uri": uri}]);
        let path = model.join("rig.gltf");
        std::fs::write(&path, serde_json::to_vec(&document).unwrap()).unwrap();
        load_file(&path).map(|_| ()).unwrap_err()
    };
    let missing = write("missing.bin");
    assert_kind!(missing, RigError::BufferFile { index: 0, .. });
    assert_contains(&missing, &["buffer 0", "'missing.bin'", "missing or unreadable"]);
    assert_kind!(
        write("../outside.bin"),
        RigError::BufferUri {
            index: 0,
            source: UriError::Outside { .. }
        }
    );
    assert_contains(
        &write("../outside.bin"),
        &["'../outside.bin' points outside the model's folder"],
    );
    assert_contains(&write("sub/../../outside.bin"), &["points outside the model's folder"]);
    let absolute = dir.join("outside.bin").display().to_string();
    assert_kind!(
        write(&absolute),
        RigError::BufferUri {
            source: UriError::Absolute { .. },
            ..
        }
    );
    assert_contains(&write(&absolute), &["is an absolute path"]);
    assert_contains(&write("https://example.com/rig.bin"), &["is a remote URI"]);
    std::fs::write(
        model.join("inside.bin"),
        floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]),
    )
    .unwrap();
    let (mut document, _) = triangle();
    document["asset"] = json!({"version": "2.0"});
    document["buffers"] = json!([{"byteLength": 36, "uri": "inside.bin"}]);
    std::fs::write(model.join("ok.gltf"), serde_json::to_vec(&document).unwrap()).unwrap();
    assert_eq!(load_file(&model.join("ok.gltf")).unwrap().vertex_count(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_external_uri_without_a_folder_is_refused() {
    let (mut document, _) = triangle();
    document["asset"] = json!({"version": "2.0"});
    document["buffers"] = json!([{"byteLength": 36, "uri": "rig.bin"}]);
    let e = load_error(&serde_json::to_vec(&document).unwrap());
    assert_kind!(
        e,
        RigError::BufferUri {
            source: UriError::NoFolder { .. },
            ..
        }
    );
    assert_contains(
        &e,
        &["'rig.bin' refers to an external file, but the data was not opened from a folder"],
    );
}

#[test]
fn glb_containers_with_lying_lengths_are_named() {
    let (document, bin) = triangle();
    let mut document = document;
    document["asset"] = json!({"version": "2.0"});
    document["buffers"] = json!([{"byteLength": 36}]);
    let json = serde_json::to_vec(&document).unwrap();
    let glb = glb_container(&json, Some(&bin));
    assert_eq!(load_ok(&glb).vertex_count(), 3);

    let mut too_long = glb.clone();
    too_long[8..12].copy_from_slice(&(glb.len() as u32 + 100).to_le_bytes());
    assert_kind!(load_error(&too_long), RigError::Glb(GlbError::TotalLength { .. }));
    assert_contains(
        &load_error(&too_long),
        &["declares a total length of", "but the file has"],
    );

    let mut chunk = glb.clone();
    chunk[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_kind!(
        load_error(&chunk),
        RigError::Glb(GlbError::ChunkLength {
            chunk: "JSON",
            declared: u32::MAX,
            ..
        })
    );
    assert_contains(&load_error(&chunk), &["JSON chunk declares 4294967295 bytes"]);

    let mut version = glb.clone();
    version[4] = 1;
    assert_kind!(load_error(&version), RigError::Glb(GlbError::Version(1)));
    assert_contains(&load_error(&version), &["GLB version 1"]);

    let no_bin = glb_container(&json, None);
    assert_contains(
        &load_error(&no_bin),
        &["buffer 0 refers to the GLB binary chunk, but there is none"],
    );

    assert_kind!(
        load_error(b"glTF\x02\0\0\0"),
        RigError::Glb(GlbError::ShortHeader { size: 8 })
    );
    assert_contains(&load_error(b"glTF\x02\0\0\0"), &["shorter than its 12-byte header"]);
    assert_kind!(load_error(b"\x00\x01garbage"), RigError::NotGltf);
    assert_contains(&load_error(b"\x00\x01garbage"), &["not a glTF file"]);
    assert_kind!(load_error(b"{\"asset\": "), RigError::Json(_));
    assert_contains(&load_error(b"{\"asset\": "), &["not a valid glTF file"]);
    assert_kind!(load_error(b""), RigError::NotGltf);
}

#[test]
fn many_instances_of_a_big_mesh_exceed_the_memory_budget() {
    // 600 000 zero-filled vertices (7 MB decoded, allowed once) drawn by 300 nodes: the GPU
    // buffers alone would take 11 GB.
    let nodes: Vec<Value> = (0..300).map(|_| json!({"mesh": 0})).collect();
    let document = json!({
        "nodes": nodes,
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"componentType": 5126, "count": 600_000, "type": "VEC3", "min": [0, 0, 0], "max": [0, 0, 0]}],
    });
    let e = load_error(&gltf_with(document, &[]));
    assert_kind!(e, RigError::Budget(_));
    assert_contains(&e, &["drawing 300 mesh instances", "of memory"]);
}

#[test]
fn joints_beyond_weights_1_are_counted_as_truncated() {
    // JOINTS_0..2 / WEIGHTS_0..2: twelve influences; vertex 1 carries 0.25 in the third set.
    let (mut document, mut bin) = triangle();
    let mut weights = [[0.0f32; 4]; 9];
    weights[..3].fill([1.0, 0.0, 0.0, 0.0]);
    weights[3 * 2 + 1] = [0.25, 0.0, 0.0, 0.0];
    let mut accessors = document["accessors"].as_array().unwrap().clone();
    let mut views = document["bufferViews"].as_array().unwrap().clone();
    let mut attributes = json!({"POSITION": 0});
    for set in 0..3 {
        let at = bin.len();
        bin.extend([0u8; 12]);
        views.push(json!({"buffer": 0, "byteOffset": at, "byteLength": 12}));
        accessors.push(json!({"bufferView": views.len() - 1, "componentType": 5121, "count": 3, "type": "VEC4"}));
        attributes[format!("JOINTS_{set}")] = json!(accessors.len() - 1);
        let at = bin.len();
        bin.extend(
            weights[3 * set..3 * set + 3]
                .iter()
                .flatten()
                .flat_map(|w| w.to_le_bytes()),
        );
        views.push(json!({"buffer": 0, "byteOffset": at, "byteLength": 48}));
        accessors.push(json!({"bufferView": views.len() - 1, "componentType": 5126, "count": 3, "type": "VEC4"}));
        attributes[format!("WEIGHTS_{set}")] = json!(accessors.len() - 1);
    }
    document["accessors"] = Value::Array(accessors);
    document["bufferViews"] = Value::Array(views);
    document["meshes"][0]["primitives"][0]["attributes"] = attributes;
    let rig = load_ok(&gltf_with(document, &bin));
    assert_eq!(rig.meshes[0].primitives[0].influences.as_ref().unwrap().sets, 2);
    let facts = &rig.facts.primitives[0][0];
    assert_eq!(facts.truncated_vertices, [1]);
    assert_eq!(facts.truncated_weight_max, 0.25);
    let report = RigReport::new(&rig);
    assert_contains(
        &finding(&report, "influences-over-8").message,
        &["1 vertices have more than 8 influences", "up to 0.250"],
    );
}

#[test]
fn attribute_set_numbers_far_apart_are_not_walked_one_by_one() {
    let (mut document, bin) = skinned_triangle([[0; 4]; 3], [[1.0, 0.0, 0.0, 0.0]; 3]);
    document["meshes"][0]["primitives"][0]["attributes"] =
        json!({"POSITION": 0, "JOINTS_4000000000": 1, "WEIGHTS_4000000000": 2});
    let rig = without_huge_allocation(|| load_ok(&gltf_with(document, &bin)));
    assert!(
        rig.meshes[0].primitives[0].influences.is_none(),
        "only sets 0 and 1 skin"
    );
    assert_eq!(rig.facts.primitives[0][0].truncated_vertices, [0, 1, 2]);
}

#[test]
fn the_report_stays_bounded_on_wide_files() {
    // 20 000 nodes in a chain, 3 000 clips each moving the last one, and a skinned triangle whose
    // joint is the deepest node: first-frame poses would cost clips × nodes.
    let (mut document, mut bin) = skinned_triangle([[0; 4]; 3], [[1.0, 0.0, 0.0, 0.0]; 3]);
    let n = 20_000;
    let mut nodes = vec![json!({"mesh": 0, "skin": 0})];
    nodes.extend((1..n).map(|i| {
        if i + 1 < n {
            json!({"children": [i + 1]})
        } else {
            json!({})
        }
    }));
    document["nodes"] = json!(nodes);
    document["skins"] = json!([{"joints": [n - 1]}]);
    let times_at = bin.len();
    bin.extend(floats(&[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]));
    let accessors = document["accessors"].as_array_mut().unwrap();
    accessors
        .push(json!({"bufferView": 3, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [1]}));
    accessors.push(json!({"bufferView": 4, "componentType": 5126, "count": 2, "type": "VEC3"}));
    let views = document["bufferViews"].as_array_mut().unwrap();
    views.push(json!({"buffer": 0, "byteOffset": times_at, "byteLength": 8}));
    views.push(json!({"buffer": 0, "byteOffset": times_at + 8, "byteLength": 24}));
    let clip = json!({"samplers": [{"input": 3, "output": 4}],
                      "channels": [{"sampler": 0, "target": {"node": n - 1, "path": "translation"}}]});
    document["animations"] = json!(vec![clip; 3000]);
    let rig = load_ok(&gltf_with(document, &bin));
    let report = without_huge_allocation(|| RigReport::new(&rig));
    assert_eq!(report.clips.len(), 3000);
    assert!(
        report.clips[0].first_frame_vs_bind.is_some(),
        "the first clips are measured"
    );
    assert!(report.clips[2999].first_frame_vs_bind.is_none(), "the last are not");
    assert_contains(&finding(&report, "report-incomplete").message, &["first-frame poses"]);
    assert_eq!(report.skins[0].root, rig.find_node(&format!("node {}", n - 1)));
}

#[test]
fn many_accessors_over_one_view_are_scanned_within_bounds() {
    // 20 000 accessors with min/max over the same 1 MiB of floats.
    let bin = floats(&vec![0.5f32; 1 << 18]);
    let accessor = json!({"bufferView": 0, "componentType": 5126, "count": 1 << 18, "type": "SCALAR",
                          "min": [0.5], "max": [0.5]});
    let document = json!({
        "accessors": vec![accessor; 20_000],
        "bufferViews": [{"buffer": 0, "byteLength": 1 << 20}],
    });
    let rig = without_huge_allocation(|| load_ok(&gltf_with(document, &bin)));
    assert!(rig.facts.data_errors.is_empty(), "{:?}", rig.facts.data_errors);
}
