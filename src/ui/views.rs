//! Skinning and view controls, and the legends drawn over the viewport.

use crate::render::views::{
    DEFORMATION_RANGE, DeformationMeasure, SYMMETRY_FULL_SCALE, SYMMETRY_UNCHECKED, SYMMETRY_UNMATCHED, ViewMode,
    WEIGHT_ERROR_FULL_SCALE, deformation_color, heat, influence_color, joint_color, symmetry_color,
};
use crate::skin::{SkinningMethod, SkinningPath, max_non_rigidity};
use crate::ui::UiAction;
use crate::viewer::{VertexRef, Viewer};
use egui::{Color32, RichText};
use strum::VariantArray;

/// A linear RGB color as egui's (sRGB) color, so legends match the shaded pixels.
pub(crate) fn color32(rgb: [f32; 3]) -> Color32 {
    Color32::from(egui::Rgba::from_rgb(rgb[0], rgb[1], rgb[2]))
}

/// Palettes further than this from rigid (scale or shear) are flagged for DQS.
const RIGID_TOLERANCE: f32 = 1e-3;

pub fn skinning_panel(ui: &mut egui::Ui, viewer: &mut Viewer, actions: &mut Vec<UiAction>) {
    ui.heading("Skinning");
    let (mut path, mut method) = (viewer.skinning_path(), viewer.skinning_method());
    ui.horizontal(|ui| {
        ui.selectable_value(&mut path, SkinningPath::Gpu, "GPU")
            .on_hover_text("Vertex shader skinning (G)");
        ui.selectable_value(&mut path, SkinningPath::Cpu, "CPU")
            .on_hover_text("CPU skinning, uploaded each frame (C)");
    });
    ui.horizontal(|ui| {
        ui.selectable_value(&mut method, SkinningMethod::Lbs, "LBS")
            .on_hover_text(SkinningMethod::Lbs.label());
        ui.selectable_value(&mut method, SkinningMethod::Dqs, "DQS")
            .on_hover_text(SkinningMethod::Dqs.label());
    });
    if (path, method) != (viewer.skinning_path(), viewer.skinning_method()) {
        viewer.set_skinning(path, method);
    }
    let non_rigid = viewer
        .pose()
        .palettes
        .iter()
        .map(|p| max_non_rigidity(p))
        .fold(0.0, f32::max);
    if non_rigid > RIGID_TOLERANCE {
        let text = format!(
            "Palette has non-uniform scale or shear (up to {non_rigid:.3}); dual quaternions drop it, so DQS differs from LBS here."
        );
        ui.label(RichText::new(text).color(ui.visuals().warn_fg_color));
    }
    ui.horizontal(|ui| {
        if ui
            .button("Compare CPU and GPU")
            .on_hover_text("Skin the current pose both ways and measure the difference")
            .clicked()
        {
            actions.push(UiAction::Compare);
        }
    });
    let mut new_marks = None;
    if let Some(c) = &viewer.diagnostics.comparison {
        egui::Grid::new("comparison").num_columns(2).show(ui, |ui| {
            ui.label("method");
            ui.label(c.method.label());
            ui.end_row();
            ui.label("vertices");
            ui.label(c.vertices.to_string());
            ui.end_row();
            ui.label("max deviation");
            ui.label(format!("{:.3e} ({:.2e} of rig size)", c.max, c.max / c.rig_size));
            ui.end_row();
            ui.label("mean deviation");
            ui.label(format!("{:.3e}", c.mean));
            ui.end_row();
            ui.label("over threshold");
            ui.label(format!(
                "{} vertices > {:.0e} of rig size",
                c.over_threshold,
                crate::render::compute::COMPARE_THRESHOLD
            ));
            ui.end_row();
        });
        if !c.deviating.is_empty() {
            let mark = |d: &crate::render::compute::DeviatingVertex| VertexRef {
                instance: d.instance,
                primitive: d.primitive,
                vertex: d.vertex,
            };
            let shown = viewer.finding_marks().iter().copied().eq(c.deviating.iter().map(mark));
            let label = format!("Mark the {} that deviate most", c.deviating.len());
            if ui.selectable_label(shown, label).clicked() {
                new_marks = Some(if shown {
                    Vec::new()
                } else {
                    c.deviating.iter().map(mark).collect()
                });
            }
        }
    }
    if let Some(marks) = new_marks {
        viewer.set_finding_marks(marks);
    }
}

pub fn view_panel(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.heading("View");
    for (k, &mode) in ViewMode::VARIANTS.iter().enumerate() {
        ui.radio_value(
            &mut viewer.view.options.mode,
            mode,
            format!("{}  {}", k + 1, mode.label()),
        );
    }
    match viewer.view.options.mode {
        ViewMode::Weights => {
            ui.checkbox(&mut viewer.view.options.zero_distinct, "Show weight 0 in grey");
        }
        ViewMode::Joints => {
            ui.checkbox(&mut viewer.view.options.dominant_joint, "Strongest joint only");
        }
        ViewMode::Deformation => {
            ui.horizontal(|ui| {
                for &measure in DeformationMeasure::VARIANTS {
                    ui.radio_value(&mut viewer.view.options.deformation, measure, measure.label());
                }
            });
        }
        ViewMode::Symmetry => {
            viewer.ensure_symmetry();
            if let Some(summary) = viewer.symmetry_summary() {
                ui.label(summary);
            } else if viewer.checking_symmetry() {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Checking weight symmetry…");
                });
            }
        }
        _ => {}
    }
    ui.separator();
    let skeleton = &mut viewer.view.options.skeleton;
    ui.checkbox(&mut skeleton.show, "Skeleton");
    ui.add_enabled_ui(skeleton.show, |ui| {
        ui.indent("skeleton options", |ui| {
            ui.checkbox(&mut skeleton.depth_test, "Hidden behind the mesh");
            ui.checkbox(&mut skeleton.names, "Joint names");
            ui.checkbox(&mut skeleton.axes, "Local axes");
        });
    });
    ui.checkbox(&mut viewer.view.options.wireframe, "Wireframe");
    ui.checkbox(&mut viewer.view.options.grid, "Ground grid and axes");
}

/// The color key of the current view, drawn in the viewport's bottom-left corner.
pub fn legend(ui: &egui::Ui, viewport: egui::Rect, viewer: &Viewer) {
    let painter = ui.painter_at(viewport);
    let origin = viewport.left_bottom() + egui::vec2(12.0, -12.0);
    let text_color = Color32::from_gray(220);
    let font = egui::FontId::proportional(12.0);
    match viewer.view.options.mode {
        ViewMode::Weights => {
            let name = viewer
                .view
                .selected_joint
                .map_or("no joint selected", |j| viewer.rig().nodes[j].name.as_str());
            let note = viewer.view.options.zero_distinct.then_some("grey: exactly 0");
            ramp_legend(&painter, origin, heat, ["0", "1"], &format!("weight of {name}"), note);
        }
        ViewMode::Deformation => {
            let range = DEFORMATION_RANGE;
            let title = format!(
                "{} posed / bind",
                viewer.view.options.deformation.label().to_lowercase()
            );
            let ends = [format!("1/{range}"), format!("{range}")];
            let ramp = |t: f32| deformation_color(range.powf(2.0 * t - 1.0));
            ramp_legend(
                &painter,
                origin,
                ramp,
                [&ends[0], &ends[1]],
                &title,
                Some("green: as bound; magenta: turned inside out"),
            );
        }
        ViewMode::Symmetry => {
            let ramp = |t: f32| symmetry_color(t * SYMMETRY_FULL_SCALE);
            let full = format!("≥ {SYMMETRY_FULL_SCALE}");
            let unmatched = color32(symmetry_color(SYMMETRY_UNMATCHED));
            let unchecked = color32(symmetry_color(SYMMETRY_UNCHECKED));
            ramp_legend(
                &painter,
                origin,
                ramp,
                ["0", &full],
                "weight difference from the mirror",
                None,
            );
            let swatch = |x: f32, color, label: &str| {
                let rect = egui::Rect::from_min_size(egui::pos2(x, origin.y - 12.0), egui::vec2(12.0, 12.0));
                painter.rect_filled(rect, 2.0, color);
                painter.text(
                    rect.right_center() + egui::vec2(4.0, 0.0),
                    egui::Align2::LEFT_CENTER,
                    label,
                    font.clone(),
                    text_color,
                );
            };
            swatch(origin.x + 176.0, unmatched, "no mirror vertex");
            swatch(origin.x + 320.0, unchecked, "not compared");
        }
        ViewMode::Influences => {
            for n in 1..=8u32 {
                let x = origin.x + (n - 1) as f32 * 22.0;
                let rect = egui::Rect::from_min_size(egui::pos2(x, origin.y - 14.0), egui::vec2(20.0, 14.0));
                painter.rect_filled(rect, 2.0, color32(influence_color(n)));
                painter.text(
                    rect.center(),
                    egui::Align2::CENTER_CENTER,
                    n.to_string(),
                    font.clone(),
                    Color32::BLACK,
                );
            }
        }
        ViewMode::WeightError => {
            let full = WEIGHT_ERROR_FULL_SCALE;
            painter.text(
                origin,
                egui::Align2::LEFT_BOTTOM,
                format!("green: Σw = 1   yellow: |Σw − 1| = {}   magenta: ≥ {full}", 0.5 * full),
                font,
                text_color,
            );
        }
        ViewMode::Joints => {
            if let Some(node) = viewer.view.selected_joint
                && let Some(slot) = viewer.rig().hierarchy().joint_slot(node)
            {
                let rect = egui::Rect::from_min_size(origin - egui::vec2(0.0, 14.0), egui::vec2(14.0, 14.0));
                painter.rect_filled(rect, 2.0, color32(joint_color(slot as u32)));
                painter.text(
                    rect.right_center() + egui::vec2(6.0, 0.0),
                    egui::Align2::LEFT_CENTER,
                    &viewer.rig().nodes[node].name,
                    font,
                    text_color,
                );
            }
        }
        _ => {}
    }
}

/// A color ramp 160 points wide along the viewport's bottom-left corner, with its two end labels,
/// its title above the middle, and `note` to its right.
fn ramp_legend(
    painter: &egui::Painter,
    origin: egui::Pos2,
    color: impl Fn(f32) -> [f32; 3],
    ends: [&str; 2],
    title: &str,
    note: Option<&str>,
) {
    let (width, height) = (160.0, 12.0);
    let text_color = Color32::from_gray(220);
    let font = egui::FontId::proportional(12.0);
    let top = origin.y - height;
    for i in 0..width as usize {
        let x = origin.x + i as f32;
        let t = i as f32 / (width - 1.0);
        painter.line_segment([egui::pos2(x, top), egui::pos2(x, origin.y)], (1.0, color32(color(t))));
    }
    let text =
        |x: f32, align, label: &str| painter.text(egui::pos2(x, top - 2.0), align, label, font.clone(), text_color);
    text(origin.x, egui::Align2::LEFT_BOTTOM, ends[0]);
    text(origin.x + width, egui::Align2::RIGHT_BOTTOM, ends[1]);
    text(origin.x + width * 0.5, egui::Align2::CENTER_BOTTOM, title);
    if let Some(note) = note {
        painter.text(
            egui::pos2(origin.x + width + 10.0, origin.y),
            egui::Align2::LEFT_BOTTOM,
            note,
            font,
            text_color,
        );
    }
}
