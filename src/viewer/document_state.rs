//! The active document as its edits leave it, reduced to a value that compares exactly: what
//! undoing every edit must give back bit for bit (the document as opened), what redoing them
//! must give back (the last state), and what restoring unsaved edits must rebuild.
//!
//! Each part is a digest of the exact bits of its data (floats by their bit patterns, so that
//! -0.0 and 0.0 differ and a value off by one ulp is another state), named so that a mismatch
//! says where the two states part. Large arrays (vertices, weights, keys) are digested as raw
//! bytes; small records through their `Debug` form, whose floats print the shortest text that
//! reads back to the same bits (every NaN prints alike, the one loss), so that a field added to
//! them is covered without a change here. The digests are of one build: compare states made by
//! the same program, not states stored by another version.

use super::Viewer;
use crate::rig::{Clip, Primitive, Rig};
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hasher};

/// Digests of the parts of a document that edits change; see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentState {
    /// Each part by name ("skeleton", "mesh 0 'Body'", "clip 2 'Run'", "pose"…) with its
    /// digest, in a fixed order.
    pub parts: Vec<(String, u64)>,
}

impl DocumentState {
    /// The names of the parts that differ between `self` and `other`, and of those only one of
    /// them has.
    pub fn differences(&self, other: &DocumentState) -> Vec<String> {
        let mut differ: Vec<String> = (self.parts.iter())
            .filter(|(name, digest)| other.part(name) != Some(*digest))
            .map(|(name, _)| name.clone())
            .collect();
        differ.extend(
            (other.parts.iter())
                .filter(|(name, _)| self.part(name).is_none())
                .map(|(name, _)| name.clone()),
        );
        differ
    }

    /// The digest of the part named `name`.
    pub fn part(&self, name: &str) -> Option<u64> {
        self.parts.iter().find(|(n, _)| n == name).map(|&(_, digest)| digest)
    }
}

/// A running digest of exact bits.
#[derive(Default)]
struct Digest(DefaultHasher);

impl Digest {
    fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        // The length first: two arrays split differently are different data.
        self.0.write_usize(bytes.len());
        self.0.write(bytes);
        self
    }

    fn pod<T: bytemuck::Pod>(&mut self, values: &[T]) -> &mut Self {
        self.bytes(bytemuck::cast_slice(values))
    }

    fn debug(&mut self, value: &impl std::fmt::Debug) -> &mut Self {
        let _ = write!(self, "{value:?}");
        // Ends the text, so that two values written one after the other cannot run together.
        self.0.write_u8(0xff);
        self
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

impl std::fmt::Write for Digest {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0.write(text.as_bytes());
        Ok(())
    }
}

fn primitive_into(digest: &mut Digest, primitive: &Primitive) {
    digest
        .pod(&primitive.positions)
        .pod(&primitive.normals)
        .pod(&primitive.uvs)
        .pod(&primitive.uv_sets[0])
        .pod(&primitive.uv_sets[1])
        .pod(&primitive.tangents)
        .pod(&primitive.indices)
        .pod(&primitive.colors)
        .debug(&primitive.material);
    match &primitive.influences {
        Some(influences) => {
            digest
                .debug(&influences.sets)
                .pod(&influences.joints)
                .pod(&influences.weights);
        }
        None => {
            digest.debug(&"no influences");
        }
    }
}

fn clip_into(digest: &mut Digest, clip: &Clip) {
    digest.debug(&(&clip.name, clip.duration.to_bits(), &clip.source));
    for channel in &clip.channels {
        (digest.debug(&(channel.node, channel.property, channel.interpolation)))
            .pod(&channel.times)
            .pod(&channel.values);
    }
}

/// The parts of `rig` that edits change: its skeleton, meshes with their weights, morph
/// targets, clips (each with its morph weight channels) and what the import recorded per clip.
fn rig_parts(rig: &Rig, parts: &mut Vec<(String, u64)>) {
    let mut skeleton = Digest::default();
    skeleton.debug(&rig.nodes);
    for skin in &rig.skins {
        skeleton.debug(&(&skin.name, &skin.joints)).pod(&skin.inverse_binds);
    }
    skeleton.debug(&rig.instances);
    parts.push(("skeleton".into(), skeleton.finish()));

    for (m, mesh) in rig.meshes.iter().enumerate() {
        let mut digest = Digest::default();
        for primitive in &mesh.primitives {
            primitive_into(&mut digest, primitive);
        }
        for targets in rig.morphs.targets.get(m).into_iter().flatten() {
            for target in targets {
                (digest.pod(&target.vertices))
                    .pod(&target.position_offsets)
                    .pod(&target.normal_offsets)
                    .pod(&target.tangent_offsets);
            }
        }
        if let Some(blends) = rig.skinning.dqs_blend.get(m) {
            for blend in blends {
                digest.pod(blend);
            }
        }
        parts.push((format!("mesh {m} '{}'", mesh.name), digest.finish()));
    }
    let mut morphs = Digest::default();
    (morphs.debug(&rig.morphs.default_weights))
        .debug(&rig.morphs.target_names)
        .debug(&rig.skinning.method);
    parts.push(("morph weights and skinning method".into(), morphs.finish()));

    for (c, clip) in rig.clips.iter().enumerate() {
        let mut digest = Digest::default();
        clip_into(&mut digest, clip);
        for channel in rig.morphs.channels.iter().filter(|channel| channel.clip == c) {
            (digest.debug(&(channel.node, channel.interpolation, channel.targets)))
                .pod(&channel.times)
                .pod(&channel.values);
        }
        parts.push((format!("clip {c} '{}'", clip.name), digest.finish()));
    }
    let mut facts = Digest::default();
    facts.debug(&rig.facts.channels).debug(&rig.facts.dropped_channels);
    // Morph channels of clips that are not there would be lost above.
    facts.debug(&rig.morphs.channels.iter().filter(|c| c.clip >= rig.clips.len()).count());
    parts.push(("clip import facts".into(), facts.finish()));
}

impl Viewer {
    /// The active document as its edits leave it (see [`DocumentState`]): its rig, its clip
    /// record, the pose and animation set over its clips, and whether a save would write
    /// something new.
    pub fn document_state(&self) -> DocumentState {
        let document = self.document();
        let mut parts = Vec::new();
        rig_parts(&document.rig, &mut parts);

        let mut record = Digest::default();
        let edits = &document.clip_edits;
        record.debug(&edits.origins());
        for edit in edits.log() {
            match edit {
                // The carried clips themselves are in the rig's clips; the edit names its file.
                super::ClipEdit::AddCarried { carried } | super::ClipEdit::Recarry { carried } => {
                    record.debug(&(edit.clip(), &carried.origin, carried.clips.len()))
                }
                other => record.debug(other),
            };
        }
        parts.push(("clip record".into(), record.finish()));

        let animation = &self.playback.animation;
        let mut pose = Digest::default();
        (pose.debug(&animation.overrides))
            .debug(&animation.morph_overrides)
            .debug(&animation.ik_goals);
        match &animation.look_at {
            // Following the camera, the target is wherever the camera is: the view's, not an edit.
            Some(look_at) if animation.look_at_camera => {
                let target = glam::Vec3::ZERO;
                pose.debug(&crate::anim::look_at::LookAt {
                    target,
                    ..look_at.clone()
                });
            }
            look_at => {
                pose.debug(look_at);
            }
        }
        pose.debug(&animation.look_at_camera);
        parts.push(("pose".into(), pose.finish()));

        let mut stack = Digest::default();
        (stack.debug(&animation.layers))
            .debug(&animation.crossfade_seconds.to_bits())
            .debug(&animation.root_motion)
            .debug(&animation.attachments)
            .debug(&animation.lock_feet);
        parts.push((
            "layers, crossfade, root motion, attachments, foot lock".into(),
            stack.finish(),
        ));

        let mut unsaved = Digest::default();
        unsaved.debug(&document.history.is_changed());
        parts.push(("unsaved".into(), unsaved.finish()));
        DocumentState { parts }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::JointOverride;
    use crate::viewer::ClipEdit;

    fn demo() -> Viewer {
        Viewer::new(
            crate::rig::load_slice(crate::rig::demo::DEMO_GLB, None, "demo.glb").unwrap(),
            None,
        )
    }

    #[test]
    fn an_edit_changes_the_parts_it_touches_and_its_undo_gives_back_every_bit() {
        let mut viewer = demo();
        let opened = viewer.document_state();
        assert_eq!(viewer.document_state(), opened, "the same document, the same state");

        let joint = viewer.view.selected_joint.unwrap();
        viewer.set_override(
            joint,
            JointOverride::from_euler_degrees(glam::Vec3::new(0.0, 0.0, 30.0)),
        );
        viewer.end_gesture();
        assert_eq!(viewer.document_state().differences(&opened), ["pose"]);

        let name = viewer.rig().clips[1].name.clone();
        let end = viewer.rig().clips[1].duration / 2.0;
        viewer
            .edit_clip(ClipEdit::Trim {
                clip: 1,
                start: 0.0,
                end,
            })
            .unwrap();
        let differ = viewer.document_state().differences(&opened);
        assert_eq!(
            differ,
            [
                format!("clip 1 '{name}'"),
                "clip record".into(),
                "pose".into(),
                "unsaved".into()
            ]
        );

        viewer.undo();
        viewer.undo();
        assert_eq!(viewer.document_state(), opened);
    }

    #[test]
    fn a_float_one_bit_away_or_of_the_other_zero_sign_is_another_state() {
        let mut viewer = demo();
        let joint = viewer.view.selected_joint.unwrap();
        let zero = JointOverride {
            translation: glam::Vec3::new(0.0, 0.0, 0.0),
            ..JointOverride::IDENTITY
        };
        viewer.set_override(joint, zero);
        let positive = viewer.document_state();
        viewer.set_override(
            joint,
            JointOverride {
                translation: glam::Vec3::new(-0.0, 0.0, 0.0),
                ..zero
            },
        );
        // -0.0 == 0.0 as floats: the override is not even set again.
        assert_eq!(viewer.document_state(), positive);
        viewer.animation_mut().overrides[joint].translation.x = -0.0;
        assert_ne!(viewer.document_state(), positive, "the sign bit counts");
        viewer.animation_mut().overrides[joint].translation.x = f32::from_bits(1);
        assert_ne!(viewer.document_state(), positive, "one ulp counts");
    }
}
