#!/usr/bin/env bash
# Builds the Linux x86-64 archive: target/package/rigscope-VERSION-x86_64-linux.tar.gz with the
# release binary, a desktop entry, the icon (SVG, and PNGs when rsvg-convert is installed), the
# MIME types Rigscope opens, shell completions, man pages, the licenses, the third-party notices
# and install.sh.
#
#   bash packaging/linux.sh [--binary PATH] [--out DIR] [--keep-debug]
#
#   --binary PATH  package this rigscope binary instead of building one (cargo build --release)
#   --out DIR      where the archive goes (default: target/package under cargo's target folder)
#   --keep-debug   keep the line tables the release profile writes (strip --strip-debug otherwise)
#
# Needs bash, tar, gzip, python3 and cargo ($CARGO when set), the last two for the third-party
# notices (from cargo metadata); strip (binutils) to drop the line tables; rsvg-convert (Debian:
# librsvg2-bin) for the PNG icons, which are left out, with a message, without it.
set -euo pipefail

fail() {
    echo "packaging/linux.sh: $*" >&2
    exit 1
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=""
out=""
keep_debug=0
while [ $# -gt 0 ]; do
    case "$1" in
        --binary)
            [ $# -ge 2 ] || fail "--binary needs a path"
            binary=$2
            shift 2
            ;;
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

cargo=${CARGO:-cargo}
for tool in tar gzip python3 "$cargo"; do
    command -v "$tool" >/dev/null || fail "$tool is needed and not on PATH"
done

cd "$root"
version=$(awk -F'"' '/^\[/ { section = $0 } section == "[package]" && /^version *=/ { print $2; exit }' Cargo.toml)
[ -n "$version" ] || fail "no version in the [package] section of Cargo.toml"

if [ -z "$binary" ]; then
    echo "packaging/linux.sh: building the release binary" >&2
    "$cargo" build --release --locked --bin rigscope
    target_dir=$("$cargo" metadata --format-version 1 --no-deps --locked |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    binary=$target_dir/release/rigscope
fi
[ -f "$binary" ] && [ -x "$binary" ] || fail "$binary is not an executable file"
# An x86-64 ELF executable: the ELF magic, and machine 0x3e at byte 18.
magic=$(od -An -c -N4 "$binary" | tr -d ' ')
machine=$(od -An -tx1 -j18 -N2 "$binary" | tr -d ' \n')
[ "$magic" = "177ELF" ] && [ "$machine" = "3e00" ] || fail "$binary is not an x86-64 Linux executable"

if [ -z "$out" ]; then
    out=$("$cargo" metadata --format-version 1 --no-deps --locked |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/package
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

name=rigscope-$version-x86_64-linux
stage=$out/$name
archive=$out/$name.tar.gz
rm -rf "$stage" "$archive"
mkdir -p "$stage/bin" "$stage/share/applications" "$stage/share/mime/packages" \
    "$stage/share/icons/hicolor/scalable/apps" "$stage/share/man/man1" \
    "$stage/share/bash-completion/completions" "$stage/share/zsh/site-functions" \
    "$stage/share/fish/vendor_completions.d"

install -m755 "$binary" "$stage/bin/rigscope"
# The release profile keeps line tables (file and line in backtraces), which make the binary five
# times larger; the package keeps the symbols (function names in backtraces) and drops the rest.
if [ "$keep_debug" = 0 ]; then
    if command -v strip >/dev/null; then
        strip --strip-debug "$stage/bin/rigscope"
    else
        echo "packaging/linux.sh: strip is not installed (binutils): the binary keeps its debug line tables" >&2
    fi
fi
"$stage/bin/rigscope" --version >/dev/null || fail "$binary --version failed"
install -m644 packaging/linux/rigscope.desktop "$stage/share/applications/rigscope.desktop"
install -m644 packaging/linux/rigscope.xml "$stage/share/mime/packages/rigscope.xml"
install -m644 assets/icon/rigscope.svg "$stage/share/icons/hicolor/scalable/apps/rigscope.svg"
if command -v rsvg-convert >/dev/null; then
    for size in 48 128 256; do
        mkdir -p "$stage/share/icons/hicolor/${size}x$size/apps"
        rsvg-convert -w "$size" -h "$size" assets/icon/rigscope.svg \
            -o "$stage/share/icons/hicolor/${size}x$size/apps/rigscope.png"
    done
else
    echo "packaging/linux.sh: rsvg-convert is not installed (Debian: librsvg2-bin): the archive has" \
        "the SVG icon only, no PNGs" >&2
fi

"$stage/bin/rigscope" completions bash >"$stage/share/bash-completion/completions/rigscope"
"$stage/bin/rigscope" completions zsh >"$stage/share/zsh/site-functions/_rigscope"
"$stage/bin/rigscope" completions fish >"$stage/share/fish/vendor_completions.d/rigscope.fish"
"$stage/bin/rigscope" man --out "$stage/share/man/man1"
compgen -G "$stage/share/man/man1/*.1" >/dev/null || fail "rigscope man wrote no pages"
gzip -9n "$stage"/share/man/man1/*.1

install -m644 LICENSE-MIT LICENSE-APACHE README.md "$stage/"
python3 packaging/third_party_notices.py --target x86_64-unknown-linux-gnu --out "$stage/THIRD_PARTY_NOTICES.md"
install -m755 packaging/linux/install.sh "$stage/install.sh"

tar --sort=name --owner=0 --group=0 --numeric-owner -C "$out" -czf "$archive" "$name"
rm -rf "$stage"
echo "packaging/linux.sh: wrote $archive ($(du -h "$archive" | cut -f1))" >&2
tar -tvzf "$archive" | awk '{ printf "%10s  %s\n", $3, $6 }' >&2
echo "$archive"
