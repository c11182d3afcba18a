//! Frame timings, stage by stage: what one frame of the viewer costs and where.
//!
//! One concept shared by the window's Timings panel and `rigscope bench`: a frame's figures
//! ([`FrameTimings`], one per [`Stage`]), a rolling history with medians ([`Timings`]), the
//! facts that size the work ([`RigFacts`]), and the headless frame loop of `rigscope bench`
//! ([`run_bench`]): evaluate the pose → (skin on the CPU) → write the frame → encode → submit →
//! wait, on an offscreen target, for the GPU path, the CPU path and the same mesh drawn static.

use crate::render::timer::GpuTimer;
use crate::render::{FrameUpload, Gpu, Offscreen};
use crate::rig::Rig;
use crate::skin::{SkinningMethod, SkinningPath};
use crate::viewer::Viewer;
use std::time::{Duration, Instant};

/// A stage of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Clip sampling, layers and hand-made overrides → local pose.
    Sampling,
    /// Local pose → world matrices → joint palettes.
    Palette,
    /// Writing the palettes to the GPU.
    PaletteUpload,
    /// Skinning vertices on the CPU (CPU path only).
    CpuSkinning,
    /// Writing CPU-skinned vertices to the GPU (CPU path only).
    VertexUpload,
    /// Recording the 3D view's commands.
    Encoding,
    /// The scene pass (skinned meshes, grid, overlay) on the GPU, from timestamp queries.
    GpuPass,
    /// Building, tessellating and recording the UI (the window only).
    Egui,
    /// Submitting and waiting for the GPU (`rigscope bench` only).
    GpuWait,
    /// Whole frame: start to start in the window, evaluate to GPU done in `rigscope bench`.
    Frame,
}

pub const STAGE_COUNT: usize = 10;

impl Stage {
    pub const ALL: [Stage; STAGE_COUNT] = [
        Stage::Sampling,
        Stage::Palette,
        Stage::PaletteUpload,
        Stage::CpuSkinning,
        Stage::VertexUpload,
        Stage::Encoding,
        Stage::GpuPass,
        Stage::Egui,
        Stage::GpuWait,
        Stage::Frame,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Stage::Sampling => "Clip sampling",
            Stage::Palette => "Palette build",
            Stage::PaletteUpload => "Palette upload",
            Stage::CpuSkinning => "CPU skinning",
            Stage::VertexUpload => "Vertex upload",
            Stage::Encoding => "Command encoding",
            Stage::GpuPass => "GPU scene pass",
            Stage::Egui => "egui",
            Stage::GpuWait => "Submit + GPU wait",
            Stage::Frame => "Frame",
        }
    }

    /// Name in CSV headers and JSON keys.
    pub fn key(self) -> &'static str {
        match self {
            Stage::Sampling => "sampling",
            Stage::Palette => "palette_build",
            Stage::PaletteUpload => "palette_upload",
            Stage::CpuSkinning => "cpu_skinning",
            Stage::VertexUpload => "vertex_upload",
            Stage::Encoding => "encoding",
            Stage::GpuPass => "gpu_pass",
            Stage::Egui => "egui",
            Stage::GpuWait => "gpu_wait",
            Stage::Frame => "frame",
        }
    }
}

/// One frame's figures in seconds; `None` for a stage that did not run or was not measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameTimings {
    seconds: [Option<f32>; STAGE_COUNT],
}

impl FrameTimings {
    pub fn get(&self, stage: Stage) -> Option<f32> {
        self.seconds[stage as usize]
    }

    pub fn set(&mut self, stage: Stage, seconds: Option<f64>) {
        self.seconds[stage as usize] = seconds.map(|s| s as f32);
    }

    pub fn set_duration(&mut self, stage: Stage, duration: Option<Duration>) {
        self.set(stage, duration.map(|d| d.as_secs_f64()));
    }

    /// Takes the pose and CPU skinning stage times the viewer recorded since the last frame.
    pub fn take_from_viewer(&mut self, viewer: &mut Viewer) {
        let pose = viewer.pose.take_timings();
        self.set_duration(Stage::Sampling, pose.sampling);
        self.set_duration(Stage::Palette, pose.palette);
        self.set_duration(Stage::CpuSkinning, viewer.skinned.take_timing());
    }

    /// Records what `SceneRenderer::write_frame` reported.
    pub fn record_upload(&mut self, upload: &FrameUpload) {
        self.set_duration(Stage::PaletteUpload, Some(upload.palette));
        self.set_duration(Stage::VertexUpload, upload.vertices);
    }
}

/// What sizes a frame's work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RigFacts {
    /// Vertices of skinned mesh instances.
    pub skinned_vertices: usize,
    pub vertices: usize,
    /// Palette entries over all skinned instances.
    pub joints: usize,
    /// Influences per vertex the data carries (4 or 8; 0 without skins).
    pub influences: usize,
    /// Palette matrices written per frame (4×4 f32).
    pub palette_bytes: usize,
}

impl RigFacts {
    pub fn of(rig: &Rig) -> RigFacts {
        let mut facts = RigFacts {
            vertices: rig.vertex_count(),
            ..RigFacts::default()
        };
        for instance in &rig.instances {
            let Some(skin) = instance.skin else { continue };
            let joints = rig.skins[skin].joints.len();
            facts.joints += joints;
            facts.palette_bytes += joints * std::mem::size_of::<glam::Mat4>();
            for primitive in &rig.meshes[instance.mesh].primitives {
                if let Some(influences) = &primitive.influences {
                    facts.skinned_vertices += primitive.vertex_count();
                    facts.influences = facts.influences.max(influences.sets * 4);
                }
            }
        }
        facts
    }
}

/// Frames kept: ten seconds at 60 FPS.
pub const HISTORY: usize = 600;

/// The last [`HISTORY`] frames' timings (a ring; recording allocates nothing).
#[derive(Debug, Clone)]
pub struct Timings {
    frames: Vec<FrameTimings>,
    next: usize,
    len: usize,
    last_record: Option<Instant>,
    /// Whether the GPU pass can be timed (the device has `TIMESTAMP_QUERY`).
    pub gpu_timestamps: bool,
}

impl Default for Timings {
    fn default() -> Self {
        Timings::new(false)
    }
}

impl Timings {
    pub fn new(gpu_timestamps: bool) -> Timings {
        Timings {
            frames: vec![FrameTimings::default(); HISTORY],
            next: 0,
            len: 0,
            last_record: None,
            gpu_timestamps,
        }
    }

    /// Adds a frame; its [`Stage::Frame`] time, when not set, becomes the time since the
    /// previous call.
    pub fn record(&mut self, mut frame: FrameTimings) {
        let now = Instant::now();
        if frame.get(Stage::Frame).is_none() {
            let since = self.last_record.map(|t| now.duration_since(t));
            frame.set_duration(Stage::Frame, since);
        }
        self.last_record = Some(now);
        self.frames[self.next] = frame;
        self.next = (self.next + 1) % HISTORY;
        self.len = (self.len + 1).min(HISTORY);
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn clear(&mut self) {
        self.len = 0;
        self.next = 0;
        self.last_record = None;
    }

    /// The `n` newest frames, newest first.
    pub fn newest(&self, n: usize) -> impl Iterator<Item = &FrameTimings> + '_ {
        (0..n.min(self.len)).map(move |k| &self.frames[(self.next + HISTORY - 1 - k) % HISTORY])
    }

    /// The newest frame.
    pub fn last(&self) -> Option<&FrameTimings> {
        self.newest(1).next()
    }

    /// The newest value of `stage` among the last `n` frames.
    pub fn latest(&self, stage: Stage, n: usize) -> Option<f32> {
        self.newest(n).find_map(|f| f.get(stage))
    }

    /// Median of `stage` over the newest `n` frames that have it.
    pub fn median(&self, stage: Stage, n: usize) -> Option<f32> {
        median(self.newest(n).filter_map(|f| f.get(stage)).collect())
    }

    /// The per-stage summary (newest value and median over `n` frames, in milliseconds) and
    /// then every kept frame, oldest first, as CSV.
    pub fn to_csv(&self, n: usize, facts: &RigFacts) -> String {
        use std::fmt::Write;
        let ms = |v: Option<f32>| v.map_or(String::new(), |s| format!("{:.4}", s * 1e3));
        let mut out = String::from("stage,latest_ms,median_ms\n");
        for stage in Stage::ALL {
            let _ = writeln!(
                out,
                "{},{},{}",
                stage.key(),
                ms(self.latest(stage, n)),
                ms(self.median(stage, n))
            );
        }
        let _ = writeln!(
            out,
            "\nvertices,skinned_vertices,joints,influences,palette_bytes_per_frame\n{},{},{},{},{}\n",
            facts.vertices, facts.skinned_vertices, facts.joints, facts.influences, facts.palette_bytes
        );
        let header: Vec<String> = Stage::ALL.iter().map(|s| format!("{}_ms", s.key())).collect();
        let _ = writeln!(out, "frame,{}", header.join(","));
        let frames: Vec<&FrameTimings> = self.newest(self.len).collect();
        for (i, frame) in frames.iter().rev().enumerate() {
            let values: Vec<String> = Stage::ALL.iter().map(|&s| ms(frame.get(s))).collect();
            let _ = writeln!(out, "{i},{}", values.join(","));
        }
        out
    }
}

/// Median of a list (mean of the middle two for an even count); `None` when empty.
pub fn median(mut values: Vec<f32>) -> Option<f32> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable_by(f32::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) * 0.5
    } else {
        values[mid]
    })
}

/// Seconds as a short human figure: "412 ns", "3.21 µs", "1.50 ms".
pub fn format_seconds(seconds: f32) -> String {
    let s = f64::from(seconds);
    if s < 1e-6 {
        format!("{:.0} ns", s * 1e9)
    } else if s < 1e-3 {
        format!("{:.2} µs", s * 1e6)
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

/// The rig `rigscope bench` runs on.
#[derive(Debug, Clone, PartialEq)]
pub enum BenchRig {
    /// The built-in demo rig.
    Demo,
    File(std::path::PathBuf),
    /// A generated tube (see [`crate::synthetic::skinned_tube`]).
    Synthetic {
        vertices: usize,
        joints: usize,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct BenchOptions {
    pub rig: BenchRig,
    /// Timed frames per path (after a few warm-up frames).
    pub frames: usize,
    pub width: u32,
    pub height: u32,
}

/// Where the frame loop skins, for the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchPath {
    Gpu,
    Cpu,
    /// The same meshes drawn unskinned from their bind-pose vertices, no pose evaluated.
    Static,
}

impl BenchPath {
    pub const ALL: [BenchPath; 3] = [BenchPath::Gpu, BenchPath::Cpu, BenchPath::Static];

    pub fn key(self) -> &'static str {
        match self {
            BenchPath::Gpu => "gpu",
            BenchPath::Cpu => "cpu",
            BenchPath::Static => "static",
        }
    }
}

/// Median per stage of one path's frames.
#[derive(Debug, Clone, PartialEq)]
pub struct PathResult {
    pub path: BenchPath,
    pub medians: [Option<f32>; STAGE_COUNT],
}

impl PathResult {
    pub fn median(&self, stage: Stage) -> Option<f32> {
        self.medians[stage as usize]
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    pub rig: String,
    pub adapter: String,
    pub facts: RigFacts,
    pub frames: usize,
    pub width: u32,
    pub height: u32,
    pub gpu_timestamps: bool,
    pub paths: Vec<PathResult>,
}

impl BenchReport {
    fn path(&self, path: BenchPath) -> Option<&PathResult> {
        self.paths.iter().find(|p| p.path == path)
    }

    /// `path`'s median of `stage` over the static path's.
    pub fn ratio(&self, path: BenchPath, stage: Stage) -> Option<f32> {
        let a = self.path(path)?.median(stage)?;
        let b = self.path(BenchPath::Static)?.median(stage)?;
        (b > 0.0).then(|| a / b)
    }

    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let f = &self.facts;
        let _ = writeln!(out, "rig: {}", self.rig);
        let _ = writeln!(out, "adapter: {}", self.adapter);
        let _ = writeln!(
            out,
            "{} vertices ({} skinned), {} joints, {} influences, {} palette bytes/frame; {} frames per path at {}x{}",
            f.vertices,
            f.skinned_vertices,
            f.joints,
            f.influences,
            f.palette_bytes,
            self.frames,
            self.width,
            self.height
        );
        if !self.gpu_timestamps {
            let _ = writeln!(out, "GPU scene pass: timestamp queries not supported by this adapter");
        }
        let _ = writeln!(
            out,
            "\nmedians          {:>12} {:>12} {:>12}",
            "GPU path", "CPU path", "static"
        );
        for stage in Stage::ALL {
            if stage == Stage::Egui {
                continue;
            }
            let cell = |p: BenchPath| {
                self.path(p)
                    .and_then(|r| r.median(stage))
                    .map_or("—".to_owned(), format_seconds)
            };
            let _ = writeln!(
                out,
                "{:<18} {:>12} {:>12} {:>12}",
                stage.label(),
                cell(BenchPath::Gpu),
                cell(BenchPath::Cpu),
                cell(BenchPath::Static)
            );
        }
        let ratio = |p, s| self.ratio(p, s).map_or("—".to_owned(), |r| format!("{r:.2}×"));
        let _ = writeln!(
            out,
            "\nGPU path / static: scene pass {}, frame {}",
            ratio(BenchPath::Gpu, Stage::GpuPass),
            ratio(BenchPath::Gpu, Stage::Frame)
        );
        let _ = writeln!(
            out,
            "CPU path / static: scene pass {}, frame {}",
            ratio(BenchPath::Cpu, Stage::GpuPass),
            ratio(BenchPath::Cpu, Stage::Frame)
        );
        out
    }

    /// One JSON object: the facts, per path the median of every stage in microseconds (null
    /// when not measured), and the ratios to the static path.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::{Map, Value, json};
        let us = |v: Option<f32>| v.map_or(Value::Null, |s| json!((f64::from(s) * 1e7).round() / 10.0));
        let mut paths = Map::new();
        for result in &self.paths {
            let mut stages = Map::new();
            for stage in Stage::ALL {
                if stage != Stage::Egui {
                    stages.insert(format!("{}_us", stage.key()), us(result.median(stage)));
                }
            }
            paths.insert(result.path.key().to_owned(), Value::Object(stages));
        }
        let ratio = |p, s| {
            self.ratio(p, s)
                .map_or(Value::Null, |r| json!((f64::from(r) * 1000.0).round() / 1000.0))
        };
        json!({
            "rig": self.rig,
            "adapter": self.adapter,
            "vertices": self.facts.vertices,
            "skinned_vertices": self.facts.skinned_vertices,
            "joints": self.facts.joints,
            "influences": self.facts.influences,
            "palette_bytes_per_frame": self.facts.palette_bytes,
            "frames": self.frames,
            "size": [self.width, self.height],
            "gpu_timestamps": self.gpu_timestamps,
            "medians": Value::Object(paths),
            "ratios": {
                "gpu_over_static_pass": ratio(BenchPath::Gpu, Stage::GpuPass),
                "cpu_over_static_pass": ratio(BenchPath::Cpu, Stage::GpuPass),
                "gpu_over_static_frame": ratio(BenchPath::Gpu, Stage::Frame),
                "cpu_over_static_frame": ratio(BenchPath::Cpu, Stage::Frame),
            },
        })
    }
}

/// Warm-up frames per path, not counted.
const WARM_UP: usize = 10;

/// Runs the frame loop headless for every [`BenchPath`] and returns the medians.
pub fn run_bench(options: &BenchOptions) -> Result<BenchReport, String> {
    let (rig, path) = match &options.rig {
        BenchRig::Demo => (crate::headless::open_rig(None).map_err(|e| e.to_string())?, None),
        BenchRig::File(file) => (
            crate::headless::open_rig(Some(file)).map_err(|e| e.to_string())?,
            Some(file.clone()),
        ),
        BenchRig::Synthetic { vertices, joints } => {
            if *joints == 0 || *joints > usize::from(u16::MAX) || *vertices == 0 {
                return Err(format!(
                    "--synthetic {vertices},{joints}: need vertices ≥ 1 and 1 ≤ joints ≤ 65535"
                ));
            }
            (crate::synthetic::skinned_tube(*vertices, *joints), None)
        }
    };
    let facts = RigFacts::of(&rig);
    let mut viewer = Viewer::new(rig, path);
    viewer.player.playing = true;
    viewer.player.looping = true;
    let gpu = Gpu::headless().map_err(|e| e.to_string())?;
    let mut offscreen = Offscreen::new(&gpu, options.width, options.height).map_err(|e| e.to_string())?;
    let mut rig_gpu = offscreen.scene.upload_rig(&gpu.device, &gpu.queue, &viewer.rig);
    offscreen.scene.set_grid(&gpu.device, &viewer.rest_bounds);
    let mut timer = GpuTimer::new(&gpu);
    // The paths take turns frame by frame, so that a slow drift of the machine (a software
    // rasterizer warming up, other work starting) weighs on all of them alike.
    let mut histories: Vec<Vec<FrameTimings>> = BenchPath::ALL
        .iter()
        .map(|_| Vec::with_capacity(options.frames))
        .collect();
    for frame in 0..WARM_UP + options.frames {
        for (bench_path, history) in BenchPath::ALL.into_iter().zip(&mut histories) {
            let (skinning, unskinned) = match bench_path {
                BenchPath::Gpu => (SkinningPath::Gpu, false),
                BenchPath::Cpu => (SkinningPath::Cpu, false),
                BenchPath::Static => (SkinningPath::Gpu, true),
            };
            viewer.skinning_path = skinning;
            viewer.skinning_method = SkinningMethod::Lbs;
            offscreen.scene.unskinned = unskinned;
            let mut timings = FrameTimings::default();
            let start = Instant::now();
            let _ = viewer.pose.take_timings();
            let _ = viewer.skinned.take_timing();
            if !unskinned {
                let duration = viewer.clip_duration();
                viewer.player.advance(1.0 / 60.0, duration);
                viewer.evaluate();
                timings.take_from_viewer(&mut viewer);
            }
            let state = viewer.frame_state(offscreen.aspect());
            let upload = offscreen.scene.write_frame(&gpu.queue, &mut rig_gpu, &state);
            timings.record_upload(&upload);
            if unskinned {
                timings.set(Stage::PaletteUpload, None);
            }
            let encode_start = Instant::now();
            let mut encoder = gpu
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("bench") });
            let writes = timer.as_mut().and_then(GpuTimer::pass_writes);
            offscreen.encode_scene(&mut encoder, &rig_gpu, &state, writes);
            if let Some(timer) = &mut timer {
                timer.resolve(&mut encoder);
            }
            let commands = encoder.finish();
            timings.set_duration(Stage::Encoding, Some(encode_start.elapsed()));
            let wait_start = Instant::now();
            gpu.queue.submit([commands]);
            if let Some(timer) = &mut timer {
                timer.submitted();
            }
            gpu.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| format!("waiting for the GPU failed: {e}"))?;
            timings.set_duration(Stage::GpuWait, Some(wait_start.elapsed()));
            timings.set_duration(Stage::Frame, Some(start.elapsed()));
            if let Some(timer) = &mut timer {
                timings.set(Stage::GpuPass, timer.collect(&gpu.device));
            }
            if frame >= WARM_UP {
                history.push(timings);
            }
        }
        // A frame the device refused would time nothing: stop with its error instead.
        if let Some(error) = gpu.take_error() {
            return Err(format!("the GPU refused a frame: {error}"));
        }
    }
    let paths = BenchPath::ALL
        .into_iter()
        .zip(&histories)
        .map(|(path, history)| {
            let mut medians = [None; STAGE_COUNT];
            for stage in Stage::ALL {
                medians[stage as usize] = median(history.iter().filter_map(|f| f.get(stage)).collect());
            }
            PathResult { path, medians }
        })
        .collect();
    Ok(BenchReport {
        rig: viewer.rig.name.clone(),
        adapter: gpu.describe(),
        facts,
        frames: options.frames,
        width: options.width,
        height: options.height,
        gpu_timestamps: timer.is_some(),
        paths,
    })
}

/// `VERTICES,JOINTS`, e.g. `100000,64`.
pub fn parse_synthetic(text: &str) -> Result<(usize, usize), String> {
    let (v, j) = text
        .split_once(',')
        .ok_or_else(|| format!("'{text}' is not VERTICES,JOINTS (e.g. 100000,64)"))?;
    let parse = |s: &str| s.trim().parse::<usize>().ok().filter(|&n| n > 0);
    match (parse(v), parse(j)) {
        (Some(v), Some(j)) => Ok((v, j)),
        _ => Err(format!("'{text}' is not VERTICES,JOINTS with positive whole numbers")),
    }
}

/// `rigscope bench`: runs [`run_bench`] and prints the table (unless `json_only`) and, as the
/// last line, the JSON object.
pub fn bench_command(options: &BenchOptions, json_only: bool) -> Result<(), String> {
    let report = run_bench(options)?;
    if !json_only {
        println!("{}", report.to_text());
    }
    println!("{}", report.to_json());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_history_follow_what_was_recorded() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        let mut timings = Timings::new(true);
        for k in 0..HISTORY + 10 {
            let mut frame = FrameTimings::default();
            frame.set(Stage::Palette, Some(k as f64));
            frame.set(Stage::Frame, Some(1.0));
            if k % 2 == 0 {
                frame.set(Stage::CpuSkinning, Some(5.0));
            }
            timings.record(frame);
        }
        assert_eq!(timings.len(), HISTORY);
        assert_eq!(
            timings.last().and_then(|f| f.get(Stage::Palette)),
            Some((HISTORY + 9) as f32)
        );
        // Newest three palette figures: HISTORY+9, +8, +7.
        assert_eq!(timings.median(Stage::Palette, 3), Some((HISTORY + 8) as f32));
        assert_eq!(timings.median(Stage::CpuSkinning, 10), Some(5.0));
        assert_eq!(timings.latest(Stage::CpuSkinning, 10), Some(5.0));
        assert_eq!(timings.median(Stage::GpuPass, 10), None);
        let csv = timings.to_csv(10, &RigFacts::default());
        assert!(csv.starts_with("stage,latest_ms,median_ms\nsampling,,\npalette_build,"));
        assert_eq!(
            csv.lines().filter(|l| l.starts_with(char::is_numeric)).count(),
            HISTORY + 1
        );
    }

    #[test]
    fn synthetic_sizes_parse() {
        assert_eq!(parse_synthetic("100000,64"), Ok((100_000, 64)));
        assert!(parse_synthetic("100000").is_err());
        assert!(parse_synthetic("0,64").is_err());
    }

    #[test]
    fn facts_count_what_is_skinned() {
        let rig = crate::synthetic::skinned_tube(640, 12);
        let facts = RigFacts::of(&rig);
        assert_eq!(facts.vertices, 640);
        assert_eq!(facts.skinned_vertices, 640);
        assert_eq!(facts.joints, 12);
        assert_eq!(facts.influences, 4);
        assert_eq!(facts.palette_bytes, 12 * 64);
    }
}
