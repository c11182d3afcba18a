//! The DQS mask by joint: the joints whose vertices (with their descendants') the blended
//! method skins toward dual quaternions, each vertex by its share of weight on them. Kept per
//! skeleton by joint name, so that it comes back with the rig (and in the settings).

use super::Viewer;
use super::playback::Playback;
use crate::retarget::SkeletonSignature;
use crate::skin::DqsBlend;
use crate::skin::blend::DqsMasks;
use std::sync::Arc;

impl Viewer {
    /// The DQS mask's joints (node indices, sorted); empty when the file's blend is used.
    pub fn dqs_mask(&self) -> &[usize] {
        &self.playback.dqs_mask
    }

    /// Sets the DQS mask to `joints` (nodes out of range are dropped, repeats kept once),
    /// computes each vertex's blend from it, once, and keeps it for this skeleton; an empty mask
    /// goes back to the file's blend.
    pub fn set_dqs_mask(&mut self, joints: Vec<usize>) {
        self.apply_dqs_mask(joints);
        let rig = self.rig().clone();
        let key = SkeletonSignature::of(&rig).to_string();
        let names: Vec<String> = (self.playback.dqs_mask.iter())
            .map(|&n| rig.nodes[n].name.clone())
            .collect();
        if names.is_empty() {
            self.dqs_masks.remove(&key);
        } else {
            self.dqs_masks.insert(key, names);
        }
    }

    /// The masks kept per skeleton, as the settings store them.
    pub fn dqs_masks(&self) -> &DqsMasks {
        &self.dqs_masks
    }

    /// Replaces the kept masks (from the settings) and applies the one for the shown rig.
    pub fn set_dqs_masks(&mut self, masks: DqsMasks) {
        self.dqs_masks = masks;
        self.restore_dqs_mask();
    }

    /// Applies the kept mask of the shown rig's skeleton (its joints found by name; names the
    /// rig lacks are left out), or none.
    pub(super) fn restore_dqs_mask(&mut self) {
        let rig = self.rig().clone();
        let key = SkeletonSignature::of(&rig).to_string();
        let joints = (self.dqs_masks.get(&key).into_iter().flatten())
            .filter_map(|name| rig.find_node(name))
            .collect();
        self.apply_dqs_mask(joints);
    }

    fn apply_dqs_mask(&mut self, joints: Vec<usize>) {
        let rig = std::sync::Arc::clone(self.rig());
        if apply_dqs_mask(&rig, &mut self.playback, joints) {
            self.mark_dirty();
        }
    }

    /// Each vertex's blend toward dual quaternion skinning, as the blended method uses it now.
    pub fn dqs_blend(&self) -> &Arc<DqsBlend> {
        self.playback.skinned.blend()
    }
}

/// Sets `playback`'s DQS mask to `joints` (nodes of `rig`; those out of range dropped, repeats
/// kept once) and computes each vertex's blend from it, once; an empty mask is the file's
/// blend. Returns whether the mask changed (the pose then needs skinning again).
pub(crate) fn apply_dqs_mask(rig: &crate::rig::Rig, playback: &mut Playback, mut joints: Vec<usize>) -> bool {
    joints.retain(|&j| j < rig.nodes.len());
    joints.sort_unstable();
    joints.dedup();
    if joints == playback.dqs_mask {
        return false;
    }
    let blend = if joints.is_empty() {
        DqsBlend::of_file(rig)
    } else {
        DqsBlend::of_mask(rig, &rig.subtrees(&joints))
    };
    playback.dqs_mask = joints;
    playback.skinned.set_blend(Arc::new(blend));
    true
}
