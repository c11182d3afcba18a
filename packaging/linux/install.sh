#!/usr/bin/env bash
# Installs Rigscope from this unpacked archive for one user: under ~/.local, or under --prefix DIR.
#
#   ./install.sh [--prefix DIR]
#
# Copies bin/rigscope to PREFIX/bin, the desktop entry, icons, MIME types, shell completions and
# man pages under PREFIX/share, and the licenses and third-party notices to
# PREFIX/share/doc/rigscope; then refreshes the desktop, MIME and icon caches when the tools are
# installed (update-desktop-database, update-mime-database, gtk-update-icon-cache), so that a
# file manager offers Rigscope for .gltf, .glb, .vrm and .fbx files.
set -euo pipefail

fail() {
    echo "install.sh: $*" >&2
    exit 1
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=""
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix)
            [ $# -ge 2 ] || fail "--prefix needs a folder"
            prefix=$2
            shift 2
            ;;
        -h | --help)
            sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *) fail "unknown argument '$1' (see --help)" ;;
    esac
done
if [ -z "$prefix" ]; then
    [ -n "${HOME:-}" ] || fail "HOME is not set; give --prefix DIR"
    prefix=$HOME/.local
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
case "$prefix" in
    *[\"\`\$\\]*) fail "the prefix $prefix has a character a desktop entry cannot hold (\" \` \$ \\)" ;;
esac

[ -x "$here/bin/rigscope" ] || fail "$here/bin/rigscope is missing: run install.sh from the unpacked archive"

install -Dm755 "$here/bin/rigscope" "$prefix/bin/rigscope"
(cd "$here" && find share -type f) | while IFS= read -r file; do
    install -Dm644 "$here/$file" "$prefix/$file"
done
# The desktop entry starts the installed binary by its full path: a desktop session's PATH need
# not hold PREFIX/bin.
sed -e "s|^Exec=rigscope |Exec=\"$prefix/bin/rigscope\" |" -e "s|^TryExec=rigscope\$|TryExec=$prefix/bin/rigscope|" \
    "$here/share/applications/rigscope.desktop" >"$prefix/share/applications/rigscope.desktop"
for doc in LICENSE-MIT LICENSE-APACHE THIRD_PARTY_NOTICES.md README.md; do
    install -Dm644 "$here/$doc" "$prefix/share/doc/rigscope/$doc"
done

if command -v update-desktop-database >/dev/null; then
    update-desktop-database -q "$prefix/share/applications"
else
    echo "install.sh: update-desktop-database is not installed; file managers pick up the entry on their next scan" >&2
fi
if command -v update-mime-database >/dev/null; then
    update-mime-database "$prefix/share/mime"
else
    echo "install.sh: update-mime-database is not installed (shared-mime-info); .vrm and .fbx files may not be recognised" >&2
fi
if command -v gtk-update-icon-cache >/dev/null && [ -f "$prefix/share/icons/hicolor/index.theme" ]; then
    gtk-update-icon-cache -q -t "$prefix/share/icons/hicolor"
fi

echo "install.sh: installed Rigscope under $prefix"
case ":${PATH:-}:" in
    *":$prefix/bin:"*) ;;
    *) echo "install.sh: $prefix/bin is not on PATH; add it to run rigscope from a shell" ;;
esac
echo "install.sh: zsh finds the completion when $prefix/share/zsh/site-functions is in fpath"
