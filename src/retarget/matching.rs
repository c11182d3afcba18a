//! Which joint of one skeleton is which joint of another: names normalized the way exporters
//! differ (`mixamorig:Hips`, `mixamorig1:Hips`, `Armature|mixamorig:Hips`, `mixamorigHips`,
//! `Hips`, `hips`, `Hips_01`), a hand-made map on top, and what stays unmatched on both sides.

use crate::rig::Rig;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Characters that separate the words of a joint name (`left_arm`, `Left Arm`, `left-arm`).
const SEPARATORS: [char; 4] = ['_', ' ', '-', '.'];

/// The prefix Mixamo puts on every joint, followed by an optional rig number
/// (`mixamorig1:`) and, once a tool has replaced the colon, by nothing or a separator.
const MIXAMO_PREFIX: &str = "mixamorig";

/// `name` without its paths and namespaces: the part after the last `|` (`Armature|Hips`) and
/// the last `:` (`mixamorig:Hips`, any `Name:` namespace), then without a leading `mixamorig`,
/// its rig number and a separator (`mixamorig1Hips`, `mixamorig_Hips`, as tools write the name
/// once they drop the colon). A name that is nothing but the prefix stays as it is.
fn bare_name(name: &str) -> &str {
    let name = name.rsplit('|').next().unwrap_or(name);
    let name = name.rsplit(':').next().unwrap_or(name);
    let Some(prefix) = name.get(..MIXAMO_PREFIX.len()) else {
        return name;
    };
    if !prefix.eq_ignore_ascii_case(MIXAMO_PREFIX) {
        return name;
    }
    let rest = name[MIXAMO_PREFIX.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.strip_prefix(SEPARATORS).unwrap_or(rest);
    if rest.is_empty() { name } else { rest }
}

/// The key two names of one joint share: `bare_name`, lower case, separators removed
/// (`LeftArm`, `left_arm` and `Left Arm` all give `leftarm`).
pub fn normalized_name(name: &str) -> String {
    bare_name(name)
        .chars()
        .filter(|c| !SEPARATORS.contains(c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// [`normalized_name`] without a numbered suffix set off by a separator (`Hips_01`, `Spine.001`
/// → `hips`, `spine`), or `None` when the name has none. Digits that are part of the name
/// (`Spine1`, `LeftHandIndex2`) are not a suffix.
pub fn name_without_suffix(name: &str) -> Option<String> {
    let bare = bare_name(name);
    let digits = bare.len() - bare.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let stem = &bare[..bare.len() - digits];
    let stem = stem.strip_suffix(SEPARATORS).filter(|_| digits > 0)?;
    Some(normalized_name(stem)).filter(|s| !s.is_empty())
}

/// Joint pairs set by hand for one pair of skeletons, kept in the settings under
/// [`JointMap::key`]. They override name matching.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct JointMap {
    /// Source joint name → target joint name (exact node names). An empty target leaves the
    /// source joint unmatched.
    pub by_hand: BTreeMap<String, String>,
}

impl JointMap {
    /// The settings key of the map from `source`'s skeleton to `target`'s.
    pub fn key(source: &Rig, target: &Rig) -> String {
        format!("{}>{}", SkeletonSignature::of(source), SkeletonSignature::of(target))
    }
}

/// Hand-made joint maps by [`JointMap::key`], as the settings keep them.
pub type JointMaps = BTreeMap<String, JointMap>;

/// A skeleton's identity that survives reloading and reordering: a 64-bit FNV-1a hash of its
/// sorted joint names (the names of the nodes [`match_joints`] reports on). FNV is written out
/// here because std's hasher may change between releases and the value is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SkeletonSignature(pub u64);

impl SkeletonSignature {
    pub fn of(rig: &Rig) -> SkeletonSignature {
        const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
        const PRIME: u64 = 0x0100_0000_01b3;
        let mut names: Vec<&str> = signed_nodes(rig).map(|n| rig.nodes[n].name.as_str()).collect();
        names.sort_unstable();
        let mut hash = OFFSET;
        for name in names {
            // A zero byte ends each name, so that ["ab", "c"] and ["a", "bc"] differ.
            for byte in name.bytes().chain([0]) {
                hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
            }
        }
        SkeletonSignature(hash)
    }
}

impl std::fmt::Display for SkeletonSignature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// The outcome of matching a source skeleton's joints to a target's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JointMatch {
    /// Per source node: the target node it drives.
    pub target_of: Vec<Option<usize>>,
    /// Source joints that drive nothing, by name, in node order.
    pub unmatched_source: Vec<String>,
    /// Target joints nothing drives, by name, in node order.
    pub unmatched_target: Vec<String>,
    /// Hand-made pairs that name a node one of the rigs does not have (left out).
    pub stale_by_hand: Vec<(String, String)>,
}

impl JointMatch {
    /// Number of matched pairs.
    pub fn matched(&self) -> usize {
        self.target_of.iter().flatten().count()
    }
}

/// Whether the importer made `name` up for a node the file leaves unnamed (`node 12`): such
/// names say nothing about which joint it is.
fn is_made_up(name: &str) -> bool {
    name.strip_prefix("node ")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Nodes that take part in matching: every node without a mesh on it (joints, and the armature
/// nodes above them), when named.
fn candidate_nodes(rig: &Rig) -> impl Iterator<Item = usize> + '_ {
    let mut carries_mesh = vec![false; rig.nodes.len()];
    for instance in &rig.instances {
        if let Some(flag) = carries_mesh.get_mut(instance.node) {
            *flag = true;
        }
    }
    let is_track = move |n: usize| (rig.facts.vrma.as_ref()).is_some_and(|v| v.is_track_node(n));
    (0..rig.nodes.len()).filter(move |&n| !carries_mesh[n] && !is_made_up(&rig.nodes[n].name) && !is_track(n))
}

/// Nodes a skeleton's signature is made of: the skins' joints (each once, in node order), or
/// every candidate node of a rig without skins. Kept as it was when maps were first stored, so
/// that the maps kept for a skeleton still find it.
fn signed_nodes(rig: &Rig) -> impl Iterator<Item = usize> + '_ {
    let mut is_joint = vec![false; rig.nodes.len()];
    for &joint in rig.skins.iter().flat_map(|s| &s.joints) {
        if let Some(flag) = is_joint.get_mut(joint) {
            *flag = true;
        }
    }
    let has_joints = is_joint.contains(&true);
    candidate_nodes(rig).filter(move |&n| !has_joints || is_joint[n])
}

/// Nodes whose matching is reported: the skins' joints, or, in a rig without skins (a clip
/// pack), the nodes a clip animates or that have children: a pack's leftover mesh nodes
/// (Mixamo's `Beta_Joints`, `Beta_Surface`) are neither and would only be noise in the lists.
fn reported_nodes(rig: &Rig) -> impl Iterator<Item = usize> + '_ {
    let has_skins = rig.skins.iter().any(|s| !s.joints.is_empty());
    let mut skeletal = vec![has_skins; rig.nodes.len()];
    if !has_skins {
        for node in &rig.nodes {
            if let Some(parent) = node.parent.and_then(|p| skeletal.get_mut(p)) {
                *parent = true;
            }
        }
        for channel in rig.clips.iter().flat_map(|c| &c.channels) {
            if let Some(flag) = skeletal.get_mut(channel.node) {
                *flag = true;
            }
        }
    }
    signed_nodes(rig).filter(move |&n| skeletal[n])
}

/// Pairs the still unpaired candidates of both sides whose `key` agrees and is unique on both
/// sides (names that collide are left alone rather than guessed).
fn pair_by_key(
    source: &[(usize, Option<String>)],
    target: &[(usize, Option<String>)],
    target_of: &mut [Option<usize>],
    target_taken: &mut [bool],
) {
    let mut groups: HashMap<&str, (Vec<usize>, Vec<usize>)> = HashMap::new();
    for (node, key) in source {
        if let Some(key) = key
            && target_of[*node].is_none()
        {
            groups.entry(key).or_default().0.push(*node);
        }
    }
    for (node, key) in target {
        if let Some(key) = key
            && !target_taken[*node]
        {
            groups.entry(key).or_default().1.push(*node);
        }
    }
    for (sources, targets) in groups.values() {
        if let ([s], [t]) = (sources.as_slice(), targets.as_slice()) {
            target_of[*s] = Some(*t);
            target_taken[*t] = true;
        }
    }
}

/// What a matching pass compares names by (`None`: the name takes no part).
type NameKey = fn(&str) -> Option<String>;

/// Matches `source`'s joints to `target`'s: first the pairs in `map`, then equal humanoid bones
/// (`super::humanoid`: a VRM file's map, or what the names mean), then equal names, then equal
/// [`normalized_name`]s, then equal [`name_without_suffix`]es, each unique on both sides.
pub fn match_joints(source: &Rig, target: &Rig, map: &JointMap) -> JointMatch {
    let mut target_of = vec![None; source.nodes.len()];
    let mut target_taken = vec![false; target.nodes.len()];
    let mut stale_by_hand = Vec::new();
    let mut excluded = vec![false; source.nodes.len()];
    for (from, to) in &map.by_hand {
        let Some(s) = source.find_node(from) else {
            stale_by_hand.push((from.clone(), to.clone()));
            continue;
        };
        if to.is_empty() {
            excluded[s] = true;
            continue;
        }
        match target.find_node(to) {
            Some(t) if !target_taken[t] => {
                target_of[s] = Some(t);
                target_taken[t] = true;
            }
            _ => stale_by_hand.push((from.clone(), to.clone())),
        }
    }
    let source_nodes: Vec<usize> = candidate_nodes(source).filter(|&n| !excluded[n]).collect();
    let target_nodes: Vec<usize> = candidate_nodes(target).collect();
    let keyed = |rig: &Rig, nodes: &[usize], key: NameKey| -> Vec<(usize, Option<String>)> {
        nodes.iter().map(|&n| (n, key(&rig.nodes[n].name))).collect()
    };
    let humanoid = |rig: &Rig, nodes: &[usize]| -> Vec<(usize, Option<String>)> {
        let bones = super::humanoid::human_bones(rig);
        nodes.iter().map(|&n| (n, bones[n].clone())).collect()
    };
    pair_by_key(
        &humanoid(source, &source_nodes),
        &humanoid(target, &target_nodes),
        &mut target_of,
        &mut target_taken,
    );
    let keys: [NameKey; 3] = [
        |name| Some(name.to_owned()),
        |name| Some(normalized_name(name)).filter(|k| !k.is_empty()),
        name_without_suffix,
    ];
    for key in keys {
        pair_by_key(
            &keyed(source, &source_nodes, key),
            &keyed(target, &target_nodes, key),
            &mut target_of,
            &mut target_taken,
        );
    }
    let unmatched_source = reported_nodes(source)
        .filter(|&n| target_of[n].is_none())
        .map(|n| source.nodes[n].name.clone())
        .collect();
    let unmatched_target = reported_nodes(target)
        .filter(|&n| !target_taken[n])
        .map(|n| target.nodes[n].name.clone())
        .collect();
    JointMatch {
        target_of,
        unmatched_source,
        unmatched_target,
        stale_by_hand,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exporter_prefixes_and_namespaces_are_stripped() {
        for name in [
            "mixamorig:Hips",
            "mixamorig1:Hips",
            "Armature|mixamorig:Hips",
            "mixamorig1Hips",
            "mixamorigHips",
            "mixamorig_Hips",
            "Character:Hips",
            "Hips",
            "hips",
            "HIPS",
        ] {
            assert_eq!(normalized_name(name), "hips", "{name}");
        }
    }

    #[test]
    fn case_and_separators_do_not_matter() {
        for name in [
            "LeftArm",
            "left_arm",
            "Left Arm",
            "left-arm",
            "mixamorig:LeftArm",
            "LEFT_ARM",
        ] {
            assert_eq!(normalized_name(name), "leftarm", "{name}");
        }
        assert_ne!(normalized_name("LeftArm"), normalized_name("RightArm"));
    }

    #[test]
    fn numbered_suffixes_drop_only_after_a_separator() {
        assert_eq!(name_without_suffix("Hips_01").as_deref(), Some("hips"));
        assert_eq!(name_without_suffix("Spine.001").as_deref(), Some("spine"));
        assert_eq!(name_without_suffix("mixamorig:LeftArm_2").as_deref(), Some("leftarm"));
        // Digits that belong to the name stay.
        assert_eq!(name_without_suffix("Spine1"), None);
        assert_eq!(name_without_suffix("LeftHandIndex2"), None);
        assert_eq!(name_without_suffix("Hips"), None);
        assert_eq!(name_without_suffix("_01"), None);
        assert_eq!(normalized_name("Spine1"), "spine1");
    }

    #[test]
    fn a_bare_prefix_is_a_name() {
        assert_eq!(normalized_name("mixamorig"), "mixamorig");
        assert_eq!(normalized_name("mixamorig:"), "");
    }

    #[test]
    fn a_clip_packs_leftover_mesh_nodes_are_not_reported() {
        use crate::rig::{Channel, Clip, Interpolation, Node, Property, Trs};
        let node = |name: &str, parent: Option<usize>| Node {
            name: name.into(),
            parent,
            rest: Trs::IDENTITY,
        };
        // A skinless pack: Armature over Hips over Spine, and two empty leaves beside Hips that
        // nothing animates.
        let pack = Rig {
            nodes: vec![
                node("Armature", None),
                node("mixamorig:Hips", Some(0)),
                node("mixamorig:Spine", Some(1)),
                node("Beta_Joints", Some(0)),
                node("Beta_Surface", Some(0)),
            ],
            clips: vec![Clip {
                name: "walk".into(),
                duration: 1.0,
                channels: vec![Channel {
                    node: 2,
                    property: Property::Rotation,
                    interpolation: Interpolation::Linear,
                    times: vec![0.0],
                    values: vec![glam::Vec4::W],
                }],
                source: None,
            }],
            ..Rig::default()
        };
        let target = Rig {
            nodes: vec![node("Hips", None)],
            ..Rig::default()
        };
        let matched = match_joints(&pack, &target, &JointMap::default());
        assert_eq!(matched.unmatched_source, ["Armature", "mixamorig:Spine"]);
        assert!(matched.unmatched_target.is_empty());
    }

    #[test]
    fn made_up_names_are_recognized() {
        assert!(is_made_up("node 12"));
        assert!(!is_made_up("node"));
        assert!(!is_made_up("node tip"));
        assert!(!is_made_up("Hips"));
    }
}
