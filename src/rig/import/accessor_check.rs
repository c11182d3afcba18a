//! The checks of accessors that do not read them into memory: elements against their buffer
//! view, and declared `min`/`max` against the data. What they find becomes report findings.

use super::accessor::{Budget, Buffers, component_u32, elements_fit};
use gltf::accessor::{DataType, Dimensions};

/// Checks an accessor's elements against its buffer view without reading them into memory, and
/// compares its declared `min`/`max` (when given) with the data, as far as `scan` allows.
/// Returns the problems found, worded for the report. Matrices and sparse accessors are only
/// bounds-checked.
pub fn check_accessor(accessor: &gltf::Accessor, buffers: &Buffers, scan: &mut Budget) -> Vec<String> {
    let index = accessor.index();
    // An accessor of an unknown layout is only noted (nothing may read it).
    let Ok((data_type, dimensions)) = buffers.layout(accessor) else {
        return Vec::new();
    };
    let n = dimensions.multiplicity();
    let component = data_type.size();
    let element = component * n;
    let count = accessor.count();
    let mut problems = Vec::new();
    let data = match accessor.view() {
        None => None,
        // Views of buffers without data are an error only when read.
        Some(view)
            if !buffers.decoded_views.contains_key(&view.index()) && !buffers.has_data(view.buffer().index()) =>
        {
            None
        }
        Some(view) => match buffers.view(&view) {
            Err(e) => return vec![format!("accessor {index}: {e}")],
            Ok(data) => {
                let stride = view.stride().unwrap_or(element);
                let offset = accessor.offset();
                if count == 0 || !elements_fit(data.len(), offset as u64, stride as u64, element as u64, count as u64) {
                    return vec![format!(
                        "accessor {index} claims {count} elements of {element} bytes (stride {stride}, offset {offset}) but buffer view {} holds only {} bytes",
                        view.index(),
                        data.len()
                    )];
                }
                Some((data, stride, offset))
            }
        },
    };
    let matrix = matches!(dimensions, Dimensions::Mat2 | Dimensions::Mat3 | Dimensions::Mat4);
    if matrix || accessor.sparse().is_some() {
        return problems;
    }
    let declared = |v: Option<serde_json::Value>| -> Option<Vec<f64>> {
        v?.as_array()?.iter().map(serde_json::Value::as_f64).collect()
    };
    let (Some(min), Some(max)) = (declared(accessor.min()), declared(accessor.max())) else {
        return problems;
    };
    if min.len() != n || max.len() != n {
        problems.push(format!(
            "accessor {index}: min/max have {}/{} values for {n} components",
            min.len(),
            max.len()
        ));
        return problems;
    }
    let raw = |bytes: &[u8]| -> f64 {
        match data_type {
            DataType::F32 => f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f64,
            other => component_u32(other, bytes) as i32 as f64,
        }
    };
    let raw_unsigned = |bytes: &[u8]| -> f64 {
        match data_type {
            DataType::U8 | DataType::U16 | DataType::U32 => component_u32(data_type, bytes) as f64,
            _ => raw(bytes),
        }
    };
    // Zero-filled accessors (no buffer view) carry no data to compare with; past the scan
    // allowance the comparison is skipped.
    let Some((data, stride, offset)) = data else {
        return problems;
    };
    if scan.charge((count as u64).saturating_mul(element as u64), "").is_err() {
        return problems;
    }
    let mut actual_min = vec![f64::INFINITY; n];
    let mut actual_max = vec![f64::NEG_INFINITY; n];
    for i in 0..count {
        let at = offset + i * stride;
        for c in 0..n {
            let value = raw_unsigned(&data[at + c * component..]);
            actual_min[c] = actual_min[c].min(value);
            actual_max[c] = actual_max[c].max(value);
        }
    }
    let differs = |a: f64, b: f64| (a - b).abs() > 1e-5 * a.abs().max(b.abs()).max(1.0);
    let show = |v: &[f64]| v.iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(", ");
    for (what, declared, actual) in [("min", &min, &actual_min), ("max", &max, &actual_max)] {
        if declared.iter().zip(actual.iter()).any(|(&d, &a)| differs(d, a)) {
            problems.push(format!(
                "accessor {index}: declared {what} [{}] does not match its data's {what} [{}]",
                show(declared),
                show(actual)
            ));
        }
    }
    problems
}
