//! The keyboard and mouse map: the mouse's gestures and the command table's keys, shown in the
//! Help panel (F1) and written into the README (a test checks that the README holds exactly
//! [`markdown_table`]).

use super::commands::BINDINGS;

#[derive(Debug, Clone, Copy)]
pub struct Shortcut {
    /// The input, with keys in backticks (shown without them in the panel).
    pub input: &'static str,
    pub action: &'static str,
}

const fn s(input: &'static str, action: &'static str) -> Shortcut {
    Shortcut { input, action }
}

/// What the mouse does; the keys come from [`BINDINGS`].
const MOUSE: &[Shortcut] = &[
    s("Left drag", "orbit"),
    s("Middle drag, right drag, Shift + left drag", "pan"),
    s(
        "Alt + left drag",
        "bend the selected joint about its local X and Y axes",
    ),
    s("Wheel", "zoom"),
    s(
        "Click",
        "select the joint under the cursor (a joint dot, a bone drawn near it, or the strongest joint of the vertex hit)",
    ),
    s(
        "Ctrl + click",
        "inspect the vertex under the cursor: its weights in the Vertex panel, marked in the view",
    ),
    s(
        "Left drag on a gizmo ring",
        "rotate the selected joint about that ring's axis (Local / Parent / World over the view); Ctrl snaps to 5°",
    ),
    s(
        "Ctrl + Alt + left drag",
        "move the selected hand's or foot's IK goal in the view plane (made when there is none)",
    ),
    s("Click on an IK goal's handle", "select the hand or foot the goal pulls"),
];

/// The pose-mode keys over the 3D view (see [`super::gizmo`]).
const POSE_KEYS: &[Shortcut] = &[
    s(
        "`R`",
        "rotate the selected joint with the mouse; then `X` / `Y` / `Z` lock a world axis (again: the joint's own), digits type degrees, `Enter` or click confirms, `Esc` or right click cancels",
    ),
    s(
        "`G`",
        "move the selected joint (the root, or one the clips move) in the view plane; axis locks, typed distances, confirm and cancel as for `R`",
    ),
    s(
        "`Alt+R` / `Alt+G`",
        "clear the selected joint's rotation / translation bend",
    ),
    s(
        "`I`",
        "IK tool on or off: a left drag moves the selected hand's or foot's IK goal",
    ),
    s(
        "`Ctrl+C` / `Ctrl+V`",
        "copy the pose / paste it onto the joints of the same names, in this file or another (Edit menu)",
    ),
];

/// Every row of the map: the mouse, the pose-mode keys, then each command's key.
pub fn rows() -> Vec<Shortcut> {
    let keys = BINDINGS.iter().map(|b| Shortcut {
        input: b.keys,
        action: b.action,
    });
    MOUSE.iter().chain(POSE_KEYS).copied().chain(keys).collect()
}

/// The table as Markdown, for the README.
pub fn markdown_table() -> String {
    let mut table = String::from("| Input | Action |\n| --- | --- |\n");
    for shortcut in rows() {
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
                    for shortcut in rows() {
                        ui.label(egui::RichText::new(panel_text(shortcut.input)).strong());
                        ui.label(panel_text(shortcut.action));
                        ui.end_row();
                    }
                });
        });
}
