//! EXT_meshopt_compression: buffer views stored compressed by meshoptimizer's codecs, decoded
//! once at load into [`Buffers::decoded_views`] so that accessors read them like any view.
//!
//! Decoding uses the `meshopt` crate (bindings to meshoptimizer itself, the library gltfpack
//! encodes with). Its C++ decoders check the stream against the output size, but they assert
//! on their own preconditions (strides, counts, filter layouts), so every claim of the
//! extension's JSON is checked here before they are called.

use super::accessor::{Budget, Buffers, slice_of};
use crate::rig::{Codec, RigError};
use serde::Deserialize;

/// The extension object of a compressed buffer view.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Compressed {
    buffer: usize,
    #[serde(default)]
    byte_offset: usize,
    byte_length: usize,
    byte_stride: usize,
    count: usize,
    mode: Mode,
    #[serde(default)]
    filter: Filter,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Mode {
    Attributes,
    Triangles,
    Indices,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Attributes => "ATTRIBUTES",
            Mode::Triangles => "TRIANGLES",
            Mode::Indices => "INDICES",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Filter {
    #[default]
    None,
    Octahedral,
    Quaternion,
    Exponential,
}

/// Decodes every compressed buffer view of the document, charging the output to `budget`.
pub fn decode_views(document: &gltf::Document, buffers: &mut Buffers, budget: &mut Budget) -> Result<(), RigError> {
    for view in document.views() {
        let Some(extension) = view.extension_value("EXT_meshopt_compression") else {
            continue;
        };
        let at = |e: String| RigError::Decoder {
            codec: Codec::Meshopt,
            message: format!("buffer view {} (EXT_meshopt_compression): {e}", view.index()),
        };
        let compressed: Compressed = serde_json::from_value(extension.clone())
            .map_err(|e| at(format!("the extension object is invalid: {e}")))?;
        let source = buffers.bytes(compressed.buffer).map_err(|e| at(e.to_string()))?;
        let encoded = slice_of(source, compressed.byte_offset, compressed.byte_length).ok_or_else(|| {
            at(format!(
                "bytes {}..{} of buffer {} do not exist (it has {})",
                compressed.byte_offset,
                compressed.byte_offset.saturating_add(compressed.byte_length),
                compressed.buffer,
                source.len()
            ))
        })?;
        let size = compressed.count.checked_mul(compressed.byte_stride).ok_or_else(|| {
            at(format!(
                "{} elements of {} bytes overflow",
                compressed.count, compressed.byte_stride
            ))
        })?;
        if size < view.length() {
            return Err(at(format!(
                "{} elements of {} bytes are fewer than the view's {} bytes",
                compressed.count,
                compressed.byte_stride,
                view.length()
            )));
        }
        budget.charge(
            size as u64,
            &format!("buffer view {} ({size} bytes decoded)", view.index()),
        )?;
        let decoded = decode(encoded, &compressed).map_err(|e| at(e.to_string()))?;
        buffers.decoded_views.insert(view.index(), decoded);
    }
    Ok(())
}

/// Why a compressed stream does not decode.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum DecodeError {
    #[error("ATTRIBUTES needs a byte stride that is a multiple of 4 up to 256, not {0}")]
    AttributeStride(usize),
    #[error("{mode} needs a byte stride of 2 or 4, not {stride}")]
    IndexStride { mode: &'static str, stride: usize },
    #[error("TRIANGLES needs a multiple of 3 indices, not {0}")]
    TriangleCount(usize),
    #[error("filter {filter:?} cannot apply to mode {mode} with a byte stride of {stride}")]
    Filter {
        filter: Filter,
        mode: &'static str,
        stride: usize,
    },
    #[error("{count} elements of {stride} bytes overflow the address space")]
    Overflow { count: usize, stride: usize },
    #[error(
        "the {encoded} compressed bytes do not decode to {count} elements of {stride} bytes (meshoptimizer error {status})"
    )]
    Stream {
        encoded: usize,
        count: usize,
        stride: usize,
        status: i32,
    },
}

/// Decodes one stream into `count × byteStride` bytes, after checking what the codecs assume.
fn decode(encoded: &[u8], c: &Compressed) -> Result<Vec<u8>, DecodeError> {
    let (count, stride) = (c.count, c.byte_stride);
    match c.mode {
        Mode::Attributes if stride == 0 || stride > 256 || !stride.is_multiple_of(4) => {
            return Err(DecodeError::AttributeStride(stride));
        }
        Mode::Triangles | Mode::Indices if stride != 2 && stride != 4 => {
            return Err(DecodeError::IndexStride {
                mode: c.mode.name(),
                stride,
            });
        }
        Mode::Triangles if !count.is_multiple_of(3) => return Err(DecodeError::TriangleCount(count)),
        _ => {}
    }
    match (c.mode, c.filter) {
        (_, Filter::None) => {}
        (Mode::Attributes, Filter::Octahedral) if stride == 4 || stride == 8 => {}
        (Mode::Attributes, Filter::Quaternion) if stride == 8 => {}
        (Mode::Attributes, Filter::Exponential) => {}
        (mode, filter) => {
            return Err(DecodeError::Filter {
                filter,
                mode: mode.name(),
                stride,
            });
        }
    }
    // The decoders write `count × stride` bytes: that product must be the buffer's size.
    let Some(size) = count.checked_mul(stride) else {
        return Err(DecodeError::Overflow { count, stride });
    };
    let mut out = vec![0u8; size];
    if count == 0 {
        return Ok(out);
    }
    // SAFETY: `out` holds exactly `count × stride` bytes (the product checked above), the size
    // every decoder below writes;
    // the stride and count preconditions the decoders assert on were checked above; `encoded`
    // is a live slice whose length is passed with it.
    let status = unsafe {
        let (dst, src, len) = (out.as_mut_ptr().cast(), encoded.as_ptr(), encoded.len());
        match c.mode {
            Mode::Attributes => meshopt::ffi::meshopt_decodeVertexBuffer(dst, count, stride, src, len),
            Mode::Triangles => meshopt::ffi::meshopt_decodeIndexBuffer(dst, count, stride, src, len),
            Mode::Indices => meshopt::ffi::meshopt_decodeIndexSequence(dst, count, stride, src, len),
        }
    };
    if status != 0 {
        return Err(DecodeError::Stream {
            encoded: encoded.len(),
            count,
            stride,
            status,
        });
    }
    // SAFETY: as above; each filter rewrites `count` elements of `stride` bytes in place, with
    // the stride it requires.
    unsafe {
        let data = out.as_mut_ptr().cast();
        match c.filter {
            Filter::None => {}
            Filter::Octahedral => meshopt::ffi::meshopt_decodeFilterOct(data, count, stride),
            Filter::Quaternion => meshopt::ffi::meshopt_decodeFilterQuat(data, count, stride),
            Filter::Exponential => meshopt::ffi::meshopt_decodeFilterExp(data, count, stride),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compressed(mode: Mode, filter: Filter, count: usize, byte_stride: usize) -> Compressed {
        Compressed {
            buffer: 0,
            byte_offset: 0,
            byte_length: 0,
            byte_stride,
            count,
            mode,
            filter,
        }
    }

    #[test]
    fn encoded_attributes_round_trip_and_a_truncated_stream_is_an_error() {
        let vertices: Vec<[u16; 4]> = (0..100u16).map(|i| [i, i * 3, 1000 - i, 7]).collect();
        let encoded = meshopt::encoding::encode_vertex_buffer(&vertices).unwrap();
        let c = compressed(Mode::Attributes, Filter::None, 100, 8);
        let decoded = decode(&encoded, &c).unwrap();
        assert_eq!(decoded, bytemuck::cast_slice::<[u16; 4], u8>(&vertices));
        for cut in [0, 1, encoded.len() / 2, encoded.len() - 1] {
            let e = decode(&encoded[..cut], &c).unwrap_err().to_string();
            assert!(e.contains("do not decode to 100 elements of 8 bytes"), "{e}");
        }
    }

    #[test]
    fn encoded_triangles_round_trip_with_their_winding() {
        // The codec may start a triangle at another corner; the winding stays.
        let canonical = |t: &[u32]| {
            let start = (0..3).min_by_key(|&k| t[k]).unwrap();
            [t[start], t[(start + 1) % 3], t[(start + 2) % 3]]
        };
        let indices: Vec<u32> = vec![0, 1, 2, 2, 1, 3, 3, 1, 4, 4, 5, 3];
        let encoded = meshopt::encoding::encode_index_buffer(&indices, 6).unwrap();
        let decoded = decode(&encoded, &compressed(Mode::Triangles, Filter::None, 12, 4)).unwrap();
        let decoded: &[u32] = bytemuck::cast_slice(&decoded);
        let triangles = |i: &[u32]| i.chunks(3).map(canonical).collect::<Vec<_>>();
        assert_eq!(triangles(decoded), triangles(&indices));
    }

    #[test]
    fn the_exponential_filter_gives_mantissa_times_two_to_the_exponent() {
        // 2^E × M with E in the top byte and M a signed 24-bit integer, worked out by hand:
        // (E = -2, M = 6) → 1.5; (E = 3, M = -5) → -40; (E = 0, M = 0) → 0.
        let encode = |e: i8, m: i32| ((e as u8 as u32) << 24) | (m as u32 & 0x00ff_ffff);
        let raw: Vec<[u32; 3]> = vec![[encode(-2, 6), encode(3, -5), encode(0, 0)]];
        let encoded = meshopt::encoding::encode_vertex_buffer(&raw).unwrap();
        let decoded = decode(&encoded, &compressed(Mode::Attributes, Filter::Exponential, 1, 12)).unwrap();
        let floats: &[f32] = bytemuck::cast_slice(&decoded);
        assert_eq!(floats, &[1.5, -40.0, 0.0]);
    }

    #[test]
    fn layouts_the_codecs_cannot_take_are_refused_before_decoding() {
        for (c, message) in [
            (
                compressed(Mode::Attributes, Filter::None, 4, 6),
                "multiple of 4 up to 256, not 6",
            ),
            (compressed(Mode::Attributes, Filter::None, 4, 260), "not 260"),
            (
                compressed(Mode::Triangles, Filter::None, 4, 4),
                "multiple of 3 indices, not 4",
            ),
            (
                compressed(Mode::Indices, Filter::None, 4, 8),
                "INDICES needs a byte stride of 2 or 4, not 8",
            ),
            (
                compressed(Mode::Attributes, Filter::Quaternion, 4, 4),
                "filter Quaternion",
            ),
            (
                compressed(Mode::Attributes, Filter::Octahedral, 4, 12),
                "filter Octahedral",
            ),
            (
                compressed(Mode::Triangles, Filter::Exponential, 3, 4),
                "filter Exponential",
            ),
        ] {
            let e = decode(&[0xa0; 64], &c).unwrap_err().to_string();
            assert!(e.contains(message), "{e} lacks {message}");
        }
    }
}
