//! Engine profiles: how a skinned glTF is drawn where it ships. Each profile turns the loaded
//! rig into what one engine (at one setting) draws, by the engine's own rules (see [`rules`]),
//! so that every path of the viewer (GPU and CPU skinning, the debug views) draws that, and
//! `rigscope check` measures how far it is from the file's own drawing.
//!
//! Covered: which influence sets are read, top-N selection and sorting, renormalization and
//! what a vertex of zero weights becomes, repeated joints, weight quantization, joint caps
//! (refused, or joints read out of range), morph target caps (refused, or the targets past them
//! left out) and the Sample Renderer's fp16 morph storage, node matrices decomposed the engine's
//! way (the Sample Renderer loses a mirror given as a `matrix`; Filament turns a mirrored joint
//! that a clip rotates), and the skinned mesh node's own transform (every engine listed ignores
//! it for positions, as glTF says). What changes lighting, winding or the skeleton's make-up but
//! not the positions is reported by [`findings`], not drawn.

pub mod check;
pub mod distance;
pub mod findings;
pub mod rules;

use crate::rig::{Influences, Rig};
use rules::Row;

/// One engine at one setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Unity with glTFast, a model imported in the editor: four weights sorted and renormalized.
    UnityEditor,
    /// Unity with glTFast, loaded at run time with Quality ▸ Skin Weights at 4.
    Unity4,
    /// The same at 2 weights, which two of Unity's own sample projects ship on every level.
    Unity2,
    /// The same at 1 weight.
    Unity1,
    /// Unreal Engine 5's glTF import (Interchange).
    Unreal,
    Godot,
    ThreeJs,
    BabylonJs,
    /// Bevy on desktop (storage buffers).
    Bevy,
    /// Bevy on WebGL2 (a uniform array of 256 joint matrices).
    BevyWebGl2,
    /// Filament's gltfio, with `normalizeSkinningWeights` on as its viewer sets it.
    Filament,
    /// The Khronos glTF Sample Renderer.
    SampleRenderer,
    /// Blender's glTF importer, deformed by its armature modifier: where artists check a rig
    /// before it ships.
    Blender,
}

/// What an engine does past one of its caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PastCap {
    /// The file (or the mesh) does not load.
    Refuses,
    /// Loads with a warning and draws every one.
    Warns,
    /// Loads; the ones past the cap are left out.
    Truncates,
    /// Loads; the mesh is split into sections under the cap.
    Splits,
    /// Loads; the ones past the cap are read out of range and draw wrong.
    ReadsOutOfRange,
}

/// A cap on a count, and what happens past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cap {
    pub limit: usize,
    pub past: PastCap,
}

/// What an engine makes of the skinned mesh node's own transform (glTF says to ignore it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeTransform {
    /// Ignored (or cancelled) for positions, normals and winding alike.
    Ignored,
    /// Ignored for positions; normals, tangents and the winding use it.
    LightsWithIt,
}

impl Engine {
    /// Every profile, in the order tables list them.
    pub const ALL: [Engine; 13] = [
        Engine::UnityEditor,
        Engine::Unity4,
        Engine::Unity2,
        Engine::Unity1,
        Engine::Unreal,
        Engine::Godot,
        Engine::ThreeJs,
        Engine::BabylonJs,
        Engine::Bevy,
        Engine::BevyWebGl2,
        Engine::Filament,
        Engine::SampleRenderer,
        Engine::Blender,
    ];

    /// The name `--engines` and `--engine` take.
    pub fn name(self) -> &'static str {
        match self {
            Engine::UnityEditor => "unity-editor",
            Engine::Unity4 => "unity",
            Engine::Unity2 => "unity-2",
            Engine::Unity1 => "unity-1",
            Engine::Unreal => "unreal",
            Engine::Godot => "godot",
            Engine::ThreeJs => "three",
            Engine::BabylonJs => "babylon",
            Engine::Bevy => "bevy",
            Engine::BevyWebGl2 => "bevy-webgl2",
            Engine::Filament => "filament",
            Engine::SampleRenderer => "sample-renderer",
            Engine::Blender => "blender",
        }
    }

    /// How menus and tables name it.
    pub fn label(self) -> &'static str {
        match self {
            Engine::UnityEditor => "Unity (glTFast, editor import)",
            Engine::Unity4 => "Unity (glTFast, 4 skin weights)",
            Engine::Unity2 => "Unity (glTFast, 2 skin weights)",
            Engine::Unity1 => "Unity (glTFast, 1 skin weight)",
            Engine::Unreal => "Unreal Engine 5",
            Engine::Godot => "Godot 4",
            Engine::ThreeJs => "three.js",
            Engine::BabylonJs => "Babylon.js",
            Engine::Bevy => "Bevy (desktop)",
            Engine::BevyWebGl2 => "Bevy (WebGL2)",
            Engine::Filament => "Filament",
            Engine::SampleRenderer => "Khronos Sample Renderer",
            Engine::Blender => "Blender (glTF import, armature)",
        }
    }

    /// The profile `name` names (see [`Engine::name`]).
    pub fn by_name(name: &str) -> Option<Engine> {
        Engine::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Influences a vertex may have for the engine to draw it as the file says.
    pub fn influence_limit(self) -> usize {
        match self {
            Engine::Unity1 => 1,
            Engine::Unity2 => 2,
            Engine::Godot | Engine::BabylonJs | Engine::SampleRenderer | Engine::Blender => 8,
            _ => 4,
        }
    }

    /// The weight repairs that make a file every one of `engines` draws as the file says:
    /// vertices without weight given the nearest bone, the largest influences the strictest
    /// engine reads kept (sorted, largest first), and every vertex's weights summing to 1.
    pub fn repairs_for(engines: &[Engine]) -> crate::repair::RepairPlan {
        crate::repair::RepairPlan {
            normalize: true,
            limit: engines.iter().map(|e| e.influence_limit()).min(),
            fill: Some(crate::repair::FillMode::NearestBone),
            ..crate::repair::RepairPlan::default()
        }
    }

    /// Whether the engine stores weights in fewer bits than a float: a file meant for it
    /// should hold weights it can store exactly.
    ///
    /// Unreal: "Use High Precision Skin Weights" (16-bit) defaults to false: 8 bits (doc,
    /// SkeletalMeshBuildSettings).
    pub fn stores_weights_in_bytes(self) -> bool {
        self == Engine::Unreal
    }

    /// Rewrites `rig`'s influences to the ones this engine would store, so that the engine
    /// reads back exactly what the file holds. Returns how many vertices changed.
    pub fn store_influences(self, rig: &mut Rig) -> usize {
        let mut changed = 0;
        for primitive in rig.meshes.iter_mut().flat_map(|m| &mut m.primitives) {
            if let Some(influences) = &mut primitive.influences {
                let stored = self.rewrite(influences);
                let vertices = influences.joints.len() / influences.sets.max(1);
                changed += (0..vertices)
                    .filter(|&v| !influences.of_vertex(v).eq(stored.of_vertex(v)))
                    .count();
                *influences = stored;
            }
        }
        changed
    }

    /// Joints one skin may have.
    ///
    /// Filament: `RenderableManager::Builder::build` requires `mSkinningBoneCount <=
    /// CONFIG_MAX_BONE_COUNT` (256). Bevy: loader/mod.rs:973-982 only warns above `MAX_JOINTS`
    /// 256 and the storage path draws every joint; on WebGL2 the uniform array holds 256
    /// (render/mesh_types.wesl:30-31). Unreal: 256 bones per render section unless 16-bit
    /// indices, past which the mesh is split (doc). three.js, Babylon.js and the Sample
    /// Renderer keep joints in a texture: no cap below the texture size.
    pub fn joint_cap(self) -> Option<Cap> {
        let cap = |past| Some(Cap { limit: 256, past });
        match self {
            Engine::Filament => cap(PastCap::Refuses),
            Engine::Bevy => cap(PastCap::Warns),
            Engine::BevyWebGl2 => cap(PastCap::ReadsOutOfRange),
            Engine::Unreal => cap(PastCap::Splits),
            _ => None,
        }
    }

    /// Morph targets one mesh may have.
    ///
    /// Filament: more than `CONFIG_MAX_MORPH_TARGET_COUNT` (256) warns and truncates. Bevy:
    /// `MAX_MORPH_WEIGHTS` 256, past it `MorphBuildError::TooManyTargets` (bevy_mesh
    /// morph.rs:12-40). Sample Renderer: targets × attributes past `MAX_ARRAY_TEXTURE_LAYERS`
    /// are left out ("Only N of M are used"); 2048 layers assumed, WebGL2's common limit.
    pub fn morph_cap(self, attributes_per_target: usize) -> Option<Cap> {
        match self {
            Engine::Filament => Some(Cap {
                limit: 256,
                past: PastCap::Truncates,
            }),
            Engine::Bevy | Engine::BevyWebGl2 => Some(Cap {
                limit: 256,
                past: PastCap::Refuses,
            }),
            Engine::SampleRenderer => Some(Cap {
                limit: 2048 / attributes_per_target.max(1),
                past: PastCap::Truncates,
            }),
            _ => None,
        }
    }

    /// The skinned mesh node's transform.
    ///
    /// Sample Renderer: primitive.vert skips `u_ModelMatrix` for skinned positions but uses
    /// `u_NormalMatrix` for normals, and renderer.js sets `frontFace` from the mesh node's
    /// determinant. Godot re-parents the mesh under the skeleton with an identity transform;
    /// Babylon.js loads no transform for a skinned node; three.js cancels it ('attached'
    /// bind mode); Bevy replaces it (`world_from_local = skin_model(...)`, mesh.wesl:48-54);
    /// Filament cancels it (Animator.cpp `updateBoneMatrices`). Unity and Unreal: not found.
    pub fn node_transform(self) -> NodeTransform {
        match self {
            Engine::SampleRenderer => NodeTransform::LightsWithIt,
            _ => NodeTransform::Ignored,
        }
    }

    /// One vertex's influences as the engine uses them, rule after rule in the engine's order.
    pub fn influences(self, row: &mut Row) {
        use rules::*;
        match self {
            // VertexBufferBones.cs:103-131: editor import forces 4 and sorts and renormalizes.
            Engine::UnityEditor => {
                first_set_only(row);
                top_weights_sorted(row, 4);
                renormalize(row);
                zero_row_at_origin(row);
            }
            // At run time with 4 weights nothing is sorted or renormalized (only under
            // `GLTFAST_SAFE`, VertexBufferBones.cs:123-129).
            Engine::Unity4 => {
                first_set_only(row);
                zero_row_at_origin(row);
            }
            Engine::Unity2 | Engine::Unity1 => {
                first_set_only(row);
                top_weights_sorted(row, if self == Engine::Unity2 { 2 } else { 1 });
                renormalize(row);
                zero_row_at_origin(row);
            }
            Engine::Unreal => {
                first_set_only(row);
                merge_repeated_joints_by_max(row);
                top_weights_sorted(row, 4);
                renormalize(row);
                quantize_to_8_bits(row);
            }
            // Both sets as one 8-weight surface, divided by their total where it is above zero.
            Engine::Godot => {
                renormalize(row);
                zero_row_at_origin(row);
            }
            Engine::ThreeJs => {
                first_set_only(row);
                renormalize_manhattan_or_first_joint(row);
            }
            // Both sets, weights never rewritten; its CPU transform divides the position by
            // Σw (run in Node: the positions come out normalized), and a zero row gives NaN.
            Engine::BabylonJs => {
                renormalize(row);
                zero_row_at_origin(row);
            }
            Engine::Bevy => {
                first_set_only(row);
                zero_row_at_origin(row);
            }
            Engine::BevyWebGl2 => {
                first_set_only(row);
                joints_past_cap_add_nothing(row, 256);
                zero_row_at_origin(row);
            }
            Engine::Filament => {
                first_set_only(row);
                renormalize(row);
            }
            // Both sets summed as they are; `if (skin == mat4(0)) return mat4(1)`
            // (animation.glsl:66-67), which is Rigscope's own rule.
            Engine::SampleRenderer => {}
            // Every set, each weight into its joint's vertex group, the armature dividing by
            // the total.
            Engine::Blender => {
                repeated_joint_keeps_last(row);
                blender_armature_weights(row);
            }
        }
    }

    /// `rig` as this engine draws it: every skinned primitive's influences rewritten by
    /// [`Engine::influences`]. Refused where the engine does not load the rig.
    pub fn draw(self, rig: &Rig) -> Result<Rig, EngineRefusal> {
        self.check_loads(rig)?;
        let mut drawn = rig.clone();
        for mesh in &mut drawn.meshes {
            for primitive in &mut mesh.primitives {
                if let Some(influences) = &mut primitive.influences {
                    *influences = self.rewrite(influences);
                }
            }
        }
        self.read_node_transforms(&mut drawn);
        self.read_morph_targets(&mut drawn);
        self.read_clips(&mut drawn);
        Ok(drawn)
    }

    /// The nodes' rest transforms as the engine keeps them.
    fn read_node_transforms(self, rig: &mut Rig) {
        match self {
            Engine::SampleRenderer => {
                let given = &rig.facts.node_given_as_matrix;
                let matrices = &rig.facts.node_matrices;
                for (n, node) in rig.nodes.iter_mut().enumerate() {
                    if given.get(n) == Some(&true)
                        && let Some(matrix) = matrices.get(n)
                    {
                        node.rest = rules::sample_renderer_matrix_trs(*matrix);
                    }
                }
            }
            Engine::Filament => {
                for node in &mut rig.nodes {
                    rules::filament_mirror_as_negated_scale(&mut node.rest);
                }
            }
            _ => {}
        }
    }

    /// The clips as the engine plays them.
    fn read_clips(self, rig: &mut Rig) {
        if self == Engine::Blender {
            for channel in rig.clips.iter_mut().flat_map(|c| &mut c.channels) {
                rules::rotation_keys_blended_by_component(channel);
            }
        }
    }

    /// The morph targets as the engine keeps them: past its cap left out, stored as the
    /// engine stores them.
    fn read_morph_targets(self, rig: &mut Rig) {
        for primitives in &mut rig.morphs.targets {
            for targets in primitives.iter_mut() {
                if let Some(Cap {
                    limit,
                    past: PastCap::Truncates,
                }) = self.morph_cap(morph_attributes(targets))
                {
                    rules::morph_targets_past_cap_left_out(targets, limit);
                }
                if self == Engine::SampleRenderer {
                    targets.iter_mut().for_each(rules::morph_offsets_in_half_floats);
                }
            }
        }
    }

    /// Whether the engine loads `rig`: its joint and morph caps.
    pub fn check_loads(self, rig: &Rig) -> Result<(), EngineRefusal> {
        if let Some(Cap {
            limit,
            past: PastCap::Refuses,
        }) = self.joint_cap()
            && let Some(skin) = rig.skins.iter().find(|s| s.joints.len() > limit)
        {
            return Err(EngineRefusal::TooManyJoints {
                engine: self,
                skin: skin.name.clone(),
                joints: skin.joints.len(),
                limit,
            });
        }
        for (mesh, primitives) in rig.morphs.targets.iter().enumerate() {
            let targets = primitives.iter().map(Vec::len).max().unwrap_or(0);
            if let Some(Cap {
                limit,
                past: PastCap::Refuses,
            }) = self.morph_cap(1)
                && targets > limit
            {
                return Err(EngineRefusal::TooManyMorphTargets {
                    engine: self,
                    mesh: rig.meshes.get(mesh).map_or_else(String::new, |m| m.name.clone()),
                    targets,
                    limit,
                });
            }
        }
        Ok(())
    }

    /// `influences` rewritten row by row; two sets kept only where the engine reads both.
    fn rewrite(self, influences: &Influences) -> Influences {
        let vertices = influences.joints.len() / influences.sets.max(1);
        let mut joints = Vec::with_capacity(vertices * influences.sets);
        let mut weights = Vec::with_capacity(vertices * influences.sets);
        for v in 0..vertices {
            let mut row: Row = [(0, 0.0); 8];
            for (slot, influence) in row.iter_mut().zip(influences.of_vertex(v)) {
                *slot = influence;
            }
            self.influences(&mut row);
            for set in 0..influences.sets {
                let slots = &row[set * 4..set * 4 + 4];
                joints.push([slots[0].0, slots[1].0, slots[2].0, slots[3].0]);
                weights.push([slots[0].1, slots[1].1, slots[2].1, slots[3].1]);
            }
        }
        Influences {
            sets: influences.sets,
            joints,
            weights,
        }
    }
}

/// The attributes one primitive's targets move, as the engines count them against their caps:
/// positions always; normals and tangents where the targets move them.
pub fn morph_attributes(targets: &[crate::rig::MorphTarget]) -> usize {
    targets.first().map_or(1, |t| {
        1 + usize::from(t.normal_offsets.iter().any(|n| *n != glam::Vec3::ZERO))
            + usize::from(!t.tangent_offsets.is_empty())
    })
}

/// Why an engine does not load a rig.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineRefusal {
    #[error("{} does not load skin '{skin}': {joints} joints, past its cap of {limit}", engine.label())]
    TooManyJoints {
        engine: Engine,
        skin: String,
        joints: usize,
        limit: usize,
    },
    #[error("{} does not load mesh '{mesh}': {targets} morph targets, past its cap of {limit}", engine.label())]
    TooManyMorphTargets {
        engine: Engine,
        mesh: String,
        targets: usize,
        limit: usize,
    },
    /// The drawing was made on a thread that stopped unexpectedly.
    #[error("making the engine's drawing stopped unexpectedly: {0}")]
    Stopped(String),
}

/// `--engine`: one profile by name.
pub fn parse_engine(name: &str) -> Result<Engine, String> {
    Engine::by_name(name).ok_or_else(|| {
        let names: Vec<&str> = Engine::ALL.iter().map(|e| e.name()).collect();
        format!("no engine profile '{}': use one of {}", name.trim(), names.join(", "))
    })
}

/// `--engines`: `all`, or names separated by commas.
pub fn parse_engines(value: &str) -> Result<Vec<Engine>, String> {
    if value.trim().eq_ignore_ascii_case("all") {
        return Ok(Engine::ALL.to_vec());
    }
    value.split(',').map(parse_engine).collect()
}
