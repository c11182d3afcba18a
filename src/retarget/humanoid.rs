//! Which humanoid bone a joint is, whatever the rig calls it: a VRM file's own bone map, else
//! the names exporters give (Mixamo's `LeftArm`, Blender's and VRM's `UpperArm.L`, Unreal's
//! `upperarm_l`). Bones are named as VRM 1.0 names them (`leftUpperArm`).
//!
//! Spines differ in length (Mixamo has three joints, many avatars two): the joint below the
//! neck is always `upperChest`, so the chest ends of both chains pair and a joint only one rig
//! has is left out, its turn carried by the joints above it.

use super::matching::normalized_name;
use crate::rig::Rig;

/// The spine chain from the hips up, as the profile names its joints.
const SPINE: [&str; 3] = ["spine", "chest", "upperChest"];

/// Per node of `rig`, its humanoid bone: the file's own map where it has one (VRM), else by name.
pub fn human_bones(rig: &Rig) -> Vec<Option<String>> {
    let mut bones = vec![None; rig.nodes.len()];
    if rig.facts.humanoid.is_empty() {
        for (bone, node) in bones.iter_mut().zip(&rig.nodes) {
            *bone = bone_by_name(&node.name);
        }
    } else {
        for (bone, node) in &rig.facts.humanoid {
            if let Some(slot) = bones.get_mut(*node) {
                *slot = Some(bone.clone());
            }
        }
    }
    top_of_spine_is_upper_chest(&mut bones);
    bones
}

/// Renames a two-joint spine's upper joint `upperChest`, so that chains of two and three joints
/// pair at both ends.
fn top_of_spine_is_upper_chest(bones: &mut [Option<String>]) {
    let present: Vec<usize> = SPINE
        .iter()
        .filter_map(|name| bones.iter().position(|b| b.as_deref() == Some(name)))
        .collect();
    if let [_, top] = present[..] {
        bones[top] = Some("upperChest".to_owned());
    }
}

/// The humanoid bone a joint name means, if any.
pub fn bone_by_name(name: &str) -> Option<String> {
    let key = normalized_name(name);
    let (side, base) = side_of(name, &key);
    let bone = match side {
        None => unsided_bone(base)?.to_owned(),
        Some(side) => format!("{side}{}", sided_bone(base)?),
    };
    Some(bone)
}

/// `left`/`right` and the rest of the key, from a `Left…`/`Right…` prefix or a `.L`/`_r` suffix.
fn side_of<'k>(name: &str, key: &'k str) -> (Option<&'static str>, &'k str) {
    for (prefix, side) in [("left", "left"), ("right", "right")] {
        if let Some(rest) = key.strip_prefix(prefix).filter(|r| !r.is_empty()) {
            return (Some(side), rest);
        }
    }
    let bare = name.rsplit(['|', ':']).next().unwrap_or(name);
    for (suffix, side) in [('l', "left"), ('r', "right")] {
        let mut tail = bare.chars().rev();
        let (Some(last), Some(separator)) = (tail.next(), tail.next()) else {
            continue;
        };
        if last.eq_ignore_ascii_case(&suffix) && ['.', '_', '-', ' '].contains(&separator) {
            return (Some(side), &key[..key.len() - 1]);
        }
    }
    (None, key)
}

fn unsided_bone(base: &str) -> Option<&'static str> {
    Some(match base {
        "hips" | "hip" | "pelvis" => "hips",
        "spine" | "spine01" => "spine",
        "spine1" | "chest" | "spine02" => "chest",
        "spine2" | "upperchest" | "spine03" => "upperChest",
        "neck" | "neck01" => "neck",
        "head" => "head",
        _ => return None,
    })
}

fn sided_bone(base: &str) -> Option<String> {
    let limb = match base {
        "shoulder" | "clavicle" => "Shoulder",
        "arm" | "upperarm" => "UpperArm",
        "forearm" | "lowerarm" => "LowerArm",
        "hand" => "Hand",
        "upleg" | "upperleg" | "thigh" => "UpperLeg",
        "leg" | "lowerleg" | "calf" | "shin" => "LowerLeg",
        "foot" => "Foot",
        "toebase" | "toes" | "toe" | "ball" => "Toes",
        "eye" => "Eye",
        _ => return finger(base),
    };
    Some(limb.to_owned())
}

/// `HandIndex2`, `index_02`, `IndexIntermediate` → `IndexIntermediate`; thumbs count from the
/// metacarpal (`Thumb1` → `ThumbMetacarpal`), as Mixamo's and VRM 1.0's do.
fn finger(base: &str) -> Option<String> {
    let base = base.strip_prefix("hand").unwrap_or(base);
    let (finger, rest) = [
        ("thumb", "Thumb"),
        ("index", "Index"),
        ("middle", "Middle"),
        ("ring", "Ring"),
        ("pinky", "Little"),
        ("little", "Little"),
    ]
    .iter()
    .find_map(|(word, finger)| Some((*finger, base.strip_prefix(word)?)))?;
    let joints: [&str; 3] = if finger == "Thumb" {
        ["Metacarpal", "Proximal", "Distal"]
    } else {
        ["Proximal", "Intermediate", "Distal"]
    };
    let joint = match rest.trim_start_matches('0') {
        "1" => joints[0],
        "2" => joints[1],
        "3" => joints[2],
        word => *joints.iter().find(|j| j.eq_ignore_ascii_case(word))?,
    };
    Some(format!("{finger}{joint}"))
}

/// The humanoid bones an IK goal pulls: the ends of the arms' and legs' two-bone chains.
const HUMANOID_CHAIN_ENDS: [&str; 4] = ["leftHand", "rightHand", "leftFoot", "rightFoot"];

/// The joint an IK goal pulls when `picked` is clicked: on a humanoid rig, the hand or foot
/// `picked` lies under (a click lands on a finger or a toe as often as on the hand or the
/// foot, and a goal on a finger bends the finger, not the arm); else the nearest joint from
/// `picked` up with two bones of the skeleton above it. `None` when no joint from `picked` up
/// has such a chain.
pub fn chain_end_for_pick(rig: &Rig, picked: usize) -> Option<usize> {
    let nodes = &rig.nodes;
    let above = |from: usize| std::iter::successors(Some(from), |&n| nodes.get(n)?.parent);
    let human = human_bones(rig);
    let is_chain_end = |n: usize| {
        human
            .get(n)
            .and_then(Option::as_deref)
            .is_some_and(|b| HUMANOID_CHAIN_ENDS.contains(&b))
    };
    if let Some(end) = above(picked).find(|&n| is_chain_end(n)) {
        return Some(end);
    }
    let bones = &rig.hierarchy().bones;
    let is_bone = |n: Option<usize>| n.is_some_and(|n| bones.get(n).copied().unwrap_or(false));
    above(picked).find(|&n| {
        let mid = nodes[n].parent;
        is_bone(Some(n)) && is_bone(mid) && is_bone(mid.and_then(|m| nodes[m].parent))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exporters_names_give_one_bone() {
        for (names, bone) in [
            (
                &["mixamorig:LeftArm", "UpperArm.L", "upperarm_l", "leftUpperArm"][..],
                "leftUpperArm",
            ),
            (
                &["mixamorig:RightForeArm", "LowerArm.R", "lowerarm_r"][..],
                "rightLowerArm",
            ),
            (&["LeftUpLeg", "UpperLeg.L", "thigh_l"][..], "leftUpperLeg"),
            (&["RightToeBase", "Toes.R", "ball_r"][..], "rightToes"),
            (&["Hips", "pelvis"][..], "hips"),
            (&["Spine1", "Chest", "spine_02"][..], "chest"),
            (
                &["mixamorig:LeftHandThumb1", "thumb_01_l", "LeftThumbMetacarpal"][..],
                "leftThumbMetacarpal",
            ),
            (
                &["mixamorig:RightHandPinky3", "RightLittleDistal", "pinky_03_r"][..],
                "rightLittleDistal",
            ),
            (&["LeftHandIndex2", "index_02_l"][..], "leftIndexIntermediate"),
        ] {
            for name in names {
                assert_eq!(bone_by_name(name).as_deref(), Some(bone), "{name}");
            }
        }
        for name in [
            "Armature",
            "HeadTop_End",
            "LeftHandIndex4",
            "Ponytail",
            "Hand.L_end",
            "Spine3",
        ] {
            assert_eq!(bone_by_name(name), None, "{name}");
        }
    }
}
