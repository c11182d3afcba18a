//! The frame's and each draw's uniforms as the shaders read them (their layout is checked
//! against the WGSL by `shader_check`).

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec4};

/// "No joint selected" in the draw uniform.
pub(super) const NO_JOINT: u32 = u32::MAX;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct FrameUniform {
    pub(in crate::render) view_proj: Mat4,
    pub(in crate::render) camera_position: Vec4,
    pub(in crate::render) light_direction: Vec4,
    /// x: the view flags (`ViewOptions::shader_flags`); the mode is the pipeline's. y: the
    /// shaded view's tone curve (`Tonemap::shader_code`). z: what lights it
    /// (`Lighting::shader_code`).
    pub(in crate::render) view: [u32; 4],
    /// x: the shaded view's exposure as a factor (`ToneOptions::scale`).
    pub(in crate::render) tone: Vec4,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct DrawUniform {
    pub(in crate::render) model: Mat4,
    pub(in crate::render) base_color: Vec4,
    pub(in crate::render) material: Vec4,
    pub(in crate::render) skin: [u32; 4],
    /// x: the draw's bind scale (see `GpuDraw::bind_scale`).
    pub(in crate::render) bind: Vec4,
    /// An onion-skin ghost's tint and opacity (read with `DRAW_GHOST`).
    pub(in crate::render) ghost: Vec4,
    pub(in crate::render) shading: ShadingUniform,
}

/// The material's shading in the draw uniform (`render::pbr::MaterialShading`): factors, the
/// textures sampled and their transforms. The WGSL `Draw` lists these members itself.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct ShadingUniform {
    pub(in crate::render) pbr: Vec4,
    pub(in crate::render) maps: [u32; 4],
    pub(in crate::render) specular: Vec4,
    pub(in crate::render) uv_rows: [Vec4; 2 * crate::render::pbr::MAP_SLOTS],
}
