//! One window for files opened from the desktop: the first interactive window listens on a
//! socket in the user's runtime folder, and a `rigscope FILE` started while it runs hands FILE
//! to it (the window opens it as a dropped file is opened, asking first about edits not saved)
//! and exits, instead of starting a second window. Linux and the other Unix systems only; a
//! window started for a test (`--exit-after-frames`) or with `--new-window` neither hands over
//! nor listens.

use std::io::{self, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The socket: `rigscope.sock` in `$XDG_RUNTIME_DIR` (private to the user), else a name with
/// the user's in the temporary folder.
pub fn socket_path() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("rigscope.sock"),
        None => {
            let user = std::env::var("USER").unwrap_or_else(|_| "user".into());
            std::env::temp_dir().join(format!("rigscope-{user}.sock"))
        }
    }
}

/// What the window sends back once it has taken the files.
const ACK: &[u8] = b"opened\n";

/// How long a hand-over waits for a window that does not answer before starting its own.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// Most bytes of paths one hand-over may send.
const MAX_MESSAGE: u64 = 64 * 1024;

/// Hands `files` to the window listening on `socket`; `Ok(true)` when it took them, `Ok(false)`
/// when none listens (or it did not answer), so the caller opens its own.
pub fn hand_over(socket: &Path, files: &[PathBuf]) -> io::Result<bool> {
    let Ok(mut stream) = UnixStream::connect(socket) else {
        return Ok(false);
    };
    stream.set_read_timeout(Some(ANSWER_WAIT))?;
    stream.set_write_timeout(Some(ANSWER_WAIT))?;
    let mut message = Vec::new();
    for file in files {
        // The window runs elsewhere: a relative path would name another file there.
        let absolute = std::path::absolute(file)?;
        // Paths hold no NUL byte: it separates them.
        message.extend_from_slice(absolute.as_os_str().as_bytes());
        message.push(0);
    }
    stream.write_all(&message)?;
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut answer = Vec::new();
    let _ = stream.take(ACK.len() as u64).read_to_end(&mut answer);
    Ok(answer == ACK)
}

/// The listening side; the socket file goes when it is dropped.
pub struct Listener {
    path: PathBuf,
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Listens on `socket` on a thread of its own, calling `deliver` with each file handed over.
/// Fails with [`io::ErrorKind::AddrInUse`] when another window answers there; a socket file
/// left by a window that is gone is replaced.
pub fn listen(socket: &Path, deliver: impl Fn(PathBuf) + Send + 'static) -> io::Result<Listener> {
    if socket.exists() {
        if UnixStream::connect(socket).is_ok() {
            return Err(io::Error::from(io::ErrorKind::AddrInUse));
        }
        std::fs::remove_file(socket)?;
    }
    let listener = UnixListener::bind(socket)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    }
    std::thread::Builder::new()
        .name("single instance".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = take_files(stream, &deliver);
            }
        })?;
    Ok(Listener {
        path: socket.to_owned(),
    })
}

/// Reads one hand-over's files, delivers them and answers.
fn take_files(mut stream: UnixStream, deliver: &impl Fn(PathBuf)) -> io::Result<()> {
    stream.set_read_timeout(Some(ANSWER_WAIT))?;
    let mut message = Vec::new();
    (&mut stream).take(MAX_MESSAGE).read_to_end(&mut message)?;
    for path in message.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        deliver(PathBuf::from(std::ffi::OsString::from_vec(path.to_vec())));
    }
    stream.write_all(ACK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn socket_in_temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("rigscope-{name}-{}.sock", std::process::id()))
    }

    #[test]
    fn a_second_start_hands_its_files_to_the_window_listening() {
        let socket = socket_in_temp("handover");
        let _ = std::fs::remove_file(&socket);
        assert!(
            !hand_over(&socket, &[PathBuf::from("a.glb")]).unwrap(),
            "nobody listens yet"
        );
        let (sent, received) = mpsc::channel();
        let listener = listen(&socket, move |path| sent.send(path).unwrap()).unwrap();
        let odd = PathBuf::from("/tmp/with space/and\nnewline.glb");
        assert!(hand_over(&socket, &[PathBuf::from("/rigs/Fox.glb"), odd.clone()]).unwrap());
        let wait = Duration::from_secs(5);
        assert_eq!(received.recv_timeout(wait).unwrap(), PathBuf::from("/rigs/Fox.glb"));
        assert_eq!(received.recv_timeout(wait).unwrap(), odd);
        // A relative path arrives made absolute against the sender's folder.
        assert!(hand_over(&socket, &[PathBuf::from("relative.glb")]).unwrap());
        let got = received.recv_timeout(wait).unwrap();
        assert_eq!(got, std::env::current_dir().unwrap().join("relative.glb"));
        // A second listener on the same socket is refused while the first answers.
        let refused = listen(&socket, |_| {}).err().map(|e| e.kind());
        assert_eq!(refused, Some(io::ErrorKind::AddrInUse));
        drop(listener);
        assert!(!socket.exists(), "the socket goes with the window");
    }

    #[test]
    fn a_socket_left_by_a_window_that_is_gone_is_taken_over() {
        let socket = socket_in_temp("stale");
        let _ = std::fs::remove_file(&socket);
        // Bound and dropped without removing the file: what a killed window leaves.
        drop(UnixListener::bind(&socket).unwrap());
        assert!(socket.exists());
        assert!(!hand_over(&socket, &[PathBuf::from("/a.glb")]).unwrap());
        let (sent, received) = mpsc::channel();
        let _listener = listen(&socket, move |path| sent.send(path).unwrap()).unwrap();
        assert!(hand_over(&socket, &[PathBuf::from("/b.glb")]).unwrap());
        assert_eq!(
            received.recv_timeout(Duration::from_secs(5)).unwrap(),
            PathBuf::from("/b.glb")
        );
    }
}
