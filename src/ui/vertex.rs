//! The vertex inspector: one vertex's place and weights, picked with Ctrl+click in the view.

use crate::render::views::joint_color;
use crate::ui::legend::color32;
use crate::viewer::Viewer;

pub fn vertex_panel(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.heading("Vertex");
    let Some(mark) = viewer.inspected_vertex() else {
        ui.label(egui::RichText::new("Ctrl+click the mesh to inspect a vertex.").weak());
        return;
    };
    let posed = viewer.inspected_position();
    let rig = viewer.rig().clone();
    let Some(instance) = rig.instances.get(mark.instance) else {
        return;
    };
    let mesh = &rig.meshes[instance.mesh];
    let Some(primitive) = mesh.primitives.get(mark.primitive) else {
        return;
    };
    let Some(&bind) = primitive.positions.get(mark.vertex) else {
        return;
    };
    ui.label(format!(
        "Mesh {} '{}', primitive {}, vertex {}",
        instance.mesh, mesh.name, mark.primitive, mark.vertex
    ));
    let point = |p: glam::Vec3| format!("({:.4}, {:.4}, {:.4})", p.x, p.y, p.z);
    ui.label(format!("Bind position {}", point(bind)));
    if let Some(posed) = posed {
        ui.label(format!("Posed position {}", point(posed)));
    }
    let (Some(influences), Some(skin)) = (&primitive.influences, instance.skin.map(|s| &rig.skins[s])) else {
        ui.label("Not skinned.");
        return;
    };
    let mut weights: Vec<(u16, f32)> = influences.of_vertex(mark.vertex).filter(|&(_, w)| w != 0.0).collect();
    weights.sort_by(|a, b| b.1.total_cmp(&a.1));
    let sum: f32 = weights.iter().map(|&(_, w)| w).sum();
    egui::Grid::new("vertex weights")
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            for &(joint, weight) in &weights {
                let node = skin.joints.get(joint as usize).copied();
                let (swatch, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
                ui.painter()
                    .rect_filled(swatch, 2.0, color32(joint_color(u32::from(joint))));
                let name = node.map_or_else(
                    || format!("joint {joint} (outside the skin)"),
                    |n| rig.nodes[n].name.clone(),
                );
                if ui
                    .selectable_label(viewer.view.selected_joint == node && node.is_some(), name)
                    .clicked()
                {
                    viewer.view.selected_joint = node;
                }
                ui.label(format!("{weight:.4}"));
                ui.end_row();
            }
        });
    ui.label(format!("{} influences, sum {sum:.4}", weights.len()));
    if ui.button("Clear").clicked() {
        viewer.inspect_vertex(None);
    }
}
