//! The skeleton panel: the joint hierarchy as a searchable tree, the selected joint's pose, and
//! the controls that bend it by hand.

use crate::anim::JointOverride;
use crate::anim::gizmo::euler_degrees_near;
use crate::render::views::joint_color;
use crate::rig::{Rig, Trs};
use crate::ui::legend::color32;
use crate::viewer::Viewer;
use egui::RichText;

/// Per-frame scratch for the tree: which nodes match the search (or lead to one that does).
#[derive(Default)]
pub struct SkeletonPanelState {
    pub search: String,
    /// The selected joint's animated rotation as Euler angles last shown: the next frame shows the set
    /// of angles nearer these (see [`euler_degrees_near`]), so that the read-out does not jump half a
    /// turn as the rotation passes 90° about Y.
    pub euler_shown: Option<(usize, glam::Vec3)>,
    /// The bend sliders' angles: kept as set while the bend they made is the one in force, so a
    /// slider holds the value the user dragged it to; read out afresh (near these) when the bend
    /// changed some other way (gizmo, IK, undo).
    pub bend_shown: Option<BendReadout>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BendReadout {
    pub node: usize,
    /// The bend these angles were shown for.
    pub rotation: glam::Quat,
    pub degrees: glam::Vec3,
}

impl BendReadout {
    /// The angles to show for `rotation` on `node`, given what was shown before.
    fn degrees_for(shown: Option<BendReadout>, node: usize, rotation: glam::Quat) -> glam::Vec3 {
        match shown.filter(|s| s.node == node) {
            Some(s) if s.rotation == rotation => s.degrees,
            Some(s) => euler_degrees_near(rotation, s.degrees),
            None => euler_degrees_near(rotation, glam::Vec3::ZERO),
        }
    }
}

pub fn skeleton_panel(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut SkeletonPanelState) {
    ui.heading("Skeleton");
    if viewer.rig().skins.is_empty() {
        ui.label("This file has no skins; nodes are listed below.");
    }
    ui.horizontal(|ui| {
        let label = ui.label("Search");
        ui.text_edit_singleline(&mut state.search).labelled_by(label.id);
    });
    let rig = viewer.rig().clone();
    let hierarchy = rig.hierarchy();
    let (is_joint, children) = (&hierarchy.is_joint, &hierarchy.children);
    let any_joint = hierarchy.has_joints();
    let query = state.search.to_lowercase();
    // A node is shown when it or a descendant matches; parents come before children, so a
    // backwards pass propagates matches up.
    let mut visible: Vec<bool> = rig
        .nodes
        .iter()
        .map(|n| query.is_empty() || n.name.to_lowercase().contains(&query))
        .collect();
    for i in (0..rig.nodes.len()).rev() {
        if visible[i]
            && let Some(p) = rig.nodes[i].parent
        {
            visible[p] = true;
        }
    }
    egui::ScrollArea::both()
        .id_salt("skeleton tree")
        .max_height(ui.available_height() * 0.45)
        .show(ui, |ui| {
            for &root in &hierarchy.roots {
                node_tree(
                    ui,
                    viewer,
                    &rig,
                    children,
                    &visible,
                    is_joint,
                    any_joint,
                    !query.is_empty(),
                    root,
                );
            }
        });
    ui.separator();
    joint_details(ui, viewer, state);
}

#[allow(clippy::too_many_arguments)]
fn node_tree(
    ui: &mut egui::Ui,
    viewer: &mut Viewer,
    rig: &Rig,
    children: &[Vec<usize>],
    visible: &[bool],
    is_joint: &[bool],
    any_joint: bool,
    searching: bool,
    node: usize,
) {
    if !visible[node] {
        return;
    }
    let name = &rig.nodes[node].name;
    let selected = viewer.view.selected_joint == Some(node);
    let mut text = RichText::new(name);
    if any_joint && !is_joint[node] {
        text = text.weak();
    }
    let label = |ui: &mut egui::Ui, viewer: &mut Viewer| {
        ui.horizontal(|ui| {
            if let Some(slot) = rig.hierarchy().joint_slot(node) {
                let (rect, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                ui.painter().rect_filled(rect, 2.0, color32(joint_color(slot as u32)));
            }
            if ui.selectable_label(selected, text.clone()).clicked() {
                viewer.view.selected_joint = Some(node);
            }
        });
    };
    if children[node].is_empty() {
        label(ui, viewer);
        return;
    }
    let id = ui.make_persistent_id(("node", node));
    let mut header = egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, true);
    if searching {
        header.set_open(true);
    }
    header.show_header(ui, |ui| label(ui, viewer)).body(|ui| {
        for &child in &children[node] {
            node_tree(
                ui, viewer, rig, children, visible, is_joint, any_joint, searching, child,
            );
        }
    });
}

/// A local transform as a grid; `euler` adds its rotation as X, Y, Z Euler angles in degrees.
fn trs_grid(ui: &mut egui::Ui, id: &str, trs: &Trs, euler: Option<glam::Vec3>) {
    let (axis, angle) = trs.rotation.to_axis_angle();
    egui::Grid::new(id).num_columns(2).show(ui, |ui| {
        ui.label("translation");
        ui.monospace(format!(
            "{:.3} {:.3} {:.3}",
            trs.translation.x, trs.translation.y, trs.translation.z
        ));
        ui.end_row();
        ui.label("rotation");
        ui.monospace(format!(
            "{:.1}° about ({:.2} {:.2} {:.2})",
            angle.to_degrees(),
            axis.x,
            axis.y,
            axis.z
        ));
        ui.end_row();
        if let Some(euler) = euler {
            ui.label("Euler XYZ");
            ui.monospace(format!("{:.1}° {:.1}° {:.1}°", euler.x, euler.y, euler.z));
            ui.end_row();
        }
        ui.label("scale");
        ui.monospace(format!("{:.3} {:.3} {:.3}", trs.scale.x, trs.scale.y, trs.scale.z));
        ui.end_row();
    });
}

fn joint_details(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut SkeletonPanelState) {
    let Some(node) = viewer.view.selected_joint.filter(|&n| n < viewer.rig().nodes.len()) else {
        ui.label("Select a joint in the tree or click the mesh.");
        return;
    };
    let rig = viewer.rig().clone();
    ui.label(RichText::new(&rig.nodes[node].name).strong());
    ui.label(format!(
        "Influences {} vertices",
        viewer.document().influence_counts.get(node).copied().unwrap_or(0)
    ));
    ui.label("Animated pose (local)");
    let animated = viewer.pose().locals[node];
    let near = state
        .euler_shown
        .filter(|(shown, _)| *shown == node)
        .map_or(glam::Vec3::ZERO, |(_, e)| e);
    let euler = euler_degrees_near(animated.rotation, near);
    state.euler_shown = Some((node, euler));
    trs_grid(ui, "animated", &animated, Some(euler));
    ui.label("Bind pose (local)");
    trs_grid(ui, "rest", &rig.nodes[node].rest, None);
    ui.separator();
    ui.label("Bend by hand (on top of the clip)");
    let mut value = viewer.animation().overrides[node];
    let mut changed = false;
    let mut degrees = BendReadout::degrees_for(state.bend_shown, node, value.rotation);
    let mut turned = false;
    for (axis, v) in ["X", "Y", "Z"].iter().zip(degrees.as_mut()) {
        turned |= ui
            .add(
                egui::Slider::new(v, -180.0..=180.0)
                    .suffix("°")
                    .text(format!("rotate {axis}")),
            )
            .changed();
    }
    if turned {
        value.rotation = crate::anim::euler_degrees_to_rotation(degrees);
        changed = true;
    }
    state.bend_shown = Some(BendReadout {
        node,
        rotation: value.rotation,
        degrees,
    });
    let speed = (viewer.document().rest_bounds.size() * 0.002).max(1e-4);
    ui.horizontal(|ui| {
        for (axis, v) in ["X", "Y", "Z"].iter().zip(value.translation.as_mut()) {
            let label = ui.label(format!("move {axis}"));
            changed |= ui
                .add(egui::DragValue::new(v).speed(speed).max_decimals(3))
                .labelled_by(label.id)
                .changed();
        }
    });
    changed |= ui
        .add(
            egui::Slider::new(&mut value.scale, 0.1..=3.0)
                .logarithmic(true)
                .text("scale"),
        )
        .changed();
    if changed {
        viewer.set_override(node, value);
    }
    ui.horizontal(|ui| {
        if ui
            .add_enabled(!value.is_identity(), egui::Button::new("Reset joint"))
            .clicked()
        {
            viewer.set_override(node, JointOverride::IDENTITY);
        }
        if ui
            .add_enabled(viewer.animation().has_overrides(), egui::Button::new("Reset pose"))
            .on_hover_text("Shift+R")
            .clicked()
        {
            viewer.reset_overrides();
        }
        if ui
            .button("Mirror pose")
            .on_hover_text(
                "Swap left and right: each joint takes its partner's motion, reflected (pauses the clip here)",
            )
            .clicked()
            && let Err(e) = viewer.mirror_pose()
        {
            viewer.diagnostics.error = Some(format!("cannot mirror the pose: {e}"));
        }
    });
}
