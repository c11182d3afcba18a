//! FBX blend channels → morph targets, in-between shapes included.
//!
//! An FBX blend channel holds one shape or several, each reached at its own full weight (Maya's
//! in-betweens: a shape at 50 % and the final one at 100 %). Between neighbouring shapes the
//! channel blends linearly from one to the next, as ufbx evaluates it
//! (`ufbxi_update_blend_channel`: the two shapes around the weight share it, `1 − t` and `t`;
//! past the last shape, and below the first, the nearest segment goes on). glTF has no
//! in-betweens, so a channel of k shapes becomes k morph targets whose weights are the channel's
//! weight spread over them by [`spread_weight`]: hat functions, piecewise linear in the
//! channel's weight.

use super::vec3;
use crate::rig::RigError;
use crate::rig::import::accessor::Budget;
use glam::Vec3;

/// Bytes charged per control point and blend shape while reading the shapes.
const SHAPE_POINT_BYTES: u64 = 12;

/// One shape of a blend channel: the offset of every control point at its full weight.
pub(super) struct Shape {
    pub offsets: Vec<Vec3>,
}

/// One blend channel: its shapes, in order of their full weights.
pub(super) struct Channel {
    /// The channel's element id (animated weights name it).
    pub id: u32,
    pub name: String,
    /// Its weight when no clip drives it, 0..1.
    pub weight: f32,
    /// Each shape's full weight, 0..1: finite, positive and increasing.
    pub full_weights: Vec<f32>,
    pub shapes: Vec<Shape>,
}

impl Channel {
    /// The morph target names of the channel's shapes: the channel's for its last shape (the one
    /// a file without in-betweens has), the channel's with the full weight in percent for the
    /// in-betweens before it.
    pub fn target_names(&self) -> impl Iterator<Item = String> + '_ {
        let last = self.shapes.len().saturating_sub(1);
        self.full_weights.iter().enumerate().map(move |(i, &full)| {
            if i == last {
                self.name.clone()
            } else {
                format!("{} ({}%)", self.name, full * 100.0)
            }
        })
    }
}

fn data(message: String) -> RigError {
    RigError::Data(message)
}

/// Every blend channel of the mesh with every shape it holds (channels without any are left
/// out).
pub(super) fn blend_channels(mesh: &ufbx::Mesh, points: usize, budget: &mut Budget) -> Result<Vec<Channel>, RigError> {
    let mut channels = Vec::new();
    for deformer in &mesh.blend_deformers {
        for channel in &deformer.channels {
            let name = channel.element.name.to_string();
            if channel.keyframes.is_empty() {
                continue;
            }
            let full_weights: Vec<f32> = channel.keyframes.iter().map(|k| k.target_weight as f32).collect();
            let increasing = full_weights.windows(2).all(|w| w[0] < w[1]);
            if !increasing || !full_weights.iter().all(|w| w.is_finite() && *w > 0.0) {
                return Err(data(format!(
                    "FBX blend channel '{name}' reaches its shapes at full weights {full_weights:?}, which are not positive, finite and increasing"
                )));
            }
            let mut shapes = Vec::with_capacity(channel.keyframes.len());
            for keyframe in &channel.keyframes {
                // Every shape costs a whole mesh of offsets, however few points it moves.
                budget.charge(
                    (points as u64).saturating_mul(SHAPE_POINT_BYTES),
                    &format!("blend shape '{name}'"),
                )?;
                shapes.push(Shape {
                    offsets: shape_offsets(&keyframe.shape, points)?,
                });
            }
            let weight = channel.weight as f32;
            channels.push(Channel {
                id: channel.element.element_id,
                name,
                weight: if weight.is_finite() { weight } else { 0.0 },
                full_weights,
                shapes,
            });
        }
    }
    Ok(channels)
}

/// The offset of each of `points` control points in `shape` (zero where the shape does not move
/// it), each scaled by its own weight where the shape gives one (as ufbx applies them).
fn shape_offsets(shape: &ufbx::BlendShape, points: usize) -> Result<Vec<Vec3>, RigError> {
    let mut offsets = vec![Vec3::ZERO; points];
    let count = shape.num_offsets;
    if shape.offset_vertices.len() < count || shape.position_offsets.len() < count {
        return Err(data(format!(
            "FBX blend shape '{}' has fewer offsets than it claims",
            &*shape.element.name
        )));
    }
    for (i, (&point, &offset)) in shape
        .offset_vertices
        .iter()
        .zip(shape.position_offsets.iter())
        .take(count)
        .enumerate()
    {
        let slot = offsets.get_mut(point as usize).ok_or_else(|| {
            data(format!(
                "FBX blend shape '{}' moves control point {point}, which does not exist",
                &*shape.element.name
            ))
        })?;
        let weight = shape.offset_weights.get(i).map_or(1.0, |&w| w as f32);
        *slot = vec3(offset) * if weight.is_finite() { weight } else { 0.0 };
    }
    Ok(offsets)
}

/// Writes into `out` (one per shape) the weights of a channel's shapes reached at
/// `full_weights` (positive, increasing) when the channel's weight is `weight`: the two shapes
/// around it share it linearly, the segment from zero to the first shape and the one between
/// the last two go on below and above.
pub(super) fn spread_weight(full_weights: &[f32], weight: f32, out: &mut [f32]) {
    out.fill(0.0);
    let k = full_weights.len().min(out.len());
    if k == 0 {
        return;
    }
    // The segment holding `weight` ends at the first shape reaching it (the last past them all).
    let upper = full_weights[..k].partition_point(|&f| f < weight).min(k - 1);
    let (lower_weight, lower) = match upper.checked_sub(1) {
        Some(l) => (full_weights[l], Some(l)),
        None => (0.0, None),
    };
    let t = (weight - lower_weight) / (full_weights[upper] - lower_weight);
    out[upper] = t;
    if let Some(l) = lower {
        out[l] = 1.0 - t;
    }
}

/// The times strictly between `t0` and `t1` at which a channel weight going linearly from `w0`
/// to `w1` crosses one of the interior full weights (where [`spread_weight`] bends), appended to
/// `out`: keyed there too, linear keys reproduce the spread weights exactly.
pub(super) fn bends_between(full_weights: &[f32], (t0, w0): (f32, f32), (t1, w1): (f32, f32), out: &mut Vec<f32>) {
    if w0 == w1 || t1 <= t0 {
        return;
    }
    let interior = &full_weights[..full_weights.len().saturating_sub(1)];
    for &f in interior {
        let s = (f - w0) / (w1 - w0);
        if s > 0.0 && s < 1.0 {
            let t = t0 + s * (t1 - t0);
            if t > t0 && t < t1 {
                out.push(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(full: &[f32], weight: f32) -> Vec<f32> {
        let mut out = vec![f32::NAN; full.len()];
        spread_weight(full, weight, &mut out);
        out
    }

    #[test]
    fn one_shape_takes_the_weight_as_it_is() {
        for w in [-0.5, 0.0, 0.3, 1.0, 1.7] {
            assert_eq!(spread(&[1.0], w), vec![w]);
        }
    }

    #[test]
    fn two_shapes_share_the_weight_between_their_full_weights() {
        let full = [0.5, 1.0];
        // Worked out by hand from ufbx's rule: below 0.5 the first shape alone, w / 0.5; between
        // 0.5 and 1 the first fades out as the second fades in.
        assert_eq!(spread(&full, 0.0), vec![0.0, 0.0]);
        assert_eq!(spread(&full, 0.25), vec![0.5, 0.0]);
        assert_eq!(spread(&full, 0.5), vec![1.0, 0.0]);
        assert_eq!(spread(&full, 0.75), vec![0.5, 0.5]);
        assert_eq!(spread(&full, 1.0), vec![0.0, 1.0]);
        // Past the last shape the last segment goes on; below zero the first.
        assert_eq!(spread(&full, 1.25), vec![-0.5, 1.5]);
        assert_eq!(spread(&full, -0.25), vec![-0.5, 0.0]);
    }

    #[test]
    fn three_shapes_use_only_the_two_around_the_weight() {
        let full = [0.25, 0.5, 1.0];
        assert_eq!(spread(&full, 0.125), vec![0.5, 0.0, 0.0]);
        assert_eq!(spread(&full, 0.375), vec![0.5, 0.5, 0.0]);
        assert_eq!(spread(&full, 0.5), vec![0.0, 1.0, 0.0]);
        assert_eq!(spread(&full, 0.625), vec![0.0, 0.75, 0.25]);
    }

    #[test]
    fn bends_are_found_where_a_key_segment_crosses_an_interior_full_weight() {
        let full = [0.25, 0.5, 1.0];
        let mut out = Vec::new();
        bends_between(&full, (1.0, 0.0), (2.0, 1.0), &mut out);
        assert_eq!(out, vec![1.25, 1.5]);
        out.clear();
        // Downwards, and a key exactly on a full weight adds nothing there.
        bends_between(&full, (0.0, 0.5), (4.0, 0.0), &mut out);
        assert_eq!(out, vec![2.0]);
        out.clear();
        bends_between(&[1.0], (0.0, 0.0), (1.0, 1.0), &mut out);
        assert!(out.is_empty());
    }
}
