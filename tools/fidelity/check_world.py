#!/usr/bin/env python3
"""Checks eevee.py's camera and environment orientation against the sky's own formula.

    xvfb-run -a blender -b --factory-startup --python tools/fidelity/eevee.py -- \
        --model M.gltf --environment SKY.hdr --out BG.png --background \
        --orbit=-90,100,1 --target 50,0,0 --fov 100 --size 160x120 --samples 4
    python3 tools/fidelity/check_world.py BG.png --orbit=-90,100,1 --target 50,0,0 --fov 100

Traces the pinhole camera Rigscope's orbit defines (eye = target + r (sin(phi) sin(theta),
cos(phi), sin(phi) cos(theta)), looking at the target with +Y up, vertical field of view) through
make_sky.py's radiance, encodes it as sRGB clipped at 1, and compares it with the background
Eevee drew (the target far off in the sky so that the model is out of the picture, and a view
that is not mirror-symmetric).  A mean difference under a couple of levels of 255 says the
camera, the axes and the panorama's azimuth agree; a mirrored or turned sky differs by tens.
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import make_sky  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("image")
    p.add_argument("--orbit", required=True)
    p.add_argument("--target", required=True)
    p.add_argument("--fov", type=float, required=True)
    args = p.parse_args()
    image = compare.read_png(args.image).astype(np.float64)
    h, w = image.shape[:2]
    theta, phi, _ = (float(v) for v in args.orbit.split(","))
    t, f = math.radians(theta), math.radians(phi)
    offset = np.array([math.sin(f) * math.sin(t), math.cos(f), math.sin(f) * math.cos(t)])
    forward = -offset
    right = np.cross(forward, [0.0, 1.0, 0.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    ty = math.tan(math.radians(args.fov) / 2)
    tx = ty * w / h
    x = ((np.arange(w) + 0.5) / w * 2 - 1) * tx
    y = (1 - (np.arange(h) + 0.5) / h * 2) * ty
    X, Y = np.meshgrid(x, y)
    d = forward + X[..., None] * right + Y[..., None] * up
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    linear = np.clip(make_sky.radiance(d), 0.0, 1.0)
    srgb = 255 * np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)
    diff = np.abs(srgb - image[..., :3])
    mirrored = np.abs(srgb[:, ::-1] - image[..., :3])
    print(f"mean |difference| {diff.mean():.2f} of 255 (99th percentile {np.percentile(diff, 99):.2f}); "
          f"against the mirrored sky {mirrored.mean():.2f}")
    return 0 if diff.mean() < 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
