//! Each vertex's distance between the file's drawing and an engine's at one pose: what the
//! engine distance view colours and its legend names. Both drawings are skinned whole (morph
//! targets and node changes included) by the CPU path, so the figure is what the two views
//! draw, not an estimate.

use crate::anim::PoseBuffers;
use crate::rig::Rig;
use crate::skin::SkinnedPose;

/// One rig posed and skinned: the file's drawing or an engine's.
#[derive(Clone, Copy)]
pub struct PosedDrawing<'a> {
    pub rig: &'a Rig,
    pub pose: &'a PoseBuffers,
    pub skinned: &'a SkinnedPose,
}

/// The vertex drawn farthest from the file's drawing at the pose measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FarthestVertex {
    pub instance: usize,
    pub primitive: usize,
    pub vertex: usize,
    /// In scene units.
    pub distance: f32,
    /// As a fraction of the height measured against.
    pub fraction: f32,
}

/// Per mesh instance, per primitive, per vertex: the distance between two drawings as a
/// fraction of the rig's height (0 until measured). Sized once per rig, then measured again
/// in place at every pose without allocating.
#[derive(Debug, Clone, Default)]
pub struct VertexDistances {
    values: Vec<Vec<Vec<f32>>>,
    farthest: Option<FarthestVertex>,
}

impl VertexDistances {
    /// Every vertex of `rig` at distance 0.
    pub fn zeros(rig: &Rig) -> VertexDistances {
        let values = (rig.instances.iter())
            .map(|instance| {
                (rig.meshes[instance.mesh].primitives.iter())
                    .map(|p| vec![0.0; p.vertex_count()])
                    .collect()
            })
            .collect();
        VertexDistances { values, farthest: None }
    }

    /// The distances of primitive `primitive` of mesh instance `instance`.
    pub fn of(&self, instance: usize, primitive: usize) -> Option<&[f32]> {
        Some(self.values.get(instance)?.get(primitive)?.as_slice())
    }

    /// The vertex farthest apart at the last [`VertexDistances::measure`] (`None` before it, or
    /// when the rig has no vertex).
    pub fn farthest(&self) -> Option<FarthestVertex> {
        self.farthest
    }

    /// Every distance back to 0.
    pub fn clear(&mut self) {
        self.values.iter_mut().flatten().for_each(|values| values.fill(0.0));
        self.farthest = None;
    }

    /// Measures every vertex of `file` against the same vertex of `engine` (the same rig as an
    /// engine draws it, so the same instances, primitives and vertex counts), each placed in
    /// the world by its own pose, as a fraction of `height`. A NaN counts as infinitely far.
    pub fn measure(&mut self, file: PosedDrawing, engine: PosedDrawing, height: f64) {
        self.farthest = None;
        for (i, per_primitive) in self.values.iter_mut().enumerate() {
            let file_world = file.pose.instance_world(file.rig, i);
            let engine_world = engine.pose.instance_world(engine.rig, i);
            for (p, values) in per_primitive.iter_mut().enumerate() {
                let a = file.skinned.positions(file.rig, i, p);
                let b = engine.skinned.positions(engine.rig, i, p);
                for (v, ((value, a), b)) in values.iter_mut().zip(a).zip(b).enumerate() {
                    let distance = (file_world.transform_point3(*a) - engine_world.transform_point3(*b)).length();
                    let distance = if distance.is_nan() { f32::INFINITY } else { distance };
                    let fraction = (f64::from(distance) / height) as f32;
                    *value = fraction;
                    if self.farthest.is_none_or(|f| distance > f.distance) {
                        self.farthest = Some(FarthestVertex {
                            instance: i,
                            primitive: p,
                            vertex: v,
                            distance,
                            fraction,
                        });
                    }
                }
            }
        }
    }
}
