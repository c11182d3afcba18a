//! Generated rigs for benchmarks and `--synthetic`: skeletons of any size and shape, clips with
//! translation, rotation and scale channels on every joint, and a skinned tube of any vertex
//! count. Deterministic: the same arguments give the same rig.

use crate::rig::{
    Channel, Clip, Influences, Interpolation, Mesh, MeshInstance, MorphChannel, MorphTarget, Node, Primitive, Property,
    Rig, Skin, Trs,
};
use glam::{Affine3A, Mat4, Quat, Vec2, Vec3, Vec4};

/// How joints hang together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Each joint the child of the one before: the deepest hierarchy.
    Chain,
    /// Each joint the child of joint `(i - 1) / 4`: four children per joint, a shallow tree.
    Bushy,
}

impl Shape {
    pub fn label(self) -> &'static str {
        match self {
            Shape::Chain => "chain",
            Shape::Bushy => "bushy",
        }
    }

    fn parent(self, joint: usize) -> Option<usize> {
        match (self, joint) {
            (_, 0) => None,
            (Shape::Chain, j) => Some(j - 1),
            (Shape::Bushy, j) => Some((j - 1) / 4),
        }
    }
}

/// Distance between a joint and its parent.
const BONE: f32 = 0.1;

/// A skeleton of `joints` joints (node 0 holds the mesh, joints are nodes 1..=joints), one skin
/// over all of them with inverse binds from the rest pose, and one skinned instance with an
/// empty mesh. Rest poses carry a small rotation and scale so that no product is trivial.
pub fn skeleton(joints: usize, shape: Shape) -> Rig {
    let mut nodes = vec![Node {
        name: "mesh".into(),
        parent: None,
        rest: Trs::IDENTITY,
    }];
    for j in 0..joints {
        nodes.push(Node {
            name: format!("joint{j}"),
            parent: shape.parent(j).map(|p| p + 1),
            rest: Trs {
                translation: Vec3::new(0.01 * (j % 3) as f32, BONE, 0.0),
                rotation: Quat::from_rotation_z(0.02 + 0.001 * (j % 7) as f32),
                scale: Vec3::splat(1.0 + 0.001 * (j % 5) as f32),
            },
        });
    }
    let mut worlds = vec![Affine3A::IDENTITY; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        let local =
            Affine3A::from_scale_rotation_translation(node.rest.scale, node.rest.rotation, node.rest.translation);
        worlds[i] = node.parent.map_or(local, |p| worlds[p] * local);
    }
    let skin = Skin {
        name: "skin".into(),
        joints: (1..=joints).collect(),
        inverse_binds: (1..=joints).map(|n| Mat4::from(worlds[n].inverse())).collect(),
    };
    Rig {
        name: format!("{} {joints}", shape.label()),
        nodes,
        skins: vec![skin],
        meshes: vec![Mesh {
            name: "mesh".into(),
            primitives: Vec::new(),
        }],
        instances: vec![MeshInstance {
            node: 0,
            mesh: 0,
            skin: Some(0),
        }],
        ..Rig::default()
    }
}

/// A clip over `seconds` seconds with `keys` keys on a translation, a rotation and a scale
/// channel of every joint of `rig` (nodes 1..), smooth and different per joint.
pub fn trs_clip(rig: &Rig, keys: usize, seconds: f32, interpolation: Interpolation) -> Clip {
    let keys = keys.max(2);
    let times: Vec<f32> = (0..keys).map(|k| seconds * k as f32 / (keys - 1) as f32).collect();
    let mut channels = Vec::new();
    for node in 1..rig.nodes.len() {
        let rest = rig.nodes[node].rest;
        let phase = node as f32 * 0.37;
        let wave = |k: usize| (std::f32::consts::TAU * k as f32 / (keys - 1) as f32 + phase).sin();
        let translation = |k: usize| (rest.translation + Vec3::new(0.0, 0.01 * wave(k), 0.0)).extend(0.0);
        let rotation = |k: usize| {
            Vec4::from(rest.rotation * Quat::from_euler(glam::EulerRot::XYZ, 0.3 * wave(k), 0.2 * wave(k + 1), 0.1))
        };
        let scale = |k: usize| (rest.scale * (1.0 + 0.05 * wave(k))).extend(0.0);
        for (property, value) in [
            (Property::Translation, &translation as &dyn Fn(usize) -> Vec4),
            (Property::Rotation, &rotation),
            (Property::Scale, &scale),
        ] {
            let values = match interpolation {
                Interpolation::CubicSpline => (0..keys)
                    .flat_map(|k| {
                        let tangent = if property == Property::Rotation {
                            Vec4::ZERO
                        } else {
                            (value((k + 1).min(keys - 1)) - value(k.saturating_sub(1))) * 0.5
                        };
                        [tangent, value(k), tangent]
                    })
                    .collect(),
                _ => (0..keys).map(value).collect(),
            };
            channels.push(Channel {
                node,
                property,
                interpolation,
                times: times.clone(),
                values,
            });
        }
    }
    Clip {
        name: format!("{interpolation:?} TRS"),
        duration: seconds,
        channels,
        source: None,
    }
}

/// A tube of about `vertices` vertices (rings of 64) along a chain of `joints` joints, each
/// vertex weighted to the four joints nearest its height (smooth, normalized weights, heaviest
/// first), with a looping clip bending every joint. For `rigscope bench --synthetic`.
pub fn skinned_tube(vertices: usize, joints: usize) -> Rig {
    const AROUND: usize = 64;
    let joints = joints.max(1);
    let mut rig = skeleton(joints, Shape::Chain);
    // Straight rest pose: the tube follows the chain.
    for node in &mut rig.nodes[1..] {
        node.rest = Trs {
            translation: Vec3::new(0.0, BONE, 0.0),
            ..Trs::IDENTITY
        };
    }
    rig.skins[0].inverse_binds = (1..=joints)
        .map(|j| Mat4::from_translation(Vec3::new(0.0, -BONE * j as f32, 0.0)))
        .collect();
    let rings = vertices.div_ceil(AROUND).max(2);
    let height = BONE * joints as f32;
    let radius = 0.05 + height * 0.02;
    let mut primitive = Primitive {
        positions: Vec::with_capacity(rings * AROUND),
        normals: Vec::with_capacity(rings * AROUND),
        uvs: Vec::with_capacity(rings * AROUND),
        uv_sets: Default::default(),
        tangents: Vec::new(),
        influences: Some(Influences {
            sets: 1,
            joints: Vec::with_capacity(rings * AROUND),
            weights: Vec::with_capacity(rings * AROUND),
        }),
        indices: Vec::with_capacity((rings - 1) * AROUND * 6),
        material: None,
        colors: Vec::new(),
    };
    let influences = primitive.influences.as_mut().expect("just set");
    for ring in 0..rings {
        let v = ring as f32 / (rings - 1) as f32;
        let y = BONE + v * (height - BONE);
        // Joint j sits at height BONE·(j + 1); weights fall off with distance in bones.
        let at = (y / BONE - 1.0).clamp(0.0, (joints - 1) as f32);
        let first = (at.floor() as usize).saturating_sub(1).min(joints.saturating_sub(4));
        let mut j = [0u16; 4];
        let mut w = [0f32; 4];
        for k in 0..4 {
            let joint = (first + k).min(joints - 1);
            j[k] = joint as u16;
            let d = (at - joint as f32).abs();
            w[k] = if first + k < joints {
                (1.5 - d).max(0.0).powi(2)
            } else {
                0.0
            };
        }
        let sum: f32 = w.iter().sum();
        w.iter_mut().for_each(|x| *x /= sum);
        // Heaviest first, as exporters write them.
        let mut order = [0, 1, 2, 3];
        order.sort_by(|&a, &b| w[b].total_cmp(&w[a]));
        let (j, w) = (order.map(|k| j[k]), order.map(|k| w[k]));
        for a in 0..AROUND {
            let angle = std::f32::consts::TAU * a as f32 / AROUND as f32;
            let normal = Vec3::new(angle.cos(), 0.0, angle.sin());
            primitive.positions.push(normal * radius + Vec3::Y * y);
            primitive.normals.push(normal);
            primitive.uvs.push(Vec2::new(a as f32 / AROUND as f32, v));
            influences.joints.push(j);
            influences.weights.push(w);
        }
    }
    for ring in 0..rings - 1 {
        for a in 0..AROUND {
            let b = (a + 1) % AROUND;
            let (p, q) = ((ring * AROUND) as u32, ((ring + 1) * AROUND) as u32);
            let (a, b) = (a as u32, b as u32);
            primitive
                .indices
                .extend_from_slice(&[p + a, q + a, p + b, p + b, q + a, q + b]);
        }
    }
    rig.meshes[0].primitives.push(primitive);
    let keys = 31;
    let times: Vec<f32> = (0..keys).map(|k| 2.0 * k as f32 / (keys - 1) as f32).collect();
    let bend = 1.5 / joints as f32;
    let channels = (1..=joints)
        .map(|node| Channel {
            node,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: (0..keys)
                .map(|k| {
                    let phase = std::f32::consts::TAU * k as f32 / (keys - 1) as f32 + node as f32 * 0.2;
                    Vec4::from(Quat::from_euler(
                        glam::EulerRot::XYZ,
                        bend * phase.sin(),
                        0.0,
                        bend * phase.cos(),
                    ))
                })
                .collect(),
        })
        .collect();
    rig.clips.push(Clip {
        name: "Bend".into(),
        duration: 2.0,
        channels,
        source: None,
    });
    rig.name = format!("synthetic tube, {} vertices, {joints} joints", rings * AROUND);
    rig
}

/// Gives the first primitive of `rig` (a [`skinned_tube`]) `targets` morph targets as a face
/// carries them: each moves a patch of about 3% of the vertices (a quarter of the way round, an
/// eighth of the length) out along the normals, tilting them, most at the patch's middle and
/// nothing at its edge. `in_use` of them, spread over the list, have weights that the tube's
/// clip animates between 0.3 and 1; the others stay at 0.
pub fn add_face_targets(rig: &mut Rig, targets: usize, in_use: usize) {
    const AROUND: usize = 64;
    let primitive = &rig.meshes[0].primitives[0];
    let n = primitive.vertex_count();
    let rings = n / AROUND;
    let (patch_rings, patch_around) = ((rings / 8).max(1), AROUND / 4);
    let (mut positions, mut normals) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    let mut made = Vec::with_capacity(targets);
    for t in 0..targets {
        // Patches spread along and around the tube (a golden-ratio walk), overlapping.
        let along = (t as f32 * 0.618_034).fract();
        let first_ring = (along * (rings - patch_rings) as f32) as usize;
        let first_around = (t * 23) % AROUND;
        let mut moved = Vec::with_capacity(patch_rings * patch_around);
        for r in 0..patch_rings {
            for a in 0..patch_around {
                let v = (first_ring + r) * AROUND + (first_around + a) % AROUND;
                let (x, y) = (
                    2.0 * r as f32 / patch_rings as f32 - 1.0,
                    2.0 * a as f32 / patch_around as f32 - 1.0,
                );
                let falloff = (1.0 - x * x) * (1.0 - y * y);
                let normal = primitive.normals[v];
                positions[v] = normal * (0.02 * falloff);
                normals[v] = Vec3::Y * (0.3 * falloff * x);
                moved.push(v);
            }
        }
        made.push(MorphTarget::sparse(
            &positions,
            &normals,
            &primitive.positions,
            &primitive.normals,
        ));
        for v in moved {
            (positions[v], normals[v]) = (Vec3::ZERO, Vec3::ZERO);
        }
    }
    let keys = 31;
    let times: Vec<f32> = (0..keys).map(|k| 2.0 * k as f32 / (keys - 1) as f32).collect();
    let animated: Vec<usize> = (0..in_use.min(targets)).map(|k| k * targets / in_use).collect();
    let mut values = vec![0.0; keys * targets];
    for (k, key) in values.chunks_exact_mut(targets).enumerate() {
        for (i, &t) in animated.iter().enumerate() {
            let phase = std::f32::consts::TAU * k as f32 / (keys - 1) as f32 + i as f32;
            key[t] = 0.65 + 0.35 * phase.sin();
        }
    }
    rig.morphs.targets = vec![vec![made]];
    rig.morphs.default_weights = vec![vec![0.0; targets]];
    rig.morphs.target_names = vec![(0..targets).map(|t| format!("shape{t}")).collect()];
    rig.morphs.channels = vec![MorphChannel {
        clip: 0,
        node: rig.instances[0].node,
        interpolation: Interpolation::Linear,
        times,
        values,
        targets,
    }];
    rig.name = format!("{}, {targets} morph targets ({} in use)", rig.name, animated.len());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::PoseBuffers;

    #[test]
    fn the_rest_pose_of_a_generated_skeleton_gives_an_identity_palette() {
        for shape in [Shape::Chain, Shape::Bushy] {
            let rig = skeleton(40, shape);
            let pose = PoseBuffers::new(&rig);
            for m in &pose.palettes[0] {
                assert!(m.abs_diff_eq(Mat4::IDENTITY, 1e-4), "{shape:?}: {m}");
            }
        }
    }

    #[test]
    fn the_tube_is_well_formed_and_its_weights_are_normalized() {
        let rig = skinned_tube(1000, 10);
        let primitive = &rig.meshes[0].primitives[0];
        assert_eq!(primitive.vertex_count(), 1024);
        assert!(
            primitive
                .indices
                .iter()
                .all(|&i| (i as usize) < primitive.vertex_count())
        );
        let influences = primitive.influences.as_ref().unwrap();
        for v in 0..primitive.vertex_count() {
            let sum: f32 = influences.of_vertex(v).map(|(_, w)| w).sum();
            assert!((sum - 1.0).abs() < 1e-5);
            assert!(influences.of_vertex(v).all(|(j, _)| j < 10));
        }
        let pose = PoseBuffers::new(&rig);
        for m in &pose.palettes[0] {
            assert!(m.abs_diff_eq(Mat4::IDENTITY, 1e-5));
        }
    }

    #[test]
    fn face_targets_move_patches_of_about_3_percent_and_the_clip_uses_those_asked_for() {
        let mut rig = skinned_tube(64 * 200, 16);
        add_face_targets(&mut rig, 40, 5);
        let targets = rig.morphs.of(0, 0);
        assert_eq!(targets.len(), 40);
        for target in targets {
            let share = target.vertices.len() as f32 / (64.0 * 200.0);
            assert!((0.02..0.04).contains(&share), "{share}");
            assert!(target.vertices.windows(2).all(|w| w[0] < w[1]));
        }
        let mut pose = PoseBuffers::new(&rig);
        for time in [0.0, 0.4, 1.3] {
            pose.evaluate(&rig, Some(0), time);
            let used: Vec<usize> = (pose.morph_weights[0].iter().enumerate())
                .filter(|(_, w)| **w != 0.0)
                .map(|(t, _)| t)
                .collect();
            assert_eq!(used, [0, 8, 16, 24, 32], "at {time}");
        }
    }
}
