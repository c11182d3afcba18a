//! Every command a key gives: one table that drives the keyboard, the menus' shortcut texts and
//! the Help window (and so the README's keyboard map).

use super::{UiAction, UiState};
use crate::render::ViewMode;
use crate::skin::SkinningPath;
use crate::viewer::Viewer;
use egui::{Key, KeyboardShortcut, Modifiers};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    Open,
    Reload,
    Screenshot,
    ToggleHelp,
    ToggleAudit,
    ToggleRepair,
    ToggleCurves,
    /// Switch a repair preview between the loaded and the repaired rig.
    BeforeAfter,
    PlayPause,
    StepBack,
    StepForward,
    FrameAll,
    ResetView,
    ResetPose,
    SkinOn(SkinningPath),
    Show(ViewMode),
}

/// A command, its key, and how the Help window names both.
pub struct Binding {
    pub command: Command,
    pub shortcut: KeyboardShortcut,
    /// The key as the Help window and the README write it, in backticks.
    pub keys: &'static str,
    pub action: &'static str,
}

const fn bind(command: Command, modifiers: Modifiers, key: Key, keys: &'static str, action: &'static str) -> Binding {
    Binding {
        command,
        shortcut: KeyboardShortcut::new(modifiers, key),
        keys,
        action,
    }
}

const NONE: Modifiers = Modifiers::NONE;

pub const BINDINGS: &[Binding] = &[
    bind(
        Command::FrameAll,
        NONE,
        Key::F,
        "`F`",
        "frame the whole rig (double click too)",
    ),
    bind(Command::ResetView, NONE, Key::Home, "`Home`", "reset the view"),
    bind(Command::PlayPause, NONE, Key::Space, "`Space`", "play / pause"),
    bind(
        Command::StepBack,
        NONE,
        Key::ArrowLeft,
        "`←`",
        "step one frame (1/30 s) back",
    ),
    bind(
        Command::StepForward,
        NONE,
        Key::ArrowRight,
        "`→`",
        "step one frame (1/30 s) forward",
    ),
    bind(Command::Show(ViewMode::Shaded), NONE, Key::Num1, "`1`", "view: shaded"),
    bind(
        Command::Show(ViewMode::Weights),
        NONE,
        Key::Num2,
        "`2`",
        "view: weights of the selected joint",
    ),
    bind(
        Command::Show(ViewMode::Joints),
        NONE,
        Key::Num3,
        "`3`",
        "view: joints as colors",
    ),
    bind(
        Command::Show(ViewMode::Influences),
        NONE,
        Key::Num4,
        "`4`",
        "view: influence count",
    ),
    bind(
        Command::Show(ViewMode::WeightError),
        NONE,
        Key::Num5,
        "`5`",
        "view: weight-sum error",
    ),
    bind(
        Command::Show(ViewMode::Normals),
        NONE,
        Key::Num6,
        "`6`",
        "view: normals",
    ),
    bind(
        Command::Show(ViewMode::Deformation),
        NONE,
        Key::Num7,
        "`7`",
        "view: deformation against the bind pose",
    ),
    bind(
        Command::Show(ViewMode::Symmetry),
        NONE,
        Key::Num8,
        "`8`",
        "view: weight symmetry",
    ),
    bind(
        Command::Show(ViewMode::WeightDifference),
        NONE,
        Key::Num9,
        "`9`",
        "view: weight difference from the file compared with",
    ),
    bind(
        Command::Show(ViewMode::DqsBlend),
        NONE,
        Key::Num0,
        "`0`",
        "view: each vertex's blend toward dual quaternions",
    ),
    bind(
        Command::Show(ViewMode::EngineDistance),
        Modifiers::SHIFT,
        Key::E,
        "`Shift+E`",
        "view: each vertex's distance from the file's drawing in the engine chosen (View ▸ Engine)",
    ),
    bind(
        Command::SkinOn(SkinningPath::Gpu),
        Modifiers::SHIFT,
        Key::G,
        "`Shift+G`",
        "skin on the GPU (`G` alone moves the selected joint)",
    ),
    bind(
        Command::SkinOn(SkinningPath::Cpu),
        NONE,
        Key::C,
        "`C`",
        "skin on the CPU",
    ),
    bind(
        Command::ToggleAudit,
        NONE,
        Key::A,
        "`A`",
        "show or hide the range-of-motion audit (Tools ▸ Audit)",
    ),
    bind(
        Command::ToggleRepair,
        NONE,
        Key::W,
        "`W`",
        "show or hide the weight repairs (Tools ▸ Repair weights)",
    ),
    bind(
        Command::ToggleCurves,
        NONE,
        Key::K,
        "`K`",
        "show or hide the selected joint's animation curves and keys (Tools ▸ Curves)",
    ),
    bind(
        Command::BeforeAfter,
        NONE,
        Key::B,
        "`B`",
        "during a repair preview, switch between the loaded and the repaired weights",
    ),
    bind(
        Command::ResetPose,
        Modifiers::SHIFT,
        Key::R,
        "`Shift+R`",
        "reset every joint bent by hand (Edit ▸ Reset pose; `R` alone rotates the selected joint)",
    ),
    bind(
        Command::Screenshot,
        NONE,
        Key::F12,
        "`F12`",
        "save a screenshot of the view (with or without the panels: View ▸ Screenshots)",
    ),
    bind(Command::Reload, NONE, Key::F5, "`F5`", "reload the file from disk"),
    bind(
        Command::ToggleHelp,
        NONE,
        Key::F1,
        "`F1`",
        "show or hide this keyboard map (Help ▸ Keyboard shortcuts)",
    ),
    bind(
        Command::Open,
        Modifiers::COMMAND,
        Key::O,
        "`Ctrl+O`",
        "open a file (File ▸ Open…); dropping a file on the window opens it too",
    ),
];

/// The binding of `command`.
pub fn binding(command: Command) -> &'static Binding {
    BINDINGS
        .iter()
        .find(|b| b.command == command)
        .expect("every command has a binding")
}

/// The shortcut of `command` as a menu shows it on this platform.
pub fn shortcut_text(ctx: &egui::Context, command: Command) -> String {
    ctx.format_shortcut(&binding(command).shortcut)
}

/// Runs the commands whose keys were pressed this frame. Plain keys fire only without
/// modifiers (so that Ctrl+R and the like stay free); a shortcut with modifiers is consumed.
pub fn run_pressed(ui: &egui::Ui, viewer: &mut Viewer, state: &mut UiState, actions: &mut Vec<UiAction>) {
    for b in BINDINGS {
        let pressed = if b.shortcut.modifiers.is_none() {
            ui.input(|i| i.key_pressed(b.shortcut.logical_key) && i.modifiers.is_none())
        } else {
            ui.input_mut(|i| i.consume_shortcut(&b.shortcut))
        };
        if pressed {
            run(b.command, viewer, state, actions);
        }
    }
}

/// Carries out `command`, from a key or a menu.
pub fn run(command: Command, viewer: &mut Viewer, state: &mut UiState, actions: &mut Vec<UiAction>) {
    match command {
        Command::Open => actions.push(UiAction::OpenDialog),
        Command::Reload => viewer.reload(),
        Command::Screenshot => actions.push(UiAction::Screenshot {
            with_ui: state.screenshot.with_ui,
        }),
        Command::ToggleHelp => state.help_open = !state.help_open,
        Command::ToggleAudit => state.audit.open = !state.audit.open,
        Command::ToggleRepair => state.repair.open = !state.repair.open,
        Command::ToggleCurves => state.curves.open = !state.curves.open,
        Command::BeforeAfter => viewer.show_repaired(!viewer.showing_repaired()),
        Command::PlayPause => viewer.toggle_play(),
        Command::StepBack => viewer.step(-1),
        Command::StepForward => viewer.step(1),
        Command::FrameAll => viewer.frame_all(),
        Command::ResetView => viewer.reset_view(),
        Command::ResetPose => viewer.reset_overrides(),
        Command::SkinOn(path) => viewer.set_skinning(path, viewer.skinning_method()),
        Command::Show(mode) => viewer.view.options.mode = mode,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_one_key_and_every_key_one_command() {
        for (i, a) in BINDINGS.iter().enumerate() {
            for b in &BINDINGS[i + 1..] {
                assert_ne!(a.command, b.command, "{} and {}", a.keys, b.keys);
                assert_ne!(a.shortcut, b.shortcut, "{} and {}", a.keys, b.keys);
            }
        }
        for &mode in <ViewMode as strum::VariantArray>::VARIANTS {
            assert!(BINDINGS.iter().any(|b| b.command == Command::Show(mode)), "{mode:?}");
        }
    }
}
