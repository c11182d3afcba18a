//! What an engine does to a rig besides moving its vertices: caps passed, warnings, nodes it
//! turns into bones, and how it lights and winds what it draws. Each is a line of `rigscope
//! check`'s report; none changes the positions the check measures.

use super::{Cap, Engine, NodeTransform, PastCap};
use crate::anim::PoseBuffers;
use crate::rig::Rig;
use crate::skin::{blend_matrix, normal_matrix};
use glam::{Mat4, Vec3};

/// One pose in this many of the check's is shaded (10 Hz of its 30).
pub const SHADING_POSE_STRIDE: usize = 3;

/// Angles between two normals below this are float noise.
const SKEW_NOISE_DEGREES: f32 = 1.0;

/// How the rig's own drawing turns its normals and faces over the checked poses; engines that
/// light or wind otherwise report what differs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoseShading {
    /// Vertices whose skinning matrix mirrors them (or stops mirroring them) at some pose
    /// against their mesh node's own winding, on single-sided materials.
    pub mirrored_vertices: usize,
    /// Vertices whose normal, turned by the skinning matrix itself rather than by its inverse
    /// transpose, is more than 1° (`SKEW_NOISE_DEGREES`) off at some pose.
    pub skewed_normals: usize,
    /// The largest such angle, in degrees.
    pub worst_skew_degrees: f32,
}

impl PoseShading {
    /// Whether any of `engines` reads the facts this measures.
    pub fn needed_by(engines: &[Engine]) -> bool {
        engines
            .iter()
            .any(|e| e.winds_by_mesh_node_only() || e.turns_normals_by_skin_matrix())
    }

    /// Measured over every [`SHADING_POSE_STRIDE`]th of `poses` (as [`super::check`] lists
    /// them, the rest pose first), in parallel: lighting and winding are reported, not measured
    /// against a tolerance, and a third of 30 Hz finds what a clip does.
    pub fn of(rig: &Rig, poses: &[(Option<usize>, f32)]) -> PoseShading {
        use rayon::prelude::*;
        let vertices: Vec<(usize, usize)> = skinned_primitives(rig).collect();
        let mut starts = Vec::with_capacity(vertices.len());
        let mut total = 0;
        for &(i, p) in &vertices {
            starts.push(total);
            total += rig.meshes[rig.instances[i].mesh].primitives[p].vertex_count();
        }
        let poses: Vec<_> = poses.iter().step_by(SHADING_POSE_STRIDE).collect();
        let flagged = poses
            .par_iter()
            .map_init(
                || PoseBuffers::new(rig),
                |pose, &&(clip, time)| {
                    pose.evaluate(rig, clip, time);
                    let mut mirrored = Vec::new();
                    let mut skewed = Vec::new();
                    for (&(i, p), &start) in vertices.iter().zip(&starts) {
                        let instance = &rig.instances[i];
                        let primitive = &rig.meshes[instance.mesh].primitives[p];
                        let Some(influences) = &primitive.influences else {
                            continue;
                        };
                        let node_mirrors = pose.worlds[instance.node].determinant() < 0.0;
                        let single_sided = (primitive.material)
                            .and_then(|m| rig.materials.get(m))
                            .is_some_and(|m| !m.double_sided);
                        for v in 0..primitive.vertex_count() {
                            let skin = blend_matrix(&pose.palettes[i], influences, v);
                            if single_sided && (skin.determinant() < 0.0) != node_mirrors {
                                mirrored.push(start + v);
                            }
                            if let Some(&normal) = primitive.normals.get(v) {
                                let angle = skew_degrees(&skin, normal);
                                if angle > SKEW_NOISE_DEGREES {
                                    skewed.push((start + v, angle));
                                }
                            }
                        }
                    }
                    (mirrored, skewed)
                },
            )
            .collect::<Vec<_>>();
        let mut mirrored = vec![false; total];
        let mut skewed = vec![false; total];
        let mut worst_skew_degrees = 0.0f32;
        for (m, s) in &flagged {
            m.iter().for_each(|&v| mirrored[v] = true);
            for &(v, angle) in s {
                skewed[v] = true;
                worst_skew_degrees = worst_skew_degrees.max(angle);
            }
        }
        PoseShading {
            mirrored_vertices: mirrored.iter().filter(|&&m| m).count(),
            skewed_normals: skewed.iter().filter(|&&s| s).count(),
            worst_skew_degrees,
        }
    }
}

/// Every skinned instance's primitives, as (instance, primitive).
fn skinned_primitives(rig: &Rig) -> impl Iterator<Item = (usize, usize)> + '_ {
    (rig.instances.iter().enumerate())
        .filter(|(_, instance)| instance.skin.is_some())
        .flat_map(move |(i, instance)| (0..rig.meshes[instance.mesh].primitives.len()).map(move |p| (i, p)))
}

/// The angle between `normal` turned by `skin`'s 3×3 part, as three.js turns it, and turned by
/// its inverse transpose, as the glTF drawing does.
pub fn skew_degrees(skin: &Mat4, normal: Vec3) -> f32 {
    let by_matrix = skin.transform_vector3(normal).normalize_or_zero();
    let by_inverse_transpose = (normal_matrix(skin) * normal).normalize_or_zero();
    if by_matrix == Vec3::ZERO || by_inverse_transpose == Vec3::ZERO {
        return 0.0;
    }
    by_matrix.dot(by_inverse_transpose).clamp(-1.0, 1.0).acos().to_degrees()
}

impl Engine {
    /// Whether the engine picks the front face from the mesh node's transform alone, never
    /// from the joints: a limb its joints mirror shows its inside on a single-sided material.
    ///
    /// three.js: `frontFaceCW = object.matrixWorld.determinant() < 0` (WebGLRenderer
    /// `renderBufferDirect`). Sample Renderer: renderer.js `drawPrimitive` sets `frontFace`
    /// from the mesh node's determinant. Bevy: the winding is chosen once from the mesh node's
    /// world scale at load (bevy_gltf loader/mod.rs:1549-1555).
    pub fn winds_by_mesh_node_only(self) -> bool {
        matches!(
            self,
            Engine::ThreeJs | Engine::SampleRenderer | Engine::Bevy | Engine::BevyWebGl2
        )
    }

    /// Whether skinned normals are turned by the blended skin matrix itself, not its inverse
    /// transpose: wrong wherever the matrix is not a rotation times a uniform scale (a joint
    /// scaled along one axis, or two joints blended while bent).
    ///
    /// three.js: ShaderChunk/skinnormal_vertex.glsl.js multiplies the normal by `skinMatrix`.
    /// Bevy (skinning.wesl:64-91), Filament (a cofactor matrix per bone) and the Sample
    /// Renderer (a normal matrix per joint) use the inverse transpose.
    pub fn turns_normals_by_skin_matrix(self) -> bool {
        self == Engine::ThreeJs
    }

    /// Whether the engine turns non-joint nodes that sit between joints into bones of its own.
    ///
    /// Godot: SkinTool rebuilds skeletons and makes such nodes bones (godot#92447). Babylon.js:
    /// `_loadBones` makes non-joint ancestors bones (glTFLoader.pure.ts).
    pub fn makes_bones_of_nodes_between_joints(self) -> bool {
        matches!(self, Engine::Godot | Engine::BabylonJs)
    }
}

/// What `engine` does to `rig` besides moving vertices; `shading` is needed where the engine
/// lights or winds otherwise (see [`PoseShading::needed_by`]).
pub fn findings(engine: Engine, rig: &Rig, shading: Option<&PoseShading>) -> Vec<String> {
    let mut found = Vec::new();
    cap_findings(engine, rig, &mut found);
    if engine.node_transform() == NodeTransform::LightsWithIt {
        let rest = PoseBuffers::new(rig);
        let moved = (rig.instances.iter())
            .filter(|i| i.skin.is_some())
            .filter(|i| !rest.worlds[i.node].abs_diff_eq(Mat4::IDENTITY, 1e-6))
            .count();
        if moved > 0 {
            found.push(format!(
                "{moved} skinned mesh node(s) with a transform of their own: positions ignore it, \
                 but normals and the winding use it"
            ));
        }
    }
    if let Some(shading) = shading {
        if engine.winds_by_mesh_node_only() && shading.mirrored_vertices > 0 {
            found.push(format!(
                "{} vertices are mirrored by their joints at some pose; the engine winds faces by \
                 the mesh node only, so their single-sided faces show the inside",
                shading.mirrored_vertices
            ));
        }
        if engine.turns_normals_by_skin_matrix() && shading.skewed_normals > 0 {
            found.push(format!(
                "{} vertices lit with normals up to {:.1}° off: normals are turned by the skin \
                 matrix, not its inverse transpose",
                shading.skewed_normals, shading.worst_skew_degrees
            ));
        }
    }
    skeleton_findings(engine, rig, &mut found);
    morph_findings(engine, rig, &mut found);
    found
}

fn cap_findings(engine: Engine, rig: &Rig, found: &mut Vec<String>) {
    if let Some(Cap { limit, past }) = engine.joint_cap() {
        for skin in rig.skins.iter().filter(|s| s.joints.len() > limit) {
            let what = match past {
                PastCap::Refuses => "refused",
                PastCap::Warns => "loads with a warning",
                PastCap::Truncates => "joints past it left out",
                PastCap::Splits => "split into sections",
                PastCap::ReadsOutOfRange => "joints past it read out of range",
            };
            found.push(format!(
                "skin '{}': {} joints, past the cap of {limit} ({what})",
                skin.name,
                skin.joints.len()
            ));
        }
    }
    for (mesh, primitives) in rig.morphs.targets.iter().enumerate() {
        for targets in primitives {
            if let Some(Cap { limit, past }) = engine.morph_cap(super::morph_attributes(targets))
                && targets.len() > limit
            {
                found.push(format!(
                    "mesh '{}': {} morph targets, past the cap of {limit} ({})",
                    mesh_name(rig, mesh),
                    targets.len(),
                    if past == PastCap::Truncates {
                        "the rest left out"
                    } else {
                        "refused"
                    }
                ));
            }
        }
    }
}

fn mesh_name(rig: &Rig, mesh: usize) -> &str {
    rig.meshes.get(mesh).map_or("?", |m| m.name.as_str())
}

/// Whether node `ancestor` is `node` or above it.
fn is_at_or_above(rig: &Rig, ancestor: usize, mut node: usize) -> bool {
    loop {
        if node == ancestor {
            return true;
        }
        match rig.nodes.get(node).and_then(|n| n.parent) {
            Some(parent) => node = parent,
            None => return false,
        }
    }
}

/// Nodes that are not joints of `skin` but sit between two of its joints.
fn nodes_between_joints(rig: &Rig, joints: &[usize]) -> Vec<usize> {
    let is_joint = |n: usize| joints.contains(&n);
    let mut between = Vec::new();
    for &joint in joints {
        let mut above = rig.nodes.get(joint).and_then(|n| n.parent);
        let mut passed = Vec::new();
        while let Some(node) = above {
            if is_joint(node) {
                between.append(&mut passed);
                break;
            }
            passed.push(node);
            above = rig.nodes.get(node).and_then(|n| n.parent);
        }
    }
    between.sort_unstable();
    between.dedup();
    between
}

fn skeleton_findings(engine: Engine, rig: &Rig, found: &mut Vec<String>) {
    for (s, skin) in rig.skins.iter().enumerate() {
        // R11: a `skeleton` that is not above every joint.
        if let Some(Some(root)) = rig.facts.skin_skeletons.get(s)
            && !skin.joints.iter().all(|&j| is_at_or_above(rig, *root, j))
        {
            let root_name = rig.nodes.get(*root).map_or("?", |n| n.name.as_str());
            match engine {
                // glTFLoader.pure.ts `_loadBones`: replaced by the joints' nearest common
                // ancestor, with a warning.
                Engine::BabylonJs => found.push(format!(
                    "skin '{}': skeleton '{root_name}' is not above every joint; replaced by their \
                     nearest common ancestor, with a warning",
                    skin.name
                )),
                // GltfImport.cs:3133-3136: the skeleton becomes SkinnedMeshRenderer.rootBone,
                // which its bounds follow (inf: bounds that miss joints cull the mesh early).
                Engine::UnityEditor | Engine::Unity4 | Engine::Unity2 | Engine::Unity1 => found.push(format!(
                    "skin '{}': skeleton '{root_name}' is not above every joint but is the \
                     renderer's root bone, whose bounds may not follow them",
                    skin.name
                )),
                _ => {}
            }
        }
        // R20: non-joint nodes between joints.
        if engine.makes_bones_of_nodes_between_joints() {
            let between = nodes_between_joints(rig, &skin.joints);
            if let Some(&first) = between.first() {
                found.push(format!(
                    "skin '{}': {} node(s) between joints that are not joints (first '{}') become \
                     bones: the skeleton's bones and their indices differ from the file's",
                    skin.name,
                    between.len(),
                    rig.nodes.get(first).map_or("?", |n| n.name.as_str())
                ));
            }
        }
    }
    // R19: a mesh with joints and weights drawn by a node without a skin.
    if matches!(engine, Engine::Bevy | Engine::BevyWebGl2) {
        let unskinned = (rig.instances.iter())
            .filter(|i| i.skin.is_none())
            .filter(|i| rig.meshes[i.mesh].primitives.iter().any(|p| p.influences.is_some()))
            .count();
        if unskinned > 0 {
            // loader/mod.rs:772-779 (NODE_SKINNED_MESH_WITHOUT_SKIN).
            found.push(format!(
                "{unskinned} mesh node(s) without a skin use a mesh with joints and weights: the \
                 attributes are dropped, with a warning"
            ));
        }
    }
}

fn morph_findings(engine: Engine, rig: &Rig, found: &mut Vec<String>) {
    // R18: three.js morphs positions, normals and colours, never tangents
    // (WebGLMorphtargets.js).
    if engine == Engine::ThreeJs {
        let unmorphed = (rig.morphs.targets.iter().flatten().flatten())
            .filter(|t| !t.tangent_offsets.is_empty())
            .count();
        if unmorphed > 0 {
            found.push(format!(
                "{unmorphed} morph target(s) move tangents, which are not morphed: normal maps \
                 shade the unmorphed surface"
            ));
        }
    }
}
