//! Weights stored as normalized unsigned integers: rounded so that each vertex's stored weights
//! add up to exactly the integer its float weights sum to, `MAX` for a normalized vertex.

/// Quantizes one vertex's weights to normalized `u8` (255 = 1), writing `out` (same length).
pub fn quantize_weights_u8(weights: &[f32], out: &mut [u8]) {
    quantize(weights, out, u8::MAX.into(), |q| q as u8);
}

/// Quantizes one vertex's weights to normalized `u16` (65535 = 1), writing `out` (same length).
pub fn quantize_weights_u16(weights: &[f32], out: &mut [u16]) {
    quantize(weights, out, u16::MAX.into(), |q| q as u16);
}

/// Rounds every weight to the nearest step of `1/max`, then gives the difference between the
/// rounded sum and the rounded true sum to the largest weight: a vertex whose weights sum to 1
/// stores exactly `max`, and weights already on the grid come back unchanged whatever their sum.
/// Negative and non-finite weights store as 0, weights above 1 as `max`.
fn quantize<T: Copy>(weights: &[f32], out: &mut [T], max: i64, store: impl Fn(i64) -> T) {
    assert_eq!(weights.len(), out.len(), "one stored weight per weight");
    let step = |w: f32| -> i64 {
        if w.is_finite() {
            (f64::from(w) * max as f64).round().clamp(0.0, max as f64) as i64
        } else {
            0
        }
    };
    let clean = |w: f32| {
        if w.is_finite() {
            f64::from(w).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    let target = (weights.iter().map(|&w| clean(w)).sum::<f64>() * max as f64).round() as i64;
    let rounded_sum: i64 = weights.iter().map(|&w| step(w)).sum();
    let largest = weights
        .iter()
        .enumerate()
        .max_by(|a, b| clean(*a.1).total_cmp(&clean(*b.1)).then(b.0.cmp(&a.0)))
        .map(|(i, _)| i);
    for (i, (&w, slot)) in weights.iter().zip(out.iter_mut()).enumerate() {
        let mut q = step(w);
        if Some(i) == largest {
            q = (q + target - rounded_sum).clamp(0, max);
        }
        *slot = store(q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_weights_sum_exactly_to_the_maximum() {
        // Thirds: 85 each by rounding (255 total); sevenths: round(255/7) = 36 ×7 = 252, the
        // largest (the first of equals) takes the 3 left.
        let mut out = [0u8; 3];
        quantize_weights_u8(&[1.0 / 3.0; 3], &mut out);
        assert_eq!(out, [85, 85, 85]);
        let mut out = [0u8; 7];
        quantize_weights_u8(&[1.0 / 7.0; 7], &mut out);
        assert_eq!(out, [39, 36, 36, 36, 36, 36, 36]);
        // 0.5005·255 = 127.6 → 128, 0.4995·255 = 127.4 → 127: already 255.
        let mut out = [0u8; 4];
        quantize_weights_u8(&[0.5005, 0.4995, 0.0, 0.0], &mut out);
        assert_eq!(out, [128, 127, 0, 0]);
        // Three weights of 0.1666…·65535 = 10922.5 → 10923 each plus 0.5·65535 = 32767.5 → 32768:
        // 65537, two too many, taken from the largest.
        let mut out = [0u16; 4];
        quantize_weights_u16(&[0.5, 1.0 / 6.0, 1.0 / 6.0, 1.0 / 6.0], &mut out);
        assert_eq!(out, [32766, 10923, 10923, 10923]);
        assert_eq!(out.iter().map(|&q| u32::from(q)).sum::<u32>(), 65535);
    }

    #[test]
    fn weights_on_the_grid_come_back_unchanged_even_when_not_normalized() {
        let stored = [200u8, 100, 30, 0];
        let weights = stored.map(|q| f32::from(q) / 255.0);
        let mut out = [0u8; 4];
        quantize_weights_u8(&weights, &mut out);
        assert_eq!(out, stored);
        let mut out = [9u8; 4];
        quantize_weights_u8(&[0.0; 4], &mut out);
        assert_eq!(out, [0; 4]);
        quantize_weights_u8(&[f32::NAN, -0.5, 2.0, 0.0], &mut out);
        assert_eq!(out, [0, 0, 255, 0]);
    }
}
