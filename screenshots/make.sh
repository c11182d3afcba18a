#!/usr/bin/env bash
# Rebuilds every image in this folder with the headless renderer. Fox.glb is read from
# ../shared/rigs (the glTF sample model; see the README for its credits).
# Every picture at 4× anti-aliasing, whatever the adapter (`--msaa auto` is off on a CPU one).
set -euo pipefail
cd "$(dirname "$0")/.."
fox=../shared/rigs/Fox.glb
render() { cargo run --release --quiet -- render --msaa 4x "$@" --size 960x540; }

render demo --clip Wave --time 0.6 --out screenshots/demo-wave.png
render "$fox" --clip Run --time 0.25 --out screenshots/fox-run.png
render "$fox" --clip Walk --time 0.4 --view weights --joint b_Spine02_03 --skeleton --out screenshots/fox-weights.png
render "$fox" --clip Walk --time 0.4 --view joints --out screenshots/fox-joints.png
render "$fox" --clip Walk --time 0.4 --view influences --out screenshots/fox-influences.png
render "$fox" --clip Walk --time 0.4 --view weight-error --out screenshots/fox-weight-error.png
render "$fox" --clip Walk --time 0.4 --view normals --out screenshots/fox-normals.png
render "$fox" --clip Survey --time 1.2 --skeleton --wireframe --joint b_Neck_04 --out screenshots/fox-skeleton.png
render "$fox" --clip Walk --time 0.4 --bend b_Head_05=0,0,-40 --bend b_Tail01_012=0,60,0 --skinning cpu --out screenshots/fox-bent-cpu.png
render "$fox" --clip Walk --time 0.4 --bend b_Neck_04=0,0,-70 --bend b_Tail01_012=0,80,0 --view deformation --out screenshots/fox-deformation.png
render "$fox" --clip Run --time 0.25 --view deformation --deformation stretch --out screenshots/fox-stretch.png
render ../shared/rigs/real/Xbot.glb --clip idle --bend mixamorig:Spine2=70,0,0 --bend mixamorig:LeftShoulder=0,0,-60 --view deformation --camera 70,15,1.8 --out screenshots/xbot-deformation.png
render ../shared/rigs/real/RobotExpressive.glb --clip Idle --view symmetry --out screenshots/robot-symmetry.png
# Physically based materials: readyplayer.me's textured avatar up close (camera placed by --orbit,
# --target and --fov); Littlest Tokyo (Glen Fox, CC BY) with its occlusion on TEXCOORD_1 and its
# emissive interiors.
render ../shared/corpus/rigs/readyplayer.me.glb --orbit 25,85,1.1 --target 0,1.45,0 --fov 30 --no-skeleton \
    --out screenshots/pbr-readyplayer-me.png
render ../shared/corpus/rigs/LittlestTokyo.glb --camera 35,25,1.3 --out screenshots/pbr-littlest-tokyo.png
# Michelle (Mixamo) in the built-in studio room: its normal, occlusion and metallic-roughness maps.
render ../shared/corpus/rigs/Michelle.glb --clip SambaDance --time 3.2 --orbit 20,80,3.2 --target 0,0.9,0 --fov 35 \
    --no-skeleton --out screenshots/pbr-michelle-room.png
# Soldier (three.js's example, no TANGENT in the file): its normal map on MikkTSpace tangents made at
# load, mid-stride; and the tangents themselves in the normals view.
render ../shared/corpus/rigs/Soldier.glb --clip Walk --time 0.5 --orbit 200,80,3.4 --target 0,0.9,0 --fov 35 \
    --no-skeleton --out screenshots/pbr-soldier.png
render ../shared/corpus/rigs/Soldier.glb --clip Walk --time 0.5 --orbit 200,80,3.4 --target 0,0.9,0 --fov 35 \
    --no-skeleton --view normals --surface-axis tangent --out screenshots/soldier-tangents.png
# A generated sphere with base colour, metallic-roughness and normal textures (no TANGENT: MikkTSpace
# at load), from the fidelity harness's models.
models=$(mktemp -d)
python3 tools/fidelity/make_spheres.py "$models"
render "$models/bumps.gltf" --orbit 20,75,3.6 --target 0,0,0 --fov 35 --no-skeleton --no-grid --out screenshots/pbr-bumps.png
rm -r "$models"
# FBX rigs: Mixamo's Samba (centimetres, converted) and Maya's kenney character.
render "../shared/rigs/fbx/Samba Dancing.fbx" --clip mixamo.com --time 4.0 --view weights --joint mixamorig:LeftArm \
    --skeleton --camera 20,12,1.6 --out screenshots/samba-fbx-weights.png
render ../shared/rigs/fbx/maya_kenney_character_7700_binary.fbx --clip "Take 001" --time 0.375 --view deformation \
    --out screenshots/kenney-fbx-deformation.png
# Weight sums before and after normalizing.
render ../shared/rigs/real/RobotExpressive.glb --clip Idle --view weight-error --out screenshots/robot-weight-sum.png
render ../shared/rigs/real/RobotExpressive.glb --clip Idle --view weight-error --fix --normalize --out screenshots/robot-weight-sum-fixed.png
# Michelle.glb's SambaDance retargeted onto ybot.glb.
render ../shared/corpus/rigs/ybot.glb --clips ../shared/corpus/rigs/Michelle.glb --clip SambaDance --time 3.2 \
    --out screenshots/ybot-samba-from-michelle.png
# Two files compared: a gltfpack copy, and a copy whose weights keep one joint each.
render "$fox" --compare ../shared/rigs/compressed/Fox.gltfpack.glb --clip Walk --time 0.72 --skeleton \
    --out screenshots/compare-fox-side.png
render "$fox" --compare ../shared/rigs/compressed/Fox.gltfpack.glb --layout overlay --clip Walk --time 0.72 \
    --out screenshots/compare-fox-overlay.png
limited=$(mktemp -d)/xbot-limit1.glb
cargo run --release --quiet -- fix ../shared/rigs/real/Xbot.glb --limit 1 --out "$limited"
render ../shared/rigs/real/Xbot.glb --compare "$limited" --view weight-difference --clip idle \
    --out screenshots/compare-xbot-weights.png
render demo --clip Twist --time 0.5 --method lbs --out screenshots/demo-twist-lbs.png
render demo --clip Twist --time 0.5 --method dqs --out screenshots/demo-twist-dqs.png
render demo --clip Twist --time 0.5 --method blended --dqs-joint joint3 --out screenshots/demo-twist-blended.png
render ../shared/rigs/real/Xbot.glb --clip idle --method blended --dqs-joint mixamorig:LeftArm --dqs-joint mixamorig:RightArm \
    --view dqs-blend --out screenshots/xbot-dqs-blend.png
# Onion skin and the bind-pose skeleton.
cargo run --release --quiet -- render --msaa 4x "$fox" --clip Run --time 0.3 --ghosts 3,3 --camera 90,10 --size 640x400 \
    --out screenshots/fox-run-ghosts.png
cargo run --release --quiet -- render --msaa 4x ../shared/rigs/real/Xbot.glb --clip walk --time 0.4 --bind-skeleton --size 480x360 \
    --out screenshots/xbot-bind-skeleton.png
# Posed by hand over the walk: feet locked, the head looking up and left, the right hand pulled up by IK.
cargo run --release --quiet -- render --msaa 4x ../shared/rigs/real/Xbot.glb --clip walk --time 0.4 --lock-feet \
    --look-at 1.2,1.9,1.5 --ik mixamorig:RightHand=-0.3,1.75,0.3 --camera 35,10 --skeleton --size 480x360 \
    --out screenshots/xbot-posed.png
# The whole window, panels included.
cargo run --release --quiet -- render --msaa 4x "$fox" --clip Walk --time 0.4 --view weights --joint b_Spine02_03 --skeleton \
    --ui --size 1280x760 --out screenshots/ui-fox-weights.png
cargo run --release --quiet -- render --msaa 4x ../shared/rigs/real/Xbot.glb --ui --audit --view deformation --size 1280x760 --out screenshots/ui-xbot-audit.png
cargo run --release --quiet -- render --msaa 4x ../shared/rigs/real/RobotExpressive.glb --clip Idle --view weight-error --ui --fix --normalize \
    --size 1280x760 --out screenshots/ui-robot-repair.png
cargo run --release --quiet -- render --msaa 4x ../shared/rigs/real/RobotExpressive.glb --clip Jump --time 0.3 --joint UpperArm.L --skeleton \
    --ui --curves --size 1280x760 --out screenshots/ui-robot-curves.png
