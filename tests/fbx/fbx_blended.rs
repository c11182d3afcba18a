//! Maya's weight blended skinning read from a hand-written ASCII FBX file: a skin deformer with
//! `SkinningType: "Blend"` and per-vertex `BlendWeights`, two bones, and a take that twists one
//! of them about its bone; the skinned positions are worked out by hand in f64.

use crate::common;

use crate::common::fbx::{Y_UP_CENTIMETRES_HEADER, cluster, rotation_take, skinned_vertices, triangle_mesh};
use glam::DVec3;
use rigscope::rig::load_slice;
use rigscope::skin::SkinningMethod;
use rigscope::viewer::Viewer;

/// The triangle's control points in centimetres, their weights on (Root, Twist), and the blend
/// toward dual quaternions the deformer gives them (the third is left out of `BlendWeights`).
const POINTS: [([f64; 3], [f64; 2], f64); 3] = [
    ([10.0, 0.0, 10.0], [0.5, 0.5], 0.5),
    ([10.0, 10.0, 0.0], [0.25, 0.75], 1.0),
    ([5.0, 0.0, 10.0], [0.5, 0.5], 0.0),
];

/// Bone "Root" at the origin and bone "Twist" at (10,0,0) cm, both still in the bind pose; one
/// cluster each; the skin deformer's `SkinningType` is `skinning_type` and, when given,
/// `BlendWeights` blends vertices 0 and 1. The take "Twist" turns "Twist" about X (its bone's
/// axis, through the origin's X line) from 0° at 0 s to 90° at 1 s.
fn blended_fbx(skinning_type: &str, blend_weights: bool) -> String {
    let blend = if blend_weights {
        "\t\tIndexes: *2 {\n\t\t\ta: 0,1\n\t\t}\n\t\tBlendWeights: *2 {\n\t\t\ta: 0.5,1\n\t\t}\n"
    } else {
        ""
    };
    let vertices: Vec<String> = POINTS.iter().flat_map(|(p, _, _)| p.map(|c| c.to_string())).collect();
    let weights = |bone: usize| POINTS.map(|(_, w, _)| w[bone]);
    format!(
        r#"{header}
Objects:  {{
{triangle}
	Model: 400, "Model::Root", "LimbNode" {{
		Version: 232
	}}
	Model: 450, "Model::Twist", "LimbNode" {{
		Version: 232
		Properties70:  {{
			P: "Lcl Translation", "Lcl Translation", "", "A",10,0,0
		}}
	}}
	Deformer: 500, "Deformer::Skin", "Skin" {{
		Version: 101
		Link_DeformAcuracy: 50
		SkinningType: "{skinning_type}"
{blend}	}}
{cluster_600}
{cluster_650}
{take}
}}
Connections:  {{
	C: "OO",200,0
	C: "OO",400,0
	C: "OO",450,0
	C: "OO",100,200
	C: "OO",500,100
	C: "OO",600,500
	C: "OO",650,500
	C: "OO",400,600
	C: "OO",450,650
	C: "OO",800,700
	C: "OO",900,800
	C: "OP",900,450, "Lcl Rotation"
	C: "OP",1000,900, "d|X"
}}
"#,
        header = Y_UP_CENTIMETRES_HEADER,
        triangle = triangle_mesh(&vertices.join(",")),
        cluster_600 = cluster(600, &weights(0), [0.0; 3]),
        cluster_650 = cluster(650, &weights(1), [10.0, 0.0, 0.0]),
        take = rotation_take("Twist", 90.0),
    )
}

/// `p` turned `degrees` about X.
fn turn_x(p: DVec3, degrees: f64) -> DVec3 {
    let (sin, cos) = degrees.to_radians().sin_cos();
    DVec3::new(p.x, p.y * cos - p.z * sin, p.y * sin + p.z * cos)
}

/// Where a control point lands, in metres, with "Twist" turned `degrees` about the X line: the
/// root's transform is the identity and the twist's a pure turn about X, so linear blend
/// skinning is `w_root · p + w_twist · R p`, and dual quaternion skinning turns `p` by the
/// angle of the normalized blend of the identity and R's quaternions (no translation: both
/// dual parts are zero); weight blended skinning is their lerp by `b`.
fn expected(point: [f64; 3], weights: [f64; 2], b: f64, degrees: f64) -> DVec3 {
    let p = DVec3::from(point);
    let lbs = p * weights[0] + turn_x(p, degrees) * weights[1];
    let half = (degrees / 2.0).to_radians();
    let dqs_angle = 2.0 * (weights[1] * half.sin()).atan2(weights[0] + weights[1] * half.cos());
    let dqs = turn_x(p, dqs_angle.to_degrees());
    (lbs * (1.0 - b) + dqs * b) * 0.01
}

/// Each vertex within 1 µm of where it is expected, in the order of the control points (the
/// importer makes one vertex per control point here, in their order: the test checks it).
fn assert_in_order_near(expected: &[DVec3], got: &[DVec3], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: one vertex per control point");
    for (v, (e, g)) in expected.iter().zip(got).enumerate() {
        assert!(
            e.distance(*g) < 1e-6,
            "{what}, vertex {v}: {g} where {e} was worked out"
        );
    }
}

#[test]
fn a_weight_blended_skin_opens_blended_and_deforms_as_worked_out_by_hand() {
    let rig = load_slice(blended_fbx("Blend", true).as_bytes(), None, "blend.fbx").expect("the file loads");
    assert_eq!(rig.skinning.method, Some(SkinningMethod::Blended));
    let mut viewer = Viewer::new(rig.clone(), None);
    assert_eq!(viewer.skinning_method(), SkinningMethod::Blended);
    // The window's settings (LBS last used) do not override the file's method.
    let settings = rigscope::settings::Settings::default();
    assert_eq!(settings.skinning_method, SkinningMethod::Lbs);
    rigscope::app::apply_settings(&settings, &mut viewer, &mut rigscope::ui::UiState::default());
    assert_eq!(viewer.skinning_method(), SkinningMethod::Blended);
    // One vertex per control point, in their order (which the checks below rely on), each with
    // its point's blend.
    let mesh = rig.instances.iter().find(|i| i.skin.is_some()).unwrap().mesh;
    let bind: Vec<DVec3> = POINTS.iter().map(|&(p, _, _)| DVec3::from(p) * 0.01).collect();
    let positions: Vec<DVec3> = rig.meshes[mesh].primitives[0]
        .positions
        .iter()
        .map(|p| p.as_dvec3())
        .collect();
    assert_in_order_near(&bind, &positions, "bind pose");
    let blend: Vec<f64> = rig.skinning.dqs_blend[mesh][0].iter().map(|&b| f64::from(b)).collect();
    assert_eq!(blend, POINTS.map(|(_, _, b)| b));
    for (time, degrees) in [(0.0, 0.0), (0.5, 45.0), (1.0, 90.0)] {
        let want: Vec<DVec3> = POINTS.iter().map(|&(p, w, b)| expected(p, w, b, degrees)).collect();
        assert_in_order_near(
            &want,
            &skinned_vertices(&rig, Some(0), time, SkinningMethod::Blended),
            &format!("blended at {time} s"),
        );
        // The pure methods for comparison: b = 0 and b = 1 on every vertex.
        let lbs: Vec<DVec3> = POINTS.iter().map(|&(p, w, _)| expected(p, w, 0.0, degrees)).collect();
        assert_in_order_near(
            &lbs,
            &skinned_vertices(&rig, Some(0), time, SkinningMethod::Lbs),
            &format!("LBS at {time} s"),
        );
        let dqs: Vec<DVec3> = POINTS.iter().map(|&(p, w, _)| expected(p, w, 1.0, degrees)).collect();
        assert_in_order_near(
            &dqs,
            &skinned_vertices(&rig, Some(0), time, SkinningMethod::Dqs),
            &format!("DQS at {time} s"),
        );
    }
}

#[test]
fn dual_quaternion_and_linear_skins_open_with_their_method() {
    let dqs = load_slice(blended_fbx("DualQuaternion", false).as_bytes(), None, "dq.fbx").expect("loads");
    assert_eq!(dqs.skinning.method, Some(SkinningMethod::Dqs));
    assert!(dqs.skinning.dqs_blend.is_empty(), "DQS needs no blend");
    let linear = load_slice(blended_fbx("Linear", true).as_bytes(), None, "linear.fbx").expect("loads");
    assert_eq!(linear.skinning.method, None);
    assert_eq!(Viewer::new(linear, None).skinning_method(), SkinningMethod::Lbs);
}

#[test]
fn blend_weights_out_of_range_are_clamped_and_indices_past_the_points_ignored() {
    // 7 names no control point (ufbx drops it); 2.5 and -1 clamp to 1 and 0.
    let text = blended_fbx("Blend", true)
        .replace("a: 0,1\n", "a: 0,7\n")
        .replace("a: 0.5,1\n", "a: 2.5,-1\n");
    let rig = load_slice(text.as_bytes(), None, "bad-blend.fbx").expect("loads");
    let mesh = rig.instances.iter().find(|i| i.skin.is_some()).unwrap().mesh;
    let mut blend = rig.skinning.dqs_blend[mesh][0].clone();
    blend.sort_by(f32::total_cmp);
    assert_eq!(blend, vec![0.0, 0.0, 1.0]);
}

#[test]
fn the_audit_sweeps_a_weight_blended_skin_with_its_own_method_when_asked() {
    let dir = common::temp_dir("audit-blended");
    let file = dir.join("blend.fbx");
    std::fs::write(&file, blended_fbx("Blend", true)).unwrap();
    let output = common::rigscope_with(
        common::rigscope_command()
            .args(["audit", "--method", "blended", "--json"])
            .arg(&file),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{stdout}");
    let document: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    let entries = document["range_of_motion"].as_array().expect("range_of_motion entries");
    assert!(!entries.is_empty(), "{stdout}");
    for entry in entries {
        assert_eq!(entry["method"], "blended", "{entry}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_audit_window_shows_a_weight_blended_skin_in_a_column_of_its_own() {
    use egui_kittest::kittest::Queryable;
    let rig = load_slice(blended_fbx("Blend", true).as_bytes(), None, "blend.fbx").expect("the file loads");
    let mut harness = common::main_window(Viewer::new(rig, None), 1400.0, 1000.0);
    harness.run();
    harness.key_press(egui::Key::A);
    harness.run();
    harness.get_by_label("Run audit").click();
    harness.step();
    let (viewer, ui) = harness.state_mut();
    ui.audit.wait(viewer);
    let (_, report) = ui.audit.report.clone().expect("the audit handed in its report");
    let methods: Vec<SkinningMethod> = report.joints[0].curves.iter().map(|c| c.method).collect();
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs, SkinningMethod::Blended] {
        assert!(methods.contains(&method), "{method:?} in {methods:?}");
    }
    harness.run();
    // Selecting a joint adds the plots, one column per method, each headed by its name.
    let columns = ["LBS", "DQS", "blended"];
    let count = |harness: &egui_kittest::Harness<'_, _>, label| harness.query_all_by_label(label).count();
    let before: Vec<usize> = columns.iter().map(|&c| count(&harness, c)).collect();
    let (viewer, ui) = harness.state_mut();
    ui.audit.select(viewer, &report, 0);
    harness.run();
    let after: Vec<usize> = columns.iter().map(|&c| count(&harness, c)).collect();
    for ((column, before), after) in columns.iter().zip(before).zip(after) {
        assert_eq!(after, before + 1, "{column}");
    }
}
