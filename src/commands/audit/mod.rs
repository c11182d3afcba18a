//! `rigscope audit`: the range-of-motion audit and the weight symmetry check of a file, as
//! text or JSON, with an exit status a pipeline can gate on.

pub mod motion;

use crate::audit::{
    AuditOptions, AuditReport, JointAudit, SymmetryOptions, SymmetryReport, Thresholds, VertexRef, Violation,
};
use crate::cli::find_node;
use crate::commands::{CommandError, Outcome, open_rig_with};
use crate::skin::SkinningMethod;
use crate::skin::blend::DqsBlend;
use serde_json::{Value, json};
use std::fmt::Write;
use std::path::PathBuf;

/// The arguments of `rigscope audit`.
#[derive(clap::Args, Debug, Clone)]
pub struct AuditArgs {
    /// A .gltf, .glb, .vrm, .fbx or .bvh file; `demo` audits the built-in demo rig.
    pub file: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// With --json: add every joint's full curves (measures against angle per axis and method).
    #[arg(long, requires = "json")]
    pub curves: bool,
    /// Audit only this joint, by node name (repeatable); every weighted joint when omitted.
    #[arg(long = "joint", value_name = "NAME")]
    pub joints: Vec<String>,
    /// Largest bend either way about the two axes across each bone, in degrees.
    #[arg(long, value_name = "DEG", default_value_t = 90.0)]
    pub bend: f32,
    /// Largest twist either way about each bone, in degrees.
    #[arg(long, value_name = "DEG", default_value_t = 90.0)]
    pub twist: f32,
    /// Poses per side of each axis, evenly spaced up to the largest angle.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u16).range(1..=90))]
    pub steps: u16,
    /// Skin with only this method (lbs and dqs when omitted); blended is the file's weight
    /// blended skinning, each vertex moved from LBS toward DQS by the file's blend weights.
    #[arg(long, value_parser = crate::names::cli::<SkinningMethod>())]
    pub method: Option<SkinningMethod>,
    /// DQS mask for the blended method: this joint (node name) and its descendants skin toward
    /// dual quaternions, each vertex by its share of weight on them, instead of by the file's
    /// blend weights (repeatable; the blended method alone unless --method names another).
    #[arg(long = "dqs-joint", value_name = "JOINT")]
    pub dqs_joints: Vec<String>,
    /// Joints printed in the text ranking.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Fail when a triangle shrinks below this fraction of its bind area.
    #[arg(long, default_value_t = Thresholds::default().min_area_ratio)]
    pub min_area_ratio: f32,
    /// Fail when a triangle grows past this multiple of its bind area.
    #[arg(long, default_value_t = Thresholds::default().max_area_ratio)]
    pub max_area_ratio: f32,
    /// Fail when an edge stretches or shrinks by more than this factor.
    #[arg(long, default_value_t = Thresholds::default().max_edge_stretch)]
    pub max_edge_stretch: f32,
    /// Fail when the near-joint cross-section shrinks below this fraction of its bind radius.
    #[arg(long, default_value_t = Thresholds::default().min_radius_ratio)]
    pub min_radius_ratio: f32,
    /// Fail when more triangles than this flip in one pose.
    #[arg(long, default_value_t = Thresholds::default().max_flipped)]
    pub max_flipped: usize,
    /// Fail when more vertices than this have asymmetric weights (no limit when omitted).
    #[arg(long, value_name = "N")]
    pub max_asymmetric: Option<usize>,
    /// Weight difference (0..1) above which a vertex counts as asymmetric.
    #[arg(long, default_value_t = SymmetryOptions::default().threshold)]
    pub asymmetry: f32,
    /// How far a vertex's mirror image may be from its match, as a fraction of the local vertex
    /// spacing (the shortest edge at either vertex).
    #[arg(long, default_value_t = SymmetryOptions::default().tolerance)]
    pub mirror_tolerance: f32,
    /// Worker threads (the machine's parallelism when omitted).
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub clips: crate::cli::ClipsArgs,
    #[command(flatten)]
    pub motion: motion::MotionArgs,
}

impl AuditArgs {
    /// The options the flags ask for; the DQS mask's joints are resolved against the rig by the
    /// caller (`dqs_mask` is left empty).
    pub fn options(&self) -> AuditOptions {
        // The method named; else the blended one alone when joints are masked; else both pure ones.
        let methods = match (self.method, self.dqs_joints.is_empty()) {
            (Some(method), _) => vec![method],
            (None, false) => vec![SkinningMethod::Blended],
            (None, true) => vec![SkinningMethod::Lbs, SkinningMethod::Dqs],
        };
        AuditOptions {
            bend_degrees: self.bend,
            twist_degrees: self.twist,
            steps: usize::from(self.steps),
            joints: self.joints.clone(),
            methods,
            threads: self.threads,
            symmetry: SymmetryOptions {
                tolerance: self.mirror_tolerance,
                threshold: self.asymmetry,
                ..SymmetryOptions::default()
            },
            ..AuditOptions::default()
        }
    }

    pub fn thresholds(&self) -> Thresholds {
        Thresholds {
            min_area_ratio: self.min_area_ratio,
            max_area_ratio: self.max_area_ratio,
            max_edge_stretch: self.max_edge_stretch,
            min_radius_ratio: self.min_radius_ratio,
            max_flipped: self.max_flipped,
        }
    }
}

/// `rigscope audit`: prints the ranking and the symmetry summary (or one JSON document),
/// flagged when a joint crosses a threshold (or too many vertices are asymmetric). A `--joint`
/// or `--dqs-joint` the rig lacks is an error.
pub fn run(args: &AuditArgs) -> Result<Outcome, CommandError> {
    let label = args.file.display().to_string();
    let clip_files = args.clips.files();
    let rig = open_rig_with(&args.file, &clip_files.options.read)?;
    let rig = crate::cli::add_clip_files(rig, &clip_files)?;
    if args.motion.motion {
        return motion::run(&rig, &label, &args.motion, args.json);
    }
    let options = checked_options(&rig, &label, args)?;
    let report = crate::audit::audit(&rig, &options);
    let thresholds = args.thresholds();
    let violations = report.violations(&thresholds);
    let too_asymmetric = args
        .max_asymmetric
        .is_some_and(|limit| report.symmetry.asymmetric_count > limit);
    if args.json {
        let mut document = json_document(&report, &violations, args.curves);
        document["file"] = json!(label);
        document["loaded"] = json!(true);
        document["thresholds"] = json!(thresholds);
        document["max_asymmetric"] = json!(args.max_asymmetric);
        document["passed"] = json!(violations.is_empty() && !too_asymmetric);
        println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    } else {
        print!("{}", text(&report, &violations, args, too_asymmetric));
    }
    Ok(Outcome::flagged_if(!violations.is_empty() || too_asymmetric))
}

/// The audit's options with the DQS mask resolved against `rig`; an error names a `--joint` or
/// `--dqs-joint` the rig lacks, or a blended method the file gives nothing to blend toward.
fn checked_options(rig: &crate::rig::Rig, label: &str, args: &AuditArgs) -> Result<AuditOptions, CommandError> {
    let joint_names: Vec<&str> = (rig.skins.iter().flat_map(|s| &s.joints))
        .filter_map(|&n| rig.nodes.get(n).map(|n| n.name.as_str()))
        .collect();
    if let Some(unknown) = args.joints.iter().find(|j| !joint_names.contains(&j.as_str())) {
        return Err(CommandError::Argument(format!(
            "{label} has no joint named '{unknown}'"
        )));
    }
    let mut options = args.options();
    for name in &args.dqs_joints {
        options.dqs_mask.push(find_node(rig, name)?);
    }
    if options.methods.contains(&SkinningMethod::Blended)
        && options.dqs_mask.is_empty()
        && !DqsBlend::of_file(rig).any()
    {
        return Err(CommandError::Argument(format!(
            "{label} has no blend weights toward dual quaternions: its weight blended skinning is linear blend skinning (--method lbs, or a DQS mask with --dqs-joint)"
        )));
    }
    Ok(options)
}

/// A joint's worst pose as one flat object: the `range_of_motion` entries of the JSON.
fn worst_entry(joint: &JointAudit) -> Value {
    let mut entry = json!({
        "joint": joint.name,
        "node": joint.node,
        "skin": joint.skin,
        "badness": joint.badness,
        "influenced_vertices": joint.influenced_vertices,
        "bone_axis": joint.bone_axis,
    });
    if let Some((curve, sample)) = joint.worst() {
        entry["axis"] = json!(curve.axis);
        entry["method"] = json!(curve.method);
        for (key, value) in [
            ("angle_deg", json!(sample.angle_deg)),
            ("min_area_ratio", json!(sample.min_area_ratio)),
            ("max_area_ratio", json!(sample.max_area_ratio)),
            ("max_edge_stretch", json!(sample.max_edge_stretch)),
            ("flipped_triangles", json!(sample.flipped_triangles)),
            ("min_radius_ratio", json!(sample.min_radius_ratio)),
            ("worst_vertices", json!(sample.worst_vertices)),
        ] {
            entry[key] = value;
        }
    }
    entry
}

/// The JSON document of a report (without the file and threshold fields the command adds).
pub fn json_document(report: &AuditReport, violations: &[Violation], curves: bool) -> Value {
    let mut document = json!({
        "seconds": report.seconds,
        "range_of_motion": report.joints.iter().map(worst_entry).collect::<Vec<_>>(),
        "symmetry": report.symmetry,
        "violations": violations,
        "notes": report.notes,
    });
    if curves {
        document["joints"] = json!(report.joints);
    }
    document
}

fn vertex_label(v: &VertexRef) -> String {
    format!("{}:{}:{}", v.mesh, v.primitive, v.vertex)
}

fn text(report: &AuditReport, violations: &[Violation], args: &AuditArgs, too_asymmetric: bool) -> String {
    let mut out = String::new();
    range_of_motion_text(&mut out, report, args);
    symmetry_text(&mut out, &report.symmetry, args.asymmetry);
    for note in &report.notes {
        let _ = writeln!(out, "Note: {note}");
    }
    verdict_text(
        &mut out,
        violations,
        args,
        too_asymmetric.then_some(report.symmetry.asymmetric_count),
    );
    out
}

/// The sweep's settings, then its worst joints, a line each with the pose that hurt them most.
fn range_of_motion_text(out: &mut String, report: &AuditReport, args: &AuditArgs) {
    let names: Vec<&str> = args.options().methods.into_iter().map(<&str>::from).collect();
    let methods = names.join(" and ");
    let _ = writeln!(
        out,
        "Range of motion: {} joints, twist ±{}°, bends ±{}°, {} poses per side, {methods}, in {:.2} s",
        report.joints.len(),
        args.twist,
        args.bend,
        args.steps,
        report.seconds
    );
    let _ = writeln!(
        out,
        "  {:<3} {:<32} {:>7}  {:<22} {:>8} {:>8} {:>6} {:>7} {:>6}  vertices (mesh:primitive:index)",
        "#", "joint", "badness", "worst pose", "area min", "area max", "edge", "flipped", "radius"
    );
    for (i, joint) in report.joints.iter().take(args.top).enumerate() {
        let Some((curve, s)) = joint.worst() else { continue };
        let pose = format!("{} {:+.0}° {:?}", curve.axis.label(), s.angle_deg, curve.method).to_lowercase();
        let radius = s
            .min_radius_ratio
            .map_or_else(|| "-".to_string(), |r| format!("{r:.3}"));
        let vertices: Vec<String> = s.worst_vertices.iter().map(vertex_label).collect();
        let _ = writeln!(
            out,
            "  {:<3} {:<32} {:>7.3}  {:<22} {:>8.3} {:>8.3} {:>6.3} {:>7} {:>6}  {}",
            i + 1,
            joint.name,
            joint.badness,
            pose,
            s.min_area_ratio,
            s.max_area_ratio,
            s.max_edge_stretch,
            s.flipped_triangles,
            radius,
            vertices.join(" ")
        );
    }
    if report.joints.len() > args.top {
        let _ = writeln!(out, "  … and {} more (--top N)", report.joints.len() - args.top);
    }
}

/// The mirror plane and the vertices whose weights differ from their mirror's by more than
/// `asymmetry`.
fn symmetry_text(out: &mut String, s: &SymmetryReport, asymmetry: f32) {
    match &s.plane {
        None => {
            let _ = writeln!(
                out,
                "Symmetry: no mirrored joint pairs found by name{}; weights not compared",
                if s.rejected_pairs.is_empty() {
                    String::new()
                } else {
                    format!(" and position ({} named pairs do not mirror)", s.rejected_pairs.len())
                }
            );
        }
        Some(plane) => {
            let n = plane.normal;
            let _ = writeln!(
                out,
                "Symmetry: plane normal ({:.3}, {:.3}, {:.3}) offset {:.4}; {} joint pairs ({} named pairs rejected)",
                n[0],
                n[1],
                n[2],
                plane.offset,
                s.pairs.len(),
                s.rejected_pairs.len()
            );
            let _ = writeln!(
                out,
                "  {} vertices checked: {} matched (largest difference {:.3}), {} without a mirror vertex (unmatched topology), {} with asymmetric weights (difference > {})",
                s.checked_vertices,
                s.matched_vertices,
                s.largest_difference,
                s.unmatched_vertices,
                s.asymmetric_count,
                asymmetry
            );
            for a in s.asymmetric_vertices.iter().take(5) {
                let _ = writeln!(
                    out,
                    "    {}:{}:{} against {}: {:.3}",
                    a.mesh,
                    a.primitive,
                    a.vertex,
                    vertex_label(&a.mirror),
                    a.difference
                );
            }
        }
    }
}

/// Passed, or each threshold a joint crossed and, with `asymmetric` given, that too many
/// vertices are asymmetric.
fn verdict_text(out: &mut String, violations: &[Violation], args: &AuditArgs, asymmetric: Option<usize>) {
    if violations.is_empty() && asymmetric.is_none() {
        let _ = writeln!(out, "Passed: every joint stays within the thresholds");
    } else {
        let _ = writeln!(out, "Failed:");
        for v in violations {
            let _ = writeln!(
                out,
                "  {} {} = {:.3} (limit {}) at {} {:+.0}° {}",
                v.joint,
                v.measure,
                v.value,
                v.limit,
                v.axis.label(),
                v.angle_deg,
                format!("{:?}", v.method).to_lowercase()
            );
        }
        if let Some(count) = asymmetric {
            let _ = writeln!(
                out,
                "  {count} asymmetric vertices (limit {})",
                args.max_asymmetric.unwrap_or(0)
            );
        }
    }
}
