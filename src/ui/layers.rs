//! The animation panel: crossfade, the layer stack, root motion and attachments.

use crate::anim::{Attachment, BlendMode, Layer};
use crate::viewer::Viewer;

pub fn layers_panel(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.heading("Layers");
    if viewer.rig.clips.is_empty() {
        ui.label("No clips to layer.");
        let mut changed = false;
        morph_panel(ui, viewer, &mut changed);
        if changed {
            viewer.evaluate();
        }
        return;
    }
    let mut changed = false;
    changed |= ui
        .add(
            egui::Slider::new(&mut viewer.animation.crossfade_seconds, 0.0..=2.0)
                .suffix(" s")
                .text("crossfade"),
        )
        .on_hover_text("Clip changes blend over this time instead of popping")
        .changed();
    ui.label(format!(
        "Base: {} (the playback clip), mix, weight 1",
        viewer
            .player
            .clip
            .and_then(|c| viewer.rig.clips.get(c))
            .map_or("rest pose", |c| c.name.as_str())
    ));
    let clips: Vec<String> = viewer.rig.clips.iter().map(|c| c.name.clone()).collect();
    let selected = viewer.selected_joint;
    let node_name = |n: Option<usize>| n.map_or("whole rig".to_owned(), |n| viewer.rig.nodes[n].name.clone());
    let names: Vec<String> = (0..viewer.animation.layers.len())
        .map(|i| node_name(viewer.animation.layers[i].mask))
        .collect();
    let mut remove = None;
    for (i, layer) in viewer.animation.layers.iter_mut().enumerate() {
        ui.push_id(("layer", i), |ui| {
            egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.horizontal(|ui| {
                    changed |= ui.checkbox(&mut layer.enabled, format!("Layer {}", i + 1)).changed();
                    egui::ComboBox::from_id_salt("clip")
                        .selected_text(&clips[layer.clip])
                        .show_ui(ui, |ui| {
                            for (c, name) in clips.iter().enumerate() {
                                changed |= ui.selectable_value(&mut layer.clip, c, name).changed();
                            }
                        });
                    if ui.button("Remove").clicked() {
                        remove = Some(i);
                    }
                });
                ui.horizontal(|ui| {
                    changed |= ui.selectable_value(&mut layer.mode, BlendMode::Mix, "Mix").changed();
                    changed |= ui
                        .selectable_value(&mut layer.mode, BlendMode::Additive, "Additive")
                        .changed();
                    changed |= ui.checkbox(&mut layer.looping, "Loop").changed();
                });
                changed |= ui
                    .add(egui::Slider::new(&mut layer.weight, 0.0..=1.0).text("weight"))
                    .changed();
                changed |= ui
                    .add(egui::Slider::new(&mut layer.speed, 0.0..=3.0).text("speed"))
                    .changed();
                changed |= ui
                    .add(
                        egui::Slider::new(&mut layer.time_offset, -2.0..=2.0)
                            .suffix(" s")
                            .text("offset"),
                    )
                    .changed();
                ui.horizontal(|ui| {
                    ui.label(format!("Mask: {}", names[i]));
                    if ui
                        .add_enabled(selected.is_some(), egui::Button::new("Selected joint"))
                        .clicked()
                    {
                        layer.mask = selected;
                        changed = true;
                    }
                    if ui
                        .add_enabled(layer.mask.is_some(), egui::Button::new("Whole rig"))
                        .clicked()
                    {
                        layer.mask = None;
                        changed = true;
                    }
                });
            });
        });
    }
    if let Some(i) = remove {
        viewer.animation.layers.remove(i);
        changed = true;
    }
    if ui.button("Add layer").clicked() {
        let clip = viewer.player.clip.unwrap_or(0);
        viewer.animation.layers.push(Layer {
            weight: 0.5,
            ..Layer::new(clip)
        });
        changed = true;
    }
    ui.separator();
    ui.label("Root motion");
    ui.horizontal(|ui| {
        changed |= ui
            .checkbox(&mut viewer.animation.root_motion.lock, "Lock in place")
            .changed();
        changed |= ui.checkbox(&mut viewer.animation.root_motion.trail, "Trail").changed();
    });
    ui.separator();
    ui.label("Attachments");
    let size = viewer.rest_bounds.size().max(1e-3) * 0.06;
    if ui
        .add_enabled(
            selected.is_some(),
            egui::Button::new("Attach a marker to the selected joint"),
        )
        .clicked()
        && let Some(node) = selected
    {
        viewer.animation.attachments.push(Attachment {
            node,
            offset: glam::Vec3::ZERO,
            rotation_degrees: glam::Vec3::ZERO,
            size,
        });
        changed = true;
    }
    let speed = (size * 0.05).max(1e-4);
    let mut remove = None;
    for (i, attachment) in viewer.animation.attachments.iter_mut().enumerate() {
        ui.push_id(("attachment", i), |ui| {
            ui.horizontal(|ui| {
                ui.label(&viewer.rig.nodes[attachment.node].name);
                for (axis, v) in ["x", "y", "z"].iter().zip(attachment.offset.as_mut()) {
                    let label = ui.label(*axis);
                    changed |= ui
                        .add(egui::DragValue::new(v).speed(speed))
                        .labelled_by(label.id)
                        .changed();
                }
                if ui.button("Remove").clicked() {
                    remove = Some(i);
                }
            });
        });
    }
    if let Some(i) = remove {
        viewer.animation.attachments.remove(i);
        changed = true;
    }
    morph_panel(ui, viewer, &mut changed);
    if changed {
        viewer.evaluate();
    }
}

/// A slider per morph target of every mesh that has targets; moving one sets that weight by
/// hand (it then ignores the clip) until "Animated" hands it back.
fn morph_panel(ui: &mut egui::Ui, viewer: &mut Viewer, changed: &mut bool) {
    let rig = viewer.rig.clone();
    let morphed: Vec<usize> = (0..rig.instances.len())
        .filter(|&i| !viewer.pose.morph_weights[i].is_empty())
        .collect();
    if morphed.is_empty() {
        return;
    }
    ui.separator();
    ui.label("Morph targets");
    for i in morphed {
        ui.label(&rig.meshes[rig.instances[i].mesh].name);
        for t in 0..viewer.pose.morph_weights[i].len() {
            ui.push_id(("morph", i, t), |ui| {
                ui.horizontal(|ui| {
                    let mut weight = viewer.pose.morph_weights[i][t];
                    if ui
                        .add(egui::Slider::new(&mut weight, 0.0..=1.0).text(format!("target {t}")))
                        .changed()
                    {
                        viewer.pose.morph_overrides[i][t] = Some(weight);
                        *changed = true;
                    }
                    let by_hand = viewer.pose.morph_overrides[i][t].is_some();
                    if ui.add_enabled(by_hand, egui::Button::new("Animated")).clicked() {
                        viewer.pose.morph_overrides[i][t] = None;
                        *changed = true;
                    }
                });
            });
        }
    }
}
