//! Which humanoid bone a joint is, whatever the rig calls it: a VRM file's own bone map, else
//! the names exporters and motion capture give (Mixamo's and the CMU library's `LeftArm`,
//! Blender's and VRM's `UpperArm.L`, Unreal's `upperarm_l`, Biovision's `LeftShoulder` under
//! `LeftCollar`, Poser's and DAZ's `lShldr`, 3ds Max Biped's `Bip01 L UpperArm`). Bones are named
//! as VRM 1.0 names them (`leftUpperArm`).
//!
//! Spines differ in length (Mixamo has three joints, many avatars two, CMU's `LowerBack`,
//! `Spine`, `Spine1` three under other names, Biovision's one `Chest`): the joints between the
//! hips and the neck are named by their place, the one below the neck always `upperChest`, so
//! the chest ends of both chains pair and a joint only one rig has is left out, its turn carried
//! by the joints above it.

use super::matching::normalized_name;
use crate::rig::Rig;

/// The spine chain from the hips up, as the profile names its joints.
const SPINE: [&str; 3] = ["spine", "chest", "upperChest"];

/// Per node of `rig`, its humanoid bone: the file's own map where it has one (VRM), else by name
/// and place.
pub fn human_bones(rig: &Rig) -> Vec<Option<String>> {
    let mut bones = vec![None; rig.nodes.len()];
    if rig.facts.humanoid.is_empty() {
        for (bone, node) in bones.iter_mut().zip(&rig.nodes) {
            *bone = bone_by_name(&node.name);
        }
        shoulder_under_collar_is_upper_arm(rig, &mut bones);
        spine_by_place(rig, &mut bones);
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

/// Biovision calls the collar bone `LeftCollar` and the upper arm `LeftShoulder`, where Mixamo's
/// `LeftShoulder` is the collar bone: a shoulder under a joint that is already that side's
/// shoulder is the upper arm.
fn shoulder_under_collar_is_upper_arm(rig: &Rig, bones: &mut [Option<String>]) {
    for node in 0..bones.len() {
        let Some(side) = bones[node].as_deref().and_then(|b| b.strip_suffix("Shoulder")) else {
            continue;
        };
        let shoulder = format!("{side}Shoulder");
        let above = std::iter::successors(rig.nodes[node].parent, |&p| rig.nodes.get(p)?.parent);
        if above
            .take(rig.nodes.len())
            .any(|p| bones.get(p).and_then(Option::as_deref) == Some(&shoulder))
        {
            bones[node] = Some(format!("{side}UpperArm"));
        }
    }
}

/// Names the joints between the hips and the neck by their place, bottom up: `spine`, `chest`,
/// and `upperChest` below the neck (`spine` and `upperChest` for two joints, `upperChest` alone
/// for one; the middle ones of a longer spine stay unnamed). Nothing changes unless one hips and
/// one neck are known and the neck lies under the hips.
fn spine_by_place(rig: &Rig, bones: &mut [Option<String>]) {
    let only = |bone: &str| {
        let mut found = bones.iter().enumerate().filter(|(_, b)| b.as_deref() == Some(bone));
        match (found.next(), found.next()) {
            (Some((node, _)), None) => Some(node),
            _ => None,
        }
    };
    let (Some(hips), Some(neck)) = (only("hips"), only("neck")) else {
        return;
    };
    let mut chain = Vec::new();
    let mut above = rig.nodes[neck].parent;
    while let Some(node) = above.filter(|&p| p != hips) {
        if chain.len() > rig.nodes.len() {
            return;
        }
        chain.push(node);
        above = rig.nodes[node].parent;
    }
    if above != Some(hips) {
        return;
    }
    chain.reverse();
    for &node in &chain {
        bones[node] = None;
    }
    let named: &[&str] = match chain.len() {
        0 => &[],
        1 => &["upperChest"],
        2 => &["spine", "upperChest"],
        _ => &SPINE,
    };
    let (bottom, top) = named.split_at(named.len().saturating_sub(1));
    for (&node, bone) in chain.iter().zip(bottom) {
        bones[node] = Some((*bone).to_owned());
    }
    if let (Some(&node), [bone]) = (chain.last(), top) {
        bones[node] = Some((*bone).to_owned());
    }
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
    let name = without_biped_prefix(name);
    let key = normalized_name(name);
    let (side, base) = side_of(name, &key);
    let bone = match side {
        None => unsided_bone(base)?.to_owned(),
        Some(side) => format!("{side}{}", sided_bone(base)?),
    };
    Some(bone)
}

/// `name` without 3ds Max Biped's `Bip01 ` (any number, any separator): `Bip01 L Thigh` is
/// `L Thigh`.
fn without_biped_prefix(name: &str) -> &str {
    let bare = name.rsplit(['|', ':']).next().unwrap_or(name);
    let Some(rest) = bare
        .get(..3)
        .filter(|b| b.eq_ignore_ascii_case("bip"))
        .map(|_| &bare[3..])
    else {
        return name;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    match rest.strip_prefix([' ', '_']) {
        Some(after) if rest.len() < bare.len() - 3 && !after.is_empty() => after,
        _ => name,
    }
}

/// `left`/`right` and the rest of the key, from a `Left…`/`Right…` prefix, a side letter before
/// a capital or a separator (Poser's `lShldr`, CMU's `LHipJoint`, Biped's `L Thigh`) or before
/// a limb's name (the CMU skeleton files' `lfemur`), or a `.L`/`_r` suffix.
fn side_of<'k>(name: &str, key: &'k str) -> (Option<&'static str>, &'k str) {
    for (prefix, side) in [("left", "left"), ("right", "right")] {
        if let Some(rest) = key.strip_prefix(prefix).filter(|r| !r.is_empty()) {
            return (Some(side), rest);
        }
    }
    let bare = name.rsplit(['|', ':']).next().unwrap_or(name);
    let mut letters = bare.chars();
    if let (Some(first), Some(second)) = (letters.next(), letters.next()) {
        let side = match first {
            'l' | 'L' => Some("left"),
            'r' | 'R' => Some("right"),
            _ => None,
        };
        // The key is the name in lower case without separators, so it starts with the letter.
        let rest = key.strip_prefix(first.to_ascii_lowercase()).filter(|r| !r.is_empty());
        if let (Some(side), Some(rest)) = (side, rest)
            && (second.is_ascii_uppercase() || [' ', '_', '.', '-'].contains(&second) || sided_bone(rest).is_some())
        {
            return (Some(side), rest);
        }
    }
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
        "spine" | "spine01" | "lowerback" | "abdomen" => "spine",
        "spine1" | "chest" | "spine02" | "upperback" => "chest",
        "spine2" | "upperchest" | "spine03" | "thorax" => "upperChest",
        "neck" | "neck01" | "lowerneck" => "neck",
        "head" => "head",
        _ => return None,
    })
}

/// A limb's name without its side: Mixamo's and CMU's, Blender's, Unreal's, Biovision's
/// (`Collar`, `Shoulder`, `Elbow`, `Wrist`, `Hip`, `Knee`, `Ankle`), Poser's (`Shldr`) and the
/// CMU skeleton files' (`humerus`, `radius`, `femur`, `tibia`).
fn sided_bone(base: &str) -> Option<String> {
    let limb = match base {
        "shoulder" | "clavicle" | "collar" => "Shoulder",
        "arm" | "upperarm" | "uparm" | "shldr" | "humerus" => "UpperArm",
        "forearm" | "lowerarm" | "elbow" | "radius" => "LowerArm",
        "hand" | "wrist" => "Hand",
        "upleg" | "upperleg" | "thigh" | "hip" | "femur" => "UpperLeg",
        "leg" | "lowerleg" | "calf" | "shin" | "knee" | "tibia" => "LowerLeg",
        "foot" | "ankle" => "Foot",
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
            // Biovision, Poser, 3ds Max Biped and the CMU skeleton files.
            (
                &["LeftCollar", "lCollar", "Bip01 L Clavicle", "lclavicle"][..],
                "leftShoulder",
            ),
            (
                &["lShldr", "Bip01 L UpperArm", "lhumerus", "L_UpperArm"][..],
                "leftUpperArm",
            ),
            (
                &["RightElbow", "rForeArm", "Bip01 R Forearm", "rradius"][..],
                "rightLowerArm",
            ),
            (&["LeftWrist", "lHand", "Bip001 L Hand"][..], "leftHand"),
            (&["LeftHip", "lThigh", "Bip01 L Thigh", "lfemur"][..], "leftUpperLeg"),
            (&["RightKnee", "rShin", "Bip01 R Calf", "rtibia"][..], "rightLowerLeg"),
            (&["LeftAnkle", "lFoot", "Bip01 L Foot"][..], "leftFoot"),
            (&["Bip01 Pelvis", "hip"][..], "hips"),
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
            "LHipJoint",
            "RThumb",
            "LowerBack_End",
            "Bip01",
            "Root",
        ] {
            assert_eq!(bone_by_name(name), None, "{name}");
        }
    }

    /// A rig of `(name, parent)` nodes.
    fn skeleton(nodes: &[(&str, Option<usize>)]) -> Rig {
        Rig {
            nodes: (nodes.iter())
                .map(|&(name, parent)| crate::rig::Node {
                    name: name.to_owned(),
                    parent,
                    rest: crate::rig::Trs::IDENTITY,
                })
                .collect(),
            ..Rig::default()
        }
    }

    fn bone_of<'b>(rig: &Rig, bones: &'b [Option<String>], name: &str) -> Option<&'b str> {
        bones[rig.find_node(name).unwrap()].as_deref()
    }

    #[test]
    fn spines_are_named_by_place_between_the_hips_and_the_neck() {
        // CMU: LowerBack, Spine, Spine1; Biovision: Chest alone; a longer one leaves its middle out.
        let cmu = skeleton(&[
            ("Hips", None),
            ("LowerBack", Some(0)),
            ("Spine", Some(1)),
            ("Spine1", Some(2)),
            ("Neck", Some(3)),
            ("Neck1", Some(4)),
            ("Head", Some(5)),
            ("LeftShoulder", Some(3)),
            ("LeftArm", Some(7)),
        ]);
        let bones = human_bones(&cmu);
        for (name, bone) in [
            ("LowerBack", Some("spine")),
            ("Spine", Some("chest")),
            ("Spine1", Some("upperChest")),
            ("Neck", Some("neck")),
            ("Neck1", None),
            ("Head", Some("head")),
            ("LeftShoulder", Some("leftShoulder")),
            ("LeftArm", Some("leftUpperArm")),
        ] {
            assert_eq!(bone_of(&cmu, &bones, name), bone, "CMU {name}");
        }
        let biovision = skeleton(&[
            ("Hips", None),
            ("Chest", Some(0)),
            ("Neck", Some(1)),
            ("LeftCollar", Some(1)),
            ("LeftShoulder", Some(3)),
            ("LeftElbow", Some(4)),
        ]);
        let bones = human_bones(&biovision);
        for (name, bone) in [
            ("Chest", "upperChest"),
            ("LeftCollar", "leftShoulder"),
            ("LeftShoulder", "leftUpperArm"),
            ("LeftElbow", "leftLowerArm"),
        ] {
            assert_eq!(bone_of(&biovision, &bones, name), Some(bone), "Biovision {name}");
        }
        let long = skeleton(&[
            ("Hips", None),
            ("Chest", Some(0)),
            ("Chest2", Some(1)),
            ("Chest3", Some(2)),
            ("Chest4", Some(3)),
            ("Neck", Some(4)),
        ]);
        let bones = human_bones(&long);
        let spine: Vec<Option<&str>> = ["Chest", "Chest2", "Chest3", "Chest4"]
            .iter()
            .map(|name| bone_of(&long, &bones, name))
            .collect();
        assert_eq!(spine, [Some("spine"), Some("chest"), None, Some("upperChest")]);
    }
}
