//! `rigscope diff`: what changed between two files of the same rig, as text or JSON, with an
//! exit status a pipeline can gate on.

use super::status::{CommandError, Outcome, open_rig};
use crate::compare::{
    ClipDiff, ClipStatus, PoseDiff, PoseRequest, RigDiff, SkeletonDiff, Thresholds, VertexRef, WeightsDiff, compare,
    compare_poses,
};
use crate::rig::Rig;
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
    let mut diff = compare(&a, &b, &thresholds);
    let poses = (args.pose_request())
        .map(|request| compare_poses(&a, &b, &diff, &request))
        .transpose()?;
    if poses.as_ref().is_some_and(|p| p.differs(thresholds.position)) {
        diff.identical = false;
    }
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
        let mut out = text(&diff, &a, &b, args, seconds);
        if let Some(poses) = &poses {
            // Before the closing time line.
            let end = out.rfind("\n(").unwrap_or(out.len());
            out.insert_str(end, &poses_text(poses, args.position));
        }
        print!("{out}");
    }
    Ok(Outcome::flagged_if(!diff.identical))
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
    files_text(&mut out, diff, a, b, args);
    skeleton_text(&mut out, &diff.skeleton, top);
    vertices_text(&mut out, &diff.weights, args);
    clips_text(&mut out, &diff.clips, top);
    materials_text(&mut out, diff);
    findings_text(&mut out, diff, top);
    let _ = writeln!(out, "\n({seconds:.2} s)");
    out
}

/// The two files, and the verdict with the sizes that positions are fractions of.
fn files_text(out: &mut String, diff: &RigDiff, a: &Rig, b: &Rig, args: &DiffArgs) {
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
}

/// Joints added, removed, changed and re-parented, skins rebased, and the most changed joints.
fn skeleton_text(out: &mut String, s: &SkeletonDiff, top: usize) {
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
}

/// Vertices without a match, and those whose bind position or weights changed.
fn vertices_text(out: &mut String, w: &WeightsDiff, args: &DiffArgs) {
    let top = args.top;
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
}

/// Each clip: whether it changed, by how much and where, and channels added or dropped.
fn clips_text(out: &mut String, clips: &[ClipDiff], top: usize) {
    let _ = writeln!(out, "\nClips:");
    for c in clips {
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
}

/// Changed materials and textures, when any.
fn materials_text(out: &mut String, diff: &RigDiff) {
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
}

/// Audit findings that only one of the files has.
fn findings_text(out: &mut String, diff: &RigDiff, top: usize) {
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
}

fn poses_text(poses: &PoseDiff, threshold: f32) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nPoses of A's clip '{}' ({:.3} s) and B's '{}' ({:.3} s, posed {:+.3} s later): {} vertex pairs ({} of them matched at the clips' start; {} vertices in none), {} joints (distances in the files' units, then as fractions of the rest pose's size; over {threshold} marked *)",
        poses.clip_a,
        poses.duration_a,
        poses.clip_b,
        poses.duration_b,
        poses.shift_b,
        poses.compared_vertices,
        poses.matched_at_start,
        poses.unpaired_vertices,
        poses.compared_joints
    );
    let mark = |relative: f32| if relative > threshold { "*" } else { "" };
    for at in &poses.times {
        let vertex = match (&at.worst_vertex_a, &at.worst_vertex_b) {
            (Some(va), Some(vb)) => format!(" at {} (B {})", vertex_label(va), vertex_label(vb)),
            _ => String::new(),
        };
        let joint = at
            .worst_joint
            .as_deref()
            .map(|j| format!(" at {j}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:>8.3} s: vertices {:.3e} ({:.2e}){}{vertex}; joints {:.3e} ({:.2e}){}{joint}",
            at.time,
            at.vertex_distance,
            at.vertex_relative,
            mark(at.vertex_relative),
            at.joint_distance,
            at.joint_relative,
            mark(at.joint_relative),
        );
    }
    out
}
