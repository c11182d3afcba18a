//! Meshes: triangle primitives (positions, normals, texture coordinates, joints and weights,
//! indices) and their morph targets; primitives with nothing to draw are kept aside for the
//! report.

use super::accessor::{
    self, Budget, BudgetExceeded, Buffers, FLOAT, FLOAT_OR_NORM, FLOAT_OR_SNORM, FLOAT_OR_UNORM, ReadError, UINT_8_16,
    UINT_ANY,
};
use super::tangents;
use crate::rig::{
    ImportFacts, Influences, Material, Mesh, MorphTarget, Primitive, PrimitiveFacts, RigError, SkippedPrimitive,
    smooth_normals,
};
use glam::{Vec2, Vec3, Vec4};
use gltf::accessor::DataType;
use gltf::json::validation::Checked;
use gltf::mesh::Semantic;

/// One mesh as read: its drawn primitives, their facts and morph targets (parallel lists).
pub struct ReadMesh {
    pub mesh: Mesh,
    pub facts: Vec<PrimitiveFacts>,
    pub morph_targets: Vec<Vec<MorphTarget>>,
}

/// Reads the triangle primitives of `mesh`. Points and lines are kept aside for the report;
/// primitives without POSITION or of a mode glTF does not define are skipped with a note.
pub fn read_mesh(
    document: &gltf::Document,
    mesh: &gltf::Mesh,
    materials: &[Material],
    buffers: &Buffers,
    budget: &mut Budget,
    facts: &mut ImportFacts,
    warnings: &mut Vec<String>,
) -> Result<ReadMesh, RigError> {
    let name = mesh
        .name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("mesh {}", mesh.index()));
    let json = &document.as_json().meshes[mesh.index()];
    let mut read = ReadMesh {
        mesh: Mesh {
            name: name.clone(),
            primitives: Vec::new(),
        },
        facts: Vec::new(),
        morph_targets: Vec::new(),
    };
    for primitive in mesh.primitives() {
        let at = |what: &str| format!("mesh '{name}' primitive {}: {what}", primitive.index());
        // The `gltf` crate panics on a mode it does not know: it is read from the JSON.
        let mode = match json.primitives[primitive.index()].mode {
            Checked::Valid(mode) => mode,
            Checked::Invalid => {
                facts.notes.push(at("not drawn: its mode is not one glTF defines"));
                continue;
            }
        };
        if primitive.get(&Semantic::Positions).is_none() {
            facts.notes.push(at("not drawn: it has no POSITION"));
            continue;
        }
        let mut pf = PrimitiveFacts {
            gltf_index: primitive.index(),
            mode: mode.as_gl_enum(),
            ..PrimitiveFacts::default()
        };
        if mode != gltf::mesh::Mode::Triangles {
            // Points and lines carry no surface to skin; they are not drawn, but their weights are
            // still read for the report.
            let positions = read_positions(&primitive, buffers, budget);
            let influences = positions
                .and_then(|p| read_influences(&primitive, p.len(), buffers, budget, &mut pf).map(|i| (p.len(), i)));
            match influences {
                Ok((vertex_count, influences)) => facts.skipped_primitives.push(SkippedPrimitive {
                    mesh: mesh.index(),
                    facts: pf,
                    vertex_count,
                    influences,
                }),
                Err(ReadError::Budget(e)) => return Err(RigError::Budget(BudgetExceeded(at(&e.0)))),
                Err(ReadError::Data(e)) => warnings.push(at(&format!("not drawn (mode {}), and {e}", pf.mode))),
            }
            continue;
        }
        let material = primitive
            .material()
            .index()
            .and_then(|m| materials.get(m))
            .cloned()
            .unwrap_or_default();
        let drawn = read_triangles(&primitive, &material, buffers, budget, &mut pf).map_err(|e| match e {
            ReadError::Budget(e) => RigError::Budget(BudgetExceeded(at(&e.0))),
            ReadError::Data(e) => RigError::Data(at(&e)),
        })?;
        let targets = read_morph_targets(&primitive, &drawn, buffers, budget, warnings, &at)?;
        read.mesh.primitives.push(drawn);
        read.facts.push(pf);
        read.morph_targets.push(targets);
    }
    Ok(read)
}

/// The morph targets of one drawn primitive of `vertices` vertices. If one does not match the
/// primitive, all are left out with a warning (weights index them by position).
/// The names of `mesh`'s morph targets, from `extras.targetNames` (the de facto convention of
/// Blender, three.js and most exporters); empty when absent or not a list of strings.
pub fn target_names(mesh: &gltf::Mesh) -> Vec<String> {
    mesh.extras()
        .as_ref()
        .and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok())
        .and_then(|extras| {
            extras
                .get("targetNames")?
                .as_array()?
                .iter()
                .map(|name| name.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn read_morph_targets(
    primitive: &gltf::Primitive,
    drawn: &Primitive,
    buffers: &Buffers,
    budget: &mut Budget,
    warnings: &mut Vec<String>,
    at: &dyn Fn(&str) -> String,
) -> Result<Vec<MorphTarget>, RigError> {
    let vertices = drawn.vertex_count();
    let mut targets = Vec::new();
    for (t, target) in primitive.morph_targets().enumerate() {
        let mut read =
            |accessor: Option<gltf::Accessor>, what: &str, quantized: bool| -> Result<Vec<Vec3>, ReadError> {
                let Some(accessor) = accessor else {
                    budget.charge(vertices as u64 * 12, what)?;
                    return Ok(vec![Vec3::ZERO; vertices]);
                };
                // Core glTF allows floats and normalized integers for morph offsets;
                // KHR_mesh_quantization adds unnormalized position offsets.
                let values = if quantized {
                    accessor::read_f32_quantized::<3>(&accessor, FLOAT_OR_NORM, buffers, budget)
                } else {
                    accessor::read_f32::<3>(&accessor, FLOAT_OR_NORM, buffers, budget)
                }
                .map_err(|e| e.context(what))?;
                if values.len() != vertices {
                    return Err(ReadError::Data(format!(
                        "{what} has {} offsets for {vertices} vertices",
                        values.len()
                    )));
                }
                Ok(values.into_iter().map(Vec3::from).collect())
            };
        // Tangent offsets are read only where the primitive has tangents to move.
        let tangents = target.tangents().filter(|_| !drawn.tangents.is_empty());
        let read = read(target.positions(), "POSITION", true).and_then(|positions| {
            let normals = read(target.normals(), "NORMAL", false)?;
            let tangents = match tangents {
                Some(accessor) => read(Some(accessor), "TANGENT", false)?,
                None => Vec::new(),
            };
            Ok(MorphTarget::sparse_with_tangents(
                [&positions, &normals, &tangents],
                [&drawn.positions, &drawn.normals],
                &drawn.tangents,
            ))
        });
        match read {
            Ok(target) => targets.push(target),
            Err(ReadError::Budget(e)) => return Err(RigError::Budget(BudgetExceeded(at(&e.0)))),
            Err(ReadError::Data(e)) => {
                warnings.push(at(&format!("morph target {t} left out: {e}")));
                targets.clear();
                break;
            }
        }
    }
    Ok(targets)
}

/// An attribute of `N` components, integers normalized.
fn attribute<const N: usize>(
    primitive: &gltf::Primitive,
    semantic: Semantic,
    allowed: &[gltf::accessor::DataType],
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<Option<Vec<[f32; N]>>, ReadError> {
    let Some(accessor) = primitive.get(&semantic) else {
        return Ok(None);
    };
    accessor::read_f32::<N>(&accessor, allowed, buffers, budget)
        .map(Some)
        .map_err(|e| e.context(&semantic.to_string()))
}

/// Normals are floats, or normalized signed integers in a file that uses KHR_mesh_quantization.
fn normal_types(buffers: &Buffers) -> &'static [DataType] {
    if buffers.quantized_geometry {
        FLOAT_OR_SNORM
    } else {
        FLOAT
    }
}

/// An attribute KHR_mesh_quantization may store as integers, normalized or not (`core`: the
/// types glTF allows without it).
fn quantized_attribute<const N: usize>(
    primitive: &gltf::Primitive,
    semantic: Semantic,
    core: &[DataType],
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<Option<Vec<[f32; N]>>, ReadError> {
    let Some(accessor) = primitive.get(&semantic) else {
        return Ok(None);
    };
    accessor::read_f32_quantized::<N>(&accessor, core, buffers, budget)
        .map(Some)
        .map_err(|e| e.context(&semantic.to_string()))
}

fn read_positions(primitive: &gltf::Primitive, buffers: &Buffers, budget: &mut Budget) -> Result<Vec<Vec3>, ReadError> {
    let positions = quantized_attribute::<3>(primitive, Semantic::Positions, FLOAT, buffers, budget)?
        .ok_or_else(|| ReadError::Data("POSITION is missing".into()))?;
    Ok(positions.into_iter().map(Vec3::from).collect())
}

fn read_triangles(
    primitive: &gltf::Primitive,
    material: &Material,
    buffers: &Buffers,
    budget: &mut Budget,
    pf: &mut PrimitiveFacts,
) -> Result<Primitive, ReadError> {
    let positions = read_positions(primitive, buffers, budget)?;
    let n = positions.len();
    let indices: Vec<u32> = match primitive.indices() {
        Some(accessor) => accessor::read_u32::<1>(&accessor, UINT_ANY, buffers, budget)
            .map_err(|e| e.context("indices"))?
            .into_iter()
            .map(|[i]| i)
            .collect(),
        None => {
            budget.charge(n as u64 * 4, "generated indices")?;
            (0..n as u32).collect()
        }
    };
    if let Some(bad) = indices.iter().find(|&&i| i as usize >= n) {
        return Err(ReadError::Data(format!("index {bad} is out of range for {n} vertices")));
    }
    let normals = match attribute::<3>(primitive, Semantic::Normals, normal_types(buffers), buffers, budget)? {
        // Quantized normals (KHR_mesh_quantization) are only close to unit length.
        Some(normals)
            if primitive
                .get(&Semantic::Normals)
                .is_some_and(|a| a.data_type() != DataType::F32) =>
        {
            normals.into_iter().map(|n| Vec3::from(n).normalize_or_zero()).collect()
        }
        Some(normals) => normals.into_iter().map(Vec3::from).collect(),
        None => {
            budget.charge(n as u64 * 12, "generated normals")?;
            smooth_normals(&positions, &indices)
        }
    };
    // The base color texture's coordinates, moved by its texture transform, are the ones drawn.
    let uv = material.base_color_uv;
    let set = Semantic::TexCoords(uv.set);
    let uvs = match quantized_attribute::<2>(primitive, set.clone(), FLOAT_OR_UNORM, buffers, budget)? {
        Some(uvs) if uv.is_identity() => uvs.into_iter().map(Vec2::from).collect(),
        Some(uvs) => uvs.into_iter().map(|t| uv.apply(Vec2::from(t))).collect(),
        None => {
            budget.charge(n as u64 * 8, "texture coordinates")?;
            vec![Vec2::ZERO; n]
        }
    };
    let uv_sets = read_uv_sets(primitive, material, buffers, budget)?;
    // Only a normal map reads tangents: a file's TANGENT is left unread without one.
    let tangents = match material.normal_texture {
        Some(_) => attribute::<4>(primitive, Semantic::Tangents, normal_types(buffers), buffers, budget)?
            .map_or_else(Vec::new, |t| t.into_iter().map(Vec4::from).collect()),
        None => Vec::new(),
    };
    let influences = read_influences(primitive, n, buffers, budget, pf)?;
    let colors = read_colors(primitive, buffers, budget)?;
    for (what, len) in [
        ("NORMAL".to_string(), normals.len()),
        (set.to_string(), uvs.len()),
        (
            "TEXCOORD_0".to_string(),
            if uv_sets[0].is_empty() { n } else { uv_sets[0].len() },
        ),
        (
            "TEXCOORD_1".to_string(),
            if uv_sets[1].is_empty() { n } else { uv_sets[1].len() },
        ),
        (
            "TANGENT".to_string(),
            if tangents.is_empty() { n } else { tangents.len() },
        ),
        ("COLOR_0".to_string(), if colors.is_empty() { n } else { colors.len() }),
    ] {
        if len != n {
            return Err(ReadError::Data(format!(
                "{what} has {len} elements but POSITION has {n}"
            )));
        }
    }
    let mut read = Primitive {
        positions,
        normals,
        uvs,
        uv_sets,
        tangents,
        influences,
        indices,
        material: primitive.material().index(),
        colors,
    };
    if let Some(normal_map) = material.normal_texture
        && read.tangents.is_empty()
    {
        budget.charge(n as u64 * 16, "generated tangents")?;
        let uvs: Vec<Vec2> = read
            .uv_set(normal_map.uv.set)
            .iter()
            .map(|&t| normal_map.uv.apply(t))
            .collect();
        read.tangents =
            tangents::mikktspace_tangents(&read.positions, &read.normals, &uvs, &read.indices).unwrap_or_default();
    }
    Ok(read)
}

/// `TEXCOORD_0` and `TEXCOORD_1` as the file gives them, where a texture other than the base
/// color reads them and the primitive's `uvs` are not already them (see `Primitive::uv_sets`).
fn read_uv_sets(
    primitive: &gltf::Primitive,
    material: &Material,
    buffers: &Buffers,
    budget: &mut Budget,
) -> Result<[Vec<Vec2>; 2], ReadError> {
    let others = [
        material.metallic_roughness_texture,
        material.normal_texture,
        material.occlusion_texture,
        material.emissive_texture,
    ];
    let base = material.base_color_uv;
    let mut sets: [Vec<Vec2>; 2] = Default::default();
    for (k, set) in sets.iter_mut().enumerate() {
        let read = others.iter().flatten().any(|t| t.uv.set == k as u32);
        // `uvs` is set 0 unmoved when the base color reads it so (or reads nothing).
        let in_uvs = k == 0 && base.set == 0 && base.is_identity();
        if read && !in_uvs {
            let semantic = Semantic::TexCoords(k as u32);
            if let Some(uvs) = quantized_attribute::<2>(primitive, semantic, FLOAT_OR_UNORM, buffers, budget)? {
                *set = uvs.into_iter().map(Vec2::from).collect();
            }
        }
    }
    Ok(sets)
}

/// `COLOR_0` as RGBA (RGB colors get alpha 1); empty when absent.
fn read_colors(primitive: &gltf::Primitive, buffers: &Buffers, budget: &mut Budget) -> Result<Vec<Vec4>, ReadError> {
    let Some(accessor) = primitive.get(&Semantic::Colors(0)) else {
        return Ok(Vec::new());
    };
    let (_, dimensions) = buffers.layout(&accessor)?;
    let colors = if dimensions == gltf::accessor::Dimensions::Vec3 {
        accessor::read_f32::<3>(&accessor, FLOAT_OR_UNORM, buffers, budget)?
            .into_iter()
            .map(|c| Vec3::from(c).extend(1.0))
            .collect()
    } else {
        accessor::read_f32::<4>(&accessor, FLOAT_OR_UNORM, buffers, budget)?
            .into_iter()
            .map(Vec4::from)
            .collect()
    };
    Ok(colors)
}

/// Reads `JOINTS_0`/`WEIGHTS_0` and `JOINTS_1`/`WEIGHTS_1` into [`Influences`]. Later sets are
/// read only to count the vertices whose weights they carry (skinning ignores them).
pub fn read_influences(
    primitive: &gltf::Primitive,
    vertex_count: usize,
    buffers: &Buffers,
    budget: &mut Budget,
    pf: &mut PrimitiveFacts,
) -> Result<Option<Influences>, ReadError> {
    // The set numbers present, in order (a file may name `JOINTS_4000000000`: only sets that
    // exist are visited).
    let mut present: Vec<u32> = primitive
        .attributes()
        .filter_map(|(semantic, _)| match semantic {
            Semantic::Joints(n) | Semantic::Weights(n) => Some(n),
            _ => None,
        })
        .collect();
    present.sort_unstable();
    present.dedup();
    if present.is_empty() {
        return Ok(None);
    }
    type JointsAndWeights = (Vec<[u32; 4]>, Vec<[f32; 4]>);
    let mut sets: Vec<JointsAndWeights> = Vec::new();
    let mut truncated = vec![0.0f32; 0];
    for set in present {
        let (joints, weights) = match (
            primitive.get(&Semantic::Joints(set)),
            primitive.get(&Semantic::Weights(set)),
        ) {
            (Some(j), Some(w)) => (j, w),
            (None, None) => continue,
            (Some(_), None) => {
                pf.unpaired_sets.push(format!("JOINTS_{set} without WEIGHTS_{set}"));
                continue;
            }
            (None, Some(_)) => {
                pf.unpaired_sets.push(format!("WEIGHTS_{set} without JOINTS_{set}"));
                continue;
            }
        };
        let joint_values = accessor::read_u32::<4>(&joints, UINT_8_16, buffers, budget)
            .map_err(|e| e.context(&format!("JOINTS_{set}")))?;
        let weight_values = accessor::read_f32::<4>(&weights, FLOAT_OR_UNORM, buffers, budget)
            .map_err(|e| e.context(&format!("WEIGHTS_{set}")))?;
        if joint_values.len() != vertex_count || weight_values.len() != vertex_count {
            return Err(ReadError::Data(format!(
                "JOINTS_{set}/WEIGHTS_{set} have {}/{} elements but POSITION has {vertex_count}",
                joint_values.len(),
                weight_values.len()
            )));
        }
        if set < 2 && sets.is_empty() {
            pf.weight_quantum = match weights.data_type() {
                gltf::accessor::DataType::U8 => 1.0 / 255.0,
                gltf::accessor::DataType::U16 => 1.0 / 65535.0,
                _ => 0.0,
            };
        }
        if set < 2 {
            sets.push((joint_values, weight_values));
        } else {
            if truncated.is_empty() {
                truncated = vec![0.0; vertex_count];
            }
            for (sum, w) in truncated.iter_mut().zip(&weight_values) {
                *sum += w.iter().filter(|w| **w != 0.0).map(|w| w.abs()).sum::<f32>();
            }
        }
    }
    for (v, &dropped) in truncated.iter().enumerate() {
        if dropped != 0.0 {
            pf.truncated_vertices.push(v as u32);
            pf.truncated_weight_max = pf.truncated_weight_max.max(dropped);
        }
    }
    if sets.is_empty() {
        return Ok(None);
    }
    let count = sets.len();
    let mut joints = Vec::with_capacity(vertex_count * count);
    let mut weights = Vec::with_capacity(vertex_count * count);
    for v in 0..vertex_count {
        for (j, w) in &sets {
            joints.push(j[v].map(|j| j as u16));
            weights.push(w[v]);
        }
    }
    Ok(Some(Influences {
        sets: count,
        joints,
        weights,
    }))
}
