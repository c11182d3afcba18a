//! The Expressions panel: a VRM avatar's expressions (VRM 0.x blend shape groups, VRM 1.0
//! expressions), each with a weight slider that moves the morph targets it binds.

use crate::viewer::{PoseEdit, PoseParts, Viewer};

/// A slider per expression of the avatar; a drag is one pose edit (undone whole), and the
/// morph targets it binds read "by hand" in the Layers panel until handed back there.
pub fn expressions_panel(ui: &mut egui::Ui, viewer: &mut Viewer) {
    let mut edited = PoseParts::of(viewer.animation());
    let rig = viewer.rig();
    let mut changed = false;
    for (index, expression) in rig.facts.expressions.iter().enumerate() {
        let mut weight = edited.expression_weights.get(index).copied().unwrap_or(0.0);
        let slider = ui
            .add(egui::Slider::new(&mut weight, 0.0..=1.0).text(&expression.name))
            .on_hover_text(format!("Moves {} morph target binds", expression.binds.len()));
        if slider.changed() {
            edited.set_expression_weight(rig, index, weight);
            changed = true;
        }
    }
    if ui
        .small_button("All expressions to 0")
        .on_hover_text("Hands the morph targets the expressions bind back to the clip")
        .clicked()
    {
        for index in 0..rig.facts.expressions.len() {
            edited.set_expression_weight(rig, index, 0.0);
        }
        changed = true;
    }
    if changed {
        viewer.edit_pose(PoseEdit::Parts(edited));
    }
}
