#!/usr/bin/env python3
"""Compares a candidate render with a reference as the Khronos Render Fidelity tools do.

    python3 tools/fidelity/compare.py CANDIDATE.png REFERENCE.png [--diff DIFF.png] [--json]

The colour difference of a pixel is pixelmatch's YIQ delta (Kotsarenko and Ramos, as
model-viewer's render-fidelity-tools carry it in third_party/pixelmatch/color-delta.ts): each
pixel blended over white by its alpha, then 0.5053 dY^2 + 0.299 dI^2 + 0.1957 dQ^2 on 0..255
channels, which is 35215 at most (the largest over all pairs of colours; black against white is 32857).  The Fidelity figure is

    dB = 10 log10( sqrt(mean(delta^2)) / 35215 )

over the candidate's covered pixels (alpha > 0), as image-comparator.ts's analyze() and
toDecibel() compute it; no threshold enters it.  model-viewer fails a renderer above -22 dB.
This script prints that figure (`dB fidelity`), the same over the pixels covered in either
image (`dB union`, which also counts what only the reference covers), the share of those
pixels whose delta exceeds pixelmatch's default threshold 0.1 (delta > 35215 * 0.1^2), and the
agreement of the two coverages (intersection over union of alpha >= 0.5, and of alpha as a
weight: sum min / sum max).  `dB interior` is the same figure over the pixels both images cover
fully, two pixels in from any edge: the shading without the silhouettes' antialiasing, which
dominates an RMS of squared distances; `mean dY` is the candidate's luma less the reference's
there (0..255), a bias in brightness.

`--same-in PROBE.png` leaves out the pixels that the candidate shares exactly with PROBE.png,
the same frame drawn in another view (grown by a pixel): an overlay drawn over the mesh in
every view, such as Rigscope's skeleton, which the reference does not have.

The difference image: pixels under the threshold are the reference's luminance faded toward
white; those over it are red, darker for a larger delta; magenta where only the candidate covers
the pixel, cyan where only the reference does.

numpy only: PNGs are read and written here with zlib.
"""
import argparse
import json
import struct
import sys
import zlib

import numpy as np

MAX_DELTA = 35215.0
PIXELMATCH_THRESHOLD = 0.1


def read_png(path):
    """An 8-bit (or 16-bit, reduced to 8) gray, RGB or RGBA PNG as an (H, W, 4) uint8 array."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat = 8, bytearray()
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if channels is None or depth not in (8, 16) or interlace:
        raise SystemExit(f"{path}: colour type {colour}, depth {depth}, interlace {interlace} not read here")
    bpp = channels * depth // 8
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(bytes(idat)), np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 1:  # Sub: a running sum along the row, per byte of the pixel.
            cur = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) & 255
        elif kind == 2:  # Up
            cur = (line + prev) & 255
        else:  # Average and Paeth depend on the byte just decoded: pixel by pixel.
            cur = np.zeros(stride, np.int32)
            left = np.zeros(bpp, np.int32)
            up_left = np.zeros(bpp, np.int32)
            for x in range(0, stride, bpp):
                up = prev[x:x + bpp]
                if kind == 3:
                    value = (line[x:x + bpp] + ((left + up) >> 1)) & 255
                else:
                    p = left + up - up_left
                    pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - up_left)
                    pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, up_left))
                    value = (line[x:x + bpp] + pred) & 255
                cur[x:x + bpp] = value
                left, up_left = value, up
        out[y] = cur
        prev = cur
    pixels = out.reshape(height, width, bpp)
    if depth == 16:
        pixels = pixels[..., 0::2]  # the high bytes
    if channels == 1:
        pixels = np.concatenate([pixels.repeat(3, axis=2), np.full_like(pixels, 255)], axis=2)
    elif channels == 2:
        pixels = np.concatenate([pixels[..., :1].repeat(3, axis=2), pixels[..., 1:]], axis=2)
    elif channels == 3:
        pixels = np.concatenate([pixels, np.full(pixels.shape[:2] + (1,), 255, np.uint8)], axis=2)
    return pixels


def write_png(path, rgba):
    height, width, _ = rgba.shape
    raw = b"".join(b"\x00" + rgba[y].tobytes() for y in range(height))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def yiq(rgb):
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return (r * 0.29889531 + g * 0.58662247 + b * 0.11448223,
            r * 0.59597799 - g * 0.27417610 - b * 0.32180189,
            r * 0.21147017 - g * 0.52261711 + b * 0.31114694)


def color_delta(a, b):
    """pixelmatch's squared YIQ distance per pixel, each image blended over white by alpha."""
    def blended(img):
        img = img.astype(np.float64)
        alpha = img[..., 3:4] / 255.0
        return 255.0 + (img[..., :3] - 255.0) * alpha

    y1, i1, q1 = yiq(blended(a))
    y2, i2, q2 = yiq(blended(b))
    return 0.5053 * (y1 - y2) ** 2 + 0.299 * (i1 - i2) ** 2 + 0.1957 * (q1 - q2) ** 2


def decibels(delta, mask):
    if not mask.any():
        return float("nan")
    rms = np.sqrt(np.mean(delta[mask] ** 2)) / MAX_DELTA
    return 10.0 * np.log10(rms) if rms > 0 else float("-inf")


def overlay_mask(candidate, probe):
    """The pixels the candidate shares exactly with `probe`, the same frame drawn in another
    view (e.g. Rigscope's normals view): what the two have in common is an overlay drawn over
    the mesh (a skeleton), not shading.  Grown by a pixel to take the overlay's antialiased rim."""
    same = (candidate == probe).all(axis=-1) & (candidate[..., 3] > 0)
    grown = same.copy()
    grown[1:] |= same[:-1]
    grown[:-1] |= same[1:]
    grown[:, 1:] |= same[:, :-1]
    grown[:, :-1] |= same[:, 1:]
    return grown


def compare(candidate, reference, excluded=None):
    if candidate.shape != reference.shape:
        raise SystemExit(f"image sizes differ: {candidate.shape[1]}x{candidate.shape[0]} "
                         f"and {reference.shape[1]}x{reference.shape[0]}")
    delta = color_delta(candidate, reference)
    ca, ra = candidate[..., 3], reference[..., 3]
    if excluded is not None:
        # Left out of every figure: as if neither image covered those pixels.
        ca, ra = np.where(excluded, 0, ca), np.where(excluded, 0, ra)
    union = (ca > 0) | (ra > 0)
    over = delta > MAX_DELTA * PIXELMATCH_THRESHOLD ** 2
    # The interior: fully covered in both and two pixels in from any edge, so that what is
    # left is shading, not the silhouettes' antialiasing.
    interior = (ca == 255) & (ra == 255)
    for _ in range(2):
        shrunk = interior.copy()
        shrunk[1:] &= interior[:-1]
        shrunk[:-1] &= interior[1:]
        shrunk[:, 1:] &= interior[:, :-1]
        shrunk[:, :-1] &= interior[:, 1:]
        interior = shrunk
    dy = yiq(candidate[..., :3].astype(np.float64))[0] - yiq(reference[..., :3].astype(np.float64))[0]
    c_half, r_half = ca >= 128, ra >= 128
    inter = np.count_nonzero(c_half & r_half)
    either = np.count_nonzero(c_half | r_half)
    soft_max = np.maximum(ca, ra).astype(np.float64).sum()
    result = {
        "db_fidelity": decibels(delta, ca > 0),
        "db_union": decibels(delta, union),
        "db_interior": decibels(delta, interior),
        "mean_dy_interior": float(dy[interior].mean()) if interior.any() else float("nan"),
        "over_threshold": float(np.count_nonzero(over & union)) / max(np.count_nonzero(union), 1),
        "iou": inter / either if either else float("nan"),
        "iou_soft": float(np.minimum(ca, ra).astype(np.float64).sum() / soft_max) if soft_max else float("nan"),
        "covered_candidate": int(np.count_nonzero(ca > 0)),
        "covered_reference": int(np.count_nonzero(ra > 0)),
        "excluded": int(np.count_nonzero(excluded)) if excluded is not None else 0,
        "width": int(candidate.shape[1]),
        "height": int(candidate.shape[0]),
    }
    return result, delta, over


def difference_image(reference, candidate, delta, over):
    y = yiq(reference[..., :3].astype(np.float64))[0] * (reference[..., 3] / 255.0) + 255.0 * (1 - reference[..., 3] / 255.0)
    faded = (255.0 - 0.1 * (255.0 - y)).round().astype(np.uint8)
    out = np.stack([faded, faded, faded, np.full_like(faded, 255)], axis=-1)
    strength = np.clip(delta / (MAX_DELTA * 0.25), 0.0, 1.0)
    red = np.stack([np.full_like(faded, 255), (200 * (1 - strength)).astype(np.uint8),
                    (200 * (1 - strength)).astype(np.uint8), np.full_like(faded, 255)], axis=-1)
    out = np.where(over[..., None], red, out)
    only_c = (candidate[..., 3] >= 128) & (reference[..., 3] < 128)
    only_r = (reference[..., 3] >= 128) & (candidate[..., 3] < 128)
    out[only_c] = (255, 0, 255, 255)
    out[only_r] = (0, 200, 255, 255)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidate", help="the render under test (Rigscope's)")
    parser.add_argument("reference", help="the reference render (Eevee's)")
    parser.add_argument("--diff", help="write the difference image here")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--row", metavar="NAME", help="print one row of run.sh's table, named NAME")
    parser.add_argument("--same-in", metavar="PROBE.png",
                        help="leave out the pixels the candidate shares with PROBE.png (the same frame in "
                             "another view): an overlay the candidate cannot leave out")
    args = parser.parse_args()
    candidate, reference = read_png(args.candidate), read_png(args.reference)
    excluded = overlay_mask(candidate, read_png(args.same_in)) if args.same_in else None
    result, delta, over = compare(candidate, reference, excluded)
    if args.diff:
        image = difference_image(reference, candidate, delta, over)
        if excluded is not None:
            image[excluded] = (255, 255, 255, 255)
        write_png(args.diff, image)
    if args.json:
        print(json.dumps(result))
    elif args.row:
        r = result
        overlay = 100.0 * r["excluded"] / max(r["covered_candidate"], 1)
        size = f"{r['width']}x{r['height']}"
        print(f"{args.row:<15} {size:<9} {r['db_fidelity']:>8.2f} {r['db_union']:>8.2f} {r['db_interior']:>8.2f} "
              f"{r['mean_dy_interior']:>+6.1f} {100 * r['over_threshold']:>6.1f}% {r['iou']:>7.4f} "
              f"{r['iou_soft']:>7.4f} {overlay:>7.1f}%")
    else:
        print(f"dB fidelity {result['db_fidelity']:.2f}  dB union {result['db_union']:.2f}  "
              f"dB interior {result['db_interior']:.2f} (mean dY {result['mean_dy_interior']:+.1f})  "
              f"over 0.1 {100 * result['over_threshold']:.1f}%  "
              f"IoU {result['iou']:.4f} (soft {result['iou_soft']:.4f})  "
              f"{result['width']}x{result['height']}"
              + (f"  ({result['excluded']} overlay pixels left out)" if excluded is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
