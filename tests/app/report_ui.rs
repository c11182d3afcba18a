//! The Report panel driven like a person would: findings found by their text and clicked, then
//! the viewer's selected joint checked.

use crate::common;

use base64::Engine;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rigscope::rig::load_slice;
use rigscope::ui;
use rigscope::viewer::Viewer;

use serde_json::json;

/// A triangle skinned to joints 0 and 1 (nodes 1 and 2). Vertex 1's weights sum to 0.6 and
/// lean on joint 1; joint index 2 of the skin (node 3) is weighted nowhere.
fn rig_with_findings() -> rigscope::rig::Rig {
    let mut bin: Vec<u8> = [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    bin.extend([[0u16, 1, 0, 0]; 3].iter().flatten().flat_map(|j| j.to_le_bytes()));
    let weights = [[1.0f32, 0.0, 0.0, 0.0], [0.2, 0.4, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]];
    bin.extend(weights.iter().flatten().flat_map(|w| w.to_le_bytes()));
    let data = base64::engine::general_purpose::STANDARD.encode(&bin);
    let document = json!({
        "asset": {"version": "2.0"},
        "nodes": [{"mesh": 0, "skin": 0}, {"name": "hip", "children": [2, 3]}, {"name": "knee"}, {"name": "toe"}],
        "skins": [{"joints": [1, 2, 3]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}}]}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
            {"bufferView": 1, "componentType": 5123, "count": 3, "type": "VEC4"},
            {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"},
        ],
        "bufferViews": [
            {"buffer": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 24},
            {"buffer": 0, "byteOffset": 60, "byteLength": 48},
        ],
        "buffers": [{"byteLength": bin.len(), "uri": format!("data:application/octet-stream;base64,{data}")}],
    });
    load_slice(&serde_json::to_vec(&document).unwrap(), None, "findings.gltf").unwrap()
}

fn panel_harness<'a>() -> Harness<'a, Viewer> {
    let mut viewer = Viewer::new(rig_with_findings(), None);
    viewer.view.selected_joint = None;
    Harness::builder()
        .with_size(egui::vec2(900.0, 900.0))
        .build_ui_state(|ui, viewer: &mut Viewer| ui::report::report_panel(ui, viewer), viewer)
}

#[test]
fn clicking_a_finding_that_names_a_joint_selects_it() {
    let mut harness = panel_harness();
    harness.run();
    harness.get_by_label_contains("influence no vertex").click();
    harness.run();
    let viewer = harness.state();
    assert_eq!(viewer.view.selected_joint, viewer.rig().find_node("toe"));
    // The selected finding opens its details.
    harness.get_by_label_contains("Nodes: 'toe'");
}

/// The panel after a click on the finding that lists vertices whose weights do not sum to 1.
fn vertex_finding_clicked<'a>() -> Harness<'a, Viewer> {
    let mut harness = panel_harness();
    harness.run();
    harness
        .get_by_label_contains("do not sum to 1 (worst sum 0.6000)")
        .click();
    harness.run();
    harness
}

#[test]
fn clicking_a_vertex_finding_selects_the_joint_that_weighs_most_on_it() {
    let harness = vertex_finding_clicked();
    let viewer = harness.state();
    assert_eq!(viewer.view.selected_joint, viewer.rig().find_node("knee"));
    harness.get_by_label_contains("Vertices of mesh 0 primitive 0: 1");
}

#[test]
fn the_report_is_computed_once_per_rig() {
    let mut harness = panel_harness();
    harness.run();
    let first = harness.state().document().report.clone().expect("shown once, computed");
    harness.run();
    let again = harness.state().document().report.clone().unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&first, &again),
        "not recomputed while the rig stays"
    );
    let demo = common::load_demo();
    harness.state_mut().set_rig(demo, None);
    harness.run();
    let report = harness.state().document().report.clone().unwrap();
    assert!(!std::sync::Arc::ptr_eq(&first, &report), "a new rig gets a new report");
    assert_eq!(report.name, "demo.glb");
}

#[test]
fn the_main_window_shows_the_report_heading() {
    let viewer = Viewer::new(rig_with_findings(), None);
    let mut harness = common::main_window(viewer, 1400.0, 1000.0);
    harness.run();
    harness.get_by_label_contains("Report: 1 errors");
}

#[test]
fn a_selected_finding_marks_its_vertices_in_the_view() {
    let mut harness = vertex_finding_clicked();
    let viewer = harness.state_mut();
    viewer.prepare_frame();
    let marks = viewer.frame_state(1.0).marks.to_vec();
    // Vertex 1 of the triangle is at (1, 0, 0); at rest every palette matrix is the identity,
    // so linear blend skinning draws it at its weights' sum, 0.2 + 0.4, times that.
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert!((marks[0] - glam::Vec3::new(0.6, 0.0, 0.0)).length() < 1e-5, "{marks:?}");
}

#[test]
fn findings_of_one_code_are_grouped_with_a_count_behind_a_severity_filter() {
    let Some(dir) = common::shared_rigs() else { return };
    let viewer = Viewer::new(common::load_rig(&dir, "real/RobotExpressive.glb"), None);
    let report = rigscope::report::RigReport::new(viewer.rig());
    let notes = report
        .findings
        .iter()
        .filter(|f| f.code == "channel-not-played")
        .count();
    assert!(
        notes > 10,
        "RobotExpressive has a note per clip with a morph channel: {notes}"
    );
    let mut harness = Harness::builder()
        .with_size(egui::vec2(900.0, 2000.0))
        .build_ui_state(|ui, viewer: &mut Viewer| ui::report::report_panel(ui, viewer), viewer);
    harness.run();
    harness.get_by_label(&format!("info ×{notes}: channel-not-played"));
    assert!(
        harness.query_by_label_contains("clip 'Dance' channel 0").is_none(),
        "the group's members stay folded"
    );
    // Hiding the notes hides the group.
    let count = harness
        .state()
        .document()
        .report
        .as_ref()
        .unwrap()
        .count(rigscope::report::Severity::Info);
    harness.get_by_label(&format!("{count} notes")).click();
    harness.run();
    assert!(harness.query_by_label_contains("channel-not-played").is_none());
}
