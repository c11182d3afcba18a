//! `rigscope fix`: repairs a file's skin weights and writes the result as a new `.glb` or
//! `.gltf` that keeps everything else (see [`crate::save`]).

use crate::rig::{Influences, Rig};
use crate::save::{SaveOptions, changed_primitives, save_changes};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status when something was repaired (and written, unless `--dry-run`).
pub const EXIT_CHANGED: u8 = 0;
/// Exit status when nothing needed repairing (nothing is written).
pub const EXIT_NOTHING_TO_FIX: u8 = 1;
/// Exit status when the file cannot be loaded or the output cannot be written.
pub const EXIT_FAILED: u8 = 2;

/// Which side's weights `--mirror` copies onto the other.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorDirection {
    LeftToRight,
    RightToLeft,
}

/// The arguments of `rigscope fix`.
#[derive(clap::Args, Debug, Clone)]
pub struct FixArgs {
    /// The .gltf, .glb or .vrm file to repair.
    pub file: PathBuf,
    /// Where to write the repaired file (.glb or .gltf, which sets the format; a .gltf gets a
    /// new .bin beside it).
    #[arg(long, required_unless_present_any = ["dry_run", "in_place"], conflicts_with = "in_place")]
    pub out: Option<PathBuf>,
    /// Scale every vertex's weights to sum to 1.
    #[arg(long)]
    pub normalize: bool,
    /// Keep the N largest weights of every vertex (4 when no N is given) and renormalize.
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
    /// Print what would change without writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Write over the input, keeping a copy of it as NAME.bak first.
    #[arg(long)]
    pub in_place: bool,
}

/// What the repairs changed in one glTF mesh.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MeshRepairs {
    pub mesh: usize,
    pub name: String,
    /// Vertices whose weights were scaled to sum to 1.
    pub normalized: usize,
    /// Vertices that had more influences than the limit.
    pub limited: usize,
}

/// `rigscope fix`: loads, repairs, prints what changed per mesh and writes the output.
pub fn fix_command(args: &FixArgs) -> ExitCode {
    let label = args.file.display().to_string();
    let unavailable: Vec<&str> = [
        ("--prune", args.prune.is_some()),
        ("--fill", args.fill),
        ("--mirror", args.mirror.is_some()),
    ]
    .iter()
    .filter(|(_, asked)| *asked)
    .map(|(flag, _)| *flag)
    .collect();
    if !unavailable.is_empty() {
        eprintln!("rigscope: {} not available yet in this build", unavailable.join(", "));
        return ExitCode::from(EXIT_FAILED);
    }
    if !args.normalize && args.limit.is_none() {
        eprintln!("rigscope: no repair asked for: give --normalize and/or --limit N");
        return ExitCode::from(EXIT_FAILED);
    }
    let original = match crate::rig::load_file(&args.file) {
        Ok(rig) => rig,
        Err(e) => {
            eprintln!("rigscope: cannot load {label}: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let mut repaired = original.clone();
    let repairs = apply_repairs(&mut repaired, args.normalize, args.limit.map(usize::from));
    for mesh in &repairs {
        let mut parts = Vec::new();
        if args.normalize {
            parts.push(format!("normalized {} vertices", mesh.normalized));
        }
        if let Some(limit) = args.limit {
            parts.push(format!("limited {} vertices to {limit} influences", mesh.limited));
        }
        println!("mesh {} '{}': {}", mesh.mesh, mesh.name, parts.join(", "));
    }
    let changes = match changed_primitives(&original, &repaired) {
        Ok(changes) => changes,
        Err(e) => {
            eprintln!("rigscope: {label}: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if changes.is_empty() {
        println!("{label}: nothing needed fixing; nothing written");
        return ExitCode::from(EXIT_NOTHING_TO_FIX);
    }
    if args.dry_run {
        println!("dry run: nothing written");
        return ExitCode::from(EXIT_CHANGED);
    }
    let output = args.out.clone().unwrap_or_else(|| args.file.clone());
    let options = SaveOptions {
        in_place: args.in_place,
    };
    match save_changes(&args.file, &output, &changes, options) {
        Ok(saved) => {
            for note in &saved.notes {
                println!("note: {note}");
            }
            if let Some(backup) = &saved.backup {
                println!("kept the original as {}", backup.display());
            }
            for path in &saved.written {
                println!("wrote {}", path.display());
            }
            ExitCode::from(EXIT_CHANGED)
        }
        Err(e) => {
            eprintln!("rigscope: cannot write {}: {e}", output.display());
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// The repairs `fix` applies to the rig's weights, per glTF mesh, in this order: limit (which
/// renormalizes what it keeps), then normalize. The one place the repairs are called from.
pub fn apply_repairs(rig: &mut Rig, normalize: bool, limit: Option<usize>) -> Vec<MeshRepairs> {
    let mut report = Vec::new();
    for (m, mesh) in rig.meshes.iter_mut().enumerate() {
        let facts = rig.facts.primitives.get(m).map_or(&[][..], Vec::as_slice);
        let mut repairs = MeshRepairs {
            mesh: m,
            name: mesh.name.clone(),
            ..MeshRepairs::default()
        };
        let mut weighted = false;
        for (k, primitive) in mesh.primitives.iter_mut().enumerate() {
            let Some(influences) = &mut primitive.influences else {
                continue;
            };
            weighted = true;
            let quantum = facts.get(k).map_or(0.0, |f| f.weight_quantum);
            if let Some(limit) = limit {
                repairs.limited += limit_influences(influences, limit);
            }
            if normalize {
                repairs.normalized += normalize_weights(influences, quantum);
            }
        }
        if weighted {
            report.push(repairs);
        }
    }
    report
}

/// Scales every vertex's weights to sum to 1 where the sum is off by more than half the stored
/// type's step (or 1e-7 for floats, well inside the 2e-7 per weight the Khronos validator
/// allows); vertices without weight stay as they are. Float weights then give what rounding to
/// f32 left over to the largest weight. Returns how many vertices changed.
fn normalize_weights(influences: &mut Influences, quantum: f32) -> usize {
    let tolerance = if quantum > 0.0 { f64::from(quantum) * 0.5 } else { 1e-7 };
    let sum_of = |vertex: &[[f32; 4]]| -> f64 { vertex.iter().flatten().map(|&w| f64::from(w)).sum() };
    let mut changed = 0;
    for vertex in influences.weights.chunks_mut(influences.sets.max(1)) {
        let sum = sum_of(vertex);
        if !(sum > 0.0 && sum.is_finite() && (sum - 1.0).abs() > tolerance) {
            continue;
        }
        vertex
            .iter_mut()
            .flatten()
            .for_each(|w| *w = (f64::from(*w) / sum) as f32);
        let left_over = 1.0 - sum_of(vertex);
        if let Some(largest) = vertex.iter_mut().flatten().max_by(|a, b| a.total_cmp(b)) {
            *largest = (f64::from(*largest) + left_over) as f32;
        }
        changed += 1;
    }
    changed
}

/// Keeps the `limit` largest weights of every vertex that has more non-zero weights than that,
/// moved to its first slots largest first, and renormalizes them to sum to 1. Returns how many
/// vertices changed.
fn limit_influences(influences: &mut Influences, limit: usize) -> usize {
    let sets = influences.sets.max(1);
    let mut changed = 0;
    for (joints, weights) in influences
        .joints
        .chunks_mut(sets)
        .zip(influences.weights.chunks_mut(sets))
    {
        let mut pairs = [(0u16, 0f32); 8];
        let n = sets * 4;
        for (k, pair) in pairs.iter_mut().take(n).enumerate() {
            *pair = (joints[k / 4][k % 4], weights[k / 4][k % 4]);
        }
        let nonzero = pairs[..n].iter().filter(|(_, w)| *w != 0.0).count();
        if nonzero <= limit {
            continue;
        }
        pairs[..n].sort_by(|a, b| b.1.total_cmp(&a.1));
        let kept: f64 = pairs[..limit].iter().map(|&(_, w)| f64::from(w)).sum();
        let scale = if kept > 0.0 { 1.0 / kept } else { 0.0 };
        for (k, &(joint, weight)) in pairs[..n].iter().enumerate() {
            let (joint, weight) = if k < limit {
                (joint, (f64::from(weight) * scale) as f32)
            } else {
                (0, 0.0)
            };
            joints[k / 4][k % 4] = joint;
            weights[k / 4][k % 4] = weight;
        }
        changed += 1;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn influences(joints: Vec<[u16; 4]>, weights: Vec<[f32; 4]>, sets: usize) -> Influences {
        Influences { sets, joints, weights }
    }

    #[test]
    fn normalize_scales_off_sums_and_leaves_the_rest() {
        let mut i = influences(
            vec![[0, 1, 0, 0]; 3],
            vec![[0.6, 0.6, 0.0, 0.0], [0.25, 0.75, 0.0, 0.0], [0.0; 4]],
            1,
        );
        assert_eq!(normalize_weights(&mut i, 0.0), 1);
        assert_eq!(i.weights, vec![[0.5, 0.5, 0.0, 0.0], [0.25, 0.75, 0.0, 0.0], [0.0; 4]]);
        // 254/255 is within half a step of 1 only for a finer type.
        let mut i = influences(vec![[0, 1, 0, 0]], vec![[127.0 / 255.0, 127.0 / 255.0, 0.0, 0.0]], 1);
        assert_eq!(normalize_weights(&mut i, 1.0 / 255.0), 1);
        assert_eq!(i.weights, vec![[0.5, 0.5, 0.0, 0.0]]);
    }

    #[test]
    fn limit_keeps_the_largest_moved_to_the_first_set_and_renormalizes() {
        // Six influences over two sets, limited to 4: 0.3, 0.2, 0.2, 0.15 kept (0.85 of 1.0),
        // each divided by 0.85.
        let mut i = influences(
            vec![[1, 2, 3, 4], [5, 6, 0, 0]],
            vec![[0.1, 0.2, 0.05, 0.3], [0.15, 0.2, 0.0, 0.0]],
            2,
        );
        assert_eq!(limit_influences(&mut i, 4), 1);
        assert_eq!(i.joints, vec![[4, 2, 6, 5], [0, 0, 0, 0]]);
        let expected = [0.3 / 0.85, 0.2 / 0.85, 0.2 / 0.85, 0.15 / 0.85];
        for (got, want) in i.weights[0].iter().zip(expected) {
            assert!((f64::from(*got) - want).abs() < 1e-6, "{got} vs {want}");
        }
        assert_eq!(i.weights[1], [0.0; 4]);
        // Within the limit: untouched.
        let mut i = influences(vec![[1, 2, 0, 0]], vec![[0.5, 0.5, 0.0, 0.0]], 1);
        assert_eq!(limit_influences(&mut i, 4), 0);
    }
}
