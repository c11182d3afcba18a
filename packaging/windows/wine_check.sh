#!/usr/bin/env bash
# Checks the Windows zip under Wine on a Linux machine without a GPU: unpacks it, runs
# `rigscope.exe --version`, renders the demo rig with `rigscope.exe render demo` through Wine's
# Vulkan (winevulkan, which hands the calls to the host's Vulkan driver: Mesa's lavapipe here) and
# compares the PNG with the Linux build's render of the same command.
#
#   bash packaging/windows/wine_check.sh ZIP LINUX_RIGSCOPE [-- RENDER_ARGS...]
#
#   ZIP             the zip packaging/windows.sh wrote
#   LINUX_RIGSCOPE  a Linux rigscope binary built from the same commit
#   RENDER_ARGS     more arguments for both renders (e.g. --view weights)
#
# Exits with 0 when both renders are the same image, 1 when they differ, 2 when something did not
# run. Needs wine64 (or wine), xvfb-run (winevulkan needs an X display: Xvfb), python3, Mesa's
# Vulkan drivers, and x86_64-w64-mingw32-gcc when Wine lacks bcryptprimitives.dll (Wine 8.0: see
# packaging/windows/wine/bcryptprimitives.c). Pillow, when installed, measures a difference.
set -euo pipefail

fail() {
    echo "wine_check: $*" >&2
    exit 2
}

[ $# -ge 2 ] || fail "usage: wine_check.sh ZIP LINUX_RIGSCOPE [-- RENDER_ARGS...] (see the script's header)"
zip=$(realpath "$1")
linux=$(realpath "$2")
shift 2
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

wine=$(command -v wine64 || command -v wine || { [ -x /usr/lib/wine/wine64 ] && echo /usr/lib/wine/wine64; } || true)
[ -n "$wine" ] || fail "wine is not installed (Debian: wine64)"
for tool in xvfb-run python3; do
    command -v "$tool" >/dev/null || fail "$tool is needed and not on PATH"
done

wineserver=$(command -v wineserver || echo "$(dirname "$wine")/wineserver")
work=$(mktemp -d)
trap '"$wineserver" -k 2>/dev/null || true; rm -rf "$work"' EXIT
export WINEPREFIX=$work/prefix WINEDEBUG=-all
python3 -m zipfile -e "$zip" "$work/unpacked"
exe=$(echo "$work"/unpacked/*/rigscope.exe)
[ -f "$exe" ] || fail "no rigscope.exe in $zip"
windows_path() { echo "Z:$1" | tr / '\\'; }

echo "wine_check: $("$wine" --version 2>/dev/null || echo wine), $zip" >&2
if ! version=$("$wine" "$exe" --version 2>/dev/null); then
    # Wine 8.0 has no bcryptprimitives.dll: put the stand-in beside the exe and try again.
    command -v x86_64-w64-mingw32-gcc >/dev/null ||
        fail "rigscope.exe --version failed under Wine, and x86_64-w64-mingw32-gcc is missing to build the bcryptprimitives.dll stand-in"
    echo "wine_check: rigscope.exe did not start; trying again with the bcryptprimitives.dll stand-in" >&2
    x86_64-w64-mingw32-gcc -O2 -shared -static-libgcc -o "$(dirname "$exe")/bcryptprimitives.dll" \
        "$here/wine/bcryptprimitives.c" "$here/wine/bcryptprimitives.def" -ladvapi32
    version=$("$wine" "$exe" --version) || fail "rigscope.exe --version failed under Wine"
fi
echo "wine_check: rigscope.exe --version: $version" >&2

"$linux" render demo --out "$work/linux.png" "$@" || fail "the Linux render failed"
# A fresh server, so that the X display xvfb-run opens is the one Wine's driver connects to.
"$wineserver" -k 2>/dev/null || true
WGPU_BACKEND=vulkan xvfb-run -a "$wine" "$exe" render demo --out "$(windows_path "$work/wine.png")" "$@" ||
    fail "rigscope.exe render failed under Wine (exit status $?)"
[ -f "$work/wine.png" ] || fail "rigscope.exe render wrote no PNG"

python3 - "$work/linux.png" "$work/wine.png" <<'EOF'
import sys
linux, wine = (open(path, "rb").read() for path in sys.argv[1:3])
if linux == wine:
    print(f"wine_check: the same PNG, byte for byte ({len(linux)} bytes)", file=sys.stderr)
    sys.exit(0)
try:
    from PIL import Image
except ImportError:
    print("wine_check: the PNGs differ (install Pillow to measure by how much)", file=sys.stderr)
    sys.exit(1)
a, b = (Image.open(path).convert("RGBA") for path in sys.argv[1:3])
if a.size != b.size:
    print(f"wine_check: different sizes: {a.size} and {b.size}", file=sys.stderr)
    sys.exit(1)
diffs = [abs(x - y) for x, y in zip(a.tobytes(), b.tobytes())]
pixels = sum(1 for i in range(0, len(diffs), 4) if any(diffs[i:i + 4]))
print(f"wine_check: pixels differ: {pixels} of {a.size[0] * a.size[1]}, channel difference max {max(diffs)}, "
      f"mean {sum(diffs) / len(diffs):.4f}", file=sys.stderr)
sys.exit(0 if pixels == 0 else 1)
EOF
