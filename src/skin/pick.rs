//! Picking: which vertex (and so which joint) lies under the cursor, by casting a ray against
//! the mesh in its current pose on the CPU.

use crate::anim::PoseBuffers;
use crate::rig::Rig;
use crate::skin::SkinnedPose;
use glam::Vec3;

/// The vertex hit by a ray.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeshHit {
    pub instance: usize,
    pub primitive: usize,
    /// The hit triangle's vertex nearest the hit point.
    pub vertex: usize,
    pub distance: f32,
}

/// Ray/triangle intersection (Möller–Trumbore); distance along the ray, both faces.
fn intersect(origin: Vec3, direction: Vec3, a: Vec3, b: Vec3, c: Vec3) -> Option<f32> {
    let (e1, e2) = (b - a, c - a);
    let p = direction.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-12 {
        return None;
    }
    let s = origin - a;
    let u = s.dot(p) / det;
    let q = s.cross(e1);
    let v = direction.dot(q) / det;
    let t = e2.dot(q) / det;
    (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t > 0.0).then_some(t)
}

/// The nearest mesh vertex under a world-space ray, with the mesh as `skinned` skinned it in
/// the pose `pose` (the surface that is drawn, whatever the method). Allocates: meant for
/// clicks, not for every frame.
pub fn ray_cast(
    rig: &Rig,
    pose: &PoseBuffers,
    skinned: &SkinnedPose,
    origin: Vec3,
    direction: Vec3,
) -> Option<MeshHit> {
    let mut best: Option<MeshHit> = None;
    for (i, instance) in rig.instances.iter().enumerate() {
        let world = pose.instance_world(rig, i);
        for (k, primitive) in rig.meshes[instance.mesh].primitives.iter().enumerate() {
            let posed: Vec<Vec3> = skinned
                .positions(rig, i, k)
                .iter()
                .map(|&p| world.transform_point3(p))
                .collect();
            for tri in primitive.indices.chunks_exact(3) {
                let [a, b, c] = [tri[0], tri[1], tri[2]].map(|v| v as usize);
                let Some(t) = intersect(origin, direction, posed[a], posed[b], posed[c]) else {
                    continue;
                };
                if best.is_some_and(|h| h.distance <= t) {
                    continue;
                }
                let hit = origin + direction * t;
                let vertex = [a, b, c]
                    .into_iter()
                    .min_by(|&x, &y| {
                        posed[x]
                            .distance_squared(hit)
                            .total_cmp(&posed[y].distance_squared(hit))
                    })
                    .unwrap_or(a);
                best = Some(MeshHit {
                    instance: i,
                    primitive: k,
                    vertex,
                    distance: t,
                });
            }
        }
    }
    best
}

/// The node of the joint with the largest weight on a hit vertex (`None` for unskinned meshes).
pub fn dominant_joint(rig: &Rig, hit: &MeshHit) -> Option<usize> {
    let instance = rig.instances[hit.instance];
    let skin = &rig.skins[instance.skin?];
    let influences = rig.meshes[instance.mesh].primitives[hit.primitive]
        .influences
        .as_ref()?;
    influences
        .of_vertex(hit.vertex)
        .filter(|&(j, w)| w > 0.0 && (j as usize) < skin.joints.len())
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(j, _)| skin.joints[j as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ray_hits_a_triangle_inside_and_misses_outside() {
        let (a, b, c) = (Vec3::ZERO, Vec3::X, Vec3::Y);
        let t = intersect(Vec3::new(0.2, 0.2, 5.0), Vec3::NEG_Z, a, b, c);
        assert_eq!(t, Some(5.0));
        assert_eq!(intersect(Vec3::new(0.8, 0.8, 5.0), Vec3::NEG_Z, a, b, c), None);
        assert_eq!(
            intersect(Vec3::new(0.2, 0.2, 5.0), Vec3::Z, a, b, c),
            None,
            "behind the origin"
        );
    }
}
