//! Skinning and view controls.

use crate::render::views::{DeformationMeasure, SurfaceAxis, ViewMode};
use crate::skin::{SkinningMethod, SkinningPath, max_non_rigidity};
use crate::ui::UiAction;
use crate::viewer::{VertexRef, Viewer};
use egui::RichText;
use strum::VariantArray;

/// Palettes further than this from what DQS carries (shear, scale off the mesh's axes) are
/// flagged.
const RIGID_TOLERANCE: f32 = 1e-3;

/// One button per skinning method, the one chosen selected.
fn method_buttons(ui: &mut egui::Ui, method: &mut SkinningMethod) {
    for (choice, text) in [
        (SkinningMethod::Lbs, "LBS"),
        (SkinningMethod::Dqs, "DQS"),
        (SkinningMethod::Blended, "Blended"),
    ] {
        ui.selectable_value(method, choice, text).on_hover_text(choice.label());
    }
}

/// While comparing, the other side's skinning: the same as this side's (its DQS mask carried
/// by joint name), or a method of its own on this side's path.
fn other_side_skinning(ui: &mut egui::Ui, viewer: &mut Viewer) {
    let Some(comparison) = viewer.comparison() else {
        return;
    };
    let side = comparison.other();
    let name = side.rig().name.clone();
    let (mut same, mut method) = (comparison.same_skinning, side.skinning_method());
    ui.label(format!("Other side ({name})"));
    ui.horizontal(|ui| {
        ui.selectable_value(&mut same, true, "Same")
            .on_hover_text("Skin it as this side: path, method and DQS mask (by joint name)");
        if !same {
            method_buttons(ui, &mut method);
        } else if ui.selectable_label(false, "Own…").clicked() {
            same = false;
        }
    });
    if same != comparison.same_skinning || (!same && method != side.skinning_method()) {
        viewer.set_other_side_skinning((!same).then_some(method));
    }
}

pub fn skinning_panel(ui: &mut egui::Ui, viewer: &mut Viewer, actions: &mut Vec<UiAction>) {
    ui.heading("Skinning");
    let (mut path, mut method) = (viewer.skinning_path(), viewer.skinning_method());
    ui.horizontal(|ui| {
        ui.selectable_value(&mut path, SkinningPath::Gpu, "GPU")
            .on_hover_text("Vertex shader skinning (G)");
        ui.selectable_value(&mut path, SkinningPath::Cpu, "CPU")
            .on_hover_text("CPU skinning, uploaded each frame (C)");
    });
    ui.horizontal(|ui| method_buttons(ui, &mut method));
    if (path, method) != (viewer.skinning_path(), viewer.skinning_method()) {
        viewer.set_skinning(path, method);
    }
    if method == SkinningMethod::Blended {
        crate::ui::dqs_mask::dqs_mask_controls(ui, viewer);
    }
    other_side_skinning(ui, viewer);
    let non_rigid = viewer
        .pose()
        .palettes
        .iter()
        .map(|p| max_non_rigidity(p))
        .fold(0.0, f32::max);
    if non_rigid > RIGID_TOLERANCE {
        let text = format!(
            "Palette has shear, or scale along other axes than the mesh's (up to {non_rigid:.3}); dual quaternions drop it, so DQS differs from LBS here."
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
            if let Some(tangents) = c.tangent_max {
                ui.label("tangents, max");
                ui.label(format!("{tangents:.2e} of their length"));
                ui.end_row();
            }
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

/// The shaded view's tone curve and exposure (the other views show values, and are not toned).
fn tone_controls(ui: &mut egui::Ui, tone: &mut crate::render::pbr::ToneOptions) {
    ui.horizontal(|ui| {
        ui.label("Tone");
        for &curve in crate::render::pbr::Tonemap::VARIANTS {
            ui.radio_value(&mut tone.curve, curve, curve.label());
        }
    });
    ui.add(
        egui::Slider::new(&mut tone.exposure, -4.0..=4.0)
            .step_by(0.25)
            .text("Exposure (EV)"),
    )
    .on_hover_text("+1 doubles the light, −1 halves it");
}

/// What lights the shaded view: the environment map (which, and back to the built-in room) or
/// the directional light.
fn light_controls(ui: &mut egui::Ui, viewer: &mut Viewer) {
    use crate::render::environment::{Environment, Lighting};
    ui.horizontal(|ui| {
        ui.label("Light");
        for &light in Lighting::VARIANTS {
            ui.radio_value(&mut viewer.view.options.light, light, light.label());
        }
    });
    if viewer.view.options.light == Lighting::Environment {
        ui.horizontal(|ui| {
            ui.label(viewer.environment.name())
                .on_hover_text("File ▸ Environment… loads an equirectangular .hdr panorama");
            if matches!(viewer.environment, Environment::Map { .. }) && ui.small_button("Studio room").clicked() {
                viewer.environment = Environment::Room;
            }
        });
    }
}

pub fn view_panel(ui: &mut egui::Ui, viewer: &mut Viewer) {
    ui.heading("View");
    for (k, &mode) in ViewMode::VARIANTS.iter().enumerate() {
        ui.radio_value(
            &mut viewer.view.options.mode,
            mode,
            format!("{}  {}", (k + 1) % 10, mode.label()),
        );
    }
    match viewer.view.options.mode {
        ViewMode::Shaded => {
            light_controls(ui, viewer);
            tone_controls(ui, &mut viewer.view.options.tone);
        }
        ViewMode::Weights => {
            ui.checkbox(&mut viewer.view.options.zero_distinct, "Show weight 0 in grey");
        }
        ViewMode::Joints => {
            ui.checkbox(&mut viewer.view.options.dominant_joint, "Strongest joint only");
        }
        ViewMode::Normals => {
            ui.horizontal(|ui| {
                for &axis in SurfaceAxis::VARIANTS {
                    ui.radio_value(&mut viewer.view.options.surface_axis, axis, axis.label());
                }
            });
        }
        ViewMode::Deformation => {
            ui.horizontal(|ui| {
                for &measure in DeformationMeasure::VARIANTS {
                    ui.radio_value(&mut viewer.view.options.deformation, measure, measure.label());
                }
            });
        }
        ViewMode::Symmetry => {
            // The check runs from the frame (see `Viewer::prepare_frame`).
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
