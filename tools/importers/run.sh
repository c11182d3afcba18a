#!/usr/bin/env bash
# Plays each shared FBX file's glTF conversion (`rigscope clips FILE.fbx --out`) in Blender's
# glTF importer and compares it with Rigscope's own pose of the FBX at the same time: a second
# opinion on whether a file Rigscope writes plays the same elsewhere. Needs Blender 3.4 and numpy
# (apt-get install blender python3-numpy). Usage: tools/importers/run.sh [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-target/importers}"
rigscope="${RIGSCOPE:-target/release/rigscope}"
blender="${BLENDER:-blender}"
shared="${SHARED:-$here/../../../shared}"
time="${TIME:-0.4}"
# Debian's numpy is installed for the system Python.
python="${PYTHON:-/usr/bin/python3}"
mkdir -p "$out"
for fbx in "$shared"/rigs/fbx/*.fbx; do
    name="$(basename "$fbx" .fbx)"
    glb="$out/$name.glb"
    if ! "$rigscope" clips "$fbx" --out "$glb" >"$out/$name.clips.log" 2>&1; then
        echo "$name: not converted (see $out/$name.clips.log)"
        continue
    fi
    clip=0
    if ! "$rigscope" export "$fbx" --clip "$clip" --time "$time" --out "$out/$name.rigscope.obj" >/dev/null 2>&1; then
        "$rigscope" export "$fbx" --out "$out/$name.rigscope.obj" >/dev/null 2>&1 || { echo "$name: no pose"; continue; }
    fi
    "$blender" -b --factory-startup --python "$here/blender_pose.py" -- "$glb" "$time" "$out/$name.blender.npy" \
        >"$out/$name.blender.log" 2>&1 || { echo "$name: Blender failed (see $out/$name.blender.log)"; continue; }
    echo "$name: $("$python" "$here/compare.py" "$out/$name.blender.npy" "$out/$name.rigscope.obj")"
done
