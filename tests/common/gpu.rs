//! The GPU for tests: a headless adapter, or a skip with a printed reason on a machine that has
//! none, unless `RIGSCOPE_REQUIRE_ADAPTER` is set (as CI does), where a missing adapter fails;
//! and the sRGB conversions that pixel checks need.

#![allow(dead_code)]

use rigscope::render::{Gpu, REQUIRE_ADAPTER_ENV};

pub fn gpu_or_skip() -> Option<Gpu> {
    match Gpu::headless() {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var_os(REQUIRE_ADAPTER_ENV).is_some() => {
            panic!("{REQUIRE_ADAPTER_ENV} is set but no adapter is usable: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no graphics adapter on this machine ({e})");
            None
        }
    }
}

/// A linear color channel as an 8-bit sRGB value, as an sRGB render target stores it.
pub fn srgb8(linear: f32) -> u8 {
    let c = linear.clamp(0.0, 1.0);
    let s = if c <= 0.003_130_8 {
        12.92 * c
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    };
    (s * 255.0).round() as u8
}

/// An 8-bit sRGB value as a linear channel.
pub fn linear(srgb: u8) -> f32 {
    let s = srgb as f32 / 255.0;
    if s <= 0.04045 {
        s / 12.92
    } else {
        ((s + 0.055) / 1.055).powf(2.4)
    }
}

/// Points `viewer`'s camera at the origin along −Z from `distance`, with only the meshes drawn
/// (no grid, no skeleton), so that pixel checks know where each thing lands.
pub fn look_along_minus_z(viewer: &mut rigscope::viewer::Viewer, distance: f32) {
    viewer.view.camera.target = glam::Vec3::ZERO;
    viewer.view.camera.yaw = 0.0;
    viewer.view.camera.pitch = 0.0;
    viewer.view.camera.distance = distance;
    viewer.view.options.grid = false;
    viewer.view.options.skeleton.show = false;
}

/// A single-sided unit quad centred on the origin, facing +Z (counter-clockwise from +Z), drawn
/// with `material`, its texture coordinates running 0 → 1 along x and y.
pub fn unit_quad(material: usize) -> rigscope::rig::Primitive {
    use glam::{Vec2, Vec3};
    rigscope::rig::Primitive {
        positions: vec![
            Vec3::new(-0.5, -0.5, 0.0),
            Vec3::new(0.5, -0.5, 0.0),
            Vec3::new(0.5, 0.5, 0.0),
            Vec3::new(-0.5, 0.5, 0.0),
        ],
        normals: vec![Vec3::Z; 4],
        uvs: vec![Vec2::ZERO, Vec2::X, Vec2::ONE, Vec2::Y],
        uv_sets: Default::default(),
        tangents: Vec::new(),
        influences: None,
        indices: vec![0, 1, 2, 0, 2, 3],
        material: Some(material),
        colors: Vec::new(),
    }
}
