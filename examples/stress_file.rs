//! Writes the stress file of the memory figures in docs/performance.md: a skinned tube of a
//! million vertices and 64 joints with twelve materials, each showing a 4096² texture of its
//! own (the first on the tube), so that loading it decodes and uploads all twelve.
//!
//! `cargo run --release --example stress_file -- OUT.glb`

use rigscope::rig::{Material, Texture};

const VERTICES: usize = 1_000_000;
const JOINTS: usize = 64;
const TEXTURES: usize = 12;
const SIDE: u32 = 4096;

/// A pattern that PNG compresses well (the file stays small) and that differs per texture.
fn pattern(texture: usize) -> Vec<u8> {
    let side = SIDE as usize;
    let mut rgba = Vec::with_capacity(side * side * 4);
    for y in 0..side {
        for x in 0..side {
            rgba.extend([
                (x / 16) as u8 ^ texture as u8,
                (y / 16) as u8,
                ((x + y) / 32) as u8,
                255,
            ]);
        }
    }
    rgba
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).ok_or("usage: stress_file OUT.glb")?;
    let mut rig = rigscope::synthetic::skinned_tube(VERTICES, JOINTS);
    rig.textures = (0..TEXTURES)
        .map(|i| Texture::from_rgba8(format!("stress {i}"), SIDE, SIDE, pattern(i)))
        .collect();
    rig.materials = (0..TEXTURES)
        .map(|i| Material {
            name: format!("stress {i}"),
            base_color_texture: Some(i),
            ..Material::default()
        })
        .collect();
    for primitive in rig.meshes.iter_mut().flat_map(|m| &mut m.primitives) {
        primitive.material = Some(0);
    }
    let saved = rigscope::save::write_rig(&rig, std::path::Path::new(&out), &[], "rigscope stress_file")?;
    eprintln!(
        "{out}: {} vertices, {TEXTURES} textures of {SIDE}², {saved:?}",
        rig.vertex_count()
    );
    Ok(())
}
