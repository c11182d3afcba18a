//! Materials and the images their textures sample.

use super::accessor::{Budget, Buffers};
use super::source::{MAX_BYTES, read_uri};
use crate::rig::{AlphaMode, Material, Texture, UvTransform};
use glam::{Vec2, Vec3, Vec4};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

/// Largest image side decoded.
const MAX_IMAGE_SIDE: u32 = 16384;

/// Stand-in for an image that could not be loaded, so texture indices stay valid.
pub fn missing_texture() -> Texture {
    Texture {
        name: "missing".into(),
        width: 1,
        height: 1,
        rgba8: vec![255, 255, 255, 255],
    }
}

/// Every texture's image, decoded (`None`, with a warning, when it cannot be).
pub fn load_textures(
    document: &gltf::Document,
    buffers: &Buffers,
    base_dir: Option<&Path>,
    budget: &mut Budget,
    warnings: &mut Vec<String>,
) -> Vec<Option<Texture>> {
    let images = &document.as_json().images;
    // Several textures may share an image: it is decoded once.
    let mut decoded: HashMap<usize, Result<image::RgbaImage, String>> = HashMap::new();
    document
        .textures()
        .map(|texture| {
            let label = texture_label(&texture, images);
            let result = texture_image(&texture, images.len()).and_then(|index| {
                let decoded = decoded
                    .entry(index)
                    .or_insert_with(|| decode_image(document, &images[index], buffers, base_dir, budget));
                match decoded {
                    Ok(rgba) => budget
                        .charge(rgba.len() as u64, "the texture")
                        .map(|_| rgba.clone())
                        .map_err(|e| e.to_string()),
                    Err(e) => Err(e.clone()),
                }
            });
            match result {
                Ok(rgba) => Some(Texture {
                    name: label,
                    width: rgba.width(),
                    height: rgba.height(),
                    rgba8: rgba.into_raw(),
                }),
                Err(e) => {
                    warnings.push(format!(
                        "texture {} ({label}) not loaded: {e}; drawn untextured",
                        texture.index()
                    ));
                    None
                }
            }
        })
        .collect()
}

/// What a warning calls a texture: its image's name, or the image's index.
fn texture_label(texture: &gltf::Texture, images: &[gltf::json::Image]) -> String {
    match texture_image(texture, images.len()) {
        Ok(index) => images[index].name.clone().unwrap_or_else(|| format!("image {index}")),
        Err(_) => "no image".into(),
    }
}

/// The image a texture samples: its EXT_texture_webp or KHR_texture_basisu source when it has
/// one, else its own source (the fallback those extensions allow).
fn texture_image(texture: &gltf::Texture, image_count: usize) -> Result<usize, String> {
    let extension_source = ["EXT_texture_webp", "KHR_texture_basisu"].iter().find_map(|name| {
        texture
            .extension_value(name)
            .and_then(|e| e.get("source"))
            .and_then(serde_json::Value::as_u64)
    });
    let index = match (extension_source, texture.source()) {
        (Some(index), _) => index as usize,
        (None, Some(image)) => image.index(),
        (None, None) => return Err("it has no image".into()),
    };
    if index >= image_count {
        return Err(format!("its image {index} does not exist"));
    }
    Ok(index)
}

/// Decodes one image, read from its buffer view or URI (checked here: the `gltf` crate's own
/// accessor panics on an image with neither).
fn decode_image(
    document: &gltf::Document,
    image: &gltf::json::Image,
    buffers: &Buffers,
    base_dir: Option<&Path>,
    budget: &Budget,
) -> Result<image::RgbaImage, String> {
    let bytes: Cow<[u8]> = match (&image.buffer_view, &image.uri) {
        (Some(view), _) => {
            let view = document
                .views()
                .nth(view.value())
                .ok_or_else(|| format!("its buffer view {} does not exist", view.value()))?;
            Cow::Borrowed(buffers.view(&view)?)
        }
        (None, Some(uri)) => Cow::Owned(read_uri(uri, base_dir)?),
        (None, None) => return Err("the image has neither a buffer view nor a URI".into()),
    };
    if bytes.starts_with(&KTX2_MAGIC) {
        return decode_ktx2(&bytes, budget);
    }
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes.as_ref()))
        .with_guessed_format()
        .map_err(|e| format!("cannot read it: {e}"))?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some((MAX_BYTES / 2).min(budget.left()));
    reader.limits(limits);
    let decoded = reader.decode().map_err(|e| format!("cannot decode it: {e}"))?;
    Ok(decoded.into_rgba8())
}

/// The first bytes of every KTX2 file.
const KTX2_MAGIC: [u8; 12] = [0xAB, 0x4B, 0x54, 0x58, 0x20, 0x32, 0x30, 0xBB, 0x0D, 0x0A, 0x1A, 0x0A];

/// A KTX2 Basis Universal image (KHR_texture_basisu, UASTC or ETC1S) transcoded to RGBA8: its
/// first level, after its size is checked against the limits and the budget.
fn decode_ktx2(bytes: &[u8], budget: &Budget) -> Result<image::RgbaImage, String> {
    let transcoder = basisu::Transcoder::new(bytes).map_err(|e| format!("cannot read its KTX2 container ({e:?})"))?;
    let (width, height) = transcoder.base_dimensions();
    if width == 0 || height == 0 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
        return Err(format!(
            "its KTX2 image is {width}×{height}, outside 1..={MAX_IMAGE_SIDE} a side"
        ));
    }
    let rgba_bytes = u64::from(width) * u64::from(height) * 4;
    if rgba_bytes > budget.left() {
        return Err(format!(
            "its {width}×{height} KTX2 image does not fit the memory budget"
        ));
    }
    let rgba = transcoder
        .transcode(0, basisu::TargetFormat::Rgba32, basisu::DecodeFlags::NONE)
        .map_err(|e| format!("cannot transcode its KTX2 image ({e:?})"))?;
    image::RgbaImage::from_raw(width, height, rgba)
        .ok_or_else(|| format!("its KTX2 image did not transcode to {width}×{height} RGBA"))
}

/// A material as drawn: base color (factor, texture, its texture coordinates), alpha, emission,
/// and whether it is lit.
pub fn read_material(material: &gltf::Material, texture_count: usize) -> Material {
    let pbr = material.pbr_metallic_roughness();
    let texture = pbr
        .base_color_texture()
        .filter(|info| info.texture().index() < texture_count);
    let (alpha_mode, alpha_cutoff) = match material.alpha_mode() {
        gltf::material::AlphaMode::Opaque => (AlphaMode::Opaque, 0.5),
        gltf::material::AlphaMode::Mask => (AlphaMode::Mask, material.alpha_cutoff().unwrap_or(0.5)),
        gltf::material::AlphaMode::Blend => (AlphaMode::Blend, 0.5),
    };
    let emissive = Vec3::from(material.emissive_factor()) * material.emissive_strength().unwrap_or(1.0);
    Material {
        name: material.name().unwrap_or("material").to_owned(),
        base_color: Vec4::from(pbr.base_color_factor()),
        base_color_texture: texture.as_ref().map(|info| info.texture().index()),
        base_color_uv: texture.as_ref().map_or(UvTransform::default(), uv_transform),
        double_sided: material.double_sided(),
        alpha_mode,
        alpha_cutoff,
        emissive: if emissive.is_finite() { emissive } else { Vec3::ZERO },
        unlit: material.unlit(),
    }
}

/// Which texture coordinates a texture reads and how KHR_texture_transform moves them.
fn uv_transform(info: &gltf::texture::Info) -> UvTransform {
    let Some(transform) = info.texture_transform() else {
        return UvTransform {
            set: info.tex_coord(),
            ..UvTransform::default()
        };
    };
    let finite = |v: Vec2, default: Vec2| if v.is_finite() { v } else { default };
    UvTransform {
        set: transform.tex_coord().unwrap_or(info.tex_coord()),
        offset: finite(Vec2::from(transform.offset()), Vec2::ZERO),
        rotation: Some(transform.rotation()).filter(|r| r.is_finite()).unwrap_or(0.0),
        scale: finite(Vec2::from(transform.scale()), Vec2::ONE),
    }
}
