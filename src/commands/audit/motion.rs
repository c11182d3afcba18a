//! `rigscope audit FILE --motion`: the clip motion checks (loop seam, foot contacts and
//! sliding, root motion) per clip and the rig's rest pose against its bind pose, as text or JSON, exit status 1 when a clip exceeds the limits.

use crate::cli::find_node;
use crate::commands::{CommandError, Outcome};
use crate::motion::checks::check_motion_on_contacts_of;
use crate::motion::foot_lock::{FootLockOptions, bake_foot_lock};
use crate::motion::{MotionOptions, MotionReport, MotionThresholds, check_motion, feet_by_name};
use crate::rig::Rig;
use serde_json::json;

/// The flags of `audit --motion`.
#[derive(clap::Args, Debug, Clone)]
pub struct MotionArgs {
    /// Check how the clips move (loop seam, foot sliding, root motion) instead of the range of motion.
    #[arg(long)]
    pub motion: bool,
    /// With --motion: a foot joint, by node name (repeatable); found by name (foot, ankle, toe) when omitted.
    #[arg(long = "foot", value_name = "NAME", requires = "motion")]
    pub feet: Vec<String>,
    /// With --motion: a clip played once, whose loop seam is not checked (repeatable).
    #[arg(long = "one-shot", value_name = "CLIP", requires = "motion")]
    pub one_shot: Vec<String>,
    /// With --motion: fail when a joint jumps more than this fraction of the rig's height at a loop's seam.
    #[arg(long, default_value_t = MotionThresholds::default().max_seam_position)]
    pub max_seam_position: f32,
    /// With --motion: fail when a joint turns more than this many degrees at a loop's seam.
    #[arg(long, value_name = "DEG", default_value_t = MotionThresholds::default().max_seam_rotation_deg)]
    pub max_seam_rotation: f32,
    /// With --motion: fail when a foot slides more than this fraction of the rig's height during a contact.
    #[arg(long, default_value_t = MotionThresholds::default().max_slide)]
    pub max_slide: f32,
    /// With --motion: a foot within this fraction of the rig's height above its lowest point may be planted.
    #[arg(long, default_value_t = MotionOptions::default().contact_height)]
    pub contact_height: f32,
    /// With --motion: a planted foot moves up or down slower than this many rig heights per second.
    #[arg(long, default_value_t = MotionOptions::default().contact_speed)]
    pub contact_speed: f32,
    /// With --motion: measure every clip with its feet locked on their contacts (as
    /// `rigscope clips --lock-feet` bakes it).
    #[arg(long, requires = "motion")]
    pub lock_feet: bool,
    /// With --motion: poses sampled per second of clip.
    #[arg(long, default_value_t = MotionOptions::default().frames_per_second)]
    pub fps: f32,
}

impl MotionArgs {
    pub fn thresholds(&self) -> MotionThresholds {
        MotionThresholds {
            max_seam_position: self.max_seam_position,
            max_seam_rotation_deg: self.max_seam_rotation,
            max_slide: self.max_slide,
        }
    }

    pub fn options(&self) -> MotionOptions {
        MotionOptions {
            frames_per_second: self.fps,
            feet: self.feet.clone(),
            contact_height: self.contact_height,
            contact_speed: self.contact_speed,
            one_shot: self.one_shot.clone(),
            thresholds: self.thresholds(),
            ..MotionOptions::default()
        }
    }

    /// A flag value the checks cannot use, named.
    fn invalid(&self) -> Option<String> {
        let positive = [
            ("--max-seam-position", self.max_seam_position),
            ("--max-seam-rotation", self.max_seam_rotation),
            ("--max-slide", self.max_slide),
            ("--contact-height", self.contact_height),
            ("--contact-speed", self.contact_speed),
        ];
        if let Some((name, value)) = positive.iter().find(|(_, v)| !(v.is_finite() && *v > 0.0)) {
            return Some(format!("{name} must be a positive number, not {value}"));
        }
        (!(self.fps.is_finite() && (1.0..=1000.0).contains(&self.fps)))
            .then(|| format!("--fps must be between 1 and 1000, not {}", self.fps))
    }
}

/// Runs the motion checks on a loaded rig and prints them; `label` names the file. Flagged when
/// a clip exceeds the limits; a bad flag value or foot name is an error.
pub fn run(rig: &Rig, label: &str, args: &MotionArgs, as_json: bool) -> Result<Outcome, CommandError> {
    if let Some(message) = args.invalid() {
        return Err(CommandError::Argument(message));
    }
    let feet = if args.feet.is_empty() {
        feet_by_name(rig)
    } else {
        (args.feet.iter())
            .map(|name| find_node(rig, name))
            .collect::<Result<_, _>>()?
    };
    let report = if args.lock_feet {
        // Slides are measured during the contacts the clips have unlocked: those the lock holds.
        let mut locked = rig.clone();
        let options = FootLockOptions {
            motion: args.options(),
            ..FootLockOptions::default()
        };
        for clip in 0..locked.clips.len() {
            bake_foot_lock(&mut locked, clip, &options)?;
        }
        check_motion_on_contacts_of(&locked, rig, &feet, &args.options())
    } else {
        check_motion(rig, &feet, &args.options())
    };
    let thresholds = args.thresholds();
    let violations: Vec<String> = report.clips.iter().flat_map(|c| c.violations(&thresholds)).collect();
    if as_json {
        let document = json!({
            "file": label,
            "loaded": true,
            "rig_height": report.rig_height,
            "feet_locked": args.lock_feet,
            "feet": report.feet,
            "clips": report.clips,
            "rest_pose": report.rest_pose,
            "thresholds": thresholds,
            "violations": violations,
            "passed": violations.is_empty(),
        });
        println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    } else {
        print!("{}", text(label, &report, &violations));
    }
    Ok(Outcome::flagged_if(!violations.is_empty()))
}

fn text(label: &str, report: &MotionReport, violations: &[String]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let feet = if report.feet.is_empty() {
        "none found".to_string()
    } else {
        report.feet.join(", ")
    };
    let _ = writeln!(out, "{label}: rig height {:.4}; feet: {feet}", report.rig_height);
    for line in report.rest_pose.summary() {
        let _ = writeln!(out, "{line}");
    }
    if report.clips.is_empty() {
        let _ = writeln!(out, "no clips");
    }
    for clip in &report.clips {
        let _ = writeln!(out, "clip '{}' ({:.3} s)", clip.clip, clip.duration);
        let seam = if clip.loops { "" } else { " (one-shot, not checked)" };
        let _ = writeln!(
            out,
            "  seam{seam}: {:.4} of the height, {:.2}°, worst {}; from {} (its own turn jumps {:.2}°)",
            clip.seam_position_error,
            clip.seam_rotation_error_deg,
            clip.seam_worst_joint.as_deref().unwrap_or("-"),
            clip.seam_source_joint.as_deref().unwrap_or("-"),
            clip.seam_source_rotation_deg
        );
        let root = &clip.root;
        let _ = writeln!(
            out,
            "  root {}: {} {:.4} heights at {:.4} heights/s{}",
            root.joint.as_deref().unwrap_or("-"),
            if root.in_place { "in place," } else { "moves" },
            root.distance,
            root.speed,
            if root.in_place {
                String::new()
            } else {
                format!(
                    " towards ({:.2}, {:.2}, {:.2})",
                    root.direction[0], root.direction[1], root.direction[2]
                )
            }
        );
        for foot in &clip.feet {
            let _ = writeln!(
                out,
                "  {}: {} contact(s), largest slide {:.4} of the height{}",
                foot.joint,
                foot.contacts.len(),
                foot.max_slide,
                foot.worst_time.map_or(String::new(), |t| format!(" at {t:.3} s"))
            );
        }
    }
    if violations.is_empty() {
        let _ = writeln!(out, "passed");
    } else {
        for v in violations {
            let _ = writeln!(out, "FAIL {v}");
        }
    }
    out
}
