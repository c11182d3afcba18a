#!/usr/bin/env bash
# Plays BVH files in Blender's BVH importer and compares every joint's position at every frame
# with Rigscope's pose of the same file, in the file's own units: the CMU walk as it comes, the
# walk written back by `rigscope clips --out` in each of two rotation orders, and the walk
# carried onto Xbot and written as BVH. Needs Blender 3.4 and numpy (apt-get install blender
# python3-numpy). Usage: tools/importers/run_bvh.sh [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-target/importers}"
rigscope="${RIGSCOPE:-target/release/rigscope}"
positions="${POSITIONS:-target/release/examples/joint_positions}"
blender="${BLENDER:-blender}"
shared="${SHARED:-$here/../../../shared}"
# Debian's numpy is installed for the system Python.
python="${PYTHON:-/usr/bin/python3}"
mkdir -p "$out"
walk="$shared/corpus/motion/bvh/cmu_12_01_walk.bvh"
"$rigscope" clips "$walk" --out "$out/walk-zxy.bvh" >/dev/null
"$rigscope" clips "$walk" --out "$out/walk-yzx.bvh" --bvh-order YZX >/dev/null
"$rigscope" clips "$shared/rigs/real/Xbot.glb" --add "$walk" --clip cmu_12_01_walk \
    --out "$out/walk-on-xbot.bvh" >/dev/null 2>&1
for bvh in "$walk" "$out/walk-zxy.bvh" "$out/walk-yzx.bvh" "$out/walk-on-xbot.bvh"; do
    name="$(basename "$bvh" .bvh)"
    "$positions" "$bvh" 1 >"$out/$name.rigscope.json"
    "$blender" -b --factory-startup --python "$here/blender_bvh.py" -- "$bvh" "$out/$name.blender.json" \
        >"$out/$name.blender.log" 2>&1 || { echo "$name: Blender failed (see $out/$name.blender.log)"; continue; }
    echo "$name: $("$python" "$here/compare_bvh.py" "$out/$name.blender.json" "$out/$name.rigscope.json")"
done
