//! Mirroring a pose left ↔ right on Xbot: mirroring twice gives the pose back, and the mirrored
//! pose's skinned mesh is the mirror image of the original within Xbot's own asymmetry at rest.

use crate::common;

use glam::Vec3;
use rigscope::anim::mirror::{PoseMirror, world_matrices};
use rigscope::rig::Rig;
use rigscope::skin::{SkinnedPose, SkinningMethod, SkinningPath};
use rigscope::viewer::Viewer;

fn xbot() -> Option<(Viewer, Rig)> {
    let dir = common::shared_folder("rigs/real")?;
    let rig = common::load_rig(&dir, "Xbot.glb");
    let mut viewer = Viewer::new(common::load_rig(&dir, "Xbot.glb"), None);
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    Some((viewer, rig))
}

fn walk(viewer: &mut Viewer, time: f32) {
    let walk = viewer.rig().find_clip("walk").expect("Xbot has a walk");
    viewer.select_clip(Some(walk));
    viewer.set_playing(false);
    viewer.seek(time);
}

/// Every skinned vertex in model space.
fn surface(viewer: &mut Viewer) -> Vec<Vec3> {
    viewer.skin_on_cpu();
    let rig = std::sync::Arc::clone(viewer.rig());
    let skinned: &SkinnedPose = viewer.last_skinned();
    let pose = viewer.last_pose();
    let mut points = Vec::new();
    for (i, instance) in rig.instances.iter().enumerate() {
        let world = pose.instance_world(&rig, i);
        for k in 0..rig.meshes[instance.mesh].primitives.len() {
            points.extend(skinned.positions(&rig, i, k).iter().map(|&p| world.transform_point3(p)));
        }
    }
    points
}

/// The mean distance from every 7th point of `a`, reflected, to the nearest point of `b`.
fn mirror_distance(mirror: &PoseMirror, a: &[Vec3], b: &[Vec3]) -> f32 {
    let sample: Vec<Vec3> = a.iter().step_by(7).map(|&p| mirror.reflect_point(p)).collect();
    let total: f32 = sample
        .iter()
        .map(|p| b.iter().map(|q| p.distance_squared(*q)).fold(f32::MAX, f32::min).sqrt())
        .sum();
    total / sample.len() as f32
}

#[test]
fn mirroring_xbot_s_walk_twice_gives_the_pose_back() {
    let Some((mut viewer, rig)) = xbot() else { return };
    let pairs = rigscope::audit::symmetry::name_pairs(&rig);
    let mirror = PoseMirror::new(&rig, &pairs).expect("Xbot has Left/Right joints");
    let size = viewer.document().rest_bounds.size();
    let duration = viewer.rig().clips[viewer.rig().find_clip("walk").unwrap()].duration;
    for k in 0..7 {
        walk(&mut viewer, duration * k as f32 / 7.0);
        let locals = viewer.pose().locals.clone();
        let (mut once, mut twice) = (Vec::new(), Vec::new());
        mirror.mirror_locals(&rig, &locals, &mut once);
        mirror.mirror_locals(&rig, &once, &mut twice);
        let (want, got) = (world_matrices(&rig, &locals), world_matrices(&rig, &twice));
        for (node, (a, b)) in want.iter().zip(&got).enumerate() {
            let moved = a.w_axis.distance(b.w_axis) / size;
            let turned = (a.x_axis - b.x_axis).length().max((a.y_axis - b.y_axis).length());
            assert!(
                moved < 1e-5 && turned < 1e-5,
                "time {k}/7, node {node}: {moved:.2e} of the size, {turned:.2e}"
            );
        }
    }
}

#[test]
fn the_mirrored_walk_s_mesh_is_the_mirror_image_of_the_walk_and_undo_takes_it_back() {
    let Some((mut viewer, rig)) = xbot() else { return };
    let mirror = PoseMirror::new(&rig, &rigscope::audit::symmetry::name_pairs(&rig)).unwrap();
    let size = viewer.document().rest_bounds.size();
    viewer.select_clip(None);
    let rest = surface(&mut viewer);
    // Xbot's own asymmetry: its rest mesh against its mirror image.
    let natural = mirror_distance(&mirror, &rest, &rest);

    walk(&mut viewer, 0.4);
    let walking = surface(&mut viewer);
    let unmirrored = mirror_distance(&mirror, &walking, &walking);
    assert!(
        unmirrored > 5.0 * natural.max(1e-4 * size),
        "mid-stride the walk is not symmetric"
    );
    viewer.mirror_pose().expect("mirrored");
    assert!(!viewer.player().playing);
    let mirrored = surface(&mut viewer);
    let distance = mirror_distance(&mirror, &walking, &mirrored);
    assert!(
        distance <= 1.5 * natural + 1e-4 * size,
        "mirrored mesh {:.2e} from the walk's mirror image; Xbot's rest is {:.2e} from its own",
        distance / size,
        natural / size
    );

    assert_eq!(viewer.undo().as_deref(), Some("mirror pose"));
    let back = surface(&mut viewer);
    let largest = (walking.iter().zip(&back))
        .map(|(a, b)| a.distance(*b))
        .fold(0.0, f32::max);
    assert!(largest < 1e-5 * size, "undone: {:.2e} of the size", largest / size);
}

#[test]
fn render_mirror_pose_of_a_rig_without_sides_says_why_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mirrored.png");
    let output = common::rigscope([
        "render".as_ref(),
        "demo".as_ref(),
        "--mirror-pose".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--mirror-pose: no left/right joint pairs"), "{stderr}");
    assert!(!out.exists());
}
