//! The Curves window's animated properties: the playing clip's property tracks
//! (`KHR_animation_pointer` channels to materials, texture transforms, node visibility and
//! lights), each named by its pointer with its keys and its value now, plotted against time.

use super::{COMPONENT_COLORS, TIME_COLOR};
use crate::anim::properties::sample_track;
use crate::rig::{Interpolation, PropertyTrack, Rig};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points, VLine};

/// Samples per second of the plotted lines (cubic splines curve between keys).
const SAMPLES_PER_SECOND: f32 = 60.0;

/// The property tracks of `clip` with their values at `time`, and a plot of them.
pub(super) fn show(ui: &mut egui::Ui, rig: &Rig, clip: Option<usize>, time: f32) {
    let tracks: Vec<&PropertyTrack> = (rig.facts.property_tracks.iter())
        .filter(|t| Some(t.clip) == clip)
        .collect();
    if tracks.is_empty() {
        return;
    }
    egui::CollapsingHeader::new(format!("Animated properties ({})", tracks.len()))
        .default_open(true)
        .show(ui, |ui| {
            for track in &tracks {
                let value = sample_track(track, time, &mut 0);
                let components = &value.to_array()[..track.target.components()];
                ui.label(format!("{} = {components:.3?}", track.label(&rig.facts.gltf_node)));
            }
            let duration = rig.clips.get(clip.unwrap_or(0)).map_or(0.0, |c| c.duration);
            Plot::new("property curves")
                .height(140.0)
                .legend(Legend::default())
                .x_axis_label("time (s)")
                .include_x(0.0)
                .include_x(f64::from(duration))
                .show(ui, |p| {
                    for (t, track) in tracks.iter().enumerate() {
                        plot_track(p, t, track, duration);
                    }
                    p.vline(VLine::new("time", f64::from(time)).color(TIME_COLOR).width(2.0));
                });
        });
}

/// One line per component of `track` (the `index`th shown) over `0..=duration`, its keys
/// as dots.
fn plot_track(p: &mut egui_plot::PlotUi, index: usize, track: &PropertyTrack, duration: f32) {
    let steps = (duration * SAMPLES_PER_SECOND).ceil().max(1.0) as usize;
    let mut hint = 0;
    let samples: Vec<(f64, [f32; 4])> = (0..=steps)
        .map(|s| {
            let time = duration * s as f32 / steps as f32;
            (f64::from(time), sample_track(track, time, &mut hint).to_array())
        })
        .collect();
    let per_key = if track.interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    for component in 0..track.target.components() {
        let color = COMPONENT_COLORS[(index + component) % COMPONENT_COLORS.len()];
        let name = format!("property {index} [{component}]");
        let line: Vec<[f64; 2]> = (samples.iter()).map(|(t, v)| [*t, f64::from(v[component])]).collect();
        let keys: Vec<[f64; 2]> = (track.times.iter().enumerate())
            .map(|(k, t)| {
                let value = track.values[per_key * k + per_key / 2];
                [f64::from(*t), f64::from(value[component])]
            })
            .collect();
        p.line(Line::new(name.clone(), PlotPoints::from(line)).color(color).width(1.5));
        p.points(
            Points::new(name, PlotPoints::from(keys))
                .color(color)
                .filled(true)
                .radius(3.0),
        );
    }
}
