#!/usr/bin/env bash
# Checks the Blender profile against Blender itself: the engine-rule fixture (vertex by vertex)
# and each shared glTF rig (nearest vertices: the importer splits and merges them), posed in
# Blender's glTF importer and armature at TIME, against `rigscope export --engine blender`.
# Needs Blender 3.4 and numpy (apt-get install blender python3-numpy).
# Usage: tools/engines/blender.sh [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-target/engines}"
rigscope="${RIGSCOPE:-target/release/rigscope}"
blender="${BLENDER:-blender}"
shared="${SHARED:-$here/../../../shared}"
time="${TIME:-0.4}"
python="${PYTHON:-/usr/bin/python3}"
mkdir -p "$out"

"$python" "$here/fixture.py" "$out/fixture.gltf" >"$out/fixture.cases"
"$rigscope" export "$out/fixture.gltf" --engine blender --clip 0 --time 1 --out "$out/fixture.rigscope.obj" >/dev/null
"$blender" -b --factory-startup --python "$here/blender_vertices.py" -- "$out/fixture.gltf" 1 2>/dev/null \
    | grep '^v ' >"$out/fixture.blender.txt"
"$python" - "$out/fixture.blender.txt" "$out/fixture.rigscope.obj" "$out/fixture.cases" <<'PY'
import sys
blender = [tuple(map(float, l.split()[2:5])) for l in open(sys.argv[1])]
rigscope = [tuple(map(float, l.split()[1:4])) for l in open(sys.argv[2]) if l.startswith("v ")]
cases = [l.split(": ", 1)[1].strip() for l in open(sys.argv[3])]
assert len(blender) == len(rigscope), (len(blender), len(rigscope))
for v, (b, r) in enumerate(zip(blender, rigscope)):
    d = sum((x - y) ** 2 for x, y in zip(b, r)) ** 0.5
    name = cases[v] if v < len(cases) else "padding"
    print(f"fixture vertex {v} ({name}): Blender {b}, Rigscope {r}, {d:.2e} apart")
PY

for rig in "$shared"/rigs/*.gl* "$shared"/rigs/real/*.gl*; do
    name="$(basename "$rig")"
    "$rigscope" export "$rig" --engine blender --clip 0 --time "$time" --out "$out/$name.rigscope.obj" >/dev/null 2>&1 \
        || { echo "$name: no pose from rigscope"; continue; }
    "$blender" -b --factory-startup --python "$here/../importers/blender_pose.py" -- "$rig" "$time" \
        "$out/$name.blender.npy" >"$out/$name.blender.log" 2>&1 || { echo "$name: Blender failed"; continue; }
    echo "$name: $("$python" "$here/../importers/compare.py" "$out/$name.blender.npy" "$out/$name.rigscope.obj")"
done
