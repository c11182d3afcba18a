//! FBX meshes → rig meshes (one primitive per material part), skin deformers → skins, blend
//! shape channels → morph targets.

use super::blend_shapes::{Channel, Shape, blend_channels, spread_weight};
use super::{FbxFinding, FbxFindingKind, Nodes, mat4, vec3};
use crate::rig::SkinningMethod;
use crate::rig::import::accessor::Budget;
use crate::rig::{
    FileSkinning, ImportFacts, Influences, Mesh, MeshInstance, MorphTarget, Morphs, Primitive, RigError, Skin,
};
use glam::{Vec2, Vec3};
use std::collections::HashMap;

/// Influences kept per vertex: two sets of four, the most a primitive carries.
const MAX_INFLUENCES: usize = 8;

/// Bytes charged per built vertex (position, normal, uv, two influence sets).
const VERTEX_BYTES: u64 = 12 + 12 + 8 + 2 * (8 + 16);

/// Bytes charged per built vertex and morph target (position and normal offsets).
const MORPH_VERTEX_BYTES: u64 = 12 + 12;

pub(super) struct Geometry {
    pub meshes: Vec<Mesh>,
    pub skins: Vec<Skin>,
    pub instances: Vec<MeshInstance>,
    pub morphs: Morphs,
    /// The morph targets each blend channel became.
    pub channel_targets: Vec<ChannelTargets>,
    /// The skin deformers' methods and blend weights.
    pub skinning: FileSkinning,
}

/// The morph targets of one blend channel: one per shape, in order of their full weights.
pub(super) struct ChannelTargets {
    /// The channel's element id.
    pub channel: u32,
    pub mesh: usize,
    /// The first of its targets in the mesh's.
    pub first: usize,
    /// Each shape's full weight (see [`super::blend_shapes`]).
    pub full_weights: Vec<f32>,
}

fn data(message: String) -> RigError {
    RigError::Data(message)
}

pub(super) fn read(
    scene: &ufbx::Scene,
    nodes: &Nodes,
    budget: &mut Budget,
    facts: &mut ImportFacts,
    warnings: &mut Vec<String>,
) -> Result<Geometry, RigError> {
    // A skin deformer without clusters moves nothing: its meshes are drawn unskinned.
    let mut skins = Vec::new();
    let mut skin_of = vec![None; scene.skin_deformers.len()];
    for skin in &scene.skin_deformers {
        let slot = skin_of
            .get_mut(skin.element.typed_id as usize)
            .ok_or_else(|| data(format!("FBX skin '{}' is out of range", &*skin.element.name)))?;
        if skin.clusters.is_empty() {
            facts.notes.push(format!(
                "FBX skin '{}' has no clusters; its meshes are drawn unskinned",
                &*skin.element.name
            ));
            continue;
        }
        *slot = Some(skins.len());
        skins.push(read_skin(skin, nodes)?);
    }
    let mut meshes = Vec::with_capacity(scene.meshes.len());
    let mut morphs = Morphs::default();
    let mut channel_targets = Vec::new();
    let mut dqs_blend = Vec::with_capacity(scene.meshes.len());
    let mut methods = Vec::new();
    for mesh in &scene.meshes {
        let read = read_mesh(mesh, scene.materials.len(), budget, facts, warnings)?;
        dqs_blend.push(read.dqs_blend);
        methods.extend(read.method);
        let mesh_index = meshes.len();
        channel_targets.extend(
            read.channels
                .into_iter()
                .map(|(channel, first, full_weights)| ChannelTargets {
                    channel,
                    mesh: mesh_index,
                    first,
                    full_weights,
                }),
        );
        morphs.targets.push(read.targets);
        morphs.default_weights.push(read.default_weights);
        morphs.target_names.push(read.target_names);
        meshes.push(read.mesh);
        facts.primitives.push(Vec::new());
    }
    let mut instances = Vec::new();
    for node in &scene.nodes {
        let (Some(mesh), Some(rig_node)) = (node.mesh.as_ref(), nodes.of(node)) else {
            continue;
        };
        let mesh_index = mesh.element.typed_id as usize;
        if mesh_index >= meshes.len() {
            return Err(data(format!(
                "FBX node '{}' names mesh {mesh_index}, which does not exist",
                &*node.element.name
            )));
        }
        let skin = match mesh.skin_deformers.first() {
            Some(skin) => *skin_of.get(skin.element.typed_id as usize).ok_or_else(|| {
                data(format!(
                    "FBX mesh '{}' names a skin that does not exist",
                    &*mesh.element.name
                ))
            })?,
            None => None,
        };
        instances.push(MeshInstance {
            node: rig_node,
            mesh: mesh_index,
            skin,
        });
    }
    instances.sort_by_key(|i| i.node);
    Ok(Geometry {
        meshes,
        skins,
        instances,
        morphs,
        channel_targets,
        skinning: file_skinning(&methods, dqs_blend),
    })
}

/// A skin deformer's clusters as joints: each cluster's bone, and its geometry-to-bone matrix
/// as the inverse bind.
fn read_skin(skin: &ufbx::SkinDeformer, nodes: &Nodes) -> Result<Skin, RigError> {
    let name = skin.element.name.to_string();
    if skin.clusters.len() > usize::from(u16::MAX) {
        return Err(data(format!(
            "FBX skin '{name}' has {} clusters, more than a joint index holds",
            skin.clusters.len()
        )));
    }
    let mut joints = Vec::with_capacity(skin.clusters.len());
    let mut inverse_binds = Vec::with_capacity(skin.clusters.len());
    for cluster in &skin.clusters {
        let Some(joint) = cluster.bone_node.as_ref().and_then(|b| nodes.of(b)) else {
            return Err(data(format!(
                "FBX skin '{name}': cluster '{}' is linked to no node of the scene",
                &*cluster.element.name
            )));
        };
        let inverse_bind = mat4(&cluster.geometry_to_bone);
        if !inverse_bind.is_finite() {
            return Err(data(format!(
                "FBX skin '{name}': cluster '{}' has a non-finite bind matrix",
                &*cluster.element.name
            )));
        }
        joints.push(joint);
        inverse_binds.push(inverse_bind);
    }
    Ok(Skin {
        name,
        joints,
        inverse_binds,
    })
}

/// A blend channel as read: (its element id, its first target, its shapes' full weights).
type ReadChannel = (u32, usize, Vec<f32>);

struct ReadMesh {
    mesh: Mesh,
    targets: Vec<Vec<MorphTarget>>,
    default_weights: Vec<f32>,
    target_names: Vec<String>,
    channels: Vec<ReadChannel>,
    /// Per primitive, each vertex's blend toward dual quaternion skinning (empty: linear).
    dqs_blend: Vec<Vec<f32>>,
    /// The skin deformer's method (`None` for an unskinned mesh).
    method: Option<ufbx::SkinningMethod>,
}

/// The rig's skinning from its skinned meshes' deformer methods: all linear (or rigid, which
/// ufbx too skins linearly) asks for nothing; all dual quaternion for DQS; any mix, or any weight
/// blended deformer, for the blended method, whose per-vertex blend (1 on a dual quaternion
/// deformer's vertices, 0 on a linear one's) then skins each mesh as its deformer says.
fn file_skinning(methods: &[ufbx::SkinningMethod], dqs_blend: Vec<Vec<Vec<f32>>>) -> FileSkinning {
    use ufbx::SkinningMethod as Fbx;
    let dual_quaternion = |m: &Fbx| matches!(m, Fbx::DualQuaternion);
    let linear = |m: &Fbx| matches!(m, Fbx::Linear | Fbx::Rigid);
    let method = if methods.iter().all(linear) {
        None
    } else if methods.iter().all(dual_quaternion) {
        Some(SkinningMethod::Dqs)
    } else {
        Some(SkinningMethod::Blended)
    };
    FileSkinning {
        method,
        dqs_blend: if method == Some(SkinningMethod::Blended) {
            dqs_blend
        } else {
            Vec::new()
        },
    }
}

/// Each control point's blend toward dual quaternion skinning as ufbx reads the deformer: 1 for
/// a dual quaternion deformer, its `BlendWeights` for a weight blended one (0 for the points
/// they leave out), 0 otherwise; clamped to [0, 1], a non-finite value read as 0. `None` when
/// every point is 0.
fn point_dqs_blend(skin: &ufbx::SkinDeformer, points: usize) -> Option<Vec<f32>> {
    let blend: Vec<f32> = (0..points)
        .map(|point| {
            let b = skin.vertices.get(point).map_or(0.0, |v| v.dq_weight as f32);
            if b.is_finite() { b.clamp(0.0, 1.0) } else { 0.0 }
        })
        .collect();
    blend.iter().any(|&b| b > 0.0).then_some(blend)
}

/// One control point's (cluster, weight) pairs kept, heaviest first, summing to 1.
type PointInfluence = ([u16; MAX_INFLUENCES], [f32; MAX_INFLUENCES]);
type PointInfluences = Vec<PointInfluence>;

fn read_mesh(
    mesh: &ufbx::Mesh,
    material_count: usize,
    budget: &mut Budget,
    facts: &mut ImportFacts,
    warnings: &mut Vec<String>,
) -> Result<ReadMesh, RigError> {
    let name = mesh.element.name.to_string();
    let points = mesh.vertices.len();
    if mesh.vertex_indices.len() != mesh.num_indices || mesh.vertex_position.indices.len() != mesh.num_indices {
        return Err(data(format!(
            "FBX mesh '{name}': its index arrays disagree on their length"
        )));
    }
    let skin = mesh.skin_deformers.first().filter(|skin| !skin.clusters.is_empty());
    let influences = match skin {
        Some(skin) => {
            budget.charge(
                (points as u64).saturating_mul(size_of::<PointInfluence>() as u64),
                &format!("skin weights of FBX mesh '{name}'"),
            )?;
            Some(point_influences(&name, skin, points, facts)?)
        }
        None => None,
    };
    if mesh.skin_deformers.len() > 1 {
        warnings.push(format!(
            "FBX mesh '{name}' has {} skin deformers; only the first is used",
            mesh.skin_deformers.len()
        ));
    }
    let channels = blend_channels(mesh, points, budget)?;
    let shapes: Vec<&Shape> = channels.iter().flat_map(|c| &c.shapes).collect();
    let point_blend = skin.and_then(|skin| point_dqs_blend(skin, points));
    let mut dqs_blend = Vec::new();
    let sets = match skin {
        Some(skin) if skin.max_weights_per_vertex > 4 => 2,
        _ => 1,
    };

    let mut primitives = Vec::new();
    let mut targets = Vec::new();
    let triangle_corners = mesh.max_face_triangles.saturating_mul(3);
    budget.charge(
        (triangle_corners as u64).saturating_mul(4),
        &format!("triangulating FBX mesh '{name}'"),
    )?;
    let mut triangle = vec![0u32; triangle_corners];
    for part in &mesh.material_parts {
        let build = triangulate_part(mesh, part, &name, &mut triangle)?;
        if build.indices.is_empty() {
            continue;
        }
        let morph_bytes = (shapes.len() as u64).saturating_mul(MORPH_VERTEX_BYTES);
        budget.charge(
            (build.points.len() as u64)
                .saturating_mul(VERTEX_BYTES.saturating_add(morph_bytes))
                .saturating_add(build.indices.len() as u64 * 4),
            &format!("FBX mesh '{name}'"),
        )?;
        let influences = (influences.as_ref()).map(|per_point| primitive_influences(per_point, &build.points, sets));
        dqs_blend.push(point_blend.as_ref().map_or_else(Vec::new, |per_point| {
            build.points.iter().map(|&p| per_point[p as usize]).collect()
        }));
        let normals = if build.normals.iter().all(|n| n.is_finite() && *n != Vec3::ZERO) {
            build.normals
        } else {
            crate::rig::smooth_normals(&build.positions, &build.indices)
        };
        targets.push(morph_targets(&shapes, &build.points, &build.positions, &normals));
        primitives.push(Primitive {
            positions: build.positions,
            normals,
            uvs: build.uvs,
            uv_sets: Default::default(),
            tangents: Vec::new(),
            influences,
            indices: build.indices,
            material: mesh
                .materials
                .get(part.index as usize)
                .map(|m| m.element.typed_id as usize)
                .filter(|&m| m < material_count),
            colors: Vec::new(),
        });
    }
    let (default_weights, read_channels) = channel_weights(&channels, shapes.len());
    Ok(ReadMesh {
        mesh: Mesh { name, primitives },
        targets,
        default_weights,
        target_names: channels.iter().flat_map(|c| c.target_names()).collect(),
        channels: read_channels,
        dqs_blend,
        method: skin.map(|skin| skin.skinning_method),
    })
}

/// The corners of the triangles of one material's faces, each face checked to lie within
/// the mesh's indices; `triangle` is room for one face's triangles.
fn triangulate_part(
    mesh: &ufbx::Mesh,
    part: &ufbx::MeshPart,
    name: &str,
    triangle: &mut [u32],
) -> Result<PrimitiveBuilder, RigError> {
    let mut build = PrimitiveBuilder::default();
    for &face_index in part.face_indices.iter() {
        let face = *mesh
            .faces
            .get(face_index as usize)
            .ok_or_else(|| data(format!("FBX mesh '{name}': face {face_index} does not exist")))?;
        let end = u64::from(face.index_begin) + u64::from(face.num_indices);
        if end > mesh.num_indices as u64 {
            return Err(data(format!(
                "FBX mesh '{name}': face {face_index} runs past the mesh's indices"
            )));
        }
        if face.num_indices < 3 || triangle.len() < (face.num_indices as usize - 2) * 3 {
            continue;
        }
        let count = mesh.triangulate_face(triangle, face) as usize;
        for &corner in triangle.iter().take(count * 3) {
            if u64::from(corner) >= end || corner < face.index_begin {
                return Err(data(format!(
                    "FBX mesh '{name}': a triangle of face {face_index} leaves the face"
                )));
            }
            build.corner(mesh, corner as usize)?;
        }
    }
    Ok(build)
}

/// The joints and weights of a primitive's vertices, from those of the control points they
/// are made from, in `sets` sets of four.
fn primitive_influences(per_point: &PointInfluences, points: &[u32], sets: usize) -> Influences {
    let mut joints = Vec::with_capacity(points.len() * sets);
    let mut weights = Vec::with_capacity(points.len() * sets);
    for &point in points {
        let (j, w) = &per_point[point as usize];
        for set in 0..sets {
            joints.push([j[set * 4], j[set * 4 + 1], j[set * 4 + 2], j[set * 4 + 3]]);
            weights.push([w[set * 4], w[set * 4 + 1], w[set * 4 + 2], w[set * 4 + 3]]);
        }
    }
    Influences { sets, joints, weights }
}

/// The morph targets of a primitive's vertices, from the offsets of the control points they
/// are made from (no normal offsets).
fn morph_targets(
    shapes: &[&Shape],
    points: &[u32],
    bind_positions: &[Vec3],
    bind_normals: &[Vec3],
) -> Vec<MorphTarget> {
    shapes
        .iter()
        .map(|shape| {
            let offsets: Vec<Vec3> = points.iter().map(|&p| shape.offsets[p as usize]).collect();
            MorphTarget::sparse(&offsets, &[], bind_positions, bind_normals)
        })
        .collect()
}

/// The targets' weights when no clip drives them, and each blend channel's (element id, first
/// target, full weights).
fn channel_weights(channels: &[Channel], target_count: usize) -> (Vec<f32>, Vec<ReadChannel>) {
    let mut default_weights = vec![0.0; target_count];
    let mut read_channels = Vec::with_capacity(channels.len());
    let mut first = 0;
    for channel in channels {
        let count = channel.shapes.len();
        spread_weight(
            &channel.full_weights,
            channel.weight,
            &mut default_weights[first..first + count],
        );
        read_channels.push((channel.id, first, channel.full_weights.clone()));
        first += count;
    }
    (default_weights, read_channels)
}

/// The vertices of one primitive, one per distinct (control point, normal, uv) corner.
#[derive(Default)]
struct PrimitiveBuilder {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    uvs: Vec<Vec2>,
    /// The control point of each vertex (skin weights and blend shapes are per control point).
    points: Vec<u32>,
    indices: Vec<u32>,
    seen: HashMap<(u32, u32, u32), u32>,
}

impl PrimitiveBuilder {
    fn corner(&mut self, mesh: &ufbx::Mesh, corner: usize) -> Result<(), RigError> {
        let name = &*mesh.element.name;
        let point = mesh.vertex_indices[corner];
        let position = *mesh
            .vertices
            .get(point as usize)
            .ok_or_else(|| data(format!("FBX mesh '{name}': control point {point} does not exist")))?;
        let normal_index = attribute_index(&mesh.vertex_normal.indices, mesh.vertex_normal.values.len(), corner);
        let uv_index = attribute_index(&mesh.vertex_uv.indices, mesh.vertex_uv.values.len(), corner);
        let key = (point, normal_index.unwrap_or(u32::MAX), uv_index.unwrap_or(u32::MAX));
        let next = self.positions.len() as u32;
        let index = *self.seen.entry(key).or_insert(next);
        if index == next {
            self.positions.push(vec3(position));
            self.normals
                .push(normal_index.map_or(Vec3::ZERO, |i| vec3(mesh.vertex_normal.values[i as usize])));
            // FBX puts v = 0 at the bottom of the image, glTF at the top.
            self.uvs.push(uv_index.map_or(Vec2::ZERO, |i| {
                let uv = mesh.vertex_uv.values[i as usize];
                Vec2::new(uv.x as f32, 1.0 - uv.y as f32)
            }));
            self.points.push(point);
        }
        self.indices.push(index);
        Ok(())
    }
}

/// The value index of `corner` in an attribute, `None` when the attribute is absent or the
/// index is out of its values.
fn attribute_index(indices: &[u32], values: usize, corner: usize) -> Option<u32> {
    indices.get(corner).copied().filter(|&i| (i as usize) < values)
}

/// Each control point's influences: its heaviest [`MAX_INFLUENCES`], renormalized; the points
/// that had more are noted.
fn point_influences(
    mesh: &str,
    skin: &ufbx::SkinDeformer,
    points: usize,
    facts: &mut ImportFacts,
) -> Result<PointInfluences, RigError> {
    let clusters = skin.clusters.len();
    let mut out = Vec::with_capacity(points);
    let mut over = 0usize;
    let mut pairs: Vec<(u16, f32)> = Vec::new();
    for point in 0..points {
        let mut joints = [0u16; MAX_INFLUENCES];
        let mut weights = [0f32; MAX_INFLUENCES];
        if let Some(vertex) = skin.vertices.get(point) {
            let begin = vertex.weight_begin as usize;
            let range = skin
                .weights
                .get(begin..begin.saturating_add(vertex.num_weights as usize))
                .ok_or_else(|| {
                    data(format!(
                        "FBX mesh '{mesh}': skin weights of control point {point} are out of range"
                    ))
                })?;
            pairs.clear();
            for w in range {
                if w.cluster_index as usize >= clusters {
                    return Err(data(format!(
                        "FBX mesh '{mesh}': control point {point} names cluster {}, of {clusters}",
                        w.cluster_index
                    )));
                }
                let weight = w.weight as f32;
                if weight.is_finite() && weight > 0.0 {
                    pairs.push((w.cluster_index as u16, weight));
                }
            }
            pairs.sort_by(|a, b| b.1.total_cmp(&a.1));
            if pairs.len() > MAX_INFLUENCES {
                over += 1;
            }
            let kept = &pairs[..pairs.len().min(MAX_INFLUENCES)];
            let sum: f32 = kept.iter().map(|p| p.1).sum();
            for (slot, &(joint, weight)) in kept.iter().enumerate() {
                joints[slot] = joint;
                weights[slot] = if sum > 0.0 { weight / sum } else { 0.0 };
            }
        }
        out.push((joints, weights));
    }
    if over > 0 {
        facts.fbx_findings.push(FbxFinding::new(
            FbxFindingKind::InfluencesOver8,
            format!(
                "FBX mesh '{mesh}': {over} control points have more than {MAX_INFLUENCES} influences; the {MAX_INFLUENCES} heaviest were kept and renormalized"
            ),
        ));
    }
    Ok(out)
}
