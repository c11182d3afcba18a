//! Repairing weights in the viewer: the preview puts the repaired rig in every view and on both
//! skinning paths (checked against an f64 skinning of weights normalized here), toggling back
//! restores the loaded rig bit for bit, and Save as… writes a file that differs from the input
//! only in its weights.

use crate::common;
use crate::common::gpu;

use glam::{DMat4, DVec3, Mat4};
use rigscope::render::compute::ComputeSkinner;
use rigscope::rig::{Primitive, Rig};
use rigscope::skin::{SkinningMethod, SkinningPath};
use rigscope::viewer::{RepairOptions, RepairSaveError, Viewer};
use std::sync::Arc;

fn normalize_only() -> RepairOptions {
    RepairOptions {
        normalize: true,
        limit: false,
        prune: false,
        fill: false,
        mirror: false,
        ..RepairOptions::default()
    }
}

/// RobotExpressive, whose hand weights sum to as much as 1.76, open in a viewer at a pose of
/// its first clip.
fn robot_viewer() -> Option<(Viewer, Rig)> {
    let dir = common::shared_folder("rigs/real")?;
    let path = dir.join("RobotExpressive.glb");
    let loaded = common::load_rig(&dir, "RobotExpressive.glb");
    let mut viewer = Viewer::new(Rig::default(), None);
    viewer.open_now(&path).expect("RobotExpressive opens");
    viewer.select_clip(Some(0));
    viewer.seek(0.4);
    Some((viewer, loaded))
}

/// f64 linear blend skinning of vertex `v` with its weights divided by their sum in f64.
fn normalized_reference(palette: &[Mat4], primitive: &Primitive, v: usize) -> DVec3 {
    let influences = primitive.influences.as_ref().expect("skinned primitive");
    let total: f64 = influences.of_vertex(v).map(|(_, w)| f64::from(w)).sum();
    let mut m = DMat4::ZERO;
    for (joint, weight) in influences.of_vertex(v) {
        if weight != 0.0 {
            m += palette[joint as usize].as_dmat4() * (f64::from(weight) / total);
        }
    }
    (m * primitive.positions[v].as_dvec3().extend(1.0)).truncate()
}

/// The largest distance, relative to `size`, between `skinned(instance, primitive)` and the
/// reference over every skinned vertex of `loaded` (whose positions and weights the reference
/// reads).
fn deviation_from_reference(
    viewer: &mut Viewer,
    loaded: &Rig,
    mut skinned: impl FnMut(&mut Viewer, usize, usize) -> Vec<glam::Vec3>,
) -> f64 {
    let size = f64::from(viewer.document().rest_bounds.size());
    let mut worst = 0.0f64;
    for (i, instance) in loaded.instances.iter().enumerate().filter(|(_, i)| i.skin.is_some()) {
        let palette = viewer.pose().palettes[i].clone();
        for (k, primitive) in loaded.meshes[instance.mesh].primitives.iter().enumerate() {
            let positions = skinned(viewer, i, k);
            assert_eq!(positions.len(), primitive.vertex_count());
            for (v, p) in positions.iter().enumerate() {
                let d = (p.as_dvec3() - normalized_reference(&palette, primitive, v)).length();
                worst = worst.max(d / size);
            }
        }
    }
    worst
}

fn cpu_positions(viewer: &mut Viewer, instance: usize, primitive: usize) -> Vec<glam::Vec3> {
    let rig = Arc::clone(viewer.rig());
    viewer.skin_on_cpu().positions(&rig, instance, primitive).to_vec()
}

fn bits(rig: &Rig) -> Vec<u32> {
    (rig.meshes.iter().flat_map(|m| &m.primitives))
        .filter_map(|p| p.influences.as_ref())
        .flat_map(|i| i.weights.iter().flatten().map(|w| w.to_bits()))
        .collect()
}

#[test]
fn the_preview_puts_the_repaired_weights_in_the_views_and_toggling_back_restores_the_loaded_rig() {
    let Some((mut viewer, loaded)) = robot_viewer() else {
        return;
    };
    let options = normalize_only();
    let shown = Arc::clone(viewer.rig());
    let generation = viewer.document().generation;

    let analysis = viewer
        .repair_analysis(&options)
        .expect("computed at once without background checks");
    let normalize = analysis
        .each
        .iter()
        .find(|c| c.repair == rigscope::repair::Repair::Normalize)
        .unwrap();
    // Vertices whose weights are off 1 by more than a u8 step, counted here from the file.
    let off: usize = (loaded.meshes.iter().flat_map(|m| &m.primitives))
        .filter_map(|p| p.influences.as_ref().map(|i| (p.vertex_count(), i)))
        .map(|(n, i)| {
            (0..n)
                .filter(|&v| (i.of_vertex(v).map(|(_, w)| f64::from(w)).sum::<f64>() - 1.0).abs() > 1.0 / 255.0)
                .count()
        })
        .sum();
    assert!(off > 0, "RobotExpressive has weight sums off 1");
    assert!(
        normalize.changed() >= off,
        "normalize changes {} of the {off} vertices off 1",
        normalize.changed()
    );
    assert_eq!(analysis.changed_count(), normalize.changed());

    let before = deviation_from_reference(&mut viewer, &loaded, cpu_positions);
    assert!(
        before > 1e-3,
        "the loaded weights skin away from the normalized reference ({before:.2e})"
    );

    assert!(viewer.preview_repair(&options));
    assert!(viewer.showing_repaired());
    assert_ne!(
        viewer.document().generation,
        generation,
        "the previewed rig uploads anew"
    );
    assert!(!Arc::ptr_eq(viewer.rig(), &shown));
    // Every view draws from the frame state's rig: it is the repaired one.
    viewer.prepare_frame();
    let state_rig = Arc::new(viewer.frame_state(1.0).rig.clone());
    for primitive in state_rig.meshes.iter().flat_map(|m| &m.primitives) {
        if let Some(influences) = &primitive.influences {
            for v in 0..primitive.vertex_count() {
                let sum: f64 = influences.of_vertex(v).map(|(_, w)| f64::from(w)).sum();
                assert!((sum - 1.0).abs() < 1e-6, "previewed vertex {v} sums to {sum}");
            }
        }
    }
    // The marked vertices are those whose weights changed, on every instance.
    viewer.prepare_frame();
    let marked = viewer.frame_state(1.0).marks.len();
    let instances_per_change: usize = (analysis.changed.iter())
        .map(|(mesh, _, v)| v.len() * loaded.instances.iter().filter(|i| i.mesh == *mesh).count())
        .sum();
    assert_eq!(marked, instances_per_change);
    viewer.mark_repaired_vertices(false);
    viewer.prepare_frame();
    assert_eq!(viewer.frame_state(1.0).marks.len(), 0);

    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    let after = deviation_from_reference(&mut viewer, &loaded, cpu_positions);
    assert!(
        after < 1e-5,
        "the CPU path skins the repaired weights ({after:.2e} of the rig size)"
    );

    if let Some(gpu) = gpu::gpu_or_skip() {
        let skinner = ComputeSkinner::new(&gpu);
        let gpu_after = deviation_from_reference(&mut viewer, &loaded, |viewer, i, k| {
            let rig = Arc::clone(viewer.rig());
            let primitive = &rig.meshes[rig.instances[i].mesh].primitives[k];
            let palette = viewer.pose().palettes[i].clone();
            skinner
                .skin(&gpu, primitive, &palette, &[], SkinningMethod::Lbs)
                .expect("compute skinning runs")
                .0
        });
        assert!(
            gpu_after < 1e-4,
            "the GPU path skins the repaired weights ({gpu_after:.2e} of the rig size)"
        );
    }

    viewer.show_repaired(false);
    assert!(
        Arc::ptr_eq(viewer.rig(), &shown),
        "the loaded rig itself is shown again"
    );
    assert_eq!(viewer.document().generation, generation);
    assert_eq!(bits(viewer.rig()), bits(&loaded));
    assert_eq!(deviation_from_reference(&mut viewer, &loaded, cpu_positions), before);

    viewer.show_repaired(true);
    viewer.end_repair_preview();
    assert!(Arc::ptr_eq(viewer.rig(), &shown));
    assert!(viewer.previewed_repair().is_none());
}

#[test]
fn saving_the_preview_writes_only_the_weights_and_shows_the_saved_file() {
    let Some((mut viewer, loaded)) = robot_viewer() else {
        return;
    };
    let folder = common::temp_dir("viewer_repair_save");
    let output = folder.join(rigscope::viewer::suggested_name(
        viewer.document().path.as_ref().unwrap(),
    ));
    assert_eq!(output.file_name().unwrap(), "RobotExpressive.fixed.glb");

    assert!(matches!(
        viewer.save_repaired_as(&output),
        Err(RepairSaveError::NoPreview)
    ));
    assert!(viewer.preview_repair(&normalize_only()));
    let repaired = Arc::clone(viewer.rig());
    // A path without a glTF extension is refused by kind, and nothing is written.
    let bad = folder.join("robot.obj");
    assert!(matches!(viewer.save_repaired_as(&bad), Err(RepairSaveError::Save(_))));
    assert!(!bad.exists());

    viewer.save_repaired_as(&output).expect("the repaired rig saves");
    viewer.wait_for_load();
    assert_eq!(viewer.document().path.as_deref(), Some(output.as_path()));
    assert!(viewer.previewed_repair().is_none());
    assert_eq!(viewer.documents().len(), 1, "the saved file takes the document's place");
    assert_eq!(
        (viewer.player().clip, viewer.player().time),
        (Some(0), 0.4),
        "clip and time kept"
    );

    let saved = rigscope::rig::load_file(&output).expect("the saved file reopens");
    let diff = rigscope::compare::compare(&loaded, &saved, &rigscope::compare::Thresholds::default());
    assert!(!diff.skeleton.differs(), "skeleton unchanged: {:?}", diff.skeleton);
    assert!(
        diff.clips
            .iter()
            .all(|c| c.status == rigscope::compare::ClipStatus::Same)
    );
    assert!(diff.materials.is_empty() && diff.textures.iter().all(|t| !t.changed));
    assert_eq!(diff.weights.unmatched_vertices, 0);
    assert_eq!(diff.weights.moved_count, 0);
    assert!(diff.weights.changed_count > 0, "the weights changed");
    // The saved weights are the previewed ones, to the file's stored precision.
    for (a, b) in
        (repaired.meshes.iter().flat_map(|m| &m.primitives)).zip(saved.meshes.iter().flat_map(|m| &m.primitives))
    {
        let (Some(a), Some(b)) = (&a.influences, &b.influences) else {
            continue;
        };
        for (wa, wb) in a.weights.iter().flatten().zip(b.weights.iter().flatten()) {
            assert!(
                (wa - wb).abs() <= 1.0 / 255.0,
                "saved weight {wb} against previewed {wa}"
            );
        }
    }
}

/// The largest weight difference from the mirror the symmetry view is given, over every vertex.
fn largest_symmetry_difference(viewer: &mut Viewer) -> f32 {
    viewer.view.options.mode = rigscope::render::ViewMode::Symmetry;
    viewer.prepare_frame();
    let state = viewer.frame_state(1.0);
    let (_, values) = state.symmetry.expect("the check ran without background checks");
    let mut largest = 0.0f32;
    for (m, mesh) in state.rig.meshes.iter().enumerate() {
        for p in 0..mesh.primitives.len() {
            largest = values.of(m, p).unwrap_or(&[]).iter().fold(largest, |a, &b| a.max(b));
        }
    }
    largest
}

#[test]
fn a_mirror_preview_changes_the_symmetry_view_and_a_rig_without_sides_says_why() {
    let Some((mut viewer, _)) = robot_viewer() else { return };
    let mirror = RepairOptions {
        mirror: true,
        ..RepairOptions::from_plan(&rigscope::repair::RepairPlan::default())
    };
    let before = largest_symmetry_difference(&mut viewer);
    assert!(before > 0.1, "RobotExpressive is painted asymmetrically ({before})");
    assert!(viewer.preview_repair(&mirror));
    let after = largest_symmetry_difference(&mut viewer);
    assert!(after < 1e-3, "mirrored weights match their mirror ({after})");
    viewer.show_repaired(false);
    assert_eq!(
        largest_symmetry_difference(&mut viewer),
        before,
        "the loaded rig's check comes back"
    );

    let Some(rigs) = common::shared_rigs() else { return };
    viewer.open_now(&rigs.join("Fox.glb")).expect("Fox opens");
    assert!(viewer.previewed_repair().is_none(), "a newly opened rig has no preview");
    let analysis = viewer.repair_analysis(&mirror).unwrap();
    let counts = analysis
        .each
        .iter()
        .find(|c| c.repair == rigscope::repair::Repair::Mirror)
        .unwrap();
    assert_eq!(counts.changed(), 0);
    assert!(
        counts.note.is_some(),
        "Fox has no left/right joint names, and the window says so"
    );
}

#[test]
fn render_ui_fix_draws_the_window_previewing_the_repair_and_prints_what_it_changed() {
    let Some(dir) = common::shared_folder("rigs/real") else {
        return;
    };
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let out = common::temp_dir("viewer_repair_render").join("window.png");
    let file = dir.join("RobotExpressive.glb");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rigscope"))
        .args([
            "render",
            file.to_str().unwrap(),
            "--ui",
            "--fix",
            "--normalize",
            "--size",
            "800x500",
            "--out",
        ])
        .arg(&out)
        .output()
        .expect("rigscope runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // The count the viewer's own analysis gives, printed as `render --fix` prints it.
    let (mut viewer, _) = robot_viewer().unwrap();
    let changed = viewer.repair_analysis(&normalize_only()).unwrap().changed_count();
    assert!(
        stderr.contains(&format!("fix: normalize: {changed} vertices changed")),
        "{stderr}"
    );
    let image = image::open(&out).expect("a PNG was written");
    assert_eq!((image.width(), image.height()), (800, 500));
}

/// Loading clips after a repair was previewed adds them as an edit of their own over the
/// repair: the weights stay repaired, Undo takes the clips back out, and the repair is the edit
/// under them.
#[test]
fn loading_clips_keeps_a_previewed_repair_and_undo_takes_the_clips_back_out() {
    let Some((mut viewer, _)) = robot_viewer() else {
        return;
    };
    let own_clips = viewer.rig().clips.len();
    assert!(viewer.preview_repair(&normalize_only()));
    let repaired = bits(viewer.rig());
    let loaded_bits = bits(&common::load_rig(
        &common::shared_folder("rigs/real").unwrap(),
        "RobotExpressive.glb",
    ));
    assert_ne!(repaired, loaded_bits, "the repair changes weights");
    let clips_file = common::shared_folder("rigs/real").unwrap().join("RobotExpressive.glb");

    viewer.load_clips_from(clips_file.clone());
    viewer.wait_for_load();
    assert_eq!(viewer.diagnostics.error, None);
    assert_eq!(viewer.rig().clips.len(), 2 * own_clips, "the file's clips are added");
    assert_eq!(bits(viewer.rig()), repaired, "the weights stay repaired");
    assert_eq!(viewer.document().clip_files(), [clips_file]);
    assert_eq!(
        viewer.history().undo_label(),
        Some("load clips from RobotExpressive.glb")
    );

    assert!(viewer.undo().is_some());
    assert_eq!(viewer.rig().clips.len(), own_clips, "Undo takes the clips back out");
    assert_eq!(bits(viewer.rig()), repaired, "and leaves the repair");
    assert!(viewer.document().clip_files().is_empty());
    assert!(
        viewer
            .history()
            .undo_label()
            .is_some_and(|l| l.starts_with("repair weights")),
        "{:?}",
        viewer.history().undo_label()
    );
    assert!(viewer.redo().is_some());
    assert_eq!(viewer.rig().clips.len(), 2 * own_clips, "Redo adds them again");
    assert_eq!(bits(viewer.rig()), repaired);
}
