//! The report as text for a terminal and as one JSON document.

use super::*;
use std::fmt::Write;

impl RigReport {
    /// One line per fact and finding, for a terminal.
    pub fn to_text(&self, rig: &Rig) -> String {
        let mut out = String::new();
        let w = &mut out;
        self.write_counts(w);
        self.write_skins(w, rig);
        self.write_meshes(w);
        self.write_clips(w, rig);
        self.write_materials(w);
        self.write_findings(w);
        let _ = writeln!(w, "\nReport computed in {:.2} ms", self.seconds * 1e3);
        out
    }

    fn write_counts(&self, w: &mut String) {
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
    }

    fn write_skins(&self, w: &mut String, rig: &Rig) {
        let node = |n: usize| node_label(rig, n);
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
    }

    fn write_meshes(&self, w: &mut String) {
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
    }

    fn write_clips(&self, w: &mut String, rig: &Rig) {
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
    }

    /// The materials and the textures they read.
    fn write_materials(&self, w: &mut String) {
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
    }

    fn write_findings(&self, w: &mut String) {
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
                "code": f.code.as_str(),
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

pub(super) fn describe_deviation(rig: &Rig, d: &Deviation) -> String {
    if d.is_bind_pose() {
        return "matches".into();
    }
    format!(
        "joints move up to {:.4} ({:.1}% of the rig's size, {}) and turn up to {:.1}° ({})",
        d.distance,
        d.relative * 100.0,
        node_label(rig, d.joint),
        d.degrees,
        node_label(rig, d.rotated_joint)
    )
}

pub(super) fn vertex_sample(v: &VertexList) -> String {
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

pub(super) fn node_list(rig: &Rig, nodes: &[usize]) -> String {
    let mut names: Vec<String> = nodes.iter().take(NAMED_NODES).map(|&n| node_label(rig, n)).collect();
    if nodes.len() > NAMED_NODES {
        names.push(format!("and {} more", nodes.len() - NAMED_NODES));
    }
    names.join(", ")
}
