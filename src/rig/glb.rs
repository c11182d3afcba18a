//! The GLB container: a 12-byte header, a JSON chunk and an optional BIN chunk.

/// What is wrong with a GLB container, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlbError {
    #[error("not a GLB file: it does not start with the magic 'glTF'")]
    NoMagic,
    #[error("GLB file is {size} bytes, shorter than its 12-byte header")]
    ShortHeader { size: usize },
    #[error("GLB version {0} is not supported (only glTF 2.0)")]
    Version(u32),
    #[error(
        "GLB header declares a total length of {declared} bytes, but the file has {size} (a GLB needs at least 20)"
    )]
    TotalLength { declared: usize, size: usize },
    #[error("GLB {chunk} chunk header at byte {at} is cut off")]
    ChunkHeaderCut { chunk: &'static str, at: usize },
    #[error("GLB chunk at byte {at} has type {found:?}, expected the {chunk} chunk")]
    ChunkType {
        chunk: &'static str,
        at: usize,
        found: String,
    },
    #[error("GLB {chunk} chunk declares {declared} bytes, but only {remaining} remain in the file's declared length")]
    ChunkLength {
        chunk: &'static str,
        declared: u32,
        remaining: usize,
    },
    #[error("GLB file has no JSON chunk")]
    NoJson,
}

/// Splits a GLB file into its JSON chunk and BIN chunk, checking every length against the bytes
/// really present.
pub fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), GlbError> {
    let u32_at = |at: usize| -> Option<u32> {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    if bytes.get(0..4) != Some(b"glTF") {
        return Err(GlbError::NoMagic);
    }
    let (Some(version), Some(length)) = (u32_at(4), u32_at(8)) else {
        return Err(GlbError::ShortHeader { size: bytes.len() });
    };
    if version != 2 {
        return Err(GlbError::Version(version));
    }
    let length = length as usize;
    if length < 20 || length > bytes.len() {
        return Err(GlbError::TotalLength {
            declared: length,
            size: bytes.len(),
        });
    }
    let bytes = &bytes[..length];
    let mut at = 12;
    // A chunk of another type where the BIN chunk would be is an extension's; it is ignored.
    let mut chunk = |expected: &[u8; 4], name: &'static str, required: bool| -> Result<Option<&[u8]>, GlbError> {
        if at == length {
            return Ok(None);
        }
        let (Some(chunk_length), Some(kind)) = (u32_at(at), bytes.get(at + 4..at + 8)) else {
            return Err(GlbError::ChunkHeaderCut { chunk: name, at });
        };
        if kind != expected && !required {
            return Ok(None);
        }
        if kind != expected {
            return Err(GlbError::ChunkType {
                chunk: name,
                at,
                found: String::from_utf8_lossy(kind).into_owned(),
            });
        }
        let start = at + 8;
        let end = start
            .checked_add(chunk_length as usize)
            .filter(|&end| end <= length)
            .ok_or(GlbError::ChunkLength {
                chunk: name,
                declared: chunk_length,
                remaining: length - start,
            })?;
        at = end;
        Ok(Some(&bytes[start..end]))
    };
    let json = chunk(b"JSON", "JSON", true)?.ok_or(GlbError::NoJson)?;
    let bin = chunk(b"BIN\0", "BIN", false)?;
    Ok((json, bin))
}

/// Writes a GLB container around a JSON document and an optional binary chunk (both padded to
/// four bytes as the format requires). Saving repaired files writes through it; tests and the
/// fuzzer build files with it.
pub fn glb_container(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
    let json_padded = json.len().next_multiple_of(4);
    let bin_padded = bin.map_or(0, |b| 8 + b.len().next_multiple_of(4));
    let total = 12 + 8 + json_padded + bin_padded;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_padded as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(json);
    out.resize(20 + json_padded, b' ');
    if let Some(bin) = bin {
        out.extend_from_slice(&(bin.len().next_multiple_of(4) as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(bin);
        out.resize(total, 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_container_splits_back() {
        let glb = glb_container(br#"{"asset":{"version":"2.0"}}"#, Some(&[1, 2, 3]));
        let (json, bin) = split_glb(&glb).unwrap();
        assert!(json.starts_with(br#"{"asset""#) && json.len() % 4 == 0);
        assert_eq!(bin, Some(&[1u8, 2, 3, 0][..]));
    }

    #[test]
    fn lengths_beyond_the_data_are_named() {
        let mut glb = glb_container(b"{}", None);
        glb[8..12].copy_from_slice(&1000u32.to_le_bytes());
        let size = glb.len();
        assert_eq!(split_glb(&glb), Err(GlbError::TotalLength { declared: 1000, size }));
        let mut glb = glb_container(b"{}", None);
        glb[12..16].copy_from_slice(&28u32.to_le_bytes());
        assert_eq!(
            split_glb(&glb),
            Err(GlbError::ChunkLength {
                chunk: "JSON",
                declared: 28,
                remaining: 4
            })
        );
        let mut glb = glb_container(b"{}", None);
        glb[8..12].copy_from_slice(&5u32.to_le_bytes());
        assert_eq!(split_glb(&glb), Err(GlbError::TotalLength { declared: 5, size }));
        assert_eq!(split_glb(b"glTF"), Err(GlbError::ShortHeader { size: 4 }));
        // The wording a person reads.
        assert_eq!(
            GlbError::ShortHeader { size: 4 }.to_string(),
            "GLB file is 4 bytes, shorter than its 12-byte header"
        );
    }
}
