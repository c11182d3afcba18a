//! Vertices pointed out in the view: those a selected finding names, and the one inspected.

use super::Viewer;
use super::playback::Playback;
use crate::rig::Rig;

/// One vertex of one primitive of one mesh instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VertexRef {
    pub instance: usize,
    /// Index into the mesh's primitives.
    pub primitive: usize,
    pub vertex: usize,
}

/// Vertices `vertices` of primitive `primitive` (index into `Mesh::primitives`) of mesh `mesh`,
/// on every instance of that mesh.
pub fn marks_on_every_instance(
    rig: &Rig,
    mesh: usize,
    primitive: usize,
    vertices: impl Iterator<Item = usize> + Clone,
) -> Vec<VertexRef> {
    (rig.instances.iter().enumerate())
        .filter(|(_, instance)| instance.mesh == mesh)
        .flat_map(|(instance, _)| {
            (vertices.clone()).map(move |vertex| VertexRef {
                instance,
                primitive,
                vertex,
            })
        })
        .collect()
}

/// The marked vertices and where they are drawn.
#[derive(Default)]
pub(crate) struct Marks {
    /// Vertices a selected finding names.
    finding: Vec<VertexRef>,
    /// The vertex shown in the vertex inspector.
    inspected: Option<VertexRef>,
    /// World positions of `finding` and `inspected` in the current pose.
    pub(crate) points: Vec<glam::Vec3>,
    /// `points` needs recomputing (the marks or the pose changed).
    pub(crate) stale: bool,
}

impl Marks {
    pub(super) fn clear(&mut self) {
        self.finding.clear();
        self.inspected = None;
        self.stale = true;
    }

    pub(crate) fn inspected(&self) -> Option<VertexRef> {
        self.inspected
    }

    /// Marks `vertex` as the one inspected (`None`: none).
    pub(crate) fn inspect(&mut self, vertex: Option<VertexRef>) {
        if vertex != self.inspected {
            self.inspected = vertex;
            self.stale = true;
        }
    }

    /// Whether any vertex is marked (its position then needs the pose skinned on the CPU).
    pub(crate) fn any(&self) -> bool {
        !self.finding.is_empty() || self.inspected.is_some()
    }

    /// Places the marks, with `repaired` (the vertices a previewed repair changed), on the
    /// surface as drawn: `playback`'s CPU-skinned vertices, which must be current.
    pub(crate) fn update(&mut self, rig: &Rig, playback: &Playback, repaired: &[VertexRef]) {
        self.stale = false;
        self.points.clear();
        for mark in self.finding.iter().chain(&self.inspected).chain(repaired) {
            if let Some(p) = posed_position(rig, playback, *mark) {
                self.points.push(p);
            }
        }
    }
}

/// A vertex's position as drawn in `playback`'s last pose (its CPU-skinned vertices must be
/// current), in world space; `None` when the reference is outside the rig.
fn posed_position(rig: &Rig, playback: &Playback, mark: VertexRef) -> Option<glam::Vec3> {
    let instance = rig.instances.get(mark.instance)?;
    if mark.primitive >= rig.meshes.get(instance.mesh)?.primitives.len() {
        return None;
    }
    let positions = playback.skinned.positions(rig, mark.instance, mark.primitive);
    let world = playback.pose.instance_world(rig, mark.instance);
    positions.get(mark.vertex).map(|&p| world.transform_point3(p))
}

impl Viewer {
    /// The vertices pointed out in the view for a selected finding.
    pub fn finding_marks(&self) -> &[VertexRef] {
        &self.marks.finding
    }

    /// Points out `marks` in the view (the vertices of a selected finding); empty clears them.
    pub fn set_finding_marks(&mut self, marks: Vec<VertexRef>) {
        if marks != self.marks.finding {
            self.marks.finding = marks;
            self.marks.stale = true;
        }
    }

    /// Shows `vertex` in the vertex inspector and marks it in the view (`None`: nothing).
    pub fn inspect_vertex(&mut self, vertex: Option<VertexRef>) {
        self.marks.inspect(vertex);
    }

    pub fn inspected_vertex(&self) -> Option<VertexRef> {
        self.marks.inspected
    }

    /// The inspected vertex's position as drawn now, in world space.
    pub fn inspected_position(&mut self) -> Option<glam::Vec3> {
        let mark = self.marks.inspected?;
        self.skin_on_cpu();
        posed_position(&self.documents[self.active].rig, &self.playback, mark)
    }
}
