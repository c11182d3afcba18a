//! GPU pass timing with timestamp queries, read back without stalling the frame.
//!
//! A ring of slots: each timed frame takes a free slot, writes timestamps at the beginning and
//! end of the scene pass into the slot's two queries, resolves them and copies them into the
//! slot's readback buffer, and maps that buffer once the frame is submitted. A later frame
//! (after `device.poll`) finds the mapping done, reads the two ticks and frees the slot. When
//! every slot is still waiting for the GPU the frame simply goes untimed.

use crate::render::Gpu;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Frames that can be in flight with timestamps at once.
const SLOTS: u32 = 4;

const FREE: u8 = 0;
/// Timestamps recorded; the readback is not mapped yet.
const RECORDED: u8 = 1;
/// `map_async` called; waiting for the GPU.
const MAPPING: u8 = 2;
const MAPPED: u8 = 3;
const FAILED: u8 = 4;

struct Slot {
    readback: wgpu::Buffer,
    state: Arc<AtomicU8>,
    /// Order of the frame that used it, so results come back in order.
    frame: u64,
    /// What the caller said the pass drew.
    tag: u64,
}

/// Times one render pass per frame on the GPU.
pub struct GpuTimer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    slots: Vec<Slot>,
    /// Nanoseconds per timestamp tick.
    period: f64,
    frame: u64,
    /// The slot taken for the frame being recorded.
    current: Option<usize>,
    /// Frame number of the newest result handed out.
    newest: u64,
}

impl GpuTimer {
    /// A timer, or `None` when the device was not opened with `TIMESTAMP_QUERY` (the adapter
    /// does not support it).
    pub fn new(gpu: &Gpu) -> Option<GpuTimer> {
        if !gpu.device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let queries = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: SLOTS * 2,
        });
        // Each slot resolves into its own aligned stretch of the buffer.
        let size = u64::from(SLOTS) * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;
        let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamp resolve"),
            size,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let slots = (0..SLOTS)
            .map(|_| Slot {
                readback: gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("timestamp readback"),
                    size: 2 * wgpu::QUERY_SIZE as u64,
                    usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                    mapped_at_creation: false,
                }),
                state: Arc::new(AtomicU8::new(FREE)),
                frame: 0,
                tag: 0,
            })
            .collect();
        Some(GpuTimer {
            queries,
            resolve,
            slots,
            period: f64::from(gpu.queue.get_timestamp_period()),
            frame: 0,
            current: None,
            newest: 0,
        })
    }

    /// Timestamp writes for this frame's timed pass, or `None` when every slot is still busy
    /// (this frame goes untimed). Call once per frame, before encoding the pass.
    pub fn pass_writes(&mut self) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
        self.frame += 1;
        self.current = self.slots.iter().position(|s| s.state.load(Ordering::Acquire) == FREE);
        let slot = self.current? as u32;
        Some(wgpu::RenderPassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(slot * 2),
            end_of_pass_write_index: Some(slot * 2 + 1),
        })
    }

    /// Resolves this frame's timestamps into its readback buffer, with `tag` (what the pass
    /// drew) to be handed back with its time. Call after the timed pass ended, in the same
    /// encoder.
    pub fn resolve(&mut self, encoder: &mut wgpu::CommandEncoder, tag: u64) {
        let Some(k) = self.current else { return };
        let first = k as u32 * 2;
        let offset = k as u64 * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;
        encoder.resolve_query_set(&self.queries, first..first + 2, &self.resolve, offset);
        let slot = &mut self.slots[k];
        encoder.copy_buffer_to_buffer(&self.resolve, offset, &slot.readback, 0, 2 * wgpu::QUERY_SIZE as u64);
        slot.frame = self.frame;
        slot.tag = tag;
        slot.state.store(RECORDED, Ordering::Release);
    }

    /// Starts reading this frame's timestamps back. Call after submitting the encoder.
    pub fn submitted(&mut self) {
        let Some(k) = self.current.take() else { return };
        let slot = &self.slots[k];
        if slot.state.load(Ordering::Acquire) != RECORDED {
            return;
        }
        slot.state.store(MAPPING, Ordering::Release);
        let state = slot.state.clone();
        slot.readback.map_async(wgpu::MapMode::Read, .., move |result| {
            state.store(if result.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
        });
    }

    /// The newest finished pass time in seconds, if one finished since the last call. Polls the
    /// device without waiting (mappings complete during a poll).
    pub fn collect(&mut self, device: &wgpu::Device) -> Option<f64> {
        self.collect_tagged(device).map(|(seconds, _)| seconds)
    }

    /// [`GpuTimer::collect`] with the pass's tag.
    pub fn collect_tagged(&mut self, device: &wgpu::Device) -> Option<(f64, u64)> {
        let _ = device.poll(wgpu::PollType::Poll);
        let mut newest: Option<(u64, f64, u64)> = None;
        for slot in &self.slots {
            match slot.state.load(Ordering::Acquire) {
                MAPPED => {
                    let ticks = slot.readback.get_mapped_range(..).ok().map(|bytes| {
                        let begin = u64::from_le_bytes(bytes[0..8].try_into().unwrap_or_default());
                        let end = u64::from_le_bytes(bytes[8..16].try_into().unwrap_or_default());
                        end.saturating_sub(begin)
                    });
                    slot.readback.unmap();
                    slot.state.store(FREE, Ordering::Release);
                    if let Some(ticks) = ticks
                        && slot.frame > self.newest
                        && newest.is_none_or(|(f, _, _)| slot.frame > f)
                    {
                        newest = Some((slot.frame, ticks as f64 * self.period * 1e-9, slot.tag));
                    }
                }
                FAILED => slot.state.store(FREE, Ordering::Release),
                _ => {}
            }
        }
        let (frame, seconds, tag) = newest?;
        self.newest = frame;
        Some((seconds, tag))
    }
}
