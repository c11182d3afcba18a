//! CPU skinning: the reference linear blend skinning, the fast one ([`fast`]), dual quaternion
//! skinning, and the per-frame skinned state the viewer draws on its CPU path.

pub mod blend;
pub mod dqs;
pub mod fast;
pub mod pick;
mod shape;

use crate::anim::morph::MorphedPrimitive;
use crate::anim::{Bounds, PoseBuffers};
/// How joint transforms are blended: named with the rig, which records the method a file asks
/// for.
pub use crate::rig::SkinningMethod;
use crate::rig::{Inf, Influences, MorphTarget, Rig};
pub use blend::DqsBlend;
pub use dqs::{DualQuat, dual_quat_palette, max_non_rigidity, skin_dqs};
use glam::{Mat3, Mat4, Vec3, Vec4};
pub use shape::ShapeError;
pub(crate) use shape::check_shape;

crate::names::named_enum! {
    /// Where vertices are skinned (named `gpu` and `cpu` on the command line and in settings, as
    /// [`crate::names`] says).
    #[strum(serialize_all = "lowercase")]
    pub enum SkinningPath {
        /// In the vertex shader, from the palette in a storage buffer.
        #[default]
        Gpu,
        /// On the CPU every frame; the results are uploaded and drawn unskinned.
        Cpu,
    }
}

/// Weighted sum of the palette matrices that influence vertex `v`. Joints outside the palette are
/// ignored; a vertex without any weight keeps its bind position (identity).
pub fn blend_matrix(palette: &[Mat4], influences: &Influences, v: usize) -> Mat4 {
    let mut sum = Mat4::ZERO;
    let mut total = 0.0;
    for (joint, weight) in influences.of_vertex(v) {
        if weight != 0.0
            && let Some(m) = palette.get(joint as usize)
        {
            sum += *m * weight;
            total += weight;
        }
    }
    if total == 0.0 { Mat4::IDENTITY } else { sum }
}

/// The matrix that transforms normals for a vertex transformed by `m`: the inverse transpose
/// of its 3×3 part, computed as the cofactor matrix (the inverse transpose times the
/// determinant) with the determinant's sign kept, so it works for any invertible matrix without
/// a division. The result still needs normalizing.
pub fn normal_matrix(m: &Mat4) -> Mat3 {
    let (c0, c1, c2) = (m.x_axis.truncate(), m.y_axis.truncate(), m.z_axis.truncate());
    let cofactor = Mat3::from_cols(c1.cross(c2), c2.cross(c0), c0.cross(c1));
    if c0.dot(c1.cross(c2)) < 0.0 {
        -cofactor
    } else {
        cofactor
    }
}

/// Linear blend skinning, written for clarity: the reference that faster paths and the GPU are
/// checked against. Writes one position and one normal per input vertex.
pub fn skin_lbs_reference(
    palette: &[Mat4],
    influences: &Influences,
    positions: &[Vec3],
    normals: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    for v in 0..positions.len() {
        let m = blend_matrix(palette, influences, v);
        out_positions[v] = m.transform_point3(positions[v]);
        out_normals[v] = (normal_matrix(&m) * normals[v]).normalize_or_zero();
    }
}

/// CPU-skinned positions and normals of one primitive, in the space of its mesh node.
#[derive(Debug, Clone, Default)]
pub struct SkinnedPrimitive {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    /// The primitive's tangents moved with its vertices (w: the bitangent's sign, kept), not
    /// normalized, as the vertex shader moves them; empty for a primitive without tangents.
    pub tangents: Vec<Vec4>,
}

/// The points one tangent away from each vertex, and where skinning takes them: the tangent
/// moves as a direction under the vertex's own blended transform, which is affine in the
/// position for every method (LBS, DQS and their blend), so the skinned tip less the skinned
/// vertex is the skinned tangent exactly — the way `shaders/mesh.wgsl` moves them.
#[derive(Debug, Default)]
struct TangentTips {
    tips: Vec<Vec3>,
    skinned: SkinnedPrimitive,
}

impl TangentTips {
    /// How far out the tip is put: the position's own size (at least 1), so that the difference
    /// of two skinned points keeps f32's precision (as `shaders/mesh.wgsl` does).
    fn reach(position: Vec3) -> f32 {
        position.length().max(1.0)
    }

    fn place(&mut self, positions: &[Vec3], tangents: &[Vec4]) {
        self.tips.clear();
        let tips = positions.iter().zip(tangents);
        self.tips.extend(tips.map(|(&p, t)| p + t.truncate() * Self::reach(p)));
        let n = positions.len();
        self.skinned.positions.resize(n, Vec3::ZERO);
        self.skinned.normals.resize(n, Vec3::ZERO);
    }

    fn tangents_into(&self, positions: &[Vec3], skinned: &[Vec3], tangents: &[Vec4], out: &mut Vec<Vec4>) {
        out.clear();
        let moved = (self.skinned.positions.iter().zip(skinned)).zip(positions.iter().zip(tangents));
        out.extend(moved.map(|((tip, at), (&p, t))| ((*tip - *at) / Self::reach(p)).extend(t.w)));
    }
}

/// The CPU path's skinned vertices, kept between frames so that a frame allocates nothing.
pub struct SkinnedPose {
    /// Per mesh instance, per primitive (empty for unskinned instances).
    pub meshes: Vec<Vec<SkinnedPrimitive>>,
    /// Per mesh instance, per primitive: the morphed bind pose, skinned in place of the
    /// primitive's own vertices when its morph weights are not all zero (empty without targets).
    morphed: Vec<Vec<MorphedPrimitive>>,
    /// Which call of [`SkinnedPose::skin`], of all in the process, made `meshes` (0: none yet).
    generation: u64,
    /// Each vertex's blend toward dual quaternion skinning, read by [`SkinningMethod::Blended`].
    blend: std::sync::Arc<DqsBlend>,
    /// Dual quaternion results of the blended method, before they are mixed in.
    blend_scratch: SkinnedPrimitive,
    tangent_tips: TangentTips,
}

/// Numbers the calls of [`SkinnedPose::skin`], so that a copy of the vertices (on the GPU) can
/// tell whether it is current.
static SKIN_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl SkinnedPose {
    pub fn new(rig: &Rig) -> SkinnedPose {
        let skinned = |i: usize| rig.instances[i].skin.is_some();
        SkinnedPose {
            meshes: (0..rig.instances.len())
                .map(|i| {
                    if !skinned(i) {
                        return Vec::new();
                    }
                    rig.meshes[rig.instances[i].mesh]
                        .primitives
                        .iter()
                        .map(|p| SkinnedPrimitive {
                            positions: p.positions.clone(),
                            normals: p.normals.clone(),
                            tangents: p.tangents.clone(),
                        })
                        .collect()
                })
                .collect(),
            morphed: rig
                .instances
                .iter()
                .map(|instance| {
                    (0..rig.meshes[instance.mesh].primitives.len())
                        .map(|k| {
                            let targets = rig.morphs.of(instance.mesh, k);
                            if targets.is_empty() {
                                return MorphedPrimitive::default();
                            }
                            let primitive = &rig.meshes[instance.mesh].primitives[k];
                            let n = primitive.vertex_count();
                            if primitive.tangents.len() == n {
                                MorphedPrimitive::with_tangents(n, targets)
                            } else {
                                MorphedPrimitive::new(n, targets.len())
                            }
                        })
                        .collect()
                })
                .collect(),
            generation: 0,
            blend: std::sync::Arc::new(DqsBlend::of_file(rig)),
            blend_scratch: SkinnedPrimitive::default(),
            tangent_tips: TangentTips::default(),
        }
    }

    /// The blend [`SkinningMethod::Blended`] skins with: the file's until
    /// [`SkinnedPose::set_blend`] replaces it.
    pub fn blend(&self) -> &std::sync::Arc<DqsBlend> {
        &self.blend
    }

    /// Skins [`SkinningMethod::Blended`] with `blend` from the next [`SkinnedPose::skin`] on.
    pub fn set_blend(&mut self, blend: std::sync::Arc<DqsBlend>) {
        self.blend = blend;
    }

    /// The vertices of primitive `k` of instance `i` as drawn: as the last [`SkinnedPose::skin`]
    /// skinned them (dual quaternions and morph targets included), or the primitive's own for an
    /// unskinned instance. [`PoseBuffers::instance_world`] places them in the world.
    pub fn positions<'a>(&'a self, rig: &'a Rig, i: usize, k: usize) -> &'a [Vec3] {
        let primitive = &rig.meshes[rig.instances[i].mesh].primitives[k];
        match self.meshes[i].get(k) {
            Some(skinned) if primitive.influences.is_some() => &skinned.positions,
            _ => &primitive.positions,
        }
    }

    /// Identifies the vertices in `meshes`: equal values mean the same call of
    /// [`SkinnedPose::skin`] made them, in this pose or another.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Skins every skinned primitive on the CPU (for DQS and blended, the pose must have been
    /// evaluated with dual quaternions).
    pub fn skin(&mut self, rig: &Rig, pose: &PoseBuffers, method: SkinningMethod) {
        self.generation = SKIN_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        for (i, instance) in rig.instances.iter().enumerate() {
            if instance.skin.is_none() {
                continue;
            }
            let primitives = rig.meshes[instance.mesh].primitives.iter().zip(&mut self.meshes[i]);
            for (k, ((primitive, out), morphed)) in primitives.zip(&mut self.morphed[i]).enumerate() {
                let Some(influences) = &primitive.influences else {
                    continue;
                };
                let skin = PrimitiveSkinning {
                    method,
                    pose,
                    instance: i,
                    influences,
                    blend: self.blend.of(i, k),
                };
                // Morph targets deform the bind pose; skinning then moves the result.
                let targets = rig.morphs.of(instance.mesh, k);
                let (positions, normals) = (&primitive.positions[..], &primitive.normals[..]);
                let weights = &pose.morph_weights[i];
                let mut skinned = false;
                let morphing = !targets.is_empty()
                    && if skin.splits_with_morph(positions.len()) {
                        let mid =
                            morphed.balanced_split(targets, weights, positions.len(), 16, SKINNED_VERTEX_IN_TERMS);
                        skinned = skin.morph_then_skin(morphed, targets, weights, (positions, normals), mid, out);
                        skinned
                    } else {
                        morphed.apply(targets, weights, positions, normals)
                    };
                let (p, n, tangents) = if morphing {
                    morphed.apply_tangents(targets, &primitive.tangents);
                    let tangents = morphed.tangents.or(&primitive.tangents);
                    (&morphed.positions[..], &morphed.normals[..], tangents)
                } else {
                    (positions, normals, &primitive.tangents[..])
                };
                if !skinned {
                    skin.run(p, n, &mut out.positions, &mut out.normals, &mut self.blend_scratch);
                }
                if tangents.len() == p.len() {
                    let tips = &mut self.tangent_tips;
                    tips.place(p, tangents);
                    let skinned = &mut tips.skinned;
                    skin.run(
                        &tips.tips,
                        n,
                        &mut skinned.positions,
                        &mut skinned.normals,
                        &mut self.blend_scratch,
                    );
                    tips.tangents_into(p, &out.positions, tangents, &mut out.tangents);
                }
            }
        }
    }
}

/// What skinning a vertex (linear blending, positions and normals) costs in terms of a morph
/// target (a term added and its share of renormalizing), for splitting a morphed primitive's
/// vertices between two threads so that morph and skinning together balance. On an Intel
/// Emerald Rapids with AVX-512 (`cargo bench --bench morph`, 100k vertices) a vertex takes
/// 4.0 ns of one thread's time (200 µs for the frame without targets on two threads) and a term
/// of a frame that follows its plan 2.9 ns (the morph alone, 21 µs, over 14.5k terms on two
/// threads). In alternating `morph_ratio` runs 1.4 gave 1.142–1.162 against 1.144–1.163 for
/// the 0.8 measured before the plan, and 0.4 1.153–1.190.
const SKINNED_VERTEX_IN_TERMS: f32 = 1.4;

/// One primitive's skinning as a frame asks for it: the method, and the pose's palettes and blend.
struct PrimitiveSkinning<'a> {
    method: SkinningMethod,
    pose: &'a PoseBuffers,
    instance: usize,
    influences: &'a Influences,
    blend: &'a [f32],
}

impl PrimitiveSkinning<'_> {
    /// Whether a morphed primitive of `vertices` vertices is morphed and skinned half by half
    /// ([`PrimitiveSkinning::morph_then_skin`]): where linear blend skinning would split it over
    /// two threads.
    fn splits_with_morph(&self, vertices: usize) -> bool {
        self.method == SkinningMethod::Lbs && fast::threads_for(vertices, 0) == 2
    }

    /// Morphs the bind pose `bind` into `morphed` and skins it into `out`, each half of the
    /// vertices (split at `mid`, a multiple of the kernels' 16-vertex blocks) on its own thread
    /// right after its morph; false (nothing written) when no target is in use. Each vertex goes
    /// through the kernel it meets in [`fast::skin_lbs_parallel`]'s runs: the same bits.
    fn morph_then_skin(
        &self,
        morphed: &mut MorphedPrimitive,
        targets: &[MorphTarget],
        weights: &[f32],
        bind: (&[Vec3], &[Vec3]),
        mid: usize,
        out: &mut SkinnedPrimitive,
    ) -> bool {
        let kernel = fast::Kernel::detect();
        let palette = &self.pose.palettes[self.instance][..];
        let influences = Inf::of(self.influences);
        let vertices = bind.0.len();
        let (positions0, positions1) = out.positions.split_at_mut(mid);
        let (normals0, normals1) = out.normals.split_at_mut(mid);
        let inputs = |range: std::ops::Range<usize>| (palette, influences.vertices(range));
        morphed.apply_then(
            targets,
            weights,
            bind,
            mid,
            (
                skin_half(kernel, inputs(0..mid), (positions0, normals0)),
                skin_half(kernel, inputs(mid..vertices), (positions1, normals1)),
            ),
        )
    }

    fn run(
        &self,
        positions: &[Vec3],
        normals: &[Vec3],
        out_positions: &mut [Vec3],
        out_normals: &mut [Vec3],
        blend_scratch: &mut SkinnedPrimitive,
    ) {
        let i = self.instance;
        match self.method {
            // Big meshes over rayon's pool (from 64k vertices on two cores; no thread is
            // started per frame).
            SkinningMethod::Lbs => fast::skin_lbs_parallel(
                fast::Kernel::detect(),
                0,
                &self.pose.palettes[i],
                self.influences,
                positions,
                Some((normals, out_normals)),
                out_positions,
            ),
            SkinningMethod::Dqs => skin_dqs(
                &self.pose.dual_quats[i],
                self.influences,
                positions,
                normals,
                out_positions,
                out_normals,
            ),
            SkinningMethod::Blended => blend::skin_blended(
                &self.pose.palettes[i],
                &self.pose.dual_quats[i],
                self.influences,
                self.blend,
                positions,
                normals,
                out_positions,
                out_normals,
                blend_scratch,
            ),
        }
    }
}

/// Linear blend skinning of one half of a morphed primitive into `out` (positions, normals),
/// piece by piece as its morphed bind pose is made (see `morph_then_skin`): each call skins
/// the vertices from `start` (counted from the half's first).
fn skin_half<'a>(
    kernel: fast::Kernel,
    (palette, influences): (&'a [Mat4], Inf<'a>),
    (out_positions, out_normals): (&'a mut [Vec3], &'a mut [Vec3]),
) -> impl FnMut(usize, &[Vec3], &[Vec3]) + Send + 'a {
    move |start, positions, normals| {
        let vertices = start..start + positions.len();
        let out = (&mut out_positions[vertices.clone()], &mut out_normals[vertices.clone()]);
        fast::Job::new(
            palette,
            influences.vertices(vertices),
            positions,
            Some((normals, out.1)),
            out.0,
        )
        .unwrap_or_else(|e| panic!("{e}"))
        .run(kernel)
    }
}

/// Bounds of every mesh instance of `rig` as `skinned` skinned it in the pose `pose`, in world
/// space (see [`SkinnedPose::positions`]).
pub fn posed_bounds(rig: &Rig, pose: &PoseBuffers, skinned: &SkinnedPose) -> Bounds {
    let mut bounds = Bounds::EMPTY;
    for (i, instance) in rig.instances.iter().enumerate() {
        let world = pose.instance_world(rig, i);
        for k in 0..rig.meshes[instance.mesh].primitives.len() {
            for &p in skinned.positions(rig, i, k) {
                bounds.include(world.transform_point3(p));
            }
        }
    }
    bounds
}
