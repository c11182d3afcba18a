//! FBX materials → base colour, opacity and diffuse texture; textures embedded in the file or
//! found beside it the way FBX files name them.

use super::{FbxFinding, FbxFindingKind};
use crate::rig::import::accessor::Budget;
use crate::rig::import::material::{decode_texture, missing_texture};
use crate::rig::import::source::read_uri;
use crate::rig::{AlphaMode, ImportFacts, Material, Texture};
use glam::Vec4;
use std::borrow::Cow;
use std::path::Path;

/// The rig's textures, and the rig texture of each ufbx texture (by typed id).
pub(super) fn load_textures(
    scene: &ufbx::Scene,
    base_dir: Option<&Path>,
    budget: &mut Budget,
    warnings: &mut Vec<String>,
    facts: &mut ImportFacts,
) -> (Vec<Texture>, Vec<Option<usize>>) {
    let mut textures = Vec::new();
    let mut of_fbx = vec![None; scene.textures.len()];
    for texture in &scene.textures {
        let Some(slot) = of_fbx.get_mut(texture.element.typed_id as usize) else {
            continue;
        };
        let name = texture.element.name.to_string();
        let texture = match texture_bytes(texture, base_dir) {
            Ok(bytes) => decode_texture(&name, &bytes, budget).unwrap_or_else(|why| {
                warnings.push(format!("FBX texture '{name}' not loaded, drawn untextured: {why}"));
                missing_texture()
            }),
            Err(why) => {
                facts.fbx_findings.push(FbxFinding::new(
                    FbxFindingKind::TextureNotFound,
                    format!("FBX texture '{name}' not found, drawn untextured: {why}"),
                ));
                missing_texture()
            }
        };
        *slot = Some(textures.len());
        textures.push(texture);
    }
    (textures, of_fbx)
}

/// Why an FBX texture that is not embedded has no image file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum TextureFileError {
    #[error("it names no file")]
    NoFileName,
    #[error("no file found for '{named}': tried {tried}")]
    NotFound { named: String, tried: String },
}

/// The encoded image: the file's embedded copy, else the relative path inside the file's
/// folder, else the file name alone beside the file (an absolute path from the machine that
/// wrote it).
fn texture_bytes<'a>(texture: &'a ufbx::Texture, base_dir: Option<&Path>) -> Result<Cow<'a, [u8]>, TextureFileError> {
    if !texture.content.is_empty() {
        // Borrowed: many textures may share one embedded image.
        return Ok(Cow::Borrowed(&texture.content));
    }
    let relative = texture.relative_filename.replace('\\', "/");
    let absolute = texture.absolute_filename.replace('\\', "/");
    let file_name = [&*absolute, &*relative]
        .into_iter()
        .filter_map(|p| p.rsplit('/').next())
        .find(|n| !n.is_empty())
        .ok_or(TextureFileError::NoFileName)?
        .to_owned();
    let mut tried = Vec::new();
    for candidate in [relative.as_str(), file_name.as_str()] {
        if candidate.is_empty() || tried.iter().any(|t: &String| t == candidate) {
            continue;
        }
        match read_uri(candidate, base_dir) {
            Ok(bytes) => return Ok(Cow::Owned(bytes)),
            Err(e) => tried.push(format!("{candidate} ({e})")),
        }
    }
    Err(TextureFileError::NotFound {
        named: absolute,
        tried: tried.join(", "),
    })
}

/// Base colour (with its factor) and opacity from each material, the diffuse texture when one
/// is connected.
pub(super) fn read_materials(scene: &ufbx::Scene, texture_of: &[Option<usize>]) -> Vec<Material> {
    scene
        .materials
        .iter()
        .map(|m| {
            let color = &m.pbr.base_color;
            let factor = if m.pbr.base_factor.has_value {
                m.pbr.base_factor.value_vec4.x as f32
            } else {
                1.0
            };
            let rgb = Vec4::new(
                color.value_vec4.x as f32,
                color.value_vec4.y as f32,
                color.value_vec4.z as f32,
                1.0,
            );
            let rgb = if color.has_value {
                rgb * Vec4::new(factor, factor, factor, 1.0)
            } else {
                Vec4::new(0.8, 0.8, 0.8, 1.0)
            };
            let opacity = if m.pbr.opacity.has_value {
                (m.pbr.opacity.value_vec4.x as f32).clamp(0.0, 1.0)
            } else {
                1.0
            };
            let base_color = rgb.with_w(opacity);
            let texture = color
                .texture
                .as_ref()
                .or(m.fbx.diffuse_color.texture.as_ref())
                .and_then(|t| texture_of.get(t.element.typed_id as usize).copied().flatten());
            Material {
                name: m.element.name.to_string(),
                base_color: if base_color.is_finite() {
                    base_color
                } else {
                    Material::default().base_color
                },
                base_color_texture: texture,
                alpha_mode: if opacity < 1.0 {
                    AlphaMode::Blend
                } else {
                    AlphaMode::Opaque
                },
                ..Material::default()
            }
        })
        .collect()
}
