//! `rigscope clips`: carries other files' clips onto a rig, edits its clips (in place, trim,
//! resample, rename, drop) and writes the result as a new glTF that keeps everything else.
//!
//! Edits run in a fixed order so that every flag names clips as they are before any rename:
//! `--add`, `--trim`, `--in-place`, `--lock-feet`, `--resample`, `--drop`, then `--rename`.
//!
//! A glTF input is written back through [`save_animations`], which keeps the file's JSON and its
//! untouched animations as read. An FBX or BVH input has no glTF JSON to keep: the imported rig
//! is written as a new glTF ([`crate::save::write_rig`]: meshes, skins, morph targets,
//! materials, textures, nodes and every clip encoded anew), so `--out` alone converts it. An
//! output ending in `.bvh` is one clip (`--clip`, else the first) written as BVH motion capture
//! ([`write_bvh`]), whatever the input; one ending in `.vrma`, one clip of a humanoid rig as VRM
//! Animation ([`write_vrma`]).

use crate::anim::clip_edit::{self, ClipEditError, ResampleReport, ResampleTolerance};
use crate::cli::BvhScaleArg;
use crate::cli::parse_joint_pair;
use crate::commands::{CommandError, Outcome};
use crate::motion::foot_lock::{FootLockOptions, bake_foot_lock};
use crate::motion::{
    MotionOptions,
    checks::{check_one_clip, check_one_clip_on_contacts_of},
};
use crate::retarget::{JointMap, RetargetError, RetargetOptions, RetargetReport, with_clips_from};
use crate::rig::{BvhRotationOrder, Rig};
use crate::save::{BvhOptions, PlannedAnimation, SaveOptions, save_animations, write_bvh, write_rig, write_vrma};
use serde::Serialize;
use std::path::PathBuf;

/// The arguments of `rigscope clips`.
#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = "An FBX or BVH FILE has no glTF to keep: the output is a new glTF of the imported rig \
(meshes with skins and morph targets, materials and textures, the skeleton and every clip, edited or \
not), so `rigscope clips FILE.fbx --out FILE.glb` alone converts it (exit 0). An --out ending in .bvh \
writes one clip (--clip, else the first), carried or not, as BVH motion capture in metres; one ending \
in .vrma writes it as VRM Animation (the rig must have a humanoid skeleton)."
)]
pub struct EditClipsArgs {
    /// The .gltf, .glb, .vrm, .fbx or .bvh file whose clips are edited (it is never written). An
    /// FBX or BVH file is written as a new glTF of its meshes, skins, materials, skeleton and
    /// clips, so `--out` alone converts it.
    pub file: PathBuf,
    /// Carry every clip of SOURCE onto FILE's skeleton (repeatable); a name already taken
    /// becomes `NAME (SOURCE)`.
    #[arg(long = "add", value_name = "SOURCE")]
    pub add: Vec<PathBuf>,
    /// With --add: SOURCE's joint S drives FILE's joint T, whatever their names (repeatable).
    #[arg(long = "map-joint", value_name = "S=T", value_parser = parse_joint_pair, requires = "add")]
    pub map_joint: Vec<(String, String)>,
    /// Take the root's horizontal travel out of CLIP (`*`: every clip), keeping its height.
    #[arg(long = "in-place", value_name = "CLIP")]
    pub in_place: Vec<String>,
    /// Hold CLIP's feet where they land during each contact (`*`: every clip) with leg IK,
    /// lowering the hips where a leg cannot reach, and bake it into the clip's keys (30 a
    /// second for the legs and hips).
    #[arg(long = "lock-feet", value_name = "CLIP")]
    pub lock_feet: Vec<String>,
    /// Keep START..END seconds of CLIP, re-timed to start at 0 (keys at both ends sampled exactly).
    #[arg(long = "trim", value_name = "CLIP=START:END", value_parser = parse_trim)]
    pub trim: Vec<(String, f32, f32)>,
    /// Write every channel of every clip at FPS keys a second, then drop the keys linear
    /// interpolation restores within the tolerances.
    #[arg(long, value_name = "FPS")]
    pub resample: Option<f32>,
    /// With --resample: the largest position error, as a fraction of the rig's height.
    #[arg(long, value_name = "FRACTION", default_value_t = ResampleTolerance::default().position_fraction, requires = "resample")]
    pub position_tolerance: f32,
    /// With --resample: the largest rotation error, in degrees.
    #[arg(long, value_name = "DEGREES", default_value_t = ResampleTolerance::default().rotation_degrees, requires = "resample")]
    pub rotation_tolerance: f32,
    /// Rename clip OLD to NEW (repeatable).
    #[arg(long = "rename", value_name = "OLD=NEW", value_parser = parse_rename)]
    pub rename: Vec<(String, String)>,
    /// Leave CLIP out of the output (repeatable).
    #[arg(long = "drop", value_name = "CLIP")]
    pub drop: Vec<String>,
    /// Where to write (.glb or .gltf, or .bvh or .vrma for one clip); required unless --dry-run.
    #[arg(long, required_unless_present = "dry_run")]
    pub out: Option<PathBuf>,
    /// With an --out ending in .bvh or .vrma: the clip written, by name or index (the first
    /// when omitted).
    #[arg(long, value_name = "CLIP")]
    pub clip: Option<String>,
    /// With an --out ending in .bvh: the order each joint's rotation channels are listed and
    /// composed in.
    #[arg(long, value_name = "ORDER", default_value_t = BvhRotationOrder::default(), value_parser = crate::names::cli::<BvhRotationOrder>())]
    pub bvh_order: BvhRotationOrder,
    /// Read for FILE and for every --add file.
    #[command(flatten)]
    pub bvh: BvhScaleArg,
    /// Do everything but write.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as JSON on standard output.
    #[arg(long)]
    pub json: bool,
}

/// A `--trim` or `--rename` value refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EditValueError {
    #[error("'{0}' is not CLIP=START:END (seconds, e.g. Walk=0.5:1.25)")]
    Trim(String),
    #[error("'{0}' is not OLD=NEW (clip names)")]
    Rename(String),
}

fn parse_trim(text: &str) -> Result<(String, f32, f32), EditValueError> {
    let bad = || EditValueError::Trim(text.to_owned());
    let (clip, range) = text.rsplit_once('=').ok_or_else(bad)?;
    let (start, end) = range.split_once(':').ok_or_else(bad)?;
    let number = |t: &str| t.trim().parse::<f32>().ok().filter(|v| v.is_finite());
    match (clip.is_empty(), number(start), number(end)) {
        (false, Some(start), Some(end)) => Ok((clip.to_owned(), start, end)),
        _ => Err(bad()),
    }
}

fn parse_rename(text: &str) -> Result<(String, String), EditValueError> {
    match text.split_once('=') {
        Some((old, new)) if !old.is_empty() && !new.is_empty() => Ok((old.to_owned(), new.to_owned())),
        _ => Err(EditValueError::Rename(text.to_owned())),
    }
}

/// Where each clip of the edited rig comes from, parallel to `rig.clips`: kept as the file has
/// it (perhaps renamed), or encoded anew (carried from another file or edited).
#[derive(Debug, Clone, PartialEq)]
enum Origin {
    Kept { animation: usize, renamed: bool },
    Encoded,
}

/// The rig being edited and where each of its clips comes from.
struct EditedClips {
    rig: Rig,
    origins: Vec<Origin>,
    dropped: Vec<String>,
}

impl EditedClips {
    fn new(rig: Rig) -> EditedClips {
        let origins = (0..rig.clips.len())
            .map(|animation| Origin::Kept {
                animation,
                renamed: false,
            })
            .collect();
        EditedClips {
            rig,
            origins,
            dropped: Vec::new(),
        }
    }

    fn find(&self, name: &str) -> Result<usize, ClipEditError> {
        clip_edit::find_clip(&self.rig, name)
    }

    /// Every clip `name` names: `*` all of them.
    fn named(&self, name: &str) -> Result<Vec<usize>, ClipEditError> {
        if name == "*" {
            Ok((0..self.rig.clips.len()).collect())
        } else {
            Ok(vec![self.find(name)?])
        }
    }

    fn changed(&mut self, clip: usize) {
        self.origins[clip] = Origin::Encoded;
    }

    fn is_unchanged(&self) -> bool {
        self.dropped.is_empty()
            && self
                .origins
                .iter()
                .enumerate()
                .all(|(i, origin)| matches!(origin, Origin::Kept { animation, renamed: false } if *animation == i))
    }

    fn plan(&self) -> Vec<PlannedAnimation> {
        (self.origins.iter().enumerate())
            .map(|(clip, origin)| match *origin {
                Origin::Kept { animation, renamed } => PlannedAnimation::Original {
                    index: animation,
                    name: renamed.then(|| self.rig.clips[clip].name.clone()),
                },
                Origin::Encoded => PlannedAnimation::Clip { clip },
            })
            .collect()
    }
}

/// What one carried clip looks like against its source.
#[derive(Debug, Clone, Serialize)]
struct CarriedClip {
    clip: String,
    from: PathBuf,
    /// The bone whose direction strays furthest from the source's over the clip, and by how much.
    worst_limb: Option<String>,
    worst_limb_degrees: f32,
    /// The largest foot slide during a contact, as a fraction of each rig's height
    /// (`audit --motion`'s figure), in the source playing the clip and in the target.
    source_foot_slide: f32,
    target_foot_slide: f32,
}

#[derive(Debug, Default, Serialize)]
struct ClipsReport {
    carried: Vec<CarriedClip>,
    resampled: Vec<ResampleLine>,
    written: Vec<PathBuf>,
    dry_run: bool,
    changed: bool,
}

#[derive(Debug, Serialize)]
struct ResampleLine {
    clip: String,
    keys_before: usize,
    keys_after: usize,
    bytes_before: usize,
    bytes_after: usize,
    worst_position: f32,
    worst_rotation_degrees: f32,
}

impl From<&ResampleReport> for ResampleLine {
    fn from(report: &ResampleReport) -> ResampleLine {
        ResampleLine {
            clip: report.clip.clone(),
            keys_before: report.before.keys,
            keys_after: report.after.keys,
            bytes_before: report.before.bytes,
            bytes_after: report.after.bytes,
            worst_position: report.worst_position,
            worst_rotation_degrees: report.worst_rotation_degrees,
        }
    }
}

/// `rigscope clips`: see the module documentation. Flagged when the flags change nothing, in
/// which case nothing is written; with `--json` the report goes to standard output.
pub fn run(args: &EditClipsArgs) -> Result<Outcome, CommandError> {
    let mut report = ClipsReport {
        dry_run: args.dry_run,
        ..ClipsReport::default()
    };
    let outcome = edit(args, &mut report)?;
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("rigscope: cannot print the report: {e}"),
        }
    }
    Ok(outcome)
}

/// Edits the clips as `args` ask, writes the result and fills `report` in.
fn edit(args: &EditClipsArgs, report: &mut ClipsReport) -> Result<Outcome, CommandError> {
    let rig = load(&args.file, args)?;
    let written_anew = rig.facts.bvh.is_some() || is_fbx_file(&args.file);
    let out_is = |kind: &str| {
        (args.out.as_ref())
            .and_then(|o| o.extension())
            .is_some_and(|e| e.eq_ignore_ascii_case(kind))
    };
    let (bvh_out, vrma_out) = (out_is("bvh"), out_is("vrma"));
    // One clip written as motion alone, whatever the input.
    let motion_out = bvh_out || vrma_out;
    let mut edited = EditedClips::new(rig);
    // With --json, standard output is the report's alone.
    let say = |line: String| {
        if args.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    if written_anew && !motion_out {
        // No glTF animation to keep as read: every clip is encoded from the imported rig.
        edited.origins.fill(Origin::Encoded);
        let kind = if (args.file.extension()).is_some_and(|e| e.eq_ignore_ascii_case("bvh")) {
            "a BVH file"
        } else {
            "an FBX file"
        };
        say(format!(
            "{} is {kind}: the output is a new glTF written from the imported rig",
            args.file.display()
        ));
    }
    carry_clips(args, &mut edited, report, &say)?;
    edit_keys(args, &mut edited, report, &say)?;
    drop_and_rename(args, &mut edited, &say)?;

    // An FBX or BVH input, or a BVH or VRMA output, always has something to write: the rig
    // itself in another format.
    report.changed = written_anew || motion_out || !edited.is_unchanged();
    if !report.changed {
        say(format!("{}: nothing changed; nothing written", args.file.display()));
        return Ok(Outcome::Flagged);
    }
    let Some(out) = args.out.as_ref().filter(|_| !args.dry_run) else {
        say("dry run: nothing written".to_owned());
        return Ok(Outcome::Passed);
    };
    if bvh_out {
        return write_one_clip(args, &edited.rig, out, report, &say, MotionFormat::Bvh);
    }
    if vrma_out {
        return write_one_clip(args, &edited.rig, out, report, &say, MotionFormat::Vrma);
    }
    let saved = if written_anew {
        let mut inputs = vec![args.file.clone()];
        inputs.extend(args.add.iter().cloned());
        let generator = format!("Rigscope clips, from {}", edited.rig.name);
        write_rig(&edited.rig, out, &inputs, &generator)
    } else {
        save_animations(&args.file, out, &edited.rig, &edited.plan(), SaveOptions::default())
    }
    .map_err(|source| CommandError::Save {
        path: out.clone(),
        source,
    })?;
    for note in &saved.notes {
        say(format!("note: {note}"));
    }
    for path in &saved.written {
        say(format!("wrote {}", path.display()));
    }
    report.written = saved.written;
    Ok(Outcome::Passed)
}

/// `--add`: every clip of each source carried onto the rig, with how well each carried.
fn carry_clips(
    args: &EditClipsArgs,
    edited: &mut EditedClips,
    report: &mut ClipsReport,
    say: &dyn Fn(String),
) -> Result<(), CommandError> {
    let pairs = JointMap {
        by_hand: args.map_joint.iter().cloned().collect(),
    };
    for source_path in &args.add {
        let source = load(source_path, args)?;
        if source.clips.is_empty() {
            return Err(RetargetError::NoClips {
                path: source_path.clone(),
            }
            .into());
        }
        let first = edited.rig.clips.len();
        let rig = std::mem::take(&mut edited.rig);
        let (rig, retarget) = with_clips_from(rig, &source, source_path, &pairs, &RetargetOptions::default());
        edited.rig = rig;
        edited.origins.resize(edited.rig.clips.len(), Origin::Encoded);
        say(format!(
            "clips from {}:\n{}",
            source_path.display(),
            retarget.summary().trim_end()
        ));
        report
            .carried
            .extend(carried_quality(&source, &edited.rig, first, source_path, &retarget));
    }
    for carried in &report.carried {
        say(format!(
            "  '{}': foot slide {:.4} of the rig's height (source {:.4})",
            carried.clip, carried.target_foot_slide, carried.source_foot_slide
        ));
    }
    Ok(())
}

/// `--trim`, `--in-place`, `--lock-feet` and `--resample`: the edits that change a clip's keys.
fn edit_keys(
    args: &EditClipsArgs,
    edited: &mut EditedClips,
    report: &mut ClipsReport,
    say: &dyn Fn(String),
) -> Result<(), CommandError> {
    for (name, start, end) in &args.trim {
        let clip = edited.find(name)?;
        clip_edit::trim(&mut edited.rig, clip, *start, *end)?;
        edited.changed(clip);
        say(format!("clip '{name}': kept {start}..{end} s"));
    }
    for name in &args.in_place {
        for clip in edited.named(name)? {
            clip_edit::in_place(&mut edited.rig, clip)?;
            edited.changed(clip);
            say(format!("clip '{}': in place", edited.rig.clips[clip].name));
        }
    }
    for name in &args.lock_feet {
        for clip in edited.named(name)? {
            let unlocked = edited.rig.clone();
            let baked = bake_foot_lock(&mut edited.rig, clip, &FootLockOptions::default())?;
            let before = check_one_clip(&unlocked, clip, &MotionOptions::default());
            let after = check_one_clip_on_contacts_of(&edited.rig, &unlocked, clip, &MotionOptions::default());
            edited.changed(clip);
            let slide =
                |motion: &crate::motion::ClipMotion| motion.feet.iter().map(|f| f.max_slide).fold(0.0, f32::max);
            say(format!(
                "clip '{}': feet locked on {} contact(s); largest slide {:.4} → {:.4} of the rig's height",
                edited.rig.clips[clip].name,
                baked.pins,
                slide(&before),
                slide(&after)
            ));
        }
    }
    let Some(rate) = args.resample else {
        return Ok(());
    };
    let tolerance = ResampleTolerance {
        position_fraction: args.position_tolerance,
        rotation_degrees: args.rotation_tolerance,
        ..ResampleTolerance::default()
    };
    let (mut before, mut after) = (0, 0);
    for clip in 0..edited.rig.clips.len() {
        let resampled = clip_edit::resample(&mut edited.rig, clip, rate, &tolerance)?;
        edited.changed(clip);
        say(resampled.summary());
        (before, after) = (before + resampled.before.bytes, after + resampled.after.bytes);
        report.resampled.push(ResampleLine::from(&resampled));
    }
    say(format!(
        "resampled at {rate} fps: {before} → {after} bytes of keys ({} saved)",
        before.saturating_sub(after)
    ));
    Ok(())
}

/// `--drop`, then `--rename`.
fn drop_and_rename(args: &EditClipsArgs, edited: &mut EditedClips, say: &dyn Fn(String)) -> Result<(), CommandError> {
    // Every name is looked up before any clip goes, so that a bad name leaves nothing half done.
    let mut drops: Vec<usize> = args
        .drop
        .iter()
        .map(|name| edited.find(name))
        .collect::<Result<_, _>>()?;
    drops.sort_unstable();
    drops.dedup();
    for &clip in drops.iter().rev() {
        let gone = clip_edit::drop_clip(&mut edited.rig, clip)?;
        edited.origins.remove(clip);
        say(format!("clip '{}': dropped", gone.name));
        edited.dropped.push(gone.name);
    }
    for (old, new) in &args.rename {
        let clip = edited.find(old)?;
        clip_edit::rename(&mut edited.rig, clip, new)?;
        if let Origin::Kept { renamed, .. } = &mut edited.origins[clip] {
            *renamed = true;
        }
        say(format!("clip '{old}': renamed '{new}'"));
    }
    Ok(())
}

fn load(path: &std::path::Path, args: &EditClipsArgs) -> Result<Rig, CommandError> {
    crate::rig::load_file_with(path, &args.bvh.options()).map_err(|source| CommandError::Load {
        path: path.to_path_buf(),
        source,
    })
}

/// The formats that hold one clip and no mesh.
#[derive(Clone, Copy)]
enum MotionFormat {
    Bvh,
    Vrma,
}

/// Writes the clip `--clip` names (the first when it names none) at `out` as `format`.
fn write_one_clip(
    args: &EditClipsArgs,
    rig: &Rig,
    out: &std::path::Path,
    report: &mut ClipsReport,
    say: &dyn Fn(String),
    format: MotionFormat,
) -> Result<Outcome, CommandError> {
    let label = match format {
        MotionFormat::Bvh => "BVH",
        MotionFormat::Vrma => "VRM Animation",
    };
    let clip = chosen_clip(args, rig, label)?;
    let written = match format {
        MotionFormat::Bvh => {
            let options = BvhOptions {
                order: args.bvh_order,
                rate: None,
            };
            write_bvh(rig, clip, out, &options)
        }
        MotionFormat::Vrma => write_vrma(rig, clip, out),
    };
    written.map_err(|source| CommandError::Save {
        path: out.to_path_buf(),
        source,
    })?;
    let name = &rig.clips[clip].name;
    say(match format {
        MotionFormat::Bvh => format!("wrote {} (clip '{name}', rotations {})", out.display(), args.bvh_order),
        MotionFormat::Vrma => format!("wrote {} (clip '{name}')", out.display()),
    });
    report.written = vec![out.to_path_buf()];
    Ok(Outcome::Passed)
}

/// The clip `--clip` names, else the first, for an output of one clip as `format`.
fn chosen_clip(args: &EditClipsArgs, rig: &Rig, format: &str) -> Result<usize, CommandError> {
    match &args.clip {
        Some(name) => Ok(clip_edit::find_clip(rig, name)?),
        None if rig.clips.is_empty() => Err(CommandError::Argument(format!(
            "{} has no clip to write as {format}",
            args.file.display()
        ))),
        None => Ok(0),
    }
}

/// Whether `path` holds FBX, by its first bytes and its name (as the importer tells).
fn is_fbx_file(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(64);
    let read = std::fs::File::open(path).and_then(|f| f.take(64).read_to_end(&mut head));
    read.is_ok() && crate::rig::is_fbx(&head, &path.to_string_lossy())
}

/// Limb directions and foot slide of the clips carried from `source` (from `first` on).
fn carried_quality(
    source: &Rig,
    rig: &Rig,
    first: usize,
    source_path: &std::path::Path,
    retarget: &RetargetReport,
) -> Vec<CarriedClip> {
    let options = MotionOptions::default();
    let slide = |rig: &Rig, clip: usize| {
        let motion = check_one_clip(rig, clip, &options);
        motion.feet.iter().map(|f| f.max_slide).fold(0.0f32, f32::max)
    };
    (retarget.clips.iter().enumerate())
        .map(|(k, clip)| {
            let worst = clip.worst_limb();
            CarriedClip {
                clip: clip.name.clone(),
                from: source_path.to_path_buf(),
                worst_limb: worst.map(|w| w.joint.clone()),
                worst_limb_degrees: worst.map_or(0.0, |w| w.degrees),
                source_foot_slide: slide(source, k),
                target_foot_slide: slide(rig, first + k),
            }
        })
        .collect()
}
