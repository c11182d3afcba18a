//! The edited JSON as text that repeats the original's own text wherever the edit left a part
//! equal to it. serde_json's number parsing can be off by one unit in the last place, so a value
//! the save did not change is never printed again from its parsed form: top-level members and
//! the elements of top-level arrays (accessors, meshes, …) that are unchanged are copied byte
//! for byte.

use super::SaveError;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// `edited` as JSON text, reusing `original_text` (whose parse is `original`) for every
/// top-level member and top-level array element that `edited` has unchanged.
pub fn text_keeping_original(original_text: &[u8], original: &Value, edited: &Value) -> Result<Vec<u8>, SaveError> {
    let raw: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(original_text).map_err(SaveError::Json)?;
    let members = edited.as_object().ok_or_else(|| SaveError::Malformed {
        what: "document".into(),
        problem: "the JSON is not an object".into(),
    })?;
    let print = |value: &Value| serde_json::to_string(value).map_err(SaveError::Json);
    let mut out = String::from("{");
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&print(&Value::String(key.clone()))?);
        out.push(':');
        match (raw.get(key), original.get(key)) {
            (Some(text), Some(before)) if before == value => out.push_str(text.get()),
            (Some(text), Some(Value::Array(before))) if value.is_array() => {
                let items: Vec<Box<RawValue>> = serde_json::from_str(text.get()).map_err(SaveError::Json)?;
                out.push('[');
                for (k, item) in value.as_array().into_iter().flatten().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    match (items.get(k), before.get(k)) {
                        (Some(text), Some(before)) if before == item => out.push_str(text.get()),
                        _ => out.push_str(&print(item)?),
                    }
                }
                out.push(']');
            }
            _ => out.push_str(&print(value)?),
        }
    }
    out.push('}');
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_parts_keep_their_text_and_changed_ones_are_printed() {
        let text = br#"{ "nodes": [ {"translation": [5.5879398885849704e-9, 1.0E0, 0]} ],
            "accessors": [ {"min": [0.10000000000000000555], "count": 1}, {"count": 2} ],
            "asset": {"version": "2.0"} }"#;
        let original: Value = serde_json::from_slice(text).unwrap();
        let mut edited = original.clone();
        edited["accessors"][1]["count"] = 3.into();
        edited["extra"] = true.into();
        let out = String::from_utf8(text_keeping_original(text, &original, &edited).unwrap()).unwrap();
        assert_eq!(
            out,
            r#"{"accessors":[{"min": [0.10000000000000000555], "count": 1},{"count":3}],"asset":{"version": "2.0"},"extra":true,"nodes":[ {"translation": [5.5879398885849704e-9, 1.0E0, 0]} ]}"#
        );
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), edited);
    }
}
