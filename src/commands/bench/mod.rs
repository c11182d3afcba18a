//! `rigscope bench`: the viewer's frame loop run headless — evaluate the pose → (skin on the
//! CPU) → write the frame → encode → submit → wait, on an offscreen target — for the GPU path,
//! the CPU path and the same mesh drawn static, with the medians of every stage.

pub mod orbit;

use crate::cli::{RigArgs, RigSource, SkinningChoice, SourceError, ViewArgs};
use crate::commands::{CommandError, Outcome};
use crate::draw::{Clock, FrameStep, ViewRenderer};
use crate::render::timer::GpuTimer;
use crate::render::{Gpu, GpuMemory, Offscreen, ViewMode};
use crate::skin::{SkinningMethod, SkinningPath};
use crate::timings::{FrameTimings, ResidentMemory, RigFacts, STAGE_COUNT, Stage, format_seconds, mebibytes, median};
use crate::viewer::Viewer;
use std::time::Instant;

/// The arguments of `rigscope bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    #[command(flatten)]
    pub rig: RigArgs,
    /// Timed frames per path.
    #[arg(long, default_value_t = 120)]
    pub frames: usize,
    /// Image size, WxH.
    #[arg(long, default_value = "960x720", value_parser = crate::cli::parse_size)]
    pub size: (u32, u32),
    #[command(flatten)]
    pub view: ViewArgs,
    /// Print only the JSON line.
    #[arg(long)]
    pub json: bool,
    /// Time the window's way with heavy scenes instead: orbit the camera for --frames
    /// frames (a heavy rig shows its proxy), then hold still until the whole scene is
    /// finished portion by portion and kept. GPU path, anti-aliasing as the window's Auto.
    #[arg(long)]
    pub orbit: bool,
    #[command(flatten)]
    pub clips: crate::cli::ClipsArgs,
    #[command(flatten)]
    pub method: SkinningChoice,
}

impl BenchArgs {
    pub fn options(&self) -> BenchOptions {
        BenchOptions {
            rig: self.rig.source(),
            frames: self.frames.max(1),
            width: self.size.0,
            height: self.size.1,
            view: self.view.clone(),
            clips: self.clips.files(),
            method: self.method.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct BenchOptions {
    pub rig: RigSource,
    /// Timed frames per path (after a few warm-up frames).
    pub frames: usize,
    pub width: u32,
    pub height: u32,
    /// What every timed frame shows, over the viewer's defaults (the onion skin off unless
    /// asked for).
    pub view: ViewArgs,
    /// Other files whose clips are added to the rig (`--clips`).
    pub clips: crate::retarget::ClipFiles,
    /// How the skinned paths skin (`--method`, `--dqs-joint`).
    pub method: SkinningChoice,
}

impl BenchOptions {
    /// The rig, with the clips of `clips` added, and the file it came from.
    pub fn open(&self) -> Result<(crate::rig::Rig, Option<std::path::PathBuf>), CommandError> {
        let (rig, path) = (self.rig.open_with(&self.clips.options.read)).map_err(|error| match (error, &self.rig) {
            (SourceError::Rig(source), RigSource::File(path)) => CommandError::Load {
                path: path.clone(),
                source,
            },
            (error, _) => error.into(),
        })?;
        let rig = crate::cli::add_clip_files(rig, &self.clips)?;
        Ok((rig, path))
    }
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

/// The CPU skinning kernels on the bench rig's own skinned meshes, in the pose the frame loop
/// ended on, positions and normals: medians in ns per skinned vertex.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelRates {
    pub kernel: &'static str,
    /// Every vertex by one matrix: the floor (see [`crate::skin::fast::static_transform`]).
    pub static_ns: f64,
    pub lbs_ns: f64,
    pub dqs_ns: f64,
}

/// Times the static transform, fast LBS and fast DQS over every skinned primitive of the
/// viewer's rig (15 runs each after a warm-up; medians), or `None` without skinned vertices.
fn kernel_rates(viewer: &mut Viewer) -> Option<KernelRates> {
    use crate::skin::fast::{skin_lbs, static_transform};
    use glam::Vec3;
    let rig = viewer.rig().clone();
    let pose = viewer.pose();
    let dual_quats: Vec<Vec<crate::skin::dqs::DualQuat>> = (pose.palettes.iter())
        .map(|palette| {
            let mut dual_quats = vec![crate::skin::dqs::DualQuat::IDENTITY; palette.len()];
            crate::skin::dqs::dual_quat_palette(palette, &mut dual_quats);
            dual_quats
        })
        .collect();
    let primitives: Vec<_> = (rig.instances.iter().enumerate())
        .filter(|(_, instance)| instance.skin.is_some())
        .flat_map(|(i, instance)| {
            let primitives = rig.meshes[instance.mesh].primitives.iter();
            primitives.filter_map(move |p| p.influences.as_ref().map(|inf| (i, p, inf)))
        })
        .collect();
    let vertices: usize = primitives.iter().map(|(_, p, _)| p.positions.len()).sum();
    let longest = primitives.iter().map(|(_, p, _)| p.positions.len()).max()?;
    if vertices == 0 {
        return None;
    }
    let (mut out_p, mut out_n) = (vec![Vec3::ZERO; longest], vec![Vec3::ZERO; longest]);
    let mut median_ns = |method: usize| {
        let mut times: Vec<f64> = (0..16)
            .map(|_| {
                let start = Instant::now();
                for &(i, p, influences) in &primitives {
                    let (n, palette) = (p.positions.len(), &pose.palettes[i]);
                    let (op, on) = (&mut out_p[..n], &mut out_n[..n]);
                    match method {
                        0 => static_transform(
                            palette.first().unwrap_or(&glam::Mat4::IDENTITY),
                            &p.positions,
                            &p.normals,
                            op,
                            on,
                        ),
                        1 => skin_lbs(palette, influences, &p.positions, &p.normals, op, on),
                        _ => crate::skin::skin_dqs(&dual_quats[i], influences, &p.positions, &p.normals, op, on),
                    }
                }
                start.elapsed().as_secs_f64()
            })
            .skip(1)
            .collect();
        times.sort_by(f64::total_cmp);
        times[times.len() / 2] * 1e9 / vertices as f64
    };
    Some(KernelRates {
        kernel: crate::skin::fast::Kernel::detect().label(),
        static_ns: median_ns(0),
        lbs_ns: median_ns(1),
        dqs_ns: median_ns(2),
    })
}

#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    pub rig: String,
    pub adapter: String,
    pub facts: RigFacts,
    pub frames: usize,
    pub width: u32,
    pub height: u32,
    pub view: ViewMode,
    /// How the GPU and CPU paths skinned.
    pub method: SkinningMethod,
    pub gpu_timestamps: bool,
    pub paths: Vec<PathResult>,
    /// The CPU skinning kernels alone on the rig's meshes (`None` without skinned vertices).
    pub kernels: Option<KernelRates>,
    /// The process's resident memory after the frames (`None` where it cannot be read).
    pub resident: Option<ResidentMemory>,
    /// What the rig takes on the GPU.
    pub gpu_memory: GpuMemory,
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
            "{} vertices ({} skinned), {} joints, {} influences, {} palette bytes/frame; {} frames per path at {}x{}, {} view, {} skinning",
            f.vertices,
            f.skinned_vertices,
            f.joints,
            f.influences,
            f.palette_bytes,
            self.frames,
            self.width,
            self.height,
            self.view,
            self.method
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
        let resident = self.resident.map_or("not measured".to_owned(), |r| {
            format!("{} (peak {})", mebibytes(r.now), mebibytes(r.peak))
        });
        let _ = writeln!(
            out,
            "resident memory {resident}; GPU buffers {}, textures {}; the data's own size {}",
            mebibytes(self.gpu_memory.buffers),
            mebibytes(self.gpu_memory.textures),
            mebibytes(f.data_bytes)
        );
        if let Some(k) = &self.kernels {
            let _ = writeln!(
                out,
                "CPU skinning ({} kernel), positions+normals: skin_lbs {:.2} ns/vertex ({:.2}× static_transform, {:.2} ns), skin_dqs {:.2} ns/vertex ({:.2}× skin_lbs)",
                k.kernel,
                k.lbs_ns,
                k.lbs_ns / k.static_ns,
                k.static_ns,
                k.dqs_ns,
                k.dqs_ns / k.lbs_ns
            );
        }
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
            "data_bytes": self.facts.data_bytes,
            "frames": self.frames,
            "size": [self.width, self.height],
            "view": self.view.to_string(),
            "method": self.method.to_string(),
            "gpu_timestamps": self.gpu_timestamps,
            "medians": Value::Object(paths),
            "cpu_kernels": self.kernels.map_or(Value::Null, |k| json!({
                "kernel": k.kernel,
                "static_ns_per_vertex": (k.static_ns * 100.0).round() / 100.0,
                "lbs_ns_per_vertex": (k.lbs_ns * 100.0).round() / 100.0,
                "dqs_ns_per_vertex": (k.dqs_ns * 100.0).round() / 100.0,
            })),
            "resident_bytes": self.resident.map(|r| r.now),
            "peak_resident_bytes": self.resident.map(|r| r.peak),
            "gpu_buffer_bytes": self.gpu_memory.buffers,
            "gpu_texture_bytes": self.gpu_memory.textures,
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
pub fn run_bench(options: &BenchOptions) -> Result<BenchReport, CommandError> {
    let (rig, path) = options.open()?;
    let facts = RigFacts::of(&rig);
    let mut viewer = Viewer::new(rig, path);
    viewer.set_playing(true);
    viewer.set_looping(true);
    options.view.apply(&mut viewer.view.options);
    let method = options.method.apply(&mut viewer)?;
    let gpu = Gpu::headless()?;
    let target = Offscreen::new(&gpu, options.width, options.height)?;
    // The skinning paths share one renderer, as the window switches them; the static baseline
    // has one of its own.
    let (mut skinning_renderer, mut static_renderer) =
        (ViewRenderer::offscreen(&gpu), ViewRenderer::static_baseline(&gpu));
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
            viewer.set_skinning(skinning, method);
            let renderer = if unskinned {
                &mut static_renderer
            } else {
                &mut skinning_renderer
            };
            let clock = if unskinned {
                Clock::Still
            } else {
                Clock::Advance(1.0 / 60.0)
            };
            let step = FrameStep {
                gpu: &gpu,
                renderer,
                timer: timer.as_mut(),
                wait: true,
            };
            let mut frame_drawn = step.run(&mut viewer, clock, target.aspect(), |frame| {
                let (renderer, viewer) = (&*frame.renderer, frame.viewer);
                {
                    let mut writes = frame.timer.as_deref_mut().and_then(GpuTimer::pass_writes);
                    target.encode(frame.encoder, &mut |encoder, targets, view| {
                        renderer.encode(encoder, targets, view, viewer, None, writes.take());
                    });
                }
                if let Some(timer) = frame.timer.as_deref_mut() {
                    timer.resolve(frame.encoder, 0);
                }
            })?;
            let timings = &mut frame_drawn.timings;
            if unskinned {
                timings.set(Stage::PaletteUpload, None);
            }
            if frame >= WARM_UP {
                history.push(frame_drawn.timings);
            }
        }
        // A frame the device refused would time nothing: stop with its error instead.
        if let Some(error) = gpu.take_error() {
            return Err(CommandError::FrameRefused(error));
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
    let gpu_memory = skinning_renderer.gpu_memory().unwrap_or_default();
    let kernels = kernel_rates(&mut viewer);
    Ok(BenchReport {
        kernels,
        resident: ResidentMemory::read(),
        gpu_memory,
        rig: viewer.rig().name.clone(),
        adapter: gpu.describe(),
        facts,
        frames: options.frames,
        width: options.width,
        height: options.height,
        view: options.view.view,
        method,
        gpu_timestamps: timer.is_some(),
        paths,
    })
}

/// `rigscope bench`: runs [`run_bench`] (or with `--orbit` [`orbit::run_orbit`]) and
/// prints the table (unless `--json`) and, as the last line, the JSON object.
pub fn run(args: &BenchArgs) -> Result<Outcome, CommandError> {
    let options = args.options();
    let (text, json) = if args.orbit {
        let report = orbit::run_orbit(&options)?;
        (report.to_text(), report.to_json())
    } else {
        let report = run_bench(&options)?;
        (report.to_text(), report.to_json())
    };
    if !args.json {
        println!("{text}");
    }
    println!("{json}");
    Ok(Outcome::Passed)
}
