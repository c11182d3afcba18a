//! The two sides of a comparison are two documents in one view, each with its own skinning
//! choice: the other side skins as the active one does (path, method and DQS mask, carried by
//! joint name) until it is given a skinning of its own.

use crate::common;
use crate::common::gpu;

use glam::Vec3;
use rigscope::rig::Rig;
use rigscope::skin::{SkinnedPose, SkinningMethod, SkinningPath};
use rigscope::viewer::CompareLayout;
use rigscope::viewer::Viewer;

/// Every skinned vertex position of `skinned`, instance by instance.
fn positions(rig: &Rig, skinned: &SkinnedPose) -> Vec<Vec3> {
    let mut all = Vec::new();
    for (i, instance) in rig.instances.iter().enumerate() {
        for k in 0..rig.meshes[instance.mesh].primitives.len() {
            all.extend_from_slice(skinned.positions(rig, i, k));
        }
    }
    all
}

/// The largest distance between matching points.
fn largest_distance(a: &[Vec3], b: &[Vec3]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(p, q)| p.distance(*q)).fold(0.0, f32::max)
}

/// The demo rig compared with itself, mid-clip, skinned on the CPU (both sides' vertices are
/// then computed each frame).
fn compared_with_itself() -> Viewer {
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.compare_with(common::load_demo(), None, CompareLayout::Side);
    viewer.select_clip(Some(0));
    viewer.seek(0.7);
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Blended);
    viewer
}

/// Both sides' CPU-skinned vertices after a frame.
fn both_sides(viewer: &mut Viewer) -> (Vec<Vec3>, Vec<Vec3>) {
    viewer.prepare_frame();
    let active = positions(viewer.rig(), viewer.last_skinned());
    let side = viewer.comparison().unwrap().other();
    (active, positions(side.rig(), side.last_skinned()))
}

#[test]
fn the_other_side_skins_with_the_active_side_s_method_and_dqs_mask() {
    let mut viewer = compared_with_itself();
    let (unmasked, _) = both_sides(&mut viewer);
    // A mask on a joint that bends the demo rig's mesh: its vertices turn toward DQS.
    let joint = (viewer.rig().skins[0].joints.iter().copied())
        .find(|&j| viewer.rig().nodes[j].parent.is_some())
        .expect("a joint under the root");
    viewer.set_dqs_mask(vec![joint]);
    let (active, other) = both_sides(&mut viewer);
    assert!(
        largest_distance(&active, &unmasked) > 1e-4,
        "the mask changes the active side"
    );
    let side = viewer.comparison().unwrap().other();
    assert_eq!(side.skinning_method(), SkinningMethod::Blended);
    assert_eq!(side.skinning_path(), SkinningPath::Cpu);
    let names =
        |rig: &Rig, mask: &[usize]| -> Vec<String> { mask.iter().map(|&n| rig.nodes[n].name.clone()).collect() };
    assert_eq!(
        names(side.rig(), side.dqs_mask()),
        names(viewer.rig(), viewer.dqs_mask()),
        "the mask is carried by joint name"
    );
    assert_eq!(
        largest_distance(&active, &other),
        0.0,
        "the same rig skins the same on both sides"
    );
}

#[test]
fn each_side_keeps_a_skinning_choice_of_its_own() {
    let mut viewer = compared_with_itself();
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    viewer.set_other_side_skinning(Some(SkinningMethod::Dqs));
    let (lbs, dqs) = both_sides(&mut viewer);
    // The reference: the demo rig alone at the same moment with each method.
    for (method, side) in [(SkinningMethod::Lbs, &lbs), (SkinningMethod::Dqs, &dqs)] {
        let mut alone = Viewer::new(common::load_demo(), None);
        alone.select_clip(Some(0));
        alone.seek(0.7);
        alone.set_skinning(SkinningPath::Cpu, method);
        alone.prepare_frame();
        let reference = positions(alone.rig(), alone.last_skinned());
        assert_eq!(largest_distance(side, &reference), 0.0, "{method:?}");
    }
    assert!(
        largest_distance(&lbs, &dqs) > 1e-4,
        "the two methods differ on the demo rig"
    );
    // A change on the active side leaves the other side's own choice alone.
    viewer.set_skinning(SkinningPath::Gpu, SkinningMethod::Blended);
    viewer.prepare_frame();
    let side = viewer.comparison().unwrap().other();
    assert_eq!(
        (side.skinning_path(), side.skinning_method()),
        (SkinningPath::Cpu, SkinningMethod::Dqs)
    );
    let active = viewer.frame_state(1.0);
    let other = viewer.other_frame_state(1.0).unwrap();
    assert_eq!(
        (active.method, other.method),
        (SkinningMethod::Blended, SkinningMethod::Dqs)
    );
}

#[test]
fn side_by_side_halves_of_the_same_rig_with_a_dqs_mask_draw_the_same_pixels() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = compared_with_itself();
    viewer.set_skinning(SkinningPath::Gpu, SkinningMethod::Blended);
    let joint = (viewer.rig().skins[0].joints.iter().copied())
        .find(|&j| viewer.rig().nodes[j].parent.is_some())
        .unwrap();
    viewer.set_dqs_mask(vec![joint]);
    // The active side's skeleton is colored by its joints' errors against the other side's.
    viewer.view.options.skeleton.show = false;
    // The grid's floor shading is not the same in the two halves.
    viewer.view.options.grid = false;
    viewer.frame_all();
    let (width, height) = (320, 160);
    let image = rigscope::screenshot::render_view(&gpu, &mut viewer, width, height).expect("renders");
    let (left, right) = rigscope::draw::compare::split_width(width);
    assert_eq!(left, right);
    let mut differing = 0;
    for y in 0..height {
        for x in 0..left {
            let (a, b) = (image.get_pixel(x, y), image.get_pixel(x + left, y));
            // The mesh (orange) against the blue-grey floor and background.
            let mesh = |p: &image::Rgba<u8>| p[0] > p[2].saturating_add(60);
            if (mesh(a) || mesh(b)) && a.0.iter().zip(b.0).any(|(p, q)| p.abs_diff(q) > 2) {
                differing += 1;
            }
        }
    }
    let mesh_pixels = (0..height)
        .flat_map(|y| (0..left).map(move |x| (x, y)))
        .filter(|&(x, y)| image.get_pixel(x, y)[0] > image.get_pixel(x, y)[2].saturating_add(60))
        .count();
    assert!(
        mesh_pixels > 1000,
        "the mesh fills part of the view ({mesh_pixels} pixels)"
    );
    assert_eq!(differing, 0, "the two halves draw the same skinned mesh");
}
