//! `rigscope check`: how each engine profile draws a file (see [`crate::engine`]), as a table
//! of engines × findings, or JSON.

use crate::commands::{CommandError, Outcome, open_rig};
use crate::engine::check::{EngineCheck, SAMPLE_RATE, check_engines};
use crate::engine::{Engine, parse_engines};
use serde_json::json;
use std::path::PathBuf;

/// The arguments of `rigscope check`.
#[derive(clap::Args, Debug, Clone)]
pub struct CheckArgs {
    /// A .gltf, .glb, .vrm or .fbx file; `demo` checks the built-in demo rig.
    pub file: PathBuf,
    /// `all`, or profile names separated by commas: unity-editor, unity, unity-2, unity-1,
    /// unreal, godot, three, babylon, bevy, bevy-webgl2, filament, sample-renderer.
    #[arg(long, value_name = "all|NAME,...", default_value = "all", value_parser = parse_engines)]
    pub engines: std::vec::Vec<Engine>,
    /// Flag an engine that draws a vertex farther than this fraction of the rig's height from
    /// the file's own drawing.
    #[arg(long, value_name = "F", default_value_t = 1e-3)]
    pub tolerance: f64,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Whether `check` is flagged: the engine does not load the file, or draws a vertex farther
/// than `tolerance` of the height off.
fn flagged(check: &EngineCheck, tolerance: f64) -> bool {
    check.refused.is_some() || check.worst_distance() > tolerance
}

/// `rigscope check`: exits with 1 when a listed engine is flagged, 2 when the file cannot be read.
pub fn run(args: &CheckArgs) -> Result<Outcome, CommandError> {
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        return Err(CommandError::Argument(format!(
            "--tolerance must be 0 or more, not {}",
            args.tolerance
        )));
    }
    let rig = open_rig(&args.file)?;
    let checks = check_engines(&rig, &args.engines);
    let any_flagged = checks.iter().any(|c| flagged(c, args.tolerance));
    if args.json {
        let engines: Vec<_> = (checks.iter())
            .map(|c| {
                let mut value = serde_json::to_value(c).unwrap_or_default();
                value["flagged"] = json!(flagged(c, args.tolerance));
                value
            })
            .collect();
        let document = json!({
            "file": args.file.display().to_string(),
            "tolerance": args.tolerance,
            "sample_rate": SAMPLE_RATE,
            "clips": rig.clips.len(),
            "engines": engines,
        });
        println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    } else {
        print!("{}", table(&checks, args.tolerance));
    }
    Ok(Outcome::flagged_if(any_flagged))
}

/// The text table: one line per engine, then its findings and its worst vertex.
pub fn table(checks: &[EngineCheck], tolerance: f64) -> String {
    let width = checks.iter().map(|c| c.label.len()).max().unwrap_or(0);
    let mut out = format!(
        "{:width$}  {:>5}  {:>8}  {:>8}  {:>10}\n",
        "engine", "loads", "rows", "moved", "worst"
    );
    for check in checks {
        let mark = if flagged(check, tolerance) { "  ✗" } else { "" };
        out += &format!(
            "{:width$}  {:>5}  {:>8}  {:>8}  {:>10.3e}{mark}\n",
            check.label,
            if check.refused.is_some() { "no" } else { "yes" },
            check.rows_changed,
            check.vertices_moved,
            check.worst_distance(),
        );
        if let Some(refused) = &check.refused {
            out += &format!("  {refused}\n");
        }
        for finding in &check.findings {
            out += &format!("  {finding}\n");
        }
        if let Some(worst) = check.worst.as_ref().filter(|w| w.distance > 0.0) {
            let joints: Vec<String> = (worst.joints.iter())
                .map(|(name, weight)| format!("{name} {weight:.3}"))
                .collect();
            out += &format!(
                "  worst: {} primitive {} vertex {} at {} ({})\n",
                worst.mesh,
                worst.primitive,
                worst.vertex,
                worst.pose_text(),
                joints.join(", ")
            );
        }
    }
    out += &format!(
        "rows: vertices whose influences the engine changes; moved: vertices drawn more than 1e-6 \
         of the height away; worst: the farthest, as a fraction of the height, over the rest pose, \
         every clip at {SAMPLE_RATE} Hz and the audit's sweep (each joint turned ±90°) (✗: past {tolerance:e}, or not loaded)\n"
    );
    out
}
