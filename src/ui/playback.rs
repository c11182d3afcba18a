//! The rig summary and the playback controls.

use super::*;

pub(super) fn rig_panel(ui: &mut egui::Ui, viewer: &Viewer) {
    let rig = viewer.rig();
    ui.heading(if rig.name.is_empty() { "Rig" } else { &rig.name });
    egui::Grid::new("rig facts").num_columns(2).show(ui, |ui| {
        for (label, value) in [
            ("Nodes", rig.nodes.len()),
            ("Skins", rig.skins.len()),
            ("Joints", rig.joint_count()),
            ("Meshes", rig.instances.len()),
            ("Vertices", rig.vertex_count()),
            ("Triangles", rig.triangle_count()),
            ("Clips", rig.clips.len()),
        ] {
            ui.label(label);
            ui.label(value.to_string());
            ui.end_row();
        }
    });
    let warnings = rig.load_warnings();
    if !warnings.is_empty() {
        egui::CollapsingHeader::new(format!("{} warnings", warnings.len())).show(ui, |ui| {
            for warning in &warnings {
                ui.label(warning);
            }
        });
    }
}

pub(super) fn playback_panel(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.heading("Playback");
    ui.spacing_mut().slider_width = 170.0;
    if viewer.rig().clips.is_empty() {
        ui.label("This file has no animations.");
        return;
    }
    let current = viewer.player().clip;
    let name = |c: Option<usize>| {
        c.and_then(|c| viewer.rig().clips.get(c))
            .map_or("(rest pose)".to_owned(), |c| c.name.clone())
    };
    let mut selected = current;
    egui::ComboBox::from_label("Clip")
        .selected_text(name(current))
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut selected, None, "(rest pose)");
            for (i, clip) in viewer.rig().clips.iter().enumerate() {
                let item = ui.selectable_value(
                    &mut selected,
                    Some(i),
                    format!("{} ({:.2} s)", clip.name, clip.duration),
                );
                if let Some(source) = &clip.source {
                    item.on_hover_text(format!("from {}", source.display()));
                }
            }
        });
    if selected != current {
        viewer.select_clip(selected);
    }
    clip_files(ui, viewer);
    ui.horizontal(|ui| {
        if ui
            .button("< Frame")
            .on_hover_text("Step back one frame (Left arrow)")
            .clicked()
        {
            viewer.step(-1);
        }
        let label = if viewer.player().playing { "Pause" } else { "Play" };
        if ui.button(label).on_hover_text("Space").clicked() {
            viewer.toggle_play();
        }
        if ui
            .button("Frame >")
            .on_hover_text("Step one frame (Right arrow)")
            .clicked()
        {
            viewer.step(1);
        }
        let mut looping = viewer.player().looping;
        if ui.checkbox(&mut looping, "Loop").changed() {
            viewer.set_looping(looping);
        }
    });
    let duration = viewer.clip_duration();
    let mut time = viewer.player().time;
    let timeline = ui.add(
        egui::Slider::new(&mut time, 0.0..=duration.max(f32::EPSILON))
            .text("s")
            .custom_formatter(|v, _| format!("{v:.3}")),
    );
    // Compare values rather than trusting `changed()`: the slider may round what it shows.
    if timeline.changed() && time != viewer.player().time {
        viewer.seek(time);
    }
    ui.label(format!(
        "Frame {} of {}",
        (viewer.player().time / FRAME_SECONDS).round(),
        (duration / FRAME_SECONDS).round()
    ));
    let mut speed = viewer.player().speed;
    let slider = egui::Slider::new(&mut speed, 0.05..=4.0)
        .logarithmic(true)
        .text("speed");
    if ui.add(slider).changed() {
        viewer.set_speed(speed);
    }
}

/// One line per clip file added to the rig: its clips, and the joints matched and left out
/// (the whole report on hover).
fn clip_files(ui: &mut egui::Ui, viewer: &Viewer) {
    let document = viewer.document();
    for crate::retarget::CarriedClips { origin, report, .. } in document.carried() {
        let name = super::file_label(origin);
        let unmatched = report.joints.unmatched_target.len();
        ui.label(format!(
            "{} clips from {name}: {} joints matched, {unmatched} of this rig's left unanimated",
            report.clips.len(),
            report.joints.matched(),
        ))
        .on_hover_text(report.summary());
    }
}
