//! Coarse stand-ins for rigs too heavy to redraw every frame (see `render::detail`): each big
//! primitive gets a second, much shorter index list over the same vertices, so the proxy
//! skins, morphs and colors exactly as the whole mesh does and costs no extra vertex memory.

use crate::rig::Rig;

/// Rigs with fewer triangles than this (over all instances) are always drawn whole.
pub const PROXY_ABOVE_TRIANGLES: usize = 300_000;
/// Triangles a rig's proxy aims at, shared among its primitives by their size.
pub const PROXY_TRIANGLES: usize = 40_000;
/// A primitive simplified to more than this share of its triangles is drawn whole instead.
const WORTH_IT: f32 = 0.5;

/// A rig's proxies (see [`proxy_indices`]) and how long simplifying took.
pub struct Simplified {
    pub proxies: Option<Vec<Vec<Option<Vec<u32>>>>>,
    pub took: std::time::Duration,
}

impl Simplified {
    pub fn of(rig: &Rig) -> Simplified {
        let start = std::time::Instant::now();
        let proxies = proxy_indices(rig);
        Simplified {
            proxies,
            took: start.elapsed(),
        }
    }
}

/// Proxy index lists per mesh and primitive of `rig` (`None` where a primitive is drawn
/// whole), or `None` when the rig is light enough to draw whole every frame.
pub fn proxy_indices(rig: &Rig) -> Option<Vec<Vec<Option<Vec<u32>>>>> {
    let total = rig.triangle_count();
    if total < PROXY_ABOVE_TRIANGLES {
        return None;
    }
    let share = PROXY_TRIANGLES as f64 / total as f64;
    Some(
        rig.meshes
            .iter()
            .map(|mesh| {
                mesh.primitives
                    .iter()
                    .map(|p| simplified(&p.indices, &p.positions, share))
                    .collect()
            })
            .collect(),
    )
}

/// `indices` cut to about `share` of their triangles with meshoptimizer's sloppy simplifier
/// (fast, and free to change the topology, which a stand-in shown while moving may), or `None`
/// when that would not save enough or the list does not index `positions`.
fn simplified(indices: &[u32], positions: &[glam::Vec3], share: f64) -> Option<Vec<u32>> {
    let triangles = indices.len() / 3;
    let target = ((triangles as f64 * share) as usize).max(1);
    if target as f32 > triangles as f32 * WORTH_IT || indices.iter().any(|&i| i as usize >= positions.len()) {
        return None;
    }
    let vertices = meshopt::VertexDataAdapter::new(bytemuck::cast_slice(positions), 12, 0).ok()?;
    let kept = meshopt::simplify_sloppy(&indices[..triangles * 3], &vertices, target * 3, f32::MAX, None);
    (!kept.is_empty() && (kept.len() as f32) <= indices.len() as f32 * WORTH_IT).then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::skinned_tube;

    #[test]
    fn light_rigs_get_no_proxy() {
        let rig = skinned_tube(20_000, 16);
        assert!(rig.triangle_count() < PROXY_ABOVE_TRIANGLES);
        assert!(proxy_indices(&rig).is_none());
    }

    #[test]
    fn a_heavy_rig_gets_a_proxy_near_the_budget_over_its_own_vertices() {
        let rig = skinned_tube(400_000, 64);
        let total = rig.triangle_count();
        assert!(total >= PROXY_ABOVE_TRIANGLES, "{total} triangles");
        let proxies = proxy_indices(&rig).expect("a proxy");
        let primitive = &rig.meshes[0].primitives[0];
        let proxy = proxies[0][0].as_ref().expect("the tube is simplified");
        assert_eq!(proxy.len() % 3, 0);
        let triangles = proxy.len() / 3;
        // The sloppy simplifier lands near its target, never above it.
        assert!(
            (PROXY_TRIANGLES / 4..=PROXY_TRIANGLES).contains(&triangles),
            "{triangles} proxy triangles"
        );
        assert!(proxy.iter().all(|&i| (i as usize) < primitive.vertex_count()));
        // It still spans the tube: its bounds are within 5% of the whole mesh's.
        let bounds = |indices: &[u32]| {
            indices.iter().fold((glam::Vec3::MAX, glam::Vec3::MIN), |(lo, hi), &i| {
                let p = primitive.positions[i as usize];
                (lo.min(p), hi.max(p))
            })
        };
        let (lo, hi) = bounds(&primitive.indices);
        let (plo, phi) = bounds(proxy);
        let size = (hi - lo).max_element();
        assert!(
            (plo - lo).abs().max_element() < 0.05 * size && (phi - hi).abs().max_element() < 0.05 * size,
            "proxy bounds {plo}..{phi} against {lo}..{hi}"
        );
    }

    #[test]
    fn indices_outside_the_vertices_get_no_proxy() {
        let positions = vec![glam::Vec3::ZERO; 4];
        let indices: Vec<u32> = (0..3000).map(|i| if i == 2999 { 4 } else { i % 4 }).collect();
        assert!(simplified(&indices, &positions, 0.01).is_none());
    }
}
