#!/usr/bin/env python3
"""Packs square PNG images into one Windows .ico file, each image stored as the PNG it is.

Windows (Vista and later) reads PNG-compressed images in icon files at every size, so the icon's
PNGs, rendered from assets/icon/rigscope.svg at each size by packaging/windows.sh, go in as they
are: no resampling, no extra libraries (the standard library only).

Usage:
    packaging/windows/make_ico.py --out rigscope.ico 16.png 32.png 48.png 256.png
"""

import argparse
import struct
import sys
from pathlib import Path

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data, name):
    """The width and height in a PNG's IHDR chunk, which the PNG format puts first."""
    if data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise SystemExit(f"make_ico: {name} is not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    bit_depth, color_type = data[24], data[25]
    if (bit_depth, color_type) != (8, 6):
        raise SystemExit(f"make_ico: {name} is not 8-bit RGBA (bit depth {bit_depth}, color type {color_type})")
    return width, height


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the .ico file to write")
    parser.add_argument("pngs", type=Path, nargs="+", help="square RGBA PNGs, 1 to 256 pixels wide")
    args = parser.parse_args()

    images = []
    for path in args.pngs:
        data = path.read_bytes()
        width, height = png_size(data, path)
        if width != height or not 1 <= width <= 256:
            raise SystemExit(f"make_ico: {path} is {width}x{height}; icons are square, 1 to 256 pixels")
        images.append((width, data))
    images.sort(key=lambda image: image[0])
    sizes = [width for width, _ in images]
    if len(set(sizes)) != len(sizes):
        raise SystemExit(f"make_ico: two images of the same size among {sizes}")

    # ICONDIR: reserved 0, type 1 (icon), the number of images; then one 16-byte ICONDIRENTRY per
    # image (width and height with 0 for 256, no palette, 1 plane, 32 bits per pixel, the data's
    # size and offset); then the images' data.
    header = struct.pack("<HHH", 0, 1, len(images))
    offset = len(header) + 16 * len(images)
    entries, blobs = [], []
    for width, data in images:
        side = width % 256
        entries.append(struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset))
        blobs.append(data)
        offset += len(data)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(header + b"".join(entries) + b"".join(blobs))
    print(f"make_ico: wrote {args.out} ({', '.join(str(s) for s in sizes)} px, {offset} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
