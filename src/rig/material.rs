//! Materials as files describe them (glTF's metallic-roughness model), and their textures.

use glam::{Vec2, Vec3, Vec4};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone)]
pub struct Material {
    pub name: String,
    pub base_color: Vec4,
    pub base_color_texture: Option<usize>,
    /// The texture coordinates the base color texture reads, as the file declares them. The
    /// importer has already applied them: a primitive's `uvs` are that set, transformed.
    pub base_color_uv: UvTransform,
    /// How metallic the surface is (0 dielectric, 1 metal), multiplied by the blue channel of
    /// the metallic-roughness texture.
    pub metallic: f32,
    /// Perceptual roughness (0 mirror, 1 rough), multiplied by that texture's green channel.
    pub roughness: f32,
    pub metallic_roughness_texture: Option<TextureRef>,
    /// A tangent-space normal map; `normal_scale` scales its x and y.
    pub normal_texture: Option<TextureRef>,
    pub normal_scale: f32,
    /// Ambient occlusion in the red channel, applied at `occlusion_strength` (0 none, 1 full).
    pub occlusion_texture: Option<TextureRef>,
    pub occlusion_strength: f32,
    /// Multiplied by `emissive`.
    pub emissive_texture: Option<TextureRef>,
    pub double_sided: bool,
    pub alpha_mode: AlphaMode,
    /// Alpha below which a `Mask` material discards the fragment.
    pub alpha_cutoff: f32,
    /// Emitted color (emissive factor × KHR_materials_emissive_strength).
    pub emissive: Vec3,
    /// KHR_materials_unlit: the base color is shown as it is, without lighting.
    pub unlit: bool,
    /// KHR_materials_specular and KHR_materials_ior: the dielectric's specular layer.
    pub specular: Specular,
}

/// The dielectric part's specular layer (KHR_materials_specular, KHR_materials_ior): its
/// strength and its color at normal incidence. The defaults are glTF's own dielectric (index
/// 1.5, F0 0.04, full strength).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Specular {
    /// How strong the layer is (0 none: a purely diffuse dielectric), times the alpha of
    /// `texture`.
    pub factor: f32,
    pub texture: Option<TextureRef>,
    /// The layer's color at normal incidence, times the RGB of `color_texture` (sRGB).
    pub color: Vec3,
    pub color_texture: Option<TextureRef>,
    /// The index of refraction, which gives the reflectance at normal incidence.
    pub ior: f32,
}

impl Default for Specular {
    fn default() -> Self {
        Specular {
            factor: 1.0,
            texture: None,
            color: Vec3::ONE,
            color_texture: None,
            ior: DEFAULT_IOR,
        }
    }
}

/// glTF's index of refraction where a file gives none.
pub const DEFAULT_IOR: f32 = 1.5;

impl Specular {
    /// The reflectance at normal incidence of a dielectric of index `ior` in air: ((n − 1) /
    /// (n + 1))². An index of 0 or infinity gives 1: a specular-glossiness conversion's way of
    /// saying that the specular color alone is F0.
    pub fn f0_of_ior(ior: f32) -> f32 {
        let r = (ior - 1.0) / (ior + 1.0);
        if r.is_finite() { r * r } else { 1.0 }
    }

    /// The layer's F0 color before its texture, as the shader starts from: the index's
    /// reflectance tinted by `color`.
    pub fn f0_color(&self) -> Vec3 {
        self.color * Specular::f0_of_ior(self.ior)
    }

    /// Whether the layer is glTF's plain dielectric, which a file need not spell out.
    pub fn is_default(&self) -> bool {
        *self == Specular::default()
    }
}

impl Default for Material {
    fn default() -> Self {
        Material {
            name: "default".into(),
            base_color: Vec4::new(0.8, 0.8, 0.8, 1.0),
            base_color_texture: None,
            base_color_uv: UvTransform::default(),
            // A plain dielectric, as meshes without a material were drawn before materials were
            // physically based (glTF's own default, metallic 1, is read from a file's material).
            metallic: 0.0,
            roughness: 0.5,
            metallic_roughness_texture: None,
            normal_texture: None,
            normal_scale: 1.0,
            occlusion_texture: None,
            occlusion_strength: 1.0,
            emissive_texture: None,
            double_sided: false,
            alpha_mode: AlphaMode::Opaque,
            alpha_cutoff: 0.5,
            emissive: Vec3::ZERO,
            unlit: false,
            specular: Specular::default(),
        }
    }
}

/// How a material uses the base color's alpha.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AlphaMode {
    #[default]
    Opaque,
    Mask,
    Blend,
}

/// A texture's coordinate set and its KHR_texture_transform (offset, counter-clockwise
/// rotation in radians, scale).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UvTransform {
    pub set: u32,
    pub offset: Vec2,
    pub rotation: f32,
    pub scale: Vec2,
}

impl Default for UvTransform {
    fn default() -> Self {
        UvTransform {
            set: 0,
            offset: Vec2::ZERO,
            rotation: 0.0,
            scale: Vec2::ONE,
        }
    }
}

impl UvTransform {
    /// `uv` moved as KHR_texture_transform says: translation · rotation · scale, with the
    /// rotation matrix rows (cos, sin) and (−sin, cos).
    pub fn apply(&self, uv: Vec2) -> Vec2 {
        let (sin, cos) = self.rotation.sin_cos();
        let scaled = uv * self.scale;
        Vec2::new(cos * scaled.x + sin * scaled.y, -sin * scaled.x + cos * scaled.y) + self.offset
    }

    pub fn is_identity(&self) -> bool {
        self.offset == Vec2::ZERO && self.rotation == 0.0 && self.scale == Vec2::ONE
    }

    /// [`UvTransform::apply`] as the rows of a 3×2 matrix: `uv' = (row0 · (u, v, 1), row1 ·
    /// (u, v, 1))`, which the shader reads.
    pub fn rows(&self) -> [Vec3; 2] {
        let (sin, cos) = self.rotation.sin_cos();
        let s = self.scale;
        [
            Vec3::new(cos * s.x, sin * s.y, self.offset.x),
            Vec3::new(-sin * s.x, cos * s.y, self.offset.y),
        ]
    }
}

/// A texture a material samples, and the coordinates it reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextureRef {
    /// Index into `Rig::textures`.
    pub texture: usize,
    pub uv: UvTransform,
}

/// An sRGB RGBA8 image. A file's image keeps only its encoded bytes once its first decode
/// has been handed over (to the GPU upload, or to whichever command asks first): the decoded
/// pixels of a 4096² texture are 64 MiB, its JPEG a few, and only the renderer, `export`,
/// `diff` and Save as… read pixels, each once.
#[derive(Debug, Clone)]
pub struct Texture {
    pub name: String,
    pub width: u32,
    pub height: u32,
    pixels: Pixels,
}

#[derive(Debug, Clone)]
enum Pixels {
    /// Made in memory (the demo rig, a stand-in): nothing to decode them from again.
    Kept(Arc<[u8]>),
    /// The file's encoded image, and its first decode until someone takes it. Clones share
    /// the slot, so a rig copied before the upload does not keep a second 64 MiB alive.
    Encoded {
        bytes: Arc<[u8]>,
        first: Arc<Mutex<Option<Vec<u8>>>>,
    },
}

impl Texture {
    /// A texture whose `rgba8` pixels (`width` × `height` × 4 bytes) live only in memory.
    pub fn from_rgba8(name: impl Into<String>, width: u32, height: u32, rgba8: Vec<u8>) -> Texture {
        Texture {
            name: name.into(),
            width,
            height,
            pixels: Pixels::Kept(rgba8.into()),
        }
    }

    /// A file's image: its `encoded` bytes (PNG, JPEG, WebP, KTX2) and their decode, `rgba8`,
    /// which the first call of [`Texture::rgba8`] takes.
    pub(crate) fn from_encoded(name: String, width: u32, height: u32, encoded: Arc<[u8]>, rgba8: Vec<u8>) -> Texture {
        Texture {
            name,
            width,
            height,
            pixels: Pixels::Encoded {
                bytes: encoded,
                first: Arc::new(Mutex::new(Some(rgba8))),
            },
        }
    }

    /// The pixels, row by row, 4 bytes each: for a file's image the import's decode the first
    /// time, then a new decode of the file's bytes each time (they decoded once, so only a
    /// failure to allocate could stop them; the image is then white).
    pub fn rgba8(&self) -> Cow<'_, [u8]> {
        match &self.pixels {
            Pixels::Kept(rgba8) => Cow::Borrowed(rgba8),
            Pixels::Encoded { bytes, first } => {
                let taken = first.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
                Cow::Owned(
                    taken.unwrap_or_else(|| crate::rig::import::material::decode_again(bytes, self.width, self.height)),
                )
            }
        }
    }

    /// Whether decoded pixels are held in memory: always for a texture made in memory, and for
    /// a file's image until its first decode has been taken.
    pub fn holds_pixels(&self) -> bool {
        match &self.pixels {
            Pixels::Kept(_) => true,
            Pixels::Encoded { first, .. } => first.lock().map_or(true, |slot| slot.is_some()),
        }
    }

    /// The file's encoded image, when the texture came from one.
    pub fn encoded(&self) -> Option<&[u8]> {
        match &self.pixels {
            Pixels::Kept(_) => None,
            Pixels::Encoded { bytes, .. } => Some(bytes),
        }
    }

    /// Bytes of the decoded image (4 a pixel), held or not.
    pub fn decoded_bytes(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height) * 4
    }
}
