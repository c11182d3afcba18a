//! One clip of a humanoid rig written as VRM Animation (`.vrma`): a GLB whose nodes are the
//! rig's humanoid bones (the file's VRM map, else what the joint names mean) and whose
//! `VRMC_vrm_animation` extension maps them.
//!
//! The bones are written as the BVH writer writes joints (see [`super::bvh`]): each at rest turned
//! as the world is, its translation the rest-pose step from the bone above, and its keys the
//! bone's turn from the rig's rest within the turn of the bone above; whatever lies between two
//! bones (an armature's scale, twist joints) is folded in. The hips alone take translation
//! keys, as the extension asks. The character is turned about +Y to face +Z, left on +X, as VRM
//! characters face. The eyes are left out: the extension gives them to the gaze, not to bones.

use super::SaveError;
use super::animations::encode_clip;
use super::bvh::{Frame, Frames, Joint, joints_of};
use super::new_gltf::{Chunk, gltf_files, write_files};
use crate::anim::PoseBuffers;
use crate::rig::{Channel, Clip, Interpolation, Property, Rig, VRMA_EXTENSION};
use glam::{DQuat, DVec3, Vec4};
use serde_json::{Map, Value, json};
use std::path::Path;

/// Writes clip `clip` of `rig` to `out` as VRM Animation, whole or not at all.
pub fn write_vrma(rig: &Rig, clip: usize, out: &Path) -> Result<(), SaveError> {
    let bytes = vrma_bytes(rig, clip)?;
    write_files(&[(out.to_path_buf(), bytes)])
}

/// The turn about +Y that makes the character face +Z: its left side (left upper leg, else
/// upper arm, from the right one) onto +X.
fn facing(bones: &[Option<String>], rest: &PoseBuffers) -> DQuat {
    let place = |bone: &str| {
        let node = bones.iter().position(|b| b.as_deref() == Some(bone))?;
        Some(rest.worlds[node].w_axis.truncate().as_dvec3())
    };
    let side = ["UpperLeg", "UpperArm"].iter().find_map(|limb| {
        let (left, right) = (place(&format!("left{limb}"))?, place(&format!("right{limb}"))?);
        Some(left - right).filter(|s| s.x * s.x + s.z * s.z > 1e-12)
    });
    side.map_or(DQuat::IDENTITY, |s| {
        DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2 - s.x.atan2(s.z))
    })
}

/// The GLB bytes of clip `clip` of `rig` as VRM Animation.
pub fn vrma_bytes(rig: &Rig, clip: usize) -> Result<Vec<u8>, SaveError> {
    let frames = Frames::of(rig, clip, None)?;
    let bones = crate::retarget::human_bones(rig);
    let is_bone = |node: usize| (bones[node].as_deref()).is_some_and(|b| b != "leftEye" && b != "rightEye");
    let joints: Vec<Joint> = joints_of(rig, is_bone)?;
    let bone_of = |j: usize| bones[joints[j].node].clone().unwrap_or_default();
    let Some(hips) = (0..joints.len()).find(|&j| bone_of(j) == "hips") else {
        return Err(SaveError::RigData {
            what: "skeleton".into(),
            problem: "it has no hips bone, which VRM Animation moves the character by".into(),
        });
    };
    let mut pose = PoseBuffers::new(rig);
    let turn = facing(&bones, &pose);
    let mut frame = Frame::new(rig.nodes.len());
    let times: Vec<f32> = (0..frames.count).map(|k| frames.time(k)).collect();
    let mut rotations = vec![Vec::with_capacity(times.len()); joints.len()];
    let mut hips_places = Vec::with_capacity(times.len());
    for &time in &times {
        pose.evaluate(rig, Some(clip), time);
        frame.set(rig, &pose, &joints);
        for (j, keys) in rotations.iter_mut().enumerate() {
            let local = turn * frame.local_rotation(j, &joints) * turn.conjugate();
            keys.push(Vec4::from(local.normalize().as_quat()));
        }
        hips_places.push((turn * frame.local_position(hips, &joints)).as_vec3().extend(0.0));
    }
    let name = rig.clips[clip].name.clone();
    let mut channels: Vec<Channel> = (rotations.into_iter().enumerate())
        .map(|(j, values)| Channel {
            node: j,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values,
        })
        .collect();
    channels.push(Channel {
        node: hips,
        property: Property::Translation,
        interpolation: Interpolation::Linear,
        times: times.clone(),
        values: hips_places,
    });
    // The written bones as a rig of their own, so that the clip goes through the one encoder.
    let written = Rig {
        clips: vec![Clip {
            name,
            duration: times.last().copied().unwrap_or(0.0),
            channels,
            source: None,
        }],
        ..Rig::default()
    };
    let encoded = encode_clip(&written, 0, Some, |_| Ok(0))?;

    let mut children: Vec<Vec<usize>> = vec![Vec::new(); joints.len()];
    let mut roots = Vec::new();
    for (j, joint) in joints.iter().enumerate() {
        match joint.parent {
            Some(p) => children[p].push(j),
            None => roots.push(j),
        }
    }
    let nodes: Vec<Value> = (joints.iter().enumerate())
        .map(|(j, joint)| {
            let mut node = Map::new();
            node.insert("name".into(), joint.name.clone().into());
            let step: DVec3 = turn * joint.offset;
            node.insert("translation".into(), json!(step.as_vec3().to_array()));
            if !children[j].is_empty() {
                node.insert("children".into(), json!(children[j]));
            }
            Value::Object(node)
        })
        .collect();
    let human_bones: Map<String, Value> = (0..joints.len()).map(|j| (bone_of(j), json!({ "node": j }))).collect();
    let mut chunk = Chunk::default();
    let animation = chunk.animation(encoded);
    let document = json!({
        "asset": { "version": "2.0", "generator": "Rigscope" },
        "extensionsUsed": [VRMA_EXTENSION],
        "extensions": { VRMA_EXTENSION: { "specVersion": "1.0", "humanoid": { "humanBones": human_bones } } },
        "scene": 0,
        "scenes": [{ "nodes": roots }],
        "nodes": nodes,
        "animations": [animation],
    });
    let files = gltf_files(document, chunk, Path::new("out.vrma"), super::OutputFormat::Glb)?;
    Ok(files
        .into_iter()
        .next_back()
        .map(|(_, bytes)| bytes)
        .unwrap_or_default())
}
