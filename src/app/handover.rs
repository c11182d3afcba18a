//! The window's side of one window for files opened from the desktop (see
//! [`super::single_instance`], Unix only): handing a file to a window already open, and
//! listening for files later starts hand over.

#[cfg(unix)]
use super::single_instance;
use super::{EventLoop, RigSource, Wake};
use std::path::PathBuf;
use std::sync::Arc;

/// Hands the file `source` names to the Rigscope window already open, if one listens (see
/// [`single_instance`]); `true` when it took it. Clip files, and a way of reading files the
/// open window was not told (`--bvh-scale`), go with a window of its own.
#[cfg(unix)]
pub(super) fn hand_over_to_open_window(source: &RigSource, clips: &crate::retarget::ClipFiles) -> bool {
    let RigSource::File(file) = source else { return false };
    if !clips.files.is_empty() || clips.options.read != crate::rig::LoadOptions::default() {
        return false;
    }
    match single_instance::hand_over(&single_instance::socket_path(), std::slice::from_ref(file)) {
        Ok(taken) => {
            if taken {
                log::info!("{} opened in the Rigscope window already open", file.display());
            }
            taken
        }
        Err(e) => {
            log::warn!(
                "the Rigscope window already open did not take {} ({e}); opening another",
                file.display()
            );
            false
        }
    }
}

#[cfg(not(unix))]
pub(super) fn hand_over_to_open_window(_source: &RigSource, _clips: &crate::retarget::ClipFiles) -> bool {
    false
}

/// Listens for files later starts hand over, queueing them in `handed_over` and waking the loop.
#[cfg(unix)]
pub(super) fn listen_for_files(
    event_loop: &EventLoop<Wake>,
    handed_over: Arc<std::sync::Mutex<Vec<PathBuf>>>,
) -> Option<single_instance::Listener> {
    let proxy = std::sync::Mutex::new(event_loop.create_proxy());
    let deliver = move |path: PathBuf| {
        if let Ok(mut queue) = handed_over.lock() {
            queue.push(path);
        }
        if let Ok(proxy) = proxy.lock() {
            let _ = proxy.send_event(Wake);
        }
    };
    match single_instance::listen(&single_instance::socket_path(), deliver) {
        Ok(listener) => Some(listener),
        Err(e) => {
            // Another window listens (or the runtime folder is not writable): files opened
            // later start windows of their own.
            log::info!("not taking files from later starts: {e}");
            None
        }
    }
}

#[cfg(not(unix))]
pub(super) fn listen_for_files(
    _event_loop: &EventLoop<Wake>,
    _handed_over: Arc<std::sync::Mutex<Vec<PathBuf>>>,
) -> Option<()> {
    None
}
