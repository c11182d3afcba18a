//! `rigscope export`: the OBJ of an FBX rig's pose against the mesh its authoring tool deformed
//! itself (`fbx/truth`, as `tests/fbx/fbx_truth.rs` compares the skinned vertices), the GLB of a glTF
//! rig's pose read back by the importer against an f64 skinning of the original, and the
//! refusals (exit 2, nothing written).

use crate::common;

use crate::common::{farthest_from_nearest, run_rigscope, shared_rigs, temp_dir};
use glam::{DMat3, DMat4, DVec3, DVec4, Vec3};
use rigscope::anim::PoseBuffers;
use rigscope::rig::Rig;
use std::path::Path;

/// As `tests/fbx/fbx_truth.rs`: how far (metres) an exported vertex may be from the nearest vertex
/// of the tool's mesh and the reverse (the OBJs print 6 decimals of a centimetre; the rig is
/// f32). The OBJ prints each f32 in full, so exporting adds nothing to it.
const TRUTH_TOLERANCE: f64 = 2e-6;

/// FBX time units per second (FBX `KTime`).
const KTIME_PER_SECOND: f64 = 46_186_158_000.0;

/// An OBJ file read back: positions, normals, how many texture coordinates, faces, and each `o`
/// with the `usemtl` that follows it.
#[derive(Default)]
struct Obj {
    positions: Vec<DVec3>,
    normals: Vec<DVec3>,
    uvs: usize,
    /// Each face's corners: 1-based `v/vt/vn` as written, 0 for a missing one.
    faces: Vec<Vec<[usize; 3]>>,
    objects: Vec<(String, Option<String>)>,
    mtllib: Option<String>,
}

fn read_obj(path: &Path) -> Obj {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut obj = Obj::default();
    let numbers = |rest: &str| -> Vec<f64> {
        rest.split_whitespace()
            .map(|x| x.parse().unwrap_or_else(|_| panic!("not a number in '{rest}'")))
            .collect()
    };
    for line in text.lines() {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "v" => obj.positions.push(DVec3::from_slice(&numbers(rest))),
            "vn" => obj.normals.push(DVec3::from_slice(&numbers(rest))),
            "vt" => obj.uvs += 1,
            "o" => obj.objects.push((rest.to_owned(), None)),
            "usemtl" => obj.objects.last_mut().expect("usemtl after an o").1 = Some(rest.to_owned()),
            "mtllib" => obj.mtllib = Some(rest.to_owned()),
            "f" => {
                let corners = rest.split_whitespace().map(|corner| {
                    let mut parts = corner.split('/').map(|i| i.parse().unwrap_or(0));
                    [(); 3].map(|_| parts.next().unwrap_or(0))
                });
                obj.faces.push(corners.collect());
            }
            _ => {}
        }
    }
    obj
}

/// Two of `tests/fbx/fbx_truth.rs`'s pairs (Y-up files in centimetres): the FBX, the tool's OBJ, the
/// clip, and the time in the clip (the file's time less the stack's start).
const TRUTHS: &[(&str, &str, Option<&str>, f64)] = &[
    (
        "maya_game_sausage_7500_ascii_combined.fbx",
        "maya_game_sausage_wiggle_10.obj",
        Some("wiggle"),
        10.0 / 24.0 - 1_924_423_250.0 / KTIME_PER_SECOND,
    ),
    (
        "maya_kenney_character_7700_binary.fbx",
        "maya_kenney_character_9.obj",
        None,
        9.0 / 24.0,
    ),
];

#[test]
fn an_obj_export_matches_the_authoring_tools_deformed_mesh() {
    let Some(dir) = shared_rigs() else { return };
    let dir = dir.join("fbx");
    let out_dir = temp_dir("export-truth");
    for &(fbx, truth, clip, time) in TRUTHS {
        let out = out_dir.join(truth);
        let (input, out_text) = (dir.join(fbx), out.to_string_lossy().into_owned());
        // The time as the CLI reads it: an f32, as fbx_truth passes it to the player.
        let time = format!("{}", time as f32);
        let mut args = vec!["export", input.to_str().unwrap(), "--time", &time, "--out", &out_text];
        if let Some(clip) = clip {
            args.extend(["--clip", clip]);
        }
        let (status, stdout, stderr) = run_rigscope(&args);
        assert_eq!(status, Some(0), "{fbx}: {stdout}{stderr}");
        let exported = read_obj(&out);
        let centimetres = DMat4::from_scale(DVec3::splat(0.01));
        let expected: Vec<DVec3> = read_obj(&dir.join("truth").join(truth))
            .positions
            .into_iter()
            .map(|p| centimetres.transform_point3(p))
            .collect();
        let distance = farthest_from_nearest(&exported.positions, &expected)
            .max(farthest_from_nearest(&expected, &exported.positions));
        println!(
            "{truth}: {} exported vertices against {}: {distance:.3e} m",
            exported.positions.len(),
            expected.len()
        );
        assert!(distance < TRUTH_TOLERANCE, "{truth}: {distance:.3e} m");

        // The file is whole: one normal per vertex, every face's corners inside the file,
        // every object with a material that the .mtl beside it defines.
        let rig = common::load_rig(&dir, fbx);
        let vertices: usize = (rig.instances.iter())
            .flat_map(|i| &rig.meshes[i.mesh].primitives)
            .map(|p| p.vertex_count())
            .sum();
        assert_eq!(exported.positions.len(), vertices, "{fbx}");
        assert_eq!(exported.normals.len(), vertices, "{fbx}");
        assert!(
            exported.uvs == 0 || exported.uvs == vertices,
            "{fbx}: {} uvs",
            exported.uvs
        );
        let n = exported.positions.len();
        for face in &exported.faces {
            assert_eq!(face.len(), 3, "{fbx}: triangles only");
            for corner in face {
                assert!(
                    (1..=n).contains(&corner[0]) && (1..=n).contains(&corner[2]),
                    "{fbx}: {corner:?}"
                );
            }
        }
        let mtl_name = exported.mtllib.as_deref().expect("an mtllib line");
        let mtl = std::fs::read_to_string(out_dir.join(mtl_name)).expect("the .mtl beside the OBJ");
        for (object, material) in &exported.objects {
            let material = material
                .as_deref()
                .unwrap_or_else(|| panic!("{fbx}: '{object}' has no usemtl"));
            assert!(
                mtl.lines().any(|l| l == format!("newmtl {material}")),
                "{fbx}: {material}"
            );
        }
    }
}

/// Each vertex of every primitive of `rig` linearly blend skinned in f64 from the pose's joint
/// world matrices and the skins' inverse bind matrices: (position, unit normal), in the order
/// the export writes its primitives (instances, then their primitives).
fn skinned_f64(rig: &Rig, pose: &PoseBuffers) -> Vec<Vec<(DVec3, DVec3)>> {
    let mut primitives = Vec::new();
    for instance in &rig.instances {
        let skin = &rig.skins[instance.skin.expect("a skinned rig")];
        let palette: Vec<DMat4> = (skin.joints.iter().zip(&skin.inverse_binds))
            .map(|(&joint, inverse_bind)| pose.worlds[joint].as_dmat4() * inverse_bind.as_dmat4())
            .collect();
        for primitive in &rig.meshes[instance.mesh].primitives {
            let influences = primitive.influences.as_ref().expect("weights");
            let vertices = (0..primitive.vertex_count()).map(|v| {
                let mut m = DMat4::ZERO;
                for (joint, weight) in influences.of_vertex(v) {
                    m += palette[joint as usize] * f64::from(weight);
                }
                let p = m * DVec4::from((primitive.positions[v].as_dvec3(), 1.0));
                let normal = DMat3::from_mat4(m).inverse().transpose() * primitive.normals[v].as_dvec3();
                (p.truncate(), normal.normalize())
            });
            primitives.push(vertices.collect());
        }
    }
    primitives
}

#[test]
fn a_glb_export_reloads_as_the_pose_with_its_materials_and_texture() {
    let Some(dir) = shared_rigs() else { return };
    let out = temp_dir("export-glb").join("fox-run.glb");
    let input = dir.join("Fox.glb");
    let args = [
        "export",
        input.to_str().unwrap(),
        "--clip",
        "Run",
        "--time",
        "0.5",
        "--method",
        "lbs",
        "--out",
        out.to_str().unwrap(),
    ];
    let (status, stdout, stderr) = run_rigscope(&args);
    assert_eq!(status, Some(0), "{stdout}{stderr}");

    let original = common::load_rig(&dir, "Fox.glb");
    let run = original.clips.iter().position(|c| c.name == "Run").expect("a Run clip");
    let mut pose = PoseBuffers::new(&original);
    pose.evaluate(&original, Some(run), 0.5);
    let expected = skinned_f64(&original, &pose);
    let rest = skinned_f64(&original, &PoseBuffers::new(&original));
    let size = (original.meshes.iter().flat_map(|m| &m.primitives))
        .flat_map(|p| &p.positions)
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.as_dvec3()), hi.max(p.as_dvec3()))
        });
    let size = (size.1 - size.0).length();

    let exported = rigscope::rig::load_file(&out).unwrap_or_else(|e| panic!("the export does not load: {e}"));
    assert!(exported.skins.is_empty() && exported.clips.is_empty(), "a static mesh");
    assert_eq!(exported.meshes.len(), expected.len());
    let (mut worst, mut worst_normal, mut moved) = (0.0f64, 0.0f64, 0.0f64);
    for ((mesh, expected), rest) in exported.meshes.iter().zip(&expected).zip(&rest) {
        let [primitive] = &mesh.primitives[..] else {
            panic!("one primitive per mesh")
        };
        assert_eq!(primitive.vertex_count(), expected.len());
        for (((p, n), (want, want_normal)), (at_rest, _)) in primitive
            .positions
            .iter()
            .zip(&primitive.normals)
            .zip(expected)
            .zip(rest)
        {
            worst = worst.max(p.as_dvec3().distance(*want));
            worst_normal = worst_normal.max(n.as_dvec3().distance(*want_normal));
            moved = moved.max(want.distance(*at_rest));
        }
    }
    println!(
        "Fox Run 0.5 s: worst position {worst:.3e} ({:.3e} of the rig's size {size:.1}), worst normal {worst_normal:.3e}; the pose moves vertices up to {moved:.1} from rest",
        worst / size
    );
    assert!(worst <= 1e-5 * size, "{worst:.3e} against a rig of {size}");
    assert!(worst_normal < 1e-4, "{worst_normal:.3e}");
    assert!(moved > 0.05 * size, "the pose is not the rest pose");

    // Materials and the base colour texture: the same count, colour and pixels (PNG is lossless).
    assert_eq!(exported.materials.len(), original.materials.len());
    for (got, want) in exported.materials.iter().zip(&original.materials) {
        assert_eq!(got.base_color, want.base_color);
        let (Some(got_texture), Some(want_texture)) = (got.base_color_texture, want.base_color_texture) else {
            panic!("'{}' lost its base colour texture", want.name);
        };
        let (got_texture, want_texture) = (&exported.textures[got_texture], &original.textures[want_texture]);
        assert_eq!(
            (got_texture.width, got_texture.height),
            (want_texture.width, want_texture.height)
        );
        assert!(
            got_texture.rgba8() == want_texture.rgba8(),
            "the texture's pixels changed"
        );
    }
    let uvs =
        |rig: &Rig| -> Vec<glam::Vec2> { rig.meshes.iter().flat_map(|m| &m.primitives[0].uvs).copied().collect() };
    assert_eq!(uvs(&exported), uvs(&original), "texture coordinates");
}

#[test]
fn the_demo_rig_exports_as_obj_and_glb() {
    let dir = temp_dir("export-demo");
    let demo = common::load_demo();
    let vertices: usize = demo
        .meshes
        .iter()
        .flat_map(|m| &m.primitives)
        .map(|p| p.vertex_count())
        .sum();
    for name in ["demo.obj", "demo.glb"] {
        let out = dir.join(name);
        let (status, stdout, stderr) =
            run_rigscope(&["export", "demo", "--time", "0.5", "--out", out.to_str().unwrap()]);
        assert_eq!(status, Some(0), "{name}: {stdout}{stderr}");
        assert!(stdout.contains(&format!("{vertices} vertices")), "{stdout}");
    }
    let obj = read_obj(&dir.join("demo.obj"));
    let glb = rigscope::rig::load_file(&dir.join("demo.glb")).expect("the GLB loads");
    let glb_positions: Vec<glam::Vec3> = (glb.meshes.iter().flat_map(|m| &m.primitives))
        .flat_map(|p| p.positions.iter().copied())
        .collect();
    // The OBJ prints each f32 in its shortest form, which reads back as the same f32.
    let obj_positions: Vec<glam::Vec3> = obj.positions.iter().map(|p| p.as_vec3()).collect();
    assert!(
        obj_positions == glb_positions,
        "the OBJ and the GLB hold different poses"
    );
    assert_eq!(obj.objects.len(), glb.meshes.len());
}

/// Every refusal exits 2, says why, and leaves no output behind.
#[test]
fn bad_requests_exit_2_and_write_nothing() {
    let dir = temp_dir("export-errors");
    let garbage = dir.join("garbage.glb");
    std::fs::write(&garbage, b"not a glTF file").unwrap();
    let demo_copy = dir.join("copy.glb");
    std::fs::write(&demo_copy, rigscope::rig::demo::DEMO_GLB).unwrap();
    let demo_clip = common::load_demo().clips[0].name.clone();
    let missing = dir.join("missing.fbx");
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["demo", "--clip", "no such clip"],
            "pose.glb",
            "no clip 'no such clip'",
        ),
        (
            &["demo", "--clip", &demo_clip, "--time", "1000"],
            "pose.obj",
            "outside clip",
        ),
        (&["demo", "--time=-0.5"], "pose.glb", "outside clip"),
        (&["demo", "--time", "NaN"], "pose.glb", "not a number"),
        (&["demo"], "pose.stl", "must end in .obj or .glb"),
        (&["demo"], "pose", "must end in .obj or .glb"),
        (&[garbage.to_str().unwrap()], "pose.glb", "cannot load"),
        (&[missing.to_str().unwrap()], "pose.obj", "cannot load"),
        (&["demo", "--dqs-joint", "no such joint"], "pose.glb", "no node named"),
        (&["demo"], "no-such-folder/pose.glb", "no folder"),
    ];
    for (args, out, message) in cases {
        let out = dir.join(out);
        let mut all = vec!["export"];
        all.extend_from_slice(args);
        all.extend(["--out", out.to_str().unwrap()]);
        let (status, stdout, stderr) = run_rigscope(&all);
        assert_eq!(status, Some(2), "{all:?}: {stdout}{stderr}");
        assert!(stderr.contains(message), "{all:?}: '{stderr}' does not say '{message}'");
        assert!(
            !out.exists() && !out.with_extension("mtl").exists(),
            "{all:?} wrote {}",
            out.display()
        );
    }
    // The input itself is never written.
    let (status, _, stderr) = run_rigscope(&[
        "export",
        demo_copy.to_str().unwrap(),
        "--out",
        demo_copy.to_str().unwrap(),
    ]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("the rig was read from that file"), "{stderr}");
    assert_eq!(std::fs::read(&demo_copy).unwrap(), rigscope::rig::demo::DEMO_GLB);
    // Nothing else is left in the folder: no temporary file either.
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["copy.glb", "garbage.glb"]);
}

/// File ▸ Export pose… exports the window's pose with its skinning method: the same file as
/// `rigscope export` at that clip, time and method.
#[test]
fn the_windows_export_writes_what_the_command_writes() {
    use rigscope::skin::{SkinningMethod, SkinningPath};
    let dir = temp_dir("export-window");
    // The same file name in two folders: the scene is named after it.
    let (window_out, out) = (
        dir.join("window").join("pose.glb"),
        dir.join("command").join("pose.glb"),
    );
    std::fs::create_dir_all(window_out.parent().unwrap()).unwrap();
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let demo = common::load_demo();
    let clip = demo.clips[0].name.clone();
    let mut viewer = rigscope::viewer::Viewer::new(demo, None);
    viewer.hold(Some(0), 0.25);
    viewer.set_skinning(SkinningPath::Gpu, SkinningMethod::Dqs);
    let mut suggested = String::new();
    let exported = rigscope::commands::export::export_from_dialog(&mut viewer, |_, name| {
        suggested = name.to_owned();
        Some(window_out.clone())
    })
    .expect("a file was picked")
    .expect("the export is written");
    assert_eq!(exported.written, std::slice::from_ref(&window_out));
    assert!(
        suggested.starts_with("demo-") && suggested.ends_with("0.25s.glb"),
        "{suggested}"
    );
    let cancelled = rigscope::commands::export::export_from_dialog(&mut viewer, |_, _| None);
    assert!(cancelled.is_none());

    let args = [
        "export",
        "demo",
        "--clip",
        &clip,
        "--time",
        "0.25",
        "--method",
        "dqs",
        "--out",
        out.to_str().unwrap(),
    ];
    let (status, stdout, stderr) = run_rigscope(&args);
    assert_eq!(status, Some(0), "{stdout}{stderr}");
    let window = std::fs::read(&window_out).unwrap();
    let command = std::fs::read(&out).unwrap();
    assert!(window == command, "the window and the command wrote different files");
    // And the pose is not the rest pose or the linear blend one.
    let (status, _, stderr) = run_rigscope(&[
        "export",
        "demo",
        "--method",
        "lbs",
        "--time",
        "0.25",
        "--out",
        dir.join("lbs.glb").to_str().unwrap(),
    ]);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(std::fs::read(dir.join("lbs.glb")).unwrap() != command);
}

/// An unskinned mesh is exported morphed by the pose's weights and placed by its node: each
/// vertex is its bind position plus the weighted target offsets, through the node's world
/// matrix. MorphStressTest's clips animate only weights and load with a duration of 0 s, so the
/// weights are set here as the window's morph sliders set them.
#[test]
fn an_unskinned_mesh_is_exported_morphed_and_placed() {
    use rigscope::skin::{SkinnedPose, SkinningMethod};
    let Some(dir) = common::shared_folder("corpus/rigs") else {
        return;
    };
    let rig = common::load_rig(&dir, "MorphStressTest.gltf");
    let mut pose = PoseBuffers::new(&rig);
    let i = (rig.instances.iter())
        .position(|instance| rig.morphs.weight_count(instance.mesh) >= 2)
        .expect("a morphed mesh");
    let weights = [0.75f32, 0.5];
    pose.morph_weights[i][..2].copy_from_slice(&weights);
    let mut skinned = SkinnedPose::new(&rig);
    skinned.skin(&rig, &pose, SkinningMethod::Lbs);
    let posed = rigscope::commands::export::posed_primitives(&rig, &pose, &skinned);
    let instance = rig.instances[i];
    let world = pose.worlds[instance.node].as_dmat4();
    let mut worst = 0.0f64;
    let mut moved = 0.0f64;
    // The instance's primitives come in order after those of the instances before it.
    let before: usize = (rig.instances[..i].iter())
        .map(|other| rig.meshes[other.mesh].primitives.len())
        .sum();
    for (k, primitive) in rig.meshes[instance.mesh].primitives.iter().enumerate() {
        let targets = rig.morphs.of(instance.mesh, k);
        let exported = &posed[before + k];
        let n = primitive.vertex_count();
        let offsets: Vec<Vec<Vec3>> = targets.iter().map(|t| t.dense(n).0).collect();
        for (v, &p) in primitive.positions.iter().enumerate() {
            let mut morphed = p.as_dvec3();
            for (offsets, &w) in offsets.iter().zip(&weights) {
                morphed += offsets[v].as_dvec3() * f64::from(w);
            }
            let want = world.transform_point3(morphed);
            worst = worst.max(exported.positions[v].as_dvec3().distance(want));
            moved = moved.max(want.distance(world.transform_point3(p.as_dvec3())));
        }
    }
    println!("MorphStressTest weights {weights:?}: worst {worst:.3e}, targets move vertices up to {moved:.3}");
    assert!(worst < 1e-6, "{worst:.3e}");
    assert!(moved > 0.01, "the weights move nothing");
}
