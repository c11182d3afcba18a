//! Mirroring a pose left ↔ right, as an animation tool's "paste flipped": each joint takes its
//! partner's motion reflected across the rig's plane of symmetry.
//!
//! The motion is taken in model space, as each joint's change from its rest world transform,
//! `D = W · B⁻¹`; the partner's reflected change `R · D · R` (R the reflection, its own inverse)
//! is put on the joint's own rest, `W' = R · D · R · B`. Because the change is reflected and not
//! the transform itself, the two sides' bones need not have mirrored local axes (rolls that
//! differ, a side authored in other axes): rest maps to rest, and mirroring twice gives the
//! pose back. The new worlds are turned back into locals, parents first. Computed in f64 so
//! that mirroring twice gives the pose back to f32 precision.

use crate::rig::{Rig, Trs};
use glam::{DMat4, DQuat, DVec3, Mat4};

/// How a rig's pose is mirrored: its plane of symmetry and each node's partner.
#[derive(Debug, Clone)]
pub struct PoseMirror {
    /// The reflection across the plane of symmetry, in model space.
    reflection: DMat4,
    /// Per node, the node whose motion it takes (itself on the plane, or without a partner).
    partner: Vec<usize>,
    /// Per node, its rest world transform and its inverse.
    rest: Vec<DMat4>,
    rest_inverse: Vec<DMat4>,
}

/// Why a rig's pose cannot be mirrored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MirrorError {
    #[error("no left/right joint pairs: the rig's joint names have no sides to swap")]
    NoPairs,
    #[error("the left and right joints sit on top of each other at rest: no plane to mirror across")]
    NoPlane,
}

fn dmat(trs: &Trs) -> DMat4 {
    DMat4::from_scale_rotation_translation(
        trs.scale.as_dvec3(),
        trs.rotation.as_dquat(),
        trs.translation.as_dvec3(),
    )
}

/// World transforms of `locals` on `rig`'s hierarchy, in f64.
fn worlds(rig: &Rig, locals: &[Trs], out: &mut Vec<DMat4>) {
    out.clear();
    for (node, local) in rig.nodes.iter().zip(locals) {
        let local = dmat(local);
        let world = match node.parent.and_then(|p| out.get(p)) {
            Some(parent) => *parent * local,
            None => local,
        };
        out.push(world);
    }
}

impl PoseMirror {
    /// The mirror of `rig`, pairing nodes by `pairs` (left, right; the symmetry check's name
    /// rules) and, for a node without one, by position: the node whose rest position is nearest
    /// its mirror image, within 1% of the skeleton's size (else it is its own partner).
    pub fn new(rig: &Rig, pairs: &[(usize, usize)]) -> Result<PoseMirror, MirrorError> {
        let rest_locals: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        let mut rest = Vec::new();
        worlds(rig, &rest_locals, &mut rest);
        let position = |node: usize| rest[node].w_axis.truncate();
        let pairs: Vec<(usize, usize)> = (pairs.iter().copied())
            .filter(|&(l, r)| l < rest.len() && r < rest.len() && l != r)
            .collect();
        if pairs.is_empty() {
            return Err(MirrorError::NoPairs);
        }
        let across: DVec3 = pairs.iter().map(|&(l, r)| position(l) - position(r)).sum();
        let normal = across.try_normalize().ok_or(MirrorError::NoPlane)?;
        let offset = (pairs.iter())
            .map(|&(l, r)| normal.dot(position(l) + position(r)) * 0.5)
            .sum::<f64>()
            / pairs.len() as f64;
        let linear = glam::DMat3::IDENTITY
            - 2.0 * glam::DMat3::from_cols(normal * normal.x, normal * normal.y, normal * normal.z);
        let reflection = DMat4::from_cols(
            linear.x_axis.extend(0.0),
            linear.y_axis.extend(0.0),
            linear.z_axis.extend(0.0),
            (2.0 * offset * normal).extend(1.0),
        );
        let mut partner: Vec<usize> = (0..rest.len()).collect();
        for &(l, r) in &pairs {
            (partner[l], partner[r]) = (r, l);
        }
        let size = (rest.iter())
            .map(|w| w.w_axis.truncate())
            .fold((DVec3::splat(f64::MAX), DVec3::splat(f64::MIN)), |(lo, hi), p| {
                (lo.min(p), hi.max(p))
            });
        let tolerance = (size.1 - size.0).max_element().max(0.0) * 0.01;
        let paired: Vec<bool> = (0..rest.len()).map(|n| partner[n] != n).collect();
        for node in 0..rest.len() {
            if paired[node] {
                continue;
            }
            let image = reflection.transform_point3(position(node));
            let nearest = (0..rest.len())
                .filter(|&other| !paired[other])
                .map(|other| (other, position(other).distance(image)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((other, _)) = nearest.filter(|&(_, d)| d <= tolerance) {
                partner[node] = other;
            }
        }
        let rest_inverse = rest.iter().map(DMat4::inverse).collect();
        Ok(PoseMirror {
            reflection,
            partner,
            rest,
            rest_inverse,
        })
    }

    /// The mirror image of the model-space point `p`.
    pub fn reflect_point(&self, p: glam::Vec3) -> glam::Vec3 {
        self.reflection.transform_point3(p.as_dvec3()).as_vec3()
    }

    /// The node whose motion `node` takes.
    pub fn partner(&self, node: usize) -> usize {
        self.partner.get(node).copied().unwrap_or(node)
    }

    /// The mirror image of the pose `locals` (one per node of `rig`, the rig this mirror was
    /// made for), written into `out`.
    pub fn mirror_locals(&self, rig: &Rig, locals: &[Trs], out: &mut Vec<Trs>) {
        let mut posed = Vec::with_capacity(locals.len());
        worlds(rig, locals, &mut posed);
        let r = self.reflection;
        let mirrored: Vec<DMat4> = (0..posed.len())
            .map(|node| {
                let from = self.partner(node);
                let change = posed[from] * self.rest_inverse[from];
                r * change * r * self.rest[node]
            })
            .collect();
        out.clear();
        out.extend(rig.nodes.iter().zip(&mirrored).map(|(node, world)| {
            let local = match node.parent.and_then(|p| mirrored.get(p)) {
                Some(parent) => parent.inverse() * *world,
                None => *world,
            };
            let (scale, rotation, translation) = local.to_scale_rotation_translation();
            Trs {
                translation: translation.as_vec3(),
                rotation: normalized(rotation).as_quat(),
                scale: scale.as_vec3(),
            }
        }));
    }
}

fn normalized(q: DQuat) -> DQuat {
    let length = q.length();
    if length > 0.0 && length.is_finite() {
        q / length
    } else {
        DQuat::IDENTITY
    }
}

/// The model-space matrices of `locals` (for tests and callers that compare poses).
pub fn world_matrices(rig: &Rig, locals: &[Trs]) -> Vec<Mat4> {
    let mut out = Vec::new();
    worlds(rig, locals, &mut out);
    out.iter().map(DMat4::as_mat4).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::Node;
    use glam::{Quat, Vec3};

    /// Hips with a spine and two arms whose rest axes differ: the right arm is turned 90° about
    /// its bone (another roll), as rigs authored side by side often are.
    fn rig() -> Rig {
        let node = |name: &str, parent: Option<usize>, translation: Vec3, rotation: Quat| Node {
            name: name.into(),
            parent,
            rest: Trs {
                translation,
                rotation,
                scale: Vec3::ONE,
            },
        };
        Rig {
            nodes: vec![
                node("Hips", None, Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY),
                node("Spine", Some(0), Vec3::new(0.0, 0.3, 0.0), Quat::IDENTITY),
                node("LeftArm", Some(1), Vec3::new(0.2, 0.2, 0.0), Quat::IDENTITY),
                node("LeftHand", Some(2), Vec3::new(0.3, 0.0, 0.0), Quat::IDENTITY),
                node(
                    "RightArm",
                    Some(1),
                    Vec3::new(-0.2, 0.2, 0.0),
                    Quat::from_rotation_x(1.5707964),
                ),
                node("RightHand", Some(4), Vec3::new(-0.3, 0.0, 0.0), Quat::IDENTITY),
            ],
            ..Rig::default()
        }
    }

    fn pairs() -> Vec<(usize, usize)> {
        vec![(2, 4), (3, 5)]
    }

    fn posed(rig: &Rig) -> Vec<Trs> {
        let mut locals: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        locals[0].translation += Vec3::new(0.1, 0.0, 0.05);
        locals[0].rotation = Quat::from_rotation_y(0.4);
        locals[2].rotation = Quat::from_rotation_z(0.7) * Quat::from_rotation_y(0.2);
        locals[3].rotation = Quat::from_rotation_x(0.3);
        locals
    }

    fn close(a: &[Mat4], b: &[Mat4], tolerance: f32) -> bool {
        a.iter().zip(b).all(|(a, b)| a.abs_diff_eq(*b, tolerance))
    }

    #[test]
    fn the_rest_pose_mirrors_to_itself_and_any_pose_mirrored_twice_is_itself() {
        let rig = rig();
        let mirror = PoseMirror::new(&rig, &pairs()).unwrap();
        assert_eq!(
            (0..6).map(|n| mirror.partner(n)).collect::<Vec<_>>(),
            [0, 1, 4, 5, 2, 3]
        );
        let rest: Vec<Trs> = rig.nodes.iter().map(|n| n.rest).collect();
        let mut out = Vec::new();
        mirror.mirror_locals(&rig, &rest, &mut out);
        assert!(close(&world_matrices(&rig, &out), &world_matrices(&rig, &rest), 1e-6));
        let pose = posed(&rig);
        let mut twice = Vec::new();
        mirror.mirror_locals(&rig, &pose, &mut out);
        mirror.mirror_locals(&rig, &out, &mut twice);
        assert!(close(&world_matrices(&rig, &twice), &world_matrices(&rig, &pose), 1e-6));
    }

    #[test]
    fn the_right_hand_goes_where_the_left_hand_went_reflected_whatever_its_roll() {
        let rig = rig();
        let mirror = PoseMirror::new(&rig, &pairs()).unwrap();
        let pose = posed(&rig);
        let mut out = Vec::new();
        mirror.mirror_locals(&rig, &pose, &mut out);
        let (before, after) = (world_matrices(&rig, &pose), world_matrices(&rig, &out));
        // The plane is x = 0: positions reflect by negating x.
        let flip = |p: Vec3| Vec3::new(-p.x, p.y, p.z);
        for (node, partner) in [(0, 0), (1, 1), (2, 4), (3, 5), (4, 2), (5, 3)] {
            let want = flip(before[node].w_axis.truncate());
            let got = after[partner].w_axis.truncate();
            assert!(want.abs_diff_eq(got, 1e-5), "node {node}: {got} instead of {want}");
        }
        // The hips turned +0.4 about Y turn -0.4 in the mirror.
        let (_, hips, _) = after[0].to_scale_rotation_translation();
        assert!(
            hips.abs_diff_eq(Quat::from_rotation_y(-0.4), 1e-5) || hips.abs_diff_eq(-Quat::from_rotation_y(-0.4), 1e-5)
        );
    }

    #[test]
    fn a_rig_without_sides_cannot_be_mirrored() {
        let rig = rig();
        assert_eq!(PoseMirror::new(&rig, &[]).unwrap_err(), MirrorError::NoPairs);
    }
}
