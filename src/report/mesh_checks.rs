//! Meshes and primitives: weights, influences, what the importer noted, geometry.

use super::*;

impl<'r> Analysis<'r> {
    pub(super) fn meshes(&mut self) -> Vec<MeshSummary> {
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
    pub(super) fn weight_findings(&mut self, view: &PrimitiveView, influences: &Influences, vertices: usize) {
        let rig = self.rig;
        let complete = influences.joints.len() >= vertices * influences.sets
            && influences.weights.len() >= vertices * influences.sets;
        if !complete {
            return;
        }
        let WeightScan {
            unnormalized,
            worst_sum,
            negative,
            not_finite,
            all_zero,
            over_four,
            duplicates,
        } = WeightScan::of(influences, vertices, 1e-3 + 4.0 * view.weight_quantum);
        let at = view.label(rig);
        if not_finite.total > 0 {
            self.push(
                Finding::new(
                    Severity::Error,
                    FindingCode::WeightsNotFinite,
                    format!("{at}: {} vertices have NaN or infinite weights", not_finite.total),
                )
                .vertices(view.list(not_finite)),
            );
        }
        if negative.total > 0 {
            self.push(
                Finding::new(
                    Severity::Error,
                    FindingCode::WeightsNegative,
                    format!("{at}: {} vertices have negative weights", negative.total),
                )
                .vertices(view.list(negative)),
            );
        }
        if all_zero.total > 0 {
            self.push(
                Finding::new(
                    Severity::Error,
                    FindingCode::WeightsAllZero,
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
                    FindingCode::WeightsNotNormalized,
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
                    FindingCode::InfluencesOver4,
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
                    FindingCode::JointsDuplicate,
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
    pub(super) fn primitive_facts_findings(&mut self, view: &PrimitiveView) {
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
                    FindingCode::InfluencesOver8,
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
                FindingCode::InfluencesUnpaired,
                format!("{at}: {unpaired}; the set is ignored"),
            ));
        }
    }

    pub(super) fn geometry_findings(&mut self, view: &PrimitiveView, primitive: &crate::rig::Primitive) {
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
                    FindingCode::PositionsNotFinite,
                    format!("{at}: {} vertices have NaN or infinite positions or normals", bad.total),
                )
                .vertices(view.list(bad)),
            );
        }
    }
}

/// The vertices each weight check flags, found in one pass over a primitive's influences.
struct WeightScan {
    /// Sums off 1 by more than the tolerance, and the sum furthest off.
    unnormalized: VertexSet,
    worst_sum: f32,
    negative: VertexSet,
    not_finite: VertexSet,
    all_zero: VertexSet,
    over_four: VertexSet,
    /// The same joint listed twice with non-zero weights.
    duplicates: VertexSet,
}

impl WeightScan {
    fn of(influences: &Influences, vertices: usize, tolerance: f32) -> WeightScan {
        let mut scan = WeightScan {
            unnormalized: VertexSet::new(),
            worst_sum: 1.0,
            negative: VertexSet::new(),
            not_finite: VertexSet::new(),
            all_zero: VertexSet::new(),
            over_four: VertexSet::new(),
            duplicates: VertexSet::new(),
        };
        for v in 0..vertices {
            scan.vertex(influences, v, tolerance);
        }
        scan
    }

    fn vertex(&mut self, influences: &Influences, v: usize, tolerance: f32) {
        let mut sum = 0.0f32;
        let mut nonzero = 0;
        let mut has_negative = false;
        let mut used = [u16::MAX; 8];
        let mut used_len = 0;
        let mut duplicate = false;
        for (joint, weight) in influences.of_vertex(v) {
            if !weight.is_finite() {
                self.not_finite.add(v);
                return;
            }
            sum += weight;
            has_negative |= weight < 0.0;
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
        if has_negative {
            self.negative.add(v);
        }
        if nonzero == 0 {
            self.all_zero.add(v);
        } else if (sum - 1.0).abs() > tolerance {
            self.unnormalized.add(v);
            if (sum - 1.0).abs() > (self.worst_sum - 1.0).abs() {
                self.worst_sum = sum;
            }
        }
        if nonzero > 4 {
            self.over_four.add(v);
        }
        if duplicate {
            self.duplicates.add(v);
        }
    }
}
