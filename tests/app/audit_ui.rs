//! The Audit window driven as a person would: opened by its key, run, and its worst joint
//! clicked; then the pose, selection and skinned vertices checked against the audit's numbers.

use crate::common;

use crate::common::skinned::hard_elbow;
use egui_kittest::kittest::Queryable;
use glam::{Mat4, Quat, Vec3};
use rigscope::ui::audit::row_label;
use rigscope::viewer::Viewer;
use std::time::Instant;

fn triangle_area(p: &[Vec3], t: &[u32]) -> f32 {
    let [a, b, c] = [p[t[0] as usize], p[t[1] as usize], p[t[2] as usize]];
    (b - a).cross(c - a).length() / 2.0
}

/// Runs the audit from the window's button, draws a frame while it runs, and waits for its
/// report; the seconds it took.
fn run_audit(harness: &mut egui_kittest::Harness<'_, (Viewer, rigscope::ui::UiState)>) -> f64 {
    harness.get_by_label("Run audit").click();
    harness.step();
    assert!(
        harness.state().1.audit.running.is_some(),
        "the button started the audit"
    );
    let started = Instant::now();
    harness.step();
    let (viewer, ui) = harness.state_mut();
    ui.audit.wait(viewer);
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        harness.state().1.audit.report.is_some(),
        "the audit handed in its report"
    );
    harness.run();
    seconds
}

#[test]
fn clicking_the_worst_joint_poses_the_rig_at_its_worst_angle_and_selects_it() {
    let mut harness = common::main_window(Viewer::new(hard_elbow().rig(), None), 1400.0, 1000.0);
    harness.run();
    harness.key_press(egui::Key::A);
    harness.run();
    assert!(harness.state().1.audit.open);
    run_audit(&mut harness);
    let report = harness.state().1.audit.report.clone().unwrap().1;
    let worst = &report.joints[0];
    assert_eq!(worst.name, "lower");
    let (curve, sample) = worst.worst().unwrap();
    let (axis, method, angle) = (curve.axis, curve.method, sample.angle_deg);
    assert!(harness.state().0.view.selected_joint != Some(worst.node));

    harness.get_by_label(&row_label(worst)).click();
    harness.run();
    let viewer = &mut harness.state_mut().0;
    assert_eq!(viewer.view.selected_joint, Some(worst.node));
    assert_eq!(viewer.skinning_method(), method);
    let bend = viewer.animation().overrides[worst.node];
    assert!(!bend.is_identity());
    assert_eq!(bend, worst.bend(viewer.rig(), axis, angle));
    assert!(!viewer.finding_marks().is_empty(), "the worst vertices are marked");

    // The palette turns `lower` and `tip` about the elbow as the audit did, and nothing else.
    let pivot = Vec3::Y;
    let turn = Mat4::from_translation(pivot)
        * Mat4::from_quat(Quat::from_axis_angle(worst.axis_direction(axis), angle.to_radians()))
        * Mat4::from_translation(-pivot);
    let palette = viewer.pose().palettes[0].clone();
    assert!(palette[0].abs_diff_eq(Mat4::IDENTITY, 1e-5));
    for slot in [1, 2] {
        assert!(
            palette[slot].abs_diff_eq(turn, 1e-4),
            "{slot}: {:?} vs {turn:?}",
            palette[slot]
        );
    }

    // The CPU-skinned triangles shrink and grow by what the audit measured at that pose.
    let rig = viewer.rig().clone();
    let primitive = &rig.meshes[0].primitives[0];
    let posed = viewer.skin_on_cpu().meshes[0][0].positions.clone();
    let (mut least, mut most) = (f32::INFINITY, 0.0f32);
    for t in primitive.indices.chunks_exact(3) {
        let ratio = triangle_area(&posed, t) / triangle_area(&primitive.positions, t);
        least = least.min(ratio);
        most = most.max(ratio);
    }
    assert!(least < 0.999 || most > 1.001, "the pose deforms the mesh");
    assert!(
        (least - sample.min_area_ratio).abs() < 1e-3,
        "{least} vs {}",
        sample.min_area_ratio
    );
    assert!(
        (most - sample.max_area_ratio).abs() < 1e-3 * most.max(1.0),
        "{most} vs {}",
        sample.max_area_ratio
    );
}

/// Xbot audited in the window while it keeps drawing frames: the report arrives, and its worst
/// joint's row selects that joint.
#[test]
fn xbot_is_audited_in_the_background_and_its_worst_joint_selected() {
    let Some(dir) = common::shared_folder("rigs/real") else {
        return;
    };
    let rig = common::load_rig(&dir, "Xbot.glb");
    let mut harness = common::main_window(Viewer::new(rig, None), 1400.0, 1000.0);
    harness.run();
    harness.key_press(egui::Key::A);
    harness.run();
    let seconds = run_audit(&mut harness);
    let report = harness.state().1.audit.report.clone().unwrap().1;
    println!(
        "Xbot audited in the window in {seconds:.2} s ({} joints)",
        report.joints.len()
    );
    assert!(report.joints.len() > 40, "{}", report.joints.len());
    let worst = &report.joints[0];
    harness.get_by_label(&row_label(worst)).click();
    harness.run();
    assert_eq!(harness.state().0.view.selected_joint, Some(worst.node));
    assert!(harness.state().0.animation().has_overrides());
}
