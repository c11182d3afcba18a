//! How far each engine draws a rig from the file's own drawing: every skinned vertex skinned
//! both ways at the rest pose, at every clip sampled at 30 Hz and at the audit's sweep poses at
//! their largest angles (see [`crate::audit::turns`]), the distance measured as a fraction of
//! the rig's height. The pose is the same for both (a profile changes only how
//! vertices are bound), so each pose's palettes are built once.

use super::findings::{PoseShading, findings};
use super::{Engine, EngineRefusal};
use crate::anim::{JointOverride, PoseBuffers, PoseInputs, evaluate_pose, rig_height};
use crate::audit::turns::{JointTurn, extreme_turns};
use crate::rig::Rig;
use crate::skin::fast::skin_lbs_positions_exact;
use crate::skin::{SkinnedPose, SkinningMethod, blend_matrix};
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
    /// The mesh instance it belongs to.
    #[serde(skip)]
    pub instance: usize,
    pub primitive: usize,
    pub vertex: usize,
    /// The clip (`None`: the rest pose) and the time in it.
    pub clip: Option<String>,
    pub time: f32,
    /// The joint turned on the rest pose, when the vertex is farthest at one of the audit's
    /// sweep poses (see [`JointTurn::describe`]).
    pub turn: Option<JointTurn>,
    /// The vertex's joints as the file binds it, by name, with their weights.
    pub joints: Vec<(String, f32)>,
}

impl WorstVertex {
    /// The pose the vertex is farthest at, as a person reads it: "'Run' at 0.40 s", "the rest
    /// pose", "the rest pose with LeftArm twisted +90°".
    pub fn pose_text(&self) -> String {
        match (&self.turn, &self.clip) {
            (Some(turn), _) => format!("the rest pose with {}", turn.describe()),
            (None, Some(clip)) => format!("'{clip}' at {:.2} s", self.time),
            (None, None) => "the rest pose".to_owned(),
        }
    }
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

/// One pose both drawings are skinned at.
#[derive(Debug, Clone, PartialEq)]
enum CheckPose {
    /// A clip (`None`: the rest pose) at a time in it.
    Clip(Option<usize>, f32),
    /// One joint of the rest pose turned alone.
    Turn(JointTurn),
}

impl CheckPose {
    /// Evaluates the pose of `rig` into `pose`; `overrides` is scratch of identities, left so.
    fn evaluate(&self, rig: &Rig, pose: &mut PoseBuffers, overrides: &mut Vec<JointOverride>) {
        match self {
            &CheckPose::Clip(clip, time) => {
                pose.evaluate(rig, clip, time);
            }
            CheckPose::Turn(turn) => {
                overrides.resize(rig.nodes.len(), JointOverride::IDENTITY);
                let Some(slot) = overrides.get_mut(turn.node) else {
                    pose.evaluate(rig, None, 0.0);
                    return;
                };
                *slot = turn.joint_override();
                let inputs = PoseInputs {
                    overrides,
                    ..PoseInputs::clip_at(None, 0.0)
                };
                evaluate_pose(rig, &inputs, pose);
                overrides[turn.node] = JointOverride::IDENTITY;
            }
        }
    }
}

/// The clip poses checked: the rest pose, then each clip at [`SAMPLE_RATE`], its end included.
fn clip_poses(rig: &Rig) -> Vec<(Option<usize>, f32)> {
    let mut poses = vec![(None, 0.0)];
    for (c, clip) in rig.clips.iter().enumerate() {
        let steps = (clip.duration * SAMPLE_RATE).ceil().max(0.0) as usize;
        poses.extend((0..=steps).map(|k| (Some(c), (k as f32 / SAMPLE_RATE).min(clip.duration))));
    }
    poses
}

/// Every pose checked: the clip poses, then the audit's sweep at its largest angles.
fn poses(rig: &Rig) -> Vec<CheckPose> {
    let clips = clip_poses(rig)
        .into_iter()
        .map(|(clip, time)| CheckPose::Clip(clip, time));
    let turns = extreme_turns(rig, &crate::audit::AuditOptions::default());
    clips.chain(turns.into_iter().map(CheckPose::Turn)).collect()
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

/// Per skinned instance and primitive, the vertices whose influences an engine changes (the
/// only ones it can draw elsewhere).
type ChangedVertices = Vec<(usize, usize, Vec<usize>)>;

fn changed_vertices(rig: &Rig, drawn: &Rig) -> ChangedVertices {
    let mut changed = Vec::new();
    for (i, instance) in rig.instances.iter().enumerate().filter(|(_, i)| i.skin.is_some()) {
        let pairs = rig.meshes[instance.mesh]
            .primitives
            .iter()
            .zip(&drawn.meshes[instance.mesh].primitives);
        for (p, (file, engine)) in pairs.enumerate() {
            let (Some(a), Some(b)) = (&file.influences, &engine.influences) else {
                continue;
            };
            let vertices: Vec<usize> = (0..file.vertex_count())
                .filter(|&v| !a.of_vertex(v).eq(b.of_vertex(v)))
                .collect();
            if !vertices.is_empty() {
                changed.push((i, p, vertices));
            }
        }
    }
    changed
}

/// One pose's farthest vertex of one drawing, and the vertices it moved.
#[derive(Default)]
struct PoseResult {
    worst: Option<(f64, usize, usize, usize)>,
    moved: Vec<(usize, usize, usize)>,
}

impl PoseResult {
    /// Counts vertex `(instance, primitive, vertex)` drawn `apart` from the file's, as a
    /// fraction of `height` (a NaN counts as infinitely far).
    fn record(&mut self, apart: Vec3, height: f64, (i, p, v): (usize, usize, usize)) {
        let distance = f64::from(apart.length()) / height;
        let distance = if distance.is_nan() { f64::INFINITY } else { distance };
        if distance > MOVED {
            self.moved.push((i, p, v));
        }
        if self.worst.is_none_or(|w| distance > w.0) {
            self.worst = Some((distance, i, p, v));
        }
    }
}

/// Checks `rig` against each of `engines`. Only the vertices whose influences an engine changes
/// are skinned, both ways, per pose (each with [`blend_matrix`], so that an unchanged row
/// could not differ); engines that draw alike are measured once; poses run in parallel.
pub fn check_engines(rig: &Rig, engines: &[Engine]) -> Vec<EngineCheck> {
    use rayon::prelude::*;
    let height = drawn_height(rig);
    let drawn: Vec<Result<Rig, EngineRefusal>> = engines.iter().map(|e| e.draw(rig)).collect();
    let changed: Vec<ChangedVertices> = (drawn.iter())
        .map(|d| d.as_ref().map_or_else(|_| Vec::new(), |d| changed_vertices(rig, d)))
        .collect();
    // The first engine drawing each distinct set of influences measures it for the others.
    let measured_by: Vec<usize> = (0..drawn.len())
        .map(|k| (0..k).find(|&j| same_influences(&drawn[j], &drawn[k])).unwrap_or(k))
        .collect();
    // Drawings that change nodes or morph targets move every vertex, not only rebound ones.
    let whole: Vec<bool> = (drawn.iter())
        .map(|d| d.as_ref().is_ok_and(|d| poses_or_morphs_differ(rig, d)))
        .collect();
    let poses = poses(rig);
    let shading = PoseShading::needed_by(engines).then(|| PoseShading::of(rig, &clip_poses(rig)));
    let per_pose: Vec<Vec<PoseResult>> = poses
        .par_iter()
        .map_init(
            || WholeDrawings::new(rig, &drawn, &whole),
            |buffers, pose| {
                pose.evaluate(rig, &mut buffers.file, &mut buffers.overrides);
                buffers.file_skinned_at = None;
                (drawn.iter().zip(&changed).enumerate())
                    .map(|(k, (drawn, changed))| match drawn {
                        Ok(drawn) if measured_by[k] == k && whole[k] => {
                            buffers.measure(rig, k, drawn, changed, pose, height)
                        }
                        Ok(drawn) if measured_by[k] == k => measure_pose(rig, drawn, changed, &buffers.file, height),
                        _ => PoseResult::default(),
                    })
                    .collect()
            },
        )
        .collect();
    (engines.iter().enumerate())
        .map(|(k, &engine)| {
            let source = measured_by[k];
            let mut moved = std::collections::HashSet::new();
            let mut worst: Option<(f64, usize, usize, usize, usize)> = None;
            for (pose_index, results) in per_pose.iter().enumerate() {
                let result = &results[source];
                moved.extend(result.moved.iter().copied());
                if let Some((distance, i, p, v)) = result.worst
                    && worst.is_none_or(|w| distance > w.0)
                {
                    worst = Some((distance, i, p, v, pose_index));
                }
            }
            let rows_changed = changed[k].iter().map(|(_, _, v)| v.len()).sum();
            EngineCheck {
                engine: engine.name(),
                label: engine.label(),
                refused: drawn[k].as_ref().err().map(ToString::to_string),
                rows_changed,
                vertices_moved: moved.len(),
                worst: worst.map(|(distance, i, p, v, pose_index)| {
                    let instance = &rig.instances[i];
                    let ((clip, time), turn) = match &poses[pose_index] {
                        &CheckPose::Clip(clip, time) => ((clip, time), None),
                        CheckPose::Turn(turn) => ((None, 0.0), Some(turn.clone())),
                    };
                    let influences = rig.meshes[instance.mesh].primitives[p].influences.as_ref();
                    WorstVertex {
                        distance,
                        mesh: rig.meshes[instance.mesh].name.clone(),
                        instance: i,
                        primitive: p,
                        vertex: v,
                        clip: clip.map(|c| rig.clips[c].name.clone()),
                        time,
                        turn,
                        joints: influences.map_or_else(Vec::new, |inf| named_joints(rig, instance.skin, inf, v)),
                    }
                }),
                findings: findings(engine, rig, shading.as_ref()),
            }
        })
        .collect()
}

/// The farthest `other` (the same rig, its vertices bound otherwise: repaired, say) draws a
/// vertex from `rig`'s drawing over the same poses, as a fraction of `rig`'s height.
pub fn drawing_distance(rig: &Rig, other: &Rig) -> f64 {
    use rayon::prelude::*;
    let height = drawn_height(rig);
    let changed = changed_vertices(rig, other);
    (poses(rig).par_iter())
        .map_init(
            || (PoseBuffers::new(rig), Vec::new()),
            |(pose, overrides), at| {
                at.evaluate(rig, pose, overrides);
                measure_pose(rig, other, &changed, pose, height)
                    .worst
                    .map_or(0.0, |w| w.0)
            },
        )
        .reduce(|| 0.0, f64::max)
}

/// Every skinned instance's palette (`[pose][instance][joint]`, empty for unskinned instances)
/// at each pose [`check_engines`] measures: what a repair that must hold over those poses
/// (see [`crate::repair::limit_least_deformation`]) weighs its choices by.
pub fn pose_palettes(rig: &Rig) -> Vec<Vec<Vec<glam::Mat4>>> {
    use rayon::prelude::*;
    (poses(rig).par_iter())
        .map_init(
            || (PoseBuffers::new(rig), Vec::new()),
            |(pose, overrides), at| {
                at.evaluate(rig, pose, overrides);
                pose.palettes.clone()
            },
        )
        .collect()
}

/// Whether `drawn` poses its nodes (at rest or by its clips) or morphs its vertices otherwise
/// than `rig`.
fn poses_or_morphs_differ(rig: &Rig, drawn: &Rig) -> bool {
    rig.nodes.iter().zip(&drawn.nodes).any(|(a, b)| a.rest != b.rest)
        || rig.clips != drawn.clips
        || rig.morphs.targets != drawn.morphs.targets
}

/// The buffers one thread measures whole drawings with: the file's pose, skinned once per pose
/// when some engine needs it, and each such engine's own pose and vertices.
struct WholeDrawings {
    file: PoseBuffers,
    /// Made the first time a whole drawing is measured.
    file_skinned: Option<SkinnedPose>,
    /// The pose `file_skinned` was skinned at, `None` when it is stale.
    file_skinned_at: Option<CheckPose>,
    /// Scratch of identity overrides for the sweep's poses.
    overrides: Vec<JointOverride>,
    /// Per engine, its pose and vertices where its drawing is measured whole.
    engines: Vec<Option<(PoseBuffers, SkinnedPose)>>,
    /// The farthest any vertex is from its mesh's origin: how far a matrix's error reaches.
    reach: f32,
}

/// Whether two poses place every vertex within `tolerance` of each other: their palettes and
/// unskinned instances' matrices differ by less than `tolerance` at `reach` from the origin.
fn poses_agree(a: &PoseBuffers, b: &PoseBuffers, reach: f32, tolerance: f64) -> bool {
    let apart = |m: &glam::Mat4, n: &glam::Mat4| {
        let linear = (0..3).map(|c| (m.col(c) - n.col(c)).truncate().length()).sum::<f32>();
        f64::from(linear * reach + (m.w_axis - n.w_axis).truncate().length())
    };
    let palettes = a.palettes.iter().flatten().zip(b.palettes.iter().flatten());
    let worlds = a.worlds.iter().zip(&b.worlds);
    a.morph_weights == b.morph_weights && palettes.chain(worlds).all(|(m, n)| apart(m, n) < tolerance)
}

impl WholeDrawings {
    fn new(rig: &Rig, drawn: &[Result<Rig, EngineRefusal>], whole: &[bool]) -> WholeDrawings {
        WholeDrawings {
            file: PoseBuffers::new(rig),
            file_skinned: None,
            file_skinned_at: None,
            overrides: Vec::new(),
            engines: (drawn.iter().zip(whole))
                .map(|(d, &w)| match d {
                    Ok(d) if w => Some((PoseBuffers::new(d), SkinnedPose::new(d))),
                    _ => None,
                })
                .collect(),
            reach: (rig.meshes.iter().flat_map(|m| &m.primitives))
                .flat_map(|p| &p.positions)
                .map(|p| p.length())
                .fold(0.0, f32::max),
        }
    }

    /// Every vertex of engine `k`'s drawing against the file's at `pose` (the file's pose
    /// already evaluated), each placed in the world.
    fn measure(
        &mut self,
        rig: &Rig,
        k: usize,
        drawn: &Rig,
        changed: &ChangedVertices,
        pose: &CheckPose,
        height: f64,
    ) -> PoseResult {
        let Some((engine_pose, engine_skinned)) = &mut self.engines[k] else {
            return PoseResult::default();
        };
        pose.evaluate(drawn, engine_pose, &mut self.overrides);
        // Where the engine's pose moves no vertex by a visible amount (a clip's keys blended
        // otherwise but dense), only the rebound vertices can be drawn elsewhere.
        if rig.morphs.targets == drawn.morphs.targets
            && poses_agree(&self.file, engine_pose, self.reach, MOVED * 0.1 * height)
        {
            return measure_pose(rig, drawn, changed, &self.file, height);
        }
        let file_skinned = self.file_skinned.get_or_insert_with(|| SkinnedPose::new(rig));
        if self.file_skinned_at.as_ref() != Some(pose) {
            file_skinned.skin(rig, &self.file, SkinningMethod::Lbs);
            self.file_skinned_at = Some(pose.clone());
        }
        engine_skinned.skin(drawn, engine_pose, SkinningMethod::Lbs);
        let mut result = PoseResult::default();
        for i in 0..rig.instances.len() {
            let (file_world, engine_world) = (self.file.instance_world(rig, i), engine_pose.instance_world(drawn, i));
            for p in 0..rig.meshes[rig.instances[i].mesh].primitives.len() {
                let file = file_skinned.positions(rig, i, p);
                let engine = engine_skinned.positions(drawn, i, p);
                for (v, (a, b)) in file.iter().zip(engine).enumerate() {
                    let apart = file_world.transform_point3(*a) - engine_world.transform_point3(*b);
                    result.record(apart, height, (i, p, v));
                }
            }
        }
        result
    }
}

/// Whether two drawings bind, pose and morph every vertex alike (two refusals never count as
/// alike).
fn same_influences(a: &Result<Rig, EngineRefusal>, b: &Result<Rig, EngineRefusal>) -> bool {
    let (Ok(a), Ok(b)) = (a, b) else { return false };
    if poses_or_morphs_differ(a, b) {
        return false;
    }
    fn influences(rig: &Rig) -> impl Iterator<Item = Option<&crate::rig::Influences>> {
        rig.meshes
            .iter()
            .flat_map(|m| &m.primitives)
            .map(|p| p.influences.as_ref())
    }
    influences(a).zip(influences(b)).all(|pair| match pair {
        (Some(x), Some(y)) => x.joints == y.joints && x.weights == y.weights,
        (x, y) => x.is_none() && y.is_none(),
    })
}

/// The changed vertices of one drawing at one pose: each skinned both ways, the distance a
/// fraction of `height` (a NaN counts as infinitely far).
fn measure_pose(rig: &Rig, drawn: &Rig, changed: &ChangedVertices, pose: &PoseBuffers, height: f64) -> PoseResult {
    let mut result = PoseResult::default();
    for (i, p, vertices) in changed {
        let (i, p) = (*i, *p);
        let mesh = rig.instances[i].mesh;
        let palette = &pose.palettes[i];
        let (file, engine) = (&rig.meshes[mesh].primitives[p], &drawn.meshes[mesh].primitives[p]);
        let (Some(a), Some(b)) = (&file.influences, &engine.influences) else {
            continue;
        };
        for &v in vertices {
            let position = file.positions[v];
            let at = |influences| blend_matrix(palette, influences, v).transform_point3(position);
            result.record(at(a) - at(b), height, (i, p, v));
        }
    }
    result
}

/// Vertex `v`'s non-zero influences by joint name, in the order the file lists them.
pub fn named_joints(
    rig: &Rig,
    skin: Option<usize>,
    influences: &crate::rig::Influences,
    v: usize,
) -> Vec<(String, f32)> {
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
