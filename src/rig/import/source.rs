//! Where the bytes come from: the file itself, its buffers (GLB chunk, data URIs, files next to
//! it) and the URI rule that keeps reads inside the model's folder.

use super::accessor::{BufferData, Buffers};
use super::err;
use crate::rig::RigError;
use base64::Engine;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

/// Largest file or buffer the importer reads; anything bigger is refused before allocating.
pub const MAX_BYTES: u64 = 1 << 30;

/// Reads a regular file of at most [`MAX_BYTES`].
pub fn read_file_bounded(path: &Path) -> Result<Vec<u8>, String> {
    let metadata = std::fs::metadata(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    if !metadata.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if metadata.len() > MAX_BYTES {
        return Err(format!(
            "{} is {} bytes, more than the {MAX_BYTES}-byte limit",
            path.display(),
            metadata.len()
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!(
            "{} grew past the {MAX_BYTES}-byte limit while being read",
            path.display()
        ));
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
                decode_data_uri(uri).map_err(|e| err(format!("buffer {index}: {e}")))?,
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
                let path = resolve_uri(uri, base_dir).map_err(|e| err(format!("buffer {index}: {e}")))?;
                if let Some(data) = files.get(&path) {
                    BufferData::Shared(data.clone())
                } else {
                    let data = Rc::new(read_file_bounded(&path).map_err(|e| {
                        err(format!(
                            "buffer {index}: the file '{uri}' it refers to is missing or unreadable: {e}"
                        ))
                    })?);
                    external += data.len() as u64;
                    if external > MAX_BYTES {
                        return Err(err(format!(
                            "buffer {index}: the external buffers total more than the {MAX_BYTES}-byte limit"
                        )));
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
            return Err(err(format!(
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

/// The bytes of a data URI (RFC 2397): base64, or percent-encoded when it does not say
/// `;base64`.
fn decode_data_uri(uri: &str) -> Result<Vec<u8>, String> {
    let rest = uri.strip_prefix("data:").unwrap_or(uri);
    let (header, payload) = rest
        .split_once(',')
        .ok_or_else(|| "data URI has no ',' before its data".to_string())?;
    if payload.len() as u64 > MAX_BYTES * 4 / 3 {
        return Err("data URI is larger than the size limit".into());
    }
    if !header.ends_with(";base64") {
        return Ok(percent_decode_bytes(payload));
    }
    base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(|e| format!("data URI is not valid base64: {e}"))
}

/// Bytes behind a URI: a base64 data URI, or a file inside `base_dir`.
pub fn read_uri(uri: &str, base_dir: Option<&Path>) -> Result<Vec<u8>, String> {
    if uri.starts_with("data:") {
        return decode_data_uri(uri);
    }
    read_file_bounded(&resolve_uri(uri, base_dir)?)
}

/// Applies the URI rule: relative paths that stay inside `base_dir`, nothing else. A path that
/// exists is also checked after following symbolic links.
fn resolve_uri(uri: &str, base_dir: Option<&Path>) -> Result<PathBuf, String> {
    let base = base_dir
        .ok_or_else(|| format!("'{uri}' refers to an external file, but the data was not opened from a folder"))?;
    if is_remote(uri) {
        return Err(format!(
            "'{uri}' is a remote URI; only files next to the model are read"
        ));
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
                return Err(format!(
                    "'{uri}' is an absolute path; only files inside the model's folder are read"
                ));
            }
        }
        if depth < 0 {
            return Err(format!(
                "'{uri}' points outside the model's folder; only files inside it are read"
            ));
        }
    }
    let path = base.join(relative);
    if let (Ok(real), Ok(real_base)) = (path.canonicalize(), base.canonicalize())
        && !real.starts_with(&real_base)
    {
        return Err(format!(
            "'{uri}' leads outside the model's folder through a symbolic link (to {}); only files inside it are read",
            real.display()
        ));
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
        assert!(decode_data_uri("data:nothing").unwrap_err().contains("no ','"));
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
        for bad in ["../a.bin", "tex/../../a.bin", "/etc/passwd", "http://example.com/a.bin"] {
            let e = resolve_uri(bad, Some(base)).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
        assert!(
            resolve_uri("a.bin", None)
                .unwrap_err()
                .contains("not opened from a folder")
        );
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
        assert!(e.contains("symbolic link") && e.contains("escape.bin"), "{e}");
        assert_eq!(
            resolve_uri("inside.bin", Some(&model)).unwrap(),
            model.join("inside.bin")
        );
    }
}
