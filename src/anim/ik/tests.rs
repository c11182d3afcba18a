use super::*;
use glam::{DMat4, DQuat, DVec3};
use std::f64::consts::PI;

/// Deterministic xorshift32, so that "random" chains are the same on every run.
struct XorShift(u32);

impl XorShift {
    fn next_u32(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
    fn unit_interval(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 24) as f32
    }
    fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit_interval()
    }
    fn unit_vector(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0));
            if (0.01..=1.0).contains(&v.length_squared()) {
                return v.normalize();
            }
        }
    }
    fn rotation(&mut self, max_angle: f32) -> Quat {
        Quat::from_axis_angle(self.unit_vector(), self.range(-max_angle, max_angle))
    }
}

/// A joint's local transform; model matrices are recomputed from these in f64, apart from the solver.
#[derive(Clone, Copy)]
struct Local {
    rotation: Quat,
    translation: Vec3,
}

impl Local {
    fn matrix(&self) -> DMat4 {
        DMat4::from_rotation_translation(self.rotation.as_dquat().normalize(), self.translation.as_dvec3())
    }
}

/// A parent above the start, then start, mid and end, each the child of the one before.
struct Limb {
    root: Local,
    start: Local,
    mid: Local,
    end: Local,
}

struct LimbModels {
    start: DMat4,
    mid: DMat4,
    end: DMat4,
}

impl LimbModels {
    fn start_position(&self) -> DVec3 {
        self.start.w_axis.truncate()
    }
    fn mid_position(&self) -> DVec3 {
        self.mid.w_axis.truncate()
    }
    fn end_position(&self) -> DVec3 {
        self.end.w_axis.truncate()
    }
}

impl Limb {
    fn models(&self) -> LimbModels {
        let start = self.root.matrix() * self.start.matrix();
        let mid = start * self.mid.matrix();
        let end = mid * self.end.matrix();
        LimbModels { start, mid, end }
    }

    fn job(&self, target: Vec3, pole: Vec3, mid_axis: Vec3) -> TwoBoneIk {
        let models = self.models();
        TwoBoneIk {
            pole,
            mid_axis,
            ..TwoBoneIk::new(
                models.start.as_mat4(),
                models.mid.as_mat4(),
                models.end.as_mat4(),
                target,
            )
        }
    }

    fn corrected(&self, correction: &TwoBoneCorrection) -> Limb {
        Limb {
            root: self.root,
            start: Local {
                rotation: self.start.rotation * correction.start,
                translation: self.start.translation,
            },
            mid: Local {
                rotation: self.mid.rotation * correction.mid,
                translation: self.mid.translation,
            },
            end: self.end,
        }
    }

    fn upper_length(&self) -> f64 {
        self.mid.translation.as_dvec3().length()
    }
    fn lower_length(&self) -> f64 {
        self.end.translation.as_dvec3().length()
    }
    fn chain_length(&self) -> f64 {
        self.upper_length() + self.lower_length()
    }

    /// cross(mid→start, mid→end) in the mid joint's local space, computed in f64 from the locals.
    fn bend_axis(&self) -> Option<Vec3> {
        let mid_to_start = self.mid.rotation.as_dquat().inverse() * -self.mid.translation.as_dvec3();
        let mid_to_end = self.end.translation.as_dvec3();
        let axis = mid_to_start.cross(mid_to_end);
        (axis.length() > 0.05 * mid_to_start.length() * mid_to_end.length()).then(|| axis.normalize().as_vec3())
    }
}

fn random_limb(rng: &mut XorShift) -> Limb {
    Limb {
        root: Local {
            rotation: rng.rotation(3.0),
            translation: Vec3::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)),
        },
        start: Local {
            rotation: rng.rotation(3.0),
            translation: rng.unit_vector() * rng.range(0.1, 0.5),
        },
        mid: Local {
            rotation: rng.rotation(3.0),
            translation: rng.unit_vector() * rng.range(0.2, 1.0),
        },
        end: Local {
            rotation: rng.rotation(3.0),
            translation: rng.unit_vector() * rng.range(0.2, 1.0),
        },
    }
}

/// Angle between two directions, accurate near 0 and π (unlike acos of a dot product).
fn angle_between(a: DVec3, b: DVec3) -> f64 {
    a.cross(b).length().atan2(a.dot(b))
}

fn rotation_angle(q: Quat) -> f64 {
    let q = q.as_dquat();
    2.0 * q.xyz().length().atan2(q.w.abs())
}

fn component_perpendicular(v: DVec3, axis: DVec3) -> DVec3 {
    let axis = axis.normalize();
    v - axis * v.dot(axis)
}

/// A limb with a bend axis that makes sense, a target at `reach` × chain length and a pole clear of the
/// target's direction.
fn random_case(rng: &mut XorShift, reach: impl Fn(&Limb, &mut XorShift) -> f64) -> (Limb, Vec3, Vec3, Vec3) {
    loop {
        let limb = random_limb(rng);
        let Some(mid_axis) = limb.bend_axis() else { continue };
        let start = limb.models().start_position();
        let direction = rng.unit_vector();
        let target = (start + direction.as_dvec3() * reach(&limb, rng)).as_vec3();
        let pole = rng.unit_vector();
        if direction.cross(pole).length() < 0.3 {
            continue;
        }
        return (limb, target, pole, mid_axis);
    }
}

#[test]
fn reachable_targets_are_reached_with_the_bend_on_the_poles_side() {
    let mut rng = XorShift(0x2545_f491);
    for _ in 0..300 {
        let (limb, target, pole, mid_axis) = random_case(&mut rng, |limb, rng| {
            let innermost = (limb.upper_length() - limb.lower_length()).abs();
            let outermost = limb.chain_length();
            innermost + (outermost - innermost) * rng.range(0.05, 0.95) as f64
        });
        let correction = limb.job(target, pole, mid_axis).solve().unwrap();
        assert!(correction.reached);
        let after = limb.corrected(&correction);
        let models = after.models();
        let chain_length = limb.chain_length();

        let miss = (models.end_position() - target.as_dvec3()).length();
        assert!(
            miss <= 1e-4 * chain_length,
            "end misses the target by {miss} (chain {chain_length})"
        );

        let before = limb.models();
        let upper_before = (before.mid_position() - before.start_position()).length();
        let lower_before = (before.end_position() - before.mid_position()).length();
        let upper_after = (models.mid_position() - models.start_position()).length();
        let lower_after = (models.end_position() - models.mid_position()).length();
        assert!((upper_after - upper_before).abs() < 1e-5);
        assert!((lower_after - lower_before).abs() < 1e-5);

        // The mid correction is a rotation about the bend axis and nothing else.
        let mid_rotation_axis = correction.mid.xyz().as_dvec3();
        let off_axis = mid_rotation_axis.cross(mid_axis.as_dvec3()).length();
        assert!(off_axis < 1e-6, "mid correction leaves its bend axis by {off_axis}");

        // The mid joint sits in the plane of start→target and the pole, on the pole's side.
        let start_to_target = target.as_dvec3() - models.start_position();
        let mid_side = component_perpendicular(models.mid_position() - models.start_position(), start_to_target);
        let pole_side = component_perpendicular(pole.as_dvec3(), start_to_target);
        let angle = angle_between(mid_side, pole_side);
        assert!(angle < 1e-3, "mid joint is {angle} rad off the pole's side");
    }
}

#[test]
fn out_of_reach_points_the_straight_chain_at_the_target() {
    let mut rng = XorShift(0x9e37_79b9);
    for _ in 0..100 {
        let (limb, target, pole, mid_axis) = random_case(&mut rng, |limb, _| 1.5 * limb.chain_length());
        let correction = limb.job(target, pole, mid_axis).solve().unwrap();
        assert!(!correction.reached);
        let models = limb.corrected(&correction).models();
        let upper = models.mid_position() - models.start_position();
        let lower = models.end_position() - models.mid_position();
        assert!(angle_between(upper, lower) < 1e-3, "chain is not straight");
        let aim_error = angle_between(
            models.end_position() - models.start_position(),
            target.as_dvec3() - models.start_position(),
        );
        assert!(aim_error < 1e-4, "straight chain is {aim_error} rad off the target");
        assert!((upper.length() - limb.upper_length()).abs() < 1e-5);
        assert!((lower.length() - limb.lower_length()).abs() < 1e-5);
    }
}

/// Start at the origin, a bone of 0.5 down to the mid and one of `lower` further down: straight.
fn straight_leg(lower: f32) -> Limb {
    let identity = Local {
        rotation: Quat::IDENTITY,
        translation: Vec3::ZERO,
    };
    Limb {
        root: identity,
        start: identity,
        mid: Local {
            rotation: Quat::IDENTITY,
            translation: Vec3::new(0.0, -0.5, 0.0),
        },
        end: Local {
            rotation: Quat::IDENTITY,
            translation: Vec3::new(0.0, -lower, 0.0),
        },
    }
}

#[test]
fn a_target_inside_the_innermost_reach_folds_the_chain_towards_it() {
    // Bones 0.5 and 0.2: the end can come no closer than 0.3 to the start.
    let limb = straight_leg(0.2);
    let target = Vec3::new(0.1, 0.0, 0.0);
    let correction = limb.job(target, Vec3::Z, Vec3::X).solve().unwrap();
    assert!(!correction.reached);
    let models = limb.corrected(&correction).models();
    let end = models.end_position();
    assert!((end - DVec3::new(0.3, 0.0, 0.0)).length() < 1e-5, "end at {end}");
}

#[test]
fn a_limb_straight_at_rest_bends_about_its_rest_axis_towards_the_pole() {
    let limb = straight_leg(0.5);
    let models = limb.models();
    // cross(X, limb down) = −Z: a straight limb bending about +X puts its mid joint on −Z.
    let pole = current_bend_pole(
        &models.start.as_mat4(),
        &models.mid.as_mat4(),
        &models.end.as_mat4(),
        Vec3::X,
    )
    .unwrap();
    assert!((pole - Vec3::NEG_Z).length() < 1e-6, "default pole {pole}");

    // Target 0.6 below the start: a 0.3-0.4-0.5 triangle puts the mid joint 0.4 out, half-way down.
    let target = Vec3::new(0.0, -0.6, 0.0);
    for (pole, expected_mid) in [
        (Vec3::NEG_Z, DVec3::new(0.0, -0.3, -0.4)),
        (Vec3::Z, DVec3::new(0.0, -0.3, 0.4)),
    ] {
        let correction = limb.job(target, pole, Vec3::X).solve().unwrap();
        assert!(correction.reached);
        let models = limb.corrected(&correction).models();
        assert!(
            (models.mid_position() - expected_mid).length() < 1e-5,
            "mid at {}",
            models.mid_position()
        );
        assert!((models.end_position() - target.as_dvec3()).length() < 1e-5);
    }
}

#[test]
fn a_pole_in_line_with_the_target_keeps_the_current_bend_plane() {
    // A limb bent towards +X in the XY plane: mid at (0.3, −0.5, 0), end at (0, −1, 0); bend axis +Z.
    let limb = Limb {
        root: Local {
            rotation: Quat::IDENTITY,
            translation: Vec3::ZERO,
        },
        start: Local {
            rotation: Quat::IDENTITY,
            translation: Vec3::ZERO,
        },
        mid: Local {
            rotation: Quat::IDENTITY,
            translation: Vec3::new(0.3, -0.5, 0.0),
        },
        end: Local {
            rotation: Quat::IDENTITY,
            translation: Vec3::new(-0.3, -0.5, 0.0),
        },
    };
    assert_eq!(limb.bend_axis(), Some(Vec3::Z));
    // Target straight down at 0.8, the pole along the same line (either way): both bones are √0.34, so
    // the mid joint goes half-way down at x = √(0.34 − 0.16) on the side it was bent to.
    let target = Vec3::new(0.0, -0.8, 0.0);
    let expected_mid = DVec3::new(0.18f64.sqrt(), -0.4, 0.0);
    for pole in [Vec3::NEG_Y, Vec3::Y] {
        let correction = limb.job(target, pole, Vec3::Z).solve().unwrap();
        assert!(correction.start.is_finite() && correction.mid.is_finite());
        let models = limb.corrected(&correction).models();
        assert!(
            (models.mid_position() - expected_mid).length() < 1e-5,
            "mid at {}",
            models.mid_position()
        );
        assert!((models.end_position() - target.as_dvec3()).length() < 1e-5);
    }
}

#[test]
fn weight_blends_from_identity_by_angle() {
    let mut rng = XorShift(0x1234_5678);
    for _ in 0..50 {
        let (limb, target, pole, mid_axis) = random_case(&mut rng, |limb, _| 0.7 * limb.chain_length());
        let job = limb.job(target, pole, mid_axis);
        let none = TwoBoneIk { weight: 0.0, ..job }.solve().unwrap();
        assert_eq!(
            (none.start, none.mid, none.reached),
            (Quat::IDENTITY, Quat::IDENTITY, false)
        );

        let full = job.solve().unwrap();
        let half = TwoBoneIk { weight: 0.5, ..job }.solve().unwrap();
        assert!(!half.reached);
        for (full, half) in [(full.start, half.start), (full.mid, half.mid)] {
            let (full_angle, half_angle) = (rotation_angle(full), rotation_angle(half));
            assert!(
                (half_angle - 0.5 * full_angle).abs() < 1e-5,
                "{half_angle} is not half of {full_angle}"
            );
            if full_angle > 1e-3 {
                let axis_error = angle_between(full.xyz().as_dvec3(), half.xyz().as_dvec3());
                assert!(axis_error < 1e-4);
            }
        }
    }
}

#[test]
fn softening_keeps_the_chain_bent_near_full_extension() {
    let mut rng = XorShift(0xdead_beef);
    for _ in 0..50 {
        let (limb, target, pole, mid_axis) = random_case(&mut rng, |limb, _| 0.99 * limb.chain_length());
        let soften = 0.9;
        let correction = TwoBoneIk {
            soften,
            ..limb.job(target, pole, mid_axis)
        }
        .solve()
        .unwrap();
        assert!(!correction.reached, "a softened target is not reached");
        let models = limb.corrected(&correction).models();
        // Softening starts at 0.9 of the chain; 0.99 is α = 0.9 of the remaining span, which keeps
        // 1 − (3 / 3.9)⁴ of it.
        let chain = limb.chain_length();
        let expected_reach = chain * (0.9 + 0.1 * (1.0 - (3.0f64 / 3.9).powi(4)));
        let reach = (models.end_position() - models.start_position()).length();
        assert!(
            (reach - expected_reach).abs() < 1e-4 * chain,
            "reach {reach}, expected {expected_reach}"
        );
        let aim_error = angle_between(
            models.end_position() - models.start_position(),
            target.as_dvec3() - models.start_position(),
        );
        assert!(aim_error < 1e-4);
        let bend = angle_between(
            models.mid_position() - models.start_position(),
            models.end_position() - models.mid_position(),
        );
        assert!(bend > 0.05, "chain is almost straight ({bend} rad)");

        // Without softening the same target is reached exactly.
        let unsoftened = limb.job(target, pole, mid_axis).solve().unwrap();
        assert!(unsoftened.reached);
    }
}

#[test]
fn twist_turns_the_solved_chain_and_the_aim_about_the_line_to_the_target() {
    let mut rng = XorShift(0x0c0f_fee5);
    for _ in 0..50 {
        let (limb, target, pole, mid_axis) = random_case(&mut rng, |limb, _| 0.8 * limb.chain_length());
        let twist = rng.range(-2.0, 2.0);
        let job = limb.job(target, pole, mid_axis);
        let plain = limb.corrected(&job.solve().unwrap()).models();
        let twisted = limb.corrected(&TwoBoneIk { twist, ..job }.solve().unwrap()).models();
        // The untwisted mid joint turned by `twist` about start→target, in f64.
        let start = plain.start_position();
        let turn = DQuat::from_axis_angle((target.as_dvec3() - start).normalize(), twist as f64);
        let expected_mid = start + turn * (plain.mid_position() - start);
        assert!((twisted.mid_position() - expected_mid).length() < 1e-5);
        assert!((twisted.end_position() - target.as_dvec3()).length() < 1e-4 * limb.chain_length());

        let model = random_joint_model(&mut rng);
        let aim_target = model.w_axis.truncate().as_vec3() + rng.unit_vector() * 2.0;
        let aim = Aim {
            pole: rng.unit_vector(),
            ..Aim::new(model.as_mat4(), aim_target)
        };
        let up_of = |aim: Aim| {
            let rotation = aim.solve().unwrap().rotation.as_dquat();
            (model * DMat4::from_quat(rotation)).transform_vector3(DVec3::Y)
        };
        let to_target = (aim_target.as_dvec3() - model.w_axis.truncate()).normalize();
        let expected_up = DQuat::from_axis_angle(to_target, twist as f64) * up_of(aim);
        assert!((up_of(Aim { twist, ..aim }) - expected_up).length() < 1e-5);
    }
}

#[test]
fn validate_rejects_bad_inputs() {
    let limb = straight_leg(0.5);
    let job = limb.job(Vec3::new(0.0, -0.6, 0.0), Vec3::Z, Vec3::X);
    assert_eq!(job.validate(), Ok(()));
    let invalid = |job: TwoBoneIk| job.solve().unwrap_err();
    assert_eq!(
        invalid(TwoBoneIk {
            mid_axis: Vec3::new(1.0, 1.0, 0.0),
            ..job
        }),
        IkError::NotNormalized("mid")
    );
    assert_eq!(
        invalid(TwoBoneIk {
            target: Vec3::NAN,
            ..job
        }),
        IkError::NotFinite("target")
    );
    assert_eq!(
        invalid(TwoBoneIk {
            weight: f32::INFINITY,
            ..job
        }),
        IkError::NotFinite("weight")
    );
    assert_eq!(
        invalid(TwoBoneIk {
            start_model: Mat4::ZERO,
            ..job
        }),
        IkError::SingularMatrix("start")
    );
    assert_eq!(
        invalid(TwoBoneIk {
            end_model: job.mid_model,
            ..job
        }),
        IkError::ZeroLengthBone("lower")
    );
    assert_eq!(
        invalid(TwoBoneIk {
            mid_model: job.start_model,
            ..job
        }),
        IkError::ZeroLengthBone("upper")
    );

    let aim = Aim::new(Mat4::IDENTITY, Vec3::X);
    assert_eq!(aim.validate(), Ok(()));
    assert_eq!(
        Aim { up: Vec3::ZERO, ..aim }.solve().unwrap_err(),
        IkError::NotNormalized("up")
    );
    assert_eq!(
        Aim {
            forward: Vec3::splat(2.0),
            ..aim
        }
        .solve()
        .unwrap_err(),
        IkError::NotNormalized("forward")
    );

    let models = [Mat4::IDENTITY; 2];
    let chain = AimChain {
        joint_models: &models,
        joint_weights: &[1.0],
        chain_weight: 1.0,
        target: Vec3::X,
        forward: Vec3::X,
        up: Vec3::Y,
        offset: Vec3::ZERO,
        pole: Vec3::Y,
        twist: 0.0,
    };
    let mut corrections = [Quat::IDENTITY; 2];
    assert_eq!(
        chain.solve(&mut corrections),
        Err(IkError::ChainLengthMismatch {
            joints: 2,
            weights: 1,
            corrections: 2
        })
    );
}

fn random_orthonormal_pair(rng: &mut XorShift) -> (Vec3, Vec3) {
    let forward = rng.unit_vector();
    let up = forward.cross(rng.unit_vector()).normalize();
    (forward, up)
}

fn random_joint_model(rng: &mut XorShift) -> DMat4 {
    let translation = Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
    DMat4::from_rotation_translation(rng.rotation(3.0).as_dquat(), translation.as_dvec3())
}

#[test]
fn aim_points_forward_at_the_target_with_up_towards_the_pole() {
    let mut rng = XorShift(0x0bad_cafe);
    for _ in 0..200 {
        let model = random_joint_model(&mut rng);
        let (forward, up) = random_orthonormal_pair(&mut rng);
        let target = model.w_axis.truncate().as_vec3() + rng.unit_vector() * rng.range(1.0, 3.0);
        let pole = rng.unit_vector();
        let joint = model.w_axis.truncate();
        let to_target = target.as_dvec3() - joint;
        if angle_between(to_target, pole.as_dvec3()) < 0.3 || angle_between(to_target, -pole.as_dvec3()) < 0.3 {
            continue;
        }
        let aim = Aim {
            forward,
            up,
            pole,
            ..Aim::new(model.as_mat4(), target)
        };
        let correction = aim.solve().unwrap();
        assert!(correction.reached);
        let corrected = model * DMat4::from_quat(correction.rotation.as_dquat());
        let forward_model = corrected.transform_vector3(forward.as_dvec3());
        let up_model = corrected.transform_vector3(up.as_dvec3());
        let aim_error = angle_between(forward_model, to_target);
        assert!(aim_error < 1e-4, "forward is {aim_error} rad off the target");
        let plane_normal = forward_model.cross(pole.as_dvec3()).normalize();
        assert!(
            up_model.dot(plane_normal).abs() < 1e-4,
            "up leaves the forward–pole plane"
        );
        assert!(
            up_model.dot(component_perpendicular(pole.as_dvec3(), forward_model)) > 0.0,
            "up turned away from the pole"
        );

        let half = Aim { weight: 0.5, ..aim }.solve().unwrap();
        assert!(!half.reached);
        assert!((rotation_angle(half.rotation) - 0.5 * rotation_angle(correction.rotation)).abs() < 1e-5);
    }
}

#[test]
fn aim_from_an_offset_puts_the_target_on_the_ray() {
    let mut rng = XorShift(0x7f4a_7c15);
    for _ in 0..200 {
        let model = random_joint_model(&mut rng);
        let (forward, up) = random_orthonormal_pair(&mut rng);
        let offset = rng.unit_vector() * rng.range(0.0, 0.3);
        let target = model.w_axis.truncate().as_vec3() + rng.unit_vector() * rng.range(1.0, 3.0);
        let aim = Aim {
            forward,
            up,
            offset,
            pole: rng.unit_vector(),
            ..Aim::new(model.as_mat4(), target)
        };
        let correction = aim.solve().unwrap();
        assert!(correction.reached);
        let corrected = model * DMat4::from_quat(correction.rotation.as_dquat());
        let ray_start = corrected.transform_point3(offset.as_dvec3());
        let ray_direction = corrected.transform_vector3(forward.as_dvec3());
        let aim_error = angle_between(ray_direction, target.as_dvec3() - ray_start);
        assert!(aim_error < 1e-4, "ray is {aim_error} rad off the target");
    }

    // A target closer to the joint than the ray ever passes (0.5 beside it, target 0.1 ahead) cannot be
    // hit: the forward axis is aimed from the joint instead, and the aim is not reached.
    let aim = Aim {
        offset: Vec3::new(0.0, 0.5, 0.0),
        ..Aim::new(Mat4::IDENTITY, Vec3::new(0.0, 0.0, 0.1))
    };
    let correction = aim.solve().unwrap();
    assert!(!correction.reached);
    assert!(angle_between((correction.rotation * Vec3::X).as_dvec3(), DVec3::Z) < 1e-5);
}

#[test]
fn look_at_chain_shares_the_turn_and_the_eyes_end_on_the_target() {
    let mut rng = XorShift(0x5eed_0001);
    let eyes = Vec3::new(0.0, 0.1, 0.08);
    for _ in 0..50 {
        // Spine above the hips, neck, head: locals with small random bends, looking along +Z.
        let mut locals = [
            Local {
                rotation: rng.rotation(0.3),
                translation: Vec3::new(0.0, 1.0, 0.0),
            },
            Local {
                rotation: rng.rotation(0.3),
                translation: Vec3::new(0.0, 0.3, 0.0),
            },
            Local {
                rotation: rng.rotation(0.3),
                translation: Vec3::new(0.0, 0.15, 0.0),
            },
        ];
        let models_of = |locals: &[Local; 3]| {
            let spine = locals[0].matrix();
            let neck = spine * locals[1].matrix();
            let head = neck * locals[2].matrix();
            [spine, neck, head]
        };
        let [spine, neck, head] = models_of(&locals);
        let target = Vec3::new(rng.range(-1.0, 1.0), rng.range(0.5, 2.5), rng.range(1.0, 3.0));
        // Head first, then its ancestors: the order in which the turn is handed down.
        let joint_models = [head.as_mat4(), neck.as_mat4(), spine.as_mat4()];
        let mut joint_weights = [0.0; 3];
        fill_chain_weights(0.5, &mut joint_weights);
        assert_eq!(joint_weights, [0.5, 0.5, 1.0]);
        let chain = AimChain {
            joint_models: &joint_models,
            joint_weights: &joint_weights,
            chain_weight: 1.0,
            target,
            forward: Vec3::Z,
            up: Vec3::Y,
            offset: eyes,
            pole: Vec3::Y,
            twist: 0.0,
        };
        let mut corrections = [Quat::IDENTITY; 3];
        assert!(chain.solve(&mut corrections).unwrap());
        for correction in &corrections {
            assert!(
                rotation_angle(*correction) > 1e-4,
                "every joint takes a share of the turn"
            );
        }
        locals[2].rotation *= corrections[0];
        locals[1].rotation *= corrections[1];
        locals[0].rotation *= corrections[2];
        let [_, _, head] = models_of(&locals);
        let eyes_model = head.transform_point3(eyes.as_dvec3());
        let look = head.transform_vector3(DVec3::Z);
        let aim_error = angle_between(look, target.as_dvec3() - eyes_model);
        assert!(aim_error < 1e-4, "eyes look {aim_error} rad off the target");
        // The last joint rolls about its own line to the target, so the head's up ends in the plane of
        // that line and the pole.
        let up = head.transform_vector3(DVec3::Y);
        let spine_to_target = target.as_dvec3() - spine.w_axis.truncate();
        assert!(
            up.dot(spine_to_target.cross(DVec3::Y).normalize()).abs() < 1e-4,
            "head rolled off the pole's plane"
        );
    }
}

#[test]
fn rotation_about_axis_aligning_matches_a_quarter_turn() {
    // X turned onto Y about Z is +90°; the axis components of the inputs do not matter.
    let q = rotation_about_axis_aligning(Vec3::Z, Vec3::new(2.0, 0.0, 5.0), Vec3::new(0.0, 3.0, -1.0));
    assert!((rotation_angle(q) - PI / 2.0).abs() < 1e-6);
    assert!((q * Vec3::X - Vec3::Y).length() < 1e-6);
}
