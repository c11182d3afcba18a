//! Settings that stick between runs: window size, folders, recent files, view options,
//! skinning, theme, hot reload and screenshot options, kept as TOML in the platform config dir
//! (`~/.config/rigscope/settings.toml` on Linux), or in `$RIGSCOPE_CONFIG_DIR` when that is set.
//!
//! A missing file means defaults; an unreadable or corrupt one is logged as a warning and
//! replaced by defaults, never an obstacle to starting the viewer.

use crate::render::ViewOptions;
use crate::skin::{SkinningMethod, SkinningPath};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Overrides the folder the settings file lives in (tests use it so they never touch the real one).
pub const CONFIG_DIR_ENV: &str = "RIGSCOPE_CONFIG_DIR";
pub const FILE_NAME: &str = "settings.toml";
/// How many files File ▸ Recent lists.
pub const MAX_RECENT: usize = 10;

crate::names::named_enum! {
    #[strum(serialize_all = "lowercase")]
    pub enum Theme {
        #[default]
        Dark,
        Light,
    }
}

impl Theme {
    pub fn egui(self) -> egui::Theme {
        match self {
            Theme::Dark => egui::Theme::Dark,
            Theme::Light => egui::Theme::Light,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Inner size of the window in logical points.
    pub window_width: f32,
    pub window_height: f32,
    #[serde(deserialize_with = "crate::names::or_default")]
    pub theme: Theme,
    /// Anti-aliasing of the 3D view.
    #[serde(deserialize_with = "crate::names::or_default")]
    pub msaa: crate::render::Msaa,
    /// Reload the open file when it (or a file it uses) changes on disk.
    pub hot_reload: bool,
    #[serde(deserialize_with = "crate::names::or_default")]
    pub skinning_path: SkinningPath,
    #[serde(deserialize_with = "crate::names::or_default")]
    pub skinning_method: SkinningMethod,
    pub view: ViewOptions,
    /// Where File ▸ Open starts.
    pub last_folder: Option<PathBuf>,
    /// Most recent first.
    pub recent: Vec<PathBuf>,
    /// Where screenshots go; the pictures folder (or the current folder) when unset.
    pub screenshot_folder: Option<PathBuf>,
    /// Screenshots include the panels (the whole window), or only the 3D view.
    pub screenshot_with_ui: bool,
    /// The Repair weights window's repairs and options (not written while they are the
    /// defaults, so files stay as earlier versions wrote them).
    #[serde(skip_serializing_if = "crate::repair::RepairOptions::is_default")]
    pub repair: crate::repair::RepairOptions,
    /// Joints of added clips paired by hand, per pair of skeletons (`JointMap::key`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub joint_maps: crate::retarget::JointMaps,
    /// The Curves window's rotation reading and jump threshold.
    #[serde(skip_serializing_if = "crate::motion::curves::CurvesOptions::is_default")]
    pub curves: crate::motion::curves::CurvesOptions,
    /// DQS masks of the blended skinning method: per skeleton, the masked joints' names.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub dqs_masks: crate::skin::blend::DqsMasks,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            window_width: 1280.0,
            window_height: 800.0,
            theme: Theme::Dark,
            msaa: crate::render::Msaa::Auto,
            hot_reload: true,
            skinning_path: SkinningPath::Gpu,
            skinning_method: SkinningMethod::Lbs,
            view: ViewOptions::default(),
            last_folder: None,
            recent: Vec::new(),
            screenshot_folder: None,
            screenshot_with_ui: false,
            repair: crate::repair::RepairOptions::default(),
            joint_maps: Default::default(),
            curves: Default::default(),
            dqs_masks: Default::default(),
        }
    }
}

/// Why the settings could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("cannot create {}: {source}", folder.display())]
    CreateFolder {
        folder: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the settings: {0}")]
    Serialize(#[from] toml::ser::Error),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Settings {
    /// Window size in logical points, kept within sane bounds (a corrupt or hand-edited value
    /// must not open a window of 0 or a million points).
    pub fn window_size(&self) -> (f32, f32) {
        let clamp = |v: f32, default: f32| {
            if v.is_finite() {
                v.clamp(320.0, 16384.0)
            } else {
                default
            }
        };
        (clamp(self.window_width, 1280.0), clamp(self.window_height, 800.0))
    }

    /// Puts `path` at the top of the recent list (once), keeping at most [`MAX_RECENT`].
    pub fn add_recent(&mut self, path: &Path) {
        add_recent(&mut self.recent, path);
    }

    /// Reads settings from `file`. A missing file gives defaults silently; an unreadable or
    /// corrupt one gives defaults and a warning.
    pub fn load_from(file: &Path) -> Settings {
        match std::fs::read_to_string(file) {
            Ok(text) => match toml::from_str::<Settings>(&text) {
                Ok(settings) => settings,
                Err(e) => {
                    log::warn!("ignoring the settings in {} (using defaults): {e}", file.display());
                    Settings::default()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Settings::default(),
            Err(e) => {
                log::warn!("cannot read the settings in {} (using defaults): {e}", file.display());
                Settings::default()
            }
        }
    }

    /// Writes settings to `file` (through a temporary file, so a crash never leaves half a file),
    /// creating its folder.
    pub fn save_to(&self, file: &Path) -> Result<(), SaveError> {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|source| SaveError::CreateFolder {
                folder: dir.to_owned(),
                source,
            })?;
        }
        let text = toml::to_string_pretty(self)?;
        let temporary = file.with_extension("toml.tmp");
        let write_error = |path: &Path| {
            let path = path.to_owned();
            move |source| SaveError::Write { path, source }
        };
        std::fs::write(&temporary, text).map_err(write_error(&temporary))?;
        std::fs::rename(&temporary, file).map_err(write_error(file))
    }

    /// Settings from the standard location ([`settings_file`]), or defaults.
    pub fn load() -> Settings {
        match settings_file() {
            Some(file) => Settings::load_from(&file),
            None => {
                log::warn!("no config folder found for this user; settings will not be kept");
                Settings::default()
            }
        }
    }

    /// Saves to the standard location; failures are logged, not fatal.
    pub fn save(&self) {
        match settings_file() {
            Some(file) => match self.save_to(&file) {
                Ok(()) => log::debug!("settings saved to {}", file.display()),
                Err(e) => log::warn!("{e}"),
            },
            None => log::debug!("no config folder; settings not saved"),
        }
    }
}

/// Puts `path` at the top of `recent` (once), keeping at most [`MAX_RECENT`].
pub fn add_recent(recent: &mut Vec<PathBuf>, path: &Path) {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    recent.retain(|p| *p != path);
    recent.insert(0, path);
    recent.truncate(MAX_RECENT);
}

/// The folder settings live in: `$RIGSCOPE_CONFIG_DIR`, or the platform config dir.
pub fn config_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CONFIG_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "rigscope").map(|d| d.config_dir().to_owned())
}

pub fn settings_file() -> Option<PathBuf> {
    config_dir().map(|d| d.join(FILE_NAME))
}

/// Where screenshots go by default: the user's pictures folder, else the current folder.
pub fn default_screenshot_folder() -> PathBuf {
    directories::UserDirs::new()
        .and_then(|d| d.picture_dir().map(Path::to_owned))
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Named;
    use crate::render::{DeformationMeasure, Msaa, SkeletonOptions, ViewMode};

    /// A settings file's path in a folder of its own, removed when the folder is dropped.
    fn temp_file(name: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new()
            .prefix(&format!("rigscope-settings-{name}"))
            .tempdir()
            .unwrap();
        let file = dir.path().join(FILE_NAME);
        (dir, file)
    }

    #[test]
    fn an_unknown_skinning_name_falls_back_without_losing_the_other_settings() {
        let (_dir, file) = temp_file("unknown-names");
        std::fs::write(
            &file,
            "hot_reload = false\nskinning_path = \"quantum\"\nskinning_method = \"DQS\"\n",
        )
        .unwrap();
        let settings = Settings::load_from(&file);
        assert!(!settings.hot_reload);
        assert_eq!(settings.skinning_path, SkinningPath::Gpu);
        assert_eq!(settings.skinning_method, SkinningMethod::Dqs);
    }

    #[test]
    fn settings_round_trip_through_toml() {
        let (_dir, file) = temp_file("round-trip");
        let mut settings = Settings {
            window_width: 900.0,
            theme: Theme::Light,
            hot_reload: false,
            skinning_path: SkinningPath::Cpu,
            skinning_method: SkinningMethod::Dqs,
            screenshot_with_ui: true,
            screenshot_folder: Some("/tmp/shots".into()),
            ..Settings::default()
        };
        settings.view.mode = ViewMode::Weights;
        settings.view.wireframe = true;
        settings.repair.mirror = true;
        settings.repair.limit_to = 8;
        let mut map = crate::retarget::JointMap::default();
        map.by_hand.insert("mixamorig:Left Hand".into(), "hand.L".into());
        map.by_hand.insert("Jaw".into(), String::new());
        settings.joint_maps.insert("00ff>ff00".into(), map);
        settings.curves.rotation_view = crate::motion::rotation::RotationView::EulerZyx;
        settings.curves.jump_degrees = 12.5;
        settings.dqs_masks.insert(
            "00ff00ff00ff00ff".into(),
            vec!["mixamorig:LeftArm".into(), "spine 2".into()],
        );
        settings.add_recent(Path::new("/a/one.glb"));
        settings.add_recent(Path::new("/a/two.glb"));
        settings.add_recent(Path::new("/a/one.glb"));
        assert_eq!(
            settings.recent,
            [PathBuf::from("/a/one.glb"), PathBuf::from("/a/two.glb")]
        );
        settings.save_to(&file).unwrap();
        let back = Settings::load_from(&file);
        assert_eq!(back, settings);
        assert_eq!(back.view.mode, ViewMode::Weights);
        assert!(back.view.wireframe);
        assert_eq!(back.skinning_path, SkinningPath::Cpu);
        assert_eq!(back.skinning_method, SkinningMethod::Dqs);
        assert!(back.repair.mirror && back.repair.limit_to == 8);
        assert_eq!(back.curves.rotation_view.name(), "euler-zyx");
        assert_eq!(back.curves.jump_degrees, 12.5);
    }

    #[test]
    fn saving_where_no_folder_can_be_made_names_the_folder() {
        let (_dir, file) = temp_file("blocked");
        // A plain file where the settings folder would go.
        let blocker = file.with_file_name("not-a-folder");
        std::fs::write(&blocker, "").unwrap();
        let error = Settings::default().save_to(&blocker.join(FILE_NAME)).unwrap_err();
        assert!(
            matches!(&error, SaveError::CreateFolder { folder, .. } if *folder == blocker),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .starts_with(&format!("cannot create {}: ", blocker.display()))
        );
    }

    #[test]
    fn curves_options_a_hand_edited_file_gives_are_read_or_replaced_by_the_defaults() {
        let (_dir, file) = temp_file("curves");
        std::fs::write(&file, "[curves]\nrotation_view = \"AXIS-Y\"\njump_degrees = 45.0\n").unwrap();
        let read = Settings::load_from(&file).curves;
        assert_eq!(read.rotation_view.name(), "axis-y");
        assert_eq!(read.checked().jump_degrees, 45.0);
        std::fs::write(&file, "[curves]\nrotation_view = \"spin\"\njump_degrees = -3.0\n").unwrap();
        let odd = Settings::load_from(&file).curves;
        assert_eq!(odd.rotation_view, crate::motion::rotation::RotationView::default());
        assert_eq!(odd.checked().jump_degrees, crate::motion::curves::KEY_JUMP_DEGREES);
        assert_eq!(
            crate::motion::curves::CurvesOptions {
                jump_degrees: 1e9,
                ..odd
            }
            .checked()
            .jump_degrees,
            crate::motion::curves::KEY_JUMP_DEGREES
        );
        // The defaults are not written, so a file stays as earlier versions wrote it.
        Settings::default().save_to(&file).unwrap();
        assert!(!std::fs::read_to_string(&file).unwrap().contains("curves"));
    }

    #[test]
    fn corrupt_partial_and_missing_files_give_usable_settings() {
        let (_dir, file) = temp_file("corrupt");
        std::fs::write(&file, "this is [not toml").unwrap();
        assert_eq!(Settings::load_from(&file), Settings::default());
        std::fs::write(&file, "window_width = \"wide\"").unwrap();
        assert_eq!(Settings::load_from(&file), Settings::default());
        // Fields that are missing take defaults; unknown ones are ignored.
        std::fs::write(
            &file,
            "theme = \"light\"\nfuture_option = 3\n[view]\nmode = \"no-such-view\"\n",
        )
        .unwrap();
        let partial = Settings::load_from(&file);
        assert_eq!(partial.theme, Theme::Light);
        assert!(partial.hot_reload);
        assert_eq!(partial.view.mode, ViewMode::Shaded);
        assert!(partial.view.grid);
        std::fs::remove_file(&file).unwrap();
        assert_eq!(Settings::load_from(&file), Settings::default());
    }

    /// A settings file as the version that kept the view options in a struct of their own
    /// (mode and measure as strings) wrote it, every value away from its default.
    const EARLIER_FILE: &str = r#"window_width = 1000.0
window_height = 700.0
theme = "light"
msaa = "2x"
hot_reload = false
skinning_path = "cpu"
skinning_method = "dqs"
recent = []
screenshot_with_ui = true

[view]
mode = "weight-error"
grid = false
zero_distinct = false
dominant_joint = true
deformation = "stretch"
wireframe = true
skeleton = false
skeleton_depth_test = true
joint_names = true
joint_axes = true
"#;

    #[test]
    fn files_of_the_earlier_format_load_and_the_format_is_kept() {
        let expected = Settings {
            window_width: 1000.0,
            window_height: 700.0,
            theme: Theme::Light,
            msaa: Msaa::X2,
            hot_reload: false,
            skinning_path: SkinningPath::Cpu,
            skinning_method: SkinningMethod::Dqs,
            view: ViewOptions {
                mode: ViewMode::WeightError,
                grid: false,
                zero_distinct: false,
                dominant_joint: true,
                deformation: DeformationMeasure::Stretch,
                surface_axis: Default::default(),
                wireframe: true,
                skeleton: SkeletonOptions {
                    show: false,
                    depth_test: true,
                    names: true,
                    axes: true,
                },
                ghosts: crate::anim::GhostOptions::default(),
                bind_skeleton: false,
                tone: crate::render::pbr::ToneOptions::default(),
                light: Default::default(),
                transparent: false,
            },
            last_folder: None,
            recent: Vec::new(),
            screenshot_folder: None,
            screenshot_with_ui: true,
            repair: crate::repair::RepairOptions::default(),
            joint_maps: Default::default(),
            curves: Default::default(),
            dqs_masks: Default::default(),
        };
        let (_dir, file) = temp_file("earlier-format");
        std::fs::write(&file, EARLIER_FILE).unwrap();
        assert_eq!(Settings::load_from(&file), expected);
        expected.save_to(&file).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), EARLIER_FILE);
    }

    #[test]
    fn window_size_is_kept_in_bounds() {
        let settings = Settings {
            window_width: f32::NAN,
            window_height: 1e9,
            ..Settings::default()
        };
        assert_eq!(settings.window_size(), (1280.0, 16384.0));
    }
}
