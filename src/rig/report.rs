//! The rig report: what a file contains (skins, meshes, clips, materials) and what is wrong with
//! it, as findings with a severity, each pointing at the nodes and vertices concerned.
//!
//! [`RigReport::new`] is a pure function of a [`Rig`] (including the raw facts the importer
//! kept in [`Rig::facts`]); every check is linear in the size of the rig.

use super::{Influences, Interpolation, PrimitiveFacts, Property, Rig, Trs};
use crate::anim::sample_channel;
use glam::{Mat3, Mat4, Quat, Vec3, Vec4Swizzles};
use serde_json::{Value, json};
use std::fmt::Write;

/// How many vertex indices a finding keeps (the count is always exact).
pub const MAX_LISTED_VERTICES: usize = 1000;
/// How many node names a finding message spells out.
const NAMED_NODES: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; nothing is wrong.
    Info,
    /// Suspicious or against the glTF specification, with a small or local effect.
    Warning,
    /// Renders wrongly or breaks the specification in a way that matters.
    Error,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Vertices of one primitive that a finding is about.
#[derive(Debug, Clone, PartialEq)]
pub struct VertexList {
    pub mesh: usize,
    /// Index into `Mesh::primitives`; `None` for a primitive that is not drawn.
    pub primitive: Option<usize>,
    /// The primitive's index in the file.
    pub gltf_primitive: usize,
    /// At most [`MAX_LISTED_VERTICES`] vertex indices, ascending.
    pub vertices: Vec<u32>,
    /// How many vertices the finding is about in all.
    pub total: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub severity: Severity,
    /// A stable identifier of the kind of finding, e.g. `weights-not-normalized`.
    pub code: &'static str,
    pub message: String,
    /// Rig nodes concerned, most relevant first (a joint, the node holding a mesh, a target).
    pub nodes: Vec<usize>,
    pub vertices: Option<VertexList>,
    pub clip: Option<usize>,
}

impl Finding {
    fn new(severity: Severity, code: &'static str, message: String) -> Finding {
        Finding {
            severity,
            code,
            message,
            nodes: Vec::new(),
            vertices: None,
            clip: None,
        }
    }

    fn nodes(mut self, nodes: impl IntoIterator<Item = usize>) -> Finding {
        self.nodes = nodes.into_iter().collect();
        self
    }

    fn vertices(mut self, vertices: VertexList) -> Finding {
        self.vertices = Some(vertices);
        self
    }

    fn clip(mut self, clip: usize) -> Finding {
        self.clip = Some(clip);
        self
    }

    /// The joint (node) to select when the finding is picked.
    pub fn node(&self) -> Option<usize> {
        self.nodes.first().copied()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SkinSummary {
    pub name: String,
    pub joints: usize,
    /// The deepest node that is an ancestor of (or is) every joint; `None` when the joints do
    /// not share one hierarchy.
    pub root: Option<usize>,
    /// The `skeleton` node the file names, if any.
    pub skeleton: Option<usize>,
    /// Whether all joints hang under one root node.
    pub shared_hierarchy: bool,
    /// Mesh instances drawn with this skin.
    pub instances: usize,
    /// Joints with a non-zero weight on at least one vertex of a mesh drawn with this skin.
    pub joints_used: usize,
    /// Largest distance between a joint in the rest pose and in the bind pose, in the units of
    /// the mesh, and the joint; `None` when no mesh uses the skin.
    pub rest_vs_bind: Option<Deviation>,
}

/// How far a pose is from the bind pose: the joint that moved most and by how much.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deviation {
    /// Largest joint displacement, in mesh units.
    pub distance: f32,
    /// `distance` relative to the size of the mesh (its bounding box diagonal).
    pub relative: f32,
    /// The joint (rig node) that moved most.
    pub joint: usize,
    /// Largest joint rotation away from the bind pose, in degrees, and the joint.
    pub degrees: f32,
    pub rotated_joint: usize,
}

impl Deviation {
    /// Whether the pose is the bind pose, within rounding.
    pub fn is_bind_pose(&self) -> bool {
        self.relative <= 1e-3 && self.degrees <= 0.5
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PrimitiveSummary {
    /// Index in `Mesh::primitives`; `None` when the primitive is not drawn.
    pub primitive: Option<usize>,
    pub gltf_index: usize,
    /// glTF mode: 4 for triangles.
    pub mode: u32,
    pub vertices: usize,
    pub triangles: usize,
    /// Joint/weight sets kept (0 = not skinned, 1 = four influences, 2 = eight).
    pub influence_sets: usize,
    /// Non-zero influences per vertex: the most on one vertex and the mean.
    pub influences_max: usize,
    pub influences_mean: f32,
    pub material: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MeshSummary {
    pub name: String,
    /// Nodes that draw the mesh.
    pub instances: usize,
    pub primitives: Vec<PrimitiveSummary>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClipSummary {
    pub name: String,
    pub duration: f32,
    pub channels: usize,
    /// Interpolation modes used, in the order STEP, LINEAR, CUBICSPLINE.
    pub interpolations: Vec<&'static str>,
    pub animated_nodes: usize,
    /// The clip's first frame against the bind pose, for the first skinned mesh instance.
    pub first_frame_vs_bind: Option<Deviation>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MaterialSummary {
    pub name: String,
    pub base_color: [f32; 4],
    pub base_color_texture: Option<usize>,
    pub double_sided: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TextureSummary {
    pub name: String,
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RigReport {
    pub name: String,
    pub nodes: usize,
    pub skins: Vec<SkinSummary>,
    pub meshes: Vec<MeshSummary>,
    pub clips: Vec<ClipSummary>,
    pub materials: Vec<MaterialSummary>,
    pub textures: Vec<TextureSummary>,
    /// Most severe first.
    pub findings: Vec<Finding>,
    /// Time taken to compute the report, in seconds.
    pub seconds: f64,
}

impl RigReport {
    pub fn new(rig: &Rig) -> RigReport {
        let started = std::time::Instant::now();
        let mut report = Analysis::new(rig).run();
        report.seconds = started.elapsed().as_secs_f64();
        report
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == severity).count()
    }

    pub fn has_errors(&self) -> bool {
        self.count(Severity::Error) > 0
    }

    /// One line per fact and finding, for a terminal.
    pub fn to_text(&self, rig: &Rig) -> String {
        let node = |n: usize| node_label(rig, n);
        let mut out = String::new();
        let w = &mut out;
        let _ = writeln!(
            w,
            "{}",
            if self.name.is_empty() {
                "(unnamed rig)"
            } else {
                &self.name
            }
        );
        let _ = writeln!(
            w,
            "  {} nodes, {} skins, {} meshes, {} clips, {} materials, {} textures",
            self.nodes,
            self.skins.len(),
            self.meshes.len(),
            self.clips.len(),
            self.materials.len(),
            self.textures.len()
        );
        if !self.skins.is_empty() {
            let _ = writeln!(w, "\nSkins");
        }
        for (i, skin) in self.skins.iter().enumerate() {
            let root = match skin.root {
                Some(r) => format!("root {}", node(r)),
                None => "joints do not share one hierarchy".into(),
            };
            let _ = writeln!(
                w,
                "  [{i}] {}: {} joints, {root}, {} used, drawn by {} mesh instance(s)",
                skin.name, skin.joints, skin.joints_used, skin.instances
            );
            if let Some(d) = skin.rest_vs_bind {
                let _ = writeln!(w, "      rest pose vs bind pose: {}", describe_deviation(rig, &d));
            }
        }
        if !self.meshes.is_empty() {
            let _ = writeln!(w, "\nMeshes");
        }
        for (i, mesh) in self.meshes.iter().enumerate() {
            let _ = writeln!(w, "  [{i}] {}: drawn by {} node(s)", mesh.name, mesh.instances);
            for p in &mesh.primitives {
                let drawn = if p.primitive.is_some() {
                    String::new()
                } else {
                    format!(" (mode {}, not drawn)", p.mode)
                };
                let influences = if p.influence_sets == 0 {
                    "not skinned".to_string()
                } else {
                    format!(
                        "influences per vertex: max {}, mean {:.2} (of {})",
                        p.influences_max,
                        p.influences_mean,
                        4 * p.influence_sets
                    )
                };
                let _ = writeln!(
                    w,
                    "      primitive {}{drawn}: {} vertices, {} triangles, {influences}",
                    p.gltf_index, p.vertices, p.triangles
                );
            }
        }
        if !self.clips.is_empty() {
            let _ = writeln!(w, "\nClips");
        }
        for (i, clip) in self.clips.iter().enumerate() {
            let _ = writeln!(
                w,
                "  [{i}] {}: {:.3} s, {} channels ({}), {} animated nodes",
                clip.name,
                clip.duration,
                clip.channels,
                if clip.interpolations.is_empty() {
                    "none".into()
                } else {
                    clip.interpolations.join(", ")
                },
                clip.animated_nodes
            );
            if let Some(d) = clip.first_frame_vs_bind {
                let _ = writeln!(w, "      first frame vs bind pose: {}", describe_deviation(rig, &d));
            }
        }
        if !self.materials.is_empty() {
            let _ = writeln!(w, "\nMaterials");
        }
        for (i, m) in self.materials.iter().enumerate() {
            let c = m.base_color;
            let _ = writeln!(
                w,
                "  [{i}] {}: base color ({:.2}, {:.2}, {:.2}, {:.2}){}{}",
                m.name,
                c[0],
                c[1],
                c[2],
                c[3],
                m.base_color_texture.map_or(String::new(), |t| format!(", texture {t}")),
                if m.double_sided { ", double-sided" } else { "" }
            );
        }
        if !self.textures.is_empty() {
            let _ = writeln!(w, "\nTextures");
        }
        for (i, t) in self.textures.iter().enumerate() {
            let _ = writeln!(w, "  [{i}] {}: {}×{}", t.name, t.width, t.height);
        }
        let _ = writeln!(
            w,
            "\nFindings: {} errors, {} warnings, {} notes",
            self.count(Severity::Error),
            self.count(Severity::Warning),
            self.count(Severity::Info)
        );
        for f in &self.findings {
            let _ = writeln!(w, "  {:<7} [{}] {}", f.severity.label(), f.code, f.message);
            if let Some(v) = &f.vertices {
                let _ = writeln!(
                    w,
                    "          vertices of mesh {} primitive {}: {}",
                    v.mesh,
                    v.gltf_primitive,
                    vertex_sample(v)
                );
            }
        }
        let _ = writeln!(w, "\nReport computed in {:.2} ms", self.seconds * 1e3);
        out
    }

    /// The whole report as one JSON document.
    pub fn to_json(&self, rig: &Rig) -> Value {
        let deviation = |d: &Option<Deviation>| {
            d.map(|d| {
                json!({
                    "distance": d.distance,
                    "relative": d.relative,
                    "joint": d.joint,
                    "joint_name": rig.nodes[d.joint].name,
                    "degrees": d.degrees,
                    "rotated_joint": d.rotated_joint,
                })
            })
        };
        json!({
            "name": self.name,
            "nodes": self.nodes,
            "skins": self.skins.iter().map(|s| json!({
                "name": s.name,
                "joints": s.joints,
                "root": s.root,
                "root_name": s.root.map(|r| rig.nodes[r].name.clone()),
                "skeleton": s.skeleton,
                "shared_hierarchy": s.shared_hierarchy,
                "instances": s.instances,
                "joints_used": s.joints_used,
                "rest_vs_bind": deviation(&s.rest_vs_bind),
            })).collect::<Vec<_>>(),
            "meshes": self.meshes.iter().map(|m| json!({
                "name": m.name,
                "instances": m.instances,
                "primitives": m.primitives.iter().map(|p| json!({
                    "primitive": p.primitive,
                    "gltf_index": p.gltf_index,
                    "mode": p.mode,
                    "drawn": p.primitive.is_some(),
                    "vertices": p.vertices,
                    "triangles": p.triangles,
                    "influence_sets": p.influence_sets,
                    "influences_max": p.influences_max,
                    "influences_mean": p.influences_mean,
                    "material": p.material,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "clips": self.clips.iter().map(|c| json!({
                "name": c.name,
                "duration": c.duration,
                "channels": c.channels,
                "interpolations": c.interpolations,
                "animated_nodes": c.animated_nodes,
                "first_frame_vs_bind": deviation(&c.first_frame_vs_bind),
            })).collect::<Vec<_>>(),
            "materials": self.materials.iter().map(|m| json!({
                "name": m.name,
                "base_color": m.base_color,
                "base_color_texture": m.base_color_texture,
                "double_sided": m.double_sided,
            })).collect::<Vec<_>>(),
            "textures": self.textures.iter().map(|t| json!({
                "name": t.name, "width": t.width, "height": t.height,
            })).collect::<Vec<_>>(),
            "summary": {
                "errors": self.count(Severity::Error),
                "warnings": self.count(Severity::Warning),
                "info": self.count(Severity::Info),
            },
            "findings": self.findings.iter().map(|f| json!({
                "severity": f.severity.label(),
                "code": f.code,
                "message": f.message,
                "nodes": f.nodes,
                "node_names": f.nodes.iter().map(|&n| rig.nodes[n].name.clone()).collect::<Vec<_>>(),
                "gltf_nodes": f.nodes.iter().map(|&n| rig.facts.gltf_node.get(n).copied().unwrap_or(n)).collect::<Vec<_>>(),
                "clip": f.clip,
                "vertices": f.vertices.as_ref().map(|v| json!({
                    "mesh": v.mesh,
                    "primitive": v.primitive,
                    "gltf_primitive": v.gltf_primitive,
                    "total": v.total,
                    "listed": v.vertices,
                })),
            })).collect::<Vec<_>>(),
            "report_seconds": self.seconds,
        })
    }
}

fn describe_deviation(rig: &Rig, d: &Deviation) -> String {
    if d.is_bind_pose() {
        return "matches".into();
    }
    format!(
        "joints move up to {:.4} ({:.1}% of the mesh size, {}) and turn up to {:.1}° ({})",
        d.distance,
        d.relative * 100.0,
        node_label(rig, d.joint),
        d.degrees,
        node_label(rig, d.rotated_joint)
    )
}

fn vertex_sample(v: &VertexList) -> String {
    let shown: Vec<String> = v.vertices.iter().take(12).map(u32::to_string).collect();
    if v.total > shown.len() {
        format!("{} … ({} in all)", shown.join(", "), v.total)
    } else {
        shown.join(", ")
    }
}

/// `'name' (node N)`, N being the node's index in the file.
pub fn node_label(rig: &Rig, node: usize) -> String {
    let gltf = rig.facts.gltf_node.get(node).copied().unwrap_or(node);
    match rig.nodes.get(node) {
        Some(n) if n.name != format!("node {gltf}") => format!("'{}' (node {gltf})", n.name),
        _ => format!("node {gltf}"),
    }
}

fn node_list(rig: &Rig, nodes: &[usize]) -> String {
    let mut names: Vec<String> = nodes.iter().take(NAMED_NODES).map(|&n| node_label(rig, n)).collect();
    if nodes.len() > NAMED_NODES {
        names.push(format!("and {} more", nodes.len() - NAMED_NODES));
    }
    names.join(", ")
}

/// Vertex indices matching a condition, capped, with the exact total.
struct VertexSet {
    listed: Vec<u32>,
    total: usize,
}

impl VertexSet {
    fn new() -> VertexSet {
        VertexSet {
            listed: Vec::new(),
            total: 0,
        }
    }

    fn add(&mut self, v: usize) {
        if self.listed.len() < MAX_LISTED_VERTICES {
            self.listed.push(v as u32);
        }
        self.total += 1;
    }
}

/// A primitive as the analysis sees it: drawn or not, with its influences.
#[derive(Clone, Copy)]
struct PrimitiveView<'r> {
    mesh: usize,
    primitive: Option<usize>,
    gltf_index: usize,
    influences: Option<&'r Influences>,
    weight_quantum: f32,
    facts: Option<&'r PrimitiveFacts>,
    vertices: usize,
    mode: u32,
    triangles: usize,
}

impl PrimitiveView<'_> {
    fn list(&self, set: VertexSet) -> VertexList {
        VertexList {
            mesh: self.mesh,
            primitive: self.primitive,
            gltf_primitive: self.gltf_index,
            vertices: set.listed,
            total: set.total,
        }
    }

    fn label(&self, rig: &Rig) -> String {
        format!("mesh '{}' primitive {}", rig.meshes[self.mesh].name, self.gltf_index)
    }
}

struct Analysis<'r> {
    rig: &'r Rig,
    findings: Vec<Finding>,
    /// Depth of every node in the hierarchy (roots are 0).
    depth: Vec<usize>,
    /// Top-level ancestor of every node.
    top: Vec<usize>,
    /// Depth-first preorder number and subtree size of every node: `a` is an ancestor of (or is)
    /// `b` when `pre[a] <= pre[b] < pre[a] + size[a]`.
    pre: Vec<usize>,
    size: Vec<usize>,
    /// Rest-pose world matrices.
    rest_worlds: Vec<Mat4>,
    /// Whether a node is a joint of any skin.
    is_joint: Vec<bool>,
    /// Every primitive, drawn or not, in mesh order, and which of them belong to each mesh.
    views: Vec<PrimitiveView<'r>>,
    views_of_mesh: Vec<Vec<usize>>,
    /// Mesh instances per skin.
    users_of_skin: Vec<Vec<usize>>,
    /// Clips that lost channels on import.
    clips_with_dropped: Vec<bool>,
    /// Steps left for the checks whose cost grows with the product of two sizes (clips × nodes,
    /// skins × hierarchy depth); past it they are skipped and the report says so.
    work_left: u64,
    skipped_checks: Vec<&'static str>,
}

/// Work allowance of the optional checks, in node visits.
const WORK_LIMIT: u64 = 5_000_000;

impl<'r> Analysis<'r> {
    fn new(rig: &'r Rig) -> Analysis<'r> {
        let n = rig.nodes.len();
        let mut depth = vec![0; n];
        let mut top = (0..n).collect::<Vec<_>>();
        // Parents come before their children, so one pass suffices.
        for (i, node) in rig.nodes.iter().enumerate() {
            if let Some(p) = node.parent.filter(|&p| p < i) {
                depth[i] = depth[p] + 1;
                top[i] = top[p];
            }
        }
        let mut is_joint = vec![false; n];
        for skin in &rig.skins {
            for &j in &skin.joints {
                if let Some(flag) = is_joint.get_mut(j) {
                    *flag = true;
                }
            }
        }
        let (pre, size) = preorder(rig);
        let rest: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        let views = primitive_views(rig);
        let mut views_of_mesh = vec![Vec::new(); rig.meshes.len()];
        for (k, view) in views.iter().enumerate() {
            if let Some(list) = views_of_mesh.get_mut(view.mesh) {
                list.push(k);
            }
        }
        let mut users_of_skin = vec![Vec::new(); rig.skins.len()];
        for (i, instance) in rig.instances.iter().enumerate() {
            if let Some(list) = instance.skin.and_then(|s| users_of_skin.get_mut(s)) {
                list.push(i);
            }
        }
        let mut clips_with_dropped = vec![false; rig.clips.len()];
        for dropped in &rig.facts.dropped_channels {
            if let Some(flag) = clips_with_dropped.get_mut(dropped.clip) {
                *flag = true;
            }
        }
        Analysis {
            rig,
            findings: Vec::new(),
            clips_with_dropped,
            depth,
            top,
            pre,
            size,
            rest_worlds: worlds_of(rig, &rest),
            is_joint,
            views,
            views_of_mesh,
            users_of_skin,
            work_left: WORK_LIMIT,
            skipped_checks: Vec::new(),
        }
    }

    /// Joints of the skin instance `i` is drawn with.
    fn joints_of(&self, i: usize) -> usize {
        let skin = self.rig.instances[i].skin;
        skin.and_then(|s| self.rig.skins.get(s)).map_or(0, |s| s.joints.len())
    }

    fn is_ancestor_or_self(&self, ancestor: usize, node: usize) -> bool {
        self.pre[ancestor] <= self.pre[node] && self.pre[node] < self.pre[ancestor] + self.size[ancestor]
    }

    /// The deepest node that is an ancestor of, or is, every node in `joints`: the lowest common
    /// ancestor of the joints first and last in depth-first order, found by walking up from one.
    fn common_root(&mut self, joints: &[usize]) -> Option<usize> {
        let low = *joints.iter().min_by_key(|&&j| self.pre[j])?;
        let high = *joints.iter().max_by_key(|&&j| self.pre[j])?;
        if !self.afford(self.depth[low] + 1, "common roots") {
            return None;
        }
        let mut node = low;
        loop {
            if self.is_ancestor_or_self(node, high) {
                return Some(node);
            }
            node = self.rig.nodes[node].parent?;
        }
    }

    /// Takes `steps` from the work allowance; false (and the check noted as skipped) when it
    /// is spent.
    fn afford(&mut self, steps: usize, check: &'static str) -> bool {
        if steps as u64 <= self.work_left {
            self.work_left -= steps as u64;
            true
        } else {
            if !self.skipped_checks.contains(&check) {
                self.skipped_checks.push(check);
            }
            false
        }
    }

    fn push(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    fn run(mut self) -> RigReport {
        let rig = self.rig;
        self.import_findings();
        self.node_findings();
        let meshes = self.meshes();
        let skins = self.skins();
        self.instance_findings();
        let clips = self.clips();
        if !self.skipped_checks.is_empty() {
            let skipped = self.skipped_checks.join(", ");
            self.push(Finding::new(
                Severity::Info,
                "report-incomplete",
                format!("the rig is too large for some checks, which were skipped: {skipped}"),
            ));
        }
        let mut findings = std::mem::take(&mut self.findings);
        // Most severe first; otherwise in the order found.
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        RigReport {
            name: rig.name.clone(),
            nodes: rig.nodes.len(),
            skins,
            meshes,
            clips,
            materials: rig
                .materials
                .iter()
                .map(|m| MaterialSummary {
                    name: m.name.clone(),
                    base_color: m.base_color.to_array(),
                    base_color_texture: m.base_color_texture,
                    double_sided: m.double_sided,
                })
                .collect(),
            textures: rig
                .textures
                .iter()
                .map(|t| TextureSummary {
                    name: t.name.clone(),
                    width: t.width,
                    height: t.height,
                })
                .collect(),
            findings,
            seconds: 0.0,
        }
    }

    /// Warnings the importer gave, channels it left out, primitives it does not draw.
    fn import_findings(&mut self) {
        let rig = self.rig;
        for dropped in &rig.facts.dropped_channels {
            let clip = rig.clips.get(dropped.clip).map_or("?", |c| c.name.as_str());
            let (severity, code) = if dropped.unsupported {
                (Severity::Info, "channel-not-played")
            } else {
                (Severity::Error, "channel-left-out")
            };
            self.push(
                Finding::new(
                    severity,
                    code,
                    format!(
                        "clip '{clip}' channel {} (targets {}) is not played: {}",
                        dropped.gltf_index,
                        node_label(rig, dropped.node),
                        dropped.reason
                    ),
                )
                .nodes([dropped.node])
                .clip(dropped.clip),
            );
        }
        for problem in &rig.facts.data_errors {
            self.push(Finding::new(Severity::Error, "file-data", problem.clone()));
        }
        for note in &rig.facts.notes {
            self.push(Finding::new(Severity::Info, "import-note", note.clone()));
        }
        for warning in &rig.warnings {
            // Left-out channels are reported above, with their node.
            if !warning.contains(" left out: ") {
                self.push(Finding::new(Severity::Warning, "import", warning.clone()));
            }
        }
        for skipped in &rig.facts.skipped_primitives {
            let mesh = rig.meshes.get(skipped.mesh).map_or("?", |m| m.name.as_str());
            self.push(Finding::new(
                Severity::Info,
                "primitive-not-drawn",
                format!(
                    "mesh '{mesh}' primitive {} is not a triangle list (mode {}): not drawn",
                    skipped.facts.gltf_index, skipped.facts.mode
                ),
            ));
        }
    }

    /// Node matrices that TRS cannot represent.
    fn node_findings(&mut self) {
        let rig = self.rig;
        let mut sheared = Vec::new();
        for (i, m) in rig.facts.node_matrices.iter().enumerate() {
            if !is_affine(m) || has_shear(m) {
                sheared.push(i);
            }
        }
        if !sheared.is_empty() {
            self.push(
                Finding::new(
                    Severity::Warning,
                    "node-matrix-not-trs",
                    format!(
                        "{} node(s) have a matrix with shear or projection, which translation/rotation/scale cannot represent; the shear is lost: {}",
                        sheared.len(),
                        node_list(rig, &sheared)
                    ),
                )
                .nodes(sheared),
            );
        }
    }

    fn meshes(&mut self) -> Vec<MeshSummary> {
        let rig = self.rig;
        let mut instances = vec![0; rig.meshes.len()];
        for instance in &rig.instances {
            if let Some(count) = instances.get_mut(instance.mesh) {
                *count += 1;
            }
        }
        let mut summaries: Vec<MeshSummary> = rig
            .meshes
            .iter()
            .zip(instances)
            .map(|(mesh, instances)| MeshSummary {
                name: mesh.name.clone(),
                instances,
                primitives: Vec::new(),
            })
            .collect();
        for k in 0..self.views.len() {
            let view = self.views[k];
            let (vertices, mode, triangles) = (view.vertices, view.mode, view.triangles);
            let (max, mean) = view.influences.map_or((0, 0.0), influence_counts);
            summaries[view.mesh].primitives.push(PrimitiveSummary {
                primitive: view.primitive,
                gltf_index: view.gltf_index,
                mode,
                vertices,
                triangles,
                influence_sets: view.influences.map_or(0, |i| i.sets),
                influences_max: max,
                influences_mean: mean,
                material: view
                    .primitive
                    .and_then(|p| rig.meshes[view.mesh].primitives[p].material),
            });
            if let Some(influences) = view.influences {
                self.weight_findings(&view, influences, vertices);
            }
            self.primitive_facts_findings(&view);
            if let Some(p) = view.primitive {
                self.geometry_findings(&view, &rig.meshes[view.mesh].primitives[p]);
            }
        }
        summaries
    }

    /// Weight checks that need no skin: sums, signs, zeros, counts, duplicates.
    fn weight_findings(&mut self, view: &PrimitiveView, influences: &Influences, vertices: usize) {
        let rig = self.rig;
        let tolerance = 1e-3 + 4.0 * view.weight_quantum;
        let mut unnormalized = VertexSet::new();
        let mut worst_sum = 1.0f32;
        let mut negative = VertexSet::new();
        let mut not_finite = VertexSet::new();
        let mut all_zero = VertexSet::new();
        let mut over_four = VertexSet::new();
        let mut duplicates = VertexSet::new();
        let complete = influences.joints.len() >= vertices * influences.sets
            && influences.weights.len() >= vertices * influences.sets;
        if !complete {
            return;
        }
        for v in 0..vertices {
            let mut sum = 0.0f32;
            let mut nonzero = 0;
            let mut has_negative = false;
            let mut has_nan = false;
            let mut used = [u16::MAX; 8];
            let mut used_len = 0;
            let mut duplicate = false;
            for (joint, weight) in influences.of_vertex(v) {
                if !weight.is_finite() {
                    has_nan = true;
                    continue;
                }
                sum += weight;
                if weight < 0.0 {
                    has_negative = true;
                }
                if weight != 0.0 {
                    nonzero += 1;
                    if used[..used_len].contains(&joint) {
                        duplicate = true;
                    } else if used_len < used.len() {
                        used[used_len] = joint;
                        used_len += 1;
                    }
                }
            }
            if has_nan {
                not_finite.add(v);
                continue;
            }
            if has_negative {
                negative.add(v);
            }
            if nonzero == 0 {
                all_zero.add(v);
            } else if (sum - 1.0).abs() > tolerance {
                unnormalized.add(v);
                if (sum - 1.0).abs() > (worst_sum - 1.0).abs() {
                    worst_sum = sum;
                }
            }
            if nonzero > 4 {
                over_four.add(v);
            }
            if duplicate {
                duplicates.add(v);
            }
        }
        let at = view.label(rig);
        if not_finite.total > 0 {
            self.push(
                Finding::new(
                    Severity::Error,
                    "weights-not-finite",
                    format!("{at}: {} vertices have NaN or infinite weights", not_finite.total),
                )
                .vertices(view.list(not_finite)),
            );
        }
        if negative.total > 0 {
            self.push(
                Finding::new(
                    Severity::Error,
                    "weights-negative",
                    format!("{at}: {} vertices have negative weights", negative.total),
                )
                .vertices(view.list(negative)),
            );
        }
        if all_zero.total > 0 {
            self.push(
                Finding::new(
                    Severity::Error,
                    "weights-all-zero",
                    format!(
                        "{at}: {} vertices have all weights zero (they stay in the bind pose)",
                        all_zero.total
                    ),
                )
                .vertices(view.list(all_zero)),
            );
        }
        if unnormalized.total > 0 {
            let severity = if (worst_sum - 1.0).abs() > 0.05 {
                Severity::Error
            } else {
                Severity::Warning
            };
            self.push(
                Finding::new(
                    severity,
                    "weights-not-normalized",
                    format!(
                        "{at}: weights of {} vertices do not sum to 1 (worst sum {worst_sum:.4})",
                        unnormalized.total
                    ),
                )
                .vertices(view.list(unnormalized)),
            );
        }
        if over_four.total > 0 {
            self.push(
                Finding::new(
                    Severity::Info,
                    "influences-over-4",
                    format!(
                        "{at}: {} vertices have more than 4 non-zero influences (engines limited to 4 drop the rest)",
                        over_four.total
                    ),
                )
                .vertices(view.list(over_four)),
            );
        }
        if duplicates.total > 0 {
            self.push(
                Finding::new(
                    Severity::Warning,
                    "joints-duplicate",
                    format!(
                        "{at}: {} vertices list the same joint twice with non-zero weights",
                        duplicates.total
                    ),
                )
                .vertices(view.list(duplicates)),
            );
        }
    }

    /// Influences beyond eight, and joint/weight sets without their partner.
    fn primitive_facts_findings(&mut self, view: &PrimitiveView) {
        let rig = self.rig;
        let facts = view.facts;
        let Some(facts) = facts else { return };
        let at = view.label(rig);
        if !facts.truncated_vertices.is_empty() {
            let mut set = VertexSet::new();
            for &v in &facts.truncated_vertices {
                set.add(v as usize);
            }
            self.push(
                Finding::new(
                    Severity::Warning,
                    "influences-over-8",
                    format!(
                        "{at}: {} vertices have more than 8 influences; those beyond JOINTS_1/WEIGHTS_1 are ignored (up to {:.3} of weight lost on one vertex)",
                        set.total, facts.truncated_weight_max
                    ),
                )
                .vertices(view.list(set)),
            );
        }
        for unpaired in &facts.unpaired_sets {
            self.push(Finding::new(
                Severity::Warning,
                "influences-unpaired",
                format!("{at}: {unpaired}; the set is ignored"),
            ));
        }
    }

    fn geometry_findings(&mut self, view: &PrimitiveView, primitive: &super::Primitive) {
        let mut bad = VertexSet::new();
        for (v, (p, n)) in primitive.positions.iter().zip(&primitive.normals).enumerate() {
            if !p.is_finite() || !n.is_finite() {
                bad.add(v);
            }
        }
        if bad.total > 0 {
            let at = view.label(self.rig);
            self.push(
                Finding::new(
                    Severity::Error,
                    "positions-not-finite",
                    format!("{at}: {} vertices have NaN or infinite positions or normals", bad.total),
                )
                .vertices(view.list(bad)),
            );
        }
    }

    fn skins(&mut self) -> Vec<SkinSummary> {
        let rig = self.rig;
        let mut summaries = Vec::new();
        for (s, skin) in rig.skins.iter().enumerate() {
            let skeleton = rig.facts.skin_skeletons.get(s).copied().flatten();
            let shared_hierarchy = skin.joints.iter().all(|&j| self.top[j] == self.top[skin.joints[0]]);
            let root = if shared_hierarchy {
                self.common_root(&skin.joints)
            } else {
                None
            };
            let users = std::mem::take(&mut self.users_of_skin[s]);

            // Joints with weight on some vertex, and joint indices beyond the skin.
            let mut used = vec![false; skin.joints.len()];
            let mut seen_meshes = std::collections::HashSet::new();
            for &i in &users {
                let mesh = rig.instances[i].mesh;
                if !seen_meshes.insert(mesh) {
                    continue;
                }
                for k in self.views_of_mesh.get(mesh).cloned().unwrap_or_default() {
                    let view = self.views[k];
                    if let Some(influences) = view.influences {
                        self.joint_range_findings(s, &view, influences, view.vertices, &mut used);
                    }
                }
            }
            let joints_used = used.iter().filter(|u| **u).count();
            if !users.is_empty() && joints_used < skin.joints.len() {
                let unused: Vec<usize> = (0..skin.joints.len())
                    .filter(|&j| !used[j])
                    .map(|j| skin.joints[j])
                    .collect();
                self.push(
                    Finding::new(
                        Severity::Info,
                        "joints-unused",
                        format!(
                            "skin '{}': {} of {} joints influence no vertex: {}",
                            skin.name,
                            unused.len(),
                            skin.joints.len(),
                            node_list(rig, &unused)
                        ),
                    )
                    .nodes(unused),
                );
            }
            if users.is_empty() {
                self.push(Finding::new(
                    Severity::Info,
                    "skin-unused",
                    format!("skin '{}' is not used by any mesh", skin.name),
                ));
            }
            if !shared_hierarchy {
                let mut tops: Vec<usize> = skin.joints.iter().map(|&j| self.top[j]).collect();
                tops.sort_unstable();
                tops.dedup();
                self.push(
                    Finding::new(
                        Severity::Error,
                        "skin-no-common-root",
                        format!(
                            "skin '{}': joints do not share one hierarchy; they hang under {} separate roots: {}",
                            skin.name,
                            tops.len(),
                            node_list(rig, &tops)
                        ),
                    )
                    .nodes(tops),
                );
            }
            if let Some(skeleton) = skeleton
                && skin.joints.iter().any(|&j| !self.is_ancestor_or_self(skeleton, j))
            {
                self.push(
                    Finding::new(
                        Severity::Warning,
                        "skin-skeleton-not-root",
                        format!(
                            "skin '{}': its skeleton node {} is not an ancestor of every joint",
                            skin.name,
                            node_label(rig, skeleton)
                        ),
                    )
                    .nodes([skeleton]),
                );
            }
            let mut sorted = skin.joints.clone();
            sorted.sort_unstable();
            let mut repeated: Vec<usize> = sorted.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
            repeated.dedup();
            if !repeated.is_empty() {
                self.push(
                    Finding::new(
                        Severity::Warning,
                        "skin-joint-repeated",
                        format!(
                            "skin '{}' lists {} node(s) more than once: {}",
                            skin.name,
                            repeated.len(),
                            node_list(rig, &repeated)
                        ),
                    )
                    .nodes(repeated),
                );
            }
            self.inverse_bind_findings(s);
            let rest_vs_bind = users.first().map(|&i| pose_deviation(rig, i, &self.rest_worlds));
            summaries.push(SkinSummary {
                name: skin.name.clone(),
                joints: skin.joints.len(),
                root,
                skeleton,
                shared_hierarchy,
                instances: users.len(),
                joints_used,
                rest_vs_bind,
            });
        }
        summaries
    }

    /// Joint indices beyond the skin's joint list; marks joints with weight in `used`.
    fn joint_range_findings(
        &mut self,
        s: usize,
        view: &PrimitiveView,
        influences: &Influences,
        vertices: usize,
        used: &mut [bool],
    ) {
        let rig = self.rig;
        let joint_count = used.len();
        let mut outside_weighted = VertexSet::new();
        let mut outside_unweighted = VertexSet::new();
        let mut worst = 0u16;
        for v in 0..vertices.min(influences.joints.len() / influences.sets.max(1)) {
            let mut weighted = false;
            let mut unweighted = false;
            for (joint, weight) in influences.of_vertex(v) {
                match used.get_mut(joint as usize) {
                    Some(flag) => *flag |= weight != 0.0 && weight.is_finite(),
                    None => {
                        worst = worst.max(joint);
                        if weight != 0.0 {
                            weighted = true;
                        } else {
                            unweighted = true;
                        }
                    }
                }
            }
            if weighted {
                outside_weighted.add(v);
            } else if unweighted {
                outside_unweighted.add(v);
            }
        }
        let skin = &rig.skins[s].name;
        let at = view.label(rig);
        if outside_weighted.total > 0 {
            self.push(
                Finding::new(
                    Severity::Error,
                    "joint-index-outside-skin",
                    format!(
                        "{at}: {} vertices give weight to joint indices beyond skin '{skin}' ({joint_count} joints; largest index {worst}); that weight is ignored",
                        outside_weighted.total
                    ),
                )
                .vertices(view.list(outside_weighted)),
            );
        }
        if outside_unweighted.total > 0 {
            self.push(
                Finding::new(
                    Severity::Warning,
                    "joint-index-outside-skin-unweighted",
                    format!(
                        "{at}: {} vertices name joint indices beyond skin '{skin}' ({joint_count} joints; largest index {worst}) with zero weight",
                        outside_unweighted.total
                    ),
                )
                .vertices(view.list(outside_unweighted)),
            );
        }
    }

    fn inverse_bind_findings(&mut self, s: usize) {
        let rig = self.rig;
        let skin = &rig.skins[s];
        let mut singular = Vec::new();
        let mut not_affine = Vec::new();
        let mut scale_or_shear = Vec::new();
        for (k, (ibm, &joint)) in skin.inverse_binds.iter().zip(&skin.joints).enumerate() {
            if !is_affine(ibm) {
                not_affine.push((k, joint));
                continue;
            }
            let det = Mat3::from_mat4(*ibm).determinant();
            let scale = ibm.x_axis.xyz().length() * ibm.y_axis.xyz().length() * ibm.z_axis.xyz().length();
            if !det.is_finite() || det.abs() <= 1e-9 * scale.max(1e-30) || scale == 0.0 {
                singular.push((k, joint));
                continue;
            }
            let bind = ibm.inverse();
            if has_shear(&bind) || has_nonuniform_scale(&bind) {
                scale_or_shear.push((k, joint));
            }
        }
        let list = |items: &[(usize, usize)]| {
            let mut names: Vec<String> = items
                .iter()
                .take(NAMED_NODES)
                .map(|&(k, j)| format!("{k} ({})", node_label(rig, j)))
                .collect();
            if items.len() > NAMED_NODES {
                names.push(format!("and {} more", items.len() - NAMED_NODES));
            }
            names.join(", ")
        };
        if !not_affine.is_empty() {
            self.push(
                Finding::new(
                    Severity::Error,
                    "inverse-bind-not-affine",
                    format!(
                        "skin '{}': {} inverse bind matrices are not affine (their last row is not 0 0 0 1): {}",
                        skin.name,
                        not_affine.len(),
                        list(&not_affine)
                    ),
                )
                .nodes(not_affine.iter().map(|&(_, j)| j)),
            );
        }
        if !singular.is_empty() {
            self.push(
                Finding::new(
                    Severity::Error,
                    "inverse-bind-not-invertible",
                    format!(
                        "skin '{}': {} inverse bind matrices cannot be inverted (determinant zero): {}",
                        skin.name,
                        singular.len(),
                        list(&singular)
                    ),
                )
                .nodes(singular.iter().map(|&(_, j)| j)),
            );
        }
        if !scale_or_shear.is_empty() {
            self.push(
                Finding::new(
                    Severity::Warning,
                    "bind-pose-scale-shear",
                    format!(
                        "skin '{}': {} joints have non-uniform scale or shear in the bind pose, which dual quaternion skinning cannot represent: {}",
                        skin.name,
                        scale_or_shear.len(),
                        list(&scale_or_shear)
                    ),
                )
                .nodes(scale_or_shear.iter().map(|&(_, j)| j)),
            );
        }
    }

    /// Nodes holding meshes: skin/mesh mismatches, transforms ignored by skinning, self joints.
    fn instance_findings(&mut self) {
        let rig = self.rig;
        for instance in &rig.instances {
            let mesh = &rig.meshes[instance.mesh];
            let node = node_label(rig, instance.node);
            let has_influences = mesh.primitives.iter().any(|p| p.influences.is_some());
            match instance.skin {
                Some(s) => {
                    let skin = &rig.skins[s];
                    if mesh.primitives.iter().any(|p| p.influences.is_none()) {
                        self.push(
                            Finding::new(
                                Severity::Error,
                                "skin-without-weights",
                                format!(
                                    "{node} has skin '{}', but mesh '{}' has primitives without JOINTS_0/WEIGHTS_0; they are drawn unskinned",
                                    skin.name, mesh.name
                                ),
                            )
                            .nodes([instance.node]),
                        );
                    }
                    let world = self.rest_worlds[instance.node];
                    if !world.abs_diff_eq(Mat4::IDENTITY, 1e-5) {
                        self.push(
                            Finding::new(
                                Severity::Warning,
                                "skinned-mesh-transform",
                                format!(
                                    "{node} holds skinned mesh '{}' and has a transform (its own or its parents'); glTF ignores it for skinned meshes, so the mesh appears where the joints put it",
                                    mesh.name
                                ),
                            )
                            .nodes([instance.node]),
                        );
                    }
                    if skin.joints.contains(&instance.node) {
                        self.push(
                            Finding::new(
                                Severity::Warning,
                                "skinned-mesh-is-joint",
                                format!(
                                    "{node} holds mesh '{}' and is itself a joint of its skin '{}'; moving that joint moves the mesh's own space",
                                    mesh.name, skin.name
                                ),
                            )
                            .nodes([instance.node]),
                        );
                    }
                }
                None if has_influences => self.push(
                    Finding::new(
                        Severity::Warning,
                        "weights-without-skin",
                        format!(
                            "mesh '{}' has joints and weights, but {node} draws it without a skin; it is drawn unskinned",
                            mesh.name
                        ),
                    )
                    .nodes([instance.node]),
                ),
                None => {}
            }
        }
    }

    fn clips(&mut self) -> Vec<ClipSummary> {
        let rig = self.rig;
        let first_skinned = rig.instances.iter().position(|i| i.skin.is_some());
        let mut summaries = Vec::new();
        let mut locals: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        for (c, clip) in rig.clips.iter().enumerate() {
            let mut animated: Vec<usize> = clip.channels.iter().map(|ch| ch.node).collect();
            animated.sort_unstable();
            animated.dedup();
            let mut interpolations = Vec::new();
            for (mode, name) in [
                (Interpolation::Step, "STEP"),
                (Interpolation::Linear, "LINEAR"),
                (Interpolation::CubicSpline, "CUBICSPLINE"),
            ] {
                if clip.channels.iter().any(|ch| ch.interpolation == mode) {
                    interpolations.push(name);
                }
            }
            self.key_findings(c);
            if !rig.skins.is_empty() {
                let outside: Vec<usize> = animated
                    .iter()
                    .copied()
                    .filter(|&n| !self.is_joint.get(n).copied().unwrap_or(false))
                    .collect();
                if !outside.is_empty() {
                    self.push(
                        Finding::new(
                            Severity::Info,
                            "channel-targets-non-joint",
                            format!(
                                "clip '{}' animates {} node(s) that are joints of no skin: {}",
                                clip.name,
                                outside.len(),
                                node_list(rig, &outside)
                            ),
                        )
                        .nodes(outside)
                        .clip(c),
                    );
                }
            }
            let cost = rig.nodes.len() + clip.channels.len() + first_skinned.map_or(0, |i| self.joints_of(i));
            let first_skinned = first_skinned.filter(|_| self.afford(cost, "first-frame poses"));
            let first_frame_vs_bind = first_skinned.map(|i| {
                for (local, node) in locals.iter_mut().zip(&rig.nodes) {
                    *local = node.rest;
                }
                for channel in &clip.channels {
                    let Some(local) = locals.get_mut(channel.node) else {
                        continue;
                    };
                    let v = sample_channel(channel, 0.0, &mut 0);
                    match channel.property {
                        Property::Translation => local.translation = v.truncate(),
                        Property::Rotation => local.rotation = Quat::from_vec4(v),
                        Property::Scale => local.scale = v.truncate(),
                    }
                }
                pose_deviation(rig, i, &worlds_of(rig, &locals))
            });
            if let Some(d) = first_frame_vs_bind
                && !d.is_bind_pose()
            {
                self.push(
                    Finding::new(
                        Severity::Info,
                        "first-frame-not-bind-pose",
                        format!(
                            "clip '{}': its first frame differs from the bind pose: {}",
                            clip.name,
                            describe_deviation(rig, &d)
                        ),
                    )
                    .nodes([d.joint])
                    .clip(c),
                );
            }
            summaries.push(ClipSummary {
                name: clip.name.clone(),
                duration: clip.duration,
                channels: clip.channels.len(),
                interpolations,
                animated_nodes: animated.len(),
                first_frame_vs_bind,
            });
        }
        summaries
    }

    /// Keys: empty clips, repeated or negative times, quaternions far from unit length.
    fn key_findings(&mut self, c: usize) {
        let rig = self.rig;
        let clip = &rig.clips[c];
        if clip.channels.is_empty() {
            self.push(
                Finding::new(
                    Severity::Warning,
                    "clip-empty",
                    if self.clips_with_dropped.get(c).copied().unwrap_or(false) {
                        format!("clip '{}' has no channel that can be played", clip.name)
                    } else {
                        format!("clip '{}' has no channels", clip.name)
                    },
                )
                .clip(c),
            );
            return;
        }
        let facts = rig.facts.channels.get(c);
        let gltf_index = |k: usize| facts.and_then(|f| f.get(k)).map_or(k, |f| f.gltf_index);
        let mut repeated = Vec::new();
        let mut negative = Vec::new();
        for (k, channel) in clip.channels.iter().enumerate() {
            if let Some(i) = channel.times.windows(2).position(|w| w[1] <= w[0]) {
                repeated.push((k, i + 1, channel.times[i + 1]));
            }
            if channel.times.first().is_some_and(|&t| t < 0.0) {
                negative.push(k);
            }
            let Some((key, length)) = facts.and_then(|f| f.get(k)).and_then(|f| f.worst_quaternion) else {
                continue;
            };
            let target = node_label(rig, channel.node);
            if length < 1e-6 {
                self.push(
                    Finding::new(
                        Severity::Error,
                        "quaternion-zero",
                        format!(
                            "clip '{}' channel {} ({target} rotation): key {key} is a zero quaternion, played as no rotation",
                            clip.name,
                            gltf_index(k)
                        ),
                    )
                    .nodes([channel.node])
                    .clip(c),
                );
            } else if (length - 1.0).abs() > 0.01 {
                self.push(
                    Finding::new(
                        Severity::Warning,
                        "quaternion-not-unit",
                        format!(
                            "clip '{}' channel {} ({target} rotation): key {key} has length {length:.4}, far from 1 (normalized when played)",
                            clip.name,
                            gltf_index(k)
                        ),
                    )
                    .nodes([channel.node])
                    .clip(c),
                );
            }
        }
        if let Some(&(k, key, time)) = repeated.first() {
            let nodes: Vec<usize> = repeated.iter().map(|&(k, ..)| clip.channels[k].node).collect();
            self.push(
                Finding::new(
                    Severity::Error,
                    "keys-not-increasing",
                    format!(
                        "clip '{}': key times of {} channel(s) are not strictly increasing (first: channel {}, key {key} repeats time {time})",
                        clip.name,
                        repeated.len(),
                        gltf_index(k)
                    ),
                )
                .nodes(nodes)
                .clip(c),
            );
        }
        if !negative.is_empty() {
            let nodes: Vec<usize> = negative.iter().map(|&k| clip.channels[k].node).collect();
            self.push(
                Finding::new(
                    Severity::Error,
                    "keys-negative-time",
                    format!(
                        "clip '{}': {} channel(s) have keys before time 0 (first: channel {}); playback starts at 0",
                        clip.name,
                        negative.len(),
                        gltf_index(negative[0])
                    ),
                )
                .nodes(nodes)
                .clip(c),
            );
        }
        if clip.duration <= 0.0 {
            self.push(
                Finding::new(
                    Severity::Info,
                    "clip-zero-duration",
                    format!("clip '{}' lasts 0 seconds (a single pose)", clip.name),
                )
                .clip(c),
            );
        }
    }
}

/// Every primitive the file has, drawn or not, in mesh order.
fn primitive_views(rig: &Rig) -> Vec<PrimitiveView<'_>> {
    let mut views = Vec::new();
    for (m, mesh) in rig.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let facts = rig.facts.primitives.get(m).and_then(|f| f.get(p));
            views.push(PrimitiveView {
                mesh: m,
                primitive: Some(p),
                gltf_index: facts.map_or(p, |f| f.gltf_index),
                influences: primitive.influences.as_ref(),
                weight_quantum: facts.map_or(0.0, |f| f.weight_quantum),
                facts,
                vertices: primitive.vertex_count(),
                mode: 4,
                triangles: primitive.indices.len() / 3,
            });
        }
    }
    for skipped in &rig.facts.skipped_primitives {
        if skipped.mesh >= rig.meshes.len() {
            continue;
        }
        views.push(PrimitiveView {
            mesh: skipped.mesh,
            primitive: None,
            gltf_index: skipped.facts.gltf_index,
            influences: skipped.influences.as_ref(),
            weight_quantum: skipped.facts.weight_quantum,
            facts: Some(&skipped.facts),
            vertices: skipped.vertex_count,
            mode: skipped.facts.mode,
            triangles: 0,
        });
    }
    views.sort_by_key(|v| (v.mesh, v.gltf_index));
    views
}

/// World matrix of every node from local transforms (parents come first).
fn worlds_of(rig: &Rig, locals: &[Trs]) -> Vec<Mat4> {
    let mut worlds: Vec<Mat4> = Vec::with_capacity(rig.nodes.len());
    for (i, node) in rig.nodes.iter().enumerate() {
        let local = locals[i].to_mat4();
        let world = match node.parent.filter(|&p| p < i) {
            Some(p) => worlds[p] * local,
            None => local,
        };
        worlds.push(world);
    }
    worlds
}

/// How far the joints of instance `i`'s skin are from the bind pose when the nodes are at
/// `worlds`. glTF skins in world space (`world(joint) · inverseBind`, the mesh node's own
/// transform ignored), so the bind pose is where each of those products is the identity: every
/// joint back at the place its inverse bind matrix undoes.
fn pose_deviation(rig: &Rig, i: usize, worlds: &[Mat4]) -> Deviation {
    let instance = rig.instances[i];
    let skin = &rig.skins[instance.skin.unwrap_or(0)];
    let mut size = mesh_size(rig, instance.mesh);
    if size <= 0.0 {
        size = 1.0;
    }
    let mut deviation = Deviation {
        distance: 0.0,
        relative: 0.0,
        joint: skin.joints[0],
        degrees: 0.0,
        rotated_joint: skin.joints[0],
    };
    for (&joint, ibm) in skin.joints.iter().zip(&skin.inverse_binds) {
        let skinning = worlds[joint] * *ibm;
        let distance = worlds[joint].w_axis.xyz().distance(ibm.inverse().w_axis.xyz());
        if distance > deviation.distance {
            deviation.distance = distance;
            deviation.joint = joint;
        }
        let degrees = rotation_degrees(&skinning);
        if degrees > deviation.degrees {
            deviation.degrees = degrees;
            deviation.rotated_joint = joint;
        }
    }
    deviation.relative = deviation.distance / size;
    deviation
}

/// Angle of the rotation in a matrix's 3×3 part (scale removed), in degrees.
fn rotation_degrees(m: &Mat4) -> f32 {
    let (Some(x), Some(y), Some(z)) = (
        m.x_axis.xyz().try_normalize(),
        m.y_axis.xyz().try_normalize(),
        m.z_axis.xyz().try_normalize(),
    ) else {
        return 0.0;
    };
    let rotation = Quat::from_mat3(&Mat3::from_cols(x, y, z));
    if !rotation.is_finite() {
        return 0.0;
    }
    (2.0 * rotation.w.abs().min(1.0).acos()).to_degrees()
}

/// Diagonal of the bounding box of a mesh's bind-pose vertices.
fn mesh_size(rig: &Rig, mesh: usize) -> f32 {
    let mut min = Vec3::splat(f32::INFINITY);
    let mut max = Vec3::splat(f32::NEG_INFINITY);
    for p in rig.meshes[mesh].primitives.iter().flat_map(|p| &p.positions) {
        if p.is_finite() {
            min = min.min(*p);
            max = max.max(*p);
        }
    }
    if min.x > max.x { 0.0 } else { (max - min).length() }
}

/// Depth-first preorder numbers and subtree sizes of the node hierarchy.
fn preorder(rig: &Rig) -> (Vec<usize>, Vec<usize>) {
    let n = rig.nodes.len();
    let mut children = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (i, node) in rig.nodes.iter().enumerate() {
        match node.parent.filter(|&p| p < i) {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let mut pre = vec![0; n];
    let mut next = 0;
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(node) = stack.pop() {
        pre[node] = next;
        next += 1;
        stack.extend(children[node].iter().rev());
    }
    // Parents come before children in the rig's order, so children's sizes are final first.
    let mut size = vec![1; n];
    for i in (0..n).rev() {
        if let Some(p) = rig.nodes[i].parent.filter(|&p| p < i) {
            size[p] += size[i];
        }
    }
    (pre, size)
}

/// Most and mean non-zero influences per vertex.
fn influence_counts(influences: &Influences) -> (usize, f32) {
    let sets = influences.sets.max(1);
    let vertices = influences.weights.len() / sets;
    if vertices == 0 {
        return (0, 0.0);
    }
    let mut max = 0;
    let mut total = 0usize;
    for v in 0..vertices {
        let count = influences.of_vertex(v).filter(|(_, w)| *w != 0.0).count();
        max = max.max(count);
        total += count;
    }
    (max, total as f32 / vertices as f32)
}

/// Whether the bottom row of a matrix is 0 0 0 1 (within rounding).
fn is_affine(m: &Mat4) -> bool {
    let row = m.row(3);
    row.truncate().abs().max_element() <= 1e-5 && (row.w - 1.0).abs() <= 1e-5
}

fn has_shear(m: &Mat4) -> bool {
    let (Some(x), Some(y), Some(z)) = (
        m.x_axis.xyz().try_normalize(),
        m.y_axis.xyz().try_normalize(),
        m.z_axis.xyz().try_normalize(),
    ) else {
        return false;
    };
    x.dot(y).abs() > 1e-3 || y.dot(z).abs() > 1e-3 || z.dot(x).abs() > 1e-3
}

fn has_nonuniform_scale(m: &Mat4) -> bool {
    let lengths = Vec3::new(
        m.x_axis.xyz().length(),
        m.y_axis.xyz().length(),
        m.z_axis.xyz().length(),
    );
    lengths.min_element() > 0.0 && lengths.max_element() / lengths.min_element() - 1.0 > 1e-3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shear_and_scale_are_told_apart() {
        let uniform = Mat4::from_scale_rotation_translation(Vec3::splat(2.0), Quat::from_rotation_z(0.7), Vec3::X);
        assert!(!has_shear(&uniform) && !has_nonuniform_scale(&uniform));
        let stretched = Mat4::from_scale(Vec3::new(1.0, 2.0, 1.0));
        assert!(!has_shear(&stretched) && has_nonuniform_scale(&stretched));
        let mut sheared = Mat4::IDENTITY;
        sheared.y_axis.x = 0.5;
        assert!(has_shear(&sheared));
        let mut projective = Mat4::IDENTITY;
        projective.x_axis.w = 0.25;
        assert!(!is_affine(&projective) && is_affine(&uniform));
    }

    #[test]
    fn rotation_angle_ignores_scale() {
        let m = Mat4::from_scale_rotation_translation(Vec3::new(3.0, 1.0, 2.0), Quat::from_rotation_y(0.5), Vec3::ZERO);
        assert!((rotation_degrees(&m) - 0.5f32.to_degrees()).abs() < 1e-3);
        assert_eq!(rotation_degrees(&Mat4::IDENTITY), 0.0);
    }
}
