//! Small FBX files written by hand for the tests, so that what they must load to can be worked
//! out by hand.

/// FBX time units per second (FBX `KTime`).
pub const KTIME_PER_SECOND: u64 = 46_186_158_000;

/// The start of an FBX 7.4 ASCII file whose scene is Y up, right-handed, in centimetres (its
/// header and global settings), for the files written below and by the tests.
pub const Y_UP_CENTIMETRES_HEADER: &str = r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}
GlobalSettings:  {
	Version: 1000
	Properties70:  {
		P: "UpAxis", "int", "Integer", "",1
		P: "UpAxisSign", "int", "Integer", "",1
		P: "FrontAxis", "int", "Integer", "",2
		P: "FrontAxisSign", "int", "Integer", "",1
		P: "CoordAxis", "int", "Integer", "",0
		P: "CoordAxisSign", "int", "Integer", "",1
		P: "UnitScaleFactor", "double", "Number", "",1
	}
}"#;

/// The triangle (0,10,0), (10,10,0), (0,20,0) cm, all three vertices weighted 1 to a bone at
/// (0,10,0) cm, and a take "Bend" whose one linear curve turns the bone about Z from 0° at 0 s
/// to 90° at 1 s. The cluster's `TransformLink` is the bone's world matrix at bind time and its
/// `Transform` the mesh's place relative to it (the inverse, the mesh being at the origin); both
/// row by row with the translation last. `objects_extra` and `connections_extra` are added to
/// the file's objects and connections.
pub fn one_cluster_fbx(objects_extra: &str, connections_extra: &str) -> String {
    format!(
        r#"{header}
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
{cluster_600}
{take}
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
        header = Y_UP_CENTIMETRES_HEADER,
        cluster_600 = cluster(600, &[1.0; 3], [0.0, 10.0, 0.0]),
        take = rotation_take("Bend", 90.0),
        triangle = triangle_mesh("0,10,0,10,10,0,0,20,0"),
    )
}

/// Cluster `id` weighting control points 0, 1, … by `weights`, bound to a bone at `bone` cm with
/// the mesh at the origin (`TransformLink` the bone's bind translation, `Transform` its inverse).
pub fn cluster(id: u32, weights: &[f64], bone: [f64; 3]) -> String {
    let n = weights.len();
    let list = |values: Vec<String>| values.join(",");
    let indices = list((0..n).map(|i| i.to_string()).collect());
    let weights = list(weights.iter().map(f64::to_string).collect());
    let [x, y, z] = bone;
    let [ix, iy, iz] = bone.map(|c| -c);
    format!(
        r#"	Deformer: {id}, "SubDeformer::Cluster", "Cluster" {{
		Version: 100
		Indexes: *{n} {{
			a: {indices}
		}}
		Weights: *{n} {{
			a: {weights}
		}}
		Transform: *16 {{
			a: 1,0,0,0,0,1,0,0,0,0,1,0,{ix},{iy},{iz},1
		}}
		TransformLink: *16 {{
			a: 1,0,0,0,0,1,0,0,0,0,1,0,{x},{y},{z},1
		}}
	}}"#
    )
}

/// A take `name` of one second (stack 700, layer 800) whose rotation curve node 900 carries
/// curve 1000, linear from 0 to `degrees`; connect 900 to a model's `Lcl Rotation` and 1000 to
/// one of 900's axes (`d|X`, `d|Y`, `d|Z`).
pub fn rotation_take(name: &str, degrees: f64) -> String {
    format!(
        r#"	AnimationStack: 700, "AnimStack::{name}", "" {{
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
{curve_1000}"#,
        second = KTIME_PER_SECOND,
        curve_1000 = linear_curve(1000, degrees),
    )
}

/// Every vertex of the first skinned mesh instance's first primitive, skinned on the CPU with
/// `method` at `time` of `clip`, in the mesh's space.
pub fn skinned_vertices(
    rig: &rigscope::rig::Rig,
    clip: Option<usize>,
    time: f32,
    method: rigscope::skin::SkinningMethod,
) -> Vec<glam::DVec3> {
    let mut pose = rigscope::anim::PoseBuffers::new(rig);
    let inputs = rigscope::anim::PoseInputs {
        dual_quaternions: method.needs_dual_quats(),
        ..rigscope::anim::PoseInputs::clip_at(clip, time)
    };
    rigscope::anim::evaluate_pose(rig, &inputs, &mut pose);
    let mut skinned = rigscope::skin::SkinnedPose::new(rig);
    skinned.skin(rig, &pose, method);
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

/// [`skinned_vertices`] with linear blend skinning.
pub fn skinned_lbs(rig: &rigscope::rig::Rig, clip: Option<usize>, time: f32) -> Vec<glam::DVec3> {
    skinned_vertices(rig, clip, time, rigscope::skin::SkinningMethod::Lbs)
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
pub fn linear_curve(id: u32, end: f64) -> String {
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
pub fn triangle_mesh(vertices: &str) -> String {
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
