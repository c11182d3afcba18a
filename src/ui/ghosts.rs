//! The onion skin's controls in the Layers panel: on or off, how many ghosts on each side, how
//! many frames apart, and skinned or as skeletons (kept in the settings with the view options).

use crate::anim::GhostOptions;
use crate::anim::ghosts::MAX_GHOSTS_PER_SIDE;

pub fn ghost_controls(ui: &mut egui::Ui, ghosts: &mut GhostOptions) {
    ui.separator();
    ui.checkbox(&mut ghosts.show, "Onion skin")
        .on_hover_text("Ghost poses before (blue) and after (orange) the current time, fading with distance");
    ui.add_enabled_ui(ghosts.show, |ui| {
        ui.add(egui::Slider::new(&mut ghosts.count, 1..=MAX_GHOSTS_PER_SIDE).text("ghosts each side"));
        ui.add(
            egui::Slider::new(&mut ghosts.every, 1..=30)
                .text("frames apart")
                .suffix(" × 1/30 s"),
        );
        ui.checkbox(&mut ghosts.skeleton, "Ghosts as skeletons");
    });
}
