use super::*;
use crate::rig::{Channel, Clip, Interpolation, Node, Property, Trs};
use glam::Vec4;

pub(super) fn node(name: &str, parent: Option<usize>, translation: Vec3) -> Node {
    Node {
        name: name.into(),
        parent,
        rest: Trs {
            translation,
            ..Trs::IDENTITY
        },
    }
}

pub(super) fn linear(node: usize, property: Property, times: &[f32], values: &[Vec4]) -> Channel {
    Channel {
        node,
        property,
        interpolation: Interpolation::Linear,
        times: times.to_vec(),
        values: values.to_vec(),
    }
}

pub(super) fn clip(name: &str, channels: Vec<Channel>) -> Clip {
    let duration = channels
        .iter()
        .filter_map(|c| c.times.last().copied())
        .fold(0.0, f32::max);
    Clip {
        name: name.into(),
        duration,
        channels,
        source: None,
    }
}

#[test]
fn skeleton_bounds_cover_the_rest_pose_and_every_clip() {
    // A root walking 2 along x in one clip and sinking 3 in another, with a child 1 above it.
    let rig = Rig {
        nodes: vec![node("root", None, Vec3::ZERO), node("head", Some(0), Vec3::Y)],
        clips: vec![
            clip(
                "walk",
                vec![linear(
                    0,
                    Property::Translation,
                    &[0.0, 1.0],
                    &[Vec4::ZERO, Vec4::new(2.0, 0.0, 0.0, 0.0)],
                )],
            ),
            clip(
                "sink",
                vec![linear(
                    0,
                    Property::Translation,
                    &[0.0, 0.5],
                    &[Vec4::ZERO, Vec4::new(0.0, -3.0, 0.0, 0.0)],
                )],
            ),
        ],
        ..Rig::default()
    };
    let bounds = skeleton_bounds(&rig);
    assert!((bounds.min - Vec3::new(0.0, -3.0, 0.0)).length() < 1e-5, "{bounds:?}");
    assert!((bounds.max - Vec3::new(2.0, 1.0, 0.0)).length() < 1e-5, "{bounds:?}");
}
