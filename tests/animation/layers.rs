//! Layers, crossfades and attachments against poses worked out by hand in f64.

use crate::common;

use glam::{DQuat, DVec3, Quat, Vec3, Vec4};
use rigscope::anim::{Attachment, BlendMode, Layer};
use rigscope::rig::{Channel, Clip, Interpolation, Node, Property, Rig, Trs};
use rigscope::viewer::Viewer;

fn channel(node: usize, property: Property, times: &[f32], values: &[Vec4]) -> Channel {
    Channel {
        node,
        property,
        interpolation: Interpolation::Linear,
        times: times.to_vec(),
        values: values.to_vec(),
    }
}

fn clip(name: &str, duration: f32, channels: Vec<Channel>) -> Clip {
    Clip {
        name: name.into(),
        duration,
        channels,
        source: None,
    }
}

fn q(rotation: Quat) -> Vec4 {
    Vec4::from(rotation)
}

/// One node "j" under a root, and three clips on it: A and B hold constant poses, C turns about
/// Y from 30° (its first frame, which is not the rest pose) to 70°.
fn rig() -> Rig {
    let a = clip(
        "A",
        1.0,
        vec![
            channel(1, Property::Rotation, &[0.0, 1.0], &[q(Quat::from_rotation_z(0.35)); 2]),
            channel(
                1,
                Property::Translation,
                &[0.0, 1.0],
                &[Vec4::new(1.0, 0.0, 0.0, 0.0); 2],
            ),
        ],
    );
    let b = clip(
        "B",
        1.0,
        vec![
            channel(1, Property::Rotation, &[0.0, 1.0], &[q(Quat::from_rotation_x(1.5)); 2]),
            channel(
                1,
                Property::Translation,
                &[0.0, 1.0],
                &[Vec4::new(0.0, 2.0, 0.0, 0.0); 2],
            ),
        ],
    );
    let c = clip(
        "C",
        1.0,
        vec![channel(
            1,
            Property::Rotation,
            &[0.0, 1.0],
            &[
                q(Quat::from_rotation_y(30f32.to_radians())),
                q(Quat::from_rotation_y(70f32.to_radians())),
            ],
        )],
    );
    Rig {
        name: "layers".into(),
        nodes: vec![
            Node {
                name: "root".into(),
                parent: None,
                rest: Trs::IDENTITY,
            },
            Node {
                name: "j".into(),
                parent: Some(0),
                rest: Trs::IDENTITY,
            },
        ],
        clips: vec![a, b, c],
        ..Rig::default()
    }
}

/// Shortest-arc slerp in f64, written from the formula.
fn slerp(a: DQuat, b: DQuat, t: f64) -> DQuat {
    let mut b = b;
    let mut dot = a.dot(b);
    if dot < 0.0 {
        b = -b;
        dot = -dot;
    }
    let theta = dot.clamp(-1.0, 1.0).acos();
    let (wa, wb) = ((theta * (1.0 - t)).sin() / theta.sin(), (theta * t).sin() / theta.sin());
    DQuat::from_xyzw(
        wa * a.x + wb * b.x,
        wa * a.y + wb * b.y,
        wa * a.z + wb * b.z,
        wa * a.w + wb * b.w,
    )
}

fn same_rotation(a: Quat, b: DQuat) -> bool {
    a.as_dquat().dot(b).abs() > 1.0 - 1e-6
}

fn viewer_with_layer(base: usize, layer: Layer, time: f32) -> Viewer {
    let mut viewer = Viewer::new(rig(), None);
    viewer.set_playing(false);
    viewer.select_clip(Some(base));
    viewer.edit_pose_parts(|parts| parts.layers.push(layer));
    viewer.seek(time);
    viewer
}

#[test]
fn a_mix_layer_at_half_weight_gives_the_slerp_midpoint_and_its_ends_give_each_clip() {
    let (ra, rb) = (DQuat::from_rotation_z(0.35), DQuat::from_rotation_x(1.5));
    for (weight, translation, rotation) in [
        (0.0, DVec3::new(1.0, 0.0, 0.0), ra),
        (0.5, DVec3::new(0.5, 1.0, 0.0), slerp(ra, rb, 0.5)),
        (1.0, DVec3::new(0.0, 2.0, 0.0), rb),
    ] {
        let mut viewer = viewer_with_layer(
            0,
            Layer {
                weight,
                ..Layer::new(1)
            },
            0.5,
        );
        let local = viewer.pose().locals[1];
        assert!(
            (local.translation.as_dvec3() - translation).length() < 1e-6,
            "weight {weight}: {}",
            local.translation
        );
        assert!(
            same_rotation(local.rotation, rotation),
            "weight {weight}: {:?} vs {rotation:?}",
            local.rotation
        );
    }
}

#[test]
fn an_additive_layer_adds_nothing_at_its_first_frame_and_its_change_later() {
    let ra = DQuat::from_rotation_z(0.35);
    let additive = Layer {
        mode: BlendMode::Additive,
        ..Layer::new(2)
    };
    // C's first frame (30° about Y) is not the rest pose: a bind-pose reference would add 30°.
    let mut at_start = viewer_with_layer(0, additive.clone(), 0.0);
    assert!(
        same_rotation(at_start.pose().locals[1].rotation, ra),
        "{:?}",
        at_start.pose().locals[1].rotation
    );
    assert!((at_start.pose().locals[1].translation - Vec3::X).length() < 1e-6);
    // At its end C has turned 40° further; the layer adds exactly that, about the joint's axis.
    let mut at_end = viewer_with_layer(0, additive.clone(), 1.0);
    let expected = ra * DQuat::from_rotation_y(40f64.to_radians());
    assert!(
        same_rotation(at_end.pose().locals[1].rotation, expected),
        "{:?}",
        at_end.pose().locals[1].rotation
    );
    // Half weight adds half the change.
    let mut half = viewer_with_layer(
        0,
        Layer {
            weight: 0.5,
            ..additive
        },
        1.0,
    );
    let expected = ra * DQuat::from_rotation_y(20f64.to_radians());
    assert!(same_rotation(half.pose().locals[1].rotation, expected));
}

#[test]
fn a_mask_limits_a_layer_to_a_joint_and_its_descendants() {
    let mut masked = viewer_with_layer(
        0,
        Layer {
            mask: Some(0),
            ..Layer::new(1)
        },
        0.5,
    );
    assert!(
        (masked.pose().locals[1].translation - Vec3::new(0.0, 2.0, 0.0)).length() < 1e-6,
        "j is below the mask root"
    );
    let mut elsewhere = rig();
    elsewhere.nodes.push(Node {
        name: "other".into(),
        parent: None,
        rest: Trs::IDENTITY,
    });
    let mut viewer = Viewer::new(elsewhere, None);
    viewer.select_clip(Some(0));
    viewer.edit_pose_parts(|parts| {
        parts.layers.push(Layer {
            mask: Some(2),
            ..Layer::new(1)
        })
    });
    viewer.seek(0.5);
    assert!(
        (viewer.pose().locals[1].translation - Vec3::X).length() < 1e-6,
        "j is outside the mask: clip A only"
    );
}

#[test]
fn a_crossfade_at_half_its_duration_equals_a_half_mix() {
    let mut fading = Viewer::new(rig(), None);
    fading.select_clip(Some(0));
    fading.edit_pose_parts(|parts| parts.crossfade_seconds = 0.4);
    fading.select_clip(Some(1));
    assert!(fading.animation().fade.is_some());
    fading.set_playing(true);
    fading.tick(0.2);
    let mut mixed = viewer_with_layer(
        0,
        Layer {
            weight: 0.5,
            ..Layer::new(1)
        },
        0.2,
    );
    let (a, b) = (fading.pose().locals[1], mixed.pose().locals[1]);
    assert!(
        (a.translation - b.translation).length() < 1e-5,
        "{} vs {}",
        a.translation,
        b.translation
    );
    assert!(a.rotation.dot(b.rotation).abs() > 1.0 - 1e-6);
    fading.tick(0.3);
    assert!(fading.animation().fade.is_none(), "the fade ends after its duration");
    assert!((fading.pose().locals[1].translation - Vec3::new(0.0, 2.0, 0.0)).length() < 1e-5);
}

#[test]
fn an_attachment_follows_its_fox_joint_through_a_clip() {
    let Some(dir) = common::shared_rigs() else { return };
    let rig = common::load_rig(&dir, "Fox.glb");
    let head = rig.find_node("b_Head_05").expect("Fox has b_Head_05");
    let mut viewer = Viewer::new(rig, None);
    let offset = Vec3::new(0.0, 10.0, 5.0);
    let attachment = Attachment {
        node: head,
        offset,
        rotation_degrees: Vec3::new(0.0, 90.0, 0.0),
        size: 5.0,
    };
    viewer.edit_pose_parts(|parts| parts.attachments.push(attachment));
    let walk = viewer.rig().find_clip("Walk").unwrap();
    viewer.select_clip(Some(walk));
    let duration = viewer.clip_duration();
    let mut max_error = 0.0f64;
    for k in 0..=40 {
        viewer.seek(duration * k as f32 / 40.0);
        // The joint's world transform recomposed in f64 from the local pose.
        let mut node = Some(head);
        let mut world = glam::DMat4::IDENTITY;
        while let Some(n) = node {
            let l = viewer.pose().locals[n];
            let local = glam::DMat4::from_scale_rotation_translation(
                l.scale.as_dvec3(),
                l.rotation.as_dquat().normalize(),
                l.translation.as_dvec3(),
            );
            world = local * world;
            node = viewer.rig().nodes[n].parent;
        }
        let expected = world.transform_point3(offset.as_dvec3());
        let shown = attachment.world(&viewer.pose().worlds).w_axis.truncate().as_dvec3();
        max_error = max_error.max((shown - expected).length() / expected.length().max(1.0));
    }
    println!("attachment vs f64 joint world, max relative error {max_error:.2e}");
    assert!(max_error < 1e-5);
}
