//! The Audit window's Motion tab: `audit --motion`'s checks of every clip of the shown rig
//! (loop seam, foot sliding, root motion) with the default limits, rows past them in red.

use crate::motion::{MotionOptions, MotionReport, MotionThresholds, check_motion, feet_by_name};
use crate::viewer::Viewer;

/// The Motion tab; `cache` keeps the report of the rig generation it was made for (the checks
/// pose each clip 30 times a second, milliseconds on the shared rigs, so they run in the frame).
pub fn motion_tab(ui: &mut egui::Ui, viewer: &Viewer, cache: &mut Option<(u64, MotionReport)>) {
    let generation = viewer.document().generation;
    if cache.as_ref().is_none_or(|(g, _)| *g != generation) {
        let rig = viewer.rig();
        *cache = Some((
            generation,
            check_motion(rig, &feet_by_name(rig), &MotionOptions::default()),
        ));
    }
    let Some((_, report)) = cache.as_ref() else { return };
    let limits = MotionThresholds::default();
    let feet = if report.feet.is_empty() {
        "none found by name".to_owned()
    } else {
        report.feet.join(", ")
    };
    ui.label(format!(
        "Rig height {:.4} (figures are fractions of it); feet: {feet}",
        report.rig_height
    ));
    for line in report.rest_pose.summary() {
        ui.label(line);
    }
    if report.clips.is_empty() {
        ui.label("No clips.");
        return;
    }
    egui::ScrollArea::vertical().id_salt("audit motion").show(ui, |ui| {
        egui::Grid::new("motion clips").striped(true).show(ui, |ui| {
            for heading in [
                "Clip",
                "Seam",
                "Seam °",
                "Worst joint",
                "Comes from",
                "Largest slide",
                "At",
                "Root",
            ] {
                ui.strong(heading);
            }
            ui.end_row();
            for clip in &report.clips {
                let failing = !clip.violations(&limits).is_empty();
                let name = egui::RichText::new(&clip.clip);
                ui.label(if failing {
                    name.color(egui::Color32::from_rgb(240, 90, 80))
                } else {
                    name
                });
                ui.label(format!("{:.4}", clip.seam_position_error));
                ui.label(format!("{:.2}", clip.seam_rotation_error_deg));
                ui.label(clip.seam_worst_joint.as_deref().unwrap_or("-"));
                ui.label(clip.seam_source_joint.as_deref().map_or("-".to_owned(), |joint| {
                    format!("{joint} ({:.2}°)", clip.seam_source_rotation_deg)
                }));
                let worst = clip.feet.iter().max_by(|a, b| a.max_slide.total_cmp(&b.max_slide));
                ui.label(worst.map_or("-".to_owned(), |f| format!("{:.4} {}", f.max_slide, f.joint)));
                ui.label(
                    worst
                        .and_then(|f| f.worst_time)
                        .map_or("-".to_owned(), |t| format!("{t:.2} s")),
                );
                ui.label(if clip.root.in_place {
                    "in place".to_owned()
                } else {
                    format!("{:.3} at {:.3}/s", clip.root.distance, clip.root.speed)
                });
                ui.end_row();
            }
        });
    });
}
