//! Engines in the window: the Engines panel's figures against the check and against distances
//! worked out by hand in f64, choosing a line, and comparing the file with an engine's drawing
//! of it (or two engines).

use super::engine_profiles::{fixture, follows, row, worst_over_turns};
use crate::common;
use egui_kittest::kittest::Queryable;
use glam::DVec3;
use rigscope::engine::Engine;
use rigscope::engine::check::check_engines;
use rigscope::render::ViewMode;
use rigscope::rig::Rig;
use rigscope::skin::{SkinningMethod, SkinningPath};
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
    // By hand: vertex 0 keeps 0.6 j0 + 0.4 j1 where the file binds six joints; the other
    // vertices keep their rows. At the clip's end j4 and j5 turn 0.3 of it; the audit's sweep
    // turns each joint alone, moving the file's and Unity's shares after it differently.
    let weights = [(0, 0.3), (1, 0.2), (2, 0.1), (3, 0.1), (4, 0.2), (5, 0.1)];
    let kept = [(0, 0.6), (1, 0.4)];
    let at_clip_end = (drawn(0, &weights) - drawn(0, &kept)).length() / HEIGHT;
    let at_a_turn = worst_over_turns(vertex(0), 6, &weights, &kept, HEIGHT);
    let by_hand = at_clip_end.max(at_a_turn);
    assert!(
        at_a_turn > at_clip_end,
        "a turned joint shows the dropped influences most"
    );
    assert_eq!(worst.vertex, 0);
    let turn = worst.turn.clone().expect("found at a turn of the sweep");
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
    assert_eq!((viewer.player().clip, viewer.player().time), (None, 0.0));
    assert_eq!(
        viewer.animation().overrides[turn.node],
        turn.joint_override(),
        "the sweep's bend is shown"
    );
    assert_eq!(
        viewer.history().undo_label(),
        Some(format!("bend {}", turn.joint).as_str())
    );
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

#[test]
fn the_file_compares_with_an_engines_drawing_of_it_and_two_engines_with_each_other() {
    let mut viewer = Viewer::new(rig(), None);
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    viewer.select_clip(Some(0));
    viewer.seek(1.0);
    viewer.compare_with_engine(Engine::Unity2).unwrap();
    assert_eq!(viewer.comparison().unwrap().engine(), Some(Engine::Unity2));
    let positions = |viewer: &mut Viewer| {
        viewer.prepare_frame();
        let rig = std::sync::Arc::clone(viewer.document().shown_rig().0);
        let mine = viewer.skin_on_cpu().positions(&rig, 0, 0).to_vec();
        let side = viewer.comparison().unwrap().other();
        (mine, side.last_skinned().positions(side.rig(), 0, 0).to_vec())
    };
    let close = |got: glam::Vec3, want: DVec3| (got.as_dvec3() - want).length() < 1e-5;
    // The file against Unity at two weights: vertex 0 as bound, then as Unity keeps it.
    let (file, unity2) = positions(&mut viewer);
    assert!(close(
        file[0],
        drawn(0, &[(0, 0.3), (1, 0.2), (2, 0.1), (3, 0.1), (4, 0.2), (5, 0.1)])
    ));
    assert!(close(unity2[0], drawn(0, &[(0, 0.6), (1, 0.4)])));
    assert!(close(unity2[3], drawn(3, &[(0, 0.4), (4, 0.6)])));
    // Two engines: Unity at one weight on this side keeps only j4 of vertex 3.
    viewer.set_engine(Some(Engine::Unity1)).unwrap();
    let (unity1, unity2_again) = positions(&mut viewer);
    assert!(close(unity1[3], drawn(3, &[(4, 1.0)])));
    assert_eq!(unity2_again, unity2);
    assert!(viewer.compare_with_engine(Engine::Filament).is_ok());
    let mut huge = Viewer::new(fixture(300, 299, &[row(&[(299, 1.0)])]), None);
    assert!(
        huge.compare_with_engine(Engine::Filament).is_err(),
        "Filament refuses 300 joints"
    );
    assert!(huge.comparison().is_none());
}

/// The distance view's values belong to the document they were measured for: opening another
/// file leaves none to read (its vertices are other vertices) until the view measures again.
#[test]
fn distances_of_a_closed_document_are_not_read_as_the_new_ones() {
    let mut viewer = Viewer::new(rig(), None);
    viewer.set_engine(Some(Engine::Unity2)).unwrap();
    viewer.view.options.mode = ViewMode::EngineDistance;
    viewer.select_clip(Some(0));
    viewer.seek(1.0);
    viewer.prepare_frame();
    assert!(viewer.engine_distances().is_some(), "measured for the fixture");
    let folder = common::temp_dir("engine-distance-open");
    let demo = folder.join("demo.glb");
    std::fs::write(&demo, rigscope::rig::demo::DEMO_GLB).unwrap();
    viewer.open_now(&demo).unwrap();
    assert!(
        viewer.engine_distances().is_none(),
        "none for the demo rig before it is measured"
    );
    assert!(viewer.engine_distance_height().is_none());
    viewer.prepare_frame();
    let (_, distances) = viewer.engine_distances().expect("measured for the demo rig");
    let demo_vertices: usize = (viewer.rig().instances.iter())
        .filter(|i| i.skin.is_some())
        .map(|i| {
            viewer.rig().meshes[i.mesh]
                .primitives
                .iter()
                .map(|p| p.vertex_count())
                .sum::<usize>()
        })
        .sum();
    assert!(distances.farthest().is_none_or(|f| f.vertex < demo_vertices));
    std::fs::remove_dir_all(&folder).unwrap();
}
