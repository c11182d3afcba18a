//! A skinned FBX mesh with a vertex no cluster weighs: FBX (the SDK, ufbx, Blender) draws it
//! where the mesh's node puts it, so it must follow that node as the node moves, not stay in
//! the bind pose. The one-cluster triangle of tests/common/fbx.rs with its third vertex left out
//! of the cluster and its mesh node parented to the bone, 5 cm along Z: positions worked out by
//! hand.

use crate::common::fbx::one_cluster_fbx;
use glam::DVec3;
use rigscope::anim::PoseBuffers;
use rigscope::rig::load_slice;
use rigscope::skin::{SkinnedPose, SkinningMethod};

/// The one-cluster file with vertex 2 weighed by no cluster and the mesh node (model 200) a
/// child of the bone (model 400), translated (0, 0, 5) cm from it.
fn unweighted_vertex_fbx() -> String {
    let mut text = one_cluster_fbx("", "");
    for (from, to) in [
        (
            "\t\tIndexes: *3 {\n\t\t\ta: 0,1,2\n\t\t}\n\t\tWeights: *3 {\n\t\t\ta: 1,1,1\n\t\t}",
            "\t\tIndexes: *2 {\n\t\t\ta: 0,1\n\t\t}\n\t\tWeights: *2 {\n\t\t\ta: 1,1\n\t\t}",
        ),
        (
            "\tModel: 200, \"Model::Triangle\", \"Mesh\" {\n\t\tVersion: 232\n\t}",
            "\tModel: 200, \"Model::Triangle\", \"Mesh\" {\n\t\tVersion: 232\n\t\tProperties70:  {\n\t\t\tP: \"Lcl Translation\", \"Lcl Translation\", \"\", \"A\",0,0,5\n\t\t}\n\t}",
        ),
        ("\tC: \"OO\",200,0\n", "\tC: \"OO\",200,400\n"),
    ] {
        assert!(text.contains(from), "the one-cluster file has {from:?}");
        text = text.replace(from, to);
    }
    text
}

/// The triangle at bone angle `degrees` about Z, in metres: vertices 0 and 1 skinned to the
/// bone at (0,10,0) cm; vertex 2 carried by the mesh node, (0,20,0) in the mesh's space, so
/// (0,20,5) in the bone's.
fn expected(degrees: f64) -> [DVec3; 3] {
    let (sin, cos) = degrees.to_radians().sin_cos();
    let joint = DVec3::new(0.0, 10.0, 0.0);
    let turn = |d: DVec3| DVec3::new(d.x * cos - d.y * sin, d.x * sin + d.y * cos, d.z);
    [
        joint + turn(DVec3::new(0.0, 0.0, 0.0)),
        joint + turn(DVec3::new(10.0, 0.0, 0.0)),
        joint + turn(DVec3::new(0.0, 20.0, 5.0)),
    ]
    .map(|p| p * 0.01)
}

#[test]
fn a_vertex_no_cluster_weighs_follows_the_mesh_node_as_worked_out_by_hand() {
    let rig = load_slice(unweighted_vertex_fbx().as_bytes(), None, "unweighted.fbx").expect("the file loads");
    let instance = rig.instances.iter().position(|i| i.skin.is_some()).expect("skinned");
    let mesh_node = rig.instances[instance].node;
    assert_eq!(rig.nodes[mesh_node].name, "Triangle");
    let skin = &rig.skins[rig.instances[instance].skin.unwrap()];
    assert_eq!(skin.joints.len(), 2, "the bone, then the mesh's node");
    assert_eq!(skin.joints[1], mesh_node);
    assert!(
        rig.facts
            .notes
            .iter()
            .any(|n| n.contains("1 vertices no cluster weighs")),
        "{:?}",
        rig.facts.notes
    );
    for (clip, time, degrees) in [(None, 0.0, 0.0), (Some(0), 0.5, 45.0), (Some(0), 1.0, 90.0)] {
        let mut pose = PoseBuffers::new(&rig);
        pose.evaluate(&rig, clip, time);
        let mut skinned = SkinnedPose::new(&rig);
        skinned.skin(&rig, &pose, SkinningMethod::Lbs);
        let got: Vec<DVec3> = skinned.meshes[instance][0]
            .positions
            .iter()
            .map(|p| p.as_dvec3())
            .collect();
        assert_eq!(got.len(), 3);
        for expected in expected(degrees) {
            let nearest = got.iter().map(|p| p.distance(expected)).fold(f64::INFINITY, f64::min);
            assert!(
                nearest < 1e-6,
                "at {time} s: {expected} is {nearest:.3e} m from {got:?}"
            );
        }
    }
}
