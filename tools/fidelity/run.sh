#!/usr/bin/env bash
# Renders each fidelity case with Rigscope and with Blender's Eevee under the same environment
# map and camera, compares them as the Khronos Render Fidelity tools do, and prints a table.
#
#   tools/fidelity/run.sh [OUT_DIR]        (default target/fidelity)
#
# Environment: RIGSCOPE (default ./target/release/rigscope), BLENDER (blender), SHARED
# (/work/shared, where the rigs are), SIZE (960x720), SAMPLES (Eevee's, 64), FILTER (Eevee's
# pixel filter width, Blender's default 1.5), CASES (a
# space-separated subset of the case names below).  Needs Blender 3.4 with its glTF importer,
# xvfb-run, and python3 with numpy.  Nothing here runs under `cargo test`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/target/fidelity}
rigscope=${RIGSCOPE:-$root/target/release/rigscope}
blender=${BLENDER:-blender}
shared=${SHARED:-/work/shared}
size=${SIZE:-960x720}
samples=${SAMPLES:-64}
filter=${FILTER:-1.5}
mkdir -p "$out"

python3 "$here/make_sky.py" "$out/sky.hdr"
python3 "$here/make_spheres.py" "$out/models" >/dev/null

# name | model | orbit THETA,PHI,RADIUS | target X,Y,Z | vertical fov | clip | time (s) | eevee.py flags
# Times are on the clips' keys (30 per second), so that neither renderer interpolates.
all_cases="
spheres|$out/models/spheres.gltf|0,90,4.6|0,0,0|45||0
bumps|$out/models/bumps.gltf|30,70,3.6|0,0,0|45||0
glow|$out/models/glow.gltf|-40,75,3.6|0,0,0|45||0
Michelle|$shared/corpus/rigs/Michelle.glb|20,85,2.9|0,0.85,0|40|SambaDance|1
Michelle-F0|$shared/corpus/rigs/Michelle.glb|20,85,2.9|0,0.85,0|40|SambaDance|1|--plain-specular
Soldier|$shared/corpus/rigs/Soldier.glb|145,80,2.9|0,0.9,0|40|Walk|0.5
readyplayer.me|$shared/corpus/rigs/readyplayer.me.glb|15,85,2.9|0,0.9,0|40||0
"

# Rigscope draws the skeleton over a rig in every view; where `render` has no flag to leave it
# out, the same frame is drawn in the normals view too and the pixels the two share (the
# overlay) are left out of the comparison.
if "$rigscope" render --help | grep -q -- '--no-skeleton'; then
    skeleton_flag=(--no-skeleton)
else
    skeleton_flag=()
fi

rows=()
while IFS='|' read -r name model orbit target fov clip time eevee_flags; do
    [ -n "$name" ] || continue
    if [ -n "${CASES:-}" ] && ! [[ " $CASES " == *" $name "* ]]; then
        continue
    fi
    if [ ! -f "$model" ]; then
        echo "skipping $name: $model not found" >&2
        continue
    fi
    echo "== $name" >&2
    camera=(--orbit="$orbit" --target="$target" --fov "$fov" --size "$size")
    clip_args=()
    [ -n "$clip" ] && clip_args=(--clip "$clip")
    rs=(render "$model" "${camera[@]}" "${clip_args[@]}" --time "$time" --tonemap none --exposure 0
        --light environment --environment "$out/sky.hdr" --transparent --no-grid)

    start=$(date +%s.%N)
    "$rigscope" "${rs[@]}" "${skeleton_flag[@]}" --out "$out/$name.rigscope.png" 2>"$out/$name.rigscope.log"
    rigscope_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
    probe=()
    if [ ${#skeleton_flag[@]} -eq 0 ]; then
        "$rigscope" "${rs[@]}" --view normals --out "$out/$name.probe.png" 2>>"$out/$name.rigscope.log"
        probe=(--same-in "$out/$name.probe.png")
    fi

    start=$(date +%s.%N)
    nice -n 10 xvfb-run -a "$blender" -b --factory-startup --python "$here/eevee.py" -- \
        --model "$model" --environment "$out/sky.hdr" --out "$out/$name.eevee.png" \
        --orbit="$orbit" --target="$target" --fov "$fov" --size "$size" \
        ${clip:+--clip "$clip"} --time "$time" --samples "$samples" --filter-size "$filter" $eevee_flags >"$out/$name.eevee.log" 2>&1 || {
        echo "Eevee failed on $name: see $out/$name.eevee.log" >&2
        tail -5 "$out/$name.eevee.log" >&2
        continue
    }
    eevee_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')

    row=$(python3 "$here/compare.py" "$out/$name.rigscope.png" "$out/$name.eevee.png" \
        --diff "$out/$name.diff.png" --row "$name" "${probe[@]}")
    python3 "$here/compare.py" "$out/$name.rigscope.png" "$out/$name.eevee.png" --json "${probe[@]}" >"$out/$name.json"
    rows+=("$row $(printf '%7.1fs %7.1fs' "$rigscope_s" "$eevee_s")")
done <<<"$all_cases"

echo
echo "Rigscope (--tonemap none) against Eevee ($samples samples, filter $filter px, Standard view), sky: $out/sky.hdr"
printf '%-15s %-9s %8s %8s %8s %6s %7s %7s %7s %8s %8s %8s\n' case size "dB fid" "dB union" "dB int" "dY" ">0.1" IoU "IoU~" overlay rigscope eevee
for row in "${rows[@]}"; do
    echo "$row"
done
