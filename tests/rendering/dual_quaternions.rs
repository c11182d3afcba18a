//! Dual quaternion skinning on rigs whose skinned meshes hang under a scaled node (Mixamo and
//! Blender exports put them under a 0.01-scaled armature). glTF ignores that node's transform for
//! skinned meshes, so the palette is built in world space and carries no ×100 scale that dual
//! quaternions would drop: DQS must then land where LBS does, except where their blending
//! differs (bent joints), on the CPU and on the GPU alike.

use crate::common;
use crate::common::gpu;

use crate::common::{load_rig, shared_rigs};
use glam::Vec3;
use rigscope::anim::{PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::rig::Rig;
use rigscope::screenshot::render_view;
use rigscope::skin::{SkinnedPose, SkinningMethod, SkinningPath, max_non_rigidity};
use rigscope::viewer::Viewer;

/// Every skinned vertex in world space, posed at `time` of clip 0, skinned on the CPU.
fn posed(rig: &Rig, time: f32, method: SkinningMethod) -> Vec<Vec3> {
    let mut pose = PoseBuffers::new(rig);
    let inputs = PoseInputs {
        dual_quaternions: method == SkinningMethod::Dqs,
        ..PoseInputs::clip_at(Some(0), time)
    };
    evaluate_pose(rig, &inputs, &mut pose);
    let mut skinned = SkinnedPose::new(rig);
    skinned.skin(rig, &pose, method);
    let mut points = Vec::new();
    for (i, meshes) in skinned.meshes.iter().enumerate() {
        let world = pose.instance_world(rig, i);
        for out in meshes {
            points.extend(out.positions.iter().map(|&p| world.transform_point3(p)));
        }
    }
    points
}

/// Per skinned vertex, in the order of [`posed`]: how far apart its influencing joints alone
/// would put it (0 for a vertex on one joint). Any blend of those joints, linear or dual
/// quaternion, moves it by about that much at most, so LBS and DQS may differ by no more.
fn joint_spread(rig: &Rig, pose: &PoseBuffers) -> Vec<f32> {
    let mut spread = Vec::new();
    for (i, instance) in rig.instances.iter().enumerate().filter(|(_, i)| i.skin.is_some()) {
        for primitive in &rig.meshes[instance.mesh].primitives {
            let Some(influences) = &primitive.influences else {
                continue;
            };
            for (v, &p) in primitive.positions.iter().enumerate() {
                let moved: Vec<Vec3> = influences
                    .of_vertex(v)
                    .filter(|&(_, w)| w > 0.0)
                    .filter_map(|(j, _)| pose.palettes[i].get(j as usize))
                    .map(|m| m.transform_point3(p))
                    .collect();
                let far = moved
                    .iter()
                    .flat_map(|a| moved.iter().map(move |b| a.distance(*b)))
                    .fold(0.0, f32::max);
                spread.push(far);
            }
        }
    }
    spread
}

#[test]
fn dqs_follows_lbs_on_rigs_under_a_scaled_armature() {
    let Some(dir) = shared_rigs() else { return };
    for file in [
        "real/Xbot.glb",
        "Fox.glb",
        "real/RobotExpressive.glb",
        "real/BrainStem.glb",
        "real/RiggedFigure.glb",
        "RiggedSimple.gltf",
        "SimpleSkin.gltf",
    ] {
        // Weights as DQS reads them, so that LBS is compared on the same weights.
        let rig = common::with_normalized_weights(load_rig(&dir, file));
        let mut pose = PoseBuffers::new(&rig);
        pose.evaluate(&rig, Some(0), 0.5);
        // None of these rigs scales or shears a joint, so the panel's warning stays quiet.
        let non_rigid = pose.palettes.iter().map(|p| max_non_rigidity(p)).fold(0.0, f32::max);
        assert!(non_rigid < 1e-3, "{file}: the palette is not rigid ({non_rigid})");

        let lbs = posed(&rig, 0.5, SkinningMethod::Lbs);
        let dqs = posed(&rig, 0.5, SkinningMethod::Dqs);
        let (min, max) = lbs.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &p| {
            (lo.min(p), hi.max(p))
        });
        let size = (max - min).length();
        let mut distances: Vec<f32> = lbs.iter().zip(&dqs).map(|(a, b)| a.distance(*b) / size).collect();
        // Vertices on one joint move identically; blended ones differ by the volume LBS loses,
        // which is bounded by how far apart their joints pull.
        let spread = joint_spread(&rig, &pose);
        assert_eq!(spread.len(), distances.len());
        for (v, (d, s)) in distances.iter().zip(&spread).enumerate() {
            assert!(
                *d <= s / size + 1e-4,
                "{file}: skinned vertex {v} is {d:.2e} of the size apart, its joints only {:.2e}",
                s / size
            );
        }
        distances.sort_by(f32::total_cmp);
        let (median, worst) = (distances[distances.len() / 2], distances[distances.len() - 1]);
        println!("{file}: DQS vs LBS, median {median:.2e}, largest {worst:.2e} of the size");
        assert!(worst < 0.05, "{file}: largest {worst:.2e}");
    }
}

#[test]
fn dqs_renders_xbot_where_lbs_does_on_both_paths() {
    let Some(dir) = shared_rigs() else { return };
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = Viewer::new(load_rig(&dir, "real/Xbot.glb"), None);
    viewer.view.options.grid = false;
    viewer.set_playing(false);
    viewer.seek(0.5);
    let foreground = |image: &image::RgbaImage| -> Vec<bool> {
        let background = *image.get_pixel(0, 0);
        image
            .pixels()
            .map(|p| p.0.iter().zip(background.0).any(|(a, b)| a.abs_diff(b) > 24))
            .collect()
    };
    viewer.set_skinning(SkinningPath::Gpu, SkinningMethod::Lbs);
    let lbs = foreground(&render_view(&gpu, &mut viewer, 200, 200).unwrap());
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Dqs);
        let dqs = foreground(&render_view(&gpu, &mut viewer, 200, 200).unwrap());
        let both = lbs.iter().zip(&dqs).filter(|(a, b)| **a && **b).count();
        let either = lbs.iter().zip(&dqs).filter(|(a, b)| **a || **b).count();
        let overlap = both as f32 / either.max(1) as f32;
        println!("{path:?} DQS vs GPU LBS: {either} pixels covered, silhouette overlap {overlap:.3}");
        assert!(
            either > 2000 && overlap > 0.95,
            "{path:?}: overlap {overlap}, {either} pixels"
        );
    }
}
