//! What the report says about an FBX file beyond what it says of any rig: the file's own unit
//! and axes, bind poses missing or disagreeing, clusters on models that are not bones, scale
//! that glTF's node transforms cannot carry, influences dropped, textures not found.

use super::Nodes;
use crate::rig::{ImportFacts, Node};
use glam::{Mat4, Vec3};

/// What an FBX finding is about; the report gives each its own code and severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FbxFindingKind {
    /// The file's unit and axis system, before the conversion to metres and Y up.
    SourceSystem,
    /// Bones of a skin with no bind pose in the file: only the clusters' matrices tell where
    /// the skeleton was bound.
    BindPoseMissing,
    /// Two clusters on one bone, or a cluster and the file's bind pose, place it differently.
    BindPoseInconsistent,
    /// A cluster's link is a model of another type (a `Null`, a mesh) rather than a bone.
    ClusterNotBone,
    /// A node takes a non-uniform scale from above (sheared, or under an inherit type glTF has
    /// no equivalent for): engines and glTF disagree on what it looks like.
    InheritedNonUniformScale,
    /// Vertices with more than 8 influences, cut to the 8 heaviest.
    InfluencesOver8,
    /// A texture neither embedded nor found beside the file.
    TextureNotFound,
}

/// One FBX-specific finding: its kind, the sentence the report prints and the rig nodes it
/// concerns.
#[derive(Debug, Clone, PartialEq)]
pub struct FbxFinding {
    pub kind: FbxFindingKind,
    pub message: String,
    pub nodes: Vec<usize>,
}

impl FbxFinding {
    pub(super) fn new(kind: FbxFindingKind, message: String) -> FbxFinding {
        FbxFinding {
            kind,
            message,
            nodes: Vec::new(),
        }
    }
}

/// Two bind matrices further apart than this (in metres for the translation, in matrix units
/// for the rotation and scale columns) place a bone differently.
const BIND_TOLERANCE: f32 = 1e-3;

/// A world scale whose largest and smallest axes differ by more than this is non-uniform, and
/// axes whose cosine exceeds it are sheared.
const SCALE_TOLERANCE: f32 = 1e-3;

/// Names listed in a finding before "and N more".
const LISTED: usize = 5;

/// The report's line on the file's own system, before conversion.
pub(super) fn source_system(scene: &ufbx::Scene) -> FbxFinding {
    let settings = &scene.settings;
    let meta = &scene.metadata;
    let creator: &str = &meta.creator;
    let axes = &settings.axes;
    FbxFinding::new(
        FbxFindingKind::SourceSystem,
        format!(
            "FBX {} {}.{} written by '{creator}': right {:?}, up {:?}, front {:?}, unit {} m, {} fps; converted to Y up, metres, right-handed",
            if meta.ascii { "ASCII" } else { "binary" },
            meta.version / 1000,
            meta.version % 1000 / 100,
            axes.right,
            axes.up,
            axes.front,
            settings.unit_meters,
            settings.frames_per_second,
        ),
    )
}

/// Bind poses and cluster links: bones of a skin missing from every bind pose, bones placed
/// differently by two clusters or by a cluster and the bind pose, clusters on non-bones.
pub(super) fn skin_bindings(scene: &ufbx::Scene, nodes: &Nodes, facts: &mut ImportFacts) {
    let mut missing = Vec::new();
    let mut not_bones = Vec::new();
    let mut inconsistent = Vec::new();
    // The largest distance between two bind positions of one bone, and that bone.
    let mut worst = (0.0f32, 0usize);
    // The first bind matrix seen per ufbx node, from the clusters and from the bind poses
    // (looked up by index: a file may hold many of both).
    let mut bound: Vec<Option<Mat4>> = vec![None; scene.nodes.len()];
    let mut posed_at: Vec<Option<Mat4>> = vec![None; scene.nodes.len()];
    for pose in scene.poses.iter().filter(|p| p.is_bind_pose) {
        for bone_pose in &pose.bone_poses {
            if let Some(slot @ None) = posed_at.get_mut(bone_pose.bone_node.element.typed_id as usize) {
                *slot = Some(super::mat4(&bone_pose.bone_to_world));
            }
        }
    }
    for skin in &scene.skin_deformers {
        for cluster in &skin.clusters {
            let Some(bone) = cluster.bone_node.as_ref() else {
                continue;
            };
            let Some(joint) = nodes.of(bone) else {
                continue;
            };
            if bone.bone.is_none() {
                not_bones.push(joint);
            }
            let bind = super::mat4(&cluster.bind_to_world);
            // A scale helper ufbx added stands for the file's node above it, which the bind
            // pose names.
            let posed = match bone.parent.as_ref() {
                Some(parent) if bone.is_scale_helper => parent,
                _ => bone,
            };
            let pose_bind = posed_at.get(posed.element.typed_id as usize).copied().flatten();
            let first = match bound.get_mut(bone.element.typed_id as usize) {
                Some(Some(first)) => Some(*first),
                Some(slot @ None) => {
                    *slot = Some(bind);
                    None
                }
                None => None,
            };
            if pose_bind.is_none() {
                missing.push(joint);
            }
            for other in [pose_bind, first].into_iter().flatten() {
                if !close(&other, &bind) {
                    inconsistent.push(joint);
                    let distance = other.w_axis.truncate().distance(bind.w_axis.truncate());
                    if distance >= worst.0 {
                        worst = (distance, joint);
                    }
                }
            }
        }
    }
    let rig_nodes = &nodes.nodes;
    let worst_bone = rig_nodes.get(worst.1).map_or("", |n| n.name.as_str());
    let inconsistent_what = format!(
        "bones are bound at different places by two clusters, or by a cluster and the file's bind pose (up to {:.4} m apart, '{worst_bone}'); each mesh follows its own cluster",
        worst.0
    );
    for (kind, found, what) in [
        (
            FbxFindingKind::BindPoseMissing,
            missing,
            "bones have no bind pose in the file; where they were bound comes from their clusters alone",
        ),
        (FbxFindingKind::BindPoseInconsistent, inconsistent, &inconsistent_what),
        (
            FbxFindingKind::ClusterNotBone,
            not_bones,
            "skin clusters are linked to models that are not bones (Null or other); they are used as joints",
        ),
    ] {
        facts.fbx_findings.extend(listed(kind, found, rig_nodes, what));
    }
}

/// Nodes whose world transform is sheared by a non-uniform scale above them, that inherit a
/// non-uniform scale in a way other than glTF's (the file's inherit type), or whose
/// non-uniform scale their children do not inherit (ufbx added a helper node to carry it, so
/// the rig shows what the file means; an engine importing the FBX may not).
pub(super) fn inherited_scale(nodes: &Nodes, facts: &mut ImportFacts) {
    let rig_nodes = &nodes.nodes;
    let flagged = |list: &[usize]| {
        let mut flags = vec![false; rig_nodes.len()];
        list.iter().for_each(|&n| flags[n] = true);
        flags
    };
    let (inherit_differs, scale_helpers) = (flagged(&nodes.inherit_differs), flagged(&nodes.scale_helpers));
    let mut worlds: Vec<Mat4> = Vec::with_capacity(rig_nodes.len());
    let mut found = Vec::new();
    for (index, node) in rig_nodes.iter().enumerate() {
        let parent = node.parent.and_then(|p| worlds.get(p)).copied();
        let world = parent.unwrap_or(Mat4::IDENTITY) * node.rest.to_mat4();
        worlds.push(world);
        let parent_non_uniform = parent.is_some_and(|p| non_uniform(&p));
        if sheared(&world) || (parent_non_uniform && inherit_differs[index]) {
            found.push(index);
        } else if scale_helpers[index]
            && let Some(parent) = node.parent
        {
            found.push(parent);
        }
    }
    facts.fbx_findings.extend(listed(
        FbxFindingKind::InheritedNonUniformScale,
        found,
        rig_nodes,
        "nodes have a non-uniform scale that their children do not inherit the way glTF does (a sheared world transform, another inherit type, or Maya's segment scale compensation, carried here by a helper node); engines importing the FBX may show them differently",
    ));
}

fn close(a: &Mat4, b: &Mat4) -> bool {
    a.abs_diff_eq(*b, BIND_TOLERANCE)
}

fn axes(m: &Mat4) -> [Vec3; 3] {
    [m.x_axis.truncate(), m.y_axis.truncate(), m.z_axis.truncate()]
}

fn non_uniform(m: &Mat4) -> bool {
    let lengths = axes(m).map(Vec3::length);
    let (low, high) = (
        lengths.iter().copied().fold(f32::INFINITY, f32::min),
        lengths.iter().copied().fold(0.0, f32::max),
    );
    high > 0.0 && (high - low) / high > SCALE_TOLERANCE
}

fn sheared(m: &Mat4) -> bool {
    let [x, y, z] = axes(m).map(Vec3::normalize_or_zero);
    [x.dot(y), y.dot(z), z.dot(x)].iter().any(|c| c.abs() > SCALE_TOLERANCE)
}

/// One finding of `kind` naming the distinct `found` nodes (the first [`LISTED`]), or none.
fn listed(kind: FbxFindingKind, mut found: Vec<usize>, rig_nodes: &[Node], what: &str) -> Option<FbxFinding> {
    found.sort_unstable();
    found.dedup();
    if found.is_empty() {
        return None;
    }
    let names: Vec<String> = found
        .iter()
        .take(LISTED)
        .map(|&n| format!("'{}'", rig_nodes[n].name))
        .collect();
    let more = found.len().saturating_sub(LISTED);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(FbxFinding {
        kind,
        message: format!("{} {what}: {}{tail}", found.len(), names.join(", ")),
        nodes: found,
    })
}
