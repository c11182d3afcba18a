//! The keyboard and mouse map: one table, shown in the Help panel (F1) and written into the
//! README (a test checks that the README holds exactly [`markdown_table`]).

pub struct Shortcut {
    /// The input, with keys in backticks (shown without them in the panel).
    pub input: &'static str,
    pub action: &'static str,
}

const fn s(input: &'static str, action: &'static str) -> Shortcut {
    Shortcut { input, action }
}

pub const SHORTCUTS: &[Shortcut] = &[
    s("Left drag", "orbit"),
    s("Middle drag, right drag, Shift + left drag", "pan"),
    s(
        "Alt + left drag",
        "bend the selected joint about its local X and Y axes",
    ),
    s("Wheel", "zoom"),
    s(
        "Click",
        "select the joint under the cursor (a joint dot, or the strongest joint of the vertex hit)",
    ),
    s("`F`, double click", "frame the whole rig"),
    s("`Home`", "reset the view"),
    s("`Space`", "play / pause"),
    s("`←` / `→`", "step one frame (1/30 s) back / forward"),
    s(
        "`1` … `6`",
        "view: shaded, weights, joints, influence count, weight-sum error, normals",
    ),
    s("`G` / `C`", "skin on the GPU / on the CPU"),
    s("`R`", "reset every joint bent by hand"),
    s(
        "`F12`",
        "save a screenshot of the view (with or without the panels: View ▸ Screenshots)",
    ),
    s("`F5`", "reload the file from disk"),
    s("`F1`", "show or hide this keyboard map (Help ▸ Keyboard shortcuts)"),
    s(
        "`Ctrl+O`",
        "open a file (File ▸ Open…); dropping a file on the window opens it too",
    ),
];

/// The table as Markdown, for the README.
pub fn markdown_table() -> String {
    let mut table = String::from("| Input | Action |\n| --- | --- |\n");
    for shortcut in SHORTCUTS {
        table.push_str(&format!("| {} | {} |\n", shortcut.input, shortcut.action));
    }
    table
}

/// Table text as the panel shows it: without the backticks, and with words for the glyphs
/// egui's built-in fonts lack (arrows, the menu separator).
pub fn panel_text(text: &str) -> String {
    text.replace('`', "")
        .replace('←', "Left")
        .replace('→', "Right")
        .replace('▸', ">")
}

/// The Help ▸ Keyboard shortcuts window.
pub fn help_window(ctx: &egui::Context, open: &mut bool) {
    egui::Window::new("Keyboard shortcuts")
        .open(open)
        .collapsible(false)
        .resizable(false)
        .default_width(460.0)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            egui::Grid::new("shortcuts")
                .num_columns(2)
                .striped(true)
                .spacing([16.0, 4.0])
                .show(ui, |ui| {
                    for shortcut in SHORTCUTS {
                        ui.label(egui::RichText::new(panel_text(shortcut.input)).strong());
                        ui.label(panel_text(shortcut.action));
                        ui.end_row();
                    }
                });
        });
}
