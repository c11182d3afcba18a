//! Helpers shared by the integration tests: where the shared rigs live, and a small glTF reader
//! written independently of the importer (JSON via serde_json, GLB header, buffers, float
//! accessors), so the tests can check the importer against the file itself.

#![allow(dead_code)]

pub mod counting;
pub mod fbx;
pub mod gpu;
pub mod property_scene;
pub mod random;
pub mod skinned;
#[cfg(target_os = "linux")]
pub mod xinput;

use serde_json::Value;
use std::path::{Path, PathBuf};

/// Set (as CI does) to make tests that read `../shared` fail when it is missing instead of
/// skipping.
pub const REQUIRE_SHARED_ENV: &str = "RIGSCOPE_REQUIRE_SHARED";

/// A folder of `../shared` next to the project, or `None` (with a printed reason) when it is
/// absent, in which case the calling test skips — unless [`REQUIRE_SHARED_ENV`] is set.
pub fn shared_folder(name: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared")).join(name);
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os(REQUIRE_SHARED_ENV).is_some() {
        panic!("{REQUIRE_SHARED_ENV} is set but {} is missing", dir.display());
    }
    eprintln!("skipped: the shared test folder {} is absent", dir.display());
    None
}

/// The shared test rigs folder (`../shared/rigs`); see [`shared_folder`].
pub fn shared_rigs() -> Option<PathBuf> {
    shared_folder("rigs")
}

/// Loads `file` from the shared rigs folder with the importer; panics with the importer's
/// message when it fails.
pub fn load_rig(dir: &Path, file: &str) -> rigscope::rig::Rig {
    rigscope::rig::load_file(&dir.join(file)).unwrap_or_else(|e| panic!("{file} failed to load: {e}"))
}

/// `rig` with every vertex's weights divided by their sum, as encoders and dual quaternion
/// skinning treat them: RobotExpressive's hands sum to up to 1.76, which linear blend skinning
/// follows literally.
pub fn with_normalized_weights(mut rig: rigscope::rig::Rig) -> rigscope::rig::Rig {
    for primitive in rig.meshes.iter_mut().flat_map(|m| &mut m.primitives) {
        if let Some(influences) = &mut primitive.influences {
            for vertex in influences.weights.chunks_mut(influences.sets) {
                let sum: f32 = vertex.iter().flatten().sum();
                if sum > 0.0 {
                    vertex.iter_mut().flatten().for_each(|w| *w /= sum);
                }
            }
        }
    }
    rig
}

/// A fresh, empty folder under the system temp folder, unique to this test process and `name`.
pub fn temp_dir(name: &str) -> PathBuf {
    tempfile::Builder::new()
        .prefix(&format!("rigscope-{name}-"))
        .tempdir()
        .unwrap_or_else(|e| panic!("cannot create a temporary folder for {name}: {e}"))
        .keep()
}

/// How long a test lets one run of the `rigscope` binary take before killing it as a hang.
pub const RIGSCOPE_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Runs the `rigscope` binary with `args` and its output captured (killed past
/// [`RIGSCOPE_LIMIT`]).
pub fn rigscope<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> std::process::Output {
    rigscope_with(rigscope_command().args(args))
}

/// The `rigscope` binary as a command, for arguments and an environment set one by one; run it
/// with [`rigscope_with`].
pub fn rigscope_command() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_rigscope"))
}

/// Runs `command` (a `rigscope` command with its arguments and environment set) with its output
/// captured (killed past [`RIGSCOPE_LIMIT`]).
pub fn rigscope_with(command: &mut std::process::Command) -> std::process::Output {
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rigscope runs");
    wait_or_kill(child, RIGSCOPE_LIMIT, "rigscope")
}

/// Runs the `rigscope` binary with `args` (killed past [`RIGSCOPE_LIMIT`]): its exit status,
/// standard output and standard error.
pub fn run_rigscope(args: &[&str]) -> (Option<i32>, String, String) {
    let output = rigscope(args);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Waits for `child` to exit and returns its output; past `limit` it is killed and the test
/// fails naming `what` as a hang. Piped output is read while the child runs, so a child that
/// writes more than a pipe holds does not stall.
pub fn wait_or_kill(mut child: std::process::Child, limit: std::time::Duration, what: &str) -> std::process::Output {
    use std::io::Read;
    use wait_timeout::ChildExt;
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                pipe.read_to_end(&mut bytes).expect("reading a child's output");
            }
            bytes
        })
    }
    let (stdout, stderr) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let Some(status) = child.wait_timeout(limit).expect("waiting for a child process") else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{what} still running after {limit:?}: a hang");
    };
    std::process::Output {
        status,
        stdout: stdout.join().expect("the stdout reader"),
        stderr: stderr.join().expect("the stderr reader"),
    }
}

/// Whether a program called `name` is on the `PATH`.
pub fn has_program(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
}

/// The viewer (the `rigscope` binary) with `args`, under Xvfb when there is no display; `None`
/// (the test skips) when neither is there and no adapter is required.
pub fn viewer_command(args: &[&str]) -> Option<std::process::Command> {
    use rigscope::render::REQUIRE_ADAPTER_ENV;
    use std::process::Command;
    let binary = env!("CARGO_BIN_EXE_rigscope");
    if std::env::var_os("DISPLAY").is_some() {
        let mut c = Command::new(binary);
        c.args(args);
        Some(c)
    } else if has_program("xvfb-run") {
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "-s", "-screen 0 1280x800x24", binary]).args(args);
        Some(c)
    } else if std::env::var_os(REQUIRE_ADAPTER_ENV).is_some() {
        panic!("no DISPLAY and no xvfb-run (Debian package xvfb), but {REQUIRE_ADAPTER_ENV} is set");
    } else {
        eprintln!("skipped: no DISPLAY and no xvfb-run to provide one");
        None
    }
}

/// A channel difference above this (in 8-bit levels) counts as a different pixel: MSAA edges
/// and rasterizer rounding move a few levels.
pub const CHANNEL_TOLERANCE: u8 = 24;

/// Whether some channel of `a` and `b` is more than [`CHANNEL_TOLERANCE`] apart.
pub fn differs(a: &image::Rgba<u8>, b: &image::Rgba<u8>) -> bool {
    a.0.iter().zip(b.0).any(|(x, y)| x.abs_diff(y) > CHANNEL_TOLERANCE)
}

/// How many pixels of two images of the same size [`differs`].
pub fn different_pixels(a: &image::RgbaImage, b: &image::RgbaImage) -> usize {
    assert_eq!(a.dimensions(), b.dimensions());
    a.pixels().zip(b.pixels()).filter(|(x, y)| differs(x, y)).count()
}

/// The farthest any point of `a` is from its nearest point of `b` (the one-sided Hausdorff
/// distance).
pub fn farthest_from_nearest(a: &[glam::DVec3], b: &[glam::DVec3]) -> f64 {
    a.iter()
        .map(|p| b.iter().map(|q| p.distance_squared(*q)).fold(f64::INFINITY, f64::min))
        .fold(0.0, f64::max)
        .sqrt()
}

/// Fails unless `a` and `b` print the same (`what` names them in the failure): rig fields
/// compared by their full debug form, where equal values print equally.
pub fn same<T: std::fmt::Debug>(a: &T, b: &T, what: &str) {
    assert!(format!("{a:?}") == format!("{b:?}"), "{what} differ after saving");
}

/// Where each of `before`'s nodes is in `saved`, a file Rigscope wrote from it: node `i` is
/// node `i`, except that a skinned mesh below another node or on a node with a transform of its
/// own was moved to a new transform-free root node appended after the file's nodes (the node it
/// was on stays, without it). Fails unless the file's nodes kept their indices, names and rest
/// transforms, every new node is such a root, and the instances are the same but for that move.
pub fn nodes_after_placement(before: &rigscope::rig::Rig, saved: &rigscope::rig::Rig) -> Vec<usize> {
    let kept = before.nodes.len();
    assert!(saved.nodes.len() >= kept, "nodes were lost in saving");
    same(&before.nodes, &saved.nodes[..kept].to_vec(), "nodes");
    for added in &saved.nodes[kept..] {
        assert!(
            added.parent.is_none() && added.rest == rigscope::rig::Trs::IDENTITY,
            "added node '{}' is not a transform-free root",
            added.name
        );
    }
    let mut node_of: Vec<usize> = (0..kept).collect();
    assert_eq!(before.instances.len(), saved.instances.len(), "mesh instances");
    let mut unmatched: Vec<&rigscope::rig::MeshInstance> = saved.instances.iter().collect();
    for instance in &before.instances {
        let found = unmatched.iter().position(|s| {
            s.mesh == instance.mesh
                && s.skin == instance.skin
                && (s.node == instance.node || (instance.skin.is_some() && s.node >= kept))
        });
        let Some(found) = found else {
            panic!(
                "the instance of mesh {} on node {} is not in the saved file",
                instance.mesh, instance.node
            );
        };
        node_of[instance.node] = unmatched.swap_remove(found).node;
    }
    assert_eq!(
        saved.nodes.len() - kept,
        node_of.iter().enumerate().filter(|(a, b)| a != *b).count(),
        "nodes added for no mesh"
    );
    node_of
}

/// The bits of every component of `values`, to compare floats exactly.
pub fn bits(values: &[glam::Vec4]) -> Vec<[u32; 4]> {
    values.iter().map(|v| v.to_array().map(f32::to_bits)).collect()
}

/// The demo rig, loaded from the committed GLB bytes.
pub fn load_demo() -> rigscope::rig::Rig {
    rigscope::rig::load_slice(rigscope::rig::demo::DEMO_GLB, None, "demo.glb")
        .unwrap_or_else(|e| panic!("the demo rig failed to load: {e}"))
}

/// A glTF document read straight from its bytes: the JSON and every buffer's bytes.
pub struct Doc {
    pub json: Value,
    pub buffers: Vec<Vec<u8>>,
}

/// Splits a GLB container into its JSON chunk and optional BIN chunk, checking the header.
pub fn split_glb(bytes: &[u8]) -> (&[u8], Option<&[u8]>) {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    assert!(bytes.len() >= 20, "GLB shorter than its header");
    assert_eq!(&bytes[0..4], b"glTF", "GLB magic");
    assert_eq!(u32_at(4), 2, "GLB version");
    assert_eq!(u32_at(8), bytes.len(), "GLB total length field");
    let json_len = u32_at(12);
    assert_eq!(&bytes[16..20], b"JSON", "first GLB chunk must be JSON");
    let json = &bytes[20..20 + json_len];
    let bin_at = 20 + json_len;
    let bin = (bin_at + 8 <= bytes.len()).then(|| {
        let len = u32_at(bin_at);
        assert_eq!(&bytes[bin_at + 4..bin_at + 8], b"BIN\0", "second GLB chunk must be BIN");
        &bytes[bin_at + 8..bin_at + 8 + len]
    });
    (json, bin)
}

/// Decodes standard base64 (with or without padding).
pub fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("invalid base64 character {:?}", c as char),
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .map(value)
        .collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.chunks(4) {
        let mut n = 0u32;
        for (k, &d) in group.iter().enumerate() {
            n |= u32::from(d) << (18 - 6 * k);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..group.len()]);
    }
    out
}

impl Doc {
    /// Reads a `.gltf` or `.glb` file and its buffers (GLB chunk, data URI or file next to it).
    pub fn open(path: &Path) -> Doc {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        Doc::from_bytes(&bytes, path.parent())
    }

    pub fn from_bytes(bytes: &[u8], dir: Option<&Path>) -> Doc {
        let (json_bytes, bin) = if bytes.starts_with(b"glTF") {
            split_glb(bytes)
        } else {
            (bytes, None)
        };
        let json: Value = serde_json::from_slice(json_bytes).expect("glTF JSON parses");
        let buffers = array(&json, "buffers")
            .iter()
            .map(|buffer| {
                let data = match buffer["uri"].as_str() {
                    None => bin.expect("buffer without uri needs a GLB BIN chunk").to_vec(),
                    Some(uri) if uri.starts_with("data:") => {
                        let (_, payload) = uri.split_once(";base64,").expect("base64 data URI");
                        base64_decode(payload)
                    }
                    Some(uri) => {
                        let path = dir.expect("external buffer needs a folder").join(uri);
                        std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
                    }
                };
                let declared = buffer["byteLength"].as_u64().expect("byteLength") as usize;
                assert!(data.len() >= declared, "buffer shorter than its byteLength");
                data
            })
            .collect();
        Doc { json, buffers }
    }

    /// `json[key]` as an array; empty when absent.
    pub fn array(&self, key: &str) -> &[Value] {
        array(&self.json, key)
    }

    /// The elements of a FLOAT accessor, each as `components` f64 values.
    pub fn read_floats(&self, accessor: usize) -> Vec<Vec<f64>> {
        let acc = &self.json["accessors"][accessor];
        assert_eq!(acc["componentType"], 5126, "accessor {accessor} is not FLOAT");
        self.read_accessor(accessor)
    }

    /// The elements of any non-sparse accessor, each as its components in f64: integers as they
    /// are, or mapped to [0, 1] when the accessor is `normalized`. Honours the bufferView's
    /// byteOffset, the accessor's byteOffset and byteStride (tightly packed when absent).
    pub fn read_accessor(&self, accessor: usize) -> Vec<Vec<f64>> {
        let acc = &self.json["accessors"][accessor];
        assert!(acc.get("sparse").is_none(), "sparse accessors are not read here");
        let components = match acc["type"].as_str().expect("accessor type") {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            other => panic!("accessor type {other} not handled"),
        };
        let component_type = acc["componentType"].as_u64().expect("componentType");
        let size = match component_type {
            5120 | 5121 => 1,
            5122 | 5123 => 2,
            5125 | 5126 => 4,
            other => panic!("component type {other} not handled"),
        };
        let normalized = acc["normalized"].as_bool().unwrap_or(false);
        let count = index(&acc["count"], "count");
        let view = &self.json["bufferViews"][index(&acc["bufferView"], "bufferView")];
        let buffer = &self.buffers[index(&view["buffer"], "buffer")];
        let start =
            view["byteOffset"].as_u64().unwrap_or(0) as usize + acc["byteOffset"].as_u64().unwrap_or(0) as usize;
        let stride = view["byteStride"].as_u64().map_or(size * components, |s| s as usize);
        let read = |at: usize| -> f64 {
            let b = &buffer[at..at + size];
            match (component_type, normalized) {
                (5126, _) => f64::from(f32::from_le_bytes(b.try_into().unwrap())),
                (5120, false) => f64::from(b[0] as i8),
                (5120, true) => (f64::from(b[0] as i8) / 127.0).max(-1.0),
                (5122, false) => f64::from(i16::from_le_bytes(b.try_into().unwrap())),
                (5122, true) => (f64::from(i16::from_le_bytes(b.try_into().unwrap())) / 32767.0).max(-1.0),
                (5121, false) => f64::from(b[0]),
                (5121, true) => f64::from(b[0]) / 255.0,
                (5123, false) => f64::from(u16::from_le_bytes(b.try_into().unwrap())),
                (5123, true) => f64::from(u16::from_le_bytes(b.try_into().unwrap())) / 65535.0,
                (5125, _) => f64::from(u32::from_le_bytes(b.try_into().unwrap())),
                _ => unreachable!(),
            }
        };
        (0..count)
            .map(|i| (0..components).map(|c| read(start + i * stride + size * c)).collect())
            .collect()
    }
}

/// `json[key]` as an array; empty when absent.
pub fn array<'a>(json: &'a Value, key: &str) -> &'a [Value] {
    json[key].as_array().map_or(&[], Vec::as_slice)
}

/// `value` as a usize, panicking with `what` when it is not one.
pub fn index(value: &Value, what: &str) -> usize {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("{what} is not an index: {value}")) as usize
}

/// The numbers of a JSON array as f64.
pub fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

/// A node's local transform from the JSON as (translation, rotation xyzw, scale) in f64, using
/// the glTF defaults for absent fields and decomposing `matrix` (with glam's f64 decomposition)
/// when the node gives one.
pub fn json_rest_trs(node: &Value) -> ([f64; 3], [f64; 4], [f64; 3]) {
    if let Some(matrix) = node.get("matrix") {
        let m = numbers(matrix);
        let m = glam::DMat4::from_cols_slice(&m);
        let (s, r, t) = m.to_scale_rotation_translation();
        return (t.to_array(), r.to_array(), s.to_array());
    }
    let get = |key: &str, default: &[f64]| node.get(key).map(numbers).unwrap_or_else(|| default.to_vec());
    let t = get("translation", &[0.0; 3]);
    let r = get("rotation", &[0.0, 0.0, 0.0, 1.0]);
    let s = get("scale", &[1.0; 3]);
    ([t[0], t[1], t[2]], [r[0], r[1], r[2], r[3]], [s[0], s[1], s[2]])
}

/// Name the importer gives glTF node `i` (its own name, or "node {i}").
pub fn json_node_name(json: &Value, i: usize) -> String {
    json["nodes"][i]["name"]
        .as_str()
        .map_or_else(|| format!("node {i}"), str::to_owned)
}

/// Index in `rig.nodes` of glTF node `i`, found through the importer's record of each node's
/// glTF index, and checked by the name the importer gives it. Panics when either disagrees.
pub fn rig_node_of(rig: &rigscope::rig::Rig, json: &Value, i: usize) -> usize {
    // By index, not by name: real rigs repeat node names (RobotExpressive has two 'Head's).
    let k = rig
        .facts
        .gltf_node
        .iter()
        .position(|&g| g == i)
        .unwrap_or_else(|| panic!("glTF node {i} has no rig node"));
    assert_eq!(
        rig.nodes[k].name,
        json_node_name(json, i),
        "glTF node {i} and rig node {k}"
    );
    k
}

/// A glTF document with `bin` as its only buffer, embedded as a data URI.
pub fn gltf_with(mut document: Value, bin: &[u8]) -> Vec<u8> {
    use base64::Engine;
    document["asset"] = serde_json::json!({"version": "2.0"});
    if !bin.is_empty() {
        let data = base64::engine::general_purpose::STANDARD.encode(bin);
        document["buffers"] = serde_json::json!([{
            "byteLength": bin.len(),
            "uri": format!("data:application/octet-stream;base64,{data}"),
        }]);
    }
    serde_json::to_vec(&document).unwrap()
}

/// The whole window's UI (`ui::show`) over `viewer`, at `width × height` points, for tests that
/// find widgets by label and click them like a person.
pub fn main_window<'a>(
    viewer: rigscope::viewer::Viewer,
    width: f32,
    height: f32,
) -> egui_kittest::Harness<'a, (rigscope::viewer::Viewer, rigscope::ui::UiState)> {
    use rigscope::ui::{self, FrameInfo, UiState};
    egui_kittest::Harness::builder()
        .with_size(egui::vec2(width, height))
        .build_ui_state(
            |ui, (viewer, state): &mut (rigscope::viewer::Viewer, UiState)| {
                ui::show(ui, viewer, state, &FrameInfo::default());
            },
            (viewer, UiState::default()),
        )
}
