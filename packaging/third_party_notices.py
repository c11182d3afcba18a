#!/usr/bin/env python3
"""Third-party notices for Rigscope's release binary, generated from Cargo's own view of the build.

Runs `cargo metadata --format-version 1 --filter-platform TARGET`, walks the resolved dependency
graph from the rigscope package (normal and build dependencies, not dev-dependencies: the crates
that go into building the release binary for TARGET), and writes THIRD_PARTY_NOTICES.md: every
crate's name, version and license expression, then every license text file found in the crate's
source folder (LICENSE*, LICENCE*, COPYING*, NOTICE*, and the manifest's `license-file`), each
distinct text once with the crates that carry it.

It also checks every crate's license expression against an allow-list of permissive licenses
(OR: any alternative allowed; AND: all allowed; WITH: an allowed license with an allowed
exception) and exits with 1, naming them, when a crate falls outside it or declares no license
expression. `--check` checks without writing.

Usage:
    packaging/third_party_notices.py --out THIRD_PARTY_NOTICES.md [--target TRIPLE]
    packaging/third_party_notices.py --check [--target TRIPLE]
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ALLOWED = {
    "MIT",
    "Apache-2.0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "Zlib",
    "Unicode-3.0",
    "Unicode-DFS-2016",
    "MPL-2.0",
    "BSL-1.0",
    "CC0-1.0",
    "0BSD",
}
ALLOWED_EXCEPTIONS = {"LLVM-exception"}
# Licenses allowed for one crate only, after reading what they ask.
REVIEWED = {
    "epaint_default_fonts": (
        {"OFL-1.1", "Ubuntu-font-1.0"},
        "egui's default fonts, embedded in the binary: the SIL Open Font License and the Ubuntu "
        "Font Licence allow bundling the fonts with software when their texts go with it (below)",
    ),
}
# License texts: LICENSE*, LICENCE*, COPYING*, NOTICE* in the crate's folder, and in its
# subfolders (vendored C libraries, bundled fonts) files named like a license text.
TOP_LEVEL_TEXT = re.compile(r"^(licen[cs]e|copying|notice)", re.IGNORECASE)
NESTED_TEXT = re.compile(r"^(licen[cs]e|copying|notice|ofl|ufl)\b|licen[cs]e", re.IGNORECASE)
NESTED_DEPTH = 3
ROOT = Path(__file__).resolve().parent.parent


class LicenseError(Exception):
    pass


def tokens(expression):
    # Old crates write "MIT/Apache-2.0" for "MIT OR Apache-2.0".
    spaced = expression.replace("(", " ( ").replace(")", " ) ").replace("/", " OR ")
    return spaced.split()


def parse(expression):
    """The expression as nested tuples: ("OR", a, b), ("AND", a, b), ("WITH", id, exception), id."""
    items = tokens(expression)
    position = 0

    def peek():
        return items[position] if position < len(items) else None

    def take():
        nonlocal position
        if position >= len(items):
            raise LicenseError(f"unexpected end of license expression {expression!r}")
        position += 1
        return items[position - 1]

    def primary():
        token = take()
        if token == "(":
            inner = disjunction()
            if take() != ")":
                raise LicenseError(f"unbalanced parentheses in {expression!r}")
            return inner
        if token in ("AND", "OR", "WITH", ")"):
            raise LicenseError(f"unexpected {token!r} in {expression!r}")
        if peek() == "WITH":
            take()
            return ("WITH", token, take())
        return token

    def conjunction():
        node = primary()
        while peek() == "AND":
            take()
            node = ("AND", node, primary())
        return node

    def disjunction():
        node = conjunction()
        while peek() == "OR":
            take()
            node = ("OR", node, conjunction())
        return node

    tree = disjunction()
    if position != len(items):
        raise LicenseError(f"trailing {items[position]!r} in {expression!r}")
    return tree


def allowed(tree, extra=frozenset()):
    if isinstance(tree, str):
        return tree in ALLOWED or tree in extra
    operator, left, right = tree
    if operator == "OR":
        return allowed(left, extra) or allowed(right, extra)
    if operator == "AND":
        return allowed(left, extra) and allowed(right, extra)
    return (left in ALLOWED or left in extra) and right in ALLOWED_EXCEPTIONS


def host_target():
    output = run(["rustc", "-vV"])
    for line in output.splitlines():
        if line.startswith("host: "):
            return line.split(": ", 1)[1].strip()
    raise SystemExit("third_party_notices: `rustc -vV` names no host target")


def run(command):
    try:
        result = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise SystemExit(f"third_party_notices: {command[0]} is not installed or not on PATH")
    except subprocess.CalledProcessError as error:
        raise SystemExit(f"third_party_notices: `{' '.join(command)}` failed:\n{error.stderr}")
    return result.stdout


def build_graph(metadata):
    """The packages the root package needs to build (normal and build edges), root excluded."""
    resolve = metadata.get("resolve")
    if not resolve or not resolve.get("root"):
        raise SystemExit("third_party_notices: cargo metadata gave no resolved root package")
    nodes = {node["id"]: node for node in resolve["nodes"]}
    root = resolve["root"]
    seen = set()
    stack = [root]
    while stack:
        node = nodes[stack.pop()]
        for dep in node["deps"]:
            kinds = {kind["kind"] for kind in dep["dep_kinds"]}
            if kinds & {None, "build"} and dep["pkg"] not in seen:
                seen.add(dep["pkg"])
                stack.append(dep["pkg"])
    seen.discard(root)
    packages = {package["id"]: package for package in metadata["packages"]}
    return sorted((packages[id] for id in seen), key=lambda p: (p["name"], p["version"]))


def license_texts(package):
    """(name shown, path) of the crate's license texts."""
    folder = Path(package["manifest_path"]).parent
    found = {}
    for directory, subdirectories, names in os.walk(folder):
        relative = Path(directory).relative_to(folder)
        depth = len(relative.parts)
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith(".")) if depth < NESTED_DEPTH else []
        pattern = TOP_LEVEL_TEXT if depth == 0 else NESTED_TEXT
        for name in names:
            path = Path(directory) / name
            if pattern.search(name) and path.is_file() and path.suffix.lower() not in (".rs", ".c", ".h", ".py"):
                found[path.resolve()] = (relative / name).as_posix()
    if package.get("license_file"):
        declared = (folder / package["license_file"]).resolve()
        if declared.is_file():
            found.setdefault(declared, package["license_file"])
    return sorted(((shown, path) for path, shown in found.items()), key=lambda item: (item[0].count("/"), item[0]))


def anchor(digest):
    return f"text-{digest[:12]}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="the Markdown file to write (needed unless --check)")
    parser.add_argument("--target", help="target triple (default: the host's)")
    parser.add_argument("--check", action="store_true", help="check the licenses only; write nothing")
    args = parser.parse_args()
    if not args.check and args.out is None:
        parser.error("--out is needed unless --check is given")

    target = args.target or host_target()
    metadata = json.loads(
        run([os.environ.get("CARGO", "cargo"), "metadata", "--format-version", "1", "--locked", "--filter-platform", target])
    )
    packages = build_graph(metadata)

    outliers = []
    reviewed = []
    for package in packages:
        expression = package.get("license")
        extra, reason = REVIEWED.get(package["name"], (frozenset(), None))
        try:
            if not expression:
                raise LicenseError("no license expression in its manifest")
            tree = parse(expression)
            if not allowed(tree, extra):
                raise LicenseError(f"{expression} is outside the allow-list")
            if not allowed(tree):
                reviewed.append(f"{package['name']} {package['version']}: {expression}: {reason}")
        except LicenseError as error:
            outliers.append(f"{package['name']} {package['version']}: {error}")

    texts = {}  # digest -> (text, [crate labels])
    rows = []
    without_text = []
    for package in packages:
        label = f"{package['name']} {package['version']}"
        refs = []
        for shown, path in license_texts(package):
            text = path.read_text(encoding="utf-8", errors="replace").strip()
            digest = hashlib.sha256(text.encode()).hexdigest()
            texts.setdefault(digest, (text, []))[1].append(f"{label} ({shown})")
            refs.append(f"[{shown}](#{anchor(digest)})")
        if not refs:
            without_text.append(label)
            # The license's standard text applies; the authors are who it names.
            authors = ", ".join(package.get("authors") or []) or "its authors"
            refs.append(f"none in the package; the standard text of its license, by {authors}")
        rows.append(
            f"| {package['name']} | {package['version']} | {package.get('license') or '—'} | "
            f"{', '.join(refs).replace('|', '/')} |"
        )

    summary = (
        f"{len(packages)} crates for {target}, {len(texts)} distinct license texts, "
        f"{len(without_text)} crates without a license text in their package"
    )
    if not args.check:
        lines = [
            "# Third-party notices",
            "",
            "Rigscope is licensed under MIT OR Apache-2.0 (LICENSE-MIT, LICENSE-APACHE). Its release "
            f"binary for `{target}` is built from the crates below; this file is generated by "
            "`packaging/third_party_notices.py` from `cargo metadata` and the license files each crate "
            "ships.",
            "",
            summary + ".",
            "",
            *(f"Reviewed license outside the allow-list: {line}." for line in reviewed),
            "",
            "| Crate | Version | License | License texts |",
            "| --- | --- | --- | --- |",
            *rows,
            "",
            "## License texts",
            "",
        ]
        for digest, (text, carriers) in texts.items():
            lines += [
                f'<a id="{anchor(digest)}"></a>',
                "",
                f"### {carriers[0]}" + (f" and {len(carriers) - 1} more" if len(carriers) > 1 else ""),
                "",
                "Carried by: " + ", ".join(carriers) + ".",
                "",
                "````text",
                text,
                "````",
                "",
            ]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines), encoding="utf-8")
        print(f"third_party_notices: wrote {args.out}: {summary}", file=sys.stderr)
    else:
        print(f"third_party_notices: {summary}", file=sys.stderr)
    if without_text:
        print(
            "third_party_notices: no license text in the package of: " + ", ".join(without_text),
            file=sys.stderr,
        )
    for line in reviewed:
        print(f"third_party_notices: reviewed license outside the allow-list: {line}", file=sys.stderr)
    if outliers:
        print("third_party_notices: licenses outside the allow-list:", file=sys.stderr)
        for outlier in outliers:
            print(f"  {outlier}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
