//! The animation panel: crossfade, the layer stack, root motion, attachments, IK goals and
//! foot locking.

use crate::anim::ik_layer::{IkGoal, IkOutcome};
use crate::anim::{Attachment, BlendMode, Layer};
use crate::viewer::{PoseEdit, PoseParts, Viewer};

pub fn layers_panel(ui: &mut egui::Ui, viewer: &mut Viewer) {
    let mut edited = PoseParts::of(viewer.animation());
    let morph_weights = viewer.pose().morph_weights.clone();
    let mut changed = false;
    ui.heading("Layers");
    if viewer.rig().clips.is_empty() {
        ui.label("No clips to layer.");
    } else {
        stack_controls(ui, viewer, &mut edited, &mut changed);
        super::ghosts::ghost_controls(ui, &mut viewer.view.options.ghosts);
    }
    if !viewer.rig().skins.is_empty() {
        ui.checkbox(&mut viewer.view.options.bind_skeleton, "Bind-pose skeleton")
            .on_hover_text("The joints where the inverse bind matrices put them, in green, over the current pose");
    }
    morph_panel(ui, viewer, &morph_weights, &mut edited.morph_overrides, &mut changed);
    ik_panel(ui, viewer, &mut edited.ik_goals, &mut changed);
    if !viewer.rig().clips.is_empty() {
        lock_feet_controls(ui, viewer);
    }
    look_at_controls(ui, viewer);
    if changed {
        // Every change but the trails' is an edit (a slider dragged over many frames is one).
        viewer.edit_pose(PoseEdit::Parts(edited));
    }
}

/// IK goals: pin the selected joint (a hand or foot, the end of a two-bone chain) where it is
/// now, so that the clip plays with it held there; each goal can be switched off, weighted or
/// removed, and says whether it reaches.
fn ik_panel(ui: &mut egui::Ui, viewer: &mut Viewer, goals: &mut Vec<IkGoal>, changed: &mut bool) {
    ui.separator();
    ui.strong("IK");
    let selected = viewer.view.selected_joint;
    let place = selected.map(|joint| viewer.pose().worlds[joint].w_axis.truncate());
    let outcomes = viewer.pose().ik_outcomes.clone();
    let rig = viewer.rig();
    let goal = selected
        .zip(place)
        .and_then(|(joint, at)| IkGoal::for_end_joint(&rig.nodes, joint, at));
    let pin = ui
        .add_enabled(goal.is_some(), egui::Button::new("Pin the selected joint here"))
        .on_hover_text("Hold the selected hand or foot where it is now while the clip plays (two-bone IK)")
        .on_disabled_hover_text("Select a joint two below another (a hand, a foot) to pin it");
    if pin.clicked()
        && let Some(goal) = goal
    {
        goals.retain(|g| g.end != goal.end);
        goals.push(goal);
        *changed = true;
    }
    let mut removed = None;
    for (index, goal) in goals.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            *changed |= ui.checkbox(&mut goal.enabled, &rig.nodes[goal.end].name).changed();
            *changed |= ui
                .add(egui::Slider::new(&mut goal.weight, 0.0..=1.0).text("weight"))
                .changed();
            ui.label(match outcomes.get(index) {
                Some(IkOutcome::Reached) => "reached",
                Some(IkOutcome::NotReached) => "out of reach",
                _ => "off",
            });
            if ui.small_button("Remove").clicked() {
                removed = Some(index);
            }
        });
    }
    if let Some(index) = removed {
        goals.remove(index);
        *changed = true;
    }
}

/// Look at: the head (the neck and spine taking a share) turns to the camera or stays on the
/// point it looks at, over the clip.
fn look_at_controls(ui: &mut egui::Ui, viewer: &mut Viewer) {
    use crate::viewer::LookAtTarget;
    let mut follows = viewer.look_at_follows_camera();
    let toggle = ui
        .checkbox(&mut follows, "Head looks at the camera")
        .on_hover_text("The head aims at the camera as the view turns; the neck and spine take a share of the turn");
    if toggle.changed() {
        let target = if follows { Some(LookAtTarget::Camera) } else { None };
        if let Err(problem) = viewer.set_look_at(target) {
            viewer.diagnostics.error = Some(format!("Cannot look at the camera: {problem}"));
        }
        viewer.end_gesture();
    }
    if viewer.look_at_follows_camera()
        && ui
            .button("Keep looking here")
            .on_hover_text("Leave the head on the point it looks at now, whatever the camera does")
            .clicked()
        && let Some(point) = viewer.look_at().map(|l| l.target)
    {
        let _ = viewer.set_look_at(Some(LookAtTarget::Point(point)));
        viewer.end_gesture();
    }
    let reached = viewer.pose().look_at_reached;
    let Some(look_at) = viewer.look_at() else { return };
    let (mut share, mut weight) = (look_at.share, look_at.weight);
    let rig = viewer.rig();
    let names: Vec<&str> = look_at.chain.iter().map(|&j| rig.nodes[j].name.as_str()).collect();
    ui.label(format!(
        "{} ({})",
        names.join(", "),
        if reached { "on target" } else { "short of it" }
    ));
    let sliders = ui.add(egui::Slider::new(&mut share, 0.0..=1.0).text("share per joint"))
        | ui.add(egui::Slider::new(&mut weight, 0.0..=1.0).text("weight"));
    if sliders.changed() {
        viewer.set_look_at_weights(share, weight);
    }
    if sliders.drag_stopped() {
        viewer.end_gesture();
    }
    if ui.small_button("Stop looking").clicked() {
        let _ = viewer.set_look_at(None);
        viewer.end_gesture();
    }
}

/// Lock feet: the clip plays with each foot held where it lands during its contacts, and
/// what the lock holds (or why it cannot).
fn lock_feet_controls(ui: &mut egui::Ui, viewer: &mut Viewer) {
    let mut on = viewer.lock_feet();
    let toggle = ui.checkbox(&mut on, "Lock feet").on_hover_text(
        "Hold each foot where it lands while it is planted (the contacts of Audit ▸ Motion), with leg IK, \
             lowering the hips where a leg cannot reach",
    );
    if toggle.changed() {
        // A rig the lock cannot hold says why below; the toggle stays as the user set it.
        let _ = viewer.set_lock_feet(on);
    }
    if let Some(problem) = viewer.foot_lock_problem() {
        ui.colored_label(ui.visuals().warn_fg_color, format!("Cannot lock the feet: {problem}"));
    } else if let Some(lock) = viewer.foot_lock() {
        let rig = viewer.rig();
        for leg in &lock.legs {
            ui.label(format!(
                "{}: {} contact(s) held",
                rig.nodes[leg.foot].name,
                leg.pins.len()
            ));
        }
        let clip = lock.clip;
        let bake = ui.button("Bake into the clip").on_hover_text(
            "Write the lock into the clip's keys (legs and hips, 30 a second), as an edit Save as… writes",
        );
        if bake.clicked() {
            // The clip then plants its own feet: a lock left on would hold them a second time.
            let _ = viewer.set_lock_feet(false);
            if let Err(problem) = viewer.edit_clip(crate::viewer::ClipEdit::LockFeet { clip }) {
                viewer.diagnostics.error = Some(format!("Cannot bake the lock: {problem}"));
            }
        }
    }
}

fn stack_controls(ui: &mut egui::Ui, viewer: &Viewer, edited: &mut PoseParts, any_change: &mut bool) {
    let mut changed = false;
    changed |= ui
        .add(
            egui::Slider::new(&mut edited.crossfade_seconds, 0.0..=2.0)
                .suffix(" s")
                .text("crossfade"),
        )
        .on_hover_text("Clip changes blend over this time instead of popping")
        .changed();
    ui.label(format!(
        "Base: {} (the playback clip), mix, weight 1",
        viewer
            .player()
            .clip
            .and_then(|c| viewer.rig().clips.get(c))
            .map_or("rest pose", |c| c.name.as_str())
    ));
    changed |= layer_list(ui, viewer, edited);
    ui.separator();
    changed |= root_motion_controls(ui, edited, viewer.view.selected_joint);
    ui.separator();
    changed |= attachment_controls(ui, viewer, edited);
    *any_change |= changed;
}

/// The layers over the base, each in its own group, and "Add layer". Returns whether any changed.
fn layer_list(ui: &mut egui::Ui, viewer: &Viewer, edited: &mut PoseParts) -> bool {
    let mut changed = false;
    let clips: Vec<String> = viewer.rig().clips.iter().map(|c| c.name.clone()).collect();
    let selected = viewer.view.selected_joint;
    let node_name = |n: Option<usize>| n.map_or("whole rig".to_owned(), |n| viewer.rig().nodes[n].name.clone());
    let names: Vec<String> = edited.layers.iter().map(|l| node_name(l.mask)).collect();
    let mut remove = None;
    for (i, layer) in edited.layers.iter_mut().enumerate() {
        ui.push_id(("layer", i), |ui| {
            changed |= layer_controls(ui, i, layer, &clips, &names[i], selected, &mut remove);
        });
    }
    if let Some(i) = remove {
        edited.layers.remove(i);
        changed = true;
    }
    if ui.button("Add layer").clicked() {
        let clip = viewer.player().clip.unwrap_or(0);
        edited.layers.push(Layer {
            weight: 0.5,
            ..Layer::new(clip)
        });
        changed = true;
    }
    changed
}

/// One layer's clip, blend mode, weight, timing and mask; "Remove" sets `remove` to its index
/// `i`. Returns whether the layer changed.
fn layer_controls(
    ui: &mut egui::Ui,
    i: usize,
    layer: &mut Layer,
    clips: &[String],
    mask_name: &str,
    selected: Option<usize>,
    remove: &mut Option<usize>,
) -> bool {
    let mut changed = false;
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.horizontal(|ui| {
            changed |= ui.checkbox(&mut layer.enabled, format!("Layer {}", i + 1)).changed();
            // Named, so that a screen reader (and a test looking it up) finds the choice.
            let label = ui.label("clip");
            egui::ComboBox::from_id_salt("clip")
                .selected_text(&clips[layer.clip])
                .show_ui(ui, |ui| {
                    for (c, name) in clips.iter().enumerate() {
                        changed |= ui.selectable_value(&mut layer.clip, c, name).changed();
                    }
                })
                .response
                .labelled_by(label.id);
            if ui.button("Remove").clicked() {
                *remove = Some(i);
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
            ui.label(format!("Mask: {mask_name}"));
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
    changed
}

/// Root motion locked in place, its trail, and the trail of the selected joint. Returns
/// whether any changed.
fn root_motion_controls(ui: &mut egui::Ui, edited: &mut PoseParts, selected: Option<usize>) -> bool {
    let mut changed = false;
    ui.label("Root motion");
    ui.horizontal(|ui| {
        changed |= ui.checkbox(&mut edited.root_motion.lock, "Lock in place").changed();
        changed |= ui.checkbox(&mut edited.root_motion.trail, "Trail").changed();
    });
    // The trail follows the joint it was turned on for, until turned off or on again.
    let mut joint_trail = edited.root_motion.trail_joint.is_some();
    let toggle = ui.add_enabled(
        selected.is_some() || joint_trail,
        egui::Checkbox::new(&mut joint_trail, "Trail of the selected joint (every frame)"),
    );
    if toggle.changed() {
        edited.root_motion.trail_joint = if joint_trail { selected } else { None };
        changed = true;
    }
    changed
}

/// Markers attached to joints: one added to the selected joint, each one's offset, and
/// removing them. Returns whether any changed.
fn attachment_controls(ui: &mut egui::Ui, viewer: &Viewer, edited: &mut PoseParts) -> bool {
    let mut changed = false;
    let selected = viewer.view.selected_joint;
    ui.label("Attachments");
    let size = viewer.document().rest_bounds.size().max(1e-3) * 0.06;
    if ui
        .add_enabled(
            selected.is_some(),
            egui::Button::new("Attach a marker to the selected joint"),
        )
        .clicked()
        && let Some(node) = selected
    {
        edited.attachments.push(Attachment {
            node,
            offset: glam::Vec3::ZERO,
            rotation_degrees: glam::Vec3::ZERO,
            size,
        });
        changed = true;
    }
    let speed = (size * 0.05).max(1e-4);
    let mut remove = None;
    for (i, attachment) in edited.attachments.iter_mut().enumerate() {
        ui.push_id(("attachment", i), |ui| {
            ui.horizontal(|ui| {
                ui.label(&viewer.rig().nodes[attachment.node].name);
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
        edited.attachments.remove(i);
        changed = true;
    }
    changed
}

/// A slider per morph target of every mesh that has targets; moving one sets that weight by
/// hand (it then ignores the clip) until "Animated" hands it back.
fn morph_panel(
    ui: &mut egui::Ui,
    viewer: &Viewer,
    morph_weights: &[Vec<f32>],
    morph_overrides: &mut [Vec<Option<f32>>],
    changed: &mut bool,
) {
    let rig = viewer.rig();
    let morphed: Vec<usize> = (0..rig.instances.len())
        .filter(|&i| !morph_weights[i].is_empty())
        .collect();
    if morphed.is_empty() {
        return;
    }
    ui.separator();
    ui.label("Morph targets");
    for i in morphed {
        ui.label(&rig.meshes[rig.instances[i].mesh].name);
        for t in 0..morph_weights[i].len() {
            ui.push_id(("morph", i, t), |ui| {
                ui.horizontal(|ui| {
                    let mut weight = morph_weights[i][t];
                    if ui
                        .add(egui::Slider::new(&mut weight, 0.0..=1.0).text(format!("target {t}")))
                        .changed()
                    {
                        morph_overrides[i][t] = Some(weight);
                        *changed = true;
                    }
                    let by_hand = morph_overrides[i][t].is_some();
                    if ui.add_enabled(by_hand, egui::Button::new("Animated")).clicked() {
                        morph_overrides[i][t] = None;
                        *changed = true;
                    }
                });
            });
        }
    }
}
