// The debug views' ramps, read from the constants of the generated prelude
// (`render::views::wgsl_prelude`), as `render::views` computes them on the CPU.

// The weight-paint ramp: linear between the HEAT_STOPS, evenly spaced from 0 to 1.
fn heat(t: f32) -> vec3<f32> {
    var stops = HEAT_STOPS;
    let segments = HEAT_STOPS_COUNT - 1u;
    let x = clamp(t, 0.0, 1.0) * f32(segments);
    let i = min(u32(x), segments - 1u);
    return mix(stops[i], stops[i + 1u], x - f32(i));
}

// The weight-sum error view's ramp: the first of the WEIGHT_ERROR_STOPS under
// WEIGHT_ERROR_TOLERANCE, else linear between them, evenly spaced up to WEIGHT_ERROR_FULL_SCALE.
fn weight_error_color(error: f32) -> vec3<f32> {
    var stops = WEIGHT_ERROR_STOPS;
    if (error < WEIGHT_ERROR_TOLERANCE) {
        return stops[0];
    }
    let segments = WEIGHT_ERROR_STOPS_COUNT - 1u;
    let x = clamp(error / WEIGHT_ERROR_FULL_SCALE, 0.0, 1.0) * f32(segments);
    let i = min(u32(x), segments - 1u);
    return mix(stops[i], stops[i + 1u], x - f32(i));
}

// A distinct, stable color per joint: hues spaced by JOINT_HUE_STEP.
fn joint_color(joint: u32) -> vec3<f32> {
    let hue = fract(f32(joint) * JOINT_HUE_STEP);
    let k = vec3<f32>(5.0, 3.0, 1.0);
    let p = abs(fract(vec3<f32>(hue) + k / 6.0) * 6.0 - 3.0);
    return JOINT_VALUE * mix(vec3<f32>(1.0), clamp(p - 1.0, vec3<f32>(0.0), vec3<f32>(1.0)), JOINT_SATURATION);
}

// One color per influence count.
fn count_color(n: f32) -> vec3<f32> {
    var colors = INFLUENCE_COLORS;
    return colors[u32(clamp(round(n), 0.0, f32(INFLUENCE_COLORS_COUNT - 1u)))];
}

// The ramp of the deformation view for log2 of a ratio: `heat` from 1/DEFORMATION_RANGE to
// DEFORMATION_RANGE.
fn deformation_color(log2_ratio: f32) -> vec3<f32> {
    return heat(0.5 + 0.5 * log2_ratio / log2(DEFORMATION_RANGE));
}

// The symmetry view's colors; a value between a marker and a difference takes the nearest.
fn symmetry_color(value: f32) -> vec3<f32> {
    if (value < 0.5 * (SYMMETRY_UNCHECKED + SYMMETRY_UNMATCHED)) {
        return NO_VALUE_COLOR;
    }
    if (value < 0.5 * SYMMETRY_UNMATCHED) {
        return SYMMETRY_UNMATCHED_COLOR;
    }
    return heat(value / SYMMETRY_FULL_SCALE);
}

// The engine distance view's ramp: `heat` up to ENGINE_DISTANCE_FULL_SCALE of the rig's height.
fn engine_distance_color(fraction: f32) -> vec3<f32> {
    return heat(fraction / ENGINE_DISTANCE_FULL_SCALE);
}
