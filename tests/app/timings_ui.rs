//! The Timings panel shows what the frame loop recorded: opened like a person would, its stage
//! rows, medians and rig facts found by their text.

use crate::common;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rigscope::skin::{SkinningMethod, SkinningPath};
use rigscope::timings::{FrameTimings, Stage, format_seconds, mebibytes};
use rigscope::ui::UiState;
use rigscope::ui::timings::GPU_PASS_UNSUPPORTED;
use rigscope::viewer::Viewer;

fn harness<'a>(viewer: Viewer) -> Harness<'a, (Viewer, UiState)> {
    common::main_window(viewer, 1400.0, 1600.0)
}

/// Three frames whose palette build took 1, 2 and 9 µs (median 2 µs, newest 9 µs).
fn record_frames(viewer: &mut Viewer) {
    for micros in [1.0, 2.0, 9.0] {
        let mut frame = FrameTimings::default();
        frame.set(Stage::Palette, Some(micros * 1e-6));
        frame.set(Stage::CpuSkinning, Some(micros * 3e-6));
        frame.set(Stage::Frame, Some(0.02));
        viewer.diagnostics.timings.record(frame);
    }
}

#[test]
fn the_panel_shows_recorded_stages_and_says_when_gpu_timing_is_unsupported() {
    let mut viewer = Viewer::new(common::load_demo(), None);
    viewer.set_skinning(SkinningPath::Cpu, SkinningMethod::Lbs);
    record_frames(&mut viewer);
    viewer.diagnostics.timings.gpu_timestamps = false;
    let mut harness = harness(viewer);
    harness.run();
    harness.get_by_label("Timings").click();
    harness.run();
    harness.get_by_label("Palette build");
    harness.get_by_label(&format_seconds(9e-6));
    harness.get_by_label(&format_seconds(2e-6));
    // CPU skinning is listed on the CPU path: newest 27 µs, median 6 µs.
    harness.get_by_label("CPU skinning");
    harness.get_by_label(&format_seconds(27e-6));
    harness.get_by_label(&format_seconds(6e-6));
    harness.get_by_label(GPU_PASS_UNSUPPORTED);
    harness.get_by_label("50.0 FPS · frame 20.00 ms (median of 3 frames)");
    let vertices = harness.state().0.rig().vertex_count().to_string();
    assert!(harness.query_all_by_label(&vertices).count() >= 1);
    harness.get_by_label("Copy as CSV");
}

#[test]
fn without_the_cpu_path_no_cpu_skinning_row_is_shown() {
    let mut viewer = Viewer::new(common::load_demo(), None);
    record_frames(&mut viewer);
    viewer.diagnostics.timings.gpu_timestamps = true;
    let mut harness = harness(viewer);
    harness.run();
    harness.get_by_label("Timings").click();
    harness.run();
    harness.get_by_label("Palette build");
    assert!(harness.query_by_label("CPU skinning").is_none());
    assert!(harness.query_by_label(GPU_PASS_UNSUPPORTED).is_none());
    harness.get_by_label("GPU scene pass");
}

#[test]
fn the_panel_shows_memory_the_data_and_the_gpu_hold() {
    let mut viewer = Viewer::new(common::load_demo(), None);
    record_frames(&mut viewer);
    // Sizes no other row could show: 3 MiB of buffers and 64 MiB of textures.
    viewer.diagnostics.gpu_memory = Some(rigscope::render::GpuMemory {
        buffers: 3 << 20,
        textures: 64 << 20,
    });
    let data = mebibytes(viewer.rig().data_bytes());
    let mut harness = harness(viewer);
    harness.run();
    harness.get_by_label("Timings").click();
    harness.run();
    harness.get_by_label("Resident memory");
    harness.get_by_label("GPU buffer bytes");
    harness.get_by_label("3.0 MiB");
    harness.get_by_label("GPU texture bytes");
    harness.get_by_label("64.0 MiB");
    harness.get_by_label("The data's own size");
    assert!(harness.query_all_by_label(&data).count() >= 1, "{data}");
    // Linux reads the kernel's figures: a resident size and a peak, not a dash.
    if cfg!(target_os = "linux") {
        assert!(harness.query_all_by_label_contains("MiB (peak ").count() == 1);
    }
}
