//! Which glTF extensions Rigscope implements, the refusal of a required one it does not, and the
//! notes about used ones it ignores.

use crate::rig::RigError;

/// Extensions the importer implements: a file that requires any of these opens.
pub const SUPPORTED_EXTENSIONS: &[&str] = &[
    "KHR_mesh_quantization",
    "EXT_meshopt_compression",
    "KHR_draco_mesh_compression",
    "KHR_texture_transform",
    "EXT_texture_webp",
    "KHR_texture_basisu",
    "KHR_materials_emissive_strength",
    "KHR_materials_unlit",
    "KHR_materials_specular",
    "KHR_materials_ior",
    "VRMC_vrm_animation",
    "KHR_animation_pointer",
];

/// Extensions whose data changes nothing Rigscope shows (VRM avatar metadata, lights, cameras'
/// extras): used, they are worth a note but not a warning.
const HARMLESS_EXTENSIONS: &[&str] = &[
    "VRM",
    "VRMC_vrm",
    "VRMC_springBone",
    "VRMC_node_constraint",
    "VRMC_materials_mtoon",
];

/// Extensions a file may require though Rigscope reads only part of them: VRM 1.0 avatars
/// require `VRMC_vrm`, whose humanoid bones and expressions are read and whose other parts
/// (meta, first person, look-at ranges) change nothing in the mesh.
const READ_WHEN_REQUIRED: &[&str] = &["VRMC_vrm"];

/// Refuses a file that requires an extension Rigscope does not implement, naming it and listing
/// the ones it does.
pub fn check_required(root: &gltf::json::Root) -> Result<(), RigError> {
    let missing: Vec<&str> = root
        .extensions_required
        .iter()
        .map(String::as_str)
        .filter(|name| !SUPPORTED_EXTENSIONS.contains(name) && !READ_WHEN_REQUIRED.contains(name))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(RigError::UnsupportedExtension {
        missing: missing.into_iter().map(str::to_owned).collect(),
    })
}

/// The humanoid bone map a VRM file carries, as (VRM 1.0 bone name, glTF node) pairs: VRM 0.x's
/// `VRM.humanoid.humanBones` list or VRM 1.0's `VRMC_vrm.humanoid.humanBones` object. VRM 0.x
/// names its thumb bones one step further out (`thumbProximal` is 1.0's `thumbMetacarpal`), so
/// they are renamed. Entries without a whole-number node are left out; the caller checks the
/// node exists.
pub fn vrm_humanoid(root: &gltf::json::Root) -> Vec<(String, usize)> {
    let Some(extensions) = &root.extensions else {
        return Vec::new();
    };
    let node = |entry: &serde_json::Value| entry.get("node")?.as_u64().and_then(|n| usize::try_from(n).ok());
    if let Some(bones) = extensions
        .others
        .get("VRMC_vrm")
        .and_then(|v| v.pointer("/humanoid/humanBones"))
        .and_then(|b| b.as_object())
    {
        return bones
            .iter()
            .filter_map(|(bone, entry)| Some((bone.clone(), node(entry)?)))
            .collect();
    }
    let Some(bones) = extensions
        .others
        .get("VRM")
        .and_then(|v| v.pointer("/humanoid/humanBones"))
        .and_then(|b| b.as_array())
    else {
        return Vec::new();
    };
    bones
        .iter()
        .filter_map(|entry| {
            let bone = entry.get("bone")?.as_str()?;
            let renamed = [
                ("ThumbProximal", "ThumbMetacarpal"),
                ("ThumbIntermediate", "ThumbProximal"),
            ]
            .iter()
            .find_map(|(old, new)| bone.strip_suffix(old).map(|side| format!("{side}{new}")));
            Some((renamed.unwrap_or_else(|| bone.to_owned()), node(entry)?))
        })
        .collect()
}

/// One note per extension the file uses and Rigscope ignores.
pub fn notes(root: &gltf::json::Root) -> Vec<String> {
    root.extensions_used
        .iter()
        .filter(|name| !SUPPORTED_EXTENSIONS.contains(&name.as_str()))
        .map(|name| {
            if HARMLESS_EXTENSIONS.contains(&name.as_str()) {
                format!("{name} is used and ignored: the avatar's extension data does not change its skinning")
            } else {
                format!("{name} is used and ignored")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(required: &[&str], used: &[&str]) -> gltf::json::Root {
        let json = serde_json::json!({
            "asset": {"version": "2.0"},
            "extensionsRequired": required,
            "extensionsUsed": used,
        });
        gltf::json::deserialize::from_value(json).unwrap()
    }

    #[test]
    fn an_unimplemented_required_extension_is_refused_by_name_with_the_supported_list() {
        let e = check_required(&root(&["KHR_mesh_quantization", "MSFT_texture_dds"], &[])).unwrap_err();
        assert!(
            matches!(&e, RigError::UnsupportedExtension { missing } if missing == &["MSFT_texture_dds"]),
            "{e:?}"
        );
        let message = e.to_string();
        assert!(message.contains("extension MSFT_texture_dds,"), "{e}");
        assert!(
            message.contains("it implements KHR_mesh_quantization, EXT_meshopt_compression"),
            "{e}"
        );
        assert!(check_required(&root(&["KHR_mesh_quantization", "KHR_draco_mesh_compression"], &[])).is_ok());
    }

    #[test]
    fn used_extensions_that_are_ignored_are_noted_one_each() {
        let notes = notes(&root(&[], &["KHR_materials_sheen", "KHR_texture_transform", "VRM"]));
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert_eq!(notes[0], "KHR_materials_sheen is used and ignored");
        assert!(notes[1].starts_with("VRM is used and ignored"), "{notes:?}");
    }
}
