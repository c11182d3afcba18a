//! Materials and the images their textures sample.

use super::accessor::{Budget, Buffers};
use super::source::{MAX_BYTES, read_uri};
use crate::rig::{AlphaMode, Material, Texture, UvTransform};
use glam::{Vec2, Vec3, Vec4};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
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
    // Several textures may share an image: it is decoded once, and copied for all but the last.
    let mut uses: BTreeMap<usize, usize> = BTreeMap::new();
    for texture in document.textures() {
        if let Ok(index) = texture_image(&texture, images.len()) {
            *uses.entry(index).or_default() += 1;
        }
    }
    let encoded: Vec<Result<Cow<[u8]>, String>> = uses
        .keys()
        .map(|&index| image_bytes(document, &images[index], buffers, base_dir))
        .collect();
    let mut decoded: HashMap<usize, Result<image::RgbaImage, String>> = uses
        .keys()
        .copied()
        .zip(decode_images(&encoded, budget.left()))
        .collect();
    document
        .textures()
        .map(|texture| {
            let label = texture_label(&texture, images);
            let result = texture_image(&texture, images.len()).and_then(|index| {
                let left = uses.get_mut(&index).map_or(0, |n| {
                    *n -= 1;
                    *n
                });
                let rgba = match (left, decoded.get(&index)) {
                    (0, _) => decoded.remove(&index),
                    (_, shared) => shared.cloned(),
                };
                let rgba = rgba.unwrap_or_else(|| Err("it was not decoded".into()))?;
                budget
                    .charge(rgba.len() as u64, "the texture")
                    .map(|_| rgba)
                    .map_err(|e| e.to_string())
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

/// An image's encoded bytes, from its buffer view or URI (checked here: the `gltf` crate's own
/// accessor panics on an image with neither).
fn image_bytes<'b>(
    document: &gltf::Document,
    image: &gltf::json::Image,
    buffers: &'b Buffers,
    base_dir: Option<&Path>,
) -> Result<Cow<'b, [u8]>, String> {
    match (&image.buffer_view, &image.uri) {
        (Some(view), _) => {
            let view = document
                .views()
                .nth(view.value())
                .ok_or_else(|| format!("its buffer view {} does not exist", view.value()))?;
            Ok(Cow::Borrowed(buffers.view(&view)?))
        }
        (None, Some(uri)) => Ok(Cow::Owned(read_uri(uri, base_dir)?)),
        (None, None) => Err("the image has neither a buffer view nor a URI".into()),
    }
}

/// Decodes `encoded` images side by side, on up to one thread per core: a rig with dozens of
/// textures (an avatar's) would otherwise decode them one after another on one core. The
/// decoded images together take at most `budget_left` bytes: each image's RGBA size, read from
/// its header, is taken from that allowance in file order before any is decoded, so which
/// images fit does not depend on which thread finishes first.
fn decode_images(encoded: &[Result<Cow<[u8]>, String>], budget_left: u64) -> Vec<Result<image::RgbaImage, String>> {
    let mut left = budget_left;
    let sized: Vec<Result<&[u8], String>> = encoded
        .iter()
        .map(|bytes| {
            let bytes = bytes.as_ref().map_err(Clone::clone)?;
            let (width, height) = image_dimensions(bytes)?;
            let rgba = u64::from(width) * u64::from(height) * 4;
            left = left
                .checked_sub(rgba)
                .ok_or_else(|| format!("its {width}×{height} image does not fit the memory budget"))?;
            Ok(bytes.as_ref())
        })
        .collect();
    // What one decoder may allocate on its way (a format's own buffers before RGBA).
    let alloc_limit = (MAX_BYTES / 2).min(budget_left);
    let decode = |bytes: &Result<&[u8], String>| decode_image(bytes.clone()?, alloc_limit);
    sized
        .par_iter()
        .map(|bytes| {
            // A decoder that panics fails its image, not the load.
            std::panic::catch_unwind(|| decode(bytes)).unwrap_or_else(|_| Err("decoding it panicked".into()))
        })
        .collect()
}

/// The width and height an encoded image (PNG, JPEG, WebP, or KTX2 Basis Universal) says it
/// has, from its header, checked against the largest side decoded.
fn image_dimensions(bytes: &[u8]) -> Result<(u32, u32), String> {
    let (width, height) = if bytes.starts_with(&KTX2_MAGIC) {
        ktx2_transcoder(bytes)?.base_dimensions()
    } else {
        image::ImageReader::new(std::io::Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| format!("cannot read it: {e}"))?
            .into_dimensions()
            .map_err(|e| format!("cannot decode it: {e}"))?
    };
    if width == 0 || height == 0 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
        return Err(format!(
            "its image is {width}×{height}, outside 1..={MAX_IMAGE_SIDE} a side"
        ));
    }
    Ok((width, height))
}

/// Decodes one image (its size checked by [`image_dimensions`]) to RGBA8, the decoder allowed
/// `alloc_limit` bytes.
fn decode_image(bytes: &[u8], alloc_limit: u64) -> Result<image::RgbaImage, String> {
    if bytes.starts_with(&KTX2_MAGIC) {
        return decode_ktx2(bytes);
    }
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| format!("cannot read it: {e}"))?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(alloc_limit);
    reader.limits(limits);
    let decoded = reader.decode().map_err(|e| format!("cannot decode it: {e}"))?;
    Ok(decoded.into_rgba8())
}

/// The first bytes of every KTX2 file.
const KTX2_MAGIC: [u8; 12] = [0xAB, 0x4B, 0x54, 0x58, 0x20, 0x32, 0x30, 0xBB, 0x0D, 0x0A, 0x1A, 0x0A];

fn ktx2_transcoder(bytes: &[u8]) -> Result<basisu::Transcoder<'_>, String> {
    basisu::Transcoder::new(bytes).map_err(|e| format!("cannot read its KTX2 container ({e:?})"))
}

/// A KTX2 Basis Universal image (KHR_texture_basisu, UASTC or ETC1S) transcoded to RGBA8: its
/// first level.
fn decode_ktx2(bytes: &[u8]) -> Result<image::RgbaImage, String> {
    let transcoder = ktx2_transcoder(bytes)?;
    let (width, height) = transcoder.base_dimensions();
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
