//! The shared WGSL skinning function, run in a compute pass and read back, against an f64 linear
//! blend skinning written here independently of the crate's CPU path.

use crate::common;
use crate::common::gpu;

use glam::{DMat3, DMat4, DVec3, DVec4, Mat4, Vec3};
use rigscope::anim::JointOverride;
use rigscope::anim::{PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::render::compute::ComputeSkinner;
use rigscope::rig::{Primitive, Rig};
use rigscope::skin::{SkinnedPose, SkinningMethod, posed_bounds};

/// f64 LBS of one vertex: Σ wᵢ·paletteᵢ over joints inside the palette, identity when no weight.
fn reference_vertex(palette: &[Mat4], primitive: &Primitive, v: usize) -> (DVec3, DVec3) {
    let influences = primitive.influences.as_ref().expect("skinned primitive");
    let mut m = DMat4::ZERO;
    let mut total = 0.0;
    for (joint, weight) in influences.of_vertex(v) {
        if weight != 0.0 && (joint as usize) < palette.len() {
            m += palette[joint as usize].as_dmat4() * f64::from(weight);
            total += f64::from(weight);
        }
    }
    if total == 0.0 {
        m = DMat4::IDENTITY;
    }
    let p = m * primitive.positions[v].as_dvec3().extend(1.0);
    let normal_matrix = DMat3::from_mat4(m).inverse().transpose();
    let n = (normal_matrix * primitive.normals[v].as_dvec3()).normalize_or_zero();
    (DVec4::truncate(p), n)
}

/// The shared rigs both paths are checked on; the FBX ones are Maya's character and Blender's
/// with up to six influences per vertex (two sets).
const SHARED_RIGS: [&str; 5] = [
    "Fox.glb",
    "RiggedSimple.gltf",
    "SimpleSkin.gltf",
    "fbx/maya_kenney_character_7700_binary.fbx",
    "fbx/animation_with_skeleton.fbx",
];

struct Agreement {
    max_position_error: f64,
    max_normal_error: f64,
    vertices: usize,
}

/// The size of the rig's bounds in `pose`, skinned on the CPU.
fn posed_size(rig: &Rig, pose: &PoseBuffers) -> f32 {
    let mut skinned = SkinnedPose::new(rig);
    skinned.skin(rig, pose, SkinningMethod::Lbs);
    posed_bounds(rig, pose, &skinned).size()
}

fn compare_rig(skinner: &ComputeSkinner, gpu: &rigscope::render::Gpu, rig: &Rig) -> Agreement {
    let mut pose = PoseBuffers::new(rig);
    let size = f64::from(posed_size(rig, &pose));
    let mut result = Agreement {
        max_position_error: 0.0,
        max_normal_error: 0.0,
        vertices: 0,
    };
    let clips: Vec<Option<usize>> = if rig.clips.is_empty() {
        vec![None]
    } else {
        (0..rig.clips.len()).map(Some).collect()
    };
    for clip in clips {
        let duration = clip.map_or(0.0, |c| rig.clips[c].duration);
        for fraction in [0.0, 0.37, 0.71, 1.0] {
            let time = duration * fraction;
            pose.evaluate(rig, clip, time);
            for (i, instance) in rig.instances.iter().enumerate() {
                if instance.skin.is_none() {
                    continue;
                }
                let palette = &pose.palettes[i];
                for primitive in &rig.meshes[instance.mesh].primitives {
                    let (positions, normals) = skinner
                        .skin(gpu, primitive, palette, &[], SkinningMethod::Lbs)
                        .expect("compute skinning runs");
                    assert_eq!(positions.len(), primitive.vertex_count());
                    for v in 0..primitive.vertex_count() {
                        let (p, n) = reference_vertex(palette, primitive, v);
                        let dp = (positions[v].as_dvec3() - p).abs().max_element();
                        let dn = (normals[v].as_dvec3() - n).abs().max_element();
                        result.max_position_error = result.max_position_error.max(dp / size);
                        result.max_normal_error = result.max_normal_error.max(dn);
                    }
                    result.vertices += primitive.vertex_count();
                }
            }
        }
    }
    result
}

fn check(name: &str, skinner: &ComputeSkinner, gpu: &rigscope::render::Gpu, rig: &Rig) {
    assert!(
        rig.instances.iter().any(|i| i.skin.is_some()),
        "{name} has a skinned mesh"
    );
    let a = compare_rig(skinner, gpu, rig);
    println!(
        "{name}: {} skinned vertices compared, max position error {:.3e} of the rig size, max normal error {:.3e}",
        a.vertices, a.max_position_error, a.max_normal_error
    );
    assert!(a.vertices > 0);
    assert!(
        a.max_position_error <= 1e-4,
        "{name}: GPU positions deviate by {:.3e} of the rig size",
        a.max_position_error
    );
    assert!(
        a.max_normal_error <= 1e-3,
        "{name}: GPU normals deviate by {:.3e}",
        a.max_normal_error
    );
}

#[test]
fn compute_pass_matches_f64_reference_on_shared_rigs_and_demo() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let skinner = ComputeSkinner::new(&gpu);
    check("demo", &skinner, &gpu, &common::load_demo());
    let Some(dir) = common::shared_rigs() else { return };
    for file in SHARED_RIGS {
        check(file, &skinner, &gpu, &common::load_rig(&dir, file));
    }
}

#[test]
fn out_of_range_joints_and_zero_weights_are_handled_like_the_cpu() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let skinner = ComputeSkinner::new(&gpu);
    let palette = [
        Mat4::from_translation(Vec3::new(1.0, 0.0, 0.0)),
        Mat4::from_rotation_z(0.5),
    ];
    let primitive = Primitive {
        positions: vec![Vec3::new(1.0, 2.0, 3.0); 4],
        normals: vec![Vec3::Y; 4],
        uvs: vec![glam::Vec2::ZERO; 4],
        uv_sets: Default::default(),
        tangents: Vec::new(),
        influences: Some(rigscope::rig::Influences {
            sets: 2,
            joints: vec![
                [0, 1, 0, 0],
                [0; 4],
                [7, 0, 0, 0],
                [0; 4],
                [0; 4],
                [0; 4],
                [0; 4],
                [1, 0, 0, 0],
            ],
            weights: vec![
                [0.5, 0.5, 0.0, 0.0],
                [0.0; 4],
                [0.6, 0.4, 0.0, 0.0],
                [0.0; 4],
                [0.0; 4],
                [0.0; 4],
                [0.0; 4],
                [1.0, 0.0, 0.0, 0.0],
            ],
        }),
        indices: vec![],
        material: None,
        colors: Vec::new(),
    };
    let (positions, normals) = skinner
        .skin(&gpu, &primitive, &palette, &[], SkinningMethod::Lbs)
        .unwrap();
    for v in 0..4 {
        let (p, n) = reference_vertex(&palette, &primitive, v);
        assert!(
            (positions[v].as_dvec3() - p).length() < 1e-5,
            "vertex {v}: {} vs {p}",
            positions[v]
        );
        assert!(
            (normals[v].as_dvec3() - n).length() < 1e-5,
            "vertex {v}: {} vs {n}",
            normals[v]
        );
    }
    // Vertex 1 names joint 7 of a 2-joint palette: only joint 0's share (0.4) applies.
    let p = Vec3::new(1.0, 2.0, 3.0);
    assert!(
        (positions[1] - (p * 0.4 + Vec3::new(0.4, 0.0, 0.0))).length() < 1e-5,
        "{}",
        positions[1]
    );
    // Vertex 2 has no weight: it stays where it is.
    assert_eq!(positions[2], p);
    // Vertex 3 is skinned by its second influence set only.
    assert!(
        (positions[3] - Mat4::from_rotation_z(0.5).transform_point3(p)).length() < 1e-5,
        "{}",
        positions[3]
    );
}

/// The CPU path and the compute pass, both methods, on a pose with joints bent by hand.
fn paths_agree(name: &str, skinner: &ComputeSkinner, gpu: &rigscope::render::Gpu, rig: &Rig) {
    let mut pose = PoseBuffers::new(rig);
    let size = posed_size(rig, &pose);
    let skin = &rig.skins[0];
    let mut overrides = vec![JointOverride::IDENTITY; rig.nodes.len()];
    for (k, &joint) in skin.joints.iter().enumerate().skip(1).step_by(3) {
        overrides[joint] = JointOverride::from_euler_degrees(Vec3::new(10.0 * k as f32, 35.0, -20.0));
    }
    let clip = (!rig.clips.is_empty()).then_some(0);
    let time = clip.map_or(0.0, |c| rig.clips[c].duration * 0.4);
    let inputs = PoseInputs {
        overrides: &overrides,
        dual_quaternions: true,
        ..PoseInputs::clip_at(clip, time)
    };
    evaluate_pose(rig, &inputs, &mut pose);
    let mut skinned = SkinnedPose::new(rig);
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs] {
        skinned.skin(rig, &pose, method);
        let mut max = 0.0f32;
        let mut sum = 0.0f64;
        let mut count = 0usize;
        for (i, instance) in rig.instances.iter().enumerate().filter(|(_, i)| i.skin.is_some()) {
            for (k, primitive) in rig.meshes[instance.mesh].primitives.iter().enumerate() {
                let (positions, _) = skinner
                    .skin(gpu, primitive, &pose.palettes[i], &pose.dual_quats[i], method)
                    .unwrap();
                for (gpu_p, cpu_p) in positions.iter().zip(&skinned.meshes[i][k].positions) {
                    let d = (*gpu_p - *cpu_p).abs().max_element();
                    max = max.max(d);
                    sum += f64::from(d);
                    count += 1;
                }
            }
        }
        println!(
            "{name} {method:?}: {count} vertices, max deviation {:.3e} ({:.3e} of the rig size), mean {:.3e}",
            max,
            max / size,
            sum / count as f64
        );
        assert!(count > 0);
        assert!(
            max / size <= 1e-4,
            "{name} {method:?}: CPU and GPU differ by {:.3e} of the rig size",
            max / size
        );
    }
}

#[test]
fn cpu_and_gpu_paths_agree_with_bent_joints_for_lbs_and_dqs() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let skinner = ComputeSkinner::new(&gpu);
    paths_agree("demo", &skinner, &gpu, &common::load_demo());
    let Some(dir) = common::shared_rigs() else { return };
    for file in SHARED_RIGS {
        paths_agree(file, &skinner, &gpu, &common::load_rig(&dir, file));
    }
}

#[test]
fn the_comparison_lists_the_vertices_over_its_threshold_worst_first() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let skinner = ComputeSkinner::new(&gpu);
    let rig = common::load_demo();
    let mut pose = PoseBuffers::new(&rig);
    pose.evaluate(&rig, (!rig.clips.is_empty()).then_some(0), 0.3);
    let mut skinned = SkinnedPose::new(&rig);
    skinned.skin(&rig, &pose, SkinningMethod::Lbs);
    let instance = rig.instances.iter().position(|i| i.skin.is_some()).unwrap();
    let size = posed_size(&rig, &pose);
    // Two vertices moved on the CPU side by 1% and 3% of the rig size: far over the threshold.
    let positions = &mut skinned.meshes[instance][0].positions;
    positions[5].y += 0.01 * size;
    positions[40].x -= 0.03 * size;
    let comparison = skinner
        .compare(&gpu, &rig, &pose, &skinned, SkinningMethod::Lbs, size)
        .unwrap();
    assert_eq!(comparison.over_threshold, 2, "{comparison:?}");
    let listed: Vec<(usize, usize, usize)> = (comparison.deviating.iter())
        .map(|d| (d.instance, d.primitive, d.vertex))
        .collect();
    assert_eq!(listed, [(instance, 0, 40), (instance, 0, 5)]);
    for (d, moved) in comparison.deviating.iter().zip([0.03, 0.01]) {
        assert!((d.deviation / (moved * size) - 1.0).abs() < 1e-3, "{d:?}");
    }
}

/// The GPU skins what an engine profile draws: Fox's influences as each engine keeps them,
/// through the compute pass, against the f64 reference of those influences.
#[test]
fn the_gpu_pass_draws_each_engine_profile_as_its_influences_say() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let Some(dir) = common::shared_rigs() else { return };
    let skinner = ComputeSkinner::new(&gpu);
    let fox = common::load_rig(&dir, "Fox.glb");
    for engine in rigscope::engine::Engine::ALL {
        let drawn = engine.draw(&fox).expect("every engine loads Fox");
        check(&format!("Fox as {}", engine.name()), &skinner, &gpu, &drawn);
    }
}
