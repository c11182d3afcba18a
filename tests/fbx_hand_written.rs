//! Small FBX files written in the test, whose skinned positions are worked out by hand: a
//! triangle in centimetres bound to one bone by one cluster, and one take that turns the bone
//! 90° about Z in a second.

mod common;

use glam::DVec3;
use rigscope::anim::PoseBuffers;
use rigscope::rig::{Rig, load_slice};
use rigscope::skin::{SkinnedPose, SkinningMethod};

/// FBX time units per second (FBX `KTime`).
const KTIME_PER_SECOND: u64 = 46_186_158_000;

/// The triangle (0,10,0), (10,10,0), (0,20,0) cm, all three vertices weighted 1 to a bone at
/// (0,10,0) cm, and a take "Bend" whose one linear curve turns the bone about Z from 0° at 0 s
/// to 90° at 1 s. The cluster's `TransformLink` is the bone's world matrix at bind time and its
/// `Transform` the mesh's place relative to it (the inverse, the mesh being at the origin); both
/// row by row with the translation last. `bone_extra` goes into the bone's Properties70.
pub fn one_cluster_fbx(bone_extra: &str) -> String {
    format!(
        r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {{
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}}
GlobalSettings:  {{
	Version: 1000
	Properties70:  {{
		P: "UpAxis", "int", "Integer", "",1
		P: "UpAxisSign", "int", "Integer", "",1
		P: "FrontAxis", "int", "Integer", "",2
		P: "FrontAxisSign", "int", "Integer", "",1
		P: "CoordAxis", "int", "Integer", "",0
		P: "CoordAxisSign", "int", "Integer", "",1
		P: "UnitScaleFactor", "double", "Number", "",1
	}}
}}
Objects:  {{
	Geometry: 100, "Geometry::Triangle", "Mesh" {{
		Vertices: *9 {{
			a: 0,10,0,10,10,0,0,20,0
		}}
		PolygonVertexIndex: *3 {{
			a: 0,1,-3
		}}
		GeometryVersion: 124
	}}
	Model: 200, "Model::Triangle", "Mesh" {{
		Version: 232
	}}
	NodeAttribute: 300, "NodeAttribute::Bone", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	Model: 400, "Model::Bone", "LimbNode" {{
		Version: 232
		Properties70:  {{
			P: "Lcl Translation", "Lcl Translation", "", "A",0,10,0
{bone_extra}
		}}
	}}
	Deformer: 500, "Deformer::Skin", "Skin" {{
		Version: 101
		Link_DeformAcuracy: 50
	}}
	Deformer: 600, "SubDeformer::Cluster", "Cluster" {{
		Version: 100
		Indexes: *3 {{
			a: 0,1,2
		}}
		Weights: *3 {{
			a: 1,1,1
		}}
		Transform: *16 {{
			a: 1,0,0,0,0,1,0,0,0,0,1,0,0,-10,0,1
		}}
		TransformLink: *16 {{
			a: 1,0,0,0,0,1,0,0,0,0,1,0,0,10,0,1
		}}
	}}
	AnimationStack: 700, "AnimStack::Bend", "" {{
		Properties70:  {{
			P: "LocalStop", "KTime", "Time", "",{second}
		}}
	}}
	AnimationLayer: 800, "AnimLayer::BaseLayer", "" {{
	}}
	AnimationCurveNode: 900, "AnimCurveNode::R", "" {{
		Properties70:  {{
			P: "d|X", "Number", "", "A",0
			P: "d|Y", "Number", "", "A",0
			P: "d|Z", "Number", "", "A",0
		}}
	}}
	AnimationCurve: 1000, "AnimCurve::", "" {{
		Default: 0
		KeyVer: 4009
		KeyTime: *2 {{
			a: 0,{second}
		}}
		KeyValueFloat: *2 {{
			a: 0,90
		}}
		KeyAttrFlags: *1 {{
			a: 4
		}}
		KeyAttrDataFloat: *4 {{
			a: 0,0,0,0
		}}
		KeyAttrRefCount: *1 {{
			a: 2
		}}
	}}
}}
Connections:  {{
	C: "OO",200,0
	C: "OO",400,0
	C: "OO",300,400
	C: "OO",100,200
	C: "OO",500,100
	C: "OO",600,500
	C: "OO",400,600
	C: "OO",800,700
	C: "OO",900,800
	C: "OP",900,400, "Lcl Rotation"
	C: "OP",1000,900, "d|Z"
}}
"#,
        second = KTIME_PER_SECOND
    )
}

fn skinned(rig: &Rig, clip: Option<usize>, time: f32) -> Vec<DVec3> {
    let mut pose = PoseBuffers::new(rig);
    pose.evaluate(rig, clip, time);
    let mut skinned = SkinnedPose::new(rig);
    skinned.skin(rig, &pose, SkinningMethod::Lbs);
    let instance = rig
        .instances
        .iter()
        .position(|i| i.skin.is_some())
        .expect("a skinned instance");
    skinned.meshes[instance][0]
        .positions
        .iter()
        .map(|p| p.as_dvec3())
        .collect()
}

/// The triangle's vertices with the bone turned `degrees` about Z at its joint (0,10,0) cm,
/// in metres: each vertex's offset from the joint rotated, worked out in f64.
fn expected_triangle(degrees: f64) -> [DVec3; 3] {
    let (sin, cos) = degrees.to_radians().sin_cos();
    let joint = DVec3::new(0.0, 10.0, 0.0);
    [
        DVec3::new(0.0, 10.0, 0.0),
        DVec3::new(10.0, 10.0, 0.0),
        DVec3::new(0.0, 20.0, 0.0),
    ]
    .map(|p| {
        let d = p - joint;
        (joint + DVec3::new(d.x * cos - d.y * sin, d.x * sin + d.y * cos, d.z)) * 0.01
    })
}

#[test]
fn one_cluster_and_one_take_skin_as_worked_out_by_hand() {
    let rig = load_slice(one_cluster_fbx("").as_bytes(), None, "bend.fbx").expect("the hand-written file loads");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.skins[0].joints.len(), 1);
    assert_eq!(rig.nodes[rig.skins[0].joints[0]].name, "Bone");
    assert_eq!(rig.clips.len(), 1);
    assert_eq!(rig.clips[0].name, "Bend");
    assert!(
        (rig.clips[0].duration - 1.0).abs() < 1e-6,
        "{} s",
        rig.clips[0].duration
    );
    // Rest pose, then the linear key halfway and at its end: 0°, 45°, 90°.
    for (clip, time, degrees) in [(None, 0.0, 0.0), (Some(0), 0.5, 45.0), (Some(0), 1.0, 90.0)] {
        let got = skinned(&rig, clip, time);
        assert_eq!(got.len(), 3, "one vertex per control point");
        for expected in expected_triangle(degrees) {
            let nearest = got.iter().map(|p| p.distance(expected)).fold(f64::INFINITY, f64::min);
            assert!(
                nearest < 1e-6,
                "at {time} s ({degrees}°): {expected} is {nearest:.3e} m from every vertex: {got:?}"
            );
        }
    }
}

#[test]
fn repairs_of_an_fbx_file_are_refused_as_fbx_and_nothing_is_written() {
    let dir = common::temp_dir("fbx-save");
    let input = dir.join("bend.fbx");
    std::fs::write(&input, one_cluster_fbx("")).unwrap();
    let rig = rigscope::rig::load_file(&input).expect("the hand-written file loads");
    let output = dir.join("bend.glb");
    let result = rigscope::save::save_repaired(&input, &output, &rig, &rig, Default::default());
    assert!(
        matches!(result, Err(rigscope::save::SaveError::FbxInput { .. })),
        "{result:?}"
    );
    assert!(!output.exists());
}
