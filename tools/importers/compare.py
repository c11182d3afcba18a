"""Compares two posed vertex sets (.npy from blender_pose.py, or an OBJ from `rigscope export`):
the farthest any vertex of either is from the nearest vertex of the other, as a fraction of the
second set's height. Nearest points, not indices: importers split and merge vertices.

    python3 compare.py A.npy B.obj
"""
import sys

import numpy


def load(path):
    if path.endswith(".npy"):
        return numpy.load(path)
    rows = [line.split()[1:4] for line in open(path) if line.startswith("v ")]
    return numpy.array(rows, dtype=numpy.float64)


def farthest_from_nearest(a, b, chunk=2048):
    worst = 0.0
    for start in range(0, len(a), chunk):
        block = a[start:start + chunk]
        d = ((block[:, None, :] - b[None, :, :]) ** 2).sum(axis=2).min(axis=1)
        worst = max(worst, float(d.max()))
    return worst ** 0.5


a, b = load(sys.argv[1]), load(sys.argv[2])
height = float(b[:, 1].max() - b[:, 1].min())
distance = max(farthest_from_nearest(a, b), farthest_from_nearest(b, a))
print(f"{distance / height:.3e} of the height ({distance:.4g} of {height:.4g}; {len(a)} and {len(b)} vertices)")
