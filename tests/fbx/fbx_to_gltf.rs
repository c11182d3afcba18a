//! `rigscope clips FILE.fbx --out OUT.glb`: an FBX rig written as a new glTF. The output is read
//! back with the glTF importer and held against the rig the FBX importer made, part by part,
//! pairing nodes, skins' joints and meshes by name (the file's node order is not the FBX
//! importer's): node tree and rest transforms, every vertex's bind position, normal, texture
//! coordinates, joints (as joint names) and weights, morph targets with their default weights
//! and names, materials and their base colour textures, and every clip sampled at 30 Hz. A
//! uniform rest scale the writer moved into the inverse bind matrices (see [`ScaleMoves`]) is
//! allowed for, and the skinned vertices are compared too.

use crate::common;

use glam::{Quat, Vec3};
use rigscope::anim::PoseBuffers;
use rigscope::rig::{Node, Rig, Trs};
use rigscope::skin::{SkinnedPose, SkinningMethod};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Bind data and rest transforms: f32 values written as JSON and read back, a few ulps apart at
/// most (the importer normalizes rotations again).
const EXACT: f32 = 1e-6;
/// Sampled clip transforms, as a fraction of the rig's size for translations.
const SAMPLED: f32 = 1e-5;

/// Runs `rigscope clips FBX ARGS --out DIR/NAME`, asserts exit 0, and returns both rigs.
fn convert(fbx: &Path, args: &[&str], out: &Path) -> (Rig, Rig, String) {
    let mut all = vec!["clips", fbx.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend(["--out", out.to_str().unwrap()]);
    let (code, stdout, stderr) = common::run_rigscope(&all);
    assert_eq!(code, Some(0), "{all:?}\n{stdout}\n{stderr}");
    let from_fbx = rigscope::rig::load_file(fbx).unwrap();
    let from_gltf = rigscope::rig::load_file(out).unwrap_or_else(|e| panic!("{} does not load: {e}", out.display()));
    (from_fbx, from_gltf, stdout)
}

fn names(rig: &Rig) -> HashMap<&str, usize> {
    let map: HashMap<&str, usize> = rig
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    assert_eq!(map.len(), rig.nodes.len(), "{}: node names are not unique", rig.name);
    map
}

/// The largest distance between rest joint positions, for relative tolerances.
fn size(rig: &Rig) -> f32 {
    let mut pose = PoseBuffers::new(rig);
    pose.evaluate(rig, None, 0.0);
    let points: Vec<Vec3> = pose.worlds.iter().map(|m| m.w_axis.truncate()).collect();
    let (min, max) = points
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(a, b), p| (a.min(*p), b.max(*p)));
    (max - min).length().max(1.0)
}

fn assert_trs_close(a: &Trs, b: &Trs, tolerance: f32, what: &str) {
    let scale = a.translation.abs().max_element().max(1.0);
    assert!(
        a.translation.distance(b.translation) <= tolerance * scale,
        "{what}: translation {} vs {}",
        a.translation,
        b.translation
    );
    assert!(
        rotation_gap(a.rotation, b.rotation) <= tolerance,
        "{what}: rotation {} vs {}",
        a.rotation,
        b.rotation
    );
    assert!(
        a.scale.distance(b.scale) <= tolerance,
        "{what}: scale {} vs {}",
        a.scale,
        b.scale
    );
}

/// How far apart two unit quaternions are as rotations (q and −q are the same rotation).
fn rotation_gap(a: Quat, b: Quat) -> f32 {
    (a - b).length().min((a + b).length())
}

/// The uniform rest scales the writer moved off nodes into the inverse bind matrices, read from
/// the two rigs: per FBX node, the scale moved off it (1 where none) and the product of those
/// moved off its ancestors, which its translations were multiplied by.
struct ScaleMoves {
    own: Vec<f32>,
    above: Vec<f32>,
}

impl ScaleMoves {
    fn of(fbx: &Rig, gltf: &Rig) -> ScaleMoves {
        let b = names(gltf);
        let own: Vec<f32> = (fbx.nodes.iter())
            .map(|node| {
                let (s, written) = (node.rest.scale, gltf.nodes[b[node.name.as_str()]].rest.scale);
                let uniform = (s - Vec3::splat(s.x)).abs().max_element() <= 1e-6 * s.x.abs();
                if uniform && (s.x - 1.0).abs() > 1e-6 && (written - Vec3::ONE).abs().max_element() <= EXACT {
                    s.x
                } else {
                    1.0
                }
            })
            .collect();
        let mut above = vec![1.0; fbx.nodes.len()];
        for (i, node) in fbx.nodes.iter().enumerate() {
            if let Some(p) = node.parent {
                above[i] = above[p] * own[p];
            }
        }
        ScaleMoves { own, above }
    }

    /// What FBX node `i`'s local transform `trs` is written as.
    fn written(&self, i: usize, trs: &Trs) -> Trs {
        Trs {
            translation: trs.translation * self.above[i],
            rotation: trs.rotation,
            scale: trs.scale / self.own[i],
        }
    }

    /// What FBX joint `i`'s inverse bind matrix is written as.
    fn written_bind(&self, i: usize, bind: &glam::Mat4) -> glam::Mat4 {
        glam::Mat4::from_scale(Vec3::splat(self.above[i] * self.own[i])) * *bind
    }
}

/// The node tree and rest transforms, by name. `added_root`: the name of a node the writer put
/// above the FBX rig's roots, which must be the identity and hold exactly those roots.
fn assert_same_nodes(fbx: &Rig, gltf: &Rig, added_root: Option<&str>) {
    let (a, b) = (names(fbx), names(gltf));
    // Each skinned mesh placed elsewhere than on a transform-free root comes on a node of its
    // own at the root, named after its node, with no transform.
    let moved: Vec<&Node> = (gltf.nodes.iter())
        .filter(|n| n.name.ends_with(" mesh") && !a.contains_key(n.name.as_str()))
        .collect();
    for node in &moved {
        assert!(node.parent.is_none(), "'{}' is at the root", node.name);
        assert_trs_close(&node.rest, &Trs::IDENTITY, 0.0, &node.name);
    }
    assert_eq!(
        gltf.nodes.len(),
        fbx.nodes.len() + usize::from(added_root.is_some()) + moved.len()
    );
    let moves = ScaleMoves::of(fbx, gltf);
    for (i, node) in fbx.nodes.iter().enumerate() {
        let j = *b
            .get(node.name.as_str())
            .unwrap_or_else(|| panic!("no node '{}' in the glTF", node.name));
        let parent_a = node.parent.map(|p| fbx.nodes[p].name.as_str());
        let parent_b = gltf.nodes[j].parent.map(|p| gltf.nodes[p].name.as_str());
        assert_eq!(parent_b, parent_a.or(added_root), "parent of '{}'", node.name);
        assert_trs_close(
            &moves.written(i, &node.rest),
            &gltf.nodes[j].rest,
            EXACT,
            &format!("rest of '{}'", node.name),
        );
        assert_eq!(a[node.name.as_str()], i);
    }
    if let Some(root) = added_root {
        let root = &gltf.nodes[b[root]];
        assert!(root.parent.is_none());
        assert_trs_close(&root.rest, &Trs::IDENTITY, 0.0, "the added root");
    }
}

/// Every mesh on a node of the FBX rig against the mesh on the node of the same name: vertices,
/// influences (joints by name), morph targets, default weights and target names, materials.
fn assert_same_meshes(fbx: &Rig, gltf: &Rig) {
    let b = names(gltf);
    let mut compared = 0;
    for instance in &fbx.instances {
        let node = &fbx.nodes[instance.node].name;
        let mesh_a = &fbx.meshes[instance.mesh];
        if mesh_a.primitives.is_empty() {
            // glTF has no mesh without primitives: such a node is written without one.
            assert!(gltf.instances.iter().all(|i| i.node != b[node.as_str()]), "'{node}'");
            continue;
        }
        // A skinned mesh may have moved to the root, onto a node of its own.
        let moved = b.get(format!("{node} mesh").as_str()).copied();
        let other = (gltf.instances.iter())
            .find(|i| i.node == b[node.as_str()] || Some(i.node) == moved)
            .unwrap_or_else(|| panic!("no mesh on '{node}' in the glTF"));
        let mesh_b = &gltf.meshes[other.mesh];
        assert_eq!(mesh_a.name, mesh_b.name);
        assert_eq!(mesh_a.primitives.len(), mesh_b.primitives.len(), "'{}'", mesh_a.name);
        let joint_names = |rig: &Rig, skin: Option<usize>| -> Vec<String> {
            skin.map_or_else(Vec::new, |s| {
                rig.skins[s].joints.iter().map(|&j| rig.nodes[j].name.clone()).collect()
            })
        };
        let (joints_a, joints_b) = (joint_names(fbx, instance.skin), joint_names(gltf, other.skin));
        assert_eq!(joints_a, joints_b, "joints of the skin of '{node}'");
        if let (Some(sa), Some(sb)) = (instance.skin, other.skin) {
            let moves = ScaleMoves::of(fbx, gltf);
            for (k, (ma, mb)) in fbx.skins[sa]
                .inverse_binds
                .iter()
                .zip(&gltf.skins[sb].inverse_binds)
                .enumerate()
            {
                let ma = &moves.written_bind(fbx.skins[sa].joints[k], ma);
                assert!(
                    ma.abs_diff_eq(*mb, EXACT * ma.abs().to_cols_array().iter().fold(1.0, |m, v| v.max(m))),
                    "inverse bind {k} of '{node}'"
                );
            }
        }
        for (k, (pa, pb)) in mesh_a.primitives.iter().zip(&mesh_b.primitives).enumerate() {
            let what = format!("'{}' primitive {k}", mesh_a.name);
            assert_eq!(pa.vertex_count(), pb.vertex_count(), "{what}");
            assert_eq!(pa.indices, pb.indices, "{what}: indices");
            let close = |x: Vec3, y: Vec3| x.distance(y) <= EXACT * x.abs().max_element().max(1.0);
            for v in 0..pa.vertex_count() {
                assert!(close(pa.positions[v], pb.positions[v]), "{what} vertex {v}: position");
                assert!(close(pa.normals[v], pb.normals[v]), "{what} vertex {v}: normal");
                assert!(pa.uvs[v].distance(pb.uvs[v]) <= EXACT, "{what} vertex {v}: uv");
            }
            assert_eq!(pa.material, pb.material, "{what}: material");
            match (&pa.influences, &pb.influences) {
                (None, None) => {}
                (Some(ia), Some(ib)) => {
                    assert_eq!(ia.sets, ib.sets, "{what}: influence sets");
                    for v in 0..pa.vertex_count() {
                        let by_name = |inf: &rigscope::rig::Influences, joints: &[String]| -> Vec<(String, f32)> {
                            let mut pairs: Vec<(String, f32)> = (inf.of_vertex(v))
                                .filter(|(_, w)| *w != 0.0)
                                .map(|(j, w)| (joints[j as usize].clone(), w))
                                .collect();
                            pairs.sort_by(|x, y| x.0.cmp(&y.0));
                            pairs
                        };
                        let (wa, wb) = (by_name(ia, &joints_a), by_name(ib, &joints_b));
                        assert_eq!(wa.len(), wb.len(), "{what} vertex {v}: {wa:?} vs {wb:?}");
                        for ((ja, x), (jb, y)) in wa.iter().zip(&wb) {
                            assert!(
                                ja == jb && (x - y).abs() <= EXACT,
                                "{what} vertex {v}: {wa:?} vs {wb:?}"
                            );
                        }
                    }
                }
                _ => panic!("{what}: influences on one side only"),
            }
            let (ta, tb) = (fbx.morphs.of(instance.mesh, k), gltf.morphs.of(other.mesh, k));
            assert_eq!(ta.len(), tb.len(), "{what}: morph targets");
            for (t, (x, y)) in ta.iter().zip(tb).enumerate() {
                let ((xp, xn), (yp, yn)) = (x.dense(pa.vertex_count()), y.dense(pa.vertex_count()));
                for v in 0..pa.vertex_count() {
                    assert!(close(xp[v], yp[v]), "{what} target {t} vertex {v}");
                    assert!(close(xn[v], yn[v]), "{what} target {t} vertex {v}: normal");
                }
            }
        }
        let count = fbx.morphs.weight_count(instance.mesh);
        let defaults = |rig: &Rig, mesh: usize| -> Vec<f32> {
            let d = rig.morphs.default_weights.get(mesh).cloned().unwrap_or_default();
            (0..count).map(|t| d.get(t).copied().unwrap_or(0.0)).collect()
        };
        assert_eq!(
            defaults(fbx, instance.mesh),
            defaults(gltf, other.mesh),
            "default weights of '{}'",
            mesh_a.name
        );
        if count > 0 {
            assert_eq!(
                fbx.morphs.target_names[instance.mesh],
                gltf.morphs.target_names[other.mesh]
            );
        }
        compared += 1;
    }
    assert!(compared > 0, "{}: no mesh compared", fbx.name);
    assert_eq!(fbx.materials.len(), gltf.materials.len(), "materials");
    for (ma, mb) in fbx.materials.iter().zip(&gltf.materials) {
        assert_eq!(ma.name, mb.name);
        assert_eq!(
            ma.base_color_texture.is_some(),
            mb.base_color_texture.is_some(),
            "texture of '{}'",
            ma.name
        );
        if let (Some(ta), Some(tb)) = (ma.base_color_texture, mb.base_color_texture) {
            let (ta, tb) = (&fbx.textures[ta], &gltf.textures[tb]);
            assert_eq!((ta.width, ta.height), (tb.width, tb.height));
            assert!(ta.rgba8() == tb.rgba8(), "pixels of the texture of '{}'", ma.name);
        }
    }
}

/// Clip `clip_a` of `a` at time `t + shift` against clip `clip_b` of `b` at `t`, every 1/30 s
/// over `b`'s clip: every node's local transform (by name) and every mesh node's morph weights.
fn assert_same_clip(a: &Rig, clip_a: usize, b: &Rig, clip_b: usize, shift: f32) {
    let names_b = names(b);
    let moves = ScaleMoves::of(a, b);
    let tolerance = SAMPLED * size(a);
    let (mut pose_a, mut pose_b) = (PoseBuffers::new(a), PoseBuffers::new(b));
    let duration = b.clips[clip_b].duration;
    let frames = (duration * 30.0).floor() as usize;
    let mut worst = 0.0f32;
    for frame in 0..=frames {
        let t = (frame as f32 / 30.0).min(duration);
        pose_a.evaluate(a, Some(clip_a), t + shift);
        pose_b.evaluate(b, Some(clip_b), t);
        for (i, node) in a.nodes.iter().enumerate() {
            let (la, lb) = (
                &moves.written(i, &pose_a.locals[i]),
                &pose_b.locals[names_b[node.name.as_str()]],
            );
            let what = format!("'{}' at {t} s, node '{}'", b.clips[clip_b].name, node.name);
            assert!(
                la.translation.distance(lb.translation) <= tolerance,
                "{what}: {la:?} vs {lb:?}"
            );
            assert!(
                rotation_gap(la.rotation, lb.rotation) <= SAMPLED,
                "{what}: {la:?} vs {lb:?}"
            );
            assert!(la.scale.distance(lb.scale) <= SAMPLED, "{what}: {la:?} vs {lb:?}");
            worst = worst.max(la.translation.distance(lb.translation) / tolerance * SAMPLED);
        }
        for (i, instance) in a.instances.iter().enumerate() {
            let node = names_b[a.nodes[instance.node].name.as_str()];
            let Some(j) = b.instances.iter().position(|x| x.node == node) else {
                continue;
            };
            let (wa, wb) = (&pose_a.morph_weights[i], &pose_b.morph_weights[j]);
            assert_eq!(wa.len(), wb.len());
            for (x, y) in wa.iter().zip(wb) {
                assert!(
                    (x - y).abs() <= SAMPLED,
                    "morph weights at {t} s on '{}': {wa:?} vs {wb:?}",
                    a.nodes[instance.node].name
                );
            }
        }
    }
    eprintln!(
        "clip '{}': {} frames, worst translation {worst:.2e} of the size",
        b.clips[clip_b].name,
        frames + 1
    );
}

/// Every skinned mesh of `a` against the mesh of the same name in `b`, vertex by vertex, skinned
/// at the start, middle and end of clip `clip` of both: within 2e-7 of the rig's size, as the
/// file's drawing must not change in writing (a moved rest scale included).
fn assert_same_drawing(a: &Rig, b: &Rig, clip: usize) {
    let size = f64::from(size(a));
    let duration = a.clips[clip].duration;
    let (mut worst, mut compared) = (0.0f64, 0);
    for time in [0.0, duration / 2.0, duration] {
        let skinned = |rig: &Rig| {
            let mut pose = PoseBuffers::new(rig);
            pose.evaluate(rig, Some(clip), time);
            let mut skinned = SkinnedPose::new(rig);
            skinned.skin(rig, &pose, SkinningMethod::Lbs);
            skinned
        };
        let (sa, sb) = (skinned(a), skinned(b));
        for (i, instance) in a.instances.iter().enumerate().filter(|(_, x)| x.skin.is_some()) {
            let name = &a.meshes[instance.mesh].name;
            let Some(j) = (b.instances.iter()).position(|x| x.skin.is_some() && &b.meshes[x.mesh].name == name) else {
                continue;
            };
            for (pa, pb) in sa.meshes[i].iter().zip(&sb.meshes[j]) {
                assert_eq!(pa.positions.len(), pb.positions.len(), "'{name}'");
                for (x, y) in pa.positions.iter().zip(&pb.positions) {
                    worst = worst.max(x.as_dvec3().distance(y.as_dvec3()) / size);
                }
                compared += pa.positions.len();
            }
        }
    }
    assert!(compared > 0, "'{}': no skinned vertex compared", a.clips[clip].name);
    assert!(
        worst <= 2e-7,
        "'{}': the written file draws {worst:.2e} of the size off",
        a.clips[clip].name
    );
}

fn fbx_rigs() -> Option<PathBuf> {
    common::shared_rigs().map(|rigs| rigs.join("fbx"))
}

fn assert_same_rig(file: &str, added_root: Option<&str>) {
    let Some(dir) = fbx_rigs() else {
        return;
    };
    let out_dir = common::temp_dir("fbx-to-gltf");
    let out = out_dir.join("out.glb");
    let (fbx, gltf, _) = convert(&dir.join(file), &[], &out);
    assert_same_nodes(&fbx, &gltf, added_root);
    assert_same_meshes(&fbx, &gltf);
    assert_eq!(
        fbx.clips.iter().map(|c| &c.name).collect::<Vec<_>>(),
        gltf.clips.iter().map(|c| &c.name).collect::<Vec<_>>()
    );
    for clip in 0..fbx.clips.len() {
        assert!((fbx.clips[clip].duration - gltf.clips[clip].duration).abs() <= 1e-6);
        assert_same_clip(&fbx, clip, &gltf, clip, 0.0);
        assert_same_drawing(&fbx, &gltf, clip);
    }
    let _ = std::fs::remove_dir_all(out_dir);
}

#[test]
fn mixamo_samba_comes_back_the_same() {
    // Two skinned meshes of 52 joints, a clip of 18.2 s and an empty take (written as one key
    // of the hips at rest, which poses the rig as the empty take does).
    assert_same_rig("Samba Dancing.fbx", None);
}

#[test]
fn maya_kenney_comes_back_the_same() {
    assert_same_rig("maya_kenney_character_7700_binary.fbx", None);
}

#[test]
fn blender_barbarian_comes_back_the_same_with_its_scene_root() {
    // The hair mesh's skin has the hair node among its joints, beside the armature: glTF asks a
    // skin for a common root, so the FBX scene's root comes back above both. Its meshes carry
    // textures and animated morph weights; one mesh has no triangles and is left out.
    assert_same_rig("blender_293_barbarian_7400_binary.fbx", Some("RootNode"));
}

#[test]
fn an_fbx_without_clips_is_still_written() {
    // Blend shapes only: nothing to edit, but the rig is the output.
    assert_same_rig("morph_test.fbx", None);
}

#[test]
fn trim_rename_and_drop_work_on_an_fbx_clip_and_gltf_out_writes_a_bin() {
    let Some(dir) = fbx_rigs() else {
        return;
    };
    let out_dir = common::temp_dir("fbx-to-gltf-edit");
    let out = out_dir.join("samba dance.gltf");
    let args = [
        "--trim",
        "mixamo.com=1:2.5",
        "--rename",
        "mixamo.com=dance",
        "--drop",
        "Take 001",
    ];
    let (fbx, gltf, stdout) = convert(&dir.join("Samba Dancing.fbx"), &args, &out);
    assert!(stdout.contains("FBX"), "{stdout}");
    assert!(out_dir.join("samba dance.bin").is_file());
    assert_eq!(
        gltf.clips.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["dance"]
    );
    assert!(
        (gltf.clips[0].duration - 1.5).abs() <= 1e-5,
        "{}",
        gltf.clips[0].duration
    );
    // The trimmed clip at t is the FBX clip at 1 + t.
    let source = fbx.find_clip("mixamo.com").unwrap();
    assert_same_clip(&fbx, source, &gltf, 0, 1.0);
    assert_same_meshes(&fbx, &gltf);
    let _ = std::fs::remove_dir_all(out_dir);
}

#[test]
fn an_fbx_output_over_its_input_is_refused_writing_nothing() {
    let Some(dir) = fbx_rigs() else {
        return;
    };
    let out_dir = common::temp_dir("fbx-to-gltf-refused");
    let fbx = dir.join("Samba Dancing.fbx");
    // A missing clip names the problem and writes nothing.
    let out = out_dir.join("out.glb");
    let (code, _, stderr) = common::run_rigscope(&[
        "clips",
        fbx.to_str().unwrap(),
        "--trim",
        "nothing=0:1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("nothing") && !out.exists(), "{stderr}");
    // An output that is not glTF is refused.
    let out = out_dir.join("out.fbx");
    let (code, _, stderr) = common::run_rigscope(&["clips", fbx.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(".glb or .gltf") && !out.exists(), "{stderr}");
    let _ = std::fs::remove_dir_all(out_dir);
}
