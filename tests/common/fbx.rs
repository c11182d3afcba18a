//! Small FBX files written by hand for the tests, so that what they must load to can be worked
//! out by hand.

/// FBX time units per second (FBX `KTime`).
pub const KTIME_PER_SECOND: u64 = 46_186_158_000;

/// The triangle (0,10,0), (10,10,0), (0,20,0) cm, all three vertices weighted 1 to a bone at
/// (0,10,0) cm, and a take "Bend" whose one linear curve turns the bone about Z from 0° at 0 s
/// to 90° at 1 s. The cluster's `TransformLink` is the bone's world matrix at bind time and its
/// `Transform` the mesh's place relative to it (the inverse, the mesh being at the origin); both
/// row by row with the translation last. `objects_extra` and `connections_extra` are added to
/// the file's objects and connections.
pub fn one_cluster_fbx(objects_extra: &str, connections_extra: &str) -> String {
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
{triangle}
	NodeAttribute: 300, "NodeAttribute::Bone", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	Model: 400, "Model::Bone", "LimbNode" {{
		Version: 232
		Properties70:  {{
			P: "Lcl Translation", "Lcl Translation", "", "A",0,10,0
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
{curve_1000}
{objects_extra}
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
{connections_extra}
}}
"#,
        second = KTIME_PER_SECOND,
        curve_1000 = linear_curve(1000, 90.0),
        triangle = triangle_mesh("0,10,0,10,10,0,0,20,0"),
    )
}

/// A bind pose for the one-cluster file's bone (model 400) at `y` cm up: 10 agrees with the
/// cluster's `TransformLink`.
pub fn bind_pose_at(y: f64) -> String {
    format!(
        r#"	Pose: 1100, "Pose::BIND_POSES", "BindPose" {{
		Type: "BindPose"
		Version: 100
		NbPoseNodes: 1
		PoseNode:  {{
			Node: 400
			Matrix: *16 {{
				a: 1,0,0,0,0,1,0,0,0,0,1,0,0,{y},0,1
			}}
		}}
	}}"#
    )
}

/// A triangle skinned to `bones` bones at the origin, one cluster each, every vertex weighted
/// `k + 1` (over the sum) to bone `k`: more influences per vertex than glTF's eight when `bones`
/// exceeds 8.
pub fn many_cluster_fbx(bones: usize) -> String {
    let total: usize = (1..=bones).sum();
    let mut objects = String::new();
    let mut connections = String::new();
    for k in 0..bones {
        let (model, cluster) = (1000 + k, 2000 + k);
        let weight = (k + 1) as f64 / total as f64;
        objects.push_str(&format!(
            r#"	Model: {model}, "Model::Bone{k}", "LimbNode" {{
		Version: 232
	}}
	Deformer: {cluster}, "SubDeformer::Cluster{k}", "Cluster" {{
		Version: 100
		Indexes: *3 {{
			a: 0,1,2
		}}
		Weights: *3 {{
			a: {weight},{weight},{weight}
		}}
		Transform: *16 {{
			a: 1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1
		}}
		TransformLink: *16 {{
			a: 1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1
		}}
	}}
"#
        ));
        connections.push_str(&format!(
            "\tC: \"OO\",{model},0\n\tC: \"OO\",{cluster},500\n\tC: \"OO\",{model},{cluster}\n"
        ));
    }
    format!(
        r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {{
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}}
Objects:  {{
{triangle}
	Deformer: 500, "Deformer::Skin", "Skin" {{
		Version: 101
	}}
{objects}}}
Connections:  {{
	C: "OO",200,0
	C: "OO",100,200
	C: "OO",500,100
{connections}}}
"#,
        triangle = triangle_mesh("0,0,0,10,0,0,0,10,0")
    )
}

/// A blend shape for the one-cluster file: channel "Lift" moves its third vertex (0,20,0) by
/// (0,0,10) cm at full weight, and the take "Bend" turns it from 0 % at 0 s to 100 % at 1 s.
/// Objects and connections, for [`one_cluster_fbx`].
pub fn lift_blend_shape() -> (String, String) {
    let objects = format!(
        r#"	Geometry: 3000, "Geometry::Lift", "Shape" {{
		Version: 100
		Indexes: *1 {{
			a: 2
		}}
		Vertices: *3 {{
			a: 0,0,10
		}}
	}}
	Deformer: 3100, "Deformer::Blend", "BlendShape" {{
		Version: 100
	}}
	Deformer: 3200, "SubDeformer::Lift", "BlendShapeChannel" {{
		Version: 100
		DeformPercent: 0
		FullWeights: *1 {{
			a: 100
		}}
		Properties70:  {{
			P: "DeformPercent", "Number", "", "A",0
		}}
	}}
	AnimationCurveNode: 3300, "AnimCurveNode::DeformPercent", "" {{
		Properties70:  {{
			P: "d|DeformPercent", "Number", "", "A",0
		}}
	}}
{curve_3400}"#,
        curve_3400 = linear_curve(3400, 100.0)
    );
    let connections = r#"	C: "OO",3100,100
	C: "OO",3200,3100
	C: "OO",3000,3200
	C: "OO",3300,800
	C: "OP",3300,3200, "DeformPercent"
	C: "OP",3400,3300, "d|DeformPercent""#;
    (objects, connections.to_owned())
}

/// An animation curve `id` from 0 at 0 s to `end` at 1 s, linear.
fn linear_curve(id: u32, end: f64) -> String {
    format!(
        r#"	AnimationCurve: {id}, "AnimCurve::", "" {{
		Default: 0
		KeyVer: 4009
		KeyTime: *2 {{
			a: 0,{KTIME_PER_SECOND}
		}}
		KeyValueFloat: *2 {{
			a: 0,{end}
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
	}}"#
    )
}

/// The triangle mesh (geometry 100 with `vertices` in centimetres, model 200 drawing it).
fn triangle_mesh(vertices: &str) -> String {
    format!(
        r#"	Geometry: 100, "Geometry::Triangle", "Mesh" {{
		Vertices: *9 {{
			a: {vertices}
		}}
		PolygonVertexIndex: *3 {{
			a: 0,1,-3
		}}
	}}
	Model: 200, "Model::Triangle", "Mesh" {{
		Version: 232
	}}"#
    )
}
