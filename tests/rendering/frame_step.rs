//! The one frame step every picture takes (window, `render`, `--sequence`, `--ui`, `bench`,
//! `bench --orbit`): a frame evaluates the pose once and, on the CPU path, skins it once,
//! whichever path and method draw it.

use crate::common;
use crate::common::gpu;

use rigscope::draw::{Clock, FrameStep, ViewRenderer};
use rigscope::render::Offscreen;
use rigscope::render::timer::GpuTimer;
use rigscope::skin::{SkinningMethod, SkinningPath};
use rigscope::viewer::{Viewer, WorkDone};

/// The work one frame through the step costs, drawn into `target` after moving by `clock`.
fn frame_work(
    gpu: &rigscope::render::Gpu,
    renderer: &mut ViewRenderer,
    target: &Offscreen,
    viewer: &mut Viewer,
    clock: Clock,
) -> WorkDone {
    let before = viewer.work_done();
    let mut timer = GpuTimer::new(gpu);
    let step = FrameStep {
        gpu,
        renderer,
        timer: timer.as_mut(),
        wait: true,
    };
    step.run(viewer, clock, target.aspect(), |frame| {
        let (renderer, viewer) = (&*frame.renderer, frame.viewer);
        target.encode(frame.encoder, &mut |encoder, targets, view| {
            renderer.encode(encoder, targets, view, viewer, None, None)
        });
    })
    .expect("the frame is drawn");
    let after = viewer.work_done();
    WorkDone {
        evaluations: after.evaluations - before.evaluations,
        cpu_skinnings: after.cpu_skinnings - before.cpu_skinnings,
    }
}

#[test]
fn a_frame_evaluates_and_skins_once_on_every_path_and_method() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let target = Offscreen::new(&gpu, 64, 48).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    let mut viewer = Viewer::new(common::load_demo(), None);
    for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
        for method in [SkinningMethod::Lbs, SkinningMethod::Dqs] {
            viewer.set_skinning(path, method);
            // The first frame after a switch catches up with it.
            frame_work(&gpu, &mut renderer, &target, &mut viewer, Clock::Still);
            let skinnings = u64::from(path == SkinningPath::Cpu);
            for frame in 0..3 {
                let work = frame_work(&gpu, &mut renderer, &target, &mut viewer, Clock::Advance(1.0 / 60.0));
                assert_eq!(
                    work,
                    WorkDone {
                        evaluations: 1,
                        cpu_skinnings: skinnings
                    },
                    "{path:?} {method:?}, frame {frame}"
                );
            }
            let work = frame_work(&gpu, &mut renderer, &target, &mut viewer, Clock::Seek(0.25));
            assert_eq!(
                work,
                WorkDone {
                    evaluations: 1,
                    cpu_skinnings: skinnings
                },
                "{path:?} {method:?}, a sequence's frame"
            );
            let still = frame_work(&gpu, &mut renderer, &target, &mut viewer, Clock::Still);
            assert_eq!(
                still,
                WorkDone::default(),
                "{path:?} {method:?}: nothing moved, nothing redone"
            );
        }
    }
}

#[test]
fn a_rendered_image_costs_one_evaluation() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let target = Offscreen::new(&gpu, 64, 48).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    renderer.render_image(&gpu, &target, &mut viewer, None, None).unwrap();
    let before = viewer.work_done();
    renderer
        .render_image_at(&gpu, &target, &mut viewer, Clock::Seek(0.5), None, None)
        .unwrap();
    let after = viewer.work_done();
    assert_eq!(after.evaluations - before.evaluations, 1);
    assert_eq!(after.cpu_skinnings - before.cpu_skinnings, 1);
}

/// `bench` takes turns between the paths frame by frame: switching to the CPU path must not
/// skin the previous moment before the clock moves and the new one is skinned again.
#[test]
fn paths_taking_turns_skin_once_per_frame() {
    let Some(gpu) = gpu::gpu_or_skip() else { return };
    let target = Offscreen::new(&gpu, 64, 48).unwrap();
    let mut renderer = ViewRenderer::offscreen(&gpu);
    let mut viewer = Viewer::new(common::load_demo(), None);
    for method in [SkinningMethod::Lbs, SkinningMethod::Dqs] {
        for frame in 0..4 {
            for path in [SkinningPath::Gpu, SkinningPath::Cpu] {
                viewer.set_skinning(path, method);
                let work = frame_work(&gpu, &mut renderer, &target, &mut viewer, Clock::Advance(1.0 / 60.0));
                let expected = WorkDone {
                    evaluations: 1,
                    cpu_skinnings: u64::from(path == SkinningPath::Cpu),
                };
                assert_eq!(work, expected, "{path:?} {method:?}, frame {frame}");
            }
        }
    }
}
