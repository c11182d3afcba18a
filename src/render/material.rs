//! What a material and the transforms of a draw decide: the pipeline (culling, winding,
//! blending) and the flags the fragment shader reads (`DRAW_*` in `shaders/mesh.wgsl`).

use super::scene::ShadingUniform;
use crate::anim::properties::MaterialOverride;
use crate::rig::{AlphaMode, Material, MaterialTexture};
use glam::{Mat4, Vec4};

/// Discard fragments whose alpha is below the material's cutoff.
pub const DRAW_ALPHA_MASK: u32 = 1;
/// Show the base color without lighting (KHR_materials_unlit).
pub const DRAW_UNLIT: u32 = 2;
/// The draw's transforms mirror it and its pipeline does not cull: what the rasterizer calls a
/// back face is the side facing out.
pub const DRAW_MIRRORED: u32 = 4;
/// The mesh has no skin and follows its node whole, as if weighted 1 to it: the weight-sum view
/// shows it as summing to 1 rather than to 0.
pub const DRAW_RIGID: u32 = 8;
/// An onion-skin ghost: drawn blended, in its tint, at its opacity (`DrawUniform::ghost`).
pub const DRAW_GHOST: u32 = 16;
/// How far a ghost's color is pulled from its view's color towards its tint.
pub const GHOST_TINT_SHARE: f32 = 0.6;

/// Which way a draw's transforms turn its triangles (glTF: a negative determinant flips the
/// winding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Winding {
    Kept,
    Flipped,
    /// Some joints mirror and others do not: no single winding is front.
    Mixed,
}

/// The winding of an unskinned draw placed by `model`, or of a skinned one whose vertices its
/// `palette` matrices move (then `model` places the skinned result).
pub fn winding(model: &Mat4, palette: Option<&[Mat4]>) -> Winding {
    let mirrors = |m: &Mat4| m.determinant() < 0.0;
    let Some(palette) = palette.filter(|p| !p.is_empty()) else {
        return if mirrors(model) {
            Winding::Flipped
        } else {
            Winding::Kept
        };
    };
    let flipped = palette.iter().filter(|m| mirrors(&(*model * **m))).count();
    match flipped {
        0 => Winding::Kept,
        n if n == palette.len() => Winding::Flipped,
        _ => Winding::Mixed,
    }
}

/// The render pipelines a mesh draw can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeshPipeline {
    /// Back faces culled, counter-clockwise front faces.
    Culled,
    /// Back faces culled, clockwise front faces (a mirrored draw).
    CulledMirrored,
    /// No culling.
    DoubleSided,
    /// Alpha blended over what is drawn, without writing depth; no culling.
    Blended,
}

/// The pipeline for a draw of `material` whose transforms turn it `winding`. A mixed winding is
/// drawn double-sided rather than with half its triangles inside out.
pub fn mesh_pipeline(material: &Material, winding: Winding) -> MeshPipeline {
    match (material.alpha_mode, material.double_sided, winding) {
        (AlphaMode::Blend, _, _) => MeshPipeline::Blended,
        (_, true, _) | (_, _, Winding::Mixed) => MeshPipeline::DoubleSided,
        (_, false, Winding::Kept) => MeshPipeline::Culled,
        (_, false, Winding::Flipped) => MeshPipeline::CulledMirrored,
    }
}

/// The shader's `DRAW_*` flags for a draw of `material` turned `winding`.
pub fn draw_flags(material: &Material, winding: Winding) -> u32 {
    let mut flags = 0;
    if material.alpha_mode == AlphaMode::Mask {
        flags |= DRAW_ALPHA_MASK;
    }
    if material.unlit {
        flags |= DRAW_UNLIT;
    }
    // A culled mirrored draw has its own pipeline, whose front faces are the clockwise ones.
    if winding == Winding::Flipped && mesh_pipeline(material, winding) != MeshPipeline::CulledMirrored {
        flags |= DRAW_MIRRORED;
    }
    flags
}

/// The material's alpha cutoff and emission, as the shader reads them.
pub fn material_uniform(material: &Material) -> Vec4 {
    material.emissive.extend(material.alpha_cutoff)
}

/// A draw's material fields (base color, [`material_uniform`], the shading's `pbr` and
/// `uv_rows`) with `overrides`' animated values in place of the material's. The base color
/// texture's transform is applied to the coordinates at load, so only the other textures'
/// transforms follow their tracks.
pub(crate) fn animated_material(
    material: &Material,
    overrides: &MaterialOverride,
    mut shading: ShadingUniform,
) -> (Vec4, Vec4, ShadingUniform) {
    let base_color = overrides.base_color.unwrap_or(material.base_color);
    let cutoff = overrides.alpha_cutoff.unwrap_or(material.alpha_cutoff);
    let pbr = shading.pbr;
    shading.pbr = Vec4::new(
        overrides.metallic.unwrap_or(pbr.x),
        overrides.roughness.unwrap_or(pbr.y),
        overrides.normal_scale.unwrap_or(pbr.z),
        overrides.occlusion_strength.unwrap_or(pbr.w),
    );
    // The order of `MaterialShading::uv_rows`.
    let textures = [
        MaterialTexture::MetallicRoughness,
        MaterialTexture::Normal,
        MaterialTexture::Occlusion,
        MaterialTexture::Emissive,
    ];
    for (k, texture) in textures.into_iter().enumerate() {
        if overrides.uv[texture as usize].is_some() {
            let rows = overrides.uv_of(material, texture).rows();
            shading.uv_rows[2 * k] = rows[0].extend(0.0);
            shading.uv_rows[2 * k + 1] = rows[1].extend(0.0);
        }
    }
    (base_color, overrides.emissive_of(material).extend(cutoff), shading)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn a_negative_determinant_flips_the_winding_and_mixed_joints_draw_double_sided() {
        let mirror = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
        let scaled = Mat4::from_scale(Vec3::splat(0.01));
        assert_eq!(winding(&scaled, None), Winding::Kept);
        assert_eq!(winding(&mirror, None), Winding::Flipped);
        // The mesh node's mirror undone by every joint: kept.
        assert_eq!(winding(&mirror, Some(&[mirror, mirror])), Winding::Kept);
        assert_eq!(winding(&Mat4::IDENTITY, Some(&[mirror, mirror])), Winding::Flipped);
        assert_eq!(
            winding(&Mat4::IDENTITY, Some(&[Mat4::IDENTITY, mirror])),
            Winding::Mixed
        );

        let single_sided = Material::default();
        assert_eq!(
            mesh_pipeline(&single_sided, Winding::Flipped),
            MeshPipeline::CulledMirrored
        );
        assert_eq!(mesh_pipeline(&single_sided, Winding::Mixed), MeshPipeline::DoubleSided);
        let blended = Material {
            alpha_mode: AlphaMode::Blend,
            ..Material::default()
        };
        assert_eq!(mesh_pipeline(&blended, Winding::Kept), MeshPipeline::Blended);
        assert_eq!(draw_flags(&single_sided, Winding::Flipped), 0);
        assert_eq!(draw_flags(&blended, Winding::Flipped), DRAW_MIRRORED);
    }
}
