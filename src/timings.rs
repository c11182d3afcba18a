//! Frame timings, stage by stage: what one frame of the viewer costs and where.
//!
//! One concept shared by the window's Timings panel and `rigscope bench`: a frame's figures
//! ([`FrameTimings`], one per [`Stage`]), a rolling history with medians ([`Timings`]), and the
//! facts that size the work ([`RigFacts`]). The benchmark itself is
//! `commands::bench`.

use crate::anim::StageTimes;
use crate::render::FrameUpload;
use crate::rig::Rig;
use std::time::{Duration, Instant};

/// The process's resident memory now and at its highest, in bytes, as the kernel counts it
/// (`VmRSS` and `VmHWM`). On a software adapter this includes the GPU's buffers and textures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResidentMemory {
    pub now: u64,
    pub peak: u64,
}

impl ResidentMemory {
    /// Read from `/proc/self/status`; `None` where there is none (not Linux).
    pub fn read() -> Option<ResidentMemory> {
        ResidentMemory::parse(&std::fs::read_to_string("/proc/self/status").ok()?)
    }

    /// The figures of a `/proc/PID/status` text.
    pub fn parse(status: &str) -> Option<ResidentMemory> {
        let kib = |key: &str| -> Option<u64> {
            let line = status.lines().find_map(|l| l.strip_prefix(key))?;
            let value = line.trim().strip_suffix("kB")?.trim();
            value.parse::<u64>().ok().map(|k| k * 1024)
        };
        Some(ResidentMemory {
            now: kib("VmRSS:")?,
            peak: kib("VmHWM:")?,
        })
    }
}

/// `bytes` in MiB with one decimal, as the figures are printed.
pub fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

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

/// What bringing the pose up to date cost, stage by stage.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameStages {
    /// The pose evaluation, when the pose changed.
    pub pose: Option<StageTimes>,
    /// CPU skinning, when the CPU path skinned this pose.
    pub cpu_skinning: Option<Duration>,
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

    /// Records what the pose evaluations of this frame cost (`None`: the pose did not change).
    pub fn record_stages(&mut self, stages: Option<FrameStages>) {
        let Some(stages) = stages else { return };
        self.set_duration(Stage::Sampling, stages.pose.map(|p| p.sampling));
        self.set_duration(Stage::Palette, stages.pose.map(|p| p.palette));
        self.set_duration(Stage::CpuSkinning, stages.cpu_skinning);
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
    /// The data's own size ([`Rig::data_bytes`]).
    pub data_bytes: u64,
}

impl RigFacts {
    pub fn of(rig: &Rig) -> RigFacts {
        let mut facts = RigFacts {
            vertices: rig.vertex_count(),
            data_bytes: rig.data_bytes(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_memory_is_read_from_the_kernels_status_text() {
        let status = "Name:\trigscope\nVmPeak:\t  900 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\n";
        let memory = ResidentMemory::parse(status).unwrap();
        assert_eq!((memory.now, memory.peak), (1024 * 1024, 2048 * 1024));
        assert_eq!(ResidentMemory::parse("VmRSS:\t1 kB\n"), None, "no peak");
        assert_eq!(mebibytes(3 << 20), "3.0 MiB");
        #[cfg(target_os = "linux")]
        {
            let own = ResidentMemory::read().unwrap();
            assert!(own.now > 0 && own.peak >= own.now, "{own:?}");
        }
    }

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
