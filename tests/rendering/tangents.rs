//! Generated tangents: MikkTSpace (through the importer's `mikktspace_tangents`) against the
//! tangents an exporter stored, and the frames the importer gives normal-mapped primitives that
//! have none.

use crate::common;

use crate::common::Doc;
use glam::{Vec3, Vec4};

#[test]
fn generated_tangents_match_the_ones_ready_player_me_stored() {
    let Some(dir) = common::shared_folder("corpus") else {
        return;
    };
    let dir = dir.join("rigs");
    let rig = common::load_rig(&dir, "readyplayer.me.glb");
    let doc = Doc::open(&dir.join("readyplayer.me.glb"));
    let mut compared = 0;
    for (m, mesh) in rig.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let Some(normal_map) = rig.materials[primitive.material.unwrap()].normal_texture else {
                continue;
            };
            let Some(accessor) = doc.json["meshes"][m]["primitives"][p]["attributes"]["TANGENT"].as_u64() else {
                continue;
            };
            let stored = doc.read_floats(accessor as usize);
            let generated = rigscope::rig::mikktspace_tangents(
                &primitive.positions,
                &primitive.normals,
                primitive.uv_set(normal_map.uv.set),
                &primitive.indices,
            )
            .expect("the primitive is a consistent triangle list");
            let mut worst_degrees = 0.0f32;
            for (g, s) in generated.iter().zip(&stored) {
                let s = Vec4::new(s[0] as f32, s[1] as f32, s[2] as f32, s[3] as f32);
                worst_degrees = worst_degrees.max(g.truncate().angle_between(s.truncate()).to_degrees());
                assert_eq!(g.w, s.w, "mesh {m} primitive {p}: the bitangent's sign");
            }
            eprintln!(
                "mesh {m} primitive {p}: {} vertices, worst {worst_degrees:.4}°",
                stored.len()
            );
            // The exporter's own MikkTSpace, in f32 on other hardware: the same frames to rounding.
            assert!(worst_degrees < 0.1, "mesh {m} primitive {p}: {worst_degrees}°");
            compared += 1;
        }
    }
    assert!(compared >= 4, "{compared} primitives compared");
}

/// Per-vertex tangents by Lengyel's method in f64 (the sum of the adjacent triangles' ∂P/∂u and
/// ∂P/∂v, V up the image, made orthogonal to the normal): a second, simpler derivation that the
/// MikkTSpace frames must agree with away from seams and degenerate corners.
fn lengyel_tangents(positions: &[Vec3], normals: &[Vec3], uvs: &[glam::Vec2], indices: &[u32]) -> Vec<(DVec3, f64)> {
    let mut s_sum = vec![DVec3::ZERO; positions.len()];
    let mut t_sum = vec![DVec3::ZERO; positions.len()];
    for triangle in indices.chunks_exact(3) {
        let [a, b, c] = [0, 1, 2].map(|k| triangle[k] as usize);
        let p = |i: usize| positions[i].as_dvec3();
        let uv = |i: usize| glam::DVec2::new(f64::from(uvs[i].x), 1.0 - f64::from(uvs[i].y));
        let (e1, e2) = (p(b) - p(a), p(c) - p(a));
        let (d1, d2) = (uv(b) - uv(a), uv(c) - uv(a));
        let det = d1.x * d2.y - d2.x * d1.y;
        if det.abs() < 1e-12 {
            continue;
        }
        let s = (e1 * d2.y - e2 * d1.y) / det;
        let t = (e2 * d1.x - e1 * d2.x) / det;
        for i in [a, b, c] {
            s_sum[i] += s;
            t_sum[i] += t;
        }
    }
    (0..positions.len())
        .map(|i| {
            let n = normals[i].as_dvec3().normalize();
            let tangent = (s_sum[i] - n * n.dot(s_sum[i])).normalize_or_zero();
            let sign = if n.cross(tangent).dot(t_sum[i]) < 0.0 {
                -1.0
            } else {
                1.0
            };
            (tangent, sign)
        })
        .collect()
}

use glam::DVec3;

#[test]
fn normal_mapped_primitives_without_tangent_get_frames_that_follow_their_texture() {
    let Some(dir) = common::shared_folder("corpus") else {
        return;
    };
    let dir = dir.join("rigs");
    for file in ["Michelle.glb", "Soldier.glb"] {
        let rig = common::load_rig(&dir, file);
        let mut checked = 0;
        for primitive in rig.meshes.iter().flat_map(|m| &m.primitives) {
            let Some(normal_map) = primitive.material.and_then(|m| rig.materials[m].normal_texture) else {
                assert!(primitive.tangents.is_empty(), "{file}: no normal map, no tangents");
                continue;
            };
            let n = primitive.vertex_count();
            assert_eq!(primitive.tangents.len(), n, "{file}");
            let reference = lengyel_tangents(
                &primitive.positions,
                &primitive.normals,
                primitive.uv_set(normal_map.uv.set),
                &primitive.indices,
            );
            let (mut angles, mut same_sign) = (Vec::with_capacity(n), 0usize);
            for ((t, normal), (expected, sign)) in primitive.tangents.iter().zip(&primitive.normals).zip(&reference) {
                assert!(t.w == 1.0 || t.w == -1.0, "{file}: w is a sign, {t}");
                assert!((t.truncate().length() - 1.0).abs() < 1e-3, "{file}: unit tangent, {t}");
                assert!(
                    t.truncate().dot(normal.normalize()).abs() < 1e-3,
                    "{file}: in the surface, {t}"
                );
                if *expected == DVec3::ZERO {
                    continue;
                }
                angles.push(t.truncate().as_dvec3().angle_between(*expected).to_degrees());
                same_sign += usize::from(f64::from(t.w) == *sign);
            }
            angles.sort_by(f64::total_cmp);
            let at = |q: f64| angles[((angles.len() - 1) as f64 * q) as usize];
            let same_sign = same_sign as f64 / angles.len() as f64;
            eprintln!(
                "{file}: {n} vertices, angle to Lengyel's median {:.3}°, 90th {:.2}°, 99th {:.1}°; {:.2}% the same sign",
                at(0.5),
                at(0.9),
                at(0.99),
                same_sign * 100.0
            );
            // The two weight adjacent triangles differently (MikkTSpace by corner angle, Lengyel by
            // texture-space area), so they part where a mesh's texture is stretched unevenly.
            assert!(at(0.5) < 1.0 && at(0.9) < 15.0, "{file}: {angles:?}");
            assert!(same_sign > 0.97, "{file}: {same_sign} of the signs agree");
            checked += 1;
        }
        assert!(checked >= 1, "{file} has a normal-mapped primitive");
    }
}

/// Ready Player Me's avatar (its tangents as stored) with every third joint bent, skinned on the
/// CPU with `method`.
fn bent_avatar_skinned(
    method: rigscope::rig::SkinningMethod,
) -> Option<(
    rigscope::rig::Rig,
    rigscope::skin::SkinnedPose,
    rigscope::anim::PoseBuffers,
)> {
    use rigscope::anim::{JointOverride, PoseBuffers, PoseInputs, evaluate_pose};
    let dir = common::shared_folder("corpus")?.join("rigs");
    let rig = common::load_rig(&dir, "readyplayer.me.glb");
    let mut overrides = vec![JointOverride::IDENTITY; rig.nodes.len()];
    for (k, o) in overrides.iter_mut().enumerate().step_by(3) {
        *o = JointOverride::from_euler_degrees(Vec3::new(25.0, -10.0 * (k % 4) as f32, 15.0));
    }
    let mut pose = PoseBuffers::new(&rig);
    let inputs = PoseInputs {
        overrides: &overrides,
        dual_quaternions: true,
        ..PoseInputs::clip_at(None, 0.0)
    };
    evaluate_pose(&rig, &inputs, &mut pose);
    let mut skinned = rigscope::skin::SkinnedPose::new(&rig);
    skinned.skin(&rig, &pose, method);
    Some((rig, skinned, pose))
}

#[test]
fn the_cpu_path_moves_tangents_by_each_vertex_s_blended_matrix() {
    let Some((rig, skinned, pose)) = bent_avatar_skinned(rigscope::rig::SkinningMethod::Lbs) else {
        return;
    };
    let mut checked = 0;
    for (i, instance) in rig.instances.iter().enumerate() {
        for (k, primitive) in rig.meshes[instance.mesh].primitives.iter().enumerate() {
            let (Some(influences), false) = (&primitive.influences, primitive.tangents.is_empty()) else {
                continue;
            };
            let out = &skinned.meshes[i][k];
            assert_eq!(out.tangents.len(), primitive.vertex_count());
            let (mut worst, mut turned) = (0.0f64, 0);
            for (v, (t, got)) in primitive.tangents.iter().zip(&out.tangents).enumerate() {
                turned += usize::from(got.truncate().angle_between(t.truncate()) > 5f32.to_radians());
                // The blended matrix in f64, applied to the tangent as a direction.
                let mut blended = glam::DMat3::ZERO;
                for (joint, weight) in influences.of_vertex(v) {
                    let m = pose.palettes[i][joint as usize].as_dmat4();
                    blended += glam::DMat3::from_mat4(m) * f64::from(weight);
                }
                let expected = blended * t.truncate().as_dvec3();
                let error = (got.truncate().as_dvec3() - expected).length() / expected.length().max(1e-6);
                worst = worst.max(error);
                assert_eq!(got.w, t.w, "the bitangent's side is kept");
            }
            eprintln!("instance {i} primitive {k}: worst relative error {worst:.2e}, {turned} tangents turned over 5°");
            assert!(turned > primitive.vertex_count() / 4, "the bends turn the surface");
            assert!(worst < 1e-4, "instance {i} primitive {k}: {worst}");
            checked += 1;
        }
    }
    assert!(checked >= 4, "{checked} skinned primitives with tangents");
}

#[test]
fn dual_quaternion_skinning_keeps_each_tangent_s_angle_to_its_normal() {
    use rigscope::rig::SkinningMethod;
    let Some((rig, skinned, _)) = bent_avatar_skinned(SkinningMethod::Dqs) else {
        return;
    };
    let mut checked = 0;
    for (i, instance) in rig.instances.iter().enumerate() {
        for (k, primitive) in rig.meshes[instance.mesh].primitives.iter().enumerate() {
            if primitive.influences.is_none() || primitive.tangents.is_empty() {
                continue;
            }
            let out = &skinned.meshes[i][k];
            let mut worst = 0.0f32;
            let frames = primitive
                .tangents
                .iter()
                .zip(&primitive.normals)
                .zip(out.tangents.iter().zip(&out.normals));
            for ((t, n), (t_out, n_out)) in frames {
                // A rotation (and uniform scale) per vertex: angles stay as they were.
                let before = t.truncate().angle_between(*n);
                let after = t_out.truncate().angle_between(*n_out);
                worst = worst.max((after - before).abs().to_degrees());
            }
            eprintln!("instance {i} primitive {k}: worst change of angle {worst:.4}°");
            assert!(worst < 0.05, "instance {i} primitive {k}: {worst}°");
            checked += 1;
        }
    }
    assert!(checked >= 4);
}

use crate::common::gpu;

#[test]
fn the_gpu_moves_tangents_as_the_cpu_path_does_for_every_method() {
    use rigscope::rig::SkinningMethod;
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let skinner = rigscope::render::compute::ComputeSkinner::new(&gpu);
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs, SkinningMethod::Blended] {
        let Some((rig, skinned, pose)) = bent_avatar_skinned(method) else {
            return;
        };
        let size = rigscope::skin::posed_bounds(&rig, &pose, &skinned).size();
        let comparison = skinner.compare(&gpu, &rig, &pose, &skinned, method, size).unwrap();
        let tangents = comparison
            .tangent_max
            .expect("the avatar's skinned primitives have tangents");
        eprintln!(
            "{method:?}: positions {:.2e} of the rig's size, tangents {tangents:.2e} of their length",
            comparison.max / size
        );
        assert!(tangents < 1e-4, "{method:?}: {tangents}");
    }
}
