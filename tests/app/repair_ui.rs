//! The Repair weights window driven as a person would: opened from Tools, its counts read, the
//! repair previewed, Before and After switched and the preview ended.

use crate::common;

use crate::common::skinned::{SkinnedMesh, TestJoint, only};
use egui_kittest::kittest::Queryable;
use glam::Vec3;
use rigscope::viewer::Viewer;
use std::sync::Arc;

/// Rings of vertices on a tube along +Y; the upper half's weights sum to 1.4.
const RINGS: usize = 11;
const SIDES: usize = 12;

fn overweight_tube() -> rigscope::rig::Rig {
    let mut mesh = SkinnedMesh::new(vec![
        TestJoint::new("upper", None, Vec3::ZERO),
        TestJoint::new("lower", Some(0), Vec3::Y),
    ]);
    mesh.add_tube(Vec3::ZERO, 2.0 * Vec3::Y, 0.2, RINGS, SIDES, |p| {
        if p.y > 1.0 + 1e-4 {
            ([0, 1, 0, 0], [0.7, 0.7, 0.0, 0.0])
        } else {
            only(0)
        }
    });
    mesh.rig()
}

fn weight_sums(rig: &rigscope::rig::Rig) -> Vec<f32> {
    let primitive = &rig.meshes[0].primitives[0];
    let influences = primitive.influences.as_ref().unwrap();
    (0..primitive.vertex_count())
        .map(|v| influences.of_vertex(v).map(|(_, w)| w).sum())
        .collect()
}

#[test]
fn the_window_counts_previews_switches_before_and_after_and_ends_the_preview() {
    let rig = overweight_tube();
    // Rings above y = 1: rings 6 to 10 of 0..=10.
    let overweight = weight_sums(&rig).iter().filter(|&&s| (s - 1.0).abs() > 1e-3).count();
    assert_eq!(overweight, 5 * SIDES);
    let mut harness = common::main_window(Viewer::new(rig, None), 1400.0, 1000.0);
    harness.run();
    harness.get_by_label("Tools").click();
    harness.run();
    harness.get_by_label_contains("Repair weights").click();
    harness.run();
    assert!(harness.state().1.repair.open);
    // Fill, mirror, prune and limit find nothing; normalize finds the overweight rings.
    assert!(harness.query_by_label(&format!("{overweight} vertices")).is_some());
    assert_eq!(harness.query_all_by_label("0 vertices").count(), 4);

    let loaded = Arc::clone(harness.state().0.rig());
    harness.get_by_label("Preview").click();
    harness.run();
    let viewer = &harness.state().0;
    assert!(viewer.showing_repaired());
    assert!(weight_sums(viewer.rig()).iter().all(|s| (s - 1.0).abs() < 1e-6));

    harness.get_by_label("Before").click();
    harness.run();
    assert!(!harness.state().0.showing_repaired());
    assert!(Arc::ptr_eq(harness.state().0.rig(), &loaded));
    harness.get_by_label("After").click();
    harness.run();
    assert!(harness.state().0.showing_repaired());
    harness.key_press(egui::Key::B);
    harness.run();
    assert!(!harness.state().0.showing_repaired(), "B switches to Before");
    harness.key_press(egui::Key::B);
    harness.run();
    assert!(harness.state().0.showing_repaired(), "and back to After");

    harness.get_by_label("End preview").click();
    harness.run();
    assert!(harness.state().0.previewed_repair().is_none());
    assert!(Arc::ptr_eq(harness.state().0.rig(), &loaded));
    harness.key_press(egui::Key::W);
    harness.run();
    assert!(!harness.state().1.repair.open, "W hides the window");
}
