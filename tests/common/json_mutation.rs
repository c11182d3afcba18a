//! Structure-aware mutation of a glTF document's JSON, as an attacker edits a file: change one
//! to three values (a count, an index, an offset, a type, an enum), remove a key, or give a
//! value another JSON type. Used by the `json_mutations` test (a fixed random sequence) and by
//! the `load_json` fuzz target (choices from the fuzzer's bytes).

#![allow(dead_code)]

use serde_json::Value;

/// Values that break claims: zero, off by one, negative, past 2^31 and 2^32, non-integral.
const EDGE_NUMBERS: &[f64] = &[
    0.0,
    1.0,
    -1.0,
    2.0,
    3.0,
    255.0,
    65535.0,
    65536.0,
    2147483647.0,
    2147483648.0,
    4294967295.0,
    4294967296.0,
    1e300,
    0.5,
    5120.0,
    5121.0,
    5123.0,
    5125.0,
    5126.0,
];

const EDGE_STRINGS: &[&str] = &[
    "",
    "SCALAR",
    "VEC3",
    "MAT4",
    "image/png",
    "data:",
    "../x.bin",
    "POSITION",
];

/// Where one value sits in the document.
type Path = Vec<PathStep>;

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

/// Every value of `value` with its path, parents before children.
fn paths(value: &Value) -> Vec<Path> {
    let mut out = Vec::new();
    let mut pending = vec![(Vec::new(), value)];
    while let Some((path, value)) = pending.pop() {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let mut p = path.clone();
                    p.push(PathStep::Key(k.clone()));
                    pending.push((p, v));
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    let mut p = path.clone();
                    p.push(PathStep::Index(i));
                    pending.push((p, v));
                }
            }
            _ => {}
        }
        out.push(path);
    }
    out
}

fn at<'v>(value: &'v mut Value, path: &[PathStep]) -> Option<&'v mut Value> {
    let mut value = value;
    for step in path {
        value = match step {
            PathStep::Key(k) => value.get_mut(k.as_str())?,
            PathStep::Index(i) => value.get_mut(*i)?,
        };
    }
    Some(value)
}

/// Applies one to three mutations to `document`, each choice taken from `choose(n)` (a number
/// below `n`). Returns what was done, for a failure message.
pub fn mutate(document: &mut Value, choose: &mut dyn FnMut(usize) -> usize) -> Vec<String> {
    let mut done = Vec::new();
    for _ in 0..1 + choose(3) {
        let all = paths(document);
        if all.len() <= 1 {
            break;
        }
        // Leaves and small objects are where the claims are; the root is never replaced.
        let path = all[1 + choose(all.len() - 1)].clone();
        let Some(target) = at(document, &path) else { continue };
        let what = match choose(6) {
            0 | 1 => {
                let n = EDGE_NUMBERS[choose(EDGE_NUMBERS.len())];
                *target = if n.fract() == 0.0 && n.abs() < 9e15 {
                    Value::from(n as i64)
                } else {
                    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
                };
                format!("set to {n}")
            }
            2 => {
                if let Some(n) = target.as_i64() {
                    let delta = [1i64, -1, 2, 1000][choose(4)];
                    *target = Value::from(n.saturating_add(delta));
                    format!("changed by {delta}")
                } else {
                    *target = Value::from(EDGE_STRINGS[choose(EDGE_STRINGS.len())]);
                    "replaced with a string".into()
                }
            }
            3 => {
                let parent = &path[..path.len() - 1];
                let removed = match (at(document, parent), path.last()) {
                    (Some(Value::Object(map)), Some(PathStep::Key(k))) => map.remove(k.as_str()).is_some(),
                    (Some(Value::Array(items)), Some(PathStep::Index(i))) if *i < items.len() => {
                        items.remove(*i);
                        true
                    }
                    _ => false,
                };
                if removed { "removed" } else { "kept" }.into()
            }
            4 => {
                *target = [
                    Value::Null,
                    Value::Bool(true),
                    Value::Array(Vec::new()),
                    Value::Object(Default::default()),
                ][choose(4)]
                .clone();
                "replaced with another type".into()
            }
            _ => {
                if let Value::Array(items) = target
                    && let Some(first) = items.first().cloned()
                {
                    items.push(first);
                    "array grown by a copy".into()
                } else {
                    *target = Value::from(EDGE_STRINGS[choose(EDGE_STRINGS.len())]);
                    "replaced with a string".into()
                }
            }
        };
        done.push(format!("{path:?} {what}"));
    }
    done
}
