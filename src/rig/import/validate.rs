//! The JSON's structure: the `gltf` crate's validation, worded for a person, without the
//! refusals a viewer should not make.

use super::extensions;
use crate::rig::RigError;
use gltf::json::validation::{Checked, Error, Validate};
use std::collections::BTreeMap;

/// How many validation problems a load error lists before summarizing the rest.
const LISTED_PROBLEMS: usize = 6;

/// What validation let through that later reads must not touch.
#[derive(Debug, Default)]
pub struct Tolerated {
    /// Accessors whose `type` or `componentType` glTF does not define (the `gltf` crate panics
    /// on them), with what is wrong: valid as long as nothing reads them.
    pub unknown_layouts: BTreeMap<usize, String>,
}

/// Runs the `gltf` crate's validation (references in range, enum values known, required fields
/// present) and words its findings. Allowed, as the glTF validator allows them: an accessor
/// without a buffer view (its elements are zeros), an accessor of an unknown type (an error only
/// when read), a primitive without POSITION or with an unknown mode (not drawn), POSITION
/// without min/max, and every extension Rigscope implements. A required extension it does not
/// implement is refused by name.
pub fn validate(root: &gltf::json::Root) -> Result<Tolerated, RigError> {
    const OUT_OF_RANGE: &str = "refers to an object the file does not have (index out of range)";
    let mut problems = Vec::new();
    // Checked first: the `gltf` crate's own check of POSITION indexes the accessor array
    // without a bounds check.
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            for (semantic, accessor) in &primitive.attributes {
                if accessor.value() >= root.accessors.len() {
                    let name = match semantic {
                        Checked::Valid(s) => s.to_string(),
                        Checked::Invalid => "(unknown attribute)".into(),
                    };
                    problems.push(format!("meshes[{m}].primitives[{p}].attributes.{name} {OUT_OF_RANGE}"));
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(RigError::Invalid(problems.join("; ")));
    }
    extensions::check_required(root)?;
    let mut checked = Tolerated::default();
    for (a, accessor) in root.accessors.iter().enumerate() {
        let mut wrong = Vec::new();
        if matches!(accessor.type_, Checked::Invalid) {
            wrong.push("its type is not one glTF defines");
        }
        if matches!(accessor.component_type, Checked::Invalid) {
            wrong.push("its componentType is not one glTF defines");
        }
        if !wrong.is_empty() {
            checked.unknown_layouts.insert(a, wrong.join(" and "));
        }
    }
    // Not checked by the `gltf` crate: the node and property an animation channel targets.
    for (a, animation) in root.animations.iter().enumerate() {
        for (c, channel) in animation.channels.iter().enumerate() {
            if channel.target.node.value() >= root.nodes.len() {
                problems.push(format!("animations[{a}].channels[{c}].target.node {OUT_OF_RANGE}"));
            }
            if matches!(channel.target.path, Checked::Invalid) {
                problems.push(format!(
                    "animations[{a}].channels[{c}].target.path is not translation, rotation, scale or weights"
                ));
            }
        }
    }
    root.validate(root, gltf::json::Path::new, &mut |path, error| {
        let path = path().to_string();
        let zero_filled_accessor =
            matches!(error, Error::Missing) && path.starts_with("accessors[") && path.ends_with("].bufferView");
        let tolerated = zero_filled_accessor
            || matches!(error, Error::Unsupported)
            || (path.starts_with("accessors[") && (path.ends_with("].type") || path.ends_with("].componentType")))
            || (path.starts_with("meshes[") && (path.contains("POSITION") || path.ends_with("].mode")));
        if !tolerated {
            let what = match error {
                Error::IndexOutOfBounds => OUT_OF_RANGE,
                Error::Invalid => "has an invalid value",
                Error::Missing => "is missing",
                Error::Oversize => "is a size or offset beyond what this machine can address",
                Error::Unsupported => "uses an unsupported extension",
            };
            problems.push(format!("{path} {what}"));
        }
    });
    if problems.is_empty() {
        return Ok(checked);
    }
    let more = problems.len().saturating_sub(LISTED_PROBLEMS);
    problems.truncate(LISTED_PROBLEMS);
    let mut listed = problems.join("; ");
    if more > 0 {
        listed.push_str(&format!("; and {more} more"));
    }
    Err(RigError::Invalid(listed))
}
