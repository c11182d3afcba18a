"""Compares two sets of joint positions over a clip's frames (JSON from blender_bvh.py and from
`cargo run --example joint_positions`): for the points both name (Blender joins spaces in names
with '_'), the farthest apart at any frame, as a fraction of the second set's height at frame 0.

Blender ends a bone at the last of its joint's end sites (Rigscope's NAME_End, NAME_End2, …), so
its tail is compared with that one; an end site at its joint's own place (a chain that ends at
the joint) is left out, as Blender gives such a bone a made-up length.

    python3 compare_bvh.py BLENDER.json RIGSCOPE.json
"""
import json
import sys

import numpy


def load(path):
    document = json.load(open(path))
    names = [n.replace(" ", "_") for n in document["names"]]
    return names, numpy.array(document["positions"], dtype=numpy.float64)


def last_end_site(name, names):
    if not name.endswith("_End"):
        return name
    numbered = [n for n in names if n.startswith(name) and n[len(name):].isdigit()]
    return max(numbered, key=lambda n: int(n[len(name):]), default=name)


def at_its_joint(name, names, positions):
    joint = name[: name.rfind("_End")]
    return "_End" in name and joint in names and numpy.allclose(
        positions[0, names.index(name)], positions[0, names.index(joint)]
    )


blender_names, blender = load(sys.argv[1])
names, rigscope = load(sys.argv[2])
blender_names = [last_end_site(n, names) for n in blender_names]
shared = [n for n in blender_names if n in names and not at_its_joint(n, names, rigscope)]
blender = blender[:, [blender_names.index(n) for n in shared], :]
rigscope = rigscope[:, [names.index(n) for n in shared], :]
frames = min(len(blender), len(rigscope))
if len(blender) != len(rigscope):
    print(f"note: {len(blender)} and {len(rigscope)} frames; the first {frames} compared")
distance = numpy.linalg.norm(blender[:frames] - rigscope[:frames], axis=2)
height = float(rigscope[0, :, 1].max() - rigscope[0, :, 1].min())
frame, point = numpy.unravel_index(distance.argmax(), distance.shape)
print(
    f"{distance.max() / height:.3e} of the height ({distance.max():.4g} of {height:.4g}; "
    f"{len(shared)} points over {frames} frames; worst {shared[point]} at frame {frame})"
)
