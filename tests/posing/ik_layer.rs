//! Two-bone IK as a layer over a playing clip: Xbot walks with its left hand pinned to a point
//! in front of its chest, the rest of the body as the clip has it; a point out of reach
//! straightens the arm towards it.

use crate::common;
use crate::common::gpu;

use egui_kittest::kittest::Queryable;
use glam::Vec3;
use rigscope::anim::ik_layer::{IkGoal, IkOutcome};
use rigscope::anim::{PoseBuffers, PoseInputs, evaluate_pose};
use rigscope::rig::Rig;
use rigscope::viewer::{PoseEdit, Viewer};

fn xbot() -> Option<Rig> {
    let real = common::shared_rigs()?.join("real");
    Some(common::load_rig(&real, "Xbot.glb"))
}

fn node(rig: &Rig, name: &str) -> usize {
    rig.nodes.iter().position(|n| n.name.ends_with(name)).unwrap()
}

fn position(pose: &PoseBuffers, node: usize) -> Vec3 {
    pose.worlds[node].w_axis.truncate()
}

#[test]
fn a_hand_stays_pinned_while_the_walk_plays_and_the_rest_follows_the_clip() {
    let Some(rig) = xbot() else { return };
    let walk = rig.find_clip("walk").unwrap();
    let (hand, other_hand, foot) = (
        node(&rig, ":LeftHand"),
        node(&rig, ":RightHand"),
        node(&rig, ":LeftFoot"),
    );
    let (arm, forearm) = (node(&rig, ":LeftArm"), node(&rig, ":LeftForeArm"));
    let mut plain = PoseBuffers::new(&rig);
    evaluate_pose(&rig, &PoseInputs::clip_at(Some(walk), 0.0), &mut plain);
    // A point a little in front of the left shoulder, well within the arm's reach.
    let shoulder = position(&plain, arm);
    let reach =
        (position(&plain, forearm) - shoulder).length() + (position(&plain, hand) - position(&plain, forearm)).length();
    let target = shoulder + Vec3::new(0.0, -0.3, 0.5) * reach;
    let goal = IkGoal {
        soften: 1.0,
        ..IkGoal::for_end_joint(&rig.nodes, hand, target).unwrap()
    };
    let mut pinned = PoseBuffers::new(&rig);
    let duration = rig.clips[walk].duration;
    for k in 0..=8 {
        let time = duration * k as f32 / 8.0;
        evaluate_pose(&rig, &PoseInputs::clip_at(Some(walk), time), &mut plain);
        let inputs = PoseInputs {
            ik: std::slice::from_ref(&goal),
            ..PoseInputs::clip_at(Some(walk), time)
        };
        evaluate_pose(&rig, &inputs, &mut pinned);
        assert_eq!(pinned.ik_outcomes, [IkOutcome::Reached], "at {time}");
        // The hand is where it was asked to be, wherever the walk swings the shoulder.
        let miss = (position(&pinned, hand) - goal.target).length() / reach;
        assert!(miss < 1e-4, "at {time}: the hand misses by {miss} of the arm's reach");
        // Bones keep their lengths; the other hand and the feet are the clip's.
        for (a, b) in [(arm, forearm), (forearm, hand)] {
            let (got, want) = (
                (position(&pinned, b) - position(&pinned, a)).length(),
                (position(&plain, b) - position(&plain, a)).length(),
            );
            assert!(
                (got - want).abs() < 1e-5 * reach,
                "at {time}: a bone {got} long, {want} in the clip"
            );
        }
        for joint in [other_hand, foot, arm] {
            assert!((position(&pinned, joint) - position(&plain, joint)).length() < 1e-6 * reach);
        }
    }
}

#[test]
fn a_target_out_of_reach_straightens_the_arm_towards_it() {
    let Some(rig) = xbot() else { return };
    let (hand, arm, forearm) = (
        node(&rig, ":LeftHand"),
        node(&rig, ":LeftArm"),
        node(&rig, ":LeftForeArm"),
    );
    let mut pose = PoseBuffers::new(&rig);
    let shoulder = position(&pose, arm);
    let target = shoulder + Vec3::new(0.0, 0.0, 10.0);
    let goal = IkGoal::for_end_joint(&rig.nodes, hand, target).unwrap();
    let inputs = PoseInputs {
        ik: std::slice::from_ref(&goal),
        ..PoseInputs::clip_at(None, 0.0)
    };
    evaluate_pose(&rig, &inputs, &mut pose);
    assert_eq!(pose.ik_outcomes, [IkOutcome::NotReached]);
    let toward = (target - shoulder).normalize();
    for (a, b) in [(arm, forearm), (forearm, hand)] {
        let bone = (position(&pose, b) - position(&pose, a)).normalize();
        assert!(
            bone.angle_between(toward) < 0.02,
            "{} rad off",
            bone.angle_between(toward)
        );
    }
    // A goal whose joints are not a chain does nothing.
    let broken = IkGoal { mid: hand, ..goal };
    let inputs = PoseInputs {
        ik: std::slice::from_ref(&broken),
        ..PoseInputs::clip_at(None, 0.0)
    };
    evaluate_pose(&rig, &inputs, &mut pose);
    assert_eq!(pose.ik_outcomes, [IkOutcome::Skipped]);
}

#[test]
fn the_viewer_plays_a_clip_with_its_ik_goals() {
    let Some(rig) = xbot() else { return };
    let hand = node(&rig, ":LeftHand");
    let mut viewer = Viewer::new(rig, None);
    let walk = viewer.rig().find_clip("walk").unwrap();
    viewer.select_clip(Some(walk));
    let start = viewer.pose().worlds[hand].w_axis.truncate();
    let target = start + Vec3::new(0.0, 0.05, 0.05);
    let goal = IkGoal::for_end_joint(&viewer.rig().nodes, hand, target).unwrap();
    viewer.edit_pose(PoseEdit::AddIkGoal(IkGoal { soften: 1.0, ..goal }));
    let pose = viewer.pose();
    assert_eq!(pose.ik_outcomes, [IkOutcome::Reached]);
    assert!((pose.worlds[hand].w_axis.truncate() - target).length() < 1e-4);
}

#[test]
fn the_layers_panel_pins_the_selected_hand_and_says_it_reaches() {
    let Some(rig) = xbot() else { return };
    let (hand, forearm) = (node(&rig, ":LeftHand"), node(&rig, ":LeftForeArm"));
    let mut viewer = Viewer::new(rig, None);
    // The elbow bent 60° by hand: a hand pinned where it is then lies within the arm's reach (a
    // straight arm's hand is at full stretch, where the goal softens and does not reach).
    viewer.set_override(
        forearm,
        rigscope::anim::JointOverride::from_euler_degrees(Vec3::new(0.0, 60.0, 0.0)),
    );
    viewer.view.selected_joint = Some(hand);
    let mut harness = egui_kittest::Harness::builder()
        .with_size(egui::vec2(500.0, 1400.0))
        .build_ui_state(
            |ui, viewer: &mut Viewer| rigscope::ui::layers::layers_panel(ui, viewer),
            viewer,
        );
    harness.run();
    harness.get_by_label("Pin the selected joint here").click();
    harness.run();
    harness.run();
    let goals = harness.state().animation().ik_goals.clone();
    assert_eq!(goals.len(), 1);
    assert_eq!(goals[0].end, hand);
    harness.get_by_label("reached");
    harness.get_by_label("Remove").click();
    harness.run();
    assert!(harness.state().animation().ik_goals.is_empty());
}

#[test]
fn render_pulls_a_hand_to_the_ik_target_and_names_a_joint_that_is_not_a_chain_end() {
    let Some(real) = common::shared_rigs().map(|r| r.join("real")) else {
        return;
    };
    let dir = common::temp_dir("render-ik");
    let xbot = real.join("Xbot.glb");
    let render = |extra: &[&str], out: &std::path::Path| {
        let mut args = vec![
            "render",
            xbot.to_str().unwrap(),
            "--clip",
            "idle",
            "--time",
            "0.5",
            "--out",
        ];
        args.push(out.to_str().unwrap());
        args.extend_from_slice(extra);
        common::run_rigscope(&args)
    };
    if gpu::gpu_or_skip().is_none() {
        return;
    }
    let (plain, pinned) = (dir.join("plain.png"), dir.join("pinned.png"));
    let (code, _, stderr) = render(&[], &plain);
    assert_eq!(code, Some(0), "{stderr}");
    // The left hand raised over the head (Xbot stands about 1.8 m tall).
    let (code, _, stderr) = render(&["--ik", "mixamorig:LeftHand=0.3,2.0,0.1"], &pinned);
    assert_eq!(code, Some(0), "{stderr}");
    assert_ne!(
        std::fs::read(&plain).unwrap(),
        std::fs::read(&pinned).unwrap(),
        "the arm moved"
    );
    let (code, _, stderr) = render(&["--ik", "mixamorig:Hips=0,1,0"], &dir.join("bad.png"));
    assert_ne!(code, Some(0));
    assert!(stderr.contains("not the end of a two-bone chain"), "{stderr}");
    assert!(!dir.join("bad.png").exists());
}

/// An IK goal set as an edit stays through loading clips (they arrive as an edit of their own,
/// over it), and still holds the hand where it was.
#[test]
fn an_ik_goal_stays_when_clips_are_loaded() {
    let Some(folder) = common::shared_folder("rigs/real") else {
        return;
    };
    let mut viewer = Viewer::new(Rig::default(), None);
    viewer.open_now(&folder.join("Xbot.glb")).unwrap();
    let hand = node(viewer.rig(), ":LeftHand");
    let walk = viewer.rig().find_clip("walk").unwrap();
    viewer.select_clip(Some(walk));
    let target = viewer.pose().worlds[hand].w_axis.truncate() + Vec3::new(0.0, 0.05, 0.05);
    let goal = IkGoal::for_end_joint(&viewer.rig().nodes, hand, target).unwrap();
    viewer.edit_pose(PoseEdit::AddIkGoal(IkGoal { soften: 1.0, ..goal }));
    viewer.end_gesture();
    let own_clips = viewer.rig().clips.len();

    viewer.load_clips_from(folder.join("Xbot.glb"));
    viewer.wait_for_load();
    assert_eq!(viewer.diagnostics.error, None);
    assert_eq!(viewer.rig().clips.len(), 2 * own_clips);
    assert_eq!(viewer.animation().ik_goals.len(), 1, "the goal stays");
    assert_eq!(viewer.player().clip, Some(walk), "playback stays on its clip");
    let pose = viewer.pose();
    assert_eq!(pose.ik_outcomes, [IkOutcome::Reached]);
    assert!((pose.worlds[hand].w_axis.truncate() - target).length() < 1e-4);

    assert!(viewer.undo().is_some(), "the clips go");
    assert_eq!(viewer.rig().clips.len(), own_clips);
    assert_eq!(viewer.animation().ik_goals.len(), 1, "the goal is the edit under them");
    assert_eq!(viewer.history().undo_label(), Some("add IK goal"));
}

#[test]
fn a_pick_on_a_finger_or_a_toe_gives_the_hand_or_the_foot_and_a_rig_without_human_names_its_nearest_chain_end() {
    use rigscope::retarget::chain_end_for_pick;
    let Some(rig) = xbot() else { return };
    let under = |joint: usize, ancestor: usize| {
        std::iter::successors(Some(joint), |&n| rig.nodes[n].parent).any(|n| n == ancestor)
    };
    for end in [":LeftHand", ":RightHand", ":LeftFoot", ":RightFoot"] {
        let end = node(&rig, end);
        let below: Vec<usize> = (0..rig.nodes.len()).filter(|&n| under(n, end)).collect();
        // The hands' 20 finger joints and the hand; the feet's toe, its end and the foot.
        assert!(below.len() >= 3, "{}", rig.nodes[end].name);
        for joint in below {
            assert_eq!(chain_end_for_pick(&rig, joint), Some(end), "{}", rig.nodes[joint].name);
        }
    }
    let forearm = node(&rig, ":LeftForeArm");
    assert_eq!(
        chain_end_for_pick(&rig, forearm),
        Some(forearm),
        "above the hand, the joint picked pulls its own chain"
    );

    // Names that say nothing: a finger joint is the end of the chain of the two finger joints above it.
    let mut unnamed = rig.clone();
    for (i, joint) in unnamed.nodes.iter_mut().enumerate() {
        joint.name = format!("bone{i}");
    }
    let finger = node(&rig, ":LeftHandIndex3");
    assert_eq!(chain_end_for_pick(&unnamed, finger), Some(finger));

    // The demo's chain joint0 → … → joint5: joint2 is the first with two bones above it.
    let demo = common::load_demo();
    let find = |name: &str| demo.find_node(name).unwrap();
    for (picked, end) in [
        ("joint5", Some("joint5")),
        ("joint2", Some("joint2")),
        ("joint1", None),
        ("joint0", None),
    ] {
        assert_eq!(chain_end_for_pick(&demo, find(picked)), end.map(find), "{picked}");
    }
}
