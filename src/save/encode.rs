//! Repaired joints and weights in the stored form of the accessors they replace: the component
//! type the file used, normalized integer weights quantized so each vertex's sum is exact, and
//! the per-component bounds `accessor.min`/`max` must state.

use super::AttributeProblem;
use super::quantize::{quantize_weights_u8, quantize_weights_u16};

pub(super) const UNSIGNED_BYTE: u64 = 5121;
pub(super) const UNSIGNED_SHORT: u64 = 5123;
pub(super) const FLOAT: u64 = 5126;

/// One attribute's new content, in the accessor's stored form.
pub(super) struct Encoded {
    pub(super) bytes: Vec<u8>,
    pub(super) min: [f64; 4],
    pub(super) max: [f64; 4],
}

/// An accessor's component type and normalization, checked to be a VEC4 of `count` elements.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Layout {
    pub(super) component_type: u64,
    pub(super) normalized: bool,
}

/// Joint indices in the accessor's component type, with their per-component bounds.
pub(super) fn encode_joints(
    values: impl Iterator<Item = [u16; 4]>,
    layout: Layout,
    accessor: usize,
) -> Result<Encoded, AttributeProblem> {
    let mut out = Encoded {
        bytes: Vec::new(),
        min: [f64::INFINITY; 4],
        max: [f64::NEG_INFINITY; 4],
    };
    for joints in values {
        for (c, &joint) in joints.iter().enumerate() {
            out.min[c] = out.min[c].min(f64::from(joint));
            out.max[c] = out.max[c].max(f64::from(joint));
            if layout.component_type == UNSIGNED_BYTE {
                let byte = u8::try_from(joint).map_err(|_| AttributeProblem::JointTooLarge { accessor, joint })?;
                out.bytes.push(byte);
            } else {
                out.bytes.extend_from_slice(&joint.to_le_bytes());
            }
        }
    }
    Ok(out)
}

/// The weights of every set, each in its accessor's component type. Normalized integers are
/// quantized per vertex across all sets when they share one type (so the vertex's stored sum is
/// exact), else per set.
pub(super) fn encode_weights(weights: &[[f32; 4]], sets: usize, layouts: &[(usize, Layout)]) -> Vec<Encoded> {
    let mut out: Vec<Encoded> = layouts
        .iter()
        .map(|_| Encoded {
            bytes: Vec::with_capacity(weights.len() / sets.max(1) * 16),
            min: [f64::INFINITY; 4],
            max: [f64::NEG_INFINITY; 4],
        })
        .collect();
    let shared_type = layouts.windows(2).all(|w| w[0].1 == w[1].1);
    let groups: Vec<Vec<usize>> = if shared_type {
        vec![(0..sets).collect()]
    } else {
        (0..sets).map(|s| vec![s]).collect()
    };
    let mut vertex = [0f32; 8];
    let mut stored = [0u32; 8];
    for v_weights in weights.chunks(sets) {
        for group in &groups {
            let n = group.len() * 4;
            for (k, &slot) in group.iter().enumerate() {
                vertex[k * 4..k * 4 + 4].copy_from_slice(&v_weights[slot]);
            }
            let layout = layouts[group[0]].1;
            match layout.component_type {
                UNSIGNED_BYTE => {
                    let mut q = [0u8; 8];
                    quantize_weights_u8(&vertex[..n], &mut q[..n]);
                    for k in 0..n {
                        stored[k] = q[k].into();
                    }
                }
                UNSIGNED_SHORT => {
                    let mut q = [0u16; 8];
                    quantize_weights_u16(&vertex[..n], &mut q[..n]);
                    for k in 0..n {
                        stored[k] = q[k].into();
                    }
                }
                _ => {}
            }
            for (k, &slot) in group.iter().enumerate() {
                let target = &mut out[slot];
                for c in 0..4 {
                    let value = match layout.component_type {
                        UNSIGNED_BYTE => {
                            target.bytes.push(stored[k * 4 + c] as u8);
                            f64::from(stored[k * 4 + c])
                        }
                        UNSIGNED_SHORT => {
                            target
                                .bytes
                                .extend_from_slice(&(stored[k * 4 + c] as u16).to_le_bytes());
                            f64::from(stored[k * 4 + c])
                        }
                        _ => {
                            let w = vertex[k * 4 + c];
                            target.bytes.extend_from_slice(&w.to_le_bytes());
                            f64::from(w)
                        }
                    };
                    target.min[c] = target.min[c].min(value);
                    target.max[c] = target.max[c].max(value);
                }
            }
        }
    }
    out
}
