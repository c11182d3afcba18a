//! The engine distance view: each vertex coloured by how far the engine chosen draws it from
//! the file's own drawing, against distances worked out by hand in f64.

use super::debugger::{assert_pixel_at, facing_shade, quads_in_a_row, two_joint_rig};
use crate::common::gpu;
use glam::{DVec3, Vec3};
use rigscope::draw::ViewRenderer;
use rigscope::engine::Engine;
use rigscope::render::views::engine_distance_color;
use rigscope::render::{Offscreen, ViewMode};
use rigscope::rig::{Channel, Clip, Interpolation, Property};
use rigscope::skin::{SkinningMethod, SkinningPath};
use rigscope::viewer::Viewer;

/// The tip joint's move over the clip: toward the camera, so that the quads stay in view.
const MOVE: [f64; 3] = [0.0, 0.0, 0.02];

/// Per quad, its weights on (root, tip) in the file and the one joint Unity at one skin weight
/// keeps (the larger).
const QUADS: [([f32; 2], usize); 3] = [([0.7, 0.3], 0), ([1.0, 0.0], 0), ([0.2, 0.8], 1)];

/// Three quads facing +Z, each weighted by [`QUADS`] on a root joint and a tip joint that
/// moves by [`MOVE`] over the one-second clip.
fn moving_tip_quads() -> rigscope::rig::Rig {
    let tip = Vec3::new(0.0, 1.0, 0.0);
    let clip = Clip {
        name: "move".into(),
        duration: 1.0,
        channels: vec![Channel {
            node: 2,
            property: Property::Translation,
            interpolation: Interpolation::Linear,
            times: vec![0.0, 1.0],
            values: vec![tip.extend(0.0), (tip + DVec3::from(MOVE).as_vec3()).extend(0.0)],
        }],
        source: None,
    };
    let quads = QUADS.map(|([root, tip], _)| [root, tip, 0.0, 0.0]);
    two_joint_rig(tip, quads_in_a_row(quads), vec![clip])
}

/// Per quad, the distance between the file's drawing and Unity's at one weight at time `t`
/// as a fraction of the height: the file moves a vertex by its tip weight times the tip's
/// move, Unity by all of it or none; the height is the quads' extent in y at rest.
fn by_hand(t: f64) -> [f64; 3] {
    let height = 1.0;
    let moved = DVec3::from(MOVE) * t;
    QUADS.map(|([_, tip], kept)| {
        let unity = if kept == 1 { 1.0 } else { 0.0 };
        (moved * f64::from(tip) - moved * unity).length() / height
    })
}

#[test]
fn the_engine_distance_view_colours_each_vertex_by_its_distance_from_the_files_drawing() {
    let mut viewer = Viewer::new(moving_tip_quads(), None);
    viewer.view.options.mode = ViewMode::EngineDistance;
    viewer.select_clip(Some(0));
    viewer.seek(0.75);
    // Without an engine: every vertex at 0.
    viewer.prepare_frame();
    let (_, distances) = viewer.engine_distances().expect("measured for the view");
    assert!(distances.of(0, 0).unwrap().iter().all(|&d| d == 0.0));
    assert_eq!(distances.farthest(), None);

    viewer.set_engine(Some(Engine::Unity1)).unwrap();
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        viewer.prepare_frame();
        let want = by_hand(0.75);
        let (_, distances) = viewer.engine_distances().unwrap();
        for (v, &got) in distances.of(0, 0).unwrap().iter().enumerate() {
            let expected = want[v / 4];
            assert!(
                (f64::from(got) - expected).abs() < 1e-6,
                "{path:?} vertex {v}: {got} instead of {expected}"
            );
        }
        let farthest = distances.farthest().unwrap();
        assert_eq!(farthest.vertex / 4, 0, "the quad weighted 0.3 on the tip is farthest");
        assert!((f64::from(farthest.distance) - want[0]).abs() < 1e-6);
    }

    // An engine that keeps every weight as the file has them draws every vertex in place.
    viewer.set_engine(Some(Engine::Godot)).unwrap();
    viewer.prepare_frame();
    let (_, distances) = viewer.engine_distances().unwrap();
    assert!(distances.of(0, 0).unwrap().iter().all(|&d| d.abs() < 1e-7));
}

#[test]
fn the_engine_distance_view_draws_the_distances_on_the_ramp_on_both_paths() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let mut viewer = Viewer::new(moving_tip_quads(), None);
    gpu::look_along_minus_z(&mut viewer, 6.0);
    viewer.view.options.mode = ViewMode::EngineDistance;
    viewer.select_clip(Some(0));
    viewer.set_engine(Some(Engine::Unity1)).unwrap();
    let target = Offscreen::new(&gpu, 300, 120).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        viewer.set_skinning(path, SkinningMethod::Lbs);
        for time in [0.25f32, 1.0] {
            viewer.seek(time);
            let image = renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
            let vp = viewer.view.camera.view_projection(target.aspect());
            let want = by_hand(f64::from(time));
            for (k, (_, kept)) in QUADS.into_iter().enumerate() {
                // Where Unity draws the quad's centre: moved with the tip or not at all.
                let moved = DVec3::from(MOVE).as_vec3() * time * kept as f32;
                let centre = Vec3::new(-1.5 + k as f32 * 1.05 + 0.475, 0.0, 0.0) + moved;
                let colour = facing_shade(engine_distance_color(want[k] as f32));
                let what = format!("{path:?} at {time} s, quad {k}");
                assert_pixel_at(&image, vp.project_point3(centre), colour, &what);
            }
        }
    }
}
