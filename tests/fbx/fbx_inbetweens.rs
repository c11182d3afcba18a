//! FBX blend channels with in-between shapes, written by hand: channel "Lift" of the one-cluster
//! triangle reaches shape "Half" at 50 % (its third vertex 10 cm along X) and shape "Full" at
//! 100 % (10 cm along Z), so that between them the vertex goes round a corner that one target
//! at full weight cannot make. Positions at 25/50/75/100 % are worked out by hand from the rule
//! FBX and ufbx follow (linear from zero to the first shape, then from shape to shape).

use crate::common::fbx::{linear_curve, one_cluster_fbx, skinned_lbs};
use glam::DVec3;
use rigscope::rig::{Rig, RigError, load_slice};

/// The triangle's bind vertices, in centimetres.
const TRIANGLE_CM: [DVec3; 3] = [
    DVec3::new(0.0, 10.0, 0.0),
    DVec3::new(10.0, 10.0, 0.0),
    DVec3::new(0.0, 20.0, 0.0),
];

/// Objects and connections of channel "Lift" with `shapes` (name, full weight in percent, the
/// third vertex's offset in cm), its static weight `percent`, and, when `animated`, a linear
/// curve taking it from 0 % at 0 s to 100 % at 1 s in take "Bend".
fn inbetween_channel(shapes: &[(&str, f64, [f64; 3])], percent: f64, animated: bool) -> (String, String) {
    let mut objects = String::new();
    let mut connections = String::new();
    for (i, (name, _, [x, y, z])) in shapes.iter().enumerate() {
        let id = 3000 + i;
        objects.push_str(&format!(
            "\tGeometry: {id}, \"Geometry::{name}\", \"Shape\" {{\n\t\tVersion: 100\n\t\tIndexes: *1 {{\n\t\t\ta: 2\n\t\t}}\n\t\tVertices: *3 {{\n\t\t\ta: {x},{y},{z}\n\t\t}}\n\t}}\n"
        ));
        connections.push_str(&format!("\tC: \"OO\",{id},3200\n"));
    }
    let full: Vec<String> = shapes.iter().map(|s| s.1.to_string()).collect();
    objects.push_str(&format!(
        r#"	Deformer: 3100, "Deformer::Blend", "BlendShape" {{
		Version: 100
	}}
	Deformer: 3200, "SubDeformer::Lift", "BlendShapeChannel" {{
		Version: 100
		DeformPercent: {percent}
		FullWeights: *{count} {{
			a: {full}
		}}
		Properties70:  {{
			P: "DeformPercent", "Number", "", "A",{percent}
		}}
	}}
"#,
        count = shapes.len(),
        full = full.join(",")
    ));
    connections.push_str("\tC: \"OO\",3100,100\n\tC: \"OO\",3200,3100\n");
    if animated {
        objects.push_str(&format!(
            r#"	AnimationCurveNode: 3300, "AnimCurveNode::DeformPercent", "" {{
		Properties70:  {{
			P: "d|DeformPercent", "Number", "", "A",0
		}}
	}}
{curve}
"#,
            curve = linear_curve(3400, 100.0)
        ));
        connections.push_str(
            "\tC: \"OO\",3300,800\n\tC: \"OP\",3300,3200, \"DeformPercent\"\n\tC: \"OP\",3400,3300, \"d|DeformPercent\"\n",
        );
    }
    (objects, connections)
}

const HALF_AND_FULL: [(&str, f64, [f64; 3]); 2] = [("Half", 50.0, [10.0, 0.0, 0.0]), ("Full", 100.0, [0.0, 0.0, 10.0])];

fn load(shapes: &[(&str, f64, [f64; 3])], percent: f64, animated: bool) -> Result<Rig, RigError> {
    let (objects, connections) = inbetween_channel(shapes, percent, animated);
    load_slice(one_cluster_fbx(&objects, &connections).as_bytes(), None, "lift.fbx")
}

/// The triangle with its third vertex moved by `offset_cm` in the bind pose, then turned
/// `degrees` about Z with the bone at (0,10,0) cm, in metres.
fn expected(offset_cm: DVec3, degrees: f64) -> [DVec3; 3] {
    let (sin, cos) = degrees.to_radians().sin_cos();
    let joint = DVec3::new(0.0, 10.0, 0.0);
    let mut points = TRIANGLE_CM;
    points[2] += offset_cm;
    points.map(|p| {
        let d = p - joint;
        (joint + DVec3::new(d.x * cos - d.y * sin, d.x * sin + d.y * cos, d.z)) * 0.01
    })
}

fn assert_each_near(expected: &[DVec3], got: &[DVec3], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}");
    for &e in expected {
        let nearest = got.iter().map(|p| p.distance(e)).fold(f64::INFINITY, f64::min);
        assert!(
            nearest < 1e-6,
            "{what}: {e} is {nearest:.3e} m from every vertex: {got:?}"
        );
    }
}

/// The third vertex's offset, in cm, at channel weight `percent` with shapes at 50 % (10 cm
/// along X) and 100 % (10 cm along Z): worked out by hand.
fn by_hand(percent: f64) -> DVec3 {
    match percent {
        // From nothing to "Half": half of it at 25 %.
        25.0 => DVec3::new(5.0, 0.0, 0.0),
        50.0 => DVec3::new(10.0, 0.0, 0.0),
        // Halfway from "Half" to "Full".
        75.0 => DVec3::new(5.0, 0.0, 5.0),
        100.0 => DVec3::new(0.0, 0.0, 10.0),
        _ => unreachable!("no value worked out for {percent} %"),
    }
}

#[test]
fn a_static_channel_weight_between_in_betweens_morphs_as_worked_out_by_hand() {
    for percent in [25.0, 50.0, 75.0, 100.0] {
        let rig = load(&HALF_AND_FULL, percent, false).expect("the hand-written file loads");
        assert_eq!(rig.morphs.target_names[0], ["Lift (50%)", "Lift"]);
        assert_each_near(
            &expected(by_hand(percent), 0.0),
            &skinned_lbs(&rig, None, 0.0),
            &format!("{percent} %"),
        );
    }
}

#[test]
fn an_animated_channel_weight_passes_through_the_in_between_as_worked_out_by_hand() {
    let rig = load(&HALF_AND_FULL, 0.0, true).expect("the hand-written file loads");
    assert_eq!(rig.morphs.channels.len(), 1, "one weight channel for the one instance");
    assert_eq!(rig.morphs.channels[0].targets, 2);
    // The curve's two keys, and one where the weight passes the in-between (50 % at 0.5 s),
    // where the two targets' weights bend.
    assert_eq!(rig.morphs.channels[0].times, [0.0, 0.5, 1.0]);
    // The weight runs 0 → 100 % over the second as the bone turns 0 → 90°: at 0.25 s, 25 % and
    // 22.5°, and so on. At 0.5 s the vertex is at the corner ("Half" alone).
    for time in [0.0f32, 0.25, 0.5, 0.75, 1.0] {
        let percent = f64::from(time) * 100.0;
        let offset = if time == 0.0 { DVec3::ZERO } else { by_hand(percent) };
        assert_each_near(
            &expected(offset, f64::from(time) * 90.0),
            &skinned_lbs(&rig, Some(0), time),
            &format!("{time} s"),
        );
    }
}

#[test]
fn in_betweens_at_full_weights_that_are_not_positive_are_refused_as_data_errors() {
    for full in [0.0, -50.0] {
        let shapes = [("Half", full, [10.0, 0.0, 0.0]), ("Full", 100.0, [0.0, 0.0, 10.0])];
        match load(&shapes, 50.0, false) {
            Err(RigError::Data(message)) => assert!(message.contains("'Lift'"), "{message}"),
            other => panic!("full weight {full}: {:?}", other.map(|r| r.morphs.target_names)),
        }
    }
}
