//! Vertices of a skinned FBX mesh that no cluster weighs.
//!
//! FBX draws them where the mesh's node puts them: the FBX SDK, ufbx (the fallback matrix of
//! `ufbx_get_skin_vertex_matrix` is the mesh node's `geometry_to_world`) and Blender's armature
//! modifier all do. glTF has no such fallback (a vertex without weight has no place), so the
//! node joins the skin as one more joint, bound with the identity (the vertices are in the
//! node's space once geometric transforms are folded in), and those vertices weigh 1 on it.
//! Left alone they would stay in the bind pose while the mesh's node moves.

use super::geometry::Geometry;
use crate::rig::{ImportFacts, Node, RigError};
use glam::Mat4;

/// Binds every vertex of a skinned mesh that no cluster weighs to the node drawing the mesh
/// (see the module documentation), noting each mesh so treated in `facts`.
pub(super) fn follow_mesh_node(
    geometry: &mut Geometry,
    nodes: &[Node],
    facts: &mut ImportFacts,
) -> Result<(), RigError> {
    for mesh in 0..geometry.meshes.len() {
        let unweighted: usize = geometry.meshes[mesh]
            .primitives
            .iter()
            .filter_map(|p| p.influences.as_ref())
            .map(|influences| {
                (0..vertices_of(influences))
                    .filter(|&v| is_unweighted(influences, v))
                    .count()
            })
            .sum();
        if unweighted == 0 {
            continue;
        }
        let drawn_by: Vec<usize> = (0..geometry.instances.len())
            .filter(|&i| geometry.instances[i].mesh == mesh && geometry.instances[i].skin.is_some())
            .collect();
        let Some(skin) = drawn_by.first().and_then(|&i| geometry.instances[i].skin) else {
            continue;
        };
        if drawn_by.iter().any(|&i| geometry.instances[i].skin != Some(skin)) {
            // FBX ties a skin deformer to its geometry: not seen; such vertices stay unbound.
            continue;
        }
        let slot = geometry.skins[skin].joints.len();
        let Ok(joint) = u16::try_from(slot) else {
            return Err(RigError::Data(format!(
                "FBX skin '{}' has too many clusters to add the mesh's node to it",
                geometry.skins[skin].name
            )));
        };
        // The skin stays the first instance's when no other mesh's instance shares it; every
        // other instance gets a copy, the node of each bound at the same slot.
        let shared = geometry
            .instances
            .iter()
            .any(|i| i.skin == Some(skin) && i.mesh != mesh);
        let original = geometry.skins[skin].clone();
        for (k, &i) in drawn_by.iter().enumerate() {
            let target = if k == 0 && !shared {
                skin
            } else {
                geometry.skins.push(original.clone());
                geometry.skins.len() - 1
            };
            let node = geometry.instances[i].node;
            geometry.skins[target].joints.push(node);
            geometry.skins[target].inverse_binds.push(Mat4::IDENTITY);
            geometry.instances[i].skin = Some(target);
            facts.notes.push(format!(
                "FBX mesh '{}': {unweighted} vertices no cluster weighs follow the mesh's node '{}', as FBX draws them (the node is joint {slot} of its skin)",
                geometry.meshes[mesh].name,
                nodes.get(node).map_or("?", |n| n.name.as_str())
            ));
        }
        for primitive in &mut geometry.meshes[mesh].primitives {
            let Some(influences) = &mut primitive.influences else {
                continue;
            };
            for v in 0..vertices_of(influences) {
                if is_unweighted(influences, v) {
                    let first = v * influences.sets;
                    influences.joints[first] = [joint, 0, 0, 0];
                    influences.weights[first] = [1.0, 0.0, 0.0, 0.0];
                }
            }
        }
    }
    Ok(())
}

/// Whether vertex `v` has no weight above zero.
fn is_unweighted(influences: &crate::rig::Influences, v: usize) -> bool {
    influences.of_vertex(v).all(|(_, w)| w <= 0.0 || !w.is_finite())
}

/// How many vertices `influences` holds weights for.
fn vertices_of(influences: &crate::rig::Influences) -> usize {
    influences.joints.len() / influences.sets.max(1)
}
