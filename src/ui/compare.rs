//! The Compare window: what differs between the open file and the file compared with, worst
//! first (joints, vertices, clips); clicking an entry shows it in both views.

use crate::compare::{ClipDiff, JointChange, RigDiff, Thresholds, VertexChange};
use crate::viewer::{VertexRef, Viewer};
use std::sync::Arc;

/// Entries listed per kind.
const LISTED: usize = 8;

/// What clicking an entry asks for.
enum Pick {
    Joint(String),
    Vertex(VertexChange),
    Clip(ClipDiff),
}

/// The Compare window, open while a comparison is.
pub fn compare_window(ctx: &egui::Context, viewer: &mut Viewer) {
    viewer.want_comparison_diff();
    let Some(comparison) = viewer.comparison() else {
        return;
    };
    let other = comparison.other().rig().name.clone();
    let missing = comparison.missing_clip().map(str::to_owned);
    let error = comparison.diff_error.clone();
    // The comparison runs from the frame (see `Viewer::prepare_frame`); this shows how far it is.
    let diff = comparison.diff().map(Arc::clone);
    let progress = viewer.comparison_progress();
    let mut pick = None;
    let mut open = true;
    egui::Window::new("Compare")
        .open(&mut open)
        .default_width(360.0)
        // Clear of the menus and the panels on the left, over the view's right side.
        .anchor(egui::Align2::RIGHT_TOP, egui::vec2(-12.0, 36.0))
        .show(ctx, |ui| {
            ui.label(format!("{} against {other}", viewer.rig().name));
            if let Some(clip) = missing {
                ui.label(format!("{other} has no clip '{clip}': it shows its rest pose."));
            }
            match (&diff, error) {
                (_, Some(error)) => {
                    ui.colored_label(egui::Color32::LIGHT_RED, format!("comparing failed: {error}"));
                }
                (None, None) => {
                    let (fraction, what) = progress.unwrap_or_default();
                    let text = if what.is_empty() {
                        "comparing…".to_owned()
                    } else {
                        what
                    };
                    ui.add(egui::ProgressBar::new(fraction).text(text).animate(true));
                }
                (Some(diff), None) => pick = entries(ui, diff),
            }
        });
    if !open {
        viewer.stop_comparing();
        return;
    }
    match pick {
        Some(Pick::Joint(name)) => select_joint(viewer, &name),
        Some(Pick::Vertex(change)) => {
            viewer.inspect_vertex(Some(vertex_ref(&change.a)));
            viewer.inspect_other_vertex(Some(vertex_ref(&change.b)));
        }
        Some(Pick::Clip(clip)) => {
            if let Some(index) = clip.clip_a {
                viewer.select_clip(Some(index));
                viewer.set_playing(false);
                viewer.seek(clip.worst_time.unwrap_or(0.0));
            }
            if let Some(joint) = &clip.worst_joint {
                select_joint(viewer, joint);
            }
        }
        None => {}
    }
}

fn vertex_ref(vertex: &crate::compare::VertexRef) -> VertexRef {
    VertexRef {
        instance: vertex.instance,
        primitive: vertex.primitive_index,
        vertex: vertex.vertex,
    }
}

fn select_joint(viewer: &mut Viewer, name: &str) {
    if let Some(node) = viewer.rig().find_node(name) {
        viewer.view.selected_joint = Some(node);
    }
}

/// The joints, vertices and clips of `diff` worst first, as buttons; returns the one clicked.
fn entries(ui: &mut egui::Ui, diff: &RigDiff) -> Option<Pick> {
    let limits = Thresholds::default();
    let mut pick = None;
    ui.label(if diff.identical {
        "The files agree within the thresholds.".to_owned()
    } else {
        "The files differ.".to_owned()
    });
    let skeleton = &diff.skeleton;
    for (what, names) in [("added", &skeleton.added), ("removed", &skeleton.removed)] {
        if !names.is_empty() {
            ui.label(format!("Joints {what}: {}", names.join(", ")));
        }
    }
    egui::ScrollArea::vertical().max_height(420.0).show(ui, |ui| {
        ui.strong("Joints past the thresholds");
        for joint in worst(&skeleton.joints, |j: &JointChange| {
            j.severity(limits.position, limits.rotation_degrees)
        }) {
            let text = format!(
                "{}: bind {:.2e} / {:.2}°, rest {:.2e} / {:.2}°",
                joint.joint, joint.bind_position, joint.bind_rotation_deg, joint.rest_position, joint.rest_rotation_deg
            );
            if ui.selectable_label(false, text).clicked() {
                pick = Some(Pick::Joint(joint.joint.clone()));
            }
        }
        ui.strong(format!(
            "Vertices ({} compared, {} unmatched, {} changed)",
            diff.weights.compared_vertices, diff.weights.unmatched_vertices, diff.weights.changed_count
        ));
        for change in diff.weights.changed_vertices.iter().take(LISTED) {
            if ui.selectable_label(false, vertex_entry(change)).clicked() {
                pick = Some(Pick::Vertex(*change));
            }
        }
        ui.strong("Clips that differ");
        for clip in worst(&diff.clips, |c: &ClipDiff| {
            c.severity(limits.position, limits.rotation_degrees)
        }) {
            if ui.selectable_label(false, clip_entry(clip)).clicked() {
                pick = Some(Pick::Clip(clip.clone()));
            }
        }
    });
    pick
}

/// The first [`LISTED`] of `items` past their thresholds (`severity` above 1), highest first.
fn worst<T>(items: &[T], severity: impl Fn(&T) -> f32) -> Vec<&T> {
    let mut sorted: Vec<&T> = items.iter().filter(|item| severity(item) > 1.0).collect();
    sorted.sort_by(|a, b| severity(b).total_cmp(&severity(a)));
    sorted.truncate(LISTED);
    sorted
}

/// How the Compare window lists a changed vertex (by its glTF mesh, primitive and index in A).
pub fn vertex_entry(change: &VertexChange) -> String {
    let a = &change.a;
    format!(
        "mesh {} primitive {} vertex {}: weights {:.3}",
        a.mesh, a.primitive, a.vertex, change.difference
    )
}

/// How the Compare window lists a clip: its largest errors, when and on which joint.
pub fn clip_entry(clip: &ClipDiff) -> String {
    format!(
        "{} ({:?}): {:.2e} / {:.2}° at {:.3} s, {}",
        clip.name,
        clip.status,
        clip.max_position_error,
        clip.max_rotation_error_deg,
        clip.worst_time.unwrap_or(0.0),
        clip.worst_joint.as_deref().unwrap_or("no joint")
    )
}
