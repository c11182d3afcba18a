//! Vertices pointed out in the view: those a selected finding names, and the one inspected.

use super::*;

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

impl Viewer {
    /// Where the marked vertices are drawn. On the GPU path this skins the pose on the CPU
    /// too, only while something is marked.
    pub(super) fn update_mark_points(&mut self) {
        self.mark_points.clear();
        let marks = self.finding_marks.iter().chain(&self.inspected);
        if marks.clone().next().is_none() {
            return;
        }
        if !self.cpu_skinned {
            self.skin_current_pose();
        }
        for mark in self.finding_marks.iter().chain(&self.inspected) {
            if let Some(p) = self.posed_position(*mark) {
                self.mark_points.push(p);
            }
        }
    }

    /// A vertex's position as drawn in the last evaluated pose (CPU-skinned vertices must be
    /// current), in world space; `None` when the reference is outside the rig.
    fn posed_position(&self, mark: VertexRef) -> Option<glam::Vec3> {
        let instance = self.rig.instances.get(mark.instance)?;
        if mark.primitive >= self.rig.meshes.get(instance.mesh)?.primitives.len() {
            return None;
        }
        let positions = self.skinned.positions(&self.rig, mark.instance, mark.primitive);
        let world = self.pose.instance_world(&self.rig, mark.instance);
        positions.get(mark.vertex).map(|&p| world.transform_point3(p))
    }

    /// The vertices pointed out in the view for a selected finding.
    pub fn finding_marks(&self) -> &[VertexRef] {
        &self.finding_marks
    }

    /// Points out `marks` in the view (the vertices of a selected finding); empty clears them.
    pub fn set_finding_marks(&mut self, marks: Vec<VertexRef>) {
        if marks != self.finding_marks {
            self.finding_marks = marks;
            self.marks_stale = true;
        }
    }

    /// Shows `vertex` in the vertex inspector and marks it in the view (`None`: nothing).
    pub fn inspect_vertex(&mut self, vertex: Option<VertexRef>) {
        if vertex != self.inspected {
            self.inspected = vertex;
            self.marks_stale = true;
        }
    }

    pub fn inspected_vertex(&self) -> Option<VertexRef> {
        self.inspected
    }

    /// The inspected vertex's position as drawn now, in world space.
    pub fn inspected_position(&mut self) -> Option<glam::Vec3> {
        let mark = self.inspected?;
        self.skin_on_cpu();
        self.posed_position(mark)
    }
}
