#!/usr/bin/env python3
"""Fills fuzz/corpus/ with seed inputs made from the shared test rigs (../../shared/rigs, not
copied into the project) and the committed fuzz regression inputs.

    python3 fuzz/seed_corpus.py

load_gltf gets glTF JSON documents with embedded (data URI) buffers; load_glb gets the
fuzz target's own format: two little-endian bytes giving the JSON length, the JSON, then the
binary chunk; load_json gets 16 bytes of mutation choices, then the load_glb format, made from
the shared rigs including the compressed ones (meshopt, Draco, quantized, WebP); load_fbx gets
the shared FBX files under 1 MB as they are; load_bvh gets the shared BVH files as they are;
read_journal gets edit journal records (one of each kind), framed as a journal frames them, to
follow a header the target writes.
"""

import base64
import json
import pathlib
import struct
import zlib

FUZZ = pathlib.Path(__file__).resolve().parent
PROJECT = FUZZ.parent
RIGS = PROJECT.parent / "shared" / "rigs"
BAD = PROJECT.parent / "shared" / "bad-gltf"
MOTION = PROJECT.parent / "shared" / "corpus" / "motion"


def embedded_gltf(path):
    """The document with every buffer as a data URI, or None when a buffer is missing."""
    doc = json.loads(path.read_text())
    for buffer in doc.get("buffers", []):
        uri = buffer.get("uri", "")
        if uri and not uri.startswith("data:"):
            try:
                data = (path.parent / uri).read_bytes()
            except OSError:
                return None
            buffer["uri"] = "data:application/octet-stream;base64," + base64.b64encode(data).decode()
    doc.pop("images", None)
    doc.pop("textures", None)
    for material in doc.get("materials", []):
        material.get("pbrMetallicRoughness", {}).pop("baseColorTexture", None)
    return doc


def as_glb_input(doc):
    """All buffers merged into one binary chunk, in the load_glb target's input format."""
    blob = bytearray()
    starts = []
    for buffer in doc.get("buffers", []):
        uri = buffer.get("uri", "")
        data = base64.b64decode(uri.split(";base64,", 1)[1]) if ";base64," in uri else b""
        while len(blob) % 4:
            blob.append(0)
        starts.append(len(blob))
        blob.extend(data)
    for view in doc.get("bufferViews", []):
        view["byteOffset"] = view.get("byteOffset", 0) + starts[view.get("buffer", 0)]
        view["buffer"] = 0
    doc["buffers"] = [{"byteLength": len(blob)}]
    text = json.dumps(doc, separators=(",", ":")).encode()
    return struct.pack("<H", len(text)) + text + bytes(blob)


# One journal record of each kind, as `rigscope::journal::records::Entry` serializes it (floats
# as their bits).
JOURNAL_ENTRIES = [
    {"Clip": {"Trim": {"clip": 1, "start": 1048576000, "end": 1056964608}}},
    {"Clip": {"Rename": {"clip": 0, "name": "Walk"}}},
    {"Clip": {"AddCarried": {"file": "clips.glb", "map": {"by_hand": {"Hips": "hips"}}, "in_place": False,
                             "resample_rate": 1106247680, "len": 1024, "modified_ns": None}}},
    {"Clip": {"AddPose": {"clip": 2, "name": "Held", "pose": [[1, {"translation": [0, 0, 0],
              "rotation": [0, 0, 0, 1065353216], "scale": [1065353216, 1065353216, 1065353216]}]]}}},
    {"Repair": {"normalize": True, "limit": True, "limit_to": 4}},
    {"PoseStep": {"label": "bend joint1"}},
    {"Pose": {"nodes": 5, "bends": [[2, {"rotation": [0, 0, 1056964608, 1061997773], "translation": [0, 0, 0],
              "scale": 1065353216}]], "morph_weights": [[None, 1056964608]],
              "ik_goals": [{"start": 1, "mid": 2, "end": 3, "target": [0, 1065353216, 0], "pole_target": None,
                            "weight": 1065353216, "soften": 1064849900, "enabled": True}],
              "look_at": None}},
    "Undo",
    "Redo",
    "EndRepairPreview",
]


def journal_record(value):
    """A record framed as the journal frames it: length, CRC-32 of the length and payload, payload."""
    payload = json.dumps(value, separators=(",", ":")).encode()
    length = struct.pack("<I", len(payload))
    return length + struct.pack("<I", zlib.crc32(length + payload)) + payload


def main():
    gltf_dir = FUZZ / "corpus" / "load_gltf"
    glb_dir = FUZZ / "corpus" / "load_glb"
    gltf_dir.mkdir(parents=True, exist_ok=True)
    glb_dir.mkdir(parents=True, exist_ok=True)
    count = 0
    sources = sorted(RIGS.glob("*.gltf")) + sorted(BAD.rglob("*.gltf"))
    for path in sources:
        doc = embedded_gltf(path)
        if doc is None:
            continue
        text = json.dumps(doc, separators=(",", ":")).encode()
        if len(text) > 64 * 1024:
            continue
        (gltf_dir / path.name).write_bytes(text)
        glb = as_glb_input(doc)
        if len(glb) < 64 * 1024:
            (glb_dir / path.name).write_bytes(glb)
        count += 1
    for target in ("load_gltf", "load_glb"):
        regressions = PROJECT / "tests" / "fuzz_regressions" / target
        for path in sorted(regressions.glob("*")) if regressions.is_dir() else []:
            (FUZZ / "corpus" / target / ("regression-" + path.name)).write_bytes(path.read_bytes())
    json_dir = FUZZ / "corpus" / "load_json"
    json_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(RIGS.glob("*.glb")) + sorted((RIGS / "compressed").glob("*.glb")):
        data = path.read_bytes()
        json_len = struct.unpack_from("<I", data, 12)[0]
        text = data[20 : 20 + json_len]
        bin_at = 20 + json_len
        blob = data[bin_at + 8 :] if bin_at + 8 <= len(data) else b""
        if len(text) < 65536 and len(blob) < 1 << 20:
            (json_dir / path.name).write_bytes(bytes(16) + struct.pack("<H", len(text)) + text + blob)
            count += 1
    fbx_dir = FUZZ / "corpus" / "load_fbx"
    fbx_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted((RIGS / "fbx").glob("*.fbx")):
        if path.stat().st_size < 1 << 20:
            (fbx_dir / path.name).write_bytes(path.read_bytes())
            count += 1
    bvh_dir = FUZZ / "corpus" / "load_bvh"
    bvh_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted((MOTION / "bvh").glob("*.bvh")):
        (bvh_dir / path.name).write_bytes(path.read_bytes())
        count += 1
    journal_dir = FUZZ / "corpus" / "read_journal"
    journal_dir.mkdir(parents=True, exist_ok=True)
    (journal_dir / "every-kind").write_bytes(b"".join(journal_record(e) for e in JOURNAL_ENTRIES))
    for k, entry in enumerate(JOURNAL_ENTRIES):
        (journal_dir / f"entry-{k}").write_bytes(journal_record(entry))
        count += 1
    print(f"seeded {count} inputs into {gltf_dir}, {glb_dir}, {json_dir}, {fbx_dir}, {bvh_dir} and {journal_dir}")


if __name__ == "__main__":
    main()
