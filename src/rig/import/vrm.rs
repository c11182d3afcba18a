//! VRM's animation data beyond its bone map: a VRM Animation file's (`.vrma`,
//! `VRMC_vrm_animation`) expression and gaze nodes, and an avatar's expressions as the morph
//! targets they blend (VRM 0.x `blendShapeMaster`, VRM 1.0 `VRMC_vrm.expressions`).
//!
//! A `.vrma` is a clip source: every index it names is checked here, and a file that names a
//! node it does not have, or one node for two purposes, is refused with a [`VrmaError`]. An
//! avatar's expressions only add to what it shows, so a bind that points nowhere is left out
//! with a warning instead.

use serde_json::Value;

/// The root extension a VRM Animation file carries.
pub const VRMA_EXTENSION: &str = "VRMC_vrm_animation";

/// Why a `VRMC_vrm_animation` extension could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VrmaError {
    /// A member whose JSON type is not the one the extension's schema gives.
    #[error("VRMC_vrm_animation: {at} is not {expected}")]
    Shape { at: String, expected: &'static str },
    #[error("VRMC_vrm_animation: specVersion is '{0}', this reader knows 1.0")]
    Version(String),
    #[error("VRMC_vrm_animation: {at} names node {node}, but the file has {count} nodes")]
    NodeOutOfRange { at: String, node: u64, count: usize },
    /// One node given two roles: its channels cannot be both a bone's and a weight.
    #[error("VRMC_vrm_animation: node {node} is both {first} and {second}")]
    NodeTwice { node: usize, first: String, second: String },
}

/// What a VRM Animation file says its nodes are, apart from humanoid bones (those go to
/// [`ImportFacts::humanoid`](crate::rig::ImportFacts::humanoid)). Nodes are rig nodes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VrmaFacts {
    /// (expression name, node): the X of the node's animated translation is the expression's
    /// weight. Preset names are VRM 1.0's (`happy`, `aa`, `blinkLeft`); custom ones as written.
    pub expressions: Vec<(String, usize)>,
    /// The node whose animated rotation is the gaze, as a turn from looking along +Z.
    pub look_at: Option<usize>,
}

impl VrmaFacts {
    /// Whether `node` carries a weight or the gaze rather than a joint's motion.
    pub fn is_track_node(&self, node: usize) -> bool {
        self.look_at == Some(node) || self.expressions.iter().any(|&(_, n)| n == node)
    }
}

fn object<'a>(value: &'a Value, at: &str) -> Result<&'a serde_json::Map<String, Value>, VrmaError> {
    value.as_object().ok_or_else(|| VrmaError::Shape {
        at: at.to_owned(),
        expected: "an object",
    })
}

/// The parts of a `VRMC_vrm_animation` extension, with glTF node indices.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct VrmaIndices {
    pub humanoid: Vec<(String, usize)>,
    pub expressions: Vec<(String, usize)>,
    pub look_at: Option<usize>,
}

/// Reads the root's `VRMC_vrm_animation`, if it has one, checking every node index against
/// `node_count` and that no node has two roles.
pub(super) fn read_vrma(root: &gltf::json::Root) -> Result<Option<VrmaIndices>, VrmaError> {
    let Some(extension) = root.extensions.as_ref().and_then(|e| e.others.get(VRMA_EXTENSION)) else {
        return Ok(None);
    };
    let count = root.nodes.len();
    let extension = object(extension, "the extension")?;
    match extension.get("specVersion") {
        Some(Value::String(version)) if version == "1.0" => {}
        Some(Value::String(version)) => return Err(VrmaError::Version(version.clone())),
        _ => {
            return Err(VrmaError::Shape {
                at: "specVersion".to_owned(),
                expected: "a string",
            });
        }
    }
    let node_of = |entry: &Value, at: &str| -> Result<usize, VrmaError> {
        let node = object(entry, at)?
            .get("node")
            .and_then(Value::as_u64)
            .ok_or_else(|| VrmaError::Shape {
                at: format!("{at}.node"),
                expected: "a whole number",
            })?;
        usize::try_from(node)
            .ok()
            .filter(|&n| n < count)
            .ok_or_else(|| VrmaError::NodeOutOfRange {
                at: at.to_owned(),
                node,
                count,
            })
    };
    let named_nodes = |parent: Option<&Value>, at: &str| -> Result<Vec<(String, usize)>, VrmaError> {
        let Some(parent) = parent else { return Ok(Vec::new()) };
        object(parent, at)?
            .iter()
            .map(|(name, entry)| Ok((name.clone(), node_of(entry, &format!("{at}.{name}"))?)))
            .collect()
    };
    let humanoid = match extension.get("humanoid") {
        Some(humanoid) => named_nodes(
            Some(
                object(humanoid, "humanoid")?
                    .get("humanBones")
                    .ok_or_else(|| VrmaError::Shape {
                        at: "humanoid.humanBones".to_owned(),
                        expected: "an object",
                    })?,
            ),
            "humanoid.humanBones",
        )?,
        None => Vec::new(),
    };
    let mut expressions = Vec::new();
    if let Some(value) = extension.get("expressions") {
        let groups = object(value, "expressions")?;
        for kind in ["preset", "custom"] {
            expressions.extend(named_nodes(groups.get(kind), &format!("expressions.{kind}"))?);
        }
    }
    let look_at = match extension.get("lookAt") {
        Some(look_at) => match object(look_at, "lookAt")?.get("node") {
            Some(_) => Some(node_of(look_at, "lookAt")?),
            None => None,
        },
        None => None,
    };
    let mut roles: Vec<(usize, String)> = Vec::new();
    let named = (humanoid.iter().map(|(bone, node)| (*node, format!("the bone {bone}"))))
        .chain(
            expressions
                .iter()
                .map(|(name, node)| (*node, format!("the expression {name}"))),
        )
        .chain(look_at.map(|node| (node, "the lookAt node".to_owned())));
    for (node, role) in named {
        if let Some((_, first)) = roles.iter().find(|(n, _)| *n == node) {
            return Err(VrmaError::NodeTwice {
                node,
                first: first.clone(),
                second: role,
            });
        }
        roles.push((node, role));
    }
    Ok(Some(VrmaIndices {
        humanoid,
        expressions,
        look_at,
    }))
}

/// One morph target an expression moves: on the mesh that `node` places, target `target`, by
/// `weight` at the expression's full weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MorphBind {
    pub node: usize,
    pub target: usize,
    pub weight: f32,
}

/// An avatar's expression: its VRM 1.0 name (VRM 0.x presets renamed: `joy` is `happy`, `a`
/// is `aa`) and the morph targets it blends.
#[derive(Debug, Clone, PartialEq)]
pub struct VrmExpression {
    pub name: String,
    pub binds: Vec<MorphBind>,
}

/// VRM 0.x preset names and their VRM 1.0 names.
const PRESETS_0X: &[(&str, &str)] = &[
    ("joy", "happy"),
    ("angry", "angry"),
    ("sorrow", "sad"),
    ("fun", "relaxed"),
    ("surprised", "surprised"),
    ("a", "aa"),
    ("i", "ih"),
    ("u", "ou"),
    ("e", "ee"),
    ("o", "oh"),
    ("blink", "blink"),
    ("blink_l", "blinkLeft"),
    ("blink_r", "blinkRight"),
    ("lookup", "lookUp"),
    ("lookdown", "lookDown"),
    ("lookleft", "lookLeft"),
    ("lookright", "lookRight"),
    ("neutral", "neutral"),
];

/// The glTF facts an avatar's binds are checked against: per glTF node its mesh, per glTF mesh
/// its morph target count, per glTF node its rig node.
pub(super) struct BindTargets<'a> {
    pub node_mesh: &'a [Option<usize>],
    pub mesh_targets: &'a [usize],
    pub slot: &'a [usize],
}

impl BindTargets<'_> {
    /// The rig nodes placing glTF mesh `mesh` (VRM 0.x binds name meshes, not nodes).
    fn nodes_of_mesh(&self, mesh: usize) -> impl Iterator<Item = usize> + '_ {
        (self.node_mesh.iter().enumerate())
            .filter(move |(_, m)| **m == Some(mesh))
            .filter_map(|(node, _)| self.slot.get(node).copied())
    }

    fn target_exists(&self, mesh: usize, target: usize) -> bool {
        self.mesh_targets.get(mesh).is_some_and(|&count| target < count)
    }
}

/// The avatar's expressions (VRM 1.0 `VRMC_vrm.expressions`, else VRM 0.x
/// `VRM.blendShapeMaster.blendShapeGroups`), their binds checked against `targets`; each bind
/// that names no mesh, node or target adds a warning and is left out.
pub(super) fn vrm_expressions(
    root: &gltf::json::Root,
    targets: &BindTargets,
    warnings: &mut Vec<String>,
) -> Vec<VrmExpression> {
    let Some(extensions) = &root.extensions else {
        return Vec::new();
    };
    let index = |v: Option<&Value>| v.and_then(Value::as_u64).and_then(|i| usize::try_from(i).ok());
    let mut expressions = Vec::new();
    if let Some(groups) = extensions.others.get("VRMC_vrm").and_then(|v| v.get("expressions")) {
        for kind in ["preset", "custom"] {
            let Some(named) = groups.get(kind).and_then(Value::as_object) else {
                continue;
            };
            for (name, expression) in named {
                let mut binds = Vec::new();
                let listed = expression.get("morphTargetBinds").and_then(Value::as_array);
                for (k, bind) in listed.into_iter().flatten().enumerate() {
                    let (node, target) = (index(bind.get("node")), index(bind.get("index")));
                    let weight = bind.get("weight").and_then(Value::as_f64).unwrap_or(1.0) as f32;
                    let mesh = node.and_then(|n| targets.node_mesh.get(n).copied().flatten());
                    match (node, mesh, target) {
                        (Some(node), Some(mesh), Some(target))
                            if targets.target_exists(mesh, target) && weight.is_finite() =>
                        {
                            binds.push(MorphBind {
                                node: targets.slot[node],
                                target,
                                weight,
                            });
                        }
                        _ => warnings.push(format!(
                            "VRM expression {name}: morph bind {k} names no morph target of a mesh node; it is left out"
                        )),
                    }
                }
                expressions.push(VrmExpression {
                    name: name.clone(),
                    binds,
                });
            }
        }
        return expressions;
    }
    let Some(groups) = (extensions.others.get("VRM"))
        .and_then(|v| v.pointer("/blendShapeMaster/blendShapeGroups"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    for group in groups {
        let preset = group.get("presetName").and_then(Value::as_str).unwrap_or("unknown");
        let name = PRESETS_0X
            .iter()
            .find(|(old, _)| old.eq_ignore_ascii_case(preset))
            .map(|(_, new)| (*new).to_owned())
            .or_else(|| group.get("name").and_then(Value::as_str).map(str::to_owned));
        let Some(name) = name else { continue };
        let mut binds = Vec::new();
        let listed = group.get("binds").and_then(Value::as_array);
        for (k, bind) in listed.into_iter().flatten().enumerate() {
            let (mesh, target) = (index(bind.get("mesh")), index(bind.get("index")));
            // VRM 0.x weighs binds in percent.
            let weight = bind.get("weight").and_then(Value::as_f64).unwrap_or(100.0) as f32 / 100.0;
            match (mesh, target) {
                (Some(mesh), Some(target)) if targets.target_exists(mesh, target) && weight.is_finite() => {
                    binds.extend(
                        targets
                            .nodes_of_mesh(mesh)
                            .map(|node| MorphBind { node, target, weight }),
                    );
                }
                _ => warnings.push(format!(
                    "VRM blend shape group {name}: bind {k} names no morph target of a mesh; it is left out"
                )),
            }
        }
        expressions.push(VrmExpression { name, binds });
    }
    expressions
}
