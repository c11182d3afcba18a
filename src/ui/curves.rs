//! The Curves window: the selected joint's (and pinned joints') translation, rotation and scale
//! channels in the playing clip against time, from [`crate::motion::curves`] (what `inspect
//! --curves` prints): the interpolation between keys, the keys, the sampled pose, the key
//! findings as markers with their explanation, a selected key's cubic tangents, and the current
//! time as a line that a drag moves (seeking the playback).

mod properties;

use crate::motion::curves::{
    CurvesOptions, KeyFlag, Reading, SAMPLES_PER_SECOND, Sample, interpolation_path, joint_channels, joint_curves,
    key_flags, property_name,
};
use crate::motion::rotation::RotationView;
use crate::names::Named;
use crate::rig::{Interpolation, Property, Rig};
use crate::viewer::Viewer;
use egui::{Color32, PointerButton, Pos2};
use egui_plot::{Legend, Line, LineStyle, MarkerShape, Plot, PlotPoint, PlotPoints, PlotTransform, Points, VLine};

/// Points of the interpolation path drawn per cubic key gap.
const CUBIC_STEPS: usize = 12;
/// How near (in points) the pointer must be to a key to select it, or to a marker to explain it.
const PICK_DISTANCE: f32 = 8.0;

/// One channel of one joint as the window plots it: the times and read values of its keys, its
/// samples and its interpolation path.
#[derive(Debug, Clone, PartialEq)]
pub struct PlottedChannel {
    pub joint: usize,
    pub joint_name: String,
    /// Index into the clip's channels.
    pub channel: usize,
    pub property: Property,
    pub interpolation: Interpolation,
    pub reading: Reading,
    pub keys: Vec<Sample>,
    pub key_values: Vec<[f64; 4]>,
    /// What the player evaluates ([`joint_curves`]'s samples).
    pub samples: Vec<Sample>,
    pub sample_values: Vec<[f64; 4]>,
    pub path: Vec<Sample>,
    pub path_values: Vec<[f64; 4]>,
    pub flags: Vec<(usize, KeyFlag)>,
    /// Cubic tangents of each key (in, out), per second, as stored.
    pub tangents: Vec<Option<([f32; 4], [f32; 4])>>,
}

impl PlottedChannel {
    pub fn components(&self) -> &'static [&'static str] {
        self.reading.components()
    }

    /// The ends of key `k`'s tangents, a quarter of the way to its neighbours in time, read as
    /// the curve is: (time, values) before and after the key.
    pub fn tangent_ends(&self, k: usize) -> Option<[(f64, [f64; 4]); 2]> {
        let (in_tangent, out_tangent) = (*self.tangents.get(k)?)?;
        let key = self.keys.get(k)?;
        let gap = |other: Option<&Sample>| other.map(|o| (o.time - key.time).abs()).filter(|g| *g > 0.0);
        let reach = 0.25
            * gap(k.checked_sub(1).and_then(|p| self.keys.get(p)))
                .or(gap(self.keys.get(k + 1)))
                .unwrap_or(0.1);
        let reach = reach.min(0.25 * gap(self.keys.get(k + 1)).unwrap_or(reach));
        let end = |sign: f32, tangent: [f32; 4]| {
            let mut value = key.value;
            for (v, t) in value.iter_mut().zip(tangent) {
                *v += sign * reach * t;
            }
            let time = f64::from(key.time + sign * reach);
            (time, self.reading.value(value, Some(self.key_values[k])))
        };
        Some([end(-1.0, in_tangent), end(1.0, out_tangent)])
    }
}

/// The channels of `joints` in `clip`, read as `view` says, with the key findings at
/// `jump_degrees`.
pub fn plot_channels(
    rig: &Rig,
    clip: usize,
    joints: &[usize],
    view: RotationView,
    jump_degrees: f32,
) -> Vec<PlottedChannel> {
    let Some(clip_data) = rig.clips.get(clip) else {
        return Vec::new();
    };
    let mut plotted = Vec::new();
    for &joint in joints.iter().filter(|&&j| j < rig.nodes.len()) {
        let curves = joint_curves(clip_data, joint, SAMPLES_PER_SECOND);
        let indices = (clip_data.channels.iter().enumerate())
            .filter(|(_, c)| c.node == joint)
            .map(|(i, _)| i);
        for ((index, channel), curve) in indices.zip(joint_channels(clip_data, joint)).zip(curves) {
            let reading = Reading {
                property: channel.property,
                view,
                rest: rig.nodes[joint].rest.rotation,
            };
            let keys: Vec<Sample> = (curve.keys.iter())
                .map(|k| Sample {
                    time: k.time,
                    value: k.value,
                })
                .collect();
            let read = reading.curve(&curve);
            let path = interpolation_path(channel, CUBIC_STEPS);
            plotted.push(PlottedChannel {
                joint,
                joint_name: rig.nodes[joint].name.clone(),
                channel: index,
                property: channel.property,
                interpolation: channel.interpolation,
                reading,
                key_values: read.keys,
                path_values: reading.near(path.iter().map(|p| (p.time, p.value)), &curve.samples, &read.samples),
                tangents: curve.keys.iter().map(|k| k.in_tangent.zip(k.out_tangent)).collect(),
                keys,
                samples: curve.samples,
                sample_values: read.samples,
                path,
                flags: key_flags(channel, jump_degrees),
            });
        }
    }
    plotted
}

/// What the plotted curves were built from; they are built again when it changes.
#[derive(Debug, Clone, PartialEq)]
struct PlotSource {
    rig: usize,
    generation: u64,
    clip: usize,
    joints: Vec<usize>,
    options: CurvesOptions,
}

#[derive(Default)]
pub struct CurvesPanelState {
    pub open: bool,
    /// Joints shown besides the selected one.
    pub pinned: Vec<usize>,
    pub options: CurvesOptions,
    /// The key whose tangents are shown: an index into [`CurvesPanelState::plotted`] and a key.
    pub selected_key: Option<(usize, usize)>,
    plotted: Vec<PlottedChannel>,
    source: Option<PlotSource>,
    /// How each property's plot mapped time and value to the screen when last drawn.
    transforms: Vec<(Property, PlotTransform)>,
}

impl CurvesPanelState {
    /// The channels drawn in the last frame.
    pub fn plotted(&self) -> &[PlottedChannel] {
        &self.plotted
    }

    /// Where the plot of `property` put the point (time, value) on the screen last frame.
    pub fn screen_position(&self, property: Property, time: f64, value: f64) -> Option<Pos2> {
        let (_, transform) = self.transforms.iter().find(|(p, _)| *p == property)?;
        Some(transform.position_from_point(&PlotPoint::new(time, value)))
    }

    /// Where on the screen a drag of the time line to `time` passes in the plot of `property`
    /// (the plot's middle height), as last drawn.
    pub fn time_position(&self, property: Property, time: f64) -> Option<Pos2> {
        let (_, transform) = self.transforms.iter().find(|(p, _)| *p == property)?;
        Some(Pos2::new(
            transform.position_from_point_x(time),
            transform.frame().center().y,
        ))
    }

    /// The selected joint, then the pinned ones.
    pub fn joints(&self, viewer: &Viewer) -> Vec<usize> {
        let mut joints: Vec<usize> = viewer.view.selected_joint.into_iter().collect();
        joints.extend(self.pinned.iter().filter(|j| !joints.contains(j)).collect::<Vec<_>>());
        joints
    }

    fn refresh(&mut self, viewer: &Viewer) {
        let Some(clip) = viewer.player().clip else {
            self.plotted.clear();
            self.source = None;
            return;
        };
        let source = PlotSource {
            rig: std::sync::Arc::as_ptr(viewer.rig()) as usize,
            generation: viewer.document().generation,
            clip,
            joints: self.joints(viewer),
            options: self.options,
        };
        if self.source.as_ref() != Some(&source) {
            self.plotted = plot_channels(
                viewer.rig(),
                clip,
                &source.joints,
                source.options.rotation_view,
                source.options.jump_degrees,
            );
            self.selected_key = None;
            self.source = Some(source);
        }
    }
}

pub fn curves_window(ctx: &egui::Context, viewer: &mut Viewer, state: &mut CurvesPanelState) {
    if !state.open {
        return;
    }
    let mut open = true;
    egui::Window::new("Curves")
        .open(&mut open)
        // Over the 3D view, between the side panels.
        .default_pos([290.0, 36.0])
        .default_size([640.0, 500.0])
        .resizable(true)
        .show(ctx, |ui| contents(ui, viewer, state));
    state.open = open;
}

fn contents(ui: &mut egui::Ui, viewer: &mut Viewer, state: &mut CurvesPanelState) {
    let rig = viewer.rig().clone();
    ui.horizontal_wrapped(|ui| {
        let clip = viewer.player().clip.and_then(|c| rig.clips.get(c));
        ui.label(match clip {
            Some(clip) => format!("Clip '{}' ({:.2} s)", clip.name, clip.duration),
            None => "No clip playing".to_string(),
        });
        ui.separator();
        let node_name = |n: usize| rig.nodes.get(n).map_or("?", |n| n.name.as_str());
        match viewer.view.selected_joint {
            Some(joint) => {
                ui.label(format!("Joint: {}", node_name(joint)));
                if !state.pinned.contains(&joint)
                    && ui
                        .button("Pin")
                        .on_hover_text("Keep this joint's curves shown when another joint is selected")
                        .clicked()
                {
                    state.pinned.push(joint);
                }
            }
            None => {
                ui.label("Select a joint (in the skeleton panel or the view)");
            }
        }
        let mut unpin = None;
        for &joint in &state.pinned {
            if ui
                .small_button(format!("{} ×", node_name(joint)))
                .on_hover_text("Unpin")
                .clicked()
            {
                unpin = Some(joint);
            }
        }
        state.pinned.retain(|&j| Some(j) != unpin);
    });
    ui.horizontal(|ui| {
        egui::ComboBox::from_label("rotation as")
            .selected_text(state.options.rotation_view.name())
            .show_ui(ui, |ui| {
                for &view in <RotationView as strum::VariantArray>::VARIANTS {
                    ui.selectable_value(&mut state.options.rotation_view, view, view.name());
                }
            });
        ui.add(
            egui::DragValue::new(&mut state.options.jump_degrees)
                .range(CurvesOptions::JUMP_RANGE)
                .suffix("°"),
        )
        .on_hover_text("A rotation turning more than this within one frame is marked as a jump");
        ui.label("jump threshold");
    });
    ui.label(
        egui::RichText::new("Drag to move the time, right-drag to pan, scroll or Ctrl+scroll to zoom in time; click a key for its tangents")
            .small()
            .weak(),
    );
    properties::show(ui, &rig, viewer.player().clip, viewer.player().time);
    state.refresh(viewer);
    let groups: Vec<Property> = [Property::Translation, Property::Rotation, Property::Scale]
        .into_iter()
        .filter(|p| state.plotted.iter().any(|c| c.property == *p))
        .collect();
    if groups.is_empty() {
        ui.label("Not animated by the playing clip.");
        state.transforms.clear();
        return;
    }
    let height = ((ui.available_height() - 8.0) / groups.len() as f32 - 6.0).max(110.0);
    state.transforms.clear();
    for property in groups {
        plot_property(ui, viewer, state, property, height);
    }
}

/// Colors of a value's components: x, y, z, w.
const COMPONENT_COLORS: [Color32; 4] = [
    Color32::from_rgb(230, 80, 80),
    Color32::from_rgb(90, 190, 90),
    Color32::from_rgb(90, 140, 240),
    Color32::from_rgb(170, 170, 170),
];
const MARKER_COLOR: Color32 = Color32::from_rgb(255, 160, 0);
const TIME_COLOR: Color32 = Color32::from_rgb(240, 220, 60);

fn flag_shape(flag: KeyFlag) -> MarkerShape {
    match flag {
        KeyFlag::HemisphereFlip => MarkerShape::Diamond,
        KeyFlag::Jump(_) => MarkerShape::Up,
        KeyFlag::CubicOvershoot(_) => MarkerShape::Asterisk,
    }
}

fn points(times: &[Sample], values: &[[f64; 4]], component: usize) -> PlotPoints<'static> {
    PlotPoints::from(
        times
            .iter()
            .zip(values)
            .map(|(s, v)| [f64::from(s.time), v[component]])
            .collect::<Vec<_>>(),
    )
}

fn plot_property(
    ui: &mut egui::Ui,
    viewer: &mut Viewer,
    state: &mut CurvesPanelState,
    property: Property,
    height: f32,
) {
    let duration = f64::from(viewer.clip_duration());
    let time = f64::from(viewer.player().time);
    let unit = match (property, state.options.rotation_view.is_angle()) {
        (Property::Rotation, true) => "rotation (°)",
        (Property::Rotation, false) => "rotation (quaternion)",
        _ => property_name(property),
    };
    let joints = state.joints(viewer);
    let selected_key = state.selected_key;
    let shown: Vec<(usize, &PlottedChannel)> = state
        .plotted
        .iter()
        .enumerate()
        .filter(|(_, c)| c.property == property)
        .collect();
    let group = egui::Id::unique("curves time");
    let response = Plot::new(("curves", property_name(property)))
        .height(height)
        .legend(Legend::default())
        .y_axis_label(unit)
        .x_axis_label("time (s)")
        .include_x(0.0)
        .include_x(duration)
        .link_axis(group, [true, false])
        .link_cursor(group, [true, false])
        .allow_drag([true, false])
        .pan_pointer_button(PointerButton::Secondary)
        .allow_boxed_zoom(false)
        .allow_zoom([true, false])
        .allow_scroll([true, false])
        .show(ui, |p| {
            for &(index, channel) in &shown {
                plot_channel(p, channel, joint_style(&joints, channel.joint));
                plot_flags(p, channel);
                if let Some((_, key)) = selected_key.filter(|(i, _)| *i == index) {
                    plot_tangents(p, channel, key);
                }
            }
            p.vline(VLine::new("time", time).color(TIME_COLOR).width(2.0));
        });
    let (transform, response) = (response.transform, response.response);
    state.transforms.push((property, transform));
    let pointer = response.hover_pos().or(response.interact_pointer_pos());
    if response.clicked_by(PointerButton::Primary)
        && let Some(pointer) = pointer
        && let Some(key) = nearest_key(&shown, &transform, pointer, false)
    {
        state.selected_key = Some(key);
    } else if (response.clicked_by(PointerButton::Primary) || response.dragged_by(PointerButton::Primary))
        && let Some(pointer) = pointer
    {
        let time = transform.value_from_position(pointer).x.clamp(0.0, duration);
        viewer.set_playing(false);
        viewer.seek(time as f32);
    }
    if let Some(pointer) = response.hover_pos()
        && let Some((index, k)) = nearest_key(&shown, &transform, pointer, true)
    {
        response.on_hover_text_at_pointer(key_tooltip(&state.plotted[index], k));
    }
}

/// The line style of a joint's curves: the joints shown take solid, dashed and dotted lines
/// in turn, so that curves of the same component and color tell their joints apart.
fn joint_style(joints: &[usize], joint: usize) -> LineStyle {
    match joints.iter().position(|&j| j == joint).unwrap_or(0) % 3 {
        0 => LineStyle::Solid,
        1 => LineStyle::dashed_loose(),
        _ => LineStyle::dotted_dense(),
    }
}

/// A channel's curve, samples and keys, one color per component.
fn plot_channel(p: &mut egui_plot::PlotUi, channel: &PlottedChannel, style: LineStyle) {
    for (i, component) in channel.components().iter().enumerate() {
        let color = COMPONENT_COLORS[i % COMPONENT_COLORS.len()];
        let name = format!("{} {component}", channel.joint_name);
        p.line(
            Line::new(name.clone(), points(&channel.path, &channel.path_values, i))
                .color(color)
                .style(style)
                .width(1.5),
        );
        p.points(
            Points::new(name.clone(), points(&channel.samples, &channel.sample_values, i))
                .color(color.gamma_multiply(0.7))
                .radius(1.2),
        );
        p.points(
            Points::new(name, points(&channel.keys, &channel.key_values, i))
                .color(color)
                .filled(true)
                .radius(3.5),
        );
    }
}

/// A marker on every component of each key a finding names, shaped by the finding.
fn plot_flags(p: &mut egui_plot::PlotUi, channel: &PlottedChannel) {
    for &(key, flag) in &channel.flags {
        let Some(values) = channel.key_values.get(key) else {
            continue;
        };
        let time = f64::from(channel.keys[key].time);
        let at: Vec<[f64; 2]> = (0..channel.components().len()).map(|i| [time, values[i]]).collect();
        p.points(
            Points::new("findings", PlotPoints::from(at))
                .shape(flag_shape(flag))
                .color(MARKER_COLOR)
                .radius(7.0),
        );
    }
}

/// The tangents of the selected key, as lines to their ends, when it has any.
fn plot_tangents(p: &mut egui_plot::PlotUi, channel: &PlottedChannel, key: usize) {
    let Some([before, after]) = channel.tangent_ends(key) else {
        return;
    };
    let at = f64::from(channel.keys[key].time);
    for i in 0..channel.components().len() {
        let line = vec![
            [before.0, before.1[i]],
            [at, channel.key_values[key][i]],
            [after.0, after.1[i]],
        ];
        p.line(
            Line::new("tangents", PlotPoints::from(line.clone()))
                .color(Color32::WHITE)
                .width(1.0),
        );
        p.points(
            Points::new("tangents", PlotPoints::from(vec![line[0], line[2]]))
                .color(Color32::WHITE)
                .radius(2.5),
        );
    }
}

/// The key (plotted channel, key) drawn nearest to `pointer` within [`PICK_DISTANCE`], among
/// all keys or only those a finding names.
fn nearest_key(
    shown: &[(usize, &PlottedChannel)],
    transform: &PlotTransform,
    pointer: Pos2,
    flagged_only: bool,
) -> Option<(usize, usize)> {
    let mut best: Option<(f32, usize, usize)> = None;
    for &(index, channel) in shown {
        let keys: Vec<usize> = if flagged_only {
            channel.flags.iter().map(|(k, _)| *k).collect()
        } else {
            (0..channel.keys.len()).collect()
        };
        for k in keys {
            for i in 0..channel.components().len() {
                let at = PlotPoint::new(f64::from(channel.keys[k].time), channel.key_values[k][i]);
                let distance = transform.position_from_point(&at).distance(pointer);
                if distance < PICK_DISTANCE && best.is_none_or(|(d, ..)| distance < d) {
                    best = Some((distance, index, k));
                }
            }
        }
    }
    best.map(|(_, index, k)| (index, k))
}

/// What the findings on key `k` of a channel say.
fn key_tooltip(channel: &PlottedChannel, k: usize) -> String {
    let text: Vec<String> = (channel.flags.iter())
        .filter(|(key, _)| *key == k)
        .map(|(_, flag)| flag.describe())
        .collect();
    format!(
        "{} {}, key {k} at {:.3} s: {}",
        channel.joint_name,
        property_name(channel.property),
        channel.keys[k].time,
        text.join("; ")
    )
}
