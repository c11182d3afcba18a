//! The "Report" panel: the rig report's findings (click one to select the joint it names, or the
//! joint that weighs most on the vertices it lists) and its summaries of skins, meshes, clips,
//! materials and textures.

use crate::report::{Finding, FindingCode, RigReport, Severity, node_label};
use crate::rig::Rig;
use crate::viewer::{VertexRef, Viewer, marks_on_every_instance};

/// The joint a finding leads to: the node it names, or else the joint with the largest weight on
/// the first vertex it lists (for a mesh drawn with a skin).
pub fn joint_of_finding(rig: &Rig, finding: &Finding) -> Option<usize> {
    if let Some(node) = finding.node() {
        return Some(node);
    }
    let list = finding.vertices.as_ref()?;
    let primitive = rig.meshes.get(list.mesh)?.primitives.get(list.primitive?)?;
    let influences = primitive.influences.as_ref()?;
    let vertex = *list.vertices.first()? as usize;
    let skin = rig.instances.iter().find(|i| i.mesh == list.mesh)?.skin?;
    let joints = &rig.skins[skin].joints;
    if vertex * influences.sets >= influences.joints.len() {
        return None;
    }
    influences
        .of_vertex(vertex)
        .filter(|&(j, w)| w.is_finite() && (j as usize) < joints.len())
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(j, _)| joints[j as usize])
}

fn severity_color(ui: &egui::Ui, severity: Severity) -> egui::Color32 {
    match severity {
        Severity::Error => ui.visuals().error_fg_color,
        Severity::Warning => ui.visuals().warn_fg_color,
        Severity::Info => ui.visuals().weak_text_color(),
    }
}

pub fn report_panel(ui: &mut egui::Ui, viewer: &mut Viewer) {
    let report = viewer.rig_report();
    let errors = report.count(Severity::Error);
    let warnings = report.count(Severity::Warning);
    let title = format!("Report: {errors} errors, {warnings} warnings");
    egui::CollapsingHeader::new(egui::RichText::new(title).heading())
        .id_salt("report")
        .default_open(errors > 0)
        .show(ui, |ui| {
            ui.label(
                egui::RichText::new(format!(
                    "{} findings, computed in {:.2} ms",
                    report.findings.len(),
                    report.seconds * 1e3
                ))
                .weak(),
            );
            findings(ui, viewer, &report);
            summaries(ui, viewer.rig(), &report);
        });
}

/// Which severities the list shows, kept in egui's memory: errors, warnings, notes.
type SeverityFilter = [bool; 3];

fn severity_slot(severity: Severity) -> usize {
    match severity {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    }
}

/// The findings grouped by code (in the report's order of first appearance), each group with
/// its count, behind a severity filter. A finding clicked selects its joint and points out its
/// vertices in the view.
fn findings(ui: &mut egui::Ui, viewer: &mut Viewer, report: &RigReport) {
    if report.findings.is_empty() {
        ui.label("No findings: nothing looks wrong.");
        return;
    }
    let filter_id = ui.make_persistent_id("report severity filter");
    let mut shown: SeverityFilter = ui.data(|d| d.get_temp(filter_id)).unwrap_or([true; 3]);
    ui.horizontal(|ui| {
        for (severity, label) in [
            (Severity::Error, "errors"),
            (Severity::Warning, "warnings"),
            (Severity::Info, "notes"),
        ] {
            let count = report.count(severity);
            ui.checkbox(&mut shown[severity_slot(severity)], format!("{count} {label}"));
        }
    });
    ui.data_mut(|d| d.insert_temp(filter_id, shown));

    let selected_id = ui.make_persistent_id("report selected finding");
    let mut selected: Option<(u64, usize)> = ui.data(|d| d.get_temp(selected_id));
    if selected.is_some_and(|(generation, _)| generation != viewer.document().generation) {
        selected = None;
    }
    let mut groups: Vec<(FindingCode, Vec<usize>)> = Vec::new();
    for (i, finding) in report.findings.iter().enumerate() {
        if !shown[severity_slot(finding.severity)] {
            continue;
        }
        match groups.iter_mut().find(|(code, _)| *code == finding.code) {
            Some((_, members)) => members.push(i),
            None => groups.push((finding.code, vec![i])),
        }
    }
    for (code, members) in &groups {
        if let [only] = members.as_slice() {
            finding_row(ui, viewer, report, *only, &mut selected);
            continue;
        }
        let first = &report.findings[members[0]];
        let title = egui::RichText::new(format!("{} ×{}: {code}", first.severity.label(), members.len()))
            .color(severity_color(ui, first.severity));
        egui::CollapsingHeader::new(title)
            .id_salt(("finding group", code.as_str()))
            .show(ui, |ui| {
                for &i in members {
                    finding_row(ui, viewer, report, i, &mut selected);
                }
            });
    }
    ui.data_mut(|d| match selected {
        Some(s) => {
            d.insert_temp(selected_id, s);
        }
        None => d.remove::<(u64, usize)>(selected_id),
    });
}

fn finding_row(
    ui: &mut egui::Ui,
    viewer: &mut Viewer,
    report: &RigReport,
    i: usize,
    selected: &mut Option<(u64, usize)>,
) {
    let finding = &report.findings[i];
    let is_selected = selected.is_some_and(|(_, s)| s == i);
    let text = egui::RichText::new(format!("{}: {}", finding.severity.label(), finding.message))
        .color(severity_color(ui, finding.severity));
    if ui.selectable_label(is_selected, text).clicked() {
        *selected = Some((viewer.document().generation, i));
        if let Some(joint) = joint_of_finding(viewer.rig(), finding) {
            viewer.view.selected_joint = Some(joint);
        }
        let marks = finding_marks(viewer.rig(), finding);
        viewer.set_finding_marks(marks);
    }
    if is_selected {
        details(ui, viewer.rig(), finding);
    }
}

/// The vertices a finding lists, on every instance of their mesh.
pub fn finding_marks(rig: &Rig, finding: &Finding) -> Vec<VertexRef> {
    let Some(list) = &finding.vertices else {
        return Vec::new();
    };
    let Some(primitive) = list.primitive else {
        return Vec::new();
    };
    marks_on_every_instance(rig, list.mesh, primitive, list.vertices.iter().map(|&v| v as usize))
}

fn details(ui: &mut egui::Ui, rig: &Rig, finding: &Finding) {
    ui.indent("finding details", |ui| {
        if !finding.nodes.is_empty() {
            let names: Vec<String> = finding.nodes.iter().take(12).map(|&n| node_label(rig, n)).collect();
            let more = finding.nodes.len().saturating_sub(names.len());
            let suffix = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            ui.label(format!("Nodes: {}{suffix}", names.join(", ")));
        }
        if let Some(list) = &finding.vertices {
            let shown: Vec<String> = list.vertices.iter().take(40).map(u32::to_string).collect();
            let more = list.total.saturating_sub(shown.len());
            let suffix = if more > 0 {
                format!(" … and {more} more")
            } else {
                String::new()
            };
            ui.label(format!(
                "Vertices of mesh {} primitive {}: {}{suffix}",
                list.mesh,
                list.gltf_primitive,
                shown.join(", ")
            ));
        }
    });
}

fn summaries(ui: &mut egui::Ui, rig: &Rig, report: &RigReport) {
    if !report.skins.is_empty() {
        egui::CollapsingHeader::new(format!("Skins ({})", report.skins.len()))
            .id_salt("report skins")
            .show(ui, |ui| {
                for skin in &report.skins {
                    let root = skin
                        .root
                        .map_or("no common root".into(), |r| format!("root {}", node_label(rig, r)));
                    ui.label(format!(
                        "{}: {} joints ({} used), {root}, {} mesh instance(s)",
                        skin.name, skin.joints, skin.joints_used, skin.instances
                    ));
                }
            });
    }
    if !report.meshes.is_empty() {
        egui::CollapsingHeader::new(format!("Meshes ({})", report.meshes.len()))
            .id_salt("report meshes")
            .show(ui, |ui| {
                for mesh in &report.meshes {
                    ui.label(format!("{} (drawn {}×)", mesh.name, mesh.instances));
                    for p in &mesh.primitives {
                        let influences = if p.influence_sets == 0 {
                            "not skinned".to_string()
                        } else {
                            format!("influences max {}, mean {:.2}", p.influences_max, p.influences_mean)
                        };
                        let drawn = if p.primitive.is_some() { "" } else { ", not drawn" };
                        ui.label(format!(
                            "    primitive {}: {} vertices, {} triangles, {influences}{drawn}",
                            p.gltf_index, p.vertices, p.triangles
                        ));
                    }
                }
            });
    }
    if !report.clips.is_empty() {
        egui::CollapsingHeader::new(format!("Clips ({})", report.clips.len()))
            .id_salt("report clips")
            .show(ui, |ui| {
                for clip in &report.clips {
                    ui.label(format!(
                        "{}: {:.2} s, {} channels ({}), {} nodes",
                        clip.name,
                        clip.duration,
                        clip.channels,
                        clip.interpolations.join(", "),
                        clip.animated_nodes
                    ));
                }
            });
    }
    if !report.materials.is_empty() || !report.textures.is_empty() {
        egui::CollapsingHeader::new(format!(
            "Materials ({}) and textures ({})",
            report.materials.len(),
            report.textures.len()
        ))
        .id_salt("report materials")
        .show(ui, |ui| {
            for m in &report.materials {
                let texture = m.base_color_texture.map_or(String::new(), |t| format!(", texture {t}"));
                ui.label(format!("{}{texture}", m.name));
            }
            for t in &report.textures {
                ui.label(format!("{}: {}×{}", t.name, t.width, t.height));
            }
        });
    }
}
