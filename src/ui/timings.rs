//! The Timings panel: frame time and FPS with a rolling graph, each stage of the frame now and
//! as a rolling median, what sizes the work, and a button that copies it all as CSV.

use crate::skin::SkinningPath;
use crate::timings::{ResidentMemory, RigFacts, Stage, Timings, format_seconds, mebibytes};
use crate::viewer::Viewer;

/// Frames the medians cover (two seconds at 60 FPS).
pub const MEDIAN_FRAMES: usize = 120;
/// Seconds of frame times the graph shows.
pub const GRAPH_SECONDS: f32 = 5.0;

pub const GPU_PASS_UNSUPPORTED: &str = "not supported by this adapter";

/// The stages the table lists, in frame order: every stage up to egui (the GPU wait and the
/// whole frame are shown apart).
const TABLE: &[Stage] = Stage::ALL.split_at(8).0;

pub fn timings_panel(ui: &mut egui::Ui, viewer: &Viewer) {
    egui::CollapsingHeader::new("Timings")
        .default_open(false)
        .show(ui, |ui| timings_contents(ui, viewer));
}

fn timings_contents(ui: &mut egui::Ui, viewer: &Viewer) {
    let timings = &viewer.diagnostics.timings;
    let frame = timings.median(Stage::Frame, MEDIAN_FRAMES);
    match frame {
        Some(frame) if frame > 0.0 => ui.label(format!(
            "{:.1} FPS · frame {} (median of {} frames)",
            1.0 / frame,
            format_seconds(frame),
            timings.len().min(MEDIAN_FRAMES)
        )),
        _ => ui.label("Waiting for frames…"),
    };
    frame_graph(ui, timings);

    egui::Grid::new("timings table")
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            ui.strong("Stage");
            ui.strong("Now");
            ui.strong("Median");
            ui.end_row();
            let cpu_path = viewer.skinning_path() == SkinningPath::Cpu;
            for &stage in TABLE {
                if matches!(stage, Stage::CpuSkinning | Stage::VertexUpload) && !cpu_path {
                    continue;
                }
                ui.label(stage.label());
                if stage == Stage::GpuPass && !timings.gpu_timestamps {
                    ui.label(GPU_PASS_UNSUPPORTED);
                    ui.label("");
                } else {
                    let now = timings.last().and_then(|f| f.get(stage));
                    // The GPU's answer arrives a frame or two late: show the newest one.
                    let now = if stage == Stage::GpuPass {
                        timings.latest(stage, 8)
                    } else {
                        now
                    };
                    ui.label(now.map_or("—".to_owned(), format_seconds));
                    ui.label(
                        timings
                            .median(stage, MEDIAN_FRAMES)
                            .map_or("—".to_owned(), format_seconds),
                    );
                }
                ui.end_row();
            }
        });
    if !viewer.diagnostics.timings.gpu_timestamps {
        ui.small(format!("GPU scene pass: timestamp queries {GPU_PASS_UNSUPPORTED}."));
    }

    let facts = RigFacts::of(viewer.rig());
    egui::Grid::new("timings facts").num_columns(2).show(ui, |ui| {
        for (label, value) in [
            ("Vertices", facts.vertices.to_string()),
            ("Skinned vertices", facts.skinned_vertices.to_string()),
            ("Joints (palette entries)", facts.joints.to_string()),
            ("Influences per vertex", facts.influences.to_string()),
            ("Palette bytes per frame", facts.palette_bytes.to_string()),
        ] {
            ui.label(label);
            ui.label(value);
            ui.end_row();
        }
        // Read as the panel is drawn, and only then: it is open for a person to look at.
        let resident = ResidentMemory::read().map_or("—".to_owned(), |r| {
            format!("{} (peak {})", mebibytes(r.now), mebibytes(r.peak))
        });
        let gpu = viewer.diagnostics.gpu_memory.unwrap_or_default();
        for (label, value) in [
            ("Resident memory", resident),
            ("The data's own size", mebibytes(facts.data_bytes)),
            ("GPU buffer bytes", mebibytes(gpu.buffers)),
            ("GPU texture bytes", mebibytes(gpu.textures)),
        ] {
            ui.label(label);
            ui.label(value);
            ui.end_row();
        }
    });
    if ui
        .button("Copy as CSV")
        .on_hover_text("Copies each stage's newest value and median, then every kept frame")
        .clicked()
    {
        ui.ctx().copy_text(timings.to_csv(MEDIAN_FRAMES, &facts));
    }
}

/// Frame times of the last few seconds as a line, newest at the right, with 60 and 30 FPS marks.
fn frame_graph(ui: &mut egui::Ui, timings: &Timings) {
    let width = ui.available_width().clamp(120.0, 400.0);
    let (rect, _) = ui.allocate_exact_size(egui::vec2(width, 60.0), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(rect, 2.0, visuals.extreme_bg_color);
    let mut seconds = 0.0f32;
    let mut points = Vec::new();
    let mut tallest = 1.0 / 30.0f32;
    for frame in timings.newest(timings.len()) {
        let Some(t) = frame.get(Stage::Frame) else { continue };
        if seconds > GRAPH_SECONDS {
            break;
        }
        seconds += t;
        tallest = tallest.max(t);
        points.push((seconds, t));
    }
    let scale = tallest * 1.1;
    let at = |age: f32, t: f32| {
        egui::pos2(
            rect.right() - age / GRAPH_SECONDS * rect.width(),
            rect.bottom() - (t / scale).min(1.0) * rect.height(),
        )
    };
    for (fps, color) in [
        (60.0, egui::Color32::from_rgb(80, 160, 80)),
        (30.0, egui::Color32::from_rgb(170, 130, 60)),
    ] {
        let y = at(0.0, 1.0 / fps).y;
        painter.line_segment(
            [egui::pos2(rect.left(), y), egui::pos2(rect.right(), y)],
            egui::Stroke::new(1.0, color),
        );
    }
    let line: Vec<egui::Pos2> = points.iter().map(|&(age, t)| at(age, t)).collect();
    if line.len() >= 2 {
        painter.add(egui::Shape::line(line, egui::Stroke::new(1.5, visuals.text_color())));
    }
    painter.text(
        rect.left_top() + egui::vec2(4.0, 2.0),
        egui::Align2::LEFT_TOP,
        format!(
            "frame time, last {GRAPH_SECONDS:.0} s (max {})",
            format_seconds(tallest)
        ),
        egui::FontId::proportional(10.0),
        visuals.weak_text_color(),
    );
}
