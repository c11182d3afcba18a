//! `rigscope bench --orbit`: the window's way of showing a heavy scene (see
//! [`crate::render::detail`]) run headless. The camera orbits for a number of frames, then
//! holds still until the whole scene is finished and kept; every frame is timed from its
//! first CPU work to the GPU's end, with what it drew.

use super::BenchOptions;
use crate::commands::CommandError;
use crate::draw::{Clock, DetailedView, FrameStep, ViewRenderer};
use crate::render::detail::SceneDraw;
use crate::render::timer::GpuTimer;
use crate::render::{Gpu, Offscreen, PixelRect};
use crate::timings::{Stage, format_seconds, median};
use crate::viewer::Viewer;

/// Frames drawn whole first, so that the policy has measured the whole scene.
const WHOLE_FIRST: usize = 3;
/// Yaw per orbiting frame, in radians.
const ORBIT_STEP: f32 = 0.02;
/// Kept frames timed after the whole scene is finished.
const KEPT_FRAMES: usize = 10;
/// Most frames spent finishing the whole scene before giving up.
const MOST_PORTIONS: usize = 10_000;

/// Frame times of each kind of frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrbitReport {
    pub rig: String,
    pub adapter: String,
    pub triangles: usize,
    pub has_proxy: bool,
    /// Whole frames (seconds), the first ones included.
    pub whole: Vec<f32>,
    /// Orbiting frames that drew the proxy.
    pub proxy: Vec<f32>,
    /// Frames that drew a portion of the whole scene, from the first to the one that finished it.
    pub portions: Vec<f32>,
    /// Frames that showed the finished image.
    pub kept: Vec<f32>,
}

impl OrbitReport {
    pub fn to_text(&self) -> String {
        let line = |name: &str, times: &[f32]| {
            let median = median(times.to_vec()).map_or("—".to_owned(), format_seconds);
            let worst = times
                .iter()
                .copied()
                .reduce(f32::max)
                .map_or("—".to_owned(), format_seconds);
            format!("{name:<34} {:>6} {median:>12} {worst:>12}\n", times.len())
        };
        let mut out = format!(
            "rig: {} ({} triangles, {})\nadapter: {}\n\n{:<34} {:>6} {:>12} {:>12}\n",
            self.rig,
            self.triangles,
            if self.has_proxy {
                "with a proxy"
            } else {
                "light: no proxy"
            },
            self.adapter,
            "frames",
            "count",
            "median",
            "slowest"
        );
        if !self.has_proxy {
            return out + &line("whole scene, every frame", &self.whole);
        }
        out += &line("whole scene (first frames)", &self.whole);
        out += &line("orbiting: proxy", &self.proxy);
        out += &line("still: a portion of the whole scene", &self.portions);
        out += &line("still: finished image kept", &self.kept);
        out += &format!(
            "\nthe whole scene was finished {} after the camera stopped, in {} frames\n",
            format_seconds(self.finished_after()),
            self.portions.len()
        );
        out
    }

    /// Seconds from the camera stopping to the whole scene on screen.
    fn finished_after(&self) -> f32 {
        self.portions.iter().fold(0.0, |sum, t| sum + t)
    }

    pub fn to_json(&self) -> serde_json::Value {
        let ms = |times: &[f32]| median(times.to_vec()).map(|s| (f64::from(s) * 1e4).round() / 10.0);
        serde_json::json!({
            "rig": self.rig,
            "adapter": self.adapter,
            "triangles": self.triangles,
            "has_proxy": self.has_proxy,
            "median_ms": {
                "whole": ms(&self.whole),
                "proxy": ms(&self.proxy),
                "portion": ms(&self.portions),
                "kept": ms(&self.kept),
            },
            "frames": {
                "whole": self.whole.len(),
                "proxy": self.proxy.len(),
                "portions": self.portions.len(),
                "kept": self.kept.len(),
            },
            "finished_after_ms": (!self.portions.is_empty())
                .then(|| (f64::from(self.finished_after()) * 1e4).round() / 10.0),
        })
    }
}

/// Draws `options.frames` orbiting frames and then still frames until the whole scene is kept,
/// the way the window does, on the GPU path with playback paused.
pub fn run_orbit(options: &BenchOptions) -> Result<OrbitReport, CommandError> {
    let (rig, path) = options.open()?;
    let triangles = rig.triangle_count();
    let mut viewer = Viewer::new(rig, path);
    viewer.set_playing(false);
    viewer.view.options.mode = options.view.view;
    let method = options.method.apply(&mut viewer)?;
    viewer.set_skinning(crate::skin::SkinningPath::Gpu, method);
    let gpu = Gpu::headless()?;
    let samples = crate::render::Msaa::Auto.samples(&gpu.adapter, crate::render::offscreen::OFFSCREEN_FORMAT);
    let target = Offscreen::with_samples(&gpu, options.width, options.height, samples)?;
    let mut renderer = ViewRenderer::new(&gpu, crate::render::offscreen::OFFSCREEN_FORMAT, samples);
    let mut timer = GpuTimer::new(&gpu)
        .ok_or_else(|| CommandError::Failed("bench --orbit needs an adapter with timestamp queries".into()))?;
    let mut detail = DetailedView::default();
    let viewport = PixelRect {
        x: 0,
        y: 0,
        width: options.width,
        height: options.height,
    };
    let mut report = OrbitReport {
        rig: viewer.rig().name.clone(),
        adapter: gpu.describe(),
        triangles,
        ..OrbitReport::default()
    };
    let mut frame = 0usize;
    loop {
        let orbiting = frame < WHOLE_FIRST + options.frames;
        if orbiting && frame >= WHOLE_FIRST {
            viewer.view.camera.yaw += ORBIT_STEP;
        }
        let step = FrameStep {
            gpu: &gpu,
            renderer: &mut renderer,
            timer: Some(&mut timer),
            wait: true,
        };
        let whole = frame < WHOLE_FIRST;
        let drawn = step.run(&mut viewer, Clock::Still, target.aspect(), |recording| {
            let mut draw = SceneDraw::Keep;
            let (gpu, renderer, viewer) = (recording.gpu, &mut *recording.renderer, recording.viewer);
            let mut timer = recording.timer.as_deref_mut();
            target.encode(recording.encoder, &mut |encoder, targets, view| {
                draw = detail.encode(
                    gpu,
                    renderer,
                    encoder,
                    (targets, view, crate::render::offscreen::OFFSCREEN_FORMAT),
                    viewer,
                    viewport,
                    whole,
                    timer.take(),
                );
            });
            draw
        })?;
        let seconds = drawn.timings.get(Stage::Frame).unwrap_or_default();
        if let Some((pass, primitives)) = drawn.pass {
            detail.policy.measured(pass, primitives);
        }
        let draw = drawn.drawn;
        if let Some(error) = gpu.take_error() {
            return Err(CommandError::FrameRefused(error));
        }
        match draw {
            SceneDraw::Whole => report.whole.push(seconds),
            SceneDraw::Proxy => report.proxy.push(seconds),
            SceneDraw::Refine(_) => report.portions.push(seconds),
            SceneDraw::Keep => report.kept.push(seconds),
        }
        frame += 1;
        let light = !orbiting && draw == SceneDraw::Whole;
        if light || report.kept.len() >= KEPT_FRAMES || report.portions.len() >= MOST_PORTIONS {
            break;
        }
    }
    report.has_proxy = renderer.has_proxy();
    Ok(report)
}
