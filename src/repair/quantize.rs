//! Repaired weights as normalized integers (glTF's `UNSIGNED_BYTE` / `UNSIGNED_SHORT` weights)
//! whose sums are exactly the type's one (255 or 65535), so a file that stores them stays
//! normalized in the type it uses.

use crate::rig::Influences;

/// `weights` (one vertex's, all sets) as integers out of `one` in `out`: each rounded, then
/// the difference of their sum from `one` added to (or taken from) the largest weight's slot.
/// A vertex with no positive weight gets all zeros. `out` must be as long as `weights`.
pub fn quantize_vertex(weights: &[f32], one: u16, out: &mut [u16]) {
    assert_eq!(weights.len(), out.len(), "one integer slot per weight");
    let usable = |w: f32| if w.is_finite() && w > 0.0 { w } else { 0.0 };
    let sum: f32 = weights.iter().map(|&w| usable(w)).sum();
    out.fill(0);
    if sum <= 0.0 {
        return;
    }
    let mut total: i64 = 0;
    let mut largest = 0;
    for (k, &w) in weights.iter().enumerate() {
        let value = (usable(w) / sum * f32::from(one)).round() as i64;
        out[k] = value.clamp(0, i64::from(one)) as u16;
        total += i64::from(out[k]);
        if usable(w) > usable(weights[largest]) {
            largest = k;
        }
    }
    // Rounding moves each slot by at most ½, so the difference is at most half the slot count
    // and the largest slot (at least one / slots) absorbs it without going negative.
    let fixed = i64::from(out[largest]) + i64::from(one) - total;
    out[largest] = fixed.clamp(0, i64::from(one)) as u16;
}

/// Every vertex's weights of `influences` as integers out of `one` (255 for normalized u8,
/// 65535 for u16), in the layout of `influences.weights`: each vertex's slots, across its sets,
/// sum to exactly `one` (all zero for a vertex with no weight).
pub fn quantized_weights(influences: &Influences, one: u16) -> Vec<[u16; 4]> {
    let sets = influences.sets.max(1);
    let mut out = vec![[0u16; 4]; influences.weights.len()];
    let mut flat = [0.0f32; 64];
    let mut ints = [0u16; 64];
    for (vertex, chunk) in influences.weights.chunks(sets).enumerate() {
        let n = chunk.len() * 4;
        if n > flat.len() {
            continue;
        }
        for (k, w) in chunk.iter().flatten().enumerate() {
            flat[k] = *w;
        }
        quantize_vertex(&flat[..n], one, &mut ints[..n]);
        for (k, slot) in out[vertex * sets..vertex * sets + chunk.len()].iter_mut().enumerate() {
            slot.copy_from_slice(&ints[k * 4..k * 4 + 4]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_overshoot_comes_off_the_largest_weight() {
        let mut out = [0u16; 4];
        // 0.5·255 = 127.5 → 128, 0.3·255 = 76.5 → 77, 0.2·255 = 51: 256, one too many.
        quantize_vertex(&[0.5, 0.3, 0.2, 0.0], 255, &mut out);
        assert_eq!(out, [127, 77, 51, 0]);
        // Four quarters: 63.75 → 64 each, 256; the first of the equal largest gives one back.
        quantize_vertex(&[0.25; 4], 255, &mut out);
        assert_eq!(out, [63, 64, 64, 64]);
        // Thirds of 65535 are exact.
        let mut three = [0u16; 3];
        quantize_vertex(&[1.0, 1.0, 1.0], 65535, &mut three);
        assert_eq!(three, [21845; 3]);
    }

    #[test]
    fn rounding_shortfall_goes_to_the_largest_weight_and_unnormalized_input_is_scaled() {
        let mut out = [0u16; 4];
        // Sum 2: halves of 0.4, 0.4, 0.4, 0.8 → 0.2, 0.2, 0.2, 0.4 → 51, 51, 51, 102 = 255.
        quantize_vertex(&[0.4, 0.4, 0.4, 0.8], 255, &mut out);
        assert_eq!(out, [51, 51, 51, 102]);
        // Eight eighths out of 10: 1.25 → 1 each, 8, two short; the first largest takes them.
        let mut eight = [0u16; 8];
        quantize_vertex(&[0.125; 8], 10, &mut eight);
        assert_eq!(eight, [3, 1, 1, 1, 1, 1, 1, 1]);
        // No weight: all zero; negative and NaN weights count as zero.
        quantize_vertex(&[0.0, -1.0, f32::NAN, 0.0], 255, &mut out);
        assert_eq!(out, [0; 4]);
    }

    #[test]
    fn every_vertex_of_two_sets_sums_to_one_in_the_stored_type() {
        // Vertex 0: 8 slots across two sets; vertex 1: odd weights.
        let influences = Influences {
            sets: 2,
            joints: vec![[0, 1, 2, 3], [4, 5, 6, 7], [0, 1, 2, 3], [0; 4]],
            weights: vec![
                [0.2, 0.15, 0.15, 0.1],
                [0.1, 0.1, 0.1, 0.1],
                [0.7, 0.2, 0.1, 0.0],
                [0.0; 4],
            ],
        };
        for one in [255u16, 65535] {
            let q = quantized_weights(&influences, one);
            assert_eq!(q.len(), 4);
            for vertex in q.chunks(2) {
                let sum: u32 = vertex.iter().flatten().map(|&v| u32::from(v)).sum();
                assert_eq!(sum, u32::from(one));
            }
        }
        // 0.7, 0.2, 0.1 of 255: 178.5 → 179 (0.7 is just under in f32: 178.49… → 178),
        // 51, 25.5 → 26; whatever rounding gave, the largest slot made up the sum.
        let q = quantized_weights(&influences, 255);
        assert_eq!(q[2][1..], [51, 26, 0]);
        assert_eq!(q[2][0], 255 - 51 - 26);
    }
}
