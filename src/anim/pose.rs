//! The pose pipeline: what the user set ([`PoseInputs`]) in, every derived array
//! ([`PoseBuffers`]) out, through one function that calls the kernels in order.

use crate::anim::dual_quat::{DualQuat, dual_quat_palette};
use crate::anim::foot_lock::FootLock;
use crate::anim::ik_layer::{IkGoal, IkOutcome, apply_ik_goals};
use crate::anim::layers::{BlendMode, Layer, LayerMixer, LayerSample};
use crate::anim::look_at::LookAt;
use crate::anim::node_constraints::apply_constraints;
use crate::anim::properties::{self, PropertyState};
use crate::anim::root_motion::{lock_to_rest, motion_root};
use crate::anim::spring_bones::SpringSim;
use crate::anim::{
    Fade, JointOverride, build_palette, build_palette_mat4, is_affine, local_to_world, morph, sample_clip,
};
use crate::rig::{Rig, Skin, Trs};
use glam::Mat4;
use std::time::{Duration, Instant};

/// Everything a pose depends on besides the rig. Borrowed from wherever the caller keeps it, so
/// building one per frame costs nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct PoseInputs<'a> {
    /// The clip shown (`None`: the rest pose) and the time in it.
    pub clip: Option<usize>,
    pub time: f32,
    /// A crossfade from another clip into `clip`.
    pub fade: Option<Fade>,
    /// Blended over the clip, bottom to top (disabled ones are skipped).
    pub layers: &'a [Layer],
    /// Hold the clip's motion root over its rest position on the ground.
    pub root_lock: bool,
    /// Per node (may be empty): hand-made changes applied after blending.
    pub overrides: &'a [JointOverride],
    /// Per mesh instance and target (may be empty): weights set by hand.
    pub morph_overrides: &'a [Vec<Option<f32>>],
    /// Also build dual quaternion palettes (for dual quaternion skinning).
    pub dual_quaternions: bool,
    /// Locals shown in place of the rest pose when no clip plays (a retarget pose); ignored
    /// unless there is one per node.
    pub rest: Option<&'a [Trs]>,
    /// Two-bone IK goals applied, in order, over everything above (a hand pinned while the
    /// clip plays).
    pub ik: &'a [IkGoal],
    /// Feet held on their contacts while the lock's clip plays, before the IK goals.
    pub foot_lock: Option<&'a FootLock>,
    /// The head turned to a point, after the IK goals.
    pub look_at: Option<&'a LookAt>,
    /// Seconds of spring bone simulation to run over this pose, after everything above
    /// (`None`: the springs are off and hang as the clip puts them).
    pub springs: Option<f32>,
}

impl PoseInputs<'_> {
    /// `clip` at `time` and nothing else.
    pub fn clip_at(clip: Option<usize>, time: f32) -> PoseInputs<'static> {
        PoseInputs {
            clip,
            time,
            ..PoseInputs::default()
        }
    }
}

/// Wall time of a pose evaluation's stages, measured where [`evaluate_pose`] calls them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StageTimes {
    /// Clip sampling, layers, crossfade, root lock, bends and morph weights.
    pub sampling: Duration,
    /// World matrices, palettes and dual quaternions.
    pub palette: Duration,
}

/// Every array a pose evaluation writes, sized once per rig so that a frame allocates nothing.
pub struct PoseBuffers {
    pub locals: Vec<Trs>,
    /// Morph target weights per mesh instance (empty for meshes without targets).
    pub morph_weights: Vec<Vec<f32>>,
    pub worlds: Vec<Mat4>,
    /// One palette per mesh instance (empty for unskinned instances), in world space:
    /// `palette[j] = joint world · inverseBind`. The vertices they make are drawn without the
    /// mesh node's transform, which glTF ignores for skinned meshes; folding
    /// `inverse(mesh node world)` in would put that node's scale (×100 under a Mixamo/Blender
    /// armature) into every matrix, which dual quaternions cannot carry.
    pub palettes: Vec<Vec<Mat4>>,
    /// The palettes as dual quaternions, when the inputs asked for them.
    pub dual_quats: Vec<Vec<DualQuat>>,
    /// Key-interval hints of the base clip's channels.
    hints: Vec<usize>,
    hint_clip: Option<usize>,
    mixer: LayerMixer,
    samples: Vec<LayerSample>,
    /// Per skin: the kernel its palettes are built with.
    palette_kernels: Vec<PaletteKernel>,
    /// What each IK goal of the last evaluation did, in the order of [`PoseInputs::ik`].
    pub ik_outcomes: Vec<IkOutcome>,
    /// The last evaluation's look-at put the head's aim on its target.
    pub look_at_reached: bool,
    /// The spring bones' running state (`None`: the rig has none). It is the one input a pose
    /// carries from one evaluation to the next.
    pub springs: Option<SpringSim>,
    /// The base clip's animated material, visibility and light properties.
    pub properties: PropertyState,
}

/// How a skin's palette is built: with affine math when every inverse bind matrix of the skin
/// is affine (as they should be), else with full 4×4 products. Chosen once per skin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaletteKernel {
    Affine,
    Mat4,
}

impl PaletteKernel {
    pub fn for_skin(skin: &Skin) -> PaletteKernel {
        if skin.inverse_binds.iter().all(is_affine) {
            PaletteKernel::Affine
        } else {
            PaletteKernel::Mat4
        }
    }

    /// Writes `skin`'s palette in world space, `palette[j] = worlds[joints[j]] · inverseBind[j]`
    /// (skinned meshes ignore their node's transform in glTF, so no mesh world is folded in).
    pub fn build(self, skin: &Skin, worlds: &[Mat4], palette: &mut [Mat4]) {
        let (joints, inverse_binds) = (&skin.joints, &skin.inverse_binds);
        match self {
            PaletteKernel::Affine => build_palette(joints, inverse_binds, worlds, palette),
            PaletteKernel::Mat4 => build_palette_mat4(joints, inverse_binds, worlds, palette),
        }
    }
}

/// Most layers (plus one crossfade) blended per frame without allocating.
const LAYER_CAPACITY: usize = 16;

impl PoseBuffers {
    /// Buffers for `rig`, holding its rest pose.
    pub fn new(rig: &Rig) -> PoseBuffers {
        let max_channels = rig.clips.iter().map(|c| c.channels.len()).max().unwrap_or(0);
        let joints = |i: &crate::rig::MeshInstance| i.skin.map_or(0, |s| rig.skins[s].joints.len());
        let mut pose = PoseBuffers {
            locals: rig.nodes.iter().map(|n| n.rest).collect(),
            morph_weights: rig
                .instances
                .iter()
                .map(|i| vec![0.0; rig.morphs.weight_count(i.mesh)])
                .collect(),
            worlds: vec![Mat4::IDENTITY; rig.nodes.len()],
            palettes: rig.instances.iter().map(|i| vec![Mat4::IDENTITY; joints(i)]).collect(),
            dual_quats: rig
                .instances
                .iter()
                .map(|i| vec![DualQuat::IDENTITY; joints(i)])
                .collect(),
            hints: vec![0; max_channels],
            hint_clip: None,
            mixer: LayerMixer::new(rig),
            samples: Vec::with_capacity(LAYER_CAPACITY + 1),
            palette_kernels: rig.skins.iter().map(PaletteKernel::for_skin).collect(),
            ik_outcomes: Vec::new(),
            look_at_reached: false,
            springs: SpringSim::new(rig),
            properties: PropertyState::new(rig),
        };
        evaluate_pose(rig, &PoseInputs::clip_at(None, 0.0), &mut pose);
        pose
    }

    /// Buffers for `rig` holding `clip` at `time` with no other input.
    pub fn at(rig: &Rig, clip: Option<usize>, time: f32) -> PoseBuffers {
        let mut pose = PoseBuffers::new(rig);
        pose.evaluate(rig, clip, time);
        pose
    }

    /// Evaluates `clip` at `time` with no other input (see [`evaluate_pose`]).
    pub fn evaluate(&mut self, rig: &Rig, clip: Option<usize>, time: f32) -> StageTimes {
        evaluate_pose(rig, &PoseInputs::clip_at(clip, time), self)
    }

    /// Matrix placing instance `i`'s vertices in the world: its node's world matrix, or the
    /// identity for a skinned instance, whose palette already puts them there.
    pub fn instance_world(&self, rig: &Rig, i: usize) -> Mat4 {
        let instance = &rig.instances[i];
        match instance.skin {
            Some(_) => Mat4::IDENTITY,
            None => self.worlds[instance.node],
        }
    }
}

/// Evaluates the pose `inputs` describe into `pose`, stage after stage: sample the clip (or the
/// clip faded from) → blend the crossfade and the layers → lock the root → apply bends → morph
/// weights → world matrices → foot lock, IK, look-at → node constraints → spring
/// bones → palettes → dual
/// quaternions. Skinning is the caller's next step.
pub fn evaluate_pose(rig: &Rig, inputs: &PoseInputs, pose: &mut PoseBuffers) -> StageTimes {
    let start = Instant::now();
    let (base_clip, base_time) = match (inputs.fade, inputs.clip) {
        (Some(fade), Some(_)) => (Some(fade.from_clip), fade.from_time),
        _ => (inputs.clip, inputs.time),
    };
    if pose.hint_clip != base_clip {
        pose.hints.fill(0);
        pose.hint_clip = base_clip;
    }
    let clip = base_clip.and_then(|c| rig.clips.get(c));
    sample_clip(&rig.nodes, clip, base_time, &mut pose.hints, &mut pose.locals);
    if clip.is_none()
        && let Some(rest) = inputs.rest.filter(|r| r.len() == pose.locals.len())
    {
        pose.locals.copy_from_slice(rest);
    }
    morph::sample_morph_weights(rig, base_clip, base_time, &mut pose.morph_weights);
    properties::sample_properties(rig, base_clip, base_time, &mut pose.properties);

    pose.samples.clear();
    if let (Some(fade), Some(clip)) = (inputs.fade, inputs.clip) {
        pose.samples.push(LayerSample {
            clip,
            time: inputs.time,
            weight: fade.weight(),
            mode: BlendMode::Mix,
            mask: None,
        });
    }
    for layer in inputs.layers.iter().filter(|l| l.enabled).take(LAYER_CAPACITY) {
        let duration = rig.clips.get(layer.clip).map_or(0.0, |c| c.duration);
        pose.samples.push(LayerSample {
            clip: layer.clip,
            time: layer.local_time(inputs.time, duration),
            weight: layer.weight,
            mode: layer.mode,
            mask: layer.mask,
        });
    }
    pose.mixer.apply(rig, &pose.samples, &mut pose.locals);
    for sample in &pose.samples {
        morph::blend_layer_morph_weights(rig, sample, &mut pose.morph_weights);
    }

    if inputs.root_lock
        && let Some(root) = inputs
            .clip
            .and_then(|c| motion_root(rig, c))
            .filter(|&n| n < pose.locals.len())
    {
        lock_to_rest(&mut pose.locals, &rig.nodes[root].rest, root);
    }
    for (local, joint_override) in pose.locals.iter_mut().zip(inputs.overrides) {
        if !joint_override.is_identity() {
            joint_override.apply(local);
        }
    }
    for (weights, overrides) in pose.morph_weights.iter_mut().zip(inputs.morph_overrides) {
        for (w, o) in weights.iter_mut().zip(overrides) {
            if let Some(o) = o {
                *w = *o;
            }
        }
    }
    let sampled = Instant::now();

    local_to_world(&rig.nodes, &pose.locals, &mut pose.worlds);
    if let Some(lock) = inputs.foot_lock.filter(|lock| inputs.clip == Some(lock.clip)) {
        lock.apply(&rig.nodes, inputs.time, &mut pose.locals, &mut pose.worlds);
    }
    // Grows only when goals are added: evaluating stays allocation-free.
    pose.ik_outcomes.resize(inputs.ik.len(), IkOutcome::Skipped);
    if !inputs.ik.is_empty() {
        apply_ik_goals(
            &rig.nodes,
            inputs.ik,
            &mut pose.locals,
            &mut pose.worlds,
            &mut pose.ik_outcomes,
        );
    }
    pose.look_at_reached = match inputs.look_at {
        Some(look_at) => look_at.apply(&rig.nodes, &mut pose.locals, &mut pose.worlds),
        None => false,
    };
    if let Some(look_at) = inputs.look_at {
        look_with_expressions(rig, look_at, pose);
    }
    if !rig.facts.constraints.is_empty() {
        apply_constraints(&rig.nodes, &rig.facts.constraints, &mut pose.locals, &mut pose.worlds);
    }
    if let (Some(seconds), Some(springs)) = (inputs.springs, &mut pose.springs) {
        springs.advance(&rig.nodes, seconds, &mut pose.locals, &mut pose.worlds);
    }
    for (instance, palette) in rig.instances.iter().zip(&mut pose.palettes) {
        let Some(skin) = instance.skin else { continue };
        pose.palette_kernels[skin].build(&rig.skins[skin], &pose.worlds, palette);
    }
    if inputs.dual_quaternions {
        for (dual_quats, palette) in pose.dual_quats.iter_mut().zip(&pose.palettes) {
            dual_quat_palette(palette, dual_quats);
        }
    }
    StageTimes {
        sampling: sampled - start,
        palette: sampled.elapsed(),
    }
}

/// An avatar with look expressions looks the rest of the way with them: the turn from its
/// head (after the look-at layer) to the target, as VRM's expression-type look-at.
fn look_with_expressions(rig: &Rig, look_at: &LookAt, pose: &mut PoseBuffers) {
    use crate::anim::look_at_expressions::{add_look_expressions, gaze_angles, look_expression_weights};
    let Some(head) = look_at.chain.first().and_then(|&head| pose.worlds.get(head)) else {
        return;
    };
    if !look_at.enabled || rig.facts.expressions.is_empty() {
        return;
    }
    let (yaw, pitch) = gaze_angles(head, look_at.forward, look_at.up, look_at.target);
    let weights = look_expression_weights(yaw, pitch);
    add_look_expressions(&rig.facts.expressions, weights, &rig.instances, &mut pose.morph_weights);
}
