//! Where an edit's new bytes go: the GLB binary chunk (grown, taken from a data URI buffer, or
//! added as buffer 0) or a new `.bin` beside a `.gltf`, with the buffer views renumbered to
//! match.

use super::{Edited, MESHOPT, Placed, array_len, array_mut, as_index, malformed};
use crate::save::{OutputFormat, SaveError};
use serde_json::{Value, json};

impl Edited {
    /// Puts the new bytes into a buffer: the GLB binary chunk (grown, or added as buffer 0) or a
    /// new `.bin` named `bin_name` beside a `.gltf`; then keeps `extensionsUsed` and
    /// `extensionsRequired` true to what the document still uses.
    pub fn place_data(
        mut self,
        format: OutputFormat,
        blob: Option<&[u8]>,
        bin_name: &str,
    ) -> Result<Placed, SaveError> {
        let embedded = match (format, blob) {
            (OutputFormat::Glb, None) => self.data_uri_buffer_into_chunk()?,
            _ => None,
        };
        let blob = blob.or(embedded.as_deref());
        let buffers = array_len(&self.json, "buffers");
        // The GLB binary chunk is buffer 0 without a URI.
        let chunk_buffer = self
            .json
            .pointer("/buffers/0")
            .filter(|b| b.get("uri").is_none() && blob.is_some());
        let chunk_length = match chunk_buffer {
            Some(buffer) => {
                let declared = buffer.get("byteLength").and_then(as_index).unwrap_or(usize::MAX);
                let blob_len = blob.map_or(0, <[u8]>::len);
                if declared > blob_len {
                    return Err(malformed(
                        "buffer 0",
                        format!("its byteLength {declared} exceeds the {blob_len}-byte binary chunk"),
                    ));
                }
                Some(declared)
            }
            None => None,
        };
        let mut glb_bin = None;
        let mut external_bin = None;
        let (buffer, base) = match (chunk_length, blob) {
            (Some(length), Some(blob)) => {
                let base = if self.data.is_empty() {
                    length
                } else {
                    length.next_multiple_of(4)
                };
                let mut bytes = blob[..length].to_vec();
                bytes.resize(base, 0);
                bytes.extend_from_slice(&self.data);
                self.json["buffers"][0]["byteLength"] = bytes.len().into();
                match format {
                    OutputFormat::Glb => glb_bin = Some(bytes),
                    OutputFormat::Gltf => {
                        self.json["buffers"][0]["uri"] = bin_name.into();
                        external_bin = Some(bytes);
                    }
                }
                (0, base)
            }
            _ if self.data.is_empty() => (0, 0),
            _ => match format {
                OutputFormat::Glb => {
                    self.shift_buffer_indices()?;
                    array_mut(&mut self.json, "buffers")?.insert(0, json!({ "byteLength": self.data.len() }));
                    glb_bin = Some(std::mem::take(&mut self.data));
                    (0, 0)
                }
                OutputFormat::Gltf => {
                    array_mut(&mut self.json, "buffers")?
                        .push(json!({ "uri": bin_name, "byteLength": self.data.len() }));
                    external_bin = Some(std::mem::take(&mut self.data));
                    (buffers, 0)
                }
            },
        };
        for &view in &self.new_views {
            let view = &mut self.json["bufferViews"][view];
            view["buffer"] = buffer.into();
            let offset = view["byteOffset"].as_u64().unwrap_or(0) as usize;
            view["byteOffset"] = (offset + base).into();
        }
        self.keep_extension_lists_true();
        Ok(Placed {
            json: self.json,
            origins: self.origins,
            glb_bin,
            external_bin,
            notes: self.notes,
        })
    }

    /// A GLB written from a `.gltf` carries the first buffer given as a data URI in its binary
    /// chunk, as buffer 0: the validator warns of data URIs in a GLB (`DATA_URI_GLB`). Returns
    /// the buffer's bytes, or `None` when no buffer is a data URI.
    fn data_uri_buffer_into_chunk(&mut self) -> Result<Option<Vec<u8>>, SaveError> {
        let buffers = array_mut(&mut self.json, "buffers")?;
        let is_data = |b: &Value| {
            b.get("uri")
                .and_then(Value::as_str)
                .is_some_and(|u| u.starts_with("data:"))
        };
        let Some(k) = buffers.iter().position(is_data) else {
            return Ok(None);
        };
        let mut buffer = buffers.remove(k);
        let uri = buffer.as_object_mut().and_then(|b| b.remove("uri"));
        let bytes = crate::rig::read_uri(uri.as_ref().and_then(Value::as_str).unwrap_or(""), None)
            .map_err(|e| malformed(format!("buffer {k}"), e.to_string()))?;
        buffers.insert(0, buffer);
        self.renumber_buffers(|i| match i {
            i if i == k => 0,
            i if i < k => i + 1,
            i => i,
        })?;
        Ok(Some(bytes))
    }

    /// Makes room for a new buffer 0: every buffer index in buffer views moves up by one.
    fn shift_buffer_indices(&mut self) -> Result<(), SaveError> {
        self.renumber_buffers(|i| i + 1)
    }

    /// Gives every buffer view (and its meshopt extension) the buffer index `new_index` maps its
    /// own to.
    fn renumber_buffers(&mut self, new_index: impl Fn(usize) -> usize) -> Result<(), SaveError> {
        for (i, view) in array_mut(&mut self.json, "bufferViews")?.iter_mut().enumerate() {
            for pointer in ["/buffer", &format!("/extensions/{MESHOPT}/buffer")] {
                if let Some(slot) = view.pointer_mut(pointer) {
                    let index =
                        as_index(slot).ok_or_else(|| malformed(format!("bufferView {i}"), "bad buffer index"))?;
                    *slot = new_index(index).into();
                }
            }
        }
        Ok(())
    }
}
