//! Where the bytes come from: the file itself, its buffers (GLB chunk, data URIs, files next to
//! it) and the URI rule that keeps reads inside the model's folder.

use super::accessor::{BufferData, Buffers};
use crate::rig::RigError;
use base64::Engine;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

/// Largest file or buffer the importer reads; anything bigger is refused before allocating.
pub const MAX_BYTES: u64 = 1 << 30;

/// Why a file (the model, or a buffer next to it) could not be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FileError {
    #[error("cannot open {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("{} is not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error("{} is {size} bytes, more than the {MAX_BYTES}-byte limit", path.display())]
    TooLarge { path: PathBuf, size: u64 },
    #[error("{} grew past the {MAX_BYTES}-byte limit while being read", path.display())]
    GrewTooLarge { path: PathBuf },
}

/// Reads a regular file of at most `MAX_BYTES`.
pub fn read_file_bounded(path: &Path) -> Result<Vec<u8>, FileError> {
    let open = |e| FileError::Open {
        path: path.to_owned(),
        source: Arc::new(e),
    };
    let metadata = std::fs::metadata(path).map_err(open)?;
    if !metadata.is_file() {
        return Err(FileError::NotAFile { path: path.to_owned() });
    }
    if metadata.len() > MAX_BYTES {
        return Err(FileError::TooLarge {
            path: path.to_owned(),
            size: metadata.len(),
        });
    }
    let file = std::fs::File::open(path).map_err(open)?;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::Read {
            path: path.to_owned(),
            source: Arc::new(e),
        })?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(FileError::GrewTooLarge { path: path.to_owned() });
    }
    Ok(bytes)
}

/// The files behind the document's relative buffer and image URIs (data URIs and URIs the
/// folder rule refuses are left out).
pub fn external_sources(document: &gltf::Document, base_dir: Option<&Path>) -> Vec<PathBuf> {
    let buffers = document.buffers().filter_map(|b| match b.source() {
        gltf::buffer::Source::Uri(uri) => Some(uri),
        gltf::buffer::Source::Bin => None,
    });
    let images = document.images().filter_map(|i| match i.source() {
        gltf::image::Source::Uri { uri, .. } => Some(uri),
        gltf::image::Source::View { .. } => None,
    });
    let mut sources: Vec<PathBuf> = buffers
        .chain(images)
        .filter(|uri| !uri.starts_with("data:"))
        .filter_map(|uri| resolve_uri(uri, base_dir).ok())
        .collect();
    sources.sort();
    sources.dedup();
    sources
}

/// Every buffer's bytes, and how many bytes were read from external files. The GLB binary chunk
/// is borrowed, not copied; an external file named by several buffers is read once. A buffer
/// without data (a placeholder, an EXT_meshopt_compression fallback) or behind a remote URI is
/// kept as absent: reading it is an error, having it is not.
pub fn load_buffers<'a>(
    document: &gltf::Document,
    blob: Option<&'a [u8]>,
    base_dir: Option<&Path>,
    warnings: &mut Vec<String>,
) -> Result<(Buffers<'a>, u64), RigError> {
    let mut files: HashMap<PathBuf, Rc<Vec<u8>>> = HashMap::new();
    let mut external = 0u64;
    let mut buffers = Vec::new();
    for buffer in document.buffers() {
        let index = buffer.index();
        let fallback = buffer
            .extension_value("EXT_meshopt_compression")
            .and_then(|e| e.get("fallback"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        let data = match buffer.source() {
            _ if fallback => BufferData::Absent("is an EXT_meshopt_compression fallback, which is never read".into()),
            // Only the first buffer of a GLB may use its binary chunk; any other buffer without
            // a URI is a placeholder.
            gltf::buffer::Source::Bin => match blob {
                Some(blob) if index == 0 => BufferData::Borrowed(blob),
                None if index == 0 => BufferData::Absent("refers to the GLB binary chunk, but there is none".into()),
                _ => BufferData::Absent("has no data (no URI, and it is not the GLB binary chunk)".into()),
            },
            gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => BufferData::Shared(Rc::new(
                decode_data_uri(uri).map_err(|source| RigError::BufferUri { index, source })?,
            )),
            gltf::buffer::Source::Uri(uri) if is_remote(uri) => {
                warnings.push(format!(
                    "buffer {index} is at the remote address '{uri}', which is not read; anything that needs it fails"
                ));
                BufferData::Absent(format!(
                    "is at '{uri}', which is a remote URI; only files next to the model are read"
                ))
            }
            gltf::buffer::Source::Uri(uri) => {
                let path = resolve_uri(uri, base_dir).map_err(|source| RigError::BufferUri { index, source })?;
                if let Some(data) = files.get(&path) {
                    BufferData::Shared(data.clone())
                } else {
                    let data = Rc::new(read_file_bounded(&path).map_err(|source| RigError::BufferFile {
                        index,
                        uri: uri.to_owned(),
                        source,
                    })?);
                    external += data.len() as u64;
                    if external > MAX_BYTES {
                        return Err(RigError::ExternalTooLarge {
                            index,
                            limit: MAX_BYTES,
                        });
                    }
                    files.insert(path, data.clone());
                    BufferData::Shared(data)
                }
            }
        };
        let real = match &data {
            BufferData::Borrowed(b) => Some(b.len()),
            BufferData::Shared(b) => Some(b.len()),
            BufferData::Absent(_) => None,
        };
        if let Some(real) = real
            && real < buffer.length()
        {
            return Err(RigError::Data(format!(
                "buffer {index} declares {} bytes but holds only {real}",
                buffer.length()
            )));
        }
        buffers.push((data, buffer.length()));
    }
    Ok((Buffers::new(buffers), external))
}

fn is_remote(uri: &str) -> bool {
    uri.contains("://")
}

/// Why a buffer's or an image's URI gives no bytes.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UriError {
    #[error("data URI has no ',' before its data")]
    DataWithoutComma,
    #[error("data URI is larger than the size limit")]
    DataTooLarge,
    #[error("data URI is not valid base64: {0}")]
    Base64(#[source] base64::DecodeError),
    #[error("'{uri}' refers to an external file, but the data was not opened from a folder")]
    NoFolder { uri: String },
    #[error("'{uri}' is a remote URI; only files next to the model are read")]
    Remote { uri: String },
    #[error("'{uri}' is an absolute path; only files inside the model's folder are read")]
    Absolute { uri: String },
    #[error("'{uri}' points outside the model's folder; only files inside it are read")]
    Outside { uri: String },
    #[error(
        "'{uri}' leads outside the model's folder through a symbolic link (to {}); only files inside it are read",
        target.display()
    )]
    LinkOutside { uri: String, target: PathBuf },
    #[error(transparent)]
    File(#[from] FileError),
}

/// The bytes of a data URI (RFC 2397): base64, or percent-encoded when it does not say
/// `;base64`.
fn decode_data_uri(uri: &str) -> Result<Vec<u8>, UriError> {
    let rest = uri.strip_prefix("data:").unwrap_or(uri);
    let (header, payload) = rest.split_once(',').ok_or(UriError::DataWithoutComma)?;
    if payload.len() as u64 > MAX_BYTES * 4 / 3 {
        return Err(UriError::DataTooLarge);
    }
    if !header.ends_with(";base64") {
        return Ok(percent_decode_bytes(payload));
    }
    base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(UriError::Base64)
}

/// Bytes behind a URI: a base64 data URI, or a file inside `base_dir`.
pub fn read_uri(uri: &str, base_dir: Option<&Path>) -> Result<Vec<u8>, UriError> {
    if uri.starts_with("data:") {
        return decode_data_uri(uri);
    }
    Ok(read_file_bounded(&resolve_uri(uri, base_dir)?)?)
}

/// Applies the URI rule: relative paths that stay inside `base_dir`, nothing else. A path that
/// exists is also checked after following symbolic links.
fn resolve_uri(uri: &str, base_dir: Option<&Path>) -> Result<PathBuf, UriError> {
    let uri_owned = || uri.to_owned();
    let base = base_dir.ok_or_else(|| UriError::NoFolder { uri: uri_owned() })?;
    if is_remote(uri) {
        return Err(UriError::Remote { uri: uri_owned() });
    }
    let decoded = percent_decode(uri);
    let relative = Path::new(&decoded);
    let mut depth = 0i32;
    for component in relative.components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => depth -= 1,
            Component::RootDir | Component::Prefix(_) => {
                return Err(UriError::Absolute { uri: uri_owned() });
            }
        }
        if depth < 0 {
            return Err(UriError::Outside { uri: uri_owned() });
        }
    }
    let path = base.join(relative);
    if let (Ok(real), Ok(real_base)) = (path.canonicalize(), base.canonicalize())
        && !real.starts_with(&real_base)
    {
        return Err(UriError::LinkOutside {
            uri: uri_owned(),
            target: real,
        });
    }
    Ok(path)
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// `%XX` escapes decoded; a `%` not followed by two hex digits stays as it is.
fn percent_decode_bytes(s: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_uris_decode_as_base64_or_percent_encoded() {
        assert_eq!(
            decode_data_uri("data:application/octet-stream;base64,AAEC").unwrap(),
            [0, 1, 2]
        );
        assert_eq!(
            decode_data_uri("data:application/gltf-buffer,0%FF").unwrap(),
            [b'0', 0xff]
        );
        assert!(matches!(
            decode_data_uri("data:nothing"),
            Err(UriError::DataWithoutComma)
        ));
    }

    #[test]
    fn uris_outside_the_model_folder_are_refused() {
        let base = Path::new("/models/fox");
        assert_eq!(
            resolve_uri("tex/a%20b.png", Some(base)).unwrap(),
            base.join("tex/a b.png")
        );
        assert_eq!(
            resolve_uri("tex/../a.bin", Some(base)).unwrap(),
            base.join("tex/../a.bin")
        );
        for bad in ["../a.bin", "tex/../../a.bin"] {
            let e = resolve_uri(bad, Some(base)).unwrap_err();
            assert!(matches!(&e, UriError::Outside { uri } if uri == bad), "{e:?}");
        }
        let e = resolve_uri("/etc/passwd", Some(base)).unwrap_err();
        assert!(
            matches!(&e, UriError::Absolute { uri } if uri == "/etc/passwd"),
            "{e:?}"
        );
        let e = resolve_uri("http://example.com/a.bin", Some(base)).unwrap_err();
        assert!(matches!(e, UriError::Remote { .. }), "{e:?}");
        assert!(matches!(resolve_uri("a.bin", None), Err(UriError::NoFolder { .. })));
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_out_of_the_model_folder_is_refused() {
        let temporary_dir = tempfile::tempdir().unwrap();
        let dir = temporary_dir.path();
        let model = dir.join("model");
        std::fs::create_dir_all(&model).unwrap();
        std::fs::write(dir.join("secret.bin"), [1, 2, 3, 4]).unwrap();
        std::fs::write(model.join("inside.bin"), [1, 2, 3, 4]).unwrap();
        let link = model.join("escape.bin");
        std::os::unix::fs::symlink(dir.join("secret.bin"), &link).unwrap();
        let e = resolve_uri("escape.bin", Some(&model)).unwrap_err();
        assert!(
            matches!(&e, UriError::LinkOutside { uri, target } if uri == "escape.bin" && target.ends_with("secret.bin")),
            "{e:?}"
        );
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(
            resolve_uri("inside.bin", Some(&model)).unwrap(),
            model.join("inside.bin")
        );
    }
}
