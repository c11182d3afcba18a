//! Settings between runs, applied to and captured from the viewer and the UI: the one place that
//! knows both the persisted format and its owners.

use crate::settings::{Settings, add_recent};
use crate::ui::{ScreenshotOptions, UiState};
use crate::viewer::Viewer;
use std::path::Path;

/// Gives the viewer and the UI these settings (the window size is the window's business).
pub fn apply_settings(settings: &Settings, viewer: &mut Viewer, ui: &mut UiState) {
    viewer.view.options = settings.view;
    // A file that names its method (an FBX skinned with dual quaternions or weight blended)
    // opens with it; others with the one last used.
    let method = viewer.rig().skinning.method.unwrap_or(settings.skinning_method);
    viewer.set_skinning(settings.skinning_path, method);
    viewer.hot_reload = settings.hot_reload;
    // Files opened this run (the one on the command line) stay on top.
    let opened = std::mem::take(&mut viewer.recent);
    viewer.recent = settings.recent.clone();
    for path in opened.iter().rev() {
        add_recent(&mut viewer.recent, path);
    }
    ui.theme = settings.theme;
    ui.msaa = settings.msaa;
    ui.last_folder = settings.last_folder.clone();
    ui.screenshot = ScreenshotOptions {
        folder: settings.screenshot_folder.clone(),
        with_ui: settings.screenshot_with_ui,
    };
    ui.repair.options = settings.repair.checked();
    viewer.joint_maps = settings.joint_maps.clone();
    ui.curves.options = settings.curves.checked();
    viewer.set_dqs_masks(settings.dqs_masks.clone());
}

/// The settings as the viewer and the UI have them now, with the window's size in points.
pub fn capture_settings(viewer: &Viewer, ui: &UiState, window_size: (f32, f32)) -> Settings {
    Settings {
        window_width: window_size.0,
        window_height: window_size.1,
        theme: ui.theme,
        msaa: ui.msaa,
        hot_reload: viewer.hot_reload,
        skinning_path: viewer.skinning_path(),
        skinning_method: viewer.skinning_method(),
        view: viewer.view.options,
        last_folder: viewer
            .document()
            .path
            .as_ref()
            .and_then(|p| std::path::absolute(p).ok())
            .and_then(|p| p.parent().map(Path::to_owned))
            .or_else(|| ui.last_folder.clone()),
        recent: viewer.recent.clone(),
        screenshot_folder: ui.screenshot.folder.clone(),
        screenshot_with_ui: ui.screenshot.with_ui,
        repair: ui.repair.options,
        joint_maps: viewer.joint_maps.clone(),
        curves: ui.curves.options,
        dqs_masks: viewer.dqs_masks().clone(),
    }
}
