//! `rigscope diff`: what changed between two files of the same rig, as text or JSON, with an
//! exit status a pipeline can gate on.

use crate::commands::{CommandError, Outcome, open_rig};
use crate::compare::{PoseRequest, Thresholds, compare_with_poses};
use serde_json::json;
use std::fmt::Write;
use std::path::PathBuf;

/// The arguments of `rigscope diff`.
#[derive(clap::Args, Debug, Clone)]
pub struct DiffArgs {
    /// The first file (.gltf, .glb, .vrm or .fbx; `demo` for the built-in demo rig).
    pub a: PathBuf,
    /// The second file, compared with the first.
    pub b: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Largest joint or vertex position change, as a fraction of the rig's size (its rest
    /// pose's bounding box diagonal).
    #[arg(long, value_name = "FRACTION", default_value_t = Thresholds::default().position)]
    pub position: f32,
    /// Largest joint rotation change, in degrees.
    #[arg(long, value_name = "DEG", default_value_t = Thresholds::default().rotation_degrees)]
    pub rotation: f32,
    /// Largest weight difference of a vertex, ½ Σ|w − w′| (0 same, 1 disjoint).
    #[arg(long, value_name = "FRACTION", default_value_t = Thresholds::default().weight)]
    pub weight: f32,
    /// Largest change of a clip's duration, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = Thresholds::default().duration)]
    pub duration: f32,
    /// Largest mean difference of a texture's pixels, as a fraction of full scale.
    #[arg(long, value_name = "FRACTION", default_value_t = Thresholds::default().texture)]
    pub texture: f32,
    /// Vertices match when their bind positions are closer than this fraction of their
    /// primitive's median edge length.
    #[arg(long, value_name = "FRACTION", default_value_t = Thresholds::default().vertex_match)]
    pub vertex_match: f32,
    /// Also pose both files at this time (seconds) of the clip and report the largest
    /// distance between matched skinned vertices and between matched joints (repeatable).
    #[arg(long = "at", value_name = "SECONDS")]
    pub at: Vec<f32>,
    /// Also pose both files at this many times spread evenly over the clip (1: its start).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub poses: usize,
    /// A's clip posed by --at and --poses (default: A's first animated clip).
    #[arg(long, value_name = "NAME")]
    pub clip: Option<String>,
    /// B's clip posed by --at and --poses (default: the clip of A's clip's name, else B's first
    /// animated clip).
    #[arg(long, value_name = "NAME")]
    pub clip_b: Option<String>,
    /// Match vertices for --at and --poses only where both files draw them at the start of
    /// their clips, not in the bind pose (files whose bind spaces differ mesh by mesh).
    #[arg(long)]
    pub match_at_start: bool,
    /// Pose B this many seconds later in its clip than A (a re-export that moved the clip).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0, allow_negative_numbers = true)]
    pub shift_b: f32,
    /// Entries printed per list in the text output.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
}

impl DiffArgs {
    pub fn thresholds(&self) -> Thresholds {
        Thresholds {
            position: self.position,
            rotation_degrees: self.rotation,
            weight: self.weight,
            duration: self.duration,
            texture: self.texture,
            vertex_match: self.vertex_match,
        }
    }

    /// What --at, --poses, --clip and --clip-b ask to pose (`None` when neither time option is
    /// given).
    pub fn pose_request(&self) -> Option<PoseRequest> {
        (!self.at.is_empty() || self.poses > 0).then(|| PoseRequest {
            clip_a: self.clip.clone(),
            clip_b: self.clip_b.clone(),
            times: self.at.clone(),
            evenly: self.poses,
            shift_b: self.shift_b,
            match_at_start: self.match_at_start,
        })
    }
}

/// `rigscope diff`: prints the differences (or one JSON document), flagged when the files
/// differ beyond the thresholds; either file not loading is an error.
pub fn run(args: &DiffArgs) -> Result<Outcome, CommandError> {
    let started = std::time::Instant::now();
    let (a, b) = rayon::join(|| open_rig(&args.a), || open_rig(&args.b));
    let (a, b) = (a?, b?);
    let thresholds = args.thresholds();
    let (diff, poses) = compare_with_poses(&a, &b, &thresholds, args.pose_request().as_ref())?;
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let mut document = serde_json::to_value(&diff).unwrap_or_default();
        document["a"] = json!(args.a);
        document["b"] = json!(args.b);
        document["loaded"] = json!(true);
        document["thresholds"] = json!(thresholds);
        document["seconds"] = json!(seconds);
        if let Some(poses) = &poses {
            document["poses"] = serde_json::to_value(poses).unwrap_or_default();
        }
        println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    } else {
        let mut out = diff.to_text((&args.a, &a), (&args.b, &b), &thresholds, args.top);
        if let Some(poses) = &poses {
            out += &poses.to_text(thresholds.position);
        }
        let _ = writeln!(out, "\n({seconds:.2} s)");
        print!("{out}");
    }
    Ok(Outcome::flagged_if(!diff.identical))
}
