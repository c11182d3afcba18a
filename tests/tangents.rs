//! Generated tangents: MikkTSpace (through the importer's `mikktspace_tangents`) against the
//! tangents an exporter stored, and the frames the importer gives normal-mapped primitives that
//! have none.

mod common;

use common::Doc;
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
