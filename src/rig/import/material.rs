//! Materials and the images their textures sample.

use super::accessor::{Budget, BudgetExceeded, Buffers, ReadError};
use super::source::{MAX_BYTES, UriError, read_uri};
use crate::rig::{AlphaMode, DEFAULT_IOR, Material, Specular, Texture, TextureRef, UvTransform};
use glam::{Vec2, Vec3, Vec4};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

/// Largest image side decoded.
const MAX_IMAGE_SIDE: u32 = 16384;

/// Why a texture is drawn untextured (the load goes on, with a warning that gives this).
#[derive(Debug, Clone, thiserror::Error)]
pub enum TextureError {
    #[error("it has no image")]
    NoImage,
    #[error("its image {0} does not exist")]
    MissingImage(usize),
    #[error("its buffer view {0} does not exist")]
    MissingView(usize),
    /// Its buffer view's bytes are not there.
    #[error(transparent)]
    Buffer(ReadError),
    #[error("the image has neither a buffer view nor a URI")]
    NoSource,
    #[error(transparent)]
    Uri(#[from] UriError),
    #[error("its {width}×{height} image does not fit the memory budget")]
    OverBudget { width: u32, height: u32 },
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    #[error("its image is {width}×{height}, outside 1..={MAX_IMAGE_SIDE} a side")]
    Size { width: u32, height: u32 },
    #[error("cannot read it: {0}")]
    Read(#[source] Arc<std::io::Error>),
    #[error("cannot decode it: {0}")]
    Decode(#[source] Arc<image::ImageError>),
    #[error("cannot read its KTX2 container ({0})")]
    Ktx2Container(String),
    #[error("cannot transcode its KTX2 image ({0})")]
    Ktx2Transcode(String),
    #[error("its KTX2 image did not transcode to {width}×{height} RGBA")]
    Ktx2Size { width: u32, height: u32 },
    #[error("it was not decoded")]
    NotDecoded,
    #[error("decoding it panicked")]
    Panicked,
}

/// Stand-in for an image that could not be loaded, so texture indices stay valid.
pub fn missing_texture() -> Texture {
    Texture::from_rgba8("missing", 1, 1, vec![255, 255, 255, 255])
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
    let mut uses: BTreeMap<usize, usize> = BTreeMap::new();
    for texture in document.textures() {
        if let Ok(index) = texture_image(&texture, images.len()) {
            *uses.entry(index).or_default() += 1;
        }
    }
    let encoded: Vec<Result<Cow<[u8]>, TextureError>> = uses
        .keys()
        .map(|&index| image_bytes(document, &images[index], buffers, base_dir))
        .collect();
    let decoded = decode_images(&encoded, budget.left());
    // Textures that share an image share one texture: the first to read its pixels takes the
    // decode, the others decode the file's bytes again, rather than a copy each being kept.
    let mut shared: HashMap<usize, Result<Texture, TextureError>> = uses
        .keys()
        .zip(encoded)
        .zip(decoded)
        .map(|((&index, bytes), rgba)| {
            let texture = rgba.and_then(|rgba| {
                let bytes: Arc<[u8]> = bytes?.into();
                let (width, height) = rgba.dimensions();
                Ok(Texture::from_encoded(
                    String::new(),
                    width,
                    height,
                    bytes,
                    rgba.into_raw(),
                ))
            });
            (index, texture)
        })
        .collect();
    document
        .textures()
        .map(|texture| {
            let label = texture_label(&texture, images);
            let result = texture_image(&texture, images.len()).and_then(|index| {
                let image = shared.get(&index).cloned();
                let mut image = image.unwrap_or(Err(TextureError::NotDecoded))?;
                budget.charge(image.decoded_bytes(), "the texture")?;
                if uses.get_mut(&index).is_some_and(|n| {
                    *n -= 1;
                    *n == 0
                }) {
                    shared.remove(&index);
                }
                image.name.clone_from(&label);
                Ok(image)
            });
            match result {
                Ok(image) => Some(image),
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

/// Decodes one encoded image found by another importer (FBX), its RGBA charged to `budget`;
/// the error says why in the words of a warning.
pub fn decode_texture(name: &str, bytes: &[u8], budget: &mut Budget) -> Result<Texture, TextureError> {
    let encoded = [Ok(Cow::Borrowed(bytes))];
    let rgba = decode_images(&encoded, budget.left())
        .pop()
        .unwrap_or(Err(TextureError::NotDecoded))?;
    budget.charge(rgba.len() as u64, "the texture")?;
    let (width, height) = rgba.dimensions();
    Ok(Texture::from_encoded(
        name.to_owned(),
        width,
        height,
        bytes.into(),
        rgba.into_raw(),
    ))
}

/// `bytes` decoded again for [`Texture::rgba8`], after the import's decode was handed over:
/// the same decoder on the same bytes, so the same pixels; white `width` × `height` if memory
/// runs out this time.
pub(crate) fn decode_again(bytes: &[u8], width: u32, height: u32) -> Vec<u8> {
    match decode_image(bytes, MAX_BYTES / 2) {
        Ok(rgba) if rgba.dimensions() == (width, height) => rgba.into_raw(),
        Ok(_) | Err(_) => {
            log::warn!("a {width}×{height} texture could not be decoded again; shown white");
            vec![255; width as usize * height as usize * 4]
        }
    }
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
fn texture_image(texture: &gltf::Texture, image_count: usize) -> Result<usize, TextureError> {
    let extension_source = ["EXT_texture_webp", "KHR_texture_basisu"].iter().find_map(|name| {
        texture
            .extension_value(name)
            .and_then(|e| e.get("source"))
            .and_then(serde_json::Value::as_u64)
    });
    let index = match (extension_source, texture.source()) {
        (Some(index), _) => index as usize,
        (None, Some(image)) => image.index(),
        (None, None) => return Err(TextureError::NoImage),
    };
    if index >= image_count {
        return Err(TextureError::MissingImage(index));
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
) -> Result<Cow<'b, [u8]>, TextureError> {
    match (&image.buffer_view, &image.uri) {
        (Some(view), _) => {
            let view = document
                .views()
                .nth(view.value())
                .ok_or(TextureError::MissingView(view.value()))?;
            Ok(Cow::Borrowed(buffers.view(&view).map_err(TextureError::Buffer)?))
        }
        (None, Some(uri)) => Ok(Cow::Owned(read_uri(uri, base_dir)?)),
        (None, None) => Err(TextureError::NoSource),
    }
}

/// Decodes `encoded` images side by side, on up to one thread per core: a rig with dozens of
/// textures (an avatar's) would otherwise decode them one after another on one core. The
/// decoded images together take at most `budget_left` bytes: each image's RGBA size, read from
/// its header, is taken from that allowance in file order before any is decoded, so which
/// images fit does not depend on which thread finishes first.
fn decode_images(
    encoded: &[Result<Cow<[u8]>, TextureError>],
    budget_left: u64,
) -> Vec<Result<image::RgbaImage, TextureError>> {
    let mut left = budget_left;
    let sized: Vec<Result<&[u8], TextureError>> = encoded
        .iter()
        .map(|bytes| {
            let bytes = bytes.as_ref().map_err(Clone::clone)?;
            let (width, height) = image_dimensions(bytes)?;
            let rgba = u64::from(width) * u64::from(height) * 4;
            left = left
                .checked_sub(rgba)
                .ok_or(TextureError::OverBudget { width, height })?;
            Ok(bytes.as_ref())
        })
        .collect();
    // What one decoder may allocate on its way (a format's own buffers before RGBA).
    let alloc_limit = (MAX_BYTES / 2).min(budget_left);
    let decode = |bytes: &Result<&[u8], TextureError>| decode_image(bytes.clone()?, alloc_limit);
    sized
        .par_iter()
        .map(|bytes| {
            // A decoder that panics fails its image, not the load; it only reads the shared
            // error (an earlier refusal), so nothing it could leave half-changed is seen again.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode(bytes)))
                .unwrap_or_else(|_| Err(TextureError::Panicked))
        })
        .collect()
}

/// The width and height an encoded image (PNG, JPEG, WebP, or KTX2 Basis Universal) says it
/// has, from its header, checked against the largest side decoded.
fn image_dimensions(bytes: &[u8]) -> Result<(u32, u32), TextureError> {
    let (width, height) = if bytes.starts_with(&KTX2_MAGIC) {
        ktx2_transcoder(bytes)?.base_dimensions()
    } else {
        image::ImageReader::new(std::io::Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| TextureError::Read(Arc::new(e)))?
            .into_dimensions()
            .map_err(|e| TextureError::Decode(Arc::new(e)))?
    };
    if width == 0 || height == 0 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
        return Err(TextureError::Size { width, height });
    }
    Ok((width, height))
}

/// Decodes one image (its size checked by [`image_dimensions`]) to RGBA8, the decoder allowed
/// `alloc_limit` bytes.
fn decode_image(bytes: &[u8], alloc_limit: u64) -> Result<image::RgbaImage, TextureError> {
    if bytes.starts_with(&KTX2_MAGIC) {
        return decode_ktx2(bytes);
    }
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| TextureError::Read(Arc::new(e)))?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(alloc_limit);
    reader.limits(limits);
    let decoded = reader.decode().map_err(|e| TextureError::Decode(Arc::new(e)))?;
    Ok(decoded.into_rgba8())
}

/// The first bytes of every KTX2 file.
const KTX2_MAGIC: [u8; 12] = [0xAB, 0x4B, 0x54, 0x58, 0x20, 0x32, 0x30, 0xBB, 0x0D, 0x0A, 0x1A, 0x0A];

fn ktx2_transcoder(bytes: &[u8]) -> Result<basisu::Transcoder<'_>, TextureError> {
    basisu::Transcoder::new(bytes).map_err(|e| TextureError::Ktx2Container(format!("{e:?}")))
}

/// A KTX2 Basis Universal image (KHR_texture_basisu, UASTC or ETC1S) transcoded to RGBA8: its
/// first level.
fn decode_ktx2(bytes: &[u8]) -> Result<image::RgbaImage, TextureError> {
    let transcoder = ktx2_transcoder(bytes)?;
    let (width, height) = transcoder.base_dimensions();
    let rgba = transcoder
        .transcode(0, basisu::TargetFormat::Rgba32, basisu::DecodeFlags::NONE)
        .map_err(|e| TextureError::Ktx2Transcode(format!("{e:?}")))?;
    image::RgbaImage::from_raw(width, height, rgba).ok_or(TextureError::Ktx2Size { width, height })
}

/// A material as drawn: base color (factor, texture, its texture coordinates), metallic and
/// roughness, normal, occlusion and emissive textures, alpha, and whether it is lit. A texture
/// the file names that is not there, or that reads coordinates Rigscope does not carry
/// (`TEXCOORD_2` and up), is left out with a warning.
pub fn read_material(material: &gltf::Material, texture_count: usize, warnings: &mut Vec<String>) -> Material {
    let name = material.name().unwrap_or("material").to_owned();
    let label = match material.index() {
        Some(index) => format!("material {index} ({name})"),
        None => format!("material ({name})"),
    };
    let mut checked = |what: &str, info: Option<(usize, UvTransform)>| -> Option<TextureRef> {
        let (texture, uv) = info?;
        if texture >= texture_count {
            warnings.push(format!(
                "{label}: its {what} texture {texture} does not exist; drawn without it"
            ));
            return None;
        }
        if uv.set > 1 {
            warnings.push(format!(
                "{label}: its {what} texture reads TEXCOORD_{}, and only TEXCOORD_0 and TEXCOORD_1 are \
                 drawn; drawn without it",
                uv.set
            ));
            return None;
        }
        Some(TextureRef { texture, uv })
    };
    let unit = |v: f32, default: f32| if v.is_finite() { v.clamp(0.0, 1.0) } else { default };
    let pbr = material.pbr_metallic_roughness();
    let info = |i: &gltf::texture::Info| (i.texture().index(), uv_transform(i));
    let base_color = checked("base color", pbr.base_color_texture().as_ref().map(info));
    let metallic_roughness = checked(
        "metallic-roughness",
        pbr.metallic_roughness_texture().as_ref().map(info),
    );
    let emissive_texture = checked("emissive", material.emissive_texture().as_ref().map(info));
    let normal = material.normal_texture();
    let normal_texture = checked(
        "normal",
        normal.as_ref().map(|n| {
            let transform = n.extension_value("KHR_texture_transform");
            (n.texture().index(), json_uv_transform(n.tex_coord(), transform))
        }),
    );
    let occlusion = material.occlusion_texture();
    let occlusion_texture = checked(
        "occlusion",
        occlusion.as_ref().map(|o| {
            let transform = o.extension_value("KHR_texture_transform");
            (o.texture().index(), json_uv_transform(o.tex_coord(), transform))
        }),
    );
    let specular = material.specular();
    let specular = Specular {
        factor: unit(specular.as_ref().map_or(1.0, |s| s.specular_factor()), 1.0),
        texture: checked(
            "specular",
            specular.as_ref().and_then(|s| s.specular_texture()).as_ref().map(info),
        ),
        color: (specular.as_ref())
            .map(|s| Vec3::from(s.specular_color_factor()))
            .filter(|c| c.is_finite() && c.min_element() >= 0.0)
            .unwrap_or(Vec3::ONE),
        color_texture: checked(
            "specular color",
            specular
                .as_ref()
                .and_then(|s| s.specular_color_texture())
                .as_ref()
                .map(info),
        ),
        ior: material.ior().filter(|n| *n == 0.0 || *n >= 1.0).unwrap_or(DEFAULT_IOR),
    };
    let (alpha_mode, alpha_cutoff) = match material.alpha_mode() {
        gltf::material::AlphaMode::Opaque => (AlphaMode::Opaque, 0.5),
        gltf::material::AlphaMode::Mask => (AlphaMode::Mask, material.alpha_cutoff().unwrap_or(0.5)),
        gltf::material::AlphaMode::Blend => (AlphaMode::Blend, 0.5),
    };
    let emissive = Vec3::from(material.emissive_factor()) * material.emissive_strength().unwrap_or(1.0);
    Material {
        name,
        base_color: Vec4::from(pbr.base_color_factor()),
        base_color_texture: base_color.map(|t| t.texture),
        base_color_uv: base_color.map_or(UvTransform::default(), |t| t.uv),
        metallic: unit(pbr.metallic_factor(), 1.0),
        roughness: unit(pbr.roughness_factor(), 1.0),
        metallic_roughness_texture: metallic_roughness,
        normal_scale: normal
            .as_ref()
            .map(|n| n.scale())
            .filter(|s| s.is_finite())
            .unwrap_or(1.0),
        normal_texture,
        occlusion_strength: unit(occlusion.as_ref().map_or(1.0, |o| o.strength()), 1.0),
        occlusion_texture,
        emissive_texture,
        double_sided: material.double_sided(),
        alpha_mode,
        alpha_cutoff,
        emissive: if emissive.is_finite() { emissive } else { Vec3::ZERO },
        unlit: material.unlit(),
        specular,
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

/// [`uv_transform`] for the normal and occlusion textures, whose KHR_texture_transform the
/// `gltf` crate leaves as JSON: members of the wrong type are ignored, as missing ones are.
fn json_uv_transform(tex_coord: u32, transform: Option<&serde_json::Value>) -> UvTransform {
    let Some(transform) = transform else {
        return UvTransform {
            set: tex_coord,
            ..UvTransform::default()
        };
    };
    let number = |v: &serde_json::Value| v.as_f64().map(|v| v as f32).filter(|v| v.is_finite());
    let pair = |key: &str| -> Option<Vec2> {
        match transform.get(key)?.as_array()?.as_slice() {
            [x, y] => Some(Vec2::new(number(x)?, number(y)?)),
            _ => None,
        }
    };
    let set = transform.get("texCoord").and_then(serde_json::Value::as_u64);
    UvTransform {
        set: set.and_then(|s| u32::try_from(s).ok()).unwrap_or(tex_coord),
        offset: pair("offset").unwrap_or(Vec2::ZERO),
        rotation: transform.get("rotation").and_then(number).unwrap_or(0.0),
        scale: pair("scale").unwrap_or(Vec2::ONE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG of `side`×`side` white pixels.
    fn png(side: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        image::RgbaImage::from_pixel(side, side, image::Rgba([255; 4]))
            .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
            .unwrap();
        bytes
    }

    #[test]
    fn images_that_cannot_be_decoded_or_do_not_fit_are_refused_by_kind() {
        let good = png(12);
        let broken = b"\x89PNG\r\n\x1a\nthis is not a png";
        let encoded = [
            Ok(Cow::from(&good[..])),
            Ok(Cow::from(&broken[..])),
            Ok(Cow::from(&good[..])),
            Err(TextureError::NoSource),
        ];
        // Room for the first image's 576 RGBA bytes, and not for the third's after it.
        let decoded = decode_images(&encoded, 1000);
        assert_eq!(decoded[0].as_ref().unwrap().dimensions(), (12, 12));
        assert!(matches!(decoded[1], Err(TextureError::Decode(_))), "{:?}", decoded[1]);
        assert!(
            matches!(decoded[2], Err(TextureError::OverBudget { width: 12, height: 12 })),
            "{:?}",
            decoded[2]
        );
        assert!(matches!(decoded[3], Err(TextureError::NoSource)), "{:?}", decoded[3]);
    }
}
