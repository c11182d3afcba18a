//! Compiled pipelines kept on disk between runs, where the adapter supports it (Vulkan):
//! a software driver spends tens of milliseconds compiling each pipeline, every run.

use std::path::PathBuf;

/// Environment variable naming the folder the cache is kept in (the user's cache folder
/// otherwise); an empty value turns the disk cache off.
pub const CACHE_DIR_ENV: &str = "RIGSCOPE_CACHE_DIR";

/// A wgpu pipeline cache and the file it came from and goes back to.
pub struct DiskPipelineCache {
    pub cache: wgpu::PipelineCache,
    path: PathBuf,
    /// Size of the data when it was read or last written, to skip writing it unchanged.
    saved_len: std::sync::Mutex<usize>,
}

fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os(CACHE_DIR_ENV) {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(dir.into()),
        None => directories::ProjectDirs::from("", "", "rigscope").map(|d| d.cache_dir().to_owned()),
    }
}

impl DiskPipelineCache {
    /// The cache for `adapter`, filled from disk when a file for this adapter and driver
    /// exists. `None` when the device lacks `PIPELINE_CACHE` or there is no cache folder.
    pub fn open(adapter: &wgpu::Adapter, device: &wgpu::Device) -> Option<DiskPipelineCache> {
        if !device.features().contains(wgpu::Features::PIPELINE_CACHE) {
            return None;
        }
        // The key names the adapter, driver and wgpu version, so a driver update starts afresh.
        let key = wgpu::util::pipeline_cache_key(&adapter.get_info())?;
        let path = cache_dir()?.join(key);
        let data = std::fs::read(&path).ok();
        // SAFETY: the data is what `PipelineCache::get_data` returned on an earlier run, written
        // whole by `save` (a temporary file renamed over the old one), under a name that
        // includes the adapter, driver and wgpu version; wgpu checks its header, and with
        // `fallback` an unusable file gives an empty cache instead of an error.
        let cache = unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some("rigscope pipelines"),
                data: data.as_deref(),
                fallback: true,
            })
        };
        log::debug!(
            "pipeline cache {}: {} bytes read",
            path.display(),
            data.as_ref().map_or(0, Vec::len)
        );
        Some(DiskPipelineCache {
            cache,
            path,
            saved_len: std::sync::Mutex::new(data.map_or(0, |d| d.len())),
        })
    }

    /// Writes the cache back when it grew since it was read or written. Failing to write is
    /// not an error: the next run compiles again.
    pub fn save(&self) {
        let Some(data) = self.cache.get_data() else { return };
        let Ok(mut saved) = self.saved_len.lock() else { return };
        if data.len() == *saved {
            return;
        }
        let temporary = self.path.with_extension(format!("{}.tmp", std::process::id()));
        let written = self
            .path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&temporary, &data))
            .and_then(|()| std::fs::rename(&temporary, &self.path));
        match written {
            Ok(()) => {
                *saved = data.len();
                log::debug!("pipeline cache {}: {} bytes written", self.path.display(), data.len());
            }
            Err(e) => {
                let _ = std::fs::remove_file(&temporary);
                log::debug!("pipeline cache {} not written: {e}", self.path.display());
            }
        }
    }
}
