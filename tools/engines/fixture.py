"""Writes the engine-rule fixture as a glTF file: a chain of six joints one unit apart up +Y,
joint 4 turned 90 degrees about Z over a one-second clip, and one vertex per influence case
(three per triangle, the last triangle padded). Engines read the same file; comparing their
posed vertices at t = 1 s shows their rules. Vertex v sits at (1, 0.1 v, 0).

    python3 fixture.py OUT.gltf
"""
import base64
import json
import math
import struct
import sys

JOINTS = 6
TURNED = 4
# Per vertex, up to eight (joint, weight) slots: JOINTS_0/WEIGHTS_0 then JOINTS_1/WEIGHTS_1.
CASES = [
    ("six influences over two sets", [(0, .3), (1, .2), (2, .1), (3, .1), (4, .2), (5, .1)]),
    ("weights summing to a half", [(4, .25), (0, .25)]),
    ("no weight at all", []),
    ("one joint named twice", [(4, .3), (4, .2), (0, .5)]),
    ("a weight below 1e-4 alone", [(4, .00005)]),
    ("one joint", [(4, 1.0)]),
    ("second set only", [(0, 0.0), (0, 0.0), (0, 0.0), (0, 0.0), (4, .6), (1, .4)]),
]


def main(out):
    rows = [slots for _, slots in CASES]
    while len(rows) % 3:
        rows.append([(0, 1.0)])
    positions = [(1.0, 0.1 * v, 0.0) for v in range(len(rows))]
    joints = [[0] * 8 for _ in rows]
    weights = [[0.0] * 8 for _ in rows]
    for v, slots in enumerate(rows):
        for k, (j, w) in enumerate(slots):
            joints[v][k], weights[v][k] = j, w
    blob = bytearray()
    views, accessors = [], []

    def add(data, component, kind, count, **extra):
        while len(blob) % 4:
            blob.append(0)
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(data)})
        blob.extend(data)
        accessors.append({"bufferView": len(views) - 1, "componentType": component, "type": kind, "count": count, **extra})
        return len(accessors) - 1

    flat = [c for p in positions for c in p]
    position = add(struct.pack(f"<{len(flat)}f", *flat), 5126, "VEC3", len(rows),
                   min=[min(p[i] for p in positions) for i in range(3)],
                   max=[max(p[i] for p in positions) for i in range(3)])
    attributes = {"POSITION": position}
    for s in range(2):
        js = [j for row in joints for j in row[4 * s:4 * s + 4]]
        ws = [w for row in weights for w in row[4 * s:4 * s + 4]]
        attributes[f"JOINTS_{s}"] = add(struct.pack(f"<{len(js)}H", *js), 5123, "VEC4", len(rows))
        attributes[f"WEIGHTS_{s}"] = add(struct.pack(f"<{len(ws)}f", *ws), 5126, "VEC4", len(rows))
    binds = []
    for j in range(JOINTS):
        binds += [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -float(j), 0, 1]
    inverse_binds = add(struct.pack(f"<{len(binds)}f", *binds), 5126, "MAT4", JOINTS)
    times = add(struct.pack("<2f", 0.0, 1.0), 5126, "SCALAR", 2, min=[0.0], max=[1.0])
    half = math.sqrt(0.5)
    turns = add(struct.pack("<8f", 0, 0, 0, 1, 0, 0, half, half), 5126, "VEC4", 2)
    nodes = [{"name": f"j{j}", **({"translation": [0, 1, 0]} if j else {}), **({"children": [j + 1]} if j + 1 < JOINTS else {})}
             for j in range(JOINTS)]
    nodes.append({"name": "mesh", "mesh": 0, "skin": 0})
    document = {
        "asset": {"version": "2.0", "generator": "rigscope tools/engines/fixture.py"},
        "scene": 0,
        "scenes": [{"nodes": [0, JOINTS]}],
        "nodes": nodes,
        "skins": [{"joints": list(range(JOINTS)), "inverseBindMatrices": inverse_binds}],
        "meshes": [{"name": "cases", "primitives": [{"attributes": attributes}]}],
        "animations": [{"name": "turn", "samplers": [{"input": times, "output": turns}],
                        "channels": [{"sampler": 0, "target": {"node": TURNED, "path": "rotation"}}]}],
        "buffers": [{"byteLength": len(blob),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(blob)).decode()}],
        "bufferViews": views,
        "accessors": accessors,
    }
    with open(out, "w") as f:
        json.dump(document, f, indent=1)
    for v, (name, _) in enumerate(CASES):
        print(f"vertex {v}: {name}")


if __name__ == "__main__":
    main(sys.argv[1])
