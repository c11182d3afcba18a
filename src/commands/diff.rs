//! `rigscope diff`: what changed between two files of the same rig, as text or JSON, with an
//! exit status a pipeline can gate on.

use super::inspect::{EXIT_CLEAN, EXIT_ERROR_FINDINGS, EXIT_NOT_LOADED};
use crate::compare::{ClipStatus, RigDiff, Thresholds, VertexRef, compare};
use crate::rig::Rig;
use serde_json::json;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
}

fn open(path: &Path) -> Result<Rig, String> {
    let file = (path.as_os_str() != "demo").then_some(path);
    crate::rig::open(file).map_err(|e| format!("cannot load {}: {e}", path.display()))
}

/// `rigscope diff`: prints the differences (or one JSON document) and returns 0 when the
/// files agree within the thresholds, 1 when they differ, 2 when either cannot be loaded.
pub fn diff_command(args: &DiffArgs) -> ExitCode {
    let started = std::time::Instant::now();
    let (a, b) = rayon::join(|| open(&args.a), || open(&args.b));
    let (a, b) = match (a, b) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            if args.json {
                let document = json!({ "a": args.a, "b": args.b, "loaded": false, "error": e });
                println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
            }
            eprintln!("rigscope: {e}");
            return ExitCode::from(EXIT_NOT_LOADED);
        }
    };
    let thresholds = args.thresholds();
    let diff = compare(&a, &b, &thresholds);
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let mut document = serde_json::to_value(&diff).unwrap_or_default();
        document["a"] = json!(args.a);
        document["b"] = json!(args.b);
        document["loaded"] = json!(true);
        document["thresholds"] = json!(thresholds);
        document["seconds"] = json!(seconds);
        println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    } else {
        print!("{}", text(&diff, &a, &b, args, seconds));
    }
    ExitCode::from(if diff.identical {
        EXIT_CLEAN
    } else {
        EXIT_ERROR_FINDINGS
    })
}

fn vertex_label(v: &VertexRef) -> String {
    format!("{}:{}:{}", v.mesh, v.primitive, v.vertex)
}

/// Up to `top` items, then how many more there are.
fn listed(items: &[String], top: usize) -> String {
    let mut text = items.iter().take(top).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > top {
        let _ = write!(text, ", … ({} more)", items.len() - top);
    }
    text
}

fn text(diff: &RigDiff, a: &Rig, b: &Rig, args: &DiffArgs, seconds: f64) -> String {
    let mut out = String::new();
    let top = args.top;
    let verdict = if diff.identical {
        "the same within the thresholds"
    } else {
        "different"
    };
    let _ = writeln!(
        out,
        "A: {} ({} joints, {} vertices, {} clips)",
        args.a.display(),
        a.joint_count(),
        a.vertex_count(),
        a.clips.len()
    );
    let _ = writeln!(
        out,
        "B: {} ({} joints, {} vertices, {} clips)",
        args.b.display(),
        b.joint_count(),
        b.vertex_count(),
        b.clips.len()
    );
    let _ = writeln!(
        out,
        "A and B are {verdict} (positions below are fractions of the rest pose's size {:.4}, of the bind pose's {:.4} for binds and vertices)",
        diff.size, diff.bind_size
    );

    let s = &diff.skeleton;
    let _ = writeln!(out, "\nSkeleton: {} joints matched", s.joints.len());
    for (label, names) in [
        ("added", &s.added),
        ("removed", &s.removed),
        ("bind changed", &s.bind_changed),
        ("rest changed", &s.rest_changed),
    ] {
        if !names.is_empty() {
            let _ = writeln!(out, "  {label} ({}): {}", names.len(), listed(names, top));
        }
    }
    for r in s.reparented.iter().take(top) {
        let name = |p: &Option<String>| p.clone().unwrap_or_else(|| "(root)".into());
        let _ = writeln!(
            out,
            "  re-parented: {} from {} to {}",
            r.joint,
            name(&r.from),
            name(&r.to)
        );
    }
    for r in &s.rebases {
        let _ = writeln!(
            out,
            "  B's skin {} carries one extra transform in {} of {} inverse bind matrices (scale {:.3e}): taken out",
            r.skin_b, r.agreeing, r.shared, r.scale
        );
    }
    let _ = writeln!(
        out,
        "  {:<28} {:>10} {:>9} {:>10} {:>9}",
        "most changed joints", "bind pos", "bind deg", "rest pos", "rest deg"
    );
    let moved = |j: &&crate::compare::JointChange| j.severity(1.0, 1.0) > 0.0;
    for j in s.joints.iter().filter(moved).take(top) {
        let _ = writeln!(
            out,
            "  {:<28} {:>10.2e} {:>9.3} {:>10.2e} {:>9.3}",
            j.joint, j.bind_position, j.bind_rotation_deg, j.rest_position, j.rest_rotation_deg
        );
    }

    let w = &diff.weights;
    let _ = writeln!(
        out,
        "\nVertices: {} matched, {} without a match; largest bind position change {:.2e} ({} over {})",
        w.compared_vertices, w.unmatched_vertices, w.max_position_change, w.moved_count, args.position
    );
    if !w.unmatched.is_empty() {
        let names: Vec<String> = w
            .unmatched
            .iter()
            .map(|u| format!("{} {}", u.file, vertex_label(&u.vertex)))
            .collect();
        let _ = writeln!(out, "  unmatched (file mesh:primitive:vertex): {}", listed(&names, top));
    }
    let _ = writeln!(
        out,
        "  weights: largest difference {:.4}, {} vertices over {}",
        w.max_difference, w.changed_count, args.weight
    );
    for v in w.changed_vertices.iter().take(top) {
        let _ = writeln!(
            out,
            "    {} (B {}): {:.4}",
            vertex_label(&v.a),
            vertex_label(&v.b),
            v.difference
        );
    }

    let _ = writeln!(out, "\nClips:");
    for c in &diff.clips {
        let status = match c.status {
            ClipStatus::Same => "same",
            ClipStatus::Changed => "changed",
            ClipStatus::Added => "added (only in B)",
            ClipStatus::Removed => "removed (only in A)",
        };
        let _ = write!(out, "  {:<24} {status}", c.name);
        if let (Some(da), Some(db)) = (c.duration_a, c.duration_b) {
            let _ = write!(
                out,
                ": position {:.2e}, rotation {:.3}°",
                c.max_position_error, c.max_rotation_error_deg
            );
            let moved = c.max_position_error > 0.0 || c.max_rotation_error_deg > 0.0;
            if let (Some(joint), Some(time), true) = (&c.worst_joint, c.worst_time, moved) {
                let _ = write!(out, ", worst {joint} at {time:.3} s");
            }
            if da != db {
                let _ = write!(out, ", duration {da:.3} → {db:.3} s");
            }
        }
        let _ = writeln!(out);
        for (label, names) in [
            ("channels added", &c.channels_added),
            ("channels dropped", &c.channels_dropped),
        ] {
            if !names.is_empty() {
                let _ = writeln!(out, "    {label} ({}): {}", names.len(), listed(names, top));
            }
        }
    }

    if !diff.materials.is_empty() || !diff.textures.is_empty() {
        let _ = writeln!(out, "\nMaterials:");
        for m in &diff.materials {
            let _ = writeln!(out, "  {}: {}", m.name, m.changes.join(", "));
        }
        for t in &diff.textures {
            let state = if t.changed { "changed" } else { "same" };
            let detail = match t.mean_difference {
                Some(d) => format!("mean pixel difference {d:.4}"),
                None => format!("size {}x{} → {}x{}", t.size_a[0], t.size_a[1], t.size_b[0], t.size_b[1]),
            };
            let _ = writeln!(out, "  texture of {}: {state} ({detail})", t.material);
        }
    }
    for (label, findings) in [
        ("appear in B", &diff.findings_appeared),
        ("disappear from A", &diff.findings_disappeared),
    ] {
        if !findings.is_empty() {
            let _ = writeln!(out, "\nFindings that {label}:");
            for f in findings.iter().take(top) {
                let _ = writeln!(out, "  {} {}: {}", f.level, f.code, f.message);
            }
        }
    }
    let _ = writeln!(out, "\n({seconds:.2} s)");
    out
}
