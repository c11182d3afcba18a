//! `rigscope fix`, which repairs a file's skin weights and writes the result as a new `.glb`
//! or `.gltf` that keeps everything else (see [`crate::save`]); the same repairs on `render
//! --fix`, which only draws them; and the lines that say what the repairs changed.

use crate::commands::{CommandError, Outcome};
use crate::repair::{DEFAULT_LIMIT, DEFAULT_PRUNE, FillMode, MirrorDirection, RepairPlan, RepairSummary};
use crate::rig::Rig;
use crate::save::{SaveOptions, changed_primitives, save_changes};
use clap::Args;
use std::path::PathBuf;

/// The arguments of `rigscope fix`.
#[derive(clap::Args, Debug, Clone)]
pub struct FixArgs {
    /// The .gltf, .glb or .vrm file to repair.
    pub file: PathBuf,
    /// Where to write the repaired file (.glb or .gltf, which sets the format; a .gltf gets a
    /// new .bin beside it).
    #[arg(long, required_unless_present_any = ["dry_run", "overwrite"], conflicts_with = "overwrite")]
    pub out: Option<PathBuf>,
    /// Scale every vertex's weights to sum to 1.
    #[arg(long)]
    pub normalize: bool,
    /// Keep at most N influences per vertex (4 when no N is given): those whose drawing,
    /// renormalized, stays nearest the full weights' over the rest pose, every clip at 30 Hz
    /// and the audit's sweep (as `rigscope check` draws them), sorted largest first.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "4",
          value_parser = clap::value_parser!(u8).range(1..=8))]
    pub limit: Option<u8>,
    /// Drop weights below EPS (1/255 when no EPS is given) and renormalize.
    #[arg(long, value_name = "EPS", num_args = 0..=1, default_missing_value = "0.00392156862745098")]
    pub prune: Option<f32>,
    /// Give vertices without weight the joint whose bone is nearest in the bind pose.
    #[arg(long)]
    pub fill: bool,
    /// Copy weights from one side to the other through the symmetry check's vertex and joint pairs.
    #[arg(long, value_enum)]
    pub mirror: Option<MirrorDirection>,
    /// Repair for these engines (`all`, or profile names separated by commas, as `rigscope
    /// check` takes them): fill, limit to the fewest influences any of them reads, normalize.
    /// The output is then checked against each engine and against the input's drawing.
    #[arg(long = "for", value_name = "all|ENGINE,...", value_parser = crate::engine::parse_engines,
          conflicts_with_all = ["normalize", "limit", "prune", "fill", "mirror"])]
    pub for_engines: Option<std::vec::Vec<crate::engine::Engine>>,
    /// Print what would change without writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Write over the input, keeping a copy of it as NAME.bak first.
    #[arg(long)]
    pub overwrite: bool,
}

impl FixArgs {
    /// The repairs asked for, in the order [`crate::repair::apply`] runs them.
    pub fn plan(&self) -> RepairPlan {
        if let Some(engines) = &self.for_engines {
            return crate::engine::Engine::repairs_for(engines);
        }
        RepairPlan {
            normalize: self.normalize,
            limit: self.limit.map(usize::from),
            prune: self.prune,
            fill: self.fill.then_some(FillMode::NearestBone),
            mirror: self.mirror,
        }
    }
}

/// `rigscope fix`: loads, repairs, prints what changed per mesh and writes the output (unless
/// `--dry-run`). Flagged when nothing needed repairing, in which case nothing is written.
pub fn run(args: &FixArgs) -> Result<Outcome, CommandError> {
    let label = args.file.display().to_string();
    let plan = args.plan();
    if plan.is_empty() {
        return Err(CommandError::Argument(
            "no repair asked for: give --for, --normalize, --limit, --prune, --fill or --mirror".into(),
        ));
    }
    let original = crate::rig::load_file(&args.file).map_err(|source| CommandError::Load {
        path: args.file.clone(),
        source,
    })?;
    let (mut repaired, summary) = apply_least_deforming(&original, &plan);
    for line in summary_lines(&original, &summary) {
        println!("{line}");
    }
    if let Some(limit) = plan.limit {
        report_limit_choice(&original, &repaired, &plan, limit);
    }
    for engine in (args.for_engines.iter().flatten()).filter(|e| e.stores_weights_in_bytes()) {
        let changed = engine.store_influences(&mut repaired);
        println!(
            "weights stored as {} stores them (multiples of 1/255): {changed} vertices",
            engine.label()
        );
    }
    let changes = changed_primitives(&original, &repaired).map_err(|source| CommandError::Unsaveable {
        path: args.file.clone(),
        source,
    })?;
    if let Some(engines) = &args.for_engines {
        report_for_engines(&original, &repaired, engines);
    }
    if changes.is_empty() {
        println!("{label}: nothing needed fixing; nothing written");
        return Ok(Outcome::Flagged);
    }
    if args.dry_run {
        println!("dry run: nothing written");
        return Ok(Outcome::Passed);
    }
    let output = args.out.clone().unwrap_or_else(|| args.file.clone());
    let options = SaveOptions {
        overwrite: args.overwrite,
    };
    let saved = save_changes(&args.file, &output, &changes, options).map_err(|source| CommandError::Save {
        path: output.clone(),
        source,
    })?;
    for note in &saved.notes {
        println!("note: {note}");
    }
    if let Some(backup) = &saved.backup {
        println!("kept the original as {}", backup.display());
    }
    for path in &saved.written {
        println!("wrote {}", path.display());
    }
    Ok(Outcome::Passed)
}

/// The repairs of `plan`, the limit keeping each vertex's influences that move it least over the
/// poses `rigscope check` draws (see [`crate::repair::limit_least_deformation`]).
pub fn apply_least_deforming(rig: &Rig, plan: &RepairPlan) -> (Rig, crate::repair::RepairSummary) {
    crate::repair::apply_limiting_with(rig, plan, |rig, limit| {
        crate::repair::limit_least_deformation(rig, limit, || crate::engine::check::pose_palettes(rig))
    })
}

/// How far the limited drawing is from the input's at worst, against keeping the largest
/// weights (what the choice gained), over the poses `rigscope check` draws.
fn report_limit_choice(original: &Rig, repaired: &Rig, plan: &RepairPlan, limit: usize) {
    let (largest, _) = crate::repair::apply(original, plan);
    fn primitives(rig: &Rig) -> impl Iterator<Item = &crate::rig::Primitive> {
        rig.meshes.iter().flat_map(|m| &m.primitives)
    }
    let same = (primitives(&largest).zip(primitives(repaired))).all(|(a, b)| match (&a.influences, &b.influences) {
        (Some(a), Some(b)) => a.joints == b.joints && a.weights == b.weights,
        (a, b) => a.is_none() && b.is_none(),
    });
    if same {
        println!("limit {limit}: keeping the {limit} largest weights moves every vertex least");
        return;
    }
    let before = crate::engine::check::drawing_distance(original, &largest);
    let after = crate::engine::check::drawing_distance(original, repaired);
    println!(
        "limit {limit}: the repaired drawing is within {after:.3e} of the height of the input's at worst \
         (keeping the {limit} largest weights: {before:.3e})"
    );
}

/// What `fix --for` made of the rig: how far the repaired drawing is from the input's, and how
/// far each engine draws the repaired rig from its own drawing.
fn report_for_engines(original: &Rig, repaired: &Rig, engines: &[crate::engine::Engine]) {
    let moved = crate::engine::check::drawing_distance(original, repaired);
    println!("the repaired drawing is within {moved:.3e} of the height of the input's, over every clip at 30 Hz");
    for check in crate::engine::check::check_engines(repaired, engines) {
        match &check.refused {
            Some(refused) => println!("  {}: {refused}", check.label),
            None => println!(
                "  {}: draws the repaired rig within {:.3e} of the height",
                check.label,
                check.worst_distance()
            ),
        }
    }
}

/// Which weight repairs to run; with `--fix` alone: fill, prune 1/255, limit 4 and normalize.
#[derive(Debug, Clone, Default, Args)]
pub struct RenderFixArgs {
    /// Repair the rig's skin weights before drawing it (the file is not changed).
    #[arg(long)]
    pub fix: bool,
    /// With --fix: make every vertex's weights sum to 1.
    #[arg(long, requires = "fix")]
    pub normalize: bool,
    /// With --fix: keep the N largest influences per vertex (4 when N is omitted), renormalized.
    #[arg(long, requires = "fix", value_name = "N", num_args = 0..=1, default_missing_value = "4")]
    pub limit: Option<usize>,
    /// With --fix: drop weights below EPS (1/255 when omitted), renormalized.
    #[arg(long, requires = "fix", value_name = "EPS", num_args = 0..=1, default_missing_value = "0.00392156862745098")]
    pub prune: Option<f32>,
    /// With --fix: give vertices with no weight to the joint whose bone is nearest.
    #[arg(long, requires = "fix")]
    pub fill: bool,
    /// With --fix: copy weights from one side to the other through the exact mirror pairs.
    #[arg(long, requires = "fix", value_enum)]
    pub mirror: Option<MirrorDirection>,
}

impl RenderFixArgs {
    /// The repairs asked for; none without `--fix`.
    pub fn plan(&self) -> RepairPlan {
        if !self.fix {
            return RepairPlan::default();
        }
        let plan = RepairPlan {
            normalize: self.normalize,
            limit: self.limit,
            prune: self.prune,
            fill: self.fill.then_some(FillMode::NearestBone),
            mirror: self.mirror,
        };
        if plan.is_empty() {
            RepairPlan {
                normalize: true,
                limit: Some(DEFAULT_LIMIT),
                prune: Some(DEFAULT_PRUNE),
                fill: Some(FillMode::NearestBone),
                mirror: None,
            }
        } else {
            plan
        }
    }
}

/// One line per repair: vertices changed in all and per primitive that changed, what was left
/// and why nothing was done.
pub fn summary_lines(rig: &Rig, summary: &RepairSummary) -> Vec<String> {
    summary
        .repairs
        .iter()
        .map(|r| {
            let name = serde_json::to_value(r.repair)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let mut line = format!("{name}: {} vertices changed", r.changed());
            let parts: Vec<String> = (r.primitives.iter())
                .filter(|p| p.changed > 0)
                .map(|p| {
                    let mesh = rig.meshes.get(p.mesh).map_or("?", |m| m.name.as_str());
                    format!("mesh '{mesh}' primitive {}: {}", p.gltf_primitive, p.changed)
                })
                .collect();
            if !parts.is_empty() {
                line += &format!(" ({})", parts.join(", "));
            }
            if r.left_count > 0 {
                line += &format!("; {} vertices left as they were", r.left_count);
            }
            if let Some(note) = &r.note {
                line += &format!("; {note}");
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        fix: RenderFixArgs,
    }

    fn plan(args: &[&str]) -> Result<RepairPlan, clap::Error> {
        Cli::try_parse_from(std::iter::once("rigscope").chain(args.iter().copied())).map(|cli| cli.fix.plan())
    }

    #[test]
    fn fix_alone_runs_the_cleanup_and_flags_pick_repairs() {
        assert!(plan(&[]).unwrap().is_empty());
        let all = plan(&["--fix"]).unwrap();
        assert!(all.normalize && all.fill == Some(FillMode::NearestBone) && all.mirror.is_none());
        assert_eq!((all.limit, all.prune), (Some(4), Some(1.0 / 255.0)));
        let some = plan(&["--fix", "--limit", "--mirror", "right-to-left"]).unwrap();
        assert_eq!(
            some,
            RepairPlan {
                limit: Some(4),
                mirror: Some(MirrorDirection::RightToLeft),
                ..RepairPlan::default()
            }
        );
        assert_eq!(
            plan(&["--fix", "--limit", "8", "--prune", "0.01"]).unwrap().limit,
            Some(8)
        );
        assert_eq!(plan(&["--fix", "--prune", "0.01"]).unwrap().prune, Some(0.01));
        // Repair flags without --fix are refused.
        let error = plan(&["--normalize"]).unwrap_err();
        assert_eq!(error.kind(), clap::error::ErrorKind::MissingRequiredArgument);
    }
}
