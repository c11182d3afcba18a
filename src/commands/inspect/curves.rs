//! `rigscope inspect FILE --curves --joint NAME [--clip NAME] [--json]`: one joint's animation
//! channels in a clip: keys, interpolation, cubic tangents and the sampled values; then the
//! clip's animated properties (`KHR_animation_pointer` tracks) with their keys.

use crate::cli::find_node;
use crate::commands::{CommandError, Outcome, open_rig_with};
use crate::motion::curves::{Reading, SAMPLES_PER_SECOND, joint_curves};
use crate::motion::rotation::RotationView;
use crate::names::Named;
use crate::rig::Property;
use serde_json::json;
use std::path::Path;

/// The `--curves` flags of `rigscope inspect`.
#[derive(clap::Args, Debug, Clone)]
pub struct CurvesArgs {
    /// Print one joint's animation curves (keys, interpolation, tangents, sampled values)
    /// instead of the report; needs --joint.
    #[arg(long, requires = "joint")]
    pub curves: bool,
    /// With --curves: the joint, by node name.
    #[arg(long, value_name = "NAME", requires = "curves")]
    pub joint: Option<String>,
    /// With --curves: the clip, by name or index (the first when omitted).
    #[arg(long, value_name = "NAME", requires = "curves")]
    pub clip: Option<String>,
    /// With --curves: sampled values per second of clip.
    #[arg(long, default_value_t = SAMPLES_PER_SECOND, requires = "curves")]
    pub samples_per_second: f32,
    /// With --curves: also give each rotation channel's keys and samples as Euler angles in an
    /// order (intrinsic: euler-xyz is Rx·Ry·Rz), the angle about a parent axis (axis-*) or about
    /// the joint's own axis away from its rest rotation (local-*), in degrees unwrapped past
    /// ±180°; or as quaternion components (quat).
    #[arg(long, value_name = "VIEW", value_parser = crate::names::cli::<RotationView>(), requires = "curves")]
    pub rotation: Option<RotationView>,
}

/// Prints the curves of `args.joint` in the clip asked for, as text or one JSON document. A file
/// that does not load, or names no such joint or clip, is an error.
pub fn print(
    file: &Path,
    read: &crate::rig::LoadOptions,
    args: &CurvesArgs,
    as_json: bool,
) -> Result<Outcome, CommandError> {
    let label = file.display().to_string();
    let rig = open_rig_with(file, read)?;
    let joint = args.joint.as_deref().unwrap_or_default();
    let node = find_node(&rig, joint)?;
    let clip = match &args.clip {
        Some(key) => rig.find_clip(key),
        None => (!rig.clips.is_empty()).then_some(0),
    };
    let Some(c) = clip else {
        return Err(CommandError::Argument(format!(
            "{label} has no clip '{}'",
            args.clip.as_deref().unwrap_or("")
        )));
    };
    if !(args.samples_per_second.is_finite() && (1.0..=1000.0).contains(&args.samples_per_second)) {
        return Err(CommandError::Argument(format!(
            "--samples-per-second must be between 1 and 1000, not {}",
            args.samples_per_second
        )));
    }
    let clip = &rig.clips[c];
    let channels = joint_curves(clip, node, args.samples_per_second);
    let reading = args.rotation.map(|view| Reading {
        property: Property::Rotation,
        view,
        rest: rig.nodes[node].rest.rotation,
    });
    // Rotation channels read in the view asked for, beside their stored values.
    let read: Vec<_> = (channels.iter())
        .map(|channel| {
            reading
                .filter(|_| channel.property == "rotation")
                .map(|r| (r, r.curve(channel)))
        })
        .collect();
    if as_json {
        let channels: Vec<serde_json::Value> = (channels.iter().zip(&read))
            .map(|(channel, read)| {
                let mut value = serde_json::to_value(channel).unwrap_or_default();
                if let Some((reading, read)) = read {
                    let width = reading.components().len();
                    value["rotation"] = json!({
                        "view": reading.view.name(),
                        "components": reading.components(),
                        "unit": if reading.view.is_angle() { "degrees" } else { "quaternion" },
                        "keys": read.keys.iter().map(|v| &v[..width]).collect::<Vec<_>>(),
                        "samples": read.samples.iter().map(|v| &v[..width]).collect::<Vec<_>>(),
                    });
                }
                value
            })
            .collect();
        let document = json!({
            "file": label,
            "joint": joint,
            "clip": clip.name,
            "duration": clip.duration,
            "channels": channels,
            "properties": properties_json(&rig, c),
        });
        println!("{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    } else {
        println!("{label}: {joint} in clip '{}' ({:.3} s)", clip.name, clip.duration);
        if channels.is_empty() {
            println!("  not animated by this clip");
        }
        for (channel, read) in channels.iter().zip(&read) {
            println!(
                "  {} {}: {} key(s)",
                channel.property,
                channel.interpolation,
                channel.keys.len()
            );
            for (k, key) in channel.keys.iter().enumerate() {
                match read {
                    Some((reading, read)) => println!(
                        "    {:>8.4} s  {:?}  {} {:.3?}",
                        key.time,
                        key.value,
                        reading.view.name(),
                        &read.keys[k][..reading.components().len()]
                    ),
                    None => println!("    {:>8.4} s  {:?}", key.time, key.value),
                }
            }
            for k in &channel.hemisphere_flips {
                println!("    key {k}: quaternion in the opposite hemisphere from the previous key");
            }
        }
        print_properties(&rig, c);
    }
    Ok(Outcome::Passed)
}

/// The property tracks of clip `clip`: pointer, interpolation, key times and values.
fn properties_json(rig: &crate::rig::Rig, clip: usize) -> Vec<serde_json::Value> {
    (rig.facts.property_tracks.iter())
        .filter(|t| t.clip == clip)
        .map(|t| {
            let components = t.target.components();
            json!({
                "pointer": t.target.pointer(&rig.facts.gltf_node),
                "interpolation": format!("{:?}", t.interpolation).to_uppercase(),
                "times": t.times,
                "values": t.values.iter().map(|v| v.to_array()[..components].to_vec()).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// Prints the property tracks of clip `clip`, each key's time and value.
fn print_properties(rig: &crate::rig::Rig, clip: usize) {
    for track in rig.facts.property_tracks.iter().filter(|t| t.clip == clip) {
        println!("  property {}", track.label(&rig.facts.gltf_node));
        let per_key = if track.interpolation == crate::rig::Interpolation::CubicSpline {
            3
        } else {
            1
        };
        for (k, time) in track.times.iter().enumerate() {
            let value = track.values[per_key * k + per_key / 2].to_array();
            println!("    {time:>8.4} s  {:?}", &value[..track.target.components()]);
        }
    }
}
