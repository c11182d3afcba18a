//! The analysis behind a report: facts about the hierarchy computed once, a work allowance for
//! the checks whose cost grows with two sizes, and the import and node checks. The checks of
//! meshes, skins and clips extend it in their own modules.

use super::*;
use crate::rig::FbxFindingKind;

/// Vertex indices matching a condition, capped, with the exact total.
pub(super) struct VertexSet {
    pub(super) listed: Vec<u32>,
    pub(super) total: usize,
}

impl VertexSet {
    pub(super) fn new() -> VertexSet {
        VertexSet {
            listed: Vec::new(),
            total: 0,
        }
    }

    pub(super) fn add(&mut self, v: usize) {
        if self.listed.len() < MAX_LISTED_VERTICES {
            self.listed.push(v as u32);
        }
        self.total += 1;
    }
}

/// A primitive as the analysis sees it: drawn or not, with its influences.
#[derive(Clone, Copy)]
pub(super) struct PrimitiveView<'r> {
    pub(super) mesh: usize,
    pub(super) primitive: Option<usize>,
    pub(super) gltf_index: usize,
    pub(super) influences: Option<&'r Influences>,
    pub(super) weight_quantum: f32,
    pub(super) facts: Option<&'r PrimitiveFacts>,
    pub(super) vertices: usize,
    pub(super) mode: u32,
    pub(super) triangles: usize,
}

impl PrimitiveView<'_> {
    pub(super) fn list(&self, set: VertexSet) -> VertexList {
        VertexList {
            mesh: self.mesh,
            primitive: self.primitive,
            gltf_primitive: self.gltf_index,
            vertices: set.listed,
            total: set.total,
        }
    }

    pub(super) fn label(&self, rig: &Rig) -> String {
        format!("mesh '{}' primitive {}", rig.meshes[self.mesh].name, self.gltf_index)
    }
}

pub(super) struct Analysis<'r> {
    pub(super) rig: &'r Rig,
    pub(super) findings: Vec<Finding>,
    /// Top-level ancestor of every node.
    pub(super) top: Vec<usize>,
    /// Depth-first preorder number and subtree size of every node: `a` is an ancestor of (or is)
    /// `b` when `pre[a] <= pre[b] < pre[a] + size[a]`.
    pub(super) pre: Vec<usize>,
    pub(super) size: Vec<usize>,
    /// Rest-pose world matrices.
    pub(super) rest_worlds: Vec<Mat4>,
    /// The whole rig's size in the bind pose (see [`bind_pose_size`]), what joint moves are
    /// measured against.
    pub(super) bind_size: f32,
    /// Every primitive, drawn or not, in mesh order, and which of them belong to each mesh.
    pub(super) views: Vec<PrimitiveView<'r>>,
    pub(super) views_of_mesh: Vec<Vec<usize>>,
    /// Mesh instances per skin.
    pub(super) users_of_skin: Vec<Vec<usize>>,
    /// Clips that lost channels on import.
    pub(super) clips_with_dropped: Vec<bool>,
    /// Steps left for the checks whose cost grows with the product of two sizes (clips × nodes,
    /// skins × hierarchy depth); past it they are skipped and the report says so.
    pub(super) work_left: u64,
    pub(super) skipped_checks: Vec<&'static str>,
    pub(super) limits: super::ReportLimits,
}

/// Work allowance of the optional checks, in node visits.
pub(super) const WORK_LIMIT: u64 = 5_000_000;

impl<'r> Analysis<'r> {
    pub(super) fn new(rig: &'r Rig) -> Analysis<'r> {
        let n = rig.nodes.len();
        let mut top = (0..n).collect::<Vec<_>>();
        // Parents come before their children, so one pass suffices.
        for (i, node) in rig.nodes.iter().enumerate() {
            if let Some(p) = node.parent.filter(|&p| p < i) {
                top[i] = top[p];
            }
        }
        let (pre, size) = preorder(rig);
        let rest: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        let rest_worlds = worlds_of(rig, &rest);
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
            top,
            pre,
            size,
            bind_size: bind_pose_size(rig, &rest_worlds),
            rest_worlds,
            views,
            views_of_mesh,
            users_of_skin,
            work_left: WORK_LIMIT,
            skipped_checks: Vec::new(),
            limits: super::ReportLimits::default(),
        }
    }

    /// Joints of the skin instance `i` is drawn with.
    pub(super) fn joints_of(&self, i: usize) -> usize {
        let skin = self.rig.instances[i].skin;
        skin.and_then(|s| self.rig.skins.get(s)).map_or(0, |s| s.joints.len())
    }

    pub(super) fn is_ancestor_or_self(&self, ancestor: usize, node: usize) -> bool {
        self.pre[ancestor] <= self.pre[node] && self.pre[node] < self.pre[ancestor] + self.size[ancestor]
    }

    /// The deepest node that is an ancestor of, or is, every node in `joints`: the lowest common
    /// ancestor of the joints first and last in depth-first order, found by walking up from one.
    pub(super) fn common_root(&mut self, joints: &[usize]) -> Option<usize> {
        let low = *joints.iter().min_by_key(|&&j| self.pre[j])?;
        let high = *joints.iter().max_by_key(|&&j| self.pre[j])?;
        if !self.afford(self.rig.hierarchy().depth[low] as usize + 1, "common roots") {
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
    pub(super) fn afford(&mut self, steps: usize, check: &'static str) -> bool {
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

    pub(super) fn push(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    pub(super) fn run(mut self) -> RigReport {
        let rig = self.rig;
        self.import_findings();
        self.node_findings();
        let meshes = self.meshes();
        let skins = self.skins();
        self.symmetry_findings();
        self.instance_findings();
        let clips = self.clips();
        if !self.skipped_checks.is_empty() {
            let skipped = self.skipped_checks.join(", ");
            self.push(Finding::new(
                Severity::Info,
                FindingCode::ReportIncomplete,
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
    pub(super) fn import_findings(&mut self) {
        let rig = self.rig;
        for dropped in &rig.facts.dropped_channels {
            let clip = rig.clips.get(dropped.clip).map_or("?", |c| c.name.as_str());
            let (severity, code) = if dropped.unsupported {
                (Severity::Info, FindingCode::ChannelNotPlayed)
            } else {
                (Severity::Error, FindingCode::ChannelLeftOut)
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
        for pointer in &rig.facts.pointer_findings {
            let (severity, code) = if pointer.invalid {
                (Severity::Error, FindingCode::ChannelLeftOut)
            } else {
                (Severity::Info, FindingCode::ChannelNotPlayed)
            };
            self.push(Finding::new(
                severity,
                code,
                format!(
                    "animation {} channel {} (pointer '{}') is not played: {}",
                    pointer.animation, pointer.channel, pointer.pointer, pointer.reason
                ),
            ));
        }
        for problem in &rig.facts.data_errors {
            self.push(Finding::new(Severity::Error, FindingCode::FileData, problem.clone()));
        }
        for note in &rig.facts.notes {
            self.push(Finding::new(Severity::Info, FindingCode::ImportNote, note.clone()));
        }
        for fbx in &rig.facts.fbx_findings {
            let (severity, code) = fbx_finding_code(fbx.kind);
            self.push(Finding::new(severity, code, fbx.message.clone()).nodes(fbx.nodes.iter().copied()));
        }
        for warning in &rig.warnings {
            self.push(Finding::new(Severity::Warning, FindingCode::Import, warning.clone()));
        }
        for skipped in &rig.facts.skipped_primitives {
            let mesh = rig.meshes.get(skipped.mesh).map_or("?", |m| m.name.as_str());
            self.push(Finding::new(
                Severity::Info,
                FindingCode::PrimitiveNotDrawn,
                format!(
                    "mesh '{mesh}' primitive {} is not a triangle list (mode {}): not drawn",
                    skipped.facts.gltf_index, skipped.facts.mode
                ),
            ));
        }
    }

    /// Node matrices that TRS cannot represent.
    pub(super) fn node_findings(&mut self) {
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
                    FindingCode::NodeMatrixNotTrs,
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
}

/// How the report rates each kind of FBX finding.
fn fbx_finding_code(kind: FbxFindingKind) -> (Severity, FindingCode) {
    use FbxFindingKind as K;
    match kind {
        K::SourceSystem => (Severity::Info, FindingCode::FbxSourceSystem),
        K::BindPoseMissing => (Severity::Info, FindingCode::FbxBindPoseMissing),
        K::BindPoseInconsistent => (Severity::Warning, FindingCode::FbxBindPoseInconsistent),
        K::ClusterNotBone => (Severity::Info, FindingCode::FbxClusterNotBone),
        K::InheritedNonUniformScale => (Severity::Warning, FindingCode::FbxInheritedScale),
        K::InfluencesOver8 => (Severity::Warning, FindingCode::FbxInfluencesOver8),
        K::TextureNotFound => (Severity::Warning, FindingCode::FbxTextureNotFound),
    }
}
