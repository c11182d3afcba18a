#!/usr/bin/env bash
# Builds the Windows x86-64 zip, cross-compiled with the MinGW toolchain (x86_64-pc-windows-gnu):
# target/package/rigscope-VERSION-windows-x86_64.zip with rigscope.exe (the icon and version
# information built in, the C and C++ runtimes linked statically: no DLLs beyond Windows' own), the
# licenses, the third-party notices and a README.txt.
#
#   bash packaging/windows.sh [--out DIR] [--keep-debug]
#
#   --out DIR      where the zip goes (default: target/package under cargo's target folder)
#   --keep-debug   keep the line tables the release profile writes (stripped otherwise)
#
# Needs bash, python3, cargo ($CARGO when set) with the x86_64-pc-windows-gnu target
# (rustup target add x86_64-pc-windows-gnu), MinGW-w64's C and C++ compilers, windres, objdump and
# strip (Debian: gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64) and rsvg-convert (Debian:
# librsvg2-bin) for the icon. Cargo's target folder is CARGO_TARGET_DIR's when set, as for cargo.
set -euo pipefail

fail() {
    echo "packaging/windows.sh: $*" >&2
    exit 1
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=""
keep_debug=0
while [ $# -gt 0 ]; do
    case "$1" in
        --out)
            [ $# -ge 2 ] || fail "--out needs a folder"
            out=$2
            shift 2
            ;;
        --keep-debug)
            keep_debug=1
            shift
            ;;
        -h | --help)
            sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *) fail "unknown argument '$1' (see --help)" ;;
    esac
done

target=x86_64-pc-windows-gnu
mingw=x86_64-w64-mingw32
cargo=${CARGO:-cargo}
for tool in python3 "$cargo" rsvg-convert "$mingw-gcc" "$mingw-g++" "$mingw-windres" "$mingw-objdump" "$mingw-strip"; do
    command -v "$tool" >/dev/null || fail "$tool is needed and not on PATH (see --help)"
done

cd "$root"
version=$(awk -F'"' '/^\[/ { section = $0 } section == "[package]" && /^version *=/ { print $2; exit }' Cargo.toml)
[ -n "$version" ] || fail "no version in the [package] section of Cargo.toml"
rustc=${RUSTC:-rustc}
[ -d "$("$rustc" --print target-libdir --target "$target" 2>/dev/null)" ] ||
    fail "Rust's standard library for $target is not installed (rustup target add $target)"

target_dir=$("$cargo" metadata --format-version 1 --no-deps --locked |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
[ -n "$out" ] || out=$target_dir/package
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The icon: a PNG per size Windows asks for, rendered from the SVG (small sizes drawn at their size
# rather than scaled down from 256), packed into one .ico that build.rs compiles into the exe.
icon_dir=$target_dir/$target/icon
rm -rf "$icon_dir"
mkdir -p "$icon_dir"
pngs=()
for size in 16 20 24 32 40 48 64 96 128 256; do
    rsvg-convert -w "$size" -h "$size" assets/icon/rigscope.svg -o "$icon_dir/rigscope-$size.png"
    pngs+=("$icon_dir/rigscope-$size.png")
done
python3 packaging/windows/make_ico.py --out "$icon_dir/rigscope.ico" "${pngs[@]}"

# No MinGW runtime DLLs for the zip: +crt-static links libgcc and winpthreads into the exe, and
# CXXSTDLIB_STATIC makes the cc crate link libstdc++ (meshoptimizer is C++) statically too.
echo "packaging/windows.sh: building the release binary for $target" >&2
RIGSCOPE_WINDOWS_ICON=$icon_dir/rigscope.ico \
    CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS="${CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS:-} -C target-feature=+crt-static" \
    CXXSTDLIB_STATIC_x86_64_pc_windows_gnu=1 \
    "$cargo" build --release --locked --target "$target" --bin rigscope
binary=$target_dir/$target/release/rigscope.exe
[ -f "$binary" ] || fail "cargo wrote no $binary"
# A PE executable ("MZ", then "PE\0\0" at the offset in bytes 60-63) for x86-64 (machine 0x8664).
python3 - "$binary" <<'EOF' || fail "$binary is not an x86-64 Windows executable"
import struct, sys
data = open(sys.argv[1], "rb").read(4096)
pe = struct.unpack_from("<I", data, 60)[0]
sys.exit(0 if data[:2] == b"MZ" and data[pe:pe + 4] == b"PE\0\0" and struct.unpack_from("<H", data, pe + 4)[0] == 0x8664 else 1)
EOF

name=rigscope-$version-windows-x86_64
stage=$out/$name
archive=$out/$name.zip
rm -rf "$stage" "$archive"
mkdir -p "$stage"
cp "$binary" "$stage/rigscope.exe"
if [ "$keep_debug" = 0 ]; then
    "$mingw-strip" --strip-debug "$stage/rigscope.exe"
fi

# Only Windows' own DLLs: a MinGW runtime DLL here would be missing on the user's machine.
dlls=$("$mingw-objdump" -p "$stage/rigscope.exe" | awk '/DLL Name:/ { print $3 }' | sort -u)
echo "packaging/windows.sh: rigscope.exe imports from" $dlls >&2
if grep -Eiq '^(libgcc|libstdc\+\+|libwinpthread|libssp|libgomp)' <<<"$dlls"; then
    fail "rigscope.exe needs a MinGW runtime DLL: $(grep -Ei '^lib' <<<"$dlls" | tr '\n' ' ')"
fi
"$mingw-objdump" -h "$stage/rigscope.exe" | grep -q ' \.rsrc ' || fail "rigscope.exe has no resources (the icon)"

sed "s/@VERSION@/$version/" packaging/windows/README.txt >"$stage/README.txt"
cp LICENSE-MIT "$stage/LICENSE-MIT.txt"
cp LICENSE-APACHE "$stage/LICENSE-APACHE.txt"
python3 packaging/third_party_notices.py --target "$target" --out "$stage/THIRD_PARTY_NOTICES.txt"

# Text files with Windows line ends, for Notepad before Windows 10's; entries sorted and dated
# 1980-01-01 so the same inputs give the same zip.
python3 - "$out" "$name" <<'EOF'
import sys, zipfile
from pathlib import Path
out, name = Path(sys.argv[1]), sys.argv[2]
with zipfile.ZipFile(out / f"{name}.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
    for path in sorted((out / name).iterdir()):
        data = path.read_bytes()
        if path.suffix == ".txt":
            data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        info = zipfile.ZipInfo(f"{name}/{path.name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, data)
EOF
rm -rf "$stage"
echo "packaging/windows.sh: wrote $archive ($(du -h "$archive" | cut -f1))" >&2
python3 -c 'import sys, zipfile; [print(f"{i.file_size:>10}  {i.filename}", file=sys.stderr) for i in zipfile.ZipFile(sys.argv[1]).infolist()]' "$archive"
echo "$archive"
