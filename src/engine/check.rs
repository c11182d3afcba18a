//! How far each engine draws a rig from the file's own drawing: every skinned vertex skinned
//! both ways at the rest pose and at every clip sampled at 30 Hz, the distance measured as a
//! fraction of the rig's height. The pose is the same for both (a profile changes only how
//! vertices are bound), so each pose's palettes are built once.

use super::{Cap, Engine, EngineRefusal, NodeTransform, PastCap};
use crate::anim::{PoseBuffers, rig_height};
use crate::rig::Rig;
use crate::skin::fast::skin_lbs_positions_exact;
use glam::Vec3;

/// Samples per second of each clip.
pub const SAMPLE_RATE: f32 = 30.0;

/// Distances below this fraction of the height are float noise, not a change.
const MOVED: f64 = 1e-6;

/// The vertex an engine draws farthest from the file's drawing, and when.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorstVertex {
    /// The distance as a fraction of the rig's height.
    pub distance: f64,
    pub mesh: String,
    pub primitive: usize,
    pub vertex: usize,
    /// The clip (`None`: the rest pose) and the time in it.
    pub clip: Option<String>,
    pub time: f32,
    /// The vertex's joints as the file binds it, by name, with their weights.
    pub joints: Vec<(String, f32)>,
}

/// What one engine makes of a rig.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EngineCheck {
    pub engine: &'static str,
    pub label: &'static str,
    /// Why the engine does not load the rig, if it does not.
    pub refused: Option<String>,
    /// Vertices whose influences the engine changes.
    pub rows_changed: usize,
    /// Vertices drawn more than 1e-6 of the height away at some pose.
    pub vertices_moved: usize,
    pub worst: Option<WorstVertex>,
    /// What else the engine does differently: caps passed, the node transform.
    pub findings: Vec<String>,
}

impl EngineCheck {
    /// The worst distance as a fraction of the height (0 when nothing moved).
    pub fn worst_distance(&self) -> f64 {
        self.worst.as_ref().map_or(0.0, |w| w.distance)
    }
}

/// Every pose checked: the rest pose, then each clip at [`SAMPLE_RATE`], its end included.
fn poses(rig: &Rig) -> Vec<(Option<usize>, f32)> {
    let mut poses = vec![(None, 0.0)];
    for (c, clip) in rig.clips.iter().enumerate() {
        let steps = (clip.duration * SAMPLE_RATE).ceil().max(0.0) as usize;
        poses.extend((0..=steps).map(|k| (Some(c), (k as f32 / SAMPLE_RATE).min(clip.duration))));
    }
    poses
}

/// The height distances are measured against: the vertical extent of the skinned mesh at rest
/// as the file draws it (its bounds' size for a flat mesh), else of the skeleton.
pub fn drawn_height(rig: &Rig) -> f64 {
    let pose = PoseBuffers::new(rig);
    let mut bounds = crate::anim::Bounds::EMPTY;
    let mut positions = Vec::new();
    for (i, instance) in rig.instances.iter().enumerate() {
        for primitive in (instance.skin.is_some().then_some(&rig.meshes[instance.mesh].primitives))
            .into_iter()
            .flatten()
        {
            let Some(influences) = &primitive.influences else {
                continue;
            };
            positions.resize(primitive.vertex_count(), Vec3::ZERO);
            skin_lbs_positions_exact(&pose.palettes[i], influences, &primitive.positions, &mut positions);
            positions.iter().for_each(|&p| bounds.include(p));
        }
    }
    let (vertical, size) = (bounds.max.y - bounds.min.y, bounds.size());
    let height = if vertical > 1e-6 {
        vertical
    } else if size > 1e-6 {
        size
    } else {
        rig_height(rig)
    };
    f64::from(height)
}

/// Checks `rig` against each of `engines`.
pub fn check_engines(rig: &Rig, engines: &[Engine]) -> Vec<EngineCheck> {
    let height = drawn_height(rig);
    let drawn: Vec<Result<Rig, EngineRefusal>> = engines.iter().map(|e| e.draw(rig)).collect();
    let mut checks: Vec<EngineCheck> = (engines.iter().zip(&drawn))
        .map(|(&engine, drawn)| EngineCheck {
            engine: engine.name(),
            label: engine.label(),
            refused: drawn.as_ref().err().map(ToString::to_string),
            rows_changed: drawn.as_ref().map_or(0, |d| rows_changed(rig, d)),
            vertices_moved: 0,
            worst: None,
            findings: findings(engine, rig),
        })
        .collect();
    let mut moved: Vec<Vec<Vec<Vec<bool>>>> = drawn.iter().map(|_| moved_flags(rig)).collect();
    let mut pose = PoseBuffers::new(rig);
    let (mut file_positions, mut engine_positions) = (Vec::new(), Vec::new());
    for (clip, time) in poses(rig) {
        pose.evaluate(rig, clip, time);
        for (i, instance) in rig.instances.iter().enumerate() {
            if instance.skin.is_none() {
                continue;
            }
            let palette = &pose.palettes[i];
            for (p, primitive) in rig.meshes[instance.mesh].primitives.iter().enumerate() {
                let Some(influences) = &primitive.influences else {
                    continue;
                };
                let n = primitive.vertex_count();
                file_positions.resize(n, Vec3::ZERO);
                engine_positions.resize(n, Vec3::ZERO);
                skin_lbs_positions_exact(palette, influences, &primitive.positions, &mut file_positions);
                for ((check, drawn), moved) in checks.iter_mut().zip(&drawn).zip(&mut moved) {
                    let Ok(drawn) = drawn else { continue };
                    let Some(engine_influences) = &drawn.meshes[instance.mesh].primitives[p].influences else {
                        continue;
                    };
                    skin_lbs_positions_exact(palette, engine_influences, &primitive.positions, &mut engine_positions);
                    for (v, (a, b)) in file_positions.iter().zip(&engine_positions).enumerate() {
                        let distance = f64::from((*a - *b).length()) / height;
                        if distance > MOVED {
                            moved[instance.mesh][p][v] = true;
                        }
                        if distance > check.worst_distance() || (distance.is_nan() && check.worst.is_none()) {
                            check.worst = Some(WorstVertex {
                                distance: if distance.is_nan() { f64::INFINITY } else { distance },
                                mesh: rig.meshes[instance.mesh].name.clone(),
                                primitive: p,
                                vertex: v,
                                clip: clip.map(|c| rig.clips[c].name.clone()),
                                time,
                                joints: named_joints(rig, instance.skin, influences, v),
                            });
                        }
                    }
                }
            }
        }
    }
    for (check, moved) in checks.iter_mut().zip(&moved) {
        check.vertices_moved = moved.iter().flatten().flatten().filter(|&&m| m).count();
    }
    checks
}

/// Per mesh, per primitive, per vertex: false (a flag set once the vertex moves).
fn moved_flags(rig: &Rig) -> Vec<Vec<Vec<bool>>> {
    (rig.meshes.iter())
        .map(|m| m.primitives.iter().map(|p| vec![false; p.vertex_count()]).collect())
        .collect()
}

/// Vertices whose influences differ between `rig` and the engine's `drawn`.
fn rows_changed(rig: &Rig, drawn: &Rig) -> usize {
    (rig.meshes
        .iter()
        .flat_map(|m| &m.primitives)
        .zip(drawn.meshes.iter().flat_map(|m| &m.primitives)))
    .filter_map(|(a, b)| Some((a.influences.as_ref()?, b.influences.as_ref()?, a.vertex_count())))
    .map(|(a, b, n)| (0..n).filter(|&v| !a.of_vertex(v).eq(b.of_vertex(v))).count())
    .sum()
}

/// Vertex `v`'s non-zero influences by joint name.
fn named_joints(rig: &Rig, skin: Option<usize>, influences: &crate::rig::Influences, v: usize) -> Vec<(String, f32)> {
    let skin = skin.map(|s| &rig.skins[s]);
    (influences.of_vertex(v))
        .filter(|&(_, w)| w != 0.0)
        .map(|(joint, weight)| {
            let name = (skin.and_then(|s| s.joints.get(usize::from(joint))))
                .and_then(|&node| rig.nodes.get(node))
                .map_or_else(|| format!("joint {joint}"), |n| n.name.clone());
            (name, weight)
        })
        .collect()
}

/// What the engine does to `rig` besides moving vertices.
fn findings(engine: Engine, rig: &Rig) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(Cap { limit, past }) = engine.joint_cap() {
        for skin in rig.skins.iter().filter(|s| s.joints.len() > limit) {
            let what = match past {
                PastCap::Refuses => "refused",
                PastCap::Warns => "loads with a warning",
                PastCap::Truncates => "joints past it left out",
                PastCap::Splits => "split into sections",
                PastCap::ReadsOutOfRange => "joints past it read out of range",
            };
            found.push(format!(
                "skin '{}': {} joints, past the cap of {limit} ({what})",
                skin.name,
                skin.joints.len()
            ));
        }
    }
    for (mesh, primitives) in rig.morphs.targets.iter().enumerate() {
        for targets in primitives {
            // Positions always; normals and tangents where the targets move them.
            let attributes = targets.first().map_or(1, |t| {
                1 + usize::from(t.normal_offsets.iter().any(|n| *n != Vec3::ZERO))
                    + usize::from(!t.tangent_offsets.is_empty())
            });
            if let Some(Cap { limit, past }) = engine.morph_cap(attributes)
                && targets.len() > limit
            {
                found.push(format!(
                    "mesh '{}': {} morph targets, past the cap of {limit} ({})",
                    rig.meshes.get(mesh).map_or("?", |m| m.name.as_str()),
                    targets.len(),
                    if past == PastCap::Truncates {
                        "the rest left out"
                    } else {
                        "refused"
                    }
                ));
            }
        }
    }
    if engine.node_transform() == NodeTransform::LightsWithIt {
        let rest = PoseBuffers::new(rig);
        let moved = (rig.instances.iter())
            .filter(|i| i.skin.is_some())
            .filter(|i| !rest.worlds[i.node].abs_diff_eq(glam::Mat4::IDENTITY, 1e-6))
            .count();
        if moved > 0 {
            found.push(format!(
                "{moved} skinned mesh node(s) with a transform of their own: positions ignore it, \
                 but normals and the winding use it"
            ));
        }
    }
    found
}
