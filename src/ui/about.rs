//! Help ▸ About…: the version, the commit the binary was built from (recorded by `build.rs`) and
//! the graphics adapter and backend in use — what a bug report needs. `rigscope --version` prints
//! [`VERSION`].

/// The commit the binary was built from: a short hash, `-dirty` when built with uncommitted
/// changes, or `unknown` when built outside a git checkout.
pub const COMMIT: &str = env!("RIGSCOPE_COMMIT");

/// The version and the commit, as `rigscope --version` prints them after the name.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("RIGSCOPE_COMMIT"), ")");

/// The rows the About window shows: label and value. `adapter` is the window's adapter line
/// (name, backend and device type); empty while none is known.
pub fn rows(adapter: &str) -> Vec<(&'static str, String)> {
    let adapter = if adapter.is_empty() { "not known yet" } else { adapter };
    vec![
        ("Version", env!("CARGO_PKG_VERSION").to_owned()),
        ("Commit", COMMIT.to_owned()),
        ("Graphics adapter", adapter.to_owned()),
        ("License", env!("CARGO_PKG_LICENSE").to_owned()),
    ]
}

/// The Help ▸ About… window.
pub fn about_window(ctx: &egui::Context, open: &mut bool, adapter: &str) {
    egui::Window::new("About Rigscope")
        .open(open)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            ui.label(env!("CARGO_PKG_DESCRIPTION"));
            ui.add_space(6.0);
            egui::Grid::new("about")
                .num_columns(2)
                .spacing([16.0, 4.0])
                .show(ui, |ui| {
                    for (label, value) in rows(adapter) {
                        ui.label(egui::RichText::new(label).strong());
                        ui.label(value);
                        ui.end_row();
                    }
                });
            ui.add_space(6.0);
            if ui.button("Copy to clipboard").clicked() {
                let text: Vec<String> = rows(adapter)
                    .into_iter()
                    .map(|(label, value)| format!("{label}: {value}"))
                    .collect();
                ui.ctx().copy_text(text.join("\n"));
            }
        });
}
