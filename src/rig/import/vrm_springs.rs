//! An avatar's spring bones as plain data: VRM 0.x `VRM.secondaryAnimation` and
//! `VRMC_springBone` 1.0, both read into one [`SpringBones`] over rig nodes.
//!
//! Every index, count and number the file gives is checked: a collider on a node the file
//! does not have, a negative or non-finite radius, a joint that is not below the one before
//! it, a joint claimed by two springs. What fails a check is left out with a warning naming it,
//! so a broken setup costs its own chain or collider, never the load.

use glam::Vec3;
use serde_json::Value;

/// The spring bone extension of VRM 1.0.
pub const SPRING_EXTENSION: &str = "VRMC_springBone";

/// How far past a VRM 0.x chain's last node its tail is put, in metres (the VRM 1.0
/// specification's account of VRM 0.x: "a distance of 7 cm at the end").
pub const VRM0_TAIL_METRES: f32 = 0.07;

/// Which extension the springs were read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpringSource {
    /// VRM 0.x `secondaryAnimation`.
    Vrm0,
    /// `VRMC_springBone` 1.0.
    Vrm1,
}

/// A collider's shape in its node's local space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColliderShape {
    Sphere {
        offset: Vec3,
        radius: f32,
    },
    /// A sphere swept from `offset` to `tail`.
    Capsule {
        offset: Vec3,
        tail: Vec3,
        radius: f32,
    },
}

/// A shape on a rig node that spring joints are pushed out of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringCollider {
    pub node: usize,
    pub shape: ColliderShape,
}

/// How one joint swings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringSettings {
    /// Pull back toward the rest direction, per second.
    pub stiffness: f32,
    pub gravity_power: f32,
    /// Unit length (a zero direction with no power is kept as given).
    pub gravity_dir: Vec3,
    /// Share of the velocity lost per step, 0 to 1.
    pub drag: f32,
    /// Radius of the joint's tail against colliders, in metres.
    pub hit_radius: f32,
}

/// Where a joint's tail is: a node below it, or (VRM 0.x, a node without children) a point
/// [`VRM0_TAIL_METRES`] past the joint along the bone from its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpringTail {
    Node(usize),
    Extended,
}

/// One rotating node of a chain and the tail that its rotation aims.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringJoint {
    pub node: usize,
    pub tail: SpringTail,
    pub settings: SpringSettings,
}

/// Joints that swing together, the colliders they meet and the space their inertia is kept in.
#[derive(Debug, Clone, PartialEq)]
pub struct SpringChain {
    pub name: String,
    /// Parents before children.
    pub joints: Vec<SpringJoint>,
    /// Indices into [`SpringBones::colliders`], each once.
    pub colliders: Vec<usize>,
    /// The node whose space the tails' motion is measured in (`None`: the world).
    pub center: Option<usize>,
}

/// An avatar's spring bones.
#[derive(Debug, Clone, PartialEq)]
pub struct SpringBones {
    pub source: SpringSource,
    pub colliders: Vec<SpringCollider>,
    pub chains: Vec<SpringChain>,
}

impl SpringBones {
    pub fn joint_count(&self) -> usize {
        self.chains.iter().map(|c| c.joints.len()).sum()
    }
}

/// What the readers check indices against: per glTF node its rig node, parent and children.
pub(super) struct SpringNodes<'a> {
    /// `slot[gltf node]`: its rig node.
    pub slot: &'a [usize],
    /// Per rig node its parent.
    pub parents: &'a [Option<usize>],
    /// Per glTF node its children as glTF indices, in the file's order.
    pub children: &'a [Vec<usize>],
}

impl SpringNodes<'_> {
    fn rig_node(&self, value: Option<&Value>) -> Option<usize> {
        let index = usize::try_from(value?.as_u64()?).ok()?;
        self.slot.get(index).copied()
    }

    fn is_ancestor(&self, ancestor: usize, mut node: usize) -> bool {
        while let Some(parent) = self.parents.get(node).copied().flatten() {
            if parent == ancestor {
                return true;
            }
            node = parent;
        }
        false
    }
}

/// The elements of `value`'s array member `key`; none when it is missing or not an array (the
/// reader checks each element, not the container).
fn items<'v>(value: &'v Value, key: &str) -> impl Iterator<Item = &'v Value> {
    value.get(key).and_then(Value::as_array).into_iter().flatten()
}

/// The avatar's springs (`VRMC_springBone`, else VRM 0.x `secondaryAnimation`), or `None` when
/// it has neither or nothing of them survives the checks.
pub(super) fn read_springs(
    root: &gltf::json::Root,
    nodes: &SpringNodes,
    warnings: &mut Vec<String>,
) -> Option<SpringBones> {
    let extensions = root.extensions.as_ref()?;
    let springs = if let Some(extension) = extensions.others.get(SPRING_EXTENSION) {
        read_vrm1(extension, nodes, warnings)
    } else {
        let secondary = extensions.others.get("VRM")?.get("secondaryAnimation")?;
        read_vrm0(secondary, nodes, warnings)
    };
    let mut springs = springs?;
    drop_shared_joints(&mut springs, warnings);
    (!springs.chains.is_empty()).then_some(springs)
}

fn number(value: Option<&Value>, default: f32) -> Option<f32> {
    match value {
        None => Some(default),
        Some(v) => v.as_f64().map(|x| x as f32).filter(|x| x.is_finite()),
    }
}

fn array3(value: Option<&Value>, default: Vec3) -> Option<Vec3> {
    let Some(value) = value else { return Some(default) };
    let items = value.as_array().filter(|a| a.len() == 3)?;
    let v = Vec3::new(
        number(items.first(), 0.0)?,
        number(items.get(1), 0.0)?,
        number(items.get(2), 0.0)?,
    );
    Some(v)
}

/// A VRM 0.x `{x, y, z}` vector, in the glTF axes: VRM 0.x wrote these in its authoring tool's
/// axes, mirrored in X from the glTF nodes they belong to.
fn vector_0x(value: Option<&Value>, default: Vec3) -> Option<Vec3> {
    let Some(value) = value else { return Some(default) };
    let v = Vec3::new(
        number(value.get("x"), 0.0)?,
        number(value.get("y"), 0.0)?,
        number(value.get("z"), 0.0)?,
    );
    Some(Vec3::new(-v.x, v.y, v.z))
}

fn radius(value: Option<&Value>) -> Option<f32> {
    number(value, 0.0).filter(|r| *r >= 0.0)
}

/// Settings with their ranges enforced: a negative stiffness or a drag outside 0..1 is not
/// clamped but refused, since the file then says something the simulation cannot mean.
fn settings(
    stiffness: Option<f32>,
    gravity_power: Option<f32>,
    gravity_dir: Option<Vec3>,
    drag: Option<f32>,
    hit_radius: Option<f32>,
) -> Option<SpringSettings> {
    let settings = SpringSettings {
        stiffness: stiffness.filter(|s| *s >= 0.0)?,
        gravity_power: gravity_power.filter(|g| *g >= 0.0)?,
        gravity_dir: gravity_dir?.normalize_or_zero(),
        drag: drag.filter(|d| (0.0..=1.0).contains(d))?,
        hit_radius: hit_radius.filter(|r| *r >= 0.0)?,
    };
    Some(settings)
}

fn read_vrm1(extension: &Value, nodes: &SpringNodes, warnings: &mut Vec<String>) -> Option<SpringBones> {
    let mut colliders = Vec::new();
    // Per file collider: where it went in `colliders`.
    let mut collider_slot = Vec::new();
    for (k, collider) in items(extension, "colliders").enumerate() {
        let node = nodes.rig_node(collider.get("node"));
        let shape = collider.get("shape");
        let sphere = shape.and_then(|s| s.get("sphere"));
        let capsule = shape.and_then(|s| s.get("capsule"));
        let read = match (node, sphere, capsule) {
            (Some(node), Some(sphere), None) => (array3(sphere.get("offset"), Vec3::ZERO))
                .zip(radius(sphere.get("radius")))
                .map(|(offset, radius)| ColliderShape::Sphere { offset, radius })
                .map(|shape| SpringCollider { node, shape }),
            (Some(node), None, Some(capsule)) => {
                let offset = array3(capsule.get("offset"), Vec3::ZERO);
                let tail = array3(capsule.get("tail"), Vec3::ZERO);
                let radius = radius(capsule.get("radius"));
                match (offset, tail, radius) {
                    (Some(offset), Some(tail), Some(radius)) => Some(SpringCollider {
                        node,
                        shape: ColliderShape::Capsule { offset, tail, radius },
                    }),
                    _ => None,
                }
            }
            _ => None,
        };
        if read.is_none() {
            warnings.push(format!(
                "{SPRING_EXTENSION}: collider {k} needs a node of the file and one sphere or capsule with finite numbers and a radius of 0 or more; it is left out"
            ));
        }
        collider_slot.push(read.map(|c| {
            colliders.push(c);
            colliders.len() - 1
        }));
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (g, group) in items(extension, "colliderGroups").enumerate() {
        let mut members = Vec::new();
        for index in items(group, "colliders") {
            match index.as_u64().and_then(|i| collider_slot.get(usize::try_from(i).ok()?).copied()) {
                Some(Some(slot)) => members.push(slot),
                Some(None) => {}
                None => warnings.push(format!(
                    "{SPRING_EXTENSION}: collider group {g} names collider {index}, which the file does not have; it is left out"
                )),
            }
        }
        groups.push(members);
    }
    let mut chains = Vec::new();
    for (s, spring) in items(extension, "springs").enumerate() {
        let name = spring
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| format!("spring {s}"), str::to_owned);
        match read_spring_1(spring, &name, nodes, &groups, warnings) {
            Ok(chain) => chains.push(chain),
            Err(why) => warnings.push(format!("{SPRING_EXTENSION}: {name}: {why}; the spring is left out")),
        }
    }
    Some(SpringBones {
        source: SpringSource::Vrm1,
        colliders,
        chains,
    })
}

fn read_spring_1(
    spring: &Value,
    name: &str,
    nodes: &SpringNodes,
    groups: &[Vec<usize>],
    warnings: &mut Vec<String>,
) -> Result<SpringChain, String> {
    let listed = spring
        .get("joints")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut joint_nodes = Vec::with_capacity(listed.len());
    for (j, joint) in listed.iter().enumerate() {
        let node = nodes
            .rig_node(joint.get("node"))
            .ok_or_else(|| format!("joint {j} names no node of the file"))?;
        if let Some(&above) = joint_nodes.last()
            && !nodes.is_ancestor(above, node)
        {
            return Err(format!("joint {j} is not below joint {}", j - 1));
        }
        joint_nodes.push(node);
    }
    if joint_nodes.len() < 2 {
        return Err("it needs two joints or more (the last is only a tail)".to_owned());
    }
    // The last joint only gives the one before it a tail; its settings are not used.
    let mut joints = Vec::with_capacity(joint_nodes.len() - 1);
    for (j, (joint, pair)) in listed.iter().zip(joint_nodes.windows(2)).enumerate() {
        let read = settings(
            number(joint.get("stiffness"), 1.0),
            number(joint.get("gravityPower"), 0.0),
            array3(joint.get("gravityDir"), Vec3::NEG_Y),
            number(joint.get("dragForce"), 0.5),
            number(joint.get("hitRadius"), 0.0),
        )
        .ok_or_else(|| format!("joint {j} has a setting that is not a finite number in its range"))?;
        joints.push(SpringJoint {
            node: pair[0],
            tail: SpringTail::Node(pair[1]),
            settings: read,
        });
    }
    let mut colliders = Vec::new();
    for group in items(spring, "colliderGroups") {
        match group.as_u64().and_then(|g| groups.get(usize::try_from(g).ok()?)) {
            Some(members) => add_unique(&mut colliders, members),
            None => warnings.push(format!(
                "{SPRING_EXTENSION}: {name} names collider group {group}, which the file does not have; it is left out"
            )),
        }
    }
    let center = center(spring.get("center"), nodes, joint_nodes[0], name, warnings);
    Ok(SpringChain {
        name: name.to_owned(),
        joints,
        colliders,
        center,
    })
}

/// A chain's center node, when it is the first joint or above it (anything else is left out
/// with a warning: the chain then keeps its inertia in world space).
fn center(
    value: Option<&Value>,
    nodes: &SpringNodes,
    first_joint: usize,
    name: &str,
    warnings: &mut Vec<String>,
) -> Option<usize> {
    let value = value.filter(|v| v.as_i64() != Some(-1))?;
    match nodes.rig_node(Some(value)) {
        Some(center) if center == first_joint || nodes.is_ancestor(center, first_joint) => Some(center),
        _ => {
            warnings.push(format!(
                "spring {name}: center {value} is not its first joint or above it; world space is used"
            ));
            None
        }
    }
}

fn read_vrm0(secondary: &Value, nodes: &SpringNodes, warnings: &mut Vec<String>) -> Option<SpringBones> {
    let mut colliders = Vec::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (g, group) in items(secondary, "colliderGroups").enumerate() {
        let mut members = Vec::new();
        let node = nodes.rig_node(group.get("node"));
        for (k, collider) in items(group, "colliders").enumerate() {
            let offset = vector_0x(collider.get("offset"), Vec3::ZERO);
            match (node, offset, radius(collider.get("radius"))) {
                (Some(node), Some(offset), Some(radius)) => {
                    colliders.push(SpringCollider {
                        node,
                        shape: ColliderShape::Sphere { offset, radius },
                    });
                    members.push(colliders.len() - 1);
                }
                _ => warnings.push(format!(
                    "VRM secondaryAnimation: collider {k} of collider group {g} needs a node of the file, a finite offset and a radius of 0 or more; it is left out"
                )),
            }
        }
        groups.push(members);
    }
    let mut chains = Vec::new();
    for (b, group) in items(secondary, "boneGroups").enumerate() {
        let name = group
            .get("comment")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map_or_else(|| format!("bone group {b}"), str::to_owned);
        let read = settings(
            number(group.get("stiffiness"), 1.0),
            number(group.get("gravityPower"), 0.0),
            vector_0x(group.get("gravityDir"), Vec3::NEG_Y),
            number(group.get("dragForce"), 0.4),
            number(group.get("hitRadius"), 0.02),
        );
        let Some(settings) = read else {
            warnings.push(format!(
                "VRM secondaryAnimation: {name} has a setting that is not a finite number in its range; it is left out"
            ));
            continue;
        };
        let mut colliders_of_group = Vec::new();
        for index in items(group, "colliderGroups") {
            match index.as_u64().and_then(|g| groups.get(usize::try_from(g).ok()?)) {
                Some(members) => add_unique(&mut colliders_of_group, members),
                None => warnings.push(format!(
                    "VRM secondaryAnimation: {name} names collider group {index}, which the file does not have; it is left out"
                )),
            }
        }
        // Each root bone swings its whole subtree: one chain per root.
        for (r, root) in items(group, "bones").enumerate() {
            let Some(gltf_root) = root
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i < nodes.slot.len())
            else {
                warnings.push(format!(
                    "VRM secondaryAnimation: {name}: bone {r} names no node of the file; it is left out"
                ));
                continue;
            };
            let mut joints = Vec::new();
            subtree_joints(gltf_root, nodes, settings, &mut joints);
            joints.sort_by_key(|j| j.node);
            let center = center(group.get("center"), nodes, nodes.slot[gltf_root], &name, warnings);
            chains.push(SpringChain {
                name: format!("{name} / {}", nodes.slot[gltf_root]),
                joints,
                colliders: colliders_of_group.clone(),
                center,
            });
        }
    }
    Some(SpringBones {
        source: SpringSource::Vrm0,
        colliders,
        chains,
    })
}

/// Every node of the subtree at glTF node `root` as a joint aiming at its first child (or past
/// its end), walked with a stack so that a deep file cannot overflow the call stack.
fn subtree_joints(root: usize, nodes: &SpringNodes, settings: SpringSettings, joints: &mut Vec<SpringJoint>) {
    let mut stack = vec![root];
    while let Some(gltf_node) = stack.pop() {
        let Some(&node) = nodes.slot.get(gltf_node) else {
            continue;
        };
        if joints.iter().any(|j: &SpringJoint| j.node == node) {
            continue;
        }
        let children = nodes.children.get(gltf_node).map_or(&[][..], Vec::as_slice);
        let first_child = children.iter().find_map(|&c| nodes.slot.get(c).copied());
        joints.push(SpringJoint {
            node,
            tail: first_child.map_or(SpringTail::Extended, SpringTail::Node),
            settings,
        });
        stack.extend(children.iter().copied());
    }
}

/// Adds the members not in `list` yet: a collider met twice would push a tail out twice.
fn add_unique(list: &mut Vec<usize>, members: &[usize]) {
    for &member in members {
        if !list.contains(&member) {
            list.push(member);
        }
    }
}

/// Keeps each node in the first chain that claims it: two chains turning one node would fight
/// (the VRM 1.0 specification prohibits it).
fn drop_shared_joints(springs: &mut SpringBones, warnings: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    for chain in &mut springs.chains {
        let before = chain.joints.len();
        chain.joints.retain(|j| seen.insert(j.node));
        if chain.joints.len() < before {
            warnings.push(format!(
                "spring {}: {} of its joints belong to an earlier spring and are left out of this one",
                chain.name,
                before - chain.joints.len()
            ));
        }
    }
    springs.chains.retain(|c| !c.joints.is_empty());
}
