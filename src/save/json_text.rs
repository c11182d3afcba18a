//! The edited JSON as text that repeats the original's own text wherever the edit left a part
//! equal to it. serde_json's number parsing can be off by one unit in the last place, so a value
//! the save did not change is never printed again from its parsed form: every unchanged value
//! is copied byte for byte, and a changed object or array is written member by member (element
//! by element), so that renaming an animation prints only its new name. Elements of top-level
//! arrays that the edit moved (animations kept in another order) are matched with their place
//! in the original through [`Origins`].

use super::SaveError;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// For each top-level array whose elements the edit rearranged: where its element `k` was in the
/// original (`None` for a new element). Arrays not named keep their elements in place.
pub type Origins = BTreeMap<String, Vec<Option<usize>>>;

/// `edited` as JSON text, reusing `original_text` (whose parse is `original`) for every value
/// that `edited` has unchanged.
pub fn text_keeping_original(
    original_text: &[u8],
    original: &Value,
    edited: &Value,
    origins: &Origins,
) -> Result<Vec<u8>, SaveError> {
    let raw: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(original_text).map_err(SaveError::Json)?;
    let members = edited.as_object().ok_or_else(|| SaveError::Malformed {
        what: "document".into(),
        problem: "the JSON is not an object".into(),
    })?;
    let mut out = String::from("{");
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&print(&Value::String(key.clone()))?);
        out.push(':');
        let before = original.get(key).zip(raw.get(key).map(Box::as_ref));
        match (origins.get(key), before) {
            (Some(moved), Some((Value::Array(before), text))) if value.is_array() => {
                write_array(&mut out, value, before, text, |k| moved.get(k).copied().flatten())?;
            }
            _ => write_kept(&mut out, value, before)?,
        }
    }
    out.push('}');
    Ok(out.into_bytes())
}

fn print(value: &Value) -> Result<String, SaveError> {
    serde_json::to_string(value).map_err(SaveError::Json)
}

/// Writes `value`, copying `before`'s text (the original value and its text) where they are
/// equal and descending into objects and arrays that differ.
fn write_kept(out: &mut String, value: &Value, before: Option<(&Value, &RawValue)>) -> Result<(), SaveError> {
    match (value, before) {
        (_, Some((before, text))) if before == value => out.push_str(text.get()),
        (Value::Object(members), Some((Value::Object(before), text))) => {
            let raw: BTreeMap<String, Box<RawValue>> = serde_json::from_str(text.get()).map_err(SaveError::Json)?;
            out.push('{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&print(&Value::String(key.clone()))?);
                out.push(':');
                write_kept(out, value, before.get(key).zip(raw.get(key).map(Box::as_ref)))?;
            }
            out.push('}');
        }
        (Value::Array(_), Some((Value::Array(before), text))) => write_array(out, value, before, text, Some)?,
        _ => out.push_str(&print(value)?),
    }
    Ok(())
}

/// Writes the array `value`, whose element `k` was element `origin(k)` of `before` (with text
/// `text`).
fn write_array(
    out: &mut String,
    value: &Value,
    before: &[Value],
    text: &RawValue,
    origin: impl Fn(usize) -> Option<usize>,
) -> Result<(), SaveError> {
    let items: Vec<Box<RawValue>> = serde_json::from_str(text.get()).map_err(SaveError::Json)?;
    out.push('[');
    for (k, item) in value.as_array().into_iter().flatten().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let was = origin(k).and_then(|j| before.get(j).zip(items.get(j).map(Box::as_ref)));
        write_kept(out, item, was)?;
    }
    out.push(']');
    Ok(())
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
        let out = String::from_utf8(text_keeping_original(text, &original, &edited, &Origins::new()).unwrap()).unwrap();
        assert_eq!(
            out,
            r#"{"accessors":[{"min": [0.10000000000000000555], "count": 1},{"count":3}],"asset":{"version": "2.0"},"extra":true,"nodes":[ {"translation": [5.5879398885849704e-9, 1.0E0, 0]} ]}"#
        );
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), edited);
    }

    #[test]
    fn moved_and_renamed_elements_keep_the_text_of_what_they_did_not_change() {
        let text = br#"{"animations": [ {"name": "A", "samplers": [1.0E0]}, {"name": "B", "extras": {"k": 2.50}} ],
            "scene": 0}"#;
        let original: Value = serde_json::from_slice(text).unwrap();
        let mut edited = original.clone();
        let renamed = {
            let mut a = original["animations"][0].clone();
            a["name"] = "A2".into();
            a
        };
        edited["animations"] = Value::Array(vec![
            original["animations"][1].clone(),
            renamed,
            serde_json::json!({"name": "new"}),
        ]);
        let origins = Origins::from([("animations".to_owned(), vec![Some(1), Some(0), None])]);
        let out = String::from_utf8(text_keeping_original(text, &original, &edited, &origins).unwrap()).unwrap();
        assert_eq!(
            out,
            r#"{"animations":[{"name": "B", "extras": {"k": 2.50}},{"name":"A2","samplers":[1.0E0]},{"name":"new"}],"scene":0}"#
        );
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), edited);
    }
}
