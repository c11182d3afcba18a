//! Engines in the window: the Engines panel's figures against the check and against distances
//! worked out by hand in f64, and choosing a line.

use super::engine_profiles::{fixture, follows, row};
use crate::common;
use egui_kittest::kittest::Queryable;
use glam::DVec3;
use rigscope::engine::Engine;
use rigscope::engine::check::check_engines;
use rigscope::render::ViewMode;
use rigscope::rig::Rig;
use rigscope::viewer::{VertexRef, Viewer};

/// Six joints, j4 turned; four vertices at y = 0, 0.1, 0.2, 0.3 (a height of 0.3 at rest):
/// six influences (Unity at two weights keeps j0 and j1), all on j0, all on j4, and 0.4 j0 +
/// 0.6 j4 (Unity at one weight keeps j4 alone).
fn rig() -> Rig {
    fixture(
        6,
        4,
        &[
            row(&[(0, 0.3), (1, 0.2), (2, 0.1), (3, 0.1), (4, 0.2), (5, 0.1)]),
            row(&[(0, 1.0)]),
            row(&[(4, 1.0)]),
            row(&[(0, 0.4), (4, 0.6)]),
        ],
    )
}

const HEIGHT: f64 = 0.3;

fn vertex(v: usize) -> DVec3 {
    DVec3::new(1.0, v as f64 * 0.1, 0.0)
}

/// Where weights `(joint, weight)` put vertex `v` at the clip's end.
fn drawn(v: usize, weights: &[(u16, f64)]) -> DVec3 {
    weights.iter().map(|&(j, w)| follows(vertex(v), j, 4) * w).sum()
}

#[test]
fn the_engines_panel_lists_the_checks_worst_and_clicking_a_line_shows_it() {
    let rig = rig();
    let checks = check_engines(&rig, &Engine::ALL);
    let unity2 = checks.iter().find(|c| c.engine == Engine::Unity2.name()).unwrap();
    let worst = unity2.worst.clone().expect("Unity at two weights moves a vertex");
    // By hand: vertex 0 keeps 0.6 j0 + 0.4 j1 (neither turns) where the file turns 0.3 of it
    // with j4 and j5; farthest at the clip's end.
    let file = drawn(0, &[(0, 0.3), (1, 0.2), (2, 0.1), (3, 0.1), (4, 0.2), (5, 0.1)]);
    let unity = drawn(0, &[(0, 0.6), (1, 0.4)]);
    let by_hand = (file - unity).length() / HEIGHT;
    assert_eq!(
        (worst.vertex, worst.clip.as_deref(), worst.time),
        (0, Some("turn"), 1.0)
    );
    assert!(
        (worst.distance - by_hand).abs() < 1e-5 * by_hand,
        "{} against {by_hand}",
        worst.distance
    );

    let mut harness = common::main_window(Viewer::new(rig.clone(), None), 1400.0, 1000.0);
    harness.state_mut().1.engines_open = true;
    harness.run();
    let shown = format!("{:.2e} of the height", unity2.worst_distance());
    assert!(
        harness.query_all_by_label(&shown).count() >= 1,
        "the panel shows {shown}"
    );
    harness.get_by_label(Engine::Unity2.label()).click();
    harness.run();
    let viewer = &mut harness.state_mut().0;
    assert_eq!(viewer.view.engine, Some(Engine::Unity2));
    assert_eq!(viewer.view.options.mode, ViewMode::EngineDistance);
    assert_eq!((viewer.player().clip, viewer.player().time), (Some(0), 1.0));
    let inspected = VertexRef {
        instance: 0,
        primitive: 0,
        vertex: worst.vertex,
    };
    assert_eq!(viewer.inspected_vertex(), Some(inspected));
    // The view's own measurement at that pose names the same vertex and distance.
    viewer.prepare_frame();
    let (_, distances) = viewer.engine_distances().unwrap();
    let farthest = distances.farthest().unwrap();
    assert_eq!(farthest.vertex, 0);
    assert!((f64::from(farthest.fraction) - by_hand).abs() < 1e-5 * by_hand);
    assert!((viewer.engine_distance_height().unwrap() - HEIGHT).abs() < 1e-6);
}

