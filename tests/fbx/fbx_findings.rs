//! The report's FBX findings, each on a file known to have (or lack) what it names: hand-written
//! FBX files and shared ones whose content was read by hand (fbx/SOURCES.md, the ASCII text).

use crate::common;

use crate::common::fbx::{bind_pose_at, many_cluster_fbx, one_cluster_fbx};
use crate::common::shared_rigs;
use rigscope::report::{Finding, FindingCode, RigReport, Severity};
use rigscope::rig::{Rig, load_slice};

fn findings(rig: &Rig, code: FindingCode) -> Vec<Finding> {
    RigReport::new(rig)
        .findings
        .into_iter()
        .filter(|f| f.code == code)
        .collect()
}

fn only(rig: &Rig, code: FindingCode) -> Finding {
    let mut found = findings(rig, code);
    assert_eq!(found.len(), 1, "{}: {code} findings: {found:?}", rig.name);
    found.remove(0)
}

fn hand_written(text: &str) -> Rig {
    load_slice(text.as_bytes(), None, "hand.fbx").expect("the hand-written file loads")
}

#[test]
fn a_bone_without_a_bind_pose_is_named_and_one_that_disagrees_is_a_warning() {
    // No Pose object at all: the cluster alone says where the bone was bound.
    let rig = hand_written(&one_cluster_fbx("", ""));
    let missing = only(&rig, FindingCode::FbxBindPoseMissing);
    assert_eq!(missing.severity, Severity::Info);
    assert!(missing.message.contains("'Bone'"), "{}", missing.message);
    assert_eq!(missing.nodes, vec![rig.skins[0].joints[0]]);
    assert!(findings(&rig, FindingCode::FbxBindPoseInconsistent).is_empty());

    // A bind pose where the cluster says: nothing to report.
    let rig = hand_written(&one_cluster_fbx(&bind_pose_at(10.0), ""));
    assert!(findings(&rig, FindingCode::FbxBindPoseMissing).is_empty());
    assert!(findings(&rig, FindingCode::FbxBindPoseInconsistent).is_empty());

    // The bind pose 5 cm higher than the cluster's link: 0.05 m apart.
    let rig = hand_written(&one_cluster_fbx(&bind_pose_at(15.0), ""));
    let inconsistent = only(&rig, FindingCode::FbxBindPoseInconsistent);
    assert_eq!(inconsistent.severity, Severity::Warning);
    assert!(inconsistent.message.contains("0.0500 m"), "{}", inconsistent.message);
}

#[test]
fn nine_influences_keep_the_eight_heaviest_renormalized_with_a_finding() {
    let rig = hand_written(&many_cluster_fbx(9));
    let finding = only(&rig, FindingCode::FbxInfluencesOver8);
    assert!(finding.message.contains("3 control points"), "{}", finding.message);
    // Weights k/45 for k = 1..9: the lightest (1/45) goes, the rest are k/44.
    let influences = rig.meshes[0].primitives[0].influences.as_ref().expect("skinned");
    for v in 0..3 {
        let mut kept: Vec<(u16, f32)> = influences.of_vertex(v).filter(|&(_, w)| w > 0.0).collect();
        kept.sort_by(|a, b| a.1.total_cmp(&b.1));
        assert_eq!(kept.len(), 8, "vertex {v}: {kept:?}");
        for (i, &(joint, weight)) in kept.iter().enumerate() {
            let k = i + 2;
            assert_eq!(
                rig.nodes[rig.skins[0].joints[joint as usize]].name,
                format!("Bone{}", k - 1)
            );
            assert!(
                (f64::from(weight) - k as f64 / 44.0).abs() < 1e-6,
                "vertex {v}: {kept:?}"
            );
        }
    }
    // Eight influences are kept as they are.
    assert!(findings(&hand_written(&many_cluster_fbx(8)), FindingCode::FbxInfluencesOver8).is_empty());
}

#[test]
fn shared_files_report_their_system_clusters_on_nulls_scale_and_textures() {
    let Some(dir) = shared_rigs() else { return };
    let dir = dir.join("fbx");

    // 3ds Max: Z up, centimetres (SOURCES.md).
    let max = common::load_rig(&dir, "max_transformed_skin_6100_ascii.fbx");
    let system = only(&max, FindingCode::FbxSourceSystem);
    assert!(
        system.message.contains("up PositiveZ") && system.message.contains("unit 0.01 m"),
        "{}",
        system.message
    );
    let maya = common::load_rig(&dir, "maya_kenney_character_7700_binary.fbx");
    assert!(
        only(&maya, FindingCode::FbxSourceSystem)
            .message
            .contains("up PositiveY")
    );

    // Softimage: all 67 bones are Null models (SOURCES.md); its GIF texture, named by an
    // absolute Windows path, is found beside the file.
    let xsi = common::load_rig(&dir, "xsi_man_skinning.fbx");
    let nulls = only(&xsi, FindingCode::FbxClusterNotBone);
    assert_eq!(nulls.nodes.len(), 67, "{}", nulls.message);
    assert!(findings(&xsi, FindingCode::FbxTextureNotFound).is_empty());
    assert_eq!(xsi.textures.len(), 2);
    assert!(
        xsi.textures.iter().all(|t| (t.width, t.height) != (1, 1)),
        "a texture is the placeholder"
    );
    assert!(findings(&maya, FindingCode::FbxClusterNotBone).is_empty());

    // The same bytes without their folder: the GIF cannot be found.
    let bytes = std::fs::read(dir.join("xsi_man_skinning.fbx")).unwrap();
    let alone = load_slice(&bytes, None, "xsi_man_skinning.fbx").expect("loads without its folder");
    let not_found = findings(&alone, FindingCode::FbxTextureNotFound);
    assert_eq!(not_found.len(), 2, "{not_found:?}");
    assert!(
        not_found[0].message.contains("Char_UV_Texture.gif"),
        "{}",
        not_found[0].message
    );

    // Maya's sausage: joint2, joint3 and joint4 have InheritType 2 (ignore the parent's scale)
    // under joints whose scale is animated non-uniformly (Lcl Scaling "AL7"), read in the text.
    let sausage = common::load_rig(&dir, "maya_game_sausage_7500_ascii_combined.fbx");
    let scale = only(&sausage, FindingCode::FbxInheritedScale);
    let names: Vec<&str> = scale.nodes.iter().map(|&n| sausage.nodes[n].name.as_str()).collect();
    assert_eq!(names, ["joint1", "joint2", "joint3"]);
    assert!(findings(&maya, FindingCode::FbxInheritedScale).is_empty());
}
