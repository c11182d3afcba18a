//! Measures the checks share: world matrices, pose deviation, sizes, matrix properties.

use super::*;
use crate::rig::bind::{bind_offset, bind_placement};

/// Every primitive the file has, drawn or not, in mesh order.
pub(super) fn primitive_views(rig: &Rig) -> Vec<PrimitiveView<'_>> {
    let mut views = Vec::new();
    for (m, mesh) in rig.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let facts = rig.facts.primitives.get(m).and_then(|f| f.get(p));
            views.push(PrimitiveView {
                mesh: m,
                primitive: Some(p),
                gltf_index: facts.map_or(p, |f| f.gltf_index),
                influences: primitive.influences.as_ref(),
                weight_quantum: facts.map_or(0.0, |f| f.weight_quantum),
                facts,
                vertices: primitive.vertex_count(),
                mode: 4,
                triangles: primitive.indices.len() / 3,
            });
        }
    }
    for skipped in &rig.facts.skipped_primitives {
        if skipped.mesh >= rig.meshes.len() {
            continue;
        }
        views.push(PrimitiveView {
            mesh: skipped.mesh,
            primitive: None,
            gltf_index: skipped.facts.gltf_index,
            influences: skipped.influences.as_ref(),
            weight_quantum: skipped.facts.weight_quantum,
            facts: Some(&skipped.facts),
            vertices: skipped.vertex_count,
            mode: skipped.facts.mode,
            triangles: 0,
        });
    }
    views.sort_by_key(|v| (v.mesh, v.gltf_index));
    views
}

/// World matrix of every node from local transforms (parents come first).
pub(super) fn worlds_of(rig: &Rig, locals: &[Trs]) -> Vec<Mat4> {
    let mut worlds = vec![Mat4::IDENTITY; rig.nodes.len()];
    crate::anim::local_to_world(&rig.nodes, locals, &mut worlds);
    worlds
}

/// How far the joints of instance `i`'s skin are from the bind pose when the nodes are at
/// `worlds`: each joint against the place its inverse bind matrix undoes, with the bound mesh
/// placed where [`bind_placement`] says. Sizes are in world units, relative to `rig_size` (see
/// [`bind_pose_size`]).
pub(super) fn pose_deviation(rig: &Rig, i: usize, worlds: &[Mat4], rig_size: f32) -> Deviation {
    let instance = rig.instances[i];
    let skin = &rig.skins[instance.skin.unwrap_or(0)];
    let placement = bind_placement(skin, worlds, Some(instance.node));
    let size = if rig_size.is_nan() || rig_size <= 0.0 {
        1.0
    } else {
        rig_size
    };
    let mut deviation = Deviation {
        distance: 0.0,
        relative: 0.0,
        joint: skin.joints[0],
        degrees: 0.0,
        rotated_joint: skin.joints[0],
    };
    for (&joint, ibm) in skin.joints.iter().zip(&skin.inverse_binds) {
        let (distance, degrees) = bind_offset(&worlds[joint], ibm, &placement);
        if distance > deviation.distance {
            deviation.distance = distance;
            deviation.joint = joint;
        }
        if degrees > deviation.degrees {
            deviation.degrees = degrees;
            deviation.rotated_joint = joint;
        }
    }
    deviation.relative = deviation.distance / size;
    deviation
}

/// Diagonal of the bounding box of the whole rig in the bind pose, in world units when the nodes
/// are at `worlds`: every mesh instance's vertices, a skinned one placed where
/// [`bind_placement`] puts it, another by its node. A joint's move is measured against the
/// figure, not against whichever mesh (an eye) its skin happens to be drawn with first.
pub(super) fn bind_pose_size(rig: &Rig, worlds: &[Mat4]) -> f32 {
    let mut bounds = crate::anim::Bounds::EMPTY;
    for instance in &rig.instances {
        let placement = match instance.skin.and_then(|s| rig.skins.get(s)) {
            Some(skin) => bind_placement(skin, worlds, Some(instance.node)),
            None => worlds.get(instance.node).copied().unwrap_or(Mat4::IDENTITY),
        };
        let Some(mesh) = rig.meshes.get(instance.mesh) else {
            continue;
        };
        for &p in mesh.primitives.iter().flat_map(|p| &p.positions) {
            let p = placement.transform_point3(p);
            if p.is_finite() {
                bounds.include(p);
            }
        }
    }
    bounds.size()
}

/// Depth-first preorder numbers and subtree sizes of the node hierarchy.
pub(super) fn preorder(rig: &Rig) -> (Vec<usize>, Vec<usize>) {
    let n = rig.nodes.len();
    let (children, roots) = (&rig.hierarchy().children, &rig.hierarchy().roots);
    let mut pre = vec![0; n];
    let mut next = 0;
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(node) = stack.pop() {
        pre[node] = next;
        next += 1;
        stack.extend(children[node].iter().rev());
    }
    // Parents come before children in the rig's order, so children's sizes are final first.
    let mut size = vec![1; n];
    for i in (0..n).rev() {
        if let Some(p) = rig.nodes[i].parent.filter(|&p| p < i) {
            size[p] += size[i];
        }
    }
    (pre, size)
}

/// Most and mean non-zero influences per vertex.
pub(super) fn influence_counts(influences: &Influences) -> (usize, f32) {
    let sets = influences.sets.max(1);
    let vertices = influences.weights.len() / sets;
    if vertices == 0 {
        return (0, 0.0);
    }
    let mut max = 0;
    let mut total = 0usize;
    for v in 0..vertices {
        let count = influences.of_vertex(v).filter(|(_, w)| *w != 0.0).count();
        max = max.max(count);
        total += count;
    }
    (max, total as f32 / vertices as f32)
}

/// Whether the bottom row of a matrix is 0 0 0 1 (within rounding).
pub(super) fn is_affine(m: &Mat4) -> bool {
    let row = m.row(3);
    row.truncate().abs().max_element() <= 1e-5 && (row.w - 1.0).abs() <= 1e-5
}

pub(super) fn has_shear(m: &Mat4) -> bool {
    let (Some(x), Some(y), Some(z)) = (
        m.x_axis.xyz().try_normalize(),
        m.y_axis.xyz().try_normalize(),
        m.z_axis.xyz().try_normalize(),
    ) else {
        return false;
    };
    x.dot(y).abs() > 1e-3 || y.dot(z).abs() > 1e-3 || z.dot(x).abs() > 1e-3
}

pub(super) fn has_nonuniform_scale(m: &Mat4) -> bool {
    let lengths = Vec3::new(
        m.x_axis.xyz().length(),
        m.y_axis.xyz().length(),
        m.z_axis.xyz().length(),
    );
    lengths.min_element() > 0.0 && lengths.max_element() / lengths.min_element() - 1.0 > 1e-3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shear_and_scale_are_told_apart() {
        let uniform = Mat4::from_scale_rotation_translation(Vec3::splat(2.0), Quat::from_rotation_z(0.7), Vec3::X);
        assert!(!has_shear(&uniform) && !has_nonuniform_scale(&uniform));
        let stretched = Mat4::from_scale(Vec3::new(1.0, 2.0, 1.0));
        assert!(!has_shear(&stretched) && has_nonuniform_scale(&stretched));
        let mut sheared = Mat4::IDENTITY;
        sheared.y_axis.x = 0.5;
        assert!(has_shear(&sheared));
        let mut projective = Mat4::IDENTITY;
        projective.x_axis.w = 0.25;
        assert!(!is_affine(&projective) && is_affine(&uniform));
    }
}
