//! Skins: joints, their ranges, inverse bind matrices, and the instances that use them.

use super::*;

impl<'r> Analysis<'r> {
    pub(super) fn skins(&mut self) -> Vec<SkinSummary> {
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
            let used = self.joints_with_weight(s, &users);
            let joints_used = used.iter().filter(|u| **u).count();
            self.usage_findings(s, &users, &used);
            self.hierarchy_findings(s, shared_hierarchy, skeleton);
            self.inverse_bind_findings(s);
            let rest_vs_bind = users
                .first()
                .map(|&i| pose_deviation(rig, i, &self.rest_worlds, self.bind_size));
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

    /// Which joints of skin `s` carry weight on some vertex of the meshes its instances `users`
    /// draw, each mesh read once (with findings for joint indices beyond the skin).
    fn joints_with_weight(&mut self, s: usize, users: &[usize]) -> Vec<bool> {
        let rig = self.rig;
        let mut used = vec![false; rig.skins[s].joints.len()];
        let mut seen_meshes = std::collections::HashSet::new();
        for &i in users {
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
        used
    }

    /// Joints of skin `s` that move no vertex although instances `users` draw with it, and a
    /// skin no instance uses.
    fn usage_findings(&mut self, s: usize, users: &[usize], used: &[bool]) {
        let rig = self.rig;
        let skin = &rig.skins[s];
        let joints_used = used.iter().filter(|u| **u).count();
        if !users.is_empty() && joints_used < skin.joints.len() {
            let unused: Vec<usize> = (0..skin.joints.len())
                .filter(|&j| !used[j])
                .map(|j| skin.joints[j])
                .collect();
            self.push(
                Finding::new(
                    Severity::Info,
                    FindingCode::JointsUnused,
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
                FindingCode::SkinUnused,
                format!("skin '{}' is not used by any mesh", skin.name),
            ));
        }
    }

    /// Skin `s`'s joints under more than one root (unless `shared_hierarchy`), its `skeleton`
    /// node not above every joint, and nodes it lists more than once.
    fn hierarchy_findings(&mut self, s: usize, shared_hierarchy: bool, skeleton: Option<usize>) {
        let rig = self.rig;
        let skin = &rig.skins[s];
        if !shared_hierarchy {
            let mut tops: Vec<usize> = skin.joints.iter().map(|&j| self.top[j]).collect();
            tops.sort_unstable();
            tops.dedup();
            self.push(
                Finding::new(
                    Severity::Error,
                    FindingCode::SkinNoCommonRoot,
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
                    FindingCode::SkinSkeletonNotRoot,
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
                    FindingCode::SkinJointRepeated,
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
    }

    /// Joint indices beyond the skin's joint list; marks joints with weight in `used`.
    pub(super) fn joint_range_findings(
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
                    FindingCode::JointIndexOutsideSkin,
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
                    FindingCode::JointIndexOutsideSkinUnweighted,
                    format!(
                        "{at}: {} vertices name joint indices beyond skin '{skin}' ({joint_count} joints; largest index {worst}) with zero weight",
                        outside_unweighted.total
                    ),
                )
                .vertices(view.list(outside_unweighted)),
            );
        }
    }

    pub(super) fn inverse_bind_findings(&mut self, s: usize) {
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
                    FindingCode::InverseBindNotAffine,
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
                    FindingCode::InverseBindNotInvertible,
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
                    FindingCode::BindPoseScaleShear,
                    format!(
                        "skin '{}': {} joints have non-uniform scale or shear in the bind pose: a joint that turns under such a scale gets a sheared palette matrix, which dual quaternion skinning cannot represent (it keeps a scale only along the mesh's axes): {}",
                        skin.name,
                        scale_or_shear.len(),
                        list(&scale_or_shear)
                    ),
                )
                .nodes(scale_or_shear.iter().map(|&(_, j)| j)),
            );
        }
    }

    /// Vertices whose weights differ from their mirror vertex's, left and right joints swapped,
    /// and vertices with no mirror vertex (unmatched topology); only when left/right joint names
    /// and their bind positions give a mirror plane.
    pub(super) fn symmetry_findings(&mut self) {
        use crate::audit::symmetry::{SymmetryOptions, symmetry};
        let rig = self.rig;
        let options = SymmetryOptions::default();
        let report = symmetry(rig, &options);
        if report.plane.is_none() {
            return;
        }
        // Per (mesh, glTF primitive): asymmetric vertices and the largest difference, and
        // unmatched vertices.
        type Lists = (Vec<u32>, f32, Vec<u32>);
        let mut by_primitive: std::collections::BTreeMap<(usize, usize), Lists> = Default::default();
        for a in &report.asymmetric_vertices {
            let entry = by_primitive.entry((a.mesh, a.primitive)).or_default();
            entry.0.push(a.vertex);
            entry.1 = entry.1.max(a.difference);
        }
        for u in &report.unmatched {
            by_primitive.entry((u.mesh, u.primitive)).or_default().2.push(u.vertex);
        }
        let listed_all = report.unmatched.len() == report.unmatched_vertices;
        for ((mesh, gltf_primitive), (asymmetric, worst, unmatched)) in by_primitive {
            let name = rig.meshes.get(mesh).map_or("?", |m| m.name.as_str());
            let primitive = rig.facts.primitive_of_gltf(mesh, gltf_primitive);
            // The vertices as a finding's list, and how many there are.
            let list = |mut vertices: Vec<u32>| {
                vertices.sort_unstable();
                let mut set = VertexSet::new();
                for v in vertices {
                    set.add(v as usize);
                }
                let total = set.total;
                let list = VertexList {
                    mesh,
                    primitive,
                    gltf_primitive,
                    vertices: set.listed,
                    total,
                };
                (total, list)
            };
            if !asymmetric.is_empty() {
                let (total, vertices) = list(asymmetric);
                self.push(
                    Finding::new(
                        Severity::Warning,
                        FindingCode::WeightsAsymmetric,
                        format!(
                            "mesh '{name}' primitive {gltf_primitive}: {total} vertices have weights that differ from their mirror vertex's (left and right joints swapped) by more than {} (at most {worst:.2}); `rigscope audit` lists the pairs",
                            options.threshold
                        ),
                    )
                    .vertices(vertices),
                );
            }
            if !unmatched.is_empty() {
                let (total, vertices) = list(unmatched);
                let at_least = if listed_all { "" } else { "at least " };
                self.push(
                    Finding::new(
                        Severity::Info,
                        FindingCode::MirrorUnmatched,
                        format!(
                            "mesh '{name}' primitive {gltf_primitive}: {at_least}{total} vertices have no mirror vertex in their primitive (unmatched topology); their weights are not compared or mirrored"
                        ),
                    )
                    .vertices(vertices),
                );
            }
        }
    }

    /// Nodes holding meshes: skin/mesh mismatches, transforms ignored by skinning, self joints.
    pub(super) fn instance_findings(&mut self) {
        let rig = self.rig;
        if rig.instances.is_empty() {
            let bones = rig.hierarchy().bones.iter().filter(|&&b| b).count();
            self.push(Finding::new(
                Severity::Info,
                FindingCode::NoMesh,
                format!(
                    "the file has no mesh: its skeleton ({bones} of {} nodes) is drawn as bones, with {} clip(s)",
                    rig.nodes.len(),
                    rig.clips.len()
                ),
            ));
        }
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
                                FindingCode::SkinWithoutWeights,
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
                                FindingCode::SkinnedMeshTransform,
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
                                FindingCode::SkinnedMeshIsJoint,
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
                        FindingCode::WeightsWithoutSkin,
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
}
