#!/usr/bin/env bash
# Checks the three.js and Babylon.js profiles against the engines themselves, run in Node (both
# skin on the CPU there): the engine-rule fixture (vertex by vertex, at the clip's end) and each
# shared rig and FBX conversion given, posed at TIME, against `rigscope export --engine`.
# Needs node and, in ENGINES_DIR (default /tmp/node-engines, outside the repository):
#   npm install three @babylonjs/core @babylonjs/loaders
# Usage: tools/engines/node_engines.sh [OUT_DIR] [RIG...]   (default rigs: the shared glTF rigs)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-target/engines}"
shift || true
rigscope="${RIGSCOPE:-target/release/rigscope}"
shared="${SHARED:-$here/../../../shared}"
time="${TIME:-0.4}"
python="${PYTHON:-/usr/bin/python3}"
export ENGINES_DIR="${ENGINES_DIR:-/tmp/node-engines}"
mkdir -p "$out"

rigs=("$@")
if [ ${#rigs[@]} -eq 0 ]; then
    rigs=("$shared"/rigs/*.gl* "$shared"/rigs/real/*.gl*)
fi

"$python" "$here/fixture.py" "$out/fixture.gltf" >"$out/fixture.cases"
for engine in three babylon; do
    "$rigscope" export "$out/fixture.gltf" --engine "$engine" --clip 0 --time 1 \
        --out "$out/fixture.$engine.obj" >/dev/null
    echo "fixture, $engine: $(node "$here/node_engines.mjs" "$engine" "$out/fixture.gltf" 0 1 \
        "$out/fixture.$engine.obj" "$out/fixture.$engine.txt" 2>"$out/fixture.$engine.log" | tail -1)"
done

# The first clip at TIME; at 0 s where it is shorter; the rest pose ("-": no clip) without one.
for rig in "${rigs[@]}"; do
    name="$(basename "$rig")"
    for engine in three babylon; do
        pose=""
        for clip_time in "0 $time" "0 0" "- 0"; do
            read -r clip at <<<"$clip_time"
            clip_args=(--time "$at")
            [ "$clip" = "-" ] || clip_args+=(--clip "$clip")
            if "$rigscope" export "$rig" --engine "$engine" "${clip_args[@]}" \
                --out "$out/$name.$engine.obj" >/dev/null 2>&1; then
                pose="$clip $at"
                break
            fi
        done
        [ -n "$pose" ] || { echo "$name, $engine: no pose from rigscope"; continue; }
        read -r clip at <<<"$pose"
        result="$(node "$here/node_engines.mjs" "$engine" "$rig" "$clip" "$at" "$out/$name.$engine.obj" \
            2>"$out/$name.$engine.log" | tail -1)" || result="$engine failed (see $out/$name.$engine.log)"
        echo "$name, $engine (clip $clip at $at s): $result"
    done
done
