//! A rig's meshes as glTF meshes: each primitive's attributes, its joints and weights, and its
//! morph targets.

use super::super::super::SaveError;
use super::super::{Chunk, Materials, rig_data};
use crate::rig::{Influences, Rig};
use glam::Vec3;
use serde_json::{Value, json};

/// The morph targets every primitive of mesh `mesh` is written with: glTF asks all primitives
/// of a mesh for the same number, so the most of any (fewer are filled with zero offsets).
pub(super) fn target_count(rig: &Rig, mesh: usize) -> usize {
    rig.morphs
        .targets
        .get(mesh)
        .map_or(0, |p| p.iter().map(Vec::len).max().unwrap_or(0))
}

/// The primitive's tangents as glTF's TANGENT, when it has them with its normals (glTF reads
/// them only beside normals) and each is one glTF accepts: xyz of unit length, w ±1. Otherwise
/// none is written and readers generate MikkTSpace tangents, as this rig's importer does.
fn writable_tangents(primitive: &crate::rig::Primitive) -> Option<Vec<[f32; 4]>> {
    let n = primitive.vertex_count();
    let unit = |t: &glam::Vec4| (t.truncate().length() - 1.0).abs() <= 1e-4 && t.w.abs() == 1.0;
    (primitive.tangents.len() == n && primitive.normals.len() == n && primitive.tangents.iter().all(unit))
        .then(|| primitive.tangents.iter().map(|t| t.to_array()).collect())
}

/// Morph target `t` of a primitive of `n` vertices as glTF (`None`: a target the primitive lacks,
/// written as zero offsets), its offsets in the chunk; its TANGENT offsets only where the
/// primitive's TANGENT is written (`with_tangents`), as glTF asks. An error naming `what` if the
/// target does not fit the primitive.
fn target_json(
    target: Option<&crate::rig::MorphTarget>,
    t: usize,
    n: usize,
    with_tangents: bool,
    chunk: &mut Chunk,
    what: &str,
) -> Result<Value, SaveError> {
    let zero = crate::rig::MorphTarget::default();
    let target = target.unwrap_or(&zero);
    if let Some(&v) = target.vertices.iter().find(|&&v| v as usize >= n) {
        return Err(rig_data(
            what,
            format!("morph target {t} moves vertex {v} of {n} vertices"),
        ));
    }
    let (positions, normals) = target.dense(n);
    let offsets = |values: &[Vec3], name: &str| -> Result<Vec<[f32; 3]>, SaveError> {
        let values: Vec<[f32; 3]> = values.iter().map(|v| v.to_array()).collect();
        match values.as_flattened().iter().all(|v| v.is_finite()) {
            true => Ok(values),
            false => Err(rig_data(what, format!("a morph target {name} offset is not finite"))),
        }
    };
    // glTF's POSITION of a target is required to have bounds, so it is always written.
    let mut written = json!({ "POSITION": chunk.floats(&offsets(&positions, "position")?) });
    if target.has_normals() {
        written["NORMAL"] = json!(chunk.floats(&offsets(&normals, "normal")?));
    }
    if with_tangents && target.has_tangents() {
        written["TANGENT"] = json!(chunk.floats(&offsets(&target.dense_tangents(n), "tangent")?));
    }
    Ok(written)
}

/// Mesh `m` as glTF, its data in the chunk; `mesh_of_node` holds each node's (mesh, skin), to
/// check the joint indices against every skin the mesh is drawn with.
pub(super) fn mesh_json(
    rig: &Rig,
    m: usize,
    mesh_of_node: &[Option<(usize, Option<usize>)>],
    materials: &Materials,
    chunk: &mut Chunk,
) -> Result<Value, SaveError> {
    let mesh = &rig.meshes[m];
    let targets = target_count(rig, m);
    // The fewest joints of the skins the mesh is drawn with bounds its joint indices.
    let joint_limit = (mesh_of_node.iter().flatten())
        .filter(|(mesh, _)| *mesh == m)
        .filter_map(|(_, skin)| skin.map(|s| rig.skins[s].joints.len()))
        .min();
    let mut primitives = Vec::with_capacity(mesh.primitives.len());
    for (k, primitive) in mesh.primitives.iter().enumerate() {
        let what = || format!("mesh {m} ('{}') primitive {k}", mesh.name);
        let n = primitive.vertex_count();
        if n == 0 {
            return Err(rig_data(what(), "it has no vertices"));
        }
        let per_vertex = |len: usize, name: &str| match len == n || len == 0 {
            true => Ok(()),
            false => Err(rig_data(what(), format!("{len} {name} for {n} vertices"))),
        };
        per_vertex(primitive.normals.len(), "normals")?;
        per_vertex(primitive.uvs.len(), "texture coordinates")?;
        per_vertex(primitive.colors.len(), "colours")?;
        let finite = |values: &[f32], name: &str| match values.iter().all(|v| v.is_finite()) {
            true => Ok(()),
            false => Err(rig_data(what(), format!("a {name} value is not finite"))),
        };
        let positions: Vec<[f32; 3]> = primitive.positions.iter().map(|v| v.to_array()).collect();
        finite(positions.as_flattened(), "position")?;
        let mut attributes = json!({ "POSITION": chunk.floats(&positions) });
        if !primitive.normals.is_empty() {
            let normals: Vec<[f32; 3]> = primitive.normals.iter().map(|v| v.to_array()).collect();
            finite(normals.as_flattened(), "normal")?;
            attributes["NORMAL"] = json!(chunk.floats(&normals));
        }
        materials.write_uvs(
            primitive.material,
            |set| primitive.uv_set(set),
            chunk,
            &mut attributes,
            &what(),
        )?;
        if !primitive.colors.is_empty() {
            let colors: Vec<[f32; 4]> = primitive.colors.iter().map(|v| v.to_array()).collect();
            finite(colors.as_flattened(), "colour")?;
            attributes["COLOR_0"] = json!(chunk.floats(&colors));
        }
        let tangents = writable_tangents(primitive);
        if let Some(tangents) = &tangents {
            attributes["TANGENT"] = json!(chunk.floats(tangents));
        }
        if let Some(influences) = &primitive.influences {
            write_influences(influences, n, joint_limit, chunk, &mut attributes, &what())?;
        }
        if primitive.indices.len() % 3 != 0 {
            return Err(rig_data(
                what(),
                format!("{} indices do not make triangles", primitive.indices.len()),
            ));
        }
        if let Some(&bad) = primitive.indices.iter().find(|&&i| i as usize >= n) {
            return Err(rig_data(what(), format!("index {bad} is past its {n} vertices")));
        }
        let mut written = json!({ "attributes": attributes });
        if !primitive.indices.is_empty() {
            written["indices"] = json!(chunk.indices(&primitive.indices));
        } else if n % 3 != 0 {
            return Err(rig_data(
                what(),
                format!("{n} vertices without indices do not make triangles"),
            ));
        }
        if let Some(material) = primitive.material {
            if material >= rig.materials.len() {
                return Err(rig_data(what(), format!("material {material} does not exist")));
            }
            written["material"] = json!(material);
        }
        if targets > 0 {
            let own = rig.morphs.of(m, k);
            let written_targets = (0..targets)
                .map(|t| target_json(own.get(t), t, n, tangents.is_some(), chunk, &what()))
                .collect::<Result<Vec<_>, _>>()?;
            written["targets"] = json!(written_targets);
        }
        primitives.push(written);
    }
    let mut written = json!({ "name": mesh.name, "primitives": primitives });
    if targets > 0 {
        // glTF asks for one default weight per target; the rig's default weights are 0 where
        // the file gave none.
        let defaults = rig.morphs.default_weights.get(m).map_or(&[][..], Vec::as_slice);
        let weights: Vec<f32> = (0..targets).map(|t| defaults.get(t).copied().unwrap_or(0.0)).collect();
        if !weights.iter().all(|w| w.is_finite()) {
            return Err(rig_data(
                format!("mesh {m} ('{}')", mesh.name),
                "a default morph weight is not finite",
            ));
        }
        written["weights"] = json!(weights);
        let names = rig.morphs.target_names.get(m).filter(|names| names.len() == targets);
        if let Some(names) = names {
            written["extras"] = json!({ "targetNames": names });
        }
    }
    Ok(written)
}

/// `JOINTS_n`/`WEIGHTS_n` for each set of four influences (the rig keeps `sets` per vertex,
/// two when a vertex has more than four). Weights are written as floats, as the rig holds
/// them, so they come back unchanged.
fn write_influences(
    influences: &Influences,
    n: usize,
    joint_limit: Option<usize>,
    chunk: &mut Chunk,
    attributes: &mut Value,
    what: &str,
) -> Result<(), SaveError> {
    let sets = influences.sets;
    if sets == 0 || influences.joints.len() != n * sets || influences.weights.len() != n * sets {
        return Err(rig_data(
            what,
            format!(
                "{} joints and {} weights in {sets} sets for {n} vertices",
                influences.joints.len(),
                influences.weights.len()
            ),
        ));
    }
    if !influences.weights.as_flattened().iter().all(|w| w.is_finite()) {
        return Err(rig_data(what, "a weight is not finite"));
    }
    if let Some(limit) = joint_limit
        && let Some(joint) = influences
            .joints
            .as_flattened()
            .iter()
            .find(|&&j| usize::from(j) >= limit)
    {
        return Err(rig_data(
            what,
            format!("joint {joint} is past the {limit} joints of its skin"),
        ));
    }
    for set in 0..sets {
        let joints: Vec<[u16; 4]> = influences.joints.iter().skip(set).step_by(sets).copied().collect();
        let weights: Vec<[f32; 4]> = influences.weights.iter().skip(set).step_by(sets).copied().collect();
        attributes[format!("JOINTS_{set}")] = json!(chunk.joints(&joints));
        attributes[format!("WEIGHTS_{set}")] = json!(chunk.floats(&weights));
    }
    Ok(())
}
