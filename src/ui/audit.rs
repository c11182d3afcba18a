//! The Audit window: the range-of-motion audit run on the viewer's rig in the background, its
//! joints worst first, the worst pose of one put on the rig, and its measures against the angle.

use crate::audit::{AuditOptions, AuditProgress, AuditReport, Axis, JointAudit, PoseSample};
use crate::job::Job;
use crate::skin::SkinningMethod;
use crate::viewer::{Viewer, marks_on_every_instance};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points};
use std::sync::Arc;

/// Which measure the plots show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Measure {
    #[default]
    MinAreaRatio,
    MaxAreaRatio,
    EdgeStretch,
    RadiusRatio,
}

impl Measure {
    pub const ALL: [Measure; 4] = [
        Measure::MinAreaRatio,
        Measure::MaxAreaRatio,
        Measure::EdgeStretch,
        Measure::RadiusRatio,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Measure::MinAreaRatio => "area ratio (min)",
            Measure::MaxAreaRatio => "area ratio (max)",
            Measure::EdgeStretch => "edge stretch",
            Measure::RadiusRatio => "radius ratio",
        }
    }

    pub fn of(self, sample: &PoseSample) -> Option<f32> {
        match self {
            Measure::MinAreaRatio => Some(sample.min_area_ratio),
            Measure::MaxAreaRatio => Some(sample.max_area_ratio),
            Measure::EdgeStretch => Some(sample.max_edge_stretch),
            Measure::RadiusRatio => sample.min_radius_ratio,
        }
    }
}

/// A running audit and the rig generation it audits.
pub struct RunningAudit {
    job: Job<AuditReport, AuditProgress>,
    generation: u64,
}

impl RunningAudit {
    /// How far the audit got, and its cancel switch.
    pub fn progress(&self) -> &AuditProgress {
        self.job.progress()
    }
}

#[derive(Default)]
pub struct AuditPanelState {
    pub open: bool,
    pub running: Option<RunningAudit>,
    /// The last finished report and the rig generation it belongs to.
    pub report: Option<(u64, Arc<AuditReport>)>,
    /// Index into the report's joints.
    pub selected: Option<usize>,
    pub measure: Measure,
    /// Whether the Motion tab is shown instead of the range of motion.
    pub motion_tab: bool,
    /// The Motion tab's report and the rig generation it belongs to.
    pub motion: Option<(u64, crate::motion::MotionReport)>,
}

impl AuditPanelState {
    /// Starts auditing the viewer's rig on its own thread, cancelling a run already going.
    pub fn start(&mut self, viewer: &Viewer) {
        if let Some(running) = &self.running {
            running.job.cancel();
        }
        let rig = viewer.rig().clone();
        let options = AuditOptions::for_rig(&rig, viewer.dqs_mask());
        let job = Job::with_progress(AuditProgress::default(), move |progress| {
            crate::audit::audit_with_progress(&rig, &options, progress)
        });
        self.running = Some(RunningAudit {
            job,
            generation: viewer.document().generation,
        });
        self.selected = None;
    }

    /// Selects joint `index` of `report` and poses the rig at its worst pose, as a click on its
    /// row does.
    pub fn select(&mut self, viewer: &mut Viewer, report: &AuditReport, index: usize) {
        if let Some(joint) = report.joints.get(index) {
            self.selected = Some(index);
            show_worst_pose(viewer, joint);
        }
    }

    /// Opens the window, audits the rig on this thread's watch until the report is in, and
    /// shows the worst joint: what `rigscope render --ui --audit` draws.
    pub fn open_at_worst_joint(&mut self, viewer: &mut Viewer) {
        self.open = true;
        self.start(viewer);
        self.wait(viewer);
        if let Some((_, report)) = self.report.clone() {
            self.select(viewer, &report, 0);
        }
    }

    /// Takes the report of a finished run; true while one is still going.
    pub fn poll(&mut self, viewer: &Viewer) -> bool {
        self.receive(viewer, false)
    }

    /// Waits for the running audit, if any, and takes its report.
    pub fn wait(&mut self, viewer: &Viewer) {
        self.receive(viewer, true);
    }

    fn receive(&mut self, viewer: &Viewer, block: bool) -> bool {
        if self
            .report
            .as_ref()
            .is_some_and(|(g, _)| *g != viewer.document().generation)
        {
            self.report = None;
            self.selected = None;
        }
        let Some(RunningAudit { job, generation }) = self.running.take() else {
            return false;
        };
        if generation != viewer.document().generation {
            job.cancel();
        }
        let cancelled = job.is_cancelled();
        let result = if block {
            job.wait()
        } else {
            match job.try_wait() {
                Ok(result) => result,
                Err(job) => {
                    self.running = Some(RunningAudit { job, generation });
                    return true;
                }
            }
        };
        // A run of a rig replaced since, or cancelled, is dropped rather than shown as current.
        if let Ok(report) = result
            && generation == viewer.document().generation
            && !cancelled
        {
            self.report = Some((generation, Arc::new(report)));
        }
        false
    }
}

/// Poses the viewer's rig as the audit did at `joint`'s worst pose: the rest pose with no clip,
/// the joint bent by hand, the worst pose's skinning method, the joint selected and the worst
/// vertices marked. The audit bends the bind pose; where a rig's rest pose differs from it, or
/// layers of the user's own play over no clip, the view shows the same bend on that pose.
pub fn show_worst_pose(viewer: &mut Viewer, joint: &JointAudit) {
    let Some((curve, sample)) = joint.worst() else { return };
    viewer.select_clip(None);
    viewer.reset_overrides();
    let bend = joint.bend(viewer.rig(), curve.axis, sample.angle_deg);
    viewer.set_override(joint.node, bend);
    viewer.set_skinning(viewer.skinning_path(), curve.method);
    viewer.view.selected_joint = Some(joint.node);
    let rig = viewer.rig().clone();
    let mut marks = Vec::new();
    let mut parts: Vec<(usize, usize)> = sample.worst_vertices.iter().map(|v| (v.mesh, v.primitive)).collect();
    parts.sort_unstable();
    parts.dedup();
    for (mesh, gltf_primitive) in parts {
        let Some(primitive) = rig.facts.primitive_of_gltf(mesh, gltf_primitive) else {
            continue;
        };
        let vertices: Vec<usize> = (sample.worst_vertices.iter())
            .filter(|v| v.mesh == mesh && v.primitive == gltf_primitive)
            .map(|v| v.vertex as usize)
            .collect();
        marks.extend(marks_on_every_instance(&rig, mesh, primitive, vertices.into_iter()));
    }
    viewer.set_finding_marks(marks);
}

/// The row label of a joint in the list.
pub fn row_label(joint: &JointAudit) -> String {
    match joint.worst() {
        Some((curve, sample)) => format!(
            "{}  {} {:+.0}° {}  badness {:.2}",
            joint.name,
            curve.axis.label(),
            sample.angle_deg,
            method_label(curve.method),
            joint.badness
        ),
        None => joint.name.clone(),
    }
}

fn method_label(method: SkinningMethod) -> &'static str {
    match method {
        SkinningMethod::Lbs => "LBS",
        SkinningMethod::Dqs => "DQS",
        SkinningMethod::Blended => "blended",
    }
}

pub fn audit_window(ctx: &egui::Context, viewer: &mut Viewer, state: &mut AuditPanelState) {
    if state.poll(viewer) {
        ctx.request_repaint();
    }
    let mut open = state.open;
    egui::Window::new("Audit")
        .open(&mut open)
        .default_width(560.0)
        .resizable(true)
        .show(ctx, |ui| contents(ui, viewer, state));
    state.open = open;
}

fn contents(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut AuditPanelState) {
    ui.horizontal(|ui| {
        ui.selectable_value(&mut state.motion_tab, false, "Range of motion");
        ui.selectable_value(&mut state.motion_tab, true, "Motion");
    });
    if state.motion_tab {
        super::audit_motion::motion_tab(ui, viewer, &mut state.motion);
        return;
    }
    ui.horizontal(|ui| {
        if let Some(running) = &state.running {
            if ui.button("Cancel").clicked() {
                running.job.cancel();
            }
            let (done, total) = running.progress().counts();
            ui.add(
                egui::ProgressBar::new(running.progress().fraction())
                    .text(format!("{done} / {total} joints"))
                    .desired_width(240.0),
            );
        } else if ui.button("Run audit").clicked() {
            state.start(viewer);
        }
        if let Some((_, report)) = &state.report {
            ui.label(format!("{} joints in {:.2} s", report.joints.len(), report.seconds));
        }
    });
    let Some((_, report)) = state.report.clone() else {
        if state.running.is_none() {
            ui.label("Sweeps every weighted joint through twists and bends and ranks how badly it deforms.");
        }
        return;
    };
    ui.separator();
    egui::ScrollArea::vertical()
        .id_salt("audit joints")
        .max_height(200.0)
        .show(ui, |ui| {
            for (i, joint) in report.joints.iter().enumerate() {
                if ui
                    .selectable_label(state.selected == Some(i), row_label(joint))
                    .clicked()
                {
                    state.select(viewer, &report, i);
                }
            }
        });
    let Some(joint) = state.selected.and_then(|i| report.joints.get(i)) else {
        return;
    };
    ui.separator();
    egui::ComboBox::from_label("measure")
        .selected_text(state.measure.label())
        .show_ui(ui, |ui| {
            for m in Measure::ALL {
                ui.selectable_value(&mut state.measure, m, m.label());
            }
        });
    let worst = joint.worst();
    // A column per method swept, in the order of the report's curves.
    let mut methods: Vec<SkinningMethod> = Vec::new();
    for curve in &joint.curves {
        if !methods.contains(&curve.method) {
            methods.push(curve.method);
        }
    }
    ui.columns(methods.len().max(1), |columns| {
        for (column, method) in columns.iter_mut().zip(methods) {
            column.label(method_label(method));
            plot(column, joint, method, state.measure, worst);
        }
    });
}

fn plot(
    ui: &mut egui::Ui,
    joint: &JointAudit,
    method: SkinningMethod,
    measure: Measure,
    worst: Option<(&crate::audit::Curve, &PoseSample)>,
) {
    Plot::new(("audit plot", method_label(method)))
        .height(180.0)
        .legend(Legend::default())
        .x_axis_label("angle (°)")
        .allow_scroll(false)
        .show(ui, |p| {
            for axis in Axis::ALL {
                let points: Vec<[f64; 2]> = (joint.curves.iter())
                    .filter(|c| c.axis == axis && c.method == method)
                    .flat_map(|c| c.samples.iter())
                    .filter_map(|s| measure.of(s).map(|v| [f64::from(s.angle_deg), f64::from(v)]))
                    .collect();
                if !points.is_empty() {
                    p.line(Line::new(axis.label(), PlotPoints::from(points)));
                }
            }
            if let Some((curve, sample)) = worst
                && curve.method == method
                && let Some(v) = measure.of(sample)
            {
                let at = vec![[f64::from(sample.angle_deg), f64::from(v)]];
                p.points(Points::new("worst", PlotPoints::from(at)).radius(4.0));
            }
        });
}
