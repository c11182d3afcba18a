#!/usr/bin/env python3
"""Writes the smooth sky used by the fidelity cases as an equirectangular Radiance .hdr.

    python3 tools/fidelity/make_sky.py OUT.hdr [--width 1024]

The panorama follows the layout Rigscope reads (src/render/environment.rs): the top row looks
up (+Y), the middle column looks along -Z and u grows with the azimuth atan2(x, -z), so the
column at u = 0.75 looks along +X.  The light: a blue-white sky brightening toward the horizon,
a warm grey ground, and a soft sun (a lobe about 17 degrees across at half height) high on
the +X+Z side, so that shading, normal maps and metals show a direction.  Everything is a
smooth function of direction: no texel-sized detail for the two renderers to filter differently.
"""
import argparse

import numpy as np

SUN_DIRECTION = np.array([0.55, 0.70, 0.45])  # glTF axes, +Y up
SUN_RADIANCE = np.array([16.0, 14.5, 12.5])
SUN_SHARPNESS = 60.0  # exp(k (cos a - 1)): half height at a = acos(1 - ln 2 / k), about 8.7 deg


def directions(width, height):
    """Unit directions through the texel centres, rows from the top (as environment.rs)."""
    u = (np.arange(width) + 0.5) / width
    v = (np.arange(height) + 0.5) / height
    azimuth = (u - 0.5) * 2.0 * np.pi
    polar = v * np.pi
    az, po = np.meshgrid(azimuth, polar)
    return np.stack([np.sin(po) * np.sin(az), np.cos(po), -np.sin(po) * np.cos(az)], axis=-1)


def radiance(d):
    y = d[..., 1:2]
    up = np.clip(y, 0.0, 1.0)
    zenith = np.array([0.25, 0.40, 0.80])
    horizon = np.array([0.85, 0.88, 0.92])
    sky = horizon + (zenith - horizon) * up ** 0.6
    ground = np.array([0.30, 0.26, 0.22]) * (1.0 + 0.5 * np.clip(-y, 0.0, 1.0))
    # A smooth blend across the horizon (about 10 degrees wide) rather than a step.
    t = 0.5 * (1.0 + np.tanh(y / 0.08))
    base = ground + (sky - ground) * t
    s = SUN_DIRECTION / np.linalg.norm(SUN_DIRECTION)
    lobe = np.exp(SUN_SHARPNESS * (d @ s - 1.0))[..., None]
    return base + SUN_RADIANCE * lobe


def rgbe(rgb):
    """Float RGB (H, W, 3) to RGBE bytes (H, W, 4) as Radiance encodes them."""
    v = rgb.max(axis=-1)
    mantissa, exponent = np.frexp(v)
    scale = np.where(v > 1e-32, mantissa * 256.0 / np.where(v > 1e-32, v, 1.0), 0.0)
    out = np.zeros(rgb.shape[:-1] + (4,), dtype=np.uint8)
    out[..., :3] = np.clip(np.floor(rgb * scale[..., None]), 0, 255).astype(np.uint8)
    out[..., 3] = np.where(v > 1e-32, exponent + 128, 0).astype(np.uint8)
    return out


def write_hdr(path, rgb):
    height, width = rgb.shape[:2]
    assert 8 <= width < 32768
    pixels = rgbe(rgb)
    with open(path, "wb") as f:
        f.write(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n")
        f.write(f"-Y {height} +X {width}\n".encode())
        for row in pixels:
            # New-style scanlines: a 2,2,W marker, then each channel as literal runs of <= 128.
            line = bytearray([2, 2, width >> 8, width & 255])
            for c in range(4):
                channel = row[:, c].tobytes()
                for start in range(0, width, 128):
                    chunk = channel[start:start + 128]
                    line.append(len(chunk))
                    line += chunk
            f.write(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--width", type=int, default=1024)
    args = parser.parse_args()
    width = args.width
    rgb = radiance(directions(width, width // 2))
    write_hdr(args.out, rgb.astype(np.float64))
    print(f"{args.out}: {width}x{width // 2}, radiance {rgb.min():.3f} .. {rgb.max():.3f}")


if __name__ == "__main__":
    main()
